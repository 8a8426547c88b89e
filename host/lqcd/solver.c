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
#ifdef _OPENMP
#include <omp.h>
#endif

/* Half-field workspace of one precision. */
typedef struct {
    clphys_dslash_plan *pl;
    cl_mem v[8];        /* x, r, p, q, s, t, r0, u */
    cl_mem scratch;
    size_t nr, nc;      /* reals, complex numbers of a half field */
    const clphys_solver_params *prm; /* for progress reports */
    double bnorm;
    /* own_blas: partial sums of the device-scalar solvers and the fused outer
     * loop, BiCGStab's device scalars (double[8]), and a page-locked array
     * (mapped at hp) that the asynchronous reads of partial sums land in */
    cl_mem part[4], state, hbuf;
    char *hp;
    size_t hstate;      /* byte offset of the state copy in hp */
} ws_t;

enum { WX, WR, WP, WQ, WS, WT, WR0, WU };

static clphys_status ws_create(ws_t *w, clphys_dslash_plan *pl, int own)
{
    memset(w, 0, sizeof *w);
    w->pl = pl;
    w->nc = pl->vh * 12;
    w->nr = 2 * w->nc;
    for (int i = 0; i < 8; i++) CP_TRY(clphys_dslash_field_create(pl, 1, &w->v[i]));
    CP_TRY(cp_buffer(pl->ctx, CL_MEM_READ_WRITE, 4 * sizeof(double), NULL, &w->scratch));
    if (!own) return CLPHYS_SUCCESS;
    for (int i = 0; i < 4; i++) CP_TRY(lb_partial_create(pl, &w->part[i]));
    CP_TRY(cp_buffer(pl->ctx, CL_MEM_READ_WRITE, 8 * sizeof(double), NULL, &w->state));
    w->hstate = cp_round_up(lb_partial_reals(pl) * pl->real_size, 64);
    const size_t bytes = w->hstate + 8 * sizeof(double);
    cl_int e = CL_SUCCESS;
    CP_TRY(cp_buffer(pl->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &w->hbuf));
    w->hp = clEnqueueMapBuffer(pl->ctx->queue, w->hbuf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL,
                               &e);
    if (!w->hp) return cp_cl_error(pl->ctx, e, "clEnqueueMapBuffer (solver readback)");
    return CLPHYS_SUCCESS;
}

static void ws_destroy(ws_t *w)
{
    if (w->hp) {
        clEnqueueUnmapMemObject(w->pl->ctx->queue, w->hbuf, w->hp, 0, NULL, NULL);
        clFinish(w->pl->ctx->queue);
        w->hp = NULL;
    }
    for (int i = 0; i < 8; i++) cp_release_mem(&w->v[i]);
    for (int i = 0; i < 4; i++) cp_release_mem(&w->part[i]);
    cp_release_mem(&w->state);
    cp_release_mem(&w->hbuf);
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
    cl_command_queue qx;  /* further in-order queues, for reads that must  */
    cl_command_queue qr;  /* not hold the main one: x read back while its
                             true residual is computed (qx), partial sums
                             (qr)                                          */
    lqcd_solver_knobs kn;
    cl_event sev[LQCD_MAX_CHUNKS]; /* reads of x started early on qx       */
    int nsev;
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

/* Asynchronous read of nreal partial sums of part (and, with state, the 8
 * device scalars after them in hp) into w->hp; *ev completes when all is on
 * the host.  With kn.read_queue the reads go to queue qr behind a
 * marker, so the main queue's next kernel does not wait for the copy. */
static clphys_status read_async(clphys_solver_plan *sp, ws_t *w, cl_mem part, size_t nreal, int state, cl_event *ev)
{
    clphys_context *ctx = w->pl->ctx;
    cl_command_queue q = ctx->queue;
    cl_event mark = NULL;
    if (sp->kn.read_queue) {
        CP_CL(ctx, clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &mark));
        clFlush(ctx->queue);
        q = sp->qr;
    }
    cl_int e = clEnqueueReadBuffer(q, part, CL_FALSE, 0, nreal * w->pl->real_size, w->hp, mark ? 1 : 0,
                                   mark ? &mark : NULL, state ? NULL : ev);
    if (e == CL_SUCCESS && state)
        e = clEnqueueReadBuffer(q, w->state, CL_FALSE, 0, 8 * sizeof(double), w->hp + w->hstate, 0, NULL, ev);
    if (mark) clReleaseEvent(mark);
    if (e != CL_SUCCESS) return cp_cl_error(ctx, e, "clEnqueueReadBuffer (partial sums)");
    clFlush(q);
    return CLPHYS_SUCCESS;
}

