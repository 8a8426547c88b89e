/* test_poisson_solve.c — solves of the Poisson path, checked on the CPU in
 * fp64 with the reference stencil (host/ref/poisson_ref.c) and an
 * independent projection (tests/poisson_util.c), outputs poisoned:
 *  - manufactured solutions (Cartesian with stretched layers, pure Neumann;
 *    lonlat with a Helmholtz term): the error falls at second order over
 *    three resolutions (observed order >= 1.8 at both steps);
 *  - a random basin with a random right-hand side reaches a true relative
 *    residual of 1e-10 in every precision mode (mixed, fp64, fp32), the
 *    reported residual agreeing with the reference's;
 *  - the staged line relaxation solves a periodic basin to 1e-10 in
 *    column's iteration count +-1 (mixed and fp64);
 *  - robustness: CG iterations to 1e-6 stay within 1.5x when the x-y grid
 *    is refined 4x (box and basin), and within 2x when dx/dz grows from 1
 *    to 1e4;
 *  - pure Neumann: the right-hand side is projected (removed_mean is the
 *    volume-weighted mean of f), the solution has zero volume-weighted
 *    mean, and A x equals the projected b; two disconnected basins are two
 *    singular regions, each with its own projection; a Helmholtz term makes
 *    none;
 *  - device buffers give the host path's solution and leave rhs intact;
 *  - an iteration cap gives CLPHYS_ERR_NOT_CONVERGED with the residual, and
 *    so does a tolerance below fp64's floor, long before the cap (the
 *    restarts stop when they no longer halve the true residual);
 *  - the time split and the tuning cache's source are reported. */
#include "poisson_util.h"
#include "util.h"
#include "host/ref/poisson_ref.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static clphys_context *ctx;

/* A solved system and its independent check. */
typedef struct {
    size_t n;
    double *a, *w, *b, *x;
    unsigned char *mask;
    int *label;
    int regions;
    clphys_poisson_result res;
    clphys_status st;
} solved;

static void solved_free(solved *s)
{
    free(s->a), free(s->w), free(s->b), free(s->x), free(s->mask), free(s->label);
    memset(s, 0, sizeof *s);
}

/* Solve the geometry's problem for f (rhs) with params p; the projected b
 * and the reference residual of x. */
static double solve_geometry(const clphys_poisson_geometry *g, const clphys_poisson_params *p, const double *f,
                             solved *s)
{
    const size_t n = (size_t)g->nx * g->ny * g->nz;
    memset(s, 0, sizeof *s);
    s->n = n;
    s->a = malloc(7 * n * sizeof(double)), s->w = malloc(n * sizeof(double)), s->b = malloc(n * sizeof(double));
    s->x = malloc(n * sizeof(double)), s->mask = malloc(n), s->label = malloc(n * sizeof(int));
    clphys_poisson_plan *pl = NULL;
    clphys_status st = clphys_poisson_plan_create(ctx, g, p, &pl);
    if (st) fail_msg("plan: %s: %s", clphys_status_string(st), clphys_last_error(ctx));
    assert_int_equal(clphys_poisson_plan_operator(pl, s->a, s->mask, s->w), 0);
    tu_poison_f64(s->x, n);
    s->st = clphys_poisson_solve(pl, f, s->x, &s->res);
    if (s->st && s->st != CLPHYS_ERR_NOT_CONVERGED) fail_msg("solve: %s", clphys_last_error(ctx));
    clphys_poisson_plan_destroy(pl);
    s->regions = poisson_ref_projected_rhs(g->nx, g->ny, g->nz, s->a, s->w, s->mask, f, -1.0, s->b, s->label);
    return poisson_ref_residual(g->nx, g->ny, g->nz, s->a, s->b, s->x);
}

static double *random_rhs(uint64_t *rng, size_t n, double mean)
{
    double *f = malloc(n * sizeof(double));
    for (size_t c = 0; c < n; c++) f[c] = mean + 2 * tu_uniform(rng) - 1;
    return f;
}

/* ---- second order ------------------------------------------------------------- */

/* the volume-weighted rms of x - p over wet cells (x - p less its mean in
 * a singular problem), relative to that of p */
static double mms_error(const solved *s, const double *p)
{
    double *d = malloc(s->n * sizeof(double)), shift = 0, e = 0, pp = 0;
    for (size_t c = 0; c < s->n; c++) d[c] = s->x[c] - p[c];
    if (s->regions) shift = poisson_ref_region_mean(s->n, s->label, 0, s->w, d);
    for (size_t c = 0; c < s->n; c++)
        if (s->mask[c]) e += s->w[c] * (d[c] - shift) * (d[c] - shift), pp += s->w[c] * p[c] * p[c];
    free(d);
    return isfinite(e) ? sqrt(e / pp) : INFINITY;
}

