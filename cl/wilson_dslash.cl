/* wilson_dslash.cl — Wilson hopping term H (full lattice or one parity),
 * optionally out = x + a H in (D = 1 - kappa H, the even-odd operator).
 * Kernels (host/lqcd/hop.c launches the first three):
 *   dslash_hop        out = H in, or x + a H in
 *   dslash_hop_g5in   the same with gamma5 in for in   } M^+ = gamma5 M gamma5
 *   dslash_hop_g5out  x + a gamma5 H in                } at the cost of M
 *   spinor_import, spinor_export   host-layout spinor <-> even and odd half
 *                     fields (fp64 builds; host/lqcd/transfer.c)
 * The plan's variants are build options of the same kernels:
 * -DRECON=12|18 (reconstruct-12/18), -DLAYOUT_AOS (the array-of-structures
 * layout, CPUs) instead of SoA; also -DREAL_T and -DLX -DLY -DLZ -DLT (even
 * extents).
 * Layouts (SoA, site innermost) and the gamma basis: include/clphys_lqcd.h.
 * Spin projection (1 -/+ gamma_mu) leaves two independent spin rows, so each
 * direction costs two SU(3) mat-vecs instead of four (Matsufuru 2008). */
#include "common.h"
#include "su3.h"

#define VOL (LX * LY * LZ * LT)
#define VH (VOL / 2)
#if RECON == 12
#define NC 6
#else
#define NC 9
#endif

/* Index of complex component k of the spinor at site s (stride: sites of the
 * field), and of link component k of U_mu at site s. */
#ifdef LAYOUT_AOS
#define SPI(k, stride, s) ((s) * 12 + (k))
#define GAI(mu, k, s) (((s) * 4 + (mu)) * NC + (k))
#else
#define SPI(k, stride, s) ((k) * (stride) + (s))
#define GAI(mu, k, s) (((mu) * NC + (k)) * VOL + (s))
#endif

inline void load_link(__global const real2_t *restrict g, uint mu, uint site, real2_t m[9])
{
    for (int k = 0; k < NC; k++) m[k] = g[GAI(mu, k, site)];
#if RECON == 12
    su3_reconstruct_row2(m);
#endif
}

/* acc += (1 + s gamma_mu) U' psi, U' = U (fwd) or U^+ (bwd), times bc. */
inline void hop(real2_t acc[12], __global const real2_t *restrict in, uint in_stride, uint nb,
                const real2_t m[9], const int mu, const int s, const int dag, real_t bc, const int g5in)
{
    real2_t h[2][3], chi[2][3];
    for (int r = 0; r < 2; r++) {
        /* rows 0,1 pair with spins 2,3 (col), which gamma5 negates */
        const int col = GAMMA_COL(mu, r), code = (GAMMA_PH(mu, r) + (s < 0 ? 2 : 0) + (g5in ? 2 : 0)) & 3;
        for (int c = 0; c < 3; c++)
            h[r][c] = in[SPI(r * 3 + c, in_stride, nb)] + cphase(in[SPI(col * 3 + c, in_stride, nb)], code);
    }
    for (int r = 0; r < 2; r++) {
        if (dag) su3_mdv(chi[r], m, h[r]);
        else su3_mv(chi[r], m, h[r]);
    }
    for (int c = 0; c < 3; c++) {
        acc[c] += bc * chi[0][c];
        acc[3 + c] += bc * chi[1][c];
    }
    for (int r = 2; r < 4; r++) {
        const int col = GAMMA_COL(mu, r), code = (GAMMA_PH(mu, r) + (s < 0 ? 2 : 0)) & 3;
        for (int c = 0; c < 3; c++) acc[r * 3 + c] += bc * cphase(chi[col][c], code);
    }
}

/* One work-item per output site.  parity < 0: full lattice, gid is the
 * even-odd ordered site p*VH + cb of full fields (stride VOL); parity 0/1:
 * gid = cb of that parity, in and out are half fields (stride VH).
 * xpay != 0: out = x + a H in (x indexed like out). tbc: sign of hops across
 * the t boundary (-1 antiperiodic).  g5 (a constant after inlining): 1 reads
 * gamma5 in instead of in, 2 writes x + a gamma5 H in, so that the solver's
 * M^+ = gamma5 M gamma5 costs two hops and no extra passes over the fields. */
