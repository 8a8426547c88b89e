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
    CP_TRY(lb_norm2(w->pl, w->nr, x, w->scratch, r));
    *r = sqrt(fmax(*r, 0));
    return CLPHYS_SUCCESS;
}

/* out = M^+ in = gamma5 M gamma5 in = in - kappa^2 gamma5 H_eo H_oe gamma5 in,
 * with both gamma5 folded into the two hops (no extra field passes). */
static clphys_status mdag(ws_t *w, cl_mem out, cl_mem in)
{
    clphys_dslash_plan *pl = w->pl;
    CP_TRY(lqcd_hop_g5(pl, pl->tmp, in, NULL, 0, 1, 1, NULL));
    return lqcd_hop_g5(pl, out, pl->tmp, in, -pl->p.kappa * pl->p.kappa, 0, 2, NULL);
}

static clphys_status mop(ws_t *w, cl_mem out, cl_mem in)
{
    return clphys_dslash_apply(w->pl, CLPHYS_DSLASH_EO_PREC, out, in, NULL);
}

/* CG on M^+ M x = M^+ b with b in WS (overwritten by the residual b - M x),
 * x starts at 0; stops when the tracked |b - M x| <= target.  *napply counts
 * M applications.  Three reductions per iteration, each one blocking read. */
static clphys_status cgnr(ws_t *w, double target, int max_iter, int *iters, int *napply)
{
    cl_mem *v = w->v;
    clphys_dslash_plan *pl = w->pl;
    CP_TRY(zero(pl, v[WX], w->nr));
    CP_TRY(mdag(w, v[WR], v[WS]));     /* r = M^+ rho, rho = b - M x = b */
    CP_TRY(lb_copy(pl, w->nr, v[WR], v[WP]));
    double gamma, rho;
    CP_TRY(lb_norm2(pl, w->nr, v[WR], w->scratch, &gamma));
    CP_TRY(nrm2(w, v[WS], &rho));
    *napply += 1;
    int it = 0;
    while (rho > target && it < max_iter) {
        double qq, rho2;
        CP_TRY(mop(w, v[WQ], v[WP]));
        CP_TRY(lb_norm2(pl, w->nr, v[WQ], w->scratch, &qq));
        if (!(qq > 0)) break;
        double alpha = gamma / qq;
        /* x += alpha p, rho -= alpha q, |rho|^2: one pass with own kernels */
        CP_TRY(lb_cg_update(pl, w->nr, alpha, v[WP], v[WQ], v[WX], v[WS], w->scratch, &rho2));
        rho = sqrt(fmax(rho2, 0));
        it++;
        if (w->prm->progress) w->prm->progress(w->prm->user, *iters + it, rho / w->bnorm, 0);
        *napply += 1;
        if (rho <= target) break;
        CP_TRY(mdag(w, v[WR], v[WS]));
        *napply += 1;
        double gnew;
        CP_TRY(lb_norm2(pl, w->nr, v[WR], w->scratch, &gnew));
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

struct clphys_solver_plan {
    clphys_dslash_plan *p64, *p32;
    clphys_solver_params prm;
    ws_t w64, w32;
    cl_mem be, bo, xe, xo, re, ro, tmp;
    cl_mem host;          /* b and x in the caller's layout, on the device */
    cl_mem pinned;        /* page-locked staging of b and x, mapped for    */
    double *pin;          /* the plan's life (NULL: pageable); on the H100
                             2-3x faster transfers (bench/lqcd-notes.md)  */
    cl_kernel cvt[2];     /* convert_to_single, convert_to_double          */
};

/* BiCGStab as above with the level-1 work fused (own kernels): 18 field
 * passes and 3 reductions per iteration instead of 31 and 5; the residual
 * update also gives the next iteration's rho = <r0, r>. */
static clphys_status bicgstab_own(ws_t *w, cl_mem b, double target, int max_iter, int *iters, int *napply)
{
    cl_mem *v = w->v;
    clphys_dslash_plan *pl = w->pl;
    const size_t nc = w->nc;
    CP_TRY(zero(pl, v[WX], w->nr));
    CP_TRY(lb_copy(pl, w->nr, b, v[WR]));
    CP_TRY(lb_copy(pl, w->nr, b, v[WR0]));
    CP_TRY(zero(pl, v[WP], w->nr));
    CP_TRY(zero(pl, v[WQ], w->nr)); /* q plays v */
    double rho[2] = {1, 0}, alpha[2] = {1, 0}, omega[2] = {1, 0}, rr;
    CP_TRY(lb_norm2(pl, w->nr, v[WR], w->scratch, &rr));
    double rn[2] = {rr, 0}, rnorm = sqrt(fmax(rr, 0)); /* r0 = r */
    int it = 0;
    while (rnorm > target && it < max_iter) {
        double beta[2], t1[2], t2[2], ts[3], xr[3];
        if (rn[0] == 0 && rn[1] == 0) break; /* breakdown: restart from the outer loop */
        cdiv(rn, rho, t1);
        cdiv(alpha, omega, t2);
        cmulr(t1, t2, beta);
        rho[0] = rn[0], rho[1] = rn[1];
        CP_TRY(lb_bicg_p(pl, nc, v[WP], v[WR], v[WQ], beta, omega));
        CP_TRY(mop(w, v[WQ], v[WP]));
        CP_TRY(lb_cdotc(pl, nc, v[WR0], v[WQ], w->scratch, t1));
        if (t1[0] == 0 && t1[1] == 0) break;
        cdiv(rho, t1, alpha);
        CP_TRY(lb_bicg_s(pl, nc, v[WS], v[WR], v[WQ], alpha));
        CP_TRY(mop(w, v[WT], v[WS]));
        CP_TRY(lb_bicg_ts(pl, nc, v[WT], v[WS], ts));
        omega[0] = ts[0] > 0 ? ts[1] / ts[0] : 0, omega[1] = ts[0] > 0 ? ts[2] / ts[0] : 0;
        CP_TRY(lb_bicg_xr(pl, nc, v[WX], v[WR], v[WP], v[WS], v[WT], v[WR0], alpha, omega, xr));
        rnorm = sqrt(fmax(xr[0], 0));
        rn[0] = xr[1], rn[1] = xr[2];
        it++;
        if (w->prm->progress) w->prm->progress(w->prm->user, *iters + it, rnorm / w->bnorm, 0);
        *napply += 2;
        if (omega[0] == 0 && omega[1] == 0) break;
    }
    *iters += it;
    return CLPHYS_SUCCESS;
}

/* dst (fp32 or fp64) = src (the other precision), n reals. */
static clphys_status convert(clphys_solver_plan *sp, cl_mem dst, cl_mem src, size_t n, int to_single)
{
    clphys_context *ctx = sp->p64->ctx;
    cl_kernel k = sp->cvt[to_single ? 0 : 1];
    cl_uint nn = (cl_uint)n;
    CP_TRY(CP_ARG(ctx, k, 0, dst));
    CP_TRY(CP_ARG(ctx, k, 1, src));
    CP_TRY(CP_ARG(ctx, k, 2, nn));
    return cp_launch(ctx, k, 1, &n, NULL, NULL);
}

/* Host spinor <-> the even and odd fields: one plain copy of the caller's
 * array, the layout change on the device (spinor_import/export). */
/* dst = src, n doubles, by all host threads (staging into pinned memory). */
static void par_copy(double *dst, const double *src, size_t n)
{
    const size_t chunk = 1 << 16;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i += chunk) memcpy(dst + i, src + i, (n - i < chunk ? n - i : chunk) * sizeof(double));
}

static clphys_status upload(clphys_solver_plan *sp, const double *b)
{
    clphys_dslash_plan *pl = sp->p64;
    size_t n = pl->vol;
    if (sp->pin) {
        par_copy(sp->pin, b, n * 24);
        b = sp->pin;
    }
    CP_TRY(cp_write(pl->ctx, sp->host, 0, n * 24 * sizeof(double), b));
    CP_TRY(CP_ARG(pl->ctx, pl->imp, 0, sp->be));
    CP_TRY(CP_ARG(pl->ctx, pl->imp, 1, sp->bo));
    CP_TRY(CP_ARG(pl->ctx, pl->imp, 2, sp->host));
    return cp_launch(pl->ctx, pl->imp, 1, &n, NULL, NULL);
}

static clphys_status download(clphys_solver_plan *sp, double *x)
{
    clphys_dslash_plan *pl = sp->p64;
    size_t n = pl->vol;
    CP_TRY(CP_ARG(pl->ctx, pl->exp, 0, sp->host));
    CP_TRY(CP_ARG(pl->ctx, pl->exp, 1, sp->xe));
    CP_TRY(CP_ARG(pl->ctx, pl->exp, 2, sp->xo));
    CP_TRY(cp_launch(pl->ctx, pl->exp, 1, &n, NULL, NULL));
    if (!sp->pin) return cp_read(pl->ctx, sp->host, 0, n * 24 * sizeof(double), x);
    CP_TRY(cp_read(pl->ctx, sp->host, 0, n * 24 * sizeof(double), sp->pin));
    par_copy(x, sp->pin, n * 24);
    return CLPHYS_SUCCESS;
}

void clphys_solver_plan_destroy(clphys_solver_plan *sp)
{
    if (!sp) return;
    if (sp->pin) {
        clEnqueueUnmapMemObject(sp->p64->ctx->queue, sp->pinned, sp->pin, 0, NULL, NULL);
        clFinish(sp->p64->ctx->queue);
    }
    cp_release_mem(&sp->pinned);
    cl_mem *f[] = {&sp->be, &sp->bo, &sp->xe, &sp->xo, &sp->re, &sp->ro, &sp->tmp, &sp->host};
    for (int i = 0; i < 8; i++) cp_release_mem(f[i]);
    ws_destroy(&sp->w64);
    ws_destroy(&sp->w32);
    cp_release_kernel(&sp->cvt[0]);
    cp_release_kernel(&sp->cvt[1]);
    free(sp);
}

clphys_status clphys_solver_plan_create(clphys_dslash_plan *p64, clphys_dslash_plan *p32,
                                        const clphys_solver_params *prm, clphys_solver_plan **out)
{
    if (!p64 || !prm || !out)
        return cp_error(p64 ? p64->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_solver_plan_create: NULL argument");
    *out = NULL;
    clphys_context *ctx = p64->ctx;
    if (p64->p.precision != CLPHYS_FP64 || !p64->imp)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "lqcd solver: plan64 must be fp64");
    if (prm->mixed && (!p32 || p32->p.precision != CLPHYS_FP32 || memcmp(p32->dims, p64->dims, sizeof p64->dims) ||
                       p32->p.layout != p64->p.layout || p32->p.kappa != p64->p.kappa ||
                       p32->p.antiperiodic_t != p64->p.antiperiodic_t))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "lqcd solver: mixed needs an fp32 plan32 with the lattice, layout, kappa and boundary of plan64");
    if (!(prm->tol > 0) || prm->max_iter <= 0)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "lqcd solver: tol must be > 0 and max_iter > 0");
    clphys_solver_plan *sp = calloc(1, sizeof *sp);
    if (!sp) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "lqcd solver plan");
    sp->p64 = p64;
    sp->p32 = prm->mixed ? p32 : NULL;
    sp->prm = *prm;
    clphys_status st = ws_create(&sp->w64, p64);
    if (!st && prm->mixed) st = ws_create(&sp->w32, p32);
    cl_mem *f[] = {&sp->be, &sp->bo, &sp->xe, &sp->xo, &sp->re, &sp->ro, &sp->tmp};
    for (int i = 0; i < 7 && !st; i++) st = clphys_dslash_field_create(p64, 1, f[i]);
    if (!st) st = clphys_dslash_field_create(p64, 0, &sp->host); /* 24 V doubles, like the host array */
    if (!st) { /* without page-locked memory the transfers go from the caller's arrays */
        size_t bytes = p64->vol * 24 * sizeof(double);
        cl_int e;
        if (cp_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &sp->pinned) == CLPHYS_SUCCESS)
            sp->pin = clEnqueueMapBuffer(ctx->queue, sp->pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL,
                                         NULL, &e);
        if (!sp->pin) cp_release_mem(&sp->pinned);
    }
    cl_program prog;
    if (!st && prm->mixed && !(st = cp_program(ctx, "blas1.cl", "-DNEED_FP64", &prog)) &&
        !(st = cp_kernel(ctx, prog, "convert_to_single", &sp->cvt[0])))
        st = cp_kernel(ctx, prog, "convert_to_double", &sp->cvt[1]);
    if (st) {
        clphys_solver_plan_destroy(sp);
        return st;
    }
    *out = sp;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_solver_solve(clphys_solver_plan *sp, const double *b, double *x, clphys_solver_result *res)
{
    if (!sp || !b || !x || !res)
        return cp_error(sp ? sp->p64->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_solver_solve: NULL argument");
    clphys_dslash_plan *p64 = sp->p64, *p32 = sp->p32;
    const clphys_solver_params *prm = &sp->prm;
    clphys_context *ctx = p64->ctx;
    memset(res, 0, sizeof *res);
    p64->own_blas = prm->own_blas;
    if (p32) p32->own_blas = prm->own_blas;
    double t0 = cp_now();
    const double kappa = p64->p.kappa;
    ws_t *w64 = &sp->w64, *w32 = &sp->w32;
    const size_t nr = w64->nr;
    double bn2e = 0, bn2o = 0, rel = 0;
    clphys_status st = upload(sp, b);
    if (!st) st = cp_finish(ctx);
    double t1 = cp_now();
    res->upload_s = t1 - t0;
    if (!st) st = lb_norm2(p64, nr, sp->be, w64->scratch, &bn2e);
    if (!st) st = lb_norm2(p64, nr, sp->bo, w64->scratch, &bn2o);
    const double bnorm = sqrt(bn2e + bn2o);
    w64->prm = w32->prm = prm;
    w64->bnorm = w32->bnorm = bnorm > 0 ? bnorm : 1;
    if (!st) st = zero(p64, sp->xe, nr);
    if (!st) st = zero(p64, sp->xo, nr);
    int napply = 0, first = 1;
    /* CGNR takes its right-hand side in WS, BiCGStab in WU */
    const int rhs = prm->kind == CLPHYS_SOLVER_BICGSTAB ? WU : WS;
    while (!st) {
        /* true fp64 residual r = b - D x on the device, both parities; x = 0
         * on the first cycle, so r = b */
        cl_mem rE = sp->re, rO = sp->ro;
        double r2e = bn2e, r2o = bn2o;
        if (first) {
            rE = sp->be, rO = sp->bo;
        } else {
            if ((st = lqcd_hop(p64, sp->tmp, sp->xo, sp->xe, -kappa, 0, NULL)) ||
                (st = lb_copy(p64, nr, sp->be, rE)) || (st = lb_axpy(p64, nr, -1.0, sp->tmp, rE)) ||
                (st = lqcd_hop(p64, sp->tmp, sp->xe, sp->xo, -kappa, 1, NULL)) ||
                (st = lb_copy(p64, nr, sp->bo, rO)) || (st = lb_axpy(p64, nr, -1.0, sp->tmp, rO)) ||
                (st = lb_norm2(p64, nr, rE, w64->scratch, &r2e)) || (st = lb_norm2(p64, nr, rO, w64->scratch, &r2o)))
                break;
            napply++;
        }
        first = 0;
        rel = bnorm > 0 ? sqrt(r2e + r2o) / bnorm : 0;
        if (prm->progress) prm->progress(prm->user, res->iterations, rel, 1);
        if (rel <= prm->tol || !isfinite(rel)) break;
        if (res->iterations >= prm->max_iter) break;
        /* even-odd right-hand side of the correction: r' = r_e + kappa H_eo r_o,
         * straight into the inner solver's rhs field (fp64) or converted */
        ws_t *w = prm->mixed ? w32 : w64;
        cl_mem rp = prm->mixed ? w64->v[WR0] : w64->v[rhs];
        double rpn;
        if ((st = lqcd_hop(p64, rp, rO, rE, kappa, 0, NULL))) break;
        if ((st = nrm2(w64, rp, &rpn))) break;
        /* |b - D x| = |r' - M e_e| once e_o = r_o + kappa H_oe e_e */
        double tgt = 0.5 * prm->tol * bnorm;
        int left = prm->max_iter - res->iterations;
        const int before = res->iterations;
        if (prm->mixed) {
            double inner = prm->inner_tol > 0 ? prm->inner_tol : 1e-5;
            tgt = fmax(tgt, inner * rpn);
            if ((st = convert(sp, w32->v[rhs], rp, nr, 1))) break;
        }
        if (prm->kind == CLPHYS_SOLVER_BICGSTAB)
            st = (prm->own_blas ? bicgstab_own : bicgstab)(w, w->v[WU], tgt, left, &res->iterations, &napply);
        else st = cgnr(w, tgt, left, &res->iterations, &napply);
        if (st || res->iterations == before) break; /* no progress: report the residual */
        if (prm->mixed && (st = convert(sp, w64->v[WX], w32->v[WX], nr, 0))) break;
        /* e_o = r_o + kappa H_oe e_e; x += e */
        if ((st = lqcd_hop(p64, sp->tmp, w64->v[WX], rO, kappa, 1, NULL)) ||
            (st = lb_axpy(p64, nr, 1.0, w64->v[WX], sp->xe)) || (st = lb_axpy(p64, nr, 1.0, sp->tmp, sp->xo)))
            break;
        res->restarts++;
    }
    double t2 = cp_now();
    res->iterate_s = t2 - t1;
    if (!st) st = download(sp, x);
    res->download_s = cp_now() - t2;
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

clphys_status clphys_lqcd_solve(clphys_dslash_plan *p64, clphys_dslash_plan *p32, const clphys_solver_params *prm,
                                const double *b, double *x, clphys_solver_result *res)
{
    if (!p64 || !prm || !b || !x || !res)
        return cp_error(p64 ? p64->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_lqcd_solve: NULL argument");
    double t0 = cp_now();
    clphys_solver_plan *sp;
    CP_TRY(clphys_solver_plan_create(p64, p32, prm, &sp));
    clphys_status st = clphys_solver_solve(sp, b, x, res);
    clphys_solver_plan_destroy(sp);
    res->seconds = cp_now() - t0;
    return st;
}
