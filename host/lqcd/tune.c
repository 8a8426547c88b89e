/* tune.c — the dslash work-group size chosen by measurement per device (the
 * best size differs between precisions, reconstructions and devices), kept
 * in the tuning cache (platform/tune.h) so that the next process does not
 * time it again.  Contract: include/clphys_lqcd.h. */
#include "lqcd_internal.h"
#include "platform/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rounds of the interleaved timing: each candidate size once per round, in
 * turn, so that the drift of a shared machine's speed (a VM's stolen time)
 * falls on all of them alike; the median of its rounds decides. */
#define TUNE_ROUNDS 9

/* Profiled time of one even-parity half hop at work-group size wg; < 0 when
 * the size cannot be launched. */
static double time_size(clphys_lqcd_dslash_plan *pl, size_t wg, cl_mem out, cl_mem in)
{
    pl->local = wg;
    double t = 0;
    return lqcd_hop(pl, out, in, NULL, 0, 0, &t) ? -1 : t;
}

/* The largest size both hop kernels accept (registers may limit it below
 * the device's maximum). */
static size_t kernel_max(clphys_lqcd_dslash_plan *pl)
{
    size_t kmax = clphys_context_device(pl->ctx)->max_work_group_size, k = 0;
    const cl_kernel ks[2] = {pl->hop, pl->hop_g5[0]};
    for (int i = 0; i < 2; i++)
        if (cp_kernel_limits(pl->ctx, ks[i], &k, NULL) == CLPHYS_SUCCESS && k && k < kmax) kmax = k;
    return kmax;
}

/* The heuristic, kept when tuning is off: 64 on GPUs, the runtime's choice
 * on CPUs. */
static size_t heuristic(const clphys_lqcd_dslash_plan *pl) { return clphys_context_device(pl->ctx)->is_gpu ? 64 : 0; }

/* The half hop timed for 32 ... 512 (up to kmax) and the runtime's choice;
 * *best_s < 0 when none launched. */
static clphys_status measure(clphys_lqcd_dslash_plan *pl, size_t kmax, size_t *best, double *best_s, double *heur_s,
                             int *count)
{
    /* Input: a non-zero pattern (zeros can run faster than real data); the
     * kernel is bound by memory traffic, not by the values. */
    cl_mem in = NULL, out = NULL;
    clphys_status st;
    const size_t bytes = pl->vh * 24 * pl->real_size;
    if ((st = cp_buffer(pl->ctx, CL_MEM_READ_WRITE, bytes, NULL, &in)) ||
        (st = cp_buffer(pl->ctx, CL_MEM_READ_WRITE, bytes, NULL, &out))) {
        cp_release_mem(&in);
        return st;
    }
    const float pat[4] = {0.75f, -0.3125f, 0.5f, 1.25f};
    const double patd[2] = {0.75, -0.3125};
    if (pl->real_size == 8)
        st = cp_fill(pl->ctx, in, patd, sizeof patd, bytes);
    else
        st = cp_fill(pl->ctx, in, pat, sizeof pat, bytes);
    static const size_t cand[] = {32, 64, 128, 256, 512, 0};
    enum { NC = sizeof cand / sizeof cand[0] };
    const size_t heur = heuristic(pl);
    *best = heur;
    double t[NC][TUNE_ROUNDS];
    int live[NC];
    *best_s = -1;
    /* one untimed launch each: a size that cannot launch drops out */
    for (int i = 0; i < NC; i++) live[i] = !st && cand[i] <= kmax && time_size(pl, cand[i], out, in) >= 0;
    for (int r = 0; r < TUNE_ROUNDS && !st; r++)
        for (int j = 0; j < NC; j++) {
            const int i = (r + j) % NC; /* a round's first size turns */
            if (live[i] && (t[i][r] = time_size(pl, cand[i], out, in)) < 0) live[i] = 0;
        }
    double hs = -1;
    for (int i = 0; i < NC && !st; i++) {
        if (!live[i]) continue;
        if (count) ++*count;
        const double m = cp_median(t[i], TUNE_ROUNDS);
        if (cand[i] == heur) hs = m;
        if (*best_s < 0 || m < *best_s) *best_s = m, *best = cand[i];
    }
    if (heur_s) *heur_s = hs;
    /* a size replaces the heuristic only by more than a later process
     * could see otherwise (cp_tune_beats) */
    if (hs > 0 && *best != heur && !cp_tune_beats(clphys_context_device(pl->ctx), *best_s, hs))
        *best = heur, *best_s = hs;
    cp_release_mem(&in);
    cp_release_mem(&out);
    return st;
}

/* The plan's cache key; fields[n] holds its FIELDS. */
static cp_tune_key plan_key(const clphys_lqcd_dslash_plan *pl, char *fields, size_t n)
{
    /* a rank's interior kernel (split directions) is another kernel */
    int o =
        snprintf(fields, n, "reconstruct=%d layout=%s lattice=%dx%dx%dx%d", pl->p.reconstruct,
                 pl->p.layout == CLPHYS_LQCD_AOS ? "aos" : "soa", pl->dims[0], pl->dims[1], pl->dims[2], pl->dims[3]);
    if (pl->parts) snprintf(fields + o, n - (size_t)o, " split=%d", pl->parts);
    return (cp_tune_key){"lqcd_dslash", "local_size", pl->real_size == 8 ? "fp64" : "fp32", fields};
}

