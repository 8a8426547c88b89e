/* lj_x.cl — experimental LJ kernels (explorer only). */
#include "common.h"

#ifndef TPI
#define TPI 1
#endif
#ifndef WG
#define WG 128
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

inline real_t mimg(real_t d, real_t b, real_t ib)
{
#ifdef MI_SELECT
    /* positions in [0, box): |d| < box, at most one shift */
    real_t hb = REAL_C(0.5) * b;
    d = d > hb ? d - b : d;
    d = d < -hb ? d + b : d;
    return d;
#else
    return d - b * rint(d * ib);
#endif
}

inline real_t rcp(real_t x)
{
#if defined(ASM_RCP) && defined(REAL_IS_DOUBLE)
    double y;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
    double e = fma(-x, y, 1.0);
    y = fma(y, e, y);
    e = fma(-x, y, 1.0);
    y = fma(y, e, y);
    return y;
#elif defined(FAST_RCP)
#ifdef REAL_IS_DOUBLE
    double y = (double)native_recip((float)x);
    double e = fma(-x, y, 1.0);
    y = fma(y, e, y);
    e = fma(-x, y, 1.0);
    y = fma(y, e, y);
    return y;
#else
    return native_recip(x);
#endif
#else
    return REAL_C(1.0) / x;
#endif
}

#ifdef NO_EV
#define EV(x)
#else
#define EV(x) x
#endif
#define LJ_ARGS real4_t box, real4_t ibox, real_t rc2, real_t eps4, real_t eps24, real_t sig2, real_t shift

/* returns fpair (0 beyond r_cut); d = p - q after minimum image */
#define PAIR(p, q, gx, gy, gz)                                                        \
    {                                                                                 \
        real_t dx = mimg(p.x - q.x, box.x, ibox.x);                                   \
        real_t dy = mimg(p.y - q.y, box.y, ibox.y);                                   \
        real_t dz = mimg(p.z - q.z, box.z, ibox.z);                                   \
        real_t r2 = dx * dx + dy * dy + dz * dz;                                      \
        gx = 0; gy = 0; gz = 0;                                                       \
        if (r2 < rc2) {                                                               \
            real_t ir2 = rcp(r2);                                                     \
            real_t sr2 = sig2 * ir2;                                                  \
            real_t sr6 = sr2 * sr2 * sr2;                                             \
            real_t fp = eps24 * sr6 * (REAL_C(2.0) * sr6 - REAL_C(1.0)) * ir2;        \
            gx = fp * dx; gy = fp * dy; gz = fp * dz;                                 \
            fx += gx; fy += gy; fz += gz;                                             \
            EV(e += eps4 * sr6 * (sr6 - REAL_C(1.0)) - shift;)                        \
            EV(w += fp * r2;)                                                         \
        }                                                                             \
    }

#ifdef NOGATHER
#define GET(j) pos[min((uint)((i & ~15u) + ((uint)(j) & 15u)), n - 1)]
#else
#define GET(j) pos[j]
#endif

__kernel void x_full_t(__global const real4_t *restrict pos, uint n, __global const uint *restrict count,
                       __global const int *restrict list, LJ_ARGS, __global real_t *f, __global real_t *vir)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0, gx, gy, gz;
    uint m = count[i], k = 0;
#if UNROLL > 1
    for (; k + UNROLL <= m; k += UNROLL) {
        real4_t q[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) q[u] = GET(list[(size_t)(k + u) * n + i]);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) PAIR(p, q[u], gx, gy, gz);
    }
#endif
    for (; k < m; k++) {
        real4_t q = GET(list[(size_t)k * n + i]);
        PAIR(p, q, gx, gy, gz);
    }
    vstore4((real4_t)(fx, fy, fz, REAL_C(0.5) * e), i, f);
    vir[i] = REAL_C(0.5) * w;
}

