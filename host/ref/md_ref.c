/* md_ref.c — fp64 CPU references of the md path (see md_ref.h). */
#include "md_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double min_image(double d, double l) { return d - l * nearbyint(d / l); }

static double dist2(const double *pos, const double box[3], size_t i, size_t j)
{
    double r2 = 0;
    for (int c = 0; c < 3; c++) {
        double d = min_image(pos[3 * j + c] - pos[3 * i + c], box[c]);
        r2 += d * d;
    }
    return r2;
}

int md_ref_pairs(size_t n, const double *pos, const double box[3], double rs, int **pairs, size_t *npairs)
{
    size_t cap = 1024, m = 0;
    int *p = malloc(2 * cap * sizeof *p);
    if (!p) return -1;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            double r2 = dist2(pos, box, i, j);
            if (r2 >= rs * rs) continue;
            if (m == cap) {
                int *q = realloc(p, 4 * cap * sizeof *p);
                if (!q) {
                    free(p);
                    return -1;
                }
                p = q, cap *= 2;
            }
            p[2 * m] = (int)i, p[2 * m + 1] = (int)j, m++;
        }
    *pairs = p, *npairs = m;
    return 0;
}

size_t md_ref_pair_count(size_t n, const double *pos, const double box[3], double rs)
{
    size_t m = 0;
    /* rows shrink with i: dynamic chunks keep the threads balanced */
#pragma omp parallel for reduction(+ : m) schedule(dynamic, 256)
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            double r2 = dist2(pos, box, i, j);
            m += r2 < rs * rs;
        }
    return m;
}

/* One pair: adds to f_i, f_j (when non-NULL), returns whether within r_cut. */
static void pair(const double *pos, const double box[3], size_t i, size_t j, double eps, double sig2, double rc2,
                 double shift, double *fi, double *fj, double *e, double *w)
{
    double d[3], r2 = 0;
    for (int c = 0; c < 3; c++) {
        d[c] = min_image(pos[3 * i + c] - pos[3 * j + c], box[c]);
        r2 += d[c] * d[c];
    }
    if (r2 >= rc2) return;
    double sr2 = sig2 / r2, sr6 = sr2 * sr2 * sr2;
    double fpair = 24 * eps * sr6 * (2 * sr6 - 1) / r2;
    for (int c = 0; c < 3; c++) {
        fi[c] += fpair * d[c];
        if (fj) fj[c] -= fpair * d[c];
    }
    *e += 4 * eps * sr6 * (sr6 - 1) - shift;
    *w += fpair * r2;
}

static double shift_of(double eps, double sigma, double rc, int shifted)
{
    if (!shifted) return 0;
    double s6 = pow(sigma / rc, 6);
    return 4 * eps * s6 * (s6 - 1);
}

void md_ref_lj(size_t n, const double *pos, const double box[3], double eps, double sigma, double r_cut, int shifted,
               double *f, double *pe, double *virial)
{
    double shift = shift_of(eps, sigma, r_cut, shifted), e = 0, w = 0;
    memset(f, 0, 3 * n * sizeof *f);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            pair(pos, box, i, j, eps, sigma * sigma, r_cut * r_cut, shift, f + 3 * i, f + 3 * j, &e, &w);
    *pe = e, *virial = w;
}

void md_ref_lj_list(size_t n, const double *pos, const double box[3], double eps, double sigma, double r_cut,
                    int shifted, const size_t *off, const int *list, double *f, double *pe, double *virial)
{
    double shift = shift_of(eps, sigma, r_cut, shifted), e = 0, w = 0;
    memset(f, 0, 3 * n * sizeof *f);
    for (size_t i = 0; i < n; i++)
        for (size_t k = off[i]; k < off[i + 1]; k++)
            pair(pos, box, i, (size_t)list[k], eps, sigma * sigma, r_cut * r_cut, shift, f + 3 * i, NULL, &e, &w);
    *pe = e / 2, *virial = w / 2;
}

/* S_i,c += |f_ij,c| for one pair within r_cut; flags i when r^2 lies
 * within rel_window of r_cut^2 (j is flagged from its own row: every pair
 * is visited from both ends). */
static void pair_scale(const double *pos, const double box[3], size_t i, size_t j, double eps, double sig2, double rc2,
                       double rel_window, double *s, char *amb)
{
    double d[3], r2 = 0;
    for (int c = 0; c < 3; c++) {
        d[c] = min_image(pos[3 * i + c] - pos[3 * j + c], box[c]);
        r2 += d[c] * d[c];
    }
    if (fabs(r2 - rc2) <= rel_window * rc2) amb[i] = 1;
    if (r2 >= rc2) return;
    double sr2 = sig2 / r2, sr6 = sr2 * sr2 * sr2;
    double fpair = 24 * eps * sr6 * (2 * sr6 - 1) / r2;
    for (int c = 0; c < 3; c++) s[3 * i + c] += fabs(fpair * d[c]);
}

