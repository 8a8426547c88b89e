/* probe.c — measure the device's bandwidth and multiply-add limits, the
 * denominators of every benchmark's "fraction of limit".  Medians of repeated
 * runs, kernel time from profiling events, buffers far beyond the caches. */
#include "platform.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Time `repeat` launches after one warm-up (first touch of pages on CPUs). */
static clphys_status time_kernel(clphys_context *ctx, cl_kernel k, size_t global, const size_t *local, int repeat,
                                 double *med)
{
    double *t = calloc(repeat, sizeof *t), warm = 0;
    if (!t) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "out of host memory");
    clphys_status st = cp_launch(ctx, k, 1, &global, local, &warm);
    for (int r = 0; r < repeat && st == CLPHYS_SUCCESS; r++) st = cp_launch(ctx, k, 1, &global, local, &t[r]);
    if (st == CLPHYS_SUCCESS) *med = median(t, repeat);
    free(t);
    return st;
}

static clphys_status probe_bandwidth(clphys_context *ctx, cl_program prog, size_t bytes, int repeat,
                                     const size_t *local, clphys_limits *lim)
{
    cl_mem a = NULL, b = NULL, c = NULL;
    cl_kernel kc = NULL, kt = NULL;
    size_t n4 = bytes / 16; /* float4 elements */
    float s = 1.5f;
    double tc = 0, tt = 0;
    clphys_status st = cp_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &a);
    if (!st) st = cp_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &b);
    if (!st) st = cp_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &c);
    float one = 1.0f;
    if (!st) st = cp_fill(ctx, a, &one, sizeof one, bytes);
    if (!st) st = cp_fill(ctx, b, &one, sizeof one, bytes);
    if (!st) st = cp_fill(ctx, c, &one, sizeof one, bytes);
    if (!st) st = cp_kernel(ctx, prog, "probe_copy", &kc);
    if (!st) st = cp_kernel(ctx, prog, "probe_triad", &kt);
    if (!st) st = CP_ARGS(ctx, kc, a, b);
    if (!st) st = CP_ARGS(ctx, kt, a, b, c, s);
    if (!st) st = time_kernel(ctx, kc, n4, local, repeat, &tc);
    if (!st) st = time_kernel(ctx, kt, n4, local, repeat, &tt);
    if (!st) {
        lim->copy_bytes_per_s = 2.0 * (double)(n4 * 16) / tc;
        lim->triad_bytes_per_s = 3.0 * (double)(n4 * 16) / tt;
    }
    cp_release_kernel(&kc), cp_release_kernel(&kt);
    cp_release_mem(&a), cp_release_mem(&b), cp_release_mem(&c);
    return st;
}

/* Double the iteration count until one launch takes >= 20 ms, then time it. */
static clphys_status probe_mad(clphys_context *ctx, clphys_precision p, int repeat, double *flops)
{
    cp_defines opts = {0};
    cl_program prog;
    CP_TRY(cp_define_precision(ctx, &opts, p));
    CP_TRY(cp_program(ctx, &clsrc_platform_probe_cl, &opts, &prog));
    /* GPUs: scalar chains over many work-items.  CPUs: explicit 16-wide vectors
     * (probe_mad_vec), since PoCL does not vectorize a work-item loop with an inner loop. */
    int vec = !ctx->info.is_gpu;
    size_t local = vec ? 1 : 256;
    if (local > ctx->info.max_work_group_size) local = ctx->info.max_work_group_size;
    size_t global = (size_t)ctx->info.compute_units * (vec ? 64 : 2048);
    if (local) global = cp_round_up(global, local);
    size_t esz = p == CLPHYS_FP64 ? 8 : 4;
    cl_mem out = NULL;
    cl_kernel k = NULL;
    clphys_status st = cp_buffer(ctx, CL_MEM_WRITE_ONLY, global * esz, NULL, &out);
    if (!st) st = cp_kernel(ctx, prog, vec ? "probe_mad_vec" : "probe_mad", &k);
    double a64 = 0.999999, b64 = 1e-6;
    float a32 = (float)a64, b32 = (float)b64;
    int iters = 16;
    const int dbl = p == CLPHYS_FP64;
    if (!st) st = CP_ARGS(ctx, k, out, CP_EITHER(dbl, a64, a32), CP_EITHER(dbl, b64, b32), iters);
    double t = 0;
    while (!st) {
        st = CP_ARG_AT(ctx, k, 3, iters); /* the count grows until one launch is long enough */
        t = 0;
        if (!st) st = cp_launch(ctx, k, 1, &global, local ? &local : NULL, &t);
        if (st || t >= 0.02 || iters >= (1 << 24)) break;
        iters *= t > 0 ? (t < 0.002 ? 8 : 2) : 2;
    }
    if (!st) st = time_kernel(ctx, k, global, local ? &local : NULL, repeat, &t);
    if (!st) *flops = 2.0 * 32.0 * (vec ? 16.0 : 1.0) * (double)iters * (double)global / t;
    cp_release_kernel(&k);
    cp_release_mem(&out);
    return st;
}

clphys_status clphys_measure_limits(clphys_context *ctx, int repeat, clphys_limits *lim)
{
    if (!ctx || !lim) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_measure_limits: NULL argument");
    if (repeat <= 0) repeat = 5;
    memset(lim, 0, sizeof *lim);
    lim->repeat = repeat;
    size_t bytes = ctx->info.is_gpu ? ((size_t)512 << 20) : ((size_t)64 << 20);
    while (bytes > ctx->info.max_alloc_bytes / 2 || bytes * 3 > ctx->info.global_mem_bytes / 2) bytes /= 2;
    lim->buffer_bytes = bytes;
    cl_program prog;
    cp_defines opts = {0};
    cp_define_str(&opts, "REAL_T", "float");
    CP_TRY(cp_program(ctx, &clsrc_platform_probe_cl, &opts, &prog));
    size_t local = ctx->info.is_gpu ? 256 : 0;
    if (local > ctx->info.max_work_group_size) local = ctx->info.max_work_group_size;
    CP_TRY(probe_bandwidth(ctx, prog, bytes, repeat, local ? &local : NULL, lim));
    CP_TRY(probe_mad(ctx, CLPHYS_FP32, repeat, &lim->fma_fp32_flops));
    if (ctx->info.fp64) CP_TRY(probe_mad(ctx, CLPHYS_FP64, repeat, &lim->fma_fp64_flops));
    return CLPHYS_SUCCESS;
}
