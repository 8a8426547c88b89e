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
#define CP_MPI(ctx, call)                                                     \
    do {                                                                      \
        int cp_m_ = (call);                                                   \
        if (cp_m_ != MPI_SUCCESS) return cp_mpi_error((ctx), cp_m_, #call);   \
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

#endif
