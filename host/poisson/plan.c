/* plan.c — the Poisson plan (include/clphys_poisson.h): the fine operator
 * from a geometry or a caller's arrays, its singular regions and multigrid
 * hierarchy (host, fp64), the upload in the precisions used, the kernels,
 * the linear-algebra spaces; and the plan's small public calls. */
#include "poisson_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t pn_real_size(clphys_precision p) { return p == CLPHYS_FP64 ? 8 : 4; }

void clphys_poisson_plan_destroy(clphys_poisson_plan *pl)
{
    if (!pl) return;
    la_space_destroy(pl->s64);
    la_space_destroy(pl->s32);
    cp_queue_release(&pl->reads);
    for (int l = 0; l < pl->nlev; l++) {
        pn_level *L = &pl->lev[l];
        for (int i = 0; i < PN_NCOEF && L->own_a; i++) cp_release_mem(&L->a[i]);
        cp_release_mem(&L->mask);
        cp_release_mem(&L->x[0]);
        cp_release_mem(&L->x[1]);
        cp_release_mem(&L->b);
    }
    free(pl->lev);
    for (int l = 0; l + 1 < pl->dist_levels; l++) pn_op_free(&pl->dist_ops[l]);
    free(pl->dist_ops);
    for (int i = 0; i < PN_NCOEF; i++) cp_release_mem(&pl->a64[i]), cp_release_mem(&pl->a32[i]);
    cl_mem *m[] = {&pl->w_mem, &pl->label_mem, &pl->partial, &pl->shift, &pl->bint, &pl->rhs_mem, &pl->x_mem};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) cp_release_mem(m[i]);
    for (int p = 0; p < 2; p++)
        for (int v = 0; v < 3; v++) cp_release_kernel(&pl->k_stencil[p][v]);
    for (int i = 0; i < PN_NLINE; i++) {
        cp_release_kernel(&pl->k_fine[i]), cp_release_kernel(&pl->k_last[i]), cp_release_kernel(&pl->k_coarse[i]);
        cp_release_kernel(&pl->v_fine[i]), cp_release_kernel(&pl->v_last[i]), cp_release_kernel(&pl->v_coarse[i]);
    }
    cp_release_kernel(&pl->k_rhs), cp_release_kernel(&pl->k_rsum), cp_release_kernel(&pl->k_rmean);
    cp_release_kernel(&pl->k_rshift);
    pn_events_clear(pl);
    free(pl->ev), free(pl->ev_kind);
    pn_op_free(&pl->fine);
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
                        "poisson: device %s has no fp64 (cl_khr_fp64); the CG is fp64 in every precision mode", d->name);
    return CLPHYS_SUCCESS;
}

clphys_status pn_plan_new(clphys_context *ctx, const clphys_poisson_params *params, int nx, int ny, int nz,
                          clphys_poisson_plan **out)
{
    clphys_poisson_params p = params ? *params : (clphys_poisson_params){0};
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
    const pn_op *op = &pl->fine;
    const size_t plane = (size_t)pl->nx * pl->ny;
    for (size_t c = 0; c < pl->n; c++) {
        if (!(op->mask[c] & PN_WET)) continue;
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
    if (!ctx || !g || !out) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_plan_create: NULL argument");
    *out = NULL;
    CP_TRY(pn_check_geometry(ctx, g));
    clphys_poisson_plan *pl;
    CP_TRY(pn_plan_new(ctx, params, g->nx, g->ny, g->nz, &pl));
    pl->from_geometry = 1;
    clphys_status st = pn_assemble(ctx, g, &pl->fine, pl->w);
    if (!st) st = check_scale(ctx, g, pl);
    if (!st) st = pn_plan_finish(pl);
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
    CP_TRY(pn_plan_new(ctx, params, op->nx, op->ny, op->nz, &pl));
    const double *a = op->a;
    double *copy = NULL;
    clphys_status st = CLPHYS_SUCCESS;
    if (op->a_mem) { /* read once: the hierarchy is built on the host */
        size_t bytes = 0;
        if (!(st = cp_mem_bytes(ctx, op->a_mem, &bytes)) && bytes < 7 * pl->n * sizeof(double))
            st = cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "poisson operator: a_mem holds %zu bytes, 7 n doubles are %zu",
                          bytes, 7 * pl->n * sizeof(double));
        if (!st && !(copy = malloc(7 * pl->n * sizeof(double))))
            st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson operator");
        if (!st) st = cp_read(ctx, op->a_mem, 0, 7 * pl->n * sizeof(double), copy);
        a = copy;
    }
    if (!st) st = pn_from_seven(ctx, op->nx, op->ny, op->nz, a, &pl->fine);
    free(copy);
    for (size_t c = 0; !st && c < pl->n; c++) pl->w[c] = (pl->fine.mask[c] & PN_WET) ? 1.0 : 0.0;
    if (!st) st = pn_plan_finish(pl);
    if (st) {
        clphys_poisson_plan_destroy(pl);
        return st;
    }
    *out = pl;
    return CLPHYS_SUCCESS;
}

