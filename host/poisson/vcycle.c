/* vcycle.c — one symmetric V-cycle z = B r (include/clphys_poisson.h) with
 * the kernels of cl/poisson_line_relax.cl (column, and column-vec's levels whose nx
 * is not a multiple of its lanes), cl/poisson_line_relax_vec.cl (column-vec) or
 * cl/poisson_line_staged.cl (staged), and the V-cycle as the CG's preconditioner.
 * Each level: `smooth` Jacobi line-relaxation steps from x = 0, the
 * residual restricted to the next level, the V-cycle there, the correction
 * prolongated inside the first of `smooth` further steps; the coarsest
 * level (a single column) is solved exactly.  (staged: the restriction
 * also runs the next level's first step, and at the coarsest level its
 * exact solve.)  With the same number of steps before and after, a
 * symmetric smoother and R = P^T, B is symmetric, and positive definite
 * for any SPD coarse operators (the damped Jacobi steps converge in the
 * energy norm), so CG stays valid without the coarse operators being
 * Galerkin products.  The finest level reads r and writes z in the CG's
 * precision (fp64 when mixed): no conversion passes. */
#include "poisson_internal.h"

#include <stdio.h>
#include <string.h>

static const char *const line_names[POISSON_NLINE] = {"line_jacobi_zero", "line_jacobi", "line_jacobi_prolong",
                                                      "residual_restrict"};
static const char *const vec_names[POISSON_NLINE] = {"line_jacobi_zero_vec", "line_jacobi_vec", "prolong_add",
                                                     "residual_restrict_vec"};
static const char *const staged_names[POISSON_NLINE] = {"line_staged_zero", "line_staged", "line_staged_prolong",
                                                        "restrict_staged"};

/* precision of the vectors the V-cycle reads and writes at the finest level */
static clphys_precision io_precision(const clphys_poisson_plan *pl)
{
    return pl->prm.precision == CLPHYS_POISSON_FP32 ? CLPHYS_FP32 : CLPHYS_FP64;
}

static const char *ctype(clphys_precision p) { return p == CLPHYS_FP64 ? "double" : "float"; }

enum { SET_COLUMN, SET_VEC, SET_STAGED };

/* the kernels of poisson_line_relax.cl, poisson_line_relax_vec.cl or poisson_line_staged.cl (kind)
 * for b and x_new of the given precisions */
static clphys_status build_set(clphys_poisson_plan *pl, int kind, clphys_precision b, clphys_precision xo, cl_kernel *k)
{
    static const cp_kernel_file *const files[3] = {&clsrc_poisson_line_relax_cl, &clsrc_poisson_line_relax_vec_cl,
                                                   &clsrc_poisson_line_staged_cl};
    static const char *const *const names[3] = {line_names, vec_names, staged_names};
    const int vec = kind == SET_VEC;
    cp_defines opts = {0};
    CP_TRY(cp_define_precision(pl->ctx, &opts, pl->lev_prec));
    const int need64 = (b == CLPHYS_FP64 || xo == CLPHYS_FP64) && pl->lev_prec == CLPHYS_FP32;
    if (need64) cp_define_flag(&opts, "NEED_FP64");
    cp_define_str(&opts, "B_T", ctype(b));
    cp_define_str(&opts, "XO_T", ctype(xo));
    cp_define_int(&opts, "NZ", pl->nz);
    if (b == CLPHYS_FP64) cp_define_flag(&opts, "B_IS_DOUBLE");
    if (xo == CLPHYS_FP64) cp_define_flag(&opts, "XO_IS_DOUBLE");
    if (vec) cp_define_int(&opts, "VW", pl->vw);
    if (pl->dist_levels) cp_define_int(&opts, "CSHIFT", 1);
    cl_program prog;
    CP_TRY(cp_program(pl->ctx, files[kind], &opts, &prog));
    for (int i = 0; i < POISSON_NLINE; i++) CP_TRY(cp_kernel(pl->ctx, prog, names[kind][i], &k[i]));
    return CLPHYS_SUCCESS;
}

