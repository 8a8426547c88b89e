/* geometry.c — the finite-volume operator of -(div grad - lambda) over a
 * bathymetry (include/clphys_poisson.h: Cartesian or spherical spacings,
 * stretched layers, land below the sea floor, no flux through closed faces). */
#include "poisson_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEG (POISSON_PI / 180.0)

static clphys_status check_positive(clphys_context *ctx, const char *name, const double *v, int n)
{
    if (!v) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "poisson geometry: %s is NULL", name);
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i]) || !(v[i] > 0))
            return cp_error(ctx, CLPHYS_ERR_INPUT, "poisson geometry: %s[%d] = %g is not a finite length > 0", name, i,
                            v[i]);
    return CLPHYS_SUCCESS;
}

clphys_status poisson_check_geometry(clphys_context *ctx, const clphys_poisson_geometry *g)
{
    if (g->nx < 2 || g->ny < 2 || g->nz < 1)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "poisson: grid %dx%dx%d too small for a coarse level (nx and ny must be >= 2, nz >= 1)", g->nx,
                        g->ny, g->nz);
    if ((double)g->nx * g->ny * g->nz > 2147483647.0)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "poisson: grid %dx%dx%d has more than 2^31 - 1 cells", g->nx,
                        g->ny, g->nz);
    if (!isfinite(g->helmholtz) || g->helmholtz < 0)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "poisson geometry: Helmholtz term %g must be finite and >= 0",
                        g->helmholtz);
    if (g->lonlat) {
        if (!isfinite(g->lon0) || !isfinite(g->lon1) || !(g->lon0 < g->lon1) || g->lon1 - g->lon0 > 360 ||
            !isfinite(g->lat0) || !isfinite(g->lat1) || !(g->lat0 < g->lat1) || g->lat0 < -90 || g->lat1 > 90)
            return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                            "poisson geometry: lonlat ranges %g:%g x %g:%g must increase, span at most 360 degrees "
                            "of longitude and lie within latitudes -90..90",
                            g->lon0, g->lon1, g->lat0, g->lat1);
    } else {
        CP_TRY(check_positive(ctx, "dx", g->dx, g->nx));
        CP_TRY(check_positive(ctx, "dy", g->dy, g->ny));
    }
    CP_TRY(check_positive(ctx, "dz", g->dz, g->nz));
    if (!g->depth) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "poisson geometry: depth is NULL");
    for (int j = 0; j < g->ny; j++)
        for (int i = 0; i < g->nx; i++)
            if (!isfinite(g->depth[(size_t)j * g->nx + i]))
                return cp_error(ctx, CLPHYS_ERR_INPUT, "poisson geometry: depth at column (i %d, j %d) is %g", i, j,
                                g->depth[(size_t)j * g->nx + i]);
    return CLPHYS_SUCCESS;
}

void poisson_metrics_free(poisson_metrics *m)
{
    free(m->xc), free(m->xf), free(m->yc), free(m->yf), free(m->zc), free(m->zf);
    memset(m, 0, sizeof *m);
}

/* faces f[0..n] from the spacings d (or uniform steps h from f0), centres c */
static void axis(int n, const double *d, double f0, double h, double *f, double *c)
{
    f[0] = f0;
    for (int i = 0; i < n; i++) f[i + 1] = d ? f[i] + d[i] : f0 + h * (i + 1);
    for (int i = 0; i < n; i++) c[i] = 0.5 * (f[i] + f[i + 1]);
}

clphys_status poisson_metrics_make(clphys_context *ctx, const clphys_poisson_geometry *g, poisson_metrics *m)
{
    memset(m, 0, sizeof *m);
    m->xc = malloc(sizeof(double) * g->nx), m->xf = malloc(sizeof(double) * (g->nx + 1));
    m->yc = malloc(sizeof(double) * g->ny), m->yf = malloc(sizeof(double) * (g->ny + 1));
    m->zc = malloc(sizeof(double) * g->nz), m->zf = malloc(sizeof(double) * (g->nz + 1));
    if (!m->xc || !m->xf || !m->yc || !m->yf || !m->zc || !m->zf) {
        poisson_metrics_free(m);
        return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson geometry metrics");
    }
    if (g->lonlat) {
        axis(g->nx, NULL, g->lon0 * DEG, (g->lon1 - g->lon0) * DEG / g->nx, m->xf, m->xc);
        axis(g->ny, NULL, g->lat0 * DEG, (g->lat1 - g->lat0) * DEG / g->ny, m->yf, m->yc);
    } else {
        axis(g->nx, g->dx, 0, 0, m->xf, m->xc);
        axis(g->ny, g->dy, 0, 0, m->yf, m->yc);
    }
    axis(g->nz, g->dz, 0, 0, m->zf, m->zc);
    return CLPHYS_SUCCESS;
}

/* On the sphere lengths are R times angles: east-west R cos(lat) dlon,
 * north-south R dlat; a cell's area R^2 dlon (sin lat_n - sin lat_s). */
