/* test_poisson_cli.c — `clphys poisson` end to end: the built command (the
 * clphys next to the tests folder) on the test device, with files written
 * here through libnetcdf:
 *  - a box with the manufactured right-hand side and --monitor: exit 0,
 *    per-iteration lines, the discretization error, the last line
 *    "iterations N residual R time T s" with R <= tol, and the output
 *    readable with p(z, y, x) and mask;
 *  - a basin with --line staged: the line variant printed, converged;
 *  - a bathymetry file (metres, missing values) and a right-hand side file;
 *  - every bad input the issue lists, each with exit status 1 or 2, a
 *    message naming the file, variable, option or cell, and no output file
 *    (nor temporary file) left behind: no bathymetry file, no variable,
 *    wrong dimensions, a NaN depth, a right-hand side of the wrong size or
 *    missing in a wet cell, a grid too small for a coarse level, a
 *    bathymetry without sea, an unwritable output path, an output naming
 *    an input, and malformed options (--line among them). */
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
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char dir[200], exe[1100];

#define NC_OK(call) assert_int_equal((call), NC_NOERR)

static const char *path(const char *name) { return tu_join(dir, name); }

static char out_text[65536], err_text[65536];

static void slurp(const char *file, char *buf, size_t n)
{
    FILE *f = fopen(file, "r");
    size_t got = f ? fread(buf, 1, n - 1, f) : 0;
    buf[got] = 0;
    if (f) fclose(f);
}

/* run `clphys poisson ARGS`; its exit status, stdout and stderr */
static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' poisson %s > '%s/stdout' 2> '%s/stderr'", exe, args, dir, dir);
    const int rc = system(cmd);
    slurp(path("stdout"), out_text, sizeof out_text);
    slurp(path("stderr"), err_text, sizeof err_text);
    print_message("# clphys poisson %s -> %d\n#   %s", args, WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, err_text);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int exists(const char *file)
{
    struct stat s;
    return stat(file, &s) == 0;
}

static int leftovers(void)
{
    int k = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp.") || !strcmp(e->d_name, "out.nc")) k++;
    if (d) closedir(d);
    return k;
}

/* a bad run: status, a message containing `needle`, no output left */
static void bad(const char *args, int status, const char *needle)
{
    assert_int_equal(run(args), status);
    assert_non_null(strstr(err_text, needle));
    assert_int_equal(leftovers(), 0);
}

static const char *last_line(void)
{
    size_t n = strlen(out_text);
    while (n > 0 && out_text[n - 1] == '\n') out_text[--n] = 0;
    const char *l = strrchr(out_text, '\n');
    return l ? l + 1 : out_text;
}

/* depths of a basin with a land border (nan_at >= 0: a NaN there; three_d:
 * a variable (z, y, x) instead; land: every depth <= 0) */
static void write_bathy(const char *file, int nx, int ny, int nan_at, int three_d, int land)
{
    int nc, dz, dy, dx, vy, vx, vv;
    NC_OK(nc_create(file, NC_CLOBBER | NC_NETCDF4, &nc));
    NC_OK(nc_def_dim(nc, "z", 2, &dz));
    NC_OK(nc_def_dim(nc, "y", (size_t)ny, &dy));
    NC_OK(nc_def_dim(nc, "x", (size_t)nx, &dx));
    NC_OK(nc_def_var(nc, "y", NC_DOUBLE, 1, &dy, &vy));
    NC_OK(nc_def_var(nc, "x", NC_DOUBLE, 1, &dx, &vx));
    const int d[3] = {dz, dy, dx};
    NC_OK(nc_def_var(nc, "depth", NC_DOUBLE, three_d ? 3 : 2, three_d ? d : d + 1, &vv));
    const double fill = -9999;
    NC_OK(nc_put_att_double(nc, vv, "_FillValue", NC_DOUBLE, 1, &fill));
    NC_OK(nc_put_att_text(nc, vy, "units", 1, "m"));
    NC_OK(nc_put_att_text(nc, vx, "units", 1, "m"));
    NC_OK(nc_enddef(nc));
    double *v = malloc(sizeof(double) * 2 * nx * ny), c[64];
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            const double edge = fmin(fmin(i, nx - 1 - i), fmin(j, ny - 1 - j));
            v[j * nx + i] = v[nx * ny + j * nx + i] = edge < 1 || land ? -5 : 200 + 40 * edge;
        }
    v[2 * nx + 3] = fill; /* a missing value: land */
    if (nan_at >= 0) v[nan_at] = NAN;
    for (int i = 0; i < 64; i++) c[i] = 5000.0 * i;
    NC_OK(nc_put_var_double(nc, vy, c));
    NC_OK(nc_put_var_double(nc, vx, c));
    NC_OK(nc_put_var_double(nc, vv, v));
    NC_OK(nc_close(nc));
    free(v);
}

