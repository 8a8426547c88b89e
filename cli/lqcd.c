/* lqcd.c — `clphys lqcd`: gauge-configuration files and Wilson solves.
 *   clphys lqcd plaquette FILE
 *   clphys lqcd generate --dims LXxLYxLZxLT (--cold | --hot SEED) --out FILE [--fp32] [--two-rows]
 *   clphys lqcd solve FILE --kappa K --source point|random --tol T
 *                    [--solver cgnr|bicgstab] [--fp64-only] [--blas auto|fused|clblast] [--periodic]
 *                    [--max-iter N] [--device SPEC]
 * solve prints the residual history (the iterated estimate per Krylov
 * iteration, the true fp64 residual per defect-correction cycle) and, for a
 * point source (12 solves, one per source spin-colour),
 * the pion correlator C(t) = sum_x |S(x,t)|^2. */
#include "cli.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: clphys lqcd plaquette FILE\n"
                 "       clphys lqcd generate --dims LXxLYxLZxLT (--cold | --hot SEED) --out FILE [--fp32] [--two-rows]\n"
                 "       clphys lqcd solve FILE --kappa K --source point|random --tol T\n"
                 "              [--solver cgnr|bicgstab] [--fp64-only] [--blas auto|fused|clblast]\n"
                 "              [--periodic] [--max-iter N] [--device SPEC]\n"
                 "Gauge files are NERSC (4D_SU3_GAUGE or 4D_SU3_GAUGE_3x3, IEEE32BIG/IEEE64BIG); the header's\n"
                 "checksum, plaquette and link trace are verified.  The fermion boundary is antiperiodic in t\n"
                 "unless --periodic.  Solves use the even-odd system, mixed precision unless --fp64-only; the\n"
                 "level-1 work runs in fused kernels (auto, fused) or through clBLAST.\n");
}

static int plaquette(int argc, char **argv)
{
    if (argc != 2) {
        usage(stderr);
        return 2;
    }
    clphys_gauge_field g;
    clphys_status st = clphys_gauge_read_nersc(argv[1], &g);
    if (st) return cli_fail("lqcd", st, NULL);
    printf("lattice %dx%dx%dx%d\nplaquette %.12f\nlink_trace %.12f\n", g.dims[0], g.dims[1], g.dims[2], g.dims[3],
           clphys_gauge_plaquette(&g), clphys_gauge_link_trace(&g));
    clphys_gauge_destroy(&g);
    return 0;
}

