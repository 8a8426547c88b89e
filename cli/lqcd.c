/* lqcd.c — `clphys lqcd`: gauge-configuration files and Wilson solves.
 *   clphys lqcd plaquette FILE
 *   clphys lqcd generate --dims LXxLYxLZxLT (--cold | --hot SEED) --out FILE [--fp32] [--two-rows]
 *   clphys lqcd solve FILE --kappa K --source point|random --tol T
 *                    [--solver cgnr|bicgstab] [--fp64-only] [--blas auto|fused|clblast]
 *                    [--max-iter N] [--device SPEC]
 * and, for every subcommand, --bc X,Y,Z,T (the fermion boundary, p or a
 * per direction; default p,p,p,a) and --grid PXxPYxPZxPT (the process grid
 * under an MPI launcher; default 1x1x1xP).  solve prints the residual
 * history (the iterated estimate per Krylov iteration, the true fp64
 * residual per defect-correction cycle) and, for a point source (12 solves,
 * one per source spin-colour), the pion correlator C(t) = sum_x |S(x,t)|^2.
 * Under mpirun -np P the lattice is split over the grid (the file read on
 * rank 0 and scattered, the plaquette and the solves distributed), and rank
 * 0 prints what a single rank prints. */
#include "cli.h"
#include "cli_mpi.h"
#include "opt.h"

#ifdef CLPHYS_HAVE_MPI
#include "clphys_lqcd_mpi.h"
#endif

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
                 "              [--max-iter N] [--device SPEC]\n"
                 "   every subcommand: [--bc X,Y,Z,T] [--grid PXxPYxPZxPT]\n"
                 "       mpirun -np P clphys lqcd ...   the same, the lattice split over P ranks\n"
                 "Gauge files are NERSC (4D_SU3_GAUGE or 4D_SU3_GAUGE_3x3, IEEE32BIG/IEEE64BIG); the header's\n"
                 "checksum, plaquette and link trace are verified.  --bc: the fermion boundary of x, y, z, t,\n"
                 "p (periodic) or a (antiperiodic) each, default p,p,p,a; it enters the hopping term as a phase,\n"
                 "the links stay as they are.  --grid: the ranks along x, y, z, t under an MPI launcher (their\n"
                 "product is the number of ranks, each extent divisible with an even quotient; default\n"
                 "1x1x1xP); the file is read on rank 0, and rank 0 prints.  Solves use the even-odd system,\n"
                 "mixed precision unless --fp64-only; the level-1 work runs in fused kernels (auto, fused) or\n"
                 "through clBLAST.\n");
}

/* --bc and --grid, which every subcommand takes. */
typedef struct {
    clphys_bc bc[4];
    int grid[4], have_grid;
} lattice_opts;

/* "p,a,p,a": four of p|a. */
static int parse_bc(const char *s, clphys_bc bc[4])
{
    char buf[64];
    if (strlen(s) >= sizeof buf) {
        fprintf(stderr, "clphys lqcd: --bc: '%s' is not X,Y,Z,T with p or a each\n", s);
        return 2;
    }
    strcpy(buf, s);
    char *tok = buf;
    for (int mu = 0; mu < 4; mu++) {
        char *comma = strchr(tok, ',');
        if ((mu < 3) != (comma != NULL)) {
            fprintf(stderr, "clphys lqcd: --bc: '%s' is not X,Y,Z,T with p or a each\n", s);
            return 2;
        }
        if (comma) *comma = 0;
        int k;
        if (cli_choice("lqcd", "--bc", tok, "p|a", &k)) return 2;
        bc[mu] = k ? CLPHYS_BC_ANTIPERIODIC : CLPHYS_BC_PERIODIC;
        tok = comma ? comma + 1 : tok;
    }
    return 0;
}

/* 1: argv[*i] was --bc or --grid (consumed), 0: another word, 2: an error. */
static int lattice_opt(int argc, char **argv, int *i, lattice_opts *o)
{
    const char *a = argv[*i];
    const int more = *i + 1 < argc;
    if (!strcmp(a, "--bc") || !strcmp(a, "--grid")) {
        if (!more) {
            fprintf(stderr, "clphys lqcd: %s needs a value\n", a);
            return 2;
        }
        const char *v = argv[++*i];
        if (a[2] == 'b') return parse_bc(v, o->bc) ? 2 : 1;
        o->have_grid = 1;
        return cli_dims("lqcd", "--grid", v, 4, 1, 1 << 20, o->grid) ? 2 : 1;
    }
    return 0;
}

