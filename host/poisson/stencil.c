/* stencil.c — y = A x on the device (cl/poisson_stencil.cl), the stencil as
 * the CG's operator, and the choice of variant and work-group shape per
 * device: given, else the tuning cache (platform/tune.h), else timed at plan
 * creation and stored, else (tuning off) a heuristic by device type. */
#include "poisson_internal.h"
#include "platform/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static clphys_status launch(clphys_poisson_plan *pl, clphys_precision p, cl_mem y, cl_mem x, double *kernel_s,
                            cl_event *ev)
{
    const int cell = pl->variant == CLPHYS_POISSON_STENCIL_CELL, vec = pl->variant == CLPHYS_POISSON_STENCIL_COLUMN_VEC;
    cl_kernel k = pl->k_stencil[p][pl->variant - 1];
    cl_mem *a = p == CLPHYS_FP64 ? pl->a64 : pl->a32;
    CP_TRY(CP_ARGS(pl->ctx, k, y, x, a[0], a[1], a[2], a[3], pl->nx, pl->ny, pl->nz)); /* a[PN_NCOEF] */
    const int given = pl->local[0] > 0;
    const size_t local[3] = {pl->local[0], pl->local[1], 1};
    const size_t vw = vec ? (p == CLPHYS_FP64 ? 4 : 8) : 1;
    const size_t global[3] = {cp_round_up((size_t)pl->nx / vw, local[0]), cp_round_up((size_t)pl->ny, local[1]),
                              (size_t)pl->nz};
    if (ev) return cp_launch_ev(pl->ctx, k, cell ? 3 : 2, global, given ? local : NULL, ev);
    return cp_launch(pl->ctx, k, cell ? 3 : 2, global, given ? local : NULL, kernel_s);
}

clphys_status pn_stencil(clphys_poisson_plan *pl, clphys_precision p, cl_mem y, cl_mem x, double *kernel_s)
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
    pn_events_add(pl, 1, ev, ev);
    cp_release_event(&ev);
    return CLPHYS_SUCCESS;
}
static clphys_status apply64(void *u, cl_mem out, cl_mem in) { return apply_timed(u, CLPHYS_FP64, out, in); }
static clphys_status apply32(void *u, cl_mem out, cl_mem in) { return apply_timed(u, CLPHYS_FP32, out, in); }

void pn_stencil_operator(clphys_poisson_plan *pl, clphys_precision p, la_space *s, la_operator *op)
{
    memset(op, 0, sizeof *op);
    op->space = s;
    op->user = pl;
    op->apply = p == CLPHYS_FP64 ? apply64 : apply32;
}

/* ---- the choice ------------------------------------------------------------ */
#define TUNE_REPS 5

static double time_config(clphys_poisson_plan *pl, cl_mem y, cl_mem x)
{
    double t[TUNE_REPS], warm = 0;
    if (pn_stencil(pl, CLPHYS_FP64, y, x, &warm)) return -1;
    for (int i = 0; i < TUNE_REPS; i++) {
        t[i] = 0;
        if (pn_stencil(pl, CLPHYS_FP64, y, x, &t[i])) return -1;
    }
    for (int i = 1; i < TUNE_REPS; i++) /* insertion sort: 5 values */
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            double s = t[j];
            t[j] = t[j - 1], t[j - 1] = s;
        }
    return t[TUNE_REPS / 2];
}

/* Candidates: every variant (unless one is given; column-vec when nx is a
 * multiple of 8) with, on GPUs, the
 * work-group shapes a coalesced row of 32..256 work-items along i can take;
 * on CPUs the runtime's choice (PoCL's work-group loops). */
