/* poisson.c — `clphys poisson`: the pressure Poisson / Helmholtz problem of
 * an ocean model on a bathymetry (a NetCDF file, a flat box or a random
 * basin), solved by multigrid-preconditioned CG (include/clphys_poisson.h);
 * the solution and mask written to NetCDF.  Under an MPI launcher with
 * several ranks (mpirun -np P clphys poisson ...) the same problem is
 * solved over the ranks (include/clphys_poisson_mpi.h): rank 0 reads the
 * bathymetry and the right-hand side, the plan and the blocks are
 * scattered, the solution is gathered and rank 0 writes it and prints.
 * The command line is an interface (scripts call it): see usage(). */
#include "cli.h"
#include "cli_mpi.h"
#include "opt.h"
#include "outputs.h"
#ifdef CLPHYS_HAVE_MPI
#include "clphys_poisson_mpi.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char CMD[] = "poisson";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: clphys poisson (--bathymetry FILE --depth-var NAME | --box NXxNYxNZ | --basin NXxNY --seed S)\n"
            "                      [--levels NZ] [--stretch F] [--extent LXxLYxLZ] [--lonlat LON0:LON1xLAT0:LAT1]\n"
            "                      [--rhs manufactured | --rhs-file FILE --rhs-var NAME] [--helmholtz LAMBDA]\n"
            "                      [--periodic-x] [--tol T] [--precision mixed|fp64|fp32] [--output FILE [--force]]\n"
            "                      [--line auto|column|column-vec|staged] [--monitor] [--device SPEC]\n"
            "       mpirun -np P clphys poisson ... [--grid PXxPY]   the same over P ranks\n"
            "Solves div(grad p) - lambda p = f on cell centres, no flux through coasts, the sea floor and the\n"
            "rigid lid (nor the domain's edges, unless --periodic-x).  Lengths in metres: cells at least\n"
            "0.001 m wide and thick, depths within +-12000 m, horizontal extents at most 4.1e7 m.\n"
            "  --bathymetry FILE  NetCDF depths (m, positive down) of variable --depth-var, dimensions (y, x) or\n"
            "                     (x, y) as the coordinate variables' CF attributes tell, their units m, km or\n"
            "                     degrees (degrees: a spherical grid, uniformly spaced); land where depth <= 0\n"
            "                     or missing\n"
            "  --box NXxNYxNZ     a flat box of --extent, uniform spacing unless --stretch\n"
            "  --basin NXxNY      a random basin (coast, shelf, slope, seamounts, islands) from --seed S\n"
            "  --levels NZ        layers of --bathymetry and --basin (default 32); their total is the deepest\n"
            "                     column (--bathymetry) or LZ of --extent\n"
            "  --stretch F        each layer F times as thick as the one above it (default 1)\n"
            "  --extent           box and basin size (default 1000000x1000000x4000)\n"
            "  --lonlat           box and basin on the sphere over these longitudes and latitudes (degrees)\n"
            "  --rhs manufactured f from the manufactured solution cos(pi X) cos(pi Y) cos(pi Z) (the default);\n"
            "                     the discretization error is printed\n"
            "  --rhs-file FILE    f from variable --rhs-var, dimensions (z, y, x) of the grid, z 0 at the\n"
            "                     surface; land values are ignored\n"
            "  --helmholtz LAMBDA 0 <= lambda <= 1e8 (1/m^2); without it the problem is singular: f loses its volume-\n"
            "                     weighted mean and p has zero mean, which is reported\n"
            "  --tol T            true |b - A p| / |b| to reach (default 1e-8)\n"
            "  --precision        V-cycle in fp32 within fp64 CG (mixed, the default), fp64, or fp32 CG too\n"
            "  --line             the V-cycle's line-relaxation kernels (default auto: staged on GPUs,\n"
            "                     column-vec on CPUs; all give the same V-cycle up to rounding)\n"
            "  --output FILE      p and mask, dimensions (z, y, x), CF attributes (a temporary file renamed);\n"
            "                     never an input; an existing FILE is replaced only with --force\n"
            "  --monitor          print every iteration's residual\n"
            "  --grid PXxPY       under MPI: the process grid over x and y (default MPI_Dims_create); every rank\n"
            "                     keeps whole columns (--line column-vec runs column there)\n"
            "The last line gives iterations, residual and time.\n");
}

