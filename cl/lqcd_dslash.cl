/* lqcd_dslash.cl — Wilson hopping term H (full lattice or one parity),
 * optionally out = x + a H in (D = 1 - kappa H, the even-odd operator), on a
 * whole lattice or on one rank's sublattice of a process grid.
 * Kernels (host/lqcd/hop.c and halo.c launch them):
 *   dslash_hop        out = H in, or x + a H in
 *   dslash_hop_g5in   the same with gamma5 in for in   } M^+ = gamma5 M gamma5
 *   dslash_hop_g5out  x + a gamma5 H in                } at the cost of M
 *   halo_pack         the spin-projected faces of in that other ranks need
 *   halo_exterior, halo_exterior_g5out
 *                     out += the hops whose neighbour is on another rank,
 *                     from the received faces (after dslash_hop*)
 *   spinor_import, spinor_export   host-layout spinor <-> even and odd half
 *                     fields (fp64 builds; host/lqcd/transfer.c)
 * The plan's variants are build options of the same kernels:
 * -DRECON=12|18 (reconstruct-12/18), -DLAYOUT_AOS (the array-of-structures
 * layout, CPUs) instead of SoA; -DREAL_T; -DLX -DLY -DLZ -DLT (the extents of
 * this rank's lattice, even); -DPARTS=bits (bit mu set: direction mu is
 * split between ranks, so dslash_hop* skip the hops across its ends and
 * halo_exterior adds them); -DHALO_HALF (fp32: faces in 16-bit fixed point).
 * Layouts (SoA, site innermost) and the gamma basis: include/clphys_lqcd.h.
 * Spin projection (1 -/+ gamma_mu) leaves two independent spin rows, so each
 * direction costs two SU(3) mat-vecs instead of four (Matsufuru 2008), and a
 * face site sends 12 reals instead of 24 (Babich et al., SC'11).
 * Boundary phases: phf (phb) holds for each direction the phase of forward
 * (backward) hops across this rank's upper (lower) end, 1 unless that end
 * is the lattice's: exp(+-i theta) for psi(x + L mu) = exp(i theta) psi(x). */
#include "platform_common.h"
#include "lqcd_su3.h"

#define VOL (LX * LY * LZ * LT)
#define VH  (VOL / 2)
#if RECON == 12
#define NC 6
#else
#define NC 9
#endif
#ifndef PARTS
#define PARTS 0
#endif
#define PART(mu) ((PARTS >> (mu)) & 1)
#define LMU(mu)  ((mu) == 0 ? LX : (mu) == 1 ? LY : (mu) == 2 ? LZ : LT)

/* Index of complex component k of the spinor at site s (stride: sites of the
 * field), and of link component k of U_mu at site s. */
#ifdef LAYOUT_AOS
#define SPI(k, stride, s) ((s)*12 + (k))
#define GAI(mu, k, s)     (((s)*4 + (mu)) * NC + (k))
#else
#define SPI(k, stride, s) ((k) * (stride) + (s))
#define GAI(mu, k, s)     (((mu)*NC + (k)) * VOL + (s))
#endif

/* ---- faces --------------------------------------------------------------
 * Face (mu, side): the sites with x_mu = 0 (side 0) or L_mu - 1 (side 1) of
 * a split direction, FACE_N(mu) per parity, numbered by the other three
 * coordinates: i = (lexicographic index over nu != mu, nu ascending) / 2,
 * one-to-one on the sites of one parity because every extent is even.  A
 * face buffer holds for each split mu, side 0 then 1, a block of nq *
 * FACE_N(mu) entries (nq = 2 for full fields: parity-major; 1 for half
 * fields) of 6 complex numbers (two spin rows x colour), SoA within the
 * block in both layouts, so that ranks of either layout can exchange them.
 * Side 0 carries (1 - gamma_mu) psi for the forward hops of the rank below,
 * side 1 (1 + gamma_mu) psi for the backward hops of the rank above; a
 * received buffer has the same blocks, side 0 from the rank above, side 1
 * from the rank below.  Ghost links: for each split mu, U_mu of the rank
 * below's side-1 sites, both parities (entry parity * FACE_N(mu) + i), NC
 * complex each, SoA. */
