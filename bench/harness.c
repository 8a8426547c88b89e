/* harness.c — collecting benchmark rows, relating them to measured limits, and
 * the host clock of the wall times. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void bench_add_row(bench_run *run, const bench_row *row)
{
    if (run->nrows == run->cap) {
        int cap = run->cap ? 2 * run->cap : 32;
        bench_row *r = realloc(run->rows, cap * sizeof *r);
        if (!r) {
            run->failures++;
            return;
        }
        run->rows = r, run->cap = cap;
    }
    run->rows[run->nrows++] = *row;
    if (run->verify && !row->verified) run->failures++;
    run->path_rows++;
    if (run->tty && (!run->verify || row->verified)) {
        bench_progress(run);
        return;
    }
    if (run->tty) fprintf(stderr, "\r\033[K");
    fprintf(stderr, "  %-9s %-22s %-4s n=%-9lld kernel %.4g s  %.4g %s  %s\n", row->path, row->variant, row->precision,
            row->n, row->kernel_s_median, row->rate, row->rate_unit,
            !run->verify    ? "(not verified)"
            : row->verified ? "ok"
                            : "NOT VERIFIED");
}

void bench_progress(bench_run *run)
{
    if (!run->tty || !run->cur_path) return;
    const double el = bench_now() - run->t_start;
    char est[48] = "";
    /* the paths differ by 10x in time: estimate from those done, once one is */
    if (run->path_k > 1 && run->done_s > 0)
        snprintf(est, sizeof est, ", ~%.0f s left",
                 run->done_s / (run->path_k - 1) * (run->path_n - run->path_k + 1) - (bench_now() - run->path_t0));
    fprintf(stderr, "\r\033[K%s (path %d of %d): case %d done, %.0f s elapsed%s", run->cur_path, run->path_k,
            run->path_n, run->path_rows, el, est);
    fflush(stderr);
}

void bench_fail(bench_run *run, const char *path, const char *what, const char *why)
{
    run->failures++;
    if (run->tty) fprintf(stderr, "\r\033[K");
    fprintf(stderr, "  %-9s %-22s FAILED: %s\n", path, what, why);
}

int bench_wants_precision(const bench_run *run, const char *precision)
{
    if (run->precision && strcmp(run->precision, precision)) return 0;
    if (!strcmp(precision, "fp64") && !run->dev->fp64) return 0;
    return 1;
}

void bench_set_fraction(const bench_run *run, bench_row *row, const char *limit, double achieved)
{
    double lim = 0;
    if (!strcmp(limit, "fma_fp32_flops"))
        lim = run->limits.fma_fp32_flops;
    else if (!strcmp(limit, "fma_fp64_flops"))
        lim = run->limits.fma_fp64_flops;
    else if (!strcmp(limit, "copy_bytes_per_s"))
        lim = run->limits.copy_bytes_per_s;
    else if (!strcmp(limit, "triad_bytes_per_s"))
        lim = run->limits.triad_bytes_per_s;
    snprintf(row->limit, sizeof row->limit, "%s", limit);
    row->fraction_of_limit = lim > 0 ? achieved / lim : 0;
}

double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int bench_interleave(int nvariants, int rounds, double (*time)(int k, void *user), void *user, double *s)
{
    if (rounds > BENCH_MAX_ROUNDS) rounds = BENCH_MAX_ROUNDS;
    if (nvariants > BENCH_MAX_VARIANTS) nvariants = BENCH_MAX_VARIANTS;
    unsigned char dead[BENCH_MAX_VARIANTS] = {0};
    for (int i = 0; i < nvariants * rounds; i++) s[i] = -1;
    /* one untimed call each: first launches build or specialise kernels */
    for (int k = 0; k < nvariants; k++) dead[k] = !(time(k, user) >= 0);
    for (int r = 0; r < rounds; r++)
        for (int j = 0; j < nvariants; j++) {
            /* the first variant of a round turns, so that none always runs
             * after the same one */
            const int k = (r + j) % nvariants;
            if (dead[k]) continue;
            const double t = time(k, user);
            if (t >= 0)
                s[k * rounds + r] = t;
            else
                dead[k] = 1;
        }
    int ok = 0;
    for (int k = 0; k < nvariants; k++) {
        if (dead[k])
            for (int r = 0; r < rounds; r++) s[k * rounds + r] = -1;
        ok += !dead[k];
    }
    return ok;
}

void bench_set_rounds(bench_row *r, const double *s, int rounds)
{
    if (rounds > BENCH_MAX_ROUNDS) rounds = BENCH_MAX_ROUNDS;
    memcpy(r->round_s, s, (size_t)rounds * sizeof *s);
    r->nrounds = rounds;
    double tmp[BENCH_MAX_ROUNDS];
    memcpy(tmp, s, (size_t)rounds * sizeof *s);
    r->kernel_s_median = ref_median(tmp, rounds);
    r->kernel_s_min = ref_min(s, rounds);
    r->repeat = rounds;
}

int bench_rounds(const bench_run *run, int gpu_default, int cpu_default)
{
    int n = run->repeat_given ? run->repeat : run->dev->is_gpu ? gpu_default : cpu_default;
    return n < 1 ? 1 : n > BENCH_MAX_ROUNDS ? BENCH_MAX_ROUNDS : n;
}

int bench_fcc_cells(long long n)
{
    const double m = floor(cbrt((double)n / 4.0) + 0.5);
    return m < 1 ? 1 : m > 1e6 ? 1000000 : (int)m;
}

int bench_grid_side(long long cells, int nz)
{
    const double m = floor(sqrt((double)cells / nz) + 0.5);
    return m < 4 ? 4 : m > 1e6 ? 1000000 : (int)m;
}

int bench_host_load(double load[3], int *cpus)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    *cpus = n > 0 ? (int)n : 0;
    /* /proc/loadavg: "1min 5min 15min running/total lastpid"; absent outside Linux */
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return -1;
    const int got = fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]);
    fclose(f);
    return got == 3 && *cpus > 0 ? 0 : -1;
}

int bench_host_cpu(double *busy, double *steal)
{
    /* /proc/stat's first line: user nice system idle iowait irq softirq
     * steal (USER_HZ ticks); absent outside Linux */
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    unsigned long long v[8] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                   &v[7]);
    fclose(f);
    if (n != 8) return -1;
    *busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6]);
    *steal = (double)v[7];
    return 0;
}

int bench_distinct_devices(const bench_run *run)
{
    int n = 0;
    for (int i = 0; i < run->ndevices; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= clphys_context_cl_device(run->devices[j]) == clphys_context_cl_device(run->devices[i]);
        n += !seen;
    }
    return n;
}