static void write_rhs(const char *file, int nx, int ny, int nz, int missing_at)
{
    int nc, d[3], vv;
    NC_OK(nc_create(file, NC_CLOBBER | NC_NETCDF4, &nc));
    NC_OK(nc_def_dim(nc, "z", (size_t)nz, &d[0]));
    NC_OK(nc_def_dim(nc, "y", (size_t)ny, &d[1]));
    NC_OK(nc_def_dim(nc, "x", (size_t)nx, &d[2]));
    NC_OK(nc_def_var(nc, "f", NC_FLOAT, 3, d, &vv));
    NC_OK(nc_enddef(nc));
    const size_t n = (size_t)nx * ny * nz;
    float *v = malloc(sizeof(float) * n);
    for (size_t c = 0; c < n; c++) v[c] = (float)sin(0.37 * (double)c);
    if (missing_at >= 0) v[missing_at] = NC_FILL_FLOAT;
    NC_OK(nc_put_var_float(nc, vv, v));
    NC_OK(nc_close(nc));
    free(v);
}

static void test_box_manufactured(void **state)
{
    (void)state;
    char args[512];
    snprintf(args, sizeof args, "--box 16x12x8 --extent 80000x60000x400 --stretch 1.1 --monitor --tol 1e-9 --output %s",
             path("out.nc"));
    assert_int_equal(run(args), 0);
    assert_non_null(strstr(out_text, "iteration 1 residual "));
    assert_non_null(strstr(out_text, "discretization error (manufactured): rms "));
    assert_non_null(strstr(out_text, "pure Neumann: 1 singular region(s)"));
    int it;
    double res, t;
    assert_int_equal(sscanf(last_line(), "iterations %d residual %lf time %lf s", &it, &res, &t), 3);
    assert_true(it > 0 && res <= 1e-9 && t > 0);
    int nc, v, dims[3];
    size_t len[3];
    NC_OK(nc_open(path("out.nc"), NC_NOWRITE, &nc));
    NC_OK(nc_inq_varid(nc, "p", &v));
    NC_OK(nc_inq_vardimid(nc, v, dims));
    for (int d = 0; d < 3; d++) NC_OK(nc_inq_dimlen(nc, dims[d], &len[d]));
    assert_true(len[0] == 8 && len[1] == 12 && len[2] == 16);
    NC_OK(nc_inq_varid(nc, "mask", &v));
    NC_OK(nc_close(nc));
    remove(path("out.nc"));
}

/* --line staged runs the staged kernels (the test device may be a CPU) */
static void test_line_staged(void **state)
{
    (void)state;
    assert_int_equal(run("--basin 24x16 --seed 5 --levels 9 --tol 1e-9 --line staged"), 0);
    assert_non_null(strstr(out_text, "; line staged; "));
    int it;
    double res, t;
    assert_int_equal(sscanf(last_line(), "iterations %d residual %lf time %lf s", &it, &res, &t), 3);
    assert_true(it > 0 && res <= 1e-9);
}

