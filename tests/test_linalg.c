/* test_linalg.c — the linear-algebra layer (host/linalg/) on operators
 * written here: A = -Laplacian (7-point, Dirichlet) + diag(c) + beta D_x on a
 * 12 x 10 x 16 grid, c random in [0.01, 100] per cell (so that Jacobi
 * preconditioning matters), D_x the central difference in x (beta = 0:
 * symmetric positive definite; beta != 0: not symmetric, adjoint = beta ->
 * -beta), on real vectors or on complex ones (the same real operator on
 * real and imaginary parts).  Fresh random right-hand sides, solutions
 * poisoned (NaN) before each solve, checked in fp64 on the CPU:
 *  - CG, preconditioned CG (Jacobi, fp64 and fp32 preconditioner), CGNR,
 *    BiCGStab, with the fused kernels and with clBLAST: the true residual
 *    |b - A x| / |b| <= 2 tol, and CG's and PCG's iteration counts within 1
 *    of a CPU CG / PCG in double with the same stopping rule;
 *  - defect correction with fp32 inner CG / PCG / CGNR / BiCGStab and an
 *    fp64 outer loop reaches 1e-10;
 *  - the global-sum hook: two "ranks" (threads, each with its own context
 *    and half of the grid, the operator block-diagonal across the cut) sum
 *    through a barrier and give the single-rank solution and iteration
 *     count (BiCGStab: within 20% + 2); the hook is called once per
 *    reduction point;
 *  - bad arguments give CLPHYS_ERR_INVALID_ARGUMENT. */
#include "linalg_test_op.h"
#include "util.h"
#include "host/linalg/linalg.h"
#include "host/linalg/linalg_internal.h" /* clBLAST's calls, for their failures */

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

enum { NX = 12, NY = 10, NZ = 16, NPT = NX * NY * NZ };

static clphys_context *ctx;
static double cdiag[NPT];
static double cwell[NPT]; /* cdiag + 1: better conditioned, for comparing iteration counts of BiCGStab */

/* ---- the operator on the device ---------------------------------------- */
typedef struct {
    clphys_context *ctx;
    clphys_precision prec;
    cl_program prog;
    cl_kernel op, jac;
    cl_mem c;
    cl_uint nz, zb, nc;
    double beta;
    la_space *space;
    la_operator A;
    la_precond M;
} dev_op;

static clphys_status apply_beta(dev_op *d, cl_mem out, cl_mem in, double beta)
{
    cl_uint nx = NX, ny = NY;
    float bf = (float)beta;
    size_t g = (size_t)NX * NY * d->nz;
    CP_TRY(CP_ARGS(d->ctx, d->op, out, in, d->c, nx, ny, d->nz, d->zb, d->nc,
                   CP_EITHER(d->prec == CLPHYS_FP64, beta, bf)));
    return cp_launch(d->ctx, d->op, 1, &g, NULL, NULL);
}
static clphys_status op_apply(void *u, cl_mem out, cl_mem in) { return apply_beta(u, out, in, ((dev_op *)u)->beta); }
static clphys_status op_adjoint(void *u, cl_mem out, cl_mem in) { return apply_beta(u, out, in, -((dev_op *)u)->beta); }

static clphys_status jac_apply(void *u, cl_mem z, cl_mem r)
{
    dev_op *d = u;
    cl_uint n = (cl_uint)NX * NY * d->nz;
    size_t g = n;
    CP_TRY(CP_ARGS(d->ctx, d->jac, z, r, d->c, n, d->nc));
    return cp_launch(d->ctx, d->jac, 1, &g, NULL, NULL);
}

/* An operator on nz planes (blocks of zb) with cells c[0 .. NX*NY*nz), nc
 * reals per cell, in its own space.  No cmocka asserts (also used off the
 * main thread). */
