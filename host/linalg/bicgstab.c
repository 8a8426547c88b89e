/* bicgstab.c — BiCGStab (van der Vorst 1992) on a complex space
 * (linalg.h), with the scalars on the device (fused kernels) or on the host
 * (clBLAST). */
#include "linalg_internal.h"

#include <math.h>

static void cdiv(const double a[2], const double b[2], double r[2])
{
    double d = b[0] * b[0] + b[1] * b[1];
    double re = (a[0] * b[0] + a[1] * b[1]) / d, im = (a[1] * b[0] - a[0] * b[1]) / d;
    r[0] = re, r[1] = im;
}

static void cmul(const double a[2], const double b[2], double r[2])
{
    double re = a[0] * b[0] - a[1] * b[1], im = a[0] * b[1] + a[1] * b[0];
    r[0] = re, r[1] = im;
}

/* The scalars the device makes from a global sum's values, for the host's
 * breakdown checks (bicg_s_dev, bicg_xr_dev): S[4..5] omega from {|t|^2,
 * conj(t) s} (ts), S[6..7] <r0, v> (d), each in the kernels' precision. */
static void state_of(const la_space *s, const double d[2], const double ts[3], double S[8])
{
    double a[5] = {la_real(s, d[0]), la_real(s, d[1]), la_real(s, ts[0]), la_real(s, ts[1]), la_real(s, ts[2])};
    if (s->acc_size != 8)
        for (int i = 0; i < 5; i++) a[i] = (float)a[i];
    for (int i = 0; i < 4; i++) S[i] = 0;
    S[4] = a[2] > 0 ? a[3] / a[2] : 0, S[5] = a[2] > 0 ? a[4] / a[2] : 0;
    if (s->acc_size != 8) S[4] = (float)S[4], S[5] = (float)S[5];
    S[6] = a[0], S[7] = a[1];
}

/* The scalars in s->state (rho, alpha, omega, <r0, v>), one asynchronous
 * read per iteration ({|r|^2, conj(r0) r} and the state), waited for after
 * the next iteration's p update and the first stage of A p are queued (they
 * change only p and the operator's temporaries); with a global sum the
 * points' values decide instead, before that update (no read that could
 * fail on one process alone, and no update in vain).  On a breakdown (<r0,
 * v> = 0) the device sets alpha = 0, so that iteration becomes a
 * minimal-residual step before the caller restarts.  The level-1 work is
 * four fused kernels and one dot: 18 passes over the vectors per
 * iteration, not clBLAST's 31.  P[0] <r0, v>; P[1] {|t|^2, conj(t) s};
 * P[2] {|r|^2, conj(r0) r}. */
static clphys_status bicgstab_fused(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p,
                                    la_krylov_result *res, clphys_status st)
{
    la_space *s = A->space;
    cl_mem *P = s->part, r = s->v[LA_R], r0 = s->v[LA_R0], pv = s->v[LA_P], v = s->v[LA_Q], sv = s->v[LA_S],
           t = s->v[LA_T];
    const size_t ng = s->ngroups;
    const int split = A->begin && A->end;
    double xr[4], sums[3];
    if (!st) st = la_zero(s, x);
    if (!st) st = la_copy(s, b, r);
    if (!st) st = la_copy(s, b, r0);
    if (!st) st = la_fused_bicg_ts(s, r, r, P[2]); /* {|r|^2, conj(r0) r} with r0 = r */
    if (la_reduce(s, &st, 1, &P[2], 4, 0, xr)) return st;
    CP_TRY(la_sums_after(s, P[2], 4, xr, sums));
    double rnorm = sqrt(fmax(sums[0], 0));
    if (!(rnorm > p->target) || p->max_iter <= 0) return CLPHYS_SUCCESS;
    st = la_reduce_write(s, st, 1, &P[2], 4);
    if (!st) st = la_fused_bicg_p(s, pv, r, v, P[2], 1); /* p = r */
    if (split && la_go(s, st)) st = la_keep(st, A->begin(A->user, 0, pv));
    int it = 0;
    for (;;) {
        cl_event ev = NULL;
        double d[2], ts[4], S[8];
        if (la_go(s, st)) st = la_keep(st, split ? A->end(A->user, 0, v, pv) : A->apply(A->user, v, pv)); /* v = A p */
        if (!st) st = la_fused_cdotc_into(s, r0, v, P[0]);
        if (la_reduce(s, &st, 1, &P[0], 2, 1, d)) break;
        if (!st) st = la_fused_bicg_s(s, sv, r, v, P[2], P[0]);
        if (la_go(s, st)) st = la_keep(st, A->apply(A->user, t, sv));
        if (!st) st = la_fused_bicg_ts(s, t, sv, P[1]);
        if (la_reduce(s, &st, 1, &P[1], 4, 1, ts)) break;
        if (!st) st = la_fused_bicg_xr(s, x, r, pv, sv, t, r0, P[1], P[2]);
        if (la_reduce(s, &st, 1, &P[2], 4, 0, xr)) break;
        if (!s->gsum && (st = la_read_async(s, P[2], 4 * ng, 1, &ev))) break;
        it++;
        res->applications += 2;
        const int more = it < p->max_iter;
        if (s->gsum) {
            CP_TRY(la_sums_after(s, P[2], 4, xr, sums));
            state_of(s, d, ts, S);
        } else {
            if (more && !(st = la_fused_bicg_p(s, pv, r, v, P[2], 0)) && split) st = A->begin(A->user, 0, pv);
            clphys_status sf = cp_flush(s->ctx, NULL), sw = cp_wait(s->ctx, &ev);
            if (st || (st = sf) || (st = sw)) break;
            la_sum_host(s, 4, sums);
            la_host_state(s, S);
        }
        rnorm = sqrt(fmax(sums[0], 0));
        la_report(p, it, rnorm);
        if (!(rnorm > p->target) || !more) break;
        /* breakdowns: restart from the caller */
        if ((sums[1] == 0 && sums[2] == 0) || (S[6] == 0 && S[7] == 0) || (S[4] == 0 && S[5] == 0)) break;
        if (s->gsum) {
            st = la_reduce_write(s, st, 1, &P[2], 4);
            if (!st) st = la_fused_bicg_p(s, pv, r, v, P[2], 0);
            if (split && la_go(s, st)) st = la_keep(st, A->begin(A->user, 0, pv));
            if (!st) st = cp_flush(s->ctx, NULL);
        }
    }
    res->iterations = it;
    return st;
}

