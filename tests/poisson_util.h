/* poisson_util.h — inputs shared by the Poisson path's tests: random
 * symmetric M-matrix operators in the 7-array layout and geometries
 * (include/clphys_poisson.h). */
#ifndef CLPHYS_POISSON_TEST_UTIL_H
#define CLPHYS_POISSON_TEST_UTIL_H

#include "clphys.h"
#include <stddef.h>
#include <stdint.h>

/* A random operator (7 n doubles, caller frees): a fraction `land` of the
 * cells land (all 7 zero), couplings -U(0.1, 1) * scale_d between wet cells
 * (scale 1 horizontally, vscale vertically), wrapping in x and y when
 * periodic_x / periodic_y, and a diagonal excess U(0, 1) on a fraction
 * `excess` of the wet cells (0: a singular operator). */
double *pt_random_op(uint64_t *rng, int nx, int ny, int nz, double land, int periodic_x, int periodic_y, double vscale,
                     double excess);

/* A geometry with owned arrays: spacings dx, dy (Cartesian), layer
 * thicknesses dz and depths; pt_geometry_free releases them. */
typedef struct {
    clphys_poisson_geometry g;
    double *dx, *dy, *dz, *depth;
} pt_geometry;
/* Uniform spacings hx, hy, hz over nx x ny x nz; depth nz * hz everywhere
 * (a box), or a random basin of that depth (basin_seed != 0). */
void pt_geometry_make(pt_geometry *t, int nx, int ny, int nz, double hx, double hy, double hz, uint64_t basin_seed);
void pt_geometry_free(pt_geometry *t);

#endif
