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

#include "clphys.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The network between ranks, measured: the denominators of the exchange
 * models of the distributed paths (time = latency + bytes / bandwidth). */
typedef struct {
    double latency_s;             /* half the round trip of a 1-byte message    */
    double bandwidth_bytes_per_s; /* bytes / (half the round trip - latency) for
                                     messages of `bytes` bytes                  */
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
clphys_status clphys_mpi_measure_network(MPI_Comm comm, long long bytes, int repeat,
                                         clphys_network_limits *lim);

#ifdef __cplusplus
}
#endif

#endif /* CLPHYS_MPI_H */
