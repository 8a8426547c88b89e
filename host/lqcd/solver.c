/* solver.c — the lattice solver plan: D x = b for the Wilson-Dirac operator
 * by defect correction (host/linalg/refine.c) on the even-odd system
 * M x_e = b_e + kappa H_eo b_o, M = 1 - kappa^2 H_eo H_oe, x_o = b_o + kappa
 * H_oe x_e (include/clphys_lqcd.h).  This file supplies the outer steps on
 * both parities in fp64; the Krylov solves of M run in the linear-algebra
 * layer, b and x move through transfer.c. */
#include "lqcd_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct clphys_lqcd_solver_plan {
    clphys_lqcd_dslash_plan *p64, *p32;
    clphys_lqcd_solver_params prm;
    la_space *s64, *s32;    /* half fields; s32 only when mixed             */
    cl_command_queue reads; /* the spaces' read queue (one solve at a time) */
    la_operator m64, m32;   /* M on each                                    */
    cl_mem be, bo, xe, xo, re, ro, tmp;
    cl_mem rE, rO; /* the current residual: b on the first cycle   */
    lqcd_transfer *xfer;
};

void clphys_lqcd_solver_plan_destroy(clphys_lqcd_solver_plan *sp)
{
    if (!sp) return;
    lqcd_transfer_destroy(sp->xfer);
    cl_mem *f[] = {&sp->be, &sp->bo, &sp->xe, &sp->xo, &sp->re, &sp->ro, &sp->tmp};
    for (int i = 0; i < 7; i++) cp_release_mem(f[i]);
    la_space_destroy(sp->s64);
    la_space_destroy(sp->s32);
    cp_queue_release(&sp->reads);
    free(sp);
}

static clphys_status check_params(clphys_context *ctx, clphys_lqcd_dslash_plan *p64, clphys_lqcd_dslash_plan *p32,
                                  const clphys_lqcd_solver_params *prm)
{
    if (p64->p.precision != CLPHYS_FP64 || !p64->imp)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "lqcd solver: plan64 must be fp64");
    if (prm->mixed && (!p32 || p32->p.precision != CLPHYS_FP32 || memcmp(p32->dims, p64->dims, sizeof p64->dims) ||
                       p32->p.layout != p64->p.layout || p32->p.kappa != p64->p.kappa ||
                       memcmp(p32->phf, p64->phf, sizeof p64->phf) || memcmp(p32->phb, p64->phb, sizeof p64->phb) ||
                       memcmp(p32->grid, p64->grid, sizeof p64->grid) ||
                       memcmp(p32->coord, p64->coord, sizeof p64->coord) || !p32->halo != !p64->halo ||
                       lqcd_multi_member(p32) != lqcd_multi_member(p64) || (p64->multi && p32->ctx != p64->ctx)))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "lqcd solver: mixed needs an fp32 plan32 with the lattice, layout, kappa, boundary and "
                        "process grid of plan64");
    if (prm->tol < 0 || prm->max_iter < 0 || prm->inner_tol < 0 || !isfinite(prm->tol))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "lqcd solver: tol, max_iter and inner_tol must not be negative");
    if ((unsigned)prm->kind > CLPHYS_LQCD_SOLVER_BICGSTAB || (unsigned)prm->blas > CLPHYS_LQCD_SOLVER_BLAS_CLBLAST)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "lqcd solver: unknown kind %d or blas %d", (int)prm->kind,
                        (int)prm->blas);
    return CLPHYS_SUCCESS;
}

