/* bench.c — `clphys bench`: options in, then the bench suite (bench/,
 * through bench_suite.h) on the chosen device. */
#include "bench_suite.h"
#include "cli.h"
#include "cli_mpi.h"

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
    for (int i = 0; bench_path_name(i); i++) fprintf(out, " %s", bench_path_name(i));
    fprintf(out, "\n"
                 "  --size       problem size for every path (default: each path's own sizes)\n"
                 "  --repeat     timed repetitions per case, the median is reported (default 10)\n"
                 "  --quick      small default sizes (the default on CPU devices); --full forces full sizes\n"
                 "  --json FILE  also write the results with the device's identity (written atomically)\n"
                 "Exit status 1 when any case fails verification or cannot run.\n"
                 "Under an MPI launcher with several ranks (mpirun -np P clphys bench --path gravity_mpi) only\n"
                 "the distributed entries run, each rank on its --device; rank 0 prints and writes the JSON.\n");
}

/* 1 when every name of the comma-separated list is a distributed entry
 * (NAME_mpi): those are the ones that need all ranks of a launcher. */
static int only_distributed(const char *paths)
{
    if (!paths || !*paths) return 0;
    for (const char *p = paths; *p;) {
        size_t n = strcspn(p, ",");
        if (n < 5 || strncmp(p + n - 4, "_mpi", 4)) return 0;
        p += n + (p[n] == ',');
    }
    return 1;
}

int cmd_bench(int argc, char **argv)
{
    const char *device = NULL;
    bench_options opt = {.repeat = 10, .verify = 1, .quick = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--device") && more) device = argv[++i];
        else if (!strcmp(a, "--path") && more) opt.paths = argv[++i];
        else if (!strcmp(a, "--precision") && more) opt.precision = argv[++i];
        else if (!strcmp(a, "--size") && more) opt.size = atoll(argv[++i]);
        else if (!strcmp(a, "--repeat") && more) opt.repeat = atoi(argv[++i]);
        else if (!strcmp(a, "--json") && more) opt.json = argv[++i];
        else if (!strcmp(a, "--probe")) opt.probe_only = 1;
        else if (!strcmp(a, "--no-verify")) opt.verify = 0;
        else if (!strcmp(a, "--quick")) opt.quick = 1;
        else if (!strcmp(a, "--full")) opt.quick = 0;
        else {
            fprintf(stderr, "clphys bench: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (bench_options_check(&opt)) {
        usage(stderr);
        return 2;
    }
    FILE *out = stdout;
    if (cli_mpi_size() > 1) {
        if (!only_distributed(opt.paths)) {
            fprintf(stderr, "clphys bench: under an MPI launcher with several ranks only the distributed entries "
                            "run (--path gravity_mpi, dslash_mpi, solver_mpi)\n");
            return 2;
        }
        if (cli_mpi_rank() > 0) { /* rank 0 reports for all */
            opt.json = NULL;
            if (!(out = fopen("/dev/null", "w"))) out = stdout;
        }
    }
    clphys_context *ctx;
    clphys_status st = clphys_context_create(device, &ctx);
    int rc;
    if (st && cli_mpi_size() > 1) { /* not agreed: said by this rank, and 2 makes main abort the job */
        fprintf(stderr, "clphys bench (rank %d): %s: %s\n", cli_mpi_rank(), clphys_status_string(st),
                clphys_last_error(NULL));
        rc = 2;
    } else {
        rc = st ? cli_fail("bench", st, NULL) : cli_context_done(ctx, bench_suite_run(ctx, &opt, out));
    }
    if (out != stdout) fclose(out);
    return rc;
}
