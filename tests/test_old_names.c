/* test_old_names.c — an application written with the public names from before
 * the one-stem rule (docs/naming.md) still compiles against the headers and
 * runs against the shared library for one release: the old header
 * clphys_gravity.h, old functions, types and constants, through the aliases
 * of clphys_deprecated.h.  Linked to libclphys.so as an application is (the
 * public API only).  old_names_off.c checks that CLPHYS_NO_DEPRECATED hides
 * the old names.  rename-keep-file: the old names here are the point. */
#include <clphys.h>
#include <clphys_gravity.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <cmocka.h>

int old_names_off(void);

/* the old constants are the new ones (a compile-time check) */
_Static_assert(CLPHYS_GRAVITY_AUTO == CLPHYS_NBODY_GRAVITY_AUTO, "gravity variant");
_Static_assert(CLPHYS_LJ_HALF_CAS == CLPHYS_MD_LJ_HALF_CAS, "lj variant");
_Static_assert(CLPHYS_NEIGHBOR_HALF == CLPHYS_MD_NEIGHBOR_HALF, "neighbour list kind");
_Static_assert(CLPHYS_SOLVER_CGNR == CLPHYS_LQCD_SOLVER_CGNR, "solver");
_Static_assert(CLPHYS_BC_ANTIPERIODIC == CLPHYS_LQCD_BC_ANTIPERIODIC, "boundary condition");
_Static_assert(CLPHYS_EXCHANGE_RING == CLPHYS_NBODY_GRAVITY_EXCHANGE_RING, "exchange");
_Static_assert(sizeof(clphys_dslash_params) == sizeof(clphys_lqcd_dslash_params), "dslash params");

static clphys_context *context(void)
{
    clphys_context *ctx = NULL;
    const char *spec = getenv("CLPHYS_DEVICE");
    if (clphys_context_create(spec && *spec ? spec : "auto", &ctx) != CLPHYS_SUCCESS)
        fail_msg("no device: %s", clphys_last_error(NULL));
    return ctx;
}

/* Accelerations of 16 particles through clphys_gravity_* against the direct
 * sum a_i = G sum_j m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2) in fp64,
 * fresh positions each run (rand seeded by time), output poisoned first. */
static void test_gravity_old_names(void **state)
{
    (void)state;
    enum { N = 16 };
    double x[4 * N], acc[3 * N], ref[3 * N];
    srand((unsigned)time(NULL));
    for (int i = 0; i < 4 * N; i++) x[i] = (i % 4 == 3) ? 0.5 + rand() / (double)RAND_MAX : rand() / (double)RAND_MAX;
    const double eps = 0.1;
    for (int i = 0; i < N; i++) {
        double a[3] = {0, 0, 0};
        for (int j = 0; j < N; j++) {
            if (j == i) continue;
            double d[3] = {x[4 * j] - x[4 * i], x[4 * j + 1] - x[4 * i + 1], x[4 * j + 2] - x[4 * i + 2]};
            double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps * eps;
            for (int k = 0; k < 3; k++) a[k] += x[4 * j + 3] * d[k] / (r2 * sqrt(r2));
        }
        for (int k = 0; k < 3; k++) ref[3 * i + k] = a[k];
    }
    for (int i = 0; i < 3 * N; i++) acc[i] = NAN;
    clphys_context *ctx = context();
    clphys_gravity_params p = {.precision = CLPHYS_FP32, .variant = CLPHYS_GRAVITY_AUTO, .G = 1.0, .eps = eps};
    clphys_gravity_plan *plan = NULL;
    assert_int_equal(clphys_gravity_plan_create(ctx, &p, &plan), CLPHYS_SUCCESS);
    assert_int_equal(clphys_gravity_compute(plan, N, NULL, N, x, acc, NULL, 0, 0, NULL), CLPHYS_SUCCESS);
    assert_non_null(clphys_gravity_plan_variant(plan));
    double worst = 0, scale = 0;
    for (int i = 0; i < 3 * N; i++) scale = fmax(scale, fabs(ref[i]));
    for (int i = 0; i < 3 * N; i++) worst = isfinite(acc[i]) ? fmax(worst, fabs(acc[i] - ref[i]) / scale) : INFINITY;
    assert_true(worst < 1e-4); /* fp32 over 16 terms */
    clphys_gravity_plan_destroy(plan);
    clphys_context_destroy(ctx);
}

/* The lattice path's old names: a cold field's plaquette is 1, a hot one's
 * is not (host code only). */
static void test_gauge_old_names(void **state)
{
    (void)state;
    const int dims[4] = {2, 2, 2, 2};
    clphys_gauge_field g;
    assert_int_equal(clphys_gauge_create(dims, &g), CLPHYS_SUCCESS);
    clphys_gauge_cold(&g);
    assert_true(fabs(clphys_gauge_plaquette(&g) - 1.0) < 1e-12);
    clphys_gauge_hot(&g, 7);
    assert_true(clphys_gauge_plaquette(&g) < 0.9);
    clphys_gauge_destroy(&g);
    assert_int_equal(old_names_off(), CLPHYS_MD_LJ_AUTO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_gravity_old_names),
                                       cmocka_unit_test(test_gauge_old_names)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
