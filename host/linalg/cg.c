/* cg.c — conjugate gradients, plain or preconditioned (linalg.h), with the
 * scalars on the device (fused kernels) or on the host (clBLAST). */
#include "linalg_internal.h"

#include <math.h>

void la_report(const la_krylov_params *p, int it, double rnorm)
{
    if (p->progress) p->progress(p->user, p->iter_offset + it, rnorm / (p->scale > 0 ? p->scale : 1), 0);
}

clphys_status la_precond_apply(const la_precond *M, la_space *s, cl_mem z, cl_mem r, clphys_status st)
{
    la_space *m = M->space;
    if (!st) st = la_injected(s, LA_FAIL_PRECOND);
    if (m == s) return la_go(s, st) ? la_keep(st, M->apply(M->user, z, r)) : st;
    cl_mem mb = m->v[LA_B], mx = m->v[LA_X];
    if (!st) st = la_convert(m, mb, s, r);
    if (la_go(s, st)) st = la_keep(st, M->apply(M->user, mx, mb));
    return st ? st : la_convert(s, z, m, mx);
}

/* Partial-sum buffers: P[0] <p, q>; P[1], P[2] <r, z> of this and the last
 * iteration (alternating, g); P[3] |r|^2 when z != r (with M; without, |r|^2
 * is <r, z> and goes straight to P[3 - g]).  |r|^2 and <p, q> come back by
 * an asynchronous read, which the host waits for at the end of the update;
 * with a global sum they are the reduction points' values instead (no read
 * that could fail on one process alone). */
static clphys_status cg_fused(const la_operator *A, const la_precond *M, cl_mem b, cl_mem x, const la_krylov_params *p,
                              la_krylov_result *res, clphys_status st)
{
    la_space *s = A->space;
    cl_mem *P = s->part, r = s->v[LA_R], pv = s->v[LA_P], q = s->v[LA_Q], z = M ? s->v[LA_S] : r;
    const size_t ng = s->ngroups;
    /* the first point: |r|^2 (and <r, z> with M) */
    const cl_mem first[2] = {M ? P[3] : P[1], P[1]};
    const int nfirst = M ? 2 : 1;
    double v[4], sums[3];
    if (!st) st = la_zero(s, x);
    if (!st) st = la_copy(s, b, r);
    if (M) st = la_precond_apply(M, s, z, r, st);
    /* p = z before the point, which a failure of the copy then reaches */
    if (!st) st = la_copy(s, z, pv);
    if (!st) st = la_fused_norm2_into(s, r, first[0]);
    if (M && !st) st = la_fused_dot_into(s, r, z, P[1]);
    if (la_reduce(s, &st, nfirst, first, 2, 0, v)) return st;
    CP_TRY(la_sums_after(s, first[0], 2, v, sums));
    double rnorm = sqrt(fmax(sums[0], 0)), best = rnorm;
    int it = 0, g = 1, best_it = 0;
    if (!(rnorm > p->target) || p->max_iter <= 0) return CLPHYS_SUCCESS;
    st = la_reduce_write(s, st, nfirst, first, 2);
    for (;;) {
        cl_mem prr = M ? P[3] : P[3 - g];
        double pq[2], rr[2], pqv;
        if (la_go(s, st)) st = la_keep(st, A->apply(A->user, q, pv));
        if (!st) st = la_fused_dot_into(s, pv, q, P[0]);
        if (la_reduce(s, &st, 1, &P[0], 2, 1, pq)) break;
        if (!st) st = la_fused_cg_update(s, pv, q, x, r, P[g], P[0], prr);
        if (la_reduce(s, &st, 1, &prr, 2, 0, rr)) break;
        if (s->gsum) {
            pqv = la_real(s, pq[0]), sums[0] = la_real(s, rr[0]);
        } else {
            cl_event ev = NULL;
            if ((st = la_read_async(s, prr, 2 * ng + 1, 0, &ev)) || (st = cp_wait(s->ctx, &ev))) break;
            pqv = la_host_real(s, 2 * ng);
            la_sum_host(s, 2, sums);
        }
        res->applications++;
        if (!(pqv > 0)) break; /* <p, A p> = 0: alpha was 0, nothing moved */
        rnorm = sqrt(fmax(sums[0], 0));
        la_report(p, ++it, rnorm);
        if (rnorm <= 0.5 * best) best = rnorm, best_it = it;
        if (rnorm <= p->target || it >= p->max_iter || it - best_it >= LA_STALL) break;
        if (M) {
            st = la_precond_apply(M, s, z, r, st);
            if (!st) st = la_fused_dot_into(s, r, z, P[3 - g]);
            if (la_reduce(s, &st, 1, &P[3 - g], 2, 1, NULL)) break;
        } else {
            st = la_reduce_write(s, st, 1, &prr, 2); /* xpay's <r, z> and the next update's */
        }
        if (!st) st = la_fused_xpay(s, z, pv, P[3 - g], P[g]);
        if (!st) st = cp_flush(s->ctx, NULL);
        g = 3 - g;
    }
    res->iterations = it;
    return st;
}

