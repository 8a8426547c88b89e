/* tune.c — the gravity kernel's shape chosen by measurement per device (the
 * entries are listed in platform/tune.h): tiled or vector, and the tiled
 * kernel's i-particles per work-item, unroll, work group and j split, by
 * precision and size.  The choice plans make (nbody_gravity_choose: given, else
 * the tuning cache, else the heuristic; cp_tune_choose) and the measuring
 * of clphys_nbody_gravity_tune. */
#include "nbody_internal.h"
#include "platform/tune.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TUNER "tuner=2"

static const char *prec_name(clphys_precision p) { return p == CLPHYS_FP64 ? "fp64" : "fp32"; }

typedef struct {
    clphys_context *ctx;
    const clphys_nbody_gravity_params *p;
    clphys_status (*create)(clphys_context *, const clphys_nbody_gravity_params *, clphys_nbody_gravity_plan **);
    clphys_nbody_gravity_plan **plan;
} choice;

static clphys_status defaults_cb(void *user)
{
    choice *c = user;
    return c->create(c->ctx, c->p, c->plan);
}

/* A cached shape: the params with it, and a plan of them (a shape this
 * device cannot build or run is refused). */
static int take_cb(void *user, const char *value)
{
    choice *c = user;
    const clphys_device_info *d = clphys_context_device(c->ctx);
    clphys_nbody_gravity_params q = *c->p;
    char v[16];
    long ipw, wg, un, js;
    if (!cp_tune_value_word(value, "variant", v, sizeof v)) return 0;
    if (!strcmp(v, "vector")) {
        q.variant = CLPHYS_NBODY_GRAVITY_VECTOR;
    } else {
        if (strcmp(v, "tiled") || !cp_tune_value_int(value, "i_per_item", &ipw) ||
            !cp_tune_value_int(value, "work_group", &wg) || !cp_tune_value_int(value, "unroll", &un) ||
            !cp_tune_value_int(value, "j_split", &js) || (ipw != 1 && ipw != 2 && ipw != 4 && ipw != 8) || wg < 1 ||
            (size_t)wg > d->max_work_group_size || un < 1 || un > wg || js < 0 || js > 64)
            return 0;
        q.variant = CLPHYS_NBODY_GRAVITY_TILED;
        q.i_per_item = (int)ipw, q.work_group = (int)wg, q.unroll = (int)un, q.j_split = (int)js;
    }
    return c->create(c->ctx, &q, c->plan) == CLPHYS_SUCCESS;
}

clphys_status nbody_gravity_choose(clphys_context *ctx, const clphys_nbody_gravity_params *p,
                                   clphys_status (*create)(clphys_context *, const clphys_nbody_gravity_params *,
                                                           clphys_nbody_gravity_plan **),
                                   clphys_nbody_gravity_plan **plan, clphys_tune_source *source)
{
    choice c = {ctx, p, create, plan};
    /* no hint: the largest size tuned (nearest to a size beyond any) */
    const cp_tune_axis ax = {"n", p->n_hint ? (double)p->n_hint : 1e15, 0};
    const cp_tune_plan t = {.key = {"nbody_gravity", "shape", prec_name(p->precision), TUNER},
                            .axes = &ax,
                            .naxes = 1,
                            .given = p->variant != CLPHYS_NBODY_GRAVITY_AUTO || p->i_per_item || p->work_group ||
                                     p->unroll || p->j_split,
                            .user = &c,
                            .defaults = defaults_cb,
                            .take = take_cb};
    return cp_tune_choose(clphys_context_device(ctx), &t, source);
}

/* ---- measuring ------------------------------------------------------------ */

typedef struct {
    clphys_context *ctx;
    const clphys_tune_options *o;
    clphys_precision prec;
    int n, rep;
    double *x, *acc, *ref;
    int have_ref;
} grav_case;

/* A candidate: variant, i per item, work group, unroll, j split (all explicit). */
typedef struct {
    clphys_nbody_gravity_variant v;
    int ipw, wg, unroll, js;
} grav_cfg;

