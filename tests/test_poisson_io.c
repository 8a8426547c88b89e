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
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char dir[200];

#define NC_OK(call) assert_int_equal((call), NC_NOERR)

static const char *path(const char *name) { return tu_join(dir, name); }

/* a bathymetry file: variable `var` (type t) over (y, x) with coordinates
 * in `units`; values v (ny * nx doubles); fill (if has_fill) */
typedef struct {
    nc_type t;
    const char *units;
    int has_fill, nan_fill, missing_value, scale;
    double fill;
    int coord_x;      /* 0: no coordinate variable for x        */
    int decreasing_y; /* y coordinates in the wrong order        */
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
    /* degrees: north for y (degrees_east on y would make it a longitude) */
    const char *yu = strcmp(s->units, "degrees_east") ? s->units : "degrees_north";
    NC_OK(nc_put_att_text(nc, vy, "units", strlen(yu), yu));
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
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_INPUT,
                 "bathy.nc: variable 'depth' at (y 2, x 4) is nan", NULL);
    assert_null(b.depth);
    v[2 * nx + 4] = INFINITY;
    write_bathy(f, "depth", nx, ny, v, &s);
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_INPUT, "(y 2, x 4) is inf", NULL);
    v[2 * nx + 4] = 3;
    /* structural errors */
    write_bathy(f, "depth", nx, ny, v, &s);
    expect_error(clphys_poisson_read_bathymetry(f, "elevation", &b), CLPHYS_ERR_FORMAT, "bathy.nc",
                 "no variable 'elevation'");
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
    expect_error(clphys_poisson_read_field(file, "g", nx, ny, nz, mask, f), CLPHYS_ERR_FORMAT, "no variable 'g'",
                 "(the file's variables: f (3D))");
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
    expect_error(clphys_poisson_write_netcdf(sub, nx, ny, nz, xc, yc, zc, 0, p, mask, NULL, NULL), CLPHYS_ERR_IO,
                 "adir", "cannot rename");
    assert_int_equal(count_leftovers("adir"), 0);
    rmdir(sub);
}

/* ---- hostile files (issue 32) ----------------------------------------------- */

static long file_size(const char *f)
{
    struct stat st;
    return stat(f, &st) == 0 ? (long)st.st_size : -1;
}

static void write_bytes(const char *f, const unsigned char *b, size_t n)
{
    FILE *o = fopen(f, "wb");
    assert_non_null(o);
    assert_int_equal(fwrite(b, 1, n, o), n);
    assert_int_equal(fclose(o), 0);
}

/* the 8x8 NETCDF3_CLASSIC bathymetry of 604 bytes: dimensions y,
 * x; coordinates y, x (double, units "m"); depth (y, x) float, no
 * attributes: header 220 bytes, the variable count at byte 0x34, the
 * attribute count of x at 0x88, depth's data from byte 348 */
static void write_classic_604(const char *f, unsigned char *bytes)
{
    int nc, dy, dx, vy, vx, vv;
    NC_OK(nc_create(f, NC_CLOBBER, &nc));
    NC_OK(nc_def_dim(nc, "y", 8, &dy));
    NC_OK(nc_def_dim(nc, "x", 8, &dx));
    NC_OK(nc_def_var(nc, "y", NC_DOUBLE, 1, &dy, &vy));
    NC_OK(nc_def_var(nc, "x", NC_DOUBLE, 1, &dx, &vx));
    const int d2[2] = {dy, dx};
    NC_OK(nc_def_var(nc, "depth", NC_FLOAT, 2, d2, &vv));
    NC_OK(nc_put_att_text(nc, vy, "units", 1, "m"));
    NC_OK(nc_put_att_text(nc, vx, "units", 1, "m"));
    NC_OK(nc_enddef(nc));
    double c[8], v[64];
    for (int i = 0; i < 8; i++) c[i] = 5000.0 * i;
    for (int k = 0; k < 64; k++) v[k] = 100 + k;
    NC_OK(nc_put_var_double(nc, vy, c));
    NC_OK(nc_put_var_double(nc, vx, c));
    NC_OK(nc_put_var_double(nc, vv, v));
    NC_OK(nc_close(nc));
    assert_int_equal(file_size(f), 604);
    FILE *in = fopen(f, "rb");
    assert_non_null(in);
    assert_int_equal(fread(bytes, 1, 604, in), 604);
    fclose(in);
    assert_int_equal(bytes[0x37], 3); /* the variable count, big-endian */
    assert_int_equal(bytes[0x8b], 1); /* x's attribute count */
}

