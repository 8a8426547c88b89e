/* test_lqcd_solver.c — CGNR and BiCGStab, fp64 and mixed precision, with the
 * fused level-1 kernels and with clBLAST, on the even-odd system of a random
 * SU(3) field (4^3 x 8, antiperiodic in t).  The solution is checked
 * independently with the fp64 CPU reference of D: |b - D x| / |b| <= 1.05
 * tol (tol = 1e-10); the reported residual must agree with it; CGNR takes
 * the same number of iterations both ways (the same iterates up to
 * rounding); an iteration cap gives CLPHYS_ERR_NOT_CONVERGED with the
 * residual; a solver plan reused for a second right-hand side gives an
 * independent, correct solution; a zeroed params struct solves to 1e-10;
 * antiperiodic x, y, z, t as boundary phases solves the system of flipped
 * boundary links, and keeps the mixed solve's iteration count. */
#include "util.h"
#include "host/ref/lqcd_ref.h"

#include <complex.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static clphys_context *ctx;
static clphys_lqcd_gauge_field g;
static clphys_lqcd_dslash_plan *p64, *p32, *a64, *a32; /* a*: AoS layout */
static const int DIMS[4] = {4, 4, 4, 8};
#define V (4 * 4 * 4 * 8)
static const double KAPPA = 0.124;

/* |b - D x| / |b| with the CPU reference on field u, boundary phases ph */
static double residual_on(const clphys_lqcd_gauge_field *u, const double complex ph[4], const double complex *b,
                          const double complex *x)
{
    double complex *dx = malloc(sizeof(double complex) * 12 * V);
    lqcd_ref_wilson(DIMS, (const double complex *)u->u, x, dx, KAPPA, ph);
    double r = 0, n = 0;
    for (long long k = 0; k < 12 * V; k++) {
        r += pow(cabs(b[k] - dx[k]), 2);
        n += pow(cabs(b[k]), 2);
    }
    free(dx);
    return sqrt(r / n);
}

/* p,p,p,a on the test's field */
static double true_residual(const double complex *b, const double complex *x)
{
    double complex ph[4];
    lqcd_bc_antiperiodic_t(ph, 1);
    return residual_on(&g, ph, b, x);
}

/* Solve with a fresh b; the iterations taken. */
static int run_on(clphys_lqcd_dslash_plan *q64, clphys_lqcd_dslash_plan *q32, clphys_lqcd_solver_kind kind, int mixed,
                  int fused);
static void run(clphys_lqcd_solver_kind kind, int mixed, int fused) { run_on(p64, p32, kind, mixed, fused); }
static int run_on(clphys_lqcd_dslash_plan *q64, clphys_lqcd_dslash_plan *q32, clphys_lqcd_solver_kind kind, int mixed,
                  int fused)
{
    if (!p64) skip();
    uint64_t rng = tu_rng_init(70 + kind * 2 + mixed + 8 * fused);
    double complex *b = malloc(sizeof(double complex) * 12 * V), *x = malloc(sizeof(double complex) * 12 * V);
    for (long long k = 0; k < 12 * V; k++) b[k] = (2 * tu_uniform(&rng) - 1) + I * (2 * tu_uniform(&rng) - 1);
    tu_poison_f64((double *)x, 24 * V);
    clphys_lqcd_solver_params prm = {.kind = kind,
                                     .tol = 1e-10,
                                     .max_iter = 2000,
                                     .mixed = mixed,
                                     .blas = fused ? CLPHYS_LQCD_SOLVER_BLAS_FUSED : CLPHYS_LQCD_SOLVER_BLAS_CLBLAST};
    clphys_lqcd_solver_result res;
    clphys_status st = clphys_lqcd_solve(q64, q32, &prm, (double *)b, (double *)x, &res);
    if (st) fail_msg("solve: %s: %s", clphys_status_string(st), clphys_last_error(ctx));
    double tr = true_residual(b, x);
    print_message("# %s %s %s: %d iterations, %d restarts, reported %.3g, reference %.3g\n",
                  kind == CLPHYS_LQCD_SOLVER_CGNR ? "CGNR" : "BiCGStab", mixed ? "mixed" : "fp64",
                  fused ? "fused" : "clBLAST", res.iterations, res.restarts, res.rel_residual, tr);
    assert_true(res.rel_residual <= 1e-10);
    assert_true(tr <= 1.05e-10);
    assert_true(fabs(tr - res.rel_residual) <= 1e-3 * tr + 1e-14);
    assert_true(res.iterations > 0);
    free(b), free(x);
    return res.iterations;
}

