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
 *             neither is written and counts[2] stays 0; the first mig_cap
 *             migrants also as records (MD_REC_*) at mig[k], for the host to
 *             read in one copy
 *   arrive:   n records (MD_REC_*) to the unsorted arrays from `at` on: the
 *             atoms that arrived, uploaded in one copy
 *   ghost_fill: the ghosts' velocities (0, mass 1), images and tags (0)
 *   iota:     a[i] = i (the identity permutation of the next sort)
 *   bind:     after the sort: inv[perm[s]] = s (sorted place of each local
 *             index), the tags gathered into sorted order, md_edge_rows'
 *             counters zeroed
 *   map:      idx[k] = inv[idx[k]] (both ghost lists into sorted places)
 *   edge_rows: the sorted rows with owned atoms outside the interior cells
 *             (the rows beside the ghosts), listed for the force kernel
 * Positions are in the rank's local frame; lo and hi are the subdomain's
 * faces there, cut.xyz != 0 along the dimensions cut into subdomains.
 */
#include "platform_common.h"

/* An atom's record as it crosses the bus at a rebuild (md_classify's
 * migrants, md_arrive's arrivals): position and velocity (real4), image and
 * tag (int4), 2 sizeof(real4_t) + 32 bytes; record k's position at real4
 * index k MD_REC_R4, velocity behind it, image at int4 index k MD_REC_I4 +
 * MD_REC_IMG, tag behind it (rebuild.c packs and reads the same). */
#define MD_REC_R4  (2 + 32 / (int)sizeof(real4_t))
#define MD_REC_I4  (MD_REC_R4 * (int)sizeof(real4_t) / 16)
#define MD_REC_IMG (2 * (int)sizeof(real4_t) / 16)

static inline int md_inner(real_t x, real_t lo, real_t hi, real_t shell, int cut)
{
    return !cut || (x >= lo + shell && x < hi - shell);
}

__kernel void md_classify(__global const real4_t *pos, __global const real4_t *vel, __global const int4 *img,
                          __global const int4 *tag, __global const uint *perm, uint n, uint nown, real4_t lo,
                          real4_t hi, int4 cut, real_t shell, int list_near, uint cap, __global real4_t *pos_o,
                          __global real4_t *vel_o, __global int4 *img_o, __global int4 *tag_o,
                          volatile __global uint *counts, __global real4_t *near_pos, __global uint *near_idx,
                          __global real4_t *mig_r, __global int4 *mig_i, uint mig_cap)
{
    uint s = get_global_id(0);
    if (s >= n || perm[s] >= nown) return;
    real4_t p = pos[s];
    const real_t z = (real_t)0;
    int stays = md_inner(p.x, lo.x, hi.x, z, cut.x) && md_inner(p.y, lo.y, hi.y, z, cut.y) &&
                md_inner(p.z, lo.z, hi.z, z, cut.z);
    uint q = stays ? 0 : atomic_inc(&counts[1]);
    uint k = stays ? atomic_inc(&counts[0]) : cap - 1 - q;
    if (!stays && q < mig_cap) {
        mig_r[q * MD_REC_R4] = p;
        mig_r[q * MD_REC_R4 + 1] = vel[s];
        mig_i[q * MD_REC_I4 + MD_REC_IMG] = img[s];
        mig_i[q * MD_REC_I4 + MD_REC_IMG + 1] = tag[s];
    }
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

__kernel void md_arrive(__global const real4_t *rec_r, __global const int4 *rec_i, uint n, uint at,
                        __global real4_t *pos_o, __global real4_t *vel_o, __global int4 *img_o, __global int4 *tag_o)
{
    uint k = get_global_id(0);
    if (k >= n) return;
    pos_o[at + k] = rec_r[k * MD_REC_R4];
    vel_o[at + k] = rec_r[k * MD_REC_R4 + 1];
    img_o[at + k] = rec_i[k * MD_REC_I4 + MD_REC_IMG];
    tag_o[at + k] = rec_i[k * MD_REC_I4 + MD_REC_IMG + 1];
}

__kernel void md_iota(__global uint *a, uint n)
{
    uint i = get_global_id(0);
    if (i < n) a[i] = i;
}

__kernel void md_ghost_fill(__global real4_t *vel, __global int4 *img, __global int4 *tag, uint first, uint n)
{
    uint k = get_global_id(0);
    if (k >= n) return;
    vel[first + k] = (real4_t)(0, 0, 0, 1);
    img[first + k] = (int4)(0);
    tag[first + k] = (int4)(0);
}

__kernel void md_bind(__global const uint *perm, uint n, __global uint *inv, __global const int4 *tag_in,
                      __global int4 *tag, __global uint *count)
{
    uint s = get_global_id(0);
    if (s == 0) count[0] = count[1] = count[2] = count[3] = 0;
    if (s >= n) return;
    const uint u = perm[s];
    inv[u] = s;
    tag[s] = tag_in[u];
}

__kernel void md_map(__global const uint *inv, __global uint *a, uint na, __global uint *b, uint nb)
{
    uint k = get_global_id(0);
    if (k < na)
        a[k] = inv[a[k]];
    else if (k - na < nb)
        b[k - na] = inv[b[k - na]];
}

/* At a rebuild, the rows lj_full_transposed_lanes computes once the ghosts
 * are in: the sorted rows s < n outside the interior lo .. hi - 1 (lo =
 * start[c_lo]; hi = start[c_hi], c_hi the cell after the interior's last,
 * brought down to lo plus whole work-groups wg of the interior's launch)
 * that hold an owned atom (perm[s] < nown), into rows, counted in
 * count[0] (zero before); count[1], count[2] = lo, hi.  A
 * work-group reserves its block with one atomic and writes its rows in
 * ascending order (a local scan): neighbouring entries are then mostly
 * neighbouring rows, whose transposed lists the force kernel reads on
 * shared lines. */
#ifndef MD_EDGE_WG
#define MD_EDGE_WG 64 /* the host's (rebuild.c) */
#endif
__kernel __attribute__((reqd_work_group_size(MD_EDGE_WG, 1, 1))) void
md_edge_rows(__global const uint *start, uint c_lo, uint c_hi, uint wg, __global const uint *perm, uint nown, uint n,
             __global uint *rows, volatile __global uint *count)
{
    __local uint pre[MD_EDGE_WG];
    __local uint base;
    const uint s = get_global_id(0), t = get_local_id(0);
    const uint lo = start[c_lo], top = start[c_hi], hi = top > lo ? lo + (top - lo) / wg * wg : lo;
    if (s == 0) count[1] = lo, count[2] = hi;
    const uint edge = s < n && (s < lo || s >= hi) && perm[s] < nown;
    pre[t] = edge;
    barrier(CLK_LOCAL_MEM_FENCE);
    wg_inclusive_scan(pre, t, MD_EDGE_WG);
    if (t == MD_EDGE_WG - 1) base = pre[t] ? atomic_add(count, pre[t]) : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (edge) rows[base + pre[t] - 1] = s;
}