clphys_status pn_plan_from_op(clphys_context *ctx, const clphys_poisson_params *params, pn_op *op,
                              clphys_poisson_plan **out)
{
    clphys_poisson_plan *pl;
    CP_TRY(pn_plan_new(ctx, params, op->nx, op->ny, op->nz, &pl));
    pl->fine = *op;
    memset(op, 0, sizeof *op);
    for (size_t c = 0; c < pl->n; c++) pl->w[c] = (pl->fine.mask[c] & PN_WET) ? 1.0 : 0.0;
    clphys_status st = pn_plan_finish(pl);
    if (st) {
        clphys_poisson_plan_destroy(pl);
        return st;
    }
    *out = pl;
    return CLPHYS_SUCCESS;
}

/* a device copy of n doubles in precision p */
static clphys_status upload(clphys_context *ctx, clphys_precision p, const double *src, size_t n, cl_mem *out)
{
    if (p == CLPHYS_FP64) return cp_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 8, src, out);
    float *f = malloc(n * sizeof(float));
    if (!f) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson upload");
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) f[i] = (float)src[i];
    clphys_status st = cp_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, f, out);
    free(f);
    return st;
}

static clphys_status upload_op(clphys_context *ctx, clphys_precision p, const pn_op *op, cl_mem a[PN_NCOEF])
{
    const double *src[PN_NCOEF] = {op->e, op->ax, op->ay, op->az};
    for (int i = 0; i < PN_NCOEF; i++) CP_TRY(upload(ctx, p, src[i], op->n, &a[i]));
    return CLPHYS_SUCCESS;
}

/* the fp32 copy of A and its stencil kernels, made on first use */
static clphys_status ensure_precision(clphys_poisson_plan *pl, clphys_precision p)
{
    if (pl->k_stencil[p][0]) return CLPHYS_SUCCESS;
    if (p == CLPHYS_FP32 && !pl->a32[0]) CP_TRY(upload_op(pl->ctx, CLPHYS_FP32, &pl->fine, pl->a32));
    cp_defines opts = {0};
    cl_program prog;
    CP_TRY(cp_define_precision(pl->ctx, &opts, p));
    cp_define_int(&opts, "VW", p == CLPHYS_FP64 ? 4 : 8);
    CP_TRY(cp_program(pl->ctx, &clsrc_poisson_stencil_cl, &opts, &prog));
    CP_TRY(cp_kernel(pl->ctx, prog, "stencil_column", &pl->k_stencil[p][0]));
    CP_TRY(cp_kernel(pl->ctx, prog, "stencil_cell", &pl->k_stencil[p][1]));
    return cp_kernel(pl->ctx, prog, "stencil_column_vec", &pl->k_stencil[p][2]);
}

