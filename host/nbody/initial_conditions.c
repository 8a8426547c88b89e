/* initial_conditions.c — Plummer sphere after Aarseth, Henon & Wielen,
 * A&A 37, 183 (1974): radii by inverting the cumulative mass, speeds by von
 * Neumann rejection from g(q) = q^2 (1 - q^2)^(7/2), isotropic directions;
 * then scaled to N-body units (a = 3 pi / 16, so E = -1/4 for G = M = 1). */
#include "clphys_nbody.h"
#include "platform/platform.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define PI 3.14159265358979323846

static double uniform(uint64_t *x) { return (double)(cp_splitmix64(x) >> 11) * 0x1.0p-53; }

static void isotropic(uint64_t *rng, double r, double *out)
{
    double cth = 2 * uniform(rng) - 1, sth = sqrt(1 - cth * cth), phi = 2 * PI * uniform(rng);
    out[0] = r * sth * cos(phi);
    out[1] = r * sth * sin(phi);
    out[2] = r * cth;
}

clphys_status clphys_nbody_plummer(clphys_context *ctx, size_t n, uint64_t seed, clphys_nbody_system *s)
{
    if (!s || n < 1) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "plummer: NULL system or n = %zu < 1", n);
    s->n = 0;
    s->x = n <= SIZE_MAX / (4 * sizeof *s->x) ? malloc(n * 4 * sizeof *s->x) : NULL;
    s->v = s->x ? malloc(n * 3 * sizeof *s->v) : NULL;
    if (!s->x || !s->v) {
        clphys_nbody_system_destroy(s);
        return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "plummer: %zu particles", n);
    }
    s->n = n;
    uint64_t rng = seed * 0x2545f4914f6cdd1dULL + 1;
    const double a = 3 * PI / 16, vscale = 1 / sqrt(a);
    double com[6] = {0, 0, 0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        double r;
        do { /* M(r) = r^3 / (1 + r^2)^(3/2) in units a = 1; cut at r = 10 a (AHW) */
            double X1 = uniform(&rng);
            r = X1 > 0 ? 1 / sqrt(pow(X1, -2.0 / 3.0) - 1) : 0;
        } while (!(r < 10));
        double q, g;
        do {
            q = uniform(&rng);
            g = q * q * pow(1 - q * q, 3.5);
        } while (0.1 * uniform(&rng) >= g);
        double v = q * sqrt(2.0) * pow(1 + r * r, -0.25);
        double *x = s->x + 4 * i, *u = s->v + 3 * i;
        isotropic(&rng, r * a, x);
        isotropic(&rng, v * vscale, u);
        x[3] = 1.0 / n;
        for (int c = 0; c < 3; c++) com[c] += x[c] / n, com[3 + c] += u[c] / n;
    }
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) s->x[4 * i + c] -= com[c], s->v[3 * i + c] -= com[3 + c];
    return CLPHYS_SUCCESS;
}
