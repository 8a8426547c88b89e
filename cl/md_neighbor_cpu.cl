/*
 * md_neighbor_cpu.cl — CPU-shaped Verlet list build, same arguments, modes and
 * output as neighbor_build in md_neighbor_list.cl (which it replaces on CPU
 * devices).  Why: PoCL runs that kernel one scalar candidate at a time with
 * three divisions each (measured 160-290 ms for in.lj, 32000 atoms, on a
 * 2-core EPYC).  Here the candidates of one neighbour cell, which are
 * contiguous in the cell-sorted order, are tested VW at a time in explicit
 * vectors (platform_vec_cpu.h), with the minimum image by multiplication (1/box) and
 * rounding by adding 1.5*2^mantissa (PoCL expands rint() into ~15 integer
 * instructions), and the hits are
 * compacted in ascending j from a bit mask: the rows are identical to
 * neighbor_build's (same cell order, j ascending; a ghost atom's row, w < 0,
 * of a full list empty as there).  Extra argument stage and mode 3: see the
 * top of the kernel.
 */
#include "md_cell.h"

#include "platform_vec_cpu.h"

/* Sum of the lanes of an int vector (the bit mask of hits). */
static inline int nb_hsum(vi_t v)
{
#if VW == 16
    int8 a = v.lo + v.hi;
#else
    int8 a = v;
#endif
    int4 b = a.lo + a.hi;
    int2 c = b.lo + b.hi;
    return c.x + c.y;
}

__kernel void neighbor_build(__global const real4_t *pos, uint n, real4_t box, int4 nc, __global const uint *cell_start,
                             real_t rs2, int half_list, int mode, __global const uint *offset, __global int *list,
                             uint capacity, __global uint *count, volatile __global uint *overflow, __global int *stage)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    /* CSR in one search: mode 0 also keeps the first `capacity` entries of
     * row i at stage[i * capacity]; mode 3 copies them to the CSR row, and
     * recomputes (as mode 1) only rows longer than that */
    if (mode == 3) {
        uint c = count[i];
        if (c <= capacity) {
            __global const int *src = stage + (size_t)i * capacity;
            __global int *dst = list + offset[i];
            for (uint k = 0; k < c; k++) dst[k] = src[k];
            return;
        }
        mode = 1;
    }
    real4_t p = pos[i];
    if (p.w < 0 && !half_list) {
        count[i] = 0;
        return;
    }
    real4_t w = wrap_box(p, box);
    real_t x = w.x, y = w.y, z = w.z;
    int4 home = cell_of(p, box, nc);
    int cx = home.x, cy = home.y, cz = home.z;
    int4 slo, shi;
    search_range(nc, &slo, &shi);
    real_t ibx = REAL_C(1.0) / box.x, iby = REAL_C(1.0) / box.y, ibz = REAL_C(1.0) / box.z;
    vr_t p4 = VREP4((real4_t)(p.x, p.y, p.z, 0)), b4 = VREP4((real4_t)(box.x, box.y, box.z, 0));
    vr_t ib4 = VREP4((real4_t)(ibx, iby, ibz, 0));
    uint k = 0;
    uint base = mode == 1 ? offset[i] : 0;
    /* Distance from p to the near face of the neighbour cell in each
     * dimension (0 for its own cell): a cell farther than r_search is skipped
     * (on average 17.6 of 27 cells remain).  Only with >= 3 cells in that
     * dimension, where -1 and +1 are distinct cells; a 0.1 % margin covers
     * rounding (the r2 test below decides, so the rows stay exact). */
    real_t wx = box.x / nc.x, wy = box.y / nc.y, wz = box.z / nc.z;
    real_t fx[3] = {x - cx * wx, 0, (cx + 1) * wx - x};
    real_t fy[3] = {y - cy * wy, 0, (cy + 1) * wy - y};
    real_t fz[3] = {z - cz * wz, 0, (cz + 1) * wz - z};
    real_t lim = rs2 * REAL_C(1.001);
    for (int dz = slo.z; dz <= shi.z; dz++) {
        int zz = (cz + dz + nc.z) % nc.z;
        real_t gz = nc.z > 2 ? fz[dz + 1] * fz[dz + 1] : 0;
        if (gz > lim) continue;
        for (int dy = slo.y; dy <= shi.y; dy++) {
            int yy = (cy + dy + nc.y) % nc.y;
            real_t gy = gz + (nc.y > 2 ? fy[dy + 1] * fy[dy + 1] : 0);
            if (gy > lim) continue;
            for (int dx = slo.x; dx <= shi.x; dx++) {
                int xx = (cx + dx + nc.x) % nc.x;
                if (gy + (nc.x > 2 ? fx[dx + 1] * fx[dx + 1] : 0) > lim) continue;
                uint c = (uint)((zz * nc.y + yy) * nc.x + xx);
                uint lo = cell_start[c], hi = cell_start[c + 1];
                for (uint j0 = lo; j0 < hi; j0 += VW) {
                    vr_t a0, a1, a2, a3;
                    if (j0 + VW <= n) {
                        /* VW consecutive particles (lanes past hi are masked) */
                        __global const real_t *b = (__global const real_t *)(pos + j0);
                        a0 = VLOADR(0, b), a1 = VLOADR(1, b), a2 = VLOADR(2, b), a3 = VLOADR(3, b);
                    } else {
#define NB_Q(l) pos[min(j0 + (l), hi - 1)]
                        VEC_AOS(NB_Q, a0, a1, a2, a3);
#undef NB_Q
                    }
                    a0 -= p4, a1 -= p4, a2 -= p4, a3 -= p4;
                    a0 -= b4 * vrint(a0 * ib4);
                    a1 -= b4 * vrint(a1 * ib4);
                    a2 -= b4 * vrint(a2 * ib4);
                    a3 -= b4 * vrint(a3 * ib4);
                    vr_t r2 = vr2_aos(a0, a1, a2, a3);
                    vi_t j = (int)j0 + VLANES;
                    vi_t ok = VM_TO_INT(r2 < rs2) & (j < (int)hi) & (half_list ? j > (int)i : j != (int)i);
                    int bits = nb_hsum(ok & VBITS);
                    if (!bits) continue;
                    while (bits) {
                        int l = 31 - clz(bits & -bits); /* lowest set lane */
                        bits &= bits - 1;
                        if (mode == 0) {
                            if (k < capacity) stage[(size_t)i * capacity + k] = (int)j0 + l;
                        } else if (mode == 1)
                            list[base + k] = (int)j0 + l;
                        else if (k < capacity)
                            list[(size_t)k * n + i] = (int)j0 + l;
                        k++;
                    }
                }
            }
        }
    }
    count[i] = mode == 2 ? min(k, capacity) : k; /* as neighbor_build's */
    if (mode == 2) atomic_max(overflow, k);
}
