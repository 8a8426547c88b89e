/* test_poisson_io.c — the Poisson path's NetCDF files (host/poisson/
 * netcdf_io.c), with files written here through libnetcdf:
 *  - a bathymetry: sizes, coordinates, values, missing values (_FillValue,
 *    missing_value, NaN as the fill value, the type's default fill) made
 *    land and counted, CF packing unpacked, degrees making a lonlat grid;
 *  - bad bathymetry files, each an error naming the file and variable (and
 *    the index of a bad value): no file, no variable, three dimensions, a
 *    dimension without coordinate variable, coordinates not increasing, a
 *    NaN that is not the fill value, text instead of numbers;
 *  - a field (z, y, x): values, land ignored, wrong sizes named, a missing
 *    value in a wet cell named;
 *  - a written solution read back: dimensions z, y, x, coordinates, p with
 *    the fill value on land, mask, CF attributes; an unwritable path and a
 *    failed rename are errors naming the file and leave no file behind. */
#include "util.h"

#include <dirent.h>
#include <math.h>
#include <netcdf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static char dir[64];

#define NC_OK(call) assert_int_equal((call), NC_NOERR)

static const char *path(const char *name)
{
    return tu_join(dir, name);
}

/* a bathymetry file: variable `var` (type t) over (y, x) with coordinates
 * in `units`; values v (ny * nx doubles); fill (if has_fill) */
typedef struct {
    nc_type t;
    const char *units;
    int has_fill, nan_fill, missing_value, scale;
    double fill;
    int coord_x;       /* 0: no coordinate variable for x        */
    int decreasing_y;  /* y coordinates in the wrong order        */
} bathy_spec;

static void write_bathy(const char *file, const char *var, int nx, int ny, const double *v, const bathy_spec *s)
{
    int nc, dy, dx, vy, vx, vv;
    NC_OK(nc_create(file, NC_CLOBBER | NC_NETCDF4, &nc));
    NC_OK(nc_def_dim(nc, "y", (size_t)ny, &dy));
    NC_OK(nc_def_dim(nc, "x", (size_t)nx, &dx));
    NC_OK(nc_def_var(nc, "y", NC_DOUBLE, 1, &dy, &vy));
    if (s->coord_x) NC_OK(nc_def_var(nc, "x", NC_DOUBLE, 1, &dx, &vx));
    const int d2[2] = {dy, dx};
    NC_OK(nc_def_var(nc, var, s->t, 2, d2, &vv));
    NC_OK(nc_put_att_text(nc, vy, "units", strlen(s->units), s->units));
    if (s->coord_x) NC_OK(nc_put_att_text(nc, vx, "units", strlen(s->units), s->units));
    if (s->has_fill) {
        const double fv = s->nan_fill ? NAN : s->fill;
        NC_OK(nc_put_att_double(nc, vv, "_FillValue", s->t, 1, &fv));
    }
    if (s->missing_value) {
        const double mv = -777;
        NC_OK(nc_put_att_double(nc, vv, "missing_value", s->t, 1, &mv));
    }
    if (s->scale) {
        const double sc = 0.5, off = 10;
        NC_OK(nc_put_att_double(nc, vv, "scale_factor", NC_DOUBLE, 1, &sc));
        NC_OK(nc_put_att_double(nc, vv, "add_offset", NC_DOUBLE, 1, &off));
    }
    NC_OK(nc_enddef(nc));
    double *cy = malloc(sizeof(double) * ny), *cx = malloc(sizeof(double) * nx);
    for (int j = 0; j < ny; j++) cy[j] = s->decreasing_y ? 100.0 - j : 10.0 + 2.0 * j;
    for (int i = 0; i < nx; i++) cx[i] = -30.0 + 1.5 * i;
    NC_OK(nc_put_var_double(nc, vy, cy));
    if (s->coord_x) NC_OK(nc_put_var_double(nc, vx, cx));
    NC_OK(nc_put_var_double(nc, vv, v));
    NC_OK(nc_close(nc));
    free(cy), free(cx);
}

