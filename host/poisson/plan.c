/* plan.c — making and releasing a Poisson plan (include/clphys_poisson.h):
 * the parameters checked and their defaults resolved, the fine operator
 * from a geometry or a caller's arrays; plan_build.c then builds the rest. */
#include "poisson_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t poisson_real_size(clphys_precision p) { return p == CLPHYS_FP64 ? 8 : 4; }

void clphys_poisson_plan_destroy(clphys_poisson_plan *pl)
{
    if (!pl) return;
    la_space_destroy(pl->s64);
    la_space_destroy(pl->s32);
    cp_queue_release(&pl->reads);
    for (int l = 0; l < pl->nlev; l++) {
        poisson_level *L = &pl->lev[l];
        for (int i = 0; i < POISSON_NCOEF && L->own_a; i++) cp_release_mem(&L->a[i]);
        cp_release_mem(&L->mask);
        cp_release_mem(&L->x[0]);
        cp_release_mem(&L->x[1]);
        cp_release_mem(&L->b);
    }
    free(pl->lev);
    for (int l = 0; l + 1 < pl->dist_levels; l++) poisson_op_free(&pl->dist_ops[l]);
    free(pl->dist_ops);
    for (int i = 0; i < POISSON_NCOEF; i++) cp_release_mem(&pl->a64[i]), cp_release_mem(&pl->a32[i]);
    cl_mem *m[] = {&pl->w_mem, &pl->label_mem, &pl->partial, &pl->shift, &pl->bint, &pl->rhs_mem, &pl->x_mem};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) cp_release_mem(m[i]);
    for (int p = 0; p < 2; p++)
        for (int v = 0; v < 3; v++) cp_release_kernel(&pl->k_stencil[p][v]);
    for (int i = 0; i < POISSON_NLINE; i++) {
        cp_release_kernel(&pl->k_fine[i]), cp_release_kernel(&pl->k_last[i]), cp_release_kernel(&pl->k_coarse[i]);
        cp_release_kernel(&pl->v_fine[i]), cp_release_kernel(&pl->v_last[i]), cp_release_kernel(&pl->v_coarse[i]);
    }
    cp_release_kernel(&pl->k_rhs), cp_release_kernel(&pl->k_rsum), cp_release_kernel(&pl->k_rmean);
    cp_release_kernel(&pl->k_rshift);
    poisson_events_clear(pl);
    free(pl->ev), free(pl->ev_kind);
    poisson_op_free(&pl->fine);
    free(pl->w), free(pl->label), free(pl->region_w), free(pl->region_n);
    free(pl);
}

static clphys_status check_params(clphys_context *ctx, const clphys_poisson_params *p)
{
    const clphys_device_info *d = clphys_context_device(ctx);
    if (!isfinite(p->tol) || p->tol < 0 || p->max_iter < 0 || p->smooth < 0 || !isfinite(p->omega) || p->omega < 0 ||
        p->omega > 1 || !isfinite(p->coarse_scale) || p->coarse_scale < 0 || p->coarse_scale > 1)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "poisson params: tol %g, max_iter %d, smooth %d, omega %g, coarse_scale %g out of range "
                        "(tol >= 0, max_iter >= 0, smooth >= 0, 0 < omega <= 1, 0 < coarse_scale <= 1; 0 = default)",
                        p->tol, p->max_iter, p->smooth, p->omega, p->coarse_scale);
    if ((unsigned)p->precision > CLPHYS_POISSON_FP32 || (unsigned)p->variant > CLPHYS_POISSON_STENCIL_COLUMN_VEC ||
        (unsigned)p->line > CLPHYS_POISSON_LINE_STAGED)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "poisson params: unknown precision %d, variant %d or line %d",
                        (int)p->precision, (int)p->variant, (int)p->line);
    const int *ls[2] = {p->local_size, p->vcycle_local_size};
    for (int i = 0; i < 2; i++)
        if (ls[i][0] < 0 || ls[i][1] < 0 || (ls[i][0] > 0) != (ls[i][1] > 0) ||
            (size_t)ls[i][0] * (size_t)ls[i][1] > d->max_work_group_size)
            return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                            "poisson params: %s %dx%d: both extents > 0 (or both 0) and at most %zu work-items",
                            i ? "vcycle_local_size" : "local_size", ls[i][0], ls[i][1], d->max_work_group_size);
    if (!d->fp64)
        return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED,
                        "poisson: device %s has no fp64 (cl_khr_fp64); the CG is fp64 in every precision mode",
                        d->name);
    return CLPHYS_SUCCESS;
}

clphys_status poisson_plan_new(clphys_context *ctx, const clphys_poisson_params *params, int nx, int ny, int nz,
                               clphys_poisson_plan **out)
{
    clphys_poisson_params p;
    CP_TRY(CP_PARAMS_IN(ctx, clphys_poisson_params, params, user, &p));
    CP_TRY(check_params(ctx, &p));
    if (!(p.tol > 0)) p.tol = 1e-8;
    if (!p.max_iter) p.max_iter = 1000;
    if (!p.smooth) p.smooth = 2;
    if (!(p.omega > 0)) p.omega = 0.8;
    if (!(p.coarse_scale > 0)) p.coarse_scale = 0.5;
    clphys_poisson_plan *pl = calloc(1, sizeof *pl);
    if (!pl) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson plan");
    pl->ctx = ctx;
    pl->prm = p;
    pl->nx = nx, pl->ny = ny, pl->nz = nz;
    pl->n = (size_t)nx * ny * nz;
    pl->w = calloc(pl->n, sizeof(double));
    if (!pl->w) {
        free(pl);
        return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson plan");
    }
    *out = pl;
    return CLPHYS_SUCCESS;
}

