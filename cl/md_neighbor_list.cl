/*
 * md_neighbor_list.cl — Verlet list from the 27 neighbouring cells (minimum
 * image), on particles already sorted by cell (md_cell_list.cl).  One work-item
 * per particle i.  mode 0 counts, mode 1 fills CSR rows at offset[i], mode 2
 * fills the transposed layout list[k*n + i].  half_list != 0 keeps only j > i.
 * count[i] is always the true count; *overflow receives the largest count so
 * the host can grow the capacity and rebuild (never silent truncation).  A
 * particle whose w is negative (a distributed plan's ghost atom, w =
 * MD_GHOST_W) gets an empty row of a full list: a ghost's force is never
 * used, and its row would cost as much as an owned atom's.
 */
#include "md_cell.h"

__kernel void neighbor_build(__global const real4_t *pos, uint n, real4_t box, int4 nc, __global const uint *cell_start,
                             real_t rs2, int half_list, int mode, __global const uint *offset, __global int *list,
                             uint capacity, __global uint *count, volatile __global uint *overflow)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    if (p.w < 0 && !half_list) {
        count[i] = 0;
        return;
    }
    int4 home = cell_of(p, box, nc);
    int cx = home.x, cy = home.y, cz = home.z;
    int4 slo, shi;
    search_range(nc, &slo, &shi);
    uint k = 0;
    uint base = mode == 1 ? offset[i] : 0;
    for (int dz = slo.z; dz <= shi.z; dz++) {
        int zz = (cz + dz + nc.z) % nc.z;
        for (int dy = slo.y; dy <= shi.y; dy++) {
            int yy = (cy + dy + nc.y) % nc.y;
            for (int dx = slo.x; dx <= shi.x; dx++) {
                int xx = (cx + dx + nc.x) % nc.x;
                uint c = (uint)((zz * nc.y + yy) * nc.x + xx);
                uint hi = cell_start[c + 1];
                for (uint j = cell_start[c]; j < hi; j++) {
                    if (half_list ? j <= i : j == i) continue;
                    real4_t q = pos[j];
                    real_t rx = q.x - p.x, ry = q.y - p.y, rz = q.z - p.z;
                    rx = nb_image(rx, box.x);
                    ry = nb_image(ry, box.y);
                    rz = nb_image(rz, box.z);
                    real_t r2 = rx * rx + ry * ry + rz * rz;
                    if (r2 < rs2) {
                        if (mode == 1)
                            list[base + k] = (int)j;
                        else if (mode == 2 && k < capacity)
                            list[(size_t)k * n + i] = (int)j;
                        k++;
                    }
                }
            }
        }
    }
    count[i] = k;
    if (mode == 2) atomic_max(overflow, k);
}
