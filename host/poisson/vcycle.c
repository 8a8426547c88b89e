/* vcycle.c — one symmetric V-cycle z = B r (include/clphys_poisson.h) with
 * the kernels of cl/line_relax.cl, and the V-cycle as the CG's
 * preconditioner.  Each level: `smooth` Jacobi line-relaxation steps from
 * x = 0, the residual restricted to the next level, the V-cycle there, the
 * correction prolongated inside the first of `smooth` further steps; the
 * coarsest level (a single column) is solved exactly.  With the same number
 * of steps before and after, a symmetric smoother and R = P^T, B is
 * symmetric, and positive definite for any SPD coarse operators (the
 * damped Jacobi steps converge in the energy norm), so CG stays valid
 * without the coarse operators being Galerkin products.  The finest level
 * reads r and writes z in the CG's precision (fp64 when mixed): no
 * conversion passes. */
#include "poisson_internal.h"

#include <stdio.h>
#include <string.h>

static const char *const line_names[PN_NLINE] = {"line_jacobi_zero", "line_jacobi", "line_jacobi_prolong",
                                                  "residual_restrict"};
static const char *const vec_names[PN_NLINE] = {"line_jacobi_zero_vec", "line_jacobi_vec", "prolong_add",
                                                 "residual_restrict_vec"};

/* precision of the vectors the V-cycle reads and writes at the finest level */
static clphys_precision io_precision(const clphys_poisson_plan *pl)
{
    return pl->prm.precision == CLPHYS_POISSON_FP32 ? CLPHYS_FP32 : CLPHYS_FP64;
}

static const char *ctype(clphys_precision p) { return p == CLPHYS_FP64 ? "double" : "float"; }

/* the kernels of line_relax.cl (vec 0) or line_relax_vec.cl (vec 1) for
 * b and x_new of the given precisions */
static clphys_status build_set(clphys_poisson_plan *pl, int vec, clphys_precision b, clphys_precision xo, cl_kernel *k)
{
    char prec[128], opts[384];
    CP_TRY(cp_precision_options(pl->ctx, pl->lev_prec, prec, sizeof prec));
    const int need64 = (b == CLPHYS_FP64 || xo == CLPHYS_FP64) && pl->lev_prec == CLPHYS_FP32;
    snprintf(opts, sizeof opts, "%s%s -DB_T=%s -DXO_T=%s -DNZ=%d%s%s", prec, need64 ? " -DNEED_FP64" : "", ctype(b),
             ctype(xo), pl->nz, b == CLPHYS_FP64 ? " -DB_IS_DOUBLE" : "", xo == CLPHYS_FP64 ? " -DXO_IS_DOUBLE" : "");
    if (vec) snprintf(opts + strlen(opts), sizeof opts - strlen(opts), " -DVW=%d", pl->vw);
    cl_program prog;
    CP_TRY(cp_program(pl->ctx, vec ? "line_relax_vec.cl" : "line_relax.cl", opts, &prog));
    for (int i = 0; i < PN_NLINE; i++) CP_TRY(cp_kernel(pl->ctx, prog, (vec ? vec_names : line_names)[i], &k[i]));
    return CLPHYS_SUCCESS;
}

clphys_status pn_vcycle_build(clphys_poisson_plan *pl)
{
    const clphys_precision io = io_precision(pl), lev = pl->lev_prec;
    CP_TRY(build_set(pl, 0, io, lev, pl->k_fine));
    CP_TRY(build_set(pl, 0, io, io, pl->k_last));
    CP_TRY(build_set(pl, 0, lev, lev, pl->k_coarse));
    if (pl->line == CLPHYS_POISSON_LINE_COLUMN_VEC) {
        CP_TRY(build_set(pl, 1, io, lev, pl->v_fine));
        CP_TRY(build_set(pl, 1, io, io, pl->v_last));
        CP_TRY(build_set(pl, 1, lev, lev, pl->v_coarse));
    }
    /* the line solve keeps 2 nz reals per work-item: on GPUs registers may
     * allow fewer work-items per group than the device's maximum */
    pl->vkmax = clphys_context_device(pl->ctx)->max_work_group_size;
    const cl_kernel *sets[6] = {pl->k_fine, pl->k_last, pl->k_coarse, pl->v_fine, pl->v_last, pl->v_coarse};
    for (int s = 0; s < 6; s++)
        for (int i = 0; i < PN_NLINE; i++) {
            size_t m = 0;
            if (sets[s][i] && !cp_kernel_limits(pl->ctx, sets[s][i], &m, NULL) && m && m < pl->vkmax) pl->vkmax = m;
        }
    return CLPHYS_SUCCESS;
}

