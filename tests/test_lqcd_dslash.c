/* test_lqcd_dslash.c — the Wilson hopping kernel against the fp64 CPU reference
 * (host/ref/lqcd_ref.c) on random SU(3) fields, and physics invariants:
 * gamma algebra, free-field plane waves, gamma5-hermiticity, gauge
 * covariance, reconstruct-12 == reconstruct-18, even-odd operators against
 * the Schur complement built from the full-lattice reference; the solver's
 * M^+ through gamma5-folded hops and the host-layout import/export; the
 * work-group tuning through the tuning cache; the defaults of a zeroed
 * params struct and bad parameters.
 * Error measure: max_i |a_i - r_i| / max(|r_i|, 1) over all components
 * (components are O(1)); tolerance 2e-5 in fp32, 1e-12 in fp64. */
#include "util.h"
#include "host/ref/lqcd_ref.h"
#include "host/lqcd/lqcd_internal.h"
#include "host/lqcd/lqcd_su3.h"
#include "platform/tune.h"

#include <complex.h>
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static clphys_context *ctx;
static int layout = CLPHYS_LQCD_SOA; /* the AoS tests set it for their duration */
static const int DIMS[4] = {4, 4, 4, 8};
#define V  (4 * 4 * 4 * 8)
#define PI 3.14159265358979323846

static double tol_of(clphys_precision p) { return p == CLPHYS_FP64 ? 1e-12 : 2e-5; }

static void random_spinor(double complex *psi, long long n, uint64_t *rng)
{
    for (long long i = 0; i < n * 12; i++) psi[i] = (2 * tu_uniform(rng) - 1) + I * (2 * tu_uniform(rng) - 1);
}

/* A plan with the boundary bc[4] (phase_by_pi used for CLPHYS_LQCD_BC_PHASE). */
static clphys_lqcd_dslash_plan *make_plan_bc(const clphys_lqcd_gauge_field *g, clphys_precision p, int recon,
                                             double kappa, const clphys_lqcd_bc bc[4], const double by_pi[4])
{
    clphys_lqcd_dslash_params prm = {.precision = p, .reconstruct = recon, .kappa = kappa, .layout = layout};
    for (int mu = 0; mu < 4; mu++) prm.bc[mu] = bc[mu], prm.bc_phase_by_pi[mu] = by_pi ? by_pi[mu] : 0;
    clphys_lqcd_dslash_plan *pl = NULL;
    clphys_status st = clphys_lqcd_dslash_plan_create(ctx, g, &prm, &pl);
    if (st) fail_msg("plan: %s: %s", clphys_status_string(st), clphys_last_error(ctx));
    return pl;
}

/* anti: p,p,p,a, else p,p,p,p */
static clphys_lqcd_dslash_plan *make_plan(const clphys_lqcd_gauge_field *g, clphys_precision p, int recon, double kappa,
                                          int anti)
{
    const clphys_lqcd_bc bc[4] = {CLPHYS_LQCD_BC_PERIODIC, CLPHYS_LQCD_BC_PERIODIC, CLPHYS_LQCD_BC_PERIODIC,
                                  anti ? CLPHYS_LQCD_BC_ANTIPERIODIC : CLPHYS_LQCD_BC_PERIODIC};
    return make_plan_bc(g, p, recon, kappa, bc, NULL);
}

/* The reference's phases of p,p,p,a (anti) or p,p,p,p. */
static const double complex *ph_t(int anti)
{
    static double complex ph[2][4];
    lqcd_bc_antiperiodic_t(ph[anti != 0], anti);
    return ph[anti != 0];
}

/* Device op on host arrays, with the device output poisoned first. */
static void apply_full(clphys_lqcd_dslash_plan *pl, clphys_lqcd_dslash_op op, double complex *out,
                       const double complex *in)
{
    double *nan = malloc(sizeof(double) * 24 * V);
    tu_poison_f64(nan, 24 * V);
    tu_poison_f64((double *)out, 24 * V);
    cl_mem a, b;
    assert_int_equal(clphys_lqcd_dslash_field_create(pl, 0, &a), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_dslash_field_create(pl, 0, &b), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_dslash_field_write(pl, b, -1, nan), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_dslash_field_write(pl, a, -1, (const double *)in), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_dslash_apply(pl, op, b, a, NULL), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_dslash_field_read(pl, b, -1, (double *)out), CLPHYS_SUCCESS);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    free(nan);
}

static int have_fp64(void) { return clphys_context_device(ctx)->fp64; }

static void test_gamma_algebra(void **state)
{
    (void)state;
    double complex g[5][16] = {{0}};
    for (int mu = 0; mu < 4; mu++)
        for (int r = 0; r < 4; r++) g[mu][r * 4 + lqcd_gamma_col[mu][r]] = lqcd_phase(lqcd_gamma_phase[mu][r]);
    for (int mu = 0; mu < 4; mu++)
        for (int nu = 0; nu < 4; nu++)
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) {
                    double complex ac = 0;
                    for (int k = 0; k < 4; k++)
                        ac += g[mu][i * 4 + k] * g[nu][k * 4 + j] + g[nu][i * 4 + k] * g[mu][k * 4 + j];
                    assert_true(cabs(ac - (mu == nu && i == j ? 2 : 0)) < 1e-15);
                    if (nu == 0) assert_true(cabs(g[mu][i * 4 + j] - conj(g[mu][j * 4 + i])) < 1e-15);
                }
    /* gamma5 = gx gy gz gt = diag(1,1,-1,-1) (QDP++ DeGrand-Rossi) */
    double complex t1[16], t2[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            t1[i * 4 + j] = 0;
            for (int k = 0; k < 4; k++) t1[i * 4 + j] += g[0][i * 4 + k] * g[1][k * 4 + j];
        }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            t2[i * 4 + j] = 0;
            for (int k = 0; k < 4; k++) t2[i * 4 + j] += t1[i * 4 + k] * g[2][k * 4 + j];
        }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double complex s = 0;
            for (int k = 0; k < 4; k++) s += t2[i * 4 + k] * g[3][k * 4 + j];
            assert_true(cabs(s - (i == j ? (i < 2 ? 1 : -1) : 0)) < 1e-15);
        }
}