inline void dslash_body(__global real2_t *restrict out, __global const real2_t *restrict in,
                        __global const real2_t *restrict gauge, __global const real2_t *restrict x,
                        real_t a, int xpay, int parity, real_t tbc, const int g5)
{
    const uint gid = get_global_id(0);
    const uint nsites = parity < 0 ? VOL : VH;
    if (gid >= nsites) return;
    const uint p = parity < 0 ? (gid >= VH) : (uint)parity;
    const uint cb = gid - (parity < 0 ? p * VH : 0);
    const uint stride = parity < 0 ? VOL : VH;
    const uint ioff = parity < 0 ? (1 - p) * VH : 0; /* neighbours have the other parity */

    uint n = 2 * cb;
    const int x0 = n % LX;
    n /= LX;
    const int y = n % LY;
    n /= LY;
    const int z = n % LZ;
    const int t = n / LZ;
    const int xc = x0 + ((y + z + t + (int)p) & 1);
    const int cs[4] = {xc, y, z, t};
    const int L[4] = {LX, LY, LZ, LT};

    real2_t acc[12];
    for (int k = 0; k < 12; k++) acc[k] = (real2_t)(0, 0);
    const uint site = p * VH + cb, oth = (1 - p) * VH;
#pragma unroll
    for (int mu = 0; mu < 4; mu++) {
        int cf[4] = {cs[0], cs[1], cs[2], cs[3]};
        int cbk[4] = {cs[0], cs[1], cs[2], cs[3]};
        cf[mu] = cs[mu] + 1 == L[mu] ? 0 : cs[mu] + 1;
        cbk[mu] = cs[mu] == 0 ? L[mu] - 1 : cs[mu] - 1;
        const uint nf = (uint)(cf[0] + LX * (cf[1] + LY * (cf[2] + LZ * cf[3]))) >> 1;
        const uint nbk = (uint)(cbk[0] + LX * (cbk[1] + LY * (cbk[2] + LZ * cbk[3]))) >> 1;
        const real_t bf = (mu == 3 && cs[3] == LT - 1) ? tbc : REAL_C(1.0);
        const real_t bb = (mu == 3 && cs[3] == 0) ? tbc : REAL_C(1.0);
        real2_t m[9];
        load_link(gauge, mu, site, m);
        if (mu == 0) hop(acc, in, stride, ioff + nf, m, 0, -1, 0, bf, g5 == 1);
        else if (mu == 1) hop(acc, in, stride, ioff + nf, m, 1, -1, 0, bf, g5 == 1);
        else if (mu == 2) hop(acc, in, stride, ioff + nf, m, 2, -1, 0, bf, g5 == 1);
        else hop(acc, in, stride, ioff + nf, m, 3, -1, 0, bf, g5 == 1);
        load_link(gauge, mu, oth + nbk, m);
        if (mu == 0) hop(acc, in, stride, ioff + nbk, m, 0, 1, 1, bb, g5 == 1);
        else if (mu == 1) hop(acc, in, stride, ioff + nbk, m, 1, 1, 1, bb, g5 == 1);
        else if (mu == 2) hop(acc, in, stride, ioff + nbk, m, 2, 1, 1, bb, g5 == 1);
        else hop(acc, in, stride, ioff + nbk, m, 3, 1, 1, bb, g5 == 1);
    }
    for (int k = 0; k < 12; k++) {
        const uint o = SPI(k, stride, gid);
        const real2_t h = (g5 == 2 && k >= 6) ? -acc[k] : acc[k];
        out[o] = xpay ? x[o] + a * h : h;
    }
}

#define DSLASH_ENTRY(name, g5)                                                                               \
    __kernel void name(__global real2_t *restrict out, __global const real2_t *restrict in,                 \
                       __global const real2_t *restrict gauge, __global const real2_t *restrict x, real_t a, \
                       int xpay, int parity, real_t tbc)                                                     \
    {                                                                                                        \
        dslash_body(out, in, gauge, x, a, xpay, parity, tbc, g5);                                            \
    }
DSLASH_ENTRY(dslash_hop, 0)
DSLASH_ENTRY(dslash_hop_g5in, 1)
DSLASH_ENTRY(dslash_hop_g5out, 2)

#ifdef REAL_IS_DOUBLE
/* Host spinor (double[V][4][3][2], lexicographic) <-> the two half fields in
 * the device layout, on the device: the host side is then one plain copy of
 * the caller's array (no staging pass on the CPU).  One work-item per site. */
__kernel void spinor_import(__global real2_t *restrict even, __global real2_t *restrict odd,
                            __global const real2_t *restrict host)
{
    const uint lex = get_global_id(0);
    if (lex >= VOL) return;
    uint n = lex;
    int par = (int)(n % LX);
    n /= LX;
    par += (int)(n % LY);
    n /= LY;
    par += (int)(n % LZ) + (int)(n / LZ);
    __global real2_t *dst = (par & 1) ? odd : even;
    const uint cb = lex >> 1;
    for (int k = 0; k < 12; k++) dst[SPI(k, VH, cb)] = host[lex * 12 + k];
}

__kernel void spinor_export(__global real2_t *restrict host, __global const real2_t *restrict even,
                            __global const real2_t *restrict odd)
{
    const uint lex = get_global_id(0);
    if (lex >= VOL) return;
    uint n = lex;
    int par = (int)(n % LX);
    n /= LX;
    par += (int)(n % LY);
    n /= LY;
    par += (int)(n % LZ) + (int)(n / LZ);
    __global const real2_t *src = (par & 1) ? odd : even;
    const uint cb = lex >> 1;
    for (int k = 0; k < 12; k++) host[lex * 12 + k] = src[SPI(k, VH, cb)];
}
#endif
