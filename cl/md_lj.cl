/*
 * md_lj.cl — Lennard-Jones forces, potential energy and virial from a Verlet
 * list on cell-sorted particles.  U = 4 eps [(s/r)^12 - (s/r)^6] - shift,
 * F_i += 24 eps [2 (s/r)^12 - (s/r)^6] / r^2 (x_i - x_j), W += r . F per pair.
 * Output f[4*i + 0..2] force, f[4*i + 3] potential energy share of i;
 * vir[i] virial share of i.  Full lists give each i half of every pair's
 * energy and virial; half lists give i the whole of the pairs it owns.
 * Variants (kernel = variant name): full-csr (lj_full_csr), full-transposed
 * (lj_full_transposed), full-staged (lj_full_staged), full-group
 * (lj_full_group), half-fixedpoint (lj_half_fixedpoint, with
 * -DLJ_HALF_FIXEDPOINT) and half-cas (lj_half_cas, with -DLJ_HALF_CAS; its
 * lists come from cl/md_half_slot.cl).  The cpu variant is cl/md_lj_cpu.cl.
 * Positions must lie in [0, box] (lj_image).
 */
#include "platform_common.h"
#include "platform_stage.h"

#ifndef LJ_TPI
#define LJ_TPI 8
#endif
#ifndef LJ_WG
#define LJ_WG 64
#endif
/* neighbours loaded ahead of use per work-item (independent gathers in
 * flight: the loops are latency-bound on GPUs, bench/md-notes.md) */
#ifndef LJ_UNROLL
#define LJ_UNROLL 4
#endif

/* Minimum image for positions inside [0, box] (the host wraps them on
 * upload, the integrator keeps them there): |d| <= box, so one conditional
 * shift; no rint or division (no slower than rint on the H100, much faster
 * on PoCL: bench/md-notes.md). */
static inline real_t lj_image(real_t d, real_t b)
{
    real_t h = REAL_C(0.5) * b;
    d = d > h ? d - b : d;
    return d < -h ? d + b : d;
}

/* Pair (i, j): adds the force on i to f, r . F to w and the pair energy to
 * e; g = the force on i (half-fixedpoint sends -g to j). */
static inline void lj_pair(real4_t p, real4_t q, real4_t box, real_t rc2, real_t eps4, real_t eps24, real_t sig2,
                           real_t shift, real_t *fx, real_t *fy, real_t *fz, real_t *e, real_t *w, real_t *gx,
                           real_t *gy, real_t *gz)
{
    real_t dx = lj_image(p.x - q.x, box.x);
    real_t dy = lj_image(p.y - q.y, box.y);
    real_t dz = lj_image(p.z - q.z, box.z);
    real_t r2 = dx * dx + dy * dy + dz * dz;
    *gx = 0;
    *gy = 0;
    *gz = 0;
    if (r2 < rc2) {
        real_t ir2 = REAL_C(1.0) / r2;
        real_t sr2 = sig2 * ir2;
        real_t sr6 = sr2 * sr2 * sr2;
        real_t fpair = eps24 * sr6 * (REAL_C(2.0) * sr6 - REAL_C(1.0)) * ir2;
        *gx = fpair * dx;
        *gy = fpair * dy;
        *gz = fpair * dz;
        *fx += *gx;
        *fy += *gy;
        *fz += *gz;
        *e += eps4 * sr6 * (sr6 - REAL_C(1.0)) - shift;
        *w += fpair * r2;
    }
}

/* Branch-free pair for the unrolled loops of lj_full_csr and lj_full_group:
 * ok = 0 marks a padding slot (q = p), which contributes exactly zero. */
static inline void lj_pair_masked(real4_t p, real4_t q, int ok, real4_t box, real_t rc2, real_t eps4, real_t eps24,
                                  real_t sig2, real_t shift, real_t *fx, real_t *fy, real_t *fz, real_t *e, real_t *w)
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
    *fx += fpair * dx;
    *fy += fpair * dy;
    *fz += fpair * dz;
    *e += in ? eps4 * sr6 * (sr6 - REAL_C(1.0)) - shift : REAL_C(0.0);
    *w += fpair * r2;
}

#define LJ_ARGS real4_t box, real4_t ibox, real_t rc2, real_t eps4, real_t eps24, real_t sig2, real_t shift
#define LJ_PASS box, rc2, eps4, eps24, sig2, shift /* ibox: unused (lj_image needs none) */