typedef struct {
    const char *bathy, *depth_var, *rhs_kind, *rhs_file, *rhs_var, *output, *device, *extent, *lonlat;
    int box[3], basin[2], periodic, monitor, prec, line, force;
    long long seed, levels;
    double stretch, helmholtz, tol;
    int g_box, g_basin, g_seed, g_levels;
    int grid[2], g_grid;
} options;

/* "AxBxC" of positive reals */
static int parse_reals(const char *opt, const char *s, int k, double *out, double lo_open)
{
    char buf[256];
    if (strlen(s) >= sizeof buf) return cli_real(CMD, opt, "", 0, 0, 0, out);
    strcpy(buf, s);
    char *p = buf;
    for (int d = 0; d < k; d++) {
        char *x = d < k - 1 ? strchr(p, 'x') : NULL;
        if (d < k - 1 && !x) {
            fprintf(stderr, "clphys %s: %s: '%s' is not %d numbers joined by 'x'\n", CMD, opt, s, k);
            return 2;
        }
        if (x) *x = 0;
        if (cli_real(CMD, opt, p, lo_open, INFINITY, 1, &out[d])) return 2;
        p = x ? x + 1 : p;
    }
    return 0;
}

/* "LON0:LON1xLAT0:LAT1" */
static int parse_lonlat(const char *s, double r[4])
{
    char buf[256], *parts[4];
    if (strlen(s) >= sizeof buf) goto bad;
    strcpy(buf, s);
    char *x = strchr(buf, 'x');
    if (!x) goto bad;
    *x = 0;
    parts[0] = buf, parts[2] = x + 1;
    for (int h = 0; h < 2; h++) {
        char *c = strchr(parts[2 * h], ':');
        if (!c) goto bad;
        *c = 0;
        parts[2 * h + 1] = c + 1;
    }
    for (int i = 0; i < 4; i++)
        if (cli_real(CMD, "--lonlat", parts[i], i < 2 ? -360 : -90, i < 2 ? 360 : 90, 0, &r[i])) return 2;
    if (!(r[0] < r[1]) || !(r[2] < r[3])) {
        fprintf(stderr, "clphys %s: --lonlat: '%s': the ranges must increase\n", CMD, s);
        return 2;
    }
    return 0;
bad:
    fprintf(stderr, "clphys %s: --lonlat: '%s' is not LON0:LON1xLAT0:LAT1 (e.g. -60:-10x20:60)\n", CMD, s);
    return 2;
}

