/* mpi_plan.c — the distributed Poisson plan (include/clphys_poisson_mpi.h):
 * the process grid and the blocks, the setup on rank 0 (fine operator,
 * singular regions, coarse operators, the plan of the gathered levels),
 * each rank's blocks of the distributed levels with their halos, and the
 * blocks of a field to and from rank 0. */
#include "poisson_mpi_internal.h"

#include <stdlib.h>
#include <string.h>

#define POISSON_MPI_GATHER_COLUMNS     64
#define POISSON_MPI_GATHER_COLUMNS_CPU 8

int clphys_poisson_mpi_default_gather(const clphys_context *ctx)
{
    const clphys_device_info *d = ctx ? clphys_context_device(ctx) : NULL;
    return d && !d->is_gpu ? POISSON_MPI_GATHER_COLUMNS_CPU : POISSON_MPI_GATHER_COLUMNS;
}

static int levels_of(int nx, int ny)
{
    int n = 1;
    for (; nx > 1 || ny > 1; n++) nx = (nx + 1) / 2, ny = (ny + 1) / 2;
    return n;
}

static int ceil_div(int a, int q) { return (a + q - 1) / q; }

/* block r of p over n cells in units of q cells: first cell *o, extent *e */
static void split(int n, int q, int p, int r, int *o, int *e)
{
    const int units = ceil_div(n, q), base = units / p, rem = units % p;
    const int u0 = r * base + (r < rem ? r : rem), u1 = u0 + base + (r < rem);
    *o = u0 * q;
    *e = (u1 * q < n ? u1 * q : n) - *o;
}

/* the process grid and the levels kept on the ranks (the level dlev below
 * them is gathered): level l stays distributed while every rank keeps at
 * least G columns of it in x and y; blocks come in units of 2^dlev columns,
 * so that the coarse columns of every distributed level and of the gathered
 * one lie inside one block */
static clphys_status decompose(int nx, int ny, int ranks, const clphys_poisson_mpi_params *mp, int *px, int *py,
                               int *dlev)
{
    int dims[2] = {mp ? mp->grid[0] : 0, mp ? mp->grid[1] : 0};
    const int G = mp && mp->gather_columns ? mp->gather_columns : POISSON_MPI_GATHER_COLUMNS;
    if (ranks < 1 || G < 2 || dims[0] < 0 || dims[1] < 0)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "poisson mpi: %d ranks, grid %dx%d, gather_columns %d (>= 2, or 0 for the default)", ranks,
                        dims[0], dims[1], G);
    if (!dims[0] && !dims[1]) {
        if (MPI_Dims_create(ranks, 2, dims) != MPI_SUCCESS)
            return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "poisson mpi: MPI_Dims_create(%d) failed", ranks);
    }
    if (dims[0] < 1 || dims[1] < 1 || dims[0] * dims[1] != ranks)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "poisson mpi: grid %dx%d is not %d ranks", dims[0], dims[1],
                        ranks);
    if (dims[0] > nx || dims[1] > ny)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "poisson mpi: process grid %dx%d larger than the horizontal extent %dx%d (every rank needs "
                        "at least one column)",
                        dims[0], dims[1], nx, ny);
    const int nlev = levels_of(nx, ny);
    int L = 0;
    while (L + 2 < nlev && ceil_div(nx, 1 << (L + 1)) / dims[0] >= G && ceil_div(ny, 1 << (L + 1)) / dims[1] >= G) L++;
    /* the fine level alone when even its first coarsening leaves a rank
     * without a column */
    *dlev = ceil_div(nx, 2) >= dims[0] && ceil_div(ny, 2) >= dims[1] ? L + 1 : 0;
    *px = dims[0], *py = dims[1];
    return CLPHYS_SUCCESS;
}

clphys_status clphys_poisson_mpi_block(int nx, int ny, int ranks, const clphys_poisson_mpi_params *mp, int rank,
                                       int block[4], int *levels_distributed)
{
    if (!block || rank < 0 || rank >= ranks || nx < 2 || ny < 2)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_poisson_mpi_block: NULL block, rank %d of %d or grid "
                        "%dx%d",
                        rank, ranks, nx, ny);
    clphys_poisson_mpi_params m;
    CP_TRY(CP_PARAMS_IN(NULL, clphys_poisson_mpi_params, mp, gather_columns, &m));
    int px, py, dlev;
    CP_TRY(decompose(nx, ny, ranks, &m, &px, &py, &dlev));
    split(nx, 1 << dlev, px, rank % px, &block[0], &block[2]);
    split(ny, 1 << dlev, py, rank / px, &block[1], &block[3]);
    if (levels_distributed) *levels_distributed = dlev;
    return CLPHYS_SUCCESS;
}