__kernel void x_full_csr(__global const real4_t *restrict pos, uint n, __global const uint *restrict offset,
                         __global const int *restrict list, LJ_ARGS, __global real_t *f, __global real_t *vir)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0, gx, gy, gz;
    uint k = offset[i], hi = offset[i + 1];
#if UNROLL > 1
    for (; k + UNROLL <= hi; k += UNROLL) {
        real4_t q[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) q[u] = GET(list[k + u]);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) PAIR(p, q[u], gx, gy, gz);
    }
#endif
    for (; k < hi; k++) {
        real4_t q = GET(list[k]);
        PAIR(p, q, gx, gy, gz);
    }
    vstore4((real4_t)(fx, fy, fz, REAL_C(0.5) * e), i, f);
    vir[i] = REAL_C(0.5) * w;
}

/* TPI lanes per i over the CSR row, local-memory reduction */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void x_full_g(__global const real4_t *restrict pos, uint n, __global const uint *restrict offset,
              __global const int *restrict list, LJ_ARGS, __global real_t *f, __global real_t *vir)
{
    __local real_t red[5][WG];
    uint g = get_global_id(0), t = get_local_id(0);
    uint i = g / TPI, lane = g % TPI;
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0, gx, gy, gz;
    if (i < n) {
        real4_t p = pos[i];
        uint k = offset[i] + lane, hi = offset[i + 1];
#if UNROLL > 1
        for (; k + (UNROLL - 1) * TPI < hi; k += UNROLL * TPI) {
            real4_t q[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) q[u] = pos[list[k + u * TPI]];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) PAIR(p, q[u], gx, gy, gz);
        }
#endif
        for (; k < hi; k += TPI) {
            real4_t q = pos[list[k]];
            PAIR(p, q, gx, gy, gz);
        }
    }
    red[0][t] = fx; red[1][t] = fy; red[2][t] = fz; red[3][t] = e; red[4][t] = w;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = TPI / 2; s > 0; s >>= 1) {
        if (lane < s)
            for (int c = 0; c < 5; c++) red[c][t] += red[c][t + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && i < n) {
        vstore4((real4_t)(red[0][t], red[1][t], red[2][t], REAL_C(0.5) * red[3][t]), i, f);
        vir[i] = REAL_C(0.5) * red[4][t];
    }
}

/* a[0..2] += v from compare-exchange; o: guessed old values.  The three
 * exchanges are issued before any result is examined. */
