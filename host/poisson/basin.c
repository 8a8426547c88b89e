/* basin.c — generated inputs of the Poisson path (include/clphys_poisson.h):
 * a flat box, stretched layers, and a random basin with a coastline, a
 * shelf, a slope, an abyssal plain with seamounts, and islands. */
#include "poisson_internal.h"

#include <math.h>
#include <stdlib.h>

clphys_status clphys_poisson_box(int nx, int ny, double depth_value, double *depth)
{
    if (nx < 1 || ny < 1 || !depth)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_box: NULL or empty grid %dx%d", nx, ny);
    for (size_t c = 0; c < (size_t)nx * ny; c++) depth[c] = depth_value;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_poisson_levels(int nz, double lz, double stretch, double *dz)
{
    if (nz < 1 || !dz || !isfinite(lz) || !(lz > 0) || !isfinite(stretch) || !(stretch > 0))
        return cp_error(
            NULL, CLPHYS_ERR_INVALID_ARGUMENT,
            "clphys_poisson_levels: nz %d, depth %g, stretch %g (need nz >= 1, finite depth and stretch > 0)", nz, lz,
            stretch);
    double sum = 0;
    for (int k = 0; k < nz; k++) sum += pow(stretch, k);
    for (int k = 0; k < nz; k++) dz[k] = lz * pow(stretch, k) / sum;
    if (!(dz[0] > 0) || !isfinite(dz[nz - 1]))
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_poisson_levels: stretch %g over %d levels makes a layer of 0 or infinite thickness",
                        stretch, nz);
    return CLPHYS_SUCCESS;
}

static double uniform(uint64_t *s) { return (double)(cp_splitmix64(s) >> 11) * 0x1.0p-53; }

/* a smooth random field of a few Fourier modes, about [-1, 1] */
typedef struct {
    double a[8], kx[8], ky[8], ph[8];
} wave_set;

static void waves(uint64_t *s, wave_set *w, int periodic_x)
{
    for (int m = 0; m < 8; m++) {
        w->a[m] = (2 * uniform(s) - 1) / 4;
        w->kx[m] = 2 * POISSON_PI * (1 + (int)(uniform(s) * 4)) * (periodic_x ? 1 : 0.5);
        w->ky[m] = 2 * POISSON_PI * (1 + (int)(uniform(s) * 4)) * 0.5;
        w->ph[m] = 2 * POISSON_PI * uniform(s);
    }
}

static double wave_at(const wave_set *w, double x, double y)
{
    double v = 0;
    for (int m = 0; m < 8; m++) v += w->a[m] * sin(w->kx[m] * x + w->ky[m] * y + w->ph[m]);
    return v;
}

/* keep the largest 4-connected region of depth > 0 (x wraps when periodic) */
static clphys_status fill_lakes(int nx, int ny, int periodic_x, double *depth)
{
    const size_t n = (size_t)nx * ny;
    int *lab = malloc(sizeof(int) * n), *stack = malloc(sizeof(int) * n);
    if (!lab || !stack) {
        free(lab), free(stack);
        return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "clphys_poisson_basin");
    }
    for (size_t c = 0; c < n; c++) lab[c] = -1;
    int nlab = 0, best = -1;
    size_t best_size = 0;
    for (size_t c0 = 0; c0 < n; c0++) {
        if (lab[c0] >= 0 || !(depth[c0] > 0)) continue;
        size_t size = 0;
        int top = 0;
        stack[top++] = (int)c0;
        lab[c0] = nlab;
        while (top) {
            const int c = stack[--top];
            size++;
            const int i = c % nx, j = c / nx;
            const int nb[4] = {i > 0        ? c - 1
                               : periodic_x ? c + nx - 1
                                            : -1,
                               i + 1 < nx   ? c + 1
                               : periodic_x ? c - nx + 1
                                            : -1,
                               j > 0 ? c - nx : -1, j + 1 < ny ? c + nx : -1};
            for (int q = 0; q < 4; q++)
                if (nb[q] >= 0 && lab[nb[q]] < 0 && depth[nb[q]] > 0) lab[nb[q]] = nlab, stack[top++] = nb[q];
        }
        if (size > best_size) best_size = size, best = nlab;
        nlab++;
    }
    for (size_t c = 0; c < n; c++)
        if (depth[c] > 0 && lab[c] != best) depth[c] = 0;
    free(lab), free(stack);
    return CLPHYS_SUCCESS;
}

clphys_status clphys_poisson_basin(int nx, int ny, uint64_t seed, double max_depth, int periodic_x, double *depth)
{
    if (nx < 4 || ny < 4 || !depth || !isfinite(max_depth) || !(max_depth > 0))
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_poisson_basin: grid %dx%d (>= 4x4), max depth %g (> 0)", nx, ny, max_depth);
    uint64_t s = seed ^ 0x9e3779b97f4a7c15ULL;
    wave_set coast, floor;
    waves(&s, &coast, periodic_x);
    waves(&s, &floor, periodic_x);
    enum { NBUMP = 24 };
    double bx[NBUMP], by[NBUMP], br[NBUMP], bh[NBUMP];
    for (int b = 0; b < NBUMP; b++) { /* the first third islands, the rest seamounts */
        bx[b] = uniform(&s), by[b] = 0.15 + 0.7 * uniform(&s);
        br[b] = 0.02 + 0.04 * uniform(&s);
        bh[b] = b < NBUMP / 3 ? 1.3 : 0.3 + 0.3 * uniform(&s);
    }
    const double shelf = max_depth / 20, ws = 0.06, wsl = 0.08;
#pragma omp parallel for schedule(static)
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            const double x = (i + 0.5) / nx, y = (j + 0.5) / ny;
            double edge = fmin(y, 1 - y);
            if (!periodic_x) edge = fmin(edge, fmin(x, 1 - x));
            const double sdist = edge - 0.04 + 0.03 * wave_at(&coast, x, y); /* < 0: land */
            double d;
            if (sdist < 0)
                d = -10;
            else if (sdist < ws)
                d = shelf * (0.4 + 0.6 * sdist / ws);
            else if (sdist < ws + wsl) {
                const double t = (sdist - ws) / wsl;
                d = shelf + (max_depth - shelf) * t * t * (3 - 2 * t);
            } else
                d = max_depth * (0.9 + 0.1 * wave_at(&floor, x, y));
            if (d > 0)
                for (int b = 0; b < NBUMP; b++) {
                    double dx = fabs(x - bx[b]);
                    if (periodic_x) dx = fmin(dx, 1 - dx);
                    const double r2 = (dx * dx + (y - by[b]) * (y - by[b])) / (br[b] * br[b]);
                    d -= bh[b] * max_depth * exp(-r2);
                }
            depth[(size_t)j * nx + i] = d;
        }
    return fill_lakes(nx, ny, periodic_x, depth);
}
