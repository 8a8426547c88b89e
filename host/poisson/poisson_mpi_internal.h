/* poisson_mpi_internal.h — the distributed Poisson plan (include/clphys_poisson_mpi.h)
 * shared by mpi_plan.c (decomposition, setup on rank 0, blocks to and from
 * rank 0) and mpi_solve.c (halo exchange, the V-cycle over ranks, CG). */
#ifndef CLPHYS_POISSON_MPI_INTERNAL_H
#define CLPHYS_POISSON_MPI_INTERNAL_H

#include "clphys_poisson_mpi.h"
#include "platform/cp_mpi.h"
#include "poisson_internal.h"

/* a rank's block on one level: first column and extents of the block, the
 * width h of the halo around it (1: the ring; the kernels are built with
 * -DCSHIFT=1, cl/poisson_line_relax.h), the local array's extents (nx: the ring
 * and land columns east of it up to a multiple of the plan's pad) */
typedef struct {
    int ox, oy, bx, by;
    int h, nx, ny;
} poisson_mpi_box;

/* The places of the plan's test failure (fail; tests/test_poisson_mpi.c). */
enum { POISSON_MPI_FAIL_APPLY = 1, POISSON_MPI_FAIL_EXCHANGE, POISSON_MPI_FAIL_SUM };

struct clphys_poisson_mpi_plan {
    clphys_context *ctx;
    MPI_Comm comm;
    int rank, size, px, py, cx, cy;
    int nbr[4];           /* west, east, south, north (wrap-around)         */
    int nx, ny, nz, nlev; /* global grid and its levels                     */
    int dlev;             /* levels 0 .. dlev - 1 on the ranks; dlev gathered */
    int pad;              /* local widths a multiple of this: 8 where the ranks
                             run column-vec (its lanes, 4 or 8), else 1      */
    int from_geometry;
    clphys_poisson_params prm;        /* defaults resolved                              */
    poisson_mpi_box *box;             /* this rank's, levels 0 .. dlev                  */
    clphys_poisson_plan *pl;          /* the rank's block with halo, levels 0 .. dlev   */
    clphys_poisson_plan *coarse;      /* rank 0: the global operator of level dlev      */
    cl_mem cr, cz;                    /* rank 0: its r and z (the V-cycle's io precision) */
    cl_kernel k_zero[2], k_prolong;   /* halo_zero per precision; prolong_cols          */
    cl_kernel k_pack[2], k_unpack[2]; /* faces_pack, faces_unpack per precision         */
    cl_mem face;                      /* the fine level's 4 faces out and 4 rings in (fp64) */
    cl_mem stage_mem;                 /* page-locked host copy of face (stage)          */
    void *stage;
    la_operator op64, op32;
    la_precond M;
    size_t wet;
    double *buf; /* host staging of blocks                         */
    size_t cap;
    double *gbuf; /* rank 0: a global level field                   */
    size_t gcap;
    cp_test_failure fail; /* for the tests: a device failure at a place above */
};

/* mpi_plan.c */
/* rank r's box on level l of a plan of dlev distributed levels */
void poisson_mpi_box_of(const clphys_poisson_mpi_plan *d, int r, int l, poisson_mpi_box *b);
/* at least `bytes` bytes of d->buf */
clphys_status poisson_mpi_buf(clphys_poisson_mpi_plan *d, size_t bytes);
/* a rank's block (doubles) of level l to rank 0's global array and back */
clphys_status poisson_mpi_gather_level(clphys_poisson_mpi_plan *d, int l, const double *block, double *global);
clphys_status poisson_mpi_scatter_level(clphys_poisson_mpi_plan *d, int l, const double *global, double *block);

/* mpi_solve.c */
clphys_status poisson_mpi_solver_setup(clphys_poisson_mpi_plan *d);
/* the interior of a level-l field (elements of es bytes) to or from a
 * host array of the block's extents */
clphys_status poisson_mpi_rect(clphys_poisson_mpi_plan *d, int l, cl_mem m, size_t es, int write, int i0, int j0, int w,
                               int h, void *host);

#endif
