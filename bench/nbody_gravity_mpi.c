/* nbody_gravity_mpi.c — bench entry gravity_mpi: one distributed force calculation
 * (clphys_nbody_mpi.h) per exchange algorithm, under an MPI launcher
 * (`mpirun -np P clphys bench --path nbody_gravity_mpi`; without one it says so
 * and adds no row), each rank on its bench device with n particles (GPU
 * 4096, 8192, 65536; quick 256, 1024; --size n), beside the performance
 * model's prediction from measured inputs:
 *   t_calc(n)     one kernel of n x n on rank 0's device alone (median);
 *   concurrency   two j-blocks of n on two queues against one (wall spans);
 *   latency, bandwidth  clphys_mpi_measure_network (ranks 0 and P - 1);
 *   t_sync        clphys_mpi_measure_sync (empty launches + barrier, fitted);
 *   ranks per device k: ranks of one host whose GPUs have the same
 *                 platform and index are taken to share it (time-sliced); a
 *                 CPU device counts as each rank's own (run the ranks with
 *                 POCL_MAX_PTHREAD_COUNT = cores / ranks); the environment
 *                 variable CLPHYS_BENCH_RANKS_PER_DEVICE overrides both.
 * Measured: every rank's split of each call (clphys_nbody_gravity_timing), the
 * largest over the ranks per call, medians over the calls.  The scaling
 * schema (scaling.h, weak): baseline_s = rank 0's device alone computing
 * its share, k n i-particles against all N = P n j-particles.  Beside it
 * seed_efficiency, as the seed defines weak scaling: P T_1 / (k T_P), T_1 =
 * the same call on rank 0 alone (MPI_COMM_SELF) with k n particles (k n
 * against k n: less work than a device does in the run, hence up to 2.87).  Ranks sharing one device test overlap,
 * hidden exchange and the model, not scaling.  Rows only on rank 0; verified against the fp64 reference on rank 0's
 * first 1024 particles. */
#include "bench.h"
#include "bench_mpi.h"
#include "nbody_bench.h"
#include "host/ref/nbody_ref.h"
#include "scaling.h"

#include "clphys_nbody_mpi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NVER 1024

typedef struct {
    MPI_Comm comm;
    int P, rank, k, gpus;
    clphys_network_limits net;
    clphys_sync_cost sync;
} mpi_env;

/* Ranks per device and distinct devices (bench_mpi.h). */
static void sharing(bench_run *run, mpi_env *e) { bench_mpi_sharing(run, e->comm, &e->k, &e->gpus); }

static double median_of(double *v, int n) { return ref_median(v, n); }

/* t_calc(n) and the two-queue concurrency on this rank's device alone. */
static clphys_status single_device(bench_run *run, long long n, const double *x, int fp64, double *t_calc, double *conc)
{
    clphys_nbody_gravity_params prm = {
        0, fp64 ? CLPHYS_FP64 : CLPHYS_FP32, CLPHYS_NBODY_GRAVITY_AUTO, 1.0, BENCH_GRAVITY_EPS, 0, 0, 0, 0, 0, 0, 0, 0,
        0};
    double *acc = malloc(3 * (size_t)n * sizeof *acc), *t = malloc(run->repeat * sizeof *t);
    clphys_status st = acc && t ? CLPHYS_SUCCESS : CLPHYS_ERR_OUT_OF_MEMORY; /* (message: none; rare) */
    double span[2] = {0, 0};
    for (int q = 1; q <= 2 && !st; q++) {
        clphys_nbody_gravity_multi *m = NULL;
        clphys_nbody_gravity_timing tm;
        st = clphys_nbody_gravity_multi_create(&run->ctx, 1, q, &prm, &m);
        if (!st) st = clphys_nbody_gravity_multi_compute(m, n, x, (q == 1 ? 1 : 2) * n, x, n, acc, NULL, &tm);
        for (int r = 0; r < run->repeat && !st; r++) { /* q = 1: one block (t_calc); 2: two blocks */
            st = clphys_nbody_gravity_multi_compute(m, n, x, (q == 1 ? 1 : 2) * n, x, n, acc, NULL, &tm);
            t[r] = tm.kernel_span_s;
        }
        if (!st) span[q - 1] = median_of(t, run->repeat);
        clphys_nbody_gravity_multi_destroy(m);
    }
    *t_calc = span[0];
    *conc = span[1] > 0 ? fmin(2, fmax(1, 2 * span[0] / span[1])) : 1;
    free(acc), free(t);
    return st;
}

/* The weak-scaling baseline: this device alone computing ni i-particles
 * against all nj (one call's wall time, median). */
