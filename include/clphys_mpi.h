/*
 * clphys_mpi.h — clphys over MPI ranks (Open MPI or any MPI-3 library).
 * The only public header that includes mpi.h; clphys.h does not include it,
 * so an application without MPI never sees it.  Built when meson finds MPI
 * (option -Dmpi=auto|enabled|disabled); without MPI the library is as before.
 *
 * Conventions: the caller initialises MPI and passes its communicator; clphys
 * never calls MPI_Init, MPI_Finalize or MPI_Abort, never uses MPI_COMM_WORLD
 * behind the caller's back, and duplicates the communicator it is given
 * (MPI_Comm_dup) so its messages never meet the application's.  A call made
 * on a communicator is collective: every rank of it makes the call with the
 * same arguments where the docstring says so.  Every collective call returns
 * the same status on every rank (a failure on one rank is reported on all,
 * with the failing rank named in clphys_last_error), so no rank is left
 * waiting in a collective that another has abandoned.
 */
#ifndef CLPHYS_MPI_H
#define CLPHYS_MPI_H

#include <mpi.h>

#include "clphys_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The network between ranks, measured: the denominators of the exchange
 * models of the distributed paths (time = latency + bytes / bandwidth). */
typedef struct {
    double latency_s;             /* half the round trip of a 1-byte message    */
    double bandwidth_bytes_per_s; /* bytes / (half the round trip - latency) for
                                     messages of `bytes` bytes; bytes / half the
                                     round trip when that is not longer than
                                     the latency (a probe disturbed by other
                                     load: a lower bound)                       */
    size_t bytes;                 /* message size of the bandwidth probe        */
    int repeat;                   /* round trips per probe; figures are medians */
    int ranks;                    /* size of the communicator                   */
} clphys_network_limits;

/* Ping-pong between rank 0 and rank size-1 of comm (MPI_Send/MPI_Recv), after
 * one warm-up round trip; the other ranks wait in a barrier.  bytes <= 0
 * means 4 MiB, repeat <= 0 means 20.  Collective; every rank receives the
 * same figures.  On a single rank the figures are 0.  Errors (on every
 * rank): CLPHYS_ERR_INVALID_ARGUMENT (NULL lim, bytes above 1 GiB),
 * CLPHYS_ERR_OUT_OF_MEMORY, CLPHYS_ERR_IO (an MPI call failed; the message
 * holds MPI's error string).  Messages: clphys_last_error(NULL). */
clphys_status clphys_mpi_measure_network(MPI_Comm comm, long long bytes, int repeat, clphys_network_limits *lim);

/* One status on every rank: each rank passes its own; every rank gets
 * CLPHYS_SUCCESS when all succeeded, else the status of the lowest failing
 * rank, whose message is copied into clphys_last_error(ctx) (ctx may be NULL)
 * on every rank with "rank R: " in front.  Call it wherever a rank may fail
 * alone (a device that cannot be opened, a file) before the next collective
 * call, so that no rank waits in one another has abandoned.  Collective.
 * Errors: the agreed status; CLPHYS_ERR_IO when MPI itself fails. */
clphys_status clphys_mpi_agree(MPI_Comm comm, clphys_context *ctx, clphys_status local);

/* CLPHYS_SUCCESS on every rank when the `bytes` bytes at buf are the same on
 * every rank (compared by a 64-bit hash and the length), else, on every rank,
 * CLPHYS_ERR_INVALID_ARGUMENT with a message naming `what` and the lowest
 * rank that differs from rank 0: for options that must agree between ranks.
 * Collective.  Errors: that one; CLPHYS_ERR_IO when MPI fails. */
clphys_status clphys_mpi_same(MPI_Comm comm, clphys_context *ctx, const void *buf, size_t bytes, const char *what);

/* clphys_measure_sync (clphys.h) over the ranks of comm: each timed wait for
 * the n devices of this rank ends with MPI_Barrier (the seed's 4-GPU and
 * larger case), each point is the largest of the ranks' medians, and every
 * rank gets the same fit (c->ranks = size of comm).  Collective; n may differ
 * between ranks, max_launches and repeat may not.  Errors, the same on every
 * rank: CLPHYS_ERR_INVALID_ARGUMENT (NULL, n < 1), CLPHYS_ERR_BUILD,
 * CLPHYS_ERR_OPENCL, CLPHYS_ERR_IO (MPI).  Messages: clphys_last_error(NULL). */
clphys_status clphys_mpi_measure_sync(MPI_Comm comm, clphys_context *const *ctxs, int n, int max_launches, int repeat,
                                      clphys_sync_cost *c);

#ifdef __cplusplus
}
#endif

#ifndef CLPHYS_NO_DEPRECATED
#include "clphys_deprecated.h" /* the old names, one release (docs/naming.md) */
#endif
#endif /* CLPHYS_MPI_H */
