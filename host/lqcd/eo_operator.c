/* eo_operator.c — the even-odd (Schur) operator of a dslash plan as an
 * operator of the linear-algebra layer: M = 1 - kappa^2 H_eo H_oe on even
 * half fields and M^+ = gamma5 M gamma5, with both gamma5 folded into the
 * two hops (dslash_hop_g5in, dslash_hop_g5out), so M^+ costs what M costs.
 * Each is two half-lattice hops; the first writes only the plan's odd
 * temporary, so the solvers may queue it before they wait on a reduction. */
#include "lqcd_internal.h"

/* tmp = H_oe in (adjoint: H_oe gamma5 in) */
static clphys_status eo_begin(void *user, int adjoint, cl_mem in)
{
    clphys_lqcd_dslash_plan *pl = user;
    return adjoint ? lqcd_hop_g5(pl, pl->tmp, in, NULL, 0, 1, 1, NULL) : lqcd_hop(pl, pl->tmp, in, NULL, 0, 1, NULL);
}

/* out = in - kappa^2 H_eo tmp (adjoint: in - kappa^2 gamma5 H_eo tmp) */
static clphys_status eo_end(void *user, int adjoint, cl_mem out, cl_mem in)
{
    clphys_lqcd_dslash_plan *pl = user;
    const double kk = -pl->p.kappa * pl->p.kappa;
    return adjoint ? lqcd_hop_g5(pl, out, pl->tmp, in, kk, 0, 2, NULL) : lqcd_hop(pl, out, pl->tmp, in, kk, 0, NULL);
}

static clphys_status eo_apply(void *user, cl_mem out, cl_mem in)
{
    CP_TRY(eo_begin(user, 0, in));
    return eo_end(user, 0, out, in);
}

static clphys_status eo_apply_adjoint(void *user, cl_mem out, cl_mem in)
{
    CP_TRY(eo_begin(user, 1, in));
    return eo_end(user, 1, out, in);
}

void lqcd_eo_operator(clphys_lqcd_dslash_plan *pl, la_space *s, la_operator *op)
{
    *op = (la_operator){
        .space = s, .user = pl, .apply = eo_apply, .apply_adjoint = eo_apply_adjoint, .begin = eo_begin, .end = eo_end};
}
