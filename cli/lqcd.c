/* lqcd.c — `clphys lqcd`: gauge-configuration files and Wilson solves.
 *   clphys lqcd plaquette FILE [--no-checksum]
 *   clphys lqcd generate --dims LXxLYxLZxLT (--cold | --hot SEED) --out FILE [--format nersc|ildg]
 *                        [--fp32] [--two-rows] [--force]
 *   clphys lqcd convert IN OUT [--to nersc|ildg] [--fp32|--fp64] [--two-rows] [--no-checksum] [--force]
 *   clphys lqcd solve FILE --kappa K --source point|random --tol T
 *                    [--solver cgnr|bicgstab] [--fp64-only] [--blas auto|fused|clblast]
 *                    [--max-iter N] [--no-checksum] [--device SPEC]
 * and, for every subcommand, --bc X,Y,Z,T (the fermion boundary, p or a
 * per direction; default p,p,p,a; --periodic is --bc p,p,p,p) and --grid
 * PXxPYxPZxPT (the process grid under an MPI launcher; default 1x1x1xP).
 * Every subcommand describes its options in one table (cli/opt.h).
 * solve prints the residual history (the iterated estimate per Krylov
 * iteration, the true fp64 residual per defect-correction cycle) and, for a
 * point source (12 solves, one per source spin-colour), the pion correlator
 * C(t) = sum_x |S(x,t)|^2.  Under mpirun -np P the lattice is split over the
 * grid (the file read on rank 0 and scattered, the plaquette and the solves
 * distributed), files are written by rank 0, and rank 0 prints what a single
 * rank prints.  solve --device LIST ("gpus", "0:0,0:1") without a launcher
 * splits the lattice over those devices in this process (cli/lqcd_multi.c;
 * --grid then splits over the devices). */
#include "cli.h"
#include "cli_mpi.h"
#include "lqcd_cli.h"
#include "opt.h"
#include "outputs.h"

#ifdef CLPHYS_HAVE_MPI
#include "clphys_lqcd_mpi.h"
#endif

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: clphys lqcd plaquette FILE [--no-checksum]\n"
                 "       clphys lqcd generate --dims LXxLYxLZxLT (--cold | --hot SEED) --out FILE\n"
                 "              [--format nersc|ildg] [--fp32] [--two-rows] [--force]\n"
                 "       clphys lqcd convert IN OUT [--to nersc|ildg] [--fp32|--fp64] [--two-rows] [--no-checksum]\n"
                 "              [--force]\n"
                 "       clphys lqcd solve FILE --kappa K --source point|random --tol T\n"
                 "              [--solver cgnr|bicgstab] [--fp64-only] [--blas auto|fused|clblast]\n"
                 "              [--max-iter N] [--no-checksum] [--device SPEC] [--monitor]\n"
                 "              [--output FILE [--force]]\n"
                 "   every subcommand: [--bc X,Y,Z,T | --periodic] [--grid PXxPYxPZxPT]\n"
                 "       mpirun -np P clphys lqcd ...   the same, the lattice split over P ranks\n"
                 "Gauge files are read in NERSC, ILDG or MILC (v5 binary) format, told apart by their first bytes,\n"
                 "and written in NERSC or ILDG (convert: --to, else from OUT's extension .nersc, .ildg or .lime;\n"
                 "precision: the input's unless --fp32/--fp64).  Every read checks the file's size, that links are\n"
                 "finite and in SU(3), and the checksum, plaquette and link trace the file carries; a file that\n"
                 "carries none (e.g. CHECKSUM = 0) is read only with --no-checksum, and is said to be not verified;\n"
                 "--no-checksum also skips (and names) every header value that disagrees with the data.  Files are\n"
                 "read from regular files only (not pipes).\n"
                 "An existing output is replaced only with --force, an input never.  --bc: the fermion boundary of\n"
                 "x, y, z, t, p (periodic) or a (antiperiodic) each, default p,p,p,a (--periodic: p,p,p,p); it\n"
                 "enters the hopping term as a phase, the links stay as they are.  --grid: the ranks along x, y,\n"
                 "z, t under an MPI launcher (their product is the number of ranks, each extent divisible with an\n"
                 "even quotient; default 1x1x1xP); the file is read on rank 0, and rank 0 prints and writes.\n"
                 "Solves use the even-odd system, mixed precision unless --fp64-only; the level-1 work runs in\n"
                 "fused kernels (auto, fused) or through clBLAST.  solve --device LIST (gpus = every GPU, or\n"
                 "P:D,P:D,...) without a launcher splits the lattice over those devices in this process, one host\n"
                 "thread each (--grid over the devices; default 1x1x1xN).  solve prints one line per solve and a\n"
                 "total line (--monitor: every iteration's residual too); with --source point it prints the pion\n"
                 "correlator, and --output FILE writes it (JSON when FILE ends in .json, else text).\n");
}

