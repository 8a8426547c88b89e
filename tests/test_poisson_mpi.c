/* test_poisson_mpi.c — the Poisson solver over MPI ranks
 * (clphys_poisson_mpi.h), run under mpiexec with 2, 3 and 4 ranks on the
 * test device, every process grid of that size among 2x1, 1x2, 3x1, 1x3,
 * 2x2, 4x1.  Against one rank's plan of the same problem (column line
 * kernels, and staged on the basin; the ranks also with column-vec's
 * smoothing steps against column; fp64): the distributed stencil and
 * V-cycle equal it to 1e-13 (the V-cycle with coarse levels kept on the
 * ranks and with everything below the fine level gathered); a solve to
 * 1e-10 gives its solution to 1e-7 of its largest value with iteration
 * counts within 1.  Problems: a box whose grid does not divide evenly, a
 * random basin (land crossing the blocks; pure Neumann: the solution's
 * volume-weighted mean over all wet cells of all ranks zero), periodic x
 * with a Helmholtz term, a rank holding only land, a caller's operator
 * given by blocks (periodic in x and y), mixed precision; the manufactured
 * solution's second-order convergence.  Failures: a process grid larger
 * than the horizontal extent and a grid that is not the number of ranks
 * give the same error on every rank, and so does a device failure on one
 * rank in the middle of a solve (device_failure); with --die (tests/mpi_rank_dies.py)
 * rank 1 exits in the middle of a solve and the launcher must end the job.
 * Every rank runs every collective call; failures are reduced over the
 * ranks before they are asserted. */
#include "mpi_util.h"
#include "poisson_util.h"

#include "clphys_poisson_mpi.h"
#include "host/poisson/poisson_mpi_internal.h" /* the plan's failure hook */

#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static int rank, size;
static clphys_context *ctx;

static void all_ok(int ok, const char *what) { tu_mpi_all_ok(ok, what, ctx); }

/* the process grids of this many ranks */
static int grids(int g[][2])
{
    static const int all[][2] = {{2, 1}, {1, 2}, {3, 1}, {1, 3}, {2, 2}, {4, 1}};
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i][0] * all[i][1] == size) g[n][0] = all[i][0], g[n][1] = all[i][1], n++;
    return n;
}

/* max |a - b| / max |b| over n values */
static double rel_diff(const double *a, const double *b, size_t n)
{
    double d = 0, m = 0;
    for (size_t i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i])), m = fmax(m, fabs(b[i]));
    return m > 0 ? d / m : d;
}

typedef struct {
    const clphys_poisson_geometry *g; /* or the operator: */
    const double *a7;                 /* 7 n doubles, global */
    int nx, ny, nz;
    clphys_poisson_precision precision;
    clphys_poisson_line line;      /* 0: column */
    clphys_poisson_line dist_line; /* of the distributed plans; 0: line */
} problem;

static clphys_status make_single(const problem *pb, const clphys_poisson_params *p, clphys_poisson_plan **pl)
{
    if (pb->g) return clphys_poisson_plan_create(ctx, pb->g, p, pl);
    clphys_poisson_operator op = {pb->nx, pb->ny, pb->nz, pb->a7, NULL};
    return clphys_poisson_plan_create_operator(ctx, &op, p, pl);
}

static clphys_status make_dist(const problem *pb, const clphys_poisson_params *p, const clphys_poisson_mpi_params *mp,
                               double **blk, clphys_poisson_mpi_plan **d)
{
    if (pb->g) return clphys_poisson_mpi_plan_create(ctx, MPI_COMM_WORLD, rank == 0 ? pb->g : NULL, p, mp, d);
    int b[4];
    clphys_status st = clphys_poisson_mpi_block(pb->nx, pb->ny, size, mp, rank, b, NULL);
    if (st) return st;
    const size_t n = (size_t)pb->nx * pb->ny * pb->nz, nb = (size_t)b[2] * b[3] * pb->nz;
    *blk = malloc(sizeof(double) * 7 * nb);
    for (int f = 0; f < 7; f++)
        for (int k = 0; k < pb->nz; k++)
            for (int j = 0; j < b[3]; j++)
                for (int i = 0; i < b[2]; i++)
                    (*blk)[f * nb + i + (size_t)b[2] * (j + (size_t)b[3] * k)] =
                        pb->a7[f * n + (size_t)(b[0] + i) + (size_t)pb->nx * ((size_t)(b[1] + j) + (size_t)pb->ny * k)];
    clphys_poisson_operator op = {b[2], b[3], pb->nz, *blk, NULL};
    return clphys_poisson_mpi_plan_create_operator(ctx, MPI_COMM_WORLD, pb->nx, pb->ny, &op, p, mp, d);
}

