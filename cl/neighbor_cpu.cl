/*
 * neighbor_cpu.cl — CPU-shaped Verlet list build, same arguments, modes and
 * output as neighbor_build in neighbor_list.cl (which it replaces on CPU
 * devices).  Why: PoCL runs that kernel one scalar candidate at a time with
 * three divisions each (measured 160-290 ms for in.lj, 32000 atoms, on a
 * 2-core EPYC).  Here the candidates of one neighbour cell, which are
 * contiguous in the cell-sorted order, are tested VW at a time in explicit
 * vectors (vec_cpu.h), with the minimum image by multiplication (1/box) and
 * rounding by adding 1.5*2^mantissa (PoCL expands rint() into ~15 integer
 * instructions), and the hits are
 * compacted in ascending j from a bit mask: the rows are identical to
 * neighbor_build's (same cell order, j ascending).
 */
#include "common.h"

#include "vec_cpu.h"

/* Sum of the lanes of an int vector (the bit mask of hits). */
inline int nb_hsum(vi_t v)
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

__kernel void neighbor_build(__global const real4_t *pos, uint n, real4_t box, int4 nc,
                             __global const uint *cell_start, real_t rs2, int half_list, int mode,
                             __global const uint *offset, __global int *list, uint capacity,
                             __global uint *count, volatile __global uint *overflow)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    real4_t p = pos[i];
    real_t x = p.x - box.x * floor(p.x / box.x);
    real_t y = p.y - box.y * floor(p.y / box.y);
    real_t z = p.z - box.z * floor(p.z / box.z);
    int cx = clamp((int)(x * (real_t)nc.x / box.x), 0, nc.x - 1);
    int cy = clamp((int)(y * (real_t)nc.y / box.y), 0, nc.y - 1);
    int cz = clamp((int)(z * (real_t)nc.z / box.z), 0, nc.z - 1);
    int lx = nc.x > 2 ? -1 : 0, ly = nc.y > 2 ? -1 : 0, lz = nc.z > 2 ? -1 : 0;
    int ux = nc.x > 1 ? 1 : 0, uy = nc.y > 1 ? 1 : 0, uz = nc.z > 1 ? 1 : 0;
    real_t ibx = REAL_C(1.0) / box.x, iby = REAL_C(1.0) / box.y, ibz = REAL_C(1.0) / box.z;
    uint k = 0;
    uint base = mode == 1 ? offset[i] : 0;
    for (int dz = lz; dz <= uz; dz++) {
        int zz = (cz + dz + nc.z) % nc.z;
        for (int dy = ly; dy <= uy; dy++) {
            int yy = (cy + dy + nc.y) % nc.y;
            for (int dx = lx; dx <= ux; dx++) {
                int xx = (cx + dx + nc.x) % nc.x;
                uint c = (uint)((zz * nc.y + yy) * nc.x + xx);
                uint lo = cell_start[c], hi = cell_start[c + 1];
                for (uint j0 = lo; j0 < hi; j0 += VW) {
                    vr_t rx, ry, rz;
                    if (j0 + VW <= n) {
                        /* VW consecutive particles (lanes past hi are masked) */
                        __global const real_t *b = (__global const real_t *)(pos + j0);
                        VEC_TRANSPOSE(VLOADR(0, b), VLOADR(1, b), VLOADR(2, b), VLOADR(3, b), rx, ry,
                                      rz);
                    } else {
#define NB_Q(l) pos[min(j0 + (l), hi - 1)]
                        VEC_TRANSPOSE_Q(NB_Q, rx, ry, rz);
#undef NB_Q
                    }
                    rx -= p.x;
                    ry -= p.y;
                    rz -= p.z;
                    rx -= box.x * vrint(rx * ibx);
                    ry -= box.y * vrint(ry * iby);
                    rz -= box.z * vrint(rz * ibz);
                    vr_t r2 = rx * rx + ry * ry + rz * rz;
                    vi_t j = (int)j0 + VLANES;
                    vi_t ok = VM_TO_INT(r2 < rs2) & (j < (int)hi) &
                              (half_list ? j > (int)i : j != (int)i);
                    int bits = nb_hsum(ok & VBITS);
                    if (!bits) continue;
                    if (mode == 0) {
                        k += popcount(bits);
                        continue;
                    }
                    while (bits) {
                        int l = 31 - clz(bits & -bits); /* lowest set lane */
                        bits &= bits - 1;
                        if (mode == 1) list[base + k] = (int)j0 + l;
                        else if (k < capacity) list[(size_t)k * n + i] = (int)j0 + l;
                        k++;
                    }
                }
            }
        }
    }
    count[i] = k;
    if (mode == 2) atomic_max(overflow, k);
}