/* Scalars on the host: five blocking reductions per iteration. */
static clphys_status bicgstab_clblast(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p,
                                      la_krylov_result *res, clphys_status st)
{
    la_space *s = A->space;
    cl_mem r = s->v[LA_R], r0 = s->v[LA_R0], pv = s->v[LA_P], v = s->v[LA_Q], sv = s->v[LA_S], t = s->v[LA_T];
    if (!st) st = la_zero(s, x);
    if (!st) st = la_clblast_copy(s, b, r);
    if (!st) st = la_clblast_copy(s, b, r0);
    if (!st) st = la_zero(s, pv);
    if (!st) st = la_zero(s, v);
    double rho[2] = {1, 0}, alpha[2] = {1, 0}, omega[2] = {1, 0}, rr;
    CP_TRY(la_clblast_dot(s, st, r, r, &rr));
    double rnorm = sqrt(fmax(rr, 0));
    int it = 0;
    while (rnorm > p->target && it < p->max_iter) {
        double rn[2], beta[2], t1[2], t2[2], tt;
        CP_TRY(la_clblast_cdotc(s, st, r0, r, rn));
        if (rn[0] == 0 && rn[1] == 0) break; /* breakdown: restart from the caller */
        cdiv(rn, rho, t1);
        cdiv(alpha, omega, t2);
        cmul(t1, t2, beta);
        rho[0] = rn[0], rho[1] = rn[1];
        /* p = r + beta (p - omega v) */
        const double mo[2] = {-omega[0], -omega[1]};
        st = la_clblast_caxpy(s, mo, v, pv);
        if (!st) st = la_clblast_cxpay(s, r, beta, pv);
        if (la_go(s, st)) st = la_keep(st, A->apply(A->user, v, pv));
        CP_TRY(la_clblast_cdotc(s, st, r0, v, t1));
        if (t1[0] == 0 && t1[1] == 0) break;
        cdiv(rho, t1, alpha);
        /* s = r - alpha v */
        st = la_clblast_copy(s, r, sv);
        const double ma[2] = {-alpha[0], -alpha[1]};
        if (!st) st = la_clblast_caxpy(s, ma, v, sv);
        if (la_go(s, st)) st = la_keep(st, A->apply(A->user, t, sv));
        CP_TRY(la_clblast_dot(s, st, t, t, &tt));
        CP_TRY(la_clblast_cdotc(s, st, t, sv, t1));
        omega[0] = tt > 0 ? t1[0] / tt : 0, omega[1] = tt > 0 ? t1[1] / tt : 0;
        st = la_clblast_caxpy(s, alpha, pv, x);
        if (!st) st = la_clblast_caxpy(s, omega, sv, x);
        if (!st) st = la_clblast_copy(s, sv, r);
        const double mw[2] = {-omega[0], -omega[1]};
        if (!st) st = la_clblast_caxpy(s, mw, t, r);
        CP_TRY(la_clblast_dot(s, st, r, r, &rr));
        rnorm = sqrt(fmax(rr, 0));
        it++;
        la_report(p, it, rnorm);
        res->applications += 2;
        if (omega[0] == 0 && omega[1] == 0) break;
    }
    res->iterations = it;
    return st;
}

clphys_status la_bicgstab(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p, la_krylov_result *res)
{
    return la_krylov(LA_BICGSTAB, A, NULL, b, x, p, res, CLPHYS_SUCCESS);
}

clphys_status la_bicgstab_run(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p,
                              la_krylov_result *res, clphys_status st)
{
    return (A->space->p.blas == LA_BLAS_CLBLAST ? bicgstab_clblast : bicgstab_fused)(A, b, x, p, res, st);
}
