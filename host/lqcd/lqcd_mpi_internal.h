/* lqcd_mpi_internal.h — what the MPI files of the lattice path share (gauge_mpi.c,
 * halo.c): the process grid's neighbours, face numbering on the host, and
 * messages of any length.  Included only by files built with MPI. */
#ifndef CLPHYS_LQCD_MPI_INTERNAL_H
#define CLPHYS_LQCD_MPI_INTERNAL_H

#include "clphys_lqcd_mpi.h"
#include "lqcd_internal.h"
#include "platform/cp_mpi.h"

/* Checks every rank makes before it takes part: grid fits comm's size and
 * divides the lattice of local extents ldims; *coord of this rank. */
clphys_status lqcd_grid_check(MPI_Comm comm, const int grid[4], const int ldims[4], int coord[4]);
/* MPI_Sendrecv of n doubles each way (in pieces below 2^31 elements). */
int lqcd_sendrecv_doubles(MPI_Comm comm, const double *send, int to, double *recv, int from, size_t n, int tag);

/* halo.c: face copies on a queue of their own (separate = 1, the choice on
 * GPUs) or on the context's queue before the interior kernel (0, on CPU
 * devices); for tests of both on one device.  No MPI call. */
clphys_status lqcd_halo_transfer_queue(clphys_lqcd_dslash_plan *pl, int separate);

#endif
