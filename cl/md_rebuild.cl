/*
 * md_rebuild.cl — the device side of a distributed MD plan's neighbour-list
 * rebuild (host/md/md_rebuild.c), on the rank's cell-sorted atoms:
 *   classify: each owned atom (perm[s] < nown; the ghosts are dropped) to
 *             the unsorted arrays of the next sort: interior atoms (farther
 *             than `shell` from every cut face: they neither leave nor
 *             become ghosts) from the front, counts[0] of them; the others
 *             from the back (index cap - 1 - k), counts[1], for the host to
 *             migrate and to make the ghost lists from
 *   iota:     a[i] = i (the identity permutation of the next sort)
 *   inverse:  inv[perm[s]] = s (sorted place of each local index)
 *   map:      idx[k] = inv[idx[k]] (the ghost lists into sorted places)
 * Positions are in the rank's local frame; lo and hi are the subdomain's
 * faces there, cut.xyz != 0 along the dimensions cut into subdomains.
 */
#include "common.h"

inline int md_inner(real_t x, real_t lo, real_t hi, real_t shell, int cut)
{
    return !cut || (x >= lo + shell && x < hi - shell);
}

__kernel void md_classify(__global const real4_t *pos, __global const real4_t *vel, __global const int4 *img,
                          __global const int4 *tag, __global const uint *perm, uint n, uint nown, real4_t lo,
                          real4_t hi, int4 cut, real_t shell, uint cap, __global real4_t *pos_o,
                          __global real4_t *vel_o, __global int4 *img_o, __global int4 *tag_o,
                          volatile __global uint *counts)
{
    uint s = get_global_id(0);
    if (s >= n || perm[s] >= nown) return;
    real4_t p = pos[s];
    int inner = md_inner(p.x, lo.x, hi.x, shell, cut.x) && md_inner(p.y, lo.y, hi.y, shell, cut.y) &&
                md_inner(p.z, lo.z, hi.z, shell, cut.z);
    uint k = inner ? atomic_inc(&counts[0]) : cap - 1 - atomic_inc(&counts[1]);
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
