/* test_nbody_gravity.c — direct-sum gravity kernels (tiled and vector, fp32 and
 * fp64) against the fp64 CPU reference (host/ref/nbody_ref.c) on fresh
 * random particles, plus invariants.
 * Error measure per particle: |a - a_ref| and |phi - phi_ref| relative to the
 * sum of the magnitudes of the terms (tests/nbody_util.h); the max over particles
 * must stay below 1e-5 (fp32) and 1e-12 (fp64).  In fp32 the reference is given
 * the same fp32-rounded positions as the kernel, so the measure is of the
 * kernel's arithmetic, not of the input rounding (which for a close pair with
 * eps = 0 alone gives ~1e-5).  Sizes 1, 2, 255, 257, 1000 are not tile
 * multiples; i-set != j-set; sum m_i a_i ~ 0; eps = 0 self pair.  The fp64
 * Newton (fast_rsqrt64 = 1) and series (2) forms are held to the same 1e-12;
 * so is the j range split (j_split). */
#include "util.h"
#include "nbody_util.h"
#include "host/ref/nbody_ref.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static clphys_context *ctx;

static double tol_of(clphys_precision p) { return p == CLPHYS_FP64 ? 1e-12 : 1e-5; }

static int nr64;   /* fast_rsqrt64 of the plans made next */
static int jsplit; /* j_split of the plans made next */

static clphys_nbody_gravity_plan *make_plan(clphys_precision p, clphys_nbody_gravity_variant v, double eps, int wg,
                                            int ipw)
{
    clphys_nbody_gravity_params prm = {0, p, v, 1.0, eps, 1, wg, ipw, 0, 0, nr64, 0, jsplit, 0};
    clphys_nbody_gravity_plan *pl = NULL;
    clphys_status st = clphys_nbody_gravity_plan_create(ctx, &prm, &pl);
    if (st) fail_msg("plan: %s: %s", clphys_status_string(st), clphys_last_error(ctx));
    return pl;
}

/* One case: i-set = j-set (disjoint == 0) or a separate i-set. */
static void check_case(clphys_nbody_gravity_plan *pl, clphys_precision p, double eps, int n, int disjoint,
                       uint64_t stream)
{
    int ni = disjoint ? n / 2 + 3 : n;
    double *xj = tg_random_particles(n, stream), *xi = disjoint ? tg_random_particles(ni, stream + 1000) : NULL;
    if (p == CLPHYS_FP32) { /* the kernel sees fp32 positions: so does the reference (arithmetic error only) */
        for (int k = 0; k < 4 * n; k++) xj[k] = (float)xj[k];
        for (int k = 0; xi && k < 4 * ni; k++) xi[k] = (float)xi[k];
    }
    double *acc = malloc(3 * (size_t)ni * sizeof *acc), *pot = malloc((size_t)ni * sizeof *pot);
    double *ra = malloc(3 * (size_t)ni * sizeof *ra), *rp = malloc((size_t)ni * sizeof *rp);
    tu_poison_f64(acc, 3 * (size_t)ni);
    tu_poison_f64(pot, (size_t)ni);
    clphys_status st = clphys_nbody_gravity_compute(pl, ni, xi, n, xj, acc, pot, 0, 1, NULL);
    if (st) fail_msg("compute: %s: %s", clphys_status_string(st), clphys_last_error(ctx));
    nbody_ref_gravity(ni, xi, n, xj, 1.0, eps, ra, rp);
    double ea, ep;
    tg_errors(ni, xi ? xi : xj, n, xj, eps, acc, pot, ra, rp, &ea, &ep);
    if (!(ea < tol_of(p)) || !(ep < tol_of(p)))
        fail_msg("%s %s eps %g n %d ni %d%s: acc err %.3g pot err %.3g (tol %.0e)",
                 clphys_nbody_gravity_plan_variant(pl), p ? "fp64" : "fp32", eps, n, ni, disjoint ? " (i != j)" : "",
                 ea, ep, tol_of(p));
    if (n == 1 && !disjoint) { /* lone particle: no force, no potential */
        assert_true(acc[0] == 0 && acc[1] == 0 && acc[2] == 0 && fabs(pot[0]) < 1e-6 * (eps > 0 ? 1 / eps : 1));
    }
    if (!disjoint && n > 1) { /* Newton's third law: sum m_i a_i ~ 0 relative to sum |m_i a_i| */
        double s[3] = {0, 0, 0}, sa = 0;
        for (int i = 0; i < n; i++)
            for (int c = 0; c < 3; c++)
                s[c] += xj[4 * i + 3] * acc[3 * i + c], sa += fabs(xj[4 * i + 3] * acc[3 * i + c]);
        double rel = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]) / sa;
        if (!(rel < 10 * tol_of(p))) fail_msg("momentum: |sum m a| / sum |m a| = %.3g", rel);
    }
    free(xj), free(xi), free(acc), free(pot), free(ra), free(rp);
}

