/* test_poisson_ops.c — the pieces of the Poisson path against fp64
 * references, on fresh random input with outputs poisoned (NaN):
 *  - the 7-point stencil (column, cell and column-vec variants, fp64 and fp32, plans
 *    from host arrays and from a device buffer) against poisson_ref_apply on
 *    random symmetric operators with land, wrap-around in x and y, singular
 *    and Helmholtz-like rows: |y - y_ref| <= tol * sum_d |a_d x_nb| per row,
 *    tol 1e-14 (fp64) and 1e-6 (fp32);
 *  - the assembled operator (Cartesian with random spacings, stretched
 *    layers, random bathymetry, periodic x, a Helmholtz term; and lonlat)
 *    against an assembly written here face by face, to 1e-13 of the
 *    diagonal; mask and volumes;
 *  - symmetry: the exported operator pairs exactly, x.Ay = y.Ax on the
 *    device (1e-12), and the V-cycle x.By = y.Bx (fp64 1e-10, fp32 1e-5);
 *  - one V-cycle (fp64 and mixed, 1 and 2 smoothing steps, column,
 *    column-vec and staged line relaxation; staged and column also fp32,
 *    periodic in x, with a Helmholtz term) against poisson_ref_vcycle,
 *    1e-10 (fp64; 1e-9 with dx / dz = 250) and 1e-4 (fp32 levels) of
 *    max |z_ref|;
 *  - bad input: each error names its cause (grid too small, NaN depth, no
 *    wet cell, NaN / asymmetric / positive coefficients, an unknown
 *    parameter, a device buffer too small). */
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

static double *random_vec(uint64_t *rng, size_t n)
{
    double *v = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) v[i] = 2 * tu_uniform(rng) - 1;
    return v;
}

static clphys_poisson_plan *plan_from_op(int nx, int ny, int nz, const double *a, clphys_poisson_params *p)
{
    const clphys_poisson_operator op = {.nx = nx, .ny = ny, .nz = nz, .a = a};
    clphys_poisson_plan *pl = NULL;
    clphys_status st = clphys_poisson_plan_create_operator(ctx, &op, p, &pl);
    if (st) fail_msg("plan: %s: %s", clphys_status_string(st), clphys_last_error(ctx));
    return pl;
}

/* max over wet rows of |y - yr| / sum_d |a_d x_nb|; land rows are the
 * identity (y = x exactly) */
static double stencil_err(int nx, int ny, int nz, const double *a, const double *x, const double *y, const double *yr)
{
    const size_t n = (size_t)nx * ny * nz;
    double worst = 0;
    for (size_t c = 0; c < n; c++) {
        if (!isfinite(y[c])) return INFINITY;
        if (a[3 * n + c] == 0) {
            if (y[c] != x[c] && y[c] != (float)x[c]) return INFINITY;
            continue;
        }
        double scale = 1e-300;
        for (int d = -3; d <= 3; d++)
            scale += fabs(a[(size_t)(d + 3) * n + c] * x[poisson_ref_neighbor(nx, ny, nz, c, d)]);
        worst = fmax(worst, fabs(y[c] - yr[c]) / scale);
    }
    return worst;
}

static void check_apply(clphys_poisson_plan *pl, int nx, int ny, int nz, const double *a, const double *x)
{
    const size_t n = (size_t)nx * ny * nz;
    double *yr = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
    poisson_ref_apply(nx, ny, nz, a, x, yr);
    for (int v = CLPHYS_POISSON_STENCIL_COLUMN; v <= CLPHYS_POISSON_STENCIL_COLUMN_VEC; v++)
        for (int p = 0; p < 2; p++) {
            cl_mem fx = NULL, fy = NULL;
            const int local[2] = {4, 2};
            assert_int_equal(clphys_poisson_set_stencil(pl, (clphys_poisson_stencil)v, v == 1 ? local : NULL), 0);
            tu_poison_f64(y, n);
            assert_int_equal(clphys_poisson_field_create(pl, (clphys_precision)p, &fx), 0);
            assert_int_equal(clphys_poisson_field_create(pl, (clphys_precision)p, &fy), 0);
            assert_int_equal(clphys_poisson_field_write(pl, (clphys_precision)p, fx, x), 0);
            assert_int_equal(clphys_poisson_field_write(pl, (clphys_precision)p, fy, y), 0); /* NaN */
            double ks = -1;
            assert_int_equal(clphys_poisson_apply(pl, (clphys_precision)p, fy, fx, &ks), 0);
            assert_true(ks >= 0);
            assert_int_equal(clphys_poisson_field_read(pl, (clphys_precision)p, fy, y), 0);
            const double err = stencil_err(nx, ny, nz, a, x, y, yr);
            static const char *const vname[] = {"", "column", "cell", "column-vec"};
            print_message("# stencil %s %s: max error %.2e\n", vname[v], p ? "fp64" : "fp32", err);
            assert_true(err <= (p ? 1e-14 : 1e-6));
            clReleaseMemObject(fx);
            clReleaseMemObject(fy);
        }
    free(yr), free(y);
}

