/* mpi.c — MPI plumbing shared by the distributed paths: error mapping, one
 * status agreed by all ranks, option agreement, the network probe, the
 * synchronisation probe over ranks, and one non-blocking exchange overlapped
 * with device work (with the time it was not hidden). */
#include "cp_mpi.h"
#include "cp_sync.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

clphys_status cp_mpi_error(clphys_context *ctx, int mpierr, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(mpierr, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "MPI error %d", mpierr);
    return cp_error(ctx, CLPHYS_ERR_IO, "%s failed: %s", what, msg);
}

clphys_status cp_mpi_global_sum(MPI_Comm comm, clphys_context *ctx, double *sums, int n, const char *what)
{
    const int e = MPI_Allreduce(MPI_IN_PLACE, sums, n, MPI_DOUBLE, MPI_SUM, comm);
    if (e != MPI_SUCCESS) return cp_mpi_error(ctx, e, "MPI_Allreduce of a reduction point");
    for (int i = 0; i < n; i++)
        if (!isfinite(sums[i]))
            return cp_error(ctx, CLPHYS_ERR_OPENCL,
                            "%s: a reduction over the ranks is not finite (a rank's device failed, or the solve "
                            "diverged)",
                            what);
    return CLPHYS_SUCCESS;
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
        if (!st && (e = MPI_Bcast(fig, 2, MPI_DOUBLE, 0, c)) != MPI_SUCCESS) st = cp_mpi_error(NULL, e, "MPI_Bcast");
    }
    if (!st && size > 1) {
        lim->latency_s = fig[0];
        /* with other load on the cores the 1-byte median can exceed the
         * large one's: then the large message's own time gives a lower
         * bound, not 0 */
        lim->bandwidth_bytes_per_s = fig[1] > fig[0] ? (double)bytes / (fig[1] - fig[0])
                                     : fig[1] > 0    ? (double)bytes / fig[1]
                                                     : 0;
    }
    free(buf);
    free(t);
    MPI_Comm_free(&c);
    return st;
}

clphys_status clphys_mpi_agree(MPI_Comm comm, clphys_context *ctx, clphys_status local)
{
    return cp_mpi_agree(comm, ctx, local);
}

clphys_status clphys_mpi_same(MPI_Comm comm, clphys_context *ctx, const void *buf, size_t bytes, const char *what)
{
    if ((!buf && bytes) || !what)
        return cp_mpi_agree(comm, ctx, cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_mpi_same: NULL argument"));
    return cp_mpi_same(comm, ctx, buf, bytes, what);
}

clphys_status cp_mpi_one_host(MPI_Comm comm, clphys_context *ctx, int want, int *on, int *ranks_here)
{
    int size = 0, rank = 0, nsize = 0;
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    CP_MPI(ctx, MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    *ranks_here = nsize;
    *on = want && nsize == size;
    CP_MPI(ctx, MPI_Allreduce(MPI_IN_PLACE, on, 1, MPI_INT, MPI_MIN, comm));
    return CLPHYS_SUCCESS;
}

clphys_status cp_mpi_dup(MPI_Comm comm, clphys_context *ctx, MPI_Comm *out)
{
    *out = MPI_COMM_NULL;
    CP_MPI(ctx, MPI_Comm_dup(comm, out));
    CP_MPI(ctx, MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN));
    return CLPHYS_SUCCESS;
}

/* ---- the synchronisation probe over ranks (platform/sync.c) -------------- */
static clphys_status sync_barrier(void *arg)
{
    CP_MPI(NULL, MPI_Barrier(*(MPI_Comm *)arg));
    return CLPHYS_SUCCESS;
}
static clphys_status sync_agree(void *arg, clphys_status local) { return cp_mpi_agree(*(MPI_Comm *)arg, NULL, local); }
static clphys_status sync_max(void *arg, double *v, int n)
{
    CP_MPI(NULL, MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, *(MPI_Comm *)arg));
    return CLPHYS_SUCCESS;
}

clphys_status clphys_mpi_measure_sync(MPI_Comm comm, clphys_context *const *ctxs, int n, int max_launches, int repeat,
                                      clphys_sync_cost *c)
{
    MPI_Comm dup;
    CP_TRY(cp_mpi_dup(comm, NULL, &dup));
    clphys_status st = CLPHYS_SUCCESS;
    if (!c || !ctxs || n < 1) st = cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "sync probe: NULL argument or n < 1");
    st = cp_mpi_agree(dup, NULL, st);
    if (!st) {
        cp_sync_hooks h = {sync_barrier, sync_agree, sync_max, &dup};
        st = cp_sync_measure(ctxs, n, max_launches, repeat, &h, c);
    }
    if (!st) {
        MPI_Comm_size(dup, &c->ranks);
        cp_sync_fit(c);
    }
    MPI_Comm_free(&dup);
    return st;
}

/* ---- one non-blocking exchange, overlapped with device work --------------- */