static clphys_status wait_release(clphys_context *ctx, cl_event *ev)
{
    cl_int e = clWaitForEvents(1, ev);
    clReleaseEvent(*ev);
    *ev = NULL;
    return e == CL_SUCCESS ? CLPHYS_SUCCESS : cp_cl_error(ctx, e, "clWaitForEvents");
}

/* CGNR as cgnr() with the scalars on the device (own kernels): alpha and
 * beta are formed by the kernels that use them from the partial sums of the
 * norms before them, so an iteration is queued without the host waiting on a
 * reduction.  |r|^2 comes back by an asynchronous read that the host waits
 * for only after queueing the first hop of the next M^+ (it writes only the
 * dslash plan's temporary), so the device keeps working meanwhile; when
 * converged, that hop is the only work done in vain.  Same iterates and the
 * same iteration count as cgnr().  part: 0 <q,q>, 1 and 2 <r,r> of this and
 * the previous iteration (alternating), 3 |rho|^2 (and <q,q> after it). */
static clphys_status cgnr_dev(clphys_solver_plan *sp, ws_t *w, double target, int max_iter, int *iters, int *napply)
{
    cl_mem *v = w->v, *P = w->part;
    clphys_dslash_plan *pl = w->pl;
    clphys_context *ctx = pl->ctx;
    const double kk = -pl->p.kappa * pl->p.kappa;
    const size_t ng = pl->ngroups;
    double sums[3];
    CP_TRY(zero(pl, v[WX], w->nr));
    CP_TRY(mdag(w, v[WR], v[WS])); /* r = M^+ rho, rho = b - M x = b */
    CP_TRY(lb_copy(pl, w->nr, v[WR], v[WP]));
    CP_TRY(lb_norm2_into(pl, w->nr, v[WR], P[1]));
    CP_TRY(lb_norm2_into(pl, w->nr, v[WS], P[3]));
    CP_TRY(lb_sum_now(pl, P[3], 2, sums));
    double rho = sqrt(fmax(sums[0], 0));
    *napply += 1;
    int it = 0, g = 1;
    clphys_status st = CLPHYS_SUCCESS;
    while (rho > target && it < max_iter) {
        cl_event ev = NULL;
        if ((st = mop(w, v[WQ], v[WP])) || (st = lb_norm2_into(pl, w->nr, v[WQ], P[0])) ||
            (st = lb_cg_update_dev(pl, w->nr, v[WP], v[WQ], v[WX], v[WS], P[g], P[0], P[3])) ||
            (st = read_async(sp, w, P[3], 2 * ng + 1, 0, &ev)))
            break;
        const int more = it + 1 < max_iter;
        if (more) st = lqcd_hop_g5(pl, pl->tmp, v[WS], NULL, 0, 1, 1, NULL); /* M^+ s, first half */
        clFlush(ctx->queue);
        clphys_status sw = wait_release(ctx, &ev);
        if (st || (st = sw)) break;
        if (!(lb_host_real(pl, w->hp, 2 * ng) > 0)) break; /* <q,q> = 0: alpha was 0, nothing moved */
        lb_sum_host(pl, w->hp, 2, sums);
        rho = sqrt(fmax(sums[0], 0));
        it++;
        *napply += 1;
        if (w->prm->progress) w->prm->progress(w->prm->user, *iters + it, rho / w->bnorm, 0);
        if (rho <= target || !more) break;
        if ((st = lqcd_hop_g5(pl, v[WR], pl->tmp, v[WS], kk, 0, 2, NULL)) ||
            (st = lb_norm2_into(pl, w->nr, v[WR], P[3 - g])) ||
            (st = lb_xpay_dev(pl, w->nr, v[WR], v[WP], P[3 - g], P[g])))
            break;
        *napply += 1;
        g = 3 - g;
        clFlush(ctx->queue);
    }
    *iters += it;
    return st;
}

