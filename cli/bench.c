/* bench.c — `clphys bench`: options in, then the bench suite (bench/,
 * through bench_suite.h) on the chosen device. */
#include "bench_suite.h"
#include "cli.h"
#include "cli_mpi.h"
#include "old_names.h"
#include "opt.h"
#include "outputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: clphys bench [--device SPEC|LIST] [--path NAME[,NAME...]] [--precision fp32|fp64]\n"
                 "                    [--size N] [--repeat R] [--json FILE [--force]] [--probe] [--no-verify]\n"
                 "                    [--quick|--full]\n"
                 "  --device     a device (clphys devices), or a list (\"gpus\" = every GPU, \"0:0,0:1\"; a device\n"
                 "               named twice is opened twice): dslash_multi and solver_multi split the lattice\n"
                 "               over them; the other paths run on the first\n"
                 "  --probe      only measure and print the device's limits (bandwidth, FMA rates, host-device\n"
                 "               transfers and host memcpy)\n"
                 "  --path       compute paths to run (default: all):");
    for (int i = 0; bench_path_name(i); i++) fprintf(out, " %s", bench_path_name(i));
    fprintf(out, "\n"
                 "  --size       one problem size for every path, instead of each path's own sizes: N particles\n"
                 "               or atoms (md and nbody paths; md: in.lj scaled to the nearest cube of fcc\n"
                 "               cells; md_mpi: N in all and N per device), N lattice sites (lqcd paths: the\n"
                 "               nearest L^4, extents rounded up to split evenly), N cells (poisson: m x m x 32;\n"
                 "               poisson_mpi: a share of that per device)\n"
                 "  --repeat     timed repetitions per case, the median is reported (default 5, --full 10)\n"
                 "  --quick      small default sizes (the default on CPU devices)\n"
                 "  --full       the complete sweep: full sizes, every option of every variant, the largest\n"
                 "               cases (the default run is cut to about a minute on a GPU: docs/usage.md)\n"
                 "  --json FILE  also write the results with the device's identity (written atomically;\n"
                 "               an existing FILE is replaced only with --force)\n"
                 "Exit status 1 when any case fails verification or cannot run.\n"
                 "Under an MPI launcher with several ranks (mpirun -np P clphys bench --path nbody_gravity_mpi) only\n"
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
    bench_options opt = {.repeat = 10, .verify = 1, .quick = -1, .argc = argc, .argv = argv};
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0); /* bench_now()'s clock */
    opt.t_start = (double)t0.tv_sec + 1e-9 * (double)t0.tv_nsec;
    long long repeat = 0, size = 0;
    int prec = -1, no_verify = 0, quick = 0, full = 0, force = 0, help = 0;
    const cli_opt opts[] = {
        CLI_OPT_STRING("--device", &device),
        CLI_OPT_STRING("--path", &opt.paths),
        CLI_OPT_CHOICE("--precision", &prec, "fp32|fp64"),
        CLI_OPT_INT("--size", &size, 1, 1LL << 40),
        CLI_OPT_INT("--repeat", &repeat, 1, 1000000),
        CLI_OPT_STRING("--json", &opt.json),
        CLI_OPT_FLAG("--probe", &opt.probe_only),
        CLI_OPT_FLAG("--no-verify", &no_verify),
        CLI_OPT_FLAG("--quick", &quick),
        CLI_OPT_FLAG("--full", &full),
        CLI_OPT_FLAG("--force", &force),
        CLI_OPT_END,
    };
    if (cli_parse("bench", argc, argv, opts, NULL, 0, NULL, &help)) return 2;
    if (help) {
        usage(stdout);
        return 0;
    }
    if (cli_new_path_names("bench", &opt.paths)) return 2; /* the names before docs/naming.md, one release */
    if (quick && full) {
        fprintf(stderr, "clphys bench: --quick and --full: give one of them\n");
        return 2;
    }
    opt.precision = prec < 0 ? NULL : prec ? "fp64" : "fp32";
    opt.size = size;
    /* medians of 5 where the spread is already small (each lj repeat is a
     * 100-call loop); the full sweep keeps 10 */
    opt.repeat = repeat ? (int)repeat : full ? 10 : 5;
    opt.repeat_given = repeat != 0;
    opt.verify = !no_verify;
    opt.quick = quick ? 1 : full ? 0 : -1;
    opt.full = full;
    if (bench_options_check(&opt)) return 2;
    FILE *out = stdout;
    if (cli_mpi_size() > 1) {
        if (!only_distributed(opt.paths)) {
            fprintf(stderr, "clphys bench: under an MPI launcher with several ranks only the distributed entries "
                            "run (--path nbody_gravity_mpi, lqcd_dslash_mpi, lqcd_solver_mpi)\n");
            return 2;
        }
        if (cli_mpi_rank() > 0) { /* rank 0 reports for all */
            opt.json = NULL;
            if (!(out = fopen("/dev/null", "w"))) out = stdout;
        }
    }
    const cli_file outputs[] = {{"--json", opt.json}};
    if (cli_check_outputs("bench", NULL, 0, outputs, 1, force)) {
        if (out != stdout) fclose(out);
        return 2;
    }
    clphys_context *ctx = NULL, **ctxs = NULL;
    int nctx = 0;
    clphys_status st;
    /* a list ("gpus", "0:0,0:1"): every device for the multi-device paths,
     * the first for the others (clphys_contexts_create) */
    if (device && (strchr(device, ',') || !strcmp(device, "gpus"))) {
        st = clphys_contexts_create(device, 0, 1, &ctxs, &nctx);
        if (!st) ctx = ctxs[0], opt.devices = ctxs, opt.ndevices = nctx;
    } else {
        st = clphys_context_create(device, &ctx);
    }
    int rc;
    if (st && cli_mpi_size() > 1) { /* not agreed: said by this rank, and 2 makes main abort the job */
        fprintf(stderr, "clphys bench (rank %d): %s: %s\n", cli_mpi_rank(), clphys_status_string(st),
                clphys_last_error(NULL));
        rc = 2;
    } else {
        rc = st ? cli_fail("bench", st, NULL) : bench_suite_run(ctx, &opt, out);
        for (int i = 1; i < nctx; i++) clphys_context_destroy(ctxs[i]); /* plans gone: before the first */
        if (!st) rc = cli_context_done(ctx, rc);
        if (ctxs) clphys_contexts_destroy(ctxs, 0); /* the array */
    }
    if (out != stdout) fclose(out);
    return rc;
}