/* The assembled coefficients (face terms T = area / distance, volumes V,
 * lambda V) within the range the solve computes in, with room for the
 * sums of the coarse levels: [1e-30, 1e30] when the V-cycle is fp32, [1e-290,
 * 1e290] in fp64.  A geometry of absurd scale (spacings of 1e-300 or 1e300 m,
 * lambda of 1e308) fails here, naming what is out of scale, rather than as
 * an infinite right-hand side or a NaN residual after 0 iterations. */
static clphys_status check_scale(clphys_context *ctx, const clphys_poisson_geometry *g, const clphys_poisson_plan *pl)
{
    const double lo = pl->prm.precision == CLPHYS_POISSON_FP64 ? 1e-290 : 1e-30, hi = 1 / lo;
    const poisson_op *op = &pl->fine;
    const size_t plane = (size_t)pl->nx * pl->ny;
    for (size_t c = 0; c < pl->n; c++) {
        if (!(op->mask[c] & POISSON_WET)) continue;
        const double v[5] = {pl->w[c], op->e[c], -op->ax[c], -op->ay[c], -op->az[c]};
        static const char *const what[5] = {"volume V", "Helmholtz term lambda V", "east face term area / distance",
                                            "north face term area / distance", "lower face term area / distance"};
        for (int k = 0; k < 5; k++)
            if (!(v[k] <= hi) || (v[k] < lo && (k == 0 || v[k] != 0)))
                return cp_error(ctx, CLPHYS_ERR_INPUT,
                                "poisson geometry: at cell (i %d, j %d, k %d) the %s is %g, outside %g .. %g (%s): "
                                "spacings dx, dy, dz (or the lonlat ranges) or the Helmholtz term %g out of scale",
                                (int)(c % (size_t)pl->nx), (int)(c / (size_t)pl->nx % (size_t)pl->ny), (int)(c / plane),
                                what[k], v[k], lo, hi,
                                pl->prm.precision == CLPHYS_POISSON_FP64 ? "fp64" : "the fp32 V-cycle", g->helmholtz);
    }
    return CLPHYS_SUCCESS;
}

clphys_status clphys_poisson_plan_create(clphys_context *ctx, const clphys_poisson_geometry *g,
                                         const clphys_poisson_params *params, clphys_poisson_plan **out)
{
    if (!ctx || !g || !out)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_plan_create: NULL argument");
    *out = NULL;
    CP_TRY(poisson_check_geometry(ctx, g));
    clphys_poisson_plan *pl;
    CP_TRY(poisson_plan_new(ctx, params, g->nx, g->ny, g->nz, &pl));
    pl->from_geometry = 1;
    clphys_status st = poisson_assemble(ctx, g, &pl->fine, pl->w);
    if (!st) st = check_scale(ctx, g, pl);
    if (!st) st = poisson_plan_finish(pl);
    if (st) {
        clphys_poisson_plan_destroy(pl);
        return st;
    }
    *out = pl;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_poisson_plan_create_operator(clphys_context *ctx, const clphys_poisson_operator *op,
                                                  const clphys_poisson_params *params, clphys_poisson_plan **out)
{
    if (!ctx || !op || !out || !op->a == !op->a_mem)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_poisson_plan_create_operator: NULL argument, or not exactly one of a and a_mem");
    *out = NULL;
    if (op->nx < 2 || op->ny < 2 || op->nz < 1 || (double)op->nx * op->ny * op->nz > 2147483647.0)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "poisson operator: grid %dx%dx%d too small for a coarse level or too large (nx and ny must "
                        "be >= 2, nz >= 1, at most 2^31 - 1 cells)",
                        op->nx, op->ny, op->nz);
    clphys_poisson_plan *pl;
    CP_TRY(poisson_plan_new(ctx, params, op->nx, op->ny, op->nz, &pl));
    const double *a = op->a;
    double *copy = NULL;
    clphys_status st = CLPHYS_SUCCESS;
    if (op->a_mem) { /* read once: the hierarchy is built on the host */
        size_t bytes = 0;
        if (!(st = cp_mem_bytes(ctx, op->a_mem, &bytes)) && bytes < 7 * pl->n * sizeof(double))
            st = cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                          "poisson operator: a_mem holds %zu bytes, 7 n doubles are %zu", bytes,
                          7 * pl->n * sizeof(double));
        if (!st && !(copy = malloc(7 * pl->n * sizeof(double))))
            st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson operator");
        if (!st) st = cp_read(ctx, op->a_mem, 0, 7 * pl->n * sizeof(double), copy);
        a = copy;
    }
    if (!st) st = poisson_from_seven(ctx, op->nx, op->ny, op->nz, a, &pl->fine);
    free(copy);
    for (size_t c = 0; !st && c < pl->n; c++) pl->w[c] = (pl->fine.mask[c] & POISSON_WET) ? 1.0 : 0.0;
    if (!st) st = poisson_plan_finish(pl);
    if (st) {
        clphys_poisson_plan_destroy(pl);
        return st;
    }
    *out = pl;
    return CLPHYS_SUCCESS;
}

clphys_status poisson_plan_from_op(clphys_context *ctx, const clphys_poisson_params *params, poisson_op *op,
                                   clphys_poisson_plan **out)
{
    clphys_poisson_plan *pl;
    CP_TRY(poisson_plan_new(ctx, params, op->nx, op->ny, op->nz, &pl));
    pl->fine = *op;
    memset(op, 0, sizeof *op);
    for (size_t c = 0; c < pl->n; c++) pl->w[c] = (pl->fine.mask[c] & POISSON_WET) ? 1.0 : 0.0;
    clphys_status st = poisson_plan_finish(pl);
    if (st) {
        clphys_poisson_plan_destroy(pl);
        return st;
    }
    *out = pl;
    return CLPHYS_SUCCESS;
}