static void test_files(void **state)
{
    (void)state;
    const int nx = 12, ny = 10, nz = 8;
    write_bathy(path("bathy.nc"), nx, ny, -1, 0, 0);
    write_rhs(path("rhs.nc"), nx, ny, nz, -1);
    char args[1024];
    snprintf(
        args, sizeof args,
        "--bathymetry %s --depth-var depth --levels %d --rhs-file %s --rhs-var f --helmholtz 1e-8 --precision fp64 "
        "--output %s",
        path("bathy.nc"), nz, path("rhs.nc"), path("out.nc"));
    assert_int_equal(run(args), 0);
    assert_non_null(strstr(out_text, "1 missing depths made land"));
    assert_true(exists(path("out.nc")));
    remove(path("out.nc"));
    /* bad inputs, each named, nothing written */
    snprintf(args, sizeof args, "--bathymetry %s --depth-var depth --output %s", path("none.nc"), path("out.nc"));
    bad(args, 1, "none.nc: cannot open");
    snprintf(args, sizeof args, "--bathymetry %s --depth-var elevation --output %s", path("bathy.nc"), path("out.nc"));
    bad(args, 1, "no variable 'elevation'");
    write_bathy(path("bathy3.nc"), nx, ny, -1, 1, 0);
    snprintf(args, sizeof args, "--bathymetry %s --depth-var depth --output %s", path("bathy3.nc"), path("out.nc"));
    bad(args, 1, "variable 'depth' has 3 dimensions");
    write_bathy(path("bathyn.nc"), nx, ny, 4 * nx + 5, 0, 0);
    snprintf(args, sizeof args, "--bathymetry %s --depth-var depth --output %s", path("bathyn.nc"), path("out.nc"));
    bad(args, 1, "bathyn.nc: variable 'depth' at (y 4, x 5) is nan");
    write_rhs(path("rhs_small.nc"), nx, ny, nz - 1, -1);
    snprintf(args, sizeof args, "--bathymetry %s --depth-var depth --levels %d --rhs-file %s --rhs-var f --output %s",
             path("bathy.nc"), nz, path("rhs_small.nc"), path("out.nc"));
    bad(args, 1, "rhs_small.nc: variable 'f' is 7 x 10 x 12 (z, y, x); the grid is 8 x 10 x 12");
    write_rhs(path("rhs_miss.nc"), nx, ny, nz, 3 * nx + 4);
    snprintf(args, sizeof args, "--bathymetry %s --depth-var depth --levels %d --rhs-file %s --rhs-var f --output %s",
             path("bathy.nc"), nz, path("rhs_miss.nc"), path("out.nc"));
    bad(args, 1, "variable 'f' at wet cell (z 0, y 3, x 4) is missing");
    snprintf(args, sizeof args, "--bathymetry %s --depth-var depth --levels %d --rhs-file %s --rhs-var g --output %s",
             path("bathy.nc"), nz, path("rhs.nc"), path("out.nc"));
    bad(args, 1, "rhs.nc: no variable 'g'");
    write_bathy(path("land.nc"), nx, ny, -1, 0, 1);
    snprintf(args, sizeof args, "--bathymetry %s --depth-var depth --output %s", path("land.nc"), path("out.nc"));
    bad(args, 1, "land.nc: variable 'depth' has no depth > 0 (no sea)");
    snprintf(args, sizeof args, "--bathymetry %s --depth-var depth --output %s", path("bathy.nc"), path("bathy.nc"));
    assert_int_equal(run(args), 2);
    assert_non_null(strstr(err_text, "an output never replaces an input"));
    assert_true(exists(path("bathy.nc")));
    /* an existing output is replaced only with --force */
    snprintf(args, sizeof args, "--box 8x8x4 --output %s", path("out.nc"));
    assert_int_equal(run(args), 0);
    assert_int_equal(run(args), 2);
    assert_non_null(strstr(err_text, "exists (--force replaces it)"));
    snprintf(args, sizeof args, "--box 8x8x4 --output %s --force", path("out.nc"));
    assert_int_equal(run(args), 0);
    remove(path("out.nc"));
}

static void test_bad_options(void **state)
{
    (void)state;
    char args[512];
    snprintf(args, sizeof args, "--box 8x8x4 --output /nonexistent-dir/out.nc");
    bad(args, 2, "cannot create a file in '/nonexistent-dir'");
    snprintf(args, sizeof args, "--box 1x8x4 --output %s", path("out.nc"));
    bad(args, 1, "too small for a coarse level");
    snprintf(args, sizeof args, "--box 8x8x4 --extent 1000x1000x-3 --output %s", path("out.nc"));
    bad(args, 2, "--extent");
    bad("--box 8x8x4 --basin 8x8 --seed 1", 2, "exactly one of --bathymetry, --box and --basin");
    bad("--box 8x8x4 --tol nan", 2, "--tol");
    bad("--box 8x8x4 --precision fp16", 2, "--precision");
    bad("--box 8x8x4 --line diagonal", 2, "--line");
    bad("--box 8x8x4 --frobnicate", 2, "unknown option '--frobnicate'");
    bad("--basin 8x8", 2, "--basin and --seed go together");
    bad("--box 8x8x4 --rhs file", 2, "--rhs takes 'manufactured'");
    bad("--box 8x8x4 --lonlat 10:5x0:10", 2, "--lonlat");
}

static int setup(void **state)
{
    (void)state;
    char self[1024];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return -1;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash) return -1;
    *slash = 0;
    snprintf(exe, sizeof exe, "%s/../clphys", self); /* build/tests/.. = build */
    return exists(exe) ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_box_manufactured),
        cmocka_unit_test(test_line_staged),
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_bad_options),
    };
    return tu_run_group(tests, .tempdir = "poisson_cli", .dir = dir, .dir_size = sizeof dir, .setup = setup);
}