/* BiCGStab as bicgstab_own() with the scalars on the device (state of ws_t:
 * rho, alpha, omega, <r0, v>), one asynchronous read per iteration ({|r|^2,
 * conj(r0) r} and the state), waited for after the next iteration's p update
 * and first hop are queued (they change only p and the temporaries).  On a
 * breakdown (<r0, v> = 0) the device sets alpha = 0, so that iteration
 * becomes a minimal-residual step before the outer loop restarts.
 * part: 0 <r0, v>, 1 {|t|^2, conj(t) s}, 2 {|r|^2, conj(r0) r}. */
static clphys_status bicgstab_dev(clphys_solver_plan *sp, ws_t *w, cl_mem b, double target, int max_iter, int *iters,
                                  int *napply)
{
    cl_mem *v = w->v, *P = w->part;
    clphys_dslash_plan *pl = w->pl;
    clphys_context *ctx = pl->ctx;
    const size_t nc = w->nc, ng = pl->ngroups;
    const double kk = -pl->p.kappa * pl->p.kappa;
    double sums[3];
    CP_TRY(zero(pl, v[WX], w->nr));
    CP_TRY(lb_copy(pl, w->nr, b, v[WR]));
    CP_TRY(lb_copy(pl, w->nr, b, v[WR0]));
    CP_TRY(lb_bicg_ts_into(pl, nc, v[WR], v[WR], P[2])); /* {|r|^2, conj(r0) r} with r0 = r */
    CP_TRY(lb_sum_now(pl, P[2], 4, sums));
    double rnorm = sqrt(fmax(sums[0], 0));
    if (!(rnorm > target) || max_iter <= 0) return CLPHYS_SUCCESS;
    CP_TRY(lb_bicg_p_dev(pl, nc, v[WP], v[WR], v[WQ], P[2], w->state, 1)); /* p = r */
    CP_TRY(lqcd_hop(pl, pl->tmp, v[WP], NULL, 0, 1, NULL));              /* M p, first half */
    int it = 0;
    clphys_status st = CLPHYS_SUCCESS;
    for (;;) {
        cl_event ev = NULL;
        if ((st = lqcd_hop(pl, v[WQ], pl->tmp, v[WP], kk, 0, NULL)) || /* v = M p */
            (st = lb_cdotc_into(pl, nc, v[WR0], v[WQ], P[0])) ||
            (st = lb_bicg_s_dev(pl, nc, v[WS], v[WR], v[WQ], P[2], P[0], w->state)) ||
            (st = mop(w, v[WT], v[WS])) || (st = lb_bicg_ts_into(pl, nc, v[WT], v[WS], P[1])) ||
            (st = lb_bicg_xr_dev(pl, nc, v[WX], v[WR], v[WP], v[WS], v[WT], v[WR0], P[1], w->state, P[2])) ||
            (st = read_async(sp, w, P[2], 4 * ng, 1, &ev)))
            break;
        it++;
        *napply += 2;
        const int more = it < max_iter;
        if (more && !(st = lb_bicg_p_dev(pl, nc, v[WP], v[WR], v[WQ], P[2], w->state, 0)))
            st = lqcd_hop(pl, pl->tmp, v[WP], NULL, 0, 1, NULL);
        clFlush(ctx->queue);
        clphys_status sw = wait_release(ctx, &ev);
        if (st || (st = sw)) break;
        lb_sum_host(pl, w->hp, 4, sums);
        const double *S = (const double *)(w->hp + w->hstate);
        rnorm = sqrt(fmax(sums[0], 0));
        if (w->prm->progress) w->prm->progress(w->prm->user, *iters + it, rnorm / w->bnorm, 0);
        if (!(rnorm > target) || !more) break;
        /* breakdowns: restart from the outer loop */
        if ((sums[1] == 0 && sums[2] == 0) || (S[6] == 0 && S[7] == 0) || (S[4] == 0 && S[5] == 0)) break;
    }
    *iters += it;
    return st;
}

/* ---- b in, x out -----------------------------------------------------------
 * The caller's array <-> the page-locked staging array (host threads) <->
 * the device copy in the caller's layout (DMA) <-> the even and odd fields
 * (spinor_import/export on the device).  In kn.xfer_chunks pieces: the host
 * copies piece c while the DMA of piece c - 1 runs. */

