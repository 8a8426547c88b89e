/*
 * lj_cpu.cl — the `cpu` Lennard-Jones variant: full CSR list, each work-item
 * walks LJ_CPU_BLOCK consecutive (cell-sorted) particles i, and the
 * neighbours j of one i are evaluated LJ_VW at a time in explicit vectors
 * (float16 / double8: one AVX-512 register, vec_cpu.h).  Why: PoCL vectorizes across
 * work-items only when they run the same loop trip counts, which Verlet rows
 * do not; a scalar pair loop ran at ~80 M pairs/s on 2 EPYC cores.
 * Full list, no atomics: each pair is evaluated twice (once per side).
 * Same physics and outputs as cl/lj.cl: U = 4 eps [(s/r)^12 - (s/r)^6] - shift,
 * F_i = sum_j 24 eps [2 (s/r)^12 - (s/r)^6] / r^2 (x_i - x_j); f[4i+0..2]
 * force, f[4i+3] half the energy of i's pairs, vir[i] half of r . F.
 */
#include "common.h"

#include "vec_cpu.h"

#ifndef LJ_CPU_BLOCK
#define LJ_CPU_BLOCK 32
#endif

inline real_t lj_hsum(vr_t v)
{
#if VW == 16
    real8_t a = v.lo + v.hi;
#else
    real8_t a = v;
#endif
    real4_t b = a.lo + a.hi;
    real2_t c = b.lo + b.hi;
    return c.x + c.y;
}

__kernel void lj_cpu(__global const real4_t *pos, uint n, __global const uint *offset,
                     __global const int *list, real4_t box, real4_t ibox, real_t rc2, real_t eps4,
                     real_t eps24, real_t sig2, real_t shift, __global real_t *f,
                     __global real_t *vir)
{
    uint i0 = get_global_id(0) * LJ_CPU_BLOCK;
    uint i1 = min(i0 + LJ_CPU_BLOCK, n);
    for (uint i = i0; i < i1; i++) {
        real4_t p = pos[i];
        vr_t fx = 0, fy = 0, fz = 0, e = 0, w = 0;
        uint lo = offset[i], hi = offset[i + 1];
        for (uint k = lo; k < hi; k += VW) {
            vr_t dx, dy, dz;
            if (k + VW <= hi) {
#define LJ_Q(l) pos[list[k + (l)]]
                VEC_TRANSPOSE_Q(LJ_Q, dx, dy, dz);
#undef LJ_Q
            } else { /* the tail repeats the row's last j in spare lanes (masked) */
#define LJ_Q(l) pos[list[min(k + (l), hi - 1)]]
                VEC_TRANSPOSE_Q(LJ_Q, dx, dy, dz);
#undef LJ_Q
            }
            dx = p.x - dx;
            dy = p.y - dy;
            dz = p.z - dz;
            dx -= box.x * vrint(dx * ibox.x);
            dy -= box.y * vrint(dy * ibox.y);
            dz -= box.z * vrint(dz * ibox.z);
            vr_t r2 = dx * dx + dy * dy + dz * dz;
            vi_t in = VM_TO_INT(r2 < rc2) & ((int)k + VLANES < (int)hi);
            r2 = select((vr_t)1, r2, VM_FROM_INT(in)); /* no 1/0 in masked lanes */
            vr_t ir2 = REAL_C(1.0) / r2;
            vr_t sr2 = sig2 * ir2;
            vr_t sr6 = sr2 * sr2 * sr2;
            vr_t fpair = select((vr_t)0, eps24 * sr6 * (REAL_C(2.0) * sr6 - REAL_C(1.0)) * ir2,
                                VM_FROM_INT(in));
            fx += fpair * dx;
            fy += fpair * dy;
            fz += fpair * dz;
            e += select((vr_t)0, eps4 * sr6 * (sr6 - REAL_C(1.0)) - shift, VM_FROM_INT(in));
            w += fpair * r2;
        }
        vstore4((real4_t)(lj_hsum(fx), lj_hsum(fy), lj_hsum(fz), REAL_C(0.5) * lj_hsum(e)), i, f);
        vir[i] = REAL_C(0.5) * lj_hsum(w);
    }
}
