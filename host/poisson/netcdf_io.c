/* netcdf_io.c — the Poisson path's NetCDF files through libnetcdf
 * (include/clphys_poisson.h): a bathymetry (y, x) with its coordinate
 * variables, a field (z, y, x), and a solution written to a temporary file
 * that is renamed at the end.  Readers check everything they rely on:
 * dimensions and sizes, coordinates, missing values (_FillValue,
 * missing_value, the type's default fill), CF packing (scale_factor,
 * add_offset), NaN and infinity; errors name the file, the variable and the
 * index. */
#include "poisson_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How a variable marks missing values and packs its data. */
typedef struct {
    double miss[8];
    int nmiss;
    int nan_missing;  /* a fill value is NaN */
    double scale, offset;
} var_coding;

static double default_fill(nc_type t)
{
    switch (t) {
    case NC_BYTE: return NC_FILL_BYTE;
    case NC_UBYTE: return NC_FILL_UBYTE;
    case NC_SHORT: return NC_FILL_SHORT;
    case NC_USHORT: return NC_FILL_USHORT;
    case NC_INT: return NC_FILL_INT;
    case NC_UINT: return NC_FILL_UINT;
    case NC_INT64: return (double)NC_FILL_INT64;
    case NC_UINT64: return (double)NC_FILL_UINT64;
    case NC_FLOAT: return NC_FILL_FLOAT;
    default: return NC_FILL_DOUBLE;
    }
}

/* the numeric attribute `name` (up to max values) of a variable; 0 when absent */
static int att_values(int nc, int v, const char *name, double *out, int max)
{
    nc_type t;
    size_t len;
    if (nc_inq_att(nc, v, name, &t, &len) != NC_NOERR || len == 0 || t == NC_CHAR || t == NC_STRING) return 0;
    double buf[64];
    if (len > 64 || nc_get_att_double(nc, v, name, buf) != NC_NOERR) return 0;
    const int n = (int)len < max ? (int)len : max;
    memcpy(out, buf, sizeof(double) * (size_t)n);
    return n;
}

static clphys_status var_coding_read(const char *file, const char *var, int nc, int v, var_coding *vc)
{
    nc_type t;
    if (nc_inq_vartype(nc, v, &t) != NC_NOERR || t == NC_CHAR || t == NC_STRING || t > NC_STRING)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: variable '%s' is not numeric", file, var);
    memset(vc, 0, sizeof *vc);
    vc->nmiss = att_values(nc, v, "_FillValue", vc->miss, 1);
    if (!vc->nmiss) vc->miss[vc->nmiss++] = default_fill(t);
    vc->nmiss += att_values(nc, v, "missing_value", vc->miss + vc->nmiss, 7);
    for (int i = 0; i < vc->nmiss; i++) vc->nan_missing |= isnan(vc->miss[i]);
    if (!att_values(nc, v, "scale_factor", &vc->scale, 1)) vc->scale = 1;
    if (!att_values(nc, v, "add_offset", &vc->offset, 1)) vc->offset = 0;
    if (!isfinite(vc->scale) || !isfinite(vc->offset))
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: variable '%s' has a scale_factor or add_offset that is not finite",
                        file, var);
    return CLPHYS_SUCCESS;
}

/* 1 when the stored value is missing; else *v becomes the unpacked value */
static int missing(const var_coding *vc, double *v)
{
    if (isnan(*v)) return vc->nan_missing;
    for (int i = 0; i < vc->nmiss; i++)
        if (*v == vc->miss[i]) return 1;
    *v = *v * vc->scale + vc->offset;
    return 0;
}

