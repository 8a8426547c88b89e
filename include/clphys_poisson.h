/*
 * clphys_poisson.h — the 7-point Poisson/Helmholtz solver of an ocean model:
 * conjugate gradients preconditioned by a multigrid V-cycle with vertical
 * line relaxation, geometry assembly from a bathymetry, NetCDF files.
 * Part of the public API, included by clphys.h; it also compiles alone.
 *
 * Sources: the non-hydrostatic ocean model kinaco (Matsumura & Hasumi, Ocean
 * Modelling 20, 2008, "A non-hydrostatic ocean model with a scalable
 * multigrid Poisson solver") and its GPU port (Yamagishi & Matsumura,
 * Procedia Computer Science 80, 1658, 2016): coefficients a(i,j,k,-3:3)
 * with the cell index innermost, a 2-D work-item grid over (i,j) looping
 * over k, the preconditioner in single precision.
 *
 * Grid and index.  nx x ny x nz cells, cell-centred; i east, j north, k
 * down (k = 0 is the surface layer).  Every array over cells, on the host or
 * the device, uses c = i + nx * (j + ny * k) (i fastest).  n = nx ny nz.
 *
 * The operator (the seed's layout, structure of arrays):
 *   (A x)_c = sum_{d=-3..3} a[(d + 3) * n + c] * x_{nb(c, d)}
 *   nb(c, -3) = (i, j, k-1)   nb(c, -2) = (i, j-1, k)   nb(c, -1) = (i-1, j, k)
 *   nb(c,  0) = c
 *   nb(c, +1) = (i+1, j, k)   nb(c, +2) = (i, j+1, k)   nb(c, +3) = (i, j, k+1)
 * Neighbour indices wrap around in x and y (i-1 of i = 0 is nx-1); the
 * coefficient across a closed boundary is 0, so only a non-zero wrap
 * coefficient makes x or y periodic.  In z there is no wrap (the line
 * relaxation runs along z): a coefficient across the top or the bottom is
 * an error.  A is symmetric: a(c, +1) = a(nb(c, +1), -1) and likewise in y
 * and z.  Inside the library A is stored as the excess of its diagonal over
 * the couplings, e = a(c, 0) - sum |a(c, d != 0)|, and its three forward
 * couplings (4 arrays instead of 7: the backward coupling of c is the
 * forward one of its neighbour), and applied in flux form,
 * e_c x_c - sum a (x_c - x_nb) (cl/poisson_stencil.cl).
 *
 * Assembled operator (clphys_poisson_plan_create): the finite-volume
 * discretization of div(grad p) - lambda p = f integrated over each cell
 * and negated, so that A is symmetric positive (semi)definite:
 *   (A p)_c = sum_faces T_f (p_c - p_nb(f)) + lambda V_c p_c,   b_c = -V_c f_c,
 * T_f = (face area) / (distance between the two cell centres), summed over
 * faces between two wet cells only: homogeneous Neumann (no flux) at
 * coasts, the sea floor and the rigid lid, and at the domain edges unless
 * periodic in x.  Lengths in metres.  Cartesian: spacings dx[i], dy[j];
 * spherical (lonlat): radius 6371000 m, longitudes and latitudes uniform in
 * degrees, face lengths R cos(lat) dlon and R dlat, cell areas
 * R^2 dlon (sin lat_n - sin lat_s).  Vertical: layer thicknesses dz[k],
 * distances between centres (dz[k] + dz[k+1]) / 2.  Mask: the cell (i,j,k)
 * is wet when its centre lies above the sea floor, z_c(k) < depth(i,j);
 * land elsewhere (a column with depth <= 0 is all land).  A wet cell
 * without a wet neighbour is land too when there is no Helmholtz term (its
 * equation would be 0 = b).
 *
 * Land cells are identity rows of A with b = 0 (x = 0 there); every vector
 * still has n entries, so that all kernels stay coalesced.
 *
 * Singular problems.  A connected wet region in which every row sums to
 * zero (no Helmholtz term, no boundary condition other than no-flux: the
 * pure Neumann problem) determines p only up to a constant.  The solve then
 * projects b onto the range of A (its sum over the region made zero:
 * b -= w (sum b) / (sum w), w = V for assembled operators, so that the
 * volume-weighted mean of f is removed; w = 1 for supplied ones) and
 * returns the solution whose w-weighted mean over the region is zero; the
 * result says so (singular_regions, removed_mean).
 *
 * The solver (Matsumura & Hasumi 2008, sections 3-4; Trottenberg,
 * Oosterlee & Schueller, Multigrid, 2001, sections 5.1-5.2 for line
 * relaxation with semi-coarsening): CG in fp64 (the linear-algebra layer of
 * the library) preconditioned by one symmetric V-cycle:
 *  - smoother: damped Jacobi line relaxation along z (a tridiagonal solve
 *    per (i,j) column, one work-item per column), smooth steps before and
 *    after the coarse correction;
 *  - coarsening in x and y only (2 x 2 columns -> 1, nz kept) down to a
 *    single column, which is solved exactly (tridiagonal);
 *  - transfers: piecewise-constant prolongation onto the wet cells, its
 *    transpose as restriction;
 *  - coarse operators built from the fine coefficients over the mask:
 *    vertical couplings and the diagonal excess (lambda V) summed as in the
 *    Galerkin product, horizontal couplings summed over the wet fine faces
 *    and multiplied by coarse_scale (0.5: equal to rediscretization on a
 *    uniform grid; 1: the Galerkin product, which over-weights horizontal
 *    coupling by 2 with piecewise-constant transfers); bench/poisson-notes.md
 *    has the iteration counts of both.
 * Stopping: on the true relative residual |b - A x| / |b| computed in fp64
 * at the end of each CG run; when the iterated residual was wrong, CG is
 * restarted on the residual (defect correction).
 */
