/*
 * md_cell_list.cl — grid search (Watanabe, Suzuki & Ito, Prog. Theor. Phys. 126,
 * 203 (2011)): cell index per particle, atomic histogram of cell counts,
 * exclusive scan, counting sort.  The rank inside a cell comes from the
 * atomic increment (arbitrary order), so each cell is then ordered by the
 * particle's previous index: the sorted order is deterministic.
 */
#include "md_cell.h"

/* Cell of each particle (box wrapped) and its arrival rank in that cell. */
__kernel void cell_assign(__global const real4_t *pos, uint n, real4_t box, int4 nc, __global uint *cell,
                          __global uint *rank, volatile __global uint *count)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    int4 q = cell_of(pos[i], box, nc);
    uint c = (uint)((q.z * nc.y + q.y) * nc.x + q.x);
    cell[i] = c;
    rank[i] = atomic_inc(&count[c]);
}

/* out[k] = sum_{m<k} in[m] for k <= n, by one work-group of SCAN_WG items:
 * each item sums a contiguous chunk, the chunk sums are scanned in local
 * memory, then each item writes its chunk's prefixes. */
__kernel __attribute__((reqd_work_group_size(SCAN_WG, 1, 1))) void scan_exclusive(__global const uint *in,
                                                                                  __global uint *out, uint n)
{
    __local uint part[SCAN_WG];
    uint t = get_local_id(0);
    uint chunk = (n + SCAN_WG - 1) / SCAN_WG;
    uint lo = min(t * chunk, n), hi = min(lo + chunk, n);
    uint s = 0;
    for (uint k = lo; k < hi; k++) s += in[k];
    part[t] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    wg_inclusive_scan(part, t, SCAN_WG);
    uint run = part[t] - s; /* exclusive prefix of this chunk */
    for (uint k = lo; k < hi; k++) {
        out[k] = run;
        run += in[k];
    }
    if (t == SCAN_WG - 1) out[n] = part[t];
}

/* The same scan over many work-groups, for long arrays (the cells of a
 * large box, the rows' counts): scan_block_sums sums each block of
 * SCAN_WG * SCAN_ITEMS entries, scan_exclusive scans those sums (one
 * work-group: a few thousand of them), and scan_block_write scans each
 * block in local memory from its base.  The loads and stores are coalesced:
 * scan_exclusive alone reads each item's chunk a chunk apart, and takes
 * 161 us over the 884,736 cells of 2,048,000 atoms on an H200
 * (bench/md-mpi-notes.md, round 20). */
#ifndef SCAN_ITEMS
#define SCAN_ITEMS 8
#endif

__kernel __attribute__((reqd_work_group_size(SCAN_WG, 1, 1))) void scan_block_sums(__global const uint *in, uint n,
                                                                                   __global uint *sums)
{
    __local uint part[SCAN_WG];
    uint t = get_local_id(0), g = get_group_id(0), b0 = g * SCAN_WG * SCAN_ITEMS, s = 0;
    for (uint j = 0; j < SCAN_ITEMS; j++) {
        uint k = b0 + j * SCAN_WG + t;
        if (k < n) s += in[k];
    }
    part[t] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = SCAN_WG / 2; d > 0; d >>= 1) { /* SCAN_WG is a power of two */
        if (t < d) part[t] += part[t + d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) sums[g] = part[0];
}

/* out[k] for k < n: base[g] (the exclusive prefix of block g's sum, by
 * scan_exclusive) plus the prefix within block g; out[n] = base[nblocks],
 * the total. */
__kernel __attribute__((reqd_work_group_size(SCAN_WG, 1, 1))) void
scan_block_write(__global const uint *in, uint n, __global const uint *base, uint nblocks, __global uint *out)
{
    __local uint v[SCAN_WG * SCAN_ITEMS];
    __local uint part[SCAN_WG];
    uint t = get_local_id(0), g = get_group_id(0), b0 = g * SCAN_WG * SCAN_ITEMS;
    for (uint j = 0; j < SCAN_ITEMS; j++) {
        uint k = b0 + j * SCAN_WG + t;
        v[j * SCAN_WG + t] = k < n ? in[k] : 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* item t takes entries t SCAN_ITEMS .. (t + 1) SCAN_ITEMS - 1 of the block */
    uint s = 0;
    for (uint j = 0; j < SCAN_ITEMS; j++) s += v[t * SCAN_ITEMS + j];
    part[t] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    wg_inclusive_scan(part, t, SCAN_WG);
    uint run = base[g] + part[t] - s;
    for (uint j = 0; j < SCAN_ITEMS; j++) {
        uint x = v[t * SCAN_ITEMS + j];
        v[t * SCAN_ITEMS + j] = run;
        run += x;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = 0; j < SCAN_ITEMS; j++) {
        uint k = b0 + j * SCAN_WG + t;
        if (k < n) out[k] = v[j * SCAN_WG + t];
    }
    if (g == 0 && t == 0) out[n] = base[nblocks];
}

/* Counting sort: sorted slot of particle i is start[cell] + rank. */
__kernel void cell_scatter(__global const uint *cell, __global const uint *rank, __global const uint *start,
                           __global uint *order, uint n)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    order[start[cell[i]] + rank[i]] = i;
}

/* Make each cell's order deterministic: insertion sort by previous index
 * (cells hold a few tens of particles). */
__kernel void cell_order(__global const uint *start, __global uint *order, uint ncells)
{
    uint c = get_global_id(0);
    if (c >= ncells) return;
    uint lo = start[c], hi = start[c + 1];
    for (uint a = lo + 1; a < hi; a++) {
        uint v = order[a];
        uint b = a;
        while (b > lo && order[b - 1] > v) {
            order[b] = order[b - 1];
            b--;
        }
        order[b] = v;
    }
}

/* dst[s] = src[order[s]]: gather positions, velocities or images. */
__kernel void gather_real4(__global const real4_t *src, __global const uint *order, __global real4_t *dst, uint n)
{
    uint s = get_global_id(0);
    if (s < n) dst[s] = src[order[s]];
}

__kernel void gather_int4(__global const int4 *src, __global const uint *order, __global int4 *dst, uint n)
{
    uint s = get_global_id(0);
    if (s < n) dst[s] = src[order[s]];
}

__kernel void gather_uint(__global const uint *src, __global const uint *order, __global uint *dst, uint n)
{
    uint s = get_global_id(0);
    if (s < n) dst[s] = src[order[s]];
}

/* Cell coordinates of each sorted particle, packed x | y << 10 | z << 20
 * (nc <= 1024 per dimension): the half-cas slot lists find the block and
 * local cell of each i and j with them (cl/md_half_slot.cl). */
__kernel void cell_pack(__global const uint *cell, __global const uint *order, __global uint *pcell, uint n, int4 nc)
{
    uint s = get_global_id(0);
    if (s >= n) return;
    uint c = cell[order[s]];
    uint cx = c % (uint)nc.x, cy = (c / (uint)nc.x) % (uint)nc.y, cz = c / (uint)(nc.x * nc.y);
    pcell[s] = cx | cy << 10 | cz << 20;
}
