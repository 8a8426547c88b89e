/* operator.c — the host form of the operator (diagonal + forward couplings),
 * and the conversion from and to the public 7-array layout with the checks
 * a caller's operator must pass (include/clphys_poisson.h). */
#include "poisson_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

clphys_status poisson_op_alloc(clphys_context *ctx, poisson_op *op, int nx, int ny, int nz)
{
    memset(op, 0, sizeof *op);
    op->nx = nx, op->ny = ny, op->nz = nz;
    op->n = (size_t)nx * ny * nz;
    op->e = calloc(op->n, sizeof(double)), op->ax = calloc(op->n, sizeof(double));
    op->ay = calloc(op->n, sizeof(double)), op->az = calloc(op->n, sizeof(double));
    op->mask = calloc(op->n, 1);
    if (!op->e || !op->ax || !op->ay || !op->az || !op->mask) {
        poisson_op_free(op);
        return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson: operator of %zu cells", (size_t)nx * ny * nz);
    }
    return CLPHYS_SUCCESS;
}

void poisson_op_free(poisson_op *op)
{
    if (!op) return;
    free(op->e), free(op->ax), free(op->ay), free(op->az), free(op->mask);
    memset(op, 0, sizeof *op);
}

/* neighbour indices of c with wrap-around in x and y (none in z) */
static size_t west_of(const poisson_op *op, size_t c)
{
    const int i = (int)(c % (size_t)op->nx);
    return i > 0 ? c - 1 : c + (size_t)op->nx - 1;
}
static size_t east_of(const poisson_op *op, size_t c)
{
    const int i = (int)(c % (size_t)op->nx);
    return i + 1 < op->nx ? c + 1 : c + 1 - (size_t)op->nx;
}
static size_t south_of(const poisson_op *op, size_t c)
{
    const int j = (int)(c / (size_t)op->nx % (size_t)op->ny);
    return j > 0 ? c - (size_t)op->nx : c + (size_t)op->nx * (op->ny - 1);
}
static size_t north_of(const poisson_op *op, size_t c)
{
    const int j = (int)(c / (size_t)op->nx % (size_t)op->ny);
    return j + 1 < op->ny ? c + (size_t)op->nx : c - (size_t)op->nx * (op->ny - 1);
}

double poisson_offdiag_sum(const poisson_op *op, size_t c)
{
    const size_t plane = (size_t)op->nx * op->ny;
    double s = fabs(op->ax[c]) + fabs(op->ax[west_of(op, c)]) + fabs(op->ay[c]) + fabs(op->ay[south_of(op, c)]) +
               fabs(op->az[c]);
    if (c >= plane) s += fabs(op->az[c - plane]);
    return s;
}

#define SYM_TOL 1e-12

static void cell_ijk(const poisson_op *op, size_t c, int *i, int *j, int *k)
{
    *i = (int)(c % (size_t)op->nx);
    *j = (int)(c / (size_t)op->nx % (size_t)op->ny);
    *k = (int)(c / ((size_t)op->nx * op->ny));
}

/* one failure per call, reported for the lowest cell index */
static clphys_status bad_cell(clphys_context *ctx, const poisson_op *op, size_t c, const char *what, int d, double v)
{
    int i, j, k;
    cell_ijk(op, c, &i, &j, &k);
    return cp_error(ctx, CLPHYS_ERR_INPUT, "poisson operator: cell (i %d, j %d, k %d), coefficient %+d = %.17g: %s", i,
                    j, k, d, v, what);
}

