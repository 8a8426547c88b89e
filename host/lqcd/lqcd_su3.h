/* lqcd_su3.h — the SU(3) arithmetic of the lattice host code (gauge.c,
 * gauge_io.c): 3x3 complex matrices, row-major, in double precision. */
#ifndef CLPHYS_LQCD_SU3_H
#define CLPHYS_LQCD_SU3_H

#include <complex.h>

void lqcd_su3_mul(double complex r[9], const double complex a[9], const double complex b[9]);     /* a b   */
void lqcd_su3_mul_dag(double complex r[9], const double complex a[9], const double complex b[9]); /* a b^+ */
/* Row 2 from rows 0 and 1: conj(row0 x row1), exact for SU(3) (the
 * two-row storage of NERSC files and of reconstruct-12). */
void lqcd_su3_third_row(double complex m[9]);
/* Gram-Schmidt of rows 0 and 1, then lqcd_su3_third_row. */
void lqcd_su3_reunitarize(double complex m[9]);

#endif