static void test_cgnr_fp64(void **s)
{
    (void)s;
    run(CLPHYS_LQCD_SOLVER_CGNR, 0, 0);
}
static void test_bicgstab_fp64(void **s)
{
    (void)s;
    run(CLPHYS_LQCD_SOLVER_BICGSTAB, 0, 0);
}
static void test_cgnr_mixed(void **s)
{
    (void)s;
    run(CLPHYS_LQCD_SOLVER_CGNR, 1, 0);
}
static void test_bicgstab_mixed(void **s)
{
    (void)s;
    run(CLPHYS_LQCD_SOLVER_BICGSTAB, 1, 0);
}
static void test_cgnr_fp64_fused(void **s)
{
    (void)s;
    run(CLPHYS_LQCD_SOLVER_CGNR, 0, 1);
}
static void test_cgnr_mixed_fused(void **s)
{
    (void)s;
    run(CLPHYS_LQCD_SOLVER_CGNR, 1, 1);
}
static void test_bicgstab_mixed_fused(void **s)
{
    (void)s;
    run(CLPHYS_LQCD_SOLVER_BICGSTAB, 1, 1);
}
static void test_bicgstab_fp64_fused(void **s)
{
    (void)s;
    run(CLPHYS_LQCD_SOLVER_BICGSTAB, 0, 1);
}

static void test_aos_layout(void **s)
{
    (void)s;
    if (!a64) skip();
    print_message("# AoS layout:\n");
    run_on(a64, a32, CLPHYS_LQCD_SOLVER_CGNR, 1, 0);
    run_on(a64, a32, CLPHYS_LQCD_SOLVER_BICGSTAB, 0, 1);
}

static void test_not_converged(void **state)
{
    (void)state;
    if (!p64) skip();
    uint64_t rng = tu_rng_init(80);
    double complex *b = malloc(sizeof(double complex) * 12 * V), *x = malloc(sizeof(double complex) * 12 * V);
    for (long long k = 0; k < 12 * V; k++) b[k] = tu_uniform(&rng) + I * tu_uniform(&rng);
    clphys_lqcd_solver_params prm = {
        .kind = CLPHYS_LQCD_SOLVER_CGNR, .tol = 1e-12, .max_iter = 3, .blas = CLPHYS_LQCD_SOLVER_BLAS_CLBLAST};
    clphys_lqcd_solver_result res;
    assert_int_equal(clphys_lqcd_solve(p64, NULL, &prm, (double *)b, (double *)x, &res), CLPHYS_ERR_NOT_CONVERGED);
    assert_true(res.rel_residual > 1e-12 && isfinite(res.rel_residual));
    assert_true(res.iterations == 3);
    assert_non_null(strstr(clphys_last_error(ctx), "residual"));
    /* the reported residual is the true one */
    assert_true(fabs(true_residual(b, x) - res.rel_residual) < 1e-6 * res.rel_residual);
    free(b), free(x);
}

/* Fused kernels (scalars on the device, convergence read one step late)
 * and clBLAST (scalars on the host) run the same algorithm: CGNR takes the
 * same number of iterations (within 1) on the same b, fp64 and mixed.  Also
 * the iteration cap with the fused kernels. */
static void test_fused_equals_clblast(void **state)
{
    (void)state;
    if (!p64) skip();
    for (int mixed = 0; mixed < 2; mixed++) {
        const int a = run_on(p64, p32, CLPHYS_LQCD_SOLVER_CGNR, mixed, 1),
                  b = run_on(p64, p32, CLPHYS_LQCD_SOLVER_CGNR, mixed, 0);
        assert_true(abs(a - b) <= 1);
    }
    double complex *b = malloc(sizeof(double complex) * 12 * V), *x = malloc(sizeof(double complex) * 12 * V);
    uint64_t rng = tu_rng_init(96);
    for (long long k = 0; k < 12 * V; k++) b[k] = (2 * tu_uniform(&rng) - 1) + I * (2 * tu_uniform(&rng) - 1);
    for (int kind = CLPHYS_LQCD_SOLVER_CGNR; kind <= CLPHYS_LQCD_SOLVER_BICGSTAB; kind++) {
        clphys_lqcd_solver_params prm = {
            .kind = (clphys_lqcd_solver_kind)kind, .tol = 1e-12, .max_iter = 3, .blas = CLPHYS_LQCD_SOLVER_BLAS_FUSED};
        clphys_lqcd_solver_result res;
        assert_int_equal(clphys_lqcd_solve(p64, NULL, &prm, (double *)b, (double *)x, &res), CLPHYS_ERR_NOT_CONVERGED);
        assert_true(res.iterations == 3);
        assert_true(fabs(true_residual(b, x) - res.rel_residual) < 1e-6 * res.rel_residual);
    }
    free(b), free(x);
}