/* the largest work-group every built V-cycle kernel takes: on GPUs
 * registers may allow fewer work-items per group than the device's
 * maximum (column keeps 2 nz reals of the line solve per work-item) */
static size_t kernels_max_group(clphys_poisson_plan *pl)
{
    size_t most = clphys_context_device(pl->ctx)->max_work_group_size;
    const cl_kernel *sets[6] = {pl->k_fine, pl->k_last, pl->k_coarse, pl->v_fine, pl->v_last, pl->v_coarse};
    for (int s = 0; s < 6; s++)
        for (int i = 0; i < POISSON_NLINE; i++) {
            size_t m = 0;
            if (sets[s][i] && !cp_kernel_limits(pl->ctx, sets[s][i], &m, NULL) && m && m < most) most = m;
        }
    return most;
}

static clphys_status build_kernels(clphys_poisson_plan *pl)
{
    const clphys_precision io = io_precision(pl), lev = pl->lev_prec;
    const int kind = pl->line == CLPHYS_POISSON_LINE_STAGED ? SET_STAGED : SET_COLUMN;
    CP_TRY(build_set(pl, kind, io, lev, pl->k_fine));
    CP_TRY(build_set(pl, kind, io, io, pl->k_last));
    CP_TRY(build_set(pl, kind, lev, lev, pl->k_coarse));
    if (pl->line == CLPHYS_POISSON_LINE_COLUMN_VEC) {
        CP_TRY(build_set(pl, SET_VEC, io, lev, pl->v_fine));
        CP_TRY(build_set(pl, SET_VEC, io, io, pl->v_last));
        CP_TRY(build_set(pl, SET_VEC, lev, lev, pl->v_coarse));
    }
    pl->vkmax = kernels_max_group(pl);
    return CLPHYS_SUCCESS;
}

clphys_status poisson_vcycle_build(clphys_poisson_plan *pl)
{
    CP_TRY(build_kernels(pl));
    /* staged chosen by AUTO: a work-group too small for a tile of 8
     * columns with 4 work-items each leaves the layers' loads serial, and
     * column does as well without the barriers */
    if (pl->line == CLPHYS_POISSON_LINE_STAGED && !pl->prm.line && pl->vkmax < POISSON_STAGED_MIN_GROUP) {
        for (int i = 0; i < POISSON_NLINE; i++)
            cp_release_kernel(&pl->k_fine[i]), cp_release_kernel(&pl->k_last[i]), cp_release_kernel(&pl->k_coarse[i]);
        pl->line = CLPHYS_POISSON_LINE_COLUMN;
        CP_TRY(build_kernels(pl));
    }
    return CLPHYS_SUCCESS;
}

/* the coarse level below l (its size and how it was coarsened), or l itself
 * at the coarsest level (then unused by the kernels) */
static const poisson_level *below(const clphys_poisson_plan *pl, int l)
{
    return &pl->lev[l + 1 < pl->nlev ? l + 1 : l];
}

/* the kernels' arguments a[0 .. n) (CP_KARGS) set, a launch over nx x ny columns */
static clphys_status launch_cols(clphys_poisson_plan *pl, cl_kernel k, int nx, int ny, cl_event *ev, const cp_karg *a,
                                 cl_uint n)
{
    CP_TRY(cp_args(pl->ctx, k, a, n));
    const int given = pl->vlocal[0] > 0;
    const size_t global[2] = {cp_round_up((size_t)nx, pl->vlocal[0]), cp_round_up((size_t)ny, pl->vlocal[1])};
    if (ev) return cp_launch_ev(pl->ctx, k, 2, global, given ? pl->vlocal : NULL, ev);
    return cp_launch(pl->ctx, k, 2, global, given ? pl->vlocal : NULL, NULL);
}

size_t poisson_staged_local_bytes(const clphys_poisson_plan *pl, size_t wx)
{
    return 3 * wx * (size_t)(pl->nz | 1) * poisson_real_size(pl->lev_prec);
}

/* A staged kernel over the ncols columns of a level: tiles of the plan's
 * shape (wx columns, wk work-items per column); a level with fewer columns
 * than a tile gets narrower tiles with more work-items per column (up to
 * one per layer), so that the layers of its few columns load in parallel.
 * The kernel's arguments: a[0 .. n) (CP_KARGS), then its three local arrays. */
