/* profile.c — per-kernel times of every launch (CLPHYS_PROFILE set at
 * context creation; clphys_context_profile_write in clphys.h).
 *
 * Every cp_launch keeps its event; they are folded into per-kernel counts and
 * sums whenever 1024 are pending and before the table is written.  An event
 * per launch adds a few microseconds of start-up to each launch on some
 * drivers (NVIDIA: ~3.5 us, bench/md-notes.md), so a profiled run
 * says where the kernel time goes, not how long the whole takes: each
 * kernel's END - START is unaffected. */
#include "platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROF_PENDING 1024

typedef struct {
    char name[64];
    unsigned long n;
    double sum, min, max; /* seconds */
} prof_kernel;

struct cp_profile {
    cl_event ev[PROF_PENDING];
    cl_kernel kn[PROF_PENDING];
    int nev;
    prof_kernel *k;
    int nk, capk;
};

void cp_profile_open(clphys_context *ctx)
{
    const char *path = getenv("CLPHYS_PROFILE");
    if (!path || !*path || !ctx->profiling) return;
    /* a diagnostic: without memory it is skipped (profile_write then says so) */
    ctx->prof = calloc(1, sizeof *ctx->prof);
}

static prof_kernel *entry(cp_profile *p, const char *name)
{
    for (int i = 0; i < p->nk; i++)
        if (!strcmp(p->k[i].name, name)) return &p->k[i];
    if (p->nk == p->capk) {
        int cap = p->capk ? 2 * p->capk : 32;
        prof_kernel *k = realloc(p->k, (size_t)cap * sizeof *k);
        if (!k) return NULL;
        p->k = k, p->capk = cap;
    }
    prof_kernel *e = &p->k[p->nk++];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->min = 1e300;
    return e;
}

/* "name" or "name[fp32]" / "name[fp64]": one kernel is often built in both
 * precisions (cp_precision_options), which the table keeps apart. */
static void kernel_label(clphys_context *ctx, cl_kernel k, char *buf, size_t n)
{
    char name[48] = "?", opts[2048] = "";
    cl_program prog = NULL;
    clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
    if (clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof prog, &prog, NULL) == CL_SUCCESS && prog)
        clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_OPTIONS, sizeof opts, opts, NULL);
    opts[sizeof opts - 1] = 0;
    const char *tag = strstr(opts, "REAL_T=double") ? "[fp64]" : strstr(opts, "REAL_T=float") ? "[fp32]" : "";
    snprintf(buf, n, "%s%s", name, tag);
}

static void fold(clphys_context *ctx)
{
    cp_profile *p = ctx->prof;
    if (!p->nev) return;
    clFinish(ctx->queue);
    for (int i = 0; i < p->nev; i++) {
        char name[64];
        kernel_label(ctx, p->kn[i], name, sizeof name);
        double s = cp_event_seconds(p->ev[i]);
        prof_kernel *e = s >= 0 ? entry(p, name) : NULL;
        if (e) {
            e->n++;
            e->sum += s;
            e->min = s < e->min ? s : e->min;
            e->max = s > e->max ? s : e->max;
        }
        clReleaseEvent(p->ev[i]);
        clReleaseKernel(p->kn[i]);
    }
    p->nev = 0;
}

void cp_profile_add(clphys_context *ctx, cl_kernel k, cl_event ev)
{
    cp_profile *p = ctx->prof;
    if (p->nev == PROF_PENDING) fold(ctx);
    clRetainKernel(k); /* the caller may release it before the fold */
    p->kn[p->nev] = k;
    p->ev[p->nev++] = ev;
}

static int by_sum(const void *a, const void *b)
{
    double x = ((const prof_kernel *)a)->sum, y = ((const prof_kernel *)b)->sum;
    return (x < y) - (x > y);
}

clphys_status cp_profile_write(clphys_context *ctx, const char *path)
{
    cp_profile *p = ctx->prof;
    if (!p)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_context_profile_write: no profile (CLPHYS_PROFILE was not set when the context "
                        "was made, or its queue has no profiling)");
    fold(ctx);
    qsort(p->k, (size_t)p->nk, sizeof *p->k, by_sum);
    double total = 0;
    unsigned long launches = 0;
    for (int i = 0; i < p->nk; i++) total += p->k[i].sum, launches += p->k[i].n;
    char tmp[4200];
    FILE *f;
    if (clphys_output_open(path, &f, tmp, sizeof tmp))
        return cp_error(ctx, CLPHYS_ERR_IO, "clphys_context_profile_write: %s", clphys_last_error(NULL));
    fprintf(f, "# clphys kernel profile: %s; %lu launches, %.6f s of kernel time (END - START per launch)\n",
            ctx->info.name, launches, total);
    fprintf(f, "# %-40s %9s %12s %10s %10s %10s %6s\n", "kernel", "launches", "total_ms", "mean_us", "min_us", "max_us",
            "share");
    for (int i = 0; i < p->nk; i++) {
        prof_kernel *e = &p->k[i];
        fprintf(f, "%-42s %9lu %12.3f %10.2f %10.2f %10.2f %5.1f%%\n", e->name, e->n, e->sum * 1e3,
                e->sum / (double)e->n * 1e6, e->min * 1e6, e->max * 1e6, total > 0 ? 100 * e->sum / total : 0);
    }
    if (clphys_output_close(f, tmp, path, !ferror(f)))
        return cp_error(ctx, CLPHYS_ERR_IO, "clphys_context_profile_write: %s", clphys_last_error(NULL));
    return CLPHYS_SUCCESS;
}

void cp_profile_close(clphys_context *ctx)
{
    cp_profile *p = ctx->prof;
    if (!p) return;
    fold(ctx);
    free(p->k);
    free(p);
    ctx->prof = NULL;
}
