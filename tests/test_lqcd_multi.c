/* test_lqcd_multi.c — the lattice path over several devices of one process
 * (clphys_lqcd_dslash_plan_create_multi, host/lqcd/multi.c): the device of
 * CLPHYS_DEVICE (else "auto") opened two or four times, one host thread per
 * context, on a 4^3 x 8 lattice, the process grids of the MPI tests
 * (1x1x1x2, 1x1x2x1, 2x1x1x1; 1x1x2x2):
 *  - every operator (full-lattice H and D, H_eo, H_oe, the even-odd M, the
 *    gamma5-folded hops of M^+) on the devices equals the single-device one
 *    to 1e-14 in fp64 (2e-6 in fp32) on every grid, reconstruct-12 and -18
 *    and antiperiodic and periodic (with a U(1) phase in y) boundaries each
 *    on two grids; outputs poisoned first;
 *  - CGNR and BiCGStab in fp64 over the devices take the single device's
 *    iteration count and reach its solution to 1e-8; mixed precision
 *    reaches the tolerance; every device reports the same result;
 *  - 16-bit faces of the fp32 operator (halo_half): the operator within
 *    2e-4 of one device's (and measurably not fp32: above 3e-6 on some operator), the mixed
 *    solves at the tolerance with iteration counts within 10% of one
 *    device's;
 *  - clean errors: a grid that does not divide the lattice or does not
 *    match the devices, a device spec that opens nothing, and a caller's
 *    error on one device ends the others' collective call with an error
 *    instead of a hang. */
#include "util.h"
#include "host/lqcd/lqcd_internal.h"

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static const int DIMS[4] = {4, 4, 4, 8};
#define GV   (4 * 4 * 4 * 8)
#define MAXD 4

static clphys_context *ctxs[MAXD];
static int nctx;

static int setup(void **state)
{
    (void)state;
    const char *dev = tu_device_spec();
    char spec[256];
    snprintf(spec, sizeof spec, "%s,%s,%s,%s", dev, dev, dev, dev);
    clphys_context **c = NULL;
    if (clphys_contexts_create(spec, 0, 1, &c, &nctx)) {
        fprintf(stderr, "contexts: %s\n", clphys_last_error(NULL));
        return -1;
    }
    for (int i = 0; i < nctx && i < MAXD; i++) ctxs[i] = c[i];
    free(c); /* the array only: the contexts stay in ctxs */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < nctx; i++) clphys_context_destroy(ctxs[i]);
    return 0;
}

static int ndev(const int grid[4]) { return grid[0] * grid[1] * grid[2] * grid[3]; }

/* Device k's block of a whole-lattice array, per doubles per site. */
static size_t extract(const int grid[4], int k, const double *whole, double *part, size_t per)
{
    int ld[4], co[4];
    assert_int_equal(clphys_lqcd_grid_local(DIMS, grid, k, ld, co), CLPHYS_SUCCESS);
    const size_t lv = (size_t)ld[0] * ld[1] * ld[2] * ld[3];
    for (size_t l = 0; l < lv && part; l++) {
        size_t r = l, gs = 0, stride = 1;
        for (int mu = 0; mu < 4; mu++) {
            gs += (r % (size_t)ld[mu] + (size_t)co[mu] * ld[mu]) * stride;
            r /= (size_t)ld[mu], stride *= (size_t)DIMS[mu];
        }
        memcpy(part + l * per, whole + gs * per, per * sizeof(double));
    }
    return lv;
}

static void random_spinor(double *psi, size_t n, uint64_t *rng)
{
    for (size_t i = 0; i < 24 * n; i++) psi[i] = 2 * tu_uniform(rng) - 1;
}

/* ---- one host thread per device ----------------------------------------- */
typedef struct {
    clphys_lqcd_dslash_plan *pl, *pl32;
    int op, g5, bad; /* bad: this thread passes out == in */
    const double *in;
    double *out;
    size_t lv;
    const clphys_lqcd_solver_params *prm;
    clphys_lqcd_solver_result res;
    clphys_status st;
} job;

/* op on host spinors as test_lqcd_mpi.c's run_op: out (zero outside the
 * output parity) = op in, device output poisoned first; no cmocka call
 * (this runs on a thread of its own). */
