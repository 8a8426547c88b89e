/* lqcd_mpi.h — what the MPI files of the lattice path share (gauge_mpi.c,
 * halo.c): the process grid's neighbours, face numbering on the host, and
 * messages of any length.  Included only by files built with MPI. */
#ifndef CLPHYS_LQCD_MPI_INTERNAL_H
#define CLPHYS_LQCD_MPI_INTERNAL_H

#include "clphys_lqcd_mpi.h"
#include "platform/cp_mpi.h"

/* The rank at coord (x fastest, clphys_lqcd_grid_local). */
int lqcd_grid_rank(const int grid[4], const int coord[4]);
/* The ranks above (coord[mu] + 1) and below (coord[mu] - 1), periodic. */
void lqcd_grid_neighbours(const int grid[4], const int coord[4], int up[4], int down[4]);
/* Checks every rank makes before it takes part: grid fits comm's size and
 * divides the lattice of local extents ldims; *coord of this rank. */
clphys_status lqcd_grid_check(MPI_Comm comm, const int grid[4], const int ldims[4], int coord[4]);
/* Face index of a site (coordinates c) in direction mu: the lexicographic
 * index of its other three coordinates (nu ascending), halved when half
 * (one parity: the numbering of cl/wilson_dslash.cl). */
size_t lqcd_face_index(const int dims[4], const int c[4], int mu, int half);
/* MPI_Sendrecv of n doubles each way (in pieces below 2^31 elements). */
int lqcd_sendrecv_doubles(MPI_Comm comm, const double *send, int to, double *recv, int from, size_t n, int tag);

/* halo.c: face copies on a queue of their own (separate = 1, the choice on
 * GPUs) or on the context's queue before the interior kernel (0, on CPU
 * devices); for tests of both on one device.  No MPI call. */
clphys_status lqcd_halo_transfer_queue(clphys_dslash_plan *pl, int separate);

#endif
