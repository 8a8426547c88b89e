/* bench_mpi.c — see bench_mpi.h. */
#include "bench_mpi.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void bench_mpi_sharing(bench_run *run, MPI_Comm comm, int *k, int *gpus)
{
    int P = 1;
    MPI_Comm_size(comm, &P);
    char key[320], *all = malloc(320 * (size_t)P);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    const char *cv = getenv("CUDA_VISIBLE_DEVICES"), *rv = getenv("ROCR_VISIBLE_DEVICES");
    snprintf(key, sizeof key, "%.200s|%d|%d|%.40s|%.30s|%.30s", host, run->dev->platform_index, run->dev->device_index,
             run->dev->name, cv ? cv : "", rv ? rv : "");
    *k = 1;
    if (all && MPI_Allgather(key, 320, MPI_CHAR, all, 320, MPI_CHAR, comm) == MPI_SUCCESS) {
        *k = 0;
        for (int r = 0; r < P; r++) *k += !strcmp(all + 320 * (size_t)r, all);
    }
    free(all);
    if (!run->dev->is_gpu) *k = 1;
    const char *force = getenv("CLPHYS_BENCH_RANKS_PER_DEVICE");
    if (force && atoi(force) > 0) *k = atoi(force);
    if (*k < 1) *k = 1;
    *gpus = (P + *k - 1) / *k;
}
