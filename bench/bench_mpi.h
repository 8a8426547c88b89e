/* bench_mpi.h — what the distributed benchmarks (gravity_mpi, md_mpi,
 * dslash_mpi and solver_mpi, poisson_mpi) share: their start under a
 * launcher, how many ranks share one device and how many devices there
 * are, a barrier that sleeps (bench_mpi.c).  Their rows begin with
 * bench_scaling_row (scaling.h).  Built with MPI only. */
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

/* Distinct devices among the ranks: the keys of bench_mpi_sharing counted
 * once each (ranks on a CPU device that one host shares count as one).
 * Collective. */
int bench_mpi_devices(bench_run *run, MPI_Comm comm);

/* The start of a distributed benchmark `path`: under an MPI launcher, 1
 * with MPI_COMM_WORLD, this process's rank and the number of ranks; else
 * 0, after saying on stderr how to run it (the path then gives no rows). */
int bench_mpi_begin(const char *path, MPI_Comm *comm, int *rank, int *ranks);

/* A barrier the ranks wait in asleep (1 ms polls), so that the waiting
 * ranks leave the cores to one that works alone (rank 0's baseline, a
 * peer program): on a CPU device they would otherwise spin in MPI and
 * slow it.  Collective. */
void bench_mpi_quiet_barrier(MPI_Comm comm);

#endif
