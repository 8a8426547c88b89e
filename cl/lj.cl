/*
 * lj.cl — Lennard-Jones forces, potential energy and virial from a Verlet
 * list on cell-sorted particles.  U = 4 eps [(s/r)^12 - (s/r)^6] - shift,
 * F_i += 24 eps [2 (s/r)^12 - (s/r)^6] / r^2 (x_i - x_j), W += r . F per pair.
 * Output f[4*i + 0..2] force, f[4*i + 3] potential energy share of i;
 * vir[i] virial share of i.  Full lists give each i half of every pair's
 * energy and virial; half lists give i the whole of the pairs it owns.
 * Variants: full-csr, full-transposed, full-group, half-cas, half-fixedpoint
 * (GPU-shaped; the cpu variant is cl/lj_cpu.cl).  Positions must lie in
 * [0, box] (lj_image).
 */
#include "common.h"
#include "stage.h"

#ifndef LJ_TPI
#define LJ_TPI 8
#endif
#ifndef LJ_WG
#define LJ_WG 64
#endif
/* neighbours loaded ahead of use per work-item (independent gathers in
 * flight: the H100 kernels are latency-bound, bench/results/md-h100-2026-11-23) */
#ifndef LJ_UNROLL
#define LJ_UNROLL 4
#endif

/* Minimum image for positions inside [0, box] (the host wraps them on
 * upload, the integrator keeps them there): |d| <= box, so one conditional
 * shift; no rint or division (measured: same speed as rint on the H100,
 * ~3x faster on PoCL). */
inline real_t lj_image(real_t d, real_t b)
{
    real_t h = REAL_C(0.5) * b;
    d = d > h ? d - b : d;
    return d < -h ? d + b : d;
}

/* Pair (i, j): adds the force on i to f, returns r . F and the pair energy. */
inline void lj_pair(real4_t p, real4_t q, real4_t box, real_t rc2, real_t eps4, real_t eps24,
                    real_t sig2, real_t shift, real_t *fx, real_t *fy, real_t *fz, real_t *e,
                    real_t *w, real_t *gx, real_t *gy, real_t *gz)
{
    real_t dx = lj_image(p.x - q.x, box.x);
    real_t dy = lj_image(p.y - q.y, box.y);
    real_t dz = lj_image(p.z - q.z, box.z);
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

/* Branch-free pair for the blocked loops: ok = 0 marks a padding slot
 * (q = p), which contributes exactly zero. */
inline void lj_pair_masked(real4_t p, real4_t q, int ok, real4_t box, real_t rc2, real_t eps4,
                           real_t eps24, real_t sig2, real_t shift, real_t *fx, real_t *fy,
                           real_t *fz, real_t *e, real_t *w)
{
    real_t dx = lj_image(p.x - q.x, box.x);
    real_t dy = lj_image(p.y - q.y, box.y);
    real_t dz = lj_image(p.z - q.z, box.z);
    real_t r2 = dx * dx + dy * dy + dz * dz;
    int in = ok && r2 < rc2;
    real_t ir2 = REAL_C(1.0) / (in ? r2 : REAL_C(1.0));
    real_t sr2 = sig2 * ir2;
    real_t sr6 = sr2 * sr2 * sr2;
    real_t fpair = in ? eps24 * sr6 * (REAL_C(2.0) * sr6 - REAL_C(1.0)) * ir2 : REAL_C(0.0);
    *fx += fpair * dx; *fy += fpair * dy; *fz += fpair * dz;
    *e += in ? eps4 * sr6 * (sr6 - REAL_C(1.0)) - shift : REAL_C(0.0);
    *w += fpair * r2;
}

#define LJ_ARGS real4_t box, real4_t ibox, real_t rc2, real_t eps4, real_t eps24, real_t sig2, real_t shift
#define LJ_PASS box, rc2, eps4, eps24, sig2, shift /* ibox: unused (lj_image needs none) */

/* One work-item per i; the CSR row in blocks of LJ_UNROLL (8 here: the
 * gathers of a block are issued before any pair is computed), the last
 * block padded with masked slots. */
__kernel void lj_full_csr(__global const real4_t *restrict pos, uint n,
                          __global const uint *restrict offset, __global const int *restrict list,
                          LJ_ARGS, __global real_t *f, __global real_t *vir)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0;
    uint hi = offset[i + 1];
    for (uint k = offset[i]; k < hi; k += 2 * LJ_UNROLL) {
        real4_t q[2 * LJ_UNROLL];
#pragma unroll
        for (int u = 0; u < 2 * LJ_UNROLL; u++) q[u] = pos[k + u < hi ? list[k + u] : (int)i];
#pragma unroll
        for (int u = 0; u < 2 * LJ_UNROLL; u++)
            lj_pair_masked(p, q[u], k + u < hi, LJ_PASS, &fx, &fy, &fz, &e, &w);
    }
    vstore4((real4_t)(fx, fy, fz, REAL_C(0.5) * e), i, f);
    vir[i] = REAL_C(0.5) * w;
}

