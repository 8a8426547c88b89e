/* linalg_blas1.cl — the level-1 kernels of the linear-algebra layer (host/linalg/,
 * fused.c launches them; linalg.h says when each runs).  Kernels:
 *   convert_to_single, convert_to_double   precision changes of a vector
 *   blas_axpy                              y += a x
 *   blas_dot_partial, blas_norm2_partial   per-work-group partial sums of
 *                                          x.y (or conj(x) y) and |x|^2
 *   blas_sub_norm                          r = b - t with |r|^2 (true residual)
 *   convert_to_single_norm, convert_add    precision changes fused with the
 *                                          norm / the update of x
 *   cg_update_dev, xpay_dev                CG's updates, scalars on the device
 *   bicg_ts, bicg_p_dev, bicg_s_dev,       BiCGStab's fused steps, scalars on
 *   bicg_xr_dev                            the device
 * Built with -DBLAS_WG, the work-group size of the reduction grid (a power
 * of two the host fits to the device), and -DNEED_FP64 where the device has
 * cl_khr_fp64.  Precision of the reductions: each work-item sums its
 * strided elements in the space's precision (real_t), the work-group adds
 * those by a tree in real_t; the partial sums of the groups and the
 * scalars made from them (alpha, beta, omega, BiCGStab's state) are added
 * and divided in acc_t: double with NEED_FP64, else float (an fp32 space on
 * a device without fp64; the conversions between precisions exist only
 * with NEED_FP64).  n counts reals, or complex numbers for the complex
 * kernels; it is always the last argument.
 * The elements of a work-item: with the grid's stride (neighbouring
 * work-items read neighbouring words, coalesced on GPUs), or with
 * -DBLAS_CONTIGUOUS (CPUs) one contiguous run per work-item: PoCL runs a
 * group's work-items one after the other, and a stride of the whole grid
 * then touches a new cache line and page at every element (blas_axpy
 * and cg_update_dev several times slower on two cores). */
#include "platform_common.h"

