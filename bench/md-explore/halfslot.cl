/*
 * halfslot.cl — experiment (bench/md-explore/halfslot.c): half-cas with the
 * j side summed in local memory through list entries that carry j's slot.
 *
 * Host-built input: particles in block order (work-group g owns block g of
 * cells: i = bstart[g] .. bstart[g+1]-1); a half list by half-space (j is
 * listed by i when j - i points to the upper half-space), so every i has
 * about half its neighbours whatever its place in the cell; the transposed
 * layout jl[k * n + i] with the slot of j in the block's accumulators in
 * sl[k * n + i] (slots 0 .. ni-1 are the block's own i); slot_j[sstart[g] +
 * s] names the particle of slot s.  ACC: 0 no j scatter (bound), 1 plain
 * local adds (racy, bound), 2 local compare-exchange on the float bits,
 * 3 local int64 fixed point atom_add, 4 local compare-exchange batched over
 * the UNROLL entries of a step (guesses read before the pair math, all
 * exchanges issued before any result is examined).  The slots go to f by global
 * compare-exchange (other blocks add to the same particles); f zero on entry.
 */
#include "common.h"

#ifdef REAL_IS_DOUBLE
#define HU ulong
#define AS_U as_ulong
#define AS_R as_double
#define CMPX atom_cmpxchg
#else
#define HU uint
#define AS_U as_uint
#define AS_R as_float
#define CMPX atomic_cmpxchg
#endif
#ifndef ACC
#define ACC 2
#endif
#ifndef UNROLL
#define UNROLL 2
#endif
#ifndef WG
#define WG 192
#endif
#ifndef SLOTS
#define SLOTS 1024
#endif
#define NF ((SLOTS + WG - 1) / WG)

#if ACC == 4
#define ACC_BATCH 1
#undef ACC
#define ACC 2
#endif
#if ACC == 3
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
typedef long acc_t;
#ifdef REAL_IS_DOUBLE
#define FIX_S 281474976710656.0
#else
#define FIX_S 4294967296.0f
#endif
#else
typedef HU acc_t;
#endif

inline void ladd(volatile __local acc_t *a, uint s, real_t vx, real_t vy, real_t vz)
{
#if ACC == 1
    a[s] = AS_U(AS_R(a[s]) + vx);
    a[SLOTS + s] = AS_U(AS_R(a[SLOTS + s]) + vy);
    a[2 * SLOTS + s] = AS_U(AS_R(a[2 * SLOTS + s]) + vz);
#elif ACC == 2
    volatile __local HU *u = a + s;
    HU ex = u[0], ey = u[SLOTS], ez = u[2 * SLOTS];
    int dx = 0, dy = 0, dz = 0;
    for (;;) {
        HU rx = dx ? ex : CMPX(&u[0], ex, AS_U(AS_R(ex) + vx));
        HU ry = dy ? ey : CMPX(&u[SLOTS], ey, AS_U(AS_R(ey) + vy));
        HU rz = dz ? ez : CMPX(&u[2 * SLOTS], ez, AS_U(AS_R(ez) + vz));
        dx = rx == ex; dy = ry == ey; dz = rz == ez;
        if (dx && dy && dz) break;
        ex = rx; ey = ry; ez = rz;
    }
#elif ACC == 3
    atom_add(&a[s], (long)rint(vx * FIX_S));
    atom_add(&a[SLOTS + s], (long)rint(vy * FIX_S));
    atom_add(&a[2 * SLOTS + s], (long)rint(vz * FIX_S));
#endif
}

#if ACC == 2
/* one component after a failed exchange: again from the value it returned */
inline void lretry(volatile __local acc_t *u, acc_t e, acc_t r, real_t v)
{
    while (r != e) {
        e = r;
        r = CMPX(u, e, AS_U(AS_R(e) + v));
    }
}
#endif

inline real_t lget(volatile __local acc_t *a, uint s)
{
#if ACC == 3
    return (real_t)a[s] * (REAL_C(1.0) / FIX_S);
#else
    return AS_R(a[s]);
#endif
}

inline real_t img(real_t d, real_t b)
{
    real_t h = REAL_C(0.5) * b;
    d = d > h ? d - b : d;
    return d < -h ? d + b : d;
}

