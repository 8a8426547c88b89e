/* fields.c — the Poisson path's pieces on device fields (benchmarks,
 * embedding): fields in either precision, y = A x, one V-cycle. */
#include "poisson_internal.h"

#include <stdlib.h>

clphys_status clphys_poisson_field_create(clphys_poisson_plan *pl, clphys_precision p, cl_mem *field)
{
    if (!pl || !field || (unsigned)p > CLPHYS_FP64)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_field_create: bad argument");
    return cp_buffer(pl->ctx, CL_MEM_READ_WRITE, pl->n * poisson_real_size(p), NULL, field);
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
    CP_TRY(poisson_ensure_precision(pl, p));
    if (kernel_s) *kernel_s = 0;
    return poisson_stencil(pl, p, y, x, kernel_s);
}

clphys_status clphys_poisson_vcycle(clphys_poisson_plan *pl, cl_mem z, cl_mem r, double *kernel_s)
{
    if (!pl || !z || !r || z == r)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_poisson_vcycle: NULL field or z == r");
    const int timing = pl->timing;
    pl->timing = 0;
    clphys_status st = poisson_vcycle_run(pl, z, r, kernel_s);
    pl->timing = timing;
    return st;
}
