/* tune.c — the stencil's variant and work-group shape per device and grid
 * (the entry is listed in platform/tune.h): the choice a plan makes at
 * creation through the one sequence of every path (cp_tune_choose: given,
 * else the tuning cache, else timed here and stored, else the heuristic),
 * and clphys_poisson_tune, which times the grid of `clphys bench`'s default
 * run so that its plans read the entry. */
#include "poisson_internal.h"
#include "platform/tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TUNE_REPS 5

/* A candidate: variant, work-group shape (0 x 0: the runtime's), its time. */
typedef struct {
    int v;
    size_t lx, ly;
    double s;
} stencil_cfg;

/* Median profiled time of one fp64 application at the plan's configuration,
 * after an untimed one; < 0 when it cannot be launched. */
static double time_config(clphys_poisson_plan *pl, cl_mem y, cl_mem x)
{
    double t[TUNE_REPS], warm = 0;
    if (poisson_stencil(pl, CLPHYS_FP64, y, x, &warm)) return -1;
    for (int i = 0; i < TUNE_REPS; i++) {
        t[i] = 0;
        if (poisson_stencil(pl, CLPHYS_FP64, y, x, &t[i])) return -1;
    }
    return cp_median(t, TUNE_REPS);
}

/* The heuristic, kept when tuning is off: the seed's column kernel on GPUs,
 * one work-item per cell on CPUs (PoCL vectorizes its straight-line body
 * across work-items); what the params give stays. */
static stencil_cfg heuristic(const clphys_poisson_plan *pl)
{
    const clphys_device_info *d = clphys_context_device(pl->ctx);
    const clphys_poisson_params *p = &pl->prm;
    stencil_cfg h = {p->variant  ? (int)p->variant
                     : d->is_gpu ? CLPHYS_POISSON_STENCIL_COLUMN
                                 : CLPHYS_POISSON_STENCIL_CELL,
                     p->local_size[0] ? (size_t)p->local_size[0]
                     : d->is_gpu      ? 32
                                      : 0,
                     p->local_size[0] ? (size_t)p->local_size[1]
                     : d->is_gpu      ? 4
                                      : 0,
                     -1};
    return h;
}

static void apply_cfg(clphys_poisson_plan *pl, const stencil_cfg *c)
{
    pl->variant = (clphys_poisson_stencil)c->v;
    pl->local[0] = c->lx, pl->local[1] = c->ly;
}

/* Candidates: every variant (unless one is given; column-vec when nx is a
 * multiple of 8) with, on GPUs, the work-group shapes a coalesced row of
 * 32..256 work-items along i can take; on CPUs the runtime's choice (PoCL's
 * work-group loops).  *best (best->s < 0 when none launched); *heur_s the
 * heuristic's time (< 0 when not among them); *count the candidates timed.
 * Leaves the plan at the last candidate. */
static clphys_status measure(clphys_poisson_plan *pl, stencil_cfg *best, double *heur_s, int *count)
{
    static const size_t gpu_shapes[][2] = {{32, 1}, {32, 2}, {32, 4},  {32, 8},  {64, 1},
                                           {64, 2}, {64, 4}, {128, 1}, {128, 2}, {256, 1}};
    static const size_t cpu_shapes[][2] = {{0, 0}};
    const clphys_device_info *d = clphys_context_device(pl->ctx);
    const size_t(*shapes)[2] = d->is_gpu ? gpu_shapes : cpu_shapes;
    const int nshape = d->is_gpu ? (int)(sizeof gpu_shapes / sizeof gpu_shapes[0]) : 1;
    const stencil_cfg h = heuristic(pl);
    cl_mem x = NULL, y = NULL;
    const size_t bytes = pl->n * sizeof(double);
    clphys_status st = cp_buffer(pl->ctx, CL_MEM_READ_WRITE, bytes, NULL, &x);
    if (!st) st = cp_buffer(pl->ctx, CL_MEM_READ_WRITE, bytes, NULL, &y);
    const double pat[2] = {0.75, -0.3125}; /* not zeros: zeros can run faster than data */
    if (!st) st = cp_fill(pl->ctx, x, pat, sizeof pat, bytes);
    best->s = *heur_s = -1;
    *count = 0;
    for (int v = CLPHYS_POISSON_STENCIL_COLUMN; v <= CLPHYS_POISSON_STENCIL_COLUMN_VEC && !st; v++) {
        if ((pl->prm.variant && (int)pl->prm.variant != v) || (v == CLPHYS_POISSON_STENCIL_COLUMN_VEC && pl->nx % 8))
            continue;
        for (int s = 0; s < nshape; s++) {
            if (pl->prm.local_size[0] &&
                (shapes[s][0] != (size_t)pl->prm.local_size[0] || shapes[s][1] != (size_t)pl->prm.local_size[1]))
                continue;
            if (shapes[s][0] * shapes[s][1] > d->max_work_group_size) continue;
            stencil_cfg c = {v, shapes[s][0], shapes[s][1], -1};
            apply_cfg(pl, &c);
            c.s = time_config(pl, y, x);
            ++*count;
            if (c.v == h.v && c.lx == h.lx && c.ly == h.ly) *heur_s = c.s;
            if (c.s > 0 && (best->s < 0 || c.s < best->s)) *best = c;
        }
    }
    cp_release_mem(&x);
    cp_release_mem(&y);
    return st;
}

/* The plan's cache key; fields[n] holds its FIELDS.  The candidates are
 * part of it: a library with another set of variants measures again. */
