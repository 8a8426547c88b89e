/*
 * vec_cpu.h — one AVX-512 register of real_t for the CPU-shaped md kernels
 * (neighbor_cpu.cl, lj_cpu.cl): VW lanes (float16 or double8), the
 * transposition of VW real4 particles into x, y, z vectors, and rint.
 */
#ifndef CLPHYS_CL_VEC_CPU_H
#define CLPHYS_CL_VEC_CPU_H

#ifdef REAL_IS_DOUBLE
#define VW 8
typedef double8 vr_t;
typedef int8 vi_t;
typedef ulong4 vhalfmask_t;
#define VLOADR vload8
#define VM_TO_INT convert_int8
#define VM_FROM_INT convert_long8
#define VLANES (vi_t)(0, 1, 2, 3, 4, 5, 6, 7)
#define VBITS (vi_t)(1, 2, 4, 8, 16, 32, 64, 128)
#define VHALF(c) (vhalfmask_t)(c, c + 4, c + 8, c + 12)
#define VROUND_MAGIC 6755399441055744.0 /* 1.5 * 2^52 */
/* VW real4 particles q(0) .. q(VW-1) as 4 vectors of VW/4 particles each */
#define VEC_CAT(q) (vr_t)(q(0), q(1)), (vr_t)(q(2), q(3)), (vr_t)(q(4), q(5)), (vr_t)(q(6), q(7))
#else
#define VW 16
typedef float16 vr_t;
typedef int16 vi_t;
typedef uint8 vhalfmask_t;
#define VLOADR vload16
#define VM_TO_INT
#define VM_FROM_INT
#define VLANES (vi_t)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define VBITS                                                                                 \
    (vi_t)(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)
#define VHALF(c) (vhalfmask_t)(c, c + 4, c + 8, c + 12, c + 16, c + 20, c + 24, c + 28)
#define VROUND_MAGIC 12582912.0f /* 1.5 * 2^23 */
#define VEC_CAT(q)                                                                            \
    (vr_t)(q(0), q(1), q(2), q(3)), (vr_t)(q(4), q(5), q(6), q(7)),                           \
        (vr_t)(q(8), q(9), q(10), q(11)), (vr_t)(q(12), q(13), q(14), q(15))
#endif

/* a, b, c, d: VW/4 particles each (x y z w x y z w ...) -> x, y, z of all VW */
#define VEC_TRANSPOSE(a, b, c, d, x, y, z)                                                    \
    do {                                                                                      \
        vr_t a_ = (a), b_ = (b), c_ = (c), d_ = (d);                                          \
        x = (vr_t)(shuffle2(a_, b_, VHALF(0)), shuffle2(c_, d_, VHALF(0)));                   \
        y = (vr_t)(shuffle2(a_, b_, VHALF(1)), shuffle2(c_, d_, VHALF(1)));                   \
        z = (vr_t)(shuffle2(a_, b_, VHALF(2)), shuffle2(c_, d_, VHALF(2)));                   \
    } while (0)

/* The same from VW particles q(0) .. q(VW-1) (a macro giving a real4). */
#define VEC_TRANSPOSE_(...) VEC_TRANSPOSE(__VA_ARGS__)
#define VEC_TRANSPOSE_Q(q, x, y, z) VEC_TRANSPOSE_(VEC_CAT(q), x, y, z)

/* rint for |v| < 2^22 (float) / 2^51 (double) in round-to-nearest mode, as
 * two adds: PoCL expands rint() itself into a long integer sequence. */
inline vr_t vrint(vr_t v)
{
    return (v + (real_t)VROUND_MAGIC) - (real_t)VROUND_MAGIC;
}

#endif