/* The run's ranks: under an MPI launcher the process grid (default
 * 1x1x1xP), else one rank. */
typedef struct {
    int dist, rank, size, grid[4];
#ifdef CLPHYS_HAVE_MPI
    MPI_Comm comm;
#endif
} ranks;

static int ranks_setup(const lattice_opts *o, ranks *r)
{
    memset(r, 0, sizeof *r);
    r->size = 1;
#ifdef CLPHYS_HAVE_MPI
    r->dist = cli_mpi_comm(&r->comm);
    if (r->dist) {
        MPI_Comm_rank(r->comm, &r->rank);
        MPI_Comm_size(r->comm, &r->size);
    }
#endif
    const int def[4] = {1, 1, 1, r->size};
    memcpy(r->grid, o->have_grid ? o->grid : def, sizeof r->grid);
    if (r->grid[0] * r->grid[1] * r->grid[2] * r->grid[3] != r->size) {
        if (r->rank == 0)
            fprintf(stderr, "clphys lqcd: --grid %dx%dx%dx%d has %d ranks, but %d %s running%s\n", r->grid[0],
                    r->grid[1], r->grid[2], r->grid[3], r->grid[0] * r->grid[1] * r->grid[2] * r->grid[3], r->size,
                    r->size == 1 ? "is" : "are", r->dist ? "" : " (start it with mpirun -np P)");
        return 1; /* the same on every rank */
    }
    return 0;
}

/* The file, whole (one rank) or this rank's part (read on rank 0 and scattered). */
static clphys_status read_field(const ranks *r, const char *file, clphys_gauge_field *g, int dims[4])
{
#ifdef CLPHYS_HAVE_MPI
    if (r->dist) return clphys_gauge_read_mpi(r->comm, r->grid, file, NULL, g, dims);
#endif
    (void)r;
    clphys_status st = clphys_gauge_read_nersc(file, g);
    if (!st) memcpy(dims, g->dims, sizeof g->dims);
    return st;
}

static int plaquette(int argc, char **argv)
{
    const char *file = NULL;
    lattice_opts o = {.bc = {CLPHYS_BC_AUTO}};
    for (int i = 1; i < argc; i++) {
        const int k = lattice_opt(argc, argv, &i, &o);
        if (k == 2) return 2;
        if (k) continue;
        if (argv[i][0] == '-' || file) {
            usage(stderr);
            return 2;
        }
        file = argv[i];
    }
    ranks r;
    if (!file) {
        usage(stderr);
        return 2;
    }
    if (ranks_setup(&o, &r)) return 1;
    clphys_gauge_field g;
    int dims[4];
    clphys_status st = read_field(&r, file, &g, dims);
    if (st) return cli_fail("lqcd", st, NULL);
    double plaq = 0, trace = 0;
#ifdef CLPHYS_HAVE_MPI
    if (r.dist) st = clphys_gauge_plaquette_mpi(r.comm, r.grid, &g, &plaq, &trace);
    else
#endif
        plaq = clphys_gauge_plaquette(&g), trace = clphys_gauge_link_trace(&g);
    clphys_gauge_destroy(&g);
    if (st) return cli_fail("lqcd", st, NULL);
    if (r.rank == 0)
        printf("lattice %dx%dx%dx%d\nplaquette %.12f\nlink_trace %.12f\n", dims[0], dims[1], dims[2], dims[3], plaq,
               trace);
    return 0;
}