static clphys_status set_real(clphys_poisson_plan *pl, cl_kernel k, cl_uint i, double v)
{
    if (pl->lev_prec == CLPHYS_FP64) return CP_ARG(pl->ctx, k, i, v);
    const float f = (float)v;
    return CP_ARG(pl->ctx, k, i, f);
}

/* the coarse level below l (its size and how it was coarsened), or l itself
 * at the coarsest level (then unused by the kernels) */
static const pn_level *below(const clphys_poisson_plan *pl, int l) { return &pl->lev[l + 1 < pl->nlev ? l + 1 : l]; }

static clphys_status launch_cols(clphys_poisson_plan *pl, cl_kernel k, int nx, int ny, cl_event *ev)
{
    const int given = pl->vlocal[0] > 0;
    const size_t global[2] = {cp_round_up((size_t)nx, pl->vlocal[0]), cp_round_up((size_t)ny, pl->vlocal[1])};
    if (ev) return cp_launch_ev(pl->ctx, k, 2, global, given ? pl->vlocal : NULL, ev);
    return cp_launch(pl->ctx, k, 2, global, given ? pl->vlocal : NULL, NULL);
}

/* one Jacobi line-relaxation step on level l: xn from xo (+ P e), b */
static clphys_status line(clphys_poisson_plan *pl, cl_kernel k, int l, cl_mem xn, cl_mem xo, cl_mem e, cl_mem b,
                          double omega, cl_event *ev)
{
    const pn_level *L = &pl->lev[l], *C = below(pl, l);
    const cl_mem args[9] = {xn, xo, e, L->mask, b, L->a[PN_E], L->a[PN_AX], L->a[PN_AY], L->a[PN_AZ]};
    for (cl_uint i = 0; i < 9; i++) CP_TRY(CP_ARG(pl->ctx, k, i, args[i]));
    CP_TRY(set_real(pl, k, 9, omega));
    const int dims[6] = {L->nx, L->ny, C->nx, C->ny, C == L ? 0 : C->sx, C == L ? 0 : C->sy};
    for (cl_uint i = 0; i < 6; i++) CP_TRY(CP_ARG(pl->ctx, k, 10 + i, dims[i]));
    return launch_cols(pl, k, L->nx, L->ny, ev);
}

/* one column-vec step on level l: xn from xo (mode 1) or 0 (mode 0), b */
static clphys_status line_vec(clphys_poisson_plan *pl, cl_kernel k, int l, cl_mem xn, cl_mem xo, cl_mem b,
                              double omega, cl_event *ev)
{
    const pn_level *L = &pl->lev[l];
    const cl_mem args[7] = {xn, xo, b, L->a[PN_E], L->a[PN_AX], L->a[PN_AY], L->a[PN_AZ]};
    for (cl_uint i = 0; i < 7; i++) CP_TRY(CP_ARG(pl->ctx, k, i, args[i]));
    CP_TRY(set_real(pl, k, 7, omega));
    CP_TRY(CP_ARG(pl->ctx, k, 8, L->nx));
    CP_TRY(CP_ARG(pl->ctx, k, 9, L->ny));
    return launch_cols(pl, k, L->nx / pl->vw, L->ny, ev);
}