#define FACE_N(mu)           (PART(mu) ? VOL / LMU(mu) / 2 : 0)
#define FACE_BEFORE(mu)      (((mu) > 0 ? FACE_N(0) : 0) + ((mu) > 1 ? FACE_N(1) : 0) + ((mu) > 2 ? FACE_N(2) : 0))
#define FACE_ALL             (FACE_BEFORE(3) + FACE_N(3))
#define FACEI(base, n, k, e) ((base) + (k) * (n) + (e))
/* A face entry is 6 slots of real2_t, or with -DHALO_HALF (fp32 plans
 * only) 7 slots of 4 bytes: 6 of two 16-bit fixed-point fractions (the 12
 * reals over their largest magnitude, times 32767) and the fp32 magnitude
 * (QUDA's half precision: 2^-15 of the site's largest component). */
#if defined(HALO_HALF) && !defined(REAL_IS_DOUBLE)
#define FACE_SLOTS 7
typedef short2 face_t;
#define HALF_ONE 32767.0f
#else
#undef HALO_HALF
#define FACE_SLOTS 6
typedef real2_t face_t;
#endif
#define GHI(mu, k, e) (NC * 2 * FACE_BEFORE(mu) + (k)*2 * FACE_N(mu) + (e))
/* first complex of block (mu, side) with nq parities */
#define FACE_BASE(mu, side, nq) (FACE_SLOTS * (nq) * (2 * FACE_BEFORE(mu) + (side)*FACE_N(mu)))

static inline void load_link(__global const real2_t *restrict g, uint mu, uint site, real2_t m[9])
{
    for (int k = 0; k < NC; k++) m[k] = g[GAI(mu, k, site)];
#if RECON == 12
    su3_reconstruct_row2(m);
#endif
}

static inline real2_t phase_of(real8_t v, int mu)
{
    return mu == 0 ? v.s01 : mu == 1 ? v.s23 : mu == 2 ? v.s45 : v.s67;
}

/* h = rows 0, 1 of (1 + s gamma_mu) psi at site nb (gamma5 psi with g5in):
 * rows 0,1 pair with spins 2,3 (col), which gamma5 negates. */
static inline void project(real2_t h[2][3], __global const real2_t *restrict in, uint stride, uint nb, const int mu,
                           const int s, const int g5in)
{
    for (int r = 0; r < 2; r++) {
        const int col = GAMMA_COL(mu, r), code = (GAMMA_PH(mu, r) + (s < 0 ? 2 : 0) + (g5in ? 2 : 0)) & 3;
        for (int c = 0; c < 3; c++)
            h[r][c] = in[SPI(r * 3 + c, stride, nb)] + cphase(in[SPI(col * 3 + c, stride, nb)], code);
    }
}

/* acc += (1 + s gamma_mu) chi' where chi' = ph U' h (U' = U or U^+, ph only
 * across an end of the lattice): rows 0, 1 are U' h, rows 2, 3 follow. */
static inline void hop_rows(real2_t acc[12], const real2_t m[9], real2_t h[2][3], const int mu, const int s,
                            const int dag, int edge, real2_t ph)
{
    real2_t chi[2][3];
    for (int r = 0; r < 2; r++) {
        if (dag)
            su3_mdv(chi[r], m, h[r]);
        else
            su3_mv(chi[r], m, h[r]);
    }
    if (edge)
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 3; c++) chi[r][c] = cmul(ph, chi[r][c]);
    for (int c = 0; c < 3; c++) {
        acc[c] += chi[0][c];
        acc[3 + c] += chi[1][c];
    }
    for (int r = 2; r < 4; r++) {
        const int col = GAMMA_COL(mu, r), code = (GAMMA_PH(mu, r) + (s < 0 ? 2 : 0)) & 3;
        for (int c = 0; c < 3; c++) acc[r * 3 + c] += cphase(chi[col][c], code);
    }
}

/* Site coordinates of (parity p, checkerboard index cb). */
static inline void site_coords(uint p, uint cb, int cs[4])
{
    uint n = 2 * cb;
    const int x0 = n % LX;
    n /= LX;
    cs[1] = n % LY;
    n /= LY;
    cs[2] = n % LZ;
    cs[3] = n / LZ;
    cs[0] = x0 + ((cs[1] + cs[2] + cs[3] + (int)p) & 1);
}

static inline uint cb_of(const int c[4]) { return (uint)(c[0] + LX * (c[1] + LY * (c[2] + LZ * c[3]))) >> 1; }

/* The two hops of direction mu (a constant after inlining) at a site; in a
 * split direction the hop across this rank's end is left to halo_exterior. */
