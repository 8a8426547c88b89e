/* suite.c — one run of the bench suite (bench_suite.h): check the options,
 * measure the device's limits, run each chosen path, report. */
#include "bench.h"
#include "bench_suite.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *bench_path_name(int i)
{
    for (int k = 0; bench_paths[k].name; k++)
        if (k == i) return bench_paths[k].name;
    return NULL;
}

/* 1 when the comma-separated list names path (NULL list: every path). */
static int wants_path(const char *list, const char *name)
{
    if (!list) return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
    return 0;
}

/* 1 when a distributed path (name ending in _mpi or _multi) is chosen. */
static int wants_distributed(const char *list)
{
    for (const bench_path *p = bench_paths; p->name; p++) {
        const size_t n = strlen(p->name);
        const int dist = (n > 4 && !strcmp(p->name + n - 4, "_mpi")) || (n > 6 && !strcmp(p->name + n - 6, "_multi"));
        if (dist && wants_path(list, p->name)) return 1;
    }
    return 0;
}

int bench_options_check(const bench_options *opt)
{
    if (opt->precision && strcmp(opt->precision, "fp32") && strcmp(opt->precision, "fp64")) {
        fprintf(stderr, "clphys bench: --precision must be fp32 or fp64\n");
        return 2;
    }
    if (opt->repeat < 1 || opt->size < 0) {
        fprintf(stderr, "clphys bench: --repeat must be >= 1 and --size >= 0\n");
        return 2;
    }
    for (const char *p = opt->paths; p && *p;) {
        size_t n = strcspn(p, ",");
        int found = 0;
        for (const bench_path *bp = bench_paths; bp->name; bp++)
            if (strlen(bp->name) == n && !strncmp(bp->name, p, n)) found = 1;
        if (!found) {
            fprintf(stderr, "clphys bench: unknown path '%.*s' (the paths:", (int)n, p);
            for (const bench_path *bp = bench_paths; bp->name; bp++) fprintf(stderr, " %s", bp->name);
            fprintf(stderr, ")\n");
            return 2;
        }
        p += n + (p[n] == ',');
    }
    return 0;
}

int bench_suite_run(clphys_context *ctx, const bench_options *opt, FILE *out)
{
    if (!ctx || bench_options_check(opt)) return 2;
    bench_run run;
    memset(&run, 0, sizeof run);
    run.ctx = ctx;
    run.dev = clphys_context_device(ctx);
    run.precision = opt->precision;
    run.size = opt->size;
    run.repeat = opt->repeat;
    run.verify = opt->verify;
    run.quick = opt->quick >= 0 ? opt->quick : !run.dev->is_gpu;
    run.full = opt->full;
    run.repeat_given = opt->repeat_given;
    run.argc = opt->argc, run.argv = opt->argv;
    run.t_start = opt->t_start > 0 ? opt->t_start : bench_now();
    run.tty = isatty(STDERR_FILENO);
    if (bench_host_cpu(&run.cpu_busy0, &run.cpu_steal0)) run.cpu_busy0 = -1;
    int cpus;
    if (bench_host_load(run.load0, &cpus)) run.load0[0] = run.load0[1] = run.load0[2] = -1;
    fprintf(stderr, "clphys bench on %s (%s, driver %s)%s%s\n", run.dev->name, run.dev->platform,
            run.dev->driver_version, run.quick ? ", quick sizes" : "", run.full ? ", full sweep" : "");
    fprintf(stderr, "measuring the device's limits...\n");
    clphys_status st = clphys_measure_limits(ctx, opt->probe_only ? 10 : 5, &run.limits);
    if (st) {
        fprintf(stderr, "clphys bench: %s: %s\n", clphys_status_string(st), clphys_last_error(ctx));
        return 1;
    }
    run.devices = opt->ndevices > 0 ? opt->devices : &run.ctx;
    run.ndevices = opt->ndevices > 0 ? opt->ndevices : 1;
    /* the terms of the exchange floors: with --probe and for the distributed paths */
    if (opt->probe_only || wants_distributed(opt->paths)) {
        /* a failure costs the floors (null in the rows), not the run */
        if (clphys_measure_transfers(ctx, 0, 0, &run.xfer)) {
            fprintf(stderr, "clphys bench: transfer probe: %s (exchange floors not given)\n", clphys_last_error(ctx));
            memset(&run.xfer, 0, sizeof run.xfer);
        }
    }
    bench_print_limits(&run.limits, run.dev, out);
    if (run.xfer.bytes) bench_print_transfers(&run.xfer, out);
    if (!opt->probe_only) {
        for (const bench_path *p = bench_paths; p->name; p++) run.path_n += wants_path(opt->paths, p->name);
        for (const bench_path *p = bench_paths; p->name; p++) {
            if (!wants_path(opt->paths, p->name)) continue;
            run.cur_path = p->name, run.path_k++, run.path_rows = 0, run.path_t0 = bench_now();
            if (run.tty)
                bench_progress(&run);
            else
                fprintf(stderr, "[%s] (path %d of %d, %.0f s elapsed)\n", p->name, run.path_k, run.path_n,
                        bench_now() - run.t_start);
            if (p->fn(&run) != 0) bench_fail(&run, p->name, "(path)", clphys_last_error(ctx));
            run.done_s += bench_now() - run.path_t0;
        }
        if (run.tty) fprintf(stderr, "\r\033[K");
        fprintf(stderr, "%d path(s) in %.1f s\n", run.path_n, bench_now() - run.t_start);
        bench_print_table(&run, out);
    }
    int rc = 0;
    if (opt->json) {
        char err[512];
        if (bench_write_json(&run, opt->json, err, sizeof err)) {
            fprintf(stderr, "clphys bench: %s\n", err);
            rc = 1;
        } else {
            fprintf(stderr, "wrote %s\n", opt->json);
        }
    }
    if (run.failures) {
        fprintf(stderr, "clphys bench: %d case(s) failed verification or could not run\n", run.failures);
        rc = 1;
    } else if (!opt->probe_only) {
        fprintf(out, "\nall %d case(s) verified against the fp64 CPU reference\n", run.nrows);
    }
    free(run.rows);
    return rc;
}