/* Stencil, V-cycle and solve of one problem on every grid of this size,
 * with coarse levels on the ranks (gather_columns 2) and gathered (1000). */
static void compare(const problem *pb, int solve)
{
    const size_t n = (size_t)pb->nx * pb->ny * pb->nz;
    clphys_poisson_params p = {.precision = pb->precision,
                               .line = pb->line ? pb->line : CLPHYS_POISSON_LINE_COLUMN,
                               .tol = 1e-10,
                               .no_tune = 1};
    clphys_poisson_plan *single = NULL;
    double *x = malloc(n * sizeof(double)), *y1 = malloc(n * sizeof(double)), *y2 = malloc(n * sizeof(double));
    double *f = malloc(n * sizeof(double));
    uint64_t rng = tu_rng_init(29);
    for (size_t c = 0; c < n; c++) x[c] = tu_uniform(&rng) - 0.5, f[c] = tu_uniform(&rng) - 0.5;
    clphys_poisson_result r1 = {0}, r2 = {0};
    double z1max = 0;
    if (rank == 0) {
        assert_int_equal(make_single(pb, &p, &single), CLPHYS_SUCCESS);
    }
    int g[6][2];
    const int ng = grids(g);
    for (int gi = 0; gi < ng; gi++)
        for (int gc = 0; gc < 2; gc++) {
            clphys_poisson_mpi_params mp = {0, {g[gi][0], g[gi][1]}, gc ? 1000 : 2};
            clphys_poisson_mpi_plan *d = NULL;
            double *blk = NULL;
            clphys_poisson_params pd = p;
            if (pb->dist_line) pd.line = pb->dist_line;
            clphys_status st = make_dist(pb, &pd, &mp, &blk, &d);
            all_ok(st == CLPHYS_SUCCESS, "distributed plan");
            clphys_poisson_mpi_info info;
            clphys_poisson_mpi_plan_info(d, &info);
            const size_t nb = (size_t)info.block[2] * info.block[3] * pb->nz;
            double *xb = malloc(nb * sizeof(double) + 8), *yb = malloc(nb * sizeof(double) + 8);
            /* the stencil in fp64 */
            all_ok(!clphys_poisson_mpi_scatter(d, x, xb), "scatter");
            tu_poison_f64(yb, nb);
            tu_poison_f64(y2, n);
            all_ok(!clphys_poisson_mpi_apply(d, xb, yb), "apply");
            all_ok(!clphys_poisson_mpi_gather(d, yb, y2), "gather");
            int ok = 1;
            cl_mem fx = NULL, fy = NULL;
            if (rank == 0) {
                assert_int_equal(clphys_poisson_field_create(single, CLPHYS_FP64, &fx), CLPHYS_SUCCESS);
                assert_int_equal(clphys_poisson_field_create(single, CLPHYS_FP64, &fy), CLPHYS_SUCCESS);
                clphys_poisson_field_write(single, CLPHYS_FP64, fx, x);
                clphys_poisson_apply(single, CLPHYS_FP64, fy, fx, NULL);
                clphys_poisson_field_read(single, CLPHYS_FP64, fy, y1);
                const double e = rel_diff(y2, y1, n);
                if (!(e <= 1e-13))
                    ok = 0, fprintf(stderr, "grid %dx%d: stencil differs by %.3g\n", g[gi][0], g[gi][1], e);
            }
            all_ok(ok, "distributed stencil equals one rank's");
            /* the V-cycle (x as r) */
            tu_poison_f64(yb, nb);
            all_ok(!clphys_poisson_mpi_vcycle(d, xb, yb), "vcycle");
            all_ok(!clphys_poisson_mpi_gather(d, yb, y2), "gather");
            if (rank == 0) {
                clphys_poisson_vcycle(single, fy, fx, NULL);
                clphys_poisson_field_read(single, CLPHYS_FP64, fy, y1);
                const double e = rel_diff(y2, y1, n), tol = pb->precision == CLPHYS_POISSON_FP64 ? 1e-13 : 1e-5;
                for (size_t c = 0; c < n; c++) z1max = fmax(z1max, fabs(y1[c]));
                if (!(e <= tol) || !(z1max > 0))
                    ok = 0, fprintf(stderr, "grid %dx%d gather %d: V-cycle differs by %.3g (levels on ranks %d)\n",
                                    g[gi][0], g[gi][1], mp.gather_columns, e, info.levels_distributed);
                clReleaseMemObject(fx), clReleaseMemObject(fy);
            }
            all_ok(ok, "distributed V-cycle equals one rank's");
            if (solve) {
                all_ok(!clphys_poisson_mpi_scatter(d, f, xb), "scatter");
                tu_poison_f64(yb, nb);
                all_ok(!clphys_poisson_mpi_solve(d, xb, yb, &r2), "distributed solve");
                all_ok(!clphys_poisson_mpi_gather(d, yb, y2), "gather");
                if (rank == 0) {
                    assert_int_equal(clphys_poisson_solve(single, f, y1, &r1), CLPHYS_SUCCESS);
                    const double e = rel_diff(y2, y1, n);
                    if (!(e <= 1e-7) || abs(r1.iterations - r2.iterations) > 1 ||
                        r1.singular_regions != r2.singular_regions || !(r2.rel_residual <= 1e-10))
                        ok = 0, fprintf(stderr,
                                        "grid %dx%d: solution differs by %.3g, iterations %d vs %d, regions "
                                        "%d vs %d\n",
                                        g[gi][0], g[gi][1], e, r2.iterations, r1.iterations, r2.singular_regions,
                                        r1.singular_regions);
                }
                all_ok(ok, "distributed solve equals one rank's");
            }
            free(xb), free(yb), free(blk);
            clphys_poisson_mpi_plan_destroy(d);
        }
    clphys_poisson_plan_destroy(single);
    free(x), free(y1), free(y2), free(f);
}