/* C1, M2, W1: a corrupt or cut classic header never reaches libnetcdf
 * (which crashes on C1 and takes 6.6 GB on M2) and a file cut short is
 * refused rather than read as fill values */
static void test_classic_hostile(void **state)
{
    (void)state;
    unsigned char good[604], bad[604];
    const char *f = path("classic.nc");
    write_classic_604(f, good);
    clphys_poisson_bathymetry b;
    assert_int_equal(clphys_poisson_read_bathymetry(f, "depth", &b), 0);
    assert_true(b.nx == 8 && b.ny == 8 && b.depth[63] == 163 && b.missing == 0);
    clphys_poisson_bathymetry_destroy(&b);
    memcpy(bad, good, 604);
    bad[0x34] = 0xbc; /* C1: 0xbc000003 variables */
    write_bytes(f, bad, 604);
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_FORMAT, "classic.nc",
                 "more variables than the file can hold (3154116611)");
    memcpy(bad, good, 604);
    bad[0x88] = 0x56; /* M2: 0x56000001 attributes of x */
    write_bytes(f, bad, 604);
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_FORMAT, "classic.nc",
                 "more attributes than the file can hold (1442840577)");
    write_bytes(f, good, 500); /* W1: head -c 500 */
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_FORMAT, "classic.nc: the file is cut short",
                 "the data of variable 'depth' end at byte 604, the file has 500 bytes");
    write_bytes(f, good, 100); /* inside the header */
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_FORMAT, "corrupt NetCDF classic header",
                 NULL);
    write_bytes(f, (const unsigned char *)"hello, world\n", 13);
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_FORMAT, "not a NetCDF file clphys reads",
                 NULL);
    expect_error(clphys_poisson_read_bathymetry("/dev/null", "depth", &b), CLPHYS_ERR_IO,
                 "/dev/null: not a regular file", NULL);
    /* a FIFO without a writer: refused, not waited on */
    const char *fifo = path("fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    expect_error(clphys_poisson_read_bathymetry(fifo, "depth", &b), CLPHYS_ERR_IO, "fifo: not a regular file", NULL);
    remove(fifo);
    /* a NetCDF-4 file cut short: libnetcdf refuses it, said so */
    const double v7[35] = {0};
    bathy_spec s4 = {.t = NC_FLOAT, .units = "m", .coord_x = 1};
    write_bathy(f, "depth", 7, 5, v7, &s4);
    assert_int_equal(truncate(f, file_size(f) / 2), 0);
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_FORMAT, "cannot open",
                 "a NetCDF-4/HDF5 file damaged or cut short");
    /* a right-hand side (z, y, x) of 8 x 8 x 16 doubles, 8304 bytes, cut to 3000 */
    int nc, d[3], vv;
    NC_OK(nc_create(f, NC_CLOBBER, &nc));
    NC_OK(nc_def_dim(nc, "z", 16, &d[0]));
    NC_OK(nc_def_dim(nc, "y", 8, &d[1]));
    NC_OK(nc_def_dim(nc, "x", 8, &d[2]));
    NC_OK(nc_def_var(nc, "f", NC_DOUBLE, 3, d, &vv));
    NC_OK(nc_enddef(nc));
    static double v[1024], back[1024];
    for (int c = 0; c < 1024; c++) v[c] = sin(0.1 * c);
    NC_OK(nc_put_var_double(nc, vv, v));
    NC_OK(nc_close(nc));
    assert_int_equal(file_size(f), 8304);
    assert_int_equal(clphys_poisson_read_field(f, "f", 8, 8, 16, NULL, back), 0);
    assert_true(back[1023] == v[1023]);
    assert_int_equal(truncate(f, 3000), 0);
    expect_error(clphys_poisson_read_field(f, "f", 8, 8, 16, NULL, back), CLPHYS_ERR_FORMAT, "the file is cut short",
                 "variable 'f' end at byte 8304, the file has 3000 bytes");
    /* z unlimited (records, CDF-5): its last record cut */
    NC_OK(nc_create(f, NC_CLOBBER | NC_64BIT_DATA, &nc));
    NC_OK(nc_def_dim(nc, "z", NC_UNLIMITED, &d[0]));
    NC_OK(nc_def_dim(nc, "y", 8, &d[1]));
    NC_OK(nc_def_dim(nc, "x", 8, &d[2]));
    NC_OK(nc_def_var(nc, "f", NC_DOUBLE, 3, d, &vv));
    NC_OK(nc_enddef(nc));
    const size_t start[3] = {0, 0, 0}, count[3] = {16, 8, 8};
    NC_OK(nc_put_vara_double(nc, vv, start, count, v));
    NC_OK(nc_close(nc));
    assert_int_equal(clphys_poisson_read_field(f, "f", 8, 8, 16, NULL, back), 0);
    assert_true(back[1023] == v[1023]);
    assert_int_equal(truncate(f, file_size(f) - 8), 0);
    expect_error(clphys_poisson_read_field(f, "f", 8, 8, 16, NULL, back), CLPHYS_ERR_FORMAT, "the file is cut short",
                 "16 records of record variable number 0 end at byte");
    remove(f);
}