clphys_status clphys_lqcd_solver_plan_create(clphys_lqcd_dslash_plan *p64, clphys_lqcd_dslash_plan *p32,
                                             const clphys_lqcd_solver_params *prm, clphys_lqcd_solver_plan **out)
{
    if (!p64 || !prm || !out)
        return cp_error(p64 ? p64->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_lqcd_solver_plan_create: NULL argument");
    *out = NULL;
    clphys_context *ctx = p64->ctx;
    clphys_lqcd_solver_params pin;
    CP_TRY(CP_PARAMS_IN(ctx, clphys_lqcd_solver_params, prm, user, &pin));
    prm = &pin;
    CP_TRY(check_params(ctx, p64, p32, prm));
    clphys_lqcd_solver_plan *sp = calloc(1, sizeof *sp);
    if (!sp) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "lqcd solver plan");
    sp->p64 = p64;
    sp->p32 = prm->mixed ? p32 : NULL;
    sp->prm = *prm;
    if (!sp->prm.kind) sp->prm.kind = CLPHYS_LQCD_SOLVER_CGNR;
    if (!sp->prm.blas) sp->prm.blas = CLPHYS_LQCD_SOLVER_BLAS_FUSED;
    if (!(sp->prm.tol > 0)) sp->prm.tol = 1e-10;
    if (!sp->prm.max_iter) sp->prm.max_iter = 10000;
    la_space_params sq = {.precision = CLPHYS_FP64,
                          .n = p64->vh * 24,
                          .complex_values = 1,
                          .blas = sp->prm.blas == CLPHYS_LQCD_SOLVER_BLAS_CLBLAST ? LA_BLAS_CLBLAST : LA_BLAS_FUSED};
    clphys_status st = cp_queue_create(ctx, 0, &sp->reads);
    sq.reads = sp->reads;
    if (!st) st = la_space_create(ctx, &sq, &sp->s64);
    if (!st && sp->p32) {
        sq.precision = CLPHYS_FP32;
        st = la_space_create(ctx, &sq, &sp->s32);
    }
    /* over ranks: every reduction point sums over them (one MPI_Allreduce) */
    if (!st && p64->gsum) la_space_set_global_sum(sp->s64, p64->gsum, p64->gsum_user);
    if (!st && sp->s32) la_space_set_global_sum(sp->s32, p64->gsum, p64->gsum_user);
    cl_mem *f[] = {&sp->be, &sp->bo, &sp->xe, &sp->xo, &sp->re, &sp->ro, &sp->tmp};
    for (int i = 0; i < 7 && !st; i++) st = clphys_lqcd_dslash_field_create(p64, 1, f[i]);
    if (!st) st = lqcd_transfer_create(p64, &sp->xfer);
    if (st) {
        clphys_lqcd_solver_plan_destroy(sp);
        return st;
    }
    lqcd_eo_operator(p64, sp->s64, &sp->m64);
    if (sp->p32) lqcd_eo_operator(p32, sp->s32, &sp->m32);
    *out = sp;
    return CLPHYS_SUCCESS;
}

/* ---- the outer steps (la_refine's problem) ------------------------------- */

/* out = x + a H in of a parity, where st is success or, over ranks, also
 * after a failure (st, kept): the hop is a collective, which agrees its own
 * failures, and a reduction point after it gives st to every rank
 * (host/linalg/linalg.h). */
static clphys_status hop_after(clphys_lqcd_dslash_plan *p, clphys_status st, cl_mem out, cl_mem in, cl_mem x, double a,
                               int parity)
{
    if (st && !p->gsum) return st;
    const clphys_status h = lqcd_hop(p, out, in, x, a, parity, NULL);
    return st ? st : h;
}

/* r = b - D x on both parities with |r|^2 (one reduction point); on the
 * first call x = 0 and r is b.  st: a failure of the correction before. */
static clphys_status outer_residual(void *u, int first, clphys_status st, double *r2)
{
    clphys_lqcd_solver_plan *sp = u;
    clphys_lqcd_dslash_plan *p64 = sp->p64;
    la_space *s = sp->s64;
    const double kappa = p64->p.kappa;
    double n2[2];
    if (first) {
        sp->rE = sp->be, sp->rO = sp->bo;
        /* x = 0 before the point, which a failure of it then reaches */
        if (!st) st = la_zero(s, sp->xe);
        if (!st) st = la_zero(s, sp->xo);
        if (!st) st = la_norm2_start(s, sp->be, 0);
        if (!st) st = la_norm2_start(s, sp->bo, 1);
        const cl_mem v[2] = {sp->be, sp->bo};
        CP_TRY(la_norms_finish(s, st, 2, v, n2));
    } else {
        sp->rE = sp->re, sp->rO = sp->ro;
        /* (D x)_e = x_e - kappa H_eo x_o, (D x)_o likewise */
        st = hop_after(p64, st, sp->tmp, sp->xo, sp->xe, -kappa, 0);
        if (!st) st = la_sub_start(s, sp->re, sp->be, sp->tmp, 0);
        st = hop_after(p64, st, sp->tmp, sp->xe, sp->xo, -kappa, 1);
        if (!st) st = la_sub_start(s, sp->ro, sp->bo, sp->tmp, 1);
        const cl_mem v[2] = {sp->re, sp->ro};
        CP_TRY(la_norms_finish(s, st, 2, v, n2));
    }
    *r2 = n2[0] + n2[1];
    return CLPHYS_SUCCESS;
}

/* r' = r_e + kappa H_eo r_o, straight into the inner rhs (fp64) or through
 * the fp64 space's LA_B and converted (mixed). */
