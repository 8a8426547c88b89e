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