#ifndef CLPHYS_POISSON_H
#define CLPHYS_POISSON_H

#include "clphys_core.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- problems -------------------------------------------------------------- */

/* A geometry to assemble A from.  Arrays are the caller's and read only
 * during the call that takes them. */
typedef struct {
    int nx, ny, nz;      /* cells; nx, ny >= 2, nz >= 1                              */
    const double *dx;    /* Cartesian: nx spacings in x (m); NULL with lonlat          */
    const double *dy;    /* Cartesian: ny spacings in y (m); NULL with lonlat          */
    int lonlat;          /* 1: spherical grid, uniform in degrees over the ranges below */
    double lon0, lon1;   /* degrees, lon0 < lon1 <= lon0 + 360 (west, east edges)     */
    double lat0, lat1;   /* degrees, -90 <= lat0 < lat1 <= 90                          */
    const double *dz;    /* nz layer thicknesses (m), dz[0] at the surface; required   */
    const double *depth; /* ny * nx sea-floor depths (m, positive down),
                            depth[j * nx + i]; <= 0: a land column; required          */
    double helmholtz;    /* lambda >= 0 (1/m^2); 0: the Poisson problem                */
    int periodic_x;      /* 1: x wraps around (cell nx-1 is west of cell 0)           */
} clphys_poisson_geometry;

/* A caller's operator: 7 arrays of n doubles in the layout above, on the
 * host (a) or in a device buffer (a_mem, 7 n doubles, read once at plan
 * creation: the plan keeps its own copy, in its own layout).  Required of
 * it: finite values; symmetric to a relative 1e-12; off-diagonal
 * coefficients <= 0 and a(c, 0) >= sum of |off-diagonals| (a weakly
 * diagonally dominant M-matrix, as every finite-volume operator of the form
 * above is); an excess a(c, 0) - sum |off-diagonals| below 1e-12 a(c, 0)
 * is taken as 0 (a row that sums to zero).  A cell whose 7 coefficients
 * are all 0 is land. */
typedef struct {
    int nx, ny, nz;
    const double *a; /* host: 7 n doubles, or NULL                                */
    cl_mem a_mem;    /* device: 7 n doubles, or NULL (exactly one of a, a_mem)    */
} clphys_poisson_operator;