static clphys_status launch_staged(clphys_poisson_plan *pl, cl_kernel k, int ncols, cl_event *ev, const cp_karg *a,
                                   cl_uint n)
{
    size_t wx = pl->vlocal[0], wk = pl->vlocal[1];
    while (wx > 1 && wx / 2 >= (size_t)ncols) wx /= 2, wk *= 2;
    if (wk > (size_t)pl->nz) wk = (size_t)pl->nz;
    const size_t local[2] = {wx, wk}, global[2] = {cp_round_up((size_t)ncols, wx), wk};
    const size_t bytes = poisson_staged_local_bytes(pl, wx) / 3;
    cp_karg all[32];
    if (n + 3 > sizeof all / sizeof *all)
        return cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "poisson: %u arguments of a staged kernel", n + 3);
    for (cl_uint i = 0; i < n; i++) all[i] = a[i];
    for (cl_uint i = n; i < n + 3; i++) all[i] = CP_LOCAL(bytes);
    CP_TRY(cp_args(pl->ctx, k, all, n + 3));
    if (ev) return cp_launch_ev(pl->ctx, k, 2, global, local, ev);
    return cp_launch(pl->ctx, k, 2, global, local, NULL);
}

/* one Jacobi line-relaxation step on level l: xn from xo (+ P e), b */
clphys_status poisson_line(clphys_poisson_plan *pl, cl_kernel k, int l, cl_mem xn, cl_mem xo, cl_mem e, cl_mem b,
                           double omega, cl_event *ev)
{
    const poisson_level *L = &pl->lev[l], *C = below(pl, l);
    const int dims[6] = {L->nx, L->ny, C->nx, C->ny, C == L ? 0 : C->sx, C == L ? 0 : C->sy};
    const float omf = (float)omega;
#define LINE_ARGS                                                                                                      \
    xn, xo, e, L->mask, b, L->a[POISSON_E], L->a[POISSON_AX], L->a[POISSON_AY], L->a[POISSON_AZ],                      \
        CP_EITHER(pl->lev_prec == CLPHYS_FP64, omega, omf), dims[0], dims[1], dims[2], dims[3], dims[4], dims[5]
    if (pl->line == CLPHYS_POISSON_LINE_STAGED) return launch_staged(pl, k, L->nx * L->ny, ev, CP_KARGS(LINE_ARGS));
    return launch_cols(pl, k, L->nx, L->ny, ev, CP_KARGS(LINE_ARGS));
#undef LINE_ARGS
}

/* one column-vec step on level l: xn from xo (mode 1) or 0 (mode 0), b */
clphys_status poisson_line_vec(clphys_poisson_plan *pl, cl_kernel k, int l, cl_mem xn, cl_mem xo, cl_mem b,
                               double omega, cl_event *ev)
{
    const poisson_level *L = &pl->lev[l];
    const float omf = (float)omega;
    return launch_cols(pl, k, L->nx / pl->vw, L->ny, ev,
                       CP_KARGS(xn, xo, b, L->a[POISSON_E], L->a[POISSON_AX], L->a[POISSON_AY], L->a[POISSON_AZ],
                                CP_EITHER(pl->lev_prec == CLPHYS_FP64, omega, omf), L->nx, L->ny));
}

/* x += P e on level l (column-vec levels: the prolongation as a pass of its own) */
static clphys_status prolong_add(clphys_poisson_plan *pl, int l, cl_mem x, cl_mem e)
{
    const poisson_level *L = &pl->lev[l], *C = &pl->lev[l + 1];
    cl_kernel k = pl->v_coarse[POISSON_LJ_PROLONG];
    const int dims[6] = {L->nx, L->ny, pl->nz, C->nx, C->ny, C->sy};
    return launch_cols(pl, k, L->nx / pl->vw, L->ny, NULL,
                       CP_KARGS(x, e, L->mask, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5]));
}

/* bc (level l + 1) = R (b - A x) on level l; staged: and the first step
 * of level l + 1 from x = 0 into its x[0] (omega 1 on the coarsest level:
 * its exact solve) */