/* One work-item per i; the CSR row in blocks of LJ_UNROLL (8 here: the
 * gathers of a block are issued before any pair is computed), the last
 * block padded with masked slots. */
__kernel void lj_full_csr(__global const real4_t *restrict pos, uint n, __global const uint *restrict offset,
                          __global const int *restrict list, LJ_ARGS, __global real_t *f, __global real_t *vir)
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
        for (int u = 0; u < 2 * LJ_UNROLL; u++) lj_pair_masked(p, q[u], k + u < hi, LJ_PASS, &fx, &fy, &fz, &e, &w);
    }
    vstore4((real4_t)(fx, fy, fz, REAL_C(0.5) * e), i, f);
    vir[i] = REAL_C(0.5) * w;
}

/* Minimum image by one fixed shift per i and dimension: with p and q in
 * [0, box], d = p - q can exceed box/2 in magnitude only towards the face
 * nearer to p (p < box/2: d < -box/2, else d > box/2), so the shift is
 * +box or -box decided once per i; per pair one compare and one add. */
static inline real_t lj_image1(real_t d, real_t h, real_t s) { return fabs(d) > h ? d + s : d; }

#ifndef LJ_T_UNROLL
#define LJ_T_UNROLL 2
#endif

/* U = ir6 (c12 ir6 - c6), F = ir6 (c12x12 ir6 - c6x6) ir2 d with c12 = 4 eps
 * s^12, c6 = 4 eps s^6, c12x12 = 12 c12, c6x6 = 6 c6 (from the kernels'
 * eps4 = 4 eps, eps24 = 24 eps, sig2 = s^2). */
typedef struct {
    real_t c12, c6, c12x12, c6x6;
} lj_coef_t;

static inline lj_coef_t lj_coef(real_t eps4, real_t eps24, real_t sig2)
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
static inline void lj_pair_t(real4_t p, real4_t q, int ok, real4_t hbox, real4_t ishift, real_t rc2, lj_coef_t cf,
                             real_t *fx, real_t *fy, real_t *fz, real_t *e, real_t *w, int *cnt)
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

/* The one-sided minimum-image shifts of i (lj_image1): +box towards the
 * lower faces, -box towards the upper ones. */
static inline real4_t lj_shift_of(real4_t p, real4_t box, real4_t hbox)
{
    return (real4_t)(p.x < hbox.x ? box.x : -box.x, p.y < hbox.y ? box.y : -box.y, p.z < hbox.z ? box.z : -box.z, 0);
}

/* jn[u] = entry k0 + u of i's transposed row list[k * n + i] (m entries),
 * pad beyond its end; u < LJ_T_UNROLL: the index loads of one block, issued
 * together (lj_full_transposed, lj_full_staged). */
static inline void lj_row_t(int *jn, __global const int *restrict list, uint k0, uint m, uint n, uint i, int pad)
{
#pragma unroll
    for (int u = 0; u < LJ_T_UNROLL; u++) {
        uint kk = k0 + u;
        jn[u] = kk < m ? list[(size_t)kk * n + i] : pad;
    }
}

/* A full list's result for i: its force, half its pairs' energy (the cut
 * shift once per pair within r_cut, cnt of them) and half their virial. */
static inline void lj_store_full(__global real_t *f, __global real_t *vir, uint i, real_t fx, real_t fy, real_t fz,
                                 real_t e, real_t w, int cnt, real_t shift)
{
    e -= shift * (real_t)cnt;
    vstore4((real4_t)(fx, fy, fz, REAL_C(0.5) * e), i, f);
    vir[i] = REAL_C(0.5) * w;
}

/* One work-item per i, list[k*n + i] (coalesced index loads).  Software
 * pipeline: while the pairs of block b (LJ_T_UNROLL neighbours) are computed,
 * the positions of block b+1 and the indices of block b+2 are in flight.
 * Measured on the H100 (bench/md-notes.md): the loop was latency-bound on the
 * index -> position load chain; with the pipeline it is bound by the L1's
 * scattered-sector rate of the position gathers. */