static void run_variant(clphys_precision p, clphys_nbody_gravity_variant v, int wg, int ipw, int nr)
{
    static const int sizes[] = {1, 2, 255, 257, 1000};
    static const double epss[] = {0.01, 0.0};
    nr64 = nr;
    if (p == CLPHYS_FP64 && !clphys_context_device(ctx)->fp64) skip();
    for (int e = 0; e < 2; e++) {
        clphys_nbody_gravity_plan *pl = make_plan(p, v, epss[e], wg, ipw);
        for (int s = 0; s < 5; s++) {
            check_case(pl, p, epss[e], sizes[s], 0, 10 * s + e);
            if (sizes[s] > 1) check_case(pl, p, epss[e], sizes[s], 1, 10 * s + e + 500);
        }
        clphys_nbody_gravity_plan_destroy(pl);
    }
}

static void tiled_fp32(void **st)
{
    (void)st;
    run_variant(CLPHYS_FP32, CLPHYS_NBODY_GRAVITY_TILED, 64, 2, 0);
}
static void tiled_fp64(void **st)
{
    (void)st;
    run_variant(CLPHYS_FP64, CLPHYS_NBODY_GRAVITY_TILED, 64, 1, 0);
}
static void tiled_i4_fp32(void **st)
{
    (void)st;
    run_variant(CLPHYS_FP32, CLPHYS_NBODY_GRAVITY_TILED, 32, 4, 0);
}
static void tiled_fp64_newton(void **st)
{
    (void)st;
    run_variant(CLPHYS_FP64, CLPHYS_NBODY_GRAVITY_TILED, 64, 2, 1);
}
static void tiled_fp64_series(void **st)
{
    (void)st;
    run_variant(CLPHYS_FP64, CLPHYS_NBODY_GRAVITY_TILED, 32, 8, 2);
}
/* j range split in 3 (1000 particles = 32 tiles of 32; 255 and 257 have too
 * few tiles and take the unsplit path), and the split path's accumulate. */
static void tiled_split(void **st)
{
    (void)st;
    jsplit = 3;
    run_variant(CLPHYS_FP32, CLPHYS_NBODY_GRAVITY_TILED, 32, 2, 0);
    run_variant(CLPHYS_FP64, CLPHYS_NBODY_GRAVITY_TILED, 32, 1, 2);
    const int n = 1000;
    clphys_nbody_gravity_plan *pl = make_plan(CLPHYS_FP64, CLPHYS_NBODY_GRAVITY_TILED, 0.05, 32, 2);
    double *x = tg_random_particles(n, 99), *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    double *ra = malloc(3 * n * sizeof *ra), *rp = malloc(n * sizeof *rp);
    nbody_ref_gravity(n, NULL, n, x, 1.0, 0.05, ra, rp);
    for (int i = 0; i < 3 * n; i++) acc[i] = 1.0;
    for (int i = 0; i < n; i++) pot[i] = 2.0;
    assert_int_equal(clphys_nbody_gravity_compute(pl, n, NULL, n, x, acc, pot, 1, 1, NULL), CLPHYS_SUCCESS);
    assert_non_null(strstr(clphys_nbody_gravity_plan_variant(pl), "-j3"));
    for (int i = 0; i < 3 * n; i++) assert_true(fabs(acc[i] - 1.0 - ra[i]) < 1e-10 * (1 + fabs(ra[i])));
    for (int i = 0; i < n; i++) assert_true(fabs(pot[i] - 2.0 - rp[i]) < 1e-10 * (1 + fabs(rp[i])));
    free(x), free(acc), free(pot), free(ra), free(rp);
    clphys_nbody_gravity_plan_destroy(pl);
    jsplit = 0;
}
static void vector_fp32(void **st)
{
    (void)st;
    run_variant(CLPHYS_FP32, CLPHYS_NBODY_GRAVITY_VECTOR, 0, 0, 0);
}
static void vector_fp64(void **st)
{
    (void)st;
    run_variant(CLPHYS_FP64, CLPHYS_NBODY_GRAVITY_VECTOR, 0, 0, 0);
}

