/* poisson_stencil.cl — y = A x for the symmetric 7-point operator of the
 * Poisson path (include/clphys_poisson.h), stored as the excess of its
 * diagonal over the couplings, e = a0 - sum |a_nb| (lambda V, 0 for the
 * Poisson problem, 1 on land), and the forward couplings ax (c <-> i+1),
 * ay (c <-> j+1), az (c <-> k+1), all <= 0; the backward coupling of c is
 * the forward one of its neighbour.  In this flux form
 *   (A x)_c = e_c x_c - sum_nb a_nb (x_c - x_nb)
 * nothing cancels: with fp32 coefficients a0 x - sum |a| x_nb loses the
 * digits of the small e and of the differences when the couplings are
 * large and anisotropic (ocean grids: vertical couplings 1e8 times the
 * horizontal ones).  Cell index
 * c = i + nx (j + ny k), i fastest, so that neighbouring work-items read
 * neighbouring words.  Neighbours in x and y wrap around (the coefficient
 * across a closed edge is 0); in z the operator has no wrap (az = 0 at
 * k = nz - 1).  Two variants:
 *   stencil_column  the seed's (Yamagishi & Matsumura 2016): a 2-D grid of
 *                   work-items over (i, j), each looping over k, so that
 *                   x(k-1), x(k), x(k+1) and the coupling to k-1 are carried
 *                   in registers from one k to the next
 *   stencil_cell    one work-item per cell, a 3-D grid
 *   stencil_column_vec  (built with -DVW) the column kernel over VW
 *                   neighbouring columns per work-item in vector types
 *                   (poisson_column_vec.h), the shape PoCL runs in SIMD lanes;
 *                   nx a multiple of VW
 * Built with -DREAL_T (platform_common.h).  Compulsory traffic per cell: 4
 * coefficient arrays and x read, y written. */
#include "platform_common.h"

__kernel void stencil_column(__global real_t *restrict y, __global const real_t *restrict x,
                             __global const real_t *restrict e, __global const real_t *restrict ax,
                             __global const real_t *restrict ay, __global const real_t *restrict az, int nx, int ny,
                             int nz)
{
    const int i = get_global_id(0), j = get_global_id(1);
    if (i >= nx || j >= ny) return;
    const int plane = nx * ny;
    const int dw = (i > 0 ? i - 1 : nx - 1) - i, de = (i + 1 < nx ? i + 1 : 0) - i;
    const int ds = ((j > 0 ? j - 1 : ny - 1) - j) * nx, dn = ((j + 1 < ny ? j + 1 : 0) - j) * nx;
    int c = i + nx * j;
    real_t xm = 0, azm = 0, xc = x[c];
    for (int k = 0; k < nz; k++) {
        const int cb = k + 1 < nz ? c + plane : c; /* az = 0 at the bottom */
        const real_t xp = x[cb], azc = az[c];
        y[c] = e[c] * xc - azc * (xc - xp) - azm * (xc - xm) - ax[c] * (xc - x[c + de]) -
               ax[c + dw] * (xc - x[c + dw]) - ay[c] * (xc - x[c + dn]) - ay[c + ds] * (xc - x[c + ds]);
        xm = xc, xc = xp, azm = azc;
        c = cb;
    }
}

__kernel void stencil_cell(__global real_t *restrict y, __global const real_t *restrict x,
                           __global const real_t *restrict e, __global const real_t *restrict ax,
                           __global const real_t *restrict ay, __global const real_t *restrict az, int nx, int ny,
                           int nz)
{
    const int i = get_global_id(0), j = get_global_id(1), k = get_global_id(2);
    if (i >= nx || j >= ny || k >= nz) return;
    const int plane = nx * ny, c = i + nx * (j + ny * k);
    const int w = c + (i > 0 ? -1 : nx - 1), ie = c + (i + 1 < nx ? 1 : 1 - nx);
    const int s = c + (j > 0 ? -nx : (ny - 1) * nx), n = c + (j + 1 < ny ? nx : (1 - ny) * nx);
    const int u = k > 0 ? c - plane : c, d = k + 1 < nz ? c + plane : c;
    const real_t azu = k > 0 ? az[u] : 0, xc = x[c];
    y[c] = e[c] * xc - ax[c] * (xc - x[ie]) - ax[w] * (xc - x[w]) - ay[c] * (xc - x[n]) - ay[s] * (xc - x[s]) -
           az[c] * (xc - x[d]) - azu * (xc - x[u]);
}

#ifdef VW
#include "poisson_column_vec.h"

__kernel void stencil_column_vec(__global real_t *restrict y, __global const real_t *restrict x,
                                 __global const real_t *restrict e, __global const real_t *restrict ax,
                                 __global const real_t *restrict ay, __global const real_t *restrict az, int nx, int ny,
                                 int nz)
{
    const int i0 = get_global_id(0) * VW, j = get_global_id(1);
    if (i0 >= nx || j >= ny) return;
    const int plane = nx * ny, row = nx * j;
    const int ds = (j > 0 ? -1 : ny - 1) * nx, dn = (j + 1 < ny ? 1 : 1 - ny) * nx;
    int c = i0 + row;
    vreal xm = 0, azm = 0, xc = vload_at(x, c);
    for (int k = 0; k < nz; k++) {
        const int r0 = row + k * plane, cb = k + 1 < nz ? c + plane : c;
        const vreal xp = vload_at(x, cb), azc = vload_at(az, c);
        const vreal v = vload_at(e, c) * xc - azc * (xc - xp) - azm * (xc - xm) -
                        vload_at(ax, c) * (xc - east_of(x, c, i0, r0, nx)) -
                        west_of(ax, c, i0, r0, nx) * (xc - west_of(x, c, i0, r0, nx)) -
                        vload_at(ay, c) * (xc - vload_at(x, c + dn)) -
                        vload_at(ay, c + ds) * (xc - vload_at(x, c + ds));
        VSTORE(v, 0, y + c);
        xm = xc, xc = xp, azm = azc;
        c = cb;
    }
}
#endif
