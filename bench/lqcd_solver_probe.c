/* lqcd_solver_probe.c — diagnostic, not part of the suite: what each change to
 * the solver's time to solution buys (bench/lqcd-notes.md), on a 32^4 smooth
 * field as in `clphys bench --path solver` (kappa 0.122, tol 1e-10).
 * 1. The pieces of moving b and x: host copy into / out of page-locked
 *    memory (three ways), the DMA each way, a pageable write for reference.
 * 2. Time to solution (host b to host x, solver plan made before) for the
 *    solver plan's switches (lqcd_solver_knobs), one plan per solver and
 *    precision, the variants interleaved within each repetition; medians.
 * Build (from the repository root, after ninja -C build-rel):
 *   gcc -O2 -std=gnu11 -fopenmp -Iinclude -I. bench/lqcd_solver_probe.c -Lbuild-rel -lclphys -lOpenCL -lm \
 *       -Wl,-rpath,'$ORIGIN' -o build-rel/lqcd_solver_probe
 * Run: lqcd_solver_probe [DEVICE_SPEC] [L] [REPS] */
#include "host/lqcd/lqcd_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(const double *t, int n)
{
    double s[64];
    memcpy(s, t, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* as bench/lqcd.c: random spinor in [-1, 1), smooth field reunitarize(1 + eps R) */
static void fill_spinor(double *psi, long long n, uint64_t seed)
{
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < n; i++) psi[i] = (double)(mix(seed + (uint64_t)i * 0x9e3779b97f4a7c15ULL) >> 11) * 0x1.0p-52 - 1;
}
static void smooth_field(clphys_gauge_field *g, double eps, uint64_t seed)
{
    clphys_gauge_hot(g, seed);
    long long n = g->volume * 4;
    double *u = g->u;
    for (long long l = 0; l < n; l++)
        for (int k = 0; k < 9; k++) {
            u[l * 18 + 2 * k] *= eps;
            u[l * 18 + 2 * k + 1] *= eps;
            if (k % 4 == 0) u[l * 18 + 2 * k] += 1;
        }
    clphys_gauge_reunitarize(g);
}

#define NV 11
static const struct {
    const char *name;
    lqcd_solver_knobs k; /* dev_scalars, fused_outer, xfer_chunks, copy_mode, spec_download, read_queue */
} var[NV] = {
    {"A main", {0, 0, 1, 0, 0, 0}},          {"B dev", {1, 0, 1, 0, 0, 0}},
    {"C dev+rq", {1, 0, 1, 0, 0, 1}},        {"D +fuse", {1, 1, 1, 0, 0, 1}},
    {"E +ch8 cp1", {1, 1, 8, 1, 0, 1}},      {"F +spec (dflt)", {1, 1, 8, 1, 1, 1}},
    {"G F cp2(nt)", {1, 1, 8, 2, 1, 1}},     {"H F ch4", {1, 1, 4, 1, 1, 1}},
    {"I F ch16", {1, 1, 16, 1, 1, 1}},       {"J F cp0", {1, 1, 8, 0, 1, 1}},
    {"K xfer only", {0, 0, 8, 1, 1, 0}},
};

int main(int argc, char **argv)
{
    clphys_context *ctx;
    if (clphys_context_create(argc > 1 ? argv[1] : NULL, &ctx)) {
        fprintf(stderr, "%s\n", clphys_last_error(NULL));
        return 1;
    }
    const int L = argc > 2 ? atoi(argv[2]) : 32, reps = argc > 3 ? atoi(argv[3]) : 5;
    const clphys_device_info *d = clphys_context_device(ctx);
    printf("# %s, %s; lattice %d^4\n", d->name, d->driver_version, L);
    int dims[4] = {L, L, L, L};
    clphys_gauge_field g;
    if (clphys_gauge_create(dims, &g)) return 1;
    smooth_field(&g, 0.35, 777);
    const long long V = g.volume;
    const size_t nd = (size_t)V * 24, bytes = nd * sizeof(double);
    double *b = malloc(bytes), *x = malloc(bytes);
    fill_spinor(b, (long long)nd, 4242);
    fill_spinor(x, (long long)nd, 1); /* touched */

    /* ---- 1. the pieces of a transfer ---- */
    {
        cl_mem pinned, dev;
        cl_int e;
        if (cp_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &pinned) ||
            cp_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &dev))
            return 1;
        double *pin = clEnqueueMapBuffer(ctx->queue, pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &e);
        if (!pin) return 1;
        double t[5][16];
        const int R = 9;
        for (int r = -1; r < R; r++) {
            double t0;
            for (int m = 0; m < 3; m++) {
                t0 = cp_now();
                lqcd_host_copy(pin, b, nd, m);
                if (r >= 0) t[m][r] = cp_now() - t0;
            }
            t0 = cp_now();
            clEnqueueWriteBuffer(ctx->queue, dev, CL_TRUE, 0, bytes, pin, 0, NULL, NULL);
            if (r >= 0) t[3][r] = cp_now() - t0;
            t0 = cp_now();
            clEnqueueReadBuffer(ctx->queue, dev, CL_TRUE, 0, bytes, pin, 0, NULL, NULL);
            if (r >= 0) t[4][r] = cp_now() - t0;
        }
        static const char *nm[5] = {"host copy into pinned, 512 KB pieces (mode 0)", "host copy, one piece per thread (mode 1)",
                                    "host copy, non-temporal stores (mode 2)", "DMA write from pinned", "DMA read into pinned"};
        for (int i = 0; i < 5; i++)
            printf("xfer %-48s %8.2f ms %7.1f GB/s\n", nm[i], median(t[i], R) * 1e3, bytes / median(t[i], R) * 1e-9);
        for (int r = -1; r < R; r++)
            for (int m = 0; m < 3; m++) {
                double t0 = cp_now();
                lqcd_host_copy(x, pin, nd, m);
                if (r >= 0) t[m][r] = cp_now() - t0;
            }
        for (int m = 0; m < 3; m++)
            printf("xfer host copy out of pinned, mode %d                          %8.2f ms %7.1f GB/s\n", m,
                   median(t[m], R) * 1e3, bytes / median(t[m], R) * 1e-9);
        for (int r = -1; r < 3; r++) {
            double t0 = cp_now();
            clEnqueueWriteBuffer(ctx->queue, dev, CL_TRUE, 0, bytes, b, 0, NULL, NULL);
            if (r >= 0) t[0][r] = cp_now() - t0;
            t0 = cp_now();
            clEnqueueReadBuffer(ctx->queue, dev, CL_TRUE, 0, bytes, x, 0, NULL, NULL);
            if (r >= 0) t[1][r] = cp_now() - t0;
        }
        printf("xfer %-48s %8.2f ms\nxfer %-48s %8.2f ms\n", "pageable write (reference)", median(t[0], 3) * 1e3,
               "pageable read (reference)", median(t[1], 3) * 1e3);
        clEnqueueUnmapMemObject(ctx->queue, pinned, pin, 0, NULL, NULL);
        clFinish(ctx->queue);
        clReleaseMemObject(pinned);
        clReleaseMemObject(dev);
    }
    fflush(stdout);

    /* ---- 2. time to solution per switch setting ---- */
    const double kappa = 0.122;
    clphys_dslash_params p64p = {.precision = CLPHYS_FP64, .reconstruct = 12, .kappa = kappa, .antiperiodic_t = 1},
                         p32p = {.precision = CLPHYS_FP32, .reconstruct = 12, .kappa = kappa, .antiperiodic_t = 1};
    clphys_dslash_plan *p64 = NULL, *p32 = NULL;
    if (clphys_dslash_plan_create(ctx, &g, &p64p, &p64) || clphys_dslash_plan_create(ctx, &g, &p32p, &p32)) {
        fprintf(stderr, "%s\n", clphys_last_error(ctx));
        return 1;
    }
    enum { NC = 8 };
    static const char *cname[NC] = {"cgnr own fp64",    "cgnr own mixed",    "bicg own fp64",    "bicg own mixed",
                                    "cgnr clblast fp64", "cgnr clblast mixed", "bicg clblast fp64", "bicg clblast mixed"};
    clphys_solver_plan *sp[NC];
    for (int c = 0; c < NC; c++) {
        clphys_solver_params prm = {.kind = (c / 2) % 2 ? CLPHYS_SOLVER_BICGSTAB : CLPHYS_SOLVER_CGNR, .tol = 1e-10,
                                    .max_iter = 20000, .mixed = c % 2, .own_blas = c < 4};
        if (clphys_solver_plan_create(p64, p32, &prm, &sp[c])) {
            fprintf(stderr, "%s\n", clphys_last_error(ctx));
            return 1;
        }
    }
    /* clBLAST plans: only the transfer switches apply (A and K) */
    static double tot[NC][NV][16], itr[NC][NV][16], up[NC][NV][16], dn[NC][NV][16];
    static int its[NC][NV], rst[NC][NV];
    static double res_[NC][NV];
    int R = reps > 16 ? 16 : reps;
    for (int r = -1; r < R; r++)
        for (int c = 0; c < NC; c++)
            for (int v = 0; v < NV; v++) {
                if (c >= 4 && v != 0 && v != NV - 1 && v != 5) continue;
                lqcd_solver_set_knobs(sp[c], &var[v].k);
                clphys_solver_result res;
                clphys_status st = clphys_solver_solve(sp[c], b, x, &res);
                if (st) {
                    printf("FAIL %s %s: %s\n", cname[c], var[v].name, clphys_last_error(ctx));
                    return 1;
                }
                if (r < 0) continue;
                tot[c][v][r] = res.seconds, itr[c][v][r] = res.iterate_s, up[c][v][r] = res.upload_s,
                dn[c][v][r] = res.download_s;
                its[c][v] = res.iterations, rst[c][v] = res.restarts, res_[c][v] = res.rel_residual;
            }
    printf("\n%-19s %-15s %5s %8s %8s %7s %7s %8s %9s\n", "solver", "variant", "it/rs", "total_ms", "iter_ms", "up_ms",
           "down_ms", "us/iter", "rel_res");
    for (int c = 0; c < NC; c++)
        for (int v = 0; v < NV; v++) {
            if (c >= 4 && v != 0 && v != NV - 1 && v != 5) continue;
            printf("%-19s %-15s %2d/%d %8.2f %8.2f %7.2f %7.2f %8.1f %9.2e\n", cname[c], var[v].name, its[c][v], rst[c][v],
                   median(tot[c][v], R) * 1e3, median(itr[c][v], R) * 1e3, median(up[c][v], R) * 1e3,
                   median(dn[c][v], R) * 1e3, median(itr[c][v], R) / its[c][v] * 1e6, res_[c][v]);
        }
    printf("\nspeed-up mixed vs fp64 (time to solution, medians; spread: min-max of fp64/mixed per repetition)\n");
    for (int c = 0; c < NC; c += 2)
        for (int v = 0; v < NV; v++) {
            if (c >= 4 && v != 0 && v != NV - 1 && v != 5) continue;
            double lo = 1e9, hi = 0;
            for (int r = 0; r < R; r++) {
                double q = tot[c][v][r] / tot[c + 1][v][r];
                lo = q < lo ? q : lo, hi = q > hi ? q : hi;
            }
            printf("%-14.14s %-15s %8.2f / %7.2f ms = %5.3fx  (%5.3f-%5.3f)\n", cname[c], var[v].name,
                   median(tot[c][v], R) * 1e3, median(tot[c + 1][v], R) * 1e3,
                   median(tot[c][v], R) / median(tot[c + 1][v], R), lo, hi);
        }
    for (int c = 0; c < NC; c++) clphys_solver_plan_destroy(sp[c]);
    clphys_dslash_plan_destroy(p64);
    clphys_dslash_plan_destroy(p32);
    clphys_gauge_destroy(&g);
    free(b), free(x);
    clphys_context_destroy(ctx);
    return 0;
}