/* the levels below the fine one, each uploaded as it is made */
static clphys_status build_levels(clphys_poisson_plan *pl)
{
    clphys_context *ctx = pl->ctx;
    int nlev = 1;
    for (int nx = pl->nx, ny = pl->ny; nx > 1 || ny > 1; nlev++) nx = (nx + 1) / 2, ny = (ny + 1) / 2;
    if (pl->dist_levels) nlev = pl->dist_levels;
    pl->lev = calloc((size_t)nlev, sizeof *pl->lev);
    if (!pl->lev) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson levels");
    pl->nlev = nlev;
    const size_t rs = pn_real_size(pl->lev_prec);
    pn_op cur = pl->fine, next;
    clphys_status st = CLPHYS_SUCCESS;
    for (int l = 0; l < nlev && !st; l++) {
        pn_level *L = &pl->lev[l];
        if (l > 0 && pl->dist_levels) { /* a rank's block: given, halo included */
            cur = pl->dist_ops[l - 1];
            L->sx = L->sy = 1;
        } else if (l > 0) {
            if ((st = pn_coarsen(ctx, &cur, pl->prm.coarse_scale, &next, &L->sx, &L->sy))) break;
            if (l > 1) pn_op_free(&cur);
            cur = next;
        }
        L->nx = cur.nx, L->ny = cur.ny, L->n = cur.n;
        if (l == 0) { /* the fine arrays of the V-cycle's precision */
            for (int i = 0; i < PN_NCOEF; i++) L->a[i] = pl->lev_prec == CLPHYS_FP64 ? pl->a64[i] : pl->a32[i];
        } else {
            L->own_a = 1;
            st = upload_op(ctx, pl->lev_prec, &cur, L->a);
        }
        if (!st) st = cp_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, cur.n, cur.mask, &L->mask);
        for (int i = 0; i < 2 && !st; i++) st = cp_buffer(ctx, CL_MEM_READ_WRITE, cur.n * rs, NULL, &L->x[i]);
        if (!st && l > 0) st = cp_buffer(ctx, CL_MEM_READ_WRITE, cur.n * rs, NULL, &L->b);
    }
    if (nlev > 1 && cur.e != pl->fine.e && !pl->dist_levels) pn_op_free(&cur);
    return st;
}