/* ---- plans ----------------------------------------------------------------- */

/* The precision of the V-cycle and the CG (the true residual that stops
 * the solve is fp64 in every mode). */
typedef enum {
    CLPHYS_POISSON_MIXED = 0, /* fp64 CG, V-cycle in fp32 (coefficients and vectors of
                                 every level), reading r and writing z in fp64        */
    CLPHYS_POISSON_FP64,      /* fp64 CG, fp64 V-cycle                                */
    CLPHYS_POISSON_FP32       /* fp32 CG with the fp32 V-cycle, inside fp64 defect
                                 correction (true residual in fp64, restarts); fp32 CG
                                 fails on very anisotropic grids (dx/dz = 1e4)        */
} clphys_poisson_precision;

/* The 7-point stencil of the CG operator (cl/poisson_stencil.cl). */
typedef enum {
    CLPHYS_POISSON_STENCIL_AUTO = 0,  /* the tuned variant (tuning cache, else timed at
                                         plan creation), else column on GPUs, cell on
                                         CPUs                                          */
    CLPHYS_POISSON_STENCIL_COLUMN,    /* the seed's: a 2-D grid of work-items over (i,j),
                                         each looping over k (x(k-1), x(k), x(k+1) and the
                                         vertical coupling stay in registers)          */
    CLPHYS_POISSON_STENCIL_CELL,      /* one work-item per cell, a 3-D grid            */
    CLPHYS_POISSON_STENCIL_COLUMN_VEC /* the column kernel over 8 (fp32) or 4 (fp64)
                                        neighbouring columns per work-item in vector
                                        types (SIMD lanes on CPUs); nx a multiple
                                        of 8                                        */
} clphys_poisson_stencil;

/* The V-cycle's line-relaxation kernels.  All give the same V-cycle up to
 * rounding. */
typedef enum {
    CLPHYS_POISSON_LINE_AUTO = 0,   /* staged on GPUs (column when a tile of 8
                                       columns does not fit the device's local
                                       memory: nz above ~680 fp32, ~340 fp64 at
                                       48 KiB; or when the compiled kernels take
                                       work-groups of fewer than 32), column-vec
                                       on CPUs                                  */
    CLPHYS_POISSON_LINE_COLUMN,     /* one work-item per (i,j) column, looping over
                                       k, the prolongation fused into the first
                                       step after the coarse correction
                                       (cl/poisson_line_relax.cl)                         */
    CLPHYS_POISSON_LINE_COLUMN_VEC, /* 8 (fp32) or 4 (fp64) neighbouring columns
                                       per work-item in vector types, so that
                                       the line solves run in SIMD lanes on CPUs
                                       (cl/poisson_line_relax_vec.cl); levels whose nx is
                                       not a multiple use column                  */
    CLPHYS_POISSON_LINE_STAGED      /* a work-group per tile of columns: its
                                       work-items compute the residuals of the
                                       tile's cells, layers in parallel, into
                                       local memory, one work-item per column
                                       runs the tridiagonal solve there, all
                                       write x; the restriction also makes the
                                       coarse level's first step.  3 (nz | 1)
                                       reals of local memory per column of a
                                       tile (cl/poisson_line_staged.cl)                   */
} clphys_poisson_line;