/* A random boundary per direction: periodic, antiperiodic or a U(1) phase
 * (theta / pi uniform in (-1, 1)); ph gets the reference's phases. */
static void random_bc(uint64_t *rng, clphys_lqcd_bc bc[4], double by_pi[4], double complex ph[4], char *name, size_t n)
{
    size_t used = 0;
    for (int mu = 0; mu < 4; mu++) {
        const double u = tu_uniform(rng);
        bc[mu] = u < 0.3 ? CLPHYS_LQCD_BC_PERIODIC : u < 0.65 ? CLPHYS_LQCD_BC_ANTIPERIODIC : CLPHYS_LQCD_BC_PHASE;
        by_pi[mu] = bc[mu] == CLPHYS_LQCD_BC_PHASE ? 2 * tu_uniform(rng) - 1 : 0;
        ph[mu] = bc[mu] == CLPHYS_LQCD_BC_PERIODIC       ? 1
                 : bc[mu] == CLPHYS_LQCD_BC_ANTIPERIODIC ? -1
                                                         : cexp(I * PI * by_pi[mu]);
        if (bc[mu] == CLPHYS_LQCD_BC_PHASE)
            used += (size_t)snprintf(name + used, n - used, "%s%.3fpi", mu ? "," : "", by_pi[mu]);
        else
            used += (size_t)snprintf(name + used, n - used, "%s%s", mu ? "," : "",
                                     bc[mu] == CLPHYS_LQCD_BC_PERIODIC ? "p" : "a");
    }
}

static void check_vs_ref(clphys_precision p, int recon)
{
    uint64_t rng = tu_rng_init(11 + recon + 100 * p);
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 7);
    assert_true(clphys_lqcd_gauge_unitarity_violation(&g) < 1e-13);
    clphys_lqcd_bc bc[4];
    double by_pi[4];
    double complex ph[4];
    char bcname[96];
    random_bc(&rng, bc, by_pi, ph, bcname, sizeof bcname);
    double kappa = 0.1 + 0.05 * tu_uniform(&rng);
    double complex *in = malloc(sizeof(double complex) * 12 * V), *out = malloc(sizeof(double complex) * 12 * V),
                   *ref = malloc(sizeof(double complex) * 12 * V);
    random_spinor(in, V, &rng);
    clphys_lqcd_dslash_plan *pl = make_plan_bc(&g, p, recon, kappa, bc, by_pi);
    apply_full(pl, CLPHYS_LQCD_DSLASH_HOPPING, out, in);
    lqcd_ref_hopping(DIMS, (const double complex *)g.u, in, ref, ph);
    double e = tu_max_rel_err((double *)out, (double *)ref, 24 * V, 1.0);
    print_message("# hopping %s %s recon-%d bc %s: max rel err %.3g\n", layout == CLPHYS_LQCD_AOS ? "AoS" : "SoA",
                  p ? "fp64" : "fp32", recon, bcname, e);
    assert_true(e < tol_of(p));
    apply_full(pl, CLPHYS_LQCD_DSLASH_WILSON, out, in);
    lqcd_ref_wilson(DIMS, (const double complex *)g.u, in, ref, kappa, ph);
    e = tu_max_rel_err((double *)out, (double *)ref, 24 * V, 1.0);
    print_message("# wilson  %s recon-%d: max rel err %.3g\n", p ? "fp64" : "fp32", recon, e);
    assert_true(e < tol_of(p));
    clphys_lqcd_dslash_plan_destroy(pl);
    clphys_lqcd_gauge_destroy(&g);
    free(in), free(out), free(ref);
}

static void test_ref_fp32_r18(void **s)
{
    (void)s;
    check_vs_ref(CLPHYS_FP32, 18);
}
static void test_ref_fp32_r12(void **s)
{
    (void)s;
    check_vs_ref(CLPHYS_FP32, 12);
}
static void test_ref_fp64_r18(void **s)
{
    (void)s;
    if (!have_fp64()) skip();
    check_vs_ref(CLPHYS_FP64, 18);
}
static void test_ref_fp64_r12(void **s)
{
    (void)s;
    if (!have_fp64()) skip();
    check_vs_ref(CLPHYS_FP64, 12);
}

/* The array-of-structures layout (CPUs): reference, even-odd. */
static void test_even_odd(void **state);
static void test_aos(void **s)
{
    (void)s;
    layout = CLPHYS_LQCD_AOS;
    check_vs_ref(CLPHYS_FP32, 12);
    check_vs_ref(CLPHYS_FP32, 18);
    if (have_fp64()) check_vs_ref(CLPHYS_FP64, 18);
    test_even_odd(NULL);
    layout = CLPHYS_LQCD_SOA;
}