void poisson_mpi_box_of(const clphys_poisson_mpi_plan *d, int r, int l, poisson_mpi_box *b)
{
    int ox, bx, oy, by;
    split(d->nx, 1 << d->dlev, d->px, r % d->px, &ox, &bx);
    split(d->ny, 1 << d->dlev, d->py, r / d->px, &oy, &by);
    const int s = 1 << l;
    b->ox = ox / s, b->oy = oy / s;
    b->bx = ceil_div(ox + bx, s) - b->ox, b->by = ceil_div(oy + by, s) - b->oy;
    b->h = 1;
    b->nx = b->h + b->bx + 1, b->ny = b->h + b->by + 1;
    if (d->pad > 1) b->nx = ceil_div(b->nx, d->pad) * d->pad;
}

clphys_status poisson_mpi_buf(clphys_poisson_mpi_plan *d, size_t bytes)
{
    if (bytes <= d->cap) return CLPHYS_SUCCESS;
    double *p = realloc(d->buf, bytes);
    if (!p) return cp_error(d->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi: %zu bytes of staging", bytes);
    d->buf = p, d->cap = bytes;
    return CLPHYS_SUCCESS;
}

/* ---- blocks to and from rank 0 ------------------------------------------------ */

static void level_extent(const clphys_poisson_mpi_plan *d, int l, int *nx, int *ny)
{
    *nx = ceil_div(d->nx, 1 << l), *ny = ceil_div(d->ny, 1 << l);
}

/* the counts and displacements of every rank's block on level l */
static clphys_status counts_of(clphys_poisson_mpi_plan *d, int l, int **cnt, int **dsp)
{
    *cnt = malloc(sizeof(int) * (size_t)d->size), *dsp = malloc(sizeof(int) * (size_t)d->size);
    if (!*cnt || !*dsp) return cp_error(d->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi: counts");
    size_t off = 0;
    for (int r = 0; r < d->size; r++) {
        poisson_mpi_box b;
        poisson_mpi_box_of(d, r, l, &b);
        (*cnt)[r] = b.bx * b.by * d->nz, (*dsp)[r] = (int)off;
        off += (size_t)(*cnt)[r];
    }
    return CLPHYS_SUCCESS;
}

/* copy between rank r's block (packed) and the global array of level l */
static void block_copy(clphys_poisson_mpi_plan *d, int r, int l, double *packed, double *global, int to_global)
{
    poisson_mpi_box b;
    int gx, gy;
    poisson_mpi_box_of(d, r, l, &b);
    level_extent(d, l, &gx, &gy);
    for (int k = 0; k < d->nz; k++)
        for (int j = 0; j < b.by; j++) {
            double *g = global + (size_t)b.ox + (size_t)gx * ((size_t)(b.oy + j) + (size_t)gy * k);
            double *p = packed + (size_t)b.bx * ((size_t)j + (size_t)b.by * k);
            if (to_global)
                memcpy(g, p, sizeof(double) * (size_t)b.bx);
            else
                memcpy(p, g, sizeof(double) * (size_t)b.bx);
        }
}

clphys_status poisson_mpi_gather_level(clphys_poisson_mpi_plan *d, int l, const double *block, double *global)
{
    int *cnt = NULL, *dsp = NULL;
    clphys_status st = counts_of(d, l, &cnt, &dsp);
    const size_t total = st ? 0 : (size_t)dsp[d->size - 1] + (size_t)cnt[d->size - 1];
    double *all = NULL;
    if (!st && d->rank == 0 && !(all = malloc(sizeof(double) * (total ? total : 1))))
        st = cp_error(d->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi: gather");
    st = cp_mpi_agree(d->comm, d->ctx, st);
    if (!st && MPI_Gatherv(block, cnt[d->rank], MPI_DOUBLE, all, cnt, dsp, MPI_DOUBLE, 0, d->comm) != MPI_SUCCESS)
        st = cp_error(d->ctx, CLPHYS_ERR_IO, "poisson mpi: MPI_Gatherv failed");
    for (int r = 0; !st && d->rank == 0 && r < d->size; r++) block_copy(d, r, l, all + dsp[r], global, 1);
    free(all), free(cnt), free(dsp);
    return st;
}

clphys_status poisson_mpi_scatter_level(clphys_poisson_mpi_plan *d, int l, const double *global, double *block)
{
    int *cnt = NULL, *dsp = NULL;
    clphys_status st = counts_of(d, l, &cnt, &dsp);
    const size_t total = st ? 0 : (size_t)dsp[d->size - 1] + (size_t)cnt[d->size - 1];
    double *all = NULL;
    if (!st && d->rank == 0 && !(all = malloc(sizeof(double) * (total ? total : 1))))
        st = cp_error(d->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi: scatter");
    st = cp_mpi_agree(d->comm, d->ctx, st);
    for (int r = 0; !st && d->rank == 0 && r < d->size; r++) block_copy(d, r, l, all + dsp[r], (double *)global, 0);
    if (!st && MPI_Scatterv(all, cnt, dsp, MPI_DOUBLE, block, cnt[d->rank], MPI_DOUBLE, 0, d->comm) != MPI_SUCCESS)
        st = cp_error(d->ctx, CLPHYS_ERR_IO, "poisson mpi: MPI_Scatterv failed");
    free(all), free(cnt), free(dsp);
    return st;
}

clphys_status clphys_poisson_mpi_scatter(clphys_poisson_mpi_plan *d, const double *global, double *block)
{
    if (!d) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_mpi_scatter: NULL plan");
    clphys_status st = !block || (d->rank == 0 && !global)
                           ? cp_error(d->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_mpi_scatter: NULL array")
                           : CLPHYS_SUCCESS;
    CP_TRY(cp_mpi_agree(d->comm, d->ctx, st));
    return poisson_mpi_scatter_level(d, 0, global, block);
}

clphys_status clphys_poisson_mpi_gather(clphys_poisson_mpi_plan *d, const double *block, double *global)
{
    if (!d) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_mpi_gather: NULL plan");
    clphys_status st = !block || (d->rank == 0 && !global)
                           ? cp_error(d->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_mpi_gather: NULL array")
                           : CLPHYS_SUCCESS;
    CP_TRY(cp_mpi_agree(d->comm, d->ctx, st));
    return poisson_mpi_gather_level(d, 0, block, global);
}

clphys_status clphys_poisson_mpi_plan_operator(clphys_poisson_mpi_plan *d, unsigned char *mask, double *w)
{
    if (!d) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_mpi_plan_operator: NULL plan");
    const poisson_mpi_box *b = &d->box[0];
    const size_t nb = (size_t)b->bx * b->by * d->nz, n = (size_t)d->nx * d->ny * d->nz;
    double *blk = malloc(sizeof(double) * (nb + 1)), *all = d->rank == 0 ? malloc(sizeof(double) * n) : NULL;
    clphys_status st =
        blk && (d->rank || all) ? CLPHYS_SUCCESS : cp_error(d->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi");
    CP_TRY(cp_mpi_agree(d->comm, d->ctx, st));
    for (int f = 0; f < 2 && !st; f++) {
        for (int k = 0; k < d->nz; k++)
            for (int j = 0; j < b->by; j++)
                for (int i = 0; i < b->bx; i++) {
                    const size_t c = (size_t)(b->h + i) + (size_t)b->nx * ((size_t)(b->h + j) + (size_t)b->ny * k);
                    blk[(size_t)i + (size_t)b->bx * ((size_t)j + (size_t)b->by * k)] =
                        f ? d->pl->w[c] : (d->pl->fine.mask[c] & POISSON_WET ? 1.0 : 0.0);
                }
        st = poisson_mpi_gather_level(d, 0, blk, all);
        for (size_t c = 0; !st && d->rank == 0 && c < n; c++) {
            if (f && w)
                w[c] = all[c];
            else if (!f && mask)
                mask[c] = all[c] != 0;
        }
    }
    free(blk), free(all);
    return st;
}

/* ---- the setup ------------------------------------------------------------------ */

/* what rank 0 makes once: the global operators of levels 0 .. dlev, w and
 * the singular regions of the fine one */
typedef struct {
    poisson_op *op; /* dlev + 1 levels                                */
    double *w;
    int *label;
    int nregions;
    double *region_w, *region_n;
} poisson_mpi_global;

static void global_free(poisson_mpi_global *g, int nlev)
{
    for (int l = 0; g->op && l < nlev; l++) poisson_op_free(&g->op[l]);
    free(g->op), free(g->w), free(g->label), free(g->region_w), free(g->region_n);
    memset(g, 0, sizeof *g);
}

/* rank 0: regions and coarse operators of the fine one (g->op[0], g->w set) */
static clphys_status global_finish(clphys_poisson_mpi_plan *d, poisson_mpi_global *g)
{
    const size_t n = g->op[0].n;
    for (size_t c = 0; c < n; c++) d->wet += g->op[0].mask[c] & POISSON_WET;
    if (!(g->label = malloc(sizeof(int) * n))) return cp_error(d->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi");
    CP_TRY(poisson_singular_regions(d->ctx, &g->op[0], g->label, &g->nregions));
    g->region_w = calloc((size_t)g->nregions + 1, sizeof(double));
    g->region_n = calloc((size_t)g->nregions + 1, sizeof(double));
    if (!g->region_w || !g->region_n) return cp_error(d->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi");
    for (size_t c = 0; c < n; c++)
        if (g->label[c] >= 0) g->region_w[g->label[c]] += g->w[c], g->region_n[g->label[c]] += 1;
    for (int l = 1; l <= d->dlev; l++) {
        int sx, sy;
        CP_TRY(poisson_coarsen(d->ctx, &g->op[l - 1], d->prm.coarse_scale, &g->op[l], &sx, &sy));
    }
    return CLPHYS_SUCCESS;
}

/* rank 0: rank r's block of level l with its halo, packed as doubles: e,
 * ax, ay, az, mask (and at l = 0: w, label).  Outside the block land; on
 * the ring west and south of it the couplings into the block. */
enum { F_E, F_AX, F_AY, F_AZ, F_MASK, F_W, F_LABEL, F_N };

static void pack_block(clphys_poisson_mpi_plan *d, const poisson_mpi_global *g, int r, int l, double *out)
{
    poisson_mpi_box b;
    int gx, gy;
    poisson_mpi_box_of(d, r, l, &b);
    level_extent(d, l, &gx, &gy);
    const poisson_op *G = &g->op[l];
    const size_t n = (size_t)b.nx * b.ny * d->nz, gplane = (size_t)gx * gy;
#pragma omp parallel for schedule(static)
    for (size_t c = 0; c < n; c++) {
        out[F_N * c + F_E] = 1;
        for (int f = F_AX; f < F_N; f++) out[F_N * c + f] = 0;
        out[F_N * c + F_LABEL] = -1;
    }
#pragma omp parallel for schedule(static)
    for (int k = 0; k < d->nz; k++)
        for (int j = b.h - 1; j <= b.h + b.by; j++)
            for (int i = b.h - 1; i <= b.h + b.bx; i++) {
                const int in_i = i >= b.h && i < b.h + b.bx, in_j = j >= b.h && j < b.h + b.by;
                const int gi = (b.ox + i - b.h + gx) % gx, gj = (b.oy + j - b.h + gy) % gy;
                const size_t c = (size_t)i + (size_t)b.nx * ((size_t)j + (size_t)b.ny * k);
                const size_t s = (size_t)gi + (size_t)gx * gj + gplane * k;
                double *o = out + F_N * c;
                if (in_i && in_j) {
                    o[F_E] = G->e[s], o[F_AX] = G->ax[s], o[F_AY] = G->ay[s], o[F_AZ] = G->az[s];
                    o[F_MASK] = G->mask[s];
                    if (l == 0) o[F_W] = g->w[s], o[F_LABEL] = g->label[s];
                } else if (i == b.h - 1 && in_j) {
                    o[F_AX] = G->ax[s];
                } else if (j == b.h - 1 && in_i) {
                    o[F_AY] = G->ay[s];
                }
            }
}

static clphys_status unpack_op(clphys_poisson_mpi_plan *d, const poisson_mpi_box *b, const double *in, poisson_op *op,
                               double *w, int *label)
{
    CP_TRY(poisson_op_alloc(d->ctx, op, b->nx, b->ny, d->nz));
    for (size_t c = 0; c < op->n; c++) {
        const double *v = in + F_N * c;
        op->e[c] = v[F_E], op->ax[c] = v[F_AX], op->ay[c] = v[F_AY], op->az[c] = v[F_AZ];
        op->mask[c] = (unsigned char)v[F_MASK];
        if (w) w[c] = v[F_W];
        if (label) label[c] = (int)v[F_LABEL];
    }
    return CLPHYS_SUCCESS;
}

/* every rank: its plan of levels 0 .. dlev (blocks from rank 0; level
 * dlev only sized: its b and x hold the gathered residual and correction) */
static clphys_status local_plan(clphys_poisson_mpi_plan *d, poisson_mpi_global *g)
{
    clphys_context *ctx = d->ctx;
    poisson_mpi_box b0;
    poisson_mpi_box_of(d, d->rank, 0, &b0);
    clphys_status st = poisson_plan_new(ctx, &d->prm, b0.nx, b0.ny, d->nz, &d->pl);
    st = cp_mpi_agree(d->comm, ctx, st);
    if (st) return st;
    clphys_poisson_plan *pl = d->pl;
    pl->from_geometry = d->from_geometry;
    pl->dist_levels = d->dlev + 1;
    if (d->dlev && !(pl->dist_ops = calloc((size_t)d->dlev, sizeof(poisson_op))))
        st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi");
    if (!st && !(pl->label = malloc(sizeof(int) * pl->n))) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi");
    CP_TRY(cp_mpi_agree(d->comm, ctx, st));
    for (int l = 0; l < d->dlev || (l == 0 && d->dlev == 0); l++) {
        poisson_mpi_box b;
        poisson_mpi_box_of(d, d->rank, l, &b);
        const size_t n = (size_t)b.nx * b.ny * d->nz;
        double *in = malloc(sizeof(double) * F_N * n);
        st = in ? CLPHYS_SUCCESS : cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi: block of level %d", l);
        st = cp_mpi_agree(d->comm, ctx, st);
        if (st) {
            free(in);
            return st;
        }
        for (int r = 0; d->rank == 0 && r < d->size && !st; r++) {
            poisson_mpi_box br;
            poisson_mpi_box_of(d, r, l, &br);
            const size_t nr = (size_t)br.nx * br.ny * d->nz;
            double *out = r == 0 ? in : malloc(sizeof(double) * F_N * nr);
            if (!out) {
                st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi: block of rank %d", r);
                break;
            }
            pack_block(d, g, r, l, out);
            if (r && MPI_Send(out, (int)(F_N * nr), MPI_DOUBLE, r, l, d->comm) != MPI_SUCCESS)
                st = cp_error(ctx, CLPHYS_ERR_IO, "poisson mpi: MPI_Send of a block failed");
            if (r) free(out);
        }
        if (d->rank && MPI_Recv(in, (int)(F_N * n), MPI_DOUBLE, 0, l, d->comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            st = cp_error(ctx, CLPHYS_ERR_IO, "poisson mpi: MPI_Recv of a block failed");
        if (!st)
            st = l == 0 ? unpack_op(d, &b, in, &pl->fine, pl->w, pl->label)
                        : unpack_op(d, &b, in, &pl->dist_ops[l - 1], NULL, NULL);
        free(in);
        CP_TRY(cp_mpi_agree(d->comm, ctx, st));
    }
    if (d->dlev) { /* the gathered level: land, sized */
        poisson_mpi_box b;
        poisson_mpi_box_of(d, d->rank, d->dlev, &b);
        poisson_op *op = &pl->dist_ops[d->dlev - 1];
        st = poisson_op_alloc(ctx, op, b.nx, b.ny, d->nz);
        for (size_t c = 0; !st && c < op->n; c++) op->e[c] = 1;
    }
    /* the singular regions, the same on every rank */
    int nr = g->nregions;
    if (!st && MPI_Bcast(&nr, 1, MPI_INT, 0, d->comm) != MPI_SUCCESS)
        st = cp_error(ctx, CLPHYS_ERR_IO, "poisson mpi: MPI_Bcast failed");
    pl->nregions = nr;
    if (!st && nr) {
        pl->region_w = malloc(sizeof(double) * (size_t)nr), pl->region_n = malloc(sizeof(double) * (size_t)nr);
        if (!pl->region_w || !pl->region_n) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi");
        if (!st && d->rank == 0)
            memcpy(pl->region_w, g->region_w, sizeof(double) * (size_t)nr),
                memcpy(pl->region_n, g->region_n, sizeof(double) * (size_t)nr);
        if (!st && (MPI_Bcast(pl->region_w, nr, MPI_DOUBLE, 0, d->comm) != MPI_SUCCESS ||
                    MPI_Bcast(pl->region_n, nr, MPI_DOUBLE, 0, d->comm) != MPI_SUCCESS))
            st = cp_error(ctx, CLPHYS_ERR_IO, "poisson mpi: MPI_Bcast failed");
    }
    if (!st) st = poisson_plan_finish(pl);
    return cp_mpi_agree(d->comm, ctx, st);
}

/* common to both constructors once rank 0 holds g->op[0] and g->w (or has
 * failed: st) */
static clphys_status create_rest(clphys_poisson_mpi_plan *d, poisson_mpi_global *g, clphys_status st)
{
    if (!st && d->rank == 0) st = global_finish(d, g);
    CP_TRY(cp_mpi_agree(d->comm, d->ctx, st));
    unsigned long long wet = d->wet;
    if (MPI_Bcast(&wet, 1, MPI_UNSIGNED_LONG_LONG, 0, d->comm) != MPI_SUCCESS)
        return cp_mpi_agree(d->comm, d->ctx, cp_error(d->ctx, CLPHYS_ERR_IO, "poisson mpi: MPI_Bcast failed"));
    d->wet = (size_t)wet;
    CP_TRY(local_plan(d, g));
    /* rank 0: the plan of the gathered level, from the global operator */
    st = CLPHYS_SUCCESS;
    if (d->rank == 0) {
        clphys_poisson_params cp = d->prm;
        cp.no_tune = 1;
        /* column on GPUs; on CPUs AUTO's column-vec, several times faster
         * there (bench/poisson-notes.md, section 3) */
        const int vec =
            !clphys_context_device(d->ctx)->is_gpu && (!d->prm.line || d->prm.line == CLPHYS_POISSON_LINE_COLUMN_VEC);
        cp.line = vec ? CLPHYS_POISSON_LINE_COLUMN_VEC : CLPHYS_POISSON_LINE_COLUMN;
        st = poisson_plan_from_op(d->ctx, &cp, &g->op[d->dlev], &d->coarse);
        const clphys_precision io = d->prm.precision == CLPHYS_POISSON_FP32 ? CLPHYS_FP32 : CLPHYS_FP64;
        if (!st) st = clphys_poisson_field_create(d->coarse, io, &d->cr);
        if (!st) st = clphys_poisson_field_create(d->coarse, io, &d->cz);
    }
    CP_TRY(cp_mpi_agree(d->comm, d->ctx, st));
    return cp_mpi_agree(d->comm, d->ctx, poisson_mpi_solver_setup(d));
}

/* the plan's frame on every rank: communicator, grid, neighbours, levels */
static clphys_status frame(clphys_context *ctx, MPI_Comm comm, int nx, int ny, int nz,
                           const clphys_poisson_params *params, const clphys_poisson_mpi_params *mp,
                           clphys_poisson_mpi_plan **out)
{
    clphys_poisson_mpi_plan *d = calloc(1, sizeof *d);
    if (!d) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi plan");
    *out = d;
    d->ctx = ctx;
    CP_TRY(cp_mpi_dup(comm, ctx, &d->comm));
    MPI_Comm_rank(d->comm, &d->rank);
    MPI_Comm_size(d->comm, &d->size);
    clphys_poisson_params p;
    clphys_poisson_mpi_params m;
    clphys_status pst = CP_PARAMS_IN(ctx, clphys_poisson_params, params, user, &p);
    if (!pst) pst = CP_PARAMS_IN(ctx, clphys_poisson_mpi_params, mp, gather_columns, &m);
    CP_TRY(cp_mpi_agree(d->comm, ctx, pst));
    p.progress = NULL, p.user = NULL; /* pointers differ between ranks */
    CP_TRY(cp_mpi_same(d->comm, ctx, &p, sizeof p, "clphys_poisson_params"));
    CP_TRY(cp_mpi_same(d->comm, ctx, &m, sizeof m, "clphys_poisson_mpi_params"));
    int dims[3] = {nx, ny, nz};
    if (MPI_Bcast(dims, 3, MPI_INT, 0, d->comm) != MPI_SUCCESS)
        return cp_error(ctx, CLPHYS_ERR_IO, "poisson mpi: MPI_Bcast failed");
    d->nx = dims[0], d->ny = dims[1], d->nz = dims[2];
    clphys_status st = decompose(d->nx, d->ny, d->size, &m, &d->px, &d->py, &d->dlev);
    if (st) cp_error(ctx, st, "%s", clphys_last_error(NULL));
    CP_TRY(cp_mpi_agree(d->comm, ctx, st));
    d->nlev = levels_of(d->nx, d->ny);
    d->cx = d->rank % d->px, d->cy = d->rank / d->px;
    const int wx = (d->cx + d->px - 1) % d->px, ex = (d->cx + 1) % d->px;
    const int sy = (d->cy + d->py - 1) % d->py, ny_ = (d->cy + 1) % d->py;
    d->nbr[0] = wx + d->px * d->cy, d->nbr[1] = ex + d->px * d->cy;
    d->nbr[2] = d->cx + d->px * sy, d->nbr[3] = d->cx + d->px * ny_;
    d->prm = params ? *params : (clphys_poisson_params){0};
    if (!(d->prm.tol > 0)) d->prm.tol = 1e-8;
    if (!d->prm.max_iter) d->prm.max_iter = 1000;
    if (!d->prm.smooth) d->prm.smooth = 2;
    if (!(d->prm.omega > 0)) d->prm.omega = 0.8;
    if (!(d->prm.coarse_scale > 0)) d->prm.coarse_scale = 0.5;
    d->prm.no_time_split = 1;
    /* column-vec (AUTO on CPUs) smooths VW columns per work-item where a
     * level's width is a multiple of VW: pad every rank's widths alike */
    const int vec =
        d->prm.line == CLPHYS_POISSON_LINE_COLUMN_VEC || (!d->prm.line && !clphys_context_device(ctx)->is_gpu);
    d->pad = vec ? 8 : 1;
    if (MPI_Allreduce(MPI_IN_PLACE, &d->pad, 1, MPI_INT, MPI_MAX, d->comm) != MPI_SUCCESS)
        return cp_mpi_agree(d->comm, ctx, cp_error(ctx, CLPHYS_ERR_IO, "poisson mpi: MPI_Allreduce failed"));
    d->box = calloc((size_t)d->dlev + 1, sizeof(poisson_mpi_box));
    if (!d->box) return cp_mpi_agree(d->comm, ctx, cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi plan"));
    for (int l = 0; l <= d->dlev; l++) poisson_mpi_box_of(d, d->rank, l, &d->box[l]);
    return CLPHYS_SUCCESS;
}

clphys_status clphys_poisson_mpi_plan_create(clphys_context *ctx, MPI_Comm comm, const clphys_poisson_geometry *g,
                                             const clphys_poisson_params *params, const clphys_poisson_mpi_params *mp,
                                             clphys_poisson_mpi_plan **plan)
{
    if (!ctx || !plan)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_mpi_plan_create: NULL argument");
    *plan = NULL;
    int rank;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_mpi_plan_create: not a communicator");
    clphys_status st = rank == 0 && !g ? cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                                                  "clphys_poisson_mpi_plan_create: no geometry on rank 0")
                                       : CLPHYS_SUCCESS;
    if (!st && rank == 0) st = poisson_check_geometry(ctx, g);
    CP_TRY(cp_mpi_agree(comm, ctx, st));
    clphys_poisson_mpi_plan *d = NULL;
    st = frame(ctx, comm, g ? g->nx : 0, g ? g->ny : 0, g ? g->nz : 0, params, mp, &d);
    poisson_mpi_global gl = {0};
    if (!st) {
        d->from_geometry = 1;
        if (d->rank == 0) {
            if (!(gl.op = calloc((size_t)d->dlev + 1, sizeof(poisson_op))) ||
                !(gl.w = calloc((size_t)d->nx * d->ny * d->nz, sizeof(double))))
                st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi: the global operator");
            if (!st) st = poisson_assemble(ctx, g, &gl.op[0], gl.w);
        }
        st = create_rest(d, &gl, st);
    }
    if (d) global_free(&gl, d->dlev + 1);
    if (st) {
        clphys_poisson_mpi_plan_destroy(d);
        return st;
    }
    *plan = d;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_poisson_mpi_plan_create_operator(clphys_context *ctx, MPI_Comm comm, int nx, int ny,
                                                      const clphys_poisson_operator *op,
                                                      const clphys_poisson_params *params,
                                                      const clphys_poisson_mpi_params *mp,
                                                      clphys_poisson_mpi_plan **plan)
{
    if (!ctx || !plan)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_mpi_plan_create_operator: NULL argument");
    *plan = NULL;
    clphys_poisson_mpi_plan *d = NULL;
    clphys_status st = frame(ctx, comm, nx, ny, op ? op->nz : 0, params, mp, &d);
    poisson_mpi_global gl = {0};
    double *a = NULL;
    if (!st) {
        const poisson_mpi_box *b = &d->box[0];
        st = !op || !op->a || op->a_mem || op->nx != b->bx || op->ny != b->by || op->nz != d->nz
                 ? cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                            "clphys_poisson_mpi_plan_create_operator: rank %d needs a host block of %dx%dx%d "
                            "(clphys_poisson_mpi_block), got %dx%dx%d",
                            d->rank, b->bx, b->by, d->nz, op ? op->nx : 0, op ? op->ny : 0, op ? op->nz : 0)
                 : CLPHYS_SUCCESS;
        st = cp_mpi_agree(d->comm, ctx, st);
        const size_t n = (size_t)d->nx * d->ny * d->nz, nb = (size_t)b->bx * b->by * d->nz;
        if (!st && d->rank == 0 &&
            (!(a = malloc(sizeof(double) * 7 * n)) || !(gl.op = calloc((size_t)d->dlev + 1, sizeof(poisson_op))) ||
             !(gl.w = calloc(n, sizeof(double)))))
            st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi: the global operator");
        st = cp_mpi_agree(d->comm, ctx, st);
        for (int f = 0; f < 7 && !st; f++) st = poisson_mpi_gather_level(d, 0, op->a + f * nb, a ? a + f * n : NULL);
        if (!st && d->rank == 0) {
            st = poisson_from_seven(ctx, d->nx, d->ny, d->nz, a, &gl.op[0]);
            for (size_t c = 0; !st && c < n; c++) gl.w[c] = (gl.op[0].mask[c] & POISSON_WET) ? 1.0 : 0.0;
        }
        free(a);
        st = create_rest(d, &gl, st);
    }
    if (d) global_free(&gl, d->dlev + 1);
    if (st) {
        clphys_poisson_mpi_plan_destroy(d);
        return st;
    }
    *plan = d;
    return CLPHYS_SUCCESS;
}

void clphys_poisson_mpi_plan_destroy(clphys_poisson_mpi_plan *d)
{
    if (!d) return;
    cp_release_mem(&d->cr), cp_release_mem(&d->cz);
    cp_release_kernel(&d->k_zero[0]), cp_release_kernel(&d->k_zero[1]), cp_release_kernel(&d->k_prolong);
    for (int p = 0; p < 2; p++) cp_release_kernel(&d->k_pack[p]), cp_release_kernel(&d->k_unpack[p]);
    cp_release_mem(&d->face);
    if (d->stage_mem)
        cp_pinned_release(d->ctx, &d->stage_mem, &d->stage);
    else
        free(d->stage);
    clphys_poisson_plan_destroy(d->coarse);
    clphys_poisson_plan_destroy(d->pl);
    if (d->comm != MPI_COMM_NULL && d->comm) MPI_Comm_free(&d->comm);
    free(d->box), free(d->buf), free(d->gbuf);
    free(d);
}

void clphys_poisson_mpi_plan_info(const clphys_poisson_mpi_plan *d, clphys_poisson_mpi_info *info)
{
    if (!d || !info) return;
    memset(info, 0, sizeof *info);
    info->nx = d->nx, info->ny = d->ny, info->nz = d->nz;
    info->grid[0] = d->px, info->grid[1] = d->py, info->coords[0] = d->cx, info->coords[1] = d->cy;
    const poisson_mpi_box *b = &d->box[0];
    info->block[0] = b->ox, info->block[1] = b->oy, info->block[2] = b->bx, info->block[3] = b->by;
    info->n = (size_t)d->nx * d->ny * d->nz;
    info->wet = d->wet;
    info->levels = d->nlev;
    info->levels_distributed = d->dlev;
    info->singular_regions = d->pl ? d->pl->nregions : 0;
    info->line = d->pl ? d->pl->line : CLPHYS_POISSON_LINE_COLUMN;
    info->halo_bytes = 2.0 * 8 * d->nz * (b->bx + b->by);
}
