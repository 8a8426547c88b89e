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
    int nan_missing; /* a fill value is NaN */
    double scale, offset;
} var_coding;

static double default_fill(nc_type t)
{
    switch (t) {
    case NC_BYTE:
        return NC_FILL_BYTE;
    case NC_UBYTE:
        return NC_FILL_UBYTE;
    case NC_SHORT:
        return NC_FILL_SHORT;
    case NC_USHORT:
        return NC_FILL_USHORT;
    case NC_INT:
        return NC_FILL_INT;
    case NC_UINT:
        return NC_FILL_UINT;
    case NC_INT64:
        return (double)NC_FILL_INT64;
    case NC_UINT64:
        return (double)NC_FILL_UINT64;
    case NC_FLOAT:
        return NC_FILL_FLOAT;
    default:
        return NC_FILL_DOUBLE;
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
        return cp_error(NULL, CLPHYS_ERR_FORMAT,
                        "%s: variable '%s' has a scale_factor or add_offset that is not finite", file, var);
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
    if (nc_inq_varid(nc, name, v) != NC_NOERR) {
        /* the file's variables with their dimension counts, so that the right name is at hand; control
           bytes of a hostile file's names are shown as '?' */
        char list[1024] = "";
        size_t at = 0;
        int nvars = 0;
        if (nc_inq_nvars(nc, &nvars) != NC_NOERR) nvars = 0;
        for (int i = 0; i < nvars && at < sizeof list - 1; i++) {
            char vn[NC_MAX_NAME + 1];
            int vd = 0;
            if (nc_inq_varname(nc, i, vn) != NC_NOERR || nc_inq_varndims(nc, i, &vd) != NC_NOERR) continue;
            for (char *c = vn; *c; c++)
                if ((unsigned char)*c < 32 || *c == 127) *c = '?';
            int k = snprintf(list + at, sizeof list - at, "%s%s (%dD)", at ? ", " : "", vn, vd);
            if (k < 0 || (size_t)k >= sizeof list - at) {
                snprintf(list + at, sizeof list - at, "%s...", at ? ", " : "");
                break;
            }
            at += (size_t)k;
        }
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: no variable '%s' (the file's variables: %s)", file, name,
                        nvars ? list : "none");
    }
    if (nc_inq_varndims(nc, *v, &nd) != NC_NOERR || nc_inq_vardimid(nc, *v, dimids) != NC_NOERR)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: variable '%s' cannot be inquired", file, name);
    if (nd != want)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: variable '%s' has %d dimensions, %s expected", file, name, nd,
                        want == 2 ? "2 (y, x)" : "3 (z, y, x)");
    for (int d = 0; d < nd; d++) {
        char dn[NC_MAX_NAME + 1];
        if (nc_inq_dim(nc, dimids[d], dn, &len[d]) != NC_NOERR)
            return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: variable '%s': dimension %d cannot be inquired", file, name,
                            d);
        if (len[d] == 0 || len[d] > INT_MAX)
            return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: variable '%s': dimension '%s' has %zu values", file, name, dn,
                            len[d]);
    }
    return CLPHYS_SUCCESS;
}

/* ---- coordinates: which axis, which unit (CF conventions, section 4) ---- */

/* a text attribute without trailing NULs and blanks; "" when absent */
static void text_att(int nc, int v, const char *name, char *out, size_t cap)
{
    nc_type t;
    size_t len = 0;
    out[0] = 0;
    if (nc_inq_att(nc, v, name, &t, &len) != NC_NOERR || t != NC_CHAR) return;
    if (len >= cap) {
        snprintf(out, cap, "(%zu characters)", len);
        return;
    }
    if (nc_get_att_text(nc, v, name, out) != NC_NOERR) len = 0;
    out[len] = 0;
    while (len && (out[len - 1] == 0 || out[len - 1] == ' ')) out[--len] = 0;
}

static int one_of(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list)) return 1;
    return 0;
}

static int same_ci(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if ((*a | 0x20) != (*b | 0x20)) return 0;
    return !*a && !*b;
}

/* CF's spellings (udunits): degrees east and north, lengths */
static const char *const east[] = {"degrees_east", "degree_east", "degree_E", "degrees_E", "degreeE", "degreesE", NULL};
static const char *const north[] = {"degrees_north", "degree_north", "degree_N", "degrees_N",
                                    "degreeN",       "degreesN",     NULL};
static const char *const metres[] = {"m", "meter", "meters", "metre", "metres", NULL};
static const char *const kilometres[] = {"km", "kilometer", "kilometers", "kilometre", "kilometres", NULL};

/* A coordinate variable: its axis ('x', 'y' or 0 when nothing tells) from
 * its axis attribute, standard_name, units and name, and its unit. */