static void test_stencil_random(void **state)
{
    (void)state;
    uint64_t rng = tu_rng_init(1);
    const int nx = 16, ny = 9, nz = 8; /* nx a multiple of 8: column-vec too */
    const size_t n = (size_t)nx * ny * nz;
    double *a = pt_random_op(&rng, nx, ny, nz, 0.3, 1, 1, 10.0, 0.5), *x = random_vec(&rng, n);
    clphys_poisson_params p = {.no_tune = 1, .variant = CLPHYS_POISSON_STENCIL_COLUMN};
    clphys_poisson_plan *pl = plan_from_op(nx, ny, nz, a, &p);
    /* land rows are exported as zeros, and the operator round-trips */
    double *back = malloc(7 * n * sizeof(double));
    assert_int_equal(clphys_poisson_plan_operator(pl, back, NULL, NULL), 0);
    for (size_t i = 0; i < 7 * n; i++) assert_true(fabs(back[i] - a[i]) <= 1e-12 * fabs(a[3 * n + i % n]) + 1e-300);
    check_apply(pl, nx, ny, nz, a, x);
    clphys_poisson_plan_destroy(pl);
    /* the same operator from a device buffer */
    cl_int e;
    cl_mem am = clCreateBuffer(clphys_context_cl_context(ctx), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               7 * n * sizeof(double), a, &e);
    assert_int_equal(e, CL_SUCCESS);
    const clphys_poisson_operator op = {.nx = nx, .ny = ny, .nz = nz, .a_mem = am};
    assert_int_equal(clphys_poisson_plan_create_operator(ctx, &op, &p, &pl), 0);
    check_apply(pl, nx, ny, nz, a, x);
    clphys_poisson_plan_destroy(pl);
    clReleaseMemObject(am);
    free(a), free(x), free(back);
}

/* ---- assembly, written face by face ------------------------------------------- */
#define R_EARTH 6371000.0
#define PI      3.14159265358979323846

