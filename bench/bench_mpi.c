/* bench_mpi.c — see bench_mpi.h. */
#include "bench_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Every rank's device key (host name, platform and device index, device
 * name, the visible-device variables of a one-GPU-per-rank wrapper), KEY
 * bytes each, rank by rank; NULL when they cannot be gathered. */
enum { KEY = 320 };
static char *device_keys(bench_run *run, MPI_Comm comm, int P)
{
    char key[KEY], *all = malloc(KEY * (size_t)P);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    const char *cv = getenv("CUDA_VISIBLE_DEVICES"), *rv = getenv("ROCR_VISIBLE_DEVICES");
    memset(key, 0, sizeof key);
    snprintf(key, sizeof key, "%.200s|%d|%d|%.40s|%.30s|%.30s", host, run->dev->platform_index, run->dev->device_index,
             run->dev->name, cv ? cv : "", rv ? rv : "");
    if (all && MPI_Allgather(key, KEY, MPI_CHAR, all, KEY, MPI_CHAR, comm) != MPI_SUCCESS) {
        free(all);
        return NULL;
    }
    return all;
}

void bench_mpi_sharing(bench_run *run, MPI_Comm comm, int *k, int *gpus)
{
    int P = 1;
    MPI_Comm_size(comm, &P);
    char *all = device_keys(run, comm, P);
    *k = 1;
    if (all) {
        *k = 0;
        for (int r = 0; r < P; r++) *k += !strcmp(all + KEY * (size_t)r, all);
    }
    free(all);
    if (!run->dev->is_gpu) *k = 1;
    const char *force = getenv("CLPHYS_BENCH_RANKS_PER_DEVICE");
    if (force && atoi(force) > 0) *k = atoi(force);
    if (*k < 1) *k = 1;
    *gpus = (P + *k - 1) / *k;
}

int bench_mpi_devices(bench_run *run, MPI_Comm comm)
{
    int P = 1, n = 1;
    MPI_Comm_size(comm, &P);
    char *all = device_keys(run, comm, P);
    if (all) {
        n = 0;
        for (int r = 0; r < P; r++) {
            int seen = 0;
            for (int q = 0; q < r && !seen; q++) seen = !strcmp(all + KEY * (size_t)q, all + KEY * (size_t)r);
            n += !seen;
        }
    }
    free(all);
    return n > 0 ? n : 1;
}

int bench_mpi_begin(const char *path, MPI_Comm *comm, int *rank, int *ranks)
{
    int on = 0;
    MPI_Initialized(&on);
    if (!on) {
        fprintf(stderr, "  %s: not under an MPI launcher: run `mpirun -np P clphys bench --path %s` (no rows)\n", path,
                path);
        return 0;
    }
    *comm = MPI_COMM_WORLD;
    MPI_Comm_rank(*comm, rank);
    MPI_Comm_size(*comm, ranks);
    return 1;
}

void bench_mpi_quiet_barrier(MPI_Comm comm)
{
    MPI_Request rq;
    int done = 0;
    if (MPI_Ibarrier(comm, &rq) != MPI_SUCCESS) return;
    while (!done && MPI_Test(&rq, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS)
        if (!done) nanosleep(&(struct timespec){0, 1000000}, NULL);
}