/* A zeroed struct asks for the defaults. */
typedef struct {
    size_t struct_size; /* sizeof this struct (CLPHYS_PARAMS_INIT), or 0   */
    clphys_poisson_precision precision;
    clphys_poisson_stencil variant;
    clphys_poisson_line line;
    double tol;               /* target true |b - A x| / |b|; 0 = 1e-8                    */
    int max_iter;             /* CG iterations in all (restarts included); 0 = 1000       */
    int smooth;               /* line-relaxation steps before and after the coarse
                                 correction (the same number: the V-cycle stays
                                 symmetric); 0 = 2 (bench/poisson-notes.md: half the
                                 iterations of 1 for 1.25 times the bytes)              */
    double omega;             /* damping of the Jacobi line relaxation, 0 < omega <= 1;
                                 0 = 0.8                                                 */
    double coarse_scale;      /* horizontal couplings of the coarse operators, > 0 and
                                 <= 1; 0 = 0.5 (see the top of this file)               */
    int local_size[2];        /* work-group shape (lx, ly) of the stencil (lx along i);
                                 0 = tuned (the cell variant adds a third extent of 1)  */
    int vcycle_local_size[2]; /* the same for the V-cycle's kernels: column and
                              column-vec (lx, ly) along i and j, 0 = 32 x 2 on GPUs
                              (each work-item keeps 2 nz reals of the line solve),
                              16 x 1 on CPUs; staged (columns per tile, work-items
                              per column), 0 = 32 columns (fewer where 3 x 32
                              (nz | 1) reals exceed the local memory: 16 in fp64
                              at nz = 64 and 48 KiB) x 256 work-items, at most nz
                              per column; levels with fewer columns than a tile
                              take narrower tiles with more work-items per column */
    int no_tune;              /* 1: with variant AUTO or local_size 0, skip the timing
                                 and use the heuristic; so does CLPHYS_NO_TUNE=1        */
    int no_time_split;        /* 1: no profiling events per iteration (the result's
                                 vcycle_s, stencil_s and other_s stay 0)                 */
    /* Called (may be NULL) after every CG iteration with the iterated residual
     * over |b| (is_true = 0) and after every true residual (is_true = 1). */
    void (*progress)(void *user, int iter, double rel_residual, int is_true);
    void *user;
} clphys_poisson_params;

typedef struct clphys_poisson_plan clphys_poisson_plan;

/* Assemble A from the geometry, build the multigrid hierarchy on the host
 * (fp64), upload it, build the kernels and choose the stencil variant and
 * work-group shape.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL, nx or ny < 2
 * (a grid too small for a coarse level), nz < 1, n above 2^31, a missing
 * array, lonlat ranges out of order or outside [-90, 90], a negative
 * Helmholtz term, params out of range (tol < 0, max_iter < 0, smooth < 0,
 * omega outside (0, 1], coarse_scale outside (0, 1], an unknown precision,
 * variant or line, the column-vec stencil with nx not a multiple of 8, a
 * local size above the device's, the staged line with nz too large for
 * the device's local memory)); CLPHYS_ERR_INPUT naming the
 * array and index for a spacing or thickness that is not finite and > 0, a
 * depth that is NaN or infinite, when no cell is wet, and naming the cell
 * when a volume, face term (area / distance) or lambda V lies outside
 * [1e-30, 1e30] with an fp32 V-cycle ([1e-290, 1e290] in FP64): spacings
 * or a Helmholtz term out of scale;
 * CLPHYS_ERR_UNSUPPORTED (no fp64 on the device: the CG is fp64);
 * CLPHYS_ERR_BUILD; CLPHYS_ERR_OUT_OF_MEMORY; CLPHYS_ERR_OPENCL. */
clphys_status clphys_poisson_plan_create(clphys_context *ctx, const clphys_poisson_geometry *geometry,
                                         const clphys_poisson_params *params, clphys_poisson_plan **plan);
/* The same from a caller's operator.  Errors as above, and CLPHYS_ERR_INPUT
 * naming the cell (i, j, k) and coefficient for a value that is not finite,
 * an asymmetric pair (both values given), a positive off-diagonal or a
 * diagonal below the sum of the off-diagonals; CLPHYS_ERR_INVALID_ARGUMENT
 * when both or neither of a and a_mem are given or a_mem is smaller than
 * 7 n doubles. */
clphys_status clphys_poisson_plan_create_operator(clphys_context *ctx, const clphys_poisson_operator *op,
                                                  const clphys_poisson_params *params, clphys_poisson_plan **plan);
/* Release the plan (NULL accepted).  No errors. */
void clphys_poisson_plan_destroy(clphys_poisson_plan *plan);