static clphys_status run_op(job *j)
{
    clphys_lqcd_dslash_plan *pl = j->pl;
    const int half = j->g5 || j->op >= CLPHYS_LQCD_DSLASH_H_EO;
    const int pin = !half ? -1 : j->op == CLPHYS_LQCD_DSLASH_H_EO ? 1 : j->g5 == 2 ? 1 : 0;
    const int pout = !half ? -1 : j->op == CLPHYS_LQCD_DSLASH_H_OE || j->g5 == 1 ? 1 : 0;
    double *nan = malloc(sizeof(double) * 24 * j->lv);
    tu_poison_f64(nan, 24 * j->lv);
    cl_mem a = NULL, b = NULL;
    clphys_status st = clphys_lqcd_dslash_field_create(pl, half, &a);
    if (!st) st = clphys_lqcd_dslash_field_create(pl, half, &b);
    if (!st) st = clphys_lqcd_dslash_field_write(pl, a, pin, j->in);
    if (!st) st = clphys_lqcd_dslash_field_write(pl, b, pout, nan);
    if (st)
        lqcd_multi_fail(pl);
    else if (j->bad)
        st = clphys_lqcd_dslash_apply(pl, (clphys_lqcd_dslash_op)j->op, a, a, NULL);
    else if (j->g5 == 1)
        st = lqcd_hop_g5(pl, b, a, NULL, 0, 1, 1, NULL);
    else if (j->g5 == 2)
        st = lqcd_hop_g5(pl, b, a, a, -0.0144, 0, 2, NULL);
    else
        st = clphys_lqcd_dslash_apply(pl, (clphys_lqcd_dslash_op)j->op, b, a, NULL);
    memset(j->out, 0, sizeof(double) * 24 * j->lv);
    if (!st) st = clphys_lqcd_dslash_field_read(pl, b, pout, j->out);
    cp_release_mem(&a), cp_release_mem(&b);
    free(nan);
    return st;
}

static void *op_thread(void *arg)
{
    job *j = arg;
    j->st = run_op(j);
    return NULL;
}

static void *solve_thread(void *arg)
{
    job *j = arg;
    j->st = clphys_lqcd_solve(j->pl, j->pl32, j->prm, j->in, j->out, &j->res);
    if (j->st) lqcd_multi_fail(j->pl);
    return NULL;
}

static void run_threads(int n, job *jobs, void *(*fn)(void *))
{
    pthread_t t[MAXD];
    for (int k = 0; k < n; k++) assert_int_equal(pthread_create(&t[k], NULL, fn, &jobs[k]), 0);
    for (int k = 0; k < n; k++) pthread_join(t[k], NULL);
}

static clphys_lqcd_dslash_plan *single_plan(const clphys_lqcd_gauge_field *g, const clphys_lqcd_dslash_params *p)
{
    clphys_lqcd_dslash_plan *pl = NULL;
    if (clphys_lqcd_dslash_plan_create(ctxs[0], g, p, &pl)) fail_msg("single plan: %s", clphys_last_error(ctxs[0]));
    return pl;
}

static void multi_plans(const int grid[4], const clphys_lqcd_gauge_field *g, const clphys_lqcd_dslash_params *p,
                        clphys_lqcd_dslash_plan **pl)
{
    if (clphys_lqcd_dslash_plan_create_multi(ndev(grid), ctxs, grid, g, p, pl))
        fail_msg("multi plans: %s", clphys_last_error(NULL));
}

static const char *const OPS[7] = {"H", "D", "H_eo", "H_oe", "M", "H_oe g5in", "x+a g5 H_eo"};