/* A zeroed params struct: CGNR, fused kernels, tol 1e-10, in fp64. */
static void test_defaults(void **state)
{
    (void)state;
    if (!p64) skip();
    uint64_t rng = tu_rng_init(97);
    double complex *b = malloc(sizeof(double complex) * 12 * V), *x = malloc(sizeof(double complex) * 12 * V);
    for (long long k = 0; k < 12 * V; k++) b[k] = (2 * tu_uniform(&rng) - 1) + I * (2 * tu_uniform(&rng) - 1);
    tu_poison_f64((double *)x, 24 * V);
    clphys_lqcd_solver_params prm = {0};
    clphys_lqcd_solver_result res;
    assert_int_equal(clphys_lqcd_solve(p64, NULL, &prm, (double *)b, (double *)x, &res), CLPHYS_SUCCESS);
    const double tr = true_residual(b, x);
    print_message("# zeroed params: %d iterations, reference residual %.3g\n", res.iterations, tr);
    assert_true(tr <= 1.05e-10);
    prm.tol = -1;
    assert_int_equal(clphys_lqcd_solve(p64, NULL, &prm, (double *)b, (double *)x, &res), CLPHYS_ERR_INVALID_ARGUMENT);
    prm.tol = 0, prm.kind = (clphys_lqcd_solver_kind)7;
    assert_int_equal(clphys_lqcd_solve(p64, NULL, &prm, (double *)b, (double *)x, &res), CLPHYS_ERR_INVALID_ARGUMENT);
    free(b), free(x);
}

/* One solver plan, two solves with fresh right-hand sides: nothing of the
 * first solve leaks into the second (x poisoned before each). */
static void test_plan_reuse(void **state)
{
    (void)state;
    if (!p64) skip();
    uint64_t rng = tu_rng_init(90);
    clphys_lqcd_solver_params prm = {.kind = CLPHYS_LQCD_SOLVER_CGNR, .tol = 1e-10, .max_iter = 2000, .mixed = 1};
    clphys_lqcd_solver_plan *sp = NULL;
    assert_int_equal(clphys_lqcd_solver_plan_create(p64, p32, &prm, &sp), CLPHYS_SUCCESS);
    double complex *b = malloc(sizeof(double complex) * 12 * V), *x = malloc(sizeof(double complex) * 12 * V);
    for (int rep = 0; rep < 2; rep++) {
        for (long long k = 0; k < 12 * V; k++) b[k] = (2 * tu_uniform(&rng) - 1) + I * (2 * tu_uniform(&rng) - 1);
        tu_poison_f64((double *)x, 24 * V);
        clphys_lqcd_solver_result res;
        clphys_status st = clphys_lqcd_solver_solve(sp, (double *)b, (double *)x, &res);
        if (st) fail_msg("solve %d: %s", rep, clphys_last_error(ctx));
        double tr = true_residual(b, x);
        print_message("# plan reuse, solve %d: %d iterations, reference residual %.3g\n", rep, res.iterations, tr);
        assert_true(tr <= 1.05e-10);
        assert_true(res.upload_s >= 0 && res.download_s >= 0 && res.iterate_s > 0 && res.seconds >= res.iterate_s);
    }
    clphys_lqcd_solver_plan_destroy(sp);
    assert_int_equal(clphys_lqcd_solver_plan_create(p32, p32, &prm, &sp), CLPHYS_ERR_INVALID_ARGUMENT);
    free(b), free(x);
}