/* What a plan chose and built. */
typedef struct {
    int nx, ny, nz;
    size_t n;                       /* cells                                          */
    size_t wet;                     /* wet cells                                      */
    int levels;                     /* multigrid levels, the fine one included        */
    int singular_regions;           /* connected wet regions without a unique solution */
    clphys_poisson_stencil variant; /* the stencil in use (never AUTO)               */
    clphys_poisson_line line;       /* the line-relaxation kernels (never AUTO)       */
    int local_size[2];              /* its work-group shape (0, 0: the runtime's)     */
    clphys_tune_source tune_source; /* of variant and local_size (clphys.h; formerly
                                     an int of the same values)                 */
    /* Compulsory-byte model (each array touched once per kernel, neighbours
     * from caches): one stencil application reads 4 coefficient arrays and x
     * and writes y, 6 reals per cell; one V-cycle: the sum over its kernels
     * of the arrays each reads and writes, over all levels. */
    double stencil_bytes_fp64, stencil_bytes_fp32;
    double vcycle_bytes;      /* one V-cycle in the plan's precision and line
                                 variant (staged: no b re-read by each coarse
                                 level's first step; column-vec: its
                                 prolongation's own pass over x)              */
    int vcycle_local_size[2]; /* the V-cycle's work-group shape on the finest
                                 level: (lx, ly) along i and j, or staged
                                 (columns per tile, work-items per column) */
} clphys_poisson_info;
/* No errors (plan or info NULL: nothing written). */
void clphys_poisson_plan_info(const clphys_poisson_plan *plan, clphys_poisson_info *info);

/* Time the stencil's variants (column, cell, column-vec) and, on GPUs,
 * work-group shapes on the grid of `clphys bench`'s default run (a flat box
 * of 256 x 256 x 32 cells; quick: 64 x 64 x 16), fp64, as a plan does at
 * creation, and write the fastest into the tuning cache (clphys.h,
 * "Tuning"), where plans of that grid with variant AUTO and local_size 0
 * read it instead of timing (the entry is per grid: plans of other grids
 * time their own at creation).  opt->repeat is not used (5 timed runs per
 * candidate, their median).  Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL
 * ctx), CLPHYS_ERR_UNSUPPORTED (no fp64), CLPHYS_ERR_OUT_OF_MEMORY, and
 * those of clphys_poisson_plan_create. */
clphys_status clphys_poisson_tune(clphys_context *ctx, const clphys_tune_options *opt);

/* ---- solving ----------------------------------------------------------------- */

typedef struct {
    int iterations;       /* CG iterations, restarts included                   */
    int restarts;         /* CG runs after the first (the true residual was
                             above tol when the iterated one reached it)        */
    double rel_residual;  /* true |b - A x| / |b| in fp64 at the end             */
    int singular_regions; /* regions projected (0: A was non-singular)           */
    double removed_mean;  /* the w-weighted mean removed from the right-hand side
                             over the largest singular region (0 when none)      */
    double seconds;       /* wall time of the call                               */
    double transfer_s;    /* host <-> device copies of rhs and x (host arrays)   */
    /* Device time from profiling events (0 with no_time_split): */
    double vcycle_s;  /* the V-cycles: first kernel START to last kernel END  */
    double stencil_s; /* the CG's stencil applications                       */
    double other_s;   /* the rest of the solve: reductions, vector updates,
                         the host's waits for them (wall time of the solve
                         minus the two above)                                */
    int vcycles;      /* V-cycles applied                                    */
} clphys_poisson_result;

/* Solve A x = b.  rhs: n doubles; for a plan made from a geometry it is f
 * of div(grad p) - lambda p = f (b = -V f is formed inside), for one made
 * from an operator it is b itself; values in land cells are ignored.  x: n
 * doubles, the solution (0 on land); its input value is ignored.  *result is
 * filled also on failure.  b is formed scaled by powers of two (exact) so
 * that any finite rhs is solved without overflow inside the solve; x is
 * scaled back.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL),
 * CLPHYS_ERR_INPUT (rhs not finite in a wet cell, named; a solution
 * beyond the range of doubles, the cell named),
 * CLPHYS_ERR_NOT_CONVERGED with the residual reached when max_iter is
 * exhausted or CG makes no progress, CLPHYS_ERR_OPENCL. */
