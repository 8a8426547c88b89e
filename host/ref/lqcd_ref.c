/* lqcd_ref.c — straightforward fp64 Wilson hopping term: full 4x4 gamma
 * matrices, no spin projection, no compression (the independent check of the
 * OpenCL kernels). */
#include "lqcd_ref.h"

#include <math.h>
#include <string.h>

const int lqcd_gamma_col[4][4] = {{3, 2, 1, 0}, {3, 2, 1, 0}, {2, 3, 0, 1}, {2, 3, 0, 1}};
const int lqcd_gamma_phase[4][4] = {{1, 1, 3, 3}, {2, 0, 0, 2}, {1, 3, 3, 1}, {0, 0, 0, 0}};

double complex lqcd_phase(int code)
{
    static const double complex ph[4] = {1, I, -1, -I};
    return ph[code & 3];
}

long long lqcd_site(const int dims[4], const int c[4])
{
    return c[0] + (long long)dims[0] * (c[1] + (long long)dims[1] * (c[2] + (long long)dims[2] * c[3]));
}

void lqcd_coords(const int dims[4], long long site, int c[4])
{
    for (int mu = 0; mu < 4; mu++) {
        c[mu] = (int)(site % dims[mu]);
        site /= dims[mu];
    }
}

long long lqcd_neighbor(const int dims[4], long long site, int mu, int dir)
{
    int c[4];
    lqcd_coords(dims, site, c);
    c[mu] = (c[mu] + dir + dims[mu]) % dims[mu];
    return lqcd_site(dims, c);
}

/* r = (1 + sign gamma_mu) s for a 4x3 spinor s. */
static void one_pm_gamma(double complex r[12], const double complex s[12], int mu, double sign)
{
    for (int a = 0; a < 4; a++)
        for (int c = 0; c < 3; c++)
            r[a * 3 + c] = s[a * 3 + c] + sign * lqcd_phase(lqcd_gamma_phase[mu][a]) * s[lqcd_gamma_col[mu][a] * 3 + c];
}

void lqcd_bc_antiperiodic_t(double complex phase[4], int ap)
{
    phase[0] = phase[1] = phase[2] = 1;
    phase[3] = ap ? -1 : 1;
}

void lqcd_ref_hopping_site(const int dims[4], const double complex *u, const double complex *in, double complex *out,
                           long long x, const double complex phase[4])
{
    double complex acc[12] = {0};
    int c[4];
    lqcd_coords(dims, x, c);
    for (int mu = 0; mu < 4; mu++) {
        double complex us[12], pr[12];
        /* forward: (1 - gamma_mu) U_mu(x) psi(x+mu) */
        long long xp = lqcd_neighbor(dims, x, mu, +1);
        const double complex bf = c[mu] == dims[mu] - 1 ? phase[mu] : 1;
        const double complex *U = u + (x * 4 + mu) * 9;
        for (int a = 0; a < 4; a++)
            for (int i = 0; i < 3; i++) {
                double complex s = 0;
                for (int j = 0; j < 3; j++) s += U[i * 3 + j] * in[xp * 12 + a * 3 + j];
                us[a * 3 + i] = bf * s;
            }
        one_pm_gamma(pr, us, mu, -1);
        for (int k = 0; k < 12; k++) acc[k] += pr[k];
        /* backward: (1 + gamma_mu) U_mu(x-mu)^+ psi(x-mu) */
        long long xm = lqcd_neighbor(dims, x, mu, -1);
        const double complex bb = c[mu] == 0 ? conj(phase[mu]) : 1;
        const double complex *Um = u + (xm * 4 + mu) * 9;
        for (int a = 0; a < 4; a++)
            for (int i = 0; i < 3; i++) {
                double complex s = 0;
                for (int j = 0; j < 3; j++) s += conj(Um[j * 3 + i]) * in[xm * 12 + a * 3 + j];
                us[a * 3 + i] = bb * s;
            }
        one_pm_gamma(pr, us, mu, +1);
        for (int k = 0; k < 12; k++) acc[k] += pr[k];
    }
    memcpy(out, acc, sizeof acc);
}

void lqcd_ref_hopping(const int dims[4], const double complex *u, const double complex *in, double complex *out,
                      const double complex phase[4])
{
    long long V = (long long)dims[0] * dims[1] * dims[2] * dims[3];
    for (long long x = 0; x < V; x++) lqcd_ref_hopping_site(dims, u, in, out + x * 12, x, phase);
}

void lqcd_ref_wilson(const int dims[4], const double complex *u, const double complex *in, double complex *out,
                     double kappa, const double complex phase[4])
{
    long long V = (long long)dims[0] * dims[1] * dims[2] * dims[3];
    lqcd_ref_hopping(dims, u, in, out, phase);
    for (long long k = 0; k < V * 12; k++) out[k] = in[k] - kappa * out[k];
}