__kernel void lj_full_transposed(__global const real4_t *restrict pos, uint n, __global const uint *restrict count,
                                 __global const int *restrict list, LJ_ARGS, __global real_t *f, __global real_t *vir)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    real4_t hbox = REAL_C(0.5) * box;
    real4_t sh = lj_shift_of(p, box, hbox);
    const lj_coef_t cf = lj_coef(eps4, eps24, sig2);
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0;
    int cnt = 0;
    uint m = count[i];
    int jn[LJ_T_UNROLL];
    real4_t q[LJ_T_UNROLL];
    lj_row_t(jn, list, 0, m, n, i, (int)i);
#pragma unroll
    for (int u = 0; u < LJ_T_UNROLL; u++) q[u] = pos[jn[u]];
    lj_row_t(jn, list, LJ_T_UNROLL, m, n, i, (int)i);
    for (uint k = 0; k < m; k += LJ_T_UNROLL) {
        real4_t qc[LJ_T_UNROLL];
#pragma unroll
        for (int u = 0; u < LJ_T_UNROLL; u++) qc[u] = q[u];
#pragma unroll
        for (int u = 0; u < LJ_T_UNROLL; u++) q[u] = pos[jn[u]];
        lj_row_t(jn, list, k + 2 * LJ_T_UNROLL, m, n, i, (int)i);
#pragma unroll
        for (int u = 0; u < LJ_T_UNROLL; u++)
            lj_pair_t(p, qc[u], k + u < m, hbox, sh, rc2, cf, &fx, &fy, &fz, &e, &w, &cnt);
    }
    lj_store_full(f, vir, i, fx, fy, fz, e, w, cnt, shift);
}

#ifndef LJ_LANES
#define LJ_LANES 8
#endif
#if LJ_WG % LJ_LANES == 0

/* The rows rows[0 .. nrows-1] of a full transposed list (a distributed
 * plan's rows beside the ghosts, computed once they have arrived), LJ_LANES
 * work-items per row: lane l takes entries l, l + LJ_LANES, ... and the
 * partial sums are added in lane order in local memory (the same order on
 * every run).  Why lanes: these rows are a tenth of a plan's or fewer, too
 * few work-items for one per row to hide the chain of dependent index and
 * position loads along a row (lj_full_transposed).  Work-group LJ_WG, a
 * multiple of LJ_LANES; row r of a group is its work-items r + k LJ_WG /
 * LJ_LANES, so that neighbouring work-items read neighbouring rows' indices
 * (where neighbouring entries of rows are neighbouring rows). */
__kernel __attribute__((reqd_work_group_size(LJ_WG, 1, 1))) void
lj_full_transposed_lanes(__global const real4_t *restrict pos, uint n, __global const uint *restrict count,
                         __global const int *restrict list, LJ_ARGS, __global real_t *f, __global real_t *vir,
                         __global const uint *restrict rows, uint nrows)
{
    __local real_t red[5][LJ_WG];
    __local int redc[LJ_WG];
    const uint rpg = LJ_WG / LJ_LANES, t = get_local_id(0), r = t % rpg, lane = t / rpg;
    const uint row = get_group_id(0) * rpg + r;
    const uint i = row < nrows ? rows[row] : 0;
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0;
    int cnt = 0;
    if (row < nrows) {
        real4_t p = pos[i];
        real4_t hbox = REAL_C(0.5) * box;
        real4_t sh = lj_shift_of(p, box, hbox);
        const lj_coef_t cf = lj_coef(eps4, eps24, sig2);
        uint m = count[i];
        for (uint k = lane; k < m; k += LJ_LANES * LJ_T_UNROLL) {
            int jn[LJ_T_UNROLL];
#pragma unroll
            for (int u = 0; u < LJ_T_UNROLL; u++) {
                uint kk = k + u * LJ_LANES;
                jn[u] = kk < m ? list[(size_t)kk * n + i] : (int)i;
            }
            real4_t q[LJ_T_UNROLL];
#pragma unroll
            for (int u = 0; u < LJ_T_UNROLL; u++) q[u] = pos[jn[u]];
#pragma unroll
            for (int u = 0; u < LJ_T_UNROLL; u++)
                lj_pair_t(p, q[u], k + u * LJ_LANES < m, hbox, sh, rc2, cf, &fx, &fy, &fz, &e, &w, &cnt);
        }
    }
    red[0][t] = fx, red[1][t] = fy, red[2][t] = fz, red[3][t] = e, red[4][t] = w, redc[t] = cnt;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane || row >= nrows) return;
    for (uint l = 1; l < LJ_LANES; l++) {
        uint s = t + l * rpg;
        fx += red[0][s], fy += red[1][s], fz += red[2][s], e += red[3][s], w += red[4][s], cnt += redc[s];
    }
    lj_store_full(f, vir, i, fx, fy, fz, e, w, cnt, shift);
}
#endif

