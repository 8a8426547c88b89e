/*
 * lj.cl — Lennard-Jones forces, potential energy and virial from a Verlet
 * list on cell-sorted particles.  U = 4 eps [(s/r)^12 - (s/r)^6] - shift,
 * F_i += 24 eps [2 (s/r)^12 - (s/r)^6] / r^2 (x_i - x_j), W += r . F per pair.
 * Output f[4*i + 0..2] force, f[4*i + 3] potential energy share of i;
 * vir[i] virial share of i.  Full lists give each i half of every pair's
 * energy and virial; half lists give i the whole of the pairs it owns.
 * Variants: full-csr, full-transposed, full-group, half-cas, half-fixedpoint,
 * cpu (a block of i per work-item, for CPU devices).
 */
#include "common.h"

#ifndef LJ_TPI
#define LJ_TPI 8
#endif
#ifndef LJ_WG
#define LJ_WG 64
#endif
#ifndef LJ_CPU_BLOCK
#define LJ_CPU_BLOCK 16
#endif

typedef struct { real_t rc2, eps4, eps24, sig2, shift; } lj_coef;

/* Pair (i, j): adds the force on i to f, returns r . F and the pair energy. */
inline void lj_pair(real4_t p, real4_t q, real4_t box, real4_t ibox, real_t rc2, real_t eps4, real_t eps24,
                    real_t sig2, real_t shift, real_t *fx, real_t *fy, real_t *fz, real_t *e,
                    real_t *w, real_t *gx, real_t *gy, real_t *gz)
{
    real_t dx = p.x - q.x, dy = p.y - q.y, dz = p.z - q.z;
    /* minimum image by multiplication (ibox = 1/box): divisions are slow,
     * and the result differs from dx / box only at exactly half a box */
    dx -= box.x * rint(dx * ibox.x);
    dy -= box.y * rint(dy * ibox.y);
    dz -= box.z * rint(dz * ibox.z);
    real_t r2 = dx * dx + dy * dy + dz * dz;
    *gx = 0; *gy = 0; *gz = 0;
    if (r2 < rc2) {
        real_t ir2 = REAL_C(1.0) / r2;
        real_t sr2 = sig2 * ir2;
        real_t sr6 = sr2 * sr2 * sr2;
        real_t fpair = eps24 * sr6 * (REAL_C(2.0) * sr6 - REAL_C(1.0)) * ir2;
        *gx = fpair * dx; *gy = fpair * dy; *gz = fpair * dz;
        *fx += *gx; *fy += *gy; *fz += *gz;
        *e += eps4 * sr6 * (sr6 - REAL_C(1.0)) - shift;
        *w += fpair * r2;
    }
}

#define LJ_ARGS real4_t box, real4_t ibox, real_t rc2, real_t eps4, real_t eps24, real_t sig2, real_t shift
#define LJ_PASS box, ibox, rc2, eps4, eps24, sig2, shift

__kernel void lj_full_csr(__global const real4_t *restrict pos, uint n,
                          __global const uint *restrict offset, __global const int *restrict list,
                          LJ_ARGS, __global real_t *f,
                          __global real_t *vir)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0, gx, gy, gz;
    uint hi = offset[i + 1];
    for (uint k = offset[i]; k < hi; k++)
        lj_pair(p, pos[list[k]], LJ_PASS, &fx, &fy, &fz, &e, &w, &gx, &gy, &gz);
    vstore4((real4_t)(fx, fy, fz, REAL_C(0.5) * e), i, f);
    vir[i] = REAL_C(0.5) * w;
}

__kernel void lj_full_transposed(__global const real4_t *restrict pos, uint n,
                                 __global const uint *restrict count, __global const int *restrict list,
                          LJ_ARGS, __global real_t *f,
                                 __global real_t *vir)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0, gx, gy, gz;
    uint m = count[i];
    for (uint k = 0; k < m; k++)
        lj_pair(p, pos[list[(size_t)k * n + i]], LJ_PASS, &fx, &fy, &fz, &e, &w, &gx, &gy, &gz);
    vstore4((real4_t)(fx, fy, fz, REAL_C(0.5) * e), i, f);
    vir[i] = REAL_C(0.5) * w;
}

/* LJ_TPI work-items share one i and stride over its CSR row; partial sums
 * are reduced in local memory (OpenCL 1.2, no sub-group extension). */
__kernel __attribute__((reqd_work_group_size(LJ_WG, 1, 1)))
void lj_full_group(__global const real4_t *restrict pos, uint n,
                   __global const uint *restrict offset, __global const int *restrict list,
                          LJ_ARGS, __global real_t *f, __global real_t *vir)
{
    __local real_t red[5][LJ_WG];
    uint g = get_global_id(0);
    uint t = get_local_id(0);
    uint i = g / LJ_TPI, lane = g % LJ_TPI;
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0, gx, gy, gz;
    if (i < n) {
        real4_t p = pos[i];
        uint hi = offset[i + 1];
        for (uint k = offset[i] + lane; k < hi; k += LJ_TPI)
            lj_pair(p, pos[list[k]], LJ_PASS, &fx, &fy, &fz, &e, &w, &gx, &gy, &gz);
    }
    red[0][t] = fx; red[1][t] = fy; red[2][t] = fz; red[3][t] = e; red[4][t] = w;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = LJ_TPI / 2; s > 0; s >>= 1) {
        if (lane < s)
            for (int c = 0; c < 5; c++) red[c][t] += red[c][t + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && i < n) {
        vstore4((real4_t)(red[0][t], red[1][t], red[2][t], REAL_C(0.5) * red[3][t]), i, f);
        vir[i] = REAL_C(0.5) * red[4][t];
    }
}

