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

/* U = ir6 (c12 ir6 - c6), F = ir6 (c12x12 ir6 - c6x6) ir2 d with c12 = 4 eps
 * s^12, c6 = 4 eps s^6, c12x12 = 12 c12, c6x6 = 6 c6 (from the kernels'
 * eps4 = 4 eps, eps24 = 24 eps, sig2 = s^2). */
typedef struct {
    real_t c12, c6, c12x12, c6x6;
} lj_coef_t;

inline lj_coef_t lj_coef(real_t eps4, real_t eps24, real_t sig2)
{
    real_t sig6 = sig2 * sig2 * sig2;
    lj_coef_t c = {eps4 * sig6 * sig6, eps4 * sig6, REAL_C(2.0) * eps24 * sig6 * sig6, eps24 * sig6};
    return c;
}

/* Branch-free pair for lj_full_transposed: ok = 0 marks a padding slot.
 * ir6 is zeroed beyond r_cut, which zeroes F and U with no other select;
 * F = ir6 (12 c12 ir6 - 6 c6) ir2 d, U = ir6 (c12 ir6 - c6), c12 = 4 eps s^12,
 * c6 = 4 eps s^6 (the energy shift is applied once per in-cut pair by the
 * caller, from *cnt). */
inline void lj_pair_t(real4_t p, real4_t q, int ok, real4_t hbox, real4_t ishift, real_t rc2,
                      lj_coef_t cf, real_t *fx, real_t *fy,
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
    real_t fpair = ir6 * fma(cf.c12x12, ir6, -cf.c6x6) * ir2;
    *fx = fma(fpair, dx, *fx);
    *fy = fma(fpair, dy, *fy);
    *fz = fma(fpair, dz, *fz);
    *e = fma(ir6, fma(cf.c12, ir6, -cf.c6), *e);
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
    const lj_coef_t cf = lj_coef(eps4, eps24, sig2);
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
            lj_pair_t(p, qc[u], k + u < m, hbox, sh, rc2, cf, &fx, &fy, &fz, &e,
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
    const lj_coef_t cf = lj_coef(eps4, eps24, sig2);
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
                lj_pair_t(p, qc[u], k + u < m, hbox, sh, rc2, cf, &fx, &fy, &fz, &e,
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
inline uint lj_cas_add3(volatile __global real_t *a, real_t vx, real_t vy, real_t vz, real_t ox,
                        real_t oy, real_t oz)
{
    volatile __global LJ_UINT *u = (volatile __global LJ_UINT *)a;
    LJ_UINT ex = LJ_AS_U(ox), ey = LJ_AS_U(oy), ez = LJ_AS_U(oz);
    int dx = 0, dy = 0, dz = 0;
    uint issued = 0;
    for (;;) {
        issued += 3 - dx - dy - dz;
        LJ_UINT rx = dx ? ex : LJ_CMPXCHG(&u[0], ex, LJ_AS_U(LJ_AS_R(ex) + vx));
        LJ_UINT ry = dy ? ey : LJ_CMPXCHG(&u[1], ey, LJ_AS_U(LJ_AS_R(ey) + vy));
        LJ_UINT rz = dz ? ez : LJ_CMPXCHG(&u[2], ez, LJ_AS_U(LJ_AS_R(ez) + vz));
        dx = rx == ex; dy = ry == ey; dz = rz == ez;
        if (dx && dy && dz) break;
        ex = rx; ey = ry; ez = rz;
    }
    return issued;
}

/* x, y, z += v at u[0], u[stride], u[2 stride] in local memory by
 * compare-exchange on the float bits, 3 issued before any result is
 * examined; returns the exchanges issued. */
inline uint lj_local_cas_add3(volatile __local LJ_UINT *u, uint stride, real_t vx, real_t vy, real_t vz)
{
    LJ_UINT ex = u[0], ey = u[stride], ez = u[2 * stride];
    int dx = 0, dy = 0, dz = 0;
    uint issued = 0;
    for (;;) {
        issued += 3 - dx - dy - dz;
        LJ_UINT rx = dx ? ex : LJ_CMPXCHG(&u[0], ex, LJ_AS_U(LJ_AS_R(ex) + vx));
        LJ_UINT ry = dy ? ey : LJ_CMPXCHG(&u[stride], ey, LJ_AS_U(LJ_AS_R(ey) + vy));
        LJ_UINT rz = dz ? ez : LJ_CMPXCHG(&u[2 * stride], ez, LJ_AS_U(LJ_AS_R(ez) + vz));
        dx = rx == ex; dy = ry == ey; dz = rz == ez;
        if (dx && dy && dz) break;
        ex = rx; ey = ry; ez = rz;
    }
    return issued;
}

/* f[j].xyz += v by global compare-exchange, from a fresh read of f[j]. */
inline void lj_cas_add3_fresh(volatile __global real_t *f, int j, real_t vx, real_t vy, real_t vz)
{
    volatile __global LJ_UINT *u = (volatile __global LJ_UINT *)f + 4 * (size_t)j;
    lj_cas_add3(&f[4 * (size_t)j], vx, vy, vz, LJ_AS_R(u[0]), LJ_AS_R(u[1]), LJ_AS_R(u[2]));
}

/* One component after a failed exchange: again from the value it returned. */
inline void lj_cas_retry(volatile __global LJ_UINT *u, LJ_UINT e, LJ_UINT r, real_t v)
{
    while (r != e) {
        e = r;
        r = LJ_CMPXCHG(u, e, LJ_AS_U(LJ_AS_R(e) + v));
    }
}

#ifndef LJ_HU
#define LJ_HU 1 /* list entries whose exchanges are in flight together */
#endif
#ifndef LJ_REPL
#define LJ_REPL 1 /* copies of the force array (lj_half_repl_sum adds them) */
#endif
/* Newton's third law: -F_ij scattered to j with atomic add built from
 * compare-exchange; f must be zero on entry.  One work-item per i; LJ_HU
 * entries at a time: their j, positions and the guesses of f[j] (loaded
 * together), the pairs, then all 3 LJ_HU exchanges issued before any result is
 * examined, so their round trips to L2 overlap; a failed one is retried from
 * the value it returned.  LJ_SPREAD (odd, coprime with n, set by the host)
 * maps work-item w to i = w * LJ_SPREAD mod n: the i of one warp lie far
 * apart, so their exchanges rarely meet at one j (cell-sorted i share j).
 * LJ_REPL > 1: f holds LJ_REPL copies of 4n reals and work-item w adds to
 * copy w mod LJ_REPL, so concurrent exchanges on one particle are spread
 * over as many addresses (fewer failed attempts); lj_half_repl_sum adds
 * the copies.  Energy and virial of i are written once, to copy 0. */
__kernel void lj_half_cas(__global const real4_t *restrict pos, uint n,
                          __global const uint *restrict offset, __global const int *restrict list,
                          LJ_ARGS, volatile __global real_t *f, __global real_t *vir)
{
    uint wi = get_global_id(0);
    if (wi >= n) return;
#if defined(LJ_SPREAD) && LJ_SPREAD > 0
    uint i = (uint)(((ulong)wi * (ulong)LJ_SPREAD) % (ulong)n);
#else
    uint i = wi;
#endif
    volatile __global real_t *f0 = f;
#if LJ_REPL > 1
    f += (size_t)(wi % LJ_REPL) * 4 * n;
#endif
    volatile __global LJ_UINT *fu = (volatile __global LJ_UINT *)f;
    real4_t p = pos[i];
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0;
    uint hi = offset[i + 1];
    for (uint k = offset[i]; k < hi; k += LJ_HU) {
        int jj[LJ_HU];
        real4_t q[LJ_HU];
        LJ_UINT o[LJ_HU][3], r[LJ_HU][3];
        real_t g[LJ_HU][3];
#pragma unroll
        for (int u = 0; u < LJ_HU; u++)
            jj[u] = k + u < hi ? list[k + u] : -1;
#pragma unroll
        for (int u = 0; u < LJ_HU; u++) {
            uint j = jj[u] < 0 ? i : (uint)jj[u];
            q[u] = pos[j];
            for (int c = 0; c < 3; c++) o[u][c] = fu[4 * (size_t)j + c];
        }
#pragma unroll
        for (int u = 0; u < LJ_HU; u++) {
            g[u][0] = g[u][1] = g[u][2] = 0;
            if (jj[u] >= 0) lj_pair(p, q[u], LJ_PASS, &fx, &fy, &fz, &e, &w, &g[u][0], &g[u][1], &g[u][2]);
        }
#pragma unroll
        for (int u = 0; u < LJ_HU; u++)
            for (int c = 0; c < 3; c++)
                r[u][c] = g[u][c] != 0 ? LJ_CMPXCHG(&fu[4 * (size_t)jj[u] + c], o[u][c],
                                                    LJ_AS_U(LJ_AS_R(o[u][c]) - g[u][c]))
                                       : o[u][c];
#pragma unroll
        for (int u = 0; u < LJ_HU; u++)
            for (int c = 0; c < 3; c++)
                if (r[u][c] != o[u][c]) lj_cas_retry(&fu[4 * (size_t)jj[u] + c], o[u][c], r[u][c], -g[u][c]);
    }
    lj_cas_add3(&f[4 * i], fx, fy, fz, f[4 * i], f[4 * i + 1], f[4 * i + 2]);
    f0[4 * i + 3] = e;
    vir[i] = w;
}

/* f[q] = sum of the LJ_REPL copies acc[r * 4n + q], q < 4n (the energy, q =
 * 3 mod 4, is in copy 0 only; the other copies hold 0 there). */
__kernel void lj_half_repl_sum(__global const real_t *restrict acc, __global real_t *restrict f, uint n)
{
    size_t q = get_global_id(0), m = 4 * (size_t)n;
    if (q >= m) return;
    real_t s = acc[q];
    for (int r = 1; r < LJ_REPL; r++) s += acc[r * m + q];
    f[q] = s;
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


#ifdef LJ_BLOCK
/*
 * half-cas, cell-blocked (lj_half_block): Newton's third law with atomics
 * built from compare-exchange, the j forces first summed in local memory.
 *
 * Work-group g owns a block of LJ_BX x LJ_BY x LJ_BZ cells (partial at the
 * grid's upper edge).  Its i are the particles of those cells: cell-sorted,
 * so one contiguous index run per cell row of the block.  A half-list j > i
 * lies in a cell adjacent to i's, i.e. in the (BX+2)(BY+2)(BZ+2)
 * neighbourhood of the block, and (the sort being cell-major) in a cell
 * whose index is >= that of the block's first cell.  Those cells get local
 * accumulators, one slot per particle, densely: slot(j) = ladj[local cell of
 * j] + j.  Each pair adds -F to slot(j) by local compare-exchange; i's own
 * sum (registers) goes to slot(i) once.  After a barrier each non-zero slot
 * is added to f by global compare-exchange (other work-groups add partial
 * sums to the same particles).  A neighbourhood with more than LJ_SLOTS
 * particles sends the rest straight to global memory, correct but slower;
 * *ovf counts those slots.  Local cell coordinates are taken modulo the
 * grid, so a grid narrower than the neighbourhood aliases nothing: each
 * distinct cell has one local index.  pcell[s] is the cell of sorted
 * particle s at the last build (x | y << 10 | z << 20): positions updated
 * without a rebuild keep the list's cells.  f must be zero on entry.
 */
#ifndef LJ_BX
#define LJ_BX 2
#endif
#ifndef LJ_BY
#define LJ_BY 2
#endif
#ifndef LJ_BZ
#define LJ_BZ 2
#endif
#ifndef LJ_SLOTS
#define LJ_SLOTS 1024
#endif
#ifndef LJ_SLOT_PIPE
#define LJ_SLOT_PIPE 2 /* list entries loaded ahead (positions one fewer); <= 1: none */
#endif
#ifndef LJ_BTPI
#define LJ_BTPI 1 /* work-items per i */
#endif
#ifndef LJ_FLUSH
#define LJ_FLUSH 4 /* slots per work-item whose old values are loaded together */
#endif
#define LJ_LX (LJ_BX + 2)
#define LJ_LY (LJ_BY + 2)
#define LJ_NCELL (LJ_LX * LJ_LY * (LJ_BZ + 2))
#define LJ_NROW (LJ_BY * LJ_BZ)
#ifndef LJ_SCAN
#define LJ_SCAN 128 /* a power of 2 >= LJ_NCELL + LJ_NROW */
#endif

/* fp32 with 64-bit atomics (LJ_XY64): x and y of a slot or particle in one
 * 64-bit exchange, z in a 32-bit one: 2 exchanges instead of 3. */
#if !defined(REAL_IS_DOUBLE) && defined(LJ_XY64) && !defined(LJ_NO_XY64) && !defined(LJ_LFIX)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define LJ_PAIRED 1
#endif

#ifdef LJ_PAIRED
typedef struct { ulong xy; uint z; } lj_words;
#define LJ_ACC_PARAMS volatile __local ulong *axy, volatile __local uint *az
#define LJ_ACC_ARGS acc_xy, acc_z
#define LJ_ACC_FWD axy, az
inline ulong lj_add_xy(ulong o, real_t vx, real_t vy)
{
    float2 a = as_float2(o);
    return as_ulong((float2)(a.x + vx, a.y + vy));
}
inline uint lj_ladd(LJ_ACC_PARAMS, int s, real_t vx, real_t vy, real_t vz)
{
    ulong exy = axy[s];
    uint ez = az[s];
    int dxy = 0, dz = 0;
    uint issued = 0;
    for (;;) {
        issued += 2 - dxy - dz;
        ulong rxy = dxy ? exy : atom_cmpxchg(&axy[s], exy, lj_add_xy(exy, vx, vy));
        uint rz = dz ? ez : atomic_cmpxchg(&az[s], ez, as_uint(as_float(ez) + vz));
        dxy = rxy == exy; dz = rz == ez;
        if (dxy && dz) break;
        exy = rxy; ez = rz;
    }
    return issued;
}
inline void lj_lget(LJ_ACC_PARAMS, uint s, real_t *vx, real_t *vy, real_t *vz)
{
    float2 a = as_float2(axy[s]);
    *vx = a.x; *vy = a.y; *vz = as_float(az[s]);
}
inline void lj_lzero(LJ_ACC_PARAMS, uint s)
{
    axy[s] = 0; az[s] = 0;
}
inline void lj_lset(LJ_ACC_PARAMS, uint s, real_t vx, real_t vy, real_t vz)
{
    axy[s] = as_ulong((float2)(vx, vy)); az[s] = as_uint(vz);
}
inline lj_words lj_gload(volatile __global real_t *f, uint j)
{
    lj_words o;
    o.xy = ((volatile __global ulong *)f)[2 * (size_t)j];
    o.z = ((volatile __global uint *)f)[4 * (size_t)j + 2];
    return o;
}
inline uint lj_gadd(volatile __global real_t *f, uint j, real_t vx, real_t vy, real_t vz, lj_words o)
{
    volatile __global ulong *pxy = (volatile __global ulong *)f + 2 * (size_t)j;
    volatile __global uint *pz = (volatile __global uint *)f + 4 * (size_t)j + 2;
    ulong exy = o.xy;
    uint ez = o.z;
    int dxy = 0, dz = 0;
    uint issued = 0;
    for (;;) {
        issued += 2 - dxy - dz;
        ulong rxy = dxy ? exy : atom_cmpxchg(pxy, exy, lj_add_xy(exy, vx, vy));
        uint rz = dz ? ez : atomic_cmpxchg(pz, ez, as_uint(as_float(ez) + vz));
        dxy = rxy == exy; dz = rz == ez;
        if (dxy && dz) break;
        exy = rxy; ez = rz;
    }
    return issued;
}
#else
typedef struct { LJ_UINT x, y, z; } lj_words;
#ifdef LJ_LFIX
/* Experiment (LJ_LFIX): the local partial sums as int64 fixed point, added
 * by native atom_add (no compare loop, no returned value waited on), scale
 * 2^48 in fp64 (2^-49 = 1.8e-15 per contribution) or 2^32 in fp32.  A v
 * with a component >= LJ_LFIX_MAX goes to global memory instead, so up to
 * 1023 contributions per slot cannot overflow; the global adds stay
 * compare-exchange on the float bits. */
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#ifdef REAL_IS_DOUBLE
#define LJ_LFIX_SCALE 281474976710656.0
#define LJ_LFIX_MAX 32.0
#else
#define LJ_LFIX_SCALE 4294967296.0f
#define LJ_LFIX_MAX 2097152.0f
#endif
#define LJ_ACC_T long
#define LJ_ACC_PARAMS volatile __local long *a
#define LJ_ACC_ARGS acc
#define LJ_ACC_FWD a
inline int lj_lfits(real_t vx, real_t vy, real_t vz)
{
    return fabs(vx) < LJ_LFIX_MAX && fabs(vy) < LJ_LFIX_MAX && fabs(vz) < LJ_LFIX_MAX;
}
inline uint lj_ladd(LJ_ACC_PARAMS, int s, real_t vx, real_t vy, real_t vz)
{
    atom_add(&a[s], (long)rint(vx * LJ_LFIX_SCALE));
    atom_add(&a[LJ_SLOTS + s], (long)rint(vy * LJ_LFIX_SCALE));
    atom_add(&a[2 * LJ_SLOTS + s], (long)rint(vz * LJ_LFIX_SCALE));
    return 3;
}
inline void lj_lget(LJ_ACC_PARAMS, uint s, real_t *vx, real_t *vy, real_t *vz)
{
    *vx = (real_t)a[s] * (REAL_C(1.0) / LJ_LFIX_SCALE);
    *vy = (real_t)a[LJ_SLOTS + s] * (REAL_C(1.0) / LJ_LFIX_SCALE);
    *vz = (real_t)a[2 * LJ_SLOTS + s] * (REAL_C(1.0) / LJ_LFIX_SCALE);
}
inline void lj_lzero(LJ_ACC_PARAMS, uint s)
{
    a[s] = 0; a[LJ_SLOTS + s] = 0; a[2 * LJ_SLOTS + s] = 0;
}
inline void lj_lset(LJ_ACC_PARAMS, uint s, real_t vx, real_t vy, real_t vz)
{
    a[s] = (long)rint(vx * LJ_LFIX_SCALE);
    a[LJ_SLOTS + s] = (long)rint(vy * LJ_LFIX_SCALE);
    a[2 * LJ_SLOTS + s] = (long)rint(vz * LJ_LFIX_SCALE);
}
#else
#define LJ_ACC_T LJ_UINT
/* a: x, y, z blocks of LJ_SLOTS words */
#define LJ_ACC_PARAMS volatile __local LJ_UINT *a
#define LJ_ACC_ARGS acc
#define LJ_ACC_FWD a
inline uint lj_ladd(LJ_ACC_PARAMS, int s, real_t vx, real_t vy, real_t vz)
{
    return lj_local_cas_add3(a + s, LJ_SLOTS, vx, vy, vz);
}
inline void lj_lget(LJ_ACC_PARAMS, uint s, real_t *vx, real_t *vy, real_t *vz)
{
    *vx = LJ_AS_R(a[s]); *vy = LJ_AS_R(a[LJ_SLOTS + s]); *vz = LJ_AS_R(a[2 * LJ_SLOTS + s]);
}
inline void lj_lzero(LJ_ACC_PARAMS, uint s)
{
    a[s] = 0; a[LJ_SLOTS + s] = 0; a[2 * LJ_SLOTS + s] = 0;
}
inline void lj_lset(LJ_ACC_PARAMS, uint s, real_t vx, real_t vy, real_t vz)
{
    a[s] = LJ_AS_U(vx); a[LJ_SLOTS + s] = LJ_AS_U(vy); a[2 * LJ_SLOTS + s] = LJ_AS_U(vz);
}
#endif /* LJ_LFIX */
inline lj_words lj_gload(volatile __global real_t *f, uint j)
{
    volatile __global LJ_UINT *u = (volatile __global LJ_UINT *)f + 4 * (size_t)j;
    lj_words o;
    o.x = u[0]; o.y = u[1]; o.z = u[2];
    return o;
}
inline uint lj_gadd(volatile __global real_t *f, uint j, real_t vx, real_t vy, real_t vz, lj_words o)
{
    return lj_cas_add3(&f[4 * (size_t)j], vx, vy, vz, LJ_AS_R(o.x), LJ_AS_R(o.y), LJ_AS_R(o.z));
}
#endif

/* Local cell of packed cell coordinates pc; o = block origin - 1. */
inline int lj_local_cell(uint pc, int4 o, int4 nc)
{
    int lx = (int)(pc & 1023u) - o.x, ly = (int)((pc >> 10) & 1023u) - o.y, lz = (int)(pc >> 20) - o.z;
    lx += lx < 0 ? nc.x : 0; lx -= lx >= nc.x ? nc.x : 0;
    ly += ly < 0 ? nc.y : 0; ly -= ly >= nc.y ? nc.y : 0;
    lz += lz < 0 ? nc.z : 0; lz -= lz >= nc.z ? nc.z : 0;
    return (lz * LJ_LY + ly) * LJ_LX + lx;
}

/* Exchanges counted with LJ_DIAG_COUNT (experiments; the count goes to
 * *ovf instead of the overflow): 1 global, 2 local. */
#if LJ_DIAG_COUNT == 1
#define LJ_CNT_G(x) (x)
#define LJ_CNT_L(x) ((x), 0u)
#elif LJ_DIAG_COUNT == 2
#define LJ_CNT_G(x) ((x), 0u)
#define LJ_CNT_L(x) (x)
#else
#define LJ_CNT_G(x) ((x), 0u)
#define LJ_CNT_L(x) ((x), 0u)
#endif

#ifndef LJ_LFIX
inline int lj_lfits(real_t vx, real_t vy, real_t vz) { return 1; } /* every v fits a slot */
#endif

/* v to particle j (local cell lc): its slot, else global memory. */
inline uint lj_scatter(LJ_ACC_PARAMS, __local const int *ladj, volatile __global real_t *f, int j,
                       int lc, real_t vx, real_t vy, real_t vz)
{
#ifndef LJ_DIAG_NOSCATTER
    int s = ladj[lc] + j;
    if ((uint)s < (uint)LJ_SLOTS && lj_lfits(vx, vy, vz)) {
#ifdef LJ_DIAG_PLAIN
        /* timing only (races): plain local adds instead of exchanges */
        real_t ox, oy, oz;
        lj_lget(LJ_ACC_FWD, s, &ox, &oy, &oz);
        lj_lset(LJ_ACC_FWD, s, ox + vx, oy + vy, oz + vz);
        return 0;
#else
        return LJ_CNT_L(lj_ladd(LJ_ACC_FWD, s, vx, vy, vz));
#endif
    }
    return LJ_CNT_G(lj_gadd(f, (uint)j, vx, vy, vz, lj_gload(f, (uint)j)));
#else
    return 0;
#endif
}

/* cell (cx, cy, cz) = (c0 + l) modulo the grid, linear index */
inline int lj_wrap_cell(int4 c0, int lx, int ly, int lz, int4 nc)
{
    int cx = c0.x + lx, cy = c0.y + ly, cz = c0.z + lz;
    cx += cx < 0 ? nc.x : 0; cx -= cx >= nc.x ? nc.x : 0;
    cy += cy < 0 ? nc.y : 0; cy -= cy >= nc.y ? nc.y : 0;
    cz += cz < 0 ? nc.z : 0; cz -= cz >= nc.z ? nc.z : 0;
    return (cz * nc.y + cy) * nc.x + cx;
}

__kernel __attribute__((reqd_work_group_size(LJ_WG, 1, 1)))
void lj_half_block(__global const real4_t *restrict pos, uint n,
                   __global const uint *restrict offset, __global const int *restrict list,
                   LJ_ARGS, volatile __global real_t *f, __global real_t *vir,
                   __global const uint *restrict cell_start, __global const uint *restrict pcell,
                   int4 nc, volatile __global uint *ovf)
{
#ifdef LJ_PAIRED
    __local ulong acc_xy[LJ_SLOTS];
    __local uint acc_z[LJ_SLOTS];
#else
    __local LJ_ACC_T acc[3 * LJ_SLOTS];
#endif
    __local int ladj[LJ_NCELL];    /* slot - j for the particles of each local cell */
    __local uint lstart[LJ_NCELL]; /* first particle of each local cell             */
    __local uint scan[2][LJ_SCAN]; /* cell counts, then the rows' lengths: scanned  */
    __local uint rowlo[LJ_NROW];   /* first i of each row of the block               */
#if LJ_BTPI > 1
    __local real_t red[2][LJ_WG];
#endif
    uint t = get_local_id(0), g = get_group_id(0);
    uint ncas = 0; /* LJ_DIAG_COUNT */
    int nbx = (nc.x + LJ_BX - 1) / LJ_BX, nby = (nc.y + LJ_BY - 1) / LJ_BY;
    int x0 = (int)(g % (uint)nbx) * LJ_BX, y0 = (int)((g / (uint)nbx) % (uint)nby) * LJ_BY;
    int z0 = (int)(g / (uint)(nbx * nby)) * LJ_BZ;
    int wx = min(LJ_BX, nc.x - x0), wy = min(LJ_BY, nc.y - y0), wz = min(LJ_BZ, nc.z - z0);
    int ex = min(nc.x, wx + 2), ey = min(nc.y, wy + 2), ez = min(nc.z, wz + 2);
    int4 o = (int4)(x0 - 1, y0 - 1, z0 - 1, 0);
    int bmin = (z0 * nc.y + y0) * nc.x + x0;

    /* particle counts of the local cells that can receive (index >= bmin),
     * then the lengths of the block's rows, scanned together */
    for (uint e = t; e < LJ_SCAN; e += LJ_WG) {
        uint v = 0;
        if (e < LJ_NCELL) {
            int lx = (int)e % LJ_LX, ly = ((int)e / LJ_LX) % LJ_LY, lz = (int)e / (LJ_LX * LJ_LY);
            if (lx < ex && ly < ey && lz < ez) {
                int c = lj_wrap_cell(o, lx, ly, lz, nc);
                if (c >= bmin) {
                    uint cs = cell_start[c];
                    lstart[e] = cs;
                    v = cell_start[c + 1] - cs;
                }
            }
        } else if (e < LJ_NCELL + LJ_NROW) {
            int r = (int)e - LJ_NCELL, ry = r % LJ_BY, rz = r / LJ_BY;
            if (ry < wy && rz < wz) {
                int c = ((z0 + rz) * nc.y + y0 + ry) * nc.x + x0;
                uint lo = cell_start[c];
                rowlo[r] = lo;
                v = cell_start[c + wx] - lo;
            }
        }
        scan[0][e] = v;
    }
    int src = 0;
    for (uint d = 1; d < LJ_SCAN; d <<= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint e = t; e < LJ_SCAN; e += LJ_WG)
            scan[src ^ 1][e] = scan[src][e] + (e >= d ? scan[src][e - d] : 0u);
        src ^= 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    __local const uint *incl = scan[src];
    uint nslot = incl[LJ_NCELL - 1];                   /* particles with a slot wanted */
    uint ni = incl[LJ_NCELL + LJ_NROW - 1] - nslot;    /* i of the block               */
    for (uint e = t; e < LJ_NCELL; e += LJ_WG) {
        uint base = e ? incl[e - 1] : 0u;
        ladj[e] = incl[e] > base ? (int)base - (int)lstart[e] : INT_MIN;
    }
    uint nacc = min(nslot, (uint)LJ_SLOTS);
    for (uint s = t; s < nacc; s += LJ_WG)
        lj_lzero(LJ_ACC_ARGS, s);
#ifndef LJ_DIAG_COUNT
    if (t == 0 && nslot > LJ_SLOTS) atomic_add(ovf, nslot - LJ_SLOTS);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);

    /* pairs: the block's i, LJ_BTPI work-items each striding over the row,
     * LJ_UNROLL entries gathered ahead (masked at the row's end) */
#if LJ_BTPI == 1
    for (uint q = t; q < ni; q += LJ_WG) {
        const uint lane = 0;
        const int act = 1;
#else
    const uint per = LJ_WG / LJ_BTPI;
    uint rounds = (ni + per - 1) / per;
    for (uint rd = 0; rd < rounds; rd++) {
        uint q = rd * per + t / LJ_BTPI, lane = t % LJ_BTPI;
        int act = q < ni;
#endif
        real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0;
        uint i = 0;
        if (act) {
            uint r = 0; /* row of q: the rows' ends are incl[LJ_NCELL + r] - nslot */
            while (r + 1 < LJ_NROW && incl[LJ_NCELL + r] - nslot <= q) r++;
            i = rowlo[r] + q - (r ? incl[LJ_NCELL + r - 1] - nslot : 0u);
            real4_t p = pos[i];
            uint hi = offset[i + 1];
            for (uint k = offset[i] + lane; k < hi; k += LJ_UNROLL * LJ_BTPI) {
                int jj[LJ_UNROLL];
                real4_t qq[LJ_UNROLL];
                uint pc[LJ_UNROLL];
#pragma unroll
                for (int u = 0; u < LJ_UNROLL; u++)
                    jj[u] = k + u * LJ_BTPI < hi ? list[k + u * LJ_BTPI] : (int)i;
#pragma unroll
                for (int u = 0; u < LJ_UNROLL; u++) {
                    qq[u] = pos[jj[u]];
#ifdef LJ_CELL_IN_W /* experiment: the packed cell in pos.w (explorer fills it) */
                    pc[u] = (uint)qq[u].w;
#else
                    pc[u] = pcell[jj[u]];
#endif
                }
#pragma unroll
                for (int u = 0; u < LJ_UNROLL; u++) {
                    real_t dx = lj_image(p.x - qq[u].x, box.x);
                    real_t dy = lj_image(p.y - qq[u].y, box.y);
                    real_t dz = lj_image(p.z - qq[u].z, box.z);
                    real_t r2 = dx * dx + dy * dy + dz * dz;
                    if (k + u * LJ_BTPI < hi && r2 < rc2) {
                        real_t ir2 = REAL_C(1.0) / r2;
                        real_t sr2 = sig2 * ir2;
                        real_t sr6 = sr2 * sr2 * sr2;
                        real_t fp = eps24 * sr6 * (REAL_C(2.0) * sr6 - REAL_C(1.0)) * ir2;
                        real_t gx = fp * dx, gy = fp * dy, gz = fp * dz;
                        fx += gx; fy += gy; fz += gz;
                        e += eps4 * sr6 * (sr6 - REAL_C(1.0)) - shift;
                        w += fp * r2;
                        ncas += lj_scatter(LJ_ACC_ARGS, ladj, f, jj[u], lj_local_cell(pc[u], o, nc),
                                           -gx, -gy, -gz);
                    }
                }
            }
        }
#if LJ_BTPI > 1
        /* each lane's part of i's force to i's slot; energy and virial
         * summed over the lanes here */
        if (act && (fx != 0 || fy != 0 || fz != 0))
            ncas += lj_scatter(LJ_ACC_ARGS, ladj, f, (int)i, lj_local_cell(pcell[i], o, nc), fx, fy, fz);
        red[0][t] = e; red[1][t] = w;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (act && lane == 0) {
            for (uint m = 1; m < LJ_BTPI; m++) {
                e += red[0][t + m]; w += red[1][t + m];
            }
            f[4 * (size_t)i + 3] = e;
            vir[i] = w;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#else
        if (fx != 0 || fy != 0 || fz != 0)
            ncas += lj_scatter(LJ_ACC_ARGS, ladj, f, (int)i, lj_local_cell(pcell[i], o, nc), fx, fy, fz);
        f[4 * (size_t)i + 3] = e;
        vir[i] = w;
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);

#ifndef LJ_DIAG_NOFLUSH
    /* flush: each non-zero slot added to f; the old values of LJ_FLUSH
     * slots per work-item loaded together, then exchanged */
    for (uint s0 = 0; s0 < nacc; s0 += LJ_FLUSH * LJ_WG) {
        int jf[LJ_FLUSH];
        real_t vx[LJ_FLUSH], vy[LJ_FLUSH], vz[LJ_FLUSH];
        lj_words old[LJ_FLUSH];
#pragma unroll
        for (int m = 0; m < LJ_FLUSH; m++) {
            uint s = s0 + (uint)m * LJ_WG + t;
            jf[m] = -1;
            if (s < nacc) {
                lj_lget(LJ_ACC_ARGS, s, &vx[m], &vy[m], &vz[m]);
                if (vx[m] != 0 || vy[m] != 0 || vz[m] != 0) {
                    uint lo = 0, hi = LJ_NCELL - 1; /* local cell of s: first with incl > s */
                    while (lo < hi) {
                        uint mid = (lo + hi) / 2;
                        if (incl[mid] > s) hi = mid; else lo = mid + 1;
                    }
                    jf[m] = (int)s - ladj[lo];
                    old[m] = lj_gload(f, (uint)jf[m]);
                }
            }
        }
#pragma unroll
        for (int m = 0; m < LJ_FLUSH; m++)
            if (jf[m] >= 0) ncas += LJ_CNT_G(lj_gadd(f, (uint)jf[m], vx[m], vy[m], vz[m], old[m]));
    }
#endif
#ifdef LJ_DIAG_COUNT
    atomic_add(ovf, ncas);
#else
    (void)ncas;
#endif
}
#endif /* LJ_BLOCK */

#ifdef LJ_SLOT
/*
 * half-cas (lj_half_slot): Newton's third law with atomics built from
 * compare-exchange, the j forces summed in local memory first.  Lists from
 * cl/half_slot.cl: work-group g owns block g, its rows bstart[g] ..
 * bstart[g+1]-1 (particle rowi[row]); entry k of a row is j = hl[k * n +
 * row] with its accumulator slot hs[k * n + row] (rows transposed: the
 * entries of consecutive rows are read together).  Each pair adds -F to
 * slot(j) by local compare-exchange on the float bits; the row's own sum
 * goes to its slot (row - bstart[g]) once.  After a barrier every non-zero
 * slot s < nslot[g] is added to f[slot_j[g * LJ_SLOTS + s]] by global
 * compare-exchange (other blocks add to the same particles).  Slots >=
 * LJ_SLOTS (a denser neighbourhood than planned for) go to f directly and
 * are counted in *ovf.  f zero on entry; f.w receives each i's energy.
 * Each work-item loads its entries two ahead and their positions one ahead:
 * the exchanges of an entry wait for their results, and the loads issued
 * before them overlap that wait.  H100, seed benchmark, 100 calls, lists in
 * plain order: 7.80 ms fp64, 6.93 fp32 (9.36 / 9.59 without the pipeline; 3
 * or 4 ahead: no better; the earlier lj_half_block 14.3 / 16.1;
 * bench/md-notes.md, session 11); with the lists' orders of half_slot.cl
 * 6.74 / 6.71 (session 12).  LJ_SLOT_DEFER (an entry's exchanges examined
 * only after the next pair) measured slower at density 0.5 and faster at
 * 1.0 (23.3 vs 27.7 ms fp64); an experiment, not a default.  Several
 * work-groups per block (more warps to hide the waits) measured slower and
 * were removed (commit ae20903 has them).
 */
#ifndef LJ_SLOTS
#define LJ_SLOTS 1024
#endif
#ifndef LJ_SLOT_PIPE
#define LJ_SLOT_PIPE 2 /* list entries loaded ahead (positions one fewer); <= 1: none */
#endif
#ifndef LJ_SLOT_DEFER
#define LJ_SLOT_DEFER 0 /* 1: an entry's exchanges examined after the next pair */
#endif

#if LJ_SLOT_DEFER
/* lj_local_cas_add3 in two halves (experiment, md-notes session 12): the
 * first exchanges issued, their results examined later. */
typedef struct {
    LJ_UINT ex, ey, ez; /* values the exchanges expected */
    LJ_UINT rx, ry, rz; /* values they found             */
} lj_cas3;

inline lj_cas3 lj_local_cas3_exchange(volatile __local LJ_UINT *u, real_t vx, real_t vy, real_t vz, lj_cas3 c)
{
    c.rx = LJ_CMPXCHG(&u[0], c.ex, LJ_AS_U(LJ_AS_R(c.ex) + vx));
    c.ry = LJ_CMPXCHG(&u[LJ_SLOTS], c.ey, LJ_AS_U(LJ_AS_R(c.ey) + vy));
    c.rz = LJ_CMPXCHG(&u[2 * LJ_SLOTS], c.ez, LJ_AS_U(LJ_AS_R(c.ez) + vz));
    return c;
}

inline void lj_local_cas3_finish(volatile __local LJ_UINT *u, real_t vx, real_t vy, real_t vz, lj_cas3 c)
{
    int dx = c.rx == c.ex, dy = c.ry == c.ey, dz = c.rz == c.ez;
    while (!(dx && dy && dz)) {
        c.ex = c.rx; c.ey = c.ry; c.ez = c.rz;
        c.rx = dx ? c.ex : LJ_CMPXCHG(&u[0], c.ex, LJ_AS_U(LJ_AS_R(c.ex) + vx));
        c.ry = dy ? c.ey : LJ_CMPXCHG(&u[LJ_SLOTS], c.ey, LJ_AS_U(LJ_AS_R(c.ey) + vy));
        c.rz = dz ? c.ez : LJ_CMPXCHG(&u[2 * LJ_SLOTS], c.ez, LJ_AS_U(LJ_AS_R(c.ez) + vz));
        dx = c.rx == c.ex; dy = c.ry == c.ey; dz = c.rz == c.ez;
    }
}
#endif

/* v to slot s of this block, or to f[j] when s has no local accumulator */
inline void lj_slot_add(volatile __local LJ_UINT *a, volatile __global real_t *f, uint s, int j, real_t vx,
                        real_t vy, real_t vz)
{
    if (s < LJ_SLOTS) lj_local_cas_add3(a + s, LJ_SLOTS, vx, vy, vz);
    else lj_cas_add3_fresh(f, j, vx, vy, vz);
}

__kernel __attribute__((reqd_work_group_size(LJ_WG, 1, 1)))
void lj_half_slot(__global const real4_t *restrict pos, uint n, __global const uint *restrict hcount,
                  __global const int *restrict hl, LJ_ARGS, volatile __global real_t *f, __global real_t *vir,
                  __global const ushort *restrict hs, __global const uint *restrict bstart,
                  __global const uint *restrict rowi, __global const int *restrict slot_j,
                  __global const uint *restrict nslot, volatile __global uint *ovf)
{
    __local LJ_UINT acc[3 * LJ_SLOTS];
    uint t = get_local_id(0), g = get_group_id(0);
    uint i0 = bstart[g], ni = bstart[g + 1] - i0, ns = nslot[g], nacc = min(ns, (uint)LJ_SLOTS);
    for (uint s = t; s < nacc; s += LJ_WG) {
        acc[s] = 0; acc[LJ_SLOTS + s] = 0; acc[2 * LJ_SLOTS + s] = 0;
    }
    if (t == 0 && ns > LJ_SLOTS) atomic_add(ovf, ns - LJ_SLOTS);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint q = t; q < ni; q += LJ_WG) {
        uint row = i0 + q, i = rowi[row], c = hcount[row];
        real4_t p = pos[i];
        real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0;
#if LJ_SLOT_DEFER
        /* the entry whose exchanges are in flight: slot ps (none: LJ_SLOTS) */
        uint ps = LJ_SLOTS;
        real_t px = 0, py = 0, pz = 0;
        lj_cas3 pc;
#endif
#if LJ_SLOT_PIPE > 1
        /* list entries LJ_SLOT_PIPE ahead, positions one fewer */
        int ji[LJ_SLOT_PIPE];
        uint si[LJ_SLOT_PIPE];
        real4_t qi[LJ_SLOT_PIPE - 1];
#pragma unroll
        for (int d = 0; d < LJ_SLOT_PIPE; d++) {
            ji[d] = (uint)d < c ? hl[(size_t)d * n + row] : (int)i;
            si[d] = (uint)d < c ? hs[(size_t)d * n + row] : 0u;
        }
#pragma unroll
        for (int d = 0; d < LJ_SLOT_PIPE - 1; d++)
            qi[d] = pos[ji[d]];
#endif
        for (uint k = 0; k < c; k++) {
#if LJ_SLOT_PIPE > 1
            int j = ji[0];
            uint s = si[0];
            real4_t qj = qi[0];
#pragma unroll
            for (int d = 0; d < LJ_SLOT_PIPE - 1; d++) {
                ji[d] = ji[d + 1];
                si[d] = si[d + 1];
            }
#pragma unroll
            for (int d = 0; d < LJ_SLOT_PIPE - 2; d++)
                qi[d] = qi[d + 1];
            if (k + LJ_SLOT_PIPE - 1 < c) qi[LJ_SLOT_PIPE - 2] = pos[ji[LJ_SLOT_PIPE - 2]];
            {
                uint kk = k + LJ_SLOT_PIPE;
                ji[LJ_SLOT_PIPE - 1] = kk < c ? hl[(size_t)kk * n + row] : (int)i;
                si[LJ_SLOT_PIPE - 1] = kk < c ? hs[(size_t)kk * n + row] : 0u;
            }
#else
            size_t o = (size_t)k * n + row;
            int j = hl[o];
            uint s = hs[o];
            real4_t qj = pos[j];
#endif
            /* the pair of lj_pair, written out: through lj_pair (scatter
             * when the force is non-zero) the H100 took 8.05 ms fp64 and
             * 7.43 fp32 per 100 calls against 7.80 and 6.93 (md-notes, s11) */
            real_t dx = lj_image(p.x - qj.x, box.x);
            real_t dy = lj_image(p.y - qj.y, box.y);
            real_t dz = lj_image(p.z - qj.z, box.z);
            real_t r2 = dx * dx + dy * dy + dz * dz;
            if (r2 < rc2) {
                real_t ir2 = REAL_C(1.0) / r2;
                real_t sr2 = sig2 * ir2;
                real_t sr6 = sr2 * sr2 * sr2;
                real_t fp = eps24 * sr6 * (REAL_C(2.0) * sr6 - REAL_C(1.0)) * ir2;
                real_t gx = fp * dx, gy = fp * dy, gz = fp * dz;
                fx += gx; fy += gy; fz += gz;
                e += eps4 * sr6 * (sr6 - REAL_C(1.0)) - shift;
                w += fp * r2;
#if LJ_SLOT_DEFER
                if (s < LJ_SLOTS) {
                    /* this pair's math overlapped the previous exchanges */
                    lj_cas3 nc;
#if LJ_SLOT_DEFER > 1
                    /* this entry's old values read before the wait */
                    nc.ex = acc[s]; nc.ey = acc[LJ_SLOTS + s]; nc.ez = acc[2 * LJ_SLOTS + s];
                    if (ps < LJ_SLOTS) lj_local_cas3_finish(acc + ps, px, py, pz, pc);
#else
                    if (ps < LJ_SLOTS) lj_local_cas3_finish(acc + ps, px, py, pz, pc);
                    nc.ex = acc[s]; nc.ey = acc[LJ_SLOTS + s]; nc.ez = acc[2 * LJ_SLOTS + s];
#endif
                    ps = s; px = -gx; py = -gy; pz = -gz;
                    pc = lj_local_cas3_exchange(acc + s, px, py, pz, nc);
                } else {
                    lj_cas_add3_fresh(f, j, -gx, -gy, -gz);
                }
#else
                lj_slot_add(acc, f, s, j, -gx, -gy, -gz);
#endif
            }
        }
#if LJ_SLOT_DEFER
        if (ps < LJ_SLOTS) lj_local_cas3_finish(acc + ps, px, py, pz, pc);
#endif
        if (fx != 0 || fy != 0 || fz != 0) lj_slot_add(acc, f, q, (int)i, fx, fy, fz);
        f[4 * (size_t)i + 3] = e;
        vir[i] = w;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* flush: each non-zero slot to f (old values read just before) */
    for (uint s = t; s < nacc; s += LJ_WG) {
        real_t vx = LJ_AS_R(acc[s]), vy = LJ_AS_R(acc[LJ_SLOTS + s]), vz = LJ_AS_R(acc[2 * LJ_SLOTS + s]);
        if (vx == 0 && vy == 0 && vz == 0) continue;
        lj_cas_add3_fresh(f, slot_j[(size_t)g * LJ_SLOTS + s], vx, vy, vz);
    }
}
#endif /* LJ_SLOT */