static void expect_error(clphys_status st, clphys_status want, const char *a, const char *b)
{
    const char *msg = clphys_last_error(NULL);
    print_message("# %s: %s\n", clphys_status_string(st), msg);
    assert_int_equal(st, want);
    assert_non_null(strstr(msg, a));
    if (b) assert_non_null(strstr(msg, b));
}

static void test_bathymetry(void **state)
{
    (void)state;
    const int nx = 7, ny = 5;
    double v[35];
    for (int c = 0; c < 35; c++) v[c] = 100.0 + c;
    v[3] = -999; /* the fill value */
    v[9] = -777; /* missing_value */
    v[12] = -20; /* land, not missing */
    bathy_spec s = {.t = NC_FLOAT, .units = "m", .has_fill = 1, .fill = -999, .missing_value = 1, .coord_x = 1};
    const char *f = path("bathy.nc");
    write_bathy(f, "depth", nx, ny, v, &s);
    clphys_poisson_bathymetry b;
    assert_int_equal(clphys_poisson_read_bathymetry(f, "depth", &b), 0);
    assert_int_equal(b.nx, nx);
    assert_int_equal(b.ny, ny);
    assert_int_equal(b.lonlat, 0);
    assert_int_equal(b.missing, 2);
    for (int c = 0; c < 35; c++) assert_true(b.depth[c] == (c == 3 || c == 9 ? 0 : v[c]));
    assert_true(b.x[2] == -27.0 && b.y[4] == 18.0);
    clphys_poisson_bathymetry_destroy(&b);
    /* degrees, NaN as the fill value, packed shorts */
    s = (bathy_spec){.t = NC_SHORT, .units = "degrees_east", .has_fill = 1, .fill = -1, .coord_x = 1, .scale = 1};
    for (int c = 0; c < 35; c++) v[c] = c;
    v[5] = -1;
    write_bathy(f, "depth", nx, ny, v, &s);
    assert_int_equal(clphys_poisson_read_bathymetry(f, "depth", &b), 0);
    assert_int_equal(b.lonlat, 1);
    assert_int_equal(b.missing, 1);
    assert_true(b.depth[5] == 0 && b.depth[6] == 6 * 0.5 + 10);
    clphys_poisson_bathymetry_destroy(&b);
    s = (bathy_spec){.t = NC_DOUBLE, .units = "m", .has_fill = 1, .nan_fill = 1, .coord_x = 1};
    v[5] = NAN;
    write_bathy(f, "depth", nx, ny, v, &s);
    assert_int_equal(clphys_poisson_read_bathymetry(f, "depth", &b), 0);
    assert_int_equal(b.missing, 1);
    clphys_poisson_bathymetry_destroy(&b);
    /* no fill attribute: the type's default fill is missing, a NaN is an error */
    s.has_fill = 0;
    v[5] = NC_FILL_DOUBLE;
    write_bathy(f, "depth", nx, ny, v, &s);
    assert_int_equal(clphys_poisson_read_bathymetry(f, "depth", &b), 0);
    assert_int_equal(b.missing, 1);
    clphys_poisson_bathymetry_destroy(&b);
    v[5] = 1, v[2 * nx + 4] = NAN;
    write_bathy(f, "depth", nx, ny, v, &s);
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_INPUT, "bathy.nc: variable 'depth' at (y 2, x 4) is nan", NULL);
    assert_null(b.depth);
    v[2 * nx + 4] = INFINITY;
    write_bathy(f, "depth", nx, ny, v, &s);
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_INPUT, "(y 2, x 4) is inf", NULL);
    v[2 * nx + 4] = 3;
    /* structural errors */
    write_bathy(f, "depth", nx, ny, v, &s);
    expect_error(clphys_poisson_read_bathymetry(f, "elevation", &b), CLPHYS_ERR_FORMAT, "bathy.nc", "no variable 'elevation'");
    expect_error(clphys_poisson_read_bathymetry(path("absent.nc"), "depth", &b), CLPHYS_ERR_IO, "absent.nc", NULL);
    s.coord_x = 0;
    write_bathy(f, "depth", nx, ny, v, &s);
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_FORMAT, "bathy.nc",
                 "dimension 'x' has no coordinate variable");
    s.coord_x = 1, s.decreasing_y = 1;
    write_bathy(f, "depth", nx, ny, v, &s);
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_FORMAT, "coordinate 'y'",
                 "strictly increasing at index 1");
    /* a 3-D variable and a text variable */
    int nc, d[3], vv;
    NC_OK(nc_create(f, NC_CLOBBER | NC_NETCDF4, &nc));
    NC_OK(nc_def_dim(nc, "z", 2, &d[0]));
    NC_OK(nc_def_dim(nc, "y", 3, &d[1]));
    NC_OK(nc_def_dim(nc, "x", 4, &d[2]));
    NC_OK(nc_def_var(nc, "depth", NC_DOUBLE, 3, d, &vv));
    NC_OK(nc_def_var(nc, "name", NC_CHAR, 2, d + 1, &vv));
    NC_OK(nc_close(nc));
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_FORMAT, "variable 'depth' has 3 dimensions",
                 "(y, x)");
    expect_error(clphys_poisson_read_bathymetry(f, "name", &b), CLPHYS_ERR_FORMAT, "variable 'name' is not numeric",
                 NULL);
}