static inline void dir_hops(real2_t acc[12], __global const real2_t *restrict in,
                            __global const real2_t *restrict gauge, uint stride, uint ioff, uint site, uint oth,
                            const int cs[4], const int mu, real8_t phf, real8_t phb, const int g5in)
{
    const int top = cs[mu] == LMU(mu) - 1, bot = cs[mu] == 0;
    real2_t m[9], h[2][3];
    if (!(PART(mu) && top)) {
        int cf[4] = {cs[0], cs[1], cs[2], cs[3]};
        cf[mu] = top ? 0 : cs[mu] + 1;
        load_link(gauge, mu, site, m);
        project(h, in, stride, ioff + cb_of(cf), mu, -1, g5in);
        hop_rows(acc, m, h, mu, -1, 0, top, phase_of(phf, mu));
    }
    if (!(PART(mu) && bot)) {
        int cb[4] = {cs[0], cs[1], cs[2], cs[3]};
        cb[mu] = bot ? LMU(mu) - 1 : cs[mu] - 1;
        const uint nbk = cb_of(cb);
        load_link(gauge, mu, oth + nbk, m);
        project(h, in, stride, ioff + nbk, mu, 1, g5in);
        hop_rows(acc, m, h, mu, 1, 1, bot, phase_of(phb, mu));
    }
}

/* out[k] = (xpay ? x[k] + a h : h) or out[k] += (xpay ? a h : h) with add,
 * h = acc, gamma5 acc for g5 == 2. */
static inline void store(__global real2_t *restrict out, __global const real2_t *restrict x, uint stride, uint o,
                         real2_t acc[12], real_t a, int xpay, const int g5, const int add)
{
    for (int k = 0; k < 12; k++) {
        const uint i = SPI(k, stride, o);
        const real2_t h = (g5 == 2 && k >= 6) ? -acc[k] : acc[k];
        const real2_t base = add ? out[i] : xpay ? x[i] : (real2_t)(0, 0);
        out[i] = base + (xpay ? a * h : h);
    }
}

/* One work-item per output site.  parity < 0: full lattice, gid is the
 * even-odd ordered site p*VH + cb of full fields (stride VOL); parity 0/1:
 * gid = cb of that parity, in and out are half fields (stride VH).
 * xpay != 0: out = x + a H in (x indexed like out).  g5 (a constant after
 * inlining): 1 reads gamma5 in instead of in, 2 writes x + a gamma5 H in, so
 * that the solver's M^+ = gamma5 M gamma5 costs two hops and no extra passes
 * over the fields. */
static inline void dslash_body(__global real2_t *restrict out, __global const real2_t *restrict in,
                               __global const real2_t *restrict gauge, __global const real2_t *restrict x, real_t a,
                               int xpay, int parity, real8_t phf, real8_t phb, const int g5)
{
    const uint gid = get_global_id(0);
    const uint nsites = parity < 0 ? VOL : VH;
    if (gid >= nsites) return;
    const uint p = parity < 0 ? (gid >= VH) : (uint)parity;
    const uint cb = gid - (parity < 0 ? p * VH : 0);
    const uint stride = parity < 0 ? VOL : VH;
    const uint ioff = parity < 0 ? (1 - p) * VH : 0; /* neighbours have the other parity */
    int cs[4];
    site_coords(p, cb, cs);
    real2_t acc[12];
    for (int k = 0; k < 12; k++) acc[k] = (real2_t)(0, 0);
    const uint site = p * VH + cb, oth = (1 - p) * VH;
    dir_hops(acc, in, gauge, stride, ioff, site, oth, cs, 0, phf, phb, g5 == 1);
    dir_hops(acc, in, gauge, stride, ioff, site, oth, cs, 1, phf, phb, g5 == 1);
    dir_hops(acc, in, gauge, stride, ioff, site, oth, cs, 2, phf, phb, g5 == 1);
    dir_hops(acc, in, gauge, stride, ioff, site, oth, cs, 3, phf, phb, g5 == 1);
    store(out, x, stride, gid, acc, a, xpay, g5, 0);
}

#define DSLASH_ENTRY(name, g5)                                                                                         \
    __kernel KERNEL_SG void name(__global real2_t *restrict out, __global const real2_t *restrict in,                  \
                                 __global const real2_t *restrict gauge, __global const real2_t *restrict x, real_t a, \
                                 int xpay, int parity, real8_t phf, real8_t phb)                                       \
    {                                                                                                                  \
        dslash_body(out, in, gauge, x, a, xpay, parity, phf, phb, g5);                                                 \
    }
DSLASH_ENTRY(dslash_hop, 0)
DSLASH_ENTRY(dslash_hop_g5in, 1)
DSLASH_ENTRY(dslash_hop_g5out, 2)