#ifdef BLAS_CONTIGUOUS
#define FOR_ELEMENTS(i, n)                                                                                             \
    for (uint i##_run = ((n) + get_global_size(0) - 1) / get_global_size(0),                                           \
              i##_end = min((n), (uint)(get_global_id(0) + 1) * i##_run), i = (uint)get_global_id(0) * i##_run;        \
         i < i##_end; i++)
#else
#define FOR_ELEMENTS(i, n) for (uint i = get_global_id(0); i < (n); i += get_global_size(0))
#endif

#ifdef NEED_FP64
typedef double acc_t;
typedef double2 acc2_t;
typedef double4 acc4_t;
#else
typedef float acc_t;
typedef float2 acc2_t;
typedef float4 acc4_t;
#endif

#ifdef NEED_FP64

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

#endif

__kernel void blas_axpy(__global real_t *restrict y, __global const real_t *restrict x, real_t a, uint n)
{
    FOR_ELEMENTS(i, n) y[i] += a * x[i];
}

static inline real2_t bl_cmul(real2_t a, real2_t b) { return (real2_t)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

/* Per-work-group partial sums of sum x_i y_i (real) or sum conj(x_i) y_i
 * (complex, cplx = 1, n complex numbers): two reals per group, the layout
 * every partial sum of two values has.
 * Local size must be BLAS_WG (a power of two). */
#ifndef BLAS_WG
#define BLAS_WG 256
#endif
__kernel __attribute__((reqd_work_group_size(BLAS_WG, 1, 1))) void blas_dot_partial(__global real_t *restrict partial,
                                                                                    __global const real_t *restrict x,
                                                                                    __global const real_t *restrict y,
                                                                                    int cplx, uint n)
{
    __local real_t sre[BLAS_WG], sim[BLAS_WG];
    real_t re = 0, im = 0;
    if (cplx) {
        __global const real2_t *x2 = (__global const real2_t *)x, *y2 = (__global const real2_t *)y;
        FOR_ELEMENTS(i, n)
        {
            real2_t a = x2[i], b = y2[i];
            re += a.x * b.x + a.y * b.y;
            im += a.x * b.y - a.y * b.x;
        }
    } else {
        FOR_ELEMENTS(i, n) re += x[i] * y[i];
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
static inline void group_sum_store(__global real_t *restrict partial, real_t v, __local real_t *s)
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
    FOR_ELEMENTS(i, n) acc += x[i] * x[i];
    group_sum_store(partial, acc, s);
}

/* ---- BiCGStab's level-1 work fused, complex, n complex numbers.
 * Reductions of three values write partial[4 * group + 0..2]. */
static inline void group_sum3_store(__global real_t *restrict partial, real4_t v, __local real4_t *s)
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

/* partial sums of |t|^2 and conj(t) s in one pass */
__kernel __attribute__((reqd_work_group_size(BLAS_WG, 1, 1))) void bicg_ts(__global real_t *restrict partial,
                                                                           __global const real2_t *restrict t,
                                                                           __global const real2_t *restrict s, uint n)
{
    __local real4_t sh[BLAS_WG];
    real4_t acc = (real4_t)(0, 0, 0, 0);
    FOR_ELEMENTS(i, n)
    {
        const real2_t a = t[i], b = s[i];
        acc.x += a.x * a.x + a.y * a.y;
        acc.y += a.x * b.x + a.y * b.y;
        acc.z += a.x * b.y - a.y * b.x;
    }
    group_sum3_store(partial, acc, sh);
}

/* The update of bicg_xr_dev over this work-item's elements; returns its
 * partial |r|^2 and conj(r0) r. */
static inline real4_t bicg_xr_sums(__global real2_t *restrict x, __global real2_t *restrict r,
                                   __global const real2_t *restrict p, __global const real2_t *restrict s,
                                   __global const real2_t *restrict t, __global const real2_t *restrict r0, real2_t a,
                                   real2_t o, uint n)
{
    real4_t acc = (real4_t)(0, 0, 0, 0);
    FOR_ELEMENTS(i, n)
    {
        const real2_t si = s[i], rn = si - bl_cmul(o, t[i]), q = r0[i];
        x[i] += bl_cmul(a, p[i]) + bl_cmul(o, si);
        r[i] = rn;
        acc.x += rn.x * rn.x + rn.y * rn.y;
        acc.y += q.x * rn.x + q.y * rn.y;
        acc.z += q.x * rn.y - q.y * rn.x;
    }
    return acc;
}

/* ---- scalars on the device (host/linalg/: cg.c, cgnr.c, bicgstab.c).
 * A kernel that needs alpha or beta adds the partial sums
 * that an earlier kernel of the queue left (ng groups, m reals per group)
 * itself: every work-group adds the same values in the same order (in
 * acc_t), so all groups get the same scalar, and the host never waits on a
 * reduction inside an iteration.  Results the host must see (|r|^2 for the
 * convergence check, breakdown values) are read asynchronously. */
#define SP_GROUP_SUM(sh, l)                                                                                            \
    do {                                                                                                               \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                                  \
        for (uint k_ = BLAS_WG / 2; k_ > 0; k_ >>= 1) {                                                                \
            if ((l) < k_) sh[l] += sh[(l) + k_];                                                                       \
            barrier(CLK_LOCAL_MEM_FENCE);                                                                              \
        }                                                                                                              \
    } while (0)

/* Components 0..2 of the sums over ng groups of partial[m * g + c] (m = 2 or
 * 4; components past m - 1 are 0).  sh: BLAS_WG acc4_t of local memory. */
static inline acc4_t sum_partials(__global const real_t *restrict partial, uint m, uint ng, __local acc4_t *sh)
{
    const uint l = get_local_id(0);
    acc4_t a = (acc4_t)(0, 0, 0, 0);
    for (uint g = l; g < ng; g += BLAS_WG) {
        a.x += (acc_t)partial[m * g];
        a.y += (acc_t)partial[m * g + 1];
        if (m > 2) a.z += (acc_t)partial[m * g + 2];
    }
    sh[l] = a;
    SP_GROUP_SUM(sh, l);
    const acc4_t r = sh[0];
    barrier(CLK_LOCAL_MEM_FENCE); /* sh may be reused */
    return r;
}

/* a / b for complex numbers in acc_t, 0 when b == 0 */
static inline acc2_t sp_cdiv(acc2_t a, acc2_t b)
{
    const acc_t d = b.x * b.x + b.y * b.y;
    if (d == 0) return (acc2_t)(0, 0);
    return (acc2_t)((a.x * b.x + a.y * b.y) / d, (a.y * b.x - a.x * b.y) / d);
}
static inline acc2_t sp_cmul(acc2_t a, acc2_t b) { return (acc2_t)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

/* CG update with alpha = sum pg / sum pq from the partial sums pg and pq
 * (norm2 layout, two reals per group, ng groups: those of the kernels that
 * wrote them, or 1 once a global sum has reduced them): x += alpha p, r -=
 * alpha q, partial sums of the new |r|^2 into partial (norm2 layout, one pair
 * per group of this launch) and, after them, sum pq for the host's breakdown
 * check.  alpha = 0 when sum pq <= 0 (nothing changes). */
__kernel __attribute__((reqd_work_group_size(BLAS_WG, 1, 1))) void
cg_update_dev(__global real_t *restrict partial, __global real_t *restrict x, __global real_t *restrict r,
              __global const real_t *restrict p, __global const real_t *restrict q, __global const real_t *restrict pg,
              __global const real_t *restrict pq, uint ng, uint n)
{
    __local acc4_t sh[BLAS_WG];
    __local real_t s[BLAS_WG];
    const acc_t gam = sum_partials(pg, 2, ng, sh).x, qq = sum_partials(pq, 2, ng, sh).x;
    const real_t alpha = qq > 0 ? (real_t)(gam / qq) : 0;
    if (get_global_id(0) == 0) partial[2 * get_num_groups(0)] = (real_t)qq;
    real_t acc = 0;
    FOR_ELEMENTS(i, n)
    {
        x[i] += alpha * p[i];
        const real_t ri = r[i] - alpha * q[i];
        r[i] = ri;
        acc += ri * ri;
    }
    group_sum_store(partial, acc, s);
}

/* y = x + beta y, beta = sum(pnum) / sum(pden) (norm2 layout), 0 if the
 * denominator is not positive */
__kernel __attribute__((reqd_work_group_size(BLAS_WG, 1, 1))) void
xpay_dev(__global real_t *restrict y, __global const real_t *restrict x, __global const real_t *restrict pnum,
         __global const real_t *restrict pden, uint ng, uint n)
{
    __local acc4_t sh[BLAS_WG];
    const acc_t num = sum_partials(pnum, 2, ng, sh).x, den = sum_partials(pden, 2, ng, sh).x;
    const real_t b = den > 0 ? (real_t)(num / den) : 0;
    FOR_ELEMENTS(i, n) y[i] = x[i] + b * y[i];
}

/* BiCGStab's scalars in state (acc_t[8]): rho (0,1), alpha (2,3), omega
 * (4,5), <r0, v> (6,7).  pxr: the bicg_xr_dev/bicg_ts layout (four reals per group:
 * |r|^2, conj(r0) r), pd: blas_dot_partial's complex layout, pts: bicg_ts's.
 * Each kernel writes only state entries that no group of it reads. */

/* p = r + beta (p - omega v), beta = (rn / rho) (alpha / omega), rn =
 * conj(r0) r from pxr; first != 0: p = r (the first iteration). */
__kernel __attribute__((reqd_work_group_size(BLAS_WG, 1, 1))) void
bicg_p_dev(__global real2_t *restrict p, __global const real2_t *restrict r, __global const real2_t *restrict v,
           __global const real_t *restrict pxr, __global const acc_t *restrict state, int first, uint ng, uint n)
{
    __local acc4_t sh[BLAS_WG];
    const acc4_t xr = sum_partials(pxr, 4, ng, sh);
    if (first) {
        FOR_ELEMENTS(i, n) p[i] = r[i];
        return;
    }
    const acc2_t rho = (acc2_t)(state[0], state[1]), alpha = (acc2_t)(state[2], state[3]),
                 omega = (acc2_t)(state[4], state[5]);
    const acc2_t bd = sp_cmul(sp_cdiv(xr.yz, rho), sp_cdiv(alpha, omega));
    const real2_t b = (real2_t)((real_t)bd.x, (real_t)bd.y), o = (real2_t)((real_t)omega.x, (real_t)omega.y);
    FOR_ELEMENTS(i, n) p[i] = r[i] + bl_cmul(b, p[i] - bl_cmul(o, v[i]));
}

/* s = r - alpha v with alpha = rn / <r0, v> (pxr, pd); state: rho = rn,
 * alpha, <r0, v> (alpha = 0 when <r0, v> = 0). */
__kernel __attribute__((reqd_work_group_size(BLAS_WG, 1, 1))) void
bicg_s_dev(__global real2_t *restrict s, __global const real2_t *restrict r, __global const real2_t *restrict v,
           __global const real_t *restrict pxr, __global const real_t *restrict pd, __global acc_t *restrict state,
           uint ng, uint n)
{
    __local acc4_t sh[BLAS_WG];
    const acc2_t rn = sum_partials(pxr, 4, ng, sh).yz, d = sum_partials(pd, 2, ng, sh).xy;
    const acc2_t al = sp_cdiv(rn, d);
    if (get_global_id(0) == 0) {
        state[0] = rn.x, state[1] = rn.y, state[2] = al.x, state[3] = al.y;
        state[6] = d.x, state[7] = d.y;
    }
    const real2_t a = (real2_t)((real_t)al.x, (real_t)al.y);
    FOR_ELEMENTS(i, n) s[i] = r[i] - bl_cmul(a, v[i]);
}

/* x += alpha p + omega s, r = s - omega t, partial sums of |r|^2 and
 * conj(r0) r (the next iteration's rho) into partial, with omega = conj(t) s
 * / |t|^2 from pts (0 when |t|^2 = 0) and alpha from state; state: omega. */
__kernel __attribute__((reqd_work_group_size(BLAS_WG, 1, 1))) void
bicg_xr_dev(__global real_t *restrict partial, __global real2_t *restrict x, __global real2_t *restrict r,
            __global const real2_t *restrict p, __global const real2_t *restrict s, __global const real2_t *restrict t,
            __global const real2_t *restrict r0, __global const real_t *restrict pts, __global acc_t *restrict state,
            uint ng, uint n)
{
    __local acc4_t sh[BLAS_WG];
    __local real4_t sa[BLAS_WG];
    const acc4_t ts = sum_partials(pts, 4, ng, sh);
    const acc2_t om = ts.x > 0 ? ts.yz / ts.x : (acc2_t)(0, 0);
    const real2_t a = (real2_t)((real_t)state[2], (real_t)state[3]), o = (real2_t)((real_t)om.x, (real_t)om.y);
    if (get_global_id(0) == 0) state[4] = om.x, state[5] = om.y;
    const real4_t acc = bicg_xr_sums(x, r, p, s, t, r0, a, o, n);
    group_sum3_store(partial, acc, sa);
}

/* ---- the outer loop of a defect correction (host/linalg/refine.c and the
 * paths that drive it) ---- */

/* r = b - t and partial sums of |r|^2 (norm2 layout): the true residual of
 * one parity from t = (D x) of that parity, one pass instead of copy, axpy
 * and norm (6 passes). */
__kernel __attribute__((reqd_work_group_size(BLAS_WG, 1, 1))) void
blas_sub_norm(__global real_t *restrict partial, __global real_t *restrict r, __global const real_t *restrict b,
              __global const real_t *restrict t, uint n)
{
    __local real_t s[BLAS_WG];
    real_t acc = 0;
    FOR_ELEMENTS(i, n)
    {
        const real_t ri = b[i] - t[i];
        r[i] = ri;
        acc += ri * ri;
    }
    group_sum_store(partial, acc, s);
}

#ifdef NEED_FP64
/* dst = (float) src and partial sums of |src|^2 (norm2 layout, in the
 * space's precision, i.e. double for the fp64 outer loop). */
__kernel __attribute__((reqd_work_group_size(BLAS_WG, 1, 1))) void
convert_to_single_norm(__global real_t *restrict partial, __global float *restrict dst,
                       __global const double *restrict src, uint n)
{
    __local real_t s[BLAS_WG];
    real_t acc = 0;
    FOR_ELEMENTS(i, n)
    {
        const double v = src[i];
        dst[i] = (float)v;
        acc += (real_t)(v * v);
    }
    group_sum_store(partial, acc, s);
}

/* e = (double) e32; x += e (a mixed solve's correction) */
__kernel void convert_add(__global double *restrict x, __global double *restrict e, __global const float *restrict e32,
                          uint n)
{
    FOR_ELEMENTS(i, n)
    {
        const double v = (double)e32[i];
        e[i] = v;
        x[i] += v;
    }
}
#endif /* NEED_FP64 */