__kernel void hs_zero(__global real_t *f, uint m)
{
    uint x = get_global_id(0);
    if (x < m) f[x] = 0;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void hs_half(__global const real4_t *restrict pos, uint n, __global const uint *restrict bstart,
             __global const uint *restrict rowi,
             __global const uint *restrict sstart, __global const int *restrict slot_j,
             __global const uint *restrict cnt, __global const int *restrict jl,
             __global const ushort *restrict sl, real4_t box, real_t rc2, real_t eps4, real_t eps24,
             real_t sig2, real_t shift, volatile __global real_t *f, __global real_t *eng,
             __global real_t *vir)
{
    __local acc_t acc[3 * SLOTS];
    uint t = get_local_id(0), g = get_group_id(0);
    uint i0 = bstart[g], ni = bstart[g + 1] - i0, s0 = sstart[g], ns = sstart[g + 1] - s0;
    for (uint s = t; s < ns; s += WG) {
        acc[s] = 0; acc[SLOTS + s] = 0; acc[2 * SLOTS + s] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint q = t; q < ni; q += WG) {
        uint row = i0 + q, i = rowi[row], qi = i - i0; /* qi: i's own slot */
        real4_t p = pos[i];
        uint c = cnt[row];
        real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0;
        for (uint k = 0; k < c; k += UNROLL) {
            int jj[UNROLL];
            uint ss[UNROLL];
            real4_t qq[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                size_t o = (size_t)(k + u) * n + row;
                int ok = k + u < c;
                jj[u] = ok ? jl[o] : (int)i;
                ss[u] = ok ? sl[o] : 0u;
            }
#pragma unroll
            for (int u = 0; u < UNROLL; u++) qq[u] = pos[jj[u]];
#ifdef ACC_BATCH
            HU ex[UNROLL], ey[UNROLL], ez[UNROLL];
            real_t vx[UNROLL], vy[UNROLL], vz[UNROLL];
            int in[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                ex[u] = acc[ss[u]]; ey[u] = acc[SLOTS + ss[u]]; ez[u] = acc[2 * SLOTS + ss[u]];
            }
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                real_t dx = img(p.x - qq[u].x, box.x);
                real_t dy = img(p.y - qq[u].y, box.y);
                real_t dz = img(p.z - qq[u].z, box.z);
                real_t r2 = dx * dx + dy * dy + dz * dz;
                in[u] = k + u < c && r2 < rc2;
                real_t ir2 = REAL_C(1.0) / (in[u] ? r2 : REAL_C(1.0));
                real_t sr2 = sig2 * ir2;
                real_t sr6 = sr2 * sr2 * sr2;
                real_t fp = in[u] ? eps24 * sr6 * (REAL_C(2.0) * sr6 - REAL_C(1.0)) * ir2 : REAL_C(0.0);
                vx[u] = fp * dx; vy[u] = fp * dy; vz[u] = fp * dz;
                fx += vx[u]; fy += vy[u]; fz += vz[u];
                e += in[u] ? eps4 * sr6 * (sr6 - REAL_C(1.0)) - shift : REAL_C(0.0);
                w += fp * r2;
            }
            HU rx[UNROLL], ry[UNROLL], rz[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                if (in[u]) {
                    rx[u] = CMPX(&acc[ss[u]], ex[u], AS_U(AS_R(ex[u]) - vx[u]));
                    ry[u] = CMPX(&acc[SLOTS + ss[u]], ey[u], AS_U(AS_R(ey[u]) - vy[u]));
                    rz[u] = CMPX(&acc[2 * SLOTS + ss[u]], ez[u], AS_U(AS_R(ez[u]) - vz[u]));
                } else {
                    rx[u] = ex[u]; ry[u] = ey[u]; rz[u] = ez[u];
                }
            }
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                if (rx[u] != ex[u] || ry[u] != ey[u] || rz[u] != ez[u]) {
                    lretry(&acc[ss[u]], ex[u], rx[u], -vx[u]);
                    lretry(&acc[SLOTS + ss[u]], ey[u], ry[u], -vy[u]);
                    lretry(&acc[2 * SLOTS + ss[u]], ez[u], rz[u], -vz[u]);
                }
            }
#else
#pragma unroll
            for (int u = 0; u < UNROLL; u++) {
                real_t dx = img(p.x - qq[u].x, box.x);
                real_t dy = img(p.y - qq[u].y, box.y);
                real_t dz = img(p.z - qq[u].z, box.z);
                real_t r2 = dx * dx + dy * dy + dz * dz;
                if (k + u < c && r2 < rc2) {
                    real_t ir2 = REAL_C(1.0) / r2;
                    real_t sr2 = sig2 * ir2;
                    real_t sr6 = sr2 * sr2 * sr2;
                    real_t fp = eps24 * sr6 * (REAL_C(2.0) * sr6 - REAL_C(1.0)) * ir2;
                    real_t gx = fp * dx, gy = fp * dy, gz = fp * dz;
                    fx += gx; fy += gy; fz += gz;
                    e += eps4 * sr6 * (sr6 - REAL_C(1.0)) - shift;
                    w += fp * r2;
#if ACC > 0
                    ladd(acc, ss[u], -gx, -gy, -gz);
#endif
                }
            }
#endif
        }
#if ACC > 0
        ladd(acc, qi, fx, fy, fz);
#else
        acc[qi] = AS_U(fx); acc[SLOTS + qi] = AS_U(fy); acc[2 * SLOTS + qi] = AS_U(fz);
#endif
        eng[i] = e;
        vir[i] = w;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* flush: the old values of NF slots per work-item loaded together */
    int jf[NF];
    real_t vx[NF], vy[NF], vz[NF];
    HU ox[NF], oy[NF], oz[NF];
#pragma unroll
    for (int m = 0; m < NF; m++) {
        uint s = t + (uint)m * WG;
        jf[m] = -1;
        if (s < ns) {
            vx[m] = lget(acc, s); vy[m] = lget(acc, SLOTS + s); vz[m] = lget(acc, 2 * SLOTS + s);
            if (vx[m] != 0 || vy[m] != 0 || vz[m] != 0) {
                jf[m] = slot_j[s0 + s];
                volatile __global HU *u = (volatile __global HU *)f + 4 * (size_t)jf[m];
                ox[m] = u[0]; oy[m] = u[1]; oz[m] = u[2];
            }
        }
    }
#pragma unroll
    for (int m = 0; m < NF; m++) {
        if (jf[m] < 0) continue;
        volatile __global HU *u = (volatile __global HU *)f + 4 * (size_t)jf[m];
        HU ex = ox[m], ey = oy[m], ez = oz[m];
        int dx = 0, dy = 0, dz = 0;
        for (;;) {
            HU rx = dx ? ex : CMPX(&u[0], ex, AS_U(AS_R(ex) + vx[m]));
            HU ry = dy ? ey : CMPX(&u[1], ey, AS_U(AS_R(ey) + vy[m]));
            HU rz = dz ? ez : CMPX(&u[2], ez, AS_U(AS_R(ez) + vz[m]));
            dx = rx == ex; dy = ry == ey; dz = rz == ez;
            if (dx && dy && dz) break;
            ex = rx; ey = ry; ez = rz;
        }
    }
}
