/* nbody_gravity_multi.c — bench entry gravity_multi: gravity on one device with one
 * and with two command queues, the seed's super-linear check (Miki,
 * Takahashi & Mori, sec. 6.2): n i-particles against two j-blocks of n, the
 * own block and a received one, as one rank of a distributed run computes
 * them; with one queue the two kernels run one after the other, with two
 * they may share the device.  Below ~8192 particles the seed's M2090 had
 * compute units idle under one kernel and the second stream filled them
 * (efficiency up to 2).  On GPUs the rows come with the library's
 * j split (which fills the device from one kernel already) and without it
 * (j_split = 1, the seed's kernel shape).  Also the seed's synchronisation
 * cost (sec. 5: empty launches fitted, t_sync and t_launch).
 * Rows: kernel_s_median = the kernels' span on the device (first START to
 * last END: their wall time, concurrency included), total_s_median = the
 * call's wall time (uploads and read-back included); params.concurrency
 * and params.efficiency = one queue's span / two queues' span. */
#include "bench.h"
#include "nbody_bench.h"
#include "host/ref/nbody_ref.h"
#include "scaling.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NVER 1024

static void sync_row(bench_run *run)
{
    clphys_sync_cost c;
    clphys_status st = clphys_measure_sync(&run->ctx, 1, 64, run->repeat < 9 ? 9 : run->repeat, &c);
    if (st) {
        bench_fail(run, "sync", "empty launches", clphys_last_error(NULL));
        return;
    }
    bench_row row;
    memset(&row, 0, sizeof row);
    snprintf(row.path, sizeof row.path, "sync");
    snprintf(row.variant, sizeof row.variant, "empty-launches");
    row.n = c.max_launches;
    row.repeat = c.repeat;
    row.kernel_s_median = row.kernel_s_min = c.t_sync_s;
    row.total_s_median = c.t_tot_s[c.points - 1];
    row.rate = c.t_sync_s > 0 ? 1 / c.t_sync_s : 0;
    snprintf(row.rate_unit, sizeof row.rate_unit, "syncs/s");
    row.verified = 1; /* a measurement of the platform: nothing to compare */
    int k = snprintf(row.params, sizeof row.params,
                     "{\"t_sync_s\":%.6g,\"t_launch_s\":%.6g,\"rms_residual_s\":%.3g,\"devices\":1,\"ranks\":1,"
                     "\"points\":[",
                     c.t_sync_s, c.t_launch_s, c.rms_residual_s);
    for (int i = 0; i < c.points && k < (int)sizeof row.params - 64; i++)
        k += snprintf(row.params + k, sizeof row.params - k, "%s[%g,%.6g]", i ? "," : "", c.n_sub[i], c.t_tot_s[i]);
    snprintf(row.params + k, sizeof row.params - k, "]}");
    snprintf(row.note, sizeof row.note,
             "t_tot(N_sub) = t_sync + N_sub t_launch fitted (Miki et al., sec. 5): "
             "t_sync %.3g us, t_launch %.3g us",
             1e6 * c.t_sync_s, 1e6 * c.t_launch_s);
    bench_add_row(run, &row);
}

