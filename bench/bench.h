/*
 * bench.h — the benchmark harness shared by every compute path (inside the
 * bench suite; the command calls the suite through bench_suite.h).
 * Benchmarks use only the public API (clphys.h) and the reference library
 * (host/ref/: fp64 references, ref_splitmix64/ref_uniform for inputs,
 * ref_median/ref_min for timings), so whatever they time an application can
 * do too.  A path adds rows with bench_add_row(); the harness prints them as
 * a table and writes the JSON described in docs/design.md.
 */
#ifndef CLPHYS_BENCH_H
#define CLPHYS_BENCH_H

#include "clphys.h"
#include "host/ref/ref_util.h"
#include <stdio.h>

/* The most interleaved rounds a row keeps (bench_row.round_s). */
#define BENCH_MAX_ROUNDS 32
/* The most variants bench_interleave times in one case. */
#define BENCH_MAX_VARIANTS 64

typedef struct {
    char path[32];     /* "nbody_gravity", "md_lj", "md", "md_neighbor", "lqcd_dslash", ... */
    char variant[48];  /* kernel variant name, "c-openmp" for the CPU ref  */
    char precision[8]; /* "fp32" | "fp64"                                  */
    long long n;       /* problem size (particles, sites, unknowns)        */
    char params[2048]; /* JSON object text, e.g. {"eps":0.01}; "" = {}     */
    int repeat;
    double kernel_s_median, kernel_s_min; /* profiled kernel time of one call     */
    double total_s_median;                /* one call including host<->device transfers       */
    double rate;                          /* the path's own rate, per second                  */
    char rate_unit[32];                   /* "interactions/s", "pair-evaluations/s", ...      */
    double gflops;                        /* at flops_convention, from kernel_s_median        */
    char flops_convention[64];
    double bytes_per_s; /* under the path's byte model; 0 if not declared   */
    char byte_model[96];
    double fraction_of_limit; /* of the measured limit named below                */
    char limit[32];           /* "fma_fp32_flops" | "fma_fp64_flops" | "copy_bytes_per_s" */
    double max_rel_error;     /* against the fp64 CPU reference                   */
    int verified;             /* 1 when max_rel_error is within the tolerance     */
    char note[256];           /* free text shown under the table, may be ""       */
    /* The row of the plan made with every choice left to auto: what it chose
     * ("" on other rows); the report sets auto_vs_best, its time over the
     * fastest row of the same case (path, precision, n, case_key). */
    char auto_choice[192];
    char case_key[32]; /* what else tells cases apart ("density=0.5"), "" */
    /* A case whose variants were timed in interleaved rounds (each variant
     * once per round, in turn: bench_interleave) keeps each round's kernel
     * seconds per call, so that the report compares auto with the best
     * round by round; nrounds 0 when the case was timed variant after
     * variant. */
    int nrounds;
    double round_s[BENCH_MAX_ROUNDS];
} bench_row;

typedef struct {
    clphys_context *ctx;
    const clphys_device_info *dev;
    clphys_limits limits;  /* measured before the paths run                    */
    const char *precision; /* "fp32", "fp64" or NULL for both                  */
    long long size;        /* 0: each path's default sizes                     */
    int repeat;            /* timed repetitions per case (median reported)     */
    int verify;            /* compare against the CPU reference                */
    int quick;             /* smaller default sizes (CPU devices, CI)          */
    int full;              /* the complete sweep (--full); else the default cut */
    int repeat_given;      /* --repeat was given: paths keep it as it is        */
    int argc;              /* the command line (JSON argv)                     */
    char **argv;
    double t_start;               /* bench_now() at the start (JSON run_wall_s)       */
    double cpu_busy0, cpu_steal0; /* bench_host_cpu() at the start; busy0 < 0: none */
    double load0[3];              /* the host's load averages at the start (1, 5, 15 min);
                                     -1: none (bench_host_load)                       */
    int tty;                      /* stderr is a terminal: one progress line          */
    const char *cur_path;         /* the path running, its place among those chosen   */
    int path_k, path_n, path_rows;
    double path_t0, done_s; /* when it started; seconds of the paths done       */
    bench_row *rows;
    int nrows, cap;
    int failures;                   /* cases that failed verification or errored        */
    clphys_transfer_limits xfer;    /* host-device transfers (bytes 0: not measured) */
    clphys_context *const *devices; /* every device of --device LIST (the first  */
    int ndevices;                   /* is ctx); 1 (ctx) for one device                 */
} bench_run;

