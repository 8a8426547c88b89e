/* util.c — see util.h. */
#include "util.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <unistd.h>

clphys_context *tu_context(void)
{
    clphys_context *ctx = NULL;
    clphys_status st = clphys_context_create(NULL, &ctx); /* $CLPHYS_DEVICE, else auto */
    if (st != CLPHYS_SUCCESS) fail_msg("context: %s: %s", clphys_status_string(st), clphys_last_error(NULL));
    return ctx;
}

const char *tu_device_spec(void)
{
    const char *s = getenv("CLPHYS_DEVICE");
    return s && *s ? s : "auto";
}

/* the group tu_run_group_ runs, for its fixtures */
static tu_group group;
static int group_set_up; /* the file's set-up ran and succeeded: its tear-down is due */

static int group_setup(void **state)
{
    for (int i = 0; i < group.nctx; i++) group.ctx[i] = tu_context();
    if (group.tempdir) tu_tempdir(group.tempdir, group.dir, group.dir_size);
    const int r = group.setup ? group.setup(state) : 0;
    group_set_up = r == 0;
    return r;
}

/* cmocka runs the group tear-down after a failed set-up too */
static int group_teardown(void **state)
{
    const int r = group.teardown && group_set_up ? group.teardown(state) : 0;
    group_set_up = 0;
    if (group.tempdir && group.dir[0]) tu_remove_tempdir(group.dir);
    for (int i = 0; i < group.nctx; i++) {
        clphys_context_destroy(group.ctx[i]);
        group.ctx[i] = NULL;
    }
    return r;
}

int tu_run_group_(const char *name, const struct CMUnitTest *tests, size_t ntests, tu_group g)
{
    group = g;
    if (group.tempdir) group.dir[0] = 0;
    return _cmocka_run_group_tests(name, tests, ntests, group_setup, group_teardown);
}

/* the variables tu_setenv changed since the last tu_env_restore */
enum { TU_ENV_MAX = 16 };
static struct {
    char *name, *value; /* value NULL: it was unset */
} saved_env[TU_ENV_MAX];
static int nsaved_env;

void tu_setenv(const char *name, const char *value)
{
    int known = 0;
    for (int i = 0; i < nsaved_env; i++) known |= !strcmp(saved_env[i].name, name);
    if (!known) {
        if (nsaved_env == TU_ENV_MAX) fail_msg("tu_setenv: more than %d variables changed at once", TU_ENV_MAX);
        const char *old = getenv(name);
        saved_env[nsaved_env].name = strdup(name);
        saved_env[nsaved_env].value = old ? strdup(old) : NULL;
        nsaved_env++;
    }
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

void tu_env_restore(void)
{
    while (nsaved_env > 0) {
        nsaved_env--;
        if (saved_env[nsaved_env].value)
            setenv(saved_env[nsaved_env].name, saved_env[nsaved_env].value, 1);
        else
            unsetenv(saved_env[nsaved_env].name);
        free(saved_env[nsaved_env].name);
        free(saved_env[nsaved_env].value);
    }
}

void tu_data_path(char *buf, size_t n, const char *name)
{
    const char *d = getenv("CLPHYS_TEST_DATA");
    if (d && *d) {
        snprintf(buf, n, "%s/%s", d, name);
        return;
    }
    const char *f = __FILE__, *slash = strrchr(f, '/'); /* this file is in tests/, beside data/ */
    snprintf(buf, n, "%.*sdata/%s", slash ? (int)(slash - f + 1) : 0, f, name);
}

uint64_t tu_seed(void)
{
    static uint64_t seed;
    static int done;
    if (!done) {
        const char *s = getenv("CLPHYS_TEST_SEED");
        seed = s ? strtoull(s, NULL, 0) : ((uint64_t)time(NULL) ^ ((uint64_t)clock() << 20));
        fprintf(stderr, "# test seed %llu (set CLPHYS_TEST_SEED to replay)\n", (unsigned long long)seed);
        done = 1;
    }
    return seed;
}

uint64_t tu_rng_init(uint64_t stream) { return tu_seed() ^ (stream * 0xd1b54a32d192ed03ULL); }

double tu_uniform(uint64_t *state) { return ref_uniform(state); }

void tu_poison_f32(float *a, size_t n)
{
    for (size_t i = 0; i < n; i++) a[i] = NAN;
}

void tu_poison_f64(double *a, size_t n)
{
    for (size_t i = 0; i < n; i++) a[i] = NAN;
}

double tu_max_rel_err(const double *a, const double *ref, size_t n, double floor)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i])) return INFINITY;
        double d = fabs(a[i] - ref[i]) / fmax(fabs(ref[i]), floor);
        if (d > m) m = d;
    }
    return m;
}

const char *tu_join(const char *dir, const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

void tu_tempdir(const char *name, char *buf, size_t n)
{
    const char *base = getenv("TMPDIR");
    snprintf(buf, n, "%s/clphys_test_%s_XXXXXX", base && *base ? base : "/tmp", name);
    if (!mkdtemp(buf)) {
        fprintf(stderr, "%s: cannot make a temporary folder %s: %s\n", name, buf, strerror(errno));
        exit(1);
    }
}

void tu_remove_tempdir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4096];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                if (remove(path)) fprintf(stderr, "cannot remove %s: %s\n", path, strerror(errno));
            }
        closedir(d);
    }
    if (rmdir(dir)) fprintf(stderr, "cannot remove %s: %s\n", dir, strerror(errno));
}
