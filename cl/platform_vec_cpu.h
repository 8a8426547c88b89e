/*
 * platform_vec_cpu.h — one AVX-512 register of real_t for the CPU-shaped md kernels
 * (md_neighbor_cpu.cl, md_lj_cpu.cl): VW lanes (float16 or double8), VW real4
 * particles as 4 AoS vectors, their r^2 in particle order, and rint.
 */
#ifndef CLPHYS_CL_VEC_CPU_H
#define CLPHYS_CL_VEC_CPU_H

#ifdef REAL_IS_DOUBLE
#define VW 8
typedef double8 vr_t;
typedef int8 vi_t;
#define VLOADR       vload8
#define VM_TO_INT    convert_int8
#define VM_FROM_INT  convert_long8
#define VLANES       (vi_t)(0, 1, 2, 3, 4, 5, 6, 7)
#define VBITS        (vi_t)(1, 2, 4, 8, 16, 32, 64, 128)
#define VROUND_MAGIC 6755399441055744.0 /* 1.5 * 2^52 */
#else
#define VW     16
typedef float16 vr_t;
typedef int16 vi_t;
#define VLOADR vload16
#define VM_TO_INT
#define VM_FROM_INT
#define VLANES       (vi_t)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define VBITS        (vi_t)(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)
#define VROUND_MAGIC 12582912.0f /* 1.5 * 2^23 */
#endif

/* ---- the AoS form: 4 vectors m = 0..3 of VW/4 whole particles each
 * (x y z w x y z w ...), particles m VW/4 .. (m+1) VW/4 - 1.  The distance is
 * taken componentwise and only r2 is gathered into particle order (6
 * two-source shuffles); a full transposition into x, y, z vectors made the
 * Verlet build ~1.5x slower (LLVM lowers it to ~60 inserts and blends). */
#ifdef REAL_IS_DOUBLE
typedef ulong8 vperm_t;
typedef long8 vbits_t;
#define as_vbits  as_long8
#define as_vr     as_double8
#define VEVEN     (vperm_t)(0, 2, 4, 6, 8, 10, 12, 14)
#define VODD      (vperm_t)(1, 3, 5, 7, 9, 11, 13, 15)
#define VXYZ_BITS (vbits_t)(-1, -1, -1, 0, -1, -1, -1, 0)
#define VREP4(v)  (vr_t)(v, v)
/* lanes of particle-order vector f spread over the 4 components of AoS vector m */
#define VSPREAD(m) (vperm_t)(2 * m, 2 * m, 2 * m, 2 * m, 2 * m + 1, 2 * m + 1, 2 * m + 1, 2 * m + 1)
#define VSUM4(v)   ((v).lo + (v).hi)
#define VEC_AOS(q, a0, a1, a2, a3)                                                                                     \
    do {                                                                                                               \
        a0 = (vr_t)(q(0), q(1));                                                                                       \
        a1 = (vr_t)(q(2), q(3));                                                                                       \
        a2 = (vr_t)(q(4), q(5));                                                                                       \
        a3 = (vr_t)(q(6), q(7));                                                                                       \
    } while (0)
#else
typedef uint16 vperm_t;
typedef int16 vbits_t;
#define as_vbits  as_int16
#define as_vr     as_float16
#define VEVEN     (vperm_t)(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30)
#define VODD      (vperm_t)(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31)
#define VXYZ_BITS (vbits_t)(-1, -1, -1, 0, -1, -1, -1, 0, -1, -1, -1, 0, -1, -1, -1, 0)
#define VREP4(v)  (vr_t)(v, v, v, v)
#define VSPREAD(m)                                                                                                     \
    (vperm_t)(4 * m, 4 * m, 4 * m, 4 * m, 4 * m + 1, 4 * m + 1, 4 * m + 1, 4 * m + 1, 4 * m + 2, 4 * m + 2, 4 * m + 2, \
              4 * m + 2, 4 * m + 3, 4 * m + 3, 4 * m + 3, 4 * m + 3)
#define VSUM4(v) ((v).s0123 + (v).s4567 + (v).s89ab + (v).scdef)
#define VEC_AOS(q, a0, a1, a2, a3)                                                                                     \
    do {                                                                                                               \
        a0 = (vr_t)(q(0), q(1), q(2), q(3));                                                                           \
        a1 = (vr_t)(q(4), q(5), q(6), q(7));                                                                           \
        a2 = (vr_t)(q(8), q(9), q(10), q(11));                                                                         \
        a3 = (vr_t)(q(12), q(13), q(14), q(15));                                                                       \
    } while (0)
#endif

/* x^2 + y^2 + z^2 of the VW particles of AoS vectors d0..d3, in particle
 * order (w ignored) */
static inline vr_t vr2_aos(vr_t d0, vr_t d1, vr_t d2, vr_t d3)
{
    vr_t s0 = as_vr(as_vbits(d0 * d0) & VXYZ_BITS), s1 = as_vr(as_vbits(d1 * d1) & VXYZ_BITS);
    vr_t s2 = as_vr(as_vbits(d2 * d2) & VXYZ_BITS), s3 = as_vr(as_vbits(d3 * d3) & VXYZ_BITS);
    vr_t u = shuffle2(s0, s1, VEVEN) + shuffle2(s0, s1, VODD);
    vr_t v = shuffle2(s2, s3, VEVEN) + shuffle2(s2, s3, VODD);
    return shuffle2(u, v, VEVEN) + shuffle2(u, v, VODD);
}

/* rint for |v| < 2^22 (float) / 2^51 (double) in round-to-nearest mode, as
 * two adds: PoCL expands rint() itself into a long integer sequence. */
static inline vr_t vrint(vr_t v) { return (v + (real_t)VROUND_MAGIC) - (real_t)VROUND_MAGIC; }

#endif
