/*
 * md_integrate.cl — velocity Verlet (NVE) on cell-sorted particles:
 *   kick_drift: v += dt/2 f/m ; x += dt v ; wrap x into the box, counting
 *               crossings in the image flags; with kick_first the last
 *               step's second half kick before (the same forces: the two
 *               kernels of a step and the next in one pass over v and f,
 *               the same additions in the same order)
 *   kick_drift_pack: kick_drift, and the positions the ghost exchange
 *               sends packed on the way (the distributed plan, mpi.c)
 *   kick:       v += dt/2 f/m
 * both over the rows 0 .. n + skip_n - 1 but the skip_n from skip_at (all
 * of them: skip_n 0; rows a .. b - 1 alone: n = b - a, skip_at 0, skip_n a),
 * so that the distributed plan can advance the rows far from its ghosts
 * apart from the others (mpi.c); and where nown is not ~0 but the ghosts'
 * rows (perm[i] >= nown, sorted row i holding atom perm[i] of the owned
 * atoms 0 .. nown - 1 and the ghosts behind them): the unpack overwrites
 * their positions before any force reads them.
 * v.w holds the mass.  f is the LJ output (f[4 i + 0..2]).
 * max_displacement: the largest |x - x_ref|^2 (minimum image) since the last
 * neighbour build, as the bits of a non-negative float (ordered like uint).
 * Plans bound to an application's buffers (clphys_md_buffers, caller order):
 *   check_state: the first atom whose state is unusable
 *   pull:        the plan's working arrays from the application's
 *   push:        the application's arrays from the plan's working ones
 */
#include "platform_common.h"

/* x into [0, b) along one axis, the crossing counted in the image flag:
 * one box length at most (a step's drift; md_check_state's bound on an
 * application's positions). */
static inline void md_wrap1(real_t *x, int *im, real_t b)
{
    if (*x >= b) {
        *x -= b;
        (*im)++;
    } else if (*x < 0) {
        *x += b;
        (*im)--;
    }
}

/* md_wrap1 along x, y and z. */
static inline void md_wrap(real4_t *x, int4 *im, real4_t box)
{
    real_t c[3] = {x->x, x->y, x->z};
    int m[3] = {im->x, im->y, im->z};
    md_wrap1(&c[0], &m[0], box.x);
    md_wrap1(&c[1], &m[1], box.y);
    md_wrap1(&c[2], &m[2], box.z);
    x->x = c[0], x->y = c[1], x->z = c[2];
    im->x = m[0], im->y = m[1], im->z = m[2];
}

/* The row of a launch's thread t: the skip_n rows from skip_at left out
 * (*i); 0 where it holds a ghost (nown not ~0 and perm[*i] >= nown). */
static inline int md_row(uint t, uint skip_at, uint skip_n, __global const uint *perm, uint nown, uint *i)
{
    *i = t >= skip_at ? t + skip_n : t;
    return nown == ~0u || perm[*i] < nown;
}

/* v += h f, h = dt/2 / m */
static inline void md_half_kick(real4_t *v, real_t h, real_t fx, real_t fy, real_t fz)
{
    v->x += h * fx;
    v->y += h * fy;
    v->z += h * fz;
}

/* One row's kick and drift (md_kick_drift): row i's new position, also
 * stored. */
static inline real4_t md_kick_drift_row(__global real4_t *x, __global real4_t *v, __global int4 *img,
                                        __global const real_t *f, real_t dt, real4_t box, int kick_first, uint i)
{
    real4_t vi = v[i], xi = x[i];
    real_t h = REAL_C(0.5) * dt / vi.w;
    const real_t fx = f[4 * i], fy = f[4 * i + 1], fz = f[4 * i + 2];
    if (kick_first) md_half_kick(&vi, h, fx, fy, fz);
    md_half_kick(&vi, h, fx, fy, fz);
    xi.x += dt * vi.x;
    xi.y += dt * vi.y;
    xi.z += dt * vi.z;
    int4 im = img[i];
    md_wrap(&xi, &im, box);
    img[i] = im;
    x[i] = xi;
    v[i] = vi;
    return xi;
}

__kernel void md_kick_drift(__global real4_t *x, __global real4_t *v, __global int4 *img, __global const real_t *f,
                            real_t dt, real4_t box, uint n, uint skip_at, uint skip_n, __global const uint *perm,
                            uint nown, int kick_first)
{
    uint t = get_global_id(0), i;
    if (t >= n || !md_row(t, skip_at, skip_n, perm, nown, &i)) return;
    md_kick_drift_row(x, v, img, f, dt, box, kick_first, i);
}

/* md_kick_drift, and the new positions of the atoms the first cut
 * dimension's two ghost swaps send packed as md_ghost_pack packs them
 * (cl/md_ghost.cl): row i to buf's place slot[i] (~0: not sent), moved
 * into its receiver's frame by delta_a below place na (the first swap's)
 * and delta_b from it.  The pack's launch, and the copy's wait for it,
 * are saved: the positions start for the host as soon as the drift ends. */
