/*
 * platform_common.h — shared by every kernel file.  Precision is chosen on the host by
 * -DREAL_T=float|double (and -DREAL_IS_DOUBLE=1 for double); real_t, real2_t,
 * real4_t follow it.  OpenCL C 1.2 has no floating-point atomic add, so the
 * fp32 one is built here from compare-and-exchange on the bit pattern.
 *
 * Optional extensions are enabled here and nowhere else, each under the
 * macro by which the host says it checked the device for it
 * (platform/require.c): REAL_IS_DOUBLE or NEED_FP64 -> cl_khr_fp64,
 * NEED_INT64_ATOMICS -> cl_khr_int64_base_atomics.  A kernel using one
 * without its macro fails to build on a compiler that lacks it.
 */
#ifndef CLPHYS_CL_COMMON_H
#define CLPHYS_CL_COMMON_H

#ifndef REAL_T
#define REAL_T float
#endif

#if defined(REAL_IS_DOUBLE) || defined(NEED_FP64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifdef NEED_INT64_ATOMICS
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

#ifdef REAL_IS_DOUBLE
typedef double real_t;
typedef double2 real2_t;
typedef double4 real4_t;
typedef double8 real8_t;
typedef double16 real16_t;
#define REAL_C(x) x
#else
typedef float real_t;
typedef float2 real2_t;
typedef float4 real4_t;
typedef float8 real8_t;
typedef float16 real16_t;
#define REAL_C(x) x##f
#endif

/* INTEL_SG=w, given by the host on Intel GPUs only (platform/program.c):
 * the kernels marked KERNEL_SG run in sub-groups of w work-items, the
 * SIMD width Intel's compiler then uses (cl_intel_required_subgroup_size,
 * which those GPUs report with cl_intel_subgroups). */
#ifdef INTEL_SG
#define KERNEL_SG __attribute__((intel_reqd_sub_group_size(INTEL_SG)))
#else
#define KERNEL_SG
#endif

/* x += v for a float in global memory, from atomic_cmpxchg on its bits. */
static inline void atomic_add_float(volatile __global float *p, float v)
{
    union {
        unsigned int u;
        float f;
    } oldv, newv;
    do {
        oldv.f = *p;
        newv.f = oldv.f + v;
    } while (atomic_cmpxchg((volatile __global unsigned int *)p, oldv.u, newv.u) != oldv.u);
}

/* a[t] becomes a[0] + ... + a[t] for t < n (work-item t of a work-group
 * of n, all of them calling it): Hillis-Steele in local memory, a barrier
 * each way per step; the caller's barrier before it covers its writes of
 * a. */
static inline void wg_inclusive_scan(__local uint *a, uint t, uint n)
{
    for (uint d = 1; d < n; d <<= 1) {
        uint v = t >= d ? a[t - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        a[t] += v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

#endif /* CLPHYS_CL_COMMON_H */