static clphys_status op_init(dev_op *d, clphys_context *cx, clphys_precision prec, la_blas blas, int nc, double beta,
                             const double *c, int nz, int zb)
{
    memset(d, 0, sizeof *d);
    d->ctx = cx, d->prec = prec, d->nz = (cl_uint)nz, d->zb = (cl_uint)zb, d->nc = (cl_uint)nc, d->beta = beta;
    cp_defines opts = {0};
    int cached;
    CP_TRY(cp_define_precision(cx, &opts, prec));
    CP_TRY(cp_program_from_source(cx, "test_linalg_op", LA_TEST_OP_SRC, opts.text, &d->prog, &cached));
    CP_TRY(cp_kernel(cx, d->prog, "op_apply", &d->op));
    CP_TRY(cp_kernel(cx, d->prog, "jacobi", &d->jac));
    const size_t npt = (size_t)NX * NY * nz, rs = prec == CLPHYS_FP64 ? 8 : 4;
    void *buf = malloc(npt * rs);
    for (size_t i = 0; i < npt; i++) {
        if (rs == 8)
            ((double *)buf)[i] = c[i];
        else
            ((float *)buf)[i] = (float)c[i];
    }
    clphys_status st = cp_buffer(cx, CL_MEM_READ_ONLY, npt * rs, buf, &d->c);
    free(buf);
    if (st) return st;
    la_space_params sp = {.precision = prec, .n = npt * (size_t)nc, .complex_values = nc == 2, .blas = blas};
    CP_TRY(la_space_create(cx, &sp, &d->space));
    d->A = (la_operator){.space = d->space, .user = d, .apply = op_apply, .apply_adjoint = op_adjoint};
    d->M = (la_precond){.space = d->space, .user = d, .apply = jac_apply};
    return CLPHYS_SUCCESS;
}

static void op_create(dev_op *d, clphys_context *cx, clphys_precision prec, la_blas blas, int nc, double beta,
                      const double *c, int nz, int zb)
{
    if (!clphys_context_device(cx)->fp64) skip(); /* the layer needs fp64 */
    if (op_init(d, cx, prec, blas, nc, beta, c, nz, zb)) fail_msg("operator: %s", clphys_last_error(cx));
}

static void op_destroy(dev_op *d)
{
    la_space_destroy(d->space);
    cp_release_kernel(&d->op);
    cp_release_kernel(&d->jac);
    cp_release_mem(&d->c);
    if (d->prog) clReleaseProgram(d->prog);
}

