/* blas1.cl — the level-1 operations clBLAST does not provide: precision
 * conversion of fields for mixed-precision solves.  Built with -DNEED_FP64. */
#include "common.h"

__kernel void convert_to_single(__global float *restrict dst, __global const double *restrict src, uint n)
{
    const uint i = get_global_id(0);
    if (i < n) dst[i] = (float)src[i];
}

__kernel void convert_to_double(__global double *restrict dst, __global const float *restrict src, uint n)
{
    const uint i = get_global_id(0);
    if (i < n) dst[i] = (double)src[i];
}

/* Level-1 kernels of the solvers' "own-blas" variant (bench path solver
 * compares them with clBLAST).  n counts reals, or complex numbers for c*. */
__kernel void blas_axpy(__global real_t *restrict y, __global const real_t *restrict x, real_t a, uint n)
{
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) y[i] += a * x[i];
}

/* y = x + b y */
__kernel void blas_xpay(__global real_t *restrict y, __global const real_t *restrict x, real_t b, uint n)
{
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = x[i] + b * y[i];
}

/* out = gamma5 in: spins 2,3 negated, i.e. the second half of a SoA field or
 * reals 12..23 of each site's 24 in AoS (in place when out == in, hence no
 * restrict) */
__kernel void blas_gamma5(__global real_t *out, __global const real_t *in, uint n, int aos)
{
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        out[i] = (aos ? i % 24 < 12 : i < n / 2) ? in[i] : -in[i];
}

inline real2_t bl_cmul(real2_t a, real2_t b) { return (real2_t)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

__kernel void blas_caxpy(__global real2_t *restrict y, __global const real2_t *restrict x, real_t are, real_t aim, uint n)
{
    const real2_t a = (real2_t)(are, aim);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) y[i] += bl_cmul(a, x[i]);
}

/* y = x + b y */
__kernel void blas_cxpay(__global real2_t *restrict y, __global const real2_t *restrict x, real_t bre, real_t bim, uint n)
{
    const real2_t b = (real2_t)(bre, bim);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) y[i] = x[i] + bl_cmul(b, y[i]);
}

/* Per-work-group partial sums of sum x_i y_i (real) or sum conj(x_i) y_i
 * (complex, cplx = 1, n complex numbers); the host adds the groups' sums.
 * Local size must be BLAS_WG (a power of two). */
#ifndef BLAS_WG
#define BLAS_WG 256
#endif
__kernel __attribute__((reqd_work_group_size(BLAS_WG, 1, 1))) void
blas_dot_partial(__global real_t *restrict partial, __global const real_t *restrict x, __global const real_t *restrict y,
                 uint n, int cplx)
{
    __local real_t sre[BLAS_WG], sim[BLAS_WG];
    real_t re = 0, im = 0;
    if (cplx) {
        __global const real2_t *x2 = (__global const real2_t *)x, *y2 = (__global const real2_t *)y;
        for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
            real2_t a = x2[i], b = y2[i];
            re += a.x * b.x + a.y * b.y;
            im += a.x * b.y - a.y * b.x;
        }
    } else {
        for (uint i = get_global_id(0); i < n; i += get_global_size(0)) re += x[i] * y[i];
    }
    const uint l = get_local_id(0);
    sre[l] = re, sim[l] = im;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = BLAS_WG / 2; s > 0; s >>= 1) {
        if (l < s) sre[l] += sre[l + s], sim[l] += sim[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) partial[2 * get_group_id(0)] = sre[0], partial[2 * get_group_id(0) + 1] = sim[0];
}