clphys_status clphys_poisson_solve(clphys_poisson_plan *plan, const double *rhs, double *x,
                                   clphys_poisson_result *result);
/* The same on device buffers of n doubles each (the caller's, used in
 * place, no transfer; rhs is not modified).  A non-finite rhs is not
 * checked here: it shows as a non-finite residual (CLPHYS_ERR_NOT_CONVERGED).
 * Errors as clphys_poisson_solve, and CLPHYS_ERR_INVALID_ARGUMENT for a
 * buffer smaller than n doubles. */
clphys_status clphys_poisson_solve_mem(clphys_poisson_plan *plan, cl_mem rhs, cl_mem x, clphys_poisson_result *result);

/* ---- the pieces, on device fields (benchmarks, embedding) ------------------- */

/* A device field of n reals of the given precision; the caller releases it
 * (clReleaseMemObject).  Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL),
 * CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_poisson_field_create(clphys_poisson_plan *plan, clphys_precision precision, cl_mem *field);
/* Host doubles (n) <-> a field of that precision; both wait.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL), CLPHYS_ERR_OUT_OF_MEMORY,
 * CLPHYS_ERR_OPENCL. */
clphys_status clphys_poisson_field_write(clphys_poisson_plan *plan, clphys_precision precision, cl_mem field,
                                         const double *host);
clphys_status clphys_poisson_field_read(clphys_poisson_plan *plan, clphys_precision precision, cl_mem field,
                                        double *host);
/* y = A x (fields of the precision; fp32 uses the fp32 copy of A, made on
 * first use) with the plan's stencil variant; on land the identity, y = x.  kernel_s as in clphys.h.
 * Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL, y == x), CLPHYS_ERR_OPENCL. */
clphys_status clphys_poisson_apply(clphys_poisson_plan *plan, clphys_precision precision, cl_mem y, cl_mem x,
                                   double *kernel_s);
/* Change the stencil variant and work-group shape (e.g. while measuring);
 * local_size NULL or {0, 0}: the runtime's choice.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL plan, AUTO or an unknown variant,
 * column-vec with nx not a multiple of 8, a shape above the device's
 * maximum work-group size). */
clphys_status clphys_poisson_set_stencil(clphys_poisson_plan *plan, clphys_poisson_stencil variant,
                                         const int local_size[2]);
/* The same for the V-cycle's kernels, in the plan's line variant (NULL or
 * {0, 0}: the default of clphys_poisson_params.vcycle_local_size).  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL plan, more work-items than the compiled
 * V-cycle kernels take on the device; staged: a tile whose local memory,
 * 3 lx (nz | 1) reals, exceeds the device's). */
clphys_status clphys_poisson_set_vcycle_shape(clphys_poisson_plan *plan, const int local_size[2]);
/* z = B r, one V-cycle of the plan's precision.  r, z: fields of n doubles
 * (MIXED, FP64) or floats (FP32), z != r.  kernel_s as in clphys.h.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL, z == r), CLPHYS_ERR_OPENCL. */
clphys_status clphys_poisson_vcycle(clphys_poisson_plan *plan, cl_mem z, cl_mem r, double *kernel_s);
/* The plan's fine operator in the 7-array layout (7 n doubles; land cells
 * all 0), its mask (n bytes, 1 wet) and the projection weights w (n doubles:
 * cell volumes V for assembled operators, 1 for supplied ones, 0 on land);
 * any of the three may be NULL.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (plan
 * NULL). */
clphys_status clphys_poisson_plan_operator(const clphys_poisson_plan *plan, double *a, unsigned char *mask, double *w);

/* ---- inputs ------------------------------------------------------------------- */

/* A flat-bottomed box of depth `depth` (all columns wet): depth[ny * nx].
 * No errors beyond CLPHYS_ERR_INVALID_ARGUMENT (NULL, nx or ny < 1). */