/* U = 1: psi(x) = u exp(i p.x) with u an eigenvector of A = sum_mu sin(p_mu) gamma_mu
 * (A^2 = sum sin^2 = s^2, so u = (s + A) v has A u = s u) gives
 * D psi = (1 - 2 kappa sum cos p_mu + 2 i kappa s) psi. */
static void test_free_plane_wave(void **state)
{
    (void)state;
    clphys_precision p = have_fp64() ? CLPHYS_FP64 : CLPHYS_FP32;
    uint64_t rng = tu_rng_init(21);
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    /* a random boundary: the momenta of psi(x + L mu) = exp(i theta) psi(x)
     * are (2 pi n + theta) / L */
    clphys_lqcd_bc bc[4];
    double by_pi[4];
    double complex ph[4];
    char bcname[96];
    random_bc(&rng, bc, by_pi, ph, bcname, sizeof bcname);
    double kappa = 0.125;
    double pm[4], s2 = 0, cs = 0;
    for (int mu = 0; mu < 4; mu++) {
        int n = (int)(tu_uniform(&rng) * DIMS[mu]);
        pm[mu] = (2 * PI * n + carg(ph[mu])) / DIMS[mu];
        s2 += sin(pm[mu]) * sin(pm[mu]);
        cs += cos(pm[mu]);
    }
    double s = sqrt(s2);
    double complex v[12], u[12];
    random_spinor(v, 1, &rng);
    for (int a = 0; a < 4; a++)
        for (int c = 0; c < 3; c++) {
            double complex au = 0;
            for (int mu = 0; mu < 4; mu++)
                au += sin(pm[mu]) * lqcd_phase(lqcd_gamma_phase[mu][a]) * v[lqcd_gamma_col[mu][a] * 3 + c];
            u[a * 3 + c] = s * v[a * 3 + c] + au;
        }
    double complex *in = malloc(sizeof(double complex) * 12 * V), *out = malloc(sizeof(double complex) * 12 * V),
                   *ref = malloc(sizeof(double complex) * 12 * V);
    double complex lambda = 1 - 2 * kappa * cs + 2 * I * kappa * s;
    for (long long x = 0; x < V; x++) {
        int c[4];
        lqcd_coords(DIMS, x, c);
        double ph = pm[0] * c[0] + pm[1] * c[1] + pm[2] * c[2] + pm[3] * c[3];
        for (int k = 0; k < 12; k++) {
            in[x * 12 + k] = u[k] * cexp(I * ph);
            ref[x * 12 + k] = lambda * in[x * 12 + k];
        }
    }
    for (int recon = 12; recon <= 18; recon += 6) {
        clphys_lqcd_dslash_plan *pl = make_plan_bc(&g, p, recon, kappa, bc, by_pi);
        apply_full(pl, CLPHYS_LQCD_DSLASH_WILSON, out, in);
        double e = tu_max_rel_err((double *)out, (double *)ref, 24 * V, 1.0);
        print_message("# plane wave bc %s p=(%.3f %.3f %.3f %.3f) lambda=%.6f%+.6fi recon-%d: err %.3g\n", bcname,
                      pm[0], pm[1], pm[2], pm[3], creal(lambda), cimag(lambda), recon, e);
        assert_true(e < 10 * tol_of(p));
        clphys_lqcd_dslash_plan_destroy(pl);
    }
    clphys_lqcd_gauge_destroy(&g);
    free(in), free(out), free(ref);
}

static double complex inner(const double complex *a, const double complex *b, long long n)
{
    double complex s = 0;
    for (long long i = 0; i < n; i++) s += conj(a[i]) * b[i];
    return s;
}

static void gamma5(double complex *psi, long long vol)
{
    for (long long x = 0; x < vol; x++)
        for (int k = 6; k < 12; k++) psi[x * 12 + k] = -psi[x * 12 + k];
}

/* <chi, g5 D g5 psi> = <D chi, psi> with the device D, with a random
 * boundary (the backward hop's phase is the conjugate of the forward's). */
static void test_gamma5_hermiticity(void **state)
{
    (void)state;
    clphys_precision p = have_fp64() ? CLPHYS_FP64 : CLPHYS_FP32;
    uint64_t rng = tu_rng_init(31);
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 31);
    double complex *psi = malloc(sizeof(double complex) * 12 * V), *chi = malloc(sizeof(double complex) * 12 * V),
                   *t = malloc(sizeof(double complex) * 12 * V), *dchi = malloc(sizeof(double complex) * 12 * V);
    random_spinor(psi, V, &rng);
    random_spinor(chi, V, &rng);
    clphys_lqcd_bc bc[4];
    double by_pi[4];
    double complex ph[4];
    char bcname[96];
    random_bc(&rng, bc, by_pi, ph, bcname, sizeof bcname);
    print_message("# boundary %s\n", bcname);
    clphys_lqcd_dslash_plan *pl = make_plan_bc(&g, p, 18, 0.13, bc, by_pi);
    gamma5(psi, V);
    apply_full(pl, CLPHYS_LQCD_DSLASH_WILSON, t, psi);
    gamma5(t, V);
    gamma5(psi, V);
    apply_full(pl, CLPHYS_LQCD_DSLASH_WILSON, dchi, chi);
    double complex l = inner(chi, t, 12 * V), r = inner(dchi, psi, 12 * V);
    double e = cabs(l - r) / cabs(r);
    print_message("# gamma5-hermiticity: <chi,g5Dg5psi>=%.10g%+.10gi rel diff %.3g\n", creal(l), cimag(l), e);
    assert_true(e < (p == CLPHYS_FP64 ? 1e-12 : 1e-5));
    clphys_lqcd_dslash_plan_destroy(pl);
    clphys_lqcd_gauge_destroy(&g);
    free(psi), free(chi), free(t), free(dchi);
}