static void write_field(const char *file, int nz, int ny, int nx, const double *v, int fill)
{
    int nc, d[3], vv;
    NC_OK(nc_create(file, NC_CLOBBER | NC_NETCDF4, &nc));
    NC_OK(nc_def_dim(nc, "z", (size_t)nz, &d[0]));
    NC_OK(nc_def_dim(nc, "y", (size_t)ny, &d[1]));
    NC_OK(nc_def_dim(nc, "x", (size_t)nx, &d[2]));
    NC_OK(nc_def_var(nc, "f", NC_DOUBLE, 3, d, &vv));
    if (fill) {
        const double fv = -1e30;
        NC_OK(nc_put_att_double(nc, vv, "_FillValue", NC_DOUBLE, 1, &fv));
    }
    NC_OK(nc_put_var_double(nc, vv, v));
    NC_OK(nc_close(nc));
}

static void test_field(void **state)
{
    (void)state;
    const int nx = 4, ny = 3, nz = 2, n = nx * ny * nz;
    double v[24], f[24];
    unsigned char mask[24];
    for (int c = 0; c < n; c++) v[c] = 0.25 * c, mask[c] = c % 5 != 0;
    v[5] = -1e30; /* missing, on land */
    v[10] = NAN;  /* on land too: ignored */
    const char *file = path("field.nc");
    write_field(file, nz, ny, nx, v, 1);
    tu_poison_f64(f, 24);
    assert_int_equal(clphys_poisson_read_field(file, "f", nx, ny, nz, mask, f), 0);
    for (int c = 0; c < n; c++) assert_true(f[c] == (mask[c] ? v[c] : 0));
    expect_error(clphys_poisson_read_field(file, "f", nx, ny + 1, nz, mask, f), CLPHYS_ERR_FORMAT,
                 "variable 'f' is 2 x 3 x 4 (z, y, x); the grid is 2 x 4 x 4", NULL);
    expect_error(clphys_poisson_read_field(file, "g", nx, ny, nz, mask, f), CLPHYS_ERR_FORMAT, "no variable 'g'", NULL);
    mask[5] = 1;
    expect_error(clphys_poisson_read_field(file, "f", nx, ny, nz, mask, f), CLPHYS_ERR_INPUT,
                 "at wet cell (z 0, y 1, x 1) is missing", NULL);
    mask[5] = 0, mask[10] = 1;
    expect_error(clphys_poisson_read_field(file, "f", nx, ny, nz, mask, f), CLPHYS_ERR_INPUT,
                 "at wet cell (z 0, y 2, x 2) is not finite", NULL);
}