/* Every op over the devices of grid against the single device. */
static void check_ops(const int grid[4], clphys_precision prec, int recon, int aperiodic, int half, uint64_t stream)
{
    const int n = ndev(grid);
    uint64_t rng = tu_rng_init(stream);
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + stream);
    clphys_lqcd_dslash_params p = {.precision = prec, .reconstruct = recon, .kappa = 0.12, .no_tune = 1};
    for (int mu = 0; mu < 4; mu++) p.bc[mu] = aperiodic ? CLPHYS_LQCD_BC_ANTIPERIODIC : CLPHYS_LQCD_BC_PERIODIC;
    if (!aperiodic) p.bc[1] = CLPHYS_LQCD_BC_PHASE, p.bc_phase_by_pi[1] = 0.3;
    clphys_lqcd_dslash_params poisson_mpi_params = p;
    poisson_mpi_params.halo_half = half;
    double *in = malloc(sizeof(double) * 24 * GV), *ref = malloc(sizeof(double) * 24 * GV);
    double *lin[MAXD], *lout[MAXD], *lref = malloc(sizeof(double) * 24 * GV);
    random_spinor(in, GV, &rng);
    clphys_lqcd_dslash_plan *ps = single_plan(&g, &p), *pm[MAXD];
    multi_plans(grid, &g, &poisson_mpi_params, pm);
    job jobs[MAXD];
    for (int k = 0; k < n; k++) {
        const size_t lv = extract(grid, k, in, NULL, 24);
        lin[k] = malloc(sizeof(double) * 24 * lv), lout[k] = malloc(sizeof(double) * 24 * lv);
        extract(grid, k, in, lin[k], 24);
    }
    /* 16-bit faces: 2^-16 of a face site's largest component per remote
     * hop; above fp32's rounding, so that the test sees them in use */
    const double tol = half ? 2e-4 : prec == CLPHYS_FP64 ? 1e-14 : 2e-6;
    double worst = 0;
    for (int op = 0; op < 7; op++) {
        const int g5 = op < 5 ? 0 : op - 4;
        job js = {.pl = ps, .op = g5 ? 0 : op, .g5 = g5, .in = in, .out = ref, .lv = GV};
        if (run_op(&js)) fail_msg("single: %s", clphys_last_error(ctxs[0]));
        for (int k = 0; k < n; k++)
            jobs[k] = (job){.pl = pm[k],
                            .op = g5 ? 0 : op,
                            .g5 = g5,
                            .in = lin[k],
                            .out = lout[k],
                            .lv = extract(grid, k, in, NULL, 24)};
        run_threads(n, jobs, op_thread);
        double e = 0;
        for (int k = 0; k < n; k++) {
            if (jobs[k].st) fail_msg("device %d: %s", k, clphys_last_error(ctxs[k]));
            const size_t lv = extract(grid, k, ref, lref, 24);
            const double ek = tu_max_rel_err(lout[k], lref, 24 * lv, 1.0);
            e = ek > e ? ek : e;
        }
        print_message("# grid %dx%dx%dx%d %s%s recon-%d %s %-12s devices vs one: %.3g\n", grid[0], grid[1], grid[2],
                      grid[3], prec ? "fp64" : "fp32", half ? " 16-bit faces" : "", recon,
                      aperiodic ? "a,a,a,a" : "p,0.3pi,p,p", OPS[op], e);
        assert_true(e < tol);
        worst = e > worst ? e : worst;
    }
    if (half) assert_true(worst > 3e-6);
    clphys_lqcd_dslash_plan_destroy(ps);
    for (int k = 0; k < n; k++) clphys_lqcd_dslash_plan_destroy(pm[k]), free(lin[k]), free(lout[k]);
    clphys_lqcd_gauge_destroy(&g);
    free(in), free(ref), free(lref);
}

static const int GRIDS[4][4] = {{1, 1, 1, 2}, {1, 1, 2, 1}, {2, 1, 1, 1}, {1, 1, 2, 2}};

static void test_operators_fp64(void **state)
{
    (void)state;
    if (!clphys_context_device(ctxs[0])->fp64) skip();
    /* each grid once, each reconstruction and boundary on two of them
     * (kernel builds are most of this test's time on PoCL) */
    for (int i = 0; i < 4; i++)
        check_ops(GRIDS[i], CLPHYS_FP64, i % 2 ? 18 : 12, i == 0 || i == 3, 0, 100 + (uint64_t)i);
}

static void test_operators_fp32(void **state)
{
    (void)state;
    check_ops(GRIDS[0], CLPHYS_FP32, 12, 1, 0, 200);
    check_ops(GRIDS[3], CLPHYS_FP32, 12, 0, 1, 201); /* 16-bit faces */
}