static void second_order(int lonlat)
{
    double err[3];
    for (int r = 0; r < 3; r++) {
        const int m = 12 << r, nz = 4 << r;
        pt_geometry t;
        pt_geometry_make(&t, m, m, nz, 1e4 / m, 1.5e4 / m, 1, 0);
        /* smoothly stretched layers: z(s) = H (s + s^2 / 2) / 1.5 over 100 m */
        for (int k = 0; k < nz; k++) {
            const double s0 = (double)k / nz, s1 = (double)(k + 1) / nz;
            t.dz[k] = 100 * ((s1 + s1 * s1 / 2) - (s0 + s0 * s0 / 2)) / 1.5;
        }
        clphys_poisson_box(m, m, 100, t.depth);
        if (lonlat) {
            t.g.lonlat = 1, t.g.dx = t.g.dy = NULL;
            t.g.lon0 = 0, t.g.lon1 = 20, t.g.lat0 = 30, t.g.lat1 = 50;
            t.g.helmholtz = 1e-11;
        }
        const size_t n = (size_t)m * m * nz;
        double *f = malloc(n * sizeof(double)), *p = malloc(n * sizeof(double));
        assert_int_equal(clphys_poisson_manufactured(&t.g, f, p), 0);
        const clphys_poisson_params prm = {.precision = CLPHYS_POISSON_FP64, .tol = 1e-11, .no_tune = 1};
        solved s;
        solve_geometry(&t.g, &prm, f, &s);
        assert_int_equal(s.st, 0);
        assert_int_equal(s.res.singular_regions, lonlat ? 0 : 1);
        err[r] = mms_error(&s, p);
        print_message("# manufactured %s %dx%dx%d: %d iterations, error %.4e\n", lonlat ? "lonlat" : "Cartesian", m, m,
                      nz, s.res.iterations, err[r]);
        solved_free(&s);
        free(f), free(p);
        pt_geometry_free(&t);
    }
    const double o1 = log2(err[0] / err[1]), o2 = log2(err[1] / err[2]);
    print_message("# observed orders %.3f %.3f\n", o1, o2);
    assert_true(o1 >= 1.8 && o2 >= 1.8);
}

static void test_second_order_cartesian(void **state) { (void)state, second_order(0); }
static void test_second_order_lonlat(void **state) { (void)state, second_order(1); }

/* ---- 1e-10 in every mode ------------------------------------------------------ */
static void test_residual_1e10(void **state)
{
    (void)state;
    uint64_t rng = tu_rng_init(10);
    pt_geometry t;
    pt_geometry_make(&t, 24, 20, 8, 2000, 2500, 100, 1 + (tu_seed() & 0xffff));
    const size_t n = (size_t)24 * 20 * 8;
    double *f = random_rhs(&rng, n, 0.3);
    for (int prec = 0; prec < 3; prec++) {
        const clphys_poisson_params p = {.precision = (clphys_poisson_precision)prec, .tol = 1e-10, .no_tune = 1};
        solved s;
        const double ref = solve_geometry(&t.g, &p, f, &s);
        print_message("# %s: %d iterations, %d restarts, reported %.3e, reference %.3e; %.3f s: V-cycle %.3f, "
                      "stencil %.3f, other %.3f, transfers %.4f\n",
                      prec == 0   ? "mixed"
                      : prec == 1 ? "fp64"
                                  : "fp32",
                      s.res.iterations, s.res.restarts, s.res.rel_residual, ref, s.res.seconds, s.res.vcycle_s,
                      s.res.stencil_s, s.res.other_s, s.res.transfer_s);
        assert_int_equal(s.st, 0);
        assert_true(s.res.rel_residual <= 1e-10);
        assert_true(ref <= 1.05e-10);
        assert_true(fabs(ref - s.res.rel_residual) <= 0.05 * ref + 1e-13);
        assert_true(s.res.iterations > 0 && s.res.vcycles >= s.res.iterations);
        assert_true(s.res.vcycle_s > 0 && s.res.stencil_s > 0 && s.res.other_s >= 0 && s.res.transfer_s > 0);
        assert_true(s.res.vcycle_s + s.res.stencil_s <= s.res.seconds + 0.05);
        for (size_t c = 0; c < n; c++)
            if (!s.mask[c]) assert_true(s.x[c] == 0);
        solved_free(&s);
    }
    free(f);
    pt_geometry_free(&t);
}

