/* nbody_schedule.h — who sends which j-blocks to whom, stage by stage, for
 * each exchange algorithm (clphys_nbody_gravity_exchange).  Shared by the MPI
 * exchanges (mpi.c), which run it, and the performance model
 * (model.c), which replays it in time; no MPI here. */
#ifndef CLPHYS_NBODY_GRAVITY_SCHEDULE_H
#define CLPHYS_NBODY_GRAVITY_SCHEDULE_H

#include "clphys_nbody.h"
#include "platform/platform.h"

/* Blocks lo, lo + 1, ..., lo + cnt - 1 (mod P): the particles of those ranks. */
typedef struct {
    int lo, cnt;
} nbody_sched_range;

/* One exchange: send the blocks `send` to rank `to` and receive the blocks
 * `recv` from rank `from` (to == from for the XOR pairs); the kernel of the
 * stage then works on `recv`. */
typedef struct {
    int to, from;
    nbody_sched_range send, recv;
} nbody_sched_stage;

typedef struct {
    clphys_nbody_gravity_exchange exchange; /* never AUTO: resolved */
    int group;                              /* HYBRID's G (DOUBLING with P a power of two: P; RING: 1) */
    int ranks, rank, nstages;
    int bruck;                /* DOUBLING with P not a power of two */
    nbody_sched_stage *stage; /* nstages; none for ALLGATHER */
} nbody_sched_schedule;

/* The schedule of `rank` among `ranks`.  group: HYBRID's G, 0 = the largest
 * power of two dividing P; must be a power of two dividing P (checked for
 * HYBRID only).  Errors: CLPHYS_ERR_INVALID_ARGUMENT (ranks < 1, rank out of
 * range, an unknown exchange, a bad group), CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status nbody_sched_build(clphys_context *ctx, clphys_nbody_gravity_exchange exchange, int group, int ranks,
                                int rank, nbody_sched_schedule *s);
void nbody_sched_free(nbody_sched_schedule *s);
/* A cyclic range as at most two contiguous ranges [lo[k], lo[k] + cnt[k]) of
 * ranks; returns how many (0 for an empty range). */
int nbody_sched_pieces(nbody_sched_range r, int ranks, int lo[2], int cnt[2]);

#endif