/* Accumulate mode adds to existing results; caller-owned cl_mem path. */
static void accumulate_and_cl_mem(void **st)
{
    (void)st;
    const int n = 300;
    nr64 = 0;
    clphys_nbody_gravity_plan *pl = make_plan(CLPHYS_FP64, CLPHYS_NBODY_GRAVITY_AUTO, 0.05, 0, 0);
    if (!clphys_context_device(ctx)->fp64) skip();
    double *x = tg_random_particles(n, 77);
    double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    double *ra = malloc(3 * n * sizeof *ra), *rp = malloc(n * sizeof *rp);
    nbody_ref_gravity(n, NULL, n, x, 1.0, 0.05, ra, rp);
    for (int i = 0; i < 3 * n; i++) acc[i] = 1.0;
    for (int i = 0; i < n; i++) pot[i] = 2.0;
    assert_int_equal(clphys_nbody_gravity_compute(pl, n, NULL, n, x, acc, pot, 1, 1, NULL), CLPHYS_SUCCESS);
    for (int i = 0; i < 3 * n; i++) assert_true(fabs(acc[i] - 1.0 - ra[i]) < 1e-10 * (1 + fabs(ra[i])));
    for (int i = 0; i < n; i++) assert_true(fabs(pot[i] - 2.0 - rp[i]) < 1e-10 * (1 + fabs(rp[i])));
    /* cl_mem path: out starts at the reference's values, accumulate doubles them */
    cl_int e;
    cl_mem bx = clCreateBuffer(clphys_context_cl_context(ctx), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                               4 * n * sizeof(double), x, &e);
    assert_int_equal(e, CL_SUCCESS);
    double *o = malloc(4 * n * sizeof *o);
    for (int i = 0; i < n; i++)
        o[4 * i] = ra[3 * i], o[4 * i + 1] = ra[3 * i + 1], o[4 * i + 2] = ra[3 * i + 2], o[4 * i + 3] = rp[i];
    cl_mem bo = clCreateBuffer(clphys_context_cl_context(ctx), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                               4 * n * sizeof(double), o, &e);
    assert_int_equal(e, CL_SUCCESS);
    double ks = -1;
    assert_int_equal(clphys_nbody_gravity_compute_cl(pl, bx, n, bx, n, 1, bo, 1, &ks), CLPHYS_SUCCESS);
    assert_true(ks >= 0);
    tu_poison_f64(o, 4 * (size_t)n);
    assert_int_equal(
        clEnqueueReadBuffer(clphys_context_queue(ctx), bo, CL_TRUE, 0, 4 * n * sizeof(double), o, 0, NULL, NULL),
        CL_SUCCESS);
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++)
            assert_true(fabs(o[4 * i + c] - 2 * ra[3 * i + c]) < 1e-10 * (1 + fabs(ra[3 * i + c])));
        assert_true(fabs(o[4 * i + 3] - 2 * rp[i]) < 1e-10 * (1 + fabs(rp[i])));
    }
    clReleaseMemObject(bx), clReleaseMemObject(bo);
    free(x), free(acc), free(pot), free(ra), free(rp), free(o);
    clphys_nbody_gravity_plan_destroy(pl);
}

