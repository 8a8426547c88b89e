/* poisson_ref.h — fp64 CPU reference of the Poisson path: the 7-point
 * stencil and the V-cycle, on operators in the public 7-array layout of
 * include/clphys_poisson.h (a[(d + 3) n + c], c = i + nx (j + ny k),
 * neighbours wrapping in x and y).  Written from the algorithm as the header
 * states it, on that layout (not on the library's 4-array form), so that
 * tests and bench check the device against an independent implementation. */
#ifndef CLPHYS_POISSON_REF_H
#define CLPHYS_POISSON_REF_H

#include <stddef.h>

/* Index of the neighbour of c in direction d (-3..3), wrapping in x and y;
 * in z the index of c itself beyond the top or bottom. */
size_t poisson_ref_neighbor(int nx, int ny, int nz, size_t c, int d);
/* y = A x. */
void poisson_ref_apply(int nx, int ny, int nz, const double *a, const double *x, double *y);
/* |b - A x| / |b| (0 when b = 0). */
double poisson_ref_residual(int nx, int ny, int nz, const double *a, const double *b, const double *x);

/* The system a plan solves, from its exported operator (clphys_poisson_
 * plan_operator: a, w, mask): b = s w rhs on wet cells (s = -1 for geometry
 * plans, +1 for operator plans), then over each connected region (cells
 * joined by non-zero couplings) in which no row's diagonal exceeds the sum
 * of its couplings by more than 1e-12 of it, b -= w sum(b) / sum(w).
 * label (n ints) receives the region of each cell (-1: none); returns the
 * number of such singular regions (-1 when out of memory). */
int poisson_ref_projected_rhs(int nx, int ny, int nz, const double *a, const double *w, const unsigned char *mask,
                              const double *rhs, double s, double *b, int *label);
/* The w-weighted mean of x over the cells with label == r. */
double poisson_ref_region_mean(size_t n, const int *label, int r, const double *w, const double *x);

/* The multigrid hierarchy of the reference V-cycle. */
typedef struct poisson_ref_mg poisson_ref_mg;
/* Build it: x-y coarsening to one column, coarse operators with the
 * horizontal couplings times coarse_scale, pinned cells (clphys_poisson.h).
 * NULL when out of memory. */
poisson_ref_mg *poisson_ref_mg_create(int nx, int ny, int nz, const double *a, double coarse_scale);
void poisson_ref_mg_destroy(poisson_ref_mg *mg);
int poisson_ref_mg_levels(const poisson_ref_mg *mg);
/* z = B r: one V-cycle with `smooth` damped (omega) Jacobi line-relaxation
 * steps before and after the coarse correction, the coarsest column solved
 * exactly. */
void poisson_ref_vcycle(poisson_ref_mg *mg, int smooth, double omega, const double *r, double *z);

#endif