/* the variable `name` of `file` with `want` dimensions: its id and sizes */
static clphys_status find_var(const char *file, int nc, const char *name, int want, int *v, int dimids[NC_MAX_VAR_DIMS],
                              size_t *len)
{
    int nd;
    if (nc_inq_varid(nc, name, v) != NC_NOERR)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: no variable '%s'", file, name);
    if (nc_inq_varndims(nc, *v, &nd) != NC_NOERR || nc_inq_vardimid(nc, *v, dimids) != NC_NOERR)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: variable '%s' cannot be inquired", file, name);
    if (nd != want)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: variable '%s' has %d dimensions, %s expected", file, name, nd,
                        want == 2 ? "2 (y, x)" : "3 (z, y, x)");
    for (int d = 0; d < nd; d++) {
        char dn[NC_MAX_NAME + 1];
        if (nc_inq_dim(nc, dimids[d], dn, &len[d]) != NC_NOERR)
            return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: variable '%s': dimension %d cannot be inquired", file, name, d);
        if (len[d] == 0 || len[d] > INT_MAX)
            return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: variable '%s': dimension '%s' has %zu values", file, name, dn,
                            len[d]);
    }
    return CLPHYS_SUCCESS;
}

/* the coordinate variable of dimension `dim`: values, and whether its units are degrees */
static clphys_status coordinate(const char *file, int nc, int dim, size_t len, double *out, int *degrees)
{
    char dn[NC_MAX_NAME + 1], units[256] = "";
    int v, nd, did;
    if (nc_inq_dimname(nc, dim, dn) != NC_NOERR) return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: a dimension without a name", file);
    if (nc_inq_varid(nc, dn, &v) != NC_NOERR || nc_inq_varndims(nc, v, &nd) != NC_NOERR || nd != 1 ||
        nc_inq_vardimid(nc, v, &did) != NC_NOERR || did != dim)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: dimension '%s' has no coordinate variable '%s(%s)'", file, dn, dn, dn);
    if (len < 2)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: coordinate '%s' has %zu value (at least 2 needed)", file, dn, len);
    if (nc_get_var_double(nc, v, out) != NC_NOERR)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: coordinate '%s' cannot be read as numbers", file, dn);
    for (size_t i = 0; i < len; i++)
        if (!isfinite(out[i]) || (i > 0 && !(out[i] > out[i - 1])))
            return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: coordinate '%s' is not finite and strictly increasing at index %zu (%g)",
                            file, dn, i, out[i]);
    size_t ul = 0;
    nc_type t;
    if (nc_inq_att(nc, v, "units", &t, &ul) == NC_NOERR && t == NC_CHAR && ul < sizeof units)
        nc_get_att_text(nc, v, "units", units);
    *degrees = !strncmp(units, "degree", 6);
    return CLPHYS_SUCCESS;
}

void clphys_poisson_bathymetry_destroy(clphys_poisson_bathymetry *b)
{
    if (!b) return;
    free(b->depth), free(b->x), free(b->y);
    memset(b, 0, sizeof *b);
}

clphys_status clphys_poisson_read_bathymetry(const char *file, const char *var, clphys_poisson_bathymetry *b)
{
    if (!file || !var || !b) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_read_bathymetry: NULL argument");
    memset(b, 0, sizeof *b);
    int nc, v, dims[NC_MAX_VAR_DIMS], e;
    size_t len[NC_MAX_VAR_DIMS];
    if ((e = nc_open(file, NC_NOWRITE, &nc)) != NC_NOERR)
        return cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot open: %s", file, nc_strerror(e));
    clphys_status st = find_var(file, nc, var, 2, &v, dims, len);
    var_coding vc;
    int dx = 0, dy = 0;
    if (!st) st = var_coding_read(file, var, nc, v, &vc);
    if (!st) {
        b->ny = (int)len[0], b->nx = (int)len[1];
        const size_t n = len[0] * len[1];
        b->depth = malloc(n * sizeof(double)), b->x = malloc(len[1] * sizeof(double)), b->y = malloc(len[0] * sizeof(double));
        if (!b->depth || !b->x || !b->y) st = cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "%s: %zu depths", file, n);
    }
    if (!st) st = coordinate(file, nc, dims[1], len[1], b->x, &dx);
    if (!st) st = coordinate(file, nc, dims[0], len[0], b->y, &dy);
    if (!st && dx != dy)
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: one coordinate of '%s' is in degrees and the other not", file, var);
    b->lonlat = dx;
    if (!st && (e = nc_get_var_double(nc, v, b->depth)) != NC_NOERR)
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: variable '%s' cannot be read: %s", file, var, nc_strerror(e));
    for (size_t c = 0; !st && c < (size_t)b->nx * b->ny; c++) {
        if (missing(&vc, &b->depth[c])) {
            b->depth[c] = 0, b->missing++;
        } else if (!isfinite(b->depth[c])) {
            st = cp_error(NULL, CLPHYS_ERR_INPUT, "%s: variable '%s' at (y %zu, x %zu) is %g (not a missing value)", file,
                          var, c / (size_t)b->nx, c % (size_t)b->nx, b->depth[c]);
        }
    }
    nc_close(nc);
    if (st) clphys_poisson_bathymetry_destroy(b);
    return st;
}

