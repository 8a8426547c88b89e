/*
 * nbody_gravity.cl — direct-sum gravitational acceleration and potential
 * (Miki, Takahashi & Mori 2012; Nyland, Harris & Prins, GPU Gems 3 ch. 31).
 * Positions real4 (x, y, z, m); results real4 (ax, ay, az, phi).
 *
 * Host-chosen options:
 *   WG          work-group size = j-tile length (tiled kernel)
 *   IPW         i-particles per work-item (tiled kernel), 1, 2, 4 or 8
 *   UNROLL      unroll factor of the inner j loop
 *   EPS_ZERO    eps = 0: the self pair (r^2 = 0) is removed by a select
 *   POTENTIAL   also accumulate phi
 *   NATIVE_RSQRT use native_rsqrt (fp32 on GPUs, where it is one instruction)
 *   PTX_RSQRT   NVIDIA only: the rsqrt estimate from inline PTX, flushing
 *               denormals (rsqrt.approx.ftz.f32: one MUFU.RSQ without the
 *               denormal fix-up of the non-ftz form; .f64: MUFU.RSQ64H on the
 *               high word, the estimate CUDA's own fp64 rsqrt starts from)
 *   RSQRT_NEWTON fp64: fp32 rsqrt estimate + one Newton step
 *   R3_SERIES   fp64: m/r^3 straight from an estimate y of 1/r by the series
 *               (1 - e)^(-3/2) = 1 + 3e/2 + 15e^2/8 + ..., e = 1 - r^2 y^2:
 *               7 fp64 operations for m/r^3 instead of 5 (rsqrt) + 3; the
 *               truncation error 35e^3/16 is below fp64 rounding for |e| < 2e-6
 */
#include "platform_common.h"

#ifndef UNROLL
#define UNROLL 8
#endif
#ifndef IPW
#define IPW 1
#endif

#define CP_PRAGMA(x) _Pragma(#x)
#define CP_UNROLL(n) CP_PRAGMA(unroll n)

#if defined(PTX_RSQRT) && !defined(REAL_IS_DOUBLE)
static inline float rsqrt_ptx(float x)
{
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
#define RSQRT(x)  rsqrt_ptx(x)
#define RSQRTV(x) rsqrt(x)
#elif defined(NATIVE_RSQRT) && !defined(REAL_IS_DOUBLE)
#define RSQRT(x)  native_rsqrt(x)
#define RSQRTV(x) native_rsqrt(x)
#elif defined(RSQRT_NEWTON) && defined(REAL_IS_DOUBLE)
/* fp32 estimate refined by one Newton step y (3 - x y^2) / 2: relative error
 * ~1.5 e0^2 ~ 1e-14 for an fp32 estimate error e0 ~ 1e-7 */
static inline double rsqrt_newton(double x)
{
    const double y = (double)rsqrt((float)x);
    return 0.5 * y * fma(-x * y, y, 3.0);
}
#define RSQRT(x)  rsqrt_newton(x)
#define RSQRTV(x) rsqrt(x) /* the vector kernel keeps the full rsqrt */
#else
#define RSQRT(x)  rsqrt(x)
#define RSQRTV(x) rsqrt(x)
#endif

#if defined(R3_SERIES) && defined(REAL_IS_DOUBLE)
/* The estimate of 1/sqrt(x) the series starts from. */
#ifdef PTX_RSQRT
static inline double rsqrt_seed(double x)
{
    double y;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
    return y;
}
#else
/* rsqrt, not native_rsqrt: the series needs |e| < 2e-6, which rsqrt's
 * 2 ulp bound gives and native_rsqrt (accuracy implementation-defined)
 * need not (an implementation may return fewer bits, and the series then
 * stops short of fp64 accuracy).  x within the fp32 range. */
static inline double rsqrt_seed(double x) { return (double)rsqrt((float)x); }
#endif
#endif

/* r^2 + eps^2 as three FMAs starting from eps^2 (the paper's form). */
#define R2(dx, dy, dz, eps2) fma((dz), (dz), fma((dy), (dy), fma((dx), (dx), (eps2))))

#ifdef EPS_ZERO
#define INV_R(r2)        ((r2) > (real_t)0 ? RSQRT(r2) : (real_t)0) /* compiled to a select */
#define INV_RV(r2, zero) select((zero), RSQRTV(r2), (r2) > (zero))
#else
#define INV_R(r2)        RSQRT(r2)
#define INV_RV(r2, zero) RSQRTV(r2)
#endif

/* Final result of one i: scale by G, remove the self potential, store or add. */
static inline void gravity_store(__global real4_t *out, int i, real4_t a, real_t G, real_t self_phi, int accumulate)
{
    real4_t r = (real4_t)(G * a.x, G * a.y, G * a.z, -G * a.w + self_phi);
    if (accumulate) r += out[i];
    out[i] = r;
}

#ifdef WG
/*
 * GPU-shaped: each work-group stages WG j-particles in local memory per tile
 * (global load placed before the two barriers); each work-item keeps IPW
 * i-particles in registers, spaced WG apart so loads stay coalesced.  j past
 * nj is loaded as a zero-mass particle at the origin, so the inner loop has no
 * branch.  Global size = (ceil(ni / (WG*IPW)) * WG, S).  With S = 1 the
 * results are stored; with S > 1 the j-tiles are split into S nearly equal
 * ranges (dimension 1) so that the number of work-groups fills every compute
 * unit evenly, and each range writes its raw sums to part[s * ni + i] for
 * gravity_reduce.
 */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) KERNEL_SG void