#if defined(__SSE2__)
#include <emmintrin.h>
#include <stdint.h>
/* dst = src with non-temporal stores (no read-for-ownership of dst) */
static void copy_nt(double *dst, const double *src, size_t n)
{
    size_t i = 0;
    for (; i < n && ((uintptr_t)(dst + i) & 15); i++) dst[i] = src[i];
    for (; i + 8 <= n; i += 8) {
        __m128d a = _mm_loadu_pd(src + i), b = _mm_loadu_pd(src + i + 2), c = _mm_loadu_pd(src + i + 4),
                d = _mm_loadu_pd(src + i + 6);
        _mm_stream_pd(dst + i, a);
        _mm_stream_pd(dst + i + 2, b);
        _mm_stream_pd(dst + i + 4, c);
        _mm_stream_pd(dst + i + 6, d);
    }
    for (; i < n; i++) dst[i] = src[i];
    _mm_sfence();
}
#else
static void copy_nt(double *dst, const double *src, size_t n) { memcpy(dst, src, n * sizeof *dst); }
#endif

/* dst = src, n doubles, by all host threads (mode: lqcd_solver_knobs). */
void lqcd_host_copy(double *dst, const double *src, size_t n, int mode)
{
    if (mode == 0) {
        const size_t chunk = 1 << 16;
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i += chunk) memcpy(dst + i, src + i, (n - i < chunk ? n - i : chunk) * sizeof(double));
        return;
    }
#pragma omp parallel
    {
        int nt = 1, t = 0;
#ifdef _OPENMP
        nt = omp_get_num_threads(), t = omp_get_thread_num();
#endif
        size_t per = (n + (size_t)nt - 1) / (size_t)nt;
        per = (per + 7) & ~(size_t)7; /* 64-byte pieces */
        size_t a = (size_t)t * per, e = a + per < n ? a + per : n;
        if (a < e) {
            if (mode == 2) copy_nt(dst + a, src + a, e - a);
            else memcpy(dst + a, src + a, (e - a) * sizeof(double));
        }
    }
}

/* Piece c of nch over n doubles: [*off, *off + *len) */
static void piece(size_t n, int nch, int c, size_t *off, size_t *len)
{
    size_t per = (n + (size_t)nch - 1) / (size_t)nch;
    per = (per + 511) & ~(size_t)511; /* 4 KiB */
    *off = (size_t)c * per < n ? (size_t)c * per : n;
    *len = *off + per < n ? per : n - *off;
}

static int nchunks(const clphys_solver_plan *sp)
{
    int c = sp->kn.xfer_chunks;
    return c < 1 ? 1 : c > LQCD_MAX_CHUNKS ? LQCD_MAX_CHUNKS : c;
}

static clphys_status upload(clphys_solver_plan *sp, const double *b)
{
    clphys_dslash_plan *pl = sp->p64;
    clphys_context *ctx = pl->ctx;
    size_t n = pl->vol;
    const size_t nd = n * 24;
    if (sp->pin) {
        const int nch = nchunks(sp);
        for (int c = 0; c < nch; c++) {
            size_t off, len;
            piece(nd, nch, c, &off, &len);
            if (!len) continue;
            lqcd_host_copy(sp->pin + off, b + off, len, sp->kn.copy_mode);
            CP_CL(ctx, clEnqueueWriteBuffer(ctx->queue, sp->host, CL_FALSE, off * sizeof(double), len * sizeof(double),
                                            sp->pin + off, 0, NULL, NULL));
            clFlush(ctx->queue);
        }
    } else {
        CP_TRY(cp_write(ctx, sp->host, 0, nd * sizeof(double), b));
    }
    CP_TRY(CP_ARG(ctx, pl->imp, 0, sp->be));
    CP_TRY(CP_ARG(ctx, pl->imp, 1, sp->bo));
    CP_TRY(CP_ARG(ctx, pl->imp, 2, sp->host));
    return cp_launch(ctx, pl->imp, 1, &n, NULL, NULL);
}

/* Wait for (and drop) the early reads of x. */
static clphys_status spec_drop(clphys_solver_plan *sp)
{
    cl_int e = CL_SUCCESS;
    for (int c = 0; c < sp->nsev; c++)
        if (sp->sev[c]) {
            cl_int ec = clWaitForEvents(1, &sp->sev[c]);
            if (e == CL_SUCCESS) e = ec;
            clReleaseEvent(sp->sev[c]);
            sp->sev[c] = NULL;
        }
    sp->nsev = 0;
    return e == CL_SUCCESS ? CLPHYS_SUCCESS : cp_cl_error(sp->p64->ctx, e, "clWaitForEvents (reads of x)");
}

