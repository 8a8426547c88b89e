/* poisson_halo.cl — what a rank of the distributed Poisson plan
 * (host/poisson/mpi_solve.c, include/clphys_poisson_mpi.h) adds to the
 * single-device kernels.  A rank's arrays hold its block of columns with a
 * halo around it, in the layout of cl/poisson_stencil.cl (c = i + nx (j +
 * ny k)); the kernels of cl/poisson_stencil.cl and cl/poisson_line_relax.cl run on
 * them unchanged, reading the one-cell ring of the halo that the exchange
 * filled.
 *   halo_zero     v = 0 outside the block [i0, i1) x [j0, j1): the outputs
 *                 of the CG's operator and preconditioner, so that the
 *                 space's sums over all cells are the block's sums
 *   prolong_cols  x += P e: the coarse correction (column ((i + 1) >> 1,
 *                 (j + 1) >> 1) of the level below: every level's block
 *                 starts at local column 1, cl/poisson_line_relax.h) added to the wet cells, piecewise
 *                 constant, before the halo exchange that follows it
 *   faces_pack, faces_unpack  the block's four faces to a contiguous
 *                 buffer and the four rings from it (the exchange's transfers)
 * Built with -DREAL_T (platform_common.h). */
#include "platform_common.h"

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

/* The cell of element t of the four faces of a block (bx x by columns behind
 * a halo of h, all layers): west, east, south, north, each layer after
 * layer; ring = 1: the ring cells outside those faces instead. */
static inline int face_cell(int t, int nx, int ny, int nz, int h, int bx, int by, int ring)
{
    const int fx = by * nz, fy = bx * nz;
    int i, j, k;
    if (t < 2 * fx) {
        const int e = t >= fx, u = t - e * fx;
        k = u / by, j = h + u % by;
        i = e ? h + bx - 1 + ring : h - ring;
    } else {
        const int u0 = t - 2 * fx, n = u0 >= fy, u = u0 - n * fy;
        k = u / bx, i = h + u % bx;
        j = n ? h + by - 1 + ring : h - ring;
    }
    return i + nx * (j + ny * k);
}

/* The block's four faces of v into buf (faces_pack), the four rings of v
 * from buf + off (faces_unpack): an exchange moves one contiguous read and
 * one write over the bus, with one launch each way. */
__kernel void faces_pack(__global real_t *restrict buf, __global const real_t *restrict v, int nx, int ny, int nz,
                         int h, int bx, int by)
{
    const int t = get_global_id(0);
    if (t < 2 * (bx + by) * nz) buf[t] = v[face_cell(t, nx, ny, nz, h, bx, by, 0)];
}

__kernel void faces_unpack(__global real_t *restrict v, __global const real_t *restrict buf, int nx, int ny, int nz,
                           int h, int bx, int by, int off)
{
    const int t = get_global_id(0);
    if (t < 2 * (bx + by) * nz) v[face_cell(t, nx, ny, nz, h, bx, by, 1)] = buf[off + t];
}