/* a box that does not divide evenly: 19 x 13 x 4 */
static void box_uneven(void **state)
{
    (void)state;
    pt_geometry t;
    pt_geometry_make(&t, 19, 13, 4, 1000, 1500, 10, 0);
    problem pb = {.g = &t.g, .nx = 19, .ny = 13, .nz = 4, .precision = CLPHYS_POISSON_FP64};
    compare(&pb, 1);
    pt_geometry_free(&t);
}

/* a random basin: coasts and islands across the blocks, pure Neumann */
static void basin_neumann(void **state)
{
    (void)state;
    pt_geometry t;
    pt_geometry_make(&t, 24, 20, 5, 2000, 2000, 20, 7);
    problem pb = {.g = &t.g, .nx = 24, .ny = 20, .nz = 5, .precision = CLPHYS_POISSON_FP64};
    compare(&pb, 1);
    pb.line = CLPHYS_POISSON_LINE_STAGED; /* the restriction making the coarse first step */
    compare(&pb, 1);
    /* the ranks smoothing with column-vec (AUTO on CPUs) on padded blocks:
     * the same arithmetic as column's line steps */
    pb.line = CLPHYS_POISSON_LINE_COLUMN, pb.dist_line = CLPHYS_POISSON_LINE_COLUMN_VEC;
    compare(&pb, 1);
    /* the solution's mean over all wet cells of all ranks is zero */
    clphys_poisson_params p = {.precision = CLPHYS_POISSON_FP64, .tol = 1e-10, .no_tune = 1};
    clphys_poisson_mpi_plan *d = NULL;
    all_ok(!clphys_poisson_mpi_plan_create(ctx, MPI_COMM_WORLD, &t.g, &p, NULL, &d), "plan");
    clphys_poisson_mpi_info info;
    clphys_poisson_mpi_plan_info(d, &info);
    const size_t nb = (size_t)info.block[2] * info.block[3] * t.g.nz, n = (size_t)24 * 20 * 5;
    double *f = malloc(n * sizeof(double)), *fb = malloc(nb * sizeof(double) + 8),
           *xb = malloc(nb * sizeof(double) + 8);
    double *x = malloc(n * sizeof(double));
    uint64_t rng = tu_rng_init(3);
    for (size_t c = 0; c < n; c++) f[c] = tu_uniform(&rng);
    all_ok(!clphys_poisson_mpi_scatter(d, f, fb), "scatter");
    clphys_poisson_result r;
    all_ok(!clphys_poisson_mpi_solve(d, fb, xb, &r), "solve");
    all_ok(!clphys_poisson_mpi_gather(d, xb, x), "gather");
    int ok = r.singular_regions >= 1;
    if (rank == 0) { /* volume-weighted mean over the wet cells: uniform spacings, so the plain mean */
        clphys_poisson_plan *pl;
        assert_int_equal(clphys_poisson_plan_create(ctx, &t.g, &p, &pl), CLPHYS_SUCCESS);
        unsigned char *mask = malloc(n);
        double *w = malloc(n * sizeof(double)), s = 0, sw = 0, m = 0;
        clphys_poisson_plan_operator(pl, NULL, mask, w);
        for (size_t c = 0; c < n; c++)
            if (mask[c]) s += w[c] * x[c], sw += w[c], m = fmax(m, fabs(x[c]));
        if (!(fabs(s / sw) <= 1e-9 * m)) ok = 0, fprintf(stderr, "mean %.3g of max %.3g\n", s / sw, m);
        free(mask), free(w);
        clphys_poisson_plan_destroy(pl);
    }
    all_ok(ok, "zero mean over all ranks' wet cells");
    clphys_poisson_mpi_plan_destroy(d);
    free(f), free(fb), free(xb), free(x);
    pt_geometry_free(&t);
}