static clphys_status export_x(clphys_solver_plan *sp)
{
    clphys_dslash_plan *pl = sp->p64;
    size_t n = pl->vol;
    CP_TRY(CP_ARG(pl->ctx, pl->exp, 0, sp->host));
    CP_TRY(CP_ARG(pl->ctx, pl->exp, 1, sp->xe));
    CP_TRY(CP_ARG(pl->ctx, pl->exp, 2, sp->xo));
    return cp_launch(pl->ctx, pl->exp, 1, &n, NULL, NULL);
}

/* x has just changed: lay it out for the host and start reading it into the
 * staging array on queue qx, while the main queue goes on with the
 * true residual.  If that residual ends the solve, download() only waits for
 * the pieces and copies them out. */
static clphys_status spec_start(clphys_solver_plan *sp)
{
    clphys_context *ctx = sp->p64->ctx;
    CP_TRY(spec_drop(sp)); /* the previous reads of sp->host are done before export overwrites it */
    CP_TRY(export_x(sp));
    cl_event mark;
    CP_CL(ctx, clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &mark));
    clFlush(ctx->queue);
    const size_t nd = sp->p64->vol * 24;
    const int nch = nchunks(sp);
    cl_int e = CL_SUCCESS;
    for (int c = 0; c < nch && e == CL_SUCCESS; c++) {
        size_t off, len;
        piece(nd, nch, c, &off, &len);
        if (!len) continue;
        e = clEnqueueReadBuffer(sp->qx, sp->host, CL_FALSE, off * sizeof(double), len * sizeof(double), sp->pin + off,
                                sp->nsev ? 0 : 1, sp->nsev ? NULL : &mark, &sp->sev[sp->nsev]);
        if (e == CL_SUCCESS) sp->nsev++;
    }
    clReleaseEvent(mark);
    clFlush(sp->qx);
    return e == CL_SUCCESS ? CLPHYS_SUCCESS : cp_cl_error(ctx, e, "clEnqueueReadBuffer (early read of x)");
}

static clphys_status download(clphys_solver_plan *sp, double *x, int started)
{
    clphys_dslash_plan *pl = sp->p64;
    clphys_context *ctx = pl->ctx;
    const size_t nd = pl->vol * 24;
    if (!sp->pin) {
        CP_TRY(export_x(sp));
        return cp_read(ctx, sp->host, 0, nd * sizeof(double), x);
    }
    const int nch = nchunks(sp);
    if (!started) {
        CP_TRY(spec_drop(sp));
        CP_TRY(export_x(sp));
        cl_int e = CL_SUCCESS;
        for (int c = 0; c < nch && e == CL_SUCCESS; c++) {
            size_t off, len;
            piece(nd, nch, c, &off, &len);
            if (!len) continue;
            e = clEnqueueReadBuffer(ctx->queue, sp->host, CL_FALSE, off * sizeof(double), len * sizeof(double),
                                    sp->pin + off, 0, NULL, &sp->sev[sp->nsev]);
            if (e == CL_SUCCESS) sp->nsev++;
        }
        clFlush(ctx->queue);
        if (e != CL_SUCCESS) {
            spec_drop(sp);
            return cp_cl_error(ctx, e, "clEnqueueReadBuffer (x)");
        }
    }
    /* the pieces in order, each copied out as soon as it is on the host */
    for (int c = 0, k = 0; c < nch; c++) {
        size_t off, len;
        piece(nd, nch, c, &off, &len);
        if (!len) continue;
        cl_int e = clWaitForEvents(1, &sp->sev[k]);
        clReleaseEvent(sp->sev[k]);
        sp->sev[k++] = NULL;
        if (e != CL_SUCCESS) {
            spec_drop(sp);
            return cp_cl_error(ctx, e, "clWaitForEvents (x)");
        }
        lqcd_host_copy(x + off, sp->pin + off, len, sp->kn.copy_mode);
    }
    sp->nsev = 0;
    return CLPHYS_SUCCESS;
}

void lqcd_solver_get_knobs(const clphys_solver_plan *sp, lqcd_solver_knobs *kn) { *kn = sp->kn; }
void lqcd_solver_set_knobs(clphys_solver_plan *sp, const lqcd_solver_knobs *kn)
{
    sp->kn = *kn;
    if (!sp->pin) sp->kn.spec_download = 0;
    if (!sp->prm.own_blas) sp->kn.dev_scalars = sp->kn.fused_outer = 0;
}