/* Newton's third law: -F_ij scattered to j with atomic add built from
 * compare-exchange; f must be zero on entry. */
__kernel void lj_half_cas(__global const real4_t *restrict pos, uint n,
                          __global const uint *restrict offset, __global const int *restrict list,
                          LJ_ARGS, __global real_t *f,
                          __global real_t *vir)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0, gx, gy, gz;
    uint hi = offset[i + 1];
    for (uint k = offset[i]; k < hi; k++) {
        int j = list[k];
        lj_pair(p, pos[j], LJ_PASS, &fx, &fy, &fz, &e, &w, &gx, &gy, &gz);
        if (gx != 0 || gy != 0 || gz != 0) {
            atomic_add_real((volatile __global real_t *)&f[4 * j + 0], -gx);
            atomic_add_real((volatile __global real_t *)&f[4 * j + 1], -gy);
            atomic_add_real((volatile __global real_t *)&f[4 * j + 2], -gz);
        }
    }
    atomic_add_real((volatile __global real_t *)&f[4 * i + 0], fx);
    atomic_add_real((volatile __global real_t *)&f[4 * i + 1], fy);
    atomic_add_real((volatile __global real_t *)&f[4 * i + 2], fz);
    f[4 * i + 3] = e;
    vir[i] = w;
}

#ifdef LJ_FIXED
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
/* Deterministic: forces as int64 fixed point (scale FIXED_SCALE, a power of
 * two chosen by the host), so the sum is independent of the order of adds;
 * *bad is set when a value does not fit. fx3 must be zero on entry. */
inline void lj_fixed_add(volatile __global long *a, real_t v, volatile __global uint *bad)
{
    real_t s = v * (real_t)FIXED_SCALE;
    if (!(fabs(s) < (real_t)9.0e18)) { atomic_or(bad, 1u); return; }
    atom_add(a, (long)rint(s));
}

__kernel void lj_half_fixed(__global const real4_t *pos, uint n, __global const uint *offset,
                            __global const int *list, LJ_ARGS, volatile __global long *fx3,
                            __global real_t *f, __global real_t *vir, volatile __global uint *bad)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0, gx, gy, gz;
    uint hi = offset[i + 1];
    for (uint k = offset[i]; k < hi; k++) {
        int j = list[k];
        lj_pair(p, pos[j], LJ_PASS, &fx, &fy, &fz, &e, &w, &gx, &gy, &gz);
        if (gx != 0 || gy != 0 || gz != 0) {
            lj_fixed_add(&fx3[3 * j + 0], -gx, bad);
            lj_fixed_add(&fx3[3 * j + 1], -gy, bad);
            lj_fixed_add(&fx3[3 * j + 2], -gz, bad);
        }
    }
    /* i's own sum runs in list order, which is deterministic (sorted cells) */
    lj_fixed_add(&fx3[3 * i + 0], fx, bad);
    lj_fixed_add(&fx3[3 * i + 1], fy, bad);
    lj_fixed_add(&fx3[3 * i + 2], fz, bad);
    f[4 * i + 3] = e;
    vir[i] = w;
}

/* Fixed point back to real_t, into f[4*i + 0..2]. */
__kernel void lj_fixed_convert(__global const long *fx3, __global real_t *f, uint n)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    for (int c = 0; c < 3; c++) f[4 * i + c] = (real_t)fx3[3 * i + c] * (REAL_C(1.0) / (real_t)FIXED_SCALE);
}
#endif

/* CPU-shaped: each work-item walks a contiguous block of LJ_CPU_BLOCK
 * particles (cache-friendly on cell-sorted data, no local memory, no barriers). */
__kernel void lj_cpu(__global const real4_t *pos, uint n, __global const uint *offset,
                     __global const int *list, LJ_ARGS, __global real_t *f, __global real_t *vir)
{
    uint i0 = get_global_id(0) * LJ_CPU_BLOCK;
    uint i1 = min(i0 + LJ_CPU_BLOCK, n);
    for (uint i = i0; i < i1; i++) {
        real4_t p = pos[i];
        real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0, gx, gy, gz;
        uint hi = offset[i + 1];
        for (uint k = offset[i]; k < hi; k++)
            lj_pair(p, pos[list[k]], LJ_PASS, &fx, &fy, &fz, &e, &w, &gx, &gy, &gz);
        vstore4((real4_t)(fx, fy, fz, REAL_C(0.5) * e), i, f);
        vir[i] = REAL_C(0.5) * w;
    }
}
