/* nbody_gravity.c — benchmark of direct-sum gravity: every kernel shape and tuning
 * (tiled: i-particles per work-item x work-group size; vector) and the C +
 * OpenMP reference as the CPU baseline, at N = 262144 and 1048576 (fp32) and
 * 262144 (fp64) on GPUs, N = 16384 on CPUs (quick).  Counts N^2 interactions
 * per call (self pair included, as the CUDA sample does); GFLOP/s at 20 flops
 * per interaction (CUDA sample), the paper's 26 in params.  Accelerations
 * only (no potential), eps = 0.01, particles uniform in the unit cube.
 * Verification: the first min(N, 1024) i-particles against the fp64
 * reference, error = max_i |a_i - a_ref,i| / rms_i |a_ref,i| (the unsplit
 * kernels sum j in the reference's order, so their fp64 error reads lower
 * than that of the j-split ones, ~5e-14 on an H100). */
#include "bench.h"
#include "nbody_bench.h"
#include "host/ref/nbody_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EPS  BENCH_GRAVITY_EPS
#define NVER 1024

double *bench_nbody_gravity_particles(long long n)
{
    double *x = malloc(4 * (size_t)n * sizeof *x);
    if (!x) return NULL;
    uint64_t s = 12345;
    for (size_t c = 0; c < 4 * (size_t)n; c++) {
        double u = ref_uniform(&s);
        x[c] = (c % 4 == 3) ? (0.5 + u) / n : u;
    }
    return x;
}

double bench_nbody_gravity_error(int nv, const double *acc, const double *ref)
{
    double rms = 0, m = 0;
    for (int i = 0; i < nv; i++)
        rms += ref[3 * i] * ref[3 * i] + ref[3 * i + 1] * ref[3 * i + 1] + ref[3 * i + 2] * ref[3 * i + 2];
    rms = sqrt(rms / nv);
    for (int i = 0; i < nv; i++) {
        double d = 0;
        for (int c = 0; c < 3; c++) d += (acc[3 * i + c] - ref[3 * i + c]) * (acc[3 * i + c] - ref[3 * i + c]);
        d = sqrt(d) / rms;
        if (!(d <= m)) m = isnan(d) ? INFINITY : d;
    }
    return m;
}

void bench_nbody_gravity_row(bench_row *r, const char *path, const char *variant, int fp64, long long n, int repeat)
{
    memset(r, 0, sizeof *r);
    snprintf(r->path, sizeof r->path, "%s", path);
    snprintf(r->variant, sizeof r->variant, "%s", variant);
    snprintf(r->precision, sizeof r->precision, "%s", fp64 ? "fp64" : "fp32");
    r->n = n;
    r->repeat = repeat;
}

void bench_nbody_gravity_rates(bench_run *run, bench_row *r, double inter, double seconds, int fp64, int devices)
{
    r->rate = seconds > 0 ? inter / seconds : 0;
    snprintf(r->rate_unit, sizeof r->rate_unit, "interactions/s");
    r->gflops = 20 * r->rate * 1e-9;
    snprintf(r->flops_convention, sizeof r->flops_convention, "20 per interaction");
    r->bytes_per_s = 0;
    bench_set_fraction(run, r, fp64 ? "fma_fp64_flops" : "fma_fp32_flops", r->gflops * 1e9 / (devices ? devices : 1));
}

void bench_nbody_gravity_verify(const bench_run *run, bench_row *r, int nv, const double *acc, const double *ref,
                                int fp64)
{
    r->max_rel_error = run->verify ? bench_nbody_gravity_error(nv, acc, ref) : 0;
    r->verified = run->verify && r->max_rel_error < (fp64 ? 1e-10 : 1e-4);
}

static void fill_rates(bench_run *run, bench_row *r, double inter, int fp64, const char *extra)
{
    bench_nbody_gravity_rates(run, r, inter, r->kernel_s_median, fp64, 1);
    snprintf(r->params, sizeof r->params,
             "{\"eps\":%g,\"gflops_26\":%.6g,\"interactions_per_call\":%.6g,\"potential\":false%s}", EPS,
             26 * r->rate * 1e-9, inter, extra);
}

/* One GPU/CPU kernel case; ref holds the first nv reference accelerations.
 * Returns 1 when the plan ran the vector kernel. */
