/* level1.c — the level-1 operations a path may call on a space, each
 * dispatched to the fused kernels or clBLAST, and the precision changes
 * between two spaces of one length. */
#include "linalg_internal.h"

/* A fill, not a scaling by 0, which would keep the NaN of fresh buffers. */
clphys_status la_zero(la_space *s, cl_mem x)
{
    const cl_uint z = 0;
    CP_TRY(la_injected(s, LA_FAIL_COPY));
    return cp_fill(s->ctx, x, &z, sizeof z, s->p.n * s->real_size);
}

clphys_status la_copy(la_space *s, cl_mem src, cl_mem dst)
{
    CP_TRY(la_injected(s, LA_FAIL_COPY));
    if (s->p.blas == LA_BLAS_CLBLAST) return la_clblast_copy(s, src, dst);
    return cp_copy(s->ctx, src, 0, dst, 0, s->p.n * s->real_size);
}

clphys_status la_axpy(la_space *s, double a, cl_mem x, cl_mem y)
{
    return s->p.blas == LA_BLAS_CLBLAST ? la_clblast_axpy(s, a, x, y) : la_fused_axpy(s, a, x, y);
}

/* The fp64 one of two spaces of one length (its program has the kernels). */
static clphys_status pair(la_space *d, la_space *s, la_space **hi)
{
    if (d->p.n != s->p.n)
        return cp_error(d->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "linear algebra: vectors of %zu and %zu reals", d->p.n,
                        s->p.n);
    *hi = d->p.precision == CLPHYS_FP64 ? d : s;
    return CLPHYS_SUCCESS;
}

clphys_status la_convert(la_space *d, cl_mem dst, la_space *s, cl_mem src)
{
    la_space *hi = NULL;
    CP_TRY(pair(d, s, &hi));
    if (d->p.precision == s->p.precision) return la_copy(d, src, dst);
    return la_fused_convert(hi, dst, src, d->p.precision == CLPHYS_FP32);
}

clphys_status la_convert_norm(la_space *d, cl_mem dst, la_space *s, cl_mem src, double *norm2)
{
    la_space *hi = NULL;
    CP_TRY(pair(d, s, &hi));
    /* the conversion before the norm's reduction point, so that a failure of
     * it reaches the point (la_reduce) */
    if (d->p.precision == s->p.precision || d->p.precision == CLPHYS_FP64 || s->p.blas == LA_BLAS_CLBLAST) {
        clphys_status st = la_norm2_start(s, src, 0);
        if (!st) st = la_convert(d, dst, s, src);
        return la_norms_finish(s, st, 1, &src, norm2);
    }
    /* fp64 -> fp32 in one pass with the norm */
    double v[2], sums[3];
    clphys_status st = la_fused_convert_single_norm(s, dst, src, s->part[0]);
    if (la_reduce(s, &st, 1, &s->part[0], 2, 0, v)) return st;
    CP_TRY(la_sums_after(s, s->part[0], 2, v, sums));
    *norm2 = sums[0];
    return CLPHYS_SUCCESS;
}

clphys_status la_convert_add(la_space *hi, cl_mem x, cl_mem e, la_space *lo, cl_mem e_lo)
{
    la_space *h = NULL;
    CP_TRY(pair(hi, lo, &h));
    if (hi->p.precision == lo->p.precision) {
        if (e != e_lo) CP_TRY(la_copy(hi, e_lo, e));
        return la_axpy(hi, 1.0, e, x);
    }
    if (hi->p.precision != CLPHYS_FP64)
        return cp_error(hi->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "la_convert_add: the correction is added in fp64");
    if (hi->p.blas == LA_BLAS_CLBLAST) {
        CP_TRY(la_fused_convert(hi, e, e_lo, 0));
        return la_axpy(hi, 1.0, e, x);
    }
    return la_fused_convert_add(hi, x, e, e_lo);
}