/* Antiperiodic x, y, z, t as phases in the hopping term (the API's
 * boundary) against the same boundary emulated by flipping the sign of the
 * links that cross the x, y, z ends (U -> -U is not in SU(3), so the fp32
 * reconstruct-12 inner operator rebuilds the wrong third row there), on a
 * smooth field: both fp64 solves give one solution, checked with the CPU
 * reference; the mixed solve with phases takes about the iterations of the
 * fp64 solve, the one on flipped links many more (or does not converge). */
static void test_antiperiodic_xyz(void **state)
{
    (void)state;
    if (!p64) skip();
    clphys_lqcd_gauge_field sm, fl;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &sm), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &fl), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&sm, tu_seed() + 17);
    for (size_t l = 0; l < sm.volume * 4; l++) /* U = reunitarize(1 + 0.35 R) */
        for (int k = 0; k < 9; k++) {
            sm.u[l * 18 + 2 * k] = 0.35 * sm.u[l * 18 + 2 * k] + (k % 4 == 0);
            sm.u[l * 18 + 2 * k + 1] *= 0.35;
        }
    clphys_lqcd_gauge_reunitarize(&sm);
    memcpy(fl.u, sm.u, sizeof(double) * 72 * sm.volume);
    for (long long x = 0; x < V; x++) {
        int c[4];
        lqcd_coords(DIMS, x, c);
        for (int mu = 0; mu < 3; mu++)
            if (c[mu] == DIMS[mu] - 1)
                for (int k = 0; k < 18; k++) fl.u[(x * 4 + mu) * 18 + k] = -fl.u[(x * 4 + mu) * 18 + k];
    }
    const clphys_lqcd_bc aaaa[4] = {CLPHYS_LQCD_BC_ANTIPERIODIC, CLPHYS_LQCD_BC_ANTIPERIODIC,
                                    CLPHYS_LQCD_BC_ANTIPERIODIC, CLPHYS_LQCD_BC_ANTIPERIODIC};
    clphys_lqcd_dslash_params
        q64 = {.precision = CLPHYS_FP64, .reconstruct = 18, .kappa = KAPPA, .layout = CLPHYS_LQCD_SOA},
        q32 = {.precision = CLPHYS_FP32, .reconstruct = 12, .kappa = KAPPA, .layout = CLPHYS_LQCD_SOA};
    clphys_lqcd_dslash_params a64 = q64, a32 = q32;
    memcpy(a64.bc, aaaa, sizeof aaaa);
    memcpy(a32.bc, aaaa, sizeof aaaa);
    clphys_lqcd_dslash_plan *ph64 = NULL, *ph32 = NULL, *fl64 = NULL, *fl32 = NULL;
    assert_int_equal(clphys_lqcd_dslash_plan_create(ctx, &sm, &a64, &ph64), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_dslash_plan_create(ctx, &sm, &a32, &ph32), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_dslash_plan_create(ctx, &fl, &q64, &fl64), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_dslash_plan_create(ctx, &fl, &q32, &fl32), CLPHYS_SUCCESS);
    uint64_t rng = tu_rng_init(33);
    double complex *b = malloc(sizeof(double complex) * 12 * V), *x = malloc(sizeof(double complex) * 12 * V),
                   *xf = malloc(sizeof(double complex) * 12 * V);
    for (long long k = 0; k < 12 * V; k++) b[k] = (2 * tu_uniform(&rng) - 1) + I * (2 * tu_uniform(&rng) - 1);
    const double complex ph[4] = {-1, -1, -1, -1};
    int it[3];
    clphys_lqcd_solver_result res;
    for (int run = 0; run < 3; run++) { /* phases fp64, phases mixed, flipped links fp64 */
        clphys_lqcd_solver_params prm = {.tol = 1e-10, .max_iter = 2000, .mixed = run == 1};
        double complex *xo = run == 2 ? xf : x;
        tu_poison_f64((double *)xo, 24 * V);
        clphys_status st = run < 2 ? clphys_lqcd_solve(ph64, ph32, &prm, (double *)b, (double *)xo, &res)
                                   : clphys_lqcd_solve(fl64, NULL, &prm, (double *)b, (double *)xo, &res);
        if (st) fail_msg("solve %d: %s", run, clphys_last_error(ctx));
        const double tr = residual_on(&sm, ph, b, xo);
        print_message("# a,a,a,a %s: %d iterations, %d restarts, reference residual %.3g\n",
                      run == 0   ? "phases fp64"
                      : run == 1 ? "phases mixed"
                                 : "flipped links fp64",
                      res.iterations, res.restarts, tr);
        assert_true(tr <= 1.05e-10);
        it[run] = res.iterations;
    }
    double d = 0, n = 0;
    for (long long k = 0; k < 12 * V; k++) d += pow(cabs(x[k] - xf[k]), 2), n += pow(cabs(x[k]), 2);
    print_message("# phases vs flipped links, |x - x'| / |x| = %.3g\n", sqrt(d / n));
    assert_true(sqrt(d / n) < 1e-8);
    /* the mixed solve on flipped links: the inner fp32 reconstruct-12 operator is another one */
    clphys_lqcd_solver_params prm = {.tol = 1e-10, .max_iter = 20 * it[0], .mixed = 1};
    clphys_status st = clphys_lqcd_solve(fl64, fl32, &prm, (double *)b, (double *)xf, &res);
    print_message("# flipped links mixed: %s, %d iterations, %d restarts (phases mixed: %d, fp64: %d)\n",
                  st ? "not converged" : "converged", res.iterations, res.restarts, it[1], it[0]);
    assert_true(it[1] <= 1.25 * it[0] + 5);
    assert_true(st == CLPHYS_ERR_NOT_CONVERGED || res.iterations > 1.5 * it[1]);
    clphys_lqcd_dslash_plan_destroy(ph64), clphys_lqcd_dslash_plan_destroy(ph32);
    clphys_lqcd_dslash_plan_destroy(fl64), clphys_lqcd_dslash_plan_destroy(fl32);
    clphys_lqcd_gauge_destroy(&sm), clphys_lqcd_gauge_destroy(&fl);
    free(b), free(x), free(xf);
}