static int kernel_case(bench_run *run, const clphys_nbody_gravity_params *prm, long long n, const double *x,
                       const double *ref, int nv, double *acc)
{
    const int fp64 = prm->precision == CLPHYS_FP64;
    clphys_nbody_gravity_plan *pl = NULL;
    clphys_status st = clphys_nbody_gravity_plan_create(run->ctx, prm, &pl);
    char what[96];
    snprintf(what, sizeof what, "%s n=%lld", fp64 ? "fp64" : "fp32", n);
    if (st) {
        bench_fail(run, "nbody_gravity", what, clphys_last_error(run->ctx));
        return 0;
    }
    double *ks = malloc(run->repeat * sizeof *ks), *ts = malloc(run->repeat * sizeof *ts);
    st = clphys_nbody_gravity_compute(pl, (size_t)n, NULL, (size_t)n, x, acc, NULL, 0, 0, NULL); /* warm-up */
    for (int r = 0; r < run->repeat && !st; r++) {
        double t0 = bench_now();
        st = clphys_nbody_gravity_compute(pl, (size_t)n, NULL, (size_t)n, x, acc, NULL, 0, 0, &ks[r]);
        ts[r] = bench_now() - t0;
    }
    if (st) {
        bench_fail(run, "nbody_gravity", what, clphys_last_error(run->ctx));
    } else {
        bench_row row;
        bench_nbody_gravity_row(&row, "nbody_gravity", clphys_nbody_gravity_plan_variant(pl), fp64, n, run->repeat);
        row.kernel_s_min = ref_min(ks, run->repeat);
        row.kernel_s_median = ref_median(ks, run->repeat);
        row.total_s_median = ref_median(ts, run->repeat);
        fill_rates(run, &row, (double)n * n, fp64, "");
        bench_nbody_gravity_verify(run, &row, nv, acc, ref, fp64);
        snprintf(row.note, sizeof row.note, "GFLOP/s at 26 flops/interaction (Miki et al. 2012): %.1f",
                 26 * row.rate * 1e-9);
        if (prm->variant == CLPHYS_NBODY_GRAVITY_AUTO && !prm->i_per_item && !prm->work_group)
            snprintf(row.auto_choice, sizeof row.auto_choice, "%s (%s)", clphys_nbody_gravity_plan_variant(pl),
                     clphys_tune_source_name(clphys_nbody_gravity_plan_tune_source(pl)));
        bench_add_row(run, &row);
    }
    free(ks);
    free(ts);
    const int vector = !strncmp(clphys_nbody_gravity_plan_variant(pl), "vector", 6);
    clphys_nbody_gravity_plan_destroy(pl);
    return vector;
}

/* The C + OpenMP reference (fp32 or fp64 arithmetic) timed on the host. */
static void c_openmp_case(bench_run *run, long long n, const double *x, int fp64, const double *ref, int nv,
                          double *acc)
{
    int rep = run->repeat < 3 ? run->repeat : 3;
    double ts[3];
    for (int r = 0; r < rep; r++) {
        double t0 = bench_now();
        (fp64 ? nbody_ref_gravity : nbody_ref_gravity_f32)((int)n, NULL, (int)n, x, 1.0, EPS, acc, NULL);
        ts[r] = bench_now() - t0;
    }
    bench_row row;
    bench_nbody_gravity_row(&row, "nbody_gravity", "c-openmp", fp64, n, rep);
    row.kernel_s_min = ref_min(ts, rep);
    row.kernel_s_median = ref_median(ts, rep);
    row.total_s_median = row.kernel_s_median;
    fill_rates(run, &row, (double)n * n, fp64, ",\"host\":\"OpenMP over i, omp simd over j, SoA\"");
    bench_nbody_gravity_verify(run, &row, nv, acc, ref, fp64);
    snprintf(row.note, sizeof row.note, "host CPU, not the OpenCL device; fraction is of the device's limit");
    bench_add_row(run, &row);
}