typedef struct {
    char dim[NC_MAX_NAME + 1], units[64];
    int var;      /* the coordinate variable                            */
    int axis;     /* 'x', 'y' or 0                                      */
    int degrees;  /* 1: degrees (longitude or latitude)                 */
    double scale; /* metres per unit (1, or 1000 for km); 1 for degrees */
} coord_info;

/* one piece of evidence `a` ('x', 'y' or 0) for the axis of c */
static clphys_status evidence(const char *file, coord_info *c, int a, const char *from)
{
    if (!a) return CLPHYS_SUCCESS;
    if (c->axis && c->axis != a)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: coordinate '%s': its %s says %s, its other attributes %s", file,
                        c->dim, from, a == 'x' ? "x (east)" : "y (north)", c->axis == 'x' ? "x" : "y");
    c->axis = a;
    return CLPHYS_SUCCESS;
}

static clphys_status coord_inquire(const char *file, int nc, int dim, coord_info *c)
{
    memset(c, 0, sizeof *c);
    int nd, did;
    if (nc_inq_dimname(nc, dim, c->dim) != NC_NOERR)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: a dimension without a name", file);
    if (nc_inq_varid(nc, c->dim, &c->var) != NC_NOERR || nc_inq_varndims(nc, c->var, &nd) != NC_NOERR || nd != 1 ||
        nc_inq_vardimid(nc, c->var, &did) != NC_NOERR || did != dim)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: dimension '%s' has no coordinate variable '%s(%s)'", file, c->dim,
                        c->dim, c->dim);
    char axis[16], sn[64];
    text_att(nc, c->var, "axis", axis, sizeof axis);
    text_att(nc, c->var, "standard_name", sn, sizeof sn);
    text_att(nc, c->var, "units", c->units, sizeof c->units);
    static const char *const sn_x[] = {"longitude", "grid_longitude", "projection_x_coordinate", NULL};
    static const char *const sn_y[] = {"latitude", "grid_latitude", "projection_y_coordinate", NULL};
    static const char *const nm_x[] = {"x", "lon", "longitude", NULL};
    static const char *const nm_y[] = {"y", "lat", "latitude", NULL};
    int by_name = 0;
    for (int k = 0; nm_x[k]; k++) by_name = same_ci(c->dim, nm_x[k]) ? 'x' : same_ci(c->dim, nm_y[k]) ? 'y' : by_name;
    CP_TRY(evidence(file, c, same_ci(axis, "X") ? 'x' : same_ci(axis, "Y") ? 'y' : 0, "axis attribute"));
    CP_TRY(evidence(file, c, one_of(sn, sn_x) ? 'x' : one_of(sn, sn_y) ? 'y' : 0, "standard_name"));
    CP_TRY(evidence(file, c, one_of(c->units, east) ? 'x' : one_of(c->units, north) ? 'y' : 0, "units"));
    if (!c->axis) c->axis = by_name; /* a name only decides when no attribute does */
    c->scale = 1;
    if (one_of(c->units, east) || one_of(c->units, north) || !strcmp(c->units, "degrees") ||
        !strcmp(c->units, "degree"))
        c->degrees = 1;
    else if (one_of(c->units, kilometres))
        c->scale = 1000;
    else if (!one_of(c->units, metres))
        return cp_error(NULL, CLPHYS_ERR_FORMAT,
                        "%s: coordinate '%s' has units '%s': clphys reads metres (m), kilometres (km) or degrees "
                        "(degrees_east, degrees_north)",
                        file, c->dim, c->units[0] ? c->units : "(none)");
    return CLPHYS_SUCCESS;
}

/* the values of a coordinate (len >= 2), in metres or degrees, checked
 * against CLPHYS_POISSON_MIN_SPACING and CLPHYS_POISSON_MAX_EXTENT */
