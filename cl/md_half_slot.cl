/*
 * md_half_slot.cl — the slot lists of the half-cas variant (kernel lj_half_cas
 * in cl/md_lj.cl), derived from the full transposed Verlet list after every
 * build or shuffle.
 *
 * Blocks of HS_BX x HS_BY x HS_BZ cells, one work-group each (partial at the
 * grid's upper edges): block g = (bz * nby + by) * nbx + bx.  Rows: the
 * particles of block g are rows bstart[g] .. bstart[g+1]-1, cell rows of the
 * block in (z, y) order (rowi[r] = sorted particle of row r, rowof its
 * inverse), optionally reordered by descending list length (hs_key,
 * hs_rank): a warp takes as many steps as its longest row, and rows of about
 * equal length waste fewer (bench/md-notes.md).  Pair (i, j) is
 * listed once, by the particle from which the other lies in the upper
 * half-space (d = minimum image of x_j - x_i: d.z > 0, ties broken by d.y,
 * d.x, then index), so every i lists about half of its
 * neighbours wherever it sits in its cell; j is then in i's cell layer or the
 * one above.  Each entry carries the slot of j in the block's local
 * accumulators: slots 0 .. ni-1 are the block's own rows; then the particles
 * of the other cells of the block's neighbourhood (x0-1 .. x0+BX, y0-1 ..
 * y0+BY, z0 .. z0+BZ, modulo the grid, each distinct cell once), cell by cell
 * from base[g * HS_NLC + local cell].  HS_NONE (no slot: beyond the ushort
 * range, or a cell outside the neighbourhood after positions moved without
 * a rebuild) sends that entry's force to global memory.  pcell: packed cell
 * of each sorted particle at the last build (cell_pack).
 */
#include "md_cell.h"

#define HS_LX   (HS_BX + 2)
#define HS_LY   (HS_BY + 2)
#define HS_LZ   (HS_BZ + 1)
#define HS_NLC  (HS_LX * HS_LY * HS_LZ)
#define HS_NONE 0xffffu

typedef struct {
    int x0, y0, z0, wx, wy, wz;
} hs_block;

static inline hs_block hs_geometry(uint g, int4 nc)
{
    int nbx = (nc.x + HS_BX - 1) / HS_BX, nby = (nc.y + HS_BY - 1) / HS_BY;
    hs_block b;
    b.x0 = (int)(g % (uint)nbx) * HS_BX;
    b.y0 = (int)((g / (uint)nbx) % (uint)nby) * HS_BY;
    b.z0 = (int)(g / (uint)(nbx * nby)) * HS_BZ;
    b.wx = min(HS_BX, nc.x - b.x0);
    b.wy = min(HS_BY, nc.y - b.y0);
    b.wz = min(HS_BZ, nc.z - b.z0);
    return b;
}

static inline uint hs_block_of(uint pc, int4 nc)
{
    int nbx = (nc.x + HS_BX - 1) / HS_BX, nby = (nc.y + HS_BY - 1) / HS_BY;
    int cx = (int)(pc & 1023u), cy = (int)((pc >> 10) & 1023u), cz = (int)(pc >> 20);
    return (uint)(((cz / HS_BZ) * nby + cy / HS_BY) * nbx + cx / HS_BX);
}

/* Is cell (cx, cy, cz) one of block b's own cells? */
static inline int hs_own(hs_block b, int cx, int cy, int cz, int4 nc)
{
    return cell_wrap(cx - b.x0, nc.x) < b.wx && cell_wrap(cy - b.y0, nc.y) < b.wy && cell_wrap(cz - b.z0, nc.z) < b.wz;
}

/* Local coordinates of cell (cx, cy, cz) in block b's neighbourhood: the
 * first of its positions when the grid is narrower than the neighbourhood;
 * outside 0 .. HS_L* - 1 when the cell is not in it. */
static inline int4 hs_local(hs_block b, int cx, int cy, int cz, int4 nc)
{
    return (int4)(cell_wrap(cx - (b.x0 - 1), nc.x), cell_wrap(cy - (b.y0 - 1), nc.y), cell_wrap(cz - b.z0, nc.z), 0);
}