/* D[U^g](g psi) = g D[U] psi, U^g_mu(x) = g(x) U_mu(x) g(x+mu)^+. */
static void test_gauge_covariance(void **state)
{
    (void)state;
    clphys_precision p = have_fp64() ? CLPHYS_FP64 : CLPHYS_FP32;
    uint64_t rng = tu_rng_init(41);
    clphys_lqcd_gauge_field g, gt, gx;
    int gdims[4] = {DIMS[0], DIMS[1], DIMS[2], DIMS[3]};
    assert_int_equal(clphys_lqcd_gauge_create(gdims, &g), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_gauge_create(gdims, &gt), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_gauge_create(gdims, &gx), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 41);
    clphys_lqcd_gauge_hot(&gx, tu_seed() + 42); /* gx->u[site*4 + 0] holds g(x) */
    const double complex *U = (const double complex *)g.u, *G = (const double complex *)gx.u;
    double complex *Ut = (double complex *)gt.u;
    for (long long x = 0; x < V; x++)
        for (int mu = 0; mu < 4; mu++) {
            double complex tmp[9];
            long long xp = lqcd_neighbor(DIMS, x, mu, 1);
            lqcd_su3_mul(tmp, G + x * 36, U + (x * 4 + mu) * 9);
            lqcd_su3_mul_dag(Ut + (x * 4 + mu) * 9, tmp, G + xp * 36);
        }
    /* the plaquette is gauge invariant */
    const double plaq = clphys_lqcd_gauge_plaquette(&g), plaq_t = clphys_lqcd_gauge_plaquette(&gt);
    print_message("# plaquette %.15f, gauge transformed %.15f\n", plaq, plaq_t);
    assert_true(fabs(plaq_t - plaq) < 1e-13);
    double complex *psi = malloc(sizeof(double complex) * 12 * V), *gpsi = malloc(sizeof(double complex) * 12 * V),
                   *a = malloc(sizeof(double complex) * 12 * V), *b = malloc(sizeof(double complex) * 12 * V),
                   *gb = malloc(sizeof(double complex) * 12 * V);
    random_spinor(psi, V, &rng);
    for (long long x = 0; x < V; x++)
        for (int s = 0; s < 4; s++)
            for (int i = 0; i < 3; i++) {
                double complex acc = 0, acc2 = 0;
                for (int j = 0; j < 3; j++) acc += G[x * 36 + i * 3 + j] * psi[x * 12 + s * 3 + j];
                gpsi[x * 12 + s * 3 + i] = acc;
                (void)acc2;
            }
    int anti = 1;
    for (int recon = 12; recon <= 18; recon += 6) {
        clphys_lqcd_dslash_plan *p1 = make_plan(&g, p, recon, 0.12, anti), *p2 = make_plan(&gt, p, recon, 0.12, anti);
        apply_full(p1, CLPHYS_LQCD_DSLASH_WILSON, b, psi);
        apply_full(p2, CLPHYS_LQCD_DSLASH_WILSON, a, gpsi);
        for (long long x = 0; x < V; x++)
            for (int s = 0; s < 4; s++)
                for (int i = 0; i < 3; i++) {
                    double complex acc = 0;
                    for (int j = 0; j < 3; j++) acc += G[x * 36 + i * 3 + j] * b[x * 12 + s * 3 + j];
                    gb[x * 12 + s * 3 + i] = acc;
                }
        double e = tu_max_rel_err((double *)a, (double *)gb, 24 * V, 1.0);
        print_message("# gauge covariance recon-%d: max rel err %.3g\n", recon, e);
        assert_true(e < 10 * tol_of(p));
        clphys_lqcd_dslash_plan_destroy(p1);
        clphys_lqcd_dslash_plan_destroy(p2);
    }
    clphys_lqcd_gauge_destroy(&g), clphys_lqcd_gauge_destroy(&gt), clphys_lqcd_gauge_destroy(&gx);
    free(psi), free(gpsi), free(a), free(b), free(gb);
}

static void test_recon12_equals_recon18(void **state)
{
    (void)state;
    uint64_t rng = tu_rng_init(51);
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 51);
    double complex *in = malloc(sizeof(double complex) * 12 * V), *a = malloc(sizeof(double complex) * 12 * V),
                   *b = malloc(sizeof(double complex) * 12 * V);
    random_spinor(in, V, &rng);
    for (int p = 0; p <= (have_fp64() ? 1 : 0); p++) {
        clphys_lqcd_dslash_plan *p12 = make_plan(&g, (clphys_precision)p, 12, 0.1, 0);
        clphys_lqcd_dslash_plan *p18 = make_plan(&g, (clphys_precision)p, 18, 0.1, 0);
        apply_full(p12, CLPHYS_LQCD_DSLASH_HOPPING, a, in);
        apply_full(p18, CLPHYS_LQCD_DSLASH_HOPPING, b, in);
        double e = tu_max_rel_err((double *)a, (double *)b, 24 * V, 1.0);
        print_message("# recon-12 vs recon-18 %s: %.3g\n", p ? "fp64" : "fp32", e);
        assert_true(e < tol_of((clphys_precision)p));
        clphys_lqcd_dslash_plan_destroy(p12);
        clphys_lqcd_dslash_plan_destroy(p18);
    }
    clphys_lqcd_gauge_destroy(&g);
    free(in), free(a), free(b);
}