static double *assemble_here(const clphys_poisson_geometry *g, double *vol)
{
    const int nx = g->nx, ny = g->ny, nz = g->nz;
    const size_t n = (size_t)nx * ny * nz, plane = (size_t)nx * ny;
    double *a = calloc(7 * n, sizeof(double)), *zc = malloc(sizeof(double) * nz);
    double z = 0;
    for (int k = 0; k < nz; k++) zc[k] = z + g->dz[k] / 2, z += g->dz[k];
    const double dlon = (g->lon1 - g->lon0) * PI / 180 / nx, dlat = (g->lat1 - g->lat0) * PI / 180 / ny;
#define LAT_F(j)     ((g->lat0 * PI / 180) + (j)*dlat) /* southern face of row j */
#define WET(i, j, k) (g->depth[(size_t)(j)*nx + (i)] > zc[k])
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                const size_t c = (size_t)i + (size_t)nx * j + plane * k;
                vol[c] = 0;
                if (!WET(i, j, k)) continue;
                const double area =
                    g->lonlat ? R_EARTH * R_EARTH * dlon * (sin(LAT_F(j + 1)) - sin(LAT_F(j))) : g->dx[i] * g->dy[j];
                vol[c] = area * g->dz[k];
                a[3 * n + c] += g->helmholtz * vol[c];
                /* the faces to the east, north and below, added to both cells */
                const int ie = (i + 1) % nx;
                double t[3] = {0, 0, 0};
                size_t nb[3] = {(size_t)ie + (size_t)nx * j + plane * k, c + nx, c + plane};
                if ((i + 1 < nx || g->periodic_x) && WET(ie, j, k))
                    t[0] = g->lonlat ? (R_EARTH * dlat * g->dz[k]) / (R_EARTH * cos(LAT_F(j) + dlat / 2) * dlon)
                                     : g->dy[j] * g->dz[k] / ((g->dx[i] + g->dx[ie]) / 2);
                if (j + 1 < ny && WET(i, j + 1, k))
                    t[1] = g->lonlat ? (R_EARTH * cos(LAT_F(j + 1)) * dlon * g->dz[k]) / (R_EARTH * dlat)
                                     : g->dx[i] * g->dz[k] / ((g->dy[j] + g->dy[j + 1]) / 2);
                if (k + 1 < nz && WET(i, j, k + 1)) t[2] = area / ((g->dz[k] + g->dz[k + 1]) / 2);
                for (int d = 0; d < 3; d++) {
                    if (t[d] == 0) continue;
                    a[(size_t)(4 + d) * n + c] = -t[d];
                    a[(size_t)(2 - d) * n + nb[d]] = -t[d];
                    a[3 * n + c] += t[d];
                    a[3 * n + nb[d]] += t[d];
                }
            }
    /* a wet cell without a wet neighbour and without Helmholtz term is land */
    for (size_t c = 0; c < n; c++)
        if (vol[c] > 0 && a[3 * n + c] == 0) vol[c] = 0;
    free(zc);
    return a;
}

static void check_assembly(const clphys_poisson_geometry *g)
{
    const size_t n = (size_t)g->nx * g->ny * g->nz;
    double *vol = malloc(n * sizeof(double)), *ref = assemble_here(g, vol);
    double *a = malloc(7 * n * sizeof(double)), *w = malloc(n * sizeof(double));
    unsigned char *mask = malloc(n);
    tu_poison_f64(a, 7 * n);
    tu_poison_f64(w, n);
    clphys_poisson_params p = {.no_tune = 1};
    clphys_poisson_plan *pl = NULL;
    clphys_status st = clphys_poisson_plan_create(ctx, g, &p, &pl);
    if (st) fail_msg("plan: %s", clphys_last_error(ctx));
    assert_int_equal(clphys_poisson_plan_operator(pl, a, mask, w), 0);
    double worst = 0;
    size_t wet = 0;
    for (size_t c = 0; c < n; c++) {
        assert_int_equal(mask[c], vol[c] > 0);
        wet += mask[c];
        assert_true(fabs(w[c] - vol[c]) <= 1e-13 * vol[c]);
        for (int d = 0; d < 7; d++) {
            const double e = fabs(a[d * n + c] - ref[d * n + c]) / fmax(ref[3 * n + c], 1e-300);
            if (!(e <= worst)) worst = isfinite(e) ? e : INFINITY;
            /* symmetry of what is exported: the pairs are identical */
            if (d != 3) {
                const size_t g2 = poisson_ref_neighbor(g->nx, g->ny, g->nz, c, d - 3);
                if (g2 != c) assert_true(a[d * n + c] == a[(6 - d) * n + g2]);
            }
        }
    }
    clphys_poisson_info info;
    clphys_poisson_plan_info(pl, &info);
    assert_int_equal(info.wet, wet);
    print_message("# assembly %s: %zu wet cells, max difference %.2e of the diagonal\n",
                  g->lonlat ? "lonlat" : "Cartesian", wet, worst);
    assert_true(worst <= 1e-13);
    clphys_poisson_plan_destroy(pl);
    free(vol), free(ref), free(a), free(w), free(mask);
}