/* Particles per block: bcount[g]. */
__kernel void hs_block_count(__global const uint *start, int4 nc, uint nblocks, __global uint *bcount)
{
    uint g = get_global_id(0);
    if (g >= nblocks) return;
    hs_block b = hs_geometry(g, nc);
    uint s = 0;
    for (int rz = 0; rz < b.wz; rz++)
        for (int ry = 0; ry < b.wy; ry++) {
            int c = ((b.z0 + rz) * nc.y + b.y0 + ry) * nc.x + b.x0;
            s += start[c + b.wx] - start[c];
        }
    bcount[g] = s;
}

/* Row of each sorted particle s: rowi[row] = s, rowof[s] = row. */
__kernel void hs_rows(__global const uint *start, __global const uint *pcell, int4 nc, uint n,
                      __global const uint *bstart, __global uint *rowi, __global uint *rowof)
{
    uint s = get_global_id(0);
    if (s >= n) return;
    uint pc = pcell[s], g = hs_block_of(pc, nc);
    hs_block b = hs_geometry(g, nc);
    int cy = (int)((pc >> 10) & 1023u), cz = (int)(pc >> 20);
    uint row = bstart[g];
    for (int rz = 0; rz < b.wz; rz++)
        for (int ry = 0; ry < b.wy; ry++) {
            int c = ((b.z0 + rz) * nc.y + b.y0 + ry) * nc.x + b.x0;
            if (b.z0 + rz == cz && b.y0 + ry == cy)
                row += s - start[c];
            else if (b.z0 + rz < cz || (b.z0 + rz == cz && b.y0 + ry < cy))
                row += start[c + b.wx] - start[c];
        }
    rowi[row] = s;
    rowof[s] = row;
}

/* Slot tables of block g: base of each neighbourhood cell (-1: a cell of the
 * block, or an alias of a cell already counted), slot_j[g * slots + s] the
 * particle of slot s < slots, nslot[g] the slots wanted. */
__kernel void hs_tables(__global const uint *start, int4 nc, uint nblocks, __global const uint *bstart,
                        __global const uint *rowi, uint slots, __global int *base, __global int *slot_j,
                        __global uint *nslot)
{
    uint g = get_global_id(0);
    if (g >= nblocks) return;
    hs_block b = hs_geometry(g, nc);
    uint i0 = bstart[g], ni = bstart[g + 1] - i0;
    __global int *sj = slot_j + (size_t)g * slots;
    for (uint q = 0; q < ni && q < slots; q++) sj[q] = (int)rowi[i0 + q];
    uint s = ni;
    for (int lz = 0; lz < HS_LZ; lz++)
        for (int ly = 0; ly < HS_LY; ly++)
            for (int lx = 0; lx < HS_LX; lx++) {
                int lc = (lz * HS_LY + ly) * HS_LX + lx;
                int cx = cell_wrap(b.x0 - 1 + lx, nc.x), cy = cell_wrap(b.y0 - 1 + ly, nc.y);
                int cz = cell_wrap(b.z0 + lz, nc.z);
                /* the first local position of each distinct cell only (a
                 * grid narrower than the neighbourhood aliases) */
                int4 l = hs_local(b, cx, cy, cz, nc);
                int first = l.x == lx && l.y == ly && l.z == lz, own = hs_own(b, cx, cy, cz, nc);
                base[(size_t)g * HS_NLC + lc] = first && !own ? (int)s : -1;
                if (!first || own) continue;
                int c = (cz * nc.y + cy) * nc.x + cx;
                for (uint j = start[c]; j < start[c + 1]; j++, s++)
                    if (s < slots) sj[s] = (int)j;
            }
    nslot[g] = s;
}

/* Does i list j (j in i's upper half-space: d = minimum image of x_j - x_i,
 * d.z > 0, ties broken by d.y, d.x, then index)?  *r2 = |d|^2. */
static inline int hs_up(real4_t p, real4_t q, real4_t box, uint i, int j, real_t *r2)
{
    real_t dx = nb_image(q.x - p.x, box.x), dy = nb_image(q.y - p.y, box.y);
    real_t dz = nb_image(q.z - p.z, box.z);
    *r2 = dx * dx + dy * dy + dz * dz;
    return dz > 0 || (dz == 0 && (dy > 0 || (dy == 0 && (dx > 0 || (dx == 0 && (uint)j > i)))));
}