/* ---- the CPU reference (double) ----------------------------------------- */
static void ref_apply(double *y, const double *x, const double *c, int nz, int zb, int nc, double beta)
{
    const int plane = NX * NY;
    for (int i = 0; i < plane * nz; i++) {
        const int ix = i % NX, iy = i / NX % NY, iz = i / plane;
        for (int k = 0; k < nc; k++) {
            double s = (6 + c[i]) * x[i * nc + k];
            if (ix > 0) s += (-1 - beta) * x[(i - 1) * nc + k];
            if (ix + 1 < NX) s += (-1 + beta) * x[(i + 1) * nc + k];
            if (iy > 0) s -= x[(i - NX) * nc + k];
            if (iy + 1 < NY) s -= x[(i + NX) * nc + k];
            if (iz % zb) s -= x[(i - plane) * nc + k];
            if ((iz + 1) % zb) s -= x[(i + plane) * nc + k];
            y[i * nc + k] = s;
        }
    }
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* |b - A x| / |b| in double */
static double true_residual(const double *b, const double *x, int nc, double beta, int nz, int zb)
{
    const size_t n = (size_t)NX * NY * nz * nc;
    double *ax = malloc(sizeof(double) * n), r2 = 0;
    ref_apply(ax, x, cdiag, nz, zb, nc, beta);
    for (size_t i = 0; i < n; i++) r2 += (b[i] - ax[i]) * (b[i] - ax[i]);
    free(ax);
    return sqrt(r2 / dot(b, b, n));
}

/* CG (jacobi: PCG) in double from x = 0, stopping when |r| <= target;
 * the iterations taken, the solution in x. */
static int ref_cg(const double *b, double *x, double target, int jacobi)
{
    const size_t n = NPT;
    double *r = malloc(sizeof(double) * n), *z = malloc(sizeof(double) * n), *p = malloc(sizeof(double) * n),
           *q = malloc(sizeof(double) * n);
    memset(x, 0, sizeof(double) * n);
    memcpy(r, b, sizeof(double) * n);
    for (size_t i = 0; i < n; i++) z[i] = jacobi ? r[i] / (6 + cdiag[i]) : r[i];
    memcpy(p, z, sizeof(double) * n);
    double rz = dot(r, z, n), rr = dot(r, r, n);
    int it = 0;
    while (sqrt(rr) > target && it < 10000) {
        ref_apply(q, p, cdiag, NZ, NZ, 1, 0);
        const double alpha = rz / dot(p, q, n);
        for (size_t i = 0; i < n; i++) x[i] += alpha * p[i], r[i] -= alpha * q[i];
        rr = dot(r, r, n);
        it++;
        if (sqrt(rr) <= target) break;
        for (size_t i = 0; i < n; i++) z[i] = jacobi ? r[i] / (6 + cdiag[i]) : r[i];
        const double rz2 = dot(r, z, n), beta = rz2 / rz;
        rz = rz2;
        for (size_t i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
    }
    free(r), free(z), free(p), free(q);
    return it;
}

/* ---- host <-> device vectors ---------------------------------------------- */
static void put(la_space *s, cl_mem m, const double *h)
{
    const size_t n = la_space_n(s);
    if (la_space_precision(s) == CLPHYS_FP64) {
        assert_int_equal(cp_write(la_space_context(s), m, 0, n * 8, h), CLPHYS_SUCCESS);
        return;
    }
    float *f = malloc(n * 4);
    for (size_t i = 0; i < n; i++) f[i] = (float)h[i];
    assert_int_equal(cp_write(la_space_context(s), m, 0, n * 4, f), CLPHYS_SUCCESS);
    free(f);
}

static void get(la_space *s, cl_mem m, double *h)
{
    const size_t n = la_space_n(s);
    if (la_space_precision(s) == CLPHYS_FP64) {
        assert_int_equal(cp_read(la_space_context(s), m, 0, n * 8, h), CLPHYS_SUCCESS);
        return;
    }
    float *f = malloc(n * 4);
    assert_int_equal(cp_read(la_space_context(s), m, 0, n * 4, f), CLPHYS_SUCCESS);
    for (size_t i = 0; i < n; i++) h[i] = f[i];
    free(f);
}

static double *random_vec(size_t n, uint64_t stream)
{
    uint64_t rng = tu_rng_init(stream);
    double *v = malloc(sizeof(double) * n);
    for (size_t i = 0; i < n; i++) v[i] = 2 * tu_uniform(&rng) - 1;
    return v;
}

static cl_mem device_vec(clphys_context *cx, size_t bytes)
{
    cl_mem m;
    assert_int_equal(cp_buffer(cx, CL_MEM_READ_WRITE, bytes, NULL, &m), CLPHYS_SUCCESS);
    return m;
}

static void poison(la_space *s, cl_mem m)
{
    double *nan = malloc(sizeof(double) * la_space_n(s));
    tu_poison_f64(nan, la_space_n(s));
    put(s, m, nan);
    free(nan);
}

static int progress_calls;
static void progress(void *user, int iter, double rel, int is_true)
{
    (void)user, (void)iter, (void)rel, (void)is_true;
    progress_calls++;
}

static const char *blas_name(la_blas b) { return b == LA_BLAS_FUSED ? "fused" : "clBLAST"; }

/* Solve with method m (M: Jacobi) on d, b random; return iterations, x in xh. */
static int solve(dev_op *d, la_method m, int jacobi, const dev_op *prec, double tol, uint64_t stream, double *bh,
                 double *xh)
{
    la_space *s = d->space;
    const size_t n = la_space_n(s);
    double *b = random_vec(n, stream);
    memcpy(bh, b, sizeof(double) * n);
    cl_mem bd = device_vec(d->ctx, n * (la_space_precision(s) == CLPHYS_FP64 ? 8 : 4)),
           xd = device_vec(d->ctx, n * (la_space_precision(s) == CLPHYS_FP64 ? 8 : 4));
    put(s, bd, b);
    poison(s, xd);
    const la_krylov_params kp = {
        .target = tol * sqrt(dot(b, b, n)), .max_iter = 5000, .scale = sqrt(dot(b, b, n)), .progress = progress};
    la_krylov_result kr;
    progress_calls = 0;
    clphys_status st;
    if (m == LA_CG)
        st = la_cg(&d->A, jacobi ? &(prec ? prec : d)->M : NULL, bd, xd, &kp, &kr);
    else if (m == LA_CGNR)
        st = la_cgnr(&d->A, bd, xd, &kp, &kr);
    else
        st = la_bicgstab(&d->A, bd, xd, &kp, &kr);
    if (st) fail_msg("solve: %s", clphys_last_error(d->ctx));
    assert_int_equal(progress_calls, kr.iterations);
    assert_true(kr.applications >= kr.iterations);
    get(s, xd, xh);
    cp_release_mem(&bd);
    cp_release_mem(&xd);
    free(b);
    return kr.iterations;
}

/* CG and PCG against the CPU, both ways, fp64 and fp32 */
static void test_cg(void **state)
{
    (void)state;
    double *b = malloc(sizeof(double) * NPT), *x = malloc(sizeof(double) * NPT), *xr = malloc(sizeof(double) * NPT);
    for (int bl = 0; bl < 2; bl++)
        for (int jac = 0; jac < 2; jac++) {
            dev_op d;
            op_create(&d, ctx, CLPHYS_FP64, (la_blas)bl, 1, 0, cdiag, NZ, NZ);
            const double tol = 1e-10;
            int it = solve(&d, LA_CG, jac, NULL, tol, 10 + jac, b, x);
            int it_ref = ref_cg(b, xr, tol * sqrt(dot(b, b, NPT)), jac);
            double tr = true_residual(b, x, 1, 0, NZ, NZ), ex = 0, xn = 0;
            for (int i = 0; i < NPT; i++) ex = fmax(ex, fabs(x[i] - xr[i])), xn = fmax(xn, fabs(xr[i]));
            print_message("# %s %s fp64: %d iterations (CPU %d), true residual %.2e, |x - x_cpu| %.2e\n",
                          jac ? "PCG" : "CG", blas_name((la_blas)bl), it, it_ref, tr, ex / xn);
            assert_true(tr <= 2 * tol);
            assert_true(abs(it - it_ref) <= 1);
            assert_true(ex <= 1e-8 * xn);
            op_destroy(&d);
            /* fp32: to what single precision reaches */
            op_create(&d, ctx, CLPHYS_FP32, (la_blas)bl, 1, 0, cdiag, NZ, NZ);
            it = solve(&d, LA_CG, jac, NULL, 1e-5, 20 + jac, b, x);
            tr = true_residual(b, x, 1, 0, NZ, NZ);
            print_message("# %s %s fp32: %d iterations, true residual %.2e\n", jac ? "PCG" : "CG",
                          blas_name((la_blas)bl), it, tr);
            assert_true(tr <= 2e-5);
            op_destroy(&d);
        }
    free(b), free(x), free(xr);
}

/* fp64 PCG with the preconditioner in fp32 (the Poisson path's shape):
 * converges to 1e-10 in about as many iterations as with an fp64 one. */
static void test_pcg_mixed(void **state)
{
    (void)state;
    double *b = malloc(sizeof(double) * NPT), *x = malloc(sizeof(double) * NPT), *xr = malloc(sizeof(double) * NPT);
    for (int bl = 0; bl < 2; bl++) {
        dev_op d64, d32;
        op_create(&d64, ctx, CLPHYS_FP64, (la_blas)bl, 1, 0, cdiag, NZ, NZ);
        op_create(&d32, ctx, CLPHYS_FP32, (la_blas)bl, 1, 0, cdiag, NZ, NZ);
        const double tol = 1e-10;
        int it = solve(&d64, LA_CG, 1, &d32, tol, 30, b, x);
        int it_ref = ref_cg(b, xr, tol * sqrt(dot(b, b, NPT)), 1), it_cg = ref_cg(b, xr, tol * sqrt(dot(b, b, NPT)), 0);
        double tr = true_residual(b, x, 1, 0, NZ, NZ);
        print_message("# PCG %s fp64, fp32 Jacobi: %d iterations (CPU fp64 PCG %d, CG %d), true residual %.2e\n",
                      blas_name((la_blas)bl), it, it_ref, it_cg, tr);
        assert_true(tr <= 2 * tol);
        assert_true(it <= it_ref + 3);
        assert_true(it_ref < it_cg); /* the preconditioner does something */
        op_destroy(&d64);
        op_destroy(&d32);
    }
    free(b), free(x), free(xr);
}

/* CGNR and BiCGStab on the non-symmetric operator, complex vectors */
static void test_nonsymmetric(void **state)
{
    (void)state;
    const size_t n = 2 * NPT;
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    for (int bl = 0; bl < 2; bl++)
        for (int m = 0; m < 2; m++) {
            dev_op d;
            op_create(&d, ctx, CLPHYS_FP64, (la_blas)bl, 2, 0.7, cdiag, NZ, NZ);
            const double tol = 1e-10;
            int it = solve(&d, m ? LA_BICGSTAB : LA_CGNR, 0, NULL, tol, 40 + m, b, x);
            double tr = true_residual(b, x, 2, 0.7, NZ, NZ);
            print_message("# %s %s fp64, complex, beta 0.7: %d iterations, true residual %.2e\n",
                          m ? "BiCGStab" : "CGNR", blas_name((la_blas)bl), it, tr);
            assert_true(tr <= 2 * tol);
            op_destroy(&d);
        }
    free(b), free(x);
}

/* Defect correction: fp64 outer loop, fp32 inner solves (and a restarted
 * fp64 one), every method */
static void test_refine(void **state)
{
    (void)state;
    const double tol = 1e-10;
    for (int bl = 0; bl < 2; bl++)
        for (int m = 0; m < 5; m++) {
            /* 0 CG, 1 PCG, 2 CGNR, 3 BiCGStab (fp32 inner), 4 CG with fp64 inner */
            const int nc = m >= 2 && m <= 3 ? 2 : 1;
            const double beta = nc == 2 ? 0.7 : 0;
            const size_t n = (size_t)NPT * nc;
            dev_op d64, d32;
            op_create(&d64, ctx, CLPHYS_FP64, (la_blas)bl, nc, beta, cdiag, NZ, NZ);
            op_create(&d32, ctx, CLPHYS_FP32, (la_blas)bl, nc, beta, cdiag, NZ, NZ);
            double *b = random_vec(n, 50 + m), *x = malloc(sizeof(double) * n);
            cl_mem bd = device_vec(ctx, n * 8), xd = device_vec(ctx, n * 8);
            put(d64.space, bd, b);
            poison(d64.space, xd);
            const la_method meth = m == 2 ? LA_CGNR : m == 3 ? LA_BICGSTAB : LA_CG;
            la_refine_result rr;
            clphys_status st = la_solve_refined(&d64.A, m == 4 ? &d64.A : &d32.A, m == 1 ? &d32.M : NULL, meth, bd, xd,
                                                tol, 5000, m == 4 ? 0 : 1e-3, &rr);
            if (st) fail_msg("refined solve: %s", clphys_last_error(ctx));
            get(d64.space, xd, x);
            double tr = true_residual(b, x, nc, beta, NZ, NZ);
            print_message("# refined %s %s, %s inner: %d iterations, %d restarts, reported %.2e, true %.2e\n",
                          (const char *[]){"CG", "PCG", "CGNR", "BiCGStab", "CG"}[m], blas_name((la_blas)bl),
                          m == 4 ? "fp64" : "fp32", rr.iterations, rr.restarts, rr.rel_residual, tr);
            assert_true(rr.rel_residual <= tol);
            assert_true(tr <= 1.05 * tol);
            assert_true(fabs(tr - rr.rel_residual) <= 1e-3 * tr + 1e-15);
            if (m != 4) assert_true(rr.restarts >= 2); /* 1e-3 per inner solve cannot reach 1e-10 at once */
            cp_release_mem(&bd);
            cp_release_mem(&xd);
            free(b), free(x);
            op_destroy(&d64);
            op_destroy(&d32);
        }
}

/* ---- two ranks through the global-sum hook ------------------------------ */
typedef struct {
    pthread_barrier_t bar;
    double v[2][64];
    int n[2], calls[2];
} allreduce;

typedef struct {
    allreduce *ar;
    int rank;
    clphys_context *cx;
    la_method method;
    la_blas blas;
    const double *b; /* this rank's part */
    double *x;
    int iterations;
    clphys_status st;
} rank_job;

static clphys_status gsum(void *user, double *sums, int n)
{
    rank_job *j = user;
    allreduce *ar = j->ar;
    if (n > 64) return CLPHYS_ERR_INVALID_ARGUMENT;
    memcpy(ar->v[j->rank], sums, sizeof(double) * (size_t)n);
    ar->n[j->rank] = n;
    ar->calls[j->rank]++;
    pthread_barrier_wait(&ar->bar);
    const int ok = ar->n[0] == ar->n[1];
    for (int i = 0; i < n; i++) sums[i] = ar->v[0][i] + ar->v[1][i];
    pthread_barrier_wait(&ar->bar);
    return ok ? CLPHYS_SUCCESS : CLPHYS_ERR_INVALID_ARGUMENT;
}

static void *rank_main(void *arg)
{
    rank_job *j = arg;
    const int nc = j->method == LA_BICGSTAB ? 2 : 1, nzl = NZ / 2;
    dev_op d;
    if ((j->st = op_init(&d, j->cx, CLPHYS_FP64, j->blas, nc, nc == 2 ? 0.7 : 0, cwell + j->rank * NX * NY * nzl, nzl,
                         nzl))) {
        op_destroy(&d);
        return NULL; /* the other rank then waits at the barrier: the test times out */
    }
    la_space_set_global_sum(d.space, gsum, j);
    const size_t n = la_space_n(d.space);
    cl_mem bd = NULL, xd = NULL;
    cp_buffer(j->cx, CL_MEM_READ_WRITE, n * 8, j->b, &bd);
    cp_buffer(j->cx, CL_MEM_READ_WRITE, n * 8, NULL, &xd);
    double bn2 = dot(j->b, j->b, n);
    gsum(j, &bn2, 1);
    const la_krylov_params kp = {.target = 1e-10 * sqrt(bn2), .max_iter = 5000};
    la_krylov_result kr = {0};
    j->ar->calls[j->rank] = 0;
    if (j->method == LA_CG)
        j->st = la_cg(&d.A, NULL, bd, xd, &kp, &kr);
    else if (j->method == LA_CGNR)
        j->st = la_cgnr(&d.A, bd, xd, &kp, &kr);
    else
        j->st = la_bicgstab(&d.A, bd, xd, &kp, &kr);
    j->iterations = kr.iterations;
    if (!j->st) j->st = cp_read(j->cx, xd, 0, n * 8, j->x);
    cp_release_mem(&bd);
    cp_release_mem(&xd);
    op_destroy(&d);
    return NULL;
}

static void test_global_sum(void **state)
{
    (void)state;
    if (!clphys_context_device(ctx)->fp64) skip();
    clphys_context *cx[2] = {tu_context(), tu_context()};
    for (int c = 0; c < 4; c++) {
        /* fused CG, CGNR, BiCGStab; clBLAST CG */
        const la_method meth = c == 1 ? LA_CGNR : c == 2 ? LA_BICGSTAB : LA_CG;
        const la_blas bl = c == 3 ? LA_BLAS_CLBLAST : LA_BLAS_FUSED;
        const int nc = meth == LA_BICGSTAB ? 2 : 1;
        const size_t n = (size_t)NPT * nc, half = n / 2;
        double *b = random_vec(n, 60 + c), *x1 = malloc(sizeof(double) * n), *x2 = malloc(sizeof(double) * n);
        /* one rank: the block-diagonal operator (blocks of NZ / 2 planes) */
        dev_op d;
        op_create(&d, ctx, CLPHYS_FP64, bl, nc, nc == 2 ? 0.7 : 0, cwell, NZ, NZ / 2);
        cl_mem bd = device_vec(ctx, n * 8), xd = device_vec(ctx, n * 8);
        put(d.space, bd, b);
        const la_krylov_params kp = {.target = 1e-10 * sqrt(dot(b, b, n)), .max_iter = 5000};
        la_krylov_result kr;
        clphys_status st = meth == LA_CG     ? la_cg(&d.A, NULL, bd, xd, &kp, &kr)
                           : meth == LA_CGNR ? la_cgnr(&d.A, bd, xd, &kp, &kr)
                                             : la_bicgstab(&d.A, bd, xd, &kp, &kr);
        assert_int_equal(st, CLPHYS_SUCCESS);
        get(d.space, xd, x1);
        cp_release_mem(&bd);
        cp_release_mem(&xd);
        op_destroy(&d);
        /* two ranks, one half each */
        allreduce ar;
        memset(&ar, 0, sizeof ar);
        pthread_barrier_init(&ar.bar, NULL, 2);
        rank_job j[2];
        pthread_t th[2];
        for (int r = 0; r < 2; r++) {
            j[r] = (rank_job){&ar, r, cx[r], meth, bl, b + r * half, x2 + r * half, 0, CLPHYS_SUCCESS};
            pthread_create(&th[r], NULL, rank_main, &j[r]);
        }
        for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);
        pthread_barrier_destroy(&ar.bar);
        for (int r = 0; r < 2; r++)
            if (j[r].st) fail_msg("rank %d: %s", r, clphys_last_error(cx[r]));
        double e = 0, xn = 0;
        for (size_t i = 0; i < n; i++) e = fmax(e, fabs(x1[i] - x2[i])), xn = fmax(xn, fabs(x1[i]));
        /* reduction points: CG 2 per iteration (fused or clBLAST), CGNR 3,
         * BiCGStab 3; plus the start */
        const int per = meth == LA_CG ? 2 : 3, it = j[0].iterations;
        print_message("# %s %s, 2 ranks: %d/%d iterations (1 rank %d), |x2 - x1| %.2e, %d global sums\n",
                      meth == LA_CG     ? "CG"
                      : meth == LA_CGNR ? "CGNR"
                                        : "BiCGStab",
                      blas_name(bl), j[0].iterations, j[1].iterations, kr.iterations, e / xn, ar.calls[0]);
        assert_int_equal(j[0].iterations, j[1].iterations);
        /* the ranks add their sums in another order than one rank does: CG
         * and CGNR take the same steps, BiCGStab (not monotone) may take a
         * few more or fewer */
        assert_true(abs(it - kr.iterations) <= (meth == LA_BICGSTAB ? 2 + it / 5 : 1));
        assert_true(e <= 1e-8 * xn);
        assert_int_equal(ar.calls[0], ar.calls[1]);
        assert_true(ar.calls[0] >= per * it && ar.calls[0] <= per * it + 3);
        free(b), free(x1), free(x2);
    }
    clphys_context_destroy(cx[0]);
    clphys_context_destroy(cx[1]);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    dev_op d, c;
    op_create(&d, ctx, CLPHYS_FP64, LA_BLAS_FUSED, 1, 0, cdiag, NZ, NZ);
    op_create(&c, ctx, CLPHYS_FP64, LA_BLAS_FUSED, 1, 0, cdiag, NZ / 2, NZ / 2);
    cl_mem b = la_space_vec(d.space, LA_B), x = la_space_vec(d.space, LA_X);
    const la_krylov_params kp = {.target = 1e-8, .max_iter = 3};
    la_krylov_result kr;
    assert_int_equal(la_bicgstab(&d.A, b, x, &kp, &kr), CLPHYS_ERR_INVALID_ARGUMENT); /* real vectors */
    la_operator noadj = d.A;
    noadj.apply_adjoint = NULL;
    assert_int_equal(la_cgnr(&noadj, b, x, &kp, &kr), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(la_cg(NULL, NULL, b, x, &kp, &kr), CLPHYS_ERR_INVALID_ARGUMENT);
    la_space *s;
    la_space_params sp = {.precision = CLPHYS_FP64, .n = 0};
    assert_int_equal(la_space_create(ctx, &sp, &s), CLPHYS_ERR_INVALID_ARGUMENT);
    sp.n = 5, sp.complex_values = 1;
    assert_int_equal(la_space_create(ctx, &sp, &s), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(la_convert(d.space, b, c.space, la_space_vec(c.space, LA_B)), CLPHYS_ERR_INVALID_ARGUMENT);
    la_refine_result rr;
    cl_mem bd = device_vec(ctx, NPT * 8), xd = device_vec(ctx, NPT * 8);
    assert_int_equal(la_solve_refined(&d.A, &d.A, NULL, LA_CG, bd, xd, 0, 100, 0, &rr), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(la_solve_refined(&d.A, &d.A, NULL, LA_BICGSTAB, bd, xd, 1e-8, 100, 0, &rr),
                     CLPHYS_ERR_INVALID_ARGUMENT);
    /* the cap: CG stops after max_iter iterations */
    double *bh = random_vec(NPT, 70);
    put(d.space, bd, bh);
    assert_int_equal(la_cg(&d.A, NULL, bd, xd, &kp, &kr), CLPHYS_SUCCESS);
    assert_int_equal(kr.iterations, 3);
    free(bh);
    cp_release_mem(&bd);
    cp_release_mem(&xd);
    op_destroy(&d);
    op_destroy(&c);
}

/* clBLAST's own failures reach the caller as CLPHYS_ERR_OPENCL naming the
 * routine and clBLAST's status: a vector shorter than the space's n (clBLAST
 * checks the buffer's size before it enqueues anything), for an operation
 * and for a dot product, whose reduction point still completes. */
static void test_clblast_failure(void **state)
{
    (void)state;
    if (!clphys_context_device(ctx)->fp64) skip();
    la_space *s;
    la_space_params sp = {.precision = CLPHYS_FP64, .n = NPT, .blas = LA_BLAS_CLBLAST};
    assert_int_equal(la_space_create(ctx, &sp, &s), CLPHYS_SUCCESS);
    cl_mem shorter = device_vec(ctx, 8 * (NPT / 2)), y = la_space_vec(s, LA_X);
    assert_int_equal(la_clblast_copy(s, shorter, y), CLPHYS_ERR_OPENCL);
    assert_non_null(strstr(clphys_last_error(ctx), "clBLAST"));
    assert_non_null(strstr(clphys_last_error(ctx), "Dcopy"));
    double r = 7;
    assert_int_equal(la_clblast_dot(s, CLPHYS_SUCCESS, shorter, y, &r), CLPHYS_ERR_OPENCL);
    assert_non_null(strstr(clphys_last_error(ctx), "Ddot"));
    /* the space still works after them */
    assert_int_equal(la_clblast_copy(s, la_space_vec(s, LA_B), y), CLPHYS_SUCCESS);
    assert_int_equal(cp_finish(ctx), CLPHYS_SUCCESS);
    cp_release_mem(&shorter);
    la_space_destroy(s);
}

/* A device without fp64 (the probed capability switched off in a context
 * of its own): fp32 spaces still solve, the fused kernels adding partial
 * sums and making scalars in float (cl/linalg_blas1.cl), and an fp64 space is
 * refused with CLPHYS_ERR_UNSUPPORTED naming cl_khr_fp64.  That the
 * programs built then use no fp64 is tests/test_capability.c's part. */
static void test_fp32_without_fp64(void **state)
{
    (void)state;
    clphys_context *cx = tu_context();
    ((clphys_device_info *)clphys_context_device(cx))->fp64 = 0;
    double *b = malloc(sizeof(double) * 2 * NPT), *x = malloc(sizeof(double) * 2 * NPT);
    for (int m = 0; m < 2; m++) { /* CG on real vectors, BiCGStab on complex ones */
        const int nc = m ? 2 : 1;
        const double beta = m ? 0.7 : 0, tol = m ? 1e-4 : 1e-5;
        dev_op d;
        if (op_init(&d, cx, CLPHYS_FP32, LA_BLAS_FUSED, nc, beta, cdiag, NZ, NZ))
            fail_msg("operator: %s", clphys_last_error(cx));
        int it = solve(&d, m ? LA_BICGSTAB : LA_CG, 0, NULL, tol, 60 + m, b, x);
        double tr = true_residual(b, x, nc, beta, NZ, NZ);
        print_message("# %s fused fp32 without fp64: %d iterations, true residual %.2e\n", m ? "BiCGStab" : "CG", it,
                      tr);
        assert_true(tr <= 2 * tol);
        op_destroy(&d);
    }
    la_space *s = NULL;
    const la_space_params sp = {.precision = CLPHYS_FP64, .n = 64};
    assert_int_equal(la_space_create(cx, &sp, &s), CLPHYS_ERR_UNSUPPORTED);
    assert_non_null(strstr(clphys_last_error(cx), "cl_khr_fp64"));
    assert_null(s);
    free(b), free(x);
    clphys_context_destroy(cx);
}

static int setup(void **state)
{
    (void)state;
    uint64_t rng = tu_rng_init(1);
    for (int i = 0; i < NPT; i++) cdiag[i] = 0.01 * pow(1e4, tu_uniform(&rng)); /* 0.01 .. 100, log-uniform */
    for (int i = 0; i < NPT; i++) cwell[i] = cdiag[i] + 1;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cg),
        cmocka_unit_test(test_pcg_mixed),
        cmocka_unit_test(test_nonsymmetric),
        cmocka_unit_test(test_refine),
        cmocka_unit_test(test_global_sum),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_fp32_without_fp64),
        cmocka_unit_test(test_clblast_failure),
    };
    return tu_run_group(tests, .ctx = &ctx, .nctx = 1, .setup = setup);
}