/* Half-field ops: H_eo, H_oe against the full reference, and
 * M = 1 - kappa^2 H_eo H_oe against the Schur complement on the full lattice. */
static void test_even_odd(void **state)
{
    (void)state;
    uint64_t rng = tu_rng_init(61);
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 61);
    const double kappa = 0.137;
    double complex *in = malloc(sizeof(double complex) * 12 * V), *out = malloc(sizeof(double complex) * 12 * V),
                   *t1 = malloc(sizeof(double complex) * 12 * V), *t2 = malloc(sizeof(double complex) * 12 * V);
    double *nan = malloc(sizeof(double) * 24 * V);
    tu_poison_f64(nan, 24 * V);
    random_spinor(in, V, &rng);
    int parity_of[V];
    for (long long x = 0; x < V; x++) {
        int c[4];
        lqcd_coords(DIMS, x, c);
        parity_of[x] = (c[0] + c[1] + c[2] + c[3]) & 1;
    }
    for (int p = 0; p <= (have_fp64() ? 1 : 0); p++)
        for (int recon = 12; recon <= 18; recon += 6) {
            clphys_lqcd_dslash_plan *pl = make_plan(&g, (clphys_precision)p, recon, kappa, 1);
            cl_mem he, ho;
            assert_int_equal(clphys_lqcd_dslash_field_create(pl, 1, &he), CLPHYS_SUCCESS);
            assert_int_equal(clphys_lqcd_dslash_field_create(pl, 1, &ho), CLPHYS_SUCCESS);
            for (int op = 0; op < 3; op++) {
                /* op 0: H_eo (odd -> even), 1: H_oe (even -> odd), 2: M on even */
                int src = op == 0 ? 1 : 0, dst = op == 1 ? 1 : 0;
                for (long long x = 0; x < V; x++)
                    for (int k = 0; k < 12; k++) t1[x * 12 + k] = parity_of[x] == src ? in[x * 12 + k] : 0;
                lqcd_ref_hopping(DIMS, (const double complex *)g.u, t1, t2, ph_t(1));
                if (op == 2) {
                    for (long long x = 0; x < V; x++)
                        if (parity_of[x] == 0) memset(t2 + x * 12, 0, sizeof(double complex) * 12);
                    lqcd_ref_hopping(DIMS, (const double complex *)g.u, t2, out, ph_t(1));
                    for (long long k = 0; k < 12 * V; k++) t2[k] = t1[k] - kappa * kappa * out[k];
                }
                cl_mem a = src ? ho : he, b = dst ? ho : he;
                if (op == 2) {
                    a = he;
                    assert_int_equal(clphys_lqcd_dslash_field_write(pl, a, src, (double *)in), CLPHYS_SUCCESS);
                    b = ho; /* output even half: reuse ho buffer as storage */
                }
                assert_int_equal(clphys_lqcd_dslash_field_write(pl, a, src, (double *)in), CLPHYS_SUCCESS);
                assert_int_equal(clphys_lqcd_dslash_field_write(pl, b, dst, nan), CLPHYS_SUCCESS);
                clphys_lqcd_dslash_op o = op == 0   ? CLPHYS_LQCD_DSLASH_H_EO
                                          : op == 1 ? CLPHYS_LQCD_DSLASH_H_OE
                                                    : CLPHYS_LQCD_DSLASH_EO_PREC;
                assert_int_equal(clphys_lqcd_dslash_apply(pl, o, b, a, NULL), CLPHYS_SUCCESS);
                for (long long k = 0; k < 12 * V; k++) out[k] = 0;
                assert_int_equal(clphys_lqcd_dslash_field_read(pl, b, dst, (double *)out), CLPHYS_SUCCESS);
                for (long long x = 0; x < V; x++)
                    if (parity_of[x] != dst) memset(t2 + x * 12, 0, sizeof(double complex) * 12);
                double e = tu_max_rel_err((double *)out, (double *)t2, 24 * V, 1.0);
                print_message("# even-odd %s op %s %s recon-%d: %.3g\n", layout == CLPHYS_LQCD_AOS ? "AoS" : "SoA",
                              op == 0   ? "H_eo"
                              : op == 1 ? "H_oe"
                                        : "M_ee",
                              p ? "fp64" : "fp32", recon, e);
                assert_true(e < tol_of((clphys_precision)p));
            }
            clReleaseMemObject(he);
            clReleaseMemObject(ho);
            clphys_lqcd_dslash_plan_destroy(pl);
        }
    clphys_lqcd_gauge_destroy(&g);
    free(in), free(out), free(t1), free(t2), free(nan);
}

