/*
 * md_lj_cpu.cl — the `cpu` Lennard-Jones variant: full CSR list; each work-item
 * walks LJ_CPU_BLOCK consecutive (cell-sorted) particles i, and the
 * neighbours j of one i are evaluated VW at a time in explicit vectors
 * (float16 / double8, one AVX-512 register; platform_vec_cpu.h): distances in AoS
 * form, r^2 and the pair force in particle order.  Why: PoCL vectorizes
 * across work-items only when they run the same loop trip counts, which
 * Verlet rows do not; the scalar pair loops of md_lj.cl ran at ~80 M pairs/s on
 * 2 EPYC cores.  Full list, no atomics: each pair is evaluated twice.
 * Same physics and outputs as cl/md_lj.cl: U = 4 eps [(s/r)^12 - (s/r)^6] - shift,
 * F_i = sum_j 24 eps [2 (s/r)^12 - (s/r)^6] / r^2 (x_i - x_j); f[4i+0..2]
 * force, f[4i+3] half the energy of i's pairs, vir[i] half of r . F.
 * A particle with pos.w < 0 is a ghost atom of a distributed plan (its
 * force is never used): its row is skipped and written as zeros.
 */
#include "platform_common.h"

#include "platform_vec_cpu.h"

#ifndef LJ_CPU_BLOCK
#define LJ_CPU_BLOCK 32
#endif

static inline real_t lj_hsum(vr_t v)
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

__kernel void lj_cpu(__global const real4_t *pos, uint n, __global const uint *offset, __global const int *list,
                     real4_t box, real4_t ibox, real_t rc2, real_t eps4, real_t eps24, real_t sig2, real_t shift,
                     __global real_t *f, __global real_t *vir)
{
    uint i0 = get_global_id(0) * LJ_CPU_BLOCK;
    uint i1 = min(i0 + LJ_CPU_BLOCK, n);
    vr_t b4 = VREP4((real4_t)(box.x, box.y, box.z, 0));
    vr_t ib4 = VREP4((real4_t)(ibox.x, ibox.y, ibox.z, 0));
    for (uint i = i0; i < i1; i++) {
        real4_t p = pos[i];
        if (p.w < 0) {
            vstore4((real4_t)(0, 0, 0, 0), i, f);
            vir[i] = 0;
            continue;
        }
        vr_t p4 = VREP4((real4_t)(p.x, p.y, p.z, 0));
        /* forces in AoS form (4 vectors of VW/4 slots x y z w), e and w by lane */
        vr_t f0 = 0, f1 = 0, f2 = 0, f3 = 0, e = 0, w = 0;
        uint lo = offset[i], hi = offset[i + 1];
        for (uint k = lo; k < hi; k += VW) {
            vr_t d0, d1, d2, d3;
            if (k + VW <= hi) {
#define LJ_Q(l) pos[list[k + (l)]]
                VEC_AOS(LJ_Q, d0, d1, d2, d3);
#undef LJ_Q
            } else { /* the tail repeats the row's last j in spare lanes (masked) */
#define LJ_Q(l) pos[list[min(k + (l), hi - 1)]]
                VEC_AOS(LJ_Q, d0, d1, d2, d3);
#undef LJ_Q
            }
            d0 = p4 - d0, d1 = p4 - d1, d2 = p4 - d2, d3 = p4 - d3;
            d0 -= b4 * vrint(d0 * ib4);
            d1 -= b4 * vrint(d1 * ib4);
            d2 -= b4 * vrint(d2 * ib4);
            d3 -= b4 * vrint(d3 * ib4);
            vr_t r2 = vr2_aos(d0, d1, d2, d3);
            vi_t in = VM_TO_INT(r2 < rc2) & ((int)k + VLANES < (int)hi);
            r2 = select((vr_t)1, r2, VM_FROM_INT(in)); /* no 1/0 in masked lanes */
            vr_t ir2 = REAL_C(1.0) / r2;
            vr_t sr2 = sig2 * ir2;
            vr_t sr6 = sr2 * sr2 * sr2;
            vr_t fpair = select((vr_t)0, eps24 * sr6 * (REAL_C(2.0) * sr6 - REAL_C(1.0)) * ir2, VM_FROM_INT(in));
            f0 += shuffle(fpair, VSPREAD(0)) * d0;
            f1 += shuffle(fpair, VSPREAD(1)) * d1;
            f2 += shuffle(fpair, VSPREAD(2)) * d2;
            f3 += shuffle(fpair, VSPREAD(3)) * d3;
            e += select((vr_t)0, eps4 * sr6 * (sr6 - REAL_C(1.0)) - shift, VM_FROM_INT(in));
            w += fpair * r2;
        }
        real4_t fi = VSUM4(f0 + f1 + f2 + f3);
        vstore4((real4_t)(fi.x, fi.y, fi.z, REAL_C(0.5) * lj_hsum(e)), i, f);
        vir[i] = REAL_C(0.5) * lj_hsum(w);
    }
}