/* Full list on a staged copy (cl/platform_stage.h, cl/md_neighbor_staged.cl): work-group
 * b copies the positions of the cells around its block into local memory
 * (x, y, z planes of stride stcap), then each work-item takes particles i of
 * the block (contiguous: the block's cells are consecutive in x) and reads
 * its neighbours' positions from local memory by the slots in
 * list[k * n + i].  lbase holds the block's NS + 1 slot offsets. */
__kernel __attribute__((reqd_work_group_size(LJ_WG, 1, 1))) void
lj_full_staged(__global const real4_t *restrict pos, uint n, __global const uint *restrict count,
               __global const int *restrict list, LJ_ARGS, __global real_t *f, __global real_t *vir,
               __global const uint *restrict cell_start, __global const uint *restrict base, int4 nc, int bx,
               __local real_t *st, uint stcap, __local uint *lbase)
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
            if (lbase[mid] <= s)
                lo = mid;
            else
                hi = mid;
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
        real4_t sh = lj_shift_of(p, box, hbox);
        real_t fx = 0, fy = 0, fz = 0, e = 0, vw = 0;
        int cnt = 0;
        uint m = count[i];
        int jn[LJ_T_UNROLL];
        lj_row_t(jn, list, 0, m, n, i, 0);
        for (uint k = 0; k < m; k += LJ_T_UNROLL) {
            real4_t qc[LJ_T_UNROLL];
#pragma unroll
            for (int u = 0; u < LJ_T_UNROLL; u++)
                qc[u] = (real4_t)(st[jn[u]], st[stcap + jn[u]], st[2 * stcap + jn[u]], 0);
            lj_row_t(jn, list, k + LJ_T_UNROLL, m, n, i, 0);
#pragma unroll
            for (int u = 0; u < LJ_T_UNROLL; u++)
                lj_pair_t(p, qc[u], k + u < m, hbox, sh, rc2, cf, &fx, &fy, &fz, &e, &vw, &cnt);
        }
        lj_store_full(f, vir, i, fx, fy, fz, e, vw, cnt, shift);
    }
}

/* LJ_TPI work-items share one i and stride over its CSR row, LJ_UNROLL
 * neighbours per step (masked); partial sums are reduced in local memory
 * (OpenCL 1.2, no sub-group extension). */
__kernel __attribute__((reqd_work_group_size(LJ_WG, 1, 1))) void
lj_full_group(__global const real4_t *restrict pos, uint n, __global const uint *restrict offset,
              __global const int *restrict list, LJ_ARGS, __global real_t *f, __global real_t *vir)
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
            for (int u = 0; u < LJ_UNROLL; u++) q[u] = pos[k + u * LJ_TPI < hi ? list[k + u * LJ_TPI] : (int)i];
#pragma unroll
            for (int u = 0; u < LJ_UNROLL; u++)
                lj_pair_masked(p, q[u], k + u * LJ_TPI < hi, LJ_PASS, &fx, &fy, &fz, &e, &w);
        }
    }
    red[0][t] = fx;
    red[1][t] = fy;
    red[2][t] = fz;
    red[3][t] = e;
    red[4][t] = w;
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

#ifdef LJ_HALF_FIXEDPOINT
#ifndef NEED_INT64_ATOMICS
#error "half-fixedpoint adds with atom_add on longs: the host passes -DNEED_INT64_ATOMICS (platform/require.c)"
#endif
/* Deterministic: forces as int64 fixed point (scale FIXED_SCALE, a power of
 * two chosen by the host), so the sum is independent of the order of adds;
 * *bad is set when a value does not fit. fx3 must be zero on entry. */
static inline void lj_fixed_add(volatile __global long *a, real_t v, volatile __global uint *bad)
{
    real_t s = v * (real_t)FIXED_SCALE;
    if (!(fabs(s) < REAL_C(9.0e18))) {
        atomic_or(bad, 1u);
        return;
    }
    atom_add(a, (long)rint(s));
}