static int parse(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->stretch = 1, o->tol = 1e-8, o->levels = 32;
    int help = 0;
    const cli_opt opts[] = {
        CLI_OPT_STRING("--bathymetry", &o->bathy),
        CLI_OPT_STRING("--depth-var", &o->depth_var),
        {.name = "--box", .kind = CLI_DIMS, .out = o->box, .lo = 1, .hi = 1 << 20, .ndims = 3, .given = &o->g_box},
        {.name = "--basin",
         .kind = CLI_DIMS,
         .out = o->basin,
         .lo = 1,
         .hi = 1 << 20,
         .ndims = 2,
         .given = &o->g_basin},
        {.name = "--seed", .kind = CLI_INT, .out = &o->seed, .lo = 0, .hi = 9007199254740992.0, .given = &o->g_seed},
        {.name = "--levels", .kind = CLI_INT, .out = &o->levels, .lo = 1, .hi = 1 << 20, .given = &o->g_levels},
        CLI_OPT_POSITIVE("--stretch", &o->stretch),
        CLI_OPT_STRING("--extent", &o->extent),
        CLI_OPT_STRING("--lonlat", &o->lonlat),
        CLI_OPT_STRING("--rhs", &o->rhs_kind),
        CLI_OPT_STRING("--rhs-file", &o->rhs_file),
        CLI_OPT_STRING("--rhs-var", &o->rhs_var),
        CLI_OPT_REAL("--helmholtz", &o->helmholtz, 0, CLPHYS_POISSON_MAX_HELMHOLTZ),
        CLI_OPT_FLAG("--periodic-x", &o->periodic),
        CLI_OPT_POSITIVE("--tol", &o->tol),
        CLI_OPT_CHOICE("--precision", &o->prec, "mixed|fp64|fp32"),
        CLI_OPT_CHOICE("--line", &o->line, "auto|column|column-vec|staged"), /* clphys_poisson_line's order */
        CLI_OPT_STRING("--output", &o->output),
        CLI_OPT_FLAG("--force", &o->force),
        CLI_OPT_FLAG("--monitor", &o->monitor),
        CLI_OPT_STRING("--device", &o->device),
        {.name = "--grid", .kind = CLI_DIMS, .out = o->grid, .lo = 1, .hi = 1 << 20, .ndims = 2, .given = &o->g_grid},
        CLI_OPT_END,
    };
    if (cli_parse(CMD, argc, argv, opts, NULL, 0, NULL, &help)) return 2;
    if (help) {
        usage(stdout);
        return 1;
    }
    const int sources = !!o->bathy + o->g_box + o->g_basin;
    const char *why = NULL;
    if (sources != 1)
        why = "give exactly one of --bathymetry, --box and --basin";
    else if (!!o->bathy != !!o->depth_var)
        why = "--bathymetry and --depth-var go together";
    else if (o->g_basin != o->g_seed)
        why = "--basin and --seed go together";
    else if (o->g_box && o->g_levels)
        why = "--box gives NZ; --levels is for --bathymetry and --basin";
    else if (o->bathy && (o->extent || o->lonlat))
        why = "--extent and --lonlat are for --box and --basin (a bathymetry file has its coordinates)";
    else if (o->rhs_kind && strcmp(o->rhs_kind, "manufactured"))
        why = "--rhs takes 'manufactured' (a file's right-hand side: --rhs-file and --rhs-var)";
    else if (o->rhs_kind && o->rhs_file)
        why = "give --rhs manufactured or --rhs-file, not both";
    else if (!!o->rhs_file != !!o->rhs_var)
        why = "--rhs-file and --rhs-var go together";
    if (why) {
        fprintf(stderr, "clphys %s: %s\n", CMD, why);
        return 2;
    }
    return 0;
}

/* The geometry and the coordinates written with the solution. */
typedef struct {
    clphys_poisson_geometry g;
    double *dx, *dy, *dz, *depth, *xc, *yc, *zc;
} problem;

static void problem_free(problem *p)
{
    free(p->dx), free(p->dy), free(p->dz), free(p->depth), free(p->xc), free(p->yc), free(p->zc);
}

/* centres of n uniform cells over [a, b], or cumulative from spacings d */
static void centres(int n, double a, double b, const double *d, double *c)
{
    double f = a;
    for (int i = 0; i < n; i++) {
        const double w = d ? d[i] : (b - a) / n;
        c[i] = f + w / 2, f += w;
    }
}

/* spacings from cell centres: faces halfway between them */
static void spacings(int n, const double *c, double *d)
{
    for (int i = 0; i < n; i++) {
        const double lo = i > 0 ? (c[i] + c[i - 1]) / 2 : c[0] - (c[1] - c[0]) / 2;
        const double hi = i + 1 < n ? (c[i] + c[i + 1]) / 2 : c[n - 1] + (c[n - 1] - c[n - 2]) / 2;
        d[i] = hi - lo;
    }
}

static int uniform(const double *c, int n)
{
    const double h = (c[n - 1] - c[0]) / (n - 1);
    for (int i = 1; i < n; i++)
        if (fabs(c[i] - c[i - 1] - h) > 1e-6 * fabs(h)) return 0;
    return 1;
}

