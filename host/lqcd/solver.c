/* solver.c — D x = b for the Wilson-Dirac operator on the even-odd
 * preconditioned system M x_e = b_e + kappa H_eo b_o, M = 1 - kappa^2 H_eo H_oe,
 * x_o = b_o + kappa H_oe x_e (include/clphys_lqcd.h).
 * An fp64 defect-correction loop computes the true residual r = b - D x in
 * fp64, solves D e = r approximately with CGNR or BiCGStab (in fp32 when mixed,
 * the seed's "single-precision solver as preconditioner of a double one") and
 * updates x += e until |r| / |b| <= tol or the iteration cap. */
#include "blas.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Half-field workspace of one precision. */
typedef struct {
    clphys_dslash_plan *pl;
    cl_mem v[8];        /* x, r, p, q, s, t, r0, u */
    cl_mem scratch;
    size_t nr, nc;      /* reals, complex numbers of a half field */
    const clphys_solver_params *prm; /* for progress reports */
    double bnorm;
} ws_t;

enum { WX, WR, WP, WQ, WS, WT, WR0, WU };

static clphys_status ws_create(ws_t *w, clphys_dslash_plan *pl)
{
    memset(w, 0, sizeof *w);
    w->pl = pl;
    w->nc = pl->vh * 12;
    w->nr = 2 * w->nc;
    for (int i = 0; i < 8; i++) CP_TRY(clphys_dslash_field_create(pl, 1, &w->v[i]));
    return cp_buffer(pl->ctx, CL_MEM_READ_WRITE, 4 * sizeof(double), NULL, &w->scratch);
}

static void ws_destroy(ws_t *w)
{
    for (int i = 0; i < 8; i++) cp_release_mem(&w->v[i]);
    cp_release_mem(&w->scratch);
}

/* x = 0 by a fill: scaling by 0 would keep NaN garbage of fresh buffers. */
static clphys_status zero(clphys_dslash_plan *pl, cl_mem x, size_t nreal)
{
    const cl_uint z = 0;
    return cp_fill(pl->ctx, x, &z, sizeof z, nreal * pl->real_size);
}

static clphys_status nrm2(ws_t *w, cl_mem x, double *r)
{
    CP_TRY(lb_dot(w->pl, w->nr, x, x, w->scratch, r));
    *r = sqrt(fmax(*r, 0));
    return CLPHYS_SUCCESS;
}

/* out = M^+ in = gamma5 M gamma5 in; gamma5 negates spins 2,3, i.e. the
 * second half of a SoA half field. Uses WU as temporary. */
static clphys_status mdag(ws_t *w, cl_mem out, cl_mem in)
{
    CP_TRY(lb_gamma5(w->pl, w->nr, in, w->v[WU]));
    /* launches stay asynchronous: no per-launch profiled wait */
    CP_TRY(clphys_dslash_apply(w->pl, CLPHYS_DSLASH_EO_PREC, out, w->v[WU], NULL));
    return lb_gamma5(w->pl, w->nr, out, out);
}

static clphys_status mop(ws_t *w, cl_mem out, cl_mem in)
{
    return clphys_dslash_apply(w->pl, CLPHYS_DSLASH_EO_PREC, out, in, NULL);
}

/* CG on M^+ M x = M^+ b, x starts at 0; stops when the tracked residual
 * |b - M x| <= target.  *napply counts M applications. */