static void test_assembly(void **state)
{
    (void)state;
    uint64_t rng = tu_rng_init(2);
    const int nx = 11, ny = 8, nz = 8;
    pt_geometry t;
    pt_geometry_make(&t, nx, ny, nz, 1, 1, 1, 0);
    for (int i = 0; i < nx; i++) t.dx[i] = 1000 * (0.5 + tu_uniform(&rng));
    for (int j = 0; j < ny; j++) t.dy[j] = 1000 * (0.5 + tu_uniform(&rng));
    for (int k = 0; k < nz; k++) t.dz[k] = 10 * pow(1.4, k);
    double lz = 0;
    for (int k = 0; k < nz; k++) lz += t.dz[k];
    for (int c = 0; c < nx * ny; c++) t.depth[c] = tu_uniform(&rng) < 0.15 ? -5 : lz * tu_uniform(&rng) * 1.2;
    t.g.periodic_x = 1;
    t.g.helmholtz = 1e-6;
    check_assembly(&t.g);
    t.g.periodic_x = 0;
    t.g.helmholtz = 0;
    t.g.lonlat = 1, t.g.dx = t.g.dy = NULL;
    t.g.lon0 = -40, t.g.lon1 = 30, t.g.lat0 = 20, t.g.lat1 = 75;
    check_assembly(&t.g);
    pt_geometry_free(&t);
}