gravity_tiled(__global const real4_t *xi, int ni, __global const real4_t *xj, int nj, __global real4_t *out, real_t G,
              real_t eps2, real_t self_coef, int accumulate, __global real4_t *part)
{
    __local real4_t tile[WG];
    const int lid = get_local_id(0);
    const int base = get_group_id(0) * (WG * IPW) + lid;
    const int ns = get_num_groups(1), sp = get_group_id(1), ntiles = (nj + WG - 1) / WG;
    const int jbeg = (int)((long)sp * ntiles / ns) * WG, jend = (int)((long)(sp + 1) * ntiles / ns) * WG;
    real4_t p[IPW], a[IPW];
    for (int k = 0; k < IPW; k++) {
        p[k] = xi[min(base + k * WG, ni - 1)];
        a[k] = (real4_t)(0);
    }
    for (int j0 = jbeg; j0 < jend; j0 += WG) {
        const int j = j0 + lid;
        const real4_t q = j < nj ? xj[j] : (real4_t)(0);
        barrier(CLK_LOCAL_MEM_FENCE);
        tile[lid] = q;
        barrier(CLK_LOCAL_MEM_FENCE);
        CP_UNROLL(UNROLL)
        for (int t = 0; t < WG; t++) {
            const real4_t s = tile[t];
            CP_UNROLL(IPW)
            for (int k = 0; k < IPW; k++) {
                const real_t dx = s.x - p[k].x, dy = s.y - p[k].y, dz = s.z - p[k].z;
                const real_t r2 = R2(dx, dy, dz, eps2);
#ifdef R3_SERIES
                const real_t y = rsqrt_seed(r2), y2 = y * y, e = fma(-r2, y2, 1.0), my = s.w * y;
                real_t mi3 = my * y2 * fma(e, fma(1.875, e, 1.5), 1.0);
#ifdef POTENTIAL
                real_t mi = fma(my * e, fma(0.375, e, 0.5), my);
#endif
#ifdef EPS_ZERO
                mi3 = r2 > 0.0 ? mi3 : 0.0; /* r2 = 0 made y inf and e NaN */
#ifdef POTENTIAL
                mi = r2 > 0.0 ? mi : 0.0;
#endif
#endif
#else
                const real_t inv = INV_R(r2);
                const real_t mi = s.w * inv;
                const real_t mi3 = mi * inv * inv;
#endif
                a[k].x = fma(dx, mi3, a[k].x);
                a[k].y = fma(dy, mi3, a[k].y);
                a[k].z = fma(dz, mi3, a[k].z);
#ifdef POTENTIAL
                a[k].w += mi;
#endif
            }
        }
    }
    for (int k = 0; k < IPW; k++) {
        const int i = base + k * WG;
        if (i >= ni) continue;
        if (ns == 1)
            gravity_store(out, i, a[k], G, self_coef * p[k].w, accumulate);
        else
            part[(size_t)sp * ni + i] = a[k];
    }
}
#endif

