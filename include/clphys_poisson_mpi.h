/*
 * clphys_poisson_mpi.h — the Poisson/Helmholtz solver of clphys_poisson.h
 * over MPI ranks.  Includes mpi.h (through clphys_mpi.h, whose conventions
 * hold here: the caller's communicator, duplicated; every collective call
 * returns the same status on every rank, the failing rank named in
 * clphys_last_error).  Built when meson finds MPI; clphys.h does not include
 * it.
 *
 * Decomposition (Matsumura & Hasumi, Ocean Modelling 20, 2008, section 4):
 * a 2-D process grid px x py over x and y (rank r holds grid position
 * (r mod px, r / px)); every rank keeps whole columns, so that the vertical
 * line relaxation stays local.  Blocks are contiguous ranges of i and j,
 * made of units of 2^L columns (L = the levels kept distributed below the
 * fine one, so that a coarse column never straddles two ranks), the first
 * ranks one unit more when the units do not divide evenly, the last block
 * cut at the grid's edge.  A rank's block may be all land.
 *
 * Each rank's arrays hold its block with a one-cell halo (the ring) on
 * every level, exchanged with the four neighbouring ranks before every
 * kernel that reads neighbours (the stencil, each line-relaxation step
 * after the first, the residual before restriction, the corrected x after
 * prolongation).  Neighbours wrap around in x and in y as on one device;
 * the coefficient across a closed edge is 0, so periodic x is the operator's
 * (clphys_poisson_geometry.periodic_x).  The exchange is staged through the
 * host: kernels pack the faces into one device buffer, read into
 * page-locked memory, MPI_Sendrecv, written back and unpacked.
 *
 * Coarse levels: level l is distributed while every rank's block at level
 * l + 1 would keep at least gather_columns columns in x and in y; the
 * residual of the first level below is gathered onto rank 0, which runs the
 * rest of the V-cycle (its own plan of the global coarse operator) and
 * scatters the correction back (hypre's PFMG agglomerates coarse levels in
 * the same way, onto one rank at the end).  The V-cycle is the one of
 * clphys_poisson.h on every level: the same smoother, transfers and coarse
 * operators, symmetric, so that CG stays valid; a distributed solve equals
 * the single-device one up to the order of summation (the global sums are
 * MPI_Allreduce of each rank's partial sums).  The V-cycle's kernels are
 * params.line's (AUTO: staged on GPUs, column-vec on CPUs); with column-vec
 * the ranks' local widths are padded with land to a multiple of 8, its
 * kernels make the smoothing steps and column's the restriction and
 * prolongation.  Rank 0's gathered levels run column, or column-vec where
 * the ranks do.
 *
 * Setup on rank 0: the fine operator (assembled from the geometry, or
 * gathered from the ranks' blocks), its singular regions and the coarse
 * operators are made on rank 0 in fp64, as clphys_poisson_plan_create makes
 * them, and each rank receives its block of every distributed level: rank
 * 0 holds the whole problem on the host once, at plan creation.
 *
 * Arrays of a block: nx_b x ny_b x nz values in the layout of
 * clphys_poisson.h with the block's own extents, c = i + nx_b (j + ny_b k),
 * i, j counted from the block's first column (block[0], block[1]).
 */
#ifndef CLPHYS_POISSON_MPI_H
#define CLPHYS_POISSON_MPI_H

#include "clphys_poisson.h"
#include "clphys_mpi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A zeroed struct asks for the defaults; the same on every rank. */
typedef struct {
    size_t struct_size; /* sizeof this struct (CLPHYS_PARAMS_INIT), or 0           */
    int grid[2];        /* px, py with px py = ranks; 0, 0: MPI_Dims_create's      */
    int gather_columns; /* coarse levels stay distributed while each rank keeps at
                           least this many columns in x and y (>= 2); 0 = 64
                           (clphys_poisson_mpi_default_gather: 8 on CPUs)       */
} clphys_poisson_mpi_params;

/* The gather_columns measured best on the context's device type: 64 on
 * GPUs (two H100s, 2048 x 1024 x 64: 22% faster than 256), 8 on CPUs (PoCL,
 * one core per rank, 256 x 256 x 32 basin: 13% faster than 64 on 4 ranks,
 * 34% on 8, 3% slower on 2; bench/poisson-notes.md sections 8 and 10).
 * gather_columns 0 always means 64, so that clphys_poisson_mpi_block needs
 * no context: pass this value to the plan and to clphys_poisson_mpi_block
 * alike.  No errors (NULL: 64). */
int clphys_poisson_mpi_default_gather(const clphys_context *ctx);

/* This rank's block of an nx x ny grid over `ranks` ranks: block[4] = first
 * i, first j, extent in i, extent in j; *levels_distributed (may be NULL):
 * the levels kept on the ranks, the fine one included (the level below is
 * gathered onto rank 0).  Not collective (MPI_Dims_create is local).
 * Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL, ranks < 1, rank out of range,
 * a grid whose product is not ranks or with an extent < 1, gather_columns
 * 1 or negative, a grid larger than the horizontal extent: px > nx or
 * py > ny). */
clphys_status clphys_poisson_mpi_block(int nx, int ny, int ranks, const clphys_poisson_mpi_params *mp, int rank,
                                       int block[4], int *levels_distributed);

typedef struct clphys_poisson_mpi_plan clphys_poisson_mpi_plan;