clphys_status pn_plan_finish(clphys_poisson_plan *pl)
{
    clphys_context *ctx = pl->ctx;
    const clphys_device_info *d = clphys_context_device(ctx);
    const size_t n = pl->n;
    for (size_t c = 0; c < n; c++) pl->wet += pl->fine.mask[c] & PN_WET;
    /* singular regions and their weights */
    if (!pl->dist_levels) { /* a distributed plan's rank has its block's labels */
        pl->label = malloc(sizeof(int) * n);
        if (!pl->label) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson plan");
        CP_TRY(pn_singular_regions(ctx, &pl->fine, pl->label, &pl->nregions));
    }
    if (pl->dist_levels) {
        if (!pl->nregions) free(pl->label), pl->label = NULL;
    } else if (pl->nregions) {
        pl->region_w = calloc((size_t)pl->nregions, sizeof(double));
        pl->region_n = calloc((size_t)pl->nregions, sizeof(double));
        if (!pl->region_w || !pl->region_n) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson plan");
        for (size_t c = 0; c < n; c++)
            if (pl->label[c] >= 0) pl->region_w[pl->label[c]] += pl->w[c], pl->region_n[pl->label[c]] += 1;
    } else {
        free(pl->label);
        pl->label = NULL;
    }
    /* device: the fine operator, the vectors of a solve, the levels */
    pl->lev_prec = pl->prm.precision == CLPHYS_POISSON_FP64 ? CLPHYS_FP64 : CLPHYS_FP32;
    CP_TRY(upload_op(ctx, CLPHYS_FP64, &pl->fine, pl->a64));
    if (pl->lev_prec == CLPHYS_FP32) CP_TRY(upload_op(ctx, CLPHYS_FP32, &pl->fine, pl->a32));
    CP_TRY(upload(ctx, CLPHYS_FP64, pl->w, n, &pl->w_mem));
    if (pl->label) {
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(int), pl->label, &pl->label_mem));
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, (size_t)pl->nregions * sizeof(double), NULL, &pl->shift));
    }
    pl->vec_groups = d->is_gpu ? (size_t)d->compute_units * 4 : (d->compute_units ? d->compute_units : 1);
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, pl->vec_groups * sizeof(double), NULL, &pl->partial));
    cl_mem *vec[3] = {&pl->bint, &pl->rhs_mem, &pl->x_mem};
    for (int i = 0; i < 3; i++) CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, n * sizeof(double), NULL, vec[i]));
    CP_TRY(build_levels(pl));
    /* kernels */
    CP_TRY(ensure_precision(pl, CLPHYS_FP64));
    if (pl->prm.precision == CLPHYS_POISSON_FP32) CP_TRY(ensure_precision(pl, CLPHYS_FP32));
    cp_defines opts = {0};
    cl_program prog;
    cp_define_str(&opts, "REAL_T", "double");
    cp_define_int(&opts, "REAL_IS_DOUBLE", 1);
    cp_define_int(&opts, "VEC_WG", PN_VEC_WG);
    CP_TRY(cp_program(ctx, &clsrc_poisson_vec_cl, &opts, &prog));
    CP_TRY(cp_kernel(ctx, prog, "poisson_rhs", &pl->k_rhs));
    CP_TRY(cp_kernel(ctx, prog, "region_sums", &pl->k_rsum));
    CP_TRY(cp_kernel(ctx, prog, "region_mean", &pl->k_rmean));
    CP_TRY(cp_kernel(ctx, prog, "region_shift", &pl->k_rshift));
    /* staged on GPUs when a tile of 8 columns fits the local memory (nz up
     * to about 680 in fp32 with 48 KiB), column-vec on CPUs */
    const int staged_fits = pn_staged_local_bytes(pl, 8) <= d->local_mem_bytes;
    pl->line = pl->prm.line   ? pl->prm.line
               : !d->is_gpu   ? CLPHYS_POISSON_LINE_COLUMN_VEC
               : staged_fits  ? CLPHYS_POISSON_LINE_STAGED
                              : CLPHYS_POISSON_LINE_COLUMN;
    /* a rank of a distributed plan keeps column-vec: its smoothing steps
     * run on levels whose padded width is a multiple of the lanes, its
     * restriction and prolongation are column's (host/poisson/mpi_solve.c) */
    if (pl->line == CLPHYS_POISSON_LINE_STAGED && pn_staged_local_bytes(pl, 1) > d->local_mem_bytes)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "poisson params: the staged line relaxation keeps 3 (nz | 1) reals per column in local "
                        "memory: %zu bytes for nz %d, the device has %llu",
                        pn_staged_local_bytes(pl, 1), pl->nz, (unsigned long long)d->local_mem_bytes);
    pl->vw = pl->lev_prec == CLPHYS_FP64 ? 4 : 8;
    for (int l = 0; l < pl->nlev; l++)
        pl->lev[l].vec = pl->line == CLPHYS_POISSON_LINE_COLUMN_VEC && pl->lev[l].nx % pl->vw == 0;
    CP_TRY(pn_vcycle_build(pl));
    CP_TRY(clphys_poisson_set_vcycle_shape(pl, pl->prm.vcycle_local_size));
    CP_TRY(pn_choose_stencil(pl));
    /* the solver's spaces: fp64 always (outer residual, and the CG unless
     * fp32), fp32 for the fp32 CG */
    CP_TRY(cp_queue_create(ctx, 0, &pl->reads));
    la_space_params sq = {.precision = CLPHYS_FP64, .n = n, .blas = LA_BLAS_FUSED, .reads = pl->reads};
    CP_TRY(la_space_create(ctx, &sq, &pl->s64));
    pn_stencil_operator(pl, CLPHYS_FP64, pl->s64, &pl->op64);
    if (pl->prm.precision == CLPHYS_POISSON_FP32) {
        sq.precision = CLPHYS_FP32;
        CP_TRY(la_space_create(ctx, &sq, &pl->s32));
        pn_stencil_operator(pl, CLPHYS_FP32, pl->s32, &pl->op32);
        pn_vcycle_precond(pl, pl->s32, &pl->M);
    } else {
        pn_vcycle_precond(pl, pl->s64, &pl->M);
    }
    return cp_finish(ctx);
}