void clphys_solver_plan_destroy(clphys_solver_plan *sp)
{
    if (!sp) return;
    spec_drop(sp);
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
    if (sp->qx) clReleaseCommandQueue(sp->qx);
    if (sp->qr) clReleaseCommandQueue(sp->qr);
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
    const int own = prm->own_blas != 0;
    clphys_status st = ws_create(&sp->w64, p64, own);
    if (!st && prm->mixed) st = ws_create(&sp->w32, p32, own);
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
    if (!st) {
        cl_int e;
        sp->qx = clCreateCommandQueue(ctx->context, ctx->device, 0, &e);
        if (sp->qx) sp->qr = clCreateCommandQueue(ctx->context, ctx->device, 0, &e);
        if (!sp->qx || !sp->qr) st = cp_cl_error(ctx, e, "clCreateCommandQueue (solver's read queues)");
    }
    cl_program prog;
    if (!st && prm->mixed && !(st = cp_program(ctx, "blas1.cl", "-DNEED_FP64", &prog)) &&
        !(st = cp_kernel(ctx, prog, "convert_to_single", &sp->cvt[0])))
        st = cp_kernel(ctx, prog, "convert_to_double", &sp->cvt[1]);
    if (st) {
        clphys_solver_plan_destroy(sp);
        return st;
    }
    /* the H100's best measured setting (bench/lqcd-notes.md, "E"): reading x
     * back early slowed the mixed iterations by 3.5 ms and is off */
    lqcd_solver_knobs kn = {.dev_scalars = 1, .fused_outer = 1, .xfer_chunks = 8, .copy_mode = 1, .spec_download = 0,
                            .read_queue = 1};
    if (!clphys_context_device(ctx)->is_gpu) /* a CPU device: its "DMA" is a copy on the same cores */
        kn.xfer_chunks = 1, kn.spec_download = 0;
    lqcd_solver_set_knobs(sp, &kn);
    *out = sp;
    return CLPHYS_SUCCESS;
}