/* A distributed plan from a geometry given on rank 0 (g is read there
 * only; other ranks may pass NULL).  params (the same on every rank, may be
 * NULL) and mp (may be NULL) as clphys_poisson_plan_create.  Collective.
 * Errors, the same on every rank: those of clphys_poisson_plan_create (the
 * geometry's found on rank 0), CLPHYS_ERR_INVALID_ARGUMENT (those of
 * clphys_poisson_mpi_block, params or mp differing between ranks),
 * CLPHYS_ERR_IO (an MPI call failed). */
clphys_status clphys_poisson_mpi_plan_create(clphys_context *ctx, MPI_Comm comm, const clphys_poisson_geometry *g,
                                             const clphys_poisson_params *params, const clphys_poisson_mpi_params *mp,
                                             clphys_poisson_mpi_plan **plan);
/* The same from each rank's block of a caller's operator: op->nx, ny, nz
 * the block's extents (clphys_poisson_mpi_block), op->a its 7 arrays in the
 * layout of clphys_poisson_operator over the block (host only: a_mem is
 * refused), couplings to the neighbouring blocks included; the global
 * extents nx, ny (the same on every rank).  Errors as above and those of
 * clphys_poisson_plan_create_operator, the cell named in global indices
 * (an asymmetric pair across two blocks included). */
clphys_status clphys_poisson_mpi_plan_create_operator(clphys_context *ctx, MPI_Comm comm, int nx, int ny,
                                                      const clphys_poisson_operator *op,
                                                      const clphys_poisson_params *params,
                                                      const clphys_poisson_mpi_params *mp,
                                                      clphys_poisson_mpi_plan **plan);
/* Release the plan (not collective; NULL accepted). */
void clphys_poisson_mpi_plan_destroy(clphys_poisson_mpi_plan *plan);

typedef struct {
    int nx, ny, nz;         /* the global grid                                     */
    int grid[2];            /* px, py                                              */
    int coords[2];          /* this rank's position in the grid                    */
    int block[4];           /* first i, first j, extent in i, in j                 */
    size_t n;               /* global cells                                        */
    size_t wet;             /* global wet cells                                    */
    int levels;             /* multigrid levels, the fine one included            */
    int levels_distributed; /* of which the V-cycle runs on the ranks; the rest on
                               rank 0 (clphys_poisson_mpi_block)                   */
    int singular_regions;
    clphys_poisson_line line; /* the V-cycle's kernels on the ranks (never AUTO)     */
    double halo_bytes;        /* bytes this rank sends in one exchange of an fp64
                                 fine-level field (its faces)                       */
} clphys_poisson_mpi_info;
/* No errors (NULL: nothing written). */
void clphys_poisson_mpi_plan_info(const clphys_poisson_mpi_plan *plan, clphys_poisson_mpi_info *info);

/* Solve A x = b over the ranks: rhs and x are this rank's blocks (rhs as
 * clphys_poisson_solve's: f for a geometry, b for an operator; x 0 on
 * land), result the same on every rank (seconds: this rank's wall time).
 * Collective.  Errors, the same on every rank: those of
 * clphys_poisson_solve (a non-finite rhs named with its global cell),
 * CLPHYS_ERR_IO (MPI).  A device that fails on one rank inside the
 * iterations ends the solve on every rank at the same point, with that
 * rank's error everywhere (CLPHYS_ERR_OPENCL where a reduction over the
 * ranks carried it): no rank is left waiting in an exchange or sum. */
clphys_status clphys_poisson_mpi_solve(clphys_poisson_mpi_plan *plan, const double *rhs, double *x,
                                       clphys_poisson_result *result);

/* y = A x in fp64 (blocks; land rows the identity), and z = B r, one
 * V-cycle of the plan's precision (blocks of doubles, converted to fp32
 * for an fp32 plan): the pieces a test compares with one device's.
 * Collective.  Errors, the same on every rank: CLPHYS_ERR_INVALID_ARGUMENT
 * (NULL), CLPHYS_ERR_OPENCL, CLPHYS_ERR_IO. */
clphys_status clphys_poisson_mpi_apply(clphys_poisson_mpi_plan *plan, const double *x, double *y);
clphys_status clphys_poisson_mpi_vcycle(clphys_poisson_mpi_plan *plan, const double *r, double *z);

/* The global mask (n bytes, 1 wet) and projection weights w (n doubles,
 * as clphys_poisson_plan_operator) gathered on rank 0; either may be NULL;
 * other ranks pass NULL or anything (untouched).  Collective.
 * Errors: CLPHYS_ERR_OUT_OF_MEMORY, CLPHYS_ERR_IO. */
clphys_status clphys_poisson_mpi_plan_operator(clphys_poisson_mpi_plan *plan, unsigned char *mask, double *w);

/* A global field (nx ny nz doubles, on rank 0 only) to the ranks' blocks
 * and back.  Collective.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL block,
 * NULL global on rank 0), CLPHYS_ERR_OUT_OF_MEMORY, CLPHYS_ERR_IO. */
clphys_status clphys_poisson_mpi_scatter(clphys_poisson_mpi_plan *plan, const double *global, double *block);
clphys_status clphys_poisson_mpi_gather(clphys_poisson_mpi_plan *plan, const double *block, double *global);

#ifdef __cplusplus
}
#endif

#ifndef CLPHYS_NO_DEPRECATED
#include "clphys_deprecated.h" /* the old names, one release (docs/naming.md) */
#endif
#endif /* CLPHYS_POISSON_MPI_H */