static clphys_status measure(clphys_poisson_plan *pl, int *best_v, size_t best[2], double *best_s)
{
    static const size_t gpu_shapes[][2] = {{32, 1}, {32, 2}, {32, 4}, {32, 8}, {64, 1}, {64, 2},
                                           {64, 4}, {128, 1}, {128, 2}, {256, 1}};
    static const size_t cpu_shapes[][2] = {{0, 0}};
    const clphys_device_info *d = clphys_context_device(pl->ctx);
    const size_t(*shapes)[2] = d->is_gpu ? gpu_shapes : cpu_shapes;
    const int nshape = d->is_gpu ? (int)(sizeof gpu_shapes / sizeof gpu_shapes[0]) : 1;
    cl_mem x = NULL, y = NULL;
    const size_t bytes = pl->n * sizeof(double);
    clphys_status st = cp_buffer(pl->ctx, CL_MEM_READ_WRITE, bytes, NULL, &x);
    if (!st) st = cp_buffer(pl->ctx, CL_MEM_READ_WRITE, bytes, NULL, &y);
    const double pat[2] = {0.75, -0.3125}; /* not zeros: zeros can run faster than data */
    if (!st) st = cp_fill(pl->ctx, x, pat, sizeof pat, bytes);
    *best_s = -1;
    for (int v = CLPHYS_POISSON_STENCIL_COLUMN; v <= CLPHYS_POISSON_STENCIL_COLUMN_VEC && !st; v++) {
        if ((pl->prm.variant && (int)pl->prm.variant != v) || (v == CLPHYS_POISSON_STENCIL_COLUMN_VEC && pl->nx % 8))
            continue;
        for (int s = 0; s < nshape; s++) {
            if (pl->prm.local_size[0] && (shapes[s][0] != (size_t)pl->prm.local_size[0] ||
                                          shapes[s][1] != (size_t)pl->prm.local_size[1]))
                continue;
            if (shapes[s][0] * shapes[s][1] > d->max_work_group_size) continue;
            pl->variant = (clphys_poisson_stencil)v;
            pl->local[0] = shapes[s][0], pl->local[1] = shapes[s][1];
            const double t = time_config(pl, y, x);
            if (t > 0 && (*best_s < 0 || t < *best_s)) {
                *best_s = t, *best_v = v;
                best[0] = shapes[s][0], best[1] = shapes[s][1];
            }
        }
    }
    cp_release_mem(&x);
    cp_release_mem(&y);
    return st;
}

clphys_status pn_choose_stencil(clphys_poisson_plan *pl)
{
    const clphys_device_info *d = clphys_context_device(pl->ctx);
    const clphys_poisson_params *p = &pl->prm;
    /* the heuristic, kept when tuning is off: the seed's column kernel on
     * GPUs, one work-item per cell on CPUs (PoCL vectorizes its straight-line
     * body across work-items) */
    if (p->variant == CLPHYS_POISSON_STENCIL_COLUMN_VEC && pl->nx % 8)
        return cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "poisson params: the column-vec stencil needs nx a multiple of 8 (nx = %d)", pl->nx);
    pl->variant = p->variant ? p->variant : d->is_gpu ? CLPHYS_POISSON_STENCIL_COLUMN : CLPHYS_POISSON_STENCIL_CELL;
    pl->local[0] = p->local_size[0] ? (size_t)p->local_size[0] : d->is_gpu ? 32 : 0;
    pl->local[1] = p->local_size[0] ? (size_t)p->local_size[1] : d->is_gpu ? 4 : 0;
    pl->tune_source = 1;
    if (p->variant && p->local_size[0]) {
        pl->tune_source = 0;
        return CLPHYS_SUCCESS;
    }
    const char *off = getenv("CLPHYS_NO_TUNE");
    if (p->no_tune || (off && *off && strcmp(off, "0"))) return CLPHYS_SUCCESS;
    char fields[160], value[CP_TUNE_VALUE_MAX];
    /* the candidates are part of the key: a library with another set of
     * variants measures again */
    snprintf(fields, sizeof fields, "candidates=column,cell,column-vec variant=%d local=%dx%d grid=%dx%dx%d",
             (int)p->variant, p->local_size[0], p->local_size[1], pl->nx, pl->ny, pl->nz);
    const cp_tune_key key = {"poisson", "stencil", "fp64", fields};
    size_t v, lx, ly;
    if (cp_tune_get(d, &key, value, sizeof value) && cp_tune_value_size(value, "variant", &v) &&
        cp_tune_value_size(value, "lx", &lx) && cp_tune_value_size(value, "ly", &ly) &&
        v >= CLPHYS_POISSON_STENCIL_COLUMN && v <= CLPHYS_POISSON_STENCIL_COLUMN_VEC &&
        (v != CLPHYS_POISSON_STENCIL_COLUMN_VEC || pl->nx % 8 == 0) && lx * ly <= d->max_work_group_size) {
        pl->variant = (clphys_poisson_stencil)v;
        pl->local[0] = lx, pl->local[1] = ly;
        pl->tune_source = 3;
        return CLPHYS_SUCCESS;
    }
    const clphys_poisson_stencil h = pl->variant;
    const size_t hl[2] = {pl->local[0], pl->local[1]};
    int bv = 0;
    size_t best[2] = {0, 0};
    double best_s;
    clphys_status st = measure(pl, &bv, best, &best_s);
    if (st || best_s < 0) { /* nothing launched: keep the heuristic */
        pl->variant = h, pl->local[0] = hl[0], pl->local[1] = hl[1];
        return st;
    }
    pl->variant = (clphys_poisson_stencil)bv;
    pl->local[0] = best[0], pl->local[1] = best[1];
    pl->tune_source = 2;
    snprintf(value, sizeof value, "variant=%d lx=%zu ly=%zu stencil_s=%.9g", bv, best[0], best[1], best_s);
    cp_tune_put(d, &key, value); /* a cache that cannot be written only costs the next measurement */
    return CLPHYS_SUCCESS;
}