/* half-fixedpoint: one work-item per i over the half CSR list (j > i); -F_ij
 * goes to j and the row's sum to i by int64 atom_add, then lj_fixed_convert
 * turns the sums into f.  Energy and virial of i's pairs go to i. */
__kernel void lj_half_fixedpoint(__global const real4_t *pos, uint n, __global const uint *offset,
                                 __global const int *list, LJ_ARGS, volatile __global long *fx3, __global real_t *f,
                                 __global real_t *vir, volatile __global uint *bad)
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
#endif /* LJ_HALF_FIXEDPOINT */

#ifdef LJ_HALF_CAS
/*
 * half-cas (lj_half_cas): Newton's third law with atomic adds built from
 * compare-exchange on the bits (OpenCL 1.2 has no floating-point atomic
 * add), the j forces summed in local memory first so that only one global
 * exchange per particle and block remains.  Lists from cl/md_half_slot.cl:
 * work-group g owns block g, its rows bstart[g] .. bstart[g+1]-1 (particle
 * rowi[row]); entry k of a row is j = hl[k * n + row] with its accumulator
 * slot hs[k * n + row] (rows transposed: the entries of consecutive rows
 * are read together).  Each pair adds -F to slot(j) by local
 * compare-exchange; the row's own sum goes to its slot (row - bstart[g])
 * once.  After a barrier every non-zero slot s < nslot[g] is added to
 * f[slot_j[g * LJ_SLOTS + s]] by global compare-exchange (other blocks add
 * to the same particles).  Slots >= LJ_SLOTS (a denser neighbourhood than
 * planned for) go to f directly and are counted in *ovf.  f zero on entry;
 * f.w receives each i's energy.
 *
 * The time of this kernel is each entry waiting for its local exchanges
 * (bench/md-notes.md, sessions 11-12), hence: each work-item loads its list
 * entries LJ_AHEAD ahead and their positions one fewer, so the loads overlap
 * that wait; and with LJ_DEFER an entry's exchanges are examined only after
 * the next pair's arithmetic (which pays at high density, not at low: the
 * host chooses, clphys_md_lj_params.defer_exchanges).
 */
#ifdef REAL_IS_DOUBLE
#ifndef NEED_INT64_ATOMICS
#error "fp64 half-cas exchanges with atom_cmpxchg on longs: the host passes -DNEED_INT64_ATOMICS"
#endif
#define LJ_UINT    ulong
#define LJ_AS_U    as_ulong
#define LJ_AS_R    as_double
#define LJ_CMPXCHG atom_cmpxchg
#else
#define LJ_UINT    uint
#define LJ_AS_U    as_uint
#define LJ_AS_R    as_float
#define LJ_CMPXCHG atomic_cmpxchg
#endif
#ifndef LJ_SLOTS
#define LJ_SLOTS 1024
#endif
#ifndef LJ_AHEAD
#define LJ_AHEAD 2 /* list entries loaded ahead (positions one fewer), >= 2 */
#endif
#ifndef LJ_DEFER
#define LJ_DEFER 0 /* 1: an entry's exchanges examined after the next pair */
#endif

/* a[0..2] += v by compare-exchange on the bits, starting from the guesses
 * o; the three exchanges are issued before any result is examined. */
static inline void lj_cas_add3(volatile __global real_t *a, real_t vx, real_t vy, real_t vz, real_t ox, real_t oy,
                               real_t oz)
{
    volatile __global LJ_UINT *u = (volatile __global LJ_UINT *)a;
    LJ_UINT ex = LJ_AS_U(ox), ey = LJ_AS_U(oy), ez = LJ_AS_U(oz);
    int dx = 0, dy = 0, dz = 0;
    for (;;) {
        LJ_UINT rx = dx ? ex : LJ_CMPXCHG(&u[0], ex, LJ_AS_U(LJ_AS_R(ex) + vx));
        LJ_UINT ry = dy ? ey : LJ_CMPXCHG(&u[1], ey, LJ_AS_U(LJ_AS_R(ey) + vy));
        LJ_UINT rz = dz ? ez : LJ_CMPXCHG(&u[2], ez, LJ_AS_U(LJ_AS_R(ez) + vz));
        dx = rx == ex;
        dy = ry == ey;
        dz = rz == ez;
        if (dx && dy && dz) break;
        ex = rx;
        ey = ry;
        ez = rz;
    }
}