/* ---- the plan's choice (cp_tune_choose's callbacks) --------------------- */

static clphys_status defaults_cb(void *user)
{
    clphys_lqcd_dslash_plan *pl = user;
    if (!pl->p.local_size) pl->local = heuristic(pl); /* else the given size, set by the plan */
    return CLPHYS_SUCCESS;
}

static int take_cb(void *user, const char *value)
{
    clphys_lqcd_dslash_plan *pl = user;
    size_t wg;
    if (!cp_tune_value_size(value, "local_size", &wg) || wg > kernel_max(pl)) return 0;
    pl->local = wg;
    return 1;
}

static clphys_status measure_cb(void *user, char *value, size_t n)
{
    clphys_lqcd_dslash_plan *pl = user;
    size_t best;
    double best_s;
    clphys_status st = measure(pl, kernel_max(pl), &best, &best_s, NULL, NULL);
    if (!st && best_s >= 0) snprintf(value, n, "local_size=%zu half_hop_s=%.9g", best, best_s);
    return st;
}

clphys_status lqcd_tune(clphys_lqcd_dslash_plan *pl)
{
    char fields[128];
    const cp_tune_plan t = {.key = plan_key(pl, fields, sizeof fields),
                            .given = pl->p.local_size != 0,
                            .no_tune = pl->p.no_tune,
                            .user = pl,
                            .defaults = defaults_cb,
                            .take = take_cb,
                            .measure = measure_cb};
    return cp_tune_choose(clphys_context_device(pl->ctx), &t, &pl->tune_source);
}

clphys_status clphys_lqcd_dslash_tune(clphys_context *ctx, const clphys_tune_options *opt)
{
    if (!ctx) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "dslash tune: NULL context");
    clphys_tune_options oin;
    CP_TRY(CP_PARAMS_IN(ctx, clphys_tune_options, opt, user, &oin));
    const clphys_tune_options *o = &oin;
    const clphys_device_info *d = clphys_context_device(ctx);
    const int quick = o && o->quick;
    /* one lattice, the largest of `clphys bench`'s default run on the
     * device (its plans then read the entry); plans of other lattices still
     * time their own at creation (the entry is exact) */
    static const int gpu[4] = {32, 32, 32, 32}, gpu_quick[4] = {16, 16, 16, 16}, cpu[4] = {16, 16, 16, 16},
                     cpu_quick[4] = {8, 8, 8, 8};
    const int *dims = d->is_cpu ? (quick ? cpu_quick : cpu) : (quick ? gpu_quick : gpu);
    clphys_lqcd_gauge_field g = {0};
    clphys_status st = clphys_lqcd_gauge_create(dims, &g);
    if (st) return cp_error(ctx, st, "dslash tune: a %dx%dx%dx%d gauge field", dims[0], dims[1], dims[2], dims[3]);
    clphys_lqcd_gauge_hot(&g, 2026);
    const int np = d->fp64 ? 2 : 1, nr = quick ? 1 : 2;
    const double t0 = cp_now();
    for (int k = 0; k < np * nr && !st; k++) {
        const clphys_precision prec = k % np ? CLPHYS_FP64 : CLPHYS_FP32;
        const int rec = k / np ? 18 : 12;
        char what[64];
        snprintf(what, sizeof what, "%s reconstruct-%d %dx%dx%dx%d", prec == CLPHYS_FP64 ? "fp64" : "fp32", rec,
                 dims[0], dims[1], dims[2], dims[3]);
        cp_tune_step(o, "lqcd_dslash", k + 1, np * nr, what);
        /* no_tune: the plan starts at the heuristic and neither reads nor
         * writes the cache; the timing below writes it */
        const clphys_lqcd_dslash_params p = {.precision = prec, .reconstruct = rec, .kappa = 0.12, .no_tune = 1};
        clphys_lqcd_dslash_plan *pl = NULL;
        if ((st = clphys_lqcd_dslash_plan_create(ctx, &g, &p, &pl)) != CLPHYS_SUCCESS) break;
        size_t best;
        double best_s = -1, heur_s = 0;
        int count = 0;
        st = measure(pl, kernel_max(pl), &best, &best_s, &heur_s, &count);
        if (!st && best_s > 0) {
            char fields[128], value[CP_TUNE_VALUE_MAX];
            const cp_tune_key key = plan_key(pl, fields, sizeof fields);
            snprintf(value, sizeof value, "local_size=%zu half_hop_s=%.9g", best, best_s);
            cp_tune_store(o, d, &key, value, best_s, heur_s > 0 ? heur_s : 0, count);
        }
        clphys_lqcd_dslash_plan_destroy(pl);
    }
    clphys_lqcd_gauge_destroy(&g);
    if (!st) cp_tune_mark(d, "lqcd_dslash", quick, cp_now() - t0);
    return st;
}