clphys_status clphys_poisson_read_field(const char *file, const char *var, int nx, int ny, int nz,
                                        const unsigned char *mask, double *f)
{
    if (!file || !var || !f || nx < 1 || ny < 1 || nz < 1)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_read_field: NULL argument or empty grid");
    int nc, v, dims[NC_MAX_VAR_DIMS], e;
    size_t len[NC_MAX_VAR_DIMS];
    if ((e = nc_open(file, NC_NOWRITE, &nc)) != NC_NOERR)
        return cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot open: %s", file, nc_strerror(e));
    clphys_status st = find_var(file, nc, var, 3, &v, dims, len);
    var_coding vc;
    if (!st && (len[0] != (size_t)nz || len[1] != (size_t)ny || len[2] != (size_t)nx))
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: variable '%s' is %zu x %zu x %zu (z, y, x); the grid is %d x %d x %d",
                      file, var, len[0], len[1], len[2], nz, ny, nx);
    if (!st) st = var_coding_read(file, var, nc, v, &vc);
    if (!st && (e = nc_get_var_double(nc, v, f)) != NC_NOERR)
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: variable '%s' cannot be read: %s", file, var, nc_strerror(e));
    const size_t n = (size_t)nx * ny * nz, plane = (size_t)nx * ny;
    for (size_t c = 0; !st && c < n; c++) {
        const int wet = !mask || mask[c];
        const int miss = missing(&vc, &f[c]);
        if (wet && (miss || !isfinite(f[c])))
            st = cp_error(NULL, CLPHYS_ERR_INPUT, "%s: variable '%s' at wet cell (z %zu, y %zu, x %zu) is %s", file, var,
                          c / plane, c / (size_t)nx % (size_t)ny, c % (size_t)nx, miss ? "missing" : "not finite");
        if (!wet || miss) f[c] = 0;
    }
    nc_close(nc);
    return st;
}

clphys_status clphys_poisson_write_netcdf(const char *file, int nx, int ny, int nz, const double *xc, const double *yc,
                                          const double *zc, int lonlat, const double *p, const unsigned char *mask,
                                          const char *units, const char *title)
{
    if (!file || !xc || !yc || !zc || !p || !mask || nx < 1 || ny < 1 || nz < 1)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_write_netcdf: NULL argument or empty grid");
    const size_t n = (size_t)nx * ny * nz, tl = strlen(file) + 64;
    char *tmp = malloc(tl);
    double *pv = malloc(n * sizeof(double));
    signed char *mv = malloc(n);
    if (!tmp || !pv || !mv) {
        free(tmp), free(pv), free(mv);
        return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "%s: writing %zu values", file, n);
    }
    if (cp_output_tmp_name(file, tmp, tl)) {
        free(tmp), free(pv), free(mv);
        return cp_error(NULL, CLPHYS_ERR_IO, "%s: the name is too long", file);
    }
    cp_output_pending(tmp, 1); /* removed if a signal ends the run */
    for (size_t c = 0; c < n; c++) pv[c] = mask[c] ? p[c] : NC_FILL_DOUBLE, mv[c] = mask[c] ? 1 : 0;
    int nc = -1, e, dz, dy, dx, vz, vy, vx, vp, vm;
    clphys_status st = CLPHYS_SUCCESS;
    if ((e = nc_create(tmp, NC_CLOBBER | NC_NETCDF4, &nc)) != NC_NOERR) {
        st = cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot create %s: %s", file, tmp, nc_strerror(e));
        nc = -1;
        goto done;
    }