static clphys_status outer_rhs(void *u, cl_mem b_inner, int want_norm, double *norm2)
{
    clphys_lqcd_solver_plan *sp = u;
    const double kappa = sp->p64->p.kappa;
    if (!sp->s32) return lqcd_hop(sp->p64, b_inner, sp->rO, sp->rE, kappa, 0, NULL);
    cl_mem rp = la_space_vec(sp->s64, LA_B);
    CP_TRY(lqcd_hop(sp->p64, rp, sp->rO, sp->rE, kappa, 0, NULL));
    if (want_norm) return la_convert_norm(sp->s32, b_inner, sp->s64, rp, norm2);
    return la_convert(sp->s32, b_inner, sp->s64, rp);
}

/* e_o = r_o + kappa H_oe e_e; x += e */
static clphys_status outer_correct(void *u, cl_mem e)
{
    clphys_lqcd_solver_plan *sp = u;
    clphys_lqcd_dslash_plan *p64 = sp->p64;
    la_space *s = sp->s64;
    const double kappa = p64->p.kappa;
    if (sp->s32) {
        cl_mem e64 = la_space_vec(s, LA_X);
        clphys_status st = la_convert_add(s, sp->xe, e64, sp->s32, e);
        st = hop_after(p64, st, sp->tmp, e64, sp->rO, kappa, 1);
        return st ? st : la_axpy(s, 1.0, sp->tmp, sp->xo);
    }
    CP_TRY(lqcd_hop(p64, sp->tmp, e, sp->rO, kappa, 1, NULL));
    CP_TRY(la_axpy(s, 1.0, e, sp->xe));
    return la_axpy(s, 1.0, sp->tmp, sp->xo);
}

clphys_status clphys_lqcd_solver_solve(clphys_lqcd_solver_plan *sp, const double *b, double *x,
                                       clphys_lqcd_solver_result *res)
{
    if (!sp || !b || !x || !res)
        return cp_error(sp ? sp->p64->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_lqcd_solver_solve: NULL argument");
    const clphys_lqcd_solver_params *prm = &sp->prm;
    clphys_context *ctx = sp->p64->ctx;
    memset(res, 0, sizeof *res);
    double t0 = cp_now();
    clphys_status st = lqcd_transfer_upload(sp->xfer, b, sp->be, sp->bo);
    if (!st) st = cp_finish(ctx);
    double t1 = cp_now();
    res->upload_s = t1 - t0;
    const la_refine rf = {.method = prm->kind == CLPHYS_LQCD_SOLVER_BICGSTAB ? LA_BICGSTAB : LA_CGNR,
                          .inner = sp->s32 ? &sp->m32 : &sp->m64,
                          .outer = sp->s64,
                          .tol = prm->tol,
                          .max_iter = prm->max_iter,
                          .inner_tol = prm->inner_tol,
                          .progress = prm->progress,
                          .user = prm->user,
                          .problem = sp,
                          .residual = outer_residual,
                          .inner_rhs = outer_rhs,
                          .correct = outer_correct};
    la_refine_result rr = {0};
    if (!st) st = la_refine_solve(&rf, &rr);
    double t2 = cp_now();
    res->iterate_s = t2 - t1;
    if (!st) st = lqcd_transfer_download(sp->xfer, sp->xe, sp->xo, x);
    res->download_s = cp_now() - t2;
    res->iterations = rr.iterations;
    res->restarts = rr.restarts;
    res->rel_residual = rr.rel_residual;
    res->seconds = cp_now() - t0;
    /* one application of M or M^+ and one true residual each cost two half hops, one D */
    const int napply = rr.applications + rr.residuals;
    res->gflops = res->seconds > 0 ? 1368.0 * (double)sp->p64->gvol * napply / res->seconds * 1e-9 : 0;
    if (st) return st;
    if (!(rr.rel_residual <= prm->tol))
        return cp_error(ctx, CLPHYS_ERR_NOT_CONVERGED,
                        "lqcd solve: true residual |b - D x|/|b| = %.3e above tol %.3e after %d iterations "
                        "(%d restarts)",
                        rr.rel_residual, prm->tol, rr.iterations, rr.restarts);
    return CLPHYS_SUCCESS;
}

clphys_status clphys_lqcd_solve(clphys_lqcd_dslash_plan *p64, clphys_lqcd_dslash_plan *p32,
                                const clphys_lqcd_solver_params *prm, const double *b, double *x,
                                clphys_lqcd_solver_result *res)
{
    if (!p64 || !prm || !b || !x || !res)
        return cp_error(p64 ? p64->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_lqcd_solve: NULL argument");
    double t0 = cp_now();
    clphys_lqcd_solver_plan *sp;
    CP_TRY(clphys_lqcd_solver_plan_create(p64, p32, prm, &sp));
    clphys_status st = clphys_lqcd_solver_solve(sp, b, x, res);
    clphys_lqcd_solver_plan_destroy(sp);
    res->seconds = cp_now() - t0;
    return st;
}
