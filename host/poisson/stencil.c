/* stencil.c — y = A x on the device (cl/poisson_stencil.cl) and the stencil
 * as the CG's operator; the choice of its variant and work-group shape is
 * host/poisson/tune.c. */
#include "poisson_internal.h"

#include <string.h>

static clphys_status launch(clphys_poisson_plan *pl, clphys_precision p, cl_mem y, cl_mem x, double *kernel_s,
                            cl_event *ev)
{
    const int cell = pl->variant == CLPHYS_POISSON_STENCIL_CELL, vec = pl->variant == CLPHYS_POISSON_STENCIL_COLUMN_VEC;
    cl_kernel k = pl->k_stencil[p][pl->variant - 1];
    cl_mem *a = p == CLPHYS_FP64 ? pl->a64 : pl->a32;
    CP_TRY(CP_ARGS(pl->ctx, k, y, x, a[0], a[1], a[2], a[3], pl->nx, pl->ny, pl->nz)); /* a[POISSON_NCOEF] */
    const int given = pl->local[0] > 0;
    const size_t local[3] = {pl->local[0], pl->local[1], 1};
    const size_t vw = vec ? (p == CLPHYS_FP64 ? 4 : 8) : 1;
    const size_t global[3] = {cp_round_up((size_t)pl->nx / vw, local[0]), cp_round_up((size_t)pl->ny, local[1]),
                              (size_t)pl->nz};
    if (ev) return cp_launch_ev(pl->ctx, k, cell ? 3 : 2, global, given ? local : NULL, ev);
    return cp_launch(pl->ctx, k, cell ? 3 : 2, global, given ? local : NULL, kernel_s);
}

clphys_status poisson_stencil(clphys_poisson_plan *pl, clphys_precision p, cl_mem y, cl_mem x, double *kernel_s)
{
    return launch(pl, p, y, x, kernel_s, NULL);
}

/* the CG's operator: one launch, timed by its own event when the plan
 * splits the solve's time */
static clphys_status apply_timed(clphys_poisson_plan *pl, clphys_precision p, cl_mem out, cl_mem in)
{
    if (!pl->timing) return launch(pl, p, out, in, NULL, NULL);
    cl_event ev = NULL;
    CP_TRY(launch(pl, p, out, in, NULL, &ev));
    poisson_events_add(pl, 1, ev, ev);
    cp_release_event(&ev);
    return CLPHYS_SUCCESS;
}
static clphys_status apply64(void *u, cl_mem out, cl_mem in) { return apply_timed(u, CLPHYS_FP64, out, in); }
static clphys_status apply32(void *u, cl_mem out, cl_mem in) { return apply_timed(u, CLPHYS_FP32, out, in); }

void poisson_stencil_operator(clphys_poisson_plan *pl, clphys_precision p, la_space *s, la_operator *op)
{
    memset(op, 0, sizeof *op);
    op->space = s;
    op->user = pl;
    op->apply = p == CLPHYS_FP64 ? apply64 : apply32;
}