#define NC_TRY(call)                                                                                                 \
    do {                                                                                                         \
        if ((e = (call)) != NC_NOERR) {                                                                          \
            st = cp_error(NULL, CLPHYS_ERR_IO, "%s: writing %s: %s", file, tmp, nc_strerror(e));                  \
            goto done;                                                                                           \
        }                                                                                                        \
    } while (0)
#define TEXT(var, name, text) NC_TRY(nc_put_att_text(nc, var, name, strlen(text), text))
    NC_TRY(nc_def_dim(nc, "z", (size_t)nz, &dz));
    NC_TRY(nc_def_dim(nc, "y", (size_t)ny, &dy));
    NC_TRY(nc_def_dim(nc, "x", (size_t)nx, &dx));
    NC_TRY(nc_def_var(nc, "z", NC_DOUBLE, 1, &dz, &vz));
    NC_TRY(nc_def_var(nc, "y", NC_DOUBLE, 1, &dy, &vy));
    NC_TRY(nc_def_var(nc, "x", NC_DOUBLE, 1, &dx, &vx));
    const int d3[3] = {dz, dy, dx};
    NC_TRY(nc_def_var(nc, "p", NC_DOUBLE, 3, d3, &vp));
    NC_TRY(nc_def_var(nc, "mask", NC_BYTE, 3, d3, &vm));
    TEXT(vz, "standard_name", "depth");
    TEXT(vz, "long_name", "depth of the cell centre");
    TEXT(vz, "units", "m");
    TEXT(vz, "positive", "down");
    TEXT(vz, "axis", "Z");
    if (lonlat) {
        TEXT(vy, "standard_name", "latitude");
        TEXT(vy, "units", "degrees_north");
        TEXT(vx, "standard_name", "longitude");
        TEXT(vx, "units", "degrees_east");
    } else {
        TEXT(vy, "long_name", "y of the cell centre");
        TEXT(vy, "units", "m");
        TEXT(vx, "long_name", "x of the cell centre");
        TEXT(vx, "units", "m");
    }
    TEXT(vy, "axis", "Y");
    TEXT(vx, "axis", "X");
    TEXT(vp, "long_name", "solution of div(grad p) - lambda p = f");
    TEXT(vp, "units", units ? units : "1");
    const double fill = NC_FILL_DOUBLE;
    NC_TRY(nc_put_att_double(nc, vp, "_FillValue", NC_DOUBLE, 1, &fill));
    TEXT(vm, "long_name", "land/sea mask");
    const signed char flags[2] = {0, 1};
    NC_TRY(nc_put_att_schar(nc, vm, "flag_values", NC_BYTE, 2, flags));
    TEXT(vm, "flag_meanings", "land sea");
    TEXT(NC_GLOBAL, "Conventions", "CF-1.8");
    TEXT(NC_GLOBAL, "title", title ? title : "clphys poisson solution");
    TEXT(NC_GLOBAL, "source", "clphys " CLPHYS_VERSION " (clphys poisson)");
    NC_TRY(nc_enddef(nc));
    NC_TRY(nc_put_var_double(nc, vz, zc));
    NC_TRY(nc_put_var_double(nc, vy, yc));
    NC_TRY(nc_put_var_double(nc, vx, xc));
    NC_TRY(nc_put_var_double(nc, vp, pv));
    NC_TRY(nc_put_var_schar(nc, vm, mv));
    e = nc_close(nc);
    nc = -1;
    if (e != NC_NOERR) st = cp_error(NULL, CLPHYS_ERR_IO, "%s: closing %s: %s", file, tmp, nc_strerror(e));
    else if (rename(tmp, file) != 0)
        st = cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot rename %s to it: %s", file, tmp, strerror(errno));
done:
    if (nc >= 0) nc_close(nc);
    if (st) remove(tmp);
    cp_output_pending(tmp, 0);
    free(tmp), free(pv), free(mv);
    return st;
}