clphys_status clphys_poisson_box(int nx, int ny, double depth_value, double *depth);
/* A random basin from a seed: land around the edges (unless periodic_x,
 * which keeps the basin open across x = 0), a continental shelf of about
 * max_depth / 20 falling along a slope to an abyssal plain of about
 * max_depth with seamounts, and islands (a few % of the area); lakes (wet
 * regions not connected to the largest one) are filled in.  The same seed
 * gives the same basin on every machine.  depth[ny * nx] (m).  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL, nx or ny < 4, max_depth not > 0). */
clphys_status clphys_poisson_basin(int nx, int ny, uint64_t seed, double max_depth, int periodic_x, double *depth);
/* Layer thicknesses of total depth lz over nz levels, each `stretch` times
 * the one above it (1: uniform).  Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL,
 * nz < 1, lz or stretch not finite and > 0). */
clphys_status clphys_poisson_levels(int nz, double lz, double stretch, double *dz);
/* A manufactured solution on the geometry: p_exact(c) = cos(pi X) cos(pi Y)
 * cos(pi Z) at the cell centre, X, Y, Z the position scaled to [0, 1] over
 * the grid (lon, lat in lonlat), and the source f of every wet cell from the
 * exact fluxes of p_exact through its wet faces (dp/dn at the face centre
 * times the face area; none through closed faces), f_c = (sum of fluxes) /
 * V_c - lambda p_exact(c): the discrete problem whose solution approaches
 * p_exact at second order in the spacing, for any mask.  p and f: n
 * doubles (0 on land).  Errors: those of clphys_poisson_plan_create for the
 * geometry (no device needed). */
clphys_status clphys_poisson_manufactured(const clphys_poisson_geometry *geometry, double *f, double *p);

/* ---- physical bounds --------------------------------------------------------
 * What the readers below and the `clphys poisson` command accept (the
 * library's plans take any finite geometry): a depth or height beyond
 * CLPHYS_POISSON_MAX_DEPTH (deeper than any ocean trench, about 10 935 m,
 * higher than any mountain), cells narrower or layers thinner than
 * CLPHYS_POISSON_MIN_SPACING, horizontal extents beyond
 * CLPHYS_POISSON_MAX_EXTENT (about the Earth's circumference), a Helmholtz
 * term beyond CLPHYS_POISSON_MAX_HELMHOLTZ (1/(g H dt^2) for a 1 mm deep
 * layer and a 1 ms step; it keeps lambda V of the largest cell within fp32)
 * are refused as mistakes rather than solved into infinities. */
#define CLPHYS_POISSON_MAX_DEPTH     12000.0 /* m   */
#define CLPHYS_POISSON_MIN_SPACING   1e-3    /* m   */
#define CLPHYS_POISSON_MAX_EXTENT    4.1e7   /* m   */
#define CLPHYS_POISSON_MAX_HELMHOLTZ 1e8     /* 1/m^2 */

/* ---- NetCDF files (libnetcdf) --------------------------------------------------
 * Files: classic (CDF-1), 64-bit offset (CDF-2), 64-bit data (CDF-5) or
 * NetCDF-4 (HDF5), regular files.  A classic header is checked against the
 * file before libnetcdf reads it (every count and size within the file,
 * every variable's data inside it: a file cut short is an error); a
 * NetCDF-4 variable may declare at most 256 values per byte of the file
 * (compression beyond that is taken as a variable never written).
 *
 * A bathymetry: a 2-D variable of depths (m, positive down) over (y, x) or
 * (x, y), its dimensions with 1-D coordinate variables of the same names;
 * integer or floating types.  Which dimension is x (east) is told by the
 * coordinate variables' CF attributes: axis "X"/"Y", standard_name
 * (longitude, latitude, grid_longitude, grid_latitude,
 * projection_x_coordinate, projection_y_coordinate), units degrees_east /
 * degrees_north (and CF's other spellings); failing those, their names (x,
 * lon, longitude; y, lat, latitude); failing those too, the first dimension
 * is y.  Units (required): m (meter, metre, meters, metres), km (kilometer
 * ...: converted to metres) or degrees (degrees_east, degrees_north, and
 * CF's other spellings, or "degrees": a spherical grid), both coordinates
 * alike; anything else is refused, naming the unit.  Coordinates must be
 * finite and strictly increasing with at least 2 values, at least
 * CLPHYS_POISSON_MIN_SPACING apart (a degree counted as 111 km) over at
 * most CLPHYS_POISSON_MAX_EXTENT; latitudes within -90 .. 90.  Land where
 * depth <= 0 or missing: equal to the variable's _FillValue or
 * missing_value, or the default fill of its type when it has neither
 * attribute.  A depth beyond +-CLPHYS_POISSON_MAX_DEPTH is refused. */
