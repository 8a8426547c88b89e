/*
 * md_neighbor_list.cl — Verlet list from the 27 neighbouring cells (minimum
 * image), on particles already sorted by cell (md_cell_list.cl).  One work-item
 * per particle i, NB_WG of them to a work-group.  mode 0 counts, mode 1 fills
 * CSR rows at offset[i], mode 2 fills the transposed layout list[k*n + i].
 * half_list != 0 keeps only j > i.  Entries of a row are in the order found:
 * cells by z, y, x offset, particles by index.  count[i] is the true count
 * (mode 2: at most capacity); *overflow receives the largest count so the
 * host can grow the capacity and rebuild (never silent truncation).  A
 * particle whose w is negative (a distributed plan's ghost atom, w =
 * MD_GHOST_W) gets an empty row of a full list: a ghost's force is never
 * used, and its row would cost as much as an owned atom's.
 *
 * Mode 2 keeps a row's first NB_LCAP entries in local memory and writes them
 * after the search, the work-group's items at one k together; the rest are
 * written as found.  Written as found, each entry is a store of its own to a
 * line the neighbouring rows fill later; with a GPU's thousands of rows in
 * flight those partly written lines outgrow its L2 cache, and the stores cost
 * as much as the search (bench/md-notes.md, "The list build's scattered
 * stores").  The host builds this kernel with NB_LCAP 0 as well, for lists
 * that fit the cache (host/md/neighbor_list.c).
 */
#include "md_cell.h"

#ifndef NB_WG
#define NB_WG 64
#endif
#ifndef NB_LCAP
#define NB_LCAP 0
#endif

/* |q - p|^2 under the minimum image.  The image is taken only where a
 * component exceeds half the box: below that nb_image returns it unchanged,
 * so the result is nb_image's, without its selects on the candidates of the
 * cells that do not wrap. */
static inline real_t nb_r2(real4_t p, real4_t q, real4_t box, real4_t hbox)
{
    real_t rx = q.x - p.x, ry = q.y - p.y, rz = q.z - p.z;
    if (fabs(rx) > hbox.x || fabs(ry) > hbox.y || fabs(rz) > hbox.z) {
        rx = nb_image(rx, box.x);
        ry = nb_image(ry, box.y);
        rz = nb_image(rz, box.z);
    }
    return rx * rx + ry * ry + rz * rz;
}

__kernel __attribute__((reqd_work_group_size(NB_WG, 1, 1))) void
neighbor_build(__global const real4_t *pos, uint n, real4_t box, int4 nc, __global const uint *cell_start, real_t rs2,
               int half_list, int mode, __global const uint *offset, __global int *list, uint capacity,
               __global uint *count, volatile __global uint *overflow)
{
    __local uint group_max;
    /* entry k of item l at k * NB_WG + l: no bank conflicts (one slot when unused) */
    __local int rows[(NB_LCAP > 0 ? NB_LCAP : 1) * NB_WG];
    uint i = get_global_id(0), l = get_local_id(0);
    if (l == 0) group_max = 0;
    real4_t p = i < n ? pos[i] : (real4_t)(0);
    int active = i < n && (half_list || p.w >= 0);
    real4_t hbox = REAL_C(0.5) * box;
    uint k = 0;
    uint base = mode == 1 && active ? offset[i] : 0;
    if (active) {
        int4 home = cell_of(p, box, nc);
        int4 slo, shi;
        search_range(nc, &slo, &shi);
        for (int dz = slo.z; dz <= shi.z; dz++) {
            int zz = (home.z + dz + nc.z) % nc.z;
            for (int dy = slo.y; dy <= shi.y; dy++) {
                int yy = (home.y + dy + nc.y) % nc.y;
                for (int dx = slo.x; dx <= shi.x; dx++) {
                    int xx = (home.x + dx + nc.x) % nc.x;
                    uint c = (uint)((zz * nc.y + yy) * nc.x + xx);
                    uint lo = cell_start[c], hi = cell_start[c + 1];
                    if (half_list && lo <= i) lo = i + 1; /* j > i only: the rest is not read */
                    for (uint j = lo; j < hi; j++) {
                        if (!(nb_r2(p, pos[j], box, hbox) < rs2) || j == i) continue;
                        if (mode == 1)
                            list[base + k] = (int)j;
                        else if (mode == 2 && k < NB_LCAP)
                            rows[k * NB_WG + l] = (int)j;
                        else if (mode == 2 && k < capacity)
                            list[(size_t)k * n + i] = (int)j;
                        k++;
                    }
                }
            }
        }
    }
    /* mode 2: no more than the row holds, so that a kernel launched behind
     * an overflowed build (its forces computed again after the rebuild)
     * reads no entry that was never written */
    if (i < n) count[i] = mode == 2 ? min(k, capacity) : k;
    if (mode != 2) return;
    /* one global atomic per work-group: one per item, on one address, queue */
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_max(&group_max, k);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) atomic_max(overflow, group_max);
    uint kt = min(k, min(capacity, (uint)NB_LCAP)), kmax = min(group_max, min(capacity, (uint)NB_LCAP));
    for (uint t = 0; t < kmax; t++)
        if (t < kt) list[(size_t)t * n + i] = rows[t * NB_WG + l];
}