#ifdef REAL_IS_DOUBLE
#define UINT_T ulong
#define AS_U as_ulong
#define AS_R as_double
#define CMPXCHG atom_cmpxchg
#else
#define UINT_T uint
#define AS_U as_uint
#define AS_R as_float
#define CMPXCHG atomic_cmpxchg
#endif
inline int cas_add3(volatile __global real_t *a, real_t vx, real_t vy, real_t vz, real_t ox, real_t oy,
                    real_t oz)
{
    int it = 0;
    volatile __global UINT_T *u = (volatile __global UINT_T *)a;
    UINT_T ex = AS_U(ox), ey = AS_U(oy), ez = AS_U(oz);
    int dx = 0, dy = 0, dz = 0;
    for (;;) {
        it++;
        UINT_T rx = dx ? ex : CMPXCHG(&u[0], ex, AS_U(AS_R(ex) + vx));
        UINT_T ry = dy ? ey : CMPXCHG(&u[1], ey, AS_U(AS_R(ey) + vy));
        UINT_T rz = dz ? ez : CMPXCHG(&u[2], ez, AS_U(AS_R(ez) + vz));
        dx = rx == ex; dy = ry == ey; dz = rz == ez;
        if (dx && dy && dz) break;
        ex = rx; ey = ry; ez = rz;
    }
    return it;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void x_half_cas(__global const real4_t *restrict pos, uint n, __global const uint *restrict offset,
                __global const int *restrict list, LJ_ARGS, volatile __global real_t *f, __global real_t *vir)
{
#if TPI > 1
    __local real_t red[5][WG];
#endif
    uint g = get_global_id(0);
#ifdef SPREAD
    uint stride = (n + 31) / 32;
    uint i = g / 32 < stride ? (g % 32) * stride + g / 32 : n, lane = 0;
#else
    uint i = g / TPI, lane = g % TPI;
#endif
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0, gx, gy, gz;
    int its = 0;
    if (i < n) {
        real4_t p = pos[i];
        uint hi = offset[i + 1];
        for (uint k = offset[i] + lane; k < hi; k += TPI) {
            int j = list[k];
            real4_t q = pos[j];
#ifdef PREFETCH
            real_t ox = f[4 * j], oy = f[4 * j + 1], oz = f[4 * j + 2];
#else
            real_t ox = 0, oy = 0, oz = 0;
#endif
            PAIR(p, q, gx, gy, gz);
            if (gx != 0 || gy != 0 || gz != 0) its += cas_add3(&f[4 * j], -gx, -gy, -gz, ox, oy, oz) - 1;
        }
    }
#if TPI > 1
    uint t = get_local_id(0);
    red[0][t] = fx; red[1][t] = fy; red[2][t] = fz; red[3][t] = e; red[4][t] = w;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = TPI / 2; s > 0; s >>= 1) {
        if (lane < s)
            for (int c = 0; c < 5; c++) red[c][t] += red[c][t + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    fx = red[0][t]; fy = red[1][t]; fz = red[2][t]; e = red[3][t]; w = red[4][t];
#endif
    if (lane == 0 && i < n) {
        cas_add3(&f[4 * i], fx, fy, fz, f[4 * i], f[4 * i + 1], f[4 * i + 2]);
        f[4 * i + 3] = e;
#ifdef COUNT_RETRY
        w = its;
#endif
        vir[i] = w;
    }
}

/* ---- blocked, branch-free full-list kernels ---- */
#define PAIRM(p, q, ok)                                                               \
    {                                                                                 \
        real_t dx = mimg(p.x - q.x, box.x, ibox.x);                                   \
        real_t dy = mimg(p.y - q.y, box.y, ibox.y);                                   \
        real_t dz = mimg(p.z - q.z, box.z, ibox.z);                                   \
        real_t r2 = dx * dx + dy * dy + dz * dz;                                      \
        int in = (ok) && r2 < rc2;                                                    \
        real_t ir2 = rcp(in ? r2 : REAL_C(1.0));                                      \
        real_t sr2 = sig2 * ir2;                                                      \
        real_t sr6 = sr2 * sr2 * sr2;                                                 \
        real_t fp = eps24 * sr6 * (REAL_C(2.0) * sr6 - REAL_C(1.0)) * ir2;            \
        fp = in ? fp : REAL_C(0.0);                                                   \
        fx += fp * dx; fy += fp * dy; fz += fp * dz;                                  \
        EV(e += in ? eps4 * sr6 * (sr6 - REAL_C(1.0)) - shift : REAL_C(0.0);)         \
        EV(w += fp * r2;)                                                             \
    }

__kernel void x_full_tb(__global const real4_t *restrict pos, uint n, __global const uint *restrict count,
                        __global const int *restrict list, LJ_ARGS, __global real_t *f, __global real_t *vir)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0;
    uint m = count[i];
    for (uint k = 0; k < m; k += UNROLL) {
        real4_t q[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            int j = k + u < m ? list[(size_t)(k + u) * n + i] : (int)i;
            q[u] = pos[j];
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) PAIRM(p, q[u], k + u < m);
    }
    vstore4((real4_t)(fx, fy, fz, REAL_C(0.5) * e), i, f);
    vir[i] = REAL_C(0.5) * w;
}

__kernel void x_full_cb(__global const real4_t *restrict pos, uint n, __global const uint *restrict offset,
                        __global const int *restrict list, LJ_ARGS, __global real_t *f, __global real_t *vir)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0;
    uint lo = offset[i], hi = offset[i + 1];
    for (uint k = lo; k < hi; k += UNROLL) {
        real4_t q[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) q[u] = pos[k + u < hi ? list[k + u] : (int)i];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) PAIRM(p, q[u], k + u < hi);
    }
    vstore4((real4_t)(fx, fy, fz, REAL_C(0.5) * e), i, f);
    vir[i] = REAL_C(0.5) * w;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void x_full_gb(__global const real4_t *restrict pos, uint n, __global const uint *restrict offset,
               __global const int *restrict list, LJ_ARGS, __global real_t *f, __global real_t *vir)
{
    __local real_t red[5][WG];
    uint g = get_global_id(0), t = get_local_id(0);
    uint i = g / TPI, lane = g % TPI;
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0;
    if (i < n) {
        real4_t p = pos[i];
        uint hi = offset[i + 1];
        for (uint k = offset[i] + lane; k < hi; k += UNROLL * TPI) {
            real4_t q[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) q[u] = pos[k + u * TPI < hi ? list[k + u * TPI] : (int)i];
#pragma unroll
            for (int u = 0; u < UNROLL; u++) PAIRM(p, q[u], k + u * TPI < hi);
        }
    }
    red[0][t] = fx; red[1][t] = fy; red[2][t] = fz; red[3][t] = e; red[4][t] = w;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = TPI / 2; s > 0; s >>= 1) {
        if (lane < s)
            for (int c = 0; c < 5; c++) red[c][t] += red[c][t + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && i < n) {
        vstore4((real4_t)(red[0][t], red[1][t], red[2][t], REAL_C(0.5) * red[3][t]), i, f);
        vir[i] = REAL_C(0.5) * red[4][t];
    }
}

