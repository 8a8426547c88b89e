/* plan_info.c — what a Poisson plan chose and holds (its info, its fine
 * operator), and the calls that change its kernels' shapes. */
#include "poisson_internal.h"

#include <string.h>

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
    info->vcycle_bytes = poisson_vcycle_bytes(pl);
    info->vcycle_local_size[0] = (int)pl->vlocal[0], info->vcycle_local_size[1] = (int)pl->vlocal[1];
}

clphys_status clphys_poisson_plan_operator(const clphys_poisson_plan *pl, double *a, unsigned char *mask, double *w)
{
    if (!pl) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_plan_operator: NULL plan");
    if (a) poisson_to_seven(&pl->fine, a);
    for (size_t c = 0; mask && c < pl->n; c++) mask[c] = pl->fine.mask[c] & POISSON_WET ? 1 : 0;
    if (w) memcpy(w, pl->w, pl->n * sizeof(double));
    return CLPHYS_SUCCESS;
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
        return cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_poisson_set_stencil: %zux%zu work-items above the "
                        "device's maximum",
                        lx, ly);
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
    if (lx * ly > pl->vkmax || (staged && poisson_staged_local_bytes(pl, lx) > d->local_mem_bytes))
        return cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_poisson_set_vcycle_shape: %zux%zu work-items; the V-cycle kernels take at most %zu "
                        "here%s (%zu of %llu bytes of local memory)",
                        lx, ly, pl->vkmax, staged ? ", and staged tiles of at most the device's local memory" : "",
                        staged ? poisson_staged_local_bytes(pl, lx) : 0, (unsigned long long)d->local_mem_bytes);
    /* the default is one shape on every level: PoCL compiles a work-group
     * function per kernel and local size at its first launch (4 s less of a
     * first solve than the runtime's choice, which differs per level);
     * halved until the kernels take it.  staged: tiles of 32 columns (fewer
     * when their local memory would not fit) and 256 work-items, at most
     * one per layer (bench/poisson-notes.md) */
    if (staged && !lx) {
        size_t wx = 32;
        while (wx > 1 && poisson_staged_local_bytes(pl, wx) > d->local_mem_bytes) wx /= 2;
        size_t wk = 256 / wx < (size_t)pl->nz ? 256 / wx : (size_t)pl->nz;
        while (wx * wk > pl->vkmax && wx * wk > 1) {
            if (wk > 1)
                wk /= 2;
            else
                wx /= 2;
        }
        pl->vlocal[0] = wx, pl->vlocal[1] = wk;
        return CLPHYS_SUCCESS;
    }
    pl->vlocal[0] = lx ? lx : d->is_gpu ? 32 : 16;
    pl->vlocal[1] = lx ? ly : d->is_gpu ? 2 : 1;
    while (!lx && pl->vlocal[0] * pl->vlocal[1] > pl->vkmax && pl->vlocal[0] * pl->vlocal[1] > 1) {
        if (pl->vlocal[1] > 1)
            pl->vlocal[1] /= 2;
        else
            pl->vlocal[0] /= 2;
    }
    return CLPHYS_SUCCESS;
}
