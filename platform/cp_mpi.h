/* cp_mpi.h — MPI plumbing shared by the distributed paths (platform/mpi.c).
 * Internal, and the only internal header that includes mpi.h: code that
 * includes it is built only when meson found MPI (CLPHYS_HAVE_MPI). */
#ifndef CLPHYS_CP_MPI_H
#define CLPHYS_CP_MPI_H

#include "clphys_mpi.h"
#include "platform.h"

/* Map an MPI error code (MPI_ERRORS_RETURN on the communicator) to
 * CLPHYS_ERR_IO with MPI's error string and what was being done. */
clphys_status cp_mpi_error(clphys_context *ctx, int mpierr, const char *what);
#define CP_MPI(ctx, call)                                                                                              \
    do {                                                                                                               \
        int cp_m_ = (call);                                                                                            \
        if (cp_m_ != MPI_SUCCESS) return cp_mpi_error((ctx), cp_m_, #call);                                            \
    } while (0)

/* Every rank's status in, the same status out on every rank: the local one
 * when all succeeded, else the failure of the lowest failing rank, whose
 * message (clphys_last_error(ctx)) is sent to all with "rank R: " in front.
 * Call it at every point where a rank may fail before a collective, so that
 * no rank waits for one that gave up.  An MPI failure inside gives
 * CLPHYS_ERR_IO. */
clphys_status cp_mpi_agree(MPI_Comm comm, clphys_context *ctx, clphys_status local);

/* CLPHYS_SUCCESS on every rank when the `bytes` bytes at buf are equal on
 * every rank (compared by a 64-bit hash and the length), else
 * CLPHYS_ERR_INVALID_ARGUMENT on every rank naming `what` and the first rank
 * that differs from rank 0 — for options that must agree between ranks. */
clphys_status cp_mpi_same(MPI_Comm comm, clphys_context *ctx, const void *buf, size_t bytes, const char *what);

/* sums[0 .. n) summed over comm's ranks in place (a reduction point of the
 * distributed solvers).  Errors: CLPHYS_ERR_IO on an MPI failure;
 * CLPHYS_ERR_OPENCL on every rank alike where a sum is not finite (a rank
 * whose device failed brought NaN: host/linalg's reduce_finish, or the
 * solve diverged).  what names the caller in the message. */
clphys_status cp_mpi_global_sum(MPI_Comm comm, clphys_context *ctx, double *sums, int n, const char *what);

/* Whether the ranks of comm stage through shared memory: *on is want's
 * minimum over the ranks, and 0 unless every rank of comm shares this host;
 * *ranks_here is this host's count of comm's ranks.  Collective.  Errors:
 * CLPHYS_ERR_IO on an MPI failure. */
clphys_status cp_mpi_one_host(MPI_Comm comm, clphys_context *ctx, int want, int *on, int *ranks_here);

/* Duplicate comm (clphys's messages never meet the caller's) with
 * MPI_ERRORS_RETURN, so that MPI failures come back as codes. */
clphys_status cp_mpi_dup(MPI_Comm comm, clphys_context *ctx, MPI_Comm *out);

/* ---- one non-blocking exchange overlapped with device work --------------
 * A slice is a contiguous piece of a message: count elements of type at buf. */
typedef struct {
    void *buf;
    int count;
    MPI_Datatype type;
} cp_mpi_slice;

/* What the waits below measured, summed over the exchanges of a call. */
typedef struct {
    double exchange_s; /* from posting each exchange to seeing it complete       */
    double exposed_s;  /* of that, the time waited with no device work running:
                          the exchange not hidden by kernels                     */
    int exchanges;
} cp_mpi_overlap;

/* Post one exchange: MPI_Irecv of the nrecv slices from `from` (tags tag,
 * tag + 1, ...), then MPI_Isend of the nsend slices to `to` (the same tags);
 * the requests are appended at req[*nreq] (room for nsend + nrecv).  When a
 * post fails (CLPHYS_ERR_IO, on a communicator with MPI_ERRORS_RETURN)
 * nothing of this call is left in flight and *nreq is unchanged: its sends
 * were completed (the receiver posts every receive before its sends, as
 * here) and its receives cancelled, or completed where the message had
 * arrived.  Requests that earlier calls appended stay the caller's to
 * complete, failure or not. */
clphys_status cp_mpi_post(clphys_context *ctx, MPI_Comm comm, int to, const cp_mpi_slice *send, int nsend, int from,
                          const cp_mpi_slice *recv, int nrecv, int tag, MPI_Request *req, int *nreq);
/* Wait for the nreq requests (posted at t_post, cp_now()) while device work
 * runs: MPI_Testall on every poll (it drives MPI's progress), busy(arg) asked
 * whether the device work is still running until it says no; after 50 us of
 * spinning each poll yields the core (sched_yield) or, with nap != 0 (for a
 * CPU device, whose threads need the cores), sleeps 20 us.  Adds to ov the
 * exchange's time and the part of it waited after the device work had
 * finished (all of it when busy is NULL).  Whatever it returns, none of the
 * nreq requests is left in flight (every one MPI_REQUEST_NULL): the caller
 * may free or reuse the buffers and return.  When busy fails it is not asked
 * again, the messages are still waited for, and busy's status is returned.
 * When MPI_Testall fails (CLPHYS_ERR_IO, on a communicator with
 * MPI_ERRORS_RETURN) the requests still active are waited for one by one,
 * receives included (not cancelled: the neighbour's matching send was
 * posted).  Either way the wait lasts until the neighbours' messages came,
 * as on success, and ov is left as it was. */
clphys_status cp_mpi_wait_overlapped(clphys_context *ctx, int nreq, MPI_Request *req, double t_post,
                                     clphys_status (*busy)(void *arg, int *running), void *arg, int nap,
                                     cp_mpi_overlap *ov);
/* The same with nothing to overlap: the whole wait is exposed; it naps
 * where ctx's device is a CPU (or ctx is NULL), else yields. */
clphys_status cp_mpi_wait_exposed(clphys_context *ctx, int nreq, MPI_Request *req, double t_post, cp_mpi_overlap *ov);

#endif