#if PARTS
/* Face index i of a site (its coordinates but mu, see above). */
static inline uint face_index(const int c[4], const int mu)
{
    uint idx = 0, stride = 1;
    for (int nu = 0; nu < 4; nu++)
        if (nu != mu) {
            idx += (uint)c[nu] * stride;
            stride *= (uint)LMU(nu);
        }
    return idx >> 1;
}

/* The site of parity q that is entry i of face (mu, x_mu = xm). */
static inline void face_coords(uint i, int mu, int xm, int q, int c[4])
{
    uint r = 2 * i;
    int sum = xm;
    for (int nu = 0; nu < 4; nu++)
        if (nu != mu) {
            c[nu] = (int)(r % (uint)LMU(nu));
            r /= (uint)LMU(nu);
            sum += c[nu];
        }
    c[mu] = xm;
    if ((sum & 1) != q) c[mu == 0 ? 1 : 0] += 1; /* its partner along an even extent */
}

/* Entry e of the blocks of direction mu (a constant after inlining, as
 * project and GAMMA_COL/GAMMA_PH expect: with mu varying between the
 * work-items, Intel's CPU OpenCL vectoriser packed wrong x faces in fp32
 * SoA builds) = rows 0, 1 of (1 -/+ gamma_mu) in at the face's site. */
static inline void pack_entry(__global face_t *restrict face, __global const real2_t *restrict in, int parity, int g5in,
                              uint nq, uint e, const int mu)
{
    const uint fn = FACE_N(mu) ? FACE_N(mu) : 1; /* 0 only in branches never taken */
    const uint n = nq * fn;
    const int side = e >= n;
    if (side) e -= n;
    const uint i = e % fn;
    const int q = parity < 0 ? (int)(e / fn) : parity;
    int c[4];
    face_coords(i, mu, side ? LMU(mu) - 1 : 0, q, c);
    const uint cb = cb_of(c);
    real2_t h[2][3];
    if (parity < 0)
        project(h, in, VOL, (uint)q * VH + cb, mu, side ? 1 : -1, g5in);
    else
        project(h, in, VH, cb, mu, side ? 1 : -1, g5in);
    const uint base = FACE_BASE(mu, side, nq);
#ifdef HALO_HALF
    float m = 0;
    for (int r = 0; r < 2; r++)
        for (int cc = 0; cc < 3; cc++) m = fmax(m, fmax(fabs(h[r][cc].x), fabs(h[r][cc].y)));
    const float inv = m > 0 ? HALF_ONE / m : 0.0f;
    for (int r = 0; r < 2; r++)
        for (int cc = 0; cc < 3; cc++) face[FACEI(base, n, r * 3 + cc, e)] = convert_short2_sat_rte(h[r][cc] * inv);
    face[FACEI(base, n, 6, e)] = as_short2(m);
#else
    for (int r = 0; r < 2; r++)
        for (int cc = 0; cc < 3; cc++) face[FACEI(base, n, r * 3 + cc, e)] = h[r][cc];
#endif
}

/* One work-item per face entry: face[...] = rows 0, 1 of (1 -/+ gamma_mu)
 * in (gamma5 in with g5in) at the face's sites.  parity: that of in's
 * sites (0/1: in is a half field; -1: full field, both parities sent).
 * KERNEL_SG: in fp64 Intel's compiler chose SIMD32 on pvc and spilled 1 KiB
 * per thread (4 KiB with every direction split; docs/gpu-targets.md). */
__kernel KERNEL_SG void halo_pack(__global face_t *restrict face, __global const real2_t *restrict in, int parity,
                                  int g5in)
{
    const uint nq = parity < 0 ? 2 : 1;
    const uint e = get_global_id(0);
    if (e >= nq * 2 * FACE_ALL) return;
    /* the direction whose blocks hold entry e (an unsplit one holds none) */
    if (e < 2 * nq * FACE_BEFORE(1))
        pack_entry(face, in, parity, g5in, nq, e, 0);
    else if (e < 2 * nq * FACE_BEFORE(2))
        pack_entry(face, in, parity, g5in, nq, e - 2 * nq * FACE_BEFORE(1), 1);
    else if (e < 2 * nq * FACE_BEFORE(3))
        pack_entry(face, in, parity, g5in, nq, e - 2 * nq * FACE_BEFORE(2), 2);
    else
        pack_entry(face, in, parity, g5in, nq, e - 2 * nq * FACE_BEFORE(3), 3);
}

