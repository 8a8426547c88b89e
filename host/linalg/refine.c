/* refine.c — defect correction (iterative refinement): the true residual in
 * the outer precision, the correction from a Krylov solve in the inner one
 * (linalg.h). */
#include "linalg_internal.h"

#include <math.h>

clphys_status la_refine_solve(const la_refine *rf, la_refine_result *res)
{
    if (!rf || !res || !rf->inner || !rf->inner->space || !rf->outer || !rf->residual || !rf->inner_rhs || !rf->correct)
        return cp_error(rf && rf->outer ? rf->outer->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "la_refine_solve: NULL argument");
    *res = (la_refine_result){0};
    la_space *si = rf->inner->space;
    if (!(rf->tol > 0) || rf->max_iter <= 0)
        return cp_error(si->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "linear algebra: tol must be > 0 and max_iter > 0");
    if ((rf->method == LA_CGNR && !rf->inner->apply_adjoint) || (rf->method == LA_BICGSTAB && !si->p.complex_values) ||
        (rf->precond && rf->method != LA_CG))
        return cp_error(si->ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "linear algebra: the inner operator cannot run this method (CGNR needs the adjoint, "
                        "BiCGStab complex vectors, a preconditioner CG)");
    const int mixed = si->p.precision != rf->outer->p.precision;
    const double inner_tol = rf->inner_tol > 0 ? rf->inner_tol : 1e-5;
    double bn2 = 0, rel = 0, last = INFINITY;
    CP_TRY(rf->residual(rf->problem, 1, CLPHYS_SUCCESS, &bn2));
    const double bnorm = sqrt(bn2);
    /* Over processes a failure of a step that ends without a reduction
     * point (the inner right-hand side, the correction) is this process's
     * alone: it goes on into the next step, which takes it to its first
     * reduction point (linalg_internal.h); the residual and the solve end
     * with one, so their failures are every process's. */
    clphys_status st = CLPHYS_SUCCESS;
    for (int first = 1;; first = 0) {
        double r2 = bn2;
        if (!first) {
            if ((st = rf->residual(rf->problem, 0, st, &r2))) break;
            res->residuals++;
        }
        rel = bnorm > 0 ? sqrt(r2) / bnorm : 0;
        if (rf->progress) rf->progress(rf->user, res->iterations, rel, 1);
        if (rel <= rf->tol || !isfinite(rel) || res->iterations >= rf->max_iter) break;
        /* a correction that did not halve the true residual: the outer
         * precision's floor (rounding of x and of A x) is reached */
        if (rel > 0.5 * last) break;
        last = rel;
        /* |b - A x| = |r' - A' e| when the problem maps e back exactly */
        double rn2 = 0, target = 0.5 * rf->tol * bnorm;
        cl_mem bi = si->v[LA_B], xi = si->v[LA_X];
        if ((st = rf->inner_rhs(rf->problem, bi, mixed, &rn2)) && !si->gsum) break;
        if (mixed) target = fmax(target, inner_tol * sqrt(fmax(rn2, 0)));
        const la_krylov_params kp = {.target = target,
                                     .max_iter = rf->max_iter - res->iterations,
                                     .scale = bnorm > 0 ? bnorm : 1,
                                     .iter_offset = res->iterations,
                                     .progress = rf->progress,
                                     .user = rf->user};
        la_krylov_result kr = {0};
        st = la_krylov(rf->method, rf->inner, rf->precond, bi, xi, &kp, &kr, st);
        res->iterations += kr.iterations;
        res->applications += kr.applications;
        if (st || kr.iterations == 0) break; /* no progress: report the residual */
        if ((st = rf->correct(rf->problem, xi)) && !rf->outer->gsum) break;
        if (!st) res->restarts++;
    }
    res->rel_residual = rel;
    return st;
}

/* ---- one operator in two precisions ---------------------------------------- */
typedef struct {
    const la_operator *A; /* outer */
    la_space *hi, *lo;
    cl_mem b, x, r; /* r: the residual of the last call (b at first) */
} plain_problem;

static clphys_status plain_residual(void *u, int first, clphys_status st, double *r2)
{
    plain_problem *pp = u;
    la_space *hi = pp->hi;
    if (first) {
        pp->r = pp->b;
        if (!st) st = la_zero(hi, pp->x);
        if (!st) st = la_norm2_start(hi, pp->b, 0);
        return la_norms_finish(hi, st, 1, &pp->b, r2);
    }
    pp->r = hi->v[LA_R];
    if (la_go(hi, st)) st = la_keep(st, pp->A->apply(pp->A->user, hi->v[LA_T], pp->x));
    if (!st) st = la_sub_start(hi, pp->r, pp->b, hi->v[LA_T], 0);
    return la_norms_finish(hi, st, 1, &pp->r, r2);
}

static clphys_status plain_rhs(void *u, cl_mem b_inner, int want_norm, double *norm2)
{
    plain_problem *pp = u;
    if (want_norm) return la_convert_norm(pp->lo, b_inner, pp->hi, pp->r, norm2);
    return la_convert(pp->lo, b_inner, pp->hi, pp->r);
}

static clphys_status plain_correct(void *u, cl_mem e)
{
    plain_problem *pp = u;
    return la_convert_add(pp->hi, pp->x, pp->hi == pp->lo ? e : pp->hi->v[LA_P], pp->lo, e);
}

clphys_status la_solve_refined_monitored(const la_operator *A_outer, const la_operator *A_inner, const la_precond *M,
                                         la_method method, cl_mem b, cl_mem x, double tol, int max_iter,
                                         double inner_tol,
                                         void (*progress)(void *user, int iter, double rel_residual, int is_true),
                                         void *user, la_refine_result *res)
{
    if (!A_outer || !A_outer->space || !A_inner || !A_inner->space || !b || !x)
        return cp_error(A_outer && A_outer->space ? A_outer->space->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "la_solve_refined: NULL argument");
    plain_problem pp = {A_outer, A_outer->space, A_inner->space, b, x, b};
    const la_refine rf = {.method = method,
                          .inner = A_inner,
                          .precond = M,
                          .outer = A_outer->space,
                          .tol = tol,
                          .max_iter = max_iter,
                          .inner_tol = inner_tol,
                          .progress = progress,
                          .user = user,
                          .problem = &pp,
                          .residual = plain_residual,
                          .inner_rhs = plain_rhs,
                          .correct = plain_correct};
    return la_refine_solve(&rf, res);
}

clphys_status la_solve_refined(const la_operator *A_outer, const la_operator *A_inner, const la_precond *M,
                               la_method method, cl_mem b, cl_mem x, double tol, int max_iter, double inner_tol,
                               la_refine_result *res)
{
    return la_solve_refined_monitored(A_outer, A_inner, M, method, b, x, tol, max_iter, inner_tol, NULL, NULL, res);
}