static clphys_status weak_baseline(bench_run *run, long long ni, const double *x, long long nj, int fp64, double *t_s)
{
    clphys_nbody_gravity_params prm = {
        0, fp64 ? CLPHYS_FP64 : CLPHYS_FP32, CLPHYS_NBODY_GRAVITY_AUTO, 1.0, BENCH_GRAVITY_EPS, 0, 0, 0, 0, 0, 0, 0, 0,
        0};
    double *acc = malloc(3 * (size_t)ni * sizeof *acc), *t = malloc(run->repeat * sizeof *t);
    clphys_status st = acc && t ? CLPHYS_SUCCESS : CLPHYS_ERR_OUT_OF_MEMORY;
    clphys_nbody_gravity_multi *m = NULL;
    clphys_nbody_gravity_timing tm;
    if (!st) st = clphys_nbody_gravity_multi_create(&run->ctx, 1, 2, &prm, &m);
    if (!st) st = clphys_nbody_gravity_multi_compute(m, (size_t)ni, x, (size_t)nj, x, 0, acc, NULL, &tm);
    for (int r = 0; r < run->repeat && !st; r++) {
        st = clphys_nbody_gravity_multi_compute(m, (size_t)ni, x, (size_t)nj, x, 0, acc, NULL, &tm);
        t[r] = tm.total_s;
    }
    if (!st) *t_s = median_of(t, run->repeat);
    clphys_nbody_gravity_multi_destroy(m);
    free(acc), free(t);
    return st;
}