/* ---- half list, j-forces aggregated per work-group in a local hash table ---- */
#ifndef HS
#define HS 1024
#endif
#ifndef MAXP
#define MAXP 16
#endif
inline void local_add(volatile __local UINT_T *a, real_t v)
{
    UINT_T old = *a, ex;
    do {
        ex = old;
        old = CMPXCHG(a, ex, AS_U(AS_R(ex) + v));
    } while (old != ex);
}

/* slot of j in the table (inserting it), or -1 when the probes run out */
inline int slot_of(volatile __local int *key, int j)
{
    uint s = (uint)j & (HS - 1);
    for (int q = 0; q < MAXP; q++) {
        int old = atomic_cmpxchg(&key[s], -1, j);
        if (old == -1 || old == j) return (int)s;
        s = (s + 1) & (HS - 1);
    }
    return -1;
}

inline void scatter(volatile __local int *key, volatile __local UINT_T *val, volatile __global real_t *f, int j,
                    real_t vx, real_t vy, real_t vz)
{
    int s = slot_of(key, j);
    if (s >= 0) {
        local_add(&val[s], vx);
        local_add(&val[HS + s], vy);
        local_add(&val[2 * HS + s], vz);
    } else {
        cas_add3(&f[4 * j], vx, vy, vz, f[4 * j], f[4 * j + 1], f[4 * j + 2]);
    }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void x_half_loc(__global const real4_t *restrict pos, uint n, __global const uint *restrict offset,
                __global const int *restrict list, LJ_ARGS, volatile __global real_t *f, __global real_t *vir)
{
    __local int key[HS];
    __local UINT_T val[3 * HS];
    uint t = get_local_id(0);
    for (uint s = t; s < HS; s += WG) {
        key[s] = -1;
        val[s] = 0; val[HS + s] = 0; val[2 * HS + s] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint i = get_global_id(0);
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0, gx, gy, gz;
    if (i < n) {
        real4_t p = pos[i];
        uint hi = offset[i + 1];
        for (uint k = offset[i]; k < hi; k++) {
            int j = list[k];
            real4_t q = pos[j];
            PAIR(p, q, gx, gy, gz);
            if (gx != 0 || gy != 0 || gz != 0) scatter(key, val, f, j, -gx, -gy, -gz);
        }
        scatter(key, val, f, (int)i, fx, fy, fz);
        f[4 * i + 3] = e;
        vir[i] = w;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = t; s < HS; s += WG) {
        int j = key[s];
        if (j >= 0)
            cas_add3(&f[4 * j], AS_R(val[s]), AS_R(val[HS + s]), AS_R(val[2 * HS + s]), f[4 * j], f[4 * j + 1],
                     f[4 * j + 2]);
    }
}

/* ---- 2026-11-23 session 8: software-pipelined full list (fp64 goal) ----
 * PAIR2: branch-free, one-sided minimum image (i in the lower half of the box
 * can only see images across the lower face, so the shift is fixed per i and
 * dimension), U and F from c12 = 4 eps s^12, c6 = 4 eps s^6 with ir6 masked to
 * 0 beyond r_cut (so F and U vanish without further selects); the energy shift
 * is subtracted once per in-cut pair at the end (cnt). */
#ifndef PIPE
#define PIPE 1
#endif
#ifdef IMG_SELECT2
#define IMG1(d, h, s, b) ((d) > (h) ? (d) - (b) : ((d) < -(h) ? (d) + (b) : (d)))
#else
#define IMG1(d, h, s, b) (fabs(d) > (h) ? (d) + (s) : (d))
#endif
#ifdef RCP_NEWTON
/* 1/x from the fp32 reciprocal and two Newton steps (2^-22 -> 2^-44 -> ~1 ulp) */
#define RCP64(x) rcp_newton(x)
inline real_t rcp_newton(real_t x)
{
    real_t y = (real_t)native_recip((float)x);
    real_t e = fma(-x, y, REAL_C(1.0));
    y = fma(y, e, y);
    e = fma(-x, y, REAL_C(1.0));
    return fma(y, e, y);
}
#else
#define RCP64(x) (REAL_C(1.0) / (x))
#endif

#define PAIR2(p, q, ok)                                                                \
    {                                                                                  \
        real_t dx = IMG1(p.x - q.x, hb.x, sh.x, box.x);                                \
        real_t dy = IMG1(p.y - q.y, hb.y, sh.y, box.y);                                \
        real_t dz = IMG1(p.z - q.z, hb.z, sh.z, box.z);                                \
        real_t r2 = fma(dx, dx, fma(dy, dy, dz * dz));                                 \
        int in_ = (ok) && r2 < rc2;                                                    \
        real_t ir2 = RCP64(in_ ? r2 : REAL_C(1.0));                                    \
        real_t ir6 = ir2 * ir2 * ir2;                                                  \
        ir6 = in_ ? ir6 : REAL_C(0.0);                                                 \
        real_t fp = ir6 * fma(c12x12, ir6, -c6x6) * ir2;                               \
        fx = fma(fp, dx, fx); fy = fma(fp, dy, fy); fz = fma(fp, dz, fz);              \
        EV(e = fma(ir6, fma(c12, ir6, -c6), e);)                                       \
        EV(w = fma(fp, r2, w);)                                                        \
        EV(cnt += in_;)                                                                \
    }

#define SETUP2                                                                         \
    real4_t hb = REAL_C(0.5) * box;                                                    \
    real4_t sh = (real4_t)(p.x < hb.x ? box.x : -box.x, p.y < hb.y ? box.y : -box.y,   \
                           p.z < hb.z ? box.z : -box.z, 0);                            \
    real_t c6 = eps4 * sig2 * sig2 * sig2, c12 = c6 * sig2 * sig2 * sig2;              \
    real_t c12x12 = REAL_C(12.0) * c12 * (eps24 / (REAL_C(6.0) * eps4)),               \
           c6x6 = REAL_C(6.0) * c6 * (eps24 / (REAL_C(6.0) * eps4));                   \
    real_t fx = 0, fy = 0, fz = 0, e = 0, w = 0;                                       \
    int cnt = 0;

/* One work-item per i over list[k*n + i]; positions of block b+1 and indices of
 * block b+2 are loaded before block b is computed (PIPE=1), or plain blocks
 * (PIPE=0). */
__kernel void x_full_tp(__global const real4_t *restrict pos, uint n, __global const uint *restrict count,
                        __global const int *restrict list, LJ_ARGS, __global real_t *f, __global real_t *vir)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    SETUP2
    uint m = count[i];
#if PIPE
    int jn[UNROLL];
    real4_t q[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) jn[u] = (uint)u < m ? list[(size_t)u * n + i] : (int)i;
#pragma unroll
    for (int u = 0; u < UNROLL; u++) q[u] = pos[jn[u]];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) jn[u] = (uint)(UNROLL + u) < m ? list[(size_t)(UNROLL + u) * n + i] : (int)i;
    for (uint k = 0; k < m; k += UNROLL) {
        real4_t qc[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) qc[u] = q[u];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) q[u] = pos[jn[u]];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            uint kk = k + 2 * UNROLL + u;
            jn[u] = kk < m ? list[(size_t)kk * n + i] : (int)i;
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) PAIR2(p, qc[u], k + u < m);
    }
