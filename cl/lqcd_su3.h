/* lqcd_su3.h — complex numbers as real2_t (re, im), SU(3) colour algebra and the
 * DeGrand-Rossi gamma matrices as index/phase tables folded at compile time.
 * Conventions: include/clphys_lqcd.h. */
#ifndef CLPHYS_CL_SU3_H
#define CLPHYS_CL_SU3_H

static inline real2_t cmul(real2_t a, real2_t b) { return (real2_t)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
/* conj(a) * b */
static inline real2_t cmulc(real2_t a, real2_t b) { return (real2_t)(a.x * b.x + a.y * b.y, a.x * b.y - a.y * b.x); }
static inline real2_t cconj(real2_t a) { return (real2_t)(a.x, -a.y); }
/* a * phase, phase code 0: +1, 1: +i, 2: -1, 3: -i (a constant after inlining) */
static inline real2_t cphase(real2_t a, int code)
{
    return code == 0 ? a : code == 1 ? (real2_t)(-a.y, a.x) : code == 2 ? -a : (real2_t)(a.y, -a.x);
}

/* gamma_mu row r -> column GAMMA_COL(mu, r) with phase GAMMA_PH(mu, r). */
#define GAMMA_COL(mu, r) ((mu) < 2 ? 3 - (r) : (r) ^ 2)
#define GAMMA_PH(mu, r)                                                                                                \
    ((mu) == 0   ? ((r) < 2 ? 1 : 3)                                                                                   \
     : (mu) == 1 ? (((r) == 0 || (r) == 3) ? 2 : 0)                                                                    \
     : (mu) == 2 ? (((r) == 0 || (r) == 3) ? 1 : 3)                                                                    \
                 : 0)

/* Third row of an SU(3) matrix from the first two: conj(row0 x row1). */
static inline void su3_reconstruct_row2(real2_t m[9])
{
    m[6] = cconj(cmul(m[1], m[5]) - cmul(m[2], m[4]));
    m[7] = cconj(cmul(m[2], m[3]) - cmul(m[0], m[5]));
    m[8] = cconj(cmul(m[0], m[4]) - cmul(m[1], m[3]));
}

/* r = U v */
static inline void su3_mv(real2_t r[3], const real2_t m[9], const real2_t v[3])
{
    for (int i = 0; i < 3; i++) r[i] = cmul(m[i * 3], v[0]) + cmul(m[i * 3 + 1], v[1]) + cmul(m[i * 3 + 2], v[2]);
}
/* r = U^+ v */
static inline void su3_mdv(real2_t r[3], const real2_t m[9], const real2_t v[3])
{
    for (int i = 0; i < 3; i++) r[i] = cmulc(m[i], v[0]) + cmulc(m[3 + i], v[1]) + cmulc(m[6 + i], v[2]);
}

#endif