int md_ref_force_scale(size_t n, const double *pos, const double box[3], double eps, double sigma, double r_cut,
                       const size_t *off, const int *list, double rel_window, md_ref_scale *sc)
{
    sc->n = n;
    sc->s = calloc(3 * n, sizeof *sc->s);
    sc->amb = calloc(n, 1);
    if (!sc->s || !sc->amb) {
        md_ref_scale_free(sc);
        return -1;
    }
    const double sig2 = sigma * sigma, rc2 = r_cut * r_cut;
    /* row i writes S_i and flag i only */
#pragma omp parallel for schedule(dynamic, 256)
    for (size_t i = 0; i < n; i++) {
        if (off)
            for (size_t k = off[i]; k < off[i + 1]; k++)
                pair_scale(pos, box, i, (size_t)list[k], eps, sig2, rc2, rel_window, sc->s, sc->amb);
        else
            for (size_t j = 0; j < n; j++)
                if (j != i) pair_scale(pos, box, i, j, eps, sig2, rc2, rel_window, sc->s, sc->amb);
    }
    return 0;
}

void md_ref_scale_free(md_ref_scale *sc)
{
    free(sc->s), free(sc->amb);
    sc->s = NULL, sc->amb = NULL;
}

double md_ref_force_error_scaled(const md_ref_scale *sc, const double *f, const double *ref, size_t *excluded)
{
    double num = 0, den = 0;
    size_t ex = 0;
    int bad = 0;
    for (size_t i = 0; i < sc->n; i++) {
        if (sc->amb[i]) {
            ex++;
            continue;
        }
        for (int c = 0; c < 3; c++) {
            double d = f[3 * i + c] - ref[3 * i + c];
            bad |= !isfinite(d);
            num += d * d;
            den += sc->s[3 * i + c] * sc->s[3 * i + c];
        }
    }
    if (excluded) *excluded = ex;
    if (bad) return INFINITY;
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

double md_ref_force_error(size_t n, const double *pos, const double box[3], double eps, double sigma, double r_cut,
                          const size_t *off, const int *list, const double *f, const double *ref, double rel_window,
                          size_t *excluded)
{
    md_ref_scale sc;
    if (md_ref_force_scale(n, pos, box, eps, sigma, r_cut, off, list, rel_window, &sc)) return INFINITY;
    double e = md_ref_force_error_scaled(&sc, f, ref, excluded);
    md_ref_scale_free(&sc);
    return e;
}

/* The force on i from j, f_ij (f_ji = -f_ij); r2 its distance squared. */
static void pair_force(const double *pos, const double box[3], size_t i, size_t j, double eps, double sig2,
                       double fij[3], double *r2)
{
    double d[3];
    *r2 = 0;
    for (int c = 0; c < 3; c++) {
        d[c] = min_image(pos[3 * i + c] - pos[3 * j + c], box[c]);
        *r2 += d[c] * d[c];
    }
    double sr2 = sig2 / *r2, sr6 = sr2 * sr2 * sr2;
    double fpair = 24 * eps * sr6 * (2 * sr6 - 1) / *r2;
    for (int c = 0; c < 3; c++) fij[c] = fpair * d[c];
}

/* |a - b|^2 over the 3 components */
static double sq3(const double *a, const double *b)
{
    double s = 0;
    for (int c = 0; c < 3; c++) s += (a[c] - b[c]) * (a[c] - b[c]);
    return s;
}

size_t md_ref_settle_cut_pairs(size_t n, const double *pos, const double box[3], double eps, double sigma, double r_cut,
                               const double *f, double *ref, double rel_window)
{
    const double sig2 = sigma * sigma, rc2 = r_cut * r_cut;
    size_t settled = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            double fij[3], r2;
            pair_force(pos, box, i, j, eps, sig2, fij, &r2);
            if (!(fabs(r2 - rc2) <= rel_window * rc2)) continue;
            settled++;
            /* the pair's force in ref (r2 < rc2) or not; the other choice */
            const double sgn = r2 < rc2 ? -1 : 1;
            double oi[3], oj[3];
            for (int c = 0; c < 3; c++) oi[c] = ref[3 * i + c] + sgn * fij[c], oj[c] = ref[3 * j + c] - sgn * fij[c];
            const double keep = sq3(f + 3 * i, ref + 3 * i) + sq3(f + 3 * j, ref + 3 * j);
            if (sq3(f + 3 * i, oi) + sq3(f + 3 * j, oj) < keep)
                for (int c = 0; c < 3; c++) ref[3 * i + c] = oi[c], ref[3 * j + c] = oj[c];
        }
    return settled;
}