static void test_bad_input(void **state)
{
    (void)state;
    int odd[4] = {4, 3, 4, 4};
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(odd, &g), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(clphys_last_error(NULL), "even"));
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_dslash_params prm = {.precision = CLPHYS_FP32, .reconstruct = 8, .kappa = 0.1};
    clphys_lqcd_dslash_plan *pl = NULL;
    assert_int_equal(clphys_lqcd_dslash_plan_create(ctx, &g, &prm, &pl), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_null(pl);
    /* kappa has no default; an unknown layout */
    const double bad_kappa[3] = {0, -0.1, NAN};
    for (int i = 0; i < 3; i++) {
        prm = (clphys_lqcd_dslash_params){.kappa = bad_kappa[i]};
        assert_int_equal(clphys_lqcd_dslash_plan_create(ctx, &g, &prm, &pl), CLPHYS_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(clphys_last_error(ctx), "kappa"));
    }
    prm = (clphys_lqcd_dslash_params){.kappa = 0.1, .layout = 3};
    assert_int_equal(clphys_lqcd_dslash_plan_create(ctx, &g, &prm, &pl), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_null(pl);
    /* an unknown boundary, a phase that is not finite */
    prm = (clphys_lqcd_dslash_params){.kappa = 0.1, .bc = {CLPHYS_LQCD_BC_PERIODIC, (clphys_lqcd_bc)9}};
    assert_int_equal(clphys_lqcd_dslash_plan_create(ctx, &g, &prm, &pl), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(clphys_last_error(ctx), "direction 1"));
    prm = (clphys_lqcd_dslash_params){
        .kappa = 0.1, .bc = {0, 0, CLPHYS_LQCD_BC_PHASE}, .bc_phase_by_pi = {0, 0, INFINITY}};
    assert_int_equal(clphys_lqcd_dslash_plan_create(ctx, &g, &prm, &pl), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(clphys_last_error(ctx), "phase of direction 2"));
    assert_null(pl);
    clphys_lqcd_gauge_destroy(&g);
}

/* A zeroed params struct with kappa: fp32, reconstruct-12, SoA on a GPU and
 * AoS on a CPU, boundary p,p,p,a, a tuned work-group size; and it applies D
 * correctly. */
static void test_defaults(void **state)
{
    (void)state;
    uint64_t rng = tu_rng_init(73);
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 73);
    clphys_lqcd_dslash_params prm = {.kappa = 0.11, .no_tune = 1};
    clphys_lqcd_dslash_plan *pl = NULL;
    assert_int_equal(clphys_lqcd_dslash_plan_create(ctx, &g, &prm, &pl), CLPHYS_SUCCESS);
    assert_int_equal(pl->real_size, 4);
    assert_int_equal(pl->p.reconstruct, 12);
    assert_int_equal(pl->p.layout, clphys_context_device(ctx)->is_gpu ? CLPHYS_LQCD_SOA : CLPHYS_LQCD_AOS);
    for (int mu = 0; mu < 4; mu++)
        assert_int_equal(pl->p.bc[mu], mu < 3 ? CLPHYS_LQCD_BC_PERIODIC : CLPHYS_LQCD_BC_ANTIPERIODIC);
    double complex *in = malloc(sizeof(double complex) * 12 * V), *out = malloc(sizeof(double complex) * 12 * V),
                   *ref = malloc(sizeof(double complex) * 12 * V);
    random_spinor(in, V, &rng);
    tu_poison_f64((double *)out, 24 * V);
    assert_int_equal(clphys_lqcd_dslash_apply_host(pl, CLPHYS_LQCD_DSLASH_WILSON, (double *)out, (double *)in),
                     CLPHYS_SUCCESS);
    lqcd_ref_wilson(DIMS, (const double complex *)g.u, in, ref, 0.11, ph_t(1));
    const double e = tu_max_rel_err((double *)out, (double *)ref, 24 * V, 1.0);
    print_message("# zeroed params (kappa 0.11): D against the reference %.3g\n", e);
    assert_true(e < tol_of(CLPHYS_FP32));
    clphys_lqcd_dslash_plan_destroy(pl);
    clphys_lqcd_gauge_destroy(&g);
    free(in), free(out), free(ref);
}

/* The solver's internal kernels against the reference: M^+ = gamma5 M gamma5
 * through the two gamma5-folded hops, and the host-layout import/export
 * (exact: a copy).  Both layouts; outputs poisoned first. */