static clphys_status cgnr(ws_t *w, cl_mem b, double target, int max_iter, int *iters, int *napply)
{
    cl_mem *v = w->v;
    clphys_dslash_plan *pl = w->pl;
    CP_TRY(zero(pl, v[WX], w->nr));
    CP_TRY(lb_copy(pl, w->nr, b, v[WS]));  /* rho = b - M x */
    CP_TRY(mdag(w, v[WR], v[WS]));     /* r = M^+ rho  */
    CP_TRY(lb_copy(pl, w->nr, v[WR], v[WP]));
    double gamma, rho;
    CP_TRY(lb_dot(pl, w->nr, v[WR], v[WR], w->scratch, &gamma));
    CP_TRY(nrm2(w, v[WS], &rho));
    *napply += 1;
    int it = 0;
    while (rho > target && it < max_iter) {
        double qq;
        CP_TRY(mop(w, v[WQ], v[WP]));
        CP_TRY(lb_dot(pl, w->nr, v[WQ], v[WQ], w->scratch, &qq));
        if (!(qq > 0)) break;
        double alpha = gamma / qq;
        CP_TRY(lb_axpy(pl, w->nr, alpha, v[WP], v[WX]));
        CP_TRY(lb_axpy(pl, w->nr, -alpha, v[WQ], v[WS]));
        CP_TRY(nrm2(w, v[WS], &rho));
        it++;
        if (w->prm->progress) w->prm->progress(w->prm->user, *iters + it, rho / w->bnorm, 0);
        *napply += 1;
        if (rho <= target) break;
        CP_TRY(mdag(w, v[WR], v[WS]));
        *napply += 1;
        double gnew;
        CP_TRY(lb_dot(pl, w->nr, v[WR], v[WR], w->scratch, &gnew));
        double beta = gnew / gamma;
        gamma = gnew;
        CP_TRY(lb_xpay(pl, w->nr, v[WR], beta, v[WP]));
    }
    *iters += it;
    return CLPHYS_SUCCESS;
}

static void cdiv(const double a[2], const double b[2], double r[2])
{
    double d = b[0] * b[0] + b[1] * b[1];
    double re = (a[0] * b[0] + a[1] * b[1]) / d, im = (a[1] * b[0] - a[0] * b[1]) / d;
    r[0] = re, r[1] = im;
}

static void cmulr(const double a[2], const double b[2], double r[2])
{
    double re = a[0] * b[0] - a[1] * b[1], im = a[0] * b[1] + a[1] * b[0];
    r[0] = re, r[1] = im;
}

/* BiCGStab (van der Vorst 1992) on M x = b, x starts at 0. */
static clphys_status bicgstab(ws_t *w, cl_mem b, double target, int max_iter, int *iters, int *napply)
{
    cl_mem *v = w->v;
    clphys_dslash_plan *pl = w->pl;
    size_t nc = w->nc;
    CP_TRY(zero(pl, v[WX], w->nr));
    CP_TRY(lb_copy(pl, w->nr, b, v[WR]));
    CP_TRY(lb_copy(pl, w->nr, b, v[WR0]));
    CP_TRY(zero(pl, v[WP], w->nr));
    CP_TRY(zero(pl, v[WQ], w->nr)); /* q plays v */
    double rho[2] = {1, 0}, alpha[2] = {1, 0}, omega[2] = {1, 0}, rnorm;
    CP_TRY(nrm2(w, v[WR], &rnorm));
    int it = 0;
    while (rnorm > target && it < max_iter) {
        double rn[2], beta[2], t1[2], t2[2];
        CP_TRY(lb_cdotc(pl, nc, v[WR0], v[WR], w->scratch, rn));
        if (rn[0] == 0 && rn[1] == 0) break; /* breakdown: restart from the outer loop */
        cdiv(rn, rho, t1);
        cdiv(alpha, omega, t2);
        cmulr(t1, t2, beta);
        rho[0] = rn[0], rho[1] = rn[1];
        /* p = r + beta (p - omega v) */
        CP_TRY(lb_caxpy(pl, nc, -omega[0], -omega[1], v[WQ], v[WP]));
        CP_TRY(lb_cxpay(pl, nc, v[WR], beta[0], beta[1], v[WP]));
        CP_TRY(mop(w, v[WQ], v[WP]));
        CP_TRY(lb_cdotc(pl, nc, v[WR0], v[WQ], w->scratch, t1));
        if (t1[0] == 0 && t1[1] == 0) break;
        cdiv(rho, t1, alpha);
        /* s = r - alpha v */
        CP_TRY(lb_copy(pl, w->nr, v[WR], v[WS]));
        CP_TRY(lb_caxpy(pl, nc, -alpha[0], -alpha[1], v[WQ], v[WS]));
        CP_TRY(mop(w, v[WT], v[WS]));
        double tt;
        CP_TRY(lb_dot(pl, w->nr, v[WT], v[WT], w->scratch, &tt));
        CP_TRY(lb_cdotc(pl, nc, v[WT], v[WS], w->scratch, t1));
        omega[0] = tt > 0 ? t1[0] / tt : 0, omega[1] = tt > 0 ? t1[1] / tt : 0;
        CP_TRY(lb_caxpy(pl, nc, alpha[0], alpha[1], v[WP], v[WX]));
        CP_TRY(lb_caxpy(pl, nc, omega[0], omega[1], v[WS], v[WX]));
        CP_TRY(lb_copy(pl, w->nr, v[WS], v[WR]));
        CP_TRY(lb_caxpy(pl, nc, -omega[0], -omega[1], v[WT], v[WR]));
        CP_TRY(nrm2(w, v[WR], &rnorm));
        it++;
        if (w->prm->progress) w->prm->progress(w->prm->user, *iters + it, rnorm / w->bnorm, 0);
        *napply += 2;
        if (omega[0] == 0 && omega[1] == 0) break;
    }
    *iters += it;
    return CLPHYS_SUCCESS;
}

