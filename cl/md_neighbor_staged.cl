/*
 * md_neighbor_staged.cl — full Verlet list whose entries are slots in a
 * work-group's local-memory copy of the positions around its block of cells
 * (cl/platform_stage.h), for lj_full_staged.  On the H100 the full-list force kernel
 * with gathered positions is bound by the L1's rate of scattered sectors
 * (two per fp64 neighbour, bench/md-notes.md); reading neighbours from the
 * staged copy instead takes that traffic to local memory.  Particles are
 * sorted by cell (md_cell_list.cl); layout list[k * n + i] as the transposed list.
 */
#include "md_cell.h"
#include "platform_stage.h"

/* Per block: slot offsets of its NS local cells (base[b * (NS + 1) + lc],
 * the last entry the stage's size); *max_total receives the largest size. */
__kernel void stage_base(__global const uint *cell_start, int4 nc, int bx, uint nblocks, __global uint *base,
                         volatile __global uint *max_total)
{
    uint b = get_global_id(0);
    if (b >= nblocks) return;
    int ns = 9 * (bx + 2);
    uint s = 0;
    for (int lc = 0; lc < ns; lc++) {
        base[b * (ns + 1) + lc] = s;
        uint c = stage_cell(nc, bx, b, lc);
        s += cell_start[c + 1] - cell_start[c];
    }
    base[b * (ns + 1) + ns] = s;
    atomic_max(max_total, s);
}

/* One work-item per i: the 27-cell search of neighbor_build (same cells,
 * same order, same test), writing slot(j) instead of j; count[i] is the true
 * count, *overflow the largest (the host grows the capacity and rebuilds). */
__kernel void neighbor_build_staged(__global const real4_t *pos, uint n, real4_t box, int4 nc,
                                    __global const uint *cell_start, real_t rs2, int bx, __global const uint *base,
                                    __global int *list, uint capacity, __global uint *count,
                                    volatile __global uint *overflow)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    int4 home = cell_of(p, box, nc);
    int nbx = (nc.x + bx - 1) / bx, w = bx + 2, ns = 9 * w;
    uint b = (uint)((home.z * nc.y + home.y) * nbx + home.x / bx);
    int lx0 = home.x - (home.x / bx) * bx + 1;
    __global const uint *bb = base + (size_t)b * (ns + 1);
    int4 slo, shi;
    search_range(nc, &slo, &shi);
    uint k = 0;
    for (int dz = slo.z; dz <= shi.z; dz++) {
        int zz = cell_wrap(home.z + dz, nc.z);
        for (int dy = slo.y; dy <= shi.y; dy++) {
            int yy = cell_wrap(home.y + dy, nc.y);
            for (int dx = slo.x; dx <= shi.x; dx++) {
                int xx = cell_wrap(home.x + dx, nc.x);
                uint c = (uint)((zz * nc.y + yy) * nc.x + xx);
                uint lo = cell_start[c], hi = cell_start[c + 1];
                uint slot0 = bb[(dz + 1) * 3 * w + (dy + 1) * w + lx0 + dx];
                for (uint j = lo; j < hi; j++) {
                    if (j == i) continue;
                    real4_t q = pos[j];
                    real_t rx = nb_image(q.x - p.x, box.x), ry = nb_image(q.y - p.y, box.y);
                    real_t rz = nb_image(q.z - p.z, box.z);
                    if (rx * rx + ry * ry + rz * rz < rs2) {
                        if (k < capacity) list[(size_t)k * n + i] = (int)(slot0 + (j - lo));
                        k++;
                    }
                }
            }
        }
    }
    count[i] = k;
    atomic_max(overflow, k);
}
