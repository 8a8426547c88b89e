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

/* halo_node.c: a hop's faces through shared memory between ranks of one
 * host.  lqcd_node_create (collective, status agreed): *out NULL where the
 * ranks of comm do not all share this host or CLPHYS_LQCD_NODE_STAGING=0,
 * else each rank's segment of two halves of `bytes` in an MPI-3 shared
 * window, the segments of ranks[0 .. nranks-1] (the neighbours; negative
 * ones skipped) mapped.  lqcd_node_destroy is collective (MPI_Win_free).
 * lqcd_node_out: this hop's half of this rank's segment (*_direct: the
 * device copies into it straight); lqcd_node_in: rank's half for this hop
 * (NULL: not a neighbour; *_direct: the device copies out of every
 * neighbour's straight, else none); lqcd_node_flip after every hop, on
 * every rank;
 * lqcd_node_threads: host copies of a side copied through the staging. */
typedef struct lqcd_node lqcd_node;
clphys_status lqcd_node_create(MPI_Comm comm, clphys_context *ctx, size_t bytes, const int *ranks, int nranks,
                               lqcd_node **out);
void lqcd_node_destroy(lqcd_node *n);
char *lqcd_node_out(const lqcd_node *n);
int lqcd_node_out_direct(const lqcd_node *n);
const char *lqcd_node_in(const lqcd_node *n, int rank);
int lqcd_node_in_direct(const lqcd_node *n);
void lqcd_node_flip(lqcd_node *n);
int lqcd_node_threads(const lqcd_node *n);

#endif