/* Two particles: the analytic result. */
static void two_body_analytic(void **st)
{
    (void)st;
    clphys_nbody_gravity_plan *pl = make_plan(CLPHYS_FP32, CLPHYS_NBODY_GRAVITY_AUTO, 0.0, 0, 0);
    double x[8] = {0, 0, 0, 2.0, 3, 4, 0, 1.0}, acc[6], pot[2];
    tu_poison_f64(acc, 6), tu_poison_f64(pot, 2);
    assert_int_equal(clphys_nbody_gravity_compute(pl, 2, NULL, 2, x, acc, pot, 0, 1, NULL), CLPHYS_SUCCESS);
    /* r = 5: |a_0| = m_1 / 25 toward particle 1, phi_0 = -m_1 / 5 */
    assert_true(fabs(acc[0] - 1.0 / 25 * 0.6) < 1e-7 && fabs(acc[1] - 1.0 / 25 * 0.8) < 1e-7 && acc[2] == 0);
    assert_true(fabs(acc[3] + 2.0 / 25 * 0.6) < 1e-7 && fabs(acc[4] + 2.0 / 25 * 0.8) < 1e-7);
    assert_true(fabs(pot[0] + 0.2) < 1e-7 && fabs(pot[1] + 0.4) < 1e-7);
    clphys_nbody_gravity_plan_destroy(pl);
}