/* Minimum image by one fixed shift per i and dimension: with p and q in
 * [0, box], d = p - q can exceed box/2 in magnitude only towards the face
 * nearer to p (p < box/2: d < -box/2, else d > box/2), so the shift is
 * +box or -box decided once per i; per pair one compare and one add. */
inline real_t lj_image1(real_t d, real_t h, real_t s)
{
    return fabs(d) > h ? d + s : d;
}

#ifndef LJ_T_UNROLL
#define LJ_T_UNROLL 2
#endif

/* Branch-free pair for lj_full_transposed: ok = 0 marks a padding slot.
 * ir6 is zeroed beyond r_cut, which zeroes F and U with no other select;
 * F = ir6 (12 c12 ir6 - 6 c6) ir2 d, U = ir6 (c12 ir6 - c6), c12 = 4 eps s^12,
 * c6 = 4 eps s^6 (the energy shift is applied once per in-cut pair by the
 * caller, from *cnt). */
inline void lj_pair_t(real4_t p, real4_t q, int ok, real4_t hbox, real4_t ishift, real_t rc2,
                      real_t c12, real_t c6, real_t c12x12, real_t c6x6, real_t *fx, real_t *fy,
                      real_t *fz, real_t *e, real_t *w, int *cnt)
{
    real_t dx = lj_image1(p.x - q.x, hbox.x, ishift.x);
    real_t dy = lj_image1(p.y - q.y, hbox.y, ishift.y);
    real_t dz = lj_image1(p.z - q.z, hbox.z, ishift.z);
    real_t r2 = fma(dx, dx, fma(dy, dy, dz * dz));
    int in = ok && r2 < rc2;
    real_t ir2 = REAL_C(1.0) / (in ? r2 : REAL_C(1.0));
    real_t ir6 = ir2 * ir2 * ir2;
    ir6 = in ? ir6 : REAL_C(0.0);
    real_t fpair = ir6 * fma(c12x12, ir6, -c6x6) * ir2;
    *fx = fma(fpair, dx, *fx);
    *fy = fma(fpair, dy, *fy);
    *fz = fma(fpair, dz, *fz);
    *e = fma(ir6, fma(c12, ir6, -c6), *e);
    *w = fma(fpair, r2, *w);
    *cnt += in;
}

/* One work-item per i, list[k*n + i] (coalesced index loads).  Software
 * pipeline: while the pairs of block b (LJ_T_UNROLL neighbours) are computed,
 * the positions of block b+1 and the indices of block b+2 are in flight.
 * Measured on the H100 (bench/md-notes.md): the loop was latency-bound on the
 * index -> position load chain; with the pipeline it is bound by the L1's
 * scattered-sector rate of the position gathers. */
__kernel void lj_full_transposed(__global const real4_t *restrict pos, uint n,
                                 __global const uint *restrict count, __global const int *restrict list,
                                 LJ_ARGS, __global real_t *f, __global real_t *vir)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    real4_t hbox = REAL_C(0.5) * box;
    real4_t sh = (real4_t)(p.x < hbox.x ? box.x : -box.x, p.y < hbox.y ? box.y : -box.y,
                           p.z < hbox.z ? box.z : -box.z, 0);
    real_t sig6 = sig2 * sig2 * sig2;
    real_t c6 = eps4 * sig6, c12 = c6 * sig6, c6x6 = eps24 * sig6, c12x12 = REAL_C(2.0) * eps24 * sig6 * sig6;
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0;
    int cnt = 0;
    uint m = count[i];
    int jn[LJ_T_UNROLL];
    real4_t q[LJ_T_UNROLL];
#pragma unroll
    for (int u = 0; u < LJ_T_UNROLL; u++) jn[u] = (uint)u < m ? list[(size_t)u * n + i] : (int)i;
#pragma unroll
    for (int u = 0; u < LJ_T_UNROLL; u++) q[u] = pos[jn[u]];