/* x += P e on level l (column-vec levels: the prolongation as a pass of its own) */
static clphys_status prolong_add(clphys_poisson_plan *pl, int l, cl_mem x, cl_mem e)
{
    const pn_level *L = &pl->lev[l], *C = &pl->lev[l + 1];
    cl_kernel k = pl->v_coarse[PN_LJ_PROLONG];
    const cl_mem args[3] = {x, e, L->mask};
    for (cl_uint i = 0; i < 3; i++) CP_TRY(CP_ARG(pl->ctx, k, i, args[i]));
    const int dims[6] = {L->nx, L->ny, pl->nz, C->nx, C->ny, C->sy};
    for (cl_uint i = 0; i < 6; i++) CP_TRY(CP_ARG(pl->ctx, k, 3 + i, dims[i]));
    return launch_cols(pl, k, L->nx / pl->vw, L->ny, NULL);
}

/* bc (level l + 1) = R (b - A x) on level l */
static clphys_status restrict_residual(clphys_poisson_plan *pl, int l, cl_mem x, cl_mem b)
{
    const pn_level *L = &pl->lev[l], *C = &pl->lev[l + 1];
    if (L->vec) {
        cl_kernel k = (l == 0 ? pl->v_fine : pl->v_coarse)[PN_RESTRICT];
        const cl_mem args[8] = {C->b, x, L->mask, b, L->a[PN_E], L->a[PN_AX], L->a[PN_AY], L->a[PN_AZ]};
        for (cl_uint i = 0; i < 8; i++) CP_TRY(CP_ARG(pl->ctx, k, i, args[i]));
        const int dims[5] = {L->nx, L->ny, C->nx, C->ny, C->sy};
        for (cl_uint i = 0; i < 5; i++) CP_TRY(CP_ARG(pl->ctx, k, 8 + i, dims[i]));
        return launch_cols(pl, k, L->nx / pl->vw, C->ny, NULL);
    }
    cl_kernel k = (l == 0 ? pl->k_fine : pl->k_coarse)[PN_RESTRICT];
    const cl_mem args[8] = {C->b, x, L->mask, b, L->a[PN_E], L->a[PN_AX], L->a[PN_AY], L->a[PN_AZ]};
    for (cl_uint i = 0; i < 8; i++) CP_TRY(CP_ARG(pl->ctx, k, i, args[i]));
    const int dims[6] = {L->nx, L->ny, C->nx, C->ny, C->sx, C->sy};
    for (cl_uint i = 0; i < 6; i++) CP_TRY(CP_ARG(pl->ctx, k, 8 + i, dims[i]));
    return launch_cols(pl, k, C->nx, C->ny, NULL);
}

/* The V-cycle from level l with right-hand side b; the result is *out (on
 * level 0: z).  first/last receive the events of the finest level's first
 * and last launch (NULL: none kept). */
static clphys_status cycle(clphys_poisson_plan *pl, int l, cl_mem b, cl_mem z, cl_mem *out, cl_event *first,
                           cl_event *last)
{
    pn_level *L = &pl->lev[l];
    const cl_kernel *ks = l == 0 ? pl->k_fine : pl->k_coarse;
    const double om = pl->prm.omega;
    if (l == pl->nlev - 1) { /* one column: the line solve is exact */
        CP_TRY(line(pl, ks[PN_LJ_ZERO], l, L->x[0], L->x[1], L->x[1], b, 1.0, NULL));
        *out = L->x[0];
        return CLPHYS_SUCCESS;
    }
    int cur = 0;
    const cl_kernel *vs = l == 0 ? pl->v_fine : pl->v_coarse;
    if (L->vec) CP_TRY(line_vec(pl, vs[PN_LJ_ZERO], l, L->x[0], L->x[1], b, om, l == 0 ? first : NULL));
    else CP_TRY(line(pl, ks[PN_LJ_ZERO], l, L->x[0], L->x[1], L->x[1], b, om, l == 0 ? first : NULL));
    for (int s = 1; s < pl->prm.smooth; s++, cur ^= 1) {
        if (L->vec) CP_TRY(line_vec(pl, vs[PN_LJ], l, L->x[1 - cur], L->x[cur], b, om, NULL));
        else CP_TRY(line(pl, ks[PN_LJ], l, L->x[1 - cur], L->x[cur], L->x[cur], b, om, NULL));
    }
    CP_TRY(restrict_residual(pl, l, L->x[cur], b));
    cl_mem e;
    CP_TRY(cycle(pl, l + 1, pl->lev[l + 1].b, NULL, &e, NULL, NULL));
    if (L->vec) CP_TRY(prolong_add(pl, l, L->x[cur], e));
    for (int s = 0; s < pl->prm.smooth; s++, cur ^= 1) {
        const int fin = l == 0 && s == pl->prm.smooth - 1;
        cl_mem xn = fin ? z : L->x[1 - cur];
        if (L->vec) {
            CP_TRY(line_vec(pl, (fin ? pl->v_last : vs)[PN_LJ], l, xn, L->x[cur], b, om, fin ? last : NULL));
            continue;
        }
        cl_kernel k = (fin ? pl->k_last : ks)[s == 0 ? PN_LJ_PROLONG : PN_LJ];
        CP_TRY(line(pl, k, l, xn, L->x[cur], e, b, om, fin ? last : NULL));
    }
    *out = l == 0 ? z : L->x[cur];
    return CLPHYS_SUCCESS;
}