/* A solve over the devices of grid against the single device. */
static void solve_case(const int grid[4], clphys_lqcd_solver_kind kind, int mixed, int half, uint64_t stream)
{
    const int n = ndev(grid);
    uint64_t rng = tu_rng_init(stream);
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + stream);
    clphys_lqcd_dslash_params p64 = {.precision = CLPHYS_FP64, .reconstruct = 12, .kappa = 0.124, .no_tune = 1};
    p64.bc[3] = CLPHYS_LQCD_BC_ANTIPERIODIC;
    clphys_lqcd_dslash_params p32 = p64, m32p;
    p32.precision = CLPHYS_FP32;
    m32p = p32;
    m32p.halo_half = half;
    double *b = malloc(sizeof(double) * 24 * GV), *xs = malloc(sizeof(double) * 24 * GV);
    double *lb[MAXD], *lx[MAXD], *lxs = malloc(sizeof(double) * 24 * GV);
    random_spinor(b, GV, &rng);
    const clphys_lqcd_solver_params prm = {.kind = kind, .tol = 1e-10, .max_iter = 2000, .mixed = mixed};
    clphys_lqcd_dslash_plan *s64 = single_plan(&g, &p64), *s32 = mixed ? single_plan(&g, &p32) : NULL;
    clphys_lqcd_dslash_plan *m64[MAXD], *m32[MAXD] = {NULL};
    multi_plans(grid, &g, &p64, m64);
    if (mixed) multi_plans(grid, &g, &m32p, m32);
    clphys_lqcd_solver_result rs;
    tu_poison_f64(xs, 24 * GV);
    if (clphys_lqcd_solve(s64, s32, &prm, b, xs, &rs)) fail_msg("single solve: %s", clphys_last_error(ctxs[0]));
    job jobs[MAXD];
    for (int k = 0; k < n; k++) {
        const size_t lv = extract(grid, k, b, NULL, 24);
        lb[k] = malloc(sizeof(double) * 24 * lv), lx[k] = malloc(sizeof(double) * 24 * lv);
        extract(grid, k, b, lb[k], 24);
        tu_poison_f64(lx[k], 24 * lv);
        jobs[k] = (job){.pl = m64[k], .pl32 = m32[k], .in = lb[k], .out = lx[k], .lv = lv, .prm = &prm};
    }
    run_threads(n, jobs, solve_thread);
    double diff = 0, nx = 0;
    for (int k = 0; k < n; k++) {
        if (jobs[k].st) fail_msg("device %d: %s", k, clphys_last_error(ctxs[k]));
        const size_t lv = extract(grid, k, xs, lxs, 24);
        for (size_t i = 0; i < 24 * lv; i++) diff += pow(lx[k][i] - lxs[i], 2), nx += lxs[i] * lxs[i];
        assert_int_equal(jobs[k].res.iterations, jobs[0].res.iterations);
        assert_true(jobs[k].res.rel_residual == jobs[0].res.rel_residual);
    }
    diff = sqrt(diff / nx);
    print_message("# grid %dx%dx%dx%d %s %s%s: iterations %d (one device %d), residual %.3g (%.3g), |x - x_one| / |x| "
                  "%.3g\n",
                  grid[0], grid[1], grid[2], grid[3], kind == CLPHYS_LQCD_SOLVER_BICGSTAB ? "BiCGStab" : "CGNR",
                  mixed ? "mixed" : "fp64", half ? ", 16-bit faces" : "", jobs[0].res.iterations, rs.iterations,
                  jobs[0].res.rel_residual, rs.rel_residual, diff);
    assert_true(jobs[0].res.rel_residual <= 1e-10);
    assert_true(diff < 1e-8);
    /* the inner fp32 solves differ from one device's by the faces' rounding:
       a few iterations more or fewer, more where the faces are 16-bit (a
       BiCGStab of 9 iterations on one device took 11 with them) */
    if (!mixed)
        assert_int_equal(jobs[0].res.iterations, rs.iterations);
    else
        assert_true(abs(jobs[0].res.iterations - rs.iterations) <=
                    (half ? rs.iterations / 4 + 2 : rs.iterations / 10 + 1));
    clphys_lqcd_dslash_plan_destroy(s64), clphys_lqcd_dslash_plan_destroy(s32);
    for (int k = 0; k < n; k++) {
        clphys_lqcd_dslash_plan_destroy(m64[k]), clphys_lqcd_dslash_plan_destroy(m32[k]);
        free(lb[k]), free(lx[k]);
    }
    clphys_lqcd_gauge_destroy(&g);
    free(b), free(xs), free(lxs);
}