#else
    for (uint k = 0; k < m; k += UNROLL) {
        real4_t q[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) q[u] = pos[k + u < m ? list[(size_t)(k + u) * n + i] : (int)i];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) PAIR2(p, q[u], k + u < m);
    }
#endif
    e -= shift * (real_t)cnt;
    vstore4((real4_t)(fx, fy, fz, REAL_C(0.5) * e), i, f);
    vir[i] = REAL_C(0.5) * w;
}

/* TPI work-items per i, the lane in the upper bits of the local id (a warp
 * holds 32 consecutive i of one lane: coalesced list loads); lane l takes
 * entries l, l + TPI, ...; pipelined as x_full_tp; reduction in local memory. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void x_full_t2d(__global const real4_t *restrict pos, uint n, __global const uint *restrict count,
                __global const int *restrict list, LJ_ARGS, __global real_t *f, __global real_t *vir)
{
    __local real_t red[5][WG];
    uint t = get_local_id(0);
    uint x = t % (WG / TPI), lane = t / (WG / TPI);
    uint i = get_group_id(0) * (WG / TPI) + x;
    uint ii = min(i, n - 1);
    real4_t p = pos[ii];
    SETUP2
    uint m = i < n ? count[ii] : 0;
    int jn[UNROLL];
    real4_t q[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        uint kk = lane + TPI * u;
        jn[u] = kk < m ? list[(size_t)kk * n + ii] : (int)ii;
    }
#pragma unroll
    for (int u = 0; u < UNROLL; u++) q[u] = pos[jn[u]];
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
        uint kk = lane + TPI * (UNROLL + u);
        jn[u] = kk < m ? list[(size_t)kk * n + ii] : (int)ii;
    }
    for (uint k = lane; k < m; k += TPI * UNROLL) {
        real4_t qc[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) qc[u] = q[u];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) q[u] = pos[jn[u]];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            uint kk = k + TPI * (2 * UNROLL + u);
            jn[u] = kk < m ? list[(size_t)kk * n + ii] : (int)ii;
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) PAIR2(p, qc[u], k + TPI * u < m);
    }
    e -= shift * (real_t)cnt;
    red[0][t] = fx; red[1][t] = fy; red[2][t] = fz; red[3][t] = e; red[4][t] = w;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0 && i < n) {
        for (uint l = 1; l < TPI; l++)
            for (int c = 0; c < 5; c++) red[c][t] += red[c][t + l * (WG / TPI)];
        vstore4((real4_t)(red[0][t], red[1][t], red[2][t], REAL_C(0.5) * red[3][t]), i, f);
        vir[i] = REAL_C(0.5) * red[4][t];
    }
}
