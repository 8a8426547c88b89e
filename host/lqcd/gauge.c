/* gauge.c — host SU(3) gauge fields: cold/hot starts, reunitarization,
 * plaquette and link trace (fp64).  Layout: include/clphys_lqcd.h. */
#include "clphys_lqcd.h"
#include "platform/platform.h"
#include "lqcd_su3.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

clphys_status clphys_lqcd_gauge_create(const int dims[4], clphys_lqcd_gauge_field *g)
{
    if (!dims || !g) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_lqcd_gauge_create: NULL argument");
    memset(g, 0, sizeof *g);
    size_t V = 1;
    for (int mu = 0; mu < 4; mu++) {
        if (dims[mu] < 2 || dims[mu] % 2)
            return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                            "gauge field: extent %d of direction %d must be even and >= 2", dims[mu], mu);
        V *= (size_t)dims[mu];
        if (V > ((size_t)1 << 31)) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "gauge field: volume above 2^31");
    }
    g->u = malloc(V * 4 * 18 * sizeof(double));
    if (!g->u) return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "gauge field: %zu sites", V);
    memcpy(g->dims, dims, sizeof g->dims);
    g->volume = V;
    clphys_lqcd_gauge_cold(g);
    return CLPHYS_SUCCESS;
}

void clphys_lqcd_gauge_destroy(clphys_lqcd_gauge_field *g)
{
    if (!g) return;
    free(g->u);
    g->u = NULL;
}

void clphys_lqcd_gauge_cold(clphys_lqcd_gauge_field *g)
{
    memset(g->u, 0, g->volume * 4 * 18 * sizeof(double));
    for (size_t l = 0; l < g->volume * 4; l++)
        for (int a = 0; a < 3; a++) g->u[l * 18 + (a * 3 + a) * 2] = 1;
}

static double gauss(uint64_t *s)
{
    double u1 = ((cp_splitmix64(s) >> 11) + 1.0) * 0x1.0p-53, u2 = (cp_splitmix64(s) >> 11) * 0x1.0p-53;
    return sqrt(-2 * log(u1)) * cos(6.283185307179586476925 * u2);
}

void clphys_lqcd_gauge_hot(clphys_lqcd_gauge_field *g, uint64_t seed)
{
    double complex *u = (double complex *)g->u;
    /* one stream per link: the field depends on the seed only, not on threads */
#pragma omp parallel for schedule(static)
    for (size_t l = 0; l < g->volume * 4; l++) {
        uint64_t s = (seed ^ 0x5851f42d4c957f2dULL) + (uint64_t)l * 0x9e3779b97f4a7c15ULL;
        cp_splitmix64(&s);
        for (int k = 0; k < 9; k++) {
            double re = gauss(&s);
            u[l * 9 + k] = re + I * gauss(&s);
        }
        lqcd_su3_reunitarize(u + l * 9);
    }
}

void clphys_lqcd_gauge_reunitarize(clphys_lqcd_gauge_field *g)
{
    double complex *u = (double complex *)g->u;
#pragma omp parallel for schedule(static)
    for (size_t l = 0; l < g->volume * 4; l++) lqcd_su3_reunitarize(u + l * 9);
}

/* Lexicographic site x + mu-hat, periodic (x fastest, clphys_lqcd.h). */
static size_t forward(const int dims[4], size_t x, int mu)
{
    size_t stride = 1;
    for (int nu = 0; nu < mu; nu++) stride *= (size_t)dims[nu];
    const size_t c = x / stride % (size_t)dims[mu];
    return c + 1 == (size_t)dims[mu] ? x - c * stride : x + stride;
}

/* The plaquettes' sum over sites in blocks of a fixed partition of the
 * lattice, each block summed in site order and the blocks in order: the same
 * bits on any number of threads. */
#define PLAQ_BLOCKS 256

double clphys_lqcd_gauge_plaquette(const clphys_lqcd_gauge_field *g)
{
    const double complex *u = (const double complex *)g->u;
    const size_t V = g->volume, per = (V + PLAQ_BLOCKS - 1) / PLAQ_BLOCKS;
    double part[PLAQ_BLOCKS];
#pragma omp parallel for schedule(static)
    for (int blk = 0; blk < PLAQ_BLOCKS; blk++) {
        double sum = 0;
        const size_t x0 = (size_t)blk * per, x1 = x0 + per < V ? x0 + per : V;
        for (size_t x = x0; x < x1; x++)
            for (int mu = 0; mu < 4; mu++)
                for (int nu = mu + 1; nu < 4; nu++) {
                    size_t xmu = forward(g->dims, x, mu), xnu = forward(g->dims, x, nu);
                    double complex a[9], b[9], c[9];
                    lqcd_su3_mul(a, u + (x * 4 + mu) * 9, u + (xmu * 4 + nu) * 9);
                    lqcd_su3_mul_dag(b, a, u + (xnu * 4 + mu) * 9);
                    lqcd_su3_mul_dag(c, b, u + (x * 4 + nu) * 9);
                    sum += creal(c[0] + c[4] + c[8]);
                }
        part[blk] = sum;
    }
    double sum = 0;
    for (int blk = 0; blk < PLAQ_BLOCKS; blk++) sum += part[blk];
    return sum / (3.0 * 6.0 * (double)V);
}

double clphys_lqcd_gauge_link_trace(const clphys_lqcd_gauge_field *g)
{
    const double complex *u = (const double complex *)g->u;
    double sum = 0;
    for (size_t l = 0; l < g->volume * 4; l++) sum += creal(u[l * 9] + u[l * 9 + 4] + u[l * 9 + 8]);
    return sum / (3.0 * 4.0 * (double)g->volume);
}

double clphys_lqcd_gauge_unitarity_violation(const clphys_lqcd_gauge_field *g)
{
    const double complex *u = (const double complex *)g->u;
    double worst = 0;
    for (size_t l = 0; l < g->volume * 4; l++) {
        const double complex *m = u + l * 9;
        double complex p[9];
        lqcd_su3_mul_dag(p, m, m);
        double complex det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
                             m[2] * (m[3] * m[7] - m[4] * m[6]);
        double e[10];
        for (int k = 0; k < 9; k++) e[k] = cabs(p[k] - (k % 4 == 0));
        e[9] = cabs(det - 1);
        /* not fmax: a NaN entry must make the result NaN, not vanish */
        for (int k = 0; k < 10; k++)
            if (!(e[k] <= worst) && !isnan(worst)) worst = e[k];
    }
    return worst;
}
