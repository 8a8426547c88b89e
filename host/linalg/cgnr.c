/* cgnr.c — CG on the normal equations A^H A x = A^H b, stopping on the
 * residual of A (linalg.h), with the scalars on the device (fused kernels)
 * or on the host (clBLAST).  rho = b - A x lives in b's vector. */
#include "linalg_internal.h"

#include <math.h>

/* out = A^H in, whole or (stage 1 / 2) split */
static clphys_status adj(const la_operator *A, cl_mem out, cl_mem in) { return A->apply_adjoint(A->user, out, in); }

/* The scalars stay on the device: alpha and beta are formed by the kernels
 * that use them from the partial sums of the norms before them, so an
 * iteration is queued without the host waiting on a reduction.  |rho|^2
 * comes back by an asynchronous read that the host waits for only after
 * queueing the first stage of the next A^H (it writes only the operator's
 * temporaries), so the device keeps working meanwhile; when converged, that
 * stage is the only work done in vain.  Same iterates and iteration count as
 * cgnr_clblast.  P[0] <q, q>; P[1], P[2] <r, r> of this and the last
 * iteration (alternating, g); P[3] |rho|^2 (and <q, q> after it). */
static clphys_status cgnr_fused(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p,
                                la_krylov_result *res)
{
    la_space *s = A->space;
    cl_mem *P = s->part, rho = b, r = s->v[LA_R], pv = s->v[LA_P], q = s->v[LA_Q];
    const size_t ng = s->ngroups;
    const int split = A->begin && A->end;
    double sums[3];
    CP_TRY(la_zero(s, x));
    CP_TRY(adj(A, r, rho)); /* r = A^H rho, rho = b - A x = b */
    CP_TRY(la_copy(s, r, pv));
    CP_TRY(la_fused_norm2_into(s, r, P[1]));
    CP_TRY(la_fused_norm2_into(s, rho, P[3]));
    const cl_mem both[2] = {P[1], P[3]};
    CP_TRY(la_reduce_point(s, 2, both, 2));
    CP_TRY(la_sums_now(s, P[3], 2, sums));
    double rnorm = sqrt(fmax(sums[0], 0));
    res->applications++;
    int it = 0, g = 1;
    clphys_status st = CLPHYS_SUCCESS;
    while (rnorm > p->target && it < p->max_iter) {
        cl_event ev = NULL;
        double qq[2] = {0, 0}, rr[2] = {0, 0};
        if ((st = A->apply(A->user, q, pv)) || (st = la_fused_norm2_into(s, q, P[0])) ||
            (st = la_reduce_point_values(s, 1, &P[0], 2, qq)) ||
            (st = la_fused_cg_update(s, pv, q, x, rho, P[g], P[0], P[3])))
            break;
        /* With a global sum the host has <q, q> already and |rho|^2 comes
         * from the reduction point itself, read behind the next A^H's first
         * stage; without one, by the asynchronous read of P[3]. */
        st = s->gsum ? la_reduce_start(s, 1, &P[3], 2, &ev) : la_read_async(s, P[3], 2 * ng + 1, 0, &ev);
        if (st) break;
        const int more = it + 1 < p->max_iter;
        if (more && split) st = A->begin(A->user, 1, rho); /* A^H rho, first stage */
        clphys_status sf = cp_flush(s->ctx, NULL);
        clphys_status sw = s->gsum ? la_reduce_end(s, 1, &P[3], 2, &ev, rr) : cp_wait(s->ctx, &ev);
        if (st || (st = sf) || (st = sw)) break;
        if (!((s->gsum ? qq[0] : la_host_real(s, 2 * ng)) > 0)) break; /* <q, q> = 0: alpha was 0, nothing moved */
        if (s->gsum)
            sums[0] = rr[0];
        else
            la_sum_host(s, 2, sums);
        rnorm = sqrt(fmax(sums[0], 0));
        it++;
        res->applications++;
        la_report(p, it, rnorm);
        if (rnorm <= p->target || !more) break;
        if ((st = split ? A->end(A->user, 1, r, rho) : adj(A, r, rho)) || (st = la_fused_norm2_into(s, r, P[3 - g])) ||
            (st = la_reduce_point(s, 1, &P[3 - g], 2)) || (st = la_fused_xpay(s, r, pv, P[3 - g], P[g])))
            break;
        res->applications++;
        g = 3 - g;
        if ((st = cp_flush(s->ctx, NULL))) break;
    }
    res->iterations = it;
    return st;
}

/* Three blocking reductions per iteration. */
static clphys_status cgnr_clblast(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p,
                                  la_krylov_result *res)
{
    la_space *s = A->space;
    cl_mem rho = b, r = s->v[LA_R], pv = s->v[LA_P], q = s->v[LA_Q];
    CP_TRY(la_zero(s, x));
    CP_TRY(adj(A, r, rho)); /* r = A^H rho, rho = b - A x = b */
    CP_TRY(la_clblast_copy(s, r, pv));
    double gamma, rr;
    CP_TRY(la_clblast_dot(s, r, r, &gamma));
    CP_TRY(la_clblast_dot(s, rho, rho, &rr));
    double rnorm = sqrt(fmax(rr, 0));
    res->applications++;
    int it = 0;
    while (rnorm > p->target && it < p->max_iter) {
        double qq;
        CP_TRY(A->apply(A->user, q, pv));
        CP_TRY(la_clblast_dot(s, q, q, &qq));
        if (!(qq > 0)) break;
        const double alpha = gamma / qq;
        CP_TRY(la_clblast_axpy(s, alpha, pv, x));
        CP_TRY(la_clblast_axpy(s, -alpha, q, rho));
        CP_TRY(la_clblast_dot(s, rho, rho, &rr));
        rnorm = sqrt(fmax(rr, 0));
        it++;
        la_report(p, it, rnorm);
        res->applications++;
        if (rnorm <= p->target) break;
        CP_TRY(adj(A, r, rho));
        res->applications++;
        double gnew;
        CP_TRY(la_clblast_dot(s, r, r, &gnew));
        const double beta = gnew / gamma;
        gamma = gnew;
        CP_TRY(la_clblast_xpay(s, r, beta, pv));
    }
    res->iterations = it;
    return CLPHYS_SUCCESS;
}

clphys_status la_cgnr(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p, la_krylov_result *res)
{
    if (!A || !A->space || !A->apply || !A->apply_adjoint || !b || !x || !p || !res)
        return cp_error(A && A->space ? A->space->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "la_cgnr: NULL argument or an operator without its adjoint");
    res->iterations = res->applications = 0;
    return (A->space->p.blas == LA_BLAS_CLBLAST ? cgnr_clblast : cgnr_fused)(A, b, x, p, res);
}