/* x, y, z += v at u[0], u[stride], u[2 stride] in local memory by
 * compare-exchange on the bits, 3 issued before any result is examined. */
static inline void lj_local_cas_add3(volatile __local LJ_UINT *u, uint stride, real_t vx, real_t vy, real_t vz)
{
    LJ_UINT ex = u[0], ey = u[stride], ez = u[2 * stride];
    int dx = 0, dy = 0, dz = 0;
    for (;;) {
        LJ_UINT rx = dx ? ex : LJ_CMPXCHG(&u[0], ex, LJ_AS_U(LJ_AS_R(ex) + vx));
        LJ_UINT ry = dy ? ey : LJ_CMPXCHG(&u[stride], ey, LJ_AS_U(LJ_AS_R(ey) + vy));
        LJ_UINT rz = dz ? ez : LJ_CMPXCHG(&u[2 * stride], ez, LJ_AS_U(LJ_AS_R(ez) + vz));
        dx = rx == ex;
        dy = ry == ey;
        dz = rz == ez;
        if (dx && dy && dz) break;
        ex = rx;
        ey = ry;
        ez = rz;
    }
}

/* f[j].xyz += v by global compare-exchange, from a fresh read of f[j]. */
static inline void lj_cas_add3_fresh(volatile __global real_t *f, int j, real_t vx, real_t vy, real_t vz)
{
    volatile __global LJ_UINT *u = (volatile __global LJ_UINT *)f + 4 * (size_t)j;
    lj_cas_add3(&f[4 * (size_t)j], vx, vy, vz, LJ_AS_R(u[0]), LJ_AS_R(u[1]), LJ_AS_R(u[2]));
}

#if LJ_DEFER
/* lj_local_cas_add3 in two halves: the first exchanges issued, their
 * results examined later. */
typedef struct {
    LJ_UINT ex, ey, ez; /* values the exchanges expected */
    LJ_UINT rx, ry, rz; /* values they found             */
} lj_cas3;

static inline lj_cas3 lj_local_cas3_exchange(volatile __local LJ_UINT *u, real_t vx, real_t vy, real_t vz, lj_cas3 c)
{
    c.rx = LJ_CMPXCHG(&u[0], c.ex, LJ_AS_U(LJ_AS_R(c.ex) + vx));
    c.ry = LJ_CMPXCHG(&u[LJ_SLOTS], c.ey, LJ_AS_U(LJ_AS_R(c.ey) + vy));
    c.rz = LJ_CMPXCHG(&u[2 * LJ_SLOTS], c.ez, LJ_AS_U(LJ_AS_R(c.ez) + vz));
    return c;
}

static inline void lj_local_cas3_finish(volatile __local LJ_UINT *u, real_t vx, real_t vy, real_t vz, lj_cas3 c)
{
    int dx = c.rx == c.ex, dy = c.ry == c.ey, dz = c.rz == c.ez;
    while (!(dx && dy && dz)) {
        c.ex = c.rx;
        c.ey = c.ry;
        c.ez = c.rz;
        c.rx = dx ? c.ex : LJ_CMPXCHG(&u[0], c.ex, LJ_AS_U(LJ_AS_R(c.ex) + vx));
        c.ry = dy ? c.ey : LJ_CMPXCHG(&u[LJ_SLOTS], c.ey, LJ_AS_U(LJ_AS_R(c.ey) + vy));
        c.rz = dz ? c.ez : LJ_CMPXCHG(&u[2 * LJ_SLOTS], c.ez, LJ_AS_U(LJ_AS_R(c.ez) + vz));
        dx = c.rx == c.ex;
        dy = c.ry == c.ey;
        dz = c.rz == c.ez;
    }
}
#endif

/* v to slot s of this block, or to f[j] when s has no local accumulator.
 * Always inlined: PoCL 3.1 (Debian 12) gave wrong half-cas forces when its
 * optimiser kept this static function out of line (tests lj and md). */
static inline __attribute__((always_inline)) void lj_slot_add(volatile __local LJ_UINT *a, volatile __global real_t *f,
                                                              uint s, int j, real_t vx, real_t vy, real_t vz)
{
    if (s < LJ_SLOTS)
        lj_local_cas_add3(a + s, LJ_SLOTS, vx, vy, vz);
    else
        lj_cas_add3_fresh(f, j, vx, vy, vz);
}

