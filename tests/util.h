/* util.h — helpers shared by the cmocka tests: a context on the test device,
 * seeded random numbers (fresh per run unless CLPHYS_TEST_SEED is set) from
 * the reference library's SplitMix64 stream (host/ref/ref_util.h), poisoning
 * and relative-error measures. */
#ifndef CLPHYS_TEST_UTIL_H
#define CLPHYS_TEST_UTIL_H

#include "clphys.h"
#include "host/ref/ref_util.h"
#include <setjmp.h> /* cmocka.h needs these three before it */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* Context on $CLPHYS_DEVICE, else "auto": the command's rule, so that
 * `CLPHYS_DEVICE=intel meson test` tests what `clphys --device intel` runs
 * on.  Fails the test on error. */
clphys_context *tu_context(void);
/* $CLPHYS_DEVICE, else "auto": the device spec tu_context opens, for a test
 * that opens it several times in one call (clphys_contexts_create). */
const char *tu_device_spec(void);

/* What a test file's tests share, made before the first test and undone
 * after the last as the cmocka group's fixtures; every field is optional. */
typedef struct {
    clphys_context **ctx; /* nctx contexts on the test device (tu_context) */
    int nctx;
    const char *tempdir; /* a folder tu_tempdir(tempdir, dir, dir_size) makes, */
    char *dir;           /* removed with its files by tu_remove_tempdir        */
    size_t dir_size;
    /* the file's own group fixtures, run after the above are made and
     * before they are undone (the tear-down only after a set-up that
     * succeeded) */
    CMFixtureFunction setup, teardown;
} tu_group;

/* Runs the cmocka group `tests` (an array) with what the designated
 * initializers of a tu_group say, e.g.
 *   tu_run_group(tests, .ctx = &ctx, .nctx = 1, .tempdir = "md", .dir = dir, .dir_size = sizeof dir)
 * Returns cmocka's count of failed tests (a failed set-up fails the group:
 * a context that cannot be made fails the program). */
#define tu_run_group(tests, ...)                                                                                       \
    tu_run_group_(#tests, tests, sizeof(tests) / sizeof((tests)[0]), (tu_group){__VA_ARGS__})
int tu_run_group_(const char *name, const struct CMUnitTest *tests, size_t ntests, tu_group group);

/* Sets the environment variable `name` to `value` (NULL: unsets it) for
 * the rest of a test, remembering the value it had before the first
 * tu_setenv of it since the last tu_env_restore (at most 16 names). */
void tu_setenv(const char *name, const char *value);
/* Gives every variable tu_setenv changed its value from before (unset
 * where it was unset), newest first. */
void tu_env_restore(void);

/* The path of `name` (e.g. "md/in.lj.data.gz") in tests/data/: under
 * $CLPHYS_TEST_DATA when set, else the data/ folder beside this source
 * (meson runs the tests from the build folder); into buf. */
void tu_data_path(char *buf, size_t n, const char *name);
/* The seed of this process (printed once so a failure can be replayed). */
uint64_t tu_seed(void);
/* The state of stream number `stream` of this run's seed, for ref_uniform /
 * ref_splitmix64; tu_uniform(state) is ref_uniform(state). */
uint64_t tu_rng_init(uint64_t stream);
double tu_uniform(uint64_t *state);
/* Fill with NaN bit patterns so that unwritten outputs are detected. */
void tu_poison_f32(float *a, size_t n);
void tu_poison_f64(double *a, size_t n);
/* max_i |a_i - r_i| / max(|r_i|, floor); returns +inf if any a_i is not finite. */
double tu_max_rel_err(const double *a, const double *ref, size_t n, double floor);

/* A fresh folder $TMPDIR/clphys_test_NAME_XXXXXX (or under /tmp) into buf;
 * fails the test program (exit 1, message on stderr) when none can be made. */
void tu_tempdir(const char *name, char *buf, size_t n);
/* "DIR/NAME" in one of 4 rotating static buffers (so a call can take
 * several), truncated to 255 characters. */
const char *tu_join(const char *dir, const char *name);
/* Remove a folder made by tu_tempdir with the plain files in it; says on
 * stderr what could not be removed. */
void tu_remove_tempdir(const char *dir);

#endif
