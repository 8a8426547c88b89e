/* mpi.c — MPI plumbing shared by the distributed paths: error mapping, one
 * status agreed by all ranks, option agreement, the network probe. */
#include "cp_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

clphys_status cp_mpi_error(clphys_context *ctx, int mpierr, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(mpierr, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "MPI error %d", mpierr);
    return cp_error(ctx, CLPHYS_ERR_IO, "%s failed: %s", what, msg);
}

clphys_status cp_mpi_agree(MPI_Comm comm, clphys_context *ctx, clphys_status local)
{
    int rank, size;
    CP_MPI(ctx, MPI_Comm_rank(comm, &rank));
    CP_MPI(ctx, MPI_Comm_size(comm, &size));
    /* the lowest failing rank, or size when none failed */
    int mine = local != CLPHYS_SUCCESS ? rank : size, first;
    CP_MPI(ctx, MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
    if (first == size) return CLPHYS_SUCCESS;
    int code = (int)local;
    char msg[1024] = "";
    if (rank == first) snprintf(msg, sizeof msg, "%s", clphys_last_error(ctx));
    CP_MPI(ctx, MPI_Bcast(&code, 1, MPI_INT, first, comm));
    CP_MPI(ctx, MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, comm));
    if (rank == first) return local;
    return cp_error(ctx, (clphys_status)code, "rank %d: %s", first, msg);
}

/* FNV-1a: equal blobs give equal hashes; a differing one is caught with
 * probability 1 - 2^-64 (the length is compared as well). */
static unsigned long long hash64(const void *buf, size_t n)
{
    const unsigned char *p = buf;
    unsigned long long h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

clphys_status cp_mpi_same(MPI_Comm comm, clphys_context *ctx, const void *buf, size_t bytes, const char *what)
{
    unsigned long long mine[2] = {hash64(buf, bytes), (unsigned long long)bytes}, root[2] = {mine[0], mine[1]};
    CP_MPI(ctx, MPI_Bcast(root, 2, MPI_UNSIGNED_LONG_LONG, 0, comm));
    int rank, size;
    CP_MPI(ctx, MPI_Comm_rank(comm, &rank));
    CP_MPI(ctx, MPI_Comm_size(comm, &size));
    int differ = (mine[0] != root[0] || mine[1] != root[1]) ? rank : size, first;
    CP_MPI(ctx, MPI_Allreduce(&differ, &first, 1, MPI_INT, MPI_MIN, comm));
    if (first == size) return CLPHYS_SUCCESS;
    return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "%s differ between ranks (rank %d differs from rank 0)", what,
                    first);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of the half round trips of `repeat` ping-pongs of n bytes between
 * ranks 0 and last; the others only take part in the barriers. */
static int pingpong(MPI_Comm comm, int rank, int last, char *buf, int n, int repeat, double *t, double *half)
{
    int e = MPI_SUCCESS;
    for (int r = -1; r < repeat && e == MPI_SUCCESS; r++) { /* r = -1: warm-up */
        e = MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        if (e == MPI_SUCCESS && rank == 0) {
            e = MPI_Send(buf, n, MPI_CHAR, last, 7, comm);
            if (e == MPI_SUCCESS) e = MPI_Recv(buf, n, MPI_CHAR, last, 7, comm, MPI_STATUS_IGNORE);
        } else if (e == MPI_SUCCESS && rank == last) {
            e = MPI_Recv(buf, n, MPI_CHAR, 0, 7, comm, MPI_STATUS_IGNORE);
            if (e == MPI_SUCCESS) e = MPI_Send(buf, n, MPI_CHAR, 0, 7, comm);
        }
        if (r >= 0) t[r] = 0.5 * (MPI_Wtime() - t0);
    }
    if (e == MPI_SUCCESS && rank == 0) {
        qsort(t, (size_t)repeat, sizeof *t, cmp_double);
        *half = repeat % 2 ? t[repeat / 2] : 0.5 * (t[repeat / 2 - 1] + t[repeat / 2]);
    }
    return e;
}

clphys_status clphys_mpi_measure_network(MPI_Comm comm, long long bytes, int repeat, clphys_network_limits *lim)
{
    if (!lim) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_mpi_measure_network: lim is NULL");
    memset(lim, 0, sizeof *lim);
    if (bytes <= 0) bytes = 4 << 20;
    if (bytes > (1LL << 30)) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "network probe: bytes above 1 GiB");
    if (repeat <= 0) repeat = 20;
    MPI_Comm c;
    CP_MPI(NULL, MPI_Comm_dup(comm, &c));
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int rank = 0, size = 1;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    lim->bytes = (size_t)bytes;
    lim->repeat = repeat;
    lim->ranks = size;
    char *buf = calloc((size_t)bytes, 1);
    double *t = malloc((size_t)repeat * sizeof *t);
    clphys_status st = (buf && t) ? CLPHYS_SUCCESS : cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "network probe buffers");
    st = cp_mpi_agree(c, NULL, st);
    double fig[2] = {0, 0}; /* latency, half round trip of `bytes` */
    if (!st && size > 1) {
        int e = pingpong(c, rank, size - 1, buf, 1, repeat, t, &fig[0]);
        if (e == MPI_SUCCESS) e = pingpong(c, rank, size - 1, buf, (int)bytes, repeat, t, &fig[1]);
        if (e != MPI_SUCCESS) st = cp_mpi_error(NULL, e, "network probe ping-pong");
        st = cp_mpi_agree(c, NULL, st);
        if (!st && (e = MPI_Bcast(fig, 2, MPI_DOUBLE, 0, c)) != MPI_SUCCESS)
            st = cp_mpi_error(NULL, e, "MPI_Bcast");
    }
    if (!st && size > 1) {
        lim->latency_s = fig[0];
        lim->bandwidth_bytes_per_s = fig[1] > fig[0] ? (double)bytes / (fig[1] - fig[0]) : 0;
    }
    free(buf);
    free(t);
    MPI_Comm_free(&c);
    return st;
}