__kernel __attribute__((reqd_work_group_size(LJ_WG, 1, 1))) void
lj_half_cas(__global const real4_t *restrict pos, uint n, __global const uint *restrict hcount,
            __global const int *restrict hl, LJ_ARGS, volatile __global real_t *f, __global real_t *vir,
            __global const ushort *restrict hs, __global const uint *restrict bstart,
            __global const uint *restrict rowi, __global const int *restrict slot_j,
            __global const uint *restrict nslot, volatile __global uint *ovf)
{
    __local LJ_UINT acc[3 * LJ_SLOTS];
    uint t = get_local_id(0), g = get_group_id(0);
    uint i0 = bstart[g], ni = bstart[g + 1] - i0, ns = nslot[g], nacc = min(ns, (uint)LJ_SLOTS);
    for (uint s = t; s < nacc; s += LJ_WG) {
        acc[s] = 0;
        acc[LJ_SLOTS + s] = 0;
        acc[2 * LJ_SLOTS + s] = 0;
    }
    if (t == 0 && ns > LJ_SLOTS) atomic_add(ovf, ns - LJ_SLOTS);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint q = t; q < ni; q += LJ_WG) {
        uint row = i0 + q, i = rowi[row], c = hcount[row];
        real4_t p = pos[i];
        real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0;
#if LJ_DEFER
        /* the entry whose exchanges are in flight: slot ps (none: LJ_SLOTS) */
        uint ps = LJ_SLOTS;
        real_t px = 0, py = 0, pz = 0;
        lj_cas3 pc;
#endif
        /* list entries LJ_AHEAD ahead, positions one fewer */
        int ji[LJ_AHEAD];
        uint si[LJ_AHEAD];
        real4_t qi[LJ_AHEAD - 1];
#pragma unroll
        for (int d = 0; d < LJ_AHEAD; d++) {
            ji[d] = (uint)d < c ? hl[(size_t)d * n + row] : (int)i;
            si[d] = (uint)d < c ? hs[(size_t)d * n + row] : 0u;
        }
#pragma unroll
        for (int d = 0; d < LJ_AHEAD - 1; d++) qi[d] = pos[ji[d]];
        for (uint k = 0; k < c; k++) {
            int j = ji[0];
            uint s = si[0];
            real4_t qj = qi[0];
#pragma unroll
            for (int d = 0; d < LJ_AHEAD - 1; d++) {
                ji[d] = ji[d + 1];
                si[d] = si[d + 1];
            }
#pragma unroll
            for (int d = 0; d < LJ_AHEAD - 2; d++) qi[d] = qi[d + 1];
            if (k + LJ_AHEAD - 1 < c) qi[LJ_AHEAD - 2] = pos[ji[LJ_AHEAD - 2]];
            {
                uint kk = k + LJ_AHEAD;
                ji[LJ_AHEAD - 1] = kk < c ? hl[(size_t)kk * n + row] : (int)i;
                si[LJ_AHEAD - 1] = kk < c ? hs[(size_t)kk * n + row] : 0u;
            }
            /* the pair of lj_pair, written out: through lj_pair (scatter
             * when the force is non-zero) it measured slower on the H100
             * (bench/md-notes.md) */
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
                fx += gx;
                fy += gy;
                fz += gz;
                e += eps4 * sr6 * (sr6 - REAL_C(1.0)) - shift;
                w += fp * r2;
#if LJ_DEFER
                if (s < LJ_SLOTS) {
                    /* this pair's math overlapped the previous exchanges */
                    lj_cas3 nc;
                    if (ps < LJ_SLOTS) lj_local_cas3_finish(acc + ps, px, py, pz, pc);
                    nc.ex = acc[s];
                    nc.ey = acc[LJ_SLOTS + s];
                    nc.ez = acc[2 * LJ_SLOTS + s];
                    ps = s;
                    px = -gx;
                    py = -gy;
                    pz = -gz;
                    pc = lj_local_cas3_exchange(acc + s, px, py, pz, nc);
                } else {
                    lj_cas_add3_fresh(f, j, -gx, -gy, -gz);
                }
#else
                lj_slot_add(acc, f, s, j, -gx, -gy, -gz);
#endif
            }
        }
#if LJ_DEFER
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
#endif /* LJ_HALF_CAS */