/* One configuration; *span gets its median kernel span (0 on failure). */
static void one_case(bench_run *run, long long n, const double *x, const double *ref, int nv, int fp64, int queues,
                     int j_split, double span_q1, double *span)
{
    *span = 0;
    clphys_nbody_gravity_params prm = {0,
                                       fp64 ? CLPHYS_FP64 : CLPHYS_FP32,
                                       CLPHYS_NBODY_GRAVITY_AUTO,
                                       1.0,
                                       BENCH_GRAVITY_EPS,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       j_split,
                                       0};
    clphys_nbody_gravity_multi *m = NULL;
    char what[64];
    snprintf(what, sizeof what, "%s n=%lld q%d", fp64 ? "fp64" : "fp32", n, queues);
    clphys_status st = clphys_nbody_gravity_multi_create(&run->ctx, 1, queues, &prm, &m);
    double *acc = malloc(3 * (size_t)n * sizeof *acc), *sp = malloc(run->repeat * sizeof *sp),
           *ks = malloc(run->repeat * sizeof *ks), *ts = malloc(run->repeat * sizeof *ts);
    clphys_nbody_gravity_timing t;
    if (!st && (!acc || !sp || !ks || !ts)) st = CLPHYS_ERR_OUT_OF_MEMORY;
    if (!st) st = clphys_nbody_gravity_multi_compute(m, n, x, 2 * n, x, n, acc, NULL, &t); /* warm-up */
    for (int r = 0; r < run->repeat && !st; r++) {
        st = clphys_nbody_gravity_multi_compute(m, n, x, 2 * n, x, n, acc, NULL, &t);
        sp[r] = t.kernel_span_s, ks[r] = t.kernel_s, ts[r] = t.total_s;
    }
    if (st) {
        bench_fail(run, "nbody_gravity_multi", what, clphys_last_error(run->ctx));
    } else {
        bench_row row;
        char variant[48];
        snprintf(variant, sizeof variant, "%.36s-q%d%s", clphys_nbody_gravity_multi_info(m, NULL, NULL), queues,
                 j_split == 1 ? "-nosplit" : "");
        bench_nbody_gravity_row(&row, "nbody_gravity_multi", variant, fp64, n, run->repeat);
        *span = ref_median(sp, run->repeat);
        row.kernel_s_median = *span;
        row.kernel_s_min = ref_min(sp, run->repeat);
        row.total_s_median = ref_median(ts, run->repeat);
        const double inter = 2.0 * (double)n * (double)n;
        bench_nbody_gravity_rates(run, &row, inter, *span, fp64, 1);
        const double eff = queues == 2 && *span > 0 && span_q1 > 0 ? span_q1 / *span : 1;
        /* two queues: the scaling schema with one device, the baseline the
         * same two blocks on one queue (efficiency > 1: the measured
         * concurrency); seed_efficiency: the seed's own name for it */
        char sj[512] = "\"gpus\":1,\"ranks\":1";
        if (queues == 2) {
            const bench_scaling sc = {.gpus = 1,
                                      .ranks = 1,
                                      .n_per_device = n,
                                      .baseline_s = span_q1,
                                      .step_s = *span,
                                      .exchange_s = -1,
                                      .exchange_floor_s = -1};
            bench_scaling_json(&sc, sj, sizeof sj);
        }
        snprintf(row.params, sizeof row.params,
                 "{\"eps\":%g,%s,\"particles_per_device\":%lld,\"queues\":%d,\"j_blocks\":2,\"j_split\":%d,"
                 "\"concurrency\":%.4g,\"seed_efficiency\":%.4g,\"kernel_s_sum\":%.6g,\"interactions_per_call\":%.6g}",
                 BENCH_GRAVITY_EPS, sj, n, queues, j_split, eff, eff, ref_median(ks, run->repeat), inter);
        bench_nbody_gravity_verify(run, &row, nv, acc, ref, fp64);
        if (queues == 2)
            snprintf(row.note, sizeof row.note,
                     "two j-blocks of %lld on two queues: %.3gx the one-queue rate "
                     "(the seed's super-linear factor)",
                     n, eff);
        bench_add_row(run, &row);
    }
    clphys_nbody_gravity_multi_destroy(m);
    free(acc), free(sp), free(ks), free(ts);
}

/* Over the devices of --device LIST (clphys_nbody_gravity_multi_create, two
 * lanes each), in the scaling schema: ni i-particles against all nj
 * j-particles per call; the baseline the first device alone with bi
 * i-particles against the same nj (strong: bi = ni, the whole problem;
 * weak: bi = one device's share, n i-particles against all N). */
