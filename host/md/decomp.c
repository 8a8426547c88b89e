/* decomp.c — the grid of subdomains of a distributed MD plan: its
 * shape, this rank's subdomain and neighbours, and the local frame the
 * rank's device works in (Plimpton 1995, spatial decomposition). */
#include "md_mpi_internal.h"

#include <limits.h>
#include <math.h>
#include <string.h>

/* Lower bound of slab k of P along an edge L; k = P gives L exactly. */
static double bound(double L, int P, int k) { return k >= P ? L : L * (double)k / (double)P; }

double md_decomp_llo(const md_decomp *d, int c, int k) { return d->cut[c] ? bound(d->L[c], d->P[c], k) - d->rs : 0; }

int md_decomp_owner(const md_decomp *d, int c, double x)
{
    int P = d->P[c];
    int k = (int)floor(x * P / d->L[c]);
    if (k < 0) k = 0;
    if (k > P - 1) k = P - 1;
    /* agree exactly with bound(): a coordinate on a boundary belongs above */
    while (k > 0 && x < bound(d->L[c], P, k)) k--;
    while (k < P - 1 && x >= bound(d->L[c], P, k + 1)) k++;
    return k;
}

/* The ghost shells' volume of one subdomain of a px x py x pz grid (a cut
 * dimension adds r_s on both sides). */
static double ghost_volume(const double L[3], double rs, int px, int py, int pz)
{
    const int p[3] = {px, py, pz};
    double with = 1, without = 1;
    for (int c = 0; c < 3; c++) {
        const double a = L[c] / p[c];
        with *= a + (p[c] > 1 ? 2 * rs : 0), without *= a;
    }
    return with - without;
}

static int rank_at(const md_decomp *d, const int c3[3]) { return c3[0] + d->P[0] * (c3[1] + d->P[1] * c3[2]); }

int md_decomp_rank_of(const md_decomp *d, const double *x)
{
    int k[3];
    for (int c = 0; c < 3; c++) k[c] = md_decomp_owner(d, c, x[c]);
    return rank_at(d, k);
}

int md_wrap(const md_decomp *d, double *x, int *img)
{
    for (int c = 0; c < 3; c++) {
        const double L = d->L[c];
        if (x[c] >= 0 && x[c] < L) continue;
        if (!isfinite(x[c])) return 1;
        if (x[c] >= 3 * L || x[c] < -2 * L) {
            /* far out: whole box lengths at once (a subtraction that no
             * longer changes x would never end), the steps below for the
             * rounding */
            const double k = floor(x[c] / L);
            if (fabs(k) > MD_WRAP_MAX || (k > 0 ? img[c] > INT_MAX - (int)k : img[c] < INT_MIN - (int)k)) return 1;
            x[c] -= k * L, img[c] += (int)k;
        }
        int steps = 0;
        while (x[c] >= L && steps++ < 4 && img[c] < INT_MAX) x[c] -= L, img[c]++;
        while (x[c] < 0 && steps++ < 4 && img[c] > INT_MIN) x[c] += L, img[c]--;
        if (!(x[c] >= 0 && x[c] < L)) return 1;
    }
    return 0;
}

double md_wrap_into(double x, double L)
{
    /* where x / L rounds to the integer on the other side, this keeps x
     * inside */
    if (x >= 0 && x < L) return x;
    if (x < 0 && x >= -L) return x + L;
    if (x >= L && x < 2 * L) return x - L;
    return x - L * floor(x / L);
}

clphys_status md_decomp_make(clphys_context *ctx, int rank, int size, const int grid[3], const double L[3], double rs,
                             md_decomp *d)
{
    memset(d, 0, sizeof *d);
    int P[3] = {0, 0, 0};
    if (grid) memcpy(P, grid, sizeof P);
    if (P[0] < 0 || P[1] < 0 || P[2] < 0)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "md mpi: grid %dx%dx%d: negative", P[0], P[1], P[2]);
    if (!P[0] && !P[1] && !P[2]) {
        int f[3] = {0, 0, 0};
        int e = MPI_Dims_create(size, 3, f);
        if (e != MPI_SUCCESS) return cp_mpi_error(ctx, e, "MPI_Dims_create");
        /* the largest factor along z: a grid cut along z only keeps its
         * interior rows contiguous in the cell order (md_mpi_rebuild) */
        P[0] = f[2], P[1] = f[1], P[2] = f[0];
        /* slabs along z (1x1xsize) where they hold no more ghost atoms
         * than that grid: one dimension to exchange instead of two or
         * three, no edge ghosts, and the overlap of interior rows (on 4
         * PoCL ranks of 2 cores, 32,000 atoms: 1x1x4 20 % faster than
         * 1x2x2) */
        if (size > 1 && L[2] / size >= rs && ghost_volume(L, rs, 1, 1, size) <= ghost_volume(L, rs, P[0], P[1], P[2]))
            P[0] = P[1] = 1, P[2] = size;
    }
    if ((long long)P[0] * P[1] * P[2] != size)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "md mpi: the grid %dx%dx%d has %lld subdomains for %d ranks (give PXxPYxPZ with "
                        "PX PY PZ = the number of ranks)",
                        P[0], P[1], P[2], (long long)P[0] * P[1] * P[2], size);
    memcpy(d->P, P, sizeof P);
    d->rank = rank, d->size = size, d->rs = rs;
    d->coord[0] = rank % P[0];
    d->coord[1] = (rank / P[0]) % P[1];
    d->coord[2] = rank / (P[0] * P[1]);
    for (int c = 0; c < 3; c++) d->cut[c] = P[c] > 1, d->L[c] = L[c];
    for (int c = 0; c < 3; c++) {
        d->lo[c] = bound(L[c], P[c], d->coord[c]);
        d->hi[c] = bound(L[c], P[c], d->coord[c] + 1);
        int k[3] = {d->coord[0], d->coord[1], d->coord[2]};
        k[c] = (d->coord[c] + P[c] - 1) % P[c];
        d->nbr[c][0] = rank_at(d, k);
        k[c] = (d->coord[c] + 1) % P[c];
        d->nbr[c][1] = rank_at(d, k);
        const double sub = L[c] / P[c];
        if (!d->cut[c]) {
            if (!(L[c] >= 2 * rs))
                return cp_error(ctx, CLPHYS_ERR_INPUT,
                                "md mpi: box edge %c = %g is shorter than 2 (r_cut + skin) = %g (minimum image)",
                                "xyz"[c], L[c], 2 * rs);
            d->llo[c] = 0, d->lbox[c] = L[c];
            continue;
        }
        if (!(sub >= rs))
            return cp_error(ctx, CLPHYS_ERR_INPUT,
                            "md mpi: subdomain edge %c = %g (box %g / %d) is thinner than r_cut + skin = %g: ghost "
                            "atoms travel one subdomain only; use fewer subdomains along %c (--grid)",
                            "xyz"[c], sub, L[c], P[c], rs, "xyz"[c]);
        /* the ghost shells [lo - rs, lo) and [hi, hi + rs) and a margin that
         * keeps atoms of opposite shells (which may drift by skin/2 <= rs/2
         * each between builds) more than rs apart through the device's
         * periodic wrap: no pair that does not exist */
        d->llo[c] = md_decomp_llo(d, c, d->coord[c]);
        d->lbox[c] = (d->hi[c] - d->lo[c]) + 4 * rs;
    }
    return CLPHYS_SUCCESS;
}