static int build_problem(const options *o, problem *p)
{
    memset(p, 0, sizeof *p);
    clphys_poisson_geometry *g = &p->g;
    double lz = 4000;
    if (o->bathy) {
        clphys_poisson_bathymetry b;
        clphys_status st = clphys_poisson_read_bathymetry(o->bathy, o->depth_var, &b);
        if (st) return cli_fail(CMD, st, NULL);
        g->nx = b.nx, g->ny = b.ny, g->nz = (int)o->levels;
        p->depth = b.depth, p->xc = b.x, p->yc = b.y;
        b.depth = b.x = b.y = NULL;
        lz = 0;
        for (size_t c = 0; c < (size_t)g->nx * g->ny; c++) lz = fmax(lz, p->depth[c]);
        if (b.missing) printf("%s: %zu missing depths made land\n", o->bathy, b.missing);
        if (!(lz > 0)) {
            fprintf(stderr, "clphys %s: %s: variable '%s' has no depth > 0 (no sea)\n", CMD, o->bathy, o->depth_var);
            return 1;
        }
        if (b.lonlat) {
            if (!uniform(p->xc, g->nx) || !uniform(p->yc, g->ny)) {
                fprintf(stderr, "clphys %s: %s: longitudes and latitudes must be uniformly spaced\n", CMD, o->bathy);
                return 1;
            }
            const double hx = (p->xc[g->nx - 1] - p->xc[0]) / (g->nx - 1),
                         hy = (p->yc[g->ny - 1] - p->yc[0]) / (g->ny - 1);
            g->lonlat = 1;
            g->lon0 = p->xc[0] - hx / 2, g->lon1 = p->xc[g->nx - 1] + hx / 2;
            g->lat0 = p->yc[0] - hy / 2, g->lat1 = p->yc[g->ny - 1] + hy / 2;
        } else {
            p->dx = malloc(sizeof(double) * g->nx), p->dy = malloc(sizeof(double) * g->ny);
            spacings(g->nx, p->xc, p->dx);
            spacings(g->ny, p->yc, p->dy);
        }
    } else {
        double ext[3] = {1e6, 1e6, 4000}, ll[4];
        if (o->extent && parse_reals("--extent", o->extent, 3, ext, 0)) return 2;
        if (o->lonlat && parse_lonlat(o->lonlat, ll)) return 2;
        g->nx = o->g_box ? o->box[0] : o->basin[0], g->ny = o->g_box ? o->box[1] : o->basin[1];
        g->nz = o->g_box ? o->box[2] : (int)o->levels;
        /* the physical bounds (include/clphys_poisson.h), named up front */
        const double wx = o->lonlat ? (ll[1] - ll[0]) * 1.11e5 / g->nx : ext[0] / g->nx,
                     wy = o->lonlat ? (ll[3] - ll[2]) * 1.11e5 / g->ny : ext[1] / g->ny;
        if ((!o->lonlat && (ext[0] > CLPHYS_POISSON_MAX_EXTENT || ext[1] > CLPHYS_POISSON_MAX_EXTENT)) ||
            ext[2] > CLPHYS_POISSON_MAX_DEPTH || wx < CLPHYS_POISSON_MIN_SPACING || wy < CLPHYS_POISSON_MIN_SPACING) {
            fprintf(
                stderr,
                "clphys %s: %s: cells of %g x %g m over %g m of depth: clphys takes cells at least %g m wide, LX and "
                "LY at most %g m, LZ at most %g m\n",
                CMD, o->lonlat ? "--lonlat" : "--extent", wx, wy, ext[2], CLPHYS_POISSON_MIN_SPACING,
                CLPHYS_POISSON_MAX_EXTENT, CLPHYS_POISSON_MAX_DEPTH);
            return 2;
        }
        lz = ext[2];
        p->depth = malloc(sizeof(double) * (size_t)g->nx * g->ny);
        p->xc = malloc(sizeof(double) * g->nx), p->yc = malloc(sizeof(double) * g->ny);
        if (!p->depth || !p->xc || !p->yc) {
            fprintf(stderr, "clphys %s: out of memory\n", CMD);
            return 1;
        }
        clphys_status st = o->g_box ? clphys_poisson_box(g->nx, g->ny, lz, p->depth)
                                    : clphys_poisson_basin(g->nx, g->ny, (uint64_t)o->seed, lz, o->periodic, p->depth);
        if (st) return cli_fail(CMD, st, NULL);
        if (o->lonlat) {
            g->lonlat = 1, g->lon0 = ll[0], g->lon1 = ll[1], g->lat0 = ll[2], g->lat1 = ll[3];
            centres(g->nx, ll[0], ll[1], NULL, p->xc);
            centres(g->ny, ll[2], ll[3], NULL, p->yc);
        } else {
            p->dx = malloc(sizeof(double) * g->nx), p->dy = malloc(sizeof(double) * g->ny);
            for (int i = 0; i < g->nx; i++) p->dx[i] = ext[0] / g->nx;
            for (int j = 0; j < g->ny; j++) p->dy[j] = ext[1] / g->ny;
            centres(g->nx, 0, ext[0], NULL, p->xc);
            centres(g->ny, 0, ext[1], NULL, p->yc);
        }
    }
    p->dz = malloc(sizeof(double) * g->nz), p->zc = malloc(sizeof(double) * g->nz);
    clphys_status st = clphys_poisson_levels(g->nz, lz, o->stretch, p->dz);
    if (st) return cli_fail(CMD, st, NULL);
    double thinnest = INFINITY;
    for (int k = 0; k < g->nz; k++) thinnest = fmin(thinnest, p->dz[k]);
    if (!(thinnest >= CLPHYS_POISSON_MIN_SPACING)) {
        fprintf(stderr,
                "clphys %s: --stretch %g and %d levels over %g m make a layer %g m thick: the thinnest layer "
                "must be at least %g m\n",
                CMD, o->stretch, g->nz, lz, thinnest, CLPHYS_POISSON_MIN_SPACING);
        return 2;
    }
    centres(g->nz, 0, 0, p->dz, p->zc);
    g->dx = p->dx, g->dy = p->dy, g->dz = p->dz, g->depth = p->depth;
    g->helmholtz = o->helmholtz, g->periodic_x = o->periodic;
    return 0;
}

