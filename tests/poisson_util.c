/* poisson_util.c — see poisson_util.h. */
#include "poisson_util.h"
#include "host/ref/poisson_ref.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double *pt_random_op(uint64_t *rng, int nx, int ny, int nz, double land, int periodic_x, int periodic_y,
                     double vscale, double excess)
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
    if (basin_seed) clphys_poisson_basin(nx, ny, basin_seed, nz * hz, 0, t->depth);
    else clphys_poisson_box(nx, ny, nz * hz, t->depth);
    t->g = (clphys_poisson_geometry){.nx = nx, .ny = ny, .nz = nz, .dx = t->dx, .dy = t->dy, .dz = t->dz,
                                     .depth = t->depth};
}

void pt_geometry_free(pt_geometry *t)
{
    free(t->dx), free(t->dy), free(t->dz), free(t->depth);
    memset(t, 0, sizeof *t);
}

/* connected components over non-zero couplings (breadth first), each marked
 * singular when no row of it has a diagonal above the sum of its couplings */
int pt_projected_rhs(int nx, int ny, int nz, const double *a, const double *w, const unsigned char *mask,
                     const double *rhs, double s, double *b, int *label)
{
    const size_t n = (size_t)nx * ny * nz;
    int *comp = malloc(sizeof(int) * n), *queue = malloc(sizeof(int) * n);
    for (size_t c = 0; c < n; c++) comp[c] = -1, label[c] = -1, b[c] = mask[c] ? s * w[c] * rhs[c] : 0;
    int ncomp = 0, nsing = 0;
    for (size_t c0 = 0; c0 < n; c0++) {
        if (!mask[c0] || comp[c0] >= 0) continue;
        int head = 0, tail = 0, regular = 0;
        queue[tail++] = (int)c0;
        comp[c0] = ncomp;
        while (head < tail) {
            const size_t c = (size_t)queue[head++];
            double off = 0;
            for (int d = -3; d <= 3; d++) {
                const double v = a[(size_t)(d + 3) * n + c];
                if (!d || v == 0) continue;
                off += fabs(v);
                const size_t g = poisson_ref_neighbor(nx, ny, nz, c, d);
                if (comp[g] < 0) comp[g] = ncomp, queue[tail++] = (int)g;
            }
            if (a[3 * n + c] - off > 1e-12 * a[3 * n + c]) regular = 1;
        }
        if (!regular) {
            double sb = 0, sw = 0;
            for (int q = 0; q < tail; q++) sb += b[queue[q]], sw += w[queue[q]];
            for (int q = 0; q < tail; q++) b[queue[q]] -= w[queue[q]] * sb / sw, label[queue[q]] = nsing;
            nsing++;
        }
        ncomp++;
    }
    free(comp), free(queue);
    return nsing;
}

double pt_region_mean(size_t n, const int *label, int r, const double *w, const double *x)
{
    double sx = 0, sw = 0;
    for (size_t c = 0; c < n; c++)
        if (label[c] == r) sx += w[c] * x[c], sw += w[c];
    return sw > 0 ? sx / sw : 0;
}
