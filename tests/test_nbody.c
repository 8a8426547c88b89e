/* test_nbody.c — the N-body driver pieces: NBabel reader (energies of the
 * public inputs input16/input128 with eps = 0 in fp64: W = -1/2, K = 1/4,
 * E = -1/4 to 1e-12), bad input naming file and line, atomic snapshot writes,
 * the Plummer generator (E = -1/4 in N-body units, centre-of-mass frame) and
 * energy conservation of a short leapfrog run. */
#include "util.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static clphys_context *ctx;

static void energies_of(const clphys_nbody_system *s, clphys_precision p, double eps, clphys_nbody_energy *e)
{
    clphys_nbody_gravity_params prm = {0, p, CLPHYS_NBODY_GRAVITY_AUTO, 1.0, eps, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    clphys_nbody_gravity_plan *pl = NULL;
    clphys_status st = clphys_nbody_gravity_plan_create(ctx, &prm, &pl);
    if (st) fail_msg("plan: %s", clphys_last_error(ctx));
    double *acc = malloc(3 * s->n * sizeof *acc), *pot = malloc(s->n * sizeof *pot);
    tu_poison_f64(pot, s->n);
    st = clphys_nbody_gravity_compute(pl, s->n, NULL, s->n, s->x, acc, pot, 0, 1, NULL);
    if (st) fail_msg("compute: %s", clphys_last_error(ctx));
    assert_int_equal(clphys_nbody_energy_of(ctx, s, pot, e), CLPHYS_SUCCESS);
    free(acc), free(pot);
    clphys_nbody_gravity_plan_destroy(pl);
}

static void nbabel_energy(const char *name, int n)
{
    if (!clphys_context_device(ctx)->fp64) skip();
    char path[1024];
    tu_data_path(path, sizeof path, name);
    clphys_nbody_system s;
    clphys_status st = clphys_nbody_read(NULL, path, &s);
    if (st) fail_msg("read: %s", clphys_last_error(NULL));
    assert_int_equal(s.n, n);
    clphys_nbody_energy e;
    energies_of(&s, CLPHYS_FP64, 0.0, &e);
    if (fabs(e.potential + 0.5) > 1e-12 || fabs(e.kinetic - 0.25) > 1e-12 || fabs(e.total + 0.25) > 1e-12)
        fail_msg("%s: K = %.17g W = %.17g E = %.17g", name, e.kinetic, e.potential, e.total);
    clphys_nbody_system_destroy(&s);
}
static void nbabel_input16(void **st)
{
    (void)st;
    nbabel_energy("input16", 16);
}
static void nbabel_input128(void **st)
{
    (void)st;
    nbabel_energy("input128", 128);
}

/* Write text to a temp file; the error from reading it must contain want. */
static void expect_read_error(const char *text, clphys_status want_st, const char *want)
{
    char path[] = "/tmp/clphys_nbody_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    clphys_nbody_system s = {0, NULL, NULL};
    clphys_status st = clphys_nbody_read(NULL, path, &s);
    const char *msg = clphys_last_error(NULL);
    if (st != want_st || !strstr(msg, want) || !strstr(msg, path))
        fail_msg("input %s: got status %d message '%s', want %d '%s'", text, st, msg, want_st, want);
    assert_null(s.x);
    remove(path);
}

static void bad_input(void **st)
{
    (void)st;
    const char *ok = "-1 0.5 0 0 0 0 0 0\n";
    char buf[256];
    snprintf(buf, sizeof buf, "%s%s", ok, "-1 0.5 1 2 3 0 0\n");
    expect_read_error(buf, CLPHYS_ERR_FORMAT, ":2: 7 fields");
    snprintf(buf, sizeof buf, "%s# c\n%s", ok, "-1 0.5 1 x 3 0 0 0\n");
    expect_read_error(buf, CLPHYS_ERR_FORMAT, ":3: field 4 is not a number");
    snprintf(buf, sizeof buf, "%s%s", ok, "-1 0.5 nan 2 3 0 0 0\n");
    expect_read_error(buf, CLPHYS_ERR_INPUT, ":2: field 3 is not finite");
    snprintf(buf, sizeof buf, "%s%s", ok, "-1 0.5 inf 2 3 0 0 0\n");
    expect_read_error(buf, CLPHYS_ERR_INPUT, ":2: field 3 is not finite");
    snprintf(buf, sizeof buf, "%s%s", ok, "-1 -0.5 1 2 3 0 0 0\n");
    expect_read_error(buf, CLPHYS_ERR_INPUT, ":2: negative mass");
    expect_read_error("-1 0 1 2 3 0 0 0\n", CLPHYS_ERR_INPUT, "total mass 0");
    expect_read_error("\n# nothing\n", CLPHYS_ERR_INPUT, "no particles");
    clphys_nbody_system s;
    assert_int_equal(clphys_nbody_read(NULL, "/nonexistent/x", &s), CLPHYS_ERR_IO);
    assert_non_null(strstr(clphys_last_error(NULL), "/nonexistent/x"));
    /* eps = 0 and two particles at one point: the gravity call refuses */
    clphys_nbody_gravity_params prm = {0, CLPHYS_FP32, CLPHYS_NBODY_GRAVITY_AUTO, 1.0, 0.0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    clphys_nbody_gravity_plan *pl = NULL;
    assert_int_equal(clphys_nbody_gravity_plan_create(ctx, &prm, &pl), CLPHYS_SUCCESS);
    double x[12] = {0, 0, 0, 1, 1, 2, 3, 1, 0, 0, 0, 1}, acc[9], pot[3];
    assert_int_equal(clphys_nbody_gravity_compute(pl, 3, NULL, 3, x, acc, pot, 0, 1, NULL), CLPHYS_ERR_INPUT);
    assert_non_null(strstr(clphys_last_error(ctx), "particles 0 and 2"));
    clphys_nbody_gravity_plan_destroy(pl);
    /* NULL arguments: a status, not a crash; destroy accepts NULL and empties */
    clphys_nbody_energy e;
    clphys_nbody_system none = {0, NULL, NULL};
    assert_int_equal(clphys_nbody_energy_of(NULL, &none, NULL, &e), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(clphys_nbody_plummer(NULL, 0, 1, &none), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(clphys_nbody_read(NULL, NULL, &none), CLPHYS_ERR_INVALID_ARGUMENT);
    clphys_nbody_system_destroy(NULL);
    assert_int_equal(clphys_nbody_plummer(NULL, 10, 1, &none), CLPHYS_SUCCESS);
    clphys_nbody_system_destroy(&none);
    assert_true(none.n == 0 && !none.x && !none.v);
}

static void write_read_atomic(void **st)
{
    (void)st;
    clphys_nbody_system s, r;
    assert_int_equal(clphys_nbody_plummer(NULL, 100, tu_seed(), &s), CLPHYS_SUCCESS);
    char dir[] = "/tmp/clphys_nbody_dXXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[256], tmp[300];
    snprintf(file, sizeof file, "%s/snap.txt", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    assert_int_equal(clphys_nbody_write(NULL, file, &s), CLPHYS_SUCCESS);
    assert_true(access(tmp, F_OK) != 0); /* the temp file was renamed away */
    assert_int_equal(clphys_nbody_read(NULL, file, &r), CLPHYS_SUCCESS);
    assert_int_equal(r.n, s.n);
    for (size_t i = 0; i < 4 * s.n; i++) assert_true(r.x[i] == s.x[i]); /* %.17g round-trips */
    for (size_t i = 0; i < 3 * s.n; i++) assert_true(r.v[i] == s.v[i]);
    /* a folder that does not exist: error, and nothing left behind */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/no/snap.txt", dir);
    assert_int_equal(clphys_nbody_write(NULL, bad, &s), CLPHYS_ERR_IO);
    remove(file);
    rmdir(dir);
    clphys_nbody_system_destroy(&s), clphys_nbody_system_destroy(&r);
}

static void plummer_units(void **st)
{
    (void)st;
    if (!clphys_context_device(ctx)->fp64) skip();
    clphys_nbody_system s;
    const int n = 2000;
    assert_int_equal(clphys_nbody_plummer(NULL, n, tu_seed(), &s), CLPHYS_SUCCESS);
    double m = 0, c[6] = {0};
    for (int i = 0; i < n; i++) {
        m += s.x[4 * i + 3];
        for (int k = 0; k < 3; k++)
            c[k] += s.x[4 * i + 3] * s.x[4 * i + k], c[3 + k] += s.x[4 * i + 3] * s.v[3 * i + k];
    }
    assert_true(fabs(m - 1) < 1e-12);
    for (int k = 0; k < 6; k++) assert_true(fabs(c[k]) < 1e-12);
    clphys_nbody_energy e;
    energies_of(&s, CLPHYS_FP64, 0.0, &e);
    /* E = -1/4 and Q = 1/2 up to the sampling noise of 2000 particles: over
     * 40 seeds E averaged -0.2587 with standard deviation 0.0072 and Q 0.494
     * with 0.0076, so 0.05 and 0.08 are over 5 standard deviations from the
     * mean (0.03 failed about one run in a thousand); a wrong scale radius
     * moves E by far more (a = 1 instead of 3 pi / 16 gives E = -0.147). */
    if (fabs(e.total + 0.25) > 0.05 || fabs(e.virial_ratio - 0.5) > 0.08)
        fail_msg("plummer: E = %g Q = %g", e.total, e.virial_ratio);
    clphys_nbody_system_destroy(&s);
}

/* 200 leapfrog steps of a softened Plummer sphere conserve energy. */
static void leapfrog_energy(void **st)
{
    (void)st;
    if (!clphys_context_device(ctx)->fp64) skip();
    clphys_nbody_system s;
    const int n = 256;
    const double dt = 1e-3;
    assert_int_equal(clphys_nbody_plummer(NULL, n, tu_seed(), &s), CLPHYS_SUCCESS);
    clphys_nbody_gravity_params prm = {0, CLPHYS_FP64, CLPHYS_NBODY_GRAVITY_AUTO, 1.0, 0.05, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    clphys_nbody_gravity_plan *pl = NULL;
    assert_int_equal(clphys_nbody_gravity_plan_create(ctx, &prm, &pl), CLPHYS_SUCCESS);
    double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    assert_int_equal(clphys_nbody_gravity_compute(pl, n, NULL, n, s.x, acc, pot, 0, 1, NULL), CLPHYS_SUCCESS);
    clphys_nbody_energy e0, e;
    assert_int_equal(clphys_nbody_energy_of(ctx, &s, pot, &e0), CLPHYS_SUCCESS);
    for (int k = 0; k < 200; k++) {
        for (int i = 0; i < n; i++)
            for (int c = 0; c < 3; c++)
                s.v[3 * i + c] += 0.5 * dt * acc[3 * i + c], s.x[4 * i + c] += dt * s.v[3 * i + c];
        assert_int_equal(clphys_nbody_gravity_compute(pl, n, NULL, n, s.x, acc, pot, 0, 0, NULL), CLPHYS_SUCCESS);
        for (int i = 0; i < 3 * n; i++) s.v[i] += 0.5 * dt * acc[i];
    }
    assert_int_equal(clphys_nbody_energy_of(ctx, &s, pot, &e), CLPHYS_SUCCESS);
    double de = fabs((e.total - e0.total) / e0.total);
    if (!(de < 1e-5)) fail_msg("energy drift %.3g after 200 steps", de);
    assert_true(e.momentum < 1e-10);
    free(acc), free(pot);
    clphys_nbody_gravity_plan_destroy(pl);
    clphys_nbody_system_destroy(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nbabel_input16),    cmocka_unit_test(nbabel_input128), cmocka_unit_test(bad_input),
        cmocka_unit_test(write_read_atomic), cmocka_unit_test(plummer_units),   cmocka_unit_test(leapfrog_energy),
    };
    return tu_run_group(tests, .ctx = &ctx, .nctx = 1);
}