/* Entry e of a face block, the two projected rows. */
static inline void load_face(__global const face_t *restrict face, uint base, uint n, uint e, real2_t h[2][3])
{
#ifdef HALO_HALF
    const float m = as_float(face[FACEI(base, n, 6, e)]) / HALF_ONE;
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++) h[r][c] = convert_float2(face[FACEI(base, n, r * 3 + c, e)]) * m;
#else
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++) h[r][c] = face[FACEI(base, n, r * 3 + c, e)];
#endif
}

static inline void load_ghost_link(__global const real2_t *restrict g, const int mu, uint e, real2_t m[9])
{
    for (int k = 0; k < NC; k++) m[k] = g[GHI(mu, k, e)];
#if RECON == 12
    su3_reconstruct_row2(m);
#endif
}

/* The remote hops of direction mu at a site on this rank's end(s). */
static inline void dir_exterior(real2_t acc[12], __global const face_t *restrict face,
                                __global const real2_t *restrict gauge, __global const real2_t *restrict ghost,
                                uint site, uint p, const int cs[4], uint nq, uint qi, const int mu, real8_t phf,
                                real8_t phb)
{
    if (!PART(mu)) return;
    const uint i = face_index(cs, mu), n = nq * FACE_N(mu), e = qi * FACE_N(mu) + i;
    real2_t m[9], h[2][3];
    if (cs[mu] == LMU(mu) - 1) { /* (1 - gamma) U_mu(x) psi(x + mu): side 0 of the rank above */
        load_face(face, FACE_BASE(mu, 0, nq), n, e, h);
        load_link(gauge, mu, site, m);
        hop_rows(acc, m, h, mu, -1, 0, 1, phase_of(phf, mu));
    }
    if (cs[mu] == 0) { /* (1 + gamma) U_mu(x - mu)^+ psi(x - mu): side 1 of the rank below */
        load_face(face, FACE_BASE(mu, 1, nq), n, e, h);
        load_ghost_link(ghost, mu, (1 - p) * FACE_N(mu) + i, m);
        hop_rows(acc, m, h, mu, 1, 1, 1, phase_of(phb, mu));
    }
}

/* One work-item per site with a neighbour on another rank: list[first +
 * gid], gid < n, even-odd ordered sites (p * VH + cb).  parity as in
 * dslash_body (of out); face: the received buffer.  out += a H_remote in
 * (xpay) or H_remote in, gamma5 applied with g5 == 2. */
static inline void exterior_body(__global real2_t *restrict out, __global const face_t *restrict face,
                                 __global const real2_t *restrict gauge, __global const real2_t *restrict ghost,
                                 __global const uint *restrict list, uint first, uint n, real_t a, int xpay, int parity,
                                 real8_t phf, real8_t phb, const int g5)
{
    const uint gid = get_global_id(0);
    if (gid >= n) return;
    const uint site = list[first + gid], p = site >= VH, cb = site - p * VH;
    const uint nq = parity < 0 ? 2 : 1, qi = parity < 0 ? 1 - p : 0;
    int cs[4];
    site_coords(p, cb, cs);
    real2_t acc[12];
    for (int k = 0; k < 12; k++) acc[k] = (real2_t)(0, 0);
    dir_exterior(acc, face, gauge, ghost, site, p, cs, nq, qi, 0, phf, phb);
    dir_exterior(acc, face, gauge, ghost, site, p, cs, nq, qi, 1, phf, phb);
    dir_exterior(acc, face, gauge, ghost, site, p, cs, nq, qi, 2, phf, phb);
    dir_exterior(acc, face, gauge, ghost, site, p, cs, nq, qi, 3, phf, phb);
    store(out, out, parity < 0 ? VOL : VH, parity < 0 ? site : cb, acc, a, xpay, g5, 1);
}

#define EXTERIOR_ENTRY(name, g5)                                                                                       \
    __kernel KERNEL_SG void name(__global real2_t *restrict out, __global const face_t *restrict face,                 \
                                 __global const real2_t *restrict gauge, __global const real2_t *restrict ghost,       \
                                 __global const uint *restrict list, uint first, uint n, real_t a, int xpay,           \
                                 int parity, real8_t phf, real8_t phb)                                                 \
    {                                                                                                                  \
        exterior_body(out, face, gauge, ghost, list, first, n, a, xpay, parity, phf, phb, g5);                         \
    }
EXTERIOR_ENTRY(halo_exterior, 0)
EXTERIOR_ENTRY(halo_exterior_g5out, 2)
#endif

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