/* Median over `repeat` calls of the largest over the ranks of each part. */
static clphys_status timed_calls(bench_run *run, MPI_Comm comm, clphys_nbody_gravity_mpi *g, long long n,
                                 const double *x, double *acc, double med[6])
{
    double *v = malloc(6 * (size_t)run->repeat * sizeof *v), *col = malloc(run->repeat * sizeof *col);
    clphys_status st = v && col ? CLPHYS_SUCCESS : CLPHYS_ERR_OUT_OF_MEMORY;
    st = clphys_mpi_agree(comm, NULL, st);
    clphys_nbody_gravity_timing t;
    if (!st) st = clphys_nbody_gravity_mpi_compute(g, n, x, acc, NULL, &t); /* warm-up */
    for (int r = 0; r < run->repeat && !st; r++) {
        st = clphys_nbody_gravity_mpi_compute(g, n, x, acc, NULL, &t);
        double p[6] = {t.total_s, t.kernel_s, t.kernel_span_s, t.exchange_s, t.exposed_s, t.bytes_sent};
        if (!st && MPI_Allreduce(MPI_IN_PLACE, p, 6, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS) st = CLPHYS_ERR_IO;
        memcpy(v + 6 * r, p, sizeof p);
    }
    for (int c = 0; c < 6 && !st; c++) {
        for (int r = 0; r < run->repeat; r++) col[r] = v[6 * r + c];
        med[c] = median_of(col, run->repeat);
    }
    free(v), free(col);
    return st;
}

static void one_size(bench_run *run, mpi_env *e, long long n, int fp64)
{
    const long long N = n * e->P;
    char what[64];
    snprintf(what, sizeof what, "%s n=%lld per rank", fp64 ? "fp64" : "fp32", n);
    /* room for the run (N), T_1 (k n) and the two blocks of the concurrency probe (2 n) */
    long long nx = N > e->k * n ? N : e->k * n;
    if (nx < 2 * n) nx = 2 * n;
    double *x = bench_nbody_gravity_particles(nx), *acc = malloc(3 * (size_t)(e->k * n) * sizeof *acc);
    const int nv = n < NVER ? (int)n : NVER;
    double *ref = malloc(3 * (size_t)nv * sizeof *ref);
    clphys_status st = x && acc && ref ? CLPHYS_SUCCESS : CLPHYS_ERR_OUT_OF_MEMORY;
    /* the model's single-device inputs and T_1, measured on rank 0 while the others wait */
    double in[4] = {0, 1, 0, 0}; /* t_calc, concurrency, T_1, the weak-scaling baseline */
    if (!st && e->rank == 0) {
        st = single_device(run, n, x, fp64, &in[0], &in[1]);
        if (!st) st = weak_baseline(run, e->k * n, x, N, fp64, &in[3]);
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
                                           0,
                                           0};
        clphys_nbody_gravity_mpi *g1 = NULL;
        double med[6] = {0};
        if (!st)
            st = clphys_nbody_gravity_mpi_create(MPI_COMM_SELF, &run->ctx, 1, &prm, CLPHYS_NBODY_GRAVITY_EXCHANGE_RING,
                                                 0, &g1);
        if (!st) st = timed_calls(run, MPI_COMM_SELF, g1, e->k * n, x, acc, med);
        in[2] = med[0];
        clphys_nbody_gravity_mpi_destroy(g1);
    }
    if (st && e->rank == 0) /* the device's message, or the MPI plan's */
        bench_fail(run, "nbody_gravity_mpi", what,
                   clphys_last_error(run->ctx)[0] ? clphys_last_error(run->ctx) : clphys_last_error(NULL));
    if (clphys_mpi_agree(e->comm, NULL, st)) {
        free(x), free(acc), free(ref);
        return;
    }
    MPI_Bcast(in, 4, MPI_DOUBLE, 0, e->comm);
    if (run->verify && e->rank == 0) nbody_ref_gravity(nv, x, (int)N, x, 1.0, BENCH_GRAVITY_EPS, ref, NULL);
    /* HYBRID with its default group (the largest power of two dividing P) and,
     * where that is all of P, also with groups of 2: doubling in pairs, then
     * the ring of pairs */
    const clphys_nbody_gravity_exchange exs[] = {
        CLPHYS_NBODY_GRAVITY_EXCHANGE_RING, CLPHYS_NBODY_GRAVITY_EXCHANGE_DOUBLING,
        CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID, CLPHYS_NBODY_GRAVITY_EXCHANGE_ALLGATHER,
        CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID};
    const int groups[] = {0, 0, 0, 0, 2};
    const int nex = e->P >= 4 && e->P % 2 == 0 ? 5 : 4;
    for (int k = 0; k < nex; k++) {
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
                                           0,
                                           0};
        clphys_nbody_gravity_mpi *g = NULL;
        double med[6] = {0};
        st = clphys_nbody_gravity_mpi_create(e->comm, &run->ctx, 1, &prm, exs[k], groups[k], &g);
        if (!st) st = timed_calls(run, e->comm, g, n, x + 4 * (size_t)(e->rank * n), acc, med);
        if (st) {
            if (e->rank == 0) bench_fail(run, "nbody_gravity_mpi", what, clphys_last_error(NULL));
            clphys_nbody_gravity_mpi_destroy(g);
            continue;
        }
        clphys_nbody_gravity_exchange used;
        int group;
        const char *kvar = clphys_nbody_gravity_mpi_info(g, &used, &group);
        /* a noisy fit can put t_sync below 0: the model takes it as 0 */
        clphys_nbody_gravity_model mo = {used,
                                         group,
                                         e->P,
                                         e->k,
                                         (double)n,
                                         in[0],
                                         in[1],
                                         e->net.latency_s,
                                         e->net.bandwidth_bytes_per_s,
                                         fp64 ? 32 : 16,
                                         fmax(0, e->sync.t_sync_s)};
        clphys_nbody_gravity_prediction pr;
        memset(&pr, 0, sizeof pr);
        if (clphys_nbody_gravity_model_predict(&mo, &pr) && e->rank == 0)
            fprintf(stderr, "  gravity_mpi: no prediction: %s\n", clphys_last_error(NULL));
        if (e->rank == 0) {
            /* the schema: weak scaling, the baseline one device's share
             * (k n i-particles against all N); the seed's definition
             * (T_1 = k n against k n) kept as seed_efficiency */
            const bench_scaling sc = {.gpus = e->gpus,
                                      .ranks = e->P,
                                      .weak = 1,
                                      .n_per_device = N / e->gpus,
                                      .baseline_s = in[3],
                                      .step_s = med[0],
                                      .exchange_s = med[3],
                                      .exchange_floor_s = -1};
            bench_row row;
            const int at = bench_scaling_row(&row, &sc, "nbody_gravity_mpi", fp64 ? "fp64" : "fp32", N, run->repeat,
                                             "%s%s", clphys_nbody_gravity_exchange_name(used), groups[k] ? "-g2" : "");
            row.kernel_s_median = row.kernel_s_min = med[2];
            row.total_s_median = med[0];
            bench_nbody_gravity_rates(run, &row, (double)N * (double)N, med[0], fp64, e->gpus);
            const double eff = med[0] > 0 ? e->P * in[2] / (e->k * med[0]) : 0;
            int c =
                at +
                snprintf(row.params + at, sizeof row.params - at,
                         ",\"eps\":%g,\"ranks_per_device\":%d,\"devices_per_rank\":1,"
                         "\"particles_per_rank\":%lld,\"particles_per_device\":%lld,\"exchange\":\"%s\","
                         "\"group\":%d,\"seed_efficiency\":%.4g,\"predicted_s\":%.6g,\"predicted_efficiency\":%.4g,"
                         "\"kernel_s\":%.6g,\"kernel_span_s\":%.6g,"
                         "\"exposed_s\":%.6g,\"hidden_fraction\":%.4g,\"bytes_sent\":%.6g,"
                         "\"predicted_exchange_s\":%.6g,\"predicted_exposed_s\":%.6g,\"t_1_s\":%.6g,"
                         "\"t_calc_s\":%.6g,\"concurrency\":%.4g,\"t_sync_s\":%.6g,\"t_launch_s\":%.6g,"
                         "\"latency_s\":%.6g,\"bandwidth_bytes_per_s\":%.6g,\"kernel_variant\":\"%s\","
                         "\"model_curve\":[",
                         BENCH_GRAVITY_EPS, e->k, n, N / e->gpus, clphys_nbody_gravity_exchange_name(used), group, eff,
                         pr.step_s, pr.efficiency, med[1], med[2], med[4], med[3] > 0 ? 1 - med[4] / med[3] : 1, med[5],
                         pr.exchange_s, pr.exposed_s, in[2], in[0], in[1], e->sync.t_sync_s, e->sync.t_launch_s,
                         e->net.latency_s, e->net.bandwidth_bytes_per_s, kvar);
            /* the model's weak scaling with these inputs, one rank per device */
            for (int p = 1; p <= 256 && c < (int)sizeof row.params - 40; p *= 2) {
                clphys_nbody_gravity_model mp = mo;
                clphys_nbody_gravity_prediction q;
                mp.ranks = p, mp.ranks_per_device = 1, mp.group = 0;
                if (clphys_nbody_gravity_model_predict(&mp, &q)) q.efficiency = 0;
                c += snprintf(row.params + c, sizeof row.params - c, "%s[%d,%.4g]", p > 1 ? "," : "", p, q.efficiency);
            }
            snprintf(row.params + c, sizeof row.params - c, "]}");
            bench_nbody_gravity_verify(run, &row, nv, acc, ref, fp64);
            snprintf(row.note, sizeof row.note,
                     "P %d (k %d per device), n %lld: step %.4g ms, predicted %.4g ms; "
                     "efficiency %.3g (predicted %.3g); exchange %.4g ms, not hidden %.4g ms",
                     e->P, e->k, n, 1e3 * med[0], 1e3 * pr.step_s, eff, pr.efficiency, 1e3 * med[3], 1e3 * med[4]);
            bench_add_row(run, &row);
        }
        clphys_nbody_gravity_mpi_destroy(g);
    }
    free(x), free(acc), free(ref);
}