/* periodic x across ranks with a Helmholtz term, in mixed precision too */
static void periodic_helmholtz(void **state)
{
    (void)state;
    pt_geometry t;
    pt_geometry_make(&t, 20, 16, 4, 1000, 1000, 10, 0);
    clphys_poisson_basin(20, 16, 11, 40, 1, t.depth);
    t.g.periodic_x = 1;
    t.g.helmholtz = 1e-6;
    problem pb = {.g = &t.g, .nx = 20, .ny = 16, .nz = 4, .precision = CLPHYS_POISSON_FP64};
    compare(&pb, 1);
    pb.precision = CLPHYS_POISSON_MIXED;
    compare(&pb, 0);
    pb.dist_line = CLPHYS_POISSON_LINE_COLUMN_VEC; /* 8 fp32 lanes, periodic x through the ring */
    compare(&pb, 0);
    pt_geometry_free(&t);
}

/* the west half land: rank 0 of an x-split holds only land */
static void land_rank(void **state)
{
    (void)state;
    pt_geometry t;
    pt_geometry_make(&t, 16, 12, 3, 1000, 1000, 10, 0);
    for (int j = 0; j < 12; j++)
        for (int i = 0; i < 8; i++) t.depth[j * 16 + i] = 0;
    problem pb = {.g = &t.g, .nx = 16, .ny = 12, .nz = 3, .precision = CLPHYS_POISSON_FP64};
    compare(&pb, 1);
    pt_geometry_free(&t);
}

/* a caller's operator by blocks, periodic in x and y, with land */
static void operator_blocks(void **state)
{
    (void)state;
    uint64_t rng = tu_rng_init(5);
    double *a = pt_random_op(&rng, 14, 10, 3, 0.2, 1, 1, 10, 0.5);
    problem pb = {.a7 = a, .nx = 14, .ny = 10, .nz = 3, .precision = CLPHYS_POISSON_FP64};
    compare(&pb, 1);
    free(a);
}

/* the manufactured solution (lonlat, Helmholtz) at 12 and 24 columns a
 * side, solved over the ranks: the RMS error falls at second order */