/* max_i |a_i - r_i| / rms_i |r_i| */
static double acc_error(int n, const double *a, const double *r)
{
    double rms = 0, m = 0;
    for (size_t k = 0; k < 3 * (size_t)n; k++) rms += r[k] * r[k];
    rms = sqrt(rms / n);
    for (int i = 0; i < n; i++) {
        double d = 0;
        for (int c = 0; c < 3; c++) d += (a[3 * i + c] - r[3 * i + c]) * (a[3 * i + c] - r[3 * i + c]);
        d = sqrt(d) / rms;
        if (!(d <= m)) m = isnan(d) ? INFINITY : d;
    }
    return m;
}

/* Median kernel seconds of one call of candidate g; < 0 when it cannot run
 * here or its accelerations disagree with the first candidate's. */
static double grav_time(grav_case *c, const grav_cfg *g)
{
    clphys_nbody_gravity_params p = {.precision = c->prec,
                                     .variant = g->v,
                                     .G = 1,
                                     .eps = 0.01,
                                     .i_per_item = g->ipw,
                                     .work_group = g->wg,
                                     .unroll = g->unroll,
                                     .j_split = g->js};
    clphys_nbody_gravity_plan *pl = NULL;
    double t[16];
    const int rep = c->rep < 16 ? c->rep : 16;
    clphys_status st = clphys_nbody_gravity_plan_create(c->ctx, &p, &pl);
    if (!st) st = clphys_nbody_gravity_compute(pl, (size_t)c->n, NULL, (size_t)c->n, c->x, c->acc, NULL, 0, 0, NULL);
    for (int r = 0; r < rep && !st; r++)
        st = clphys_nbody_gravity_compute(pl, (size_t)c->n, NULL, (size_t)c->n, c->x, c->acc, NULL, 0, 0, &t[r]);
    clphys_nbody_gravity_plan_destroy(pl);
    if (st) return -1;
    if (!c->have_ref) {
        memcpy(c->ref, c->acc, 3 * (size_t)c->n * sizeof *c->acc);
        c->have_ref = 1;
    } else if (!(acc_error(c->n, c->acc, c->ref) <= (c->prec == CLPHYS_FP64 ? 1e-9 : 1e-4))) {
        return -1;
    }
    return cp_median(t, rep);
}

static void try_cfg(grav_case *c, const grav_cfg *g, grav_cfg *best, double *best_s, int *count)
{
    const double s = grav_time(c, g);
    (*count)++;
    if (s > 0 && (*best_s <= 0 || s < *best_s)) *best = *g, *best_s = s;
}

/* One size: the heuristic's shape first (the reference and the untuned
 * time), then on GPUs a coordinate search over i per item, unroll, work
 * group and j split; on CPUs the vector kernel against two tiled shapes. */
