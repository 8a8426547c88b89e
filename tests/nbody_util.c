/* nbody_util.c — see nbody_util.h. */
#include "nbody_util.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>

double *tg_random_particles(int n, uint64_t stream)
{
    uint64_t rng = tu_rng_init(stream);
    double *x = malloc(4 * (size_t)(n > 0 ? n : 1) * sizeof *x);
    for (int i = 0; x && i < n; i++) {
        for (int c = 0; c < 3; c++) x[4 * i + c] = tu_uniform(&rng);
        x[4 * i + 3] = (0.5 + tu_uniform(&rng)) / n;
    }
    return x;
}

void tg_errors(int ni, const double *xi, int nj, const double *xj, double eps, const double *acc, const double *pot,
               const double *ra, const double *rp, double *ea, double *ep)
{
    *ea = *ep = 0;
    for (int i = 0; i < ni; i++) {
        const double *p = xi + 4 * i;
        double sa = 0, sp = 0;
        for (int j = 0; j < nj; j++) {
            double dx = xj[4 * j] - p[0], dy = xj[4 * j + 1] - p[1], dz = xj[4 * j + 2] - p[2];
            double r2 = dx * dx + dy * dy + dz * dz, s2 = r2 + eps * eps;
            if (s2 == 0) continue;
            sa += xj[4 * j + 3] * sqrt(r2) / (s2 * sqrt(s2));
            sp += xj[4 * j + 3] / sqrt(s2);
        }
        double d = 0;
        for (int c = 0; c < 3; c++) d += (acc[3 * i + c] - ra[3 * i + c]) * (acc[3 * i + c] - ra[3 * i + c]);
        double e = sa > 0 ? sqrt(d) / sa : sqrt(d);
        double f = !pot ? 0 : sp > 0 ? fabs(pot[i] - rp[i]) / sp : fabs(pot[i] - rp[i]);
        *ea = isnan(e) || e > *ea ? (isnan(e) ? INFINITY : e) : *ea;
        *ep = isnan(f) || f > *ep ? (isnan(f) ? INFINITY : f) : *ep;
    }
}
