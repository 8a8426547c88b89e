/* nbody_util.h — what the gravity tests share (test_gravity,
 * test_gravity_multi, test_gravity_mpi): random particles and the error
 * measure of a gravity result against its reference. */
#ifndef CLPHYS_TEST_GRAVITY_UTIL_H
#define CLPHYS_TEST_GRAVITY_UTIL_H

#include <stdint.h>

/* n particles uniform in the unit cube, masses in [0.5, 1.5) / n, from
 * stream `stream` of this run's seed (tu_rng_init); x[4*n], malloc'd. */
double *tg_random_particles(int n, uint64_t stream);

/* Per-particle relative error measured against the sum of the magnitudes of
 * the terms (the condition of the sum): |a_i - a_ref| / sum_j G m_j r/(r^2+eps^2)^(3/2)
 * and |phi_i - phi_ref| / sum_j G m_j / sqrt(r^2+eps^2) (self term included: it is
 * subtracted, so its rounding counts).  A plain |a_i| denominator is ill-posed
 * where the forces cancel (near the centre, a lone particle).  *ea and *ep
 * get the largest over the ni i-particles (inf for a NaN); pot and rp may be
 * NULL (then *ep = 0). */
void tg_errors(int ni, const double *xi, int nj, const double *xj, double eps, const double *acc, const double *pot,
               const double *ra, const double *rp, double *ea, double *ep);

#endif
