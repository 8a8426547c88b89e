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
                                la_krylov_result *res, clphys_status st)
{
    la_space *s = A->space;
    cl_mem *P = s->part, rho = b, r = s->v[LA_R], pv = s->v[LA_P], q = s->v[LA_Q];
    const size_t ng = s->ngroups;
    const int split = A->begin && A->end;
    const cl_mem both[2] = {P[1], P[3]};
    double v[4], sums[3];
    if (!st) st = la_zero(s, x);
    if (la_go(s, st)) st = la_keep(st, adj(A, r, rho)); /* r = A^H rho, rho = b - A x = b */
    if (!st) st = la_copy(s, r, pv);
    if (!st) st = la_fused_norm2_into(s, r, P[1]);
    if (!st) st = la_fused_norm2_into(s, rho, P[3]);
    if (la_reduce(s, &st, 2, both, 2, 0, v)) return st;
    CP_TRY(la_sums_after(s, P[3], 2, v + 2, sums));
    double rnorm = sqrt(fmax(sums[0], 0));
    res->applications++;
    int it = 0, g = 1;
    if (!(rnorm > p->target) || p->max_iter <= 0) return CLPHYS_SUCCESS;
    st = la_reduce_write(s, st, 1, both, 2); /* <r, r>: the first update's and xpay's */
    for (;;) {
        cl_event ev = NULL;
        double qq[2] = {0, 0}, rr[2] = {0, 0};
        if (la_go(s, st)) st = la_keep(st, A->apply(A->user, q, pv));
        if (!st) st = la_fused_norm2_into(s, q, P[0]);
        if (la_reduce(s, &st, 1, &P[0], 2, 1, qq)) break;
        if (!st) st = la_fused_cg_update(s, pv, q, x, rho, P[g], P[0], P[3]);
        /* With a global sum the host has <q, q> already and |rho|^2 comes
         * from the reduction point itself, read behind the next A^H's first
         * stage; without one, by the asynchronous read of P[3]. */
        if (!st) st = s->gsum ? la_reduce_start(s, 1, &P[3], 2, &ev) : la_read_async(s, P[3], 2 * ng + 1, 0, &ev);
        const int more = it + 1 < p->max_iter;
        if (more && split && la_go(s, st)) st = la_keep(st, A->begin(A->user, 1, rho)); /* A^H rho, first stage */
        st = la_keep(st, cp_flush(s->ctx, NULL));
        if (s->gsum) {
            if (la_reduce_end(s, &st, 1, &P[3], 2, 0, &ev, rr)) break; /* |rho|^2 for the host only */
        } else if ((st = la_keep(st, cp_wait(s->ctx, &ev)))) {
            break;
        }
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
        if (la_go(s, st)) st = la_keep(st, split ? A->end(A->user, 1, r, rho) : adj(A, r, rho));
        if (!st) st = la_fused_norm2_into(s, r, P[3 - g]);
        if (la_reduce(s, &st, 1, &P[3 - g], 2, 1, NULL)) break;
        if (!st) st = la_fused_xpay(s, r, pv, P[3 - g], P[g]);
        if (!st) res->applications++;
        g = 3 - g;
        if (!st) st = cp_flush(s->ctx, NULL);
    }
    res->iterations = it;
    return st;
}

/* Three blocking reductions per iteration. */
static clphys_status cgnr_clblast(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p,
                                  la_krylov_result *res, clphys_status st)
{
    la_space *s = A->space;
    cl_mem rho = b, r = s->v[LA_R], pv = s->v[LA_P], q = s->v[LA_Q];
    if (!st) st = la_zero(s, x);
    if (la_go(s, st)) st = la_keep(st, adj(A, r, rho)); /* r = A^H rho, rho = b - A x = b */
    if (!st) st = la_clblast_copy(s, r, pv);
    double gamma, rr;
    CP_TRY(la_clblast_dot(s, st, r, r, &gamma));
    CP_TRY(la_clblast_dot(s, st, rho, rho, &rr));
    double rnorm = sqrt(fmax(rr, 0));
    res->applications++;
    int it = 0;
    while (rnorm > p->target && it < p->max_iter) {
        double qq;
        if (la_go(s, st)) st = la_keep(st, A->apply(A->user, q, pv));
        CP_TRY(la_clblast_dot(s, st, q, q, &qq));
        if (!(qq > 0)) break;
        const double alpha = gamma / qq;
        st = la_clblast_axpy(s, alpha, pv, x);
        if (!st) st = la_clblast_axpy(s, -alpha, q, rho);
        CP_TRY(la_clblast_dot(s, st, rho, rho, &rr));
        rnorm = sqrt(fmax(rr, 0));
        it++;
        la_report(p, it, rnorm);
        res->applications++;
        /* at the cap, as cgnr_fused: no A^H in vain, and a failure of the
         * update below always reaches the next iteration's dot */
        if (rnorm <= p->target || it >= p->max_iter) break;
        if (la_go(s, st)) st = la_keep(st, adj(A, r, rho));
        if (!st) res->applications++;
        double gnew;
        CP_TRY(la_clblast_dot(s, st, r, r, &gnew));
        const double beta = gnew / gamma;
        gamma = gnew;
        st = la_clblast_xpay(s, r, beta, pv);
    }
    res->iterations = it;
    return st;
}

clphys_status la_cgnr(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p, la_krylov_result *res)
{
    return la_krylov(LA_CGNR, A, NULL, b, x, p, res, CLPHYS_SUCCESS);
}

clphys_status la_cgnr_run(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p, la_krylov_result *res,
                          clphys_status st)
{
    return (A->space->p.blas == LA_BLAS_CLBLAST ? cgnr_clblast : cgnr_fused)(A, b, x, p, res, st);
}