static void test_solver_kernels(void **state)
{
    (void)state;
    uint64_t rng = tu_rng_init(71);
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 71);
    const double kappa = 0.131;
    double complex *in = malloc(sizeof(double complex) * 12 * V), *ref = malloc(sizeof(double complex) * 12 * V),
                   *t1 = malloc(sizeof(double complex) * 12 * V), *t2 = malloc(sizeof(double complex) * 12 * V),
                   *out = malloc(sizeof(double complex) * 12 * V);
    double *nan = malloc(sizeof(double) * 24 * V);
    tu_poison_f64(nan, 24 * V);
    random_spinor(in, V, &rng);
    int par[V];
    for (long long x = 0; x < V; x++) {
        int c[4];
        lqcd_coords(DIMS, x, c);
        par[x] = (c[0] + c[1] + c[2] + c[3]) & 1;
    }
    /* reference: g5 (1 - kappa^2 H_eo H_oe) g5 on the even sites */
    for (long long x = 0; x < V; x++)
        for (int k = 0; k < 12; k++) t1[x * 12 + k] = par[x] ? 0 : (k < 6 ? 1 : -1) * in[x * 12 + k];
    lqcd_ref_hopping(DIMS, (const double complex *)g.u, t1, t2, ph_t(1));
    for (long long x = 0; x < V; x++)
        if (!par[x]) memset(t2 + x * 12, 0, sizeof(double complex) * 12);
    lqcd_ref_hopping(DIMS, (const double complex *)g.u, t2, ref, ph_t(1));
    for (long long x = 0; x < V; x++)
        for (int k = 0; k < 12; k++)
            ref[x * 12 + k] = par[x] ? 0 : (k < 6 ? 1 : -1) * (t1[x * 12 + k] - kappa * kappa * ref[x * 12 + k]);
    for (int lay = 0; lay < 2; lay++)
        for (int p = 0; p <= (have_fp64() ? 1 : 0); p++) {
            layout = lay ? CLPHYS_LQCD_AOS : CLPHYS_LQCD_SOA;
            clphys_lqcd_dslash_plan *pl = make_plan(&g, (clphys_precision)p, 18, kappa, 1);
            layout = CLPHYS_LQCD_SOA;
            cl_mem he, ho, hb;
            assert_int_equal(clphys_lqcd_dslash_field_create(pl, 1, &he), CLPHYS_SUCCESS);
            assert_int_equal(clphys_lqcd_dslash_field_create(pl, 1, &ho), CLPHYS_SUCCESS);
            assert_int_equal(clphys_lqcd_dslash_field_create(pl, 1, &hb), CLPHYS_SUCCESS);
            assert_int_equal(clphys_lqcd_dslash_field_write(pl, he, 0, (double *)in), CLPHYS_SUCCESS);
            assert_int_equal(clphys_lqcd_dslash_field_write(pl, ho, 1, nan), CLPHYS_SUCCESS);
            assert_int_equal(clphys_lqcd_dslash_field_write(pl, hb, 0, nan), CLPHYS_SUCCESS);
            assert_int_equal(lqcd_hop_g5(pl, ho, he, NULL, 0, 1, 1, NULL), CLPHYS_SUCCESS);
            assert_int_equal(lqcd_hop_g5(pl, hb, ho, he, -kappa * kappa, 0, 2, NULL), CLPHYS_SUCCESS);
            memset(out, 0, sizeof(double complex) * 12 * V);
            assert_int_equal(clphys_lqcd_dslash_field_read(pl, hb, 0, (double *)out), CLPHYS_SUCCESS);
            double e = tu_max_rel_err((double *)out, (double *)ref, 24 * V, 1.0);
            print_message("# M^+ by gamma5-folded hops %s %s: %.3g\n", lay ? "AoS" : "SoA", p ? "fp64" : "fp32", e);
            assert_true(e < tol_of((clphys_precision)p));
            if (p == 1) { /* import/export of host spinors (fp64 plans) */
                cl_mem host;
                size_t n = V, bytes = sizeof(double) * 24 * V;
                assert_int_equal(clphys_lqcd_dslash_field_create(pl, 0, &host), CLPHYS_SUCCESS);
                assert_int_equal(clphys_lqcd_dslash_field_write(pl, he, 0, nan), CLPHYS_SUCCESS);
                assert_int_equal(clphys_lqcd_dslash_field_write(pl, ho, 1, nan), CLPHYS_SUCCESS);
                assert_int_equal(
                    clEnqueueWriteBuffer(clphys_context_queue(ctx), host, CL_TRUE, 0, bytes, in, 0, NULL, NULL),
                    CL_SUCCESS);
                cl_mem args[3] = {he, ho, host};
                for (cl_uint i = 0; i < 3; i++)
                    assert_int_equal(clSetKernelArg(pl->imp, i, sizeof(cl_mem), &args[i]), CL_SUCCESS);
                assert_int_equal(
                    clEnqueueNDRangeKernel(clphys_context_queue(ctx), pl->imp, 1, NULL, &n, NULL, 0, NULL, NULL),
                    CL_SUCCESS);
                memcpy(out, nan, bytes);
                assert_int_equal(clphys_lqcd_dslash_field_read(pl, he, 0, (double *)out), CLPHYS_SUCCESS);
                assert_int_equal(clphys_lqcd_dslash_field_read(pl, ho, 1, (double *)out), CLPHYS_SUCCESS);
                assert_memory_equal(out, in, bytes);
                /* export: back into the (poisoned) host-layout buffer */
                assert_int_equal(
                    clEnqueueWriteBuffer(clphys_context_queue(ctx), host, CL_TRUE, 0, bytes, nan, 0, NULL, NULL),
                    CL_SUCCESS);
                cl_mem eargs[3] = {host, he, ho};
                for (cl_uint i = 0; i < 3; i++)
                    assert_int_equal(clSetKernelArg(pl->exp, i, sizeof(cl_mem), &eargs[i]), CL_SUCCESS);
                assert_int_equal(
                    clEnqueueNDRangeKernel(clphys_context_queue(ctx), pl->exp, 1, NULL, &n, NULL, 0, NULL, NULL),
                    CL_SUCCESS);
                memcpy(out, nan, bytes);
                assert_int_equal(
                    clEnqueueReadBuffer(clphys_context_queue(ctx), host, CL_TRUE, 0, bytes, out, 0, NULL, NULL),
                    CL_SUCCESS);
                assert_memory_equal(out, in, bytes);
                clReleaseMemObject(host);
            }
            clReleaseMemObject(he);
            clReleaseMemObject(ho);
            clReleaseMemObject(hb);
            clphys_lqcd_dslash_plan_destroy(pl);
        }
    clphys_lqcd_gauge_destroy(&g);
    free(in), free(ref), free(t1), free(t2), free(out), free(nan);
}