clphys_status poisson_restrict_residual(clphys_poisson_plan *pl, int l, cl_mem x, cl_mem b)
{
    const poisson_level *L = &pl->lev[l], *C = &pl->lev[l + 1];
    if (pl->line == CLPHYS_POISSON_LINE_STAGED) {
        cl_kernel k = (l == 0 ? pl->k_fine : pl->k_coarse)[POISSON_RESTRICT];
        const double om = l + 2 == pl->nlev ? 1.0 : pl->prm.omega;
        const float omf = (float)om;
        const int dims[6] = {L->nx, L->ny, C->nx, C->ny, C->sx, C->sy};
        return launch_staged(pl, k, C->nx * C->ny, NULL,
                             CP_KARGS(C->x[0], C->b, x, L->mask, b, L->a[POISSON_E], L->a[POISSON_AX], L->a[POISSON_AY],
                                      L->a[POISSON_AZ], C->a[POISSON_E], C->a[POISSON_AX], C->a[POISSON_AY],
                                      C->a[POISSON_AZ], CP_EITHER(pl->lev_prec == CLPHYS_FP64, om, omf), dims[0],
                                      dims[1], dims[2], dims[3], dims[4], dims[5]));
    }
    /* a rank's block (CSHIFT: coarse column (i + 1) >> 1) restricts with
     * the column kernel; its smoothing steps may still be column-vec */
    if (L->vec && !pl->dist_levels) {
        cl_kernel k = (l == 0 ? pl->v_fine : pl->v_coarse)[POISSON_RESTRICT];
        const int dims[5] = {L->nx, L->ny, C->nx, C->ny, C->sy};
        return launch_cols(pl, k, L->nx / pl->vw, C->ny, NULL,
                           CP_KARGS(C->b, x, L->mask, b, L->a[POISSON_E], L->a[POISSON_AX], L->a[POISSON_AY],
                                    L->a[POISSON_AZ], dims[0], dims[1], dims[2], dims[3], dims[4]));
    }
    cl_kernel k = (l == 0 ? pl->k_fine : pl->k_coarse)[POISSON_RESTRICT];
    const int dims[6] = {L->nx, L->ny, C->nx, C->ny, C->sx, C->sy};
    return launch_cols(pl, k, C->nx, C->ny, NULL,
                       CP_KARGS(C->b, x, L->mask, b, L->a[POISSON_E], L->a[POISSON_AX], L->a[POISSON_AY],
                                L->a[POISSON_AZ], dims[0], dims[1], dims[2], dims[3], dims[4], dims[5]));
}

/* The V-cycle from level l with right-hand side b; the result is *out (on
 * level 0: z).  first/last receive the events of the finest level's first
 * and last launch (NULL: none kept). */