clphys_status pn_vcycle_run(clphys_poisson_plan *pl, cl_mem z, cl_mem r, double *kernel_s)
{
    const int keep = kernel_s || pl->timing;
    const double t0 = kernel_s ? cp_now() : 0;
    cl_event first = NULL, last = NULL;
    cl_mem out;
    clphys_status st = cycle(pl, 0, r, z, &out, keep ? &first : NULL, keep ? &last : NULL);
    if (!st && kernel_s) {
        /* first START to last END; host wall time without profiling */
        double s0, e0, s1, e1;
        st = cp_finish(pl->ctx);
        *kernel_s = cp_now() - t0;
        if (!st && first && last && !cp_event_times(first, &s0, &e0) && !cp_event_times(last, &s1, &e1))
            *kernel_s = e1 - s0;
    } else if (!st && pl->timing) {
        pn_events_add(pl, 0, first, last);
    }
    cp_release_event(&first);
    cp_release_event(&last);
    return st;
}

/* the CG's preconditioner: one V-cycle, and in a singular problem z without
 * its mean over each singular region (fp64 z: mixed and fp64 plans) */
static clphys_status precond_apply(void *u, cl_mem z, cl_mem r)
{
    clphys_poisson_plan *pl = u;
    CP_TRY(pn_vcycle_run(pl, z, r, NULL));
    if (pl->nregions && pl->prm.precision != CLPHYS_POISSON_FP32) return pn_project_z(pl, z);
    return CLPHYS_SUCCESS;
}

void pn_vcycle_precond(clphys_poisson_plan *pl, la_space *s, la_precond *M)
{
    M->space = s;
    M->user = pl;
    M->apply = precond_apply;
}

/* Compulsory bytes of one V-cycle of the column kernels: the arrays each
 * launch of cycle() reads and writes once (4 coefficient arrays; x_old and
 * b; the mask in restriction and prolongation; the coarse correction and
 * the restricted residual on the coarser level; x_new). */
double pn_vcycle_bytes(const clphys_poisson_plan *pl)
{
    const double rs = (double)pn_real_size(pl->lev_prec), io = (double)pn_real_size(io_precision(pl));
    const int nu = pl->prm.smooth;
    double bytes = 0;
    for (int l = 0; l < pl->nlev; l++) {
        const double n = (double)pl->lev[l].n, bb = l == 0 ? io : rs;
        const double zero = n * (4 * rs + bb + rs);      /* coefficients, b; x written */
        const double step = n * (4 * rs + rs + bb + rs); /* and x_old */
        if (l == pl->nlev - 1) {
            bytes += zero;
            break;
        }
        const double nc = (double)pl->lev[l + 1].n;
        bytes += zero + (nu - 1) * step;               /* before */
        bytes += n * (4 * rs + rs + 1 + bb) + nc * rs; /* residual over the mask, restricted */
        bytes += nu * step + n + nc * rs;              /* after: the first with mask and e */
        if (l == 0) bytes += n * (io - rs);            /* z written in the CG's precision */
    }
    return bytes;
}