static const char *const FORMATS = "nersc|ildg";
static const clphys_lqcd_gauge_file_format FORMAT_OF[] = {CLPHYS_LQCD_GAUGE_FILE_NERSC, CLPHYS_LQCD_GAUGE_FILE_ILDG};

/* --bc, --periodic and --grid, which every subcommand takes: LATTICE_OPTS(o)
 * in its table, then lattice_finish. */
typedef struct {
    const char *bc_s;
    int periodic, grid[4];
    clphys_lqcd_bc bc[4];
    int have_grid;
} lattice_opts;
#define LATTICE_OPTS(o)                                                                                                \
    CLI_OPT_STRING("--bc", &(o).bc_s), CLI_OPT_FLAG("--periodic", &(o).periodic),                                      \
        CLI_OPT_DIMS("--grid", (o).grid, 4, 1, 1 << 20)

/* "p,a,p,a": four of p|a. */
static int parse_bc(const char *s, clphys_lqcd_bc bc[4])
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
        bc[mu] = k ? CLPHYS_LQCD_BC_ANTIPERIODIC : CLPHYS_LQCD_BC_PERIODIC;
        tok = comma ? comma + 1 : tok;
    }
    return 0;
}

static int lattice_finish(const char *cmd, lattice_opts *o)
{
    for (int mu = 0; mu < 4; mu++) o->bc[mu] = CLPHYS_LQCD_BC_AUTO;
    if (o->bc_s && o->periodic) {
        fprintf(stderr, "clphys %s: --bc and --periodic: give one of them\n", cmd);
        return 2;
    }
    if (o->periodic)
        for (int mu = 0; mu < 4; mu++) o->bc[mu] = CLPHYS_LQCD_BC_PERIODIC;
    if (o->bc_s && parse_bc(o->bc_s, o->bc)) return 2;
    o->have_grid = o->grid[0] != 0;
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

/* Status st of rank 0 (or of this rank, when alone) on every rank. */
static clphys_status agree(const ranks *r, clphys_status st)
{
#ifdef CLPHYS_HAVE_MPI
    if (r->dist) return clphys_mpi_agree(r->comm, NULL, st);
#endif
    (void)r;
    return st;
}

/* Read a gauge file of any format; says what could not be verified. */
static clphys_status read_gauge(const char *file, int no_checksum, clphys_lqcd_gauge_field *g,
                                clphys_lqcd_gauge_file_info *info)
{
    clphys_lqcd_gauge_read_params p = {.allow_unverified = no_checksum};
    clphys_status st = clphys_lqcd_gauge_read(file, &p, g, info);
    if (!st && info->unverified[0])
        fprintf(stderr, "clphys lqcd: %s: not verified (%s); read with --no-checksum, the unitarity%s checks passed\n",
                file, info->unverified, info->plaquette_verified ? " and plaquette" : "");
    return st;
}

#ifdef CLPHYS_HAVE_MPI
/* The readers rank 0 hands to clphys_lqcd_gauge_read_mpi: every check, or
 * --no-checksum; what they found is kept for rank 0's report. */
static clphys_lqcd_gauge_file_info read_info;
static clphys_status read_verified(const char *file, clphys_lqcd_gauge_field *g)
{
    return read_gauge(file, 0, g, &read_info);
}
static clphys_status read_unverified(const char *file, clphys_lqcd_gauge_field *g)
{
    return read_gauge(file, 1, g, &read_info);
}
#endif

/* The file, whole (one rank) or this rank's part (read on rank 0 and
 * scattered); info is filled on rank 0. */
static clphys_status read_field(const ranks *r, const char *file, int no_checksum, clphys_lqcd_gauge_field *g,
                                int dims[4], clphys_lqcd_gauge_file_info *info)
{
#ifdef CLPHYS_HAVE_MPI
    if (r->dist) {
        memset(&read_info, 0, sizeof read_info);
        clphys_status st =
            clphys_lqcd_gauge_read_mpi(r->comm, r->grid, file, no_checksum ? read_unverified : read_verified, g, dims);
        *info = read_info;
        return st;
    }
#endif
    (void)r;
    clphys_status st = read_gauge(file, no_checksum, g, info);
    if (!st) memcpy(dims, g->dims, sizeof g->dims);
    return st;
}

static int plaquette(int argc, char **argv)
{
    int no_checksum = 0, help = 0, npos = 0;
    lattice_opts o = {0};
    const char *pos[1];
    const cli_opt opts[] = {CLI_OPT_FLAG("--no-checksum", &no_checksum), LATTICE_OPTS(o), CLI_OPT_END};
    if (cli_parse("lqcd plaquette", argc, argv, opts, pos, 1, &npos, &help)) return 2;
    if (help || npos != 1) {
        if (!help) fprintf(stderr, "clphys lqcd plaquette: give one gauge file\n");
        usage(help ? stdout : stderr);
        return help ? 0 : 2;
    }
    if (lattice_finish("lqcd plaquette", &o)) return 2;
    ranks r;
    if (ranks_setup(&o, &r)) return 1;
    clphys_lqcd_gauge_field g;
    clphys_lqcd_gauge_file_info info;
    int dims[4];
    clphys_status st = read_field(&r, pos[0], no_checksum, &g, dims, &info);
    if (st) return cli_fail("lqcd", st, NULL);
    double plaq = 0, trace = 0;
#ifdef CLPHYS_HAVE_MPI
    if (r.dist)
        st = clphys_lqcd_gauge_plaquette_mpi(r.comm, r.grid, &g, &plaq, &trace);
    else
#endif
        plaq = clphys_lqcd_gauge_plaquette(&g), trace = clphys_lqcd_gauge_link_trace(&g);
    clphys_lqcd_gauge_destroy(&g);
    if (st) return cli_fail("lqcd", st, NULL);
    if (r.rank == 0)
        printf("format %s (%s, %d rows stored), checksum %s\nlattice %dx%dx%dx%d\nplaquette %.12f\nlink_trace %.12f\n"
               "unitarity %.3g\n",
               clphys_lqcd_gauge_file_format_name(info.format), info.precision == CLPHYS_FP64 ? "fp64" : "fp32",
               info.rows, info.checksum_verified ? "verified" : "not verified", dims[0], dims[1], dims[2], dims[3],
               plaq, trace, info.unitarity);
    return 0;
}

/* Write g; says what was written. */
static int write_gauge(const char *out, const clphys_lqcd_gauge_field *g, clphys_lqcd_gauge_file_format fmt,
                       clphys_precision p, int rows)
{
    clphys_status st = clphys_lqcd_gauge_write(out, g, fmt, p, rows);
    if (st) return cli_fail("lqcd", st, NULL);
    printf("wrote %s (%s, %s%s): plaquette %.12f link_trace %.12f\n", out, clphys_lqcd_gauge_file_format_name(fmt),
           p == CLPHYS_FP64 ? "fp64" : "fp32", rows == 2 ? ", two rows" : "", clphys_lqcd_gauge_plaquette(g),
           clphys_lqcd_gauge_link_trace(g));
    return 0;
}

static int generate(int argc, char **argv)
{
    int dims[4] = {0}, cold = 0, fp32 = 0, two_rows = 0, force = 0, help = 0, fmt = 0;
    long long seed = -1;
    const char *out = NULL;
    lattice_opts o = {0};
    const cli_opt opts[] = {
        LATTICE_OPTS(o),
        CLI_OPT_DIMS("--dims", dims, 4, 2, 1 << 30),
        CLI_OPT_FLAG("--cold", &cold),
        CLI_OPT_INT("--hot", &seed, 0, (double)LLONG_MAX),
        CLI_OPT_STRING("--out", &out),
        CLI_OPT_CHOICE("--format", &fmt, FORMATS),
        CLI_OPT_FLAG("--fp32", &fp32),
        CLI_OPT_FLAG("--two-rows", &two_rows),
        CLI_OPT_FLAG("--force", &force),
        CLI_OPT_END,
    };
    if (cli_parse("lqcd generate", argc, argv, opts, NULL, 0, NULL, &help)) return 2;
    if (help) {
        usage(stdout);
        return 0;
    }
    if (!dims[0] || !out || cold == (seed >= 0)) {
        fprintf(stderr, "clphys lqcd generate: needs --dims, --out and one of --cold, --hot SEED\n");
        return 2;
    }
    if (two_rows && FORMAT_OF[fmt] == CLPHYS_LQCD_GAUGE_FILE_ILDG) {
        fprintf(stderr, "clphys lqcd generate: --two-rows: ILDG files store 3x3 links\n");
        return 2;
    }
    for (int mu = 0; mu < 4; mu++)
        if (dims[mu] % 2) {
            fprintf(stderr,
                    "clphys lqcd generate: --dims %dx%dx%dx%d: every extent must be even (even-odd "
                    "ordering)\n",
                    dims[0], dims[1], dims[2], dims[3]);
            return 2;
        }
    if (lattice_finish("lqcd generate", &o)) return 2;
    ranks r;
    if (ranks_setup(&o, &r)) return 1;
    /* the file is made and written once, by rank 0 */
    int rc = 0;
    if (r.rank == 0) {
        const cli_file outputs[] = {{"--out", out}};
        rc = cli_check_outputs("lqcd generate", NULL, 0, outputs, 1, force);
        clphys_lqcd_gauge_field g;
        clphys_status st = rc ? CLPHYS_SUCCESS : clphys_lqcd_gauge_create(dims, &g);
        if (!rc && st)
            rc = cli_fail("lqcd", st, NULL);
        else if (!rc) {
            if (seed >= 0) clphys_lqcd_gauge_hot(&g, (uint64_t)seed);
            rc = write_gauge(out, &g, FORMAT_OF[fmt], fp32 ? CLPHYS_FP32 : CLPHYS_FP64, two_rows ? 2 : 3);
            clphys_lqcd_gauge_destroy(&g);
        }
    }
    /* under a launcher 1, not 2: main ends the job on 2 */
    return agree(&r, rc ? CLPHYS_ERR_IO : CLPHYS_SUCCESS) ? (r.dist ? 1 : rc ? rc : 1) : 0;
}

/* The output format from the file name's extension, or -1. */
static int format_of_name(const char *name)
{
    const char *dot = strrchr(name, '.'), *slash = strrchr(name, '/');
    if (!dot || (slash && dot < slash)) return -1;
    if (!strcmp(dot, ".nersc")) return 0;
    if (!strcmp(dot, ".ildg") || !strcmp(dot, ".lime")) return 1;
    return -1;
}

static int convert(int argc, char **argv)
{
    int to = -1, fp32 = 0, fp64 = 0, two_rows = 0, no_checksum = 0, force = 0, help = 0, npos = 0;
    const char *pos[2];
    lattice_opts o = {0};
    const cli_opt opts[] = {
        LATTICE_OPTS(o),
        CLI_OPT_CHOICE("--to", &to, FORMATS),
        CLI_OPT_FLAG("--fp32", &fp32),
        CLI_OPT_FLAG("--fp64", &fp64),
        CLI_OPT_FLAG("--two-rows", &two_rows),
        CLI_OPT_FLAG("--no-checksum", &no_checksum),
        CLI_OPT_FLAG("--force", &force),
        CLI_OPT_END,
    };
    if (cli_parse("lqcd convert", argc, argv, opts, pos, 2, &npos, &help)) return 2;
    if (help) {
        usage(stdout);
        return 0;
    }
    if (npos != 2) {
        fprintf(stderr, "clphys lqcd convert: give the input and the output file (IN OUT)\n");
        return 2;
    }
    if (fp32 && fp64) {
        fprintf(stderr, "clphys lqcd convert: --fp32 and --fp64: give one of them\n");
        return 2;
    }
    if (to < 0 && (to = format_of_name(pos[1])) < 0) {
        fprintf(stderr,
                "clphys lqcd convert: OUT %s: name the format with --to nersc|ildg (or end the name in .nersc, "
                ".ildg or .lime)\n",
                pos[1]);
        return 2;
    }
    if (two_rows && FORMAT_OF[to] == CLPHYS_LQCD_GAUGE_FILE_ILDG) {
        fprintf(stderr, "clphys lqcd convert: --two-rows: ILDG files store 3x3 links\n");
        return 2;
    }
    if (lattice_finish("lqcd convert", &o)) return 2;
    ranks r;
    if (ranks_setup(&o, &r)) return 1;
    /* a conversion is one file to another: rank 0 does it */
    int rc = 0;
    if (r.rank == 0) {
        const cli_file inputs[] = {{"IN", pos[0]}}, outputs[] = {{"OUT", pos[1]}};
        rc = cli_check_outputs("lqcd convert", inputs, 1, outputs, 1, force);
        clphys_lqcd_gauge_field g;
        clphys_lqcd_gauge_file_info info;
        clphys_status st = rc ? CLPHYS_SUCCESS : read_gauge(pos[0], no_checksum, &g, &info);
        if (!rc && st)
            rc = cli_fail("lqcd", st, NULL);
        else if (!rc) {
            clphys_precision p = fp32 ? CLPHYS_FP32 : fp64 ? CLPHYS_FP64 : info.precision;
            printf("read %s (%s, %s): plaquette %.12f\n", pos[0], clphys_lqcd_gauge_file_format_name(info.format),
                   info.precision == CLPHYS_FP64 ? "fp64" : "fp32", clphys_lqcd_gauge_plaquette(&g));
            /* fp32 links carry fp32's unitarity error: written as fp64 they
             * must be projected back onto SU(3), or no reader takes them */
            const double v = clphys_lqcd_gauge_unitarity_violation(&g);
            if (p == CLPHYS_FP64 && !(v <= CLPHYS_LQCD_GAUGE_UNITARITY_TOL_FP64)) {
                clphys_lqcd_gauge_reunitarize(&g);
                printf("reunitarized for fp64: unitarity violation %.3g -> %.3g (plaquette now %.12f)\n", v,
                       clphys_lqcd_gauge_unitarity_violation(&g), clphys_lqcd_gauge_plaquette(&g));
            }
            rc = write_gauge(pos[1], &g, FORMAT_OF[to], p, two_rows ? 2 : 3);
            clphys_lqcd_gauge_destroy(&g);
        }
    }
    /* under a launcher 1, not 2: main ends the job on 2 */
    return agree(&r, rc ? CLPHYS_ERR_IO : CLPHYS_SUCCESS) ? (r.dist ? 1 : rc ? rc : 1) : 0;
}

static void progress(void *user, int iter, double rel, int is_true)
{
    if (cli_mpi_rank() == 0) lqcd_cli_monitor(user, iter, rel, is_true);
}

/* The options of a solve: one field per option, one table line each. */
typedef struct {
    const char *file, *device, *output;
    double kappa, tol;
    int source, solver, blas, fp64_only, no_checksum, monitor, force;
    long long max_iter;
} solve_args;

void lqcd_cli_random_source(double *b, size_t n)
{
    uint64_t z = 12345;
    for (size_t k = 0; k < n; k++) {
        z = z * 6364136223846793005ULL + 1442695040888963407ULL;
        b[k] = (double)(z >> 11) * 0x1.0p-53 * 2 - 1;
    }
}

static int solve(int argc, char **argv)
{
    solve_args A = {.kappa = 0, .tol = 0, .source = -1, .max_iter = 10000};
    lattice_opts o = {0};
    int help = 0, npos = 0;
    const char *pos[1];
    const cli_opt opts[] = {
        CLI_OPT_POSITIVE("--kappa", &A.kappa),
        CLI_OPT_POSITIVE("--tol", &A.tol),
        CLI_OPT_CHOICE("--source", &A.source, "point|random"),
        CLI_OPT_CHOICE("--solver", &A.solver, "cgnr|bicgstab"),
        CLI_OPT_CHOICE("--blas", &A.blas, "auto|fused|clblast"),
        CLI_OPT_FLAG("--fp64-only", &A.fp64_only),
        CLI_OPT_INT("--max-iter", &A.max_iter, 1, INT_MAX),
        CLI_OPT_FLAG("--no-checksum", &A.no_checksum),
        CLI_OPT_STRING("--device", &A.device),
        CLI_OPT_FLAG("--monitor", &A.monitor),
        CLI_OPT_STRING("--output", &A.output),
        CLI_OPT_FLAG("--force", &A.force),
        LATTICE_OPTS(o),
        CLI_OPT_END,
    };
    if (cli_parse("lqcd solve", argc, argv, opts, pos, 1, &npos, &help)) return 2;
    if (help) {
        usage(stdout);
        return 0;
    }
    char missing[128] = "";
    if (npos != 1) strcat(missing, " FILE");
    if (!(A.kappa > 0)) strcat(missing, " --kappa");
    if (!(A.tol > 0)) strcat(missing, " --tol");
    if (A.source < 0) strcat(missing, " --source");
    if (missing[0]) {
        fprintf(stderr, "clphys lqcd solve: missing%s (clphys lqcd --help lists the options)\n", missing);
        return 2;
    }
    if (lattice_finish("lqcd solve", &o)) return 2;
    A.file = pos[0];
    if (A.output && A.source != 0) {
        fprintf(stderr, "clphys lqcd solve: --output writes the pion correlator of --source point\n");
        return 2;
    }
    /* the correlator's file is checked before the solves (rank 0 writes it) */
    const cli_file in[1] = {{"FILE", A.file}}, outf[1] = {{"--output", A.output}};
    int bad_output = cli_mpi_rank() == 0 && A.output && cli_check_outputs("lqcd solve", in, 1, outf, 1, A.force);
    static const clphys_lqcd_solver_blas BLAS[] = {CLPHYS_LQCD_SOLVER_BLAS_AUTO, CLPHYS_LQCD_SOLVER_BLAS_FUSED,
                                                   CLPHYS_LQCD_SOLVER_BLAS_CLBLAST};
    const char *file = A.file, *device = A.device;
    const double kappa = A.kappa, tol = A.tol;
    const int mixed = !A.fp64_only, max_iter = (int)A.max_iter;
    const clphys_lqcd_solver_blas blas = BLAS[A.blas];
    const clphys_lqcd_solver_kind kind = A.solver ? CLPHYS_LQCD_SOLVER_BICGSTAB : CLPHYS_LQCD_SOLVER_CGNR;
    const char *source = A.source ? "random" : "point";
    if (lqcd_cli_is_list(device) && cli_mpi_size() <= 1) { /* the devices of this process */
        clphys_lqcd_gauge_field gw;
        clphys_lqcd_gauge_file_info wi;
        clphys_status sw = read_gauge(file, A.no_checksum, &gw, &wi);
        if (sw) return cli_fail("lqcd", sw, NULL);
        lqcd_solve_cfg c = {.device = device,
                            .kappa = kappa,
                            .tol = tol,
                            .point = !A.source,
                            .mixed = mixed,
                            .max_iter = max_iter,
                            .kind = kind,
                            .blas = blas,
                            .have_grid = o.have_grid,
                            .progress = A.monitor ? progress : NULL,
                            .output = A.output};
        if (bad_output) return 2;
        memcpy(c.bc, o.bc, sizeof c.bc);
        memcpy(c.grid, o.grid, sizeof c.grid);
        const int rc = lqcd_cli_solve_multi(&c, &gw);
        clphys_lqcd_gauge_destroy(&gw);
        return rc;
    }
    ranks r;
    if (ranks_setup(&o, &r)) return 1;
#ifdef CLPHYS_HAVE_MPI
    if (r.dist) MPI_Allreduce(MPI_IN_PLACE, &bad_output, 1, MPI_INT, MPI_MAX, r.comm);
#endif
    if (bad_output) return r.dist ? 1 : 2; /* under a launcher 1: main ends the job on 2 */
    clphys_lqcd_gauge_field g;
    int dims[4];
    clphys_lqcd_gauge_file_info info;
    clphys_status st = read_field(&r, file, A.no_checksum, &g, dims, &info);
    if (st) return cli_fail("lqcd", st, NULL);
    clphys_context *ctx = NULL;
    clphys_context **ctxs = NULL;
    clphys_lqcd_dslash_plan *p64 = NULL, *p32 = NULL;
    clphys_lqcd_solver_plan *sp = NULL;
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
    clphys_lqcd_dslash_params a = {.precision = CLPHYS_FP64, .reconstruct = 18, .kappa = kappa}, s32;
    memcpy(a.bc, o.bc, sizeof a.bc);
    s32 = a;
    s32.precision = CLPHYS_FP32, s32.reconstruct = 12;
#ifdef CLPHYS_HAVE_MPI
    if (r.dist) st = clphys_lqcd_dslash_plan_create_mpi(r.comm, r.grid, ctx, &g, &a, &p64);
    if (r.dist && !st && mixed) st = clphys_lqcd_dslash_plan_create_mpi(r.comm, r.grid, ctx, &g, &s32, &p32);
    if (!r.dist)
#endif
    {
        st = clphys_lqcd_dslash_plan_create(ctx, &g, &a, &p64);
        if (!st && mixed) st = clphys_lqcd_dslash_plan_create(ctx, &g, &s32, &p32);
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
    clphys_lqcd_solver_params prm = {.kind = kind,
                                     .tol = tol,
                                     .max_iter = max_iter,
                                     .mixed = mixed,
                                     .blas = blas,
                                     .progress = A.monitor ? progress : NULL};
    /* one workspace for all sources: each solve moves only b and x */
    if ((st = clphys_lqcd_solver_plan_create(p64, p32, &prm, &sp))) {
        rc = cli_fail("lqcd", st, ctx);
        goto out;
    }
    int nsrc = strcmp(source, "point") ? 1 : 12;
    lqcd_cli_total total = {0};
    if (r.rank == 0) lqcd_cli_header(kind, mixed, kappa, tol, nsrc == 12);
    const int lt = g.dims[3];
    const size_t vol3 = V / (size_t)lt;
    for (int src = 0; src < nsrc; src++) {
        memset(b, 0, sizeof(double) * 24 * V);
        if (nsrc == 1) { /* the one source of the whole lattice, made on rank 0 and scattered */
            if (!r.dist) lqcd_cli_random_source(b, 24 * V);
#ifdef CLPHYS_HAVE_MPI
            else {
                const size_t gv = (size_t)dims[0] * dims[1] * dims[2] * dims[3];
                if (r.rank == 0 && !whole && !(whole = malloc(sizeof(double) * 24 * gv))) {
                    fprintf(stderr, "clphys lqcd: out of memory\n");
                    MPI_Abort(r.comm, 1);
                }
                if (r.rank == 0) lqcd_cli_random_source(whole, 24 * gv);
                if ((st = clphys_lqcd_spinor_scatter(r.comm, r.grid, dims, 0, whole, b))) {
                    rc = cli_fail("lqcd", st, NULL);
                    goto out;
                }
            }
#endif
        } else if (r.rank == 0) {
            b[src * 2] = 1; /* site 0 (on rank 0), spin src/3, colour src%3 */
        }
        clphys_lqcd_solver_result res;
        st = clphys_lqcd_solver_solve(sp, b, x, &res);
        if (r.rank == 0) lqcd_cli_solve_line(nsrc == 12, src, !st, &res, &total);
        if (st && r.dist && st != CLPHYS_ERR_NOT_CONVERGED) {
            /* a device failure (the hops agree it, so every rank has it):
             * each rank names itself and the job ends (main calls MPI_Abort
             * for 2) */
            fprintf(stderr, "clphys lqcd: rank %d: %s: %s\n", r.rank, clphys_status_string(st), clphys_last_error(ctx));
            rc = 2;
            goto out;
        }
        if (st) {
            rc = cli_fail("lqcd", st, ctx);
            goto out;
        }
        for (size_t site = 0; site < V; site++)
            for (int k = 0; k < 24; k++)
                corr[coord[3] * lt + (int)(site / vol3)] += x[site * 24 + k] * x[site * 24 + k];
    }
#ifdef CLPHYS_HAVE_MPI
    if (r.dist) MPI_Allreduce(MPI_IN_PLACE, corr, dims[3], MPI_DOUBLE, MPI_SUM, r.comm);
#endif
    rc = 0;
    if (r.rank == 0) {
        lqcd_cli_total_line(&total);
        if (nsrc == 12) rc = lqcd_cli_correlator(A.output, corr, dims, kappa);
    }
#ifdef CLPHYS_HAVE_MPI
    if (r.dist) MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, r.comm);
#endif
out:
    free(b), free(x), free(corr), free(whole);
    clphys_lqcd_solver_plan_destroy(sp);
    clphys_lqcd_dslash_plan_destroy(p64);
    clphys_lqcd_dslash_plan_destroy(p32);
    rc = cli_context_done(ctx, rc);
    if (ctxs) clphys_contexts_destroy(ctxs, 0); /* the array; its context went above */
    clphys_lqcd_gauge_destroy(&g);
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
    if (!strcmp(argv[1], "convert")) return convert(argc - 1, argv + 1);
    if (!strcmp(argv[1], "solve")) return solve(argc - 1, argv + 1);
    fprintf(stderr, "clphys lqcd: unknown subcommand '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
