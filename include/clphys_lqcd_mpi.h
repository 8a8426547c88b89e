/*
 * clphys_lqcd_mpi.h — the lattice path over MPI ranks: a 4-D process grid,
 * gauge fields read once and scattered, the distributed plaquette, and
 * Wilson-Dirac plans whose hops exchange spin-projected halo faces while an
 * interior kernel runs (Babich et al., "Scaling lattice QCD beyond 100
 * GPUs", SC'11).  Installed beside clphys.h, which does not include it (it
 * includes mpi.h through clphys_mpi.h, whose conventions hold: the caller's
 * communicator, duplicated; collective calls return the same status on
 * every rank, with the failing rank named in clphys_last_error).
 *
 * Decomposition: clphys_lqcd_grid_local (clphys_lqcd.h).  A rank's host
 * arrays are those of clphys_lqcd.h with the local extents and local
 * lexicographic sites; its device fields have its own even-odd order.
 *
 * Plans over ranks: a clphys_lqcd_dslash_plan made by
 * clphys_lqcd_dslash_plan_create_mpi is used with the functions of
 * clphys_lqcd.h, each of which becomes collective for it (every rank calls
 * it, in the same order, with its own fields):
 *  - clphys_lqcd_dslash_apply(_split, _host) and the solvers: per hop, halo_pack
 *    projects the faces of the input (12 reals per face site), they go to
 *    the host, MPI_Irecv / MPI_Isend move them to the neighbours while the
 *    interior kernel computes every hop within the rank, then the received
 *    faces go to the device and halo_exterior adds the remote hops.  The
 *    links a backward hop needs from the rank below are exchanged once, at
 *    plan creation.  The boundary phases apply at the lattice's ends only,
 *    whatever the grid.
 *  - clphys_lqcd_solver_plan_create with plans over ranks (plan32 over the same
 *    grid): b and x are the rank's local spinors; every reduction point of
 *    the Krylov solvers and the defect correction is one MPI_Allreduce (in
 *    place, MPI_SUM, over the plan's communicator) of all its values, so the
 *    ranks take the same decisions; iteration counts, residuals and
 *    clphys_lqcd_solver_result are global.  The MPI library must return the same
 *    sums on every rank (Open MPI's reduction algorithms do).
 *  - A device failure on one rank during a hop still completes that hop's
 *    messages, and the hop's status is then agreed (one MPI_Allreduce of an
 *    int per hop): every rank returns the failing rank's error from that
 *    hop, and a solver stops on every rank there.  A device failure on one
 *    rank anywhere else in a solve (a solver's kernels, reads and waits, the
 *    defect correction's steps) skips that rank's further work, but not its
 *    hops, up to the next reduction point, which it joins with NaN; a sum
 *    that is not finite is CLPHYS_ERR_OPENCL on every rank.  A rank that
 *    dies ends the job under Open MPI's launcher (mpirun names the rank).
 */
#ifndef CLPHYS_LQCD_MPI_H
#define CLPHYS_LQCD_MPI_H

#include "clphys_lqcd.h"
#include "clphys_mpi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A gauge-file reader of clphys_lqcd.h (e.g. clphys_lqcd_gauge_read_nersc). */
typedef clphys_status (*clphys_lqcd_gauge_reader)(const char *file, clphys_lqcd_gauge_field *g);

/* Scatter the whole field `global`, held by rank `root` (ignored elsewhere,
 * may be NULL there), over the process grid: *local is created (the rank's
 * sublattice; release it with clphys_lqcd_gauge_destroy).  Collective.  Errors,
 * the same on every rank: CLPHYS_ERR_INVALID_ARGUMENT (NULL, root outside
 * the communicator, a grid whose product is not its size or that does not
 * divide the lattice: clphys_lqcd_grid_local), CLPHYS_ERR_OUT_OF_MEMORY,
 * CLPHYS_ERR_IO (MPI).  Messages: clphys_last_error(NULL). */
clphys_status clphys_lqcd_gauge_scatter(MPI_Comm comm, const int grid[4], int root,
                                        const clphys_lqcd_gauge_field *global, clphys_lqcd_gauge_field *local);

