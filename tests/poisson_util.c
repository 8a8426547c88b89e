/* poisson_util.c — see poisson_util.h. */
#include "poisson_util.h"
#include "host/ref/poisson_ref.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double *pt_random_op(uint64_t *rng, int nx, int ny, int nz, double land, int periodic_x, int periodic_y, double vscale,
                     double excess)
{
    const size_t n = (size_t)nx * ny * nz, plane = (size_t)nx * ny;
    double *a = calloc(7 * n, sizeof(double));
    unsigned char *wet = malloc(n);
    for (size_t c = 0; c < n; c++) wet[c] = tu_uniform(rng) >= land;
    for (size_t c = 0; c < n; c++) {
        if (!wet[c]) continue;
        const int i = (int)(c % (size_t)nx), j = (int)(c / (size_t)nx % (size_t)ny), k = (int)(c / plane);
        for (int d = 1; d <= 3; d++) {
            const int inside = d == 1 ? (i + 1 < nx || periodic_x) : d == 2 ? (j + 1 < ny || periodic_y) : k + 1 < nz;
            if (!inside) continue;
            const size_t g = poisson_ref_neighbor(nx, ny, nz, c, d);
            if (!wet[g] || g == c) continue;
            const double v = -(0.1 + 0.9 * tu_uniform(rng)) * (d == 3 ? vscale : 1.0);
            a[(size_t)(d + 3) * n + c] = v;
            a[(size_t)(3 - d) * n + g] = v;
        }
    }
    for (size_t c = 0; c < n; c++) {
        if (!wet[c]) continue;
        double s = tu_uniform(rng) < excess ? tu_uniform(rng) : 0;
        for (int d = -3; d <= 3; d++) s += d ? fabs(a[(size_t)(d + 3) * n + c]) : 0;
        a[3 * n + c] = s > 0 ? s : 1; /* an isolated wet cell keeps a non-zero row */
    }
    free(wet);
    return a;
}

void pt_geometry_make(pt_geometry *t, int nx, int ny, int nz, double hx, double hy, double hz, uint64_t basin_seed)
{
    memset(t, 0, sizeof *t);
    t->dx = malloc(sizeof(double) * nx), t->dy = malloc(sizeof(double) * ny), t->dz = malloc(sizeof(double) * nz);
    t->depth = malloc(sizeof(double) * nx * ny);
    for (int i = 0; i < nx; i++) t->dx[i] = hx;
    for (int j = 0; j < ny; j++) t->dy[j] = hy;
    for (int k = 0; k < nz; k++) t->dz[k] = hz;
    if (basin_seed)
        clphys_poisson_basin(nx, ny, basin_seed, nz * hz, 0, t->depth);
    else
        clphys_poisson_box(nx, ny, nz * hz, t->depth);
    t->g = (clphys_poisson_geometry){
        .nx = nx, .ny = ny, .nz = nz, .dx = t->dx, .dy = t->dy, .dz = t->dz, .depth = t->depth};
}

void pt_geometry_free(pt_geometry *t)
{
    free(t->dx), free(t->dy), free(t->dz), free(t->depth);
    memset(t, 0, sizeof *t);
}