static clphys_status coord_read(const char *file, int nc, const coord_info *c, size_t len, double *out)
{
    if (len < 2)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: coordinate '%s' has %zu value (at least 2 needed)", file, c->dim,
                        len);
    if (nc_get_var_double(nc, c->var, out) != NC_NOERR)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: coordinate '%s' cannot be read as numbers", file, c->dim);
    for (size_t i = 0; i < len; i++) {
        out[i] *= c->scale;
        if (!isfinite(out[i]) || (i > 0 && !(out[i] > out[i - 1])))
            return cp_error(NULL, CLPHYS_ERR_FORMAT,
                            "%s: coordinate '%s' is not finite and strictly increasing at index %zu (%g)", file, c->dim,
                            i, out[i]);
    }
    /* degrees: a degree of latitude is 111 km */
    const double unit = c->degrees ? 1.11e5 : 1, span = (out[len - 1] - out[0]) * unit;
    double gap = INFINITY;
    for (size_t i = 1; i < len; i++) gap = fmin(gap, (out[i] - out[i - 1]) * unit);
    if (gap < CLPHYS_POISSON_MIN_SPACING || span > CLPHYS_POISSON_MAX_EXTENT ||
        fabs(out[0]) * unit > CLPHYS_POISSON_MAX_EXTENT)
        return cp_error(NULL, CLPHYS_ERR_INPUT,
                        "%s: coordinate '%s' spans %g m with cells %g m apart at the closest: clphys takes cells at "
                        "least %g m wide over at most %g m (and coordinates within that much of 0)",
                        file, c->dim, span, gap, CLPHYS_POISSON_MIN_SPACING, CLPHYS_POISSON_MAX_EXTENT);
    if (c->degrees && c->axis == 'y' && (out[0] < -90 || out[len - 1] > 90))
        return cp_error(NULL, CLPHYS_ERR_INPUT, "%s: latitude '%s' outside -90 .. 90 degrees (%g .. %g)", file, c->dim,
                        out[0], out[len - 1]);
    return CLPHYS_SUCCESS;
}

/* A variable of `n` values: refused when a NetCDF-4 file cannot hold them
 * (POISSON_NC4_VALUES_PER_BYTE) — classic files were checked whole. */
static clphys_status values_fit(const char *file, const char *var, const poisson_nc_file *fi, double n)
{
    if (fi->format != 4 || n <= (double)POISSON_NC4_VALUES_PER_BYTE * (double)fi->size) return CLPHYS_SUCCESS;
    return cp_error(NULL, CLPHYS_ERR_FORMAT,
                    "%s: variable '%s' declares %.0f values in a file of %llu bytes (more than %d per byte: a variable "
                    "never written, or compressed beyond belief)",
                    file, var, n, (unsigned long long)fi->size, POISSON_NC4_VALUES_PER_BYTE);
}

/* poisson_nc_check, then nc_open */
static clphys_status open_checked(const char *file, poisson_nc_file *fi, int *nc)
{
    CP_TRY(poisson_nc_check(file, fi));
    const int e = nc_open(file, NC_NOWRITE, nc);
    if (e != NC_NOERR)
        return cp_error(NULL, fi->format == 4 ? CLPHYS_ERR_FORMAT : CLPHYS_ERR_IO, "%s: cannot open: %s%s", file,
                        nc_strerror(e), fi->format == 4 ? " (a NetCDF-4/HDF5 file damaged or cut short)" : "");
    return CLPHYS_SUCCESS;
}

void clphys_poisson_bathymetry_destroy(clphys_poisson_bathymetry *b)
{
    if (!b) return;
    free(b->depth), free(b->x), free(b->y);
    memset(b, 0, sizeof *b);
}

/* the two coordinates of var's dimensions: which is x, from their axes
 * (the first is y unless something says otherwise) */
static clphys_status axes(const char *file, const char *var, coord_info c[2], int *swapped)
{
    *swapped = 0;
    if (c[0].axis && c[0].axis == c[1].axis)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: both dimensions of '%s' ('%s', '%s') are %s coordinates", file,
                        var, c[0].dim, c[1].dim, c[0].axis == 'x' ? "x (east)" : "y (north)");
    if (c[0].axis == 'x' || c[1].axis == 'y') *swapped = 1;
    if (c[0].degrees != c[1].degrees)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: one coordinate of '%s' is in degrees and the other not", file,
                        var);
    return CLPHYS_SUCCESS;
}

