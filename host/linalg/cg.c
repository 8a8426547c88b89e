/* cg.c — conjugate gradients, plain or preconditioned (linalg.h), with the
 * scalars on the device (fused kernels) or on the host (clBLAST). */
#include "linalg_internal.h"

#include <math.h>

void la_report(const la_krylov_params *p, int it, double rnorm)
{
    if (p->progress) p->progress(p->user, p->iter_offset + it, rnorm / (p->scale > 0 ? p->scale : 1), 0);
}

clphys_status la_precond_apply(const la_precond *M, la_space *s, cl_mem z, cl_mem r)
{
    la_space *m = M->space;
    if (m == s) return M->apply(M->user, z, r);
    cl_mem mb = m->v[LA_B], mx = m->v[LA_X];
    CP_TRY(la_convert(m, mb, s, r));
    CP_TRY(M->apply(M->user, mx, mb));
    return la_convert(s, z, m, mx);
}

/* Partial-sum buffers: P[0] <p, q>; P[1], P[2] <r, z> of this and the last
 * iteration (alternating, g); P[3] |r|^2 when z != r (with M; without, |r|^2
 * is <r, z> and goes straight to P[3 - g]).  |r|^2 comes back by an
 * asynchronous read, which the host waits for at the end of the update. */
static clphys_status cg_fused(const la_operator *A, const la_precond *M, cl_mem b, cl_mem x, const la_krylov_params *p,
                              la_krylov_result *res)
{
    la_space *s = A->space;
    cl_mem *P = s->part, r = s->v[LA_R], pv = s->v[LA_P], q = s->v[LA_Q], z = M ? s->v[LA_S] : r;
    const size_t ng = s->ngroups;
    double sums[3];
    CP_TRY(la_zero(s, x));
    CP_TRY(la_copy(s, b, r));
    if (M) {
        CP_TRY(la_precond_apply(M, s, z, r));
        CP_TRY(la_fused_norm2_into(s, r, P[3]));
        CP_TRY(la_fused_dot_into(s, r, z, P[1]));
        const cl_mem both[2] = {P[3], P[1]};
        CP_TRY(la_reduce_point(s, 2, both, 2));
        CP_TRY(la_sums_now(s, P[3], 2, sums));
    } else {
        CP_TRY(la_fused_norm2_into(s, r, P[1]));
        CP_TRY(la_reduce_point(s, 1, &P[1], 2));
        CP_TRY(la_sums_now(s, P[1], 2, sums));
    }
    CP_TRY(la_copy(s, z, pv));
    double rnorm = sqrt(fmax(sums[0], 0)), best = rnorm;
    int it = 0, g = 1, best_it = 0;
    clphys_status st = CLPHYS_SUCCESS;
    while (rnorm > p->target && it < p->max_iter) {
        cl_event ev = NULL;
        cl_mem prr = M ? P[3] : P[3 - g];
        if ((st = A->apply(A->user, q, pv)) || (st = la_fused_dot_into(s, pv, q, P[0])) ||
            (st = la_reduce_point(s, 1, &P[0], 2)) || (st = la_fused_cg_update(s, pv, q, x, r, P[g], P[0], prr)) ||
            (st = la_reduce_point(s, 1, &prr, 2)) || (st = la_read_async(s, prr, 2 * ng + 1, 0, &ev)))
            break;
        res->applications++;
        if ((st = cp_wait(s->ctx, &ev))) break;
        if (!(la_host_real(s, 2 * ng) > 0)) break; /* <p, A p> = 0: alpha was 0, nothing moved */
        la_sum_host(s, 2, sums);
        rnorm = sqrt(fmax(sums[0], 0));
        la_report(p, ++it, rnorm);
        if (rnorm <= 0.5 * best) best = rnorm, best_it = it;
        if (rnorm <= p->target || it >= p->max_iter || it - best_it >= LA_STALL) break;
        if (M) {
            if ((st = la_precond_apply(M, s, z, r)) || (st = la_fused_dot_into(s, r, z, P[3 - g])) ||
                (st = la_reduce_point(s, 1, &P[3 - g], 2)))
                break;
        }
        if ((st = la_fused_xpay(s, z, pv, P[3 - g], P[g])) || (st = cp_flush(s->ctx, NULL))) break;
        g = 3 - g;
    }
    res->iterations = it;
    return st;
}

static clphys_status cg_clblast(const la_operator *A, const la_precond *M, cl_mem b, cl_mem x,
                                const la_krylov_params *p, la_krylov_result *res)
{
    la_space *s = A->space;
    cl_mem r = s->v[LA_R], pv = s->v[LA_P], q = s->v[LA_Q], z = M ? s->v[LA_S] : r;
    double rr, rz;
    CP_TRY(la_zero(s, x));
    CP_TRY(la_clblast_copy(s, b, r));
    CP_TRY(la_clblast_dot(s, r, r, &rr));
    if (M) {
        CP_TRY(la_precond_apply(M, s, z, r));
        CP_TRY(la_clblast_dot(s, r, z, &rz));
    } else {
        rz = rr;
    }
    CP_TRY(la_clblast_copy(s, z, pv));
    int it = 0, best_it = 0;
    double best = sqrt(fmax(rr, 0));
    while (sqrt(fmax(rr, 0)) > p->target && it < p->max_iter) {
        double pq;
        CP_TRY(A->apply(A->user, q, pv));
        res->applications++;
        CP_TRY(la_clblast_dot(s, pv, q, &pq));
        if (!(pq > 0)) break;
        const double alpha = rz / pq;
        CP_TRY(la_clblast_axpy(s, alpha, pv, x));
        CP_TRY(la_clblast_axpy(s, -alpha, q, r));
        CP_TRY(la_clblast_dot(s, r, r, &rr));
        la_report(p, ++it, sqrt(fmax(rr, 0)));
        if (sqrt(fmax(rr, 0)) <= 0.5 * best) best = sqrt(fmax(rr, 0)), best_it = it;
        if (sqrt(fmax(rr, 0)) <= p->target || it >= p->max_iter || it - best_it >= LA_STALL) break;
        double rz_new = rr;
        if (M) {
            CP_TRY(la_precond_apply(M, s, z, r));
            CP_TRY(la_clblast_dot(s, r, z, &rz_new));
        }
        const double beta = rz_new / rz;
        rz = rz_new;
        CP_TRY(la_clblast_xpay(s, z, beta, pv));
    }
    res->iterations = it;
    return CLPHYS_SUCCESS;
}

clphys_status la_cg(const la_operator *A, const la_precond *M, cl_mem b, cl_mem x, const la_krylov_params *p,
                    la_krylov_result *res)
{
    if (!A || !A->space || !A->apply || !b || !x || !p || !res || (M && (!M->space || !M->apply)))
        return cp_error(A && A->space ? A->space->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "la_cg: NULL argument");
    res->iterations = res->applications = 0;
    return (A->space->p.blas == LA_BLAS_CLBLAST ? cg_clblast : cg_fused)(A, M, b, x, p, res);
}
