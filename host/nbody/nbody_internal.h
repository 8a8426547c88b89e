/* nbody_internal.h — what the gravity path's own files share beyond the
 * public API: a kernel launch that hands out its events (gravity.c), used by
 * the multi-device engine (multi.c) to overlap kernels, transfers and
 * MPI exchanges and to time them. */
#ifndef CLPHYS_NBODY_GRAVITY_INTERNAL_H
#define CLPHYS_NBODY_GRAVITY_INTERNAL_H

#include "clphys_nbody.h"
#include "platform/platform.h"

/* clphys_nbody_gravity_compute_cl without waiting: enqueues on the plan's context's
 * queue and, when ev is non-NULL, sets ev[0] to the first launch's event and
 * ev[1] to the last one's (NULL when there was one launch; both NULL when
 * ni = 0 and nothing ran); the caller releases them.  The plan's scratch
 * buffers (j split, SoA copy) are in use until ev[1] (else ev[0]) completes:
 * one plan per queue when calls overlap. */
clphys_status nbody_gravity_launch(clphys_nbody_gravity_plan *pl, cl_mem xi, size_t ni, cl_mem xj, size_t nj,
                                   int i_in_j, cl_mem out, int accumulate, cl_event *ev);

/* The input checks of clphys_nbody_gravity_compute: finite coordinates and masses,
 * no negative mass (messages name the set and the particle); with coincident
 * != 0 also no two particles of x at one point and no particle of xi[4*ni]
 * (may be NULL) at the point of one of x.  Errors: CLPHYS_ERR_INPUT,
 * CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status nbody_gravity_check_positions(clphys_context *ctx, const char *set, int n, const double *x,
                                            int coincident, int ni, const double *xi);

/* Make *plan by create() with the kernel shape chosen as every path
 * chooses (cp_tune_choose): the params' when they give any of variant,
 * i_per_item, work_group, unroll, j_split; else the tuning cache's entry of
 * p's precision nearest to p->n_hint (0: the largest size tuned), when a
 * plan of it can be made here; else the heuristic (create() with p).
 * *source where it came from (host/nbody/tune.c). */
clphys_status nbody_gravity_choose(clphys_context *ctx, const clphys_nbody_gravity_params *p,
                                   clphys_status (*create)(clphys_context *, const clphys_nbody_gravity_params *,
                                                           clphys_nbody_gravity_plan **),
                                   clphys_nbody_gravity_plan **plan, clphys_tune_source *source);

#endif