/* Append a row (copied); prints it as a progress line on stderr. */
void bench_add_row(bench_run *run, const bench_row *row);
/* The progress line: a case of the current path starts or ends. */
void bench_progress(bench_run *run);
/* Record a case that could not run: counted as a failure, printed on stderr. */
void bench_fail(bench_run *run, const char *path, const char *what, const char *why);
/* 1 when the run should do this precision ("fp32"/"fp64"). */
int bench_wants_precision(const bench_run *run, const char *precision);
/* Interleaved timing of the variants of one case.  On a shared machine
 * (a VM whose hypervisor takes CPU time, a GPU other jobs use) the speed
 * drifts during a run; timed one after another, two variants then differ
 * by the drift.  Timed in rounds, each variant once per round in turn, they
 * share it, and a round-by-round ratio cancels it.
 * time(k, user) runs variant k once and returns its kernel seconds per
 * call (< 0: it failed, and it is not timed again).  Fills s[k * rounds +
 * r] (-1 for every round of a variant that failed; at most
 * BENCH_MAX_VARIANTS variants and BENCH_MAX_ROUNDS rounds); returns the
 * number of variants that never failed. */
int bench_interleave(int nvariants, int rounds, double (*time)(int k, void *user), void *user, double *s);
/* The rounds of a row timed by bench_interleave: copies them, sets
 * nrounds, kernel_s_median and kernel_s_min. */
void bench_set_rounds(bench_row *r, const double *s, int rounds);
/* Rounds per case for the interleaved paths: --repeat when given, else the
 * default (more on CPU devices, whose rounds are short and noisy). */
int bench_rounds(const bench_run *run, int gpu_default, int cpu_default);
/* The fcc unit cells per edge of a cube holding about n atoms (4 a cell):
 * the nearest whole number to (n / 4)^(1/3), at least 1.  How --size N
 * (atoms) becomes a lattice on the md paths. */
int bench_fcc_cells(long long n);
/* The side m of the m x m x nz grid nearest `cells` cells, at least 4: how
 * --size N (cells) becomes a grid on the poisson paths. */
int bench_grid_side(long long cells, int nz);
/* The host's CPU time so far, from /proc/stat (USER_HZ ticks): busy (user,
 * nice, system, irq, softirq) and steal (taken by a hypervisor while the
 * guest wanted to run); -1 where there is no /proc/stat. */
int bench_host_cpu(double *busy, double *steal);
/* The host's load averages (1, 5 and 15 minutes: runnable threads, this
 * process's own included) and its online CPUs; -1 where the host does not
 * say. */
int bench_host_load(double load[3], int *cpus);
/* Monotonic host clock, seconds (wall times that include transfers). */
double bench_now(void);
/* Fraction of a named measured limit; sets row->limit. */
void bench_set_fraction(const bench_run *run, bench_row *row, const char *limit, double achieved);

/* One compute path's benchmark.  Returns 0, or nonzero if it could not run at all. */
typedef int (*bench_path_fn)(bench_run *run);
typedef struct {
    const char *name;
    bench_path_fn fn;
} bench_path;
extern const bench_path bench_paths[]; /* bench/paths.c, NULL-terminated */

/* The report (report.c, roofline.c): a fixed-width table on out, the JSON
 * file (atomic write), the measured limits. */
void bench_print_table(const bench_run *run, FILE *out);
/* Distinct devices among run->devices (a device opened twice counts once). */
int bench_distinct_devices(const bench_run *run);
/* The transfer limits below the device limits (bench_print_limits). */
void bench_print_transfers(const clphys_transfer_limits *t, FILE *out);
int bench_write_json(const bench_run *run, const char *file, char *err, size_t errlen);
void bench_print_limits(const clphys_limits *lim, const clphys_device_info *dev, FILE *out);

#endif /* CLPHYS_BENCH_H */