/* dst (fp32 or fp64) = src (the other precision), n reals. */
static clphys_status convert(clphys_context *ctx, cl_mem dst, cl_mem src, size_t n, int to_single)
{
    cl_program prog;
    cl_kernel k = NULL;
    CP_TRY(cp_program(ctx, "blas1.cl", "-DNEED_FP64", &prog));
    CP_TRY(cp_kernel(ctx, prog, to_single ? "convert_to_single" : "convert_to_double", &k));
    cl_uint nn = (cl_uint)n;
    clphys_status st;
    if ((st = CP_ARG(ctx, k, 0, dst)) == CLPHYS_SUCCESS && (st = CP_ARG(ctx, k, 1, src)) == CLPHYS_SUCCESS &&
        (st = CP_ARG(ctx, k, 2, nn)) == CLPHYS_SUCCESS)
        st = cp_launch(ctx, k, 1, &n, NULL, NULL);
    cp_release_kernel(&k);
    return st;
}

clphys_status clphys_lqcd_solve(clphys_dslash_plan *p64, clphys_dslash_plan *p32, const clphys_solver_params *prm,
                                const double *b, double *x, clphys_solver_result *res)
{
    if (!p64 || !prm || !b || !x || !res)
        return cp_error(p64 ? p64->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_lqcd_solve: NULL argument");
    clphys_context *ctx = p64->ctx;
    if (p64->p.precision != CLPHYS_FP64)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_lqcd_solve: plan64 must be fp64");
    if (prm->mixed && (!p32 || p32->p.precision != CLPHYS_FP32 || memcmp(p32->dims, p64->dims, sizeof p64->dims) ||
                       p32->p.layout != p64->p.layout || p32->p.kappa != p64->p.kappa ||
                       p32->p.antiperiodic_t != p64->p.antiperiodic_t))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_lqcd_solve: mixed needs an fp32 plan32 with the lattice, layout, kappa and boundary of plan64");
    if (!(prm->tol > 0) || prm->max_iter <= 0)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_lqcd_solve: tol must be > 0 and max_iter > 0");
    memset(res, 0, sizeof *res);
    p64->own_blas = prm->own_blas;
    if (p32) p32->own_blas = prm->own_blas;
    double t0 = cp_now();
    const double kappa = p64->p.kappa;
    ws_t w64 = {0}, w32 = {0};
    cl_mem be = NULL, bo = NULL, xe = NULL, xo = NULL, re = NULL, ro = NULL, tmp = NULL;
    clphys_status st = ws_create(&w64, p64);
    if (!st && prm->mixed) st = ws_create(&w32, p32);
    cl_mem *f[] = {&be, &bo, &xe, &xo, &re, &ro, &tmp};
    for (int i = 0; i < 7 && !st; i++) st = clphys_dslash_field_create(p64, 1, f[i]);
    if (!st) st = clphys_dslash_field_write(p64, be, 0, b);
    if (!st) st = clphys_dslash_field_write(p64, bo, 1, b);
    size_t nr = w64.nr;
    double bn2e = 0, bn2o = 0, bnorm = 0, rel = 0;
    if (!st) st = lb_dot(p64, nr, be, be, w64.scratch, &bn2e);
    if (!st) st = lb_dot(p64, nr, bo, bo, w64.scratch, &bn2o);
    bnorm = sqrt(bn2e + bn2o);
    w64.prm = w32.prm = prm;
    w64.bnorm = w32.bnorm = bnorm > 0 ? bnorm : 1;
    if (!st) st = zero(p64, xe, nr);
    if (!st) st = zero(p64, xo, nr);
    int napply = 0;
    if (!st) st = cp_finish(ctx);
    double t1 = cp_now();
    while (!st) {
        /* true fp64 residual r = b - D x, both parities */
        double r2e, r2o;
        if ((st = lqcd_hop(p64, tmp, xo, xe, -kappa, 0, NULL)) || (st = lb_copy(p64, nr, be, re)) ||
            (st = lb_axpy(p64, nr, -1.0, tmp, re)) || (st = lqcd_hop(p64, tmp, xe, xo, -kappa, 1, NULL)) ||
            (st = lb_copy(p64, nr, bo, ro)) || (st = lb_axpy(p64, nr, -1.0, tmp, ro)) ||
            (st = lb_dot(p64, nr, re, re, w64.scratch, &r2e)) || (st = lb_dot(p64, nr, ro, ro, w64.scratch, &r2o)))
            break;
        napply++;
        rel = bnorm > 0 ? sqrt(r2e + r2o) / bnorm : 0;
        if (prm->progress) prm->progress(prm->user, res->iterations, rel, 1);
        if (rel <= prm->tol || !isfinite(rel)) break;
        if (res->iterations >= prm->max_iter) break;
        /* even-odd right-hand side of the correction: r' = r_e + kappa H_eo r_o */
        double rpn;
        if ((st = lqcd_hop(p64, w64.v[WR0], ro, re, kappa, 0, NULL))) break;
        if ((st = nrm2(&w64, w64.v[WR0], &rpn))) break;
        /* |b - D x| = |r' - M e_e| once e_o = r_o + kappa H_oe e_e */
        double target = 0.5 * prm->tol * bnorm;
        int left = prm->max_iter - res->iterations;
        /* Buffers: cgnr uses X S R P Q U (rhs may be T or R0), bicgstab uses
         * X R R0 P Q S T (rhs may be U).  The correction e_e ends in w64 X. */
        ws_t *w = prm->mixed ? &w32 : &w64;
        const int before = res->iterations;
        double tgt = target;
        if (prm->mixed) {
            double inner = prm->inner_tol > 0 ? prm->inner_tol : 1e-5;
            tgt = fmax(target, inner * rpn);
            if ((st = convert(ctx, w32.v[WU], w64.v[WR0], nr, 1))) break;
        } else if ((st = lb_copy(p64, nr, w64.v[WR0], w64.v[WU]))) {
            break;
        }
        if (prm->kind == CLPHYS_SOLVER_BICGSTAB) {
            st = bicgstab(w, w->v[WU], tgt, left, &res->iterations, &napply);
        } else {
            if ((st = lb_copy(w->pl, nr, w->v[WU], w->v[WT]))) break;
            st = cgnr(w, w->v[WT], tgt, left, &res->iterations, &napply);
        }
        if (st || res->iterations == before) break; /* no progress: report the residual */
        if (prm->mixed && (st = convert(ctx, w64.v[WX], w32.v[WX], nr, 0))) break;
        /* e_o = r_o + kappa H_oe e_e; x += e */
        if ((st = lqcd_hop(p64, tmp, w64.v[WX], ro, kappa, 1, NULL)) || (st = lb_axpy(p64, nr, 1.0, w64.v[WX], xe)) ||
            (st = lb_axpy(p64, nr, 1.0, tmp, xo)))
            break;
        res->restarts++;
    }
    res->iterate_s = cp_now() - t1;
    if (!st) st = clphys_dslash_field_read(p64, xe, 0, x);
    if (!st) st = clphys_dslash_field_read(p64, xo, 1, x);
    for (int i = 0; i < 7; i++) cp_release_mem(f[i]);
    ws_destroy(&w64);
    if (prm->mixed) ws_destroy(&w32);
    res->rel_residual = rel;
    res->seconds = cp_now() - t0;
    res->gflops = res->seconds > 0 ? 1368.0 * (double)p64->vol * napply / res->seconds * 1e-9 : 0;
    if (st) return st;
    if (!(rel <= prm->tol))
        return cp_error(ctx, CLPHYS_ERR_NOT_CONVERGED,
                        "lqcd solve: true residual |b - D x|/|b| = %.3e above tol %.3e after %d iterations "
                        "(%d restarts)",
                        rel, prm->tol, res->iterations, res->restarts);
    return CLPHYS_SUCCESS;
}