typedef struct {
    int nx, ny;
    double *depth;  /* ny * nx, depth[j * nx + i], missing -> 0        */
    double *x, *y;  /* nx and ny cell-centre coordinates                */
    int lonlat;     /* 1: x, y are longitudes and latitudes (degrees)   */
    size_t missing; /* values that were missing (made land)            */
} clphys_poisson_bathymetry;
/* Read `var` of `file`.  Errors (messages name the file and the variable,
 * and the index of a bad value): CLPHYS_ERR_IO (cannot open, not a regular
 * file), CLPHYS_ERR_FORMAT (not a NetCDF file, a corrupt or cut classic
 * file, more values than a NetCDF-4 file holds, no such variable, not 2-D,
 * a dimension without a coordinate variable, both dimensions x or both y,
 * units missing or not a length or degrees, coordinates not increasing or
 * not finite, sizes above 2^31), CLPHYS_ERR_INPUT (a NaN or infinite depth
 * that is not the fill value, a depth or coordinates beyond the bounds
 * above), CLPHYS_ERR_OUT_OF_MEMORY.  Messages: clphys_last_error(NULL).
 * *b is filled by the call; release with clphys_poisson_bathymetry_destroy. */
clphys_status clphys_poisson_read_bathymetry(const char *file, const char *var, clphys_poisson_bathymetry *b);
/* Free its arrays (b itself is the caller's; NULL accepted).  No errors. */
void clphys_poisson_bathymetry_destroy(clphys_poisson_bathymetry *b);
/* A 3-D variable (z, y, x) of exactly nz x ny x nx values into f (n
 * doubles, z index 0 at the surface).  mask (n bytes, may be NULL): values
 * in cells where mask is 0 are ignored (set 0); missing values in wet cells
 * and non-finite values in wet cells are errors naming the cell.  Errors:
 * CLPHYS_ERR_IO, CLPHYS_ERR_FORMAT (no such variable, not 3-D, sizes that
 * differ from the grid's: named; the file checks of the bathymetry),
 * CLPHYS_ERR_INPUT.  Messages:
 * clphys_last_error(NULL). */
clphys_status clphys_poisson_read_field(const char *file, const char *var, int nx, int ny, int nz,
                                        const unsigned char *mask, double *f);
/* Write a solution: dimensions z, y, x; coordinate variables z (cell-centre
 * depth, m, positive down), y and x (m; or lat and lon in degrees when
 * lonlat), given by the caller (z_c: nz values, yc: ny, xc: nx); `p`
 * (z, y, x, double, _FillValue on land) with the units given (NULL: "1")
 * and `mask` (z, y, x, byte, 1 wet / 0 land, CF flag attributes); global
 * attributes Conventions "CF-1.8", title, source.  Written to a temporary
 * file in the same folder and renamed over `file` at the end, so `file` is
 * never half written and nothing is left behind on failure.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL), CLPHYS_ERR_IO naming the file (cannot
 * create, write or rename).  Messages: clphys_last_error(NULL). */
clphys_status clphys_poisson_write_netcdf(const char *file, int nx, int ny, int nz, const double *xc, const double *yc,
                                          const double *zc, int lonlat, const double *p, const unsigned char *mask,
                                          const char *units, const char *title);

#ifdef __cplusplus
}
#endif

#ifndef CLPHYS_NO_DEPRECATED
#include "clphys_deprecated.h" /* the old names, one release (docs/naming.md) */
#endif
#endif /* CLPHYS_POISSON_H */