/* M1: a NetCDF-4 file of a few KB declaring 20000 x 20000 depths (zlib,
 * chunked, never written) is refused before 3.2 GB are allocated */
static void test_netcdf4_never_written(void **state)
{
    (void)state;
    const char *f = path("huge.nc");
    int nc, dy, dx, vy, vx, vv;
    NC_OK(nc_create(f, NC_CLOBBER | NC_NETCDF4, &nc));
    NC_OK(nc_def_dim(nc, "y", 20000, &dy));
    NC_OK(nc_def_dim(nc, "x", 20000, &dx));
    NC_OK(nc_def_var(nc, "y", NC_INT, 1, &dy, &vy));
    NC_OK(nc_def_var(nc, "x", NC_INT, 1, &dx, &vx));
    NC_OK(nc_def_var_deflate(nc, vy, 1, 1, 9));
    NC_OK(nc_def_var_deflate(nc, vx, 1, 1, 9));
    const int d2[2] = {dy, dx};
    NC_OK(nc_def_var(nc, "depth", NC_FLOAT, 2, d2, &vv));
    const size_t chunk[2] = {1000, 1000};
    NC_OK(nc_def_var_chunking(nc, vv, NC_CHUNKED, chunk));
    NC_OK(nc_def_var_deflate(nc, vv, 0, 1, 1));
    NC_OK(nc_put_att_text(nc, vy, "units", 1, "m"));
    NC_OK(nc_put_att_text(nc, vx, "units", 1, "m"));
    NC_OK(nc_enddef(nc));
    static int c[20000];
    for (int i = 0; i < 20000; i++) c[i] = 100 * i;
    NC_OK(nc_put_var_int(nc, vy, c));
    NC_OK(nc_put_var_int(nc, vx, c));
    NC_OK(nc_close(nc));
    print_message("# %ld bytes\n", file_size(f));
    assert_true(file_size(f) < 200000);
    clphys_poisson_bathymetry b;
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_FORMAT, "huge.nc",
                 "variable 'depth' declares 400000000 values in a file of");
    assert_null(b.depth);
    remove(f);
}

/* a bathymetry (dims[0], dims[1]) of coordinates c0, c1 (each with units
 * u0, u1, NULL: none; an axis attribute a0, a1 or NULL) */