/* Files named tune-*.txt in dir: their count, and the last one's path. */
static int tune_files(const char *dir, char *path, size_t n)
{
    DIR *d = opendir(dir);
    int count = 0;
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d));) {
        const size_t l = strlen(e->d_name);
        if (!strncmp(e->d_name, "tune-", 5) && l > 4 && !strcmp(e->d_name + l - 4, ".txt")) {
            snprintf(path, n, "%s/%s", dir, e->d_name);
            count++;
        }
    }
    closedir(d);
    return count;
}

static size_t tuned(const clphys_lqcd_gauge_field *g, int no_tune, int *source)
{
    clphys_lqcd_dslash_params prm = {
        .precision = CLPHYS_FP32, .reconstruct = 12, .kappa = 0.1, .no_tune = no_tune, .layout = CLPHYS_LQCD_SOA};
    clphys_lqcd_dslash_plan *pl = NULL;
    clphys_status st = clphys_lqcd_dslash_plan_create(ctx, g, &prm, &pl);
    if (st) fail_msg("plan: %s: %s", clphys_status_string(st), clphys_last_error(ctx));
    size_t wg = clphys_lqcd_dslash_local_size(pl, source);
    assert_int_equal(*source, clphys_lqcd_dslash_plan_tune_source(pl)); /* the two ways say the same */
    clphys_lqcd_dslash_plan_destroy(pl);
    return wg;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Work-group tuning through the tuning cache (platform/tune.c, tested on
 * its own in test_tune.c): the choice is a candidate and is stored under
 * the dslash key; the next plan takes the stored size, whatever it is; a
 * damaged file or a size above the device maximum is ignored, measured
 * again and rewritten; both switches turn tuning off. */
static void test_tuning(void **state)
{
    (void)state;
    char dir[512], path[4096] = "";
    tu_tempdir("dslash_tune", dir, sizeof dir);
    tu_setenv("CLPHYS_CACHE_DIR", dir);
    tu_setenv("CLPHYS_NO_TUNE", NULL);
    tu_setenv("CLPHYS_NO_CACHE", NULL);
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, 5);
    int src;
    size_t wg = tuned(&g, 0, &src);
    assert_int_equal(src, CLPHYS_TUNE_MEASURED);
    assert_true(wg == 0 || wg == 32 || wg == 64 || wg == 128 || wg == 256 || wg == 512);
    assert_int_equal(tune_files(dir, path, sizeof path), 1);
    const clphys_device_info *dev = clphys_context_device(ctx);
    char fields[128], value[CP_TUNE_VALUE_MAX];
    snprintf(fields, sizeof fields, "reconstruct=12 layout=soa lattice=%dx%dx%dx%d", DIMS[0], DIMS[1], DIMS[2],
             DIMS[3]);
    const cp_tune_key key = {"lqcd_dslash", "local_size", "fp32", fields};
    assert_int_equal(cp_tune_get(dev, &key, value, sizeof value), 1);
    size_t stored = 1;
    assert_int_equal(cp_tune_value_size(value, "local_size", &stored), 1);
    assert_int_equal(stored, wg);
    assert_int_equal(tuned(&g, 0, &src), wg); /* the next plan reads the file */
    assert_int_equal(src, CLPHYS_TUNE_CACHE);
    /* the stored size is what the plan uses */
    const size_t other = wg == 32 ? 64 : 32;
    snprintf(value, sizeof value, "local_size=%zu", other);
    assert_int_equal(cp_tune_put(dev, &key, value), 0);
    assert_int_equal(tuned(&g, 0, &src), other);
    assert_int_equal(src, CLPHYS_TUNE_CACHE);
    /* a size above the device maximum, then a damaged file: measured again and rewritten */
    snprintf(value, sizeof value, "local_size=%zu", dev->max_work_group_size + 1);
    assert_int_equal(cp_tune_put(dev, &key, value), 0);
    for (int i = 0; i < 2; i++) {
        if (i) write_text(path, "garbage\n");
        size_t w = tuned(&g, 0, &src);
        assert_int_equal(src, CLPHYS_TUNE_MEASURED);
        assert_true(w == 0 || w == 32 || w == 64 || w == 128 || w == 256 || w == 512);
        tuned(&g, 0, &src); /* rewritten: read back */
        assert_int_equal(src, CLPHYS_TUNE_CACHE);
    }
    /* switches: the params field and the environment */
    tuned(&g, 1, &src);
    assert_int_equal(src, CLPHYS_TUNE_HEURISTIC);
    tu_setenv("CLPHYS_NO_TUNE", "1");
    tuned(&g, 0, &src);
    assert_int_equal(src, CLPHYS_TUNE_HEURISTIC);
    tu_remove_tempdir(dir); /* the tuning file, its lock and any program binaries */
    clphys_lqcd_gauge_destroy(&g);
    tu_env_restore();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gamma_algebra),
        cmocka_unit_test(test_ref_fp32_r18),
        cmocka_unit_test(test_ref_fp32_r12),
        cmocka_unit_test(test_ref_fp64_r18),
        cmocka_unit_test(test_ref_fp64_r12),
        cmocka_unit_test(test_free_plane_wave),
        cmocka_unit_test(test_gamma5_hermiticity),
        cmocka_unit_test(test_gauge_covariance),
        cmocka_unit_test(test_recon12_equals_recon18),
        cmocka_unit_test(test_even_odd),
        cmocka_unit_test(test_aos),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_tuning),
        cmocka_unit_test(test_solver_kernels),
    };
    return tu_run_group(tests, .ctx = &ctx, .nctx = 1);
}
