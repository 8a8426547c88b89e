/* bench_mpi.h — what the distributed benchmarks (gravity_mpi, md_mpi) share:
 * how many ranks share one device (bench_mpi.c).  Built with MPI only. */
#ifndef CLPHYS_BENCH_MPI_H
#define CLPHYS_BENCH_MPI_H

#include "bench.h"

#include <mpi.h>

/* Ranks per device k: the ranks whose host name, platform and device
 * index equal rank 0's (MPI_Allgather of a key), and gpus = ceil(P / k).
 * Ranks given one GPU each through CUDA_VISIBLE_DEVICES or
 * ROCR_VISIBLE_DEVICES see the same indices, so those variables are part
 * of the key; a CPU device counts as each rank's own (k = 1);
 * CLPHYS_BENCH_RANKS_PER_DEVICE sets k outright.  Collective. */
void bench_mpi_sharing(bench_run *run, MPI_Comm comm, int *k, int *gpus);

#endif
