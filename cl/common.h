/*
 * common.h — shared by every kernel file.  Precision is chosen on the host by
 * -DREAL_T=float|double (and -DREAL_IS_DOUBLE=1 for double); real_t, real2_t,
 * real4_t follow it.  OpenCL C 1.2 has no floating-point atomic add, so it is
 * built here from compare-and-exchange on the bit pattern, and from int64
 * fixed point for deterministic sums.
 */
#ifndef CLPHYS_CL_COMMON_H
#define CLPHYS_CL_COMMON_H

#ifndef REAL_T
#define REAL_T float
#endif

#if defined(REAL_IS_DOUBLE) || defined(NEED_FP64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
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

/* x += v for a float in global memory, from atomic_cmpxchg on its bits. */
inline void atomic_add_float(volatile __global float *p, float v)
{
    union { unsigned int u; float f; } oldv, newv;
    do {
        oldv.f = *p;
        newv.f = oldv.f + v;
    } while (atomic_cmpxchg((volatile __global unsigned int *)p, oldv.u, newv.u) != oldv.u);
}

#if defined(REAL_IS_DOUBLE) || defined(NEED_INT64_ATOMICS)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

#ifdef REAL_IS_DOUBLE
/* x += v for a double in global memory, from atom_cmpxchg on its 64 bits
 * (needs cl_khr_int64_base_atomics; the host checks before building). */
inline void atomic_add_double(volatile __global double *p, double v)
{
    union { unsigned long u; double f; } oldv, newv;
    do {
        oldv.f = *p;
        newv.f = oldv.f + v;
    } while (atom_cmpxchg((volatile __global unsigned long *)p, oldv.u, newv.u) != oldv.u);
}
#define atomic_add_real atomic_add_double
#else
#define atomic_add_real atomic_add_float
#endif

#if defined(REAL_IS_DOUBLE) || defined(NEED_INT64_ATOMICS)
/* Deterministic accumulation: v is scaled by FIXED_SCALE (host-chosen, a power
 * of two) and added as a 64-bit integer, so the sum does not depend on order. */
#ifndef FIXED_SCALE
#define FIXED_SCALE 4294967296.0 /* 2^32 */
#endif
inline void atomic_add_fixed(volatile __global long *p, real_t v)
{
    atom_add(p, (long)rint((double)v * FIXED_SCALE));
}
#endif

#endif /* CLPHYS_CL_COMMON_H */
