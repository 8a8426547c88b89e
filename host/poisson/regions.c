/* regions.c — the singular parts of an operator: connected wet regions
 * (cells joined by non-zero couplings) in which every row sums to zero, the
 * pure Neumann problem, whose solution is fixed only up to a constant. */
#include "poisson_internal.h"

#include <math.h>
#include <stdlib.h>

static int find(int *parent, int a)
{
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
}

static void join(int *parent, int a, int b)
{
    a = find(parent, a), b = find(parent, b);
    if (a != b) parent[a > b ? a : b] = a < b ? a : b;
}

/* a row with no excess over its couplings (lambda V = 0) */
static int zero_row(const poisson_op *op, size_t c) { return op->e[c] == 0; }

typedef struct {
    int root;
    size_t size;
} region_size;

static int by_size(const void *a, const void *b)
{
    const region_size *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    return (x->root > y->root) - (x->root < y->root);
}

clphys_status poisson_singular_regions(clphys_context *ctx, const poisson_op *op, int *label, int *nregions)
{
    const size_t n = op->n, plane = (size_t)op->nx * op->ny;
    int *parent = malloc(sizeof(int) * n);
    unsigned char *regular = calloc(n, 1); /* per root: the region has a row with excess */
    if (!parent || !regular) {
        free(parent), free(regular);
        return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson: singular regions");
    }
    for (size_t c = 0; c < n; c++) parent[c] = (int)c;
    for (size_t c = 0; c < n; c++) {
        if (!(op->mask[c] & POISSON_WET)) continue;
        const int i = (int)(c % (size_t)op->nx), j = (int)(c / (size_t)op->nx % (size_t)op->ny);
        if (op->ax[c] != 0) join(parent, (int)c, (int)(i + 1 < op->nx ? c + 1 : c + 1 - (size_t)op->nx));
        if (op->ay[c] != 0)
            join(parent, (int)c, (int)(j + 1 < op->ny ? c + (size_t)op->nx : c - (size_t)op->nx * (op->ny - 1)));
        if (op->az[c] != 0) join(parent, (int)c, (int)(c + plane));
    }
    for (size_t c = 0; c < n; c++)
        if ((op->mask[c] & POISSON_WET) && !zero_row(op, c)) regular[find(parent, (int)c)] = 1;
    /* sizes of the singular regions, by root */
    size_t *count = calloc(n, sizeof(size_t));
    if (!count) {
        free(parent), free(regular);
        return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson: singular regions");
    }
    int nr = 0;
    for (size_t c = 0; c < n; c++) {
        if (!(op->mask[c] & POISSON_WET)) continue;
        const int r = find(parent, (int)c);
        if (!regular[r] && count[r]++ == 0) nr++;
    }
    region_size *rs = malloc(sizeof(region_size) * (nr ? nr : 1));
    clphys_status st = rs ? CLPHYS_SUCCESS : cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson: singular regions");
    if (!st) {
        int m = 0;
        for (size_t c = 0; c < n; c++)
            if (count[c]) rs[m++] = (region_size){(int)c, count[c]};
        qsort(rs, (size_t)nr, sizeof *rs, by_size);
        /* count[] now maps a root to its region number + 1 */
        for (int r = 0; r < nr; r++) count[rs[r].root] = (size_t)r + 1;
        for (size_t c = 0; c < n; c++) {
            const int r = (op->mask[c] & POISSON_WET) ? find(parent, (int)c) : -1;
            label[c] = r >= 0 && !regular[r] ? (int)count[r] - 1 : -1;
        }
        *nregions = nr;
    }
    free(rs), free(count), free(parent), free(regular);
    return st;
}