static clphys_status cycle(clphys_poisson_plan *pl, int l, cl_mem b, cl_mem z, cl_mem *out, cl_event *first,
                           cl_event *last)
{
    poisson_level *L = &pl->lev[l];
    const cl_kernel *ks = l == 0 ? pl->k_fine : pl->k_coarse;
    const double om = pl->prm.omega;
    /* staged: the restriction from level l - 1 made the first step here */
    const int first_done = l > 0 && pl->line == CLPHYS_POISSON_LINE_STAGED;
    if (l == pl->nlev - 1) { /* one column: the line solve is exact */
        if (!first_done) CP_TRY(poisson_line(pl, ks[POISSON_LJ_ZERO], l, L->x[0], L->x[1], L->x[1], b, 1.0, NULL));
        *out = L->x[0];
        return CLPHYS_SUCCESS;
    }
    int cur = 0;
    const cl_kernel *vs = l == 0 ? pl->v_fine : pl->v_coarse;
    if (L->vec)
        CP_TRY(poisson_line_vec(pl, vs[POISSON_LJ_ZERO], l, L->x[0], L->x[1], b, om, l == 0 ? first : NULL));
    else if (!first_done)
        CP_TRY(poisson_line(pl, ks[POISSON_LJ_ZERO], l, L->x[0], L->x[1], L->x[1], b, om, l == 0 ? first : NULL));
    for (int s = 1; s < pl->prm.smooth; s++, cur ^= 1) {
        if (L->vec)
            CP_TRY(poisson_line_vec(pl, vs[POISSON_LJ], l, L->x[1 - cur], L->x[cur], b, om, NULL));
        else
            CP_TRY(poisson_line(pl, ks[POISSON_LJ], l, L->x[1 - cur], L->x[cur], L->x[cur], b, om, NULL));
    }
    CP_TRY(poisson_restrict_residual(pl, l, L->x[cur], b));
    cl_mem e;
    CP_TRY(cycle(pl, l + 1, pl->lev[l + 1].b, NULL, &e, NULL, NULL));
    if (L->vec) CP_TRY(prolong_add(pl, l, L->x[cur], e));
    for (int s = 0; s < pl->prm.smooth; s++, cur ^= 1) {
        const int fin = l == 0 && s == pl->prm.smooth - 1;
        cl_mem xn = fin ? z : L->x[1 - cur];
        if (L->vec) {
            CP_TRY(
                poisson_line_vec(pl, (fin ? pl->v_last : vs)[POISSON_LJ], l, xn, L->x[cur], b, om, fin ? last : NULL));
            continue;
        }
        cl_kernel k = (fin ? pl->k_last : ks)[s == 0 ? POISSON_LJ_PROLONG : POISSON_LJ];
        CP_TRY(poisson_line(pl, k, l, xn, L->x[cur], e, b, om, fin ? last : NULL));
    }
    *out = l == 0 ? z : L->x[cur];
    return CLPHYS_SUCCESS;
}

clphys_status poisson_vcycle_run(clphys_poisson_plan *pl, cl_mem z, cl_mem r, double *kernel_s)
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
        poisson_events_add(pl, 0, first, last);
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
    CP_TRY(poisson_vcycle_run(pl, z, r, NULL));
    if (pl->nregions && pl->prm.precision != CLPHYS_POISSON_FP32) return poisson_project_z(pl, z);
    return CLPHYS_SUCCESS;
}

void poisson_vcycle_precond(clphys_poisson_plan *pl, la_space *s, la_precond *M)
{
    M->space = s;
    M->user = pl;
    M->apply = precond_apply;
}

/* Compulsory bytes of one V-cycle of the plan's kernels: the arrays each
 * launch of cycle() reads and writes once (4 coefficient arrays; x_old and
 * b; the mask in restriction and prolongation; the coarse correction and
 * the restricted residual on the coarser level; x_new).  Re-reads inside
 * one launch (neighbours; staged: x_old again in its last phase, a few
 * microseconds after the first) count once, as cache hits.  column-vec
 * prolongates in a pass of its own (x read and written again); staged
 * relaxes each coarse level's first step inside the restriction, from the
 * residual it has just summed (b not read again). */
double poisson_vcycle_bytes(const clphys_poisson_plan *pl)
{
    const double rs = (double)poisson_real_size(pl->lev_prec), io = (double)poisson_real_size(io_precision(pl));
    const int nu = pl->prm.smooth, staged = pl->line == CLPHYS_POISSON_LINE_STAGED;
    double bytes = 0;
    for (int l = 0; l < pl->nlev; l++) {
        const double n = (double)pl->lev[l].n, bb = l == 0 ? io : rs;
        const double zero = n * (4 * rs + (staged && l > 0 ? 0 : bb) + rs); /* coefficients, b; x written */
        const double step = n * (4 * rs + rs + bb + rs);                    /* and x_old */
        if (l == pl->nlev - 1) {
            bytes += zero;
            break;
        }
        const double nc = (double)pl->lev[l + 1].n;
        bytes += zero + (nu - 1) * step;               /* before */
        bytes += n * (4 * rs + rs + 1 + bb) + nc * rs; /* residual over the mask, restricted */
        bytes += nu * step + n + nc * rs;              /* after: the first with mask and e */
        if (pl->lev[l].vec) bytes += 2 * rs * n;       /* the prolongation's pass over x */
        if (l == 0) bytes += n * (io - rs);            /* z written in the CG's precision */
    }
    return bytes;
}