/* ---- small public calls ----------------------------------------------------- */

void clphys_poisson_plan_info(const clphys_poisson_plan *pl, clphys_poisson_info *info)
{
    if (!pl || !info) return;
    memset(info, 0, sizeof *info);
    info->nx = pl->nx, info->ny = pl->ny, info->nz = pl->nz;
    info->n = pl->n, info->wet = pl->wet, info->levels = pl->nlev;
    info->singular_regions = pl->nregions;
    info->variant = pl->variant;
    info->line = pl->line;
    info->local_size[0] = (int)pl->local[0], info->local_size[1] = (int)pl->local[1];
    info->tune_source = pl->tune_source;
    info->stencil_bytes_fp64 = 6.0 * 8 * (double)pl->n;
    info->stencil_bytes_fp32 = 6.0 * 4 * (double)pl->n;
    info->vcycle_bytes = pn_vcycle_bytes(pl);
    info->vcycle_local_size[0] = (int)pl->vlocal[0], info->vcycle_local_size[1] = (int)pl->vlocal[1];
}

clphys_status clphys_poisson_plan_operator(const clphys_poisson_plan *pl, double *a, unsigned char *mask, double *w)
{
    if (!pl) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_plan_operator: NULL plan");
    if (a) pn_to_seven(&pl->fine, a);
    for (size_t c = 0; mask && c < pl->n; c++) mask[c] = pl->fine.mask[c] & PN_WET ? 1 : 0;
    if (w) memcpy(w, pl->w, pl->n * sizeof(double));
    return CLPHYS_SUCCESS;
}

clphys_status clphys_poisson_field_create(clphys_poisson_plan *pl, clphys_precision p, cl_mem *field)
{
    if (!pl || !field || (unsigned)p > CLPHYS_FP64)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_field_create: bad argument");
    return cp_buffer(pl->ctx, CL_MEM_READ_WRITE, pl->n * pn_real_size(p), NULL, field);
}