/* ---- symmetry and the V-cycle --------------------------------------------------- */
static double dot(const double *x, const double *y, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

/* out = M in on the device, fields of precision fp: the stencil (vcycle 0)
 * or one V-cycle (1); out is poisoned first, on the host and the device */
static void device_map(clphys_poisson_plan *pl, clphys_precision fp, int vcycle, const double *in, double *out,
                       size_t n)
{
    cl_mem a = NULL, b = NULL;
    assert_int_equal(clphys_poisson_field_create(pl, fp, &a), 0);
    assert_int_equal(clphys_poisson_field_create(pl, fp, &b), 0);
    assert_int_equal(clphys_poisson_field_write(pl, fp, a, in), 0);
    tu_poison_f64(out, n);
    assert_int_equal(clphys_poisson_field_write(pl, fp, b, out), 0);
    if (vcycle)
        assert_int_equal(clphys_poisson_vcycle(pl, b, a, NULL), 0);
    else
        assert_int_equal(clphys_poisson_apply(pl, fp, b, a, NULL), 0);
    assert_int_equal(clphys_poisson_field_read(pl, fp, b, out), 0);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
}

static const char *const line_name[] = {"auto", "column", "column-vec", "staged"};
static const char *const prec_name[] = {"mixed", "fp64", "fp32"};

/* One V-cycle of a plan of geometry t (precision prec: 0 mixed, 1 fp64,
 * 2 fp32) against poisson_ref_vcycle to tol64 (fp64) or 1e-4 (fp32
 * levels) of max |z_ref|, and its symmetry x.By = y.Bx. */
static void check_vcycle(const pt_geometry *t, int prec, int smooth, clphys_poisson_line line, double tol64,
                         uint64_t *rng)
{
    const int nx = t->g.nx, ny = t->g.ny, nz = t->g.nz;
    const size_t n = (size_t)nx * ny * nz;
    double *a = malloc(7 * n * sizeof(double)), *x = random_vec(rng, n), *y = random_vec(rng, n);
    double *ax = malloc(n * sizeof(double)), *ay = malloc(n * sizeof(double)), *zr = malloc(n * sizeof(double));
    const clphys_poisson_precision pp[3] = {CLPHYS_POISSON_MIXED, CLPHYS_POISSON_FP64, CLPHYS_POISSON_FP32};
    const clphys_precision fp = prec == 2 ? CLPHYS_FP32 : CLPHYS_FP64;
    clphys_poisson_params p = {.no_tune = 1, .smooth = smooth, .line = line, .precision = pp[prec]};
    clphys_poisson_plan *pl = NULL;
    if (clphys_poisson_plan_create(ctx, &t->g, &p, &pl)) fail_msg("plan: %s", clphys_last_error(ctx));
    assert_int_equal(clphys_poisson_plan_operator(pl, a, NULL, NULL), 0);
    if (prec == 1 && smooth == 1 && line == CLPHYS_POISSON_LINE_COLUMN) { /* x.Ay = y.Ax on the device */
        device_map(pl, fp, 0, y, ay, n);
        device_map(pl, fp, 0, x, ax, n);
        const double s1 = dot(x, ay, n), s2 = dot(y, ax, n);
        print_message("# x.Ay %.15e y.Ax %.15e\n", s1, s2);
        assert_true(fabs(s1 - s2) <= 1e-12 * sqrt(dot(ax, ax, n) * dot(y, y, n)));
    }
    device_map(pl, fp, 1, y, ay, n);
    device_map(pl, fp, 1, x, ax, n);
    const double s1 = dot(x, ay, n), s2 = dot(y, ax, n);
    const double asym = fabs(s1 - s2) / sqrt(dot(ax, ax, n) * dot(y, y, n));
    /* the reference V-cycle */
    poisson_ref_mg *mg = poisson_ref_mg_create(nx, ny, nz, a, 0.5);
    assert_non_null(mg);
    poisson_ref_vcycle(mg, smooth, 0.8, x, zr);
    double dmax = 0, zmax = 0;
    for (size_t c = 0; c < n; c++) {
        if (!isfinite(ax[c])) dmax = INFINITY;
        dmax = fmax(dmax, fabs(ax[c] - zr[c])), zmax = fmax(zmax, fabs(zr[c]));
    }
    clphys_poisson_info info;
    clphys_poisson_plan_info(pl, &info);
    print_message("# V-cycle %s %s smooth %d%s%s (%d levels, ref %d): vs reference %.2e, asymmetry %.2e\n",
                  prec_name[prec], line_name[line], smooth, t->g.periodic_x ? " periodic-x" : "",
                  t->g.helmholtz > 0 ? " helmholtz" : "", info.levels, poisson_ref_mg_levels(mg), dmax / zmax, asym);
    assert_int_equal(info.line, line);
    assert_int_equal(info.levels, poisson_ref_mg_levels(mg));
    assert_true(dmax <= (prec == 1 ? tol64 : 1e-4) * zmax);
    assert_true(asym <= (prec == 1 ? 1e-10 : 1e-5));
    poisson_ref_mg_destroy(mg);
    clphys_poisson_plan_destroy(pl);
    free(a), free(x), free(y), free(ax), free(ay), free(zr);
}

static void test_symmetry_and_vcycle(void **state)
{
    (void)state;
    uint64_t rng = tu_rng_init(3);
    pt_geometry t;
    pt_geometry_make(&t, 24, 14, 8, 2000, 3000, 50, 1 + (tu_seed() & 0xffff)); /* column-vec: two levels fp64 */
    for (int prec = 0; prec < 2; prec++)
        for (int smooth = 1; smooth <= 2; smooth++)
            for (int line = CLPHYS_POISSON_LINE_COLUMN; line <= CLPHYS_POISSON_LINE_STAGED; line++)
                check_vcycle(&t, prec, smooth, (clphys_poisson_line)line, 1e-10, &rng);
    pt_geometry_free(&t);
}

/* staged against column's reference on what the basin above lacks: the
 * fp32 plan (fp32 fields in and out), x periodic, a Helmholtz term, an odd
 * nz and more columns than one tile on the coarse levels.  fp64 to 1e-8:
 * with dx / dz = 250 and no Helmholtz term (a singular operator), the
 * rounding of the fp64 plans, column and staged alike, differs from the
 * reference's by up to 1.6e-9 over random geometries (4 of 24 above 1e-9,
 * bench/poisson-notes.md), while one fp32 step in the fp64 path would
 * differ by 5e-8 or more (the mixed plans' difference). */
static void test_vcycle_staged(void **state)
{
    (void)state;
    uint64_t rng = tu_rng_init(31);
    pt_geometry t;
    pt_geometry_make(&t, 40, 36, 7, 5000, 4000, 20, 1 + (tu_seed() & 0xffff));
    t.g.periodic_x = 1;
    clphys_poisson_basin(40, 36, 2 + (tu_seed() & 0xffff), 7 * 20.0, 1, t.depth);
    for (int h = 0; h < 2; h++) {
        t.g.helmholtz = h ? 1e-7 : 0;
        for (int prec = 0; prec < 3; prec++)
            for (int line = CLPHYS_POISSON_LINE_COLUMN; line <= CLPHYS_POISSON_LINE_STAGED; line += 2)
                check_vcycle(&t, prec, 2, (clphys_poisson_line)line, 1e-8, &rng);
    }
    pt_geometry_free(&t);
}

/* ---- bad input ------------------------------------------------------------------ */
static void expect(clphys_status st, clphys_status want, const char *needle)
{
    const char *msg = clphys_last_error(ctx);
    print_message("# %s: %s\n", clphys_status_string(st), msg);
    assert_int_equal(st, want);
    assert_non_null(strstr(msg, needle));
}

static void test_bad_input(void **state)
{
    (void)state;
    uint64_t rng = tu_rng_init(4);
    clphys_poisson_plan *pl = NULL;
    clphys_poisson_params p = {.no_tune = 1};
    pt_geometry t;
    pt_geometry_make(&t, 1, 6, 3, 100, 100, 10, 0);
    expect(clphys_poisson_plan_create(ctx, &t.g, &p, &pl), CLPHYS_ERR_INVALID_ARGUMENT, "too small for a coarse level");
    pt_geometry_free(&t);
    pt_geometry_make(&t, 6, 5, 3, 100, 100, 10, 0);
    t.depth[2 * 6 + 3] = NAN;
    expect(clphys_poisson_plan_create(ctx, &t.g, &p, &pl), CLPHYS_ERR_INPUT, "depth at column (i 3, j 2)");
    t.depth[2 * 6 + 3] = INFINITY;
    expect(clphys_poisson_plan_create(ctx, &t.g, &p, &pl), CLPHYS_ERR_INPUT, "depth at column (i 3, j 2)");
    for (int c = 0; c < 30; c++) t.depth[c] = 4; /* shallower than the first layer's centre, 5 m */
    expect(clphys_poisson_plan_create(ctx, &t.g, &p, &pl), CLPHYS_ERR_INPUT, "no wet cell");
    clphys_poisson_box(6, 5, 30, t.depth);
    t.dz[1] = -1;
    expect(clphys_poisson_plan_create(ctx, &t.g, &p, &pl), CLPHYS_ERR_INPUT, "dz[1]");
    t.dz[1] = 10;
    /* a geometry of absurd scale is named at plan creation (issue 32, U3),
     * not met as an infinite right-hand side or a NaN residual */
    t.g.helmholtz = 1e308;
    expect(clphys_poisson_plan_create(ctx, &t.g, &p, &pl), CLPHYS_ERR_INPUT, "the Helmholtz term lambda V is inf");
    t.g.helmholtz = 0;
    for (int i = 0; i < 6; i++) t.dx[i] = 1e-300;
    expect(clphys_poisson_plan_create(ctx, &t.g, &p, &pl), CLPHYS_ERR_INPUT, "out of scale");
    for (int i = 0; i < 6; i++) t.dx[i] = 100;
    clphys_poisson_params bad = {.omega = 1.5};
    expect(clphys_poisson_plan_create(ctx, &t.g, &bad, &pl), CLPHYS_ERR_INVALID_ARGUMENT, "omega");
    bad = (clphys_poisson_params){.precision = (clphys_poisson_precision)7};
    expect(clphys_poisson_plan_create(ctx, &t.g, &bad, &pl), CLPHYS_ERR_INVALID_ARGUMENT, "unknown precision");
    pt_geometry_free(&t);
    assert_null(pl);
    /* caller's operators */
    const int nx = 5, ny = 4, nz = 8;
    const size_t n = (size_t)nx * ny * nz;
    double *a = pt_random_op(&rng, nx, ny, nz, 0.0, 0, 0, 1.0, 0.5);
    const clphys_poisson_operator op = {.nx = nx, .ny = ny, .nz = nz, .a = a};
    const size_t c = 1 + (size_t)nx * (2 + (size_t)ny * 1); /* (i 1, j 2, k 1) */
    double keep = a[5 * n + c];
    a[5 * n + c] = NAN;
    expect(clphys_poisson_plan_create_operator(ctx, &op, &p, &pl), CLPHYS_ERR_INPUT, "cell (i 1, j 2, k 1)");
    a[5 * n + c] = keep * 1.01;
    expect(clphys_poisson_plan_create_operator(ctx, &op, &p, &pl), CLPHYS_ERR_INPUT, "not symmetric");
    a[5 * n + c] = -keep;
    expect(clphys_poisson_plan_create_operator(ctx, &op, &p, &pl), CLPHYS_ERR_INPUT, "positive off-diagonal");
    a[5 * n + c] = keep;
    a[3 * n + c] *= 0.5;
    expect(clphys_poisson_plan_create_operator(ctx, &op, &p, &pl), CLPHYS_ERR_INPUT, "diagonal below");
    a[3 * n + c] *= 2;
    double *zero = calloc(7 * n, sizeof(double));
    const clphys_poisson_operator op0 = {.nx = nx, .ny = ny, .nz = nz, .a = zero};
    expect(clphys_poisson_plan_create_operator(ctx, &op0, &p, &pl), CLPHYS_ERR_INPUT, "no wet cell");
    cl_int e;
    cl_mem small = clCreateBuffer(clphys_context_cl_context(ctx), CL_MEM_READ_WRITE, 6 * n * sizeof(double), NULL, &e);
    const clphys_poisson_operator opm = {.nx = nx, .ny = ny, .nz = nz, .a_mem = small};
    expect(clphys_poisson_plan_create_operator(ctx, &opm, &p, &pl), CLPHYS_ERR_INVALID_ARGUMENT, "a_mem holds");
    const clphys_poisson_operator both = {.nx = nx, .ny = ny, .nz = nz, .a = a, .a_mem = small};
    expect(clphys_poisson_plan_create_operator(ctx, &both, &p, &pl), CLPHYS_ERR_INVALID_ARGUMENT, "exactly one");
    clReleaseMemObject(small);
    /* a right-hand side that is not finite in a wet cell is named; on land it is ignored */
    assert_int_equal(clphys_poisson_plan_create_operator(ctx, &op, &p, &pl), 0);
    double *b = random_vec(&rng, n), *x = malloc(n * sizeof(double));
    b[c] = NAN;
    clphys_poisson_result res;
    expect(clphys_poisson_solve(pl, b, x, &res), CLPHYS_ERR_INPUT, "wet cell (i 1, j 2, k 1)");
    /* of two, the first is named (the check runs by threads beside a GPU) */
    b[n - 1] = INFINITY;
    expect(clphys_poisson_solve(pl, b, x, &res), CLPHYS_ERR_INPUT, "wet cell (i 1, j 2, k 1)");
    b[c] = 0.5;
    expect(clphys_poisson_solve(pl, b, x, &res), CLPHYS_ERR_INPUT, "wet cell (i 4, j 3, k 7) is inf");
    b[n - 1] = 0.25;
    /* a right-hand side near the ends of the double range (issue 32, W4):
     * b is solved scaled by a power of two, so b 2^s gives exactly x 2^s
     * (|b|^2 of b 2^900 alone overflows) */
    b[c] = 0.5;
    double *b2 = malloc(n * sizeof(double)), *x2 = malloc(n * sizeof(double));
    assert_int_equal(clphys_poisson_solve(pl, b, x, &res), 0);
    const int shifts[2] = {900, -900};
    for (int s = 0; s < 2; s++) {
        for (size_t k = 0; k < n; k++) b2[k] = ldexp(b[k], shifts[s]);
        tu_poison_f64(x2, n);
        assert_int_equal(clphys_poisson_solve(pl, b2, x2, &res), 0);
        for (size_t k = 0; k < n; k++) assert_true(x2[k] == ldexp(x[k], shifts[s]));
    }
    clphys_poisson_plan_destroy(pl);
    free(a), free(zero), free(b), free(x), free(b2), free(x2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stencil_random),      cmocka_unit_test(test_assembly),
        cmocka_unit_test(test_symmetry_and_vcycle), cmocka_unit_test(test_vcycle_staged),
        cmocka_unit_test(test_bad_input),
    };
    return tu_run_group(tests, .ctx = &ctx, .nctx = 1);
}
