/* tune.c — the dslash work-group size chosen by measurement per device (the
 * best size differs between precisions, reconstructions and devices), kept
 * in the tuning cache (platform/tune.h) so that the next process does not
 * time it again.  Contract: include/clphys_lqcd.h. */
#include "lqcd_internal.h"
#include "platform/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TUNE_REPS 5

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median profiled time of the even-parity half hop at work-group size wg;
 * < 0 when the size cannot be launched. */
static double time_size(clphys_dslash_plan *pl, size_t wg, cl_mem out, cl_mem in)
{
    pl->local = wg;
    double t[TUNE_REPS], warm = 0;
    if (lqcd_hop(pl, out, in, NULL, 0, 0, &warm)) return -1;
    for (int i = 0; i < TUNE_REPS; i++) {
        t[i] = 0;
        if (lqcd_hop(pl, out, in, NULL, 0, 0, &t[i])) return -1;
    }
    qsort(t, TUNE_REPS, sizeof t[0], cmp_double);
    return t[TUNE_REPS / 2];
}

/* The largest size both hop kernels accept (registers may limit it below
 * the device's maximum). */
static size_t kernel_max(clphys_dslash_plan *pl)
{
    size_t kmax = clphys_context_device(pl->ctx)->max_work_group_size, k = 0;
    const cl_kernel ks[2] = {pl->hop, pl->hop_g5[0]};
    for (int i = 0; i < 2; i++)
        if (cp_kernel_limits(pl->ctx, ks[i], &k, NULL) == CLPHYS_SUCCESS && k && k < kmax) kmax = k;
    return kmax;
}

/* The half hop timed for 32 ... 512 (up to kmax) and the runtime's choice;
 * *best_s < 0 when none launched. */
static clphys_status measure(clphys_dslash_plan *pl, size_t kmax, size_t *best, double *best_s)
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
    if (pl->real_size == 8) st = cp_fill(pl->ctx, in, patd, sizeof patd, bytes);
    else st = cp_fill(pl->ctx, in, pat, sizeof pat, bytes);
    static const size_t cand[] = {32, 64, 128, 256, 512, 0};
    *best_s = -1;
    for (size_t i = 0; i < sizeof cand / sizeof cand[0] && !st; i++) {
        if (cand[i] > kmax) continue;
        double t = time_size(pl, cand[i], out, in);
        if (t > 0 && (*best_s < 0 || t < *best_s)) *best_s = t, *best = cand[i];
    }
    cp_release_mem(&in);
    cp_release_mem(&out);
    return st;
}

clphys_status lqcd_tune(clphys_dslash_plan *pl)
{
    const clphys_device_info *d = clphys_context_device(pl->ctx);
    pl->local = d->is_gpu ? 64 : 0; /* the heuristic, kept when tuning is off */
    pl->tune_source = CLPHYS_DSLASH_WG_HEURISTIC;
    const char *off = getenv("CLPHYS_NO_TUNE");
    if (pl->p.no_tune || (off && *off && strcmp(off, "0"))) return CLPHYS_SUCCESS;
    char fields[128], value[CP_TUNE_VALUE_MAX];
    /* a rank's interior kernel (split directions) is another kernel */
    int n = snprintf(fields, sizeof fields, "reconstruct=%d layout=%s lattice=%dx%dx%dx%d", pl->p.reconstruct,
                     pl->p.layout == CLPHYS_LQCD_AOS ? "aos" : "soa", pl->dims[0], pl->dims[1], pl->dims[2],
                     pl->dims[3]);
    if (pl->parts) snprintf(fields + n, sizeof fields - (size_t)n, " split=%d", pl->parts);
    const cp_tune_key key = {"dslash", "local_size", pl->real_size == 8 ? "fp64" : "fp32", fields};
    const size_t kmax = kernel_max(pl);
    size_t wg;
    if (cp_tune_get(d, &key, value, sizeof value) && cp_tune_value_size(value, "local_size", &wg) && wg <= kmax) {
        pl->local = wg;
        pl->tune_source = CLPHYS_DSLASH_WG_CACHED;
        return CLPHYS_SUCCESS;
    }
    size_t best = pl->local;
    double best_s;
    clphys_status st = measure(pl, kmax, &best, &best_s);
    pl->local = best;
    if (st || best_s < 0) return st; /* nothing launched: keep the heuristic */
    pl->tune_source = CLPHYS_DSLASH_WG_MEASURED;
    snprintf(value, sizeof value, "local_size=%zu half_hop_s=%.9g", best, best_s);
    cp_tune_put(d, &key, value); /* a cache that cannot be written only costs the next measurement */
    return CLPHYS_SUCCESS;
}