/* the output path, checked before the solve (cli/outputs.h): never an
 * input, an existing file only with --force, a folder that takes it */
static int check_output(const options *o)
{
    const cli_file inputs[] = {{"--bathymetry", o->bathy}, {"--rhs-file", o->rhs_file}},
                   outputs[] = {{"--output", o->output}};
    return cli_check_outputs(CMD, inputs, 2, outputs, 1, o->force);
}

static void monitor(void *user, int iter, double rel, int is_true)
{
    (void)user;
    printf("iteration %d %s %.6e\n", iter, is_true ? "true-residual" : "residual", rel);
}

/* the volume-weighted rms and the max of p - p_exact over wet cells (less
 * its mean when the problem is singular), relative to those of p_exact */
static void report_error(size_t n, const double *x, const double *pe, const double *w, const unsigned char *mask,
                         int singular)
{
    double mean = 0, sw = 0, e2 = 0, p2 = 0, emax = 0, pmax = 0;
    for (size_t c = 0; c < n && singular; c++) mean += w[c] * (x[c] - pe[c]), sw += w[c];
    if (sw > 0) mean /= sw;
    for (size_t c = 0; c < n; c++) {
        if (!mask[c]) continue;
        const double d = x[c] - pe[c] - mean;
        e2 += w[c] * d * d, p2 += w[c] * pe[c] * pe[c];
        emax = fmax(emax, fabs(d)), pmax = fmax(pmax, fabs(pe[c]));
    }
    printf("discretization error (manufactured): rms %.6e, max %.6e (relative to p_exact)\n", sqrt(e2 / p2),
           emax / pmax);
}

#ifdef CLPHYS_HAVE_MPI
static int run_mpi(const options *o, MPI_Comm comm);
#endif

static const clphys_poisson_precision precs[3] = {CLPHYS_POISSON_MIXED, CLPHYS_POISSON_FP64, CLPHYS_POISSON_FP32};

