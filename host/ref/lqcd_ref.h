/* lqcd_ref.h — fp64 CPU reference of the Wilson hopping term, with the
 * lattice geometry and gamma matrices the tests use.  Layouts and the gamma basis
 * are those of include/clphys_lqcd.h (host AoS, lexicographic sites). */
#ifndef CLPHYS_LQCD_DSLASH_REF_H
#define CLPHYS_LQCD_DSLASH_REF_H

#include <complex.h>

/* gamma_mu row r has one entry: column lqcd_gamma_col[mu][r], phase code
 * lqcd_gamma_phase[mu][r] (0: +1, 1: +i, 2: -1, 3: -i).  DeGrand-Rossi basis. */
extern const int lqcd_gamma_col[4][4];
extern const int lqcd_gamma_phase[4][4];
double complex lqcd_phase(int code);

/* Lexicographic site of coordinates c[4] and of its neighbour in direction mu
 * (dir +1 / -1), periodic. */
long long lqcd_site(const int dims[4], const int c[4]);
void lqcd_coords(const int dims[4], long long site, int c[4]);
long long lqcd_neighbor(const int dims[4], long long site, int mu, int dir);

/* The forward-hop phase exp(i theta_mu) of each direction at the lattice's
 * end (include/clphys_lqcd.h): 1 periodic, -1 antiperiodic; the backward hop
 * across it gets the conjugate.  lqcd_bc_antiperiodic_t: p,p,p,a (ap = 1)
 * or p,p,p,p (ap = 0). */
void lqcd_bc_antiperiodic_t(double complex phase[4], int ap);

/* out = H in on the full lattice; u, in, out as in clphys_lqcd.h (double
 * complex arrays), boundary phases as above. */
void lqcd_ref_hopping(const int dims[4], const double complex *u, const double complex *in, double complex *out,
                      const double complex phase[4]);
/* The 12 complex components of (H in)(x) at one lexicographic site x. */
void lqcd_ref_hopping_site(const int dims[4], const double complex *u, const double complex *in, double complex *out,
                           long long x, const double complex phase[4]);
/* out = in - kappa H in. */
void lqcd_ref_wilson(const int dims[4], const double complex *u, const double complex *in, double complex *out,
                     double kappa, const double complex phase[4]);

#endif