/* A post that failed part way leaves none of its requests in flight.  Its
 * sends are completed, not cancelled (MPI 4.1 deprecates cancelling a send,
 * and Open MPI's ob1 does not cancel one), while its receives are still
 * posted, so that a neighbour that failed at the same message completes its
 * sends too; then the receives are cancelled and completed (after
 * MPI_Cancel, MPI_Wait is local: either the whole message arrived or none of
 * it did, and it matches a later receive).  Errors here are dropped: the
 * post's own failure is the one reported. */
static void unpost(MPI_Request *req, int nrecv, int nsend)
{
    if (nsend) MPI_Waitall(nsend, req + nrecv, MPI_STATUSES_IGNORE);
    for (int i = 0; i < nrecv; i++) MPI_Cancel(&req[i]);
    if (nrecv) MPI_Waitall(nrecv, req, MPI_STATUSES_IGNORE);
}

clphys_status cp_mpi_post(clphys_context *ctx, MPI_Comm comm, int to, const cp_mpi_slice *send, int nsend, int from,
                          const cp_mpi_slice *recv, int nrecv, int tag, MPI_Request *req, int *nreq)
{
    MPI_Request *mine = req + *nreq;
    int nr = 0, ns = 0, e = MPI_SUCCESS;
    /* receives first, so that an eager send finds its buffer posted */
    for (int i = 0; i < nrecv && e == MPI_SUCCESS; i++)
        if ((e = MPI_Irecv(recv[i].buf, recv[i].count, recv[i].type, from, tag + i, comm, &mine[nr])) == MPI_SUCCESS)
            nr++;
    for (int i = 0; i < nsend && e == MPI_SUCCESS; i++)
        if ((e = MPI_Isend(send[i].buf, send[i].count, send[i].type, to, tag + i, comm, &mine[nr + ns])) == MPI_SUCCESS)
            ns++;
    if (e == MPI_SUCCESS) {
        *nreq += nr + ns;
        return CLPHYS_SUCCESS;
    }
    unpost(mine, nr, ns);
    char what[96];
    if (nr < nrecv)
        snprintf(what, sizeof what, "MPI_Irecv of message %d (tag %d) from rank %d", nr, tag + nr, from);
    else
        snprintf(what, sizeof what, "MPI_Isend of message %d (tag %d) to rank %d", ns, tag + ns, to);
    return cp_mpi_error(ctx, e, what);
}

/* Complete every request still active after MPI_Testall failed: with
 * MPI_ERR_IN_STATUS those that neither completed nor failed (MPI_ERR_PENDING)
 * stay active, the others are deallocated (MPI_REQUEST_NULL).  Receives are
 * waited for too, not cancelled: the neighbours posted their matching sends
 * (a post that failed completed its sends, cp_mpi_post), so a cancelled
 * receive would leave that message to the next receive of its tag, or its
 * sender waiting.  Each MPI_Wait returns only once its request is complete,
 * failed or not; errors here are dropped, the first one is reported. */
static void complete_all(int nreq, MPI_Request *req)
{
    for (int i = 0; i < nreq; i++)
        if (req[i] != MPI_REQUEST_NULL) MPI_Wait(&req[i], MPI_STATUS_IGNORE);
}

clphys_status cp_mpi_wait_overlapped(clphys_context *ctx, int nreq, MPI_Request *req, double t_post,
                                     clphys_status (*busy)(void *arg, int *running), void *arg, int nap,
                                     cp_mpi_overlap *ov)
{
    const double t_wait = cp_now();
    double t_idle = -1;                 /* when the device work was first seen finished */
    clphys_status dev = CLPHYS_SUCCESS; /* busy's failure, returned once the messages are complete */
    for (long polls = 0;; polls++) {
        int flag = 0;
        const int e = MPI_Testall(nreq, req, &flag, MPI_STATUSES_IGNORE);
        if (e != MPI_SUCCESS) {
            complete_all(nreq, req);
            return dev ? dev : cp_mpi_error(ctx, e, "MPI_Testall of the exchange");
        }
        const double t = cp_now();
        if (flag) {
            if (dev) return dev;
            ov->exchange_s += t - t_post;
            ov->exposed_s += t_idle < 0 ? 0 : t - t_idle;
            ov->exchanges++;
            return CLPHYS_SUCCESS;
        }
        if (t_idle < 0) {
            /* a failing busy is not asked again: the device counts as idle
             * and the messages are still waited for */
            int running = 0;
            if (busy && (dev = busy(arg, &running)) != CLPHYS_SUCCESS) running = 0;
            if (!running) t_idle = polls ? t : t_wait;
        }
        /* spin briefly (short messages), then leave the cores to the device
         * (PoCL) and to the other ranks of an oversubscribed node */
        if (t - t_wait > 50e-6) {
            if (nap) {
                struct timespec ts = {0, 20000};
                nanosleep(&ts, NULL);
            } else {
                sched_yield();
            }
        }
    }
}

clphys_status cp_mpi_wait_exposed(clphys_context *ctx, int nreq, MPI_Request *req, double t_post, cp_mpi_overlap *ov)
{
    /* a CPU device's threads need the cores the poll would spin on */
    const int nap = !ctx || ctx->info.is_cpu;
    return cp_mpi_wait_overlapped(ctx, nreq, req, t_post, NULL, NULL, nap, ov);
}