int cmd_poisson(int argc, char **argv)
{
    options o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc == 1 ? 0 : rc;
#ifdef CLPHYS_HAVE_MPI
    MPI_Comm comm;
    if (cli_mpi_comm(&comm) && cli_mpi_size() > 1) return run_mpi(&o, comm);
#endif
    if (o.g_grid) fprintf(stderr, "clphys %s: --grid applies under MPI with several ranks only\n", CMD);
    if ((rc = check_output(&o))) return rc;
    problem pb;
    if ((rc = build_problem(&o, &pb))) {
        problem_free(&pb);
        return rc;
    }
    const clphys_poisson_geometry *g = &pb.g;
    const size_t n = (size_t)g->nx * g->ny * g->nz;
    double *f = malloc(n * sizeof(double)), *x = malloc(n * sizeof(double)), *pe = NULL,
           *w = malloc(n * sizeof(double));
    unsigned char *mask = malloc(n);
    clphys_context *ctx = NULL;
    clphys_poisson_plan *pl = NULL;
    clphys_status st;
    rc = 1;
    if (!f || !x || !w || !mask) {
        fprintf(stderr, "clphys %s: out of memory for %zu cells\n", CMD, n);
        goto out;
    }
    if ((st = clphys_context_create(o.device, &ctx))) {
        rc = cli_fail(CMD, st, NULL);
        goto out;
    }
    clphys_poisson_params prm = {.precision = precs[o.prec],
                                 .tol = o.tol,
                                 .progress = o.monitor ? monitor : NULL,
                                 .line = (clphys_poisson_line)o.line};
    if ((st = clphys_poisson_plan_create(ctx, g, &prm, &pl))) {
        rc = cli_fail(CMD, st, ctx);
        goto out;
    }
    clphys_poisson_plan_operator(pl, NULL, mask, w);
    if (o.rhs_file) {
        st = clphys_poisson_read_field(o.rhs_file, o.rhs_var, g->nx, g->ny, g->nz, mask, f);
        if (st) {
            rc = cli_fail(CMD, st, NULL);
            goto out;
        }
    } else {
        pe = malloc(n * sizeof(double));
        if (!pe || (st = clphys_poisson_manufactured(g, f, pe))) {
            rc = pe ? cli_fail(CMD, st, NULL) : 1;
            goto out;
        }
    }
    clphys_poisson_info info;
    clphys_poisson_plan_info(pl, &info);
    static const char *const vname[] = {"auto", "column", "cell", "column-vec"};
    static const char *const lname[] = {"auto", "column", "column-vec", "staged"};
    printf("grid %dx%dx%d (%s%s), %zu wet cells, %d multigrid levels, Helmholtz %g\n", g->nx, g->ny, g->nz,
           g->lonlat ? "lonlat" : "Cartesian", g->periodic_x ? ", periodic x" : "", info.wet, info.levels,
           g->helmholtz);
    printf("device %s; stencil %s %dx%d (%s); line %s; precision %s\n", clphys_context_device(ctx)->name,
           vname[info.variant], info.local_size[0], info.local_size[1], clphys_tune_source_name(info.tune_source),
           lname[info.line],
           o.prec == 0   ? "mixed (fp64 CG, fp32 V-cycle)"
           : o.prec == 1 ? "fp64"
                         : "fp32 CG in fp64 defect correction");
    clphys_poisson_result res;
    st = clphys_poisson_solve(pl, f, x, &res);
    if (st && st != CLPHYS_ERR_NOT_CONVERGED) {
        rc = cli_fail(CMD, st, ctx);
        goto out;
    }
    if (res.singular_regions)
        printf("pure Neumann: %d singular region(s); f projected (volume-weighted mean %.6e removed), p has zero "
               "mean\n",
               res.singular_regions, res.removed_mean);
    if (pe) report_error(n, x, pe, w, mask, res.singular_regions > 0);
    printf("time: V-cycle %.4f s, stencil %.4f s, reductions and updates %.4f s, transfers %.4f s\n", res.vcycle_s,
           res.stencil_s, res.other_s, res.transfer_s);
    if (st) { /* not converged: no output written */
        rc = cli_fail(CMD, st, ctx);
        printf("iterations %d residual %.6e time %.6f s\n", res.iterations, res.rel_residual, res.seconds);
        goto out;
    }
    if (o.output) {
        clphys_status ws = clphys_poisson_write_netcdf(o.output, g->nx, g->ny, g->nz, pb.xc, pb.yc, pb.zc, g->lonlat, x,
                                                       mask, NULL, "clphys poisson solution");
        if (ws) {
            rc = cli_fail(CMD, ws, NULL);
            goto out;
        }
        printf("wrote %s (p and mask, dimensions z, y, x)\n", o.output);
    }
    printf("iterations %d residual %.6e time %.6f s\n", res.iterations, res.rel_residual, res.seconds);
    rc = 0;
out:
    clphys_poisson_plan_destroy(pl);
    rc = cli_context_done(ctx, rc);
    free(f), free(x), free(pe), free(w), free(mask);
    problem_free(&pb);
    return rc;
}

