/* poisson_halo.cl — what a rank of the distributed Poisson plan
 * (host/poisson/mpi_solve.c, include/clphys_poisson_mpi.h) adds to the
 * single-device kernels.  A rank's arrays hold its block of columns with a
 * halo around it, in the layout of cl/poisson_stencil.cl (c = i + nx (j +
 * ny k)); the kernels of cl/poisson_stencil.cl and cl/line_relax.cl run on
 * them unchanged, reading the one-cell ring of the halo that the exchange
 * filled.
 *   halo_zero     v = 0 outside the block [i0, i1) x [j0, j1): the outputs
 *                 of the CG's operator and preconditioner, so that the
 *                 space's sums over all cells are the block's sums
 *   prolong_cols  x += P e: the coarse correction (column ((i + 1) >> 1,
 *                 (j + 1) >> 1) of the level below: every level's block
 *                 starts at local column 1, cl/line_relax.h) added to the wet cells, piecewise
 *                 constant, before the halo exchange that follows it
 *   face_pack, face_unpack  a face of the block to a contiguous buffer and
 *                 a ring from it (the exchange's transfers)
 * Built with -DREAL_T (common.h). */
#include "common.h"

__kernel void halo_zero(__global real_t *restrict v, int nx, int ny, int nz, int i0, int i1, int j0, int j1)
{
    const int i = get_global_id(0), j = get_global_id(1);
    if (i >= nx || j >= ny || (i >= i0 && i < i1 && j >= j0 && j < j1)) return;
    for (int k = 0, c = i + nx * j; k < nz; k++, c += nx * ny) v[c] = 0;
}

__kernel void prolong_cols(__global real_t *restrict x, __global const real_t *restrict ec,
                           __global const uchar *restrict mask, int nx, int ny, int nz, int ncx, int ncy)
{
    const int i = get_global_id(0), j = get_global_id(1);
    if (i >= nx || j >= ny) return;
    for (int k = 0, c = i + nx * j, p = ((i + 1) >> 1) + ncx * ((j + 1) >> 1); k < nz;
         k++, c += nx * ny, p += ncx * ncy)
        if (mask[c]) x[c] += ec[p];
}

/* The block's face [i0, i0 + w) x [j0, j0 + h) x all layers of v into the
 * contiguous buf + off (face_pack), or back from it (face_unpack): a halo
 * exchange moves one contiguous read and one write over the bus. */
__kernel void face_pack(__global real_t *restrict buf, __global const real_t *restrict v, int nx, int ny, int nz,
                        int i0, int j0, int w, int h, int off)
{
    const int t = get_global_id(0);
    if (t >= w * h * nz) return;
    const int a = t % w, b = (t / w) % h, k = t / (w * h);
    buf[off + t] = v[(i0 + a) + nx * ((j0 + b) + ny * k)];
}

__kernel void face_unpack(__global real_t *restrict v, __global const real_t *restrict buf, int nx, int ny, int nz,
                          int i0, int j0, int w, int h, int off)
{
    const int t = get_global_id(0);
    if (t >= w * h * nz) return;
    const int a = t % w, b = (t / w) % h, k = t / (w * h);
    v[(i0 + a) + nx * ((j0 + b) + ny * k)] = buf[off + t];
}