/* Sum the S partial results of a split gravity_tiled call and store them. */
__kernel void gravity_reduce(__global const real4_t *part, int ni, int ns, __global const real4_t *xi,
                             __global real4_t *out, real_t G, real_t self_coef, int accumulate)
{
    const int i = get_global_id(0);
    if (i >= ni) return;
    real4_t a = part[i];
    for (int s = 1; s < ns; s++) a += part[(size_t)s * ni + i];
    gravity_store(out, i, a, G, self_coef * xi[i].w, accumulate);
}

/* Copy real4 positions into the SoA arrays of the vector kernel, padding
 * [nj, npad) with zero-mass particles at the origin. */
__kernel void gravity_soa(__global const real4_t *xj, int nj, __global real_t *jx, __global real_t *jy,
                          __global real_t *jz, __global real_t *jm)
{
    const int j = get_global_id(0);
    const real4_t q = j < nj ? xj[j] : (real4_t)(0);
    jx[j] = q.x;
    jy[j] = q.y;
    jz[j] = q.z;
    jm[j] = q.w;
}

/*
 * CPU-shaped: one i per work-item, j processed 16 at a time with real16_t
 * arithmetic on the SoA copy (padded to a multiple of 16), no local memory and
 * no barriers, so PoCL maps it onto SIMD lanes directly.
 */
__kernel void gravity_vector(__global const real4_t *xi, int ni, __global const real_t *jx, __global const real_t *jy,
                             __global const real_t *jz, __global const real_t *jm, int nchunks, __global real4_t *out,
                             real_t G, real_t eps2, real_t self_coef, int accumulate)
{
    const int i = get_global_id(0);
    if (i >= ni) return;
    const real4_t p = xi[i];
    const real16_t zero = (real16_t)(0);
    real16_t ax = zero, ay = zero, az = zero, ph = zero;
    for (int c = 0; c < nchunks; c++) {
        const real16_t dx = vload16(c, jx) - p.x;
        const real16_t dy = vload16(c, jy) - p.y;
        const real16_t dz = vload16(c, jz) - p.z;
        const real16_t r2 = R2(dx, dy, dz, (real16_t)(eps2));
        const real16_t inv = INV_RV(r2, zero);
        const real16_t mi = vload16(c, jm) * inv;
        const real16_t mi3 = mi * inv * inv;
        ax = fma(dx, mi3, ax);
        ay = fma(dy, mi3, ay);
        az = fma(dz, mi3, az);
#ifdef POTENTIAL
        ph += mi;
#endif
    }
    real4_t a;
    a.x = dot(ax.lo.lo, (real4_t)(1)) + dot(ax.lo.hi, (real4_t)(1)) + dot(ax.hi.lo, (real4_t)(1)) +
          dot(ax.hi.hi, (real4_t)(1));
    a.y = dot(ay.lo.lo, (real4_t)(1)) + dot(ay.lo.hi, (real4_t)(1)) + dot(ay.hi.lo, (real4_t)(1)) +
          dot(ay.hi.hi, (real4_t)(1));
    a.z = dot(az.lo.lo, (real4_t)(1)) + dot(az.lo.hi, (real4_t)(1)) + dot(az.hi.lo, (real4_t)(1)) +
          dot(az.hi.hi, (real4_t)(1));
    a.w = dot(ph.lo.lo, (real4_t)(1)) + dot(ph.lo.hi, (real4_t)(1)) + dot(ph.hi.lo, (real4_t)(1)) +
          dot(ph.hi.hi, (real4_t)(1));
    gravity_store(out, i, a, G, self_coef * p.w, accumulate);
}