static int count_leftovers(const char *stem)
{
    int k = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, stem) && strstr(e->d_name, ".tmp.")) k++;
    if (d) closedir(d);
    return k;
}

static void test_write(void **state)
{
    (void)state;
    const int nx = 3, ny = 2, nz = 2, n = 12;
    const double xc[3] = {1, 2, 3}, yc[2] = {10, 20}, zc[2] = {5, 15};
    double p[12];
    unsigned char mask[12];
    for (int c = 0; c < n; c++) p[c] = c - 5.5, mask[c] = c != 4;
    const char *file = path("out.nc");
    assert_int_equal(clphys_poisson_write_netcdf(file, nx, ny, nz, xc, yc, zc, 1, p, mask, "Pa", "test"), 0);
    int nc, vp, vm, vx, nd, dims[3];
    NC_OK(nc_open(file, NC_NOWRITE, &nc));
    NC_OK(nc_inq_varid(nc, "p", &vp));
    NC_OK(nc_inq_varndims(nc, vp, &nd));
    assert_int_equal(nd, 3);
    NC_OK(nc_inq_vardimid(nc, vp, dims));
    const char *want[3] = {"z", "y", "x"};
    const size_t wlen[3] = {2, 2, 3};
    for (int d = 0; d < 3; d++) {
        char name[NC_MAX_NAME + 1];
        size_t len;
        NC_OK(nc_inq_dim(nc, dims[d], name, &len));
        assert_string_equal(name, want[d]);
        assert_int_equal(len, wlen[d]);
    }
    double back[12], fill, xs[3];
    signed char m[12];
    char units[32] = "";
    NC_OK(nc_get_var_double(nc, vp, back));
    NC_OK(nc_get_att_double(nc, vp, "_FillValue", &fill));
    NC_OK(nc_get_att_text(nc, vp, "units", units));
    NC_OK(nc_inq_varid(nc, "mask", &vm));
    NC_OK(nc_get_var_schar(nc, vm, m));
    NC_OK(nc_inq_varid(nc, "x", &vx));
    NC_OK(nc_get_var_double(nc, vx, xs));
    char conv[32] = "", xu[32] = "";
    NC_OK(nc_get_att_text(nc, NC_GLOBAL, "Conventions", conv));
    NC_OK(nc_get_att_text(nc, vx, "units", xu));
    NC_OK(nc_close(nc));
    assert_string_equal(units, "Pa");
    assert_string_equal(conv, "CF-1.8");
    assert_string_equal(xu, "degrees_east");
    for (int c = 0; c < n; c++) {
        assert_true(back[c] == (c == 4 ? fill : p[c]));
        assert_int_equal(m[c], c != 4);
    }
    assert_true(xs[2] == 3);
    assert_int_equal(count_leftovers("out.nc"), 0);
    /* an unwritable folder, and a rename onto a folder: errors, nothing left */
    expect_error(clphys_poisson_write_netcdf("/nonexistent-dir/p.nc", nx, ny, nz, xc, yc, zc, 0, p, mask, NULL, NULL),
                 CLPHYS_ERR_IO, "/nonexistent-dir/p.nc", "cannot create");
    const char *sub = path("adir");
    assert_int_equal(mkdir(sub, 0755), 0);
    expect_error(clphys_poisson_write_netcdf(sub, nx, ny, nz, xc, yc, zc, 0, p, mask, NULL, NULL), CLPHYS_ERR_IO, "adir",
                 "cannot rename");
    assert_int_equal(count_leftovers("adir"), 0);
    rmdir(sub);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/clphys_poisson_io_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    const char *names[] = {"bathy.nc", "field.nc", "out.nc"};
    for (int i = 0; i < 3; i++) remove(path(names[i]));
    rmdir(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bathymetry),
        cmocka_unit_test(test_field),
        cmocka_unit_test(test_write),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
