/* kernels.c — every kernel of every path on a small case, for a checking
 * device (Oclgrind: scripts/oclgrind.sh runs this under it): the bench
 * suite's cases of each path at a small size, every variant and precision
 * each path's bench runs, verified against the fp64 references, then MD
 * (the integrator's kernels) with every LJ variant for a few steps with
 * rebuilds.  Usage: kernels [PATH ...] (default: all); the device is
 * $CLPHYS_DEVICE.  Exit 0 when every case ran and verified. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bench_gravity(bench_run *run);
int bench_neighbor(bench_run *run);
int bench_lj(bench_run *run);
int bench_dslash(bench_run *run);
int bench_solver(bench_run *run);

static int md_variants(clphys_context *ctx)
{
    int bad = 0;
    for (int v = 1; v < CLPHYS_LJ_NVARIANTS; v++)
        for (int prec = 0; prec < 2; prec++) {
            clphys_md_system sys;
            if (clphys_md_fcc(0.8442, 4, 1.44, 5, &sys)) return 1;
            clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = (clphys_precision)prec,
                                         .variant = (clphys_lj_variant)v},
                                  .dt = 0.005, .neigh_every = 2, .neigh_check = 0};
            clphys_md_plan *pl = NULL;
            clphys_md_thermo t0, t1;
            clphys_status st = clphys_md_plan_create(ctx, &p, &sys, &pl);
            if (!st) st = clphys_md_thermo_now(pl, &t0);
            if (!st) st = clphys_md_run(pl, 6, NULL);
            if (!st) st = clphys_md_thermo_now(pl, &t1);
            if (!st) st = clphys_md_download(pl, &sys);
            const char *name = clphys_lj_variant_name((clphys_lj_variant)v);
            if (st == CLPHYS_ERR_UNSUPPORTED || st == CLPHYS_ERR_INVALID_ARGUMENT) {
                fprintf(stderr, "[md] %s %s: not on this device: %s\n", name, prec ? "fp64" : "fp32",
                        clphys_last_error(ctx));
            } else if (st) {
                fprintf(stderr, "[md] %s %s: %s: %s\n", name, prec ? "fp64" : "fp32", clphys_status_string(st),
                        clphys_last_error(ctx));
                bad = 1;
            } else {
                double drift = (t1.etotal - t0.etotal) / t0.etotal;
                fprintf(stderr, "[md] %s %s: 256 atoms, 6 steps, %d builds, energy drift %.2e\n", name,
                        prec ? "fp64" : "fp32", clphys_md_rebuilds(pl), drift);
                if (!(drift < 1e-3 && drift > -1e-3)) bad = 1;
            }
            clphys_md_plan_destroy(pl);
            clphys_md_system_destroy(&sys);
        }
    return bad;
}

int main(int argc, char **argv)
{
    clphys_context *ctx;
    if (clphys_context_create(NULL, &ctx)) {
        fprintf(stderr, "kernels: %s\n", clphys_last_error(NULL));
        return 1;
    }
    /* the limits only scale "fraction of limit" columns: not measured here */
    bench_run run = {.ctx = ctx, .dev = clphys_context_device(ctx), .limits = {1, 1, 1, 1, 0, 1},
                     .repeat = 1, .verify = 1, .quick = 1};
    static const struct { const char *name; bench_path_fn fn; long long size; } paths[] = {
        {"gravity", bench_gravity, 256},  /* particles */
        {"neighbor", bench_neighbor, 8},  /* box edge (>= 2 r_search = 6.6 after rounding to the lattice) */
        {"lj", bench_lj, 8},
        {"dslash", bench_dslash, 256},    /* sites: 4^4 */
        {"solver", bench_solver, 256},
    };
    int want_md = argc < 2, bad = 0;
    for (int a = 1; a < argc; a++) want_md |= !strcmp(argv[a], "md");
    for (size_t k = 0; k < sizeof paths / sizeof *paths; k++) {
        int want = argc < 2;
        for (int a = 1; a < argc; a++) want |= !strcmp(argv[a], paths[k].name);
        if (!want) continue;
        fprintf(stderr, "[%s]\n", paths[k].name);
        run.size = paths[k].size;
        if (paths[k].fn(&run)) bad = 1;
    }
    if (want_md) bad |= md_variants(ctx);
    free(run.rows);
    if (run.failures) fprintf(stderr, "kernels: %d case(s) failed\n", run.failures);
    clphys_context_destroy(ctx);
    return bad || run.failures;
}
