/*
 * clphys_nbody_mpi.h — direct-sum gravity and the N-body driver over MPI
 * ranks.  Includes mpi.h (through clphys_mpi.h, whose conventions hold here:
 * the caller's communicator, duplicated; every collective call returns the
 * same status on every rank, the failing rank named in the message).  Built
 * when meson finds MPI; clphys.h does not include it.
 *
 * Each rank owns a block of particles (x[4*n] = (x, y, z, m), doubles, any
 * n >= 0, blocks in rank order) and gets the acceleration and potential of
 * its own particles from all particles of all ranks, as clphys_nbody.h
 * defines them (G, eps, self term removed).  The j-blocks travel between the
 * ranks by one of the exchange algorithms of clphys_nbody.h (ring,
 * doubling, hybrid, allgather: Miki, Takahashi & Mori, sec. 4) while each
 * rank's devices compute the block in hand on two command queues
 * (clphys_nbody_gravity_multi).  Positions travel in the plan's precision (real4:
 * 16 bytes a particle in fp32, 32 in fp64).  The result equals the
 * single-device one up to the order of summation: each received block is
 * one kernel call, the calls are summed per queue and the queues on the host.
 */
#ifndef CLPHYS_NBODY_MPI_H
#define CLPHYS_NBODY_MPI_H

#include "clphys_nbody.h"
#include "clphys_mpi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct clphys_nbody_gravity_mpi clphys_nbody_gravity_mpi;

/* A distributed plan on comm (duplicated) over this rank's ndev devices
 * (ctxs, as clphys_nbody_gravity_multi_create with two queues each; ndev may differ
 * between ranks).  exchange: the algorithm (AUTO = HYBRID); group: HYBRID's
 * G, ranks per accumulation group, a power of two dividing the number of
 * ranks, 0 = the largest such (ignored by the other algorithms).  p,
 * exchange and group must be the same on every rank.  Collective.  Errors,
 * the same on every rank (the message names the failing rank):
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL, ndev < 1, a bad group, an unknown
 * exchange, p, exchange or group differing between ranks, and those of
 * clphys_nbody_gravity_plan_create), those of clphys_nbody_gravity_multi_create,
 * CLPHYS_ERR_IO (an MPI call failed). */
clphys_status clphys_nbody_gravity_mpi_create(MPI_Comm comm, clphys_context *const *ctxs, int ndev,
                                              const clphys_nbody_gravity_params *p,
                                              clphys_nbody_gravity_exchange exchange, int group,
                                              clphys_nbody_gravity_mpi **plan);
/* Release the plan (not collective); accepts NULL. */
void clphys_nbody_gravity_mpi_destroy(clphys_nbody_gravity_mpi *plan);
/* The exchange actually used (AUTO resolved) and HYBRID's group (1 for RING,
 * P for DOUBLING with P a power of two, 0 for DOUBLING otherwise and for
 * ALLGATHER); returns the kernel variant of this rank's first device.  ""
 * for NULL. */
const char *clphys_nbody_gravity_mpi_info(const clphys_nbody_gravity_mpi *plan, clphys_nbody_gravity_exchange *exchange,
                                          int *group);

/* One force calculation: this rank's n particles x[4*n] (n may be 0; the
 * total over ranks at most 2^31 - 1) in, acc[3*n] and pot[n] (may be NULL;
 * needs p.potential) of the same particles out, overwritten.  The call is
 * collective and waits for its result; timing (may be NULL) receives this
 * rank's split: kernels, exchanges and the part of them not hidden by the
 * kernels (clphys_nbody_gravity_timing).  Errors, the same on every rank:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL arrays with n > 0, a count too large,
 * pot without p.potential), CLPHYS_ERR_INPUT (a NaN/inf coordinate or mass,
 * a negative mass; the message names the rank and its particle),
 * CLPHYS_ERR_OUT_OF_MEMORY, CLPHYS_ERR_OPENCL (a device failed: the
 * exchanges still complete on every rank, then all report it),
 * CLPHYS_ERR_IO (an MPI call failed). */
clphys_status clphys_nbody_gravity_mpi_compute(clphys_nbody_gravity_mpi *plan, size_t n, const double *x, double *acc,
                                               double *pot, clphys_nbody_gravity_timing *timing);

/* ---- The N-body driver over ranks (clphys_nbody_system of clphys_nbody.h) */
/* Split root's system *all (read on root only) into blocks in particle
 * order: rank r gets N/P particles, one more when r < N mod P (so a rank has
 * none when N < P).  *local is overwritten (not freed first) with arrays the
 * call allocates; on failure it is left empty.  Collective.  Errors (every rank): CLPHYS_ERR_INVALID_ARGUMENT
 * (local NULL, all NULL on root, root out of range), CLPHYS_ERR_OUT_OF_MEMORY,
 * CLPHYS_ERR_IO (MPI). */
clphys_status clphys_nbody_mpi_scatter(MPI_Comm comm, int root, const clphys_nbody_system *all,
                                       clphys_nbody_system *local);
/* The reverse: every rank's *local, in rank order, into *all on root
 * (overwritten, allocated by the call; untouched elsewhere, may be NULL
 * there).  Collective.  Errors (every rank): CLPHYS_ERR_INVALID_ARGUMENT,
 * CLPHYS_ERR_OUT_OF_MEMORY, CLPHYS_ERR_IO. */
clphys_status clphys_nbody_mpi_gather(MPI_Comm comm, int root, const clphys_nbody_system *local,
                                      clphys_nbody_system *all);
/* clphys_nbody_energy_of over the ranks: each rank's sums of K, W and the
 * momentum vector are reduced (MPI_Allreduce) and every rank gets the same
 * *e.  Collective.  Errors (every rank): CLPHYS_ERR_INVALID_ARGUMENT (NULL
 * with n > 0, e NULL), CLPHYS_ERR_IO. */
clphys_status clphys_nbody_mpi_energy(MPI_Comm comm, const clphys_nbody_system *local, const double *pot,
                                      clphys_nbody_energy *e);

#ifdef __cplusplus
}
#endif

#ifndef CLPHYS_NO_DEPRECATED
#include "clphys_deprecated.h" /* the old names, one release (docs/naming.md) */
#endif
#endif /* CLPHYS_NBODY_MPI_H */
