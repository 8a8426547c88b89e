/* tune.c — the dslash work-group size chosen by measurement per device
 * (the best size differs between precisions, reconstructions and devices),
 * remembered in a small file next to the program cache so that the next
 * process does not time it again.  Contract: include/clphys_lqcd.h. */
#include "lqcd_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TUNE_MAGIC "clphys-dslash-tune 1"
#define TUNE_REPS 5

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

/* Everything the best size may depend on, one line. */
static void tune_key(const clphys_dslash_plan *pl, char *key, size_t n)
{
    const clphys_device_info *d = clphys_context_device(pl->ctx);
    snprintf(key, n, "device=%s|platform=%s|driver=%s|precision=%s|reconstruct=%d|layout=%s|lattice=%dx%dx%dx%d",
             d->name, d->platform, d->driver_version, pl->real_size == 8 ? "fp64" : "fp32", pl->p.reconstruct,
             pl->p.layout == CLPHYS_LQCD_AOS ? "aos" : "soa", pl->dims[0], pl->dims[1], pl->dims[2], pl->dims[3]);
}

/* The stored size when the file has the magic line, this exact key and a
 * size the device accepts; else 0 (and *ok = 0). */
static size_t cache_read(const char *path, const char *key, size_t max_wg, int *ok)
{
    *ok = 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[2048], k[2048] = "";
    size_t wg = 0;
    int good = fgets(line, sizeof line, f) && !strcmp(line, TUNE_MAGIC "\n") && fgets(k, sizeof k, f);
    if (good) {
        k[strcspn(k, "\n")] = 0;
        unsigned long long v;
        char tail;
        good = !strcmp(k, key) && fgets(line, sizeof line, f) && sscanf(line, "local_size=%llu%c", &v, &tail) == 2 &&
               tail == '\n' && v <= max_wg;
        wg = good ? (size_t)v : 0;
    }
    fclose(f);
    *ok = good;
    return wg;
}

/* Written to PATH.tmp.PID and renamed: a reader never sees half a file. */
static void cache_write(const char *dir, const char *path, const char *key, size_t wg, double best_s)
{
    cp_mkdirs(dir);
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    int ok = fprintf(f, TUNE_MAGIC "\n%s\nlocal_size=%zu\nhalf_hop_s=%.9g\n", key, wg, best_s) > 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) remove(tmp);
}

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

clphys_status lqcd_tune(clphys_dslash_plan *pl)
{
    const clphys_device_info *d = clphys_context_device(pl->ctx);
    pl->local = d->is_gpu ? 64 : 0; /* the heuristic, kept when tuning is off */
    pl->tune_source = CLPHYS_DSLASH_WG_HEURISTIC;
    const char *off = getenv("CLPHYS_NO_TUNE");
    if (pl->p.no_tune || (off && *off && strcmp(off, "0"))) return CLPHYS_SUCCESS;
    char key[1024], dir[4000], path[4200];
    tune_key(pl, key, sizeof key);
    int use_cache = cp_cache_dir(dir, sizeof dir); /* the program cache's folder */
    if (use_cache) {
        snprintf(path, sizeof path, "%s/dslash-tune-%016llx.txt", dir, (unsigned long long)fnv1a(key));
        int ok;
        size_t wg = cache_read(path, key, d->max_work_group_size, &ok);
        if (ok) {
            pl->local = wg;
            pl->tune_source = CLPHYS_DSLASH_WG_CACHED;
            return CLPHYS_SUCCESS;
        }
    }
    /* Input: a non-zero pattern (zeros can run faster than real data); the
     * kernel is bound by memory traffic, not by the values. */
    cl_mem in = NULL, out = NULL;
    clphys_status st;
    size_t bytes = pl->vh * 24 * pl->real_size;
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
    size_t best = pl->local;
    double best_s = -1;
    size_t kmax = d->max_work_group_size; /* the kernel's own limit (registers) */
    if (!st) {
        size_t k0 = 0, k1 = 0;
        if (clGetKernelWorkGroupInfo(pl->hop, pl->ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof k0, &k0, NULL) == CL_SUCCESS &&
            k0 && k0 < kmax)
            kmax = k0;
        if (clGetKernelWorkGroupInfo(pl->hop_g5[0], pl->ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof k1, &k1, NULL) ==
                CL_SUCCESS && k1 && k1 < kmax)
            kmax = k1;
    }
    for (size_t i = 0; i < sizeof cand / sizeof cand[0] && !st; i++) {
        if (cand[i] > kmax) continue;
        double t = time_size(pl, cand[i], out, in);
        if (t > 0 && (best_s < 0 || t < best_s)) best_s = t, best = cand[i];
    }
    cp_release_mem(&in);
    cp_release_mem(&out);
    pl->local = best;
    if (st) return st;
    if (best_s < 0) return CLPHYS_SUCCESS; /* nothing launched: keep the heuristic */
    pl->tune_source = CLPHYS_DSLASH_WG_MEASURED;
    if (use_cache) cache_write(dir, path, key, best, best_s);
    return CLPHYS_SUCCESS;
}