/* The true residual r = b - D x of both parities into re, ro; |r|^2 of each. */
static clphys_status true_residual(clphys_solver_plan *sp, double *r2e, double *r2o)
{
    clphys_dslash_plan *p64 = sp->p64;
    ws_t *w64 = &sp->w64;
    const double kappa = p64->p.kappa;
    const size_t nr = w64->nr;
    if (sp->kn.fused_outer) {
        double se[3], so[3];
        CP_TRY(lqcd_hop(p64, sp->tmp, sp->xo, sp->xe, -kappa, 0, NULL));
        CP_TRY(lb_sub_norm_into(p64, nr, sp->re, sp->be, sp->tmp, w64->part[0]));
        CP_TRY(lqcd_hop(p64, sp->tmp, sp->xe, sp->xo, -kappa, 1, NULL));
        CP_TRY(lb_sub_norm_into(p64, nr, sp->ro, sp->bo, sp->tmp, w64->part[1]));
        CP_TRY(lb_read_async(p64, p64->ctx->queue, w64->part[0], 2 * p64->ngroups, w64->hp, 0, NULL, NULL));
        CP_TRY(lb_sum_now(p64, w64->part[1], 2, so)); /* in-order queue: the read above is done too */
        lb_sum_host(p64, w64->hp, 2, se);
        *r2e = se[0], *r2o = so[0];
        return CLPHYS_SUCCESS;
    }
    CP_TRY(lqcd_hop(p64, sp->tmp, sp->xo, sp->xe, -kappa, 0, NULL));
    CP_TRY(lb_copy(p64, nr, sp->be, sp->re));
    CP_TRY(lb_axpy(p64, nr, -1.0, sp->tmp, sp->re));
    CP_TRY(lqcd_hop(p64, sp->tmp, sp->xe, sp->xo, -kappa, 1, NULL));
    CP_TRY(lb_copy(p64, nr, sp->bo, sp->ro));
    CP_TRY(lb_axpy(p64, nr, -1.0, sp->tmp, sp->ro));
    CP_TRY(lb_norm2(p64, nr, sp->re, w64->scratch, r2e));
    return lb_norm2(p64, nr, sp->ro, w64->scratch, r2o);
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
    const int dev = sp->kn.dev_scalars, fused = sp->kn.fused_outer;
    double t0 = cp_now();
    const double kappa = p64->p.kappa;
    ws_t *w64 = &sp->w64, *w32 = &sp->w32;
    const size_t nr = w64->nr;
    double bn2e = 0, bn2o = 0, rel = 0;
    clphys_status st = upload(sp, b);
    if (!st) st = cp_finish(ctx);
    double t1 = cp_now();
    res->upload_s = t1 - t0;
    if (fused) {
        double se[3], so[3];
        if (!st) st = lb_norm2_into(p64, nr, sp->be, w64->part[0]);
        if (!st) st = lb_norm2_into(p64, nr, sp->bo, w64->part[1]);
        if (!st) st = lb_read_async(p64, ctx->queue, w64->part[0], 2 * p64->ngroups, w64->hp, 0, NULL, NULL);
        if (!st) st = lb_sum_now(p64, w64->part[1], 2, so);
        if (!st) lb_sum_host(p64, w64->hp, 2, se), bn2e = se[0], bn2o = so[0];
    } else {
        if (!st) st = lb_norm2(p64, nr, sp->be, w64->scratch, &bn2e);
        if (!st) st = lb_norm2(p64, nr, sp->bo, w64->scratch, &bn2o);
    }
    const double bnorm = sqrt(bn2e + bn2o);
    w64->prm = w32->prm = prm;
    w64->bnorm = w32->bnorm = bnorm > 0 ? bnorm : 1;
    if (!st) st = zero(p64, sp->xe, nr);
    if (!st) st = zero(p64, sp->xo, nr);
    int napply = 0, first = 1, started = 0;
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
            if ((st = true_residual(sp, &r2e, &r2o))) break;
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
        double rpn = 0;
        if ((st = lqcd_hop(p64, rp, rO, rE, kappa, 0, NULL))) break;
        /* |b - D x| = |r' - M e_e| once e_o = r_o + kappa H_oe e_e */
        double tgt = 0.5 * prm->tol * bnorm;
        int left = prm->max_iter - res->iterations;
        const int before = res->iterations;
        if (prm->mixed) {
            double inner = prm->inner_tol > 0 ? prm->inner_tol : 1e-5, sums[3];
            if (fused) {
                if ((st = lb_convert_single_norm(p64, nr, w32->v[rhs], rp, w64->part[0])) ||
                    (st = lb_sum_now(p64, w64->part[0], 2, sums)))
                    break;
                rpn = sqrt(fmax(sums[0], 0));
            } else if ((st = nrm2(w64, rp, &rpn)) || (st = convert(sp, w32->v[rhs], rp, nr, 1))) {
                break;
            }
            tgt = fmax(tgt, inner * rpn);
        } else if (!fused && (st = nrm2(w64, rp, &rpn))) { /* unused: the measured baseline */
            break;
        }
        if (prm->kind == CLPHYS_SOLVER_BICGSTAB) {
            if (dev) st = bicgstab_dev(sp, w, w->v[WU], tgt, left, &res->iterations, &napply);
            else st = (prm->own_blas ? bicgstab_own : bicgstab)(w, w->v[WU], tgt, left, &res->iterations, &napply);
        } else {
            st = dev ? cgnr_dev(sp, w, tgt, left, &res->iterations, &napply)
                     : cgnr(w, tgt, left, &res->iterations, &napply);
        }
        if (st || res->iterations == before) break; /* no progress: report the residual */
        /* e_o = r_o + kappa H_oe e_e; x += e */
        if (prm->mixed && fused) {
            if ((st = lb_convert_add(p64, nr, sp->xe, w64->v[WX], w32->v[WX])) ||
                (st = lqcd_hop(p64, sp->tmp, w64->v[WX], rO, kappa, 1, NULL)) ||
                (st = lb_axpy(p64, nr, 1.0, sp->tmp, sp->xo)))
                break;
        } else {
            if (prm->mixed && (st = convert(sp, w64->v[WX], w32->v[WX], nr, 0))) break;
            if ((st = lqcd_hop(p64, sp->tmp, w64->v[WX], rO, kappa, 1, NULL)) ||
                (st = lb_axpy(p64, nr, 1.0, w64->v[WX], sp->xe)) || (st = lb_axpy(p64, nr, 1.0, sp->tmp, sp->xo)))
                break;
        }
        res->restarts++;
        started = 0;
        if (sp->kn.spec_download) {
            if ((st = spec_start(sp))) break;
            started = 1;
        }
    }
    double t2 = cp_now();
    res->iterate_s = t2 - t1;
    if (!st) st = download(sp, x, started);
    else spec_drop(sp);
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
