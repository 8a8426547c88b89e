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
 *   borders: at a rebuild of a grid cut along one dimension only
 *           (host/md/borders.c), the atoms i < min(n, count[0]) (md_classify's
 *           staying ones, count[0] of them, at the front of pos) within
 *           r_cut + skin of the lower face (x < face_lo along dim: their
 *           indices in idx0, counted in count[2]) or of the upper one
 *           (x >= face_hi: idx1, count[3]), both where the subdomain is
 *           thin; in no particular order; past room0 (room1) counted, not
 *           written
 *   borders_pack: their positions, the a0 = count[2] of idx0 then the
 *           a1 = count[3] of idx1, moved into the receivers' frames (delta_0,
 *           delta_1) as pack stores them, from buf[0] on (room0 of
 *           them); launched before the counts reach the host (nothing where
 *           a0 > room0, a1 > room1 or a0 + a1 > room0: the host then sends
 *           none)
 *   borders_lists: after the messages, for k below each count: the send
 *           lists [a0 of idx0][nb0 arrivals from first0][a1 of idx1][nb1
 *           arrivals from first1] in idx (the lower face's list is in place
 *           already), slot[k] = nown + k for the ng ghosts and their
 *           positions from buf at pos[nown + k] with w = ghost_w
 *   slots:  slot[idx[k]] = k for k < n (slot all ~0 before): each row's
 *           place in buf where the first cut dimension's swaps send it,
 *           for md_kick_drift_pack (cl/md_integrate.cl); a row listed twice
 *           (within r_cut + skin of both faces) counted in *dup, its second
 *           place not written
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

__kernel void md_ghost_slots(__global const uint *idx, uint n, volatile __global uint *slot,
                             volatile __global uint *dup)
{
    uint k = get_global_id(0);
    if (k < n && atomic_cmpxchg(&slot[idx[k]], ~0u, k) != ~0u) atomic_inc(dup);
}

__kernel void md_ghost_places(__global uint *slot, uint off, uint first, uint n)
{
    uint k = get_global_id(0);
    if (k < n) slot[off + k] = first + k;
}

__kernel void md_ghost_borders(__global const real4_t *pos, uint n, volatile __global uint *count, int dim,
                               real_t face_lo, real_t face_hi, __global uint *idx0, uint room0, __global uint *idx1,
                               uint room1)
{
    uint i = get_global_id(0);
    if (i >= n || i >= count[0]) return;
    real4_t p = pos[i];
    real_t x = dim == 0 ? p.x : dim == 1 ? p.y : p.z;
    if (x < face_lo) {
        uint k = atomic_inc(count + 2);
        if (k < room0) idx0[k] = i;
    }
    if (x >= face_hi) {
        uint k = atomic_inc(count + 3);
        if (k < room1) idx1[k] = i;
    }
}

__kernel void md_ghost_borders_pack(__global const real4_t *pos, __global const uint *idx0, __global const uint *idx1,
                                    __global const uint *count, uint room0, uint room1, real4_t delta_0,
                                    real4_t delta_1, __global real_t *buf)
{
    uint k = get_global_id(0);
    const uint a0 = count[2], a1 = count[3];
    if (a0 > room0 || a1 > room1 || a0 + a1 > room0 || k >= a0 + a1) return;
    real4_t p = k < a0 ? pos[idx0[k]] + delta_0 : pos[idx1[k - a0]] + delta_1;
    vstore3(p.xyz, k, buf);
}

__kernel void md_ghost_borders_lists(__global uint *idx, __global const uint *idx1, uint a0, uint a1, uint nb0,
                                     uint first0, uint nb1, uint first1, __global uint *slot, __global real4_t *pos,
                                     uint nown, uint ng, __global const real_t *buf, real_t ghost_w)
{
    uint k = get_global_id(0);
    if (k < nb0) idx[a0 + k] = first0 + k;
    if (k < a1) idx[a0 + nb0 + k] = idx1[k];
    if (k < nb1) idx[a0 + nb0 + a1 + k] = first1 + k;
    if (k < ng) {
        slot[k] = nown + k;
        pos[nown + k] = (real4_t)(buf[3 * k], buf[3 * k + 1], buf[3 * k + 2], ghost_w);
    }
}
