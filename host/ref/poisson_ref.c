/* poisson_ref.c — fp64 reference of the Poisson path (poisson_ref.h). */
#include "poisson_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t poisson_ref_neighbor(int nx, int ny, int nz, size_t c, int d)
{
    const size_t plane = (size_t)nx * ny;
    const int i = (int)(c % (size_t)nx), j = (int)(c / (size_t)nx % (size_t)ny), k = (int)(c / plane);
    switch (d) {
    case -3:
        return k > 0 ? c - plane : c;
    case 3:
        return k + 1 < nz ? c + plane : c;
    case -2:
        return j > 0 ? c - (size_t)nx : c + (size_t)nx * (ny - 1);
    case 2:
        return j + 1 < ny ? c + (size_t)nx : c - (size_t)nx * (ny - 1);
    case -1:
        return i > 0 ? c - 1 : c + (size_t)nx - 1;
    case 1:
        return i + 1 < nx ? c + 1 : c + 1 - (size_t)nx;
    default:
        return c;
    }
}

void poisson_ref_apply(int nx, int ny, int nz, const double *a, const double *x, double *y)
{
    const size_t n = (size_t)nx * ny * nz;
#pragma omp parallel for schedule(static)
    for (size_t c = 0; c < n; c++) {
        double s = 0;
        for (int d = -3; d <= 3; d++) s += a[(size_t)(d + 3) * n + c] * x[poisson_ref_neighbor(nx, ny, nz, c, d)];
        y[c] = s;
    }
}

double poisson_ref_residual(int nx, int ny, int nz, const double *a, const double *b, const double *x)
{
    const size_t n = (size_t)nx * ny * nz;
    double *y = malloc(n * sizeof(double));
    if (!y) return NAN;
    poisson_ref_apply(nx, ny, nz, a, x, y);
    double rr = 0, bb = 0;
    for (size_t c = 0; c < n; c++) rr += (b[c] - y[c]) * (b[c] - y[c]), bb += b[c] * b[c];
    free(y);
    return bb > 0 ? sqrt(rr / bb) : 0;
}

/* ---- singular regions ---------------------------------------------------------- */