/* Bad input: a clear status naming the particle. */
static void bad_input(void **st)
{
    (void)st;
    clphys_nbody_gravity_plan *pl = make_plan(CLPHYS_FP32, CLPHYS_NBODY_GRAVITY_AUTO, 0.0, 0, 0);
    double x[12] = {0, 0, 0, 1, 1, 1, 1, 1, 2, 0, 0, 1}, acc[9];
    x[4] = NAN;
    assert_int_equal(clphys_nbody_gravity_compute(pl, 3, NULL, 3, x, acc, NULL, 0, 1, NULL), CLPHYS_ERR_INPUT);
    assert_non_null(strstr(clphys_last_error(ctx), "particle 1"));
    x[4] = 1;
    x[7] = -1;
    assert_int_equal(clphys_nbody_gravity_compute(pl, 3, NULL, 3, x, acc, NULL, 0, 1, NULL), CLPHYS_ERR_INPUT);
    x[7] = 1;
    x[8] = 0; /* particle 2 on top of particle 0 with eps = 0 */
    assert_int_equal(clphys_nbody_gravity_compute(pl, 3, NULL, 3, x, acc, NULL, 0, 1, NULL), CLPHYS_ERR_INPUT);
    assert_non_null(strstr(clphys_last_error(ctx), "particles 0 and 2"));
    double xi[4] = {1, 1, 1, 1}; /* an i-particle on j-particle 1 */
    assert_int_equal(clphys_nbody_gravity_compute(pl, 1, xi, 2, x, acc, NULL, 0, 1, NULL), CLPHYS_ERR_INPUT);
    assert_non_null(strstr(clphys_last_error(ctx), "i-particle 0 is at the same point as j-particle 1"));
    clphys_nbody_gravity_params bad = {0, CLPHYS_FP32, CLPHYS_NBODY_GRAVITY_AUTO, 1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    clphys_nbody_gravity_plan *p2 = NULL;
    assert_int_equal(clphys_nbody_gravity_plan_create(ctx, &bad, &p2), CLPHYS_ERR_INVALID_ARGUMENT);
    bad.eps = 0, bad.i_per_item = 3;
    assert_int_equal(clphys_nbody_gravity_plan_create(ctx, &bad, &p2), CLPHYS_ERR_INVALID_ARGUMENT);
    clphys_nbody_gravity_plan_destroy(pl);
}

/* The API contract (clphys.h): *kernel_s is SET by each call, never added to;
 * counts beyond the kernels' int index are refused, not truncated; a zeroed
 * params struct means the defaults (G = 1). */
static void contract(void **st)
{
    (void)st;
    const int n = 64;
    double *x = tg_random_particles(n, 123), acc[3 * 64], pot[64], ra[3 * 64], rp[64];
    clphys_nbody_gravity_params zero;
    memset(&zero, 0, sizeof zero);
    zero.potential = 1;
    clphys_nbody_gravity_plan *pl = NULL;
    assert_int_equal(clphys_nbody_gravity_plan_create(ctx, &zero, &pl), CLPHYS_SUCCESS);
    for (int k = 0; k < 4 * n; k++) x[k] = (float)x[k];
    for (int call = 0; call < 2; call++) { /* a sum would keep the 1e30 */
        double ks = 1e30;
        assert_int_equal(clphys_nbody_gravity_compute(pl, n, NULL, n, x, acc, pot, 0, 0, &ks), CLPHYS_SUCCESS);
        assert_true(ks >= 0 && ks < 1e3);
    }
    nbody_ref_gravity(n, NULL, n, x, 1.0, 0.0, ra, rp);
    double ea, ep;
    tg_errors(n, x, n, x, 0.0, acc, pot, ra, rp, &ea, &ep);
    if (!(ea < tol_of(CLPHYS_FP32)) || !(ep < tol_of(CLPHYS_FP32)))
        fail_msg("zeroed params (G = 1): acc err %.3g pot err %.3g", ea, ep);
    /* with a cl_mem call too: set, from a poisoned value */
    cl_int e;
    cl_mem b = clCreateBuffer(clphys_context_cl_context(ctx), CL_MEM_READ_WRITE, 4 * n * sizeof(float), NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    float *xf = malloc(4 * n * sizeof *xf);
    for (int k = 0; k < 4 * n; k++) xf[k] = (float)x[k];
    assert_int_equal(
        clEnqueueWriteBuffer(clphys_context_queue(ctx), b, CL_TRUE, 0, 4 * n * sizeof *xf, xf, 0, NULL, NULL),
        CL_SUCCESS);
    cl_mem o = clCreateBuffer(clphys_context_cl_context(ctx), CL_MEM_READ_WRITE, 4 * n * sizeof(float), NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    double ks = NAN; /* a sum would stay NaN */
    assert_int_equal(clphys_nbody_gravity_compute_cl(pl, b, n, b, n, 1, o, 0, &ks), CLPHYS_SUCCESS);
    assert_true(ks >= 0 && ks < 1e3);
    /* more than 2^31 - 1 particles: refused before anything is read */
    const size_t big = (size_t)2147483647 + 1;
    assert_int_equal(clphys_nbody_gravity_compute(pl, big, x, n, x, acc, NULL, 0, 0, NULL),
                     CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(clphys_nbody_gravity_compute(pl, n, x, big, x, acc, NULL, 0, 0, NULL),
                     CLPHYS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(clphys_last_error(ctx), "2^31 - 1"));
    assert_int_equal(clphys_nbody_gravity_compute_cl(pl, b, big, b, n, 0, o, 0, NULL), CLPHYS_ERR_INVALID_ARGUMENT);
    clReleaseMemObject(b), clReleaseMemObject(o);
    free(xf), free(x);
    clphys_nbody_gravity_plan_destroy(pl);
    clphys_nbody_gravity_plan_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_body_analytic), cmocka_unit_test(bad_input),
        cmocka_unit_test(contract),          cmocka_unit_test(tiled_fp32),
        cmocka_unit_test(tiled_i4_fp32),     cmocka_unit_test(tiled_fp64),
        cmocka_unit_test(tiled_fp64_newton), cmocka_unit_test(tiled_fp64_series),
        cmocka_unit_test(tiled_split),       cmocka_unit_test(vector_fp32),
        cmocka_unit_test(vector_fp64),       cmocka_unit_test(accumulate_and_cl_mem),
    };
    return tu_run_group(tests, .ctx = &ctx, .nctx = 1);
}
