/* bench.c — `clphys bench`: measure the device's limits, then benchmark and
 * verify every compute path (or those chosen) and report a table and JSON. */
#include "bench.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: clphys bench [--device SPEC] [--path NAME[,NAME...]] [--precision fp32|fp64]\n"
            "                    [--size N] [--repeat R] [--json FILE] [--probe] [--no-verify] [--quick|--full]\n"
            "  --probe      only measure and print the device's limits (bandwidth, FMA rates)\n"
            "  --path       compute paths to run (default: all):");
    for (const bench_path *p = bench_paths; p->name; p++) fprintf(out, " %s", p->name);
    fprintf(out, "\n"
                 "  --size       problem size for every path (default: each path's own sizes)\n"
                 "  --repeat     timed repetitions per case, the median is reported (default 10)\n"
                 "  --quick      small default sizes (the default on CPU devices); --full forces full sizes\n"
                 "  --json FILE  also write the results with the device's identity (written atomically)\n"
                 "Exit status 1 when any case fails verification or cannot run.\n");
}

static int wants_path(const char *list, const char *name)
{
    if (!list) return 1;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    const char *device = NULL, *paths = NULL, *json = NULL;
    int probe_only = 0, quick = -1;
    bench_run run;
    memset(&run, 0, sizeof run);
    run.repeat = 10;
    run.verify = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--device") && more) device = argv[++i];
        else if (!strcmp(a, "--path") && more) paths = argv[++i];
        else if (!strcmp(a, "--precision") && more) run.precision = argv[++i];
        else if (!strcmp(a, "--size") && more) run.size = atoll(argv[++i]);
        else if (!strcmp(a, "--repeat") && more) run.repeat = atoi(argv[++i]);
        else if (!strcmp(a, "--json") && more) json = argv[++i];
        else if (!strcmp(a, "--probe")) probe_only = 1;
        else if (!strcmp(a, "--no-verify")) run.verify = 0;
        else if (!strcmp(a, "--quick")) quick = 1;
        else if (!strcmp(a, "--full")) quick = 0;
        else {
            fprintf(stderr, "clphys bench: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (run.precision && strcmp(run.precision, "fp32") && strcmp(run.precision, "fp64")) {
        fprintf(stderr, "clphys bench: --precision must be fp32 or fp64\n");
        return 2;
    }
    if (run.repeat < 1 || run.size < 0) {
        fprintf(stderr, "clphys bench: --repeat must be >= 1 and --size >= 0\n");
        return 2;
    }
    if (paths)
        for (const char *p = paths; *p;) {
            size_t n = strcspn(p, ",");
            int found = 0;
            for (const bench_path *bp = bench_paths; bp->name; bp++)
                if (strlen(bp->name) == n && !strncmp(bp->name, p, n)) found = 1;
            if (!found) {
                fprintf(stderr, "clphys bench: unknown path '%.*s'\n", (int)n, p);
                usage(stderr);
                return 2;
            }
            p += n + (p[n] == ',');
        }

    clphys_context *ctx;
    clphys_status st = clphys_context_create(device, &ctx);
    if (st) return cli_fail("bench", st, NULL);
    run.ctx = ctx;
    run.dev = clphys_context_device(ctx);
    run.quick = quick >= 0 ? quick : !run.dev->is_gpu;
    fprintf(stderr, "clphys bench on %s (%s, driver %s)%s\n", run.dev->name, run.dev->platform,
            run.dev->driver_version, run.quick ? ", quick sizes" : "");
    fprintf(stderr, "measuring the device's limits...\n");
    st = clphys_measure_limits(ctx, probe_only ? 10 : 5, &run.limits);
    if (st) {
        int rc = cli_fail("bench", st, ctx);
        clphys_context_destroy(ctx);
        return rc;
    }
    bench_print_limits(&run.limits, run.dev, stdout);
    if (!probe_only) {
        for (const bench_path *p = bench_paths; p->name; p++) {
            if (!wants_path(paths, p->name)) continue;
            fprintf(stderr, "[%s]\n", p->name);
            if (p->fn(&run) != 0) bench_fail(&run, p->name, "(path)", clphys_last_error(ctx));
        }
        bench_print_table(&run, stdout);
    }
    int rc = 0;
    if (json) {
        char err[512];
        if (bench_write_json(&run, json, err, sizeof err)) {
            fprintf(stderr, "clphys bench: %s\n", err);
            rc = 1;
        } else {
            fprintf(stderr, "wrote %s\n", json);
        }
    }
    if (run.failures) {
        fprintf(stderr, "clphys bench: %d case(s) failed verification or could not run\n", run.failures);
        rc = 1;
    } else if (!probe_only) {
        printf("\nall %d case(s) verified against the fp64 CPU reference\n", run.nrows);
    }
    free(run.rows);
    return cli_context_done(ctx, rc);
}