static void write_axes(const char *f, const char *n0, const char *u0, const char *a0, int l0, const char *n1,
                       const char *u1, const char *a1, int l1, const double *v)
{
    int nc, d[2], vc[2], vv;
    NC_OK(nc_create(f, NC_CLOBBER | NC_NETCDF4, &nc));
    NC_OK(nc_def_dim(nc, n0, (size_t)l0, &d[0]));
    NC_OK(nc_def_dim(nc, n1, (size_t)l1, &d[1]));
    NC_OK(nc_def_var(nc, n0, NC_DOUBLE, 1, &d[0], &vc[0]));
    NC_OK(nc_def_var(nc, n1, NC_DOUBLE, 1, &d[1], &vc[1]));
    NC_OK(nc_def_var(nc, "depth", NC_DOUBLE, 2, d, &vv));
    const char *u[2] = {u0, u1}, *a[2] = {a0, a1};
    for (int k = 0; k < 2; k++) {
        if (u[k]) NC_OK(nc_put_att_text(nc, vc[k], "units", strlen(u[k]), u[k]));
        if (a[k]) NC_OK(nc_put_att_text(nc, vc[k], "axis", strlen(a[k]), a[k]));
    }
    NC_OK(nc_enddef(nc));
    double c0[16], c1[16];
    for (int i = 0; i < l0; i++) c0[i] = 10.0 + i;
    for (int i = 0; i < l1; i++) c1[i] = -40.0 + 2 * i;
    NC_OK(nc_put_var_double(nc, vc[0], c0));
    NC_OK(nc_put_var_double(nc, vc[1], c1));
    NC_OK(nc_put_var_double(nc, vv, v));
    NC_OK(nc_close(nc));
}

/* W2, W3, W5: which dimension is x, the coordinates' units, depth bounds */
static void test_axes_units_bounds(void **state)
{
    (void)state;
    const char *f = path("axes.nc");
    const int nx = 7, ny = 5;
    double yx[35], xy[35];
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) yx[j * nx + i] = xy[i * ny + j] = 100.0 * i + j;
    clphys_poisson_bathymetry b;
    /* depth(lat, lon) and depth(lon, lat): the same grid, x the longitudes */
    const char *units[2][2] = {{"degrees_north", "degrees_east"}, {"degree_E", "degree_N"}};
    for (int order = 0; order < 2; order++) {
        if (!order)
            write_axes(f, "lat", units[0][0], NULL, ny, "lon", units[0][1], NULL, nx, yx);
        else
            write_axes(f, "lon", units[1][0], NULL, nx, "lat", units[1][1], NULL, ny, xy);
        assert_int_equal(clphys_poisson_read_bathymetry(f, "depth", &b), 0);
        assert_int_equal(b.nx, nx);
        assert_int_equal(b.ny, ny);
        assert_int_equal(b.lonlat, 1);
        for (int c = 0; c < 35; c++) assert_true(b.depth[c] == yx[c]);
        assert_true(b.x[1] == (order ? 11.0 : -38.0) && b.y[1] == (order ? -38.0 : 11.0));
        clphys_poisson_bathymetry_destroy(&b);
    }
    /* the axis attribute decides over the names; names alone: (x, y) */
    write_axes(f, "a", "m", "X", nx, "b", "m", "Y", ny, xy);
    assert_int_equal(clphys_poisson_read_bathymetry(f, "depth", &b), 0);
    assert_true(b.nx == nx && b.ny == ny && b.depth[8] == yx[8] && b.lonlat == 0);
    clphys_poisson_bathymetry_destroy(&b);
    write_axes(f, "x", "m", NULL, nx, "y", "m", NULL, ny, xy);
    assert_int_equal(clphys_poisson_read_bathymetry(f, "depth", &b), 0);
    assert_true(b.nx == nx && b.ny == ny && b.depth[8] == yx[8]);
    clphys_poisson_bathymetry_destroy(&b);
    write_axes(f, "x", "m", "Y", nx, "y", "m", NULL, ny, xy);
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_FORMAT, "both dimensions of 'depth'", NULL);
    write_axes(f, "lat", "degrees_east", "Y", ny, "lon", "degrees_east", NULL, nx, yx);
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_FORMAT,
                 "coordinate 'lat': its units says x", NULL);
    /* units: km converted, the rest named */
    write_axes(f, "y", "km", NULL, ny, "x", "kilometres", NULL, nx, yx);
    assert_int_equal(clphys_poisson_read_bathymetry(f, "depth", &b), 0);
    assert_true(b.y[1] == 11000.0 && b.x[1] == -38000.0 && b.lonlat == 0);
    clphys_poisson_bathymetry_destroy(&b);
    const char *refused[] = {"radians", "furlongs", "m s-1", NULL};
    for (int k = 0; k < 4; k++) {
        write_axes(f, "y", k == 3 ? NULL : refused[k], NULL, ny, "x", "m", NULL, nx, yx);
        char want[64];
        snprintf(want, sizeof want, "coordinate 'y' has units '%s'", k == 3 ? "(none)" : refused[k]);
        expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_FORMAT, want,
                     "clphys reads metres (m), kilometres (km) or degrees");
    }
    write_axes(f, "y", "m", NULL, ny, "x", "degrees_east", NULL, nx, yx);
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_FORMAT,
                 "one coordinate of 'depth' is in degrees", NULL);
    /* spacings of 1e-300 m; depths within +-12000 m */
    write_axes(f, "y", "m", NULL, ny, "x", "1e-300 m", NULL, nx, yx);
    expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_FORMAT, "units '1e-300 m'", NULL);
    double deep[35];
    memcpy(deep, yx, sizeof deep);
    deep[9] = 11999, deep[10] = -11999;
    write_axes(f, "y", "m", NULL, ny, "x", "m", NULL, nx, deep);
    assert_int_equal(clphys_poisson_read_bathymetry(f, "depth", &b), 0);
    clphys_poisson_bathymetry_destroy(&b);
    const double absurd[3] = {1e300, 12001, -1e30};
    for (int k = 0; k < 3; k++) {
        deep[9] = absurd[k];
        write_axes(f, "y", "m", NULL, ny, "x", "m", NULL, nx, deep);
        expect_error(clphys_poisson_read_bathymetry(f, "depth", &b), CLPHYS_ERR_INPUT, "variable 'depth' at (y 1, x 2)",
                     "not a depth within +-12000 m");
    }
    remove(f);
}

