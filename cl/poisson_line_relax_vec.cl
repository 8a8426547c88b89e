/* poisson_line_relax_vec.cl — the V-cycle kernels of cl/poisson_line_relax.cl in the shape
 * CPUs run well (variant column-vec, include/clphys_poisson.h): each
 * work-item takes VW neighbouring columns of one row as the lanes of vector
 * types, so that the Thomas algorithm, which is sequential along each
 * column, runs VW columns at once in SIMD registers.  (PoCL runs the
 * work-items of a group one after the other and vectorizes across them only
 * when the body has no loop; a work-item per column leaves the line solve
 * scalar.)  Same arithmetic as poisson_line_relax.cl; the horizontal neighbours of
 * the first and last lane come from a shuffle with the wrapped-around column.
 * Kernels:
 *   line_jacobi_zero_vec, line_jacobi_vec   x_old = 0, x_old = xo
 *   prolong_add                             xo += P e on wet cells (the
 *                                           prolongation is a pass of its own
 *                                           here, not fused into the step)
 *   residual_restrict_vec                   bc = R (b - A x) for levels
 *                                           coarsened in x (sx = 1)
 * Build options: as poisson_line_relax.cl, -DB_IS_DOUBLE / -DXO_IS_DOUBLE when B_T /
 * XO_T is double, and -DVW (4 or 8) with nx a multiple of VW (the host
 * uses poisson_line_relax.cl on other levels). */
#include "platform_common.h"

#ifndef B_T
#define B_T real_t
#endif
#ifndef XO_T
#define XO_T real_t
#endif

#include "poisson_column_vec.h"

static inline vreal vload_b(__global const B_T *b, int c)
{
#if defined(B_IS_DOUBLE) && !defined(REAL_IS_DOUBLE)
    return CONVERT_REAL(CAT(vload, VW)(0, b + c));
#else
    return VLOAD(0, b + c);
#endif
}

static inline void vstore_x(vreal v, __global XO_T *x, int c)
{
#if defined(XO_IS_DOUBLE) && !defined(REAL_IS_DOUBLE)
    CAT(vstore, VW)(CAT(convert_double, VW)(v), 0, x + c);
#else
    VSTORE(v, 0, x + c);
#endif
}

static inline void line_jacobi_vec_body(const int mode, __global XO_T *restrict xn, __global const real_t *restrict xo,
                                        __global const B_T *restrict b, __global const real_t *restrict e,
                                        __global const real_t *restrict ax, __global const real_t *restrict ay,
                                        __global const real_t *restrict az, real_t omega, int nx, int ny)
{
    const int i0 = get_global_id(0) * VW, j = get_global_id(1);
    if (i0 >= nx || j >= ny) return;
    const int plane = nx * ny, row = nx * j, col = i0 + row;
    const int ds = (j > 0 ? -1 : ny - 1) * nx, dn = (j + 1 < ny ? 1 : 1 - ny) * nx;
    vreal dp[NZ], gp[NZ];
    vreal dprev = 0, rq = 0, up = 0, xm = 0;
    vreal xc = mode == 0 ? (vreal)0 : vload_at(xo, col);
    for (int k = 0; k < NZ; k++) {
        const int c = col + k * plane, r0 = row + k * plane;
        const vreal xp = mode == 0 || k + 1 == NZ ? xc : vload_at(xo, c + plane);
        const vreal tw = -west_of(ax, c, i0, r0, nx), te = -vload_at(ax, c), ts = -vload_at(ay, c + ds),
                    tn = -vload_at(ay, c), u = -vload_at(az, c), ek = vload_at(e, c);
        vreal r = vload_b(b, c);
        if (mode != 0)
            r -= ek * xc + te * (xc - east_of(xo, c, i0, r0, nx)) + tw * (xc - west_of(xo, c, i0, r0, nx)) +
                 tn * (xc - vload_at(xo, c + dn)) + ts * (xc - vload_at(xo, c + ds)) + u * (xc - xp) + up * (xc - xm);
        const vreal qk = ek + tw + te + ts + tn + up * rq;
        const vreal piv = qk + u;
        const vreal inv = piv > (vreal)0 ? (vreal)1 / piv : (vreal)0;
        rq = qk * inv;
        gp[k] = u * inv;
        dprev = dp[k] = (r + up * dprev) * inv;
        up = u;
        xm = xc, xc = xp;
    }
    vreal dlt = 0;
    for (int k = NZ - 1; k >= 0; k--) {
        const int c = col + k * plane;
        dlt = dp[k] + gp[k] * dlt;
        vstore_x((mode == 0 ? (vreal)0 : vload_at(xo, c)) + omega * dlt, xn, c);
    }
}