#ifdef CLPHYS_HAVE_MPI
/* The same over the ranks of comm.  Every failure is agreed by all ranks
 * (exit status 1 on every rank, the message naming the failing rank); rank
 * 0 prints the lines of the single-process run and writes the output. */
static int run_mpi(const options *o, MPI_Comm comm)
{
    const int rank = cli_mpi_rank(), ranks = cli_mpi_size();
    char text[4096];
    snprintf(text, sizeof text,
             "%s|%s|%s|%s|%s|%s|%s|%s|%s|%d %d %d|%d %d|%d|%d|%d|%d|%d|%lld|%lld|%.17g|%.17g|%.17g|%d %d",
             o->bathy ? o->bathy : "", o->depth_var ? o->depth_var : "", o->rhs_kind ? o->rhs_kind : "",
             o->rhs_file ? o->rhs_file : "", o->rhs_var ? o->rhs_var : "", o->output ? o->output : "",
             o->extent ? o->extent : "", o->lonlat ? o->lonlat : "", o->force ? "force" : "", o->box[0], o->box[1],
             o->box[2], o->basin[0], o->basin[1], o->periodic, o->monitor, o->prec, o->line, o->g_grid, o->seed,
             o->levels, o->stretch, o->helmholtz, o->tol, o->grid[0], o->grid[1]);
    clphys_status st =
        clphys_mpi_same(comm, NULL, text, strlen(text) + 1, "the options of clphys poisson (all but --device)");
    if (st) return cli_fail(CMD, st, NULL);
    /* rank 0: the output path and the problem (files read there only) */
    problem pb;
    memset(&pb, 0, sizeof pb);
    int prc = 0;
    if (rank == 0 && !(prc = check_output(o))) prc = build_problem(o, &pb);
    MPI_Bcast(&prc, 1, MPI_INT, 0, comm);
    if (prc) {
        if (rank) fprintf(stderr, "clphys %s: rank 0 failed to set up the problem (its message above)\n", CMD);
        problem_free(&pb);
        return 1;
    }
    clphys_context *ctx = NULL;
    clphys_poisson_mpi_plan *d = NULL;
    double *f = NULL, *x = NULL, *pe = NULL, *w = NULL, *fb = NULL, *xb = NULL;
    unsigned char *mask = NULL;
    int rc = 1;
    st = clphys_mpi_agree(comm, NULL, clphys_context_create(o->device, &ctx));
    if (st) {
        rc = cli_fail(CMD, st, NULL);
        goto out;
    }
    const clphys_poisson_params prm = {.precision = precs[o->prec],
                                       .tol = o->tol,
                                       .progress = o->monitor && rank == 0 ? monitor : NULL,
                                       .line = (clphys_poisson_line)o->line};
    const clphys_poisson_mpi_params mp = {
        0, {o->g_grid ? o->grid[0] : 0, o->g_grid ? o->grid[1] : 0}, clphys_poisson_mpi_default_gather(ctx)};
    if ((st = clphys_poisson_mpi_plan_create(ctx, comm, rank == 0 ? &pb.g : NULL, &prm, &mp, &d))) {
        rc = cli_fail(CMD, st, ctx);
        goto out;
    }
    clphys_poisson_mpi_info info;
    clphys_poisson_mpi_plan_info(d, &info);
    const size_t n = info.n, nb = (size_t)info.block[2] * info.block[3] * info.nz;
    fb = malloc(sizeof(double) * (nb + 1)), xb = malloc(sizeof(double) * (nb + 1));
    st = fb && xb ? CLPHYS_SUCCESS : CLPHYS_ERR_OUT_OF_MEMORY;
    if (!st && rank == 0) {
        f = malloc(n * sizeof(double)), x = malloc(n * sizeof(double)), w = malloc(n * sizeof(double));
        mask = malloc(n);
        if (!f || !x || !w || !mask) st = CLPHYS_ERR_OUT_OF_MEMORY;
    }
    if (st) fprintf(stderr, "clphys %s: rank %d: out of memory for %zu cells\n", CMD, rank, rank ? nb : n);
    if ((st = clphys_mpi_agree(comm, ctx, st))) goto fail;
    if ((st = clphys_poisson_mpi_plan_operator(d, mask, w))) goto fail;
    if (rank == 0) { /* the right-hand side, read or made on rank 0 */
        const clphys_poisson_geometry *g = &pb.g;
        if (o->rhs_file)
            st = clphys_poisson_read_field(o->rhs_file, o->rhs_var, g->nx, g->ny, g->nz, mask, f);
        else if (!(pe = malloc(n * sizeof(double))))
            st = CLPHYS_ERR_OUT_OF_MEMORY;
        else
            st = clphys_poisson_manufactured(g, f, pe);
    }
    if ((st = clphys_mpi_agree(comm, ctx, st))) goto fail;
    static const char *const lname[] = {"auto", "column", "column-vec", "staged"};
    if (rank == 0) {
        const clphys_poisson_geometry *g = &pb.g;
        printf("grid %dx%dx%d (%s%s), %zu wet cells, %d multigrid levels, Helmholtz %g\n", g->nx, g->ny, g->nz,
               g->lonlat ? "lonlat" : "Cartesian", g->periodic_x ? ", periodic x" : "", info.wet, info.levels,
               g->helmholtz);
        printf("%d ranks, process grid %dx%d; V-cycle levels on the ranks %d of %d, the rest gathered on rank 0; "
               "rank 0's device %s; line %s; precision %s\n",
               ranks, info.grid[0], info.grid[1], info.levels_distributed, info.levels,
               clphys_context_device(ctx)->name, lname[info.line],
               o->prec == 0   ? "mixed (fp64 CG, fp32 V-cycle)"
               : o->prec == 1 ? "fp64"
                              : "fp32 CG in fp64 defect correction");
    }
    if ((st = clphys_poisson_mpi_scatter(d, f, fb))) goto fail;
    clphys_poisson_result res;
    st = clphys_poisson_mpi_solve(d, fb, xb, &res);
    if (st && st != CLPHYS_ERR_NOT_CONVERGED) goto fail;
    const clphys_status solved = st;
    if ((st = clphys_poisson_mpi_gather(d, xb, x))) goto fail;
    if (rank == 0) {
        if (res.singular_regions)
            printf("pure Neumann: %d singular region(s); f projected (volume-weighted mean %.6e removed), p has zero "
                   "mean\n",
                   res.singular_regions, res.removed_mean);
        if (pe) report_error(n, x, pe, w, mask, res.singular_regions > 0);
    }
    if (solved) { /* not converged: no output written */
        rc = cli_fail(CMD, solved, ctx);
        if (rank == 0)
            printf("iterations %d residual %.6e time %.6f s\n", res.iterations, res.rel_residual, res.seconds);
        goto out;
    }
    if (o->output) {
        if (rank == 0)
            st = clphys_poisson_write_netcdf(o->output, pb.g.nx, pb.g.ny, pb.g.nz, pb.xc, pb.yc, pb.zc, pb.g.lonlat, x,
                                             mask, NULL, "clphys poisson solution");
        if ((st = clphys_mpi_agree(comm, ctx, st))) goto fail;
        if (rank == 0) printf("wrote %s (p and mask, dimensions z, y, x)\n", o->output);
    }
    if (rank == 0) printf("iterations %d residual %.6e time %.6f s\n", res.iterations, res.rel_residual, res.seconds);
    rc = 0;
    goto out;
fail:
    rc = cli_fail(CMD, st, ctx);
out:
    clphys_poisson_mpi_plan_destroy(d);
    rc = cli_context_done(ctx, rc);
    free(f), free(x), free(pe), free(w), free(mask), free(fb), free(xb);
    problem_free(&pb);
    return rc;
}
#endif