#pragma unroll
    for (int u = 0; u < LJ_T_UNROLL; u++)
        jn[u] = (uint)(LJ_T_UNROLL + u) < m ? list[(size_t)(LJ_T_UNROLL + u) * n + i] : (int)i;
    for (uint k = 0; k < m; k += LJ_T_UNROLL) {
        real4_t qc[LJ_T_UNROLL];
#pragma unroll
        for (int u = 0; u < LJ_T_UNROLL; u++) qc[u] = q[u];
#pragma unroll
        for (int u = 0; u < LJ_T_UNROLL; u++) q[u] = pos[jn[u]];
#pragma unroll
        for (int u = 0; u < LJ_T_UNROLL; u++) {
            uint kk = k + 2 * LJ_T_UNROLL + u;
            jn[u] = kk < m ? list[(size_t)kk * n + i] : (int)i;
        }
#pragma unroll
        for (int u = 0; u < LJ_T_UNROLL; u++)
            lj_pair_t(p, qc[u], k + u < m, hbox, sh, rc2, c12, c6, c12x12, c6x6, &fx, &fy, &fz, &e,
                      &w, &cnt);
    }
    e -= shift * (real_t)cnt;
    vstore4((real4_t)(fx, fy, fz, REAL_C(0.5) * e), i, f);
    vir[i] = REAL_C(0.5) * w;
}

/* Full list on a staged copy (cl/stage.h, cl/neighbor_staged.cl): work-group
 * b copies the positions of the cells around its block into local memory
 * (x, y, z planes of stride stcap), then each work-item takes particles i of
 * the block (contiguous: the block's cells are consecutive in x) and reads
 * its neighbours' positions from local memory by the slots in
 * list[k * n + i].  lbase holds the block's NS + 1 slot offsets. */
