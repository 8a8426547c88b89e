/* every_plan.h — every plan of every path that the library can make on a
 * device: each variant and precision, the linear-algebra spaces and the
 * limit probes.  Made once, on a context, it leaves in that context every
 * program (file and options) the host would build for the device as
 * described by clphys_context_device(ctx); cp_program_at lists them.
 *
 * Used by tests/test_capability.c (each program compiled again by clang with
 * only the checked extensions) and tests/gpu_programs.c (the same list for
 * AMD and Intel GPU descriptions, compiled by the vendors' compilers,
 * scripts/gpu_targets.py, which adds the plans only a split problem makes:
 * ep_make_multi_plans, ep_make_mpi_plans).  A new path adds its plans to
 * ep_make_every_plan, and those of its distributed plans to the others. */
#ifndef CLPHYS_TEST_EVERY_PLAN_H
#define CLPHYS_TEST_EVERY_PLAN_H

#include "clphys.h"
#include <stdint.h>

/* Called with the status of every plan made (or of the call that made its
 * input); `what` names the plan ("gravity plan 3", "md plan, lj half fp64"). */
typedef void (*ep_check_fn)(void *user, clphys_context *ctx, clphys_status st, const char *what);

/* Make (and destroy) every plan on ctx; seed draws the random inputs
 * (FCC lattice velocities, hot gauge field).  run: 1 also runs two MD steps
 * and two CG iterations of each plan (what runs is checked too), 0 only
 * makes the plans (every program is built at plan creation, so the list is
 * the same: scripts/gpu_targets.py, which needs only the list). */
void ep_make_every_plan(clphys_context *ctx, uint64_t seed, int run, ep_check_fn check, void *user);

/* The plans over several devices of one process (every_plan_dist.c): the
 * Wilson-Dirac plans of a 2x2x2x2 grid (every direction's face kernels),
 * the gravity multi-device plan; ctx stands for every device. */
void ep_make_multi_plans(clphys_context *ctx, uint64_t seed, ep_check_fn check, void *user);

#ifdef CLPHYS_HAVE_MPI
#include "clphys_mpi.h"
/* The plans over the ranks of comm (every_plan_mpi.c; collective): the
 * lattice split along t, MD cut along x, the Poisson grid over the ranks,
 * gravity's ring; ctx is this rank's device. */
void ep_make_mpi_plans(MPI_Comm comm, clphys_context *ctx, uint64_t seed, ep_check_fn check, void *user);
#endif

#endif