static int generate(int argc, char **argv)
{
    int dims[4] = {0}, have_dims = 0, cold = 0, hot = 0, rows = 3;
    unsigned long long seed = 0;
    const char *out = NULL;
    clphys_precision p = CLPHYS_FP64;
    lattice_opts o = {.bc = {CLPHYS_BC_AUTO}};
    for (int i = 1; i < argc; i++) {
        int more = i + 1 < argc;
        const int k = lattice_opt(argc, argv, &i, &o);
        if (k == 2) return 2;
        if (k) continue;
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
    ranks r;
    if (ranks_setup(&o, &r)) return 1;
    /* the file is written once, by rank 0 */
    clphys_status st = CLPHYS_SUCCESS;
    if (r.rank == 0) {
        clphys_gauge_field g;
        st = clphys_gauge_create(dims, &g);
        if (!st && hot) clphys_gauge_hot(&g, seed);
        if (!st) st = clphys_gauge_write_nersc(out, &g, p, rows);
        if (!st)
            printf("wrote %s: plaquette %.12f link_trace %.12f\n", out, clphys_gauge_plaquette(&g),
                   clphys_gauge_link_trace(&g));
        clphys_gauge_destroy(&g);
    }
#ifdef CLPHYS_HAVE_MPI
    if (r.dist) st = clphys_mpi_agree(r.comm, NULL, st);
#endif
    return st ? cli_fail("lqcd", st, NULL) : 0;
}

static void progress(void *user, int iter, double rel, int is_true)
{
    (void)user;
    if (cli_mpi_rank() == 0)
        printf("  iteration %6d  %s = %.6e\n", iter, is_true ? "true |b - D x|/|b|" : "iterated residual ", rel);
}

/* The random source of every run (one rank's whole lattice). */
static void random_source(double *b, size_t n)
{
    uint64_t z = 12345;
    for (size_t k = 0; k < n; k++) {
        z = z * 6364136223846793005ULL + 1442695040888963407ULL;
        b[k] = (double)(z >> 11) * 0x1.0p-53 * 2 - 1;
    }
}

static int solve(int argc, char **argv)
{
    const char *file = NULL, *source = NULL, *device = NULL;
    double kappa = -1, tol = -1;
    int mixed = 1, max_iter = 10000;
    clphys_solver_blas blas = CLPHYS_SOLVER_BLAS_AUTO;
    clphys_solver_kind kind = CLPHYS_SOLVER_CGNR;
    lattice_opts o = {.bc = {CLPHYS_BC_AUTO}};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        const int k = lattice_opt(argc, argv, &i, &o);
        if (k == 2) return 2;
        if (k) continue;
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
    ranks r;
    if (ranks_setup(&o, &r)) return 1;
    clphys_gauge_field g;
    int dims[4];
    clphys_status st = read_field(&r, file, &g, dims);
    if (st) return cli_fail("lqcd", st, NULL);
    clphys_context *ctx = NULL;
    clphys_context **ctxs = NULL;
    clphys_dslash_plan *p64 = NULL, *p32 = NULL;
    clphys_solver_plan *sp = NULL;
    double *b = NULL, *x = NULL, *corr = NULL, *whole = NULL;
    int rc = 1, coord[4] = {0, 0, 0, 0};
    const size_t V = g.volume; /* this rank's sites */
    clphys_lqcd_grid_local(dims, r.grid, r.rank, NULL, coord);
#ifdef CLPHYS_HAVE_MPI
    if (r.dist) { /* ranks of one node share its devices (clphys_contexts_create) */
        int idx, cnt, n = 0;
        cli_mpi_node(&idx, &cnt);
        st = clphys_contexts_create(device, idx, cnt, &ctxs, &n);
        if (!st) ctx = ctxs[0];
        st = clphys_mpi_agree(r.comm, NULL, st);
    } else
#endif
        st = clphys_context_create(device, &ctx);
    if (st) {
        rc = cli_fail("lqcd", st, NULL);
        goto out;
    }
    clphys_dslash_params a = {.precision = CLPHYS_FP64, .reconstruct = 18, .kappa = kappa}, s32;
    memcpy(a.bc, o.bc, sizeof a.bc);
    s32 = a;
    s32.precision = CLPHYS_FP32, s32.reconstruct = 12;
#ifdef CLPHYS_HAVE_MPI
    if (r.dist)
        st = clphys_dslash_plan_create_mpi(r.comm, r.grid, ctx, &g, &a, &p64);
    if (r.dist && !st && mixed)
        st = clphys_dslash_plan_create_mpi(r.comm, r.grid, ctx, &g, &s32, &p32);
    if (!r.dist)
#endif
    {
        st = clphys_dslash_plan_create(ctx, &g, &a, &p64);
        if (!st && mixed) st = clphys_dslash_plan_create(ctx, &g, &s32, &p32);
    }
    if (st) {
        rc = cli_fail("lqcd", st, ctx);
        goto out;
    }
    b = calloc(V * 24, sizeof(double));
    x = calloc(V * 24, sizeof(double));
    corr = calloc((size_t)dims[3], sizeof(double));
    int ok = b && x && corr;
#ifdef CLPHYS_HAVE_MPI
    if (r.dist) MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, r.comm);
#endif
    if (!ok) {
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
    const int lt = g.dims[3];
    const size_t vol3 = V / (size_t)lt;
    for (int src = 0; src < nsrc; src++) {
        memset(b, 0, sizeof(double) * 24 * V);
        if (nsrc == 1) { /* the one source of the whole lattice, made on rank 0 and scattered */
            if (!r.dist) random_source(b, 24 * V);
#ifdef CLPHYS_HAVE_MPI
            else {
                const size_t gv = (size_t)dims[0] * dims[1] * dims[2] * dims[3];
                if (r.rank == 0 && !whole && !(whole = malloc(sizeof(double) * 24 * gv))) {
                    fprintf(stderr, "clphys lqcd: out of memory\n");
                    MPI_Abort(r.comm, 1);
                }
                if (r.rank == 0) random_source(whole, 24 * gv);
                if ((st = clphys_spinor_scatter(r.comm, r.grid, dims, 0, whole, b))) {
                    rc = cli_fail("lqcd", st, NULL);
                    goto out;
                }
            }
#endif
        } else if (r.rank == 0) {
            b[src * 2] = 1; /* site 0 (on rank 0), spin src/3, colour src%3 */
        }
        if (r.rank == 0) {
            if (nsrc > 1) printf("source point, spin %d colour %d: ", src / 3, src % 3);
            else printf("source random: ");
            printf("%s %s, kappa %g, tol %g\n", kind == CLPHYS_SOLVER_CGNR ? "CGNR" : "BiCGStab",
                   mixed ? "mixed fp32/fp64" : "fp64", kappa, tol);
        }
        clphys_solver_result res;
        st = clphys_solver_solve(sp, b, x, &res);
        if (r.rank == 0)
            printf("  %s: %d iterations, %d restarts, residual %.3e, %.3f s (host b to host x), %.1f GFLOP/s\n",
                   st ? "NOT CONVERGED" : "converged", res.iterations, res.restarts, res.rel_residual, res.seconds,
                   res.gflops);
        if (st && r.dist && st != CLPHYS_ERR_NOT_CONVERGED) {
            /* a device failure of this rank alone: the others may wait in the
             * next exchange, so the job ends (main calls MPI_Abort for 2) */
            fprintf(stderr, "clphys lqcd: rank %d: %s: %s\n", r.rank, clphys_status_string(st), clphys_last_error(ctx));
            rc = 2;
            goto out;
        }
        if (st) {
            rc = cli_fail("lqcd", st, ctx);
            goto out;
        }
        for (size_t site = 0; site < V; site++)
            for (int k = 0; k < 24; k++) corr[coord[3] * lt + (int)(site / vol3)] += x[site * 24 + k] * x[site * 24 + k];
    }
#ifdef CLPHYS_HAVE_MPI
    if (r.dist) MPI_Allreduce(MPI_IN_PLACE, corr, dims[3], MPI_DOUBLE, MPI_SUM, r.comm);
#endif
    if (nsrc == 12 && r.rank == 0) {
        printf("pion correlator C(t) = sum_x |S(x,t)|^2\n");
        for (int t = 0; t < dims[3]; t++) printf("C %3d %.12e\n", t, corr[t]);
    }
    rc = 0;
out:
    free(b), free(x), free(corr), free(whole);
    clphys_solver_plan_destroy(sp);
    clphys_dslash_plan_destroy(p64);
    clphys_dslash_plan_destroy(p32);
    rc = cli_context_done(ctx, rc);
    if (ctxs) clphys_contexts_destroy(ctxs, 0); /* the array; its context went above */
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