#define LINE_ARGS                                                                                                      \
    __global XO_T *restrict xn, __global const real_t *restrict xo, __global const B_T *restrict b,                    \
        __global const real_t *restrict e, __global const real_t *restrict ax, __global const real_t *restrict ay,     \
        __global const real_t *restrict az, real_t omega, int nx, int ny
#define LINE_PASS xn, xo, b, e, ax, ay, az, omega, nx, ny

__kernel void line_jacobi_zero_vec(LINE_ARGS) { line_jacobi_vec_body(0, LINE_PASS); }
__kernel void line_jacobi_vec(LINE_ARGS) { line_jacobi_vec_body(1, LINE_PASS); }

__kernel void prolong_add(__global real_t *restrict x, __global const real_t *restrict ec,
                          __global const uchar *restrict mask, int nx, int ny, int nz, int ncx, int ncy, int sy)
{
    const int i0 = get_global_id(0) * VW, j = get_global_id(1);
    if (i0 >= nx || j >= ny) return;
    const int plane = nx * ny, cplane = ncx * ncy, p = (i0 >> 1) + ncx * (j >> sy);
    for (int k = 0; k < nz; k++) {
        const int c = i0 + nx * j + k * plane;
        const vreal e2 = shuffle(VLOAD_HALF(0, ec + p + k * cplane), DUP);
        VSTORE(vload_at(x, c) + CONVERT_REAL(VLOAD(0, mask + c)) * e2, 0, x + c);
    }
}

/* Work-items over (fine columns / VW, coarse rows): the residual of VW
 * columns in each of the coarse cell's fine rows, masked, summed over the
 * rows and over lane pairs into VW / 2 coarse columns. */
__kernel void residual_restrict_vec(__global real_t *restrict bc, __global const real_t *restrict x,
                                    __global const uchar *restrict mask, __global const B_T *restrict b,
                                    __global const real_t *restrict e, __global const real_t *restrict ax,
                                    __global const real_t *restrict ay, __global const real_t *restrict az, int nx,
                                    int ny, int ncx, int ncy, int sy)
{
    const int i0 = get_global_id(0) * VW, J = get_global_id(1);
    if (i0 >= nx || J >= ncy) return;
    const int plane = nx * ny, cplane = ncx * ncy, j0 = J << sy, j1 = min(j0 + (1 << sy), ny);
    for (int k = 0; k < NZ; k++) {
        vreal s = 0;
        for (int j = j0; j < j1; j++) {
            const int row = nx * j + k * plane, c = i0 + row;
            const int ds = (j > 0 ? -1 : ny - 1) * nx, dn = (j + 1 < ny ? 1 : 1 - ny) * nx;
            const vreal xc = vload_at(x, c), xu = k > 0 ? vload_at(x, c - plane) : xc,
                        xd = k + 1 < NZ ? vload_at(x, c + plane) : xc;
            const vreal azu = k > 0 ? vload_at(az, c - plane) : (vreal)0;
            const vreal ax_ = vload_at(e, c) * xc - vload_at(ax, c) * (xc - east_of(x, c, i0, row, nx)) -
                              west_of(ax, c, i0, row, nx) * (xc - west_of(x, c, i0, row, nx)) -
                              vload_at(ay, c) * (xc - vload_at(x, c + dn)) -
                              vload_at(ay, c + ds) * (xc - vload_at(x, c + ds)) - vload_at(az, c) * (xc - xd) -
                              azu * (xc - xu);
            s += CONVERT_REAL(VLOAD(0, mask + c)) * (vload_b(b, c) - ax_);
        }
        VSTORE_HALF(shuffle(s, EVEN) + shuffle(s, ODD), 0, bc + (i0 >> 1) + ncx * J + k * cplane);
    }
}
