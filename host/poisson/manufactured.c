/* manufactured.c — a manufactured solution for the assembled operator
 * (include/clphys_poisson.h): f from the exact fluxes of p_exact through
 * every open face, so that the discrete problem is consistent with p_exact
 * to second order whatever the mask (closed faces carry no flux in both). */
#include "poisson_internal.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
    const clphys_poisson_geometry *g;
    const poisson_metrics *m;
    double x0, lx, y0, ly, lz; /* extents: m, or radians in lonlat */
    double kx;                 /* pi, or 2 pi when x is periodic   */
} mms;

/* p and its gradient along x, y (per unit of the grid's coordinate) and z */
static double p_at(const mms *s, double x, double y, double z)
{
    return cos(s->kx * (x - s->x0) / s->lx) * cos(POISSON_PI * (y - s->y0) / s->ly) * cos(POISSON_PI * z / s->lz);
}
static double dpdx(const mms *s, double x, double y, double z)
{
    return -s->kx / s->lx * sin(s->kx * (x - s->x0) / s->lx) * cos(POISSON_PI * (y - s->y0) / s->ly) *
           cos(POISSON_PI * z / s->lz);
}
static double dpdy(const mms *s, double x, double y, double z)
{
    return -POISSON_PI / s->ly * cos(s->kx * (x - s->x0) / s->lx) * sin(POISSON_PI * (y - s->y0) / s->ly) *
           cos(POISSON_PI * z / s->lz);
}
static double dpdz(const mms *s, double x, double y, double z)
{
    return -POISSON_PI / s->lz * cos(s->kx * (x - s->x0) / s->lx) * cos(POISSON_PI * (y - s->y0) / s->ly) *
           sin(POISSON_PI * z / s->lz);
}

/* the normal derivative in metres: on the sphere d/dx is 1/(R cos lat) d/dlon, d/dy 1/R d/dlat */
static double east_grad(const mms *s, double x, double y, double z)
{
    return dpdx(s, x, y, z) / (s->g->lonlat ? POISSON_EARTH_RADIUS * cos(y) : 1.0);
}
static double north_grad(const mms *s, double x, double y, double z)
{
    return dpdy(s, x, y, z) / (s->g->lonlat ? POISSON_EARTH_RADIUS : 1.0);
}

clphys_status clphys_poisson_manufactured(const clphys_poisson_geometry *g, double *f, double *p)
{
    if (!g || !f || !p)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_manufactured: NULL argument");
    CP_TRY(poisson_check_geometry(NULL, g));
    poisson_metrics m;
    CP_TRY(poisson_metrics_make(NULL, g, &m));
    const int nx = g->nx, ny = g->ny, nz = g->nz;
    const mms s = {g,        &m,
                   m.xf[0],  m.xf[nx] - m.xf[0],
                   m.yf[0],  m.yf[ny] - m.yf[0],
                   m.zf[nz], g->periodic_x ? 2 * POISSON_PI : POISSON_PI};
    const size_t plane = (size_t)nx * ny;
#pragma omp parallel for schedule(static)
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                const size_t c = (size_t)i + (size_t)nx * j + plane * k;
                f[c] = p[c] = 0;
                if (!poisson_wet(g, &m, i, j, k)) continue;
                const double xc = m.xc[i], yc = m.yc[j], zc = m.zc[k];
                double flux = 0; /* outward: east, west, north, south, bottom, top */
                const int ie = i + 1 < nx ? i + 1 : 0, iw = i > 0 ? i - 1 : nx - 1;
                if ((i + 1 < nx || g->periodic_x) && poisson_wet(g, &m, ie, j, k))
                    flux += poisson_area_east(g, &m, i, j, k) * east_grad(&s, m.xf[i + 1], yc, zc);
                if ((i > 0 || g->periodic_x) && poisson_wet(g, &m, iw, j, k))
                    flux -= poisson_area_east(g, &m, iw, j, k) * east_grad(&s, m.xf[i], yc, zc);
                if (j + 1 < ny && poisson_wet(g, &m, i, j + 1, k))
                    flux += poisson_area_north(g, &m, i, j, k) * north_grad(&s, xc, m.yf[j + 1], zc);
                if (j > 0 && poisson_wet(g, &m, i, j - 1, k))
                    flux -= poisson_area_north(g, &m, i, j - 1, k) * north_grad(&s, xc, m.yf[j], zc);
                if (k + 1 < nz && poisson_wet(g, &m, i, j, k + 1))
                    flux += poisson_area_top(g, &m, i, j) * dpdz(&s, xc, yc, m.zf[k + 1]);
                if (k > 0 && poisson_wet(g, &m, i, j, k - 1))
                    flux -= poisson_area_top(g, &m, i, j) * dpdz(&s, xc, yc, m.zf[k]);
                p[c] = p_at(&s, xc, yc, zc);
                f[c] = flux / poisson_volume(g, &m, i, j, k) - g->helmholtz * p[c];
            }
    poisson_metrics_free(&m);
    return CLPHYS_SUCCESS;
}