clphys_status poisson_from_seven(clphys_context *ctx, int nx, int ny, int nz, const double *a, poisson_op *op)
{
    CP_TRY(poisson_op_alloc(ctx, op, nx, ny, nz));
    const size_t n = op->n, plane = (size_t)nx * ny;
#define A(d, c) a[(size_t)((d) + 3) * n + (c)]
    clphys_status st = CLPHYS_SUCCESS;
    for (size_t c = 0; c < n && !st; c++) {
        int land = 1;
        for (int d = -3; d <= 3 && !st; d++) {
            const double v = A(d, c);
            if (!isfinite(v))
                st = bad_cell(ctx, op, c, "not finite", d, v);
            else if (v != 0)
                land = 0;
            if (!st && d != 0 && v > 0) st = bad_cell(ctx, op, c, "a positive off-diagonal coefficient", d, v);
        }
        if (st || land) continue;
        const int k = (int)(c / plane);
        if (k == 0 && A(-3, c) != 0)
            st = bad_cell(ctx, op, c, "couples across the top (no wrap in z)", -3, A(-3, c));
        else if (k == nz - 1 && A(3, c) != 0)
            st = bad_cell(ctx, op, c, "couples across the bottom (no wrap in z)", 3, A(3, c));
        if (st) break;
        /* symmetry: each forward coupling against its neighbour's backward one */
        const size_t nb[3] = {east_of(op, c), north_of(op, c), c + plane};
        for (int d = 1; d <= 3 && !st; d++) {
            if (d == 3 && k == nz - 1) break;
            const double f = A(d, c), b = A(-d, nb[d - 1]);
            if (fabs(f - b) > SYM_TOL * fmax(fabs(f), fabs(b))) {
                int i2, j2, k2;
                cell_ijk(op, nb[d - 1], &i2, &j2, &k2);
                char what[160];
                snprintf(what, sizeof what, "not symmetric: coefficient %+d of cell (i %d, j %d, k %d) is %.17g", -d,
                         i2, j2, k2, b);
                st = bad_cell(ctx, op, c, what, d, f);
            }
        }
        double off = 0;
        for (int d = -3; d <= 3; d++) off += d ? fabs(A(d, c)) : 0;
        if (!st && A(0, c) < off * (1 - SYM_TOL)) {
            char what[160];
            snprintf(what, sizeof what, "a diagonal below the sum of the off-diagonal magnitudes %.17g", off);
            st = bad_cell(ctx, op, c, what, 0, A(0, c));
        }
        if (st) break;
        op->mask[c] = POISSON_WET;
        /* an excess below 1e-12 of the diagonal is a zero row sum given in
         * floating point: made exact, so that the singular regions and the
         * line solve see it */
        const double ex = A(0, c) - off;
        op->e[c] = ex > SYM_TOL * A(0, c) ? ex : 0;
        op->ax[c] = A(1, c), op->ay[c] = A(2, c), op->az[c] = A(3, c);
    }
    if (st) {
        poisson_op_free(op);
        return st;
    }
    size_t wet = 0;
    for (size_t c = 0; c < n; c++) {
        if (op->mask[c])
            wet++;
        else
            op->e[c] = 1;
    }
#undef A
    if (!wet) {
        poisson_op_free(op);
        return cp_error(ctx, CLPHYS_ERR_INPUT, "poisson operator: no wet cell (every cell's 7 coefficients are 0)");
    }
    return CLPHYS_SUCCESS;
}

void poisson_to_seven(const poisson_op *op, double *a)
{
    const size_t n = op->n, plane = (size_t)op->nx * op->ny;
#pragma omp parallel for schedule(static)
    for (size_t c = 0; c < n; c++) {
        const int wet = op->mask[c] & POISSON_WET;
        a[0 * n + c] = wet && c >= plane ? op->az[c - plane] : 0;
        a[1 * n + c] = wet ? op->ay[south_of(op, c)] : 0;
        a[2 * n + c] = wet ? op->ax[west_of(op, c)] : 0;
        a[3 * n + c] = wet ? op->e[c] + poisson_offdiag_sum(op, c) : 0;
        a[4 * n + c] = wet ? op->ax[c] : 0;
        a[5 * n + c] = wet ? op->ay[c] : 0;
        a[6 * n + c] = wet ? op->az[c] : 0;
    }
}