__kernel void md_kick_drift_pack(__global real4_t *x, __global real4_t *v, __global int4 *img, __global const real_t *f,
                                 real_t dt, real4_t box, uint n, uint skip_at, uint skip_n, __global const uint *perm,
                                 uint nown, int kick_first, __global const uint *slot, uint na, real4_t delta_a,
                                 real4_t delta_b, __global real_t *buf)
{
    uint t = get_global_id(0), i;
    if (t >= n || !md_row(t, skip_at, skip_n, perm, nown, &i)) return;
    real4_t xi = md_kick_drift_row(x, v, img, f, dt, box, kick_first, i);
    const uint k = slot[i];
    if (k != ~0u) vstore3((xi + (k < na ? delta_a : delta_b)).xyz, k, buf);
}

__kernel void md_kick(__global real4_t *v, __global const real_t *f, real_t dt, uint n, uint skip_at, uint skip_n,
                      __global const uint *perm, uint nown)
{
    uint t = get_global_id(0), i;
    if (t >= n || !md_row(t, skip_at, skip_n, perm, nown, &i)) return;
    real4_t vi = v[i];
    md_half_kick(&vi, REAL_C(0.5) * dt / vi.w, f[4 * i], f[4 * i + 1], f[4 * i + 2]);
    v[i] = vi;
}

/* one atomic per work-group of MD_WG (a power of two, host-chosen) after a
 * local-memory max */
#ifndef MD_WG
#define MD_WG 64
#endif
__kernel __attribute__((reqd_work_group_size(MD_WG, 1, 1))) void md_max_displacement(__global const real4_t *x,
                                                                                     __global const real4_t *xref,
                                                                                     real4_t box, uint n,
                                                                                     volatile __global uint *dmax)
{
    __local float red[MD_WG];
    uint i = get_global_id(0), t = get_local_id(0);
    float d2 = 0;
    if (i < n) {
        real4_t d = x[i] - xref[i];
        d.x -= box.x * rint(d.x / box.x);
        d.y -= box.y * rint(d.y / box.y);
        d.z -= box.z * rint(d.z / box.z);
        d2 = (float)(d.x * d.x + d.y * d.y + d.z * d.z);
    }
    red[t] = d2;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = MD_WG / 2; s > 0; s >>= 1) {
        if (t < s) red[t] = fmax(red[t], red[t + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) atomic_max(dmax, as_uint(red[0]));
}

/* *bad = min over atoms i with a non-finite coordinate or velocity, a
 * position outside [lo - L, hi + L) or a mass <= 0 (n when none). */
__kernel void md_check_state(__global const real4_t *ux, __global const real4_t *uv, real4_t lo, real4_t box, uint n,
                             volatile __global uint *bad)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t x = ux[i] - lo, v = uv[i];
    int ok = isfinite(v.x) && isfinite(v.y) && isfinite(v.z) && v.w > 0 && isfinite(v.w);
    ok = ok && x.x >= -box.x && x.x < 2 * box.x && x.y >= -box.y && x.y < 2 * box.y && x.z >= -box.z &&
         x.z < 2 * box.z; /* false for NaN */
    if (!ok) atomic_min(bad, i);
}

/* Working arrays in the application's order (sorted by cell next): x[i] =
 * its position relative to lo, wrapped into [0, L) with the crossing
 * counted in the image flags (uimg NULL: from 0), v[i], perm[i] = i. */
__kernel void md_pull(__global const real4_t *ux, __global const real4_t *uv, real4_t lo, real4_t box, uint n,
                      __global const int4 *uimg, __global real4_t *x, __global real4_t *v, __global int4 *img,
                      __global uint *perm)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t xi = ux[i];
    int4 im = uimg ? uimg[i] : (int4)(0);
    xi.x -= lo.x;
    xi.y -= lo.y;
    xi.z -= lo.z;
    md_wrap(&xi, &im, box);
    x[i] = xi;
    v[i] = uv[i];
    img[i] = im;
    perm[i] = i;
}

/* The application's atom perm[s] from the working arrays: position + lo,
 * velocity and mass, force and energy share (f[4 s + 0..3]), image flags
 * (uimg NULL: not kept). */
__kernel void md_push(__global const real4_t *x, __global const real4_t *v, __global const int4 *img,
                      __global const real_t *f, __global const uint *perm, real4_t lo, uint n, __global real4_t *ux,
                      __global real4_t *uv, __global int4 *uimg, __global real4_t *uf)
{
    uint s = get_global_id(0);
    if (s >= n) return;
    uint i = perm[s];
    real4_t xs = x[s];
    xs.x += lo.x;
    xs.y += lo.y;
    xs.z += lo.z;
    ux[i] = xs;
    uv[i] = v[s];
    uf[i] = vload4(s, f);
    if (uimg) uimg[i] = img[s];
}