int bench_nbody_gravity_mpi(bench_run *run)
{
    mpi_env e;
    memset(&e, 0, sizeof e);
    if (!bench_mpi_begin("nbody_gravity_mpi", &e.comm, &e.rank, &e.P)) return 0;
    sharing(run, &e);
    clphys_status st = clphys_mpi_measure_network(e.comm, 1 << 20, 20, &e.net);
    if (!st) st = clphys_mpi_measure_sync(e.comm, &run->ctx, 1, 64, 9, &e.sync);
    if (st) {
        if (e.rank == 0) bench_fail(run, "nbody_gravity_mpi", "network/sync probes", clphys_last_error(NULL));
        return 1;
    }
    if (e.rank == 0)
        fprintf(stderr,
                "  gravity_mpi: %d ranks, %d per device; latency %.3g us, bandwidth %.3g GB/s, t_sync %.3g "
                "us, t_launch %.3g us\n",
                e.P, e.k, 1e6 * e.net.latency_s, 1e-9 * e.net.bandwidth_bytes_per_s, 1e6 * e.sync.t_sync_s,
                1e6 * e.sync.t_launch_s);
    const long long gpu[] = {4096, 8192, 65536}, cpu[] = {256, 1024};
    const long long *sz = run->quick ? cpu : gpu;
    int ns = run->quick ? 2 : 3;
    if (run->size > 0) sz = &run->size, ns = 1;
    for (int f = 0; f < 2; f++) {
        if (!bench_wants_precision(run, f ? "fp64" : "fp32")) continue;
        for (int s = 0; s < ns; s++) {
            if (sz[s] * e.P > 0x7fffffff) {
                if (e.rank == 0) bench_fail(run, "nbody_gravity_mpi", "size", "n P above 2^31 - 1");
                continue;
            }
            one_size(run, &e, sz[s], f);
        }
    }
    return 0;
}