/* ---- the staged line relaxation ---------------------------------------------- */
/* staged gives column's V-cycle up to rounding, so a solve to 1e-10 takes
 * the same iterations (+-1: rounding may move the last one across the
 * tolerance); fp64 and mixed, a periodic basin */
static void test_staged_iterations(void **state)
{
    (void)state;
    uint64_t rng = tu_rng_init(11);
    pt_geometry t;
    pt_geometry_make(&t, 32, 24, 9, 3000, 3000, 40, 0);
    t.g.periodic_x = 1;
    clphys_poisson_basin(32, 24, 1 + (tu_seed() & 0xffff), 9 * 40.0, 1, t.depth);
    const size_t n = (size_t)32 * 24 * 9;
    double *f = random_rhs(&rng, n, 0.1);
    for (int prec = 0; prec < 2; prec++) {
        int it[2];
        for (int v = 0; v < 2; v++) {
            const clphys_poisson_params p = {.precision = (clphys_poisson_precision)prec,
                                             .tol = 1e-10,
                                             .no_tune = 1,
                                             .line = v ? CLPHYS_POISSON_LINE_STAGED : CLPHYS_POISSON_LINE_COLUMN};
            solved s;
            const double ref = solve_geometry(&t.g, &p, f, &s);
            print_message("# %s %s: %d iterations, reported %.3e, reference %.3e\n", prec ? "fp64" : "mixed",
                          v ? "staged" : "column", s.res.iterations, s.res.rel_residual, ref);
            assert_int_equal(s.st, 0);
            assert_true(ref <= 1.05e-10);
            it[v] = s.res.iterations;
            solved_free(&s);
        }
        assert_true(abs(it[1] - it[0]) <= 1);
    }
    free(f);
    pt_geometry_free(&t);
}

/* ---- robustness --------------------------------------------------------------- */
static int iterations(int nx, int nz, double hx, double hz, uint64_t basin, uint64_t stream)
{
    uint64_t rng = tu_rng_init(stream);
    pt_geometry t;
    pt_geometry_make(&t, nx, nx, nz, hx, hx, hz, basin);
    const size_t n = (size_t)nx * nx * nz;
    double *f = random_rhs(&rng, n, 0);
    const clphys_poisson_params p = {.tol = 1e-6, .no_tune = 1};
    solved s;
    const double ref = solve_geometry(&t.g, &p, f, &s);
    assert_int_equal(s.st, 0);
    assert_true(ref <= 1.05e-6);
    const int it = s.res.iterations;
    solved_free(&s);
    free(f);
    pt_geometry_free(&t);
    return it;
}

static void test_robust_refinement(void **state)
{
    (void)state;
    for (int basin = 0; basin < 2; basin++) {
        const uint64_t seed = basin ? 1 + (tu_seed() & 0xffff) : 0;
        const int coarse = iterations(16, 8, 1e4, 10, seed, 20), fine = iterations(64, 8, 2.5e3, 10, seed, 21);
        print_message("# %s: 16x16x8 %d iterations, 64x64x8 %d\n", basin ? "basin" : "box", coarse, fine);
        assert_true(fine <= 1.5 * coarse && coarse <= 1.5 * fine);
    }
}

static void test_robust_aspect(void **state)
{
    (void)state;
    const uint64_t seed = 1 + (tu_seed() & 0xffff);
    int lo = 1 << 30, hi = 0;
    for (double aspect = 1; aspect <= 1e4; aspect *= 10) {
        const int it = iterations(32, 8, aspect, 1, seed, 30);
        print_message("# dx/dz %g: %d iterations\n", aspect, it);
        lo = it < lo ? it : lo, hi = it > hi ? it : hi;
    }
    /* the random basins of 91 seeds took 6-9 iterations at dx/dz 1 and 9-11
     * at 1e4, at most 1.57x (11 against 7, seed 1511929756933): 1.5x failed
     * about one run in a hundred */
    assert_true(hi <= 2 * lo);
}

/* ---- singular problems ------------------------------------------------------------ */
/* regions < 0: as many as the reference's labelling finds (a random basin
 * can hold an isolated lake besides the main basin), at least one */
