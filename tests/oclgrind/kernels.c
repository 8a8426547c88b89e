/* kernels.c — every kernel of every path on a small case, for a checking
 * device (Oclgrind: scripts/oclgrind.sh runs this under it): the bench
 * suite's cases of each path at a small size, every variant and precision
 * each path's bench runs, verified against the fp64 references, then MD
 * (the integrator's kernels) with every LJ variant for a few steps with
 * rebuilds (this covers every lj kernel; the lj bench's own sweep of
 * work-group sizes runs too with "md_lj").  Usage: kernels [PATH ...] (default:
 * all but lj and solver-bench), PATH one of gravity neighbor lj dslash
 * solver (fused-kernel solves) solver-bench md, or md:VARIANT for one LJ
 * variant; the device is $CLPHYS_DEVICE.  Exit 0 when
 * every case ran and verified. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bench_nbody_gravity(bench_run *run);
int bench_md_neighbor(bench_run *run);
int bench_md_lj(bench_run *run);
int bench_lqcd_dslash(bench_run *run);
int bench_lqcd_solver(bench_run *run);

static int md_variants(clphys_context *ctx, const char *only)
{
    int bad = 0;
    for (int v = 1; v < CLPHYS_MD_LJ_NVARIANTS; v++) {
        if (only && strcmp(only, clphys_md_lj_variant_name((clphys_md_lj_variant)v))) continue;
        for (int prec = 0; prec < 2; prec++) {
            clphys_md_system sys;
            if (clphys_md_fcc(0.8442, 4, 1.44, 5, &sys)) return 1;
            clphys_md_params p = {.lj = {.r_cut = 2.5,
                                         .skin = 0.3,
                                         .precision = (clphys_precision)prec,
                                         .variant = (clphys_md_lj_variant)v},
                                  .dt = 0.005,
                                  .neigh_every = 2,
                                  .neigh_check = 0};
            clphys_md_plan *pl = NULL;
            clphys_md_thermo t0, t1;
            clphys_status st = clphys_md_plan_create(ctx, &p, &sys, &pl);
            if (!st) st = clphys_md_thermo_now(pl, &t0);
            if (!st) st = clphys_md_run(pl, 6, NULL);
            if (!st) st = clphys_md_thermo_now(pl, &t1);
            if (!st) st = clphys_md_download(pl, &sys);
            const char *name = clphys_md_lj_variant_name((clphys_md_lj_variant)v);
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
    }
    return bad;
}

/* The solvers with the fused level-1 kernels (cl/linalg_blas1.cl), fp64 and mixed,
 * CGNR and BiCGStab, on a hot 4^4 field: the solver bench's clBLAST rows
 * would keep the interpreter busy for hours. */
static int fused_solves(clphys_context *ctx)
{
    const int dims[4] = {4, 4, 4, 4};
    clphys_lqcd_gauge_field g;
    if (clphys_lqcd_gauge_create(dims, &g)) return 1;
    clphys_lqcd_gauge_hot(&g, 11);
    const size_t n = g.volume * 24;
    double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x);
    uint64_t rng = 3;
    for (size_t k = 0; k < n; k++) b[k] = ref_uniform(&rng) - 0.5;
    int bad = 0;
    for (int mixed = 0; mixed < 2; mixed++)
        for (int kind = 0; kind < 2; kind++) {
            clphys_lqcd_dslash_params a = {.precision = CLPHYS_FP64, .reconstruct = 18, .kappa = 0.1},
                                      s = {.precision = CLPHYS_FP32, .reconstruct = 12, .kappa = 0.1};
            clphys_lqcd_dslash_plan *p64 = NULL, *p32 = NULL;
            clphys_lqcd_solver_plan *sp = NULL;
            clphys_lqcd_solver_params prm = {.kind = kind ? CLPHYS_LQCD_SOLVER_BICGSTAB : CLPHYS_LQCD_SOLVER_CGNR,
                                             .tol = 1e-8,
                                             .max_iter = 500,
                                             .mixed = mixed,
                                             .blas = CLPHYS_LQCD_SOLVER_BLAS_FUSED};
            clphys_lqcd_solver_result res = {0};
            clphys_status st = clphys_lqcd_dslash_plan_create(ctx, &g, &a, &p64);
            if (!st && mixed) st = clphys_lqcd_dslash_plan_create(ctx, &g, &s, &p32);
            if (!st) st = clphys_lqcd_solver_plan_create(p64, p32, &prm, &sp);
            if (!st) st = clphys_lqcd_solver_solve(sp, b, x, &res);
            fprintf(stderr, "[solver] %s %s fused: %s, %d iterations, residual %.2e\n", kind ? "BiCGStab" : "CGNR",
                    mixed ? "mixed" : "fp64", st ? clphys_last_error(ctx) : "converged", res.iterations,
                    res.rel_residual);
            bad |= st != CLPHYS_SUCCESS;
            clphys_lqcd_solver_plan_destroy(sp);
            clphys_lqcd_dslash_plan_destroy(p64);
            clphys_lqcd_dslash_plan_destroy(p32);
        }
    free(b), free(x);
    clphys_lqcd_gauge_destroy(&g);
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
    bench_run run = {.ctx = ctx,
                     .dev = clphys_context_device(ctx),
                     .limits = {1, 1, 1, 1, 0, 1},
                     .repeat = 1,
                     .verify = 1,
                     .quick = 1};
    static const struct {
        const char *name;
        bench_path_fn fn;
        long long size;
    } paths[] = {
        {"nbody_gravity", bench_nbody_gravity, 256}, /* particles */
        {"md_neighbor", bench_md_neighbor, 8},       /* box edge (>= 2 r_search = 6.6 after rounding to the lattice) */
        {"md_lj", bench_md_lj, 8},
        {"lqcd_dslash", bench_lqcd_dslash, 256},  /* sites: 4^4 */
        {"solver-bench", bench_lqcd_solver, 256}, /* with clBLAST: slow in an interpreter */
    };
    int bad = 0;
    for (size_t k = 0; k < sizeof paths / sizeof *paths; k++) {
        int want = argc < 2 && strcmp(paths[k].name, "md_lj") && strcmp(paths[k].name, "solver-bench");
        for (int a = 1; a < argc; a++) want |= !strcmp(argv[a], paths[k].name);
        if (!want) continue;
        fprintf(stderr, "[%s]\n", paths[k].name);
        run.size = paths[k].size;
        if (paths[k].fn(&run)) bad = 1;
    }
    if (argc < 2) bad |= md_variants(ctx, NULL);
    for (int a = 1; a < argc; a++)
        if (!strcmp(argv[a], "lqcd_solver")) bad |= fused_solves(ctx);
    if (argc < 2) bad |= fused_solves(ctx);
    for (int a = 1; a < argc; a++)
        if (!strcmp(argv[a], "md"))
            bad |= md_variants(ctx, NULL);
        else if (!strncmp(argv[a], "md:", 3))
            bad |= md_variants(ctx, argv[a] + 3);
    free(run.rows);
    if (run.failures) fprintf(stderr, "kernels: %d case(s) failed\n", run.failures);
    clphys_context_destroy(ctx);
    return bad || run.failures;
}