static clphys_status tune_size(grav_case *c, int quick)
{
    const clphys_device_info *d = clphys_context_device(c->ctx);
    const int fp32 = c->prec == CLPHYS_FP32;
    grav_cfg best = {0}, g;
    double best_s = -1;
    int count = 0;
    int wg0 = 256;
    while ((size_t)wg0 > d->max_work_group_size) wg0 /= 2;
    /* the heuristic of create_plan (gravity.c) made explicit */
    const grav_cfg h = d->is_cpu ? (grav_cfg){CLPHYS_NBODY_GRAVITY_VECTOR, 0, 0, 0, 0}
                                 : (grav_cfg){CLPHYS_NBODY_GRAVITY_TILED, fp32 ? 8 : 1, wg0, fp32 ? 16 : 32, 0};
    try_cfg(c, &h, &best, &best_s, &count);
    const double untuned = best_s;
    if (best_s <= 0)
        return cp_error(c->ctx, CLPHYS_ERR_VERIFY, "gravity tune: the default shape did not run (%s n=%d): %s",
                        prec_name(c->prec), c->n, clphys_last_error(c->ctx));
    if (d->is_cpu) {
        const int wg = wg0 < 64 ? wg0 : 64;
        g = (grav_cfg){CLPHYS_NBODY_GRAVITY_TILED, 1, wg, 8, 0};
        try_cfg(c, &g, &best, &best_s, &count);
        if (!quick) {
            g.ipw = 4;
            try_cfg(c, &g, &best, &best_s, &count);
        }
    } else {
        static const int ipws[] = {1, 2, 4, 8}, unrolls[] = {8, 16, 32, 64}, wgs[] = {64, 128, 256};
        for (int k = 0; k < 4; k++) {
            g = best, g.ipw = ipws[k];
            if (g.ipw != best.ipw) try_cfg(c, &g, &best, &best_s, &count);
        }
        for (int k = 0; k < 4 && !quick; k++) {
            g = best, g.unroll = unrolls[k];
            if (g.unroll != best.unroll && g.unroll <= g.wg) try_cfg(c, &g, &best, &best_s, &count);
        }
        for (int k = 0; k < 3 && !quick; k++) {
            g = best, g.wg = wgs[k];
            if (g.wg != best.wg && (size_t)g.wg <= d->max_work_group_size && g.unroll <= g.wg)
                try_cfg(c, &g, &best, &best_s, &count);
        }
        g = best, g.js = best.js ? 0 : 1;
        try_cfg(c, &g, &best, &best_s, &count);
    }
    /* the heuristic stays unless beaten by more than a margin (cp_tune_beats) */
    if (!cp_tune_beats(d, best_s, untuned)) best = h, best_s = untuned;
    char fields[64], value[160];
    snprintf(fields, sizeof fields, "%s n=%d", TUNER, c->n);
    if (best.v == CLPHYS_NBODY_GRAVITY_VECTOR)
        snprintf(value, sizeof value, "variant=vector s=%.6g", best_s);
    else
        snprintf(value, sizeof value, "variant=tiled i_per_item=%d work_group=%d unroll=%d j_split=%d s=%.6g", best.ipw,
                 best.wg, best.unroll, best.js, best_s);
    const cp_tune_key key = {"nbody_gravity", "shape", prec_name(c->prec), fields};
    cp_tune_store(c->o, d, &key, value, best_s, untuned, count);
    return CLPHYS_SUCCESS;
}

clphys_status clphys_nbody_gravity_tune(clphys_context *ctx, const clphys_tune_options *opt)
{
    if (!ctx) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "gravity tune: NULL context");
    clphys_tune_options oin;
    CP_TRY(CP_PARAMS_IN(ctx, clphys_tune_options, opt, user, &oin));
    const clphys_tune_options *o = &oin;
    const clphys_device_info *d = clphys_context_device(ctx);
    const int quick = o && o->quick;
    /* GPUs: a size that leaves compute units idle and one that fills them;
     * CPUs: one size (the tiled kernel is ~15x slower there) */
    static const int gpu[] = {16384, 262144}, gpu_quick[] = {65536}, cpu[] = {4096}, cpu_quick[] = {2048};
    const int *sz = d->is_cpu ? (quick ? cpu_quick : cpu) : (quick ? gpu_quick : gpu);
    const int ns = d->is_cpu || quick ? 1 : 2, np = d->fp64 ? 2 : 1;
    clphys_status st = CLPHYS_SUCCESS;
    const double t0 = cp_now();
    for (int k = 0; k < ns * np && !st; k++) {
        grav_case c = {.ctx = ctx, .o = o, .prec = k % np ? CLPHYS_FP64 : CLPHYS_FP32, .n = sz[k / np]};
        c.rep = o && o->repeat > 0 ? o->repeat : 3;
        c.x = malloc(4 * (size_t)c.n * sizeof *c.x);
        c.acc = malloc(3 * (size_t)c.n * sizeof *c.acc);
        c.ref = malloc(3 * (size_t)c.n * sizeof *c.ref);
        if (!c.x || !c.acc || !c.ref) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "gravity tune: %d particles", c.n);
        uint64_t seed = 12345; /* uniform in the unit cube, masses (0.5 .. 1.5) / n */
        for (size_t i = 0; !st && i < 4 * (size_t)c.n; i++) {
            const double u = (double)(cp_splitmix64(&seed) >> 11) * 0x1.0p-53;
            c.x[i] = i % 4 == 3 ? (0.5 + u) / c.n : u;
        }
        char what[64];
        snprintf(what, sizeof what, "%s n=%d", prec_name(c.prec), c.n);
        cp_tune_step(o, "nbody_gravity", k + 1, ns * np, what);
        if (!st) st = tune_size(&c, quick);
        free(c.x), free(c.acc), free(c.ref);
    }
    if (!st) cp_tune_mark(d, "nbody_gravity", quick, cp_now() - t0);
    return st;
}