static double width(const poisson_metrics *m, int i) { return m->xf[i + 1] - m->xf[i]; }
static double height(const poisson_metrics *m, int j) { return m->yf[j + 1] - m->yf[j]; }

double poisson_area_east(const clphys_poisson_geometry *g, const poisson_metrics *m, int i, int j, int k)
{
    (void)i;
    const double len = g->lonlat ? POISSON_EARTH_RADIUS * height(m, j) : g->dy[j];
    return len * g->dz[k];
}

double poisson_area_north(const clphys_poisson_geometry *g, const poisson_metrics *m, int i, int j, int k)
{
    const double len = g->lonlat ? POISSON_EARTH_RADIUS * cos(m->yf[j + 1]) * width(m, i) : g->dx[i];
    return len * g->dz[k];
}

double poisson_area_top(const clphys_poisson_geometry *g, const poisson_metrics *m, int i, int j)
{
    if (!g->lonlat) return g->dx[i] * g->dy[j];
    return POISSON_EARTH_RADIUS * POISSON_EARTH_RADIUS * width(m, i) * (sin(m->yf[j + 1]) - sin(m->yf[j]));
}

double poisson_volume(const clphys_poisson_geometry *g, const poisson_metrics *m, int i, int j, int k)
{
    return poisson_area_top(g, m, i, j) * g->dz[k];
}

double poisson_dist_east(const clphys_poisson_geometry *g, const poisson_metrics *m, int i, int j)
{
    const int ie = i + 1 < g->nx ? i + 1 : 0;
    if (g->lonlat) return POISSON_EARTH_RADIUS * cos(m->yc[j]) * 0.5 * (width(m, i) + width(m, ie));
    return 0.5 * (g->dx[i] + g->dx[ie]);
}

double poisson_dist_north(const clphys_poisson_geometry *g, const poisson_metrics *m, int i, int j)
{
    (void)i;
    if (g->lonlat) return POISSON_EARTH_RADIUS * 0.5 * (height(m, j) + height(m, j + 1));
    return 0.5 * (g->dy[j] + g->dy[j + 1]);
}

int poisson_wet(const clphys_poisson_geometry *g, const poisson_metrics *m, int i, int j, int k)
{
    return g->depth[(size_t)j * g->nx + i] > m->zc[k];
}

clphys_status poisson_assemble(clphys_context *ctx, const clphys_poisson_geometry *g, poisson_op *op, double *w)
{
    poisson_metrics m;
    CP_TRY(poisson_metrics_make(ctx, g, &m));
    clphys_status st = poisson_op_alloc(ctx, op, g->nx, g->ny, g->nz);
    if (st) {
        poisson_metrics_free(&m);
        return st;
    }
    const int nx = g->nx, ny = g->ny, nz = g->nz;
    const size_t plane = (size_t)nx * ny;
    size_t wet = 0;
#pragma omp parallel for schedule(static) reduction(+ : wet)
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                const size_t c = (size_t)i + (size_t)nx * j + plane * k;
                if (!poisson_wet(g, &m, i, j, k)) continue;
                wet++;
                op->mask[c] = POISSON_WET;
                const int ie = i + 1 < nx ? i + 1 : 0;
                if ((i + 1 < nx || g->periodic_x) && poisson_wet(g, &m, ie, j, k))
                    op->ax[c] = -poisson_area_east(g, &m, i, j, k) / poisson_dist_east(g, &m, i, j);
                if (j + 1 < ny && poisson_wet(g, &m, i, j + 1, k))
                    op->ay[c] = -poisson_area_north(g, &m, i, j, k) / poisson_dist_north(g, &m, i, j);
                if (k + 1 < nz && poisson_wet(g, &m, i, j, k + 1))
                    op->az[c] = -poisson_area_top(g, &m, i, j) / (0.5 * (g->dz[k] + g->dz[k + 1]));
                w[c] = poisson_volume(g, &m, i, j, k);
            }
    poisson_metrics_free(&m);
    /* the excess of the diagonal over the couplings is lambda V, exactly 0
     * for the Poisson problem; land rows are the identity.  A wet cell with
     * no wet neighbour and no Helmholtz term has an equation 0 = b: its
     * value is undetermined, and it is land like the cells of a 7-array
     * operator whose coefficients are all 0 (x = 0 there). */
#pragma omp parallel for schedule(static) reduction(- : wet)
    for (size_t c = 0; c < op->n; c++) {
        if ((op->mask[c] & POISSON_WET) && g->helmholtz == 0 && poisson_offdiag_sum(op, c) == 0) op->mask[c] = 0, wet--;
        if (op->mask[c] & POISSON_WET)
            op->e[c] = g->helmholtz * w[c];
        else
            op->e[c] = 1, w[c] = 0;
    }
    if (wet == 0) {
        poisson_op_free(op);
        return cp_error(ctx, CLPHYS_ERR_INPUT,
                        "poisson geometry: no wet cell (every column is shallower than the centre of its top layer, "
                        "%g m, or isolated)",
                        0.5 * g->dz[0]);
    }
    return CLPHYS_SUCCESS;
}