static cp_tune_key plan_key(const clphys_poisson_plan *pl, char *fields, size_t n)
{
    const clphys_poisson_params *p = &pl->prm;
    snprintf(fields, n, "candidates=column,cell,column-vec variant=%d local=%dx%d grid=%dx%dx%d", (int)p->variant,
             p->local_size[0], p->local_size[1], pl->nx, pl->ny, pl->nz);
    return (cp_tune_key){"poisson", "stencil", "fp64", fields};
}

static void cfg_value(const stencil_cfg *c, char *value, size_t n)
{
    snprintf(value, n, "variant=%d lx=%zu ly=%zu stencil_s=%.9g", c->v, c->lx, c->ly, c->s);
}

/* ---- the tuner -------------------------------------------------------------- */

clphys_status clphys_poisson_tune(clphys_context *ctx, const clphys_tune_options *opt)
{
    if (!ctx) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "poisson tune: NULL context");
    clphys_tune_options oin;
    CP_TRY(CP_PARAMS_IN(ctx, clphys_tune_options, opt, user, &oin));
    const clphys_tune_options *o = &oin;
    const clphys_device_info *d = clphys_context_device(ctx);
    if (!d->fp64) return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED, "poisson tune: the device has no fp64 (the CG is fp64)");
    const int quick = o && o->quick;
    /* one grid, that of `clphys bench`'s default run (quick: of --quick), a
     * flat box 4000 m deep; plans of other grids time their own at creation
     * (the entry is exact) */
    const int nx = quick ? 64 : 256, ny = nx, nz = quick ? 16 : 32;
    double *dx = malloc(sizeof(double) * (size_t)nx), *dy = malloc(sizeof(double) * (size_t)ny),
           *dz = malloc(sizeof(double) * (size_t)nz), *depth = malloc(sizeof(double) * (size_t)nx * (size_t)ny);
    clphys_status st =
        dx && dy && dz && depth ? CLPHYS_SUCCESS : cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson tune: the grid");
    for (int i = 0; !st && i < nx; i++) dx[i] = 1e6 / nx;
    for (int j = 0; !st && j < ny; j++) dy[j] = 1e6 / ny;
    if (!st) st = clphys_poisson_levels(nz, 4000, pow(22.0, 1.0 / (nz - 1)), dz);
    if (!st) st = clphys_poisson_box(nx, ny, 4000, depth);
    const double t0 = cp_now();
    char what[64];
    snprintf(what, sizeof what, "fp64 stencil %dx%dx%d", nx, ny, nz);
    cp_tune_step(o, "poisson", 1, 1, what);
    clphys_poisson_plan *pl = NULL;
    /* no_tune: the plan starts at the heuristic and neither reads nor
     * writes the cache; the timing below writes it */
    const clphys_poisson_params p = {.no_tune = 1};
    const clphys_poisson_geometry g = {.nx = nx, .ny = ny, .nz = nz, .dx = dx, .dy = dy, .dz = dz, .depth = depth};
    if (!st) st = clphys_poisson_plan_create(ctx, &g, &p, &pl);
    stencil_cfg best = {0, 0, 0, -1};
    double heur_s = -1;
    int count = 0;
    if (!st) st = measure(pl, &best, &heur_s, &count);
    if (!st && best.s > 0) {
        char fields[160], value[CP_TUNE_VALUE_MAX];
        const cp_tune_key key = plan_key(pl, fields, sizeof fields);
        cfg_value(&best, value, sizeof value);
        cp_tune_store(o, d, &key, value, best.s, heur_s > 0 ? heur_s : 0, count);
    }
    clphys_poisson_plan_destroy(pl);
    free(dx), free(dy), free(dz), free(depth);
    if (!st) cp_tune_mark(d, "poisson", quick, cp_now() - t0);
    return st;
}

/* ---- the plan's choice (cp_tune_choose's callbacks) --------------------- */

static clphys_status defaults_cb(void *user)
{
    clphys_poisson_plan *pl = user;
    const stencil_cfg h = heuristic(pl);
    apply_cfg(pl, &h);
    return CLPHYS_SUCCESS;
}

static int take_cb(void *user, const char *value)
{
    clphys_poisson_plan *pl = user;
    size_t v, lx, ly;
    if (!cp_tune_value_size(value, "variant", &v) || !cp_tune_value_size(value, "lx", &lx) ||
        !cp_tune_value_size(value, "ly", &ly) || v < CLPHYS_POISSON_STENCIL_COLUMN ||
        v > CLPHYS_POISSON_STENCIL_COLUMN_VEC || (v == CLPHYS_POISSON_STENCIL_COLUMN_VEC && pl->nx % 8) ||
        lx * ly > clphys_context_device(pl->ctx)->max_work_group_size)
        return 0;
    const stencil_cfg c = {(int)v, lx, ly, -1};
    apply_cfg(pl, &c);
    return 1;
}

static clphys_status measure_cb(void *user, char *value, size_t n)
{
    stencil_cfg best;
    double heur_s;
    int count;
    clphys_status st = measure(user, &best, &heur_s, &count);
    if (!st && best.s > 0) cfg_value(&best, value, n);
    return st;
}

clphys_status poisson_choose_stencil(clphys_poisson_plan *pl)
{
    const clphys_poisson_params *p = &pl->prm;
    if (p->variant == CLPHYS_POISSON_STENCIL_COLUMN_VEC && pl->nx % 8)
        return cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "poisson params: the column-vec stencil needs nx a multiple of 8 (nx = %d)", pl->nx);
    char fields[160];
    const cp_tune_plan t = {.key = plan_key(pl, fields, sizeof fields),
                            .given = p->variant && p->local_size[0],
                            .no_tune = p->no_tune,
                            .user = pl,
                            .defaults = defaults_cb,
                            .take = take_cb,
                            .measure = measure_cb};
    return cp_tune_choose(clphys_context_device(pl->ctx), &t, &pl->tune_source);
}
