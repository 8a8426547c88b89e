/*
 * md_rebuild.cl — the device side of a distributed MD plan's neighbour-list
 * rebuild (host/md/rebuild.c), on the rank's cell-sorted atoms:
 *   classify: each owned atom (perm[s] < nown; the ghosts are dropped) to
 *             the unsorted arrays of the next sort: the atoms inside the
 *             subdomain ([lo, hi) along every cut dimension: they stay)
 *             from the front, counts[0] of them; the migrants (outside
 *             along a cut dimension) from the back (index cap - 1 - k),
 *             counts[1], for the host to send to their owners.  With
 *             list_near, of the staying atoms those within `shell` of a cut
 *             face (they may become ghosts of a neighbour) are listed too,
 *             counts[2] of them: near_idx[q] their place at the front,
 *             near_pos[q] their position, for the host to make the ghost
 *             lists from; without it (the lists are made on the device)
 *             neither is written and counts[2] stays 0
 *   iota:     a[i] = i (the identity permutation of the next sort)
 *   inverse:  inv[perm[s]] = s (sorted place of each local index)
 *   map:      idx[k] = inv[idx[k]] (the ghost lists into sorted places)
 * Positions are in the rank's local frame; lo and hi are the subdomain's
 * faces there, cut.xyz != 0 along the dimensions cut into subdomains.
 */
#include "platform_common.h"

static inline int md_inner(real_t x, real_t lo, real_t hi, real_t shell, int cut)
{
    return !cut || (x >= lo + shell && x < hi - shell);
}

__kernel void md_classify(__global const real4_t *pos, __global const real4_t *vel, __global const int4 *img,
                          __global const int4 *tag, __global const uint *perm, uint n, uint nown, real4_t lo,
                          real4_t hi, int4 cut, real_t shell, int list_near, uint cap, __global real4_t *pos_o,
                          __global real4_t *vel_o, __global int4 *img_o, __global int4 *tag_o,
                          volatile __global uint *counts, __global real4_t *near_pos, __global uint *near_idx)
{
    uint s = get_global_id(0);
    if (s >= n || perm[s] >= nown) return;
    real4_t p = pos[s];
    const real_t z = (real_t)0;
    int stays = md_inner(p.x, lo.x, hi.x, z, cut.x) && md_inner(p.y, lo.y, hi.y, z, cut.y) &&
                md_inner(p.z, lo.z, hi.z, z, cut.z);
    uint k = stays ? atomic_inc(&counts[0]) : cap - 1 - atomic_inc(&counts[1]);
    int inner = !list_near || (md_inner(p.x, lo.x, hi.x, shell, cut.x) && md_inner(p.y, lo.y, hi.y, shell, cut.y) &&
                               md_inner(p.z, lo.z, hi.z, shell, cut.z));
    if (stays && !inner) {
        uint q = atomic_inc(&counts[2]);
        near_idx[q] = k;
        near_pos[q] = p;
    }
    pos_o[k] = p;
    vel_o[k] = vel[s];
    img_o[k] = img[s];
    tag_o[k] = tag[s];
}

__kernel void md_iota(__global uint *a, uint n)
{
    uint i = get_global_id(0);
    if (i < n) a[i] = i;
}

__kernel void md_inverse(__global const uint *perm, uint n, __global uint *inv)
{
    uint s = get_global_id(0);
    if (s < n) inv[perm[s]] = s;
}

__kernel void md_map(__global const uint *inv, __global uint *idx, uint n)
{
    uint k = get_global_id(0);
    if (k < n) idx[k] = inv[idx[k]];
}