static void devices_case(bench_run *run, int weak, long long n, int fp64)
{
    const int nd = run->ndevices;
    const long long N = weak ? n * nd : n, bi = weak ? n : N;
    char what[64];
    snprintf(what, sizeof what, "%s %s N=%lld over %d devices", fp64 ? "fp64" : "fp32", weak ? "weak" : "strong", N,
             nd);
    clphys_nbody_gravity_params prm = {
        0, fp64 ? CLPHYS_FP64 : CLPHYS_FP32, CLPHYS_NBODY_GRAVITY_AUTO, 1.0, BENCH_GRAVITY_EPS, 0, 0, 0, 0, 0, 0, 0, 0,
        0};
    double *x = bench_nbody_gravity_particles(N), *acc = malloc(3 * (size_t)N * sizeof *acc);
    const int nv = N < NVER ? (int)N : NVER, rep = run->repeat < 5 ? run->repeat : 5;
    double *ref = malloc(3 * (size_t)nv * sizeof *ref), t[2][5] = {{0}};
    clphys_status st = x && acc && ref ? CLPHYS_SUCCESS : CLPHYS_ERR_OUT_OF_MEMORY;
    if (st) bench_fail(run, "nbody_gravity_multi", what, "out of host memory");
    if (!st && run->verify) nbody_ref_gravity(nv, x, (int)N, x, 1.0, BENCH_GRAVITY_EPS, ref, NULL);
    clphys_nbody_gravity_multi *m = NULL;
    for (int k = 0; k < 2 && !st; k++) { /* 0: the first device alone, 1: all */
        clphys_nbody_gravity_timing tm;
        const size_t ni = k ? (size_t)N : (size_t)bi;
        st = clphys_nbody_gravity_multi_create(run->devices, k ? nd : 1, 2, &prm, &m);
        if (!st) st = clphys_nbody_gravity_multi_compute(m, ni, x, (size_t)N, x, 0, acc, NULL, &tm); /* warm-up */
        for (int r = 0; r < rep && !st; r++) {
            st = clphys_nbody_gravity_multi_compute(m, ni, x, (size_t)N, x, 0, acc, NULL, &tm);
            t[k][r] = tm.total_s;
        }
        if (st)
            bench_fail(run, "nbody_gravity_multi", what, clphys_last_error(run->ctx));
        else if (k) {
            const bench_scaling sc = {.gpus = bench_distinct_devices(run),
                                      .ranks = 1,
                                      .weak = weak,
                                      .n_per_device = N / nd,
                                      .baseline_s = ref_median(t[0], rep),
                                      .step_s = ref_median(t[1], rep),
                                      .exchange_s = -1,
                                      .exchange_floor_s = -1};
            bench_row row;
            const int at = bench_scaling_row(&row, &sc, "nbody_gravity_multi", fp64 ? "fp64" : "fp32", N, rep,
                                             "devices-%s", weak ? "weak" : "strong");
            row.kernel_s_median = row.kernel_s_min = sc.step_s;
            row.total_s_median = sc.step_s;
            bench_nbody_gravity_rates(run, &row, (double)N * (double)N, sc.step_s, fp64, sc.gpus);
            snprintf(row.params + at, sizeof row.params - at,
                     ",\"eps\":%g,\"devices\":%d,\"queues\":2,\"baseline\":\"the first device, %lld "
                     "i-particles against all %lld\",\"kernel_variant\":\"%s\"}",
                     BENCH_GRAVITY_EPS, nd, bi, N, clphys_nbody_gravity_multi_info(m, NULL, NULL));
            bench_nbody_gravity_verify(run, &row, nv, acc, ref, fp64);
            snprintf(row.note, sizeof row.note,
                     "one call's wall time (uploads and read-back included), medians; %s "
                     "scaling over %d devices: %.3gx",
                     weak ? "weak" : "strong", nd, sc.baseline_s / sc.step_s);
            bench_add_row(run, &row);
        }
        clphys_nbody_gravity_multi_destroy(m);
        m = NULL;
    }
    free(x), free(acc), free(ref);
}

int bench_nbody_gravity_multi(bench_run *run)
{
    if (run->ndevices > 1) { /* --device LIST: the scaling rows over the devices */
        const long long strong[] = {1 << 20, 1 << 23}, weak[] = {8192, 65536, 1 << 20};
        const long long qs[] = {4096}, qw[] = {512, 2048};
        for (int f = 0; f < 2; f++) {
            if (!bench_wants_precision(run, f ? "fp64" : "fp32")) continue;
            const int ns = run->quick ? 1 : run->full ? 2 : 1, nw = run->quick ? 2 : 3;
            for (int i = 0; i < ns; i++) devices_case(run, 0, run->quick ? qs[i] : strong[i], f);
            for (int i = 0; i < nw; i++) devices_case(run, 1, run->quick ? qw[i] : weak[i], f);
        }
        return 0;
    }
    sync_row(run);
    /* the default run: the ends and the middle of the GPU sizes (--full: all) */
    const long long gpu[] = {1024, 8192, 65536, 2048, 4096, 16384}, cpu[] = {512, 2048};
    const long long *sz = run->quick ? cpu : gpu;
    int ns = run->quick ? 2 : run->full ? 6 : 3;
    if (run->size > 0) sz = &run->size, ns = 1;
    if (run->size > 0x3fffffff) {
        bench_fail(run, "nbody_gravity_multi", "size", "n above 2^30 - 1");
        return 1;
    }
    for (int f = 0; f < 2; f++) {
        if (!bench_wants_precision(run, f ? "fp64" : "fp32")) continue;
        for (int s = 0; s < ns; s++) {
            const long long n = sz[s];
            double *x = bench_nbody_gravity_particles(2 * n);
            const int nv = n < NVER ? (int)n : NVER;
            double *ref = malloc(3 * (size_t)nv * sizeof *ref);
            if (!x || !ref) {
                bench_fail(run, "nbody_gravity_multi", "allocation", "out of host memory");
                free(x), free(ref);
                return 1;
            }
            if (run->verify) nbody_ref_gravity(nv, x, (int)(2 * n), x, 1.0, BENCH_GRAVITY_EPS, ref, NULL);
            for (int split = run->dev->is_gpu ? 1 : 0; split >= 0; split--) {
                double q1, q2;
                one_case(run, n, x, ref, nv, f, 1, split, 0, &q1);
                one_case(run, n, x, ref, nv, f, 2, split, q1, &q2);
            }
            free(x), free(ref);
        }
    }
    return 0;
}