__kernel __attribute__((reqd_work_group_size(LJ_WG, 1, 1)))
void lj_full_staged(__global const real4_t *restrict pos, uint n, __global const uint *restrict count,
                    __global const int *restrict list, LJ_ARGS, __global real_t *f, __global real_t *vir,
                    __global const uint *restrict cell_start, __global const uint *restrict base, int4 nc,
                    int bx, __local real_t *st, uint stcap, __local uint *lbase)
{
    uint b = get_group_id(0), t = get_local_id(0);
    int w = bx + 2, ns = 9 * w;
    for (int s = (int)t; s <= ns; s += LJ_WG) lbase[s] = base[(size_t)b * (ns + 1) + s];
    barrier(CLK_LOCAL_MEM_FENCE);
    uint total = lbase[ns];
    for (uint s = t; s < total; s += LJ_WG) {
        int lo = 0, hi = ns; /* largest lc with lbase[lc] <= s: a non-empty cell */
        while (hi - lo > 1) {
            int mid = (lo + hi) >> 1;
            if (lbase[mid] <= s) lo = mid;
            else hi = mid;
        }
        real4_t q = pos[cell_start[stage_cell(nc, bx, b, lo)] + (s - lbase[lo])];
        st[s] = q.x;
        st[stcap + s] = q.y;
        st[2 * stcap + s] = q.z;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int nbx = (nc.x + bx - 1) / bx;
    int bxe = min(bx, nc.x - (int)(b % (uint)nbx) * bx); /* cells in this block */
    uint i0 = cell_start[stage_cell(nc, bx, b, 4 * w + 1)];
    uint ni = lbase[4 * w + 1 + bxe] - lbase[4 * w + 1];
    real4_t hbox = REAL_C(0.5) * box;
    real_t sig6 = sig2 * sig2 * sig2;
    real_t c6 = eps4 * sig6, c12 = c6 * sig6, c6x6 = eps24 * sig6, c12x12 = REAL_C(2.0) * eps24 * sig6 * sig6;
    for (uint ii = t; ii < ni; ii += LJ_WG) {
        uint i = i0 + ii;
        real4_t p = pos[i];
        real4_t sh = (real4_t)(p.x < hbox.x ? box.x : -box.x, p.y < hbox.y ? box.y : -box.y,
                               p.z < hbox.z ? box.z : -box.z, 0);
        real_t fx = 0, fy = 0, fz = 0, e = 0, vw = 0;
        int cnt = 0;
        uint m = count[i];
        int jn[LJ_T_UNROLL];
#pragma unroll
        for (int u = 0; u < LJ_T_UNROLL; u++) jn[u] = (uint)u < m ? list[(size_t)u * n + i] : 0;
        for (uint k = 0; k < m; k += LJ_T_UNROLL) {
            real4_t qc[LJ_T_UNROLL];
#pragma unroll
            for (int u = 0; u < LJ_T_UNROLL; u++)
                qc[u] = (real4_t)(st[jn[u]], st[stcap + jn[u]], st[2 * stcap + jn[u]], 0);
#pragma unroll
            for (int u = 0; u < LJ_T_UNROLL; u++) {
                uint kk = k + LJ_T_UNROLL + u;
                jn[u] = kk < m ? list[(size_t)kk * n + i] : 0;
            }
#pragma unroll
            for (int u = 0; u < LJ_T_UNROLL; u++)
                lj_pair_t(p, qc[u], k + u < m, hbox, sh, rc2, c12, c6, c12x12, c6x6, &fx, &fy, &fz, &e,
                          &vw, &cnt);
        }
        e -= shift * (real_t)cnt;
        vstore4((real4_t)(fx, fy, fz, REAL_C(0.5) * e), i, f);
        vir[i] = REAL_C(0.5) * vw;
    }
}

/* LJ_TPI work-items share one i and stride over its CSR row, LJ_UNROLL
 * neighbours per step (masked); partial sums are reduced in local memory
 * (OpenCL 1.2, no sub-group extension). */
__kernel __attribute__((reqd_work_group_size(LJ_WG, 1, 1)))
void lj_full_group(__global const real4_t *restrict pos, uint n,
                   __global const uint *restrict offset, __global const int *restrict list,
                   LJ_ARGS, __global real_t *f, __global real_t *vir)
{
    __local real_t red[5][LJ_WG];
    uint g = get_global_id(0);
    uint t = get_local_id(0);
    uint i = g / LJ_TPI, lane = g % LJ_TPI;
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0;
    if (i < n) {
        real4_t p = pos[i];
        uint hi = offset[i + 1];
        for (uint k = offset[i] + lane; k < hi; k += LJ_UNROLL * LJ_TPI) {
            real4_t q[LJ_UNROLL];
#pragma unroll
            for (int u = 0; u < LJ_UNROLL; u++)
                q[u] = pos[k + u * LJ_TPI < hi ? list[k + u * LJ_TPI] : (int)i];
#pragma unroll
            for (int u = 0; u < LJ_UNROLL; u++)
                lj_pair_masked(p, q[u], k + u * LJ_TPI < hi, LJ_PASS, &fx, &fy, &fz, &e, &w);
        }
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

/* a[0..2] += v by compare-exchange on the bits, starting from the guesses
 * o (read early, so their latency hides behind the pair's arithmetic); the
 * three exchanges are issued before any result is examined. */
#ifdef REAL_IS_DOUBLE
#define LJ_UINT ulong
#define LJ_AS_U as_ulong
#define LJ_AS_R as_double
#define LJ_CMPXCHG atom_cmpxchg
#else
#define LJ_UINT uint
#define LJ_AS_U as_uint
#define LJ_AS_R as_float
#define LJ_CMPXCHG atomic_cmpxchg
#endif
inline void lj_cas_add3(volatile __global real_t *a, real_t vx, real_t vy, real_t vz, real_t ox,
                        real_t oy, real_t oz)
{
    volatile __global LJ_UINT *u = (volatile __global LJ_UINT *)a;
    LJ_UINT ex = LJ_AS_U(ox), ey = LJ_AS_U(oy), ez = LJ_AS_U(oz);
    int dx = 0, dy = 0, dz = 0;
    for (;;) {
        LJ_UINT rx = dx ? ex : LJ_CMPXCHG(&u[0], ex, LJ_AS_U(LJ_AS_R(ex) + vx));
        LJ_UINT ry = dy ? ey : LJ_CMPXCHG(&u[1], ey, LJ_AS_U(LJ_AS_R(ey) + vy));
        LJ_UINT rz = dz ? ez : LJ_CMPXCHG(&u[2], ez, LJ_AS_U(LJ_AS_R(ez) + vz));
        dx = rx == ex; dy = ry == ey; dz = rz == ez;
        if (dx && dy && dz) break;
        ex = rx; ey = ry; ez = rz;
    }
}

/* Newton's third law: -F_ij scattered to j with atomic add built from
 * compare-exchange; f must be zero on entry.  One work-item per i
 * (measured: 4-32 work-items per i run 1.4-3.3x slower, the scattered
 * exchanges being the cost). */
__kernel void lj_half_cas(__global const real4_t *restrict pos, uint n,
                          __global const uint *restrict offset, __global const int *restrict list,
                          LJ_ARGS, volatile __global real_t *f, __global real_t *vir)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0, gx, gy, gz;
    uint hi = offset[i + 1];
    for (uint k = offset[i]; k < hi; k++) {
        int j = list[k];
        real4_t q = pos[j];
        real_t ox = f[4 * j], oy = f[4 * j + 1], oz = f[4 * j + 2];
        lj_pair(p, q, LJ_PASS, &fx, &fy, &fz, &e, &w, &gx, &gy, &gz);
        if (gx != 0 || gy != 0 || gz != 0) lj_cas_add3(&f[4 * j], -gx, -gy, -gz, ox, oy, oz);
    }
    lj_cas_add3(&f[4 * i], fx, fy, fz, f[4 * i], f[4 * i + 1], f[4 * i + 2]);
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