static void check_neumann(const pt_geometry *t, int regions, uint64_t stream)
{
    uint64_t rng = tu_rng_init(stream);
    const size_t n = (size_t)t->g.nx * t->g.ny * t->g.nz;
    double *f = random_rhs(&rng, n, 0.7);
    const clphys_poisson_params p = {.precision = CLPHYS_POISSON_FP64, .tol = 1e-10, .no_tune = 1};
    solved s;
    const double ref = solve_geometry(&t->g, &p, f, &s);
    assert_int_equal(s.st, 0);
    if (regions < 0) {
        assert_true(s.regions >= 1);
        regions = s.regions;
    }
    assert_int_equal(s.regions, regions);
    assert_int_equal(s.res.singular_regions, regions);
    print_message("# %d singular region(s): residual %.3e (reference %.3e), removed mean %.6f\n", regions,
                  s.res.rel_residual, ref, s.res.removed_mean);
    assert_true(ref <= 1.05e-10); /* A x = the projected b */
    double xmax = 0, fmean_max = 0;
    for (size_t c = 0; c < n; c++) xmax = fmax(xmax, fabs(s.x[c]));
    for (int r = 0; r < regions; r++) {
        const double mx = poisson_ref_region_mean(n, s.label, r, s.w, s.x),
                     mf = poisson_ref_region_mean(n, s.label, r, s.w, f);
        assert_true(fabs(mx) <= 1e-10 * xmax);
        fmean_max = fabs(mf) > fabs(fmean_max) ? mf : fmean_max;
    }
    if (regions == 1) assert_true(fabs(s.res.removed_mean - fmean_max) <= 1e-12 * fabs(fmean_max));
    solved_free(&s);
    free(f);
}

static void test_neumann(void **state)
{
    (void)state;
    pt_geometry t;
    pt_geometry_make(&t, 24, 20, 8, 3000, 3000, 50, 1 + (tu_seed() & 0xffff));
    check_neumann(&t, -1, 40);
    /* a wall of land at i = 11 and its neighbour: two basins */
    for (int j = 0; j < 20; j++) t.depth[j * 24 + 11] = 0, t.depth[j * 24 + 12] = -1;
    for (int j = 0; j < 20; j++)
        for (int i = 0; i < 24; i++)
            if (i != 11 && i != 12 && j > 0 && j < 19 && i > 0 && i < 23) t.depth[j * 24 + i] = 400;
    check_neumann(&t, 2, 41);
    /* a Helmholtz term: no singular region */
    uint64_t rng = tu_rng_init(42);
    t.g.helmholtz = 1e-7;
    const size_t n = (size_t)24 * 20 * 8;
    double *f = random_rhs(&rng, n, 0.7);
    const clphys_poisson_params p = {.precision = CLPHYS_POISSON_FP64, .tol = 1e-10, .no_tune = 1};
    solved s;
    const double ref = solve_geometry(&t.g, &p, f, &s);
    assert_int_equal(s.st, 0);
    assert_int_equal(s.res.singular_regions, 0);
    assert_int_equal(s.regions, 0);
    assert_true(ref <= 1.05e-10);
    solved_free(&s);
    free(f);
    pt_geometry_free(&t);
}