/* Sort key of each sorted particle i: its half-space entries within r_cut
 * (rc2 = r_cut^2) times 2^16 plus all its half-space entries. */
__kernel void hs_key(__global const real4_t *pos, uint n, real4_t box, real_t rc2, __global const uint *count,
                     __global const int *list, __global uint *key)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    uint m = count[i], in = 0, up = 0;
    for (uint e = 0; e < m; e++) {
        int j = list[(size_t)e * n + i];
        real_t r2;
        if (!hs_up(p, pos[j], box, i, j, &r2)) continue;
        up++;
        in += r2 < rc2;
    }
    key[i] = (min(in, 65535u) << 16) | min(up, 65535u);
}

/* Rows of each block reordered by descending key (ties: the order of
 * hs_rows), so that the work-items of a warp have lists of about the same
 * length: rowi_out[row], rowof[particle]. */
__kernel void hs_rank(__global const uint *pcell, int4 nc, uint n, __global const uint *bstart,
                      __global const uint *rowi, __global const uint *key, __global uint *rowi_out,
                      __global uint *rowof)
{
    uint row = get_global_id(0);
    if (row >= n) return;
    uint i = rowi[row], g = hs_block_of(pcell[i], nc), i0 = bstart[g], i1 = bstart[g + 1], kr = key[i], rank = 0;
    for (uint r = i0; r < i1; r++) {
        uint kq = key[rowi[r]];
        rank += kq > kr || (kq == kr && r < row);
    }
    rowi_out[i0 + rank] = i;
    rowof[i] = i0 + rank;
}

/* One work-item per row: the half-space entries of the full transposed list
 * (list[k * n + i], count[i]) with their slots, transposed by row:
 * hl[k * n + row], hs[k * n + row], hcount[row]; with cut_first, the entries
 * within r_cut (rc2 = r_cut^2, at the positions of this build) come first,
 * so that a warp's exchanges fall in its first steps.  *overflow receives the
 * largest count (the host grows cap and derives again). */
__kernel void hs_derive(__global const real4_t *pos, uint n, real4_t box, int4 nc, __global const uint *start,
                        __global const uint *pcell, __global const uint *count, __global const int *list,
                        __global const uint *bstart, __global const uint *rowi, __global const uint *rowof,
                        __global const int *base, __global int *hl, __global ushort *hs, uint cap,
                        __global uint *hcount, volatile __global uint *overflow, real_t rc2, uint cut_first)
{
    uint row = get_global_id(0);
    if (row >= n) return;
    uint i = rowi[row], pc = pcell[i], g = hs_block_of(pc, nc);
    hs_block b = hs_geometry(g, nc);
    real4_t p = pos[i];
    uint m = count[i], k = 0, i0 = bstart[g];
    __global const int *bb = base + (size_t)g * HS_NLC;
    for (uint pass = 0; pass < (cut_first ? 2u : 1u); pass++)
        for (uint e = 0; e < m; e++) {
            int j = list[(size_t)e * n + i];
            real_t r2;
            if (!hs_up(p, pos[j], box, i, j, &r2)) continue;
            if (cut_first && (r2 < rc2) != (pass == 0)) continue; /* pass 0: inside r_cut, 1: the rest */
            uint pj = pcell[j], slot = HS_NONE;
            int cx = (int)(pj & 1023u), cy = (int)((pj >> 10) & 1023u), cz = (int)(pj >> 20);
            if (hs_own(b, cx, cy, cz, nc)) {
                slot = rowof[j] - i0;
            } else {
                int4 l = hs_local(b, cx, cy, cz, nc);
                if (l.x < HS_LX && l.y < HS_LY && l.z < HS_LZ) {
                    int b0 = bb[(l.z * HS_LY + l.y) * HS_LX + l.x];
                    if (b0 >= 0) slot = (uint)b0 + ((uint)j - start[(cz * nc.y + cy) * nc.x + cx]);
                }
            }
            if (k < cap) {
                hl[(size_t)k * n + row] = j;
                hs[(size_t)k * n + row] = (ushort)min(slot, (uint)HS_NONE);
            }
            k++;
        }
    hcount[row] = k;
    atomic_max(overflow, k);
}
