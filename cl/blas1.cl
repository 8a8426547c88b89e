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

/* Work-group tree sum of v (real) into partial[2 * group] (the second slot 0),
 * the layout blas_dot_partial writes. */
inline void group_sum_store(__global real_t *restrict partial, real_t v, __local real_t *s)
{
    const uint l = get_local_id(0);
    s[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = BLAS_WG / 2; k > 0; k >>= 1) {
        if (l < k) s[l] += s[l + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) partial[2 * get_group_id(0)] = s[0], partial[2 * get_group_id(0) + 1] = 0;
}

/* Partial sums of |x|^2, reading x once (a dot of x with itself reads it twice). */
__kernel __attribute__((reqd_work_group_size(BLAS_WG, 1, 1))) void
blas_norm2_partial(__global real_t *restrict partial, __global const real_t *restrict x, uint n)
{
    __local real_t s[BLAS_WG];
    real_t acc = 0;
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) acc += x[i] * x[i];
    group_sum_store(partial, acc, s);
}

/* The CG update fused into one pass: x += alpha p, r -= alpha q, and partial
 * sums of the new |r|^2 (6 field passes instead of 8 for axpy, axpy, nrm2). */
__kernel __attribute__((reqd_work_group_size(BLAS_WG, 1, 1))) void
blas_cg_update(__global real_t *restrict partial, __global real_t *restrict x, __global real_t *restrict r,
               __global const real_t *restrict p, __global const real_t *restrict q, real_t alpha, uint n)
{
    __local real_t s[BLAS_WG];
    real_t acc = 0;
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        x[i] += alpha * p[i];
        const real_t ri = r[i] - alpha * q[i];
        r[i] = ri;
        acc += ri * ri;
    }
    group_sum_store(partial, acc, s);
}

/* ---- BiCGStab's level-1 work fused (own_blas), complex, n complex numbers.
 * Reductions of three values write partial[4 * group + 0..2]. */
inline void group_sum3_store(__global real_t *restrict partial, real4_t v, __local real4_t *s)
{
    const uint l = get_local_id(0);
    s[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = BLAS_WG / 2; k > 0; k >>= 1) {
        if (l < k) s[l] += s[l + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) {
        const uint g = get_group_id(0);
        partial[4 * g] = s[0].x, partial[4 * g + 1] = s[0].y, partial[4 * g + 2] = s[0].z, partial[4 * g + 3] = 0;
    }
}

/* p = r + beta (p - omega v) */
__kernel void bicg_p(__global real2_t *restrict p, __global const real2_t *restrict r,
                     __global const real2_t *restrict v, real_t bre, real_t bim, real_t ore, real_t oim, uint n)
{
    const real2_t b = (real2_t)(bre, bim), o = (real2_t)(ore, oim);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) p[i] = r[i] + bl_cmul(b, p[i] - bl_cmul(o, v[i]));
}

/* s = r - alpha v */
__kernel void bicg_s(__global real2_t *restrict s, __global const real2_t *restrict r,
                     __global const real2_t *restrict v, real_t are, real_t aim, uint n)
{
    const real2_t a = (real2_t)(are, aim);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) s[i] = r[i] - bl_cmul(a, v[i]);
}

/* partial sums of |t|^2 and conj(t) s in one pass */
__kernel __attribute__((reqd_work_group_size(BLAS_WG, 1, 1))) void
bicg_ts(__global real_t *restrict partial, __global const real2_t *restrict t, __global const real2_t *restrict s,
        uint n)
{
    __local real4_t sh[BLAS_WG];
    real4_t acc = (real4_t)(0, 0, 0, 0);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        const real2_t a = t[i], b = s[i];
        acc.x += a.x * a.x + a.y * a.y;
        acc.y += a.x * b.x + a.y * b.y;
        acc.z += a.x * b.y - a.y * b.x;
    }
    group_sum3_store(partial, acc, sh);
}

/* x += alpha p + omega s; r = s - omega t; partial sums of |r|^2 and
 * conj(r0) r (the next iteration's rho) */
__kernel __attribute__((reqd_work_group_size(BLAS_WG, 1, 1))) void
bicg_xr(__global real_t *restrict partial, __global real2_t *restrict x, __global real2_t *restrict r,
        __global const real2_t *restrict p, __global const real2_t *restrict s, __global const real2_t *restrict t,
        __global const real2_t *restrict r0, real_t are, real_t aim, real_t ore, real_t oim, uint n)
{
    __local real4_t sh[BLAS_WG];
    const real2_t a = (real2_t)(are, aim), o = (real2_t)(ore, oim);
    real4_t acc = (real4_t)(0, 0, 0, 0);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        const real2_t si = s[i], rn = si - bl_cmul(o, t[i]), q = r0[i];
        x[i] += bl_cmul(a, p[i]) + bl_cmul(o, si);
        r[i] = rn;
        acc.x += rn.x * rn.x + rn.y * rn.y;
        acc.y += q.x * rn.x + q.y * rn.y;
        acc.z += q.x * rn.y - q.y * rn.x;
    }
    group_sum3_store(partial, acc, sh);
}