/* ---- device buffers, caps, tuning ----------------------------------------------------- */
static void test_device_buffers_and_cap(void **state)
{
    (void)state;
    uint64_t rng = tu_rng_init(50);
    pt_geometry t;
    pt_geometry_make(&t, 16, 12, 8, 4000, 4000, 20, 1 + (tu_seed() & 0xffff));
    const size_t n = (size_t)16 * 12 * 8;
    double *f = random_rhs(&rng, n, 0), *x = malloc(n * sizeof(double)), *xd = malloc(n * sizeof(double));
    double *fb = malloc(n * sizeof(double));
    clphys_poisson_params p = {.tol = 1e-9};
    clphys_poisson_plan *pl = NULL;
    assert_int_equal(clphys_poisson_plan_create(ctx, &t.g, &p, &pl), 0);
    clphys_poisson_info info;
    clphys_poisson_plan_info(pl, &info);
    print_message("# tuned stencil: variant %d, %dx%d, source %s\n", info.variant, info.local_size[0],
                  info.local_size[1], clphys_tune_source_name(info.tune_source));
    assert_true(info.tune_source == CLPHYS_TUNE_MEASURED || info.tune_source == CLPHYS_TUNE_CACHE);
    assert_true(info.variant >= CLPHYS_POISSON_STENCIL_COLUMN && info.variant <= CLPHYS_POISSON_STENCIL_COLUMN_VEC);
    assert_true(info.vcycle_bytes > 10 * 4.0 * (double)n && info.stencil_bytes_fp64 == 48.0 * (double)n);
    clphys_poisson_plan *again = NULL; /* the same grid: the choice comes from the cache */
    assert_int_equal(clphys_poisson_plan_create(ctx, &t.g, &p, &again), 0);
    clphys_poisson_plan_info(again, &info);
    assert_int_equal(info.tune_source, CLPHYS_TUNE_CACHE);
    clphys_poisson_plan_destroy(again);
    clphys_poisson_result r1, r2;
    tu_poison_f64(x, n);
    assert_int_equal(clphys_poisson_solve(pl, f, x, &r1), 0);
    cl_mem rm = NULL, xm = NULL;
    assert_int_equal(clphys_poisson_field_create(pl, CLPHYS_FP64, &rm), 0);
    assert_int_equal(clphys_poisson_field_create(pl, CLPHYS_FP64, &xm), 0);
    assert_int_equal(clphys_poisson_field_write(pl, CLPHYS_FP64, rm, f), 0);
    tu_poison_f64(xd, n);
    assert_int_equal(clphys_poisson_field_write(pl, CLPHYS_FP64, xm, xd), 0);
    assert_int_equal(clphys_poisson_solve_mem(pl, rm, xm, &r2), 0);
    assert_int_equal(clphys_poisson_field_read(pl, CLPHYS_FP64, xm, xd), 0);
    assert_int_equal(clphys_poisson_field_read(pl, CLPHYS_FP64, rm, fb), 0);
    assert_int_equal(r1.iterations, r2.iterations);
    assert_true(r2.transfer_s == 0);
    double xmax = 0;
    for (size_t c = 0; c < n; c++) xmax = fmax(xmax, fabs(x[c]));
    for (size_t c = 0; c < n; c++) {
        assert_true(fb[c] == f[c]);
        assert_true(fabs(xd[c] - x[c]) <= 1e-12 * xmax);
    }
    assert_int_equal(clphys_poisson_solve_mem(pl, rm, rm, &r2), CLPHYS_ERR_INVALID_ARGUMENT);
    clReleaseMemObject(rm);
    clReleaseMemObject(xm);
    clphys_poisson_plan_destroy(pl);
    /* a cap */
    p.max_iter = 2;
    assert_int_equal(clphys_poisson_plan_create(ctx, &t.g, &p, &pl), 0);
    const clphys_status st = clphys_poisson_solve(pl, f, x, &r1);
    print_message("# %s\n", clphys_last_error(ctx));
    assert_int_equal(st, CLPHYS_ERR_NOT_CONVERGED);
    assert_non_null(strstr(clphys_last_error(ctx), "true residual"));
    assert_int_equal(r1.iterations, 2);
    assert_true(r1.rel_residual > 1e-9 && r1.rel_residual < 1);
    clphys_poisson_plan_destroy(pl);
    /* a tolerance below fp64's floor at dx/dz = 1e4: the solve stops when a
     * restart no longer halves the true residual, long before max_iter */
    for (int i = 0; i < 16; i++) t.dx[i] = 1e4;
    for (int j = 0; j < 12; j++) t.dy[j] = 1e4;
    for (int k = 0; k < 8; k++) t.dz[k] = 1;
    clphys_poisson_box(16, 12, 8, t.depth);
    p = (clphys_poisson_params){.tol = 1e-16, .max_iter = 1000, .no_tune = 1};
    assert_int_equal(clphys_poisson_plan_create(ctx, &t.g, &p, &pl), 0);
    assert_int_equal(clphys_poisson_solve(pl, f, x, &r1), CLPHYS_ERR_NOT_CONVERGED);
    print_message("# tol 1e-16: stopped after %d iterations, %d restarts at %.3e\n", r1.iterations, r1.restarts,
                  r1.rel_residual);
    assert_true(r1.iterations < 500 && r1.rel_residual < 1e-6);
    clphys_poisson_plan_destroy(pl);
    free(f), free(x), free(xd), free(fb);
    pt_geometry_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_order_cartesian),
        cmocka_unit_test(test_second_order_lonlat),
        cmocka_unit_test(test_residual_1e10),
        cmocka_unit_test(test_staged_iterations),
        cmocka_unit_test(test_robust_refinement),
        cmocka_unit_test(test_robust_aspect),
        cmocka_unit_test(test_neumann),
        cmocka_unit_test(test_device_buffers_and_cap),
    };
    return tu_run_group(tests, .ctx = &ctx, .nctx = 1);
}
