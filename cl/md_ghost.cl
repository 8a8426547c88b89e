/*
 * md_ghost.cl — ghost atoms of the distributed MD plan (host/md/md_ghost.c):
 *   pack:   buf[off + k] = pos[idx[off + k]] + delta, the positions of the
 *           atoms one exchange sends, moved into the receiver's frame
 *   unpack: pos[slot[off + k]] = buf[off + k], the positions received into
 *           the ghost atoms' places in the cell-sorted arrays
 * pos is real4 (x, y, z, w); delta.w = 0 keeps w.
 */
#include "common.h"

__kernel void md_ghost_pack(__global const real4_t *pos, __global const uint *idx, uint off, uint n, real4_t delta,
                            __global real4_t *buf)
{
    uint k = get_global_id(0);
    if (k >= n) return;
    buf[off + k] = pos[idx[off + k]] + delta;
}

__kernel void md_ghost_unpack(__global real4_t *pos, __global const uint *slot, uint off, uint n,
                              __global const real4_t *buf)
{
    uint k = get_global_id(0);
    if (k >= n) return;
    pos[slot[off + k]] = buf[off + k];
}
