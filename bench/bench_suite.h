/*
 * bench_suite.h — the bench suite as the clphys command sees it: the list of
 * path names and one call that runs the suite on a context.  `clphys bench`
 * (cli/bench.c) parses its options into bench_options and calls
 * bench_suite_run; nothing else of bench/ is visible to cli/.
 */
#ifndef CLPHYS_BENCH_SUITE_H
#define CLPHYS_BENCH_SUITE_H

#include "clphys.h"
#include <stdio.h>

typedef struct {
    const char *paths;     /* comma-separated bench path names; NULL = all     */
    const char *precision; /* "fp32", "fp64", or NULL for both                  */
    long long size;        /* problem size for every path; 0 = each path's own  */
    int repeat;            /* timed repetitions per case, >= 1 (median reported) */
    int verify;            /* compare every case with the fp64 CPU reference    */
    int quick;             /* 1 small sizes, 0 full sizes, -1 small on CPUs     */
    int probe_only;        /* only measure and print the device's limits        */
    const char *json;      /* also write the results here (atomically); NULL = no */
    int full;              /* 1: the complete sweep (every option of every
                              variant, the largest sizes); 0: the default cut
                              (docs/usage.md, "The command", says what)     */
    int repeat_given;      /* 1: repeat is the user's (paths do not lower it)  */
    int argc;              /* the command line, recorded in the JSON as argv  */
    char **argv;
    double t_start;                 /* bench_now() when the command started; 0 = now   */
    clphys_context *const *devices; /* the devices of a multi-device run     */
    int ndevices;                   /* (--device LIST; the first is ctx); 0: ctx only   */
} bench_options;

/* The name of the i-th bench path in run order (e.g. "nbody_gravity"); NULL past
 * the last one. */
const char *bench_path_name(int i);

/* 0 when the suite accepts opt; else 2, with the cause printed on stderr:
 * a path name it does not know, a precision other than fp32/fp64,
 * repeat < 1 or size < 0.  (Checked before a device is opened.) */
int bench_options_check(const bench_options *opt);

/* Run the suite on ctx's device: measure its limits (printed on out), run the
 * chosen paths (progress on stderr), print the table on out and write the
 * JSON file.  Returns 0 when every case ran and verified, 1 otherwise (the
 * cause printed on stderr), 2 when bench_options_check rejects opt or ctx
 * is NULL (nothing run). */
int bench_suite_run(clphys_context *ctx, const bench_options *opt, FILE *out);

#endif /* CLPHYS_BENCH_SUITE_H */