/* Every reduction a blocking clBLAST dot, whose value decides. */
static clphys_status cg_clblast(const la_operator *A, const la_precond *M, cl_mem b, cl_mem x,
                                const la_krylov_params *p, la_krylov_result *res, clphys_status st)
{
    la_space *s = A->space;
    cl_mem r = s->v[LA_R], pv = s->v[LA_P], q = s->v[LA_Q], z = M ? s->v[LA_S] : r;
    double rr, rz;
    if (!st) st = la_zero(s, x);
    if (!st) st = la_clblast_copy(s, b, r);
    if (M) st = la_precond_apply(M, s, z, r, st);
    /* p = z before the dots, which a failure of the copy then reaches */
    if (!st) st = la_clblast_copy(s, z, pv);
    CP_TRY(la_clblast_dot(s, st, r, r, &rr));
    if (M)
        CP_TRY(la_clblast_dot(s, st, r, z, &rz));
    else
        rz = rr;
    int it = 0, best_it = 0;
    double best = sqrt(fmax(rr, 0));
    while (sqrt(fmax(rr, 0)) > p->target && it < p->max_iter) {
        double pq;
        if (la_go(s, st)) st = la_keep(st, A->apply(A->user, q, pv));
        if (!st) res->applications++;
        CP_TRY(la_clblast_dot(s, st, pv, q, &pq));
        if (!(pq > 0)) break;
        const double alpha = rz / pq;
        if (!st) st = la_clblast_axpy(s, alpha, pv, x);
        if (!st) st = la_clblast_axpy(s, -alpha, q, r);
        CP_TRY(la_clblast_dot(s, st, r, r, &rr));
        la_report(p, ++it, sqrt(fmax(rr, 0)));
        if (sqrt(fmax(rr, 0)) <= 0.5 * best) best = sqrt(fmax(rr, 0)), best_it = it;
        if (sqrt(fmax(rr, 0)) <= p->target || it >= p->max_iter || it - best_it >= LA_STALL) break;
        double rz_new = rr;
        if (M) {
            st = la_precond_apply(M, s, z, r, st);
            CP_TRY(la_clblast_dot(s, st, r, z, &rz_new));
        }
        const double beta = rz_new / rz;
        rz = rz_new;
        st = la_clblast_xpay(s, z, beta, pv); /* a failure reaches the next dot */
    }
    res->iterations = it;
    return st;
}

clphys_status la_cg(const la_operator *A, const la_precond *M, cl_mem b, cl_mem x, const la_krylov_params *p,
                    la_krylov_result *res)
{
    return la_krylov(LA_CG, A, M, b, x, p, res, CLPHYS_SUCCESS);
}

clphys_status la_krylov(la_method method, const la_operator *A, const la_precond *M, cl_mem b, cl_mem x,
                        const la_krylov_params *p, la_krylov_result *res, clphys_status st)
{
    clphys_context *ctx = A && A->space ? A->space->ctx : NULL;
    if (!A || !A->space || !A->apply || !b || !x || !p || !res)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "linear algebra: a solver's NULL argument");
    if (method == LA_CG && M && (!M->space || !M->apply))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "la_cg: a preconditioner without its space or apply");
    if (method == LA_CGNR && !A->apply_adjoint)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "la_cgnr: an operator without its adjoint");
    if (method == LA_BICGSTAB && !A->space->p.complex_values)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "la_bicgstab: the vectors must be complex");
    res->iterations = res->applications = 0;
    if (method == LA_CGNR) return la_cgnr_run(A, b, x, p, res, st);
    if (method == LA_BICGSTAB) return la_bicgstab_run(A, b, x, p, res, st);
    return (A->space->p.blas == LA_BLAS_CLBLAST ? cg_clblast : cg_fused)(A, M, b, x, p, res, st);
}