/* Read `file` once, on rank 0, with reader (NULL: clphys_lqcd_gauge_read_nersc,
 * every header check verified there), and scatter it; dims (may be NULL)
 * gets the whole lattice's extents on every rank.  Collective.  Errors, the
 * same on every rank: the reader's (its message, e.g. the failed checksum,
 * with "rank 0: " in front), and those of clphys_lqcd_gauge_scatter. */
clphys_status clphys_lqcd_gauge_read_mpi(MPI_Comm comm, const int grid[4], const char *file,
                                         clphys_lqcd_gauge_reader reader, clphys_lqcd_gauge_field *local, int dims[4]);

/* The average plaquette and link trace of the whole lattice (the
 * normalisation of clphys_lqcd_gauge_plaquette and clphys_lqcd_gauge_link_trace) from
 * the ranks' sublattices: the links one site beyond each rank's upper ends
 * come from the ranks above (one exchange per split direction), the sums
 * from one MPI_Allreduce; either output may be NULL.  Collective.  Errors,
 * the same on every rank: CLPHYS_ERR_INVALID_ARGUMENT (NULL local, a grid
 * whose product is not the communicator's size, local extents that differ
 * between ranks), CLPHYS_ERR_OUT_OF_MEMORY, CLPHYS_ERR_IO (MPI). */
clphys_status clphys_lqcd_gauge_plaquette_mpi(MPI_Comm comm, const int grid[4], const clphys_lqcd_gauge_field *local,
                                              double *plaquette, double *link_trace);

/* Host spinors (double[V][4][3][2]) between the whole lattice of extents
 * dims on rank root and the ranks' sublattices (global ignored off root,
 * may be NULL there).  Collective.  Errors, the same on every rank:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL, root outside the communicator, a grid
 * that does not fit: clphys_lqcd_grid_local), CLPHYS_ERR_OUT_OF_MEMORY,
 * CLPHYS_ERR_IO (MPI). */
clphys_status clphys_lqcd_spinor_scatter(MPI_Comm comm, const int grid[4], const int dims[4], int root,
                                         const double *global, double *local);
clphys_status clphys_lqcd_spinor_gather(MPI_Comm comm, const int grid[4], const int dims[4], int root,
                                        const double *local, double *global);

/* A Wilson-Dirac plan over the ranks of comm: this rank's sublattice
 * `local` (from clphys_lqcd_gauge_scatter or clphys_lqcd_gauge_read_mpi) of the
 * lattice split by grid (product = size of comm), parameters as for
 * clphys_lqcd_dslash_plan_create (kappa, precision and boundary must agree
 * between ranks; layout and work-group size may differ).  Builds the halo
 * kernels for the split directions, allocates the face buffers (device and
 * page-locked host, for full fields; where every rank of comm runs on one
 * host, also each rank's segment of an MPI-3 shared window the faces pass
 * through instead of MPI's messages: docs/usage.md) and exchanges the
 * backward-hop link faces.  Release with clphys_lqcd_dslash_plan_destroy (on
 * every rank, in the same order: it frees the plan's duplicate of comm and
 * the shared window, both collective).  Collective.  Errors, the same on every
 * rank: those of clphys_lqcd_dslash_plan_create, CLPHYS_ERR_INVALID_ARGUMENT
 * (the grid does not match comm, local extents or parameters differ
 * between ranks), CLPHYS_ERR_IO (MPI). */
clphys_status clphys_lqcd_dslash_plan_create_mpi(MPI_Comm comm, const int grid[4], clphys_context *ctx,
                                                 const clphys_lqcd_gauge_field *local,
                                                 const clphys_lqcd_dslash_params *p, clphys_lqcd_dslash_plan **plan);

#ifdef __cplusplus
}
#endif

#ifndef CLPHYS_NO_DEPRECATED
#include "clphys_deprecated.h" /* the old names, one release (docs/naming.md) */
#endif
#endif /* CLPHYS_LQCD_MPI_H */