static void test_solvers(void **state)
{
    (void)state;
    if (!clphys_context_device(ctxs[0])->fp64) skip();
    solve_case(GRIDS[0], CLPHYS_LQCD_SOLVER_CGNR, 0, 0, 400);
    solve_case(GRIDS[3], CLPHYS_LQCD_SOLVER_BICGSTAB, 0, 0, 401);
    solve_case(GRIDS[0], CLPHYS_LQCD_SOLVER_CGNR, 1, 0, 402);
    solve_case(GRIDS[0], CLPHYS_LQCD_SOLVER_BICGSTAB, 1, 0, 403);
}

/* The mixed solves with the fp32 operator's faces in 16 bits: the
 * tolerance reached, iteration counts within 25% + 2 of one device's mixed
 * solve (solve_case), the solution that of one device to 1e-8. */
static void test_half_halos(void **state)
{
    (void)state;
    if (!clphys_context_device(ctxs[0])->fp64) skip();
    solve_case(GRIDS[0], CLPHYS_LQCD_SOLVER_CGNR, 1, 1, 404);
    solve_case(GRIDS[3], CLPHYS_LQCD_SOLVER_BICGSTAB, 1, 1, 405);
}

static void test_errors(void **state)
{
    (void)state;
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 500);
    const clphys_lqcd_dslash_params p = {.precision = CLPHYS_FP32, .reconstruct = 12, .kappa = 0.12, .no_tune = 1};
    clphys_lqcd_dslash_plan *pl[MAXD] = {NULL};
    /* a grid that does not divide the lattice: z 4 over 4 gives 1 */
    const int bad[4] = {1, 1, 4, 1}, wrong[4] = {1, 1, 1, 2};
    assert_int_equal(clphys_lqcd_dslash_plan_create_multi(4, ctxs, bad, &g, &p, pl), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(clphys_last_error(NULL), "does not divide"));
    assert_null(pl[0]);
    /* a grid of 2 parts for 3 devices; no contexts; a NULL context */
    assert_int_equal(clphys_lqcd_dslash_plan_create_multi(3, ctxs, wrong, &g, &p, pl), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(clphys_last_error(NULL), "not the 3 devices"));
    assert_int_equal(clphys_lqcd_dslash_plan_create_multi(2, NULL, wrong, &g, &p, pl), CLPHYS_ERR_INVALID_ARGUMENT);
    clphys_context *withnull[2] = {ctxs[0], NULL};
    assert_int_equal(clphys_lqcd_dslash_plan_create_multi(2, withnull, wrong, &g, &p, pl), CLPHYS_ERR_INVALID_ARGUMENT);
    /* a device that cannot be opened: nothing stays open */
    clphys_context **c = NULL;
    int n = 0;
    assert_int_equal(clphys_contexts_create("auto,9:9", 0, 1, &c, &n), CLPHYS_ERR_DEVICE_NOT_FOUND);
    assert_non_null(strstr(clphys_last_error(NULL), "9:9"));
    /* a caller's error on device 1 ends device 0's hop with an error, no hang */
    assert_int_equal(clphys_lqcd_dslash_plan_create_multi(2, ctxs, wrong, &g, &p, pl), CLPHYS_SUCCESS);
    double *in = calloc(24 * GV, sizeof(double)),
           *out[2] = {malloc(sizeof(double) * 24 * GV), malloc(sizeof(double) * 24 * GV)};
    job jobs[2] = {{.pl = pl[0], .op = CLPHYS_LQCD_DSLASH_HOPPING, .in = in, .out = out[0], .lv = GV / 2},
                   {.pl = pl[1], .op = CLPHYS_LQCD_DSLASH_HOPPING, .in = in, .out = out[1], .lv = GV / 2, .bad = 1}};
    run_threads(2, jobs, op_thread);
    assert_int_equal(jobs[1].st, CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(jobs[0].st, CLPHYS_ERR_OPENCL);
    assert_non_null(strstr(clphys_last_error(ctxs[0]), "another device of the group failed"));
    clphys_lqcd_dslash_plan_destroy(pl[0]), clphys_lqcd_dslash_plan_destroy(pl[1]);
    clphys_lqcd_gauge_destroy(&g);
    free(in), free(out[0]), free(out[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_operators_fp64), cmocka_unit_test(test_operators_fp32), cmocka_unit_test(test_solvers),
        cmocka_unit_test(test_half_halos),     cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