static int setup(void **state)
{
    (void)state;
    if (!clphys_context_device(ctx)->fp64) return 0;
    if (clphys_lqcd_gauge_create(DIMS, &g)) return -1;
    clphys_lqcd_gauge_hot(&g, tu_seed() + 3);
    /* the boundary of a zeroed struct: p,p,p,a */
    clphys_lqcd_dslash_params
        a = {.precision = CLPHYS_FP64, .reconstruct = 18, .kappa = KAPPA, .layout = CLPHYS_LQCD_SOA},
        b = {.precision = CLPHYS_FP32, .reconstruct = 12, .kappa = KAPPA, .layout = CLPHYS_LQCD_SOA};
    clphys_lqcd_dslash_params aa = a, ab = b;
    aa.layout = ab.layout = CLPHYS_LQCD_AOS;
    if (clphys_lqcd_dslash_plan_create(ctx, &g, &a, &p64) || clphys_lqcd_dslash_plan_create(ctx, &g, &b, &p32) ||
        clphys_lqcd_dslash_plan_create(ctx, &g, &aa, &a64) || clphys_lqcd_dslash_plan_create(ctx, &g, &ab, &a32)) {
        fprintf(stderr, "%s\n", clphys_last_error(ctx));
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clphys_lqcd_dslash_plan_destroy(p64);
    clphys_lqcd_dslash_plan_destroy(p32);
    clphys_lqcd_dslash_plan_destroy(a64);
    clphys_lqcd_dslash_plan_destroy(a32);
    clphys_lqcd_gauge_destroy(&g);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cgnr_fp64),
        cmocka_unit_test(test_bicgstab_fp64),
        cmocka_unit_test(test_cgnr_mixed),
        cmocka_unit_test(test_bicgstab_mixed),
        cmocka_unit_test(test_cgnr_fp64_fused),
        cmocka_unit_test(test_cgnr_mixed_fused),
        cmocka_unit_test(test_bicgstab_mixed_fused),
        cmocka_unit_test(test_aos_layout),
        cmocka_unit_test(test_not_converged),
        cmocka_unit_test(test_plan_reuse),
        cmocka_unit_test(test_bicgstab_fp64_fused),
        cmocka_unit_test(test_fused_equals_clblast),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_antiperiodic_xyz),
    };
    return tu_run_group(tests, .ctx = &ctx, .nctx = 1, .setup = setup, .teardown = teardown);
}