static int generate(int argc, char **argv)
{
    int dims[4] = {0}, have_dims = 0, cold = 0, hot = 0, rows = 3;
    unsigned long long seed = 0;
    const char *out = NULL;
    clphys_precision p = CLPHYS_FP64;
    for (int i = 1; i < argc; i++) {
        int more = i + 1 < argc;
        if (!strcmp(argv[i], "--dims") && more)
            have_dims = sscanf(argv[++i], "%dx%dx%dx%d", &dims[0], &dims[1], &dims[2], &dims[3]) == 4;
        else if (!strcmp(argv[i], "--cold")) cold = 1;
        else if (!strcmp(argv[i], "--hot") && more) hot = 1, seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--out") && more) out = argv[++i];
        else if (!strcmp(argv[i], "--fp32")) p = CLPHYS_FP32;
        else if (!strcmp(argv[i], "--two-rows")) rows = 2;
        else {
            fprintf(stderr, "clphys lqcd generate: unknown or incomplete option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!have_dims || !out || cold == hot) {
        usage(stderr);
        return 2;
    }
    clphys_gauge_field g;
    clphys_status st = clphys_gauge_create(dims, &g);
    if (st) return cli_fail("lqcd", st, NULL);
    if (hot) clphys_gauge_hot(&g, seed);
    st = clphys_gauge_write_nersc(out, &g, p, rows);
    if (!st) printf("wrote %s: plaquette %.12f link_trace %.12f\n", out, clphys_gauge_plaquette(&g), clphys_gauge_link_trace(&g));
    clphys_gauge_destroy(&g);
    return st ? cli_fail("lqcd", st, NULL) : 0;
}

static void progress(void *user, int iter, double rel, int is_true)
{
    (void)user;
    printf("  iteration %6d  %s = %.6e\n", iter, is_true ? "true |b - D x|/|b|" : "iterated residual ", rel);
}

static int solve(int argc, char **argv)
{
    const char *file = NULL, *source = NULL, *device = NULL;
    double kappa = -1, tol = -1;
    int mixed = 1, anti = 1, max_iter = 10000;
    clphys_solver_blas blas = CLPHYS_SOLVER_BLAS_AUTO;
    clphys_solver_kind kind = CLPHYS_SOLVER_CGNR;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--kappa") && more) kappa = atof(argv[++i]);
        else if (!strcmp(a, "--tol") && more) tol = atof(argv[++i]);
        else if (!strcmp(a, "--source") && more) source = argv[++i];
        else if (!strcmp(a, "--device") && more) device = argv[++i];
        else if (!strcmp(a, "--max-iter") && more) max_iter = atoi(argv[++i]);
        else if (!strcmp(a, "--fp64-only")) mixed = 0;
        else if (!strcmp(a, "--blas") && more) {
            const char *s = argv[++i];
            if (!strcmp(s, "auto")) blas = CLPHYS_SOLVER_BLAS_AUTO;
            else if (!strcmp(s, "fused")) blas = CLPHYS_SOLVER_BLAS_FUSED;
            else if (!strcmp(s, "clblast")) blas = CLPHYS_SOLVER_BLAS_CLBLAST;
            else {
                fprintf(stderr, "clphys lqcd solve: --blas must be auto, fused or clblast\n");
                return 2;
            }
        }
        else if (!strcmp(a, "--periodic")) anti = 0;
        else if (!strcmp(a, "--solver") && more) {
            const char *s = argv[++i];
            if (!strcmp(s, "cgnr")) kind = CLPHYS_SOLVER_CGNR;
            else if (!strcmp(s, "bicgstab")) kind = CLPHYS_SOLVER_BICGSTAB;
            else {
                fprintf(stderr, "clphys lqcd solve: --solver must be cgnr or bicgstab\n");
                return 2;
            }
        } else if (a[0] != '-' && !file) file = a;
        else {
            fprintf(stderr, "clphys lqcd solve: unknown or incomplete option '%s'\n", a);
            return 2;
        }
    }
    if (!file || !(kappa > 0) || !(tol > 0) || !source || (strcmp(source, "point") && strcmp(source, "random")) ||
        max_iter <= 0) {
        usage(stderr);
        return 2;
    }
    clphys_gauge_field g;
    clphys_status st = clphys_gauge_read_nersc(file, &g);
    if (st) return cli_fail("lqcd", st, NULL);
    clphys_context *ctx = NULL;
    clphys_dslash_plan *p64 = NULL, *p32 = NULL;
    clphys_solver_plan *sp = NULL;
    double *b = NULL, *x = NULL, *corr = NULL;
    int rc = 1;
    const size_t V = g.volume;
    if ((st = clphys_context_create(device, &ctx))) {
        rc = cli_fail("lqcd", st, NULL);
        goto out;
    }
    const clphys_bc bt = anti ? CLPHYS_BC_ANTIPERIODIC : CLPHYS_BC_PERIODIC;
    clphys_dslash_params a = {.precision = CLPHYS_FP64, .reconstruct = 18, .kappa = kappa,
                              .bc = {CLPHYS_BC_PERIODIC, CLPHYS_BC_PERIODIC, CLPHYS_BC_PERIODIC, bt}},
                         s32 = a;
    s32.precision = CLPHYS_FP32, s32.reconstruct = 12;
    if ((st = clphys_dslash_plan_create(ctx, &g, &a, &p64)) ||
        (mixed && (st = clphys_dslash_plan_create(ctx, &g, &s32, &p32)))) {
        rc = cli_fail("lqcd", st, ctx);
        goto out;
    }
    b = calloc(V * 24, sizeof(double));
    x = calloc(V * 24, sizeof(double));
    corr = calloc((size_t)g.dims[3], sizeof(double));
    if (!b || !x || !corr) {
        fprintf(stderr, "clphys lqcd: out of memory\n");
        goto out;
    }
    clphys_solver_params prm = {.kind = kind, .tol = tol, .max_iter = max_iter, .mixed = mixed, .blas = blas,
                                .progress = progress};
    /* one workspace for all sources: each solve moves only b and x */
    if ((st = clphys_solver_plan_create(p64, p32, &prm, &sp))) {
        rc = cli_fail("lqcd", st, ctx);
        goto out;
    }
    int nsrc = strcmp(source, "point") ? 1 : 12;
    const size_t vol3 = V / (size_t)g.dims[3];
    for (int src = 0; src < nsrc; src++) {
        memset(b, 0, sizeof(double) * 24 * V);
        if (nsrc == 1) {
            uint64_t z = 12345;
            for (size_t k = 0; k < 24 * V; k++) {
                z = z * 6364136223846793005ULL + 1442695040888963407ULL;
                b[k] = (double)(z >> 11) * 0x1.0p-53 * 2 - 1;
            }
        } else {
            b[src * 2] = 1; /* site 0, spin src/3, colour src%3 */
        }
        if (nsrc > 1) printf("source point, spin %d colour %d: ", src / 3, src % 3);
        else printf("source random: ");
        printf("%s %s, kappa %g, tol %g\n", kind == CLPHYS_SOLVER_CGNR ? "CGNR" : "BiCGStab",
               mixed ? "mixed fp32/fp64" : "fp64", kappa, tol);
        clphys_solver_result res;
        st = clphys_solver_solve(sp, b, x, &res);
        printf("  %s: %d iterations, %d restarts, residual %.3e, %.3f s (host b to host x), %.1f GFLOP/s\n",
               st ? "NOT CONVERGED" : "converged", res.iterations, res.restarts, res.rel_residual, res.seconds, res.gflops);
        if (st) {
            rc = cli_fail("lqcd", st, ctx);
            goto out;
        }
        for (size_t site = 0; site < V; site++)
            for (int k = 0; k < 24; k++) corr[site / vol3] += x[site * 24 + k] * x[site * 24 + k];
    }
    if (nsrc == 12) {
        printf("pion correlator C(t) = sum_x |S(x,t)|^2\n");
        for (int t = 0; t < g.dims[3]; t++) printf("C %3d %.12e\n", t, corr[t]);
    }
    rc = 0;
out:
    free(b), free(x), free(corr);
    clphys_solver_plan_destroy(sp);
    clphys_dslash_plan_destroy(p64);
    clphys_dslash_plan_destroy(p32);
    rc = cli_context_done(ctx, rc);
    clphys_gauge_destroy(&g);
    return rc;
}

int cmd_lqcd(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "plaquette")) return plaquette(argc - 1, argv + 1);
    if (!strcmp(argv[1], "generate")) return generate(argc - 1, argv + 1);
    if (!strcmp(argv[1], "solve")) return solve(argc - 1, argv + 1);
    fprintf(stderr, "clphys lqcd: unknown subcommand '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