static void one_size(bench_run *run, long long n, int fp64)
{
    const clphys_device_info *dev = run->dev;
    double *x = bench_nbody_gravity_particles(n), *acc = malloc(3 * (size_t)n * sizeof *acc);
    int nv = n < NVER ? (int)n : NVER;
    double *ref = malloc(3 * (size_t)nv * sizeof *ref);
    if (!x || !acc || !ref) {
        bench_fail(run, "nbody_gravity", "allocation", "out of host memory");
        free(x), free(acc), free(ref);
        return;
    }
    if (run->verify) nbody_ref_gravity(nv, x, (int)n, x, 1.0, EPS, ref, NULL);
    clphys_nbody_gravity_params prm = {
        0, fp64 ? CLPHYS_FP64 : CLPHYS_FP32, CLPHYS_NBODY_GRAVITY_VECTOR, 1.0, EPS, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    prm.n_hint = (size_t)n;
    if (dev->is_cpu) {
        /* auto (the vector kernel, or the tuned shape), then the other kernel */
        prm.variant = CLPHYS_NBODY_GRAVITY_AUTO;
        const int vector = kernel_case(run, &prm, n, x, ref, nv, acc);
        prm.variant = CLPHYS_NBODY_GRAVITY_VECTOR;
        if (!vector) kernel_case(run, &prm, n, x, ref, nv, acc);
        prm.variant = CLPHYS_NBODY_GRAVITY_TILED, prm.work_group = 64, prm.i_per_item = 1;
        if (n <= 16384) kernel_case(run, &prm, n, x, ref, nv, acc);
    } else {
        /* tuning sweep, {i per item, work group, unroll, flush_denormals (fp32)
         * or fast_rsqrt64 (fp64), inline_ptx, j_split}; see clphys_nbody.h */
        static const int c32[][6] = {{4, 256, 32, 1, -1, 1}, {4, 256, 16, 1, 1, 1}, {8, 256, 16, 1, 1, 1},
                                     {4, 256, 64, 1, 1, 1},  {2, 256, 32, 1, 1, 1}, {4, 256, 16, 1, 1, 0},
                                     {8, 256, 16, 1, 1, 0},  {4, 256, 64, 1, 1, 0}, {8, 128, 16, 1, 1, 0},
                                     {4, 128, 32, 1, 1, 0},  {2, 256, 32, 1, 1, 0}, {8, 256, 32, 1, 1, 0}};
        static const int c64[][6] = {{2, 256, 32, -1, -1, 1}, {1, 256, 8, 1, -1, 1}, {1, 256, 32, 2, 1, 1},
                                     {2, 256, 32, 2, 1, 1},   {1, 256, 32, 2, 1, 0}, {2, 256, 32, 2, 1, 0},
                                     {4, 256, 32, 2, 1, 0},   {1, 128, 32, 2, 1, 0}, {2, 256, 16, 2, 1, 0}};
        const int(*c)[6] = fp64 ? c64 : c32;
        const int nc = fp64 ? (int)(sizeof c64 / sizeof *c64) : (int)(sizeof c32 / sizeof *c32);
        const int nvidia = strstr(dev->platform, "NVIDIA") != NULL;
        /* the default run: the first shape of each (j_split 1 and 0) and the
         * defaults' neighbours; --full: every shape */
        static const int short32[] = {0, 2, 5, 6}, short64[] = {0, 2, 4, 6};
        prm.variant = CLPHYS_NBODY_GRAVITY_TILED;
        for (int kk = 0; kk < (run->full ? nc : 4); kk++) {
            const int k = run->full ? kk : fp64 ? short64[kk] : short32[kk];
            if ((size_t)c[k][1] > dev->max_work_group_size || (c[k][4] > 0 && !nvidia)) continue;
            prm.i_per_item = c[k][0], prm.work_group = c[k][1], prm.unroll = c[k][2];
            prm.flush_denormals = fp64 ? 0 : c[k][3];
            prm.fast_rsqrt64 = fp64 ? c[k][3] : 0;
            prm.inline_ptx = c[k][4], prm.j_split = c[k][5];
            kernel_case(run, &prm, n, x, ref, nv, acc);
        }
        /* what the library picks by itself */
        prm.variant = CLPHYS_NBODY_GRAVITY_AUTO, prm.i_per_item = 0, prm.work_group = 0, prm.unroll = 0;
        prm.flush_denormals = 0, prm.fast_rsqrt64 = 0, prm.inline_ptx = 0, prm.j_split = 0;
        kernel_case(run, &prm, n, x, ref, nv, acc);
        prm.unroll = 0, prm.flush_denormals = 0, prm.fast_rsqrt64 = 0;
        if (n <= 65536) {
            prm.variant = CLPHYS_NBODY_GRAVITY_VECTOR, prm.i_per_item = 0, prm.work_group = 0;
            kernel_case(run, &prm, n, x, ref, nv, acc);
        }
    }
    if (dev->is_cpu || n <= 32768) c_openmp_case(run, n, x, fp64, ref, nv, acc);
    free(x), free(acc), free(ref);
}

int bench_nbody_gravity(bench_run *run)
{
    if (run->size > 0 && run->size > 0x7fffffff) {
        bench_fail(run, "nbody_gravity", "size", "N above 2^31 - 1");
        return 1;
    }
    const long long gpu32[] = {262144, 1048576}, gpu64[] = {262144}, cpu32[] = {16384}, cpu64[] = {4096};
    for (int f = 0; f < 2; f++) {
        const char *pr = f ? "fp64" : "fp32";
        if (!bench_wants_precision(run, pr)) continue;
        const long long *sz = run->quick ? (f ? cpu64 : cpu32) : (f ? gpu64 : gpu32);
        /* 1,048,576 (fp32, GPUs) only in the full sweep: 16x the time of 262,144 */
        int ns = run->quick || !run->full ? 1 : (f ? 1 : 2);
        if (run->size > 0) sz = &run->size, ns = 1;
        for (int s = 0; s < ns; s++) one_size(run, sz[s], f);
    }
    return 0;
}
