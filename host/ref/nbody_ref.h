/* nbody_ref.h — CPU reference of direct-sum gravity (OpenMP over i, SIMD
 * over j).  Same formulas and layouts as include/clphys_nbody.h: positions
 * x[4*n] = (x, y, z, m), acc[3*ni], pot[ni] (may be NULL).  xi == NULL means
 * the i-set is the j-set (self term removed: -G m_i / eps when eps > 0, the
 * r = 0 pair skipped when eps = 0).  Results overwrite acc/pot. */
#ifndef CLPHYS_NBODY_GRAVITY_REF_H
#define CLPHYS_NBODY_GRAVITY_REF_H

/* Double precision: the reference every kernel is checked against. */
void nbody_ref_gravity(int ni, const double *xi, int nj, const double *xj, double G, double eps, double *acc,
                       double *pot);
/* Single precision arithmetic with the same structure: the fp32 C + OpenMP
 * baseline of `clphys bench` (inputs and outputs still double). */
void nbody_ref_gravity_f32(int ni, const double *xi, int nj, const double *xj, double G, double eps, double *acc,
                           double *pot);

#endif
