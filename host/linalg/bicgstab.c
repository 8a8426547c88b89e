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

/* The scalars in s->state (rho, alpha, omega, <r0, v>), one asynchronous
 * read per iteration ({|r|^2, conj(r0) r} and the state), waited for after
 * the next iteration's p update and the first stage of A p are queued (they
 * change only p and the operator's temporaries).  On a breakdown (<r0, v> =
 * 0) the device sets alpha = 0, so that iteration becomes a minimal-residual
 * step before the caller restarts.  The level-1 work is four fused kernels
 * and one dot: 18 passes over the vectors per iteration, not clBLAST's 31.
 * P[0] <r0, v>; P[1] {|t|^2, conj(t) s}; P[2] {|r|^2, conj(r0) r}. */
static clphys_status bicgstab_fused(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p,
                                    la_krylov_result *res)
{
    la_space *s = A->space;
    cl_mem *P = s->part, r = s->v[LA_R], r0 = s->v[LA_R0], pv = s->v[LA_P], v = s->v[LA_Q], sv = s->v[LA_S],
           t = s->v[LA_T];
    const size_t ng = s->ngroups;
    const int split = A->begin && A->end;
    double sums[3];
    CP_TRY(la_zero(s, x));
    CP_TRY(la_copy(s, b, r));
    CP_TRY(la_copy(s, b, r0));
    CP_TRY(la_fused_bicg_ts(s, r, r, P[2])); /* {|r|^2, conj(r0) r} with r0 = r */
    CP_TRY(la_reduce_point(s, 1, &P[2], 4));
    CP_TRY(la_sums_now(s, P[2], 4, sums));
    double rnorm = sqrt(fmax(sums[0], 0));
    if (!(rnorm > p->target) || p->max_iter <= 0) return CLPHYS_SUCCESS;
    CP_TRY(la_fused_bicg_p(s, pv, r, v, P[2], 1)); /* p = r */
    if (split) CP_TRY(A->begin(A->user, 0, pv));
    int it = 0;
    clphys_status st = CLPHYS_SUCCESS;
    for (;;) {
        cl_event ev = NULL;
        if ((st = split ? A->end(A->user, 0, v, pv) : A->apply(A->user, v, pv)) || /* v = A p */
            (st = la_fused_cdotc_into(s, r0, v, P[0])) || (st = la_reduce_point(s, 1, &P[0], 2)) ||
            (st = la_fused_bicg_s(s, sv, r, v, P[2], P[0])) || (st = A->apply(A->user, t, sv)) ||
            (st = la_fused_bicg_ts(s, t, sv, P[1])) || (st = la_reduce_point(s, 1, &P[1], 4)) ||
            (st = la_fused_bicg_xr(s, x, r, pv, sv, t, r0, P[1], P[2])) || (st = la_reduce_point(s, 1, &P[2], 4)) ||
            (st = la_read_async(s, P[2], 4 * ng, 1, &ev)))
            break;
        it++;
        res->applications += 2;
        const int more = it < p->max_iter;
        if (more && !(st = la_fused_bicg_p(s, pv, r, v, P[2], 0)) && split) st = A->begin(A->user, 0, pv);
        clphys_status sf = cp_flush(s->ctx, NULL), sw = cp_wait(s->ctx, &ev);
        if (st || (st = sf) || (st = sw)) break;
        la_sum_host(s, 4, sums);
        double S[8];
        la_host_state(s, S);
        rnorm = sqrt(fmax(sums[0], 0));
        la_report(p, it, rnorm);
        if (!(rnorm > p->target) || !more) break;
        /* breakdowns: restart from the caller */
        if ((sums[1] == 0 && sums[2] == 0) || (S[6] == 0 && S[7] == 0) || (S[4] == 0 && S[5] == 0)) break;
    }
    res->iterations = it;
    return st;
}

/* Scalars on the host: five blocking reductions per iteration. */
static clphys_status bicgstab_clblast(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p,
                                      la_krylov_result *res)
{
    la_space *s = A->space;
    cl_mem r = s->v[LA_R], r0 = s->v[LA_R0], pv = s->v[LA_P], v = s->v[LA_Q], sv = s->v[LA_S], t = s->v[LA_T];
    CP_TRY(la_zero(s, x));
    CP_TRY(la_clblast_copy(s, b, r));
    CP_TRY(la_clblast_copy(s, b, r0));
    CP_TRY(la_zero(s, pv));
    CP_TRY(la_zero(s, v));
    double rho[2] = {1, 0}, alpha[2] = {1, 0}, omega[2] = {1, 0}, rr;
    CP_TRY(la_clblast_dot(s, r, r, &rr));
    double rnorm = sqrt(fmax(rr, 0));
    int it = 0;
    while (rnorm > p->target && it < p->max_iter) {
        double rn[2], beta[2], t1[2], t2[2], tt;
        CP_TRY(la_clblast_cdotc(s, r0, r, rn));
        if (rn[0] == 0 && rn[1] == 0) break; /* breakdown: restart from the caller */
        cdiv(rn, rho, t1);
        cdiv(alpha, omega, t2);
        cmul(t1, t2, beta);
        rho[0] = rn[0], rho[1] = rn[1];
        /* p = r + beta (p - omega v) */
        const double mo[2] = {-omega[0], -omega[1]};
        CP_TRY(la_clblast_caxpy(s, mo, v, pv));
        CP_TRY(la_clblast_cxpay(s, r, beta, pv));
        CP_TRY(A->apply(A->user, v, pv));
        CP_TRY(la_clblast_cdotc(s, r0, v, t1));
        if (t1[0] == 0 && t1[1] == 0) break;
        cdiv(rho, t1, alpha);
        /* s = r - alpha v */
        CP_TRY(la_clblast_copy(s, r, sv));
        const double ma[2] = {-alpha[0], -alpha[1]};
        CP_TRY(la_clblast_caxpy(s, ma, v, sv));
        CP_TRY(A->apply(A->user, t, sv));
        CP_TRY(la_clblast_dot(s, t, t, &tt));
        CP_TRY(la_clblast_cdotc(s, t, sv, t1));
        omega[0] = tt > 0 ? t1[0] / tt : 0, omega[1] = tt > 0 ? t1[1] / tt : 0;
        CP_TRY(la_clblast_caxpy(s, alpha, pv, x));
        CP_TRY(la_clblast_caxpy(s, omega, sv, x));
        CP_TRY(la_clblast_copy(s, sv, r));
        const double mw[2] = {-omega[0], -omega[1]};
        CP_TRY(la_clblast_caxpy(s, mw, t, r));
        CP_TRY(la_clblast_dot(s, r, r, &rr));
        rnorm = sqrt(fmax(rr, 0));
        it++;
        la_report(p, it, rnorm);
        res->applications += 2;
        if (omega[0] == 0 && omega[1] == 0) break;
    }
    res->iterations = it;
    return CLPHYS_SUCCESS;
}

clphys_status la_bicgstab(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p, la_krylov_result *res)
{
    if (!A || !A->space || !A->apply || !b || !x || !p || !res)
        return cp_error(A && A->space ? A->space->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "la_bicgstab: NULL argument");
    if (!A->space->p.complex_values)
        return cp_error(A->space->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "la_bicgstab: the vectors must be complex");
    res->iterations = res->applications = 0;
    return (A->space->p.blas == LA_BLAS_CLBLAST ? bicgstab_clblast : bicgstab_fused)(A, b, x, p, res);
}