clphys_status clphys_poisson_field_write(clphys_poisson_plan *pl, clphys_precision p, cl_mem field, const double *host)
{
    if (!pl || !field || !host || (unsigned)p > CLPHYS_FP64)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_field_write: bad argument");
    if (p == CLPHYS_FP64) return cp_write(pl->ctx, field, 0, pl->n * 8, host);
    float *f = malloc(pl->n * sizeof(float));
    if (!f) return cp_error(pl->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson field");
    for (size_t i = 0; i < pl->n; i++) f[i] = (float)host[i];
    clphys_status st = cp_write(pl->ctx, field, 0, pl->n * 4, f);
    free(f);
    return st;
}

clphys_status clphys_poisson_field_read(clphys_poisson_plan *pl, clphys_precision p, cl_mem field, double *host)
{
    if (!pl || !field || !host || (unsigned)p > CLPHYS_FP64)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_field_read: bad argument");
    if (p == CLPHYS_FP64) return cp_read(pl->ctx, field, 0, pl->n * 8, host);
    float *f = malloc(pl->n * sizeof(float));
    if (!f) return cp_error(pl->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson field");
    clphys_status st = cp_read(pl->ctx, field, 0, pl->n * 4, f);
    for (size_t i = 0; !st && i < pl->n; i++) host[i] = f[i];
    free(f);
    return st;
}

clphys_status clphys_poisson_apply(clphys_poisson_plan *pl, clphys_precision p, cl_mem y, cl_mem x, double *kernel_s)
{
    if (!pl || !y || !x || y == x || (unsigned)p > CLPHYS_FP64)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_poisson_apply: NULL field, y == x or unknown precision");
    CP_TRY(ensure_precision(pl, p));
    if (kernel_s) *kernel_s = 0;
    return pn_stencil(pl, p, y, x, kernel_s);
}

clphys_status clphys_poisson_set_stencil(clphys_poisson_plan *pl, clphys_poisson_stencil v, const int local_size[2])
{
    if (!pl || v < CLPHYS_POISSON_STENCIL_COLUMN || v > CLPHYS_POISSON_STENCIL_COLUMN_VEC ||
        (v == CLPHYS_POISSON_STENCIL_COLUMN_VEC && pl->nx % 8))
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_poisson_set_stencil: NULL plan, variant not column/cell/column-vec, or column-vec "
                        "with nx %d not a multiple of 8",
                        pl ? pl->nx : 0);
    const size_t lx = local_size && local_size[0] > 0 ? (size_t)local_size[0] : 0;
    const size_t ly = lx && local_size[1] > 0 ? (size_t)local_size[1] : lx ? 1 : 0;
    if (lx * ly > clphys_context_device(pl->ctx)->max_work_group_size)
        return cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_set_stencil: %zux%zu work-items above the "
                        "device's maximum", lx, ly);
    pl->variant = v;
    pl->local[0] = lx, pl->local[1] = ly;
    pl->tune_source = CLPHYS_TUNE_GIVEN;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_poisson_set_vcycle_shape(clphys_poisson_plan *pl, const int local_size[2])
{
    if (!pl) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_set_vcycle_shape: NULL plan");
    const clphys_device_info *d = clphys_context_device(pl->ctx);
    const size_t lx = local_size && local_size[0] > 0 ? (size_t)local_size[0] : 0;
    const size_t ly = lx && local_size[1] > 0 ? (size_t)local_size[1] : lx ? 1 : 0;
    const int staged = pl->line == CLPHYS_POISSON_LINE_STAGED;
    if (lx * ly > pl->vkmax || (staged && pn_staged_local_bytes(pl, lx) > d->local_mem_bytes))
        return cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_poisson_set_vcycle_shape: %zux%zu work-items; the V-cycle kernels take at most %zu "
                        "here%s (%zu of %llu bytes of local memory)",
                        lx, ly, pl->vkmax, staged ? ", and staged tiles of at most the device's local memory" : "",
                        staged ? pn_staged_local_bytes(pl, lx) : 0, (unsigned long long)d->local_mem_bytes);
    /* the default is one shape on every level: PoCL compiles a work-group
     * function per kernel and local size at its first launch (4 s less of a
     * first solve than the runtime's choice, which differs per level);
     * halved until the kernels take it.  staged: tiles of 32 columns (fewer
     * when their local memory would not fit) and 256 work-items, at most
     * one per layer (bench/poisson-notes.md) */
    if (staged && !lx) {
        size_t wx = 32;
        while (wx > 1 && pn_staged_local_bytes(pl, wx) > d->local_mem_bytes) wx /= 2;
        size_t wk = 256 / wx < (size_t)pl->nz ? 256 / wx : (size_t)pl->nz;
        while (wx * wk > pl->vkmax && wx * wk > 1) {
            if (wk > 1) wk /= 2;
            else wx /= 2;
        }
        pl->vlocal[0] = wx, pl->vlocal[1] = wk;
        return CLPHYS_SUCCESS;
    }
    pl->vlocal[0] = lx ? lx : d->is_gpu ? 32 : 16;
    pl->vlocal[1] = lx ? ly : d->is_gpu ? 2 : 1;
    while (!lx && pl->vlocal[0] * pl->vlocal[1] > pl->vkmax && pl->vlocal[0] * pl->vlocal[1] > 1) {
        if (pl->vlocal[1] > 1) pl->vlocal[1] /= 2;
        else pl->vlocal[0] /= 2;
    }
    return CLPHYS_SUCCESS;
}

clphys_status clphys_poisson_vcycle(clphys_poisson_plan *pl, cl_mem z, cl_mem r, double *kernel_s)
{
    if (!pl || !z || !r || z == r)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_vcycle: NULL field or z == r");
    const int timing = pl->timing;
    pl->timing = 0;
    clphys_status st = pn_vcycle_run(pl, z, r, kernel_s);
    pl->timing = timing;
    return st;
}
