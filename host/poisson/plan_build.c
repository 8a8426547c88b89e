/* plan_build.c — what a Poisson plan builds once its fine operator is set:
 * the singular regions and their weights, the upload of the operator in the
 * precisions used, the multigrid levels (coarsened on the host in fp64,
 * each uploaded as it is made), the kernels and the linear-algebra spaces. */
#include "poisson_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static clphys_status upload_op(clphys_context *ctx, clphys_precision p, const poisson_op *op, cl_mem a[POISSON_NCOEF])
{
    const double *src[POISSON_NCOEF] = {op->e, op->ax, op->ay, op->az};
    for (int i = 0; i < POISSON_NCOEF; i++) CP_TRY(upload(ctx, p, src[i], op->n, &a[i]));
    return CLPHYS_SUCCESS;
}

/* the fp32 copy of A and its stencil kernels, made on first use */
clphys_status poisson_ensure_precision(clphys_poisson_plan *pl, clphys_precision p)
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
    const size_t rs = poisson_real_size(pl->lev_prec);
    poisson_op cur = pl->fine, next;
    clphys_status st = CLPHYS_SUCCESS;
    for (int l = 0; l < nlev && !st; l++) {
        poisson_level *L = &pl->lev[l];
        if (l > 0 && pl->dist_levels) { /* a rank's block: given, halo included */
            cur = pl->dist_ops[l - 1];
            L->sx = L->sy = 1;
        } else if (l > 0) {
            if ((st = poisson_coarsen(ctx, &cur, pl->prm.coarse_scale, &next, &L->sx, &L->sy))) break;
            if (l > 1) poisson_op_free(&cur);
            cur = next;
        }
        L->nx = cur.nx, L->ny = cur.ny, L->n = cur.n;
        if (l == 0) { /* the fine arrays of the V-cycle's precision */
            for (int i = 0; i < POISSON_NCOEF; i++) L->a[i] = pl->lev_prec == CLPHYS_FP64 ? pl->a64[i] : pl->a32[i];
        } else {
            L->own_a = 1;
            st = upload_op(ctx, pl->lev_prec, &cur, L->a);
        }
        if (!st) st = cp_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, cur.n, cur.mask, &L->mask);
        for (int i = 0; i < 2 && !st; i++) st = cp_buffer(ctx, CL_MEM_READ_WRITE, cur.n * rs, NULL, &L->x[i]);
        if (!st && l > 0) st = cp_buffer(ctx, CL_MEM_READ_WRITE, cur.n * rs, NULL, &L->b);
    }
    if (nlev > 1 && cur.e != pl->fine.e && !pl->dist_levels) poisson_op_free(&cur);
    return st;
}

clphys_status poisson_plan_finish(clphys_poisson_plan *pl)
{
    clphys_context *ctx = pl->ctx;
    const clphys_device_info *d = clphys_context_device(ctx);
    const size_t n = pl->n;
    for (size_t c = 0; c < n; c++) pl->wet += pl->fine.mask[c] & POISSON_WET;
    /* singular regions and their weights */
    if (!pl->dist_levels) { /* a distributed plan's rank has its block's labels */
        pl->label = malloc(sizeof(int) * n);
        if (!pl->label) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson plan");
        CP_TRY(poisson_singular_regions(ctx, &pl->fine, pl->label, &pl->nregions));
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
    CP_TRY(poisson_ensure_precision(pl, CLPHYS_FP64));
    if (pl->prm.precision == CLPHYS_POISSON_FP32) CP_TRY(poisson_ensure_precision(pl, CLPHYS_FP32));
    cp_defines opts = {0};
    cl_program prog;
    cp_define_str(&opts, "REAL_T", "double");
    cp_define_int(&opts, "REAL_IS_DOUBLE", 1);
    cp_define_int(&opts, "VEC_WG", POISSON_VEC_WG);
    CP_TRY(cp_program(ctx, &clsrc_poisson_vec_cl, &opts, &prog));
    CP_TRY(cp_kernel(ctx, prog, "poisson_rhs", &pl->k_rhs));
    CP_TRY(cp_kernel(ctx, prog, "region_sums", &pl->k_rsum));
    CP_TRY(cp_kernel(ctx, prog, "region_mean", &pl->k_rmean));
    CP_TRY(cp_kernel(ctx, prog, "region_shift", &pl->k_rshift));
    /* staged on GPUs when a tile of 8 columns fits the local memory (nz up
     * to about 680 in fp32 with 48 KiB), column-vec on CPUs */
    const int staged_fits = poisson_staged_local_bytes(pl, 8) <= d->local_mem_bytes;
    pl->line = pl->prm.line  ? pl->prm.line
               : !d->is_gpu  ? CLPHYS_POISSON_LINE_COLUMN_VEC
               : staged_fits ? CLPHYS_POISSON_LINE_STAGED
                             : CLPHYS_POISSON_LINE_COLUMN;
    /* a rank of a distributed plan keeps column-vec: its smoothing steps
     * run on levels whose padded width is a multiple of the lanes, its
     * restriction and prolongation are column's (host/poisson/mpi_solve.c) */
    if (pl->line == CLPHYS_POISSON_LINE_STAGED && poisson_staged_local_bytes(pl, 1) > d->local_mem_bytes)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "poisson params: the staged line relaxation keeps 3 (nz | 1) reals per column in local "
                        "memory: %zu bytes for nz %d, the device has %llu",
                        poisson_staged_local_bytes(pl, 1), pl->nz, (unsigned long long)d->local_mem_bytes);
    pl->vw = pl->lev_prec == CLPHYS_FP64 ? 4 : 8;
    for (int l = 0; l < pl->nlev; l++)
        pl->lev[l].vec = pl->line == CLPHYS_POISSON_LINE_COLUMN_VEC && pl->lev[l].nx % pl->vw == 0;
    CP_TRY(poisson_vcycle_build(pl));
    CP_TRY(clphys_poisson_set_vcycle_shape(pl, pl->prm.vcycle_local_size));
    CP_TRY(poisson_choose_stencil(pl));
    /* the solver's spaces: fp64 always (outer residual, and the CG unless
     * fp32), fp32 for the fp32 CG */
    CP_TRY(cp_queue_create(ctx, 0, &pl->reads));
    la_space_params sq = {.precision = CLPHYS_FP64, .n = n, .blas = LA_BLAS_FUSED, .reads = pl->reads};
    CP_TRY(la_space_create(ctx, &sq, &pl->s64));
    poisson_stencil_operator(pl, CLPHYS_FP64, pl->s64, &pl->op64);
    if (pl->prm.precision == CLPHYS_POISSON_FP32) {
        sq.precision = CLPHYS_FP32;
        CP_TRY(la_space_create(ctx, &sq, &pl->s32));
        poisson_stencil_operator(pl, CLPHYS_FP32, pl->s32, &pl->op32);
        poisson_vcycle_precond(pl, pl->s32, &pl->M);
    } else {
        poisson_vcycle_precond(pl, pl->s64, &pl->M);
    }
    return cp_finish(ctx);
}