static void manufactured_order(void **state)
{
    (void)state;
    double err[2];
    for (int r = 0; r < 2; r++) {
        const int m = 12 << r, nz = 4 << r;
        pt_geometry t;
        pt_geometry_make(&t, m, m, nz, 1, 1, 100.0 / nz, 0);
        t.g.lonlat = 1, t.g.dx = t.g.dy = NULL;
        t.g.lon0 = 0, t.g.lon1 = 20, t.g.lat0 = 30, t.g.lat1 = 50;
        t.g.helmholtz = 1e-11;
        const size_t n = (size_t)m * m * nz;
        double *f = malloc(n * sizeof(double)), *p = malloc(n * sizeof(double)), *x = malloc(n * sizeof(double));
        assert_int_equal(clphys_poisson_manufactured(&t.g, f, p), 0);
        const clphys_poisson_params prm = {.precision = CLPHYS_POISSON_FP64, .tol = 1e-11, .no_tune = 1};
        const clphys_poisson_mpi_params mp = {0, {0, 0}, 2};
        clphys_poisson_mpi_plan *d = NULL;
        all_ok(!clphys_poisson_mpi_plan_create(ctx, MPI_COMM_WORLD, &t.g, &prm, &mp, &d), "plan");
        clphys_poisson_mpi_info info;
        clphys_poisson_mpi_plan_info(d, &info);
        const size_t nb = (size_t)info.block[2] * info.block[3] * nz;
        double *fb = malloc(nb * sizeof(double) + 8), *xb = malloc(nb * sizeof(double) + 8);
        clphys_poisson_result res;
        all_ok(!clphys_poisson_mpi_scatter(d, f, fb), "scatter");
        all_ok(!clphys_poisson_mpi_solve(d, fb, xb, &res), "solve");
        all_ok(!clphys_poisson_mpi_gather(d, xb, x), "gather");
        double e = 0, pp = 0;
        for (size_t c = 0; c < n; c++) e += (x[c] - p[c]) * (x[c] - p[c]), pp += p[c] * p[c];
        err[r] = sqrt(e / pp);
        MPI_Bcast(&err[r], 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        clphys_poisson_mpi_plan_destroy(d);
        free(f), free(p), free(x), free(fb), free(xb);
        pt_geometry_free(&t);
    }
    const double order = log2(err[0] / err[1]);
    if (rank == 0) print_message("# distributed manufactured: errors %.4e %.4e, order %.3f\n", err[0], err[1], order);
    all_ok(order >= 1.8, "second order distributed");
}

static void failures(void **state)
{
    (void)state;
    pt_geometry t;
    pt_geometry_make(&t, 3, 3, 2, 1000, 1000, 10, 0);
    clphys_poisson_mpi_params mp = {0, {size, 1}, 0};
    clphys_poisson_mpi_plan *d = NULL;
    clphys_status st = clphys_poisson_mpi_plan_create(ctx, MPI_COMM_WORLD, &t.g, NULL, &mp, &d);
    all_ok(size <= 3 ? st == CLPHYS_SUCCESS : st == CLPHYS_ERR_INVALID_ARGUMENT && !d, "grid vs extent");
    clphys_poisson_mpi_plan_destroy(d);
    d = NULL;
    mp.grid[0] = size + 1;
    st = clphys_poisson_mpi_plan_create(ctx, MPI_COMM_WORLD, &t.g, NULL, &mp, &d);
    all_ok(st == CLPHYS_ERR_INVALID_ARGUMENT && !d && strstr(clphys_last_error(ctx), "grid"), "a grid of other ranks");
    pt_geometry_free(&t);
    /* a right-hand side that is not finite on the last rank: CLPHYS_ERR_INPUT
     * on every rank, the first such cell of the block named by its global
     * indices there (the check runs by threads beside a GPU) */
    pt_geometry_make(&t, 4 * size, 6, 4, 1000, 1000, 10, 0);
    mp = (clphys_poisson_mpi_params){0, {size, 1}, 0};
    all_ok(clphys_poisson_mpi_plan_create(ctx, MPI_COMM_WORLD, &t.g, NULL, &mp, &d) == CLPHYS_SUCCESS, "plan");
    clphys_poisson_mpi_info info;
    clphys_poisson_mpi_plan_info(d, &info);
    const size_t nb = (size_t)info.block[2] * info.block[3] * t.g.nz;
    double *f = calloc(nb, sizeof(double)), *x = calloc(nb, sizeof(double));
    assert_non_null(f), assert_non_null(x);
    for (size_t q = 0; q < nb; q++) f[q] = sin(0.37 * (double)q);
    const size_t q1 = 1 + (size_t)info.block[2] * (2 + (size_t)info.block[3] * 1), q2 = nb - 1;
    char want[96];
    snprintf(want, sizeof want, "wet cell (i %d, j 2, k 1) is nan", info.block[0] + 1);
    if (rank == size - 1) f[q1] = NAN, f[q2] = -INFINITY;
    clphys_poisson_result res;
    st = clphys_poisson_mpi_solve(d, f, x, &res);
    all_ok(st == CLPHYS_ERR_INPUT && (rank != size - 1 || strstr(clphys_last_error(ctx), want)), "a NaN named");
    if (rank == size - 1) f[q1] = 0.5;
    snprintf(want, sizeof want, "wet cell (i %d, j 5, k 3) is -inf", info.block[0] + info.block[2] - 1);
    st = clphys_poisson_mpi_solve(d, f, x, &res);
    all_ok(st == CLPHYS_ERR_INPUT && (rank != size - 1 || strstr(clphys_last_error(ctx), want)), "an inf named");
    free(f), free(x);
    clphys_poisson_mpi_plan_destroy(d);
    pt_geometry_free(&t);
}

/* The same failure on every rank (st this rank's status) after call `at`
 * of n at place `where` failed on one. */
static void failed_everywhere(clphys_status st, const char *what, int where, long at, long n)
{
    const int mine = (int)st;
    int lo, hi;
    MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (lo != hi || lo == CLPHYS_SUCCESS)
        fail_msg("%s, failure at place %d, call %ld of %ld: statuses %d .. %d over the ranks", what, where, at, n, lo,
                 hi);
}

/* A device failure on the last rank in the middle of a solve (made by the
 * plan's test hook, fail): in the operator, in a halo exchange
 * (before, in and after the V-cycle's gathered level, and the operator's),
 * and in a reduction point's sums, at several calls of each, and in every
 * exchange of one V-cycle, in mixed precision and fp64 (whose
 * preconditioner also projects out the basin's mean: pure Neumann).  Every
 * rank returns the same error, none is left waiting (a hang is the test's
 * timeout), and the plan then solves to its tolerance. */
static void device_failure(void **state)
{
    (void)state;
    pt_geometry t;
    pt_geometry_make(&t, 32, 24, 8, 1000, 1000, 10, 9);
    for (int fp64 = 0; fp64 < 2; fp64++) {
        clphys_poisson_params p = {
            .precision = fp64 ? CLPHYS_POISSON_FP64 : CLPHYS_POISSON_MIXED, .tol = 1e-8, .no_tune = 1};
        const clphys_poisson_mpi_params mp = {0, {0, 0}, 2};
        clphys_poisson_mpi_plan *d = NULL;
        all_ok(clphys_poisson_mpi_plan_create(ctx, MPI_COMM_WORLD, &t.g, &p, &mp, &d) == CLPHYS_SUCCESS, "plan");
        clphys_poisson_mpi_info info;
        clphys_poisson_mpi_plan_info(d, &info);
        const size_t nb = (size_t)info.block[2] * info.block[3] * 8;
        double *f = calloc(nb + 1, sizeof(double)), *x = calloc(nb + 1, sizeof(double));
        uint64_t rng = tu_rng_init(31 + (uint64_t)rank);
        for (size_t c = 0; c < nb; c++) f[c] = tu_uniform(&rng) - 0.5;
        clphys_poisson_result r;
        int cases = 0;
        for (int where = POISSON_MPI_FAIL_APPLY; where <= POISSON_MPI_FAIL_SUM; where++) {
            /* the calls of that place in one solve, then failures spread over them */
            d->fail = (cp_test_failure){where, size - 1, LONG_MAX, 0};
            all_ok(clphys_poisson_mpi_solve(d, f, x, &r) == CLPHYS_SUCCESS, "a solve counting the calls");
            long n = d->fail.calls; /* counted on the failing rank */
            MPI_Bcast(&n, 1, MPI_LONG, size - 1, MPI_COMM_WORLD);
            all_ok(n >= 4, "calls to fail");
            for (long k = 0, at = 1; k < 4; k++, at = 1 + (n - 1) * k / 3) {
                d->fail = (cp_test_failure){where, size - 1, at, 0};
                failed_everywhere(clphys_poisson_mpi_solve(d, f, x, &r), "a solve", where, at, n);
                cases++;
            }
        }
        /* every exchange of one V-cycle in turn, those of the way back up from
         * the gathered level among them (the solves' four calls above land there
         * only for some iteration counts) */
        d->fail = (cp_test_failure){POISSON_MPI_FAIL_EXCHANGE, size - 1, LONG_MAX, 0};
        all_ok(clphys_poisson_mpi_vcycle(d, f, x) == CLPHYS_SUCCESS, "a V-cycle counting the exchanges");
        long m = d->fail.calls;
        MPI_Bcast(&m, 1, MPI_LONG, size - 1, MPI_COMM_WORLD);
        all_ok(m >= 4, "exchanges in a V-cycle");
        for (long at = 1; at <= m; at++) {
            d->fail = (cp_test_failure){POISSON_MPI_FAIL_EXCHANGE, size - 1, at, 0};
            failed_everywhere(clphys_poisson_mpi_vcycle(d, f, x), "a V-cycle", POISSON_MPI_FAIL_EXCHANGE, at, m);
            cases++;
        }
        d->fail.where = 0;
        all_ok(clphys_poisson_mpi_solve(d, f, x, &r) == CLPHYS_SUCCESS && r.rel_residual <= 1e-8,
               "a solve after the failures");
        if (rank == 0)
            print_message("# device failures (%s): %d cases, each an error on every rank\n", fp64 ? "fp64" : "mixed",
                          cases);
        free(f), free(x);
        clphys_poisson_mpi_plan_destroy(d);
    }
    pt_geometry_free(&t);
}

/* --die (tests/mpi_rank_dies.py): rank 1 leaves after the third CG
 * iteration of a solve, while rank 0 goes on into the next exchange. */
static void die_in_solve(void *user, int iter, double rel, int is_true)
{
    (void)user, (void)rel;
    if (rank == 1 && !is_true && iter == 3) tu_mpi_die(rank, "in CG iteration", iter);
}

static int rank_dies(void)
{
    pt_geometry t;
    pt_geometry_make(&t, 32, 24, 8, 1000, 1000, 10, 9);
    clphys_poisson_params p = {.precision = CLPHYS_POISSON_FP64, .tol = 1e-12, .no_tune = 1, .progress = die_in_solve};
    const clphys_poisson_mpi_params mp = {0, {0, 0}, 2};
    clphys_poisson_mpi_plan *d = NULL;
    if (clphys_poisson_mpi_plan_create(ctx, MPI_COMM_WORLD, &t.g, &p, &mp, &d)) return 1;
    clphys_poisson_mpi_info info;
    clphys_poisson_mpi_plan_info(d, &info);
    const size_t nb = (size_t)info.block[2] * info.block[3] * 8;
    double *f = calloc(nb + 1, sizeof(double)), *x = calloc(nb + 1, sizeof(double));
    for (size_t c = 0; c < nb; c++) f[c] = (double)(c % 7) - 3;
    clphys_poisson_result r;
    for (int i = 0; i < 100; i++) clphys_poisson_mpi_solve(d, f, x, &r);
    return 0;
}

int main(int argc, char **argv)
{
    if (tu_mpi_init(&argc, &argv, &rank, &size, &ctx, 1)) return rank_dies();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(box_uneven), cmocka_unit_test(basin_neumann),   cmocka_unit_test(periodic_helmholtz),
        cmocka_unit_test(land_rank),  cmocka_unit_test(operator_blocks), cmocka_unit_test(manufactured_order),
        cmocka_unit_test(failures),   cmocka_unit_test(device_failure),
    };
    return tu_mpi_run_group("test_poisson_mpi", tests, size >= 2, "at least 2", &ctx, 1);
}
