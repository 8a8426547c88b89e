/*
 * md_ghost.cl — ghost atoms of the distributed MD plan (host/md/ghost.c):
 *   pack:   buf[off + k] = (pos[idx[off + k]] + delta).xyz, the positions
 *           of the atoms both swaps of a dimension send, moved into the
 *           receivers' frames (delta_a for k < na, the first swap's;
 *           delta_b after): three reals per atom (buf holds 3 (off + n)
 *           reals)
 *   unpack: pos[slot[off + k]].xyz = buf[off + k], the positions received
 *           into the ghost atoms' places in the cell-sorted arrays
 *   select: at a rebuild, the atoms i < n below `face` along dim (side 0)
 *           or at or above it (side 1), counted in count[side]: side 0's
 *           indices at idx[off + k], side 1's behind them at
 *           idx[off + count[0] + k] (side 0's launch has finished: the
 *           two go back to back on one in-order queue), k from the
 *           counter (in no particular order); past room entries from off
 *           they are counted, not written
 *   places: slot[off + k] = first + k for k < n: at a rebuild, the local
 *           places of the ghosts received (behind the atoms there before)
 * pos is real4 (x, y, z, w); w does not travel: the receiver's ghost keeps
 * its own (the rebuild wrote it), so a quarter fewer bytes cross per step.
 */
#include "platform_common.h"

__kernel void md_ghost_pack(__global const real4_t *pos, __global const uint *idx, uint off, uint n, uint na,
                            real4_t delta_a, real4_t delta_b, __global real_t *buf)
{
    uint k = get_global_id(0);
    if (k >= n) return;
    real4_t p = pos[idx[off + k]] + (k < na ? delta_a : delta_b);
    vstore3(p.xyz, off + k, buf);
}

/* pos as four reals per atom: only x, y, z are stored, so no atom's w is
 * read first (a dependent load per ghost) */
__kernel void md_ghost_unpack(__global real_t *pos, __global const uint *slot, uint off, uint n,
                              __global const real_t *buf)
{
    uint k = get_global_id(0);
    if (k >= n) return;
    vstore3(vload3(off + k, buf), 0, pos + 4 * (size_t)slot[off + k]);
}

__kernel void md_ghost_select(__global const real4_t *pos, uint n, int dim, int side, real_t face, uint off, uint room,
                              __global uint *idx, volatile __global uint *count)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    real_t x = dim == 0 ? p.x : dim == 1 ? p.y : p.z;
    if (side == 0 ? x < face : x >= face) {
        uint k = atomic_inc(count + side);
        uint before = side == 0 ? 0 : count[0];
        if (before < room && k < room - before) idx[off + before + k] = i;
    }
}

__kernel void md_ghost_places(__global uint *slot, uint off, uint first, uint n)
{
    uint k = get_global_id(0);
    if (k < n) slot[off + k] = first + k;
}