/* U4: a write that fails for want of space (here a file size limit, which
 * a test can set without mounting anything) says so, not "HDF error", and
 * leaves nothing behind */
static void test_write_no_space(void **state)
{
    (void)state;
    const int nx = 64, ny = 64, nz = 8;
    const size_t n = (size_t)nx * ny * nz;
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        double *p = malloc(n * sizeof(double)), xc[64], zc[8];
        unsigned char *mask = malloc(n);
        for (size_t c = 0; c < n; c++) p[c] = sin((double)c), mask[c] = 1;
        for (int i = 0; i < 64; i++) xc[i] = i;
        for (int k = 0; k < 8; k++) zc[k] = k;
        signal(SIGXFSZ, SIG_IGN);
        const struct rlimit lim = {32768, 32768};
        setrlimit(RLIMIT_FSIZE, &lim);
        const clphys_status st =
            clphys_poisson_write_netcdf(path("full.nc"), nx, ny, nz, xc, xc, zc, 0, p, mask, NULL, NULL);
        const char *msg = clphys_last_error(NULL);
        fprintf(stderr, "# %s\n", msg);
        _exit(st == CLPHYS_ERR_IO && strstr(msg, strerror(EFBIG)) && !strstr(msg, "HDF error") ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(count_leftovers("full.nc"), 0);
    assert_int_equal(file_size(path("full.nc")), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bathymetry),
        cmocka_unit_test(test_field),
        cmocka_unit_test(test_write),
        cmocka_unit_test(test_classic_hostile),
        cmocka_unit_test(test_netcdf4_never_written),
        cmocka_unit_test(test_axes_units_bounds),
        cmocka_unit_test(test_write_no_space),
    };
    return tu_run_group(tests, .tempdir = "poisson_io", .dir = dir, .dir_size = sizeof dir);
}