clphys_status clphys_poisson_read_bathymetry(const char *file, const char *var, clphys_poisson_bathymetry *b)
{
    if (!file || !var || !b)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_read_bathymetry: NULL argument");
    memset(b, 0, sizeof *b);
    int nc, v, dims[NC_MAX_VAR_DIMS], e, swapped = 0;
    size_t len[NC_MAX_VAR_DIMS];
    poisson_nc_file fi;
    CP_TRY(open_checked(file, &fi, &nc));
    clphys_status st = find_var(file, nc, var, 2, &v, dims, len);
    var_coding vc;
    coord_info c[2];
    double *raw = NULL;
    if (!st) st = var_coding_read(file, var, nc, v, &vc);
    if (!st) st = coord_inquire(file, nc, dims[0], &c[0]);
    if (!st) st = coord_inquire(file, nc, dims[1], &c[1]);
    if (!st) st = axes(file, var, c, &swapped);
    if (!st) st = values_fit(file, var, &fi, (double)len[0] * (double)len[1]);
    if (!st) {
        const int ix = swapped ? 0 : 1, iy = 1 - ix;
        b->ny = (int)len[iy], b->nx = (int)len[ix];
        const size_t n = len[0] * len[1];
        b->depth = malloc(n * sizeof(double)), b->x = malloc(len[ix] * sizeof(double)),
        b->y = malloc(len[iy] * sizeof(double));
        raw = swapped ? malloc(n * sizeof(double)) : b->depth;
        if (!b->depth || !b->x || !b->y || !raw)
            st = cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "%s: %zu depths", file, n);
        if (!st) st = coord_read(file, nc, &c[ix], len[ix], b->x);
        if (!st) st = coord_read(file, nc, &c[iy], len[iy], b->y);
        b->lonlat = c[0].degrees;
    }
    if (!st && (e = nc_get_var_double(nc, v, raw)) != NC_NOERR)
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: variable '%s' cannot be read: %s", file, var, nc_strerror(e));
    const size_t nx = (size_t)b->nx, ny = (size_t)b->ny;
    if (!st && swapped) /* stored (x, y): depth[j][i] = raw[i][j] */
        for (size_t j = 0; j < ny; j++)
            for (size_t i = 0; i < nx; i++) b->depth[j * nx + i] = raw[i * ny + j];
    for (size_t k = 0; !st && k < nx * ny; k++) {
        if (missing(&vc, &b->depth[k])) {
            b->depth[k] = 0, b->missing++;
        } else if (!isfinite(b->depth[k]) || fabs(b->depth[k]) > CLPHYS_POISSON_MAX_DEPTH) {
            st = cp_error(NULL, CLPHYS_ERR_INPUT,
                          "%s: variable '%s' at (y %zu, x %zu) is %g (not a missing value, and not a depth within "
                          "+-%g m)",
                          file, var, k / nx, k % nx, b->depth[k], CLPHYS_POISSON_MAX_DEPTH);
        }
    }
    if (swapped) free(raw);
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
    poisson_nc_file fi;
    CP_TRY(open_checked(file, &fi, &nc));
    clphys_status st = find_var(file, nc, var, 3, &v, dims, len);
    var_coding vc;
    if (!st) st = values_fit(file, var, &fi, (double)len[0] * (double)len[1] * (double)len[2]);
    if (!st && (len[0] != (size_t)nz || len[1] != (size_t)ny || len[2] != (size_t)nx))
        st = cp_error(NULL, CLPHYS_ERR_FORMAT,
                      "%s: variable '%s' is %zu x %zu x %zu (z, y, x); the grid is %d x %d x %d", file, var, len[0],
                      len[1], len[2], nz, ny, nx);
    if (!st) st = var_coding_read(file, var, nc, v, &vc);
    if (!st && (e = nc_get_var_double(nc, v, f)) != NC_NOERR)
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: variable '%s' cannot be read: %s", file, var, nc_strerror(e));
    const size_t n = (size_t)nx * ny * nz, plane = (size_t)nx * ny;
    for (size_t c = 0; !st && c < n; c++) {
        const int wet = !mask || mask[c];
        const int miss = missing(&vc, &f[c]);
        if (wet && (miss || !isfinite(f[c])))
            st = cp_error(NULL, CLPHYS_ERR_INPUT, "%s: variable '%s' at wet cell (z %zu, y %zu, x %zu) is %s", file,
                          var, c / plane, c / (size_t)nx % (size_t)ny, c % (size_t)nx, miss ? "missing" : "not finite");
        if (!wet || miss) f[c] = 0;
    }
    nc_close(nc);
    return st;
}

/* A failed write's cause: libnetcdf's NetCDF-4 errors ("NetCDF: HDF
 * error") hide the system's, which errno still holds (a full disk, a
 * quota, a file size limit, an I/O error). */
static const char *write_error(int e)
{
    const int sys = errno;
    if (sys == ENOSPC || sys == EDQUOT || sys == EFBIG || sys == EIO) return strerror(sys);
    return nc_strerror(e);
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
#define NC_TRY(call)                                                                                                   \
    do {                                                                                                               \
        errno = 0;                                                                                                     \
        if ((e = (call)) != NC_NOERR) {                                                                                \
            st = cp_error(NULL, CLPHYS_ERR_IO, "%s: writing %s: %s", file, tmp, write_error(e));                       \
            goto done;                                                                                                 \
        }                                                                                                              \
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
    errno = 0;
    e = nc_close(nc);
    nc = -1;
    if (e != NC_NOERR)
        st = cp_error(NULL, CLPHYS_ERR_IO, "%s: closing %s: %s", file, tmp, write_error(e));
    else if (rename(tmp, file) != 0)
        st = cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot rename %s to it: %s", file, tmp, strerror(errno));
done:
    if (nc >= 0) nc_close(nc);
    if (st) remove(tmp);
    cp_output_pending(tmp, 0);
    free(tmp), free(pv), free(mv);
    return st;
}