/* connected components over non-zero couplings, breadth first */
int poisson_ref_projected_rhs(int nx, int ny, int nz, const double *a, const double *w, const unsigned char *mask,
                              const double *rhs, double s, double *b, int *label)
{
    const size_t n = (size_t)nx * ny * nz;
    int *comp = malloc(sizeof(int) * n), *queue = malloc(sizeof(int) * n);
    if (!comp || !queue) {
        free(comp), free(queue);
        return -1;
    }
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

double poisson_ref_region_mean(size_t n, const int *label, int r, const double *w, const double *x)
{
    double sx = 0, sw = 0;
    for (size_t c = 0; c < n; c++)
        if (label[c] == r) sx += w[c] * x[c], sw += w[c];
    return sw > 0 ? sx / sw : 0;
}

/* ---- the V-cycle ---------------------------------------------------------------- */
typedef struct {
    int nx, ny, nz, sx, sy; /* sx, sy: how this level was made from the finer one */
    size_t n;
    double *a; /* 7 n                                                 */
    unsigned char *wet;
    double *x, *x2, *b, *r;
} ref_level;

struct poisson_ref_mg {
    int nlev;
    ref_level *lev;
};

#define A7(L, d, c) (L)->a[(size_t)((d) + 3) * (L)->n + (c)]

static int level_alloc(ref_level *L, int nx, int ny, int nz)
{
    L->nx = nx, L->ny = ny, L->nz = nz;
    L->n = (size_t)nx * ny * nz;
    L->a = calloc(7 * L->n, sizeof(double));
    L->wet = calloc(L->n, 1);
    L->x = calloc(L->n, sizeof(double)), L->x2 = calloc(L->n, sizeof(double));
    L->b = calloc(L->n, sizeof(double)), L->r = calloc(L->n, sizeof(double));
    return L->a && L->wet && L->x && L->x2 && L->b && L->r;
}

static void level_free(ref_level *L) { free(L->a), free(L->wet), free(L->x), free(L->x2), free(L->b), free(L->r); }

static double off_sum(const ref_level *L, size_t c)
{
    double s = 0;
    for (int d = -3; d <= 3; d++) s += d ? fabs(A7(L, d, c)) : 0;
    return s;
}

/* a0 - sum |couplings|, below 1e-12 a0 taken as an exact zero row sum
 * (clphys_poisson.h) */
static double excess(const ref_level *L, size_t c)
{
    const double ex = A7(L, 0, c) - off_sum(L, c);
    return ex > 1e-12 * A7(L, 0, c) ? ex : 0;
}

/* land cells (all 7 zero) become identity rows */
static void set_land(ref_level *L)
{
    for (size_t c = 0; c < L->n; c++)
        if (!L->wet[c]) {
            for (int d = -3; d <= 3; d++) A7(L, d, c) = 0;
            A7(L, 0, c) = 1;
        }
}

static int coarsen(const ref_level *F, ref_level *C, double scale)
{
    const int sx = F->nx > 1, sy = F->ny > 1;
    if (!level_alloc(C, sx ? (F->nx + 1) / 2 : F->nx, sy ? (F->ny + 1) / 2 : F->ny, F->nz)) return 0;
    C->sx = sx, C->sy = sy;
    double *ex = calloc(C->n, sizeof(double));
    if (!ex) return 0;
    const size_t fplane = (size_t)F->nx * F->ny;
    for (size_t f = 0; f < F->n; f++) {
        if (!F->wet[f]) continue;
        const int i = (int)(f % (size_t)F->nx), j = (int)(f / (size_t)F->nx % (size_t)F->ny), k = (int)(f / fplane);
        const size_t cc = (size_t)(i >> sx) + (size_t)C->nx * ((size_t)(j >> sy) + (size_t)C->ny * k);
        C->wet[cc] = 1;
        ex[cc] += excess(F, f);
        for (int d = 1; d <= 3; d++) {
            const double v = A7(F, d, f);
            if (v == 0) continue;
            const size_t g = poisson_ref_neighbor(F->nx, F->ny, F->nz, f, d);
            const int gi = (int)(g % (size_t)F->nx), gj = (int)(g / (size_t)F->nx % (size_t)F->ny),
                      gk = (int)(g / fplane);
            const size_t gc = (size_t)(gi >> sx) + (size_t)C->nx * ((size_t)(gj >> sy) + (size_t)C->ny * gk);
            if (gc == cc) continue; /* inside one coarse cell */
            const double s = d == 3 ? 1.0 : scale;
            A7(C, d, cc) += s * v;
            A7(C, -d, gc) += s * v;
        }
    }
    for (size_t c = 0; c < C->n; c++)
        if (C->wet[c]) A7(C, 0, c) = ex[c] + off_sum(C, c);
    free(ex);
    set_land(C);
    return 1;
}

poisson_ref_mg *poisson_ref_mg_create(int nx, int ny, int nz, const double *a, double coarse_scale)
{
    poisson_ref_mg *mg = calloc(1, sizeof *mg);
    int nlev = 1;
    for (int x = nx, y = ny; x > 1 || y > 1; nlev++) x = (x + 1) / 2, y = (y + 1) / 2;
    if (!mg || !(mg->lev = calloc((size_t)nlev, sizeof(ref_level)))) {
        free(mg);
        return NULL;
    }
    mg->nlev = nlev;
    ref_level *L = &mg->lev[0];
    int ok = level_alloc(L, nx, ny, nz);
    if (ok) {
        memcpy(L->a, a, 7 * L->n * sizeof(double));
        for (size_t c = 0; c < L->n; c++)
            for (int d = -3; d <= 3; d++) L->wet[c] |= A7(L, d, c) != 0;
        set_land(L);
    }
    for (int l = 1; l < nlev && ok; l++) ok = coarsen(&mg->lev[l - 1], &mg->lev[l], coarse_scale);
    if (!ok) {
        poisson_ref_mg_destroy(mg);
        return NULL;
    }
    return mg;
}

void poisson_ref_mg_destroy(poisson_ref_mg *mg)
{
    if (!mg) return;
    for (int l = 0; l < mg->nlev; l++) level_free(&mg->lev[l]);
    free(mg->lev);
    free(mg);
}

int poisson_ref_mg_levels(const poisson_ref_mg *mg) { return mg->nlev; }

/* xn = xo + omega D^-1 (b - A xo), xo NULL meaning 0, D the column blocks;
 * the Thomas algorithm with pivots p = q + u, q_k = s_k + u_(k-1) q_(k-1) /
 * p_(k-1) (sums of non-negative terms; s the excess and horizontal
 * couplings of a row, u the vertical ones), a zero pivot fixing its cell
 * at 0 (a singular block) */
static void jacobi(const ref_level *L, const double *xo, const double *b, double omega, double *xn)
{
    const size_t plane = (size_t)L->nx * L->ny;
#pragma omp parallel for schedule(static)
    for (size_t col = 0; col < plane; col++) {
        double dp[L->nz], gp[L->nz], r[L->nz];
        double rq = 0, up = 0;
        for (int k = 0; k < L->nz; k++) {
            const size_t c = col + plane * k;
            r[k] = b[c];
            if (xo)
                for (int d = -3; d <= 3; d++) r[k] -= A7(L, d, c) * xo[poisson_ref_neighbor(L->nx, L->ny, L->nz, c, d)];
            const double s =
                excess(L, c) + fabs(A7(L, -2, c)) + fabs(A7(L, -1, c)) + fabs(A7(L, 1, c)) + fabs(A7(L, 2, c));
            const double u = fabs(A7(L, 3, c)), q = s + up * rq, p = q + u;
            const double inv = p > 0 ? 1 / p : 0;
            rq = q * inv;
            gp[k] = u * inv;
            dp[k] = (r[k] + up * (k > 0 ? dp[k - 1] : 0)) * inv;
            up = u;
        }
        double dl = 0;
        for (int k = L->nz - 1; k >= 0; k--) {
            const size_t c = col + plane * k;
            dl = dp[k] + gp[k] * dl;
            xn[c] = (xo ? xo[c] : 0) + omega * dl;
        }
    }
}

static void cycle(poisson_ref_mg *mg, int l, int smooth, double omega, const double *b, double *x)
{
    ref_level *L = &mg->lev[l];
    if (l == mg->nlev - 1) {
        jacobi(L, NULL, b, 1.0, x);
        return;
    }
    jacobi(L, NULL, b, omega, x);
    for (int s = 1; s < smooth; s++) {
        jacobi(L, x, b, omega, L->x2);
        memcpy(x, L->x2, L->n * sizeof(double));
    }
    poisson_ref_apply(L->nx, L->ny, L->nz, L->a, x, L->r);
    ref_level *C = &mg->lev[l + 1];
    memset(C->b, 0, C->n * sizeof(double));
    const size_t plane = (size_t)L->nx * L->ny;
    for (size_t c = 0; c < L->n; c++) { /* R = P^T: the wet cells */
        if (!L->wet[c]) continue;
        const int i = (int)(c % (size_t)L->nx), j = (int)(c / (size_t)L->nx % (size_t)L->ny), k = (int)(c / plane);
        const size_t cc = (size_t)(i >> C->sx) + (size_t)C->nx * ((size_t)(j >> C->sy) + (size_t)C->ny * k);
        C->b[cc] += b[c] - L->r[c];
    }
    cycle(mg, l + 1, smooth, omega, C->b, C->x);
    for (size_t c = 0; c < L->n; c++) {
        if (!L->wet[c]) continue;
        const int i = (int)(c % (size_t)L->nx), j = (int)(c / (size_t)L->nx % (size_t)L->ny), k = (int)(c / plane);
        x[c] += C->x[(size_t)(i >> C->sx) + (size_t)C->nx * ((size_t)(j >> C->sy) + (size_t)C->ny * k)];
    }
    for (int s = 0; s < smooth; s++) {
        jacobi(L, x, b, omega, L->x2);
        memcpy(x, L->x2, L->n * sizeof(double));
    }
}

void poisson_ref_vcycle(poisson_ref_mg *mg, int smooth, double omega, const double *r, double *z)
{
    cycle(mg, 0, smooth, omega, r, z);
}
