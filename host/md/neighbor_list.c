/* neighbor_list.c — cell list (counting sort by cell, permutation kept) and
 * Verlet lists in CSR and transposed layouts, with capacity growth on
 * overflow.  Kernels: cl/md_cell_list.cl, cl/md_neighbor_list.cl. */
#include "md_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the block scan's entries per work-item: a work-group of scan_wg items
 * scans scan_wg * SCAN_ITEMS entries (cl/md_cell_list.cl) */
#define SCAN_ITEMS 8

size_t md_global(size_t n, size_t wg) { return cp_round_up(n ? n : 1, wg); }

clphys_status md_upload_real4(clphys_context *ctx, size_t rs, cl_mem m, const double *x, size_t n, double w,
                              const double *box)
{
    void *buf = malloc(4 * rs * n);
    if (!buf) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "host buffer of %zu bytes", 4 * rs * n);
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 4; c++) {
            double v = c < 3 ? x[3 * i + c] : w;
            /* into [0, box): the GPU kernels' minimum image needs |dx| <= box */
            if (box && c < 3) v -= box[c] * floor(v / box[c]);
            if (rs == 8)
                ((double *)buf)[4 * i + c] = v;
            else
                ((float *)buf)[4 * i + c] = (float)v;
        }
    clphys_status st = cp_write(ctx, m, 0, 4 * rs * n, buf);
    free(buf);
    return st;
}

clphys_status md_upload4(clphys_context *ctx, size_t rs, cl_mem m, const double *x4, size_t n)
{
    if (rs == 8) return cp_write(ctx, m, 0, 32 * n, x4);
    float *buf = malloc(16 * n);
    if (!buf) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "host buffer of %zu bytes", 16 * n);
    for (size_t k = 0; k < 4 * n; k++) buf[k] = (float)x4[k];
    clphys_status st = cp_write(ctx, m, 0, 16 * n, buf);
    free(buf);
    return st;
}

clphys_status md_download_real4(clphys_context *ctx, size_t rs, cl_mem m, double *x4, size_t n)
{
    if (rs == 8) return cp_read(ctx, m, 0, 4 * rs * n, x4);
    float *buf = malloc(4 * sizeof(float) * n);
    if (!buf) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "host buffer of %zu bytes", 16 * n);
    clphys_status st = cp_read(ctx, m, 0, 16 * n, buf);
    for (size_t k = 0; st == CLPHYS_SUCCESS && k < 4 * n; k++) x4[k] = buf[k];
    free(buf);
    return st;
}

/* Launch k, waited for and its time added to kernel_s unless the plan's
 * owner asked for no times (untimed: a wait per launch costs the host a
 * round trip each, most of a rebuild's host time between its kernels). */
static clphys_status timed(clphys_md_neighbor_plan *pl, cl_kernel k, const size_t *global, const size_t *local)
{
    return cp_launch(pl->ctx, k, 1, global, local, pl->untimed ? NULL : &pl->kernel_s);
}

void clphys_md_neighbor_plan_destroy(clphys_md_neighbor_plan *pl)
{
    if (!pl) return;
    cl_kernel *ks[] = {&pl->k_assign,  &pl->k_scan,      &pl->k_scatter,   &pl->k_order,      &pl->k_gather4,
                       &pl->k_gatheru, &pl->k_gatheri4,  &pl->k_build,     &pl->k_build_rows, &pl->k_stage,
                       &pl->k_pack,    &pl->k_scan_sums, &pl->k_scan_write};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) cp_release_kernel(ks[i]);
    cl_mem *ms[] = {&pl->pos_in,   &pl->perm_in, &pl->pos,   &pl->perm,   &pl->cell,      &pl->rank,
                    &pl->count,    &pl->start,   &pl->order, &pl->ncount, &pl->offset,    &pl->list,
                    &pl->overflow, &pl->stage,   &pl->sbase, &pl->pcell,  &pl->scan_sums, &pl->scan_base};
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) cp_release_mem(ms[i]);
    free(pl);
}

/* Local memory of one stage: x, y, z planes of `slots` reals + the slot
 * offsets of its 9 (bx + 2) cells. */
size_t md_stage_bytes(const clphys_md_neighbor_plan *pl, size_t slots)
{
    return 3 * pl->real_size * slots + 4 * (9 * (size_t)(pl->stage_bx + 2) + 1);
}

/* Cells per block along x for the staged layout: ~96 particles per block at
 * the mean density (three warps of a work-group of 128 busy), the blocks of a
 * row made equal, and a stage 1.25x the mean within the local memory of one
 * work-group (a GPU's compute unit holds several such work-groups).  A build
 * whose largest stage does not fit narrows the blocks (stage_shrink). */
static clphys_status stage_geometry(clphys_context *ctx, const clphys_md_neighbor_params *p,
                                    clphys_md_neighbor_plan *pl)
{
    double per_cell = (double)p->n / (double)pl->ncells;
    int bx = p->block_cells > 0 ? p->block_cells : (int)floor(96.0 / per_cell + 0.5);
    if (bx < 1) bx = 1;
    if (bx > pl->nc[0]) bx = pl->nc[0];
    if (p->block_cells <= 0) {
        int nbx = (pl->nc[0] + bx - 1) / bx;
        bx = (pl->nc[0] + nbx - 1) / nbx;
        size_t budget = (size_t)ctx->info.local_mem_bytes;
        for (;;) {
            pl->stage_bx = bx;
            if (md_stage_bytes(pl, (size_t)(1.25 * 9 * (bx + 2) * per_cell) + 16) <= budget || bx == 1) break;
            bx--;
        }
    }
    pl->stage_bx = bx;
    if (md_stage_bytes(pl, (size_t)(9 * (bx + 2) * per_cell)) > (size_t)ctx->info.local_mem_bytes)
        return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED,
                        "neighbor: the staged layout needs about %zu bytes of local memory per "
                        "work-group (%.1f particles per cell, %d cells per block) and %s has %llu",
                        md_stage_bytes(pl, (size_t)(9 * (bx + 2) * per_cell)), per_cell, bx, ctx->info.name,
                        (unsigned long long)ctx->info.local_mem_bytes);
    pl->nblocks = (size_t)((pl->nc[0] + bx - 1) / bx) * pl->nc[1] * pl->nc[2];
    return CLPHYS_SUCCESS;
}

#define NB_CELLS_PER_ATOM 8

/* The two builds of neighbor_build (cl/md_neighbor_list.cl): k_build
 * writes a row's entries as found (NB_LCAP 0), k_build_rows keeps 48 of them
 * in local memory and writes them together.  The second pays where the list
 * outgrows the device's cache, and only there: within it the scattered stores
 * merge in the cache, and the local memory lowers the work-groups a compute
 * unit runs at once.  More than 48 entries would move more stores out of the
 * scattered path at a larger cost in work-groups (bench/md-notes.md, "The
 * list build's scattered stores").  The threshold is the global memory cache
 * the device reports, but at least NB_ROWS_ABOVE: NVIDIA's driver reports
 * 4 MiB for the H100's 50 MB L2, and there a 26 MB list builds faster without
 * the local rows, a 107 MB one with them. */
#define NB_ROWS_ABOVE ((size_t)64 << 20)
static clphys_status nb_build_kernels(clphys_context *ctx, cp_defines opt, clphys_md_neighbor_plan *pl)
{
    cl_program prog;
    cl_ulong cache = 0;
    if (clGetDeviceInfo(ctx->device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof cache, &cache, NULL) != CL_SUCCESS)
        cache = 0;
    pl->rows_above = (size_t)cache > NB_ROWS_ABOVE ? (size_t)cache : NB_ROWS_ABOVE;
    for (int rows = 0; rows < 2; rows++) {
        size_t wg = rows ? 128 : 64;
        int lcap = rows ? 48 : 0;
        while (wg > ctx->info.max_work_group_size) wg /= 2;
        while (lcap > 0 && 4 * wg * (size_t)lcap + 64 > (size_t)ctx->info.local_mem_bytes) lcap /= 2;
        cp_defines o = opt;
        cp_define_int(&o, "NB_WG", (long long)wg);
        cp_define_int(&o, "NB_LCAP", lcap);
        cl_kernel *k = rows ? &pl->k_build_rows : &pl->k_build;
        CP_TRY(cp_program(ctx, &clsrc_md_neighbor_list_cl, &o, &prog));
        CP_TRY(cp_kernel(ctx, prog, "neighbor_build", k));
        CP_TRY(cp_check_work_group(ctx, *k, "neighbor_build", wg));
        *(rows ? &pl->rows_wg : &pl->build_wg) = wg;
    }
    return CLPHYS_SUCCESS;
}

static clphys_status create(clphys_context *ctx, const clphys_md_neighbor_params *p, clphys_md_neighbor_plan *pl)
{
    if (!p->n || p->n > 0x7fffffffu || p->capacity > 0x7fffffffu)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "neighbor: n = %zu (1 .. 2^31-1), capacity = %zu (< 2^31)",
                        p->n, p->capacity);
    if (!(p->r_search > 0) || !isfinite(p->r_search))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "neighbor: r_search = %g must be > 0", p->r_search);
    for (int d = 0; d < 3; d++) {
        if (!isfinite(p->box[d]) || !(p->box[d] >= 2 * p->r_search))
            return cp_error(ctx, CLPHYS_ERR_INPUT,
                            "neighbor: box edge %c = %g is shorter than 2 r_search = %g "
                            "(minimum image needs it)",
                            "xyz"[d], p -> box[d], 2 * p -> r_search);
        /* a small margin keeps the cell edge >= r_search under rounding */
        pl->nc[d] = (int)floor(p->box[d] / (p->r_search * (1 + 1e-5)));
        if (pl->nc[d] < 1) pl->nc[d] = 1;
        if (pl->nc[d] > 1024) pl->nc[d] = 1024;
    }
    /* the grid follows the atoms, not the box: a few atoms in a vast box would
       otherwise make per-cell arrays out of proportion to the input (2 atoms
       in 1500^3: 1.3 GB).  Larger cells only add candidates beyond r_search,
       which the distance test drops, so the lists keep the same pairs. */
    const size_t max_cells = NB_CELLS_PER_ATOM * p->n + 64;
    while ((size_t)pl->nc[0] * pl->nc[1] * pl->nc[2] > max_cells) {
        int d = pl->nc[1] > pl->nc[0] ? 1 : 0;
        if (pl->nc[2] > pl->nc[d]) d = 2;
        pl->nc[d] = (pl->nc[d] + 1) / 2;
    }
    pl->ncells = (size_t)pl->nc[0] * pl->nc[1] * pl->nc[2];
    int staged = p->layout == CLPHYS_MD_NEIGHBOR_STAGED;
    if ((unsigned)p->layout > CLPHYS_MD_NEIGHBOR_STAGED || (staged && p->kind != CLPHYS_MD_NEIGHBOR_FULL))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "neighbor: layout %d with kind %d (the staged layout holds full lists only)", (int)p->layout,
                        (int)p->kind);
    cp_defines opt = {0};
    CP_TRY(cp_define_precision(ctx, &opt, p->precision));
    pl->real_size = p->precision == CLPHYS_FP64 ? 8 : 4;
    pl->scan_wg = 256;
    while (pl->scan_wg > ctx->info.max_work_group_size) pl->scan_wg /= 2;
    cp_define_int(&opt, "SCAN_WG", pl->scan_wg);
    cp_define_int(&opt, "SCAN_ITEMS", SCAN_ITEMS);
    cl_program cp, np;
    CP_TRY(cp_program(ctx, &clsrc_md_cell_list_cl, &opt, &cp));
    /* the build kernel: given, else the tuning cache, else the heuristic */
    if ((unsigned)p->build > CLPHYS_MD_NEIGHBOR_BUILD_CPU)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "neighbor: unknown build kernel %d", (int)p->build);
    md_neighbor_choose(ctx, p, &pl->cpu_build, &pl->source);
    snprintf(pl->choice, sizeof pl->choice, "%s (%s)",
             staged          ? "staged"
             : pl->cpu_build ? "cpu"
                             : "item",
             clphys_tune_source_name(pl->source));
    CP_TRY(cp_kernel(ctx, cp, "cell_assign", &pl->k_assign));
    CP_TRY(cp_kernel(ctx, cp, "scan_exclusive", &pl->k_scan));
    CP_TRY(cp_check_work_group(ctx, pl->k_scan, "scan_exclusive", pl->scan_wg));
    CP_TRY(cp_kernel(ctx, cp, "scan_block_sums", &pl->k_scan_sums));
    CP_TRY(cp_check_work_group(ctx, pl->k_scan_sums, "scan_block_sums", pl->scan_wg));
    CP_TRY(cp_kernel(ctx, cp, "scan_block_write", &pl->k_scan_write));
    CP_TRY(cp_check_work_group(ctx, pl->k_scan_write, "scan_block_write", pl->scan_wg));
    CP_TRY(cp_kernel(ctx, cp, "cell_scatter", &pl->k_scatter));
    CP_TRY(cp_kernel(ctx, cp, "cell_order", &pl->k_order));
    CP_TRY(cp_kernel(ctx, cp, "gather_real4", &pl->k_gather4));
    CP_TRY(cp_kernel(ctx, cp, "gather_uint", &pl->k_gatheru));
    CP_TRY(cp_kernel(ctx, cp, "gather_int4", &pl->k_gatheri4));
    if (staged) {
        CP_TRY(stage_geometry(ctx, p, pl));
        cl_program sp;
        CP_TRY(cp_program(ctx, &clsrc_md_neighbor_staged_cl, &opt, &sp));
        CP_TRY(cp_kernel(ctx, sp, "neighbor_build_staged", &pl->k_build));
        CP_TRY(cp_kernel(ctx, sp, "stage_base", &pl->k_stage));
        size_t ns1 = 9 * (size_t)(pl->stage_bx + 2) + 1;
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * ns1 * pl->nblocks, NULL, &pl->sbase));
    } else if (pl->cpu_build) {
        CP_TRY(cp_program(ctx, &clsrc_md_neighbor_cpu_cl, &opt, &np));
        CP_TRY(cp_kernel(ctx, np, "neighbor_build", &pl->k_build));
    } else {
        CP_TRY(nb_build_kernels(ctx, opt, pl));
    }
    size_t n = p->n, r4 = 4 * pl->real_size;
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, r4 * n, NULL, &pl->pos_in));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, r4 * n, NULL, &pl->pos));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &pl->perm_in));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &pl->perm));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &pl->cell));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &pl->rank));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &pl->order));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * pl->ncells, NULL, &pl->count));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * (pl->ncells + 1), NULL, &pl->start));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &pl->ncount));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * (n + 1), NULL, &pl->offset));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4, NULL, &pl->overflow));
    /* estimate: particles in the search sphere at the mean density, + 25 % */
    double vol = p->box[0] * p->box[1] * p->box[2];
    double est = 4.18879 * pow(p->r_search, 3) * (double)n / vol * 1.25 + 8;
    if (p->kind == CLPHYS_MD_NEIGHBOR_HALF) est = est / 2 + 8;
    pl->capacity = p->capacity > 0 ? p->capacity : (size_t)fmin(est, (double)n);
    pl->list_entries = pl->capacity * n;
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * pl->list_entries, NULL, &pl->list));
    /* the cpu kernel, CSR: one candidate search instead of two (count, then fill) */
    if (pl->cpu_build && p->layout == CLPHYS_MD_NEIGHBOR_CSR)
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * pl->list_entries, NULL, &pl->stage));
    return CLPHYS_SUCCESS;
}

clphys_status clphys_md_neighbor_plan_create(clphys_context *ctx, const clphys_md_neighbor_params *p,
                                             clphys_md_neighbor_plan **plan)
{
    if (!ctx || !p || !plan) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "neighbor: NULL argument");
    *plan = NULL;
    clphys_md_neighbor_params pin;
    CP_TRY(CP_PARAMS_IN(ctx, clphys_md_neighbor_params, p, build, &pin));
    p = &pin;
    clphys_md_neighbor_plan *pl = calloc(1, sizeof *pl);
    if (!pl) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "neighbor plan");
    pl->ctx = ctx;
    pl->p = *p;
    clphys_status st = create(ctx, p, pl);
    if (st) {
        clphys_md_neighbor_plan_destroy(pl);
        return st;
    }
    *plan = pl;
    return CLPHYS_SUCCESS;
}

clphys_status md_neighbor_scan(clphys_md_neighbor_plan *pl, cl_mem in, cl_mem out, cl_uint n)
{
    clphys_context *ctx = pl->ctx;
    const size_t block = pl->scan_wg * SCAN_ITEMS, nb = ((size_t)n + block - 1) / block;
    if (nb <= 1) {
        CP_TRY(CP_ARGS(ctx, pl->k_scan, in, out, n));
        return timed(pl, pl->k_scan, &pl->scan_wg, &pl->scan_wg);
    }
    if (nb > pl->scan_blocks) {
        CP_TRY(cp_finish(ctx)); /* a scan may still read them */
        cp_release_mem(&pl->scan_sums);
        cp_release_mem(&pl->scan_base);
        pl->scan_blocks = 0;
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * (nb + 1), NULL, &pl->scan_sums));
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * (nb + 1), NULL, &pl->scan_base));
        pl->scan_blocks = nb;
    }
    const cl_uint nbu = (cl_uint)nb;
    size_t g = nb * pl->scan_wg;
    CP_TRY(CP_ARGS(ctx, pl->k_scan_sums, in, n, pl->scan_sums));
    CP_TRY(timed(pl, pl->k_scan_sums, &g, &pl->scan_wg));
    CP_TRY(CP_ARGS(ctx, pl->k_scan, pl->scan_sums, pl->scan_base, nbu));
    CP_TRY(timed(pl, pl->k_scan, &pl->scan_wg, &pl->scan_wg));
    CP_TRY(CP_ARGS(ctx, pl->k_scan_write, in, n, pl->scan_base, nbu, out));
    return timed(pl, pl->k_scan_write, &g, &pl->scan_wg);
}

static clphys_status gather(clphys_md_neighbor_plan *pl, cl_kernel k, cl_mem src, cl_mem dst)
{
    clphys_context *ctx = pl->ctx;
    cl_uint n = (cl_uint)pl->p.n;
    size_t g = md_global(n, 64);
    CP_TRY(CP_ARGS(ctx, k, src, pl->order, dst, n));
    return timed(pl, k, &g, NULL);
}

/* The values of arguments 0 .. 5 of both list builds (neighbor_build,
 * neighbor_build_staged): the sorted positions, n, the box, the grid, the
 * cell starts, r_search^2; SEARCH_ARGS(s) lists them for CP_ARGS. */
typedef struct {
    cl_uint n;
    cl_int nc[4];
    double box[4], rs2;
    float boxf[4], rs2f;
    int dbl;
} search_args;
#define SEARCH_ARGS(pl, s)                                                                                             \
    (pl)->pos, (s).n, CP_EITHER((s).dbl, (s).box, (s).boxf), (s).nc, (pl)->start, CP_EITHER((s).dbl, (s).rs2, (s).rs2f)

static void get_search_args(const clphys_md_neighbor_plan *pl, search_args *s)
{
    s->n = (cl_uint)pl->p.n;
    s->rs2 = pl->p.r_search * pl->p.r_search, s->rs2f = (float)s->rs2;
    for (int c = 0; c < 4; c++) {
        s->nc[c] = c < 3 ? pl->nc[c] : 0;
        s->box[c] = c < 3 ? pl->p.box[c] : 0, s->boxf[c] = (float)s->box[c];
    }
    s->dbl = pl->real_size == 8;
}

static clphys_status set_build_args(clphys_md_neighbor_plan *pl, cl_kernel k, int mode)
{
    clphys_context *ctx = pl->ctx;
    cl_uint cap = (cl_uint)pl->capacity;
    cl_int half = pl->p.kind == CLPHYS_MD_NEIGHBOR_HALF, m = mode;
    search_args s;
    get_search_args(pl, &s);
    if (pl->cpu_build) /* pl->stage: NULL unless CSR */
        return CP_ARGS(ctx, k, SEARCH_ARGS(pl, s), half, m, pl->offset, pl->list, cap, pl->ncount, pl->overflow,
                       pl->stage);
    return CP_ARGS(ctx, k, SEARCH_ARGS(pl, s), half, m, pl->offset, pl->list, cap, pl->ncount, pl->overflow);
}

static clphys_status grow_list(clphys_md_neighbor_plan *pl, size_t entries)
{
    cp_release_mem(&pl->list);
    pl->list_entries = entries;
    pl->growths++;
    return cp_buffer(pl->ctx, CL_MEM_READ_WRITE, 4 * entries, NULL, &pl->list);
}

clphys_status md_neighbor_set_count(clphys_md_neighbor_plan *pl, size_t n)
{
    pl->p.n = n;
    if (pl->p.layout == CLPHYS_MD_NEIGHBOR_TRANSPOSED && pl->capacity * n > pl->list_entries)
        return grow_list(pl, pl->capacity * n);
    return CLPHYS_SUCCESS;
}

/* Staged layout: per-block slot offsets, then the list (transposed, growing
 * on overflow like the transposed build). */
static clphys_status build_staged(clphys_md_neighbor_plan *pl, cl_uint *maxc)
{
    clphys_context *ctx = pl->ctx;
    cl_uint n = (cl_uint)pl->p.n, nb = (cl_uint)pl->nblocks, zero = 0, cap = (cl_uint)pl->capacity;
    cl_int nc[4] = {pl->nc[0], pl->nc[1], pl->nc[2], 0}, bx = pl->stage_bx;
    size_t g = md_global(n, 64), gb = md_global(nb, 64);
    cl_kernel k = pl->k_stage;
    CP_TRY(cp_write(ctx, pl->overflow, 0, 4, &zero));
    CP_TRY(CP_ARGS(ctx, k, pl->start, nc, bx, nb, pl->sbase, pl->overflow));
    CP_TRY(timed(pl, k, &gb, NULL));
    CP_TRY(cp_read(ctx, pl->overflow, 0, 4, &pl->stage_max));
    if (md_stage_bytes(pl, pl->stage_max) > (size_t)ctx->info.local_mem_bytes && pl->stage_bx > 1) {
        /* a denser region than planned for: narrower blocks, new tables */
        pl->stage_bx--;
        pl->nblocks = (size_t)((pl->nc[0] + pl->stage_bx - 1) / pl->stage_bx) * pl->nc[1] * pl->nc[2];
        cp_release_mem(&pl->sbase);
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * (9 * (size_t)(pl->stage_bx + 2) + 1) * pl->nblocks, NULL,
                         &pl->sbase));
        return build_staged(pl, maxc);
    }
    if (md_stage_bytes(pl, pl->stage_max) > (size_t)ctx->info.local_mem_bytes)
        return cp_error(ctx, CLPHYS_ERR_OVERFLOW,
                        "neighbor: a block's stage holds %u particles (%zu bytes of local memory), "
                        "beyond the %llu of %s; use a full-transposed list for this density",
                        pl->stage_max, md_stage_bytes(pl, pl->stage_max), (unsigned long long)ctx->info.local_mem_bytes,
                        ctx->info.name);
    k = pl->k_build;
    CP_TRY(cp_write(ctx, pl->overflow, 0, 4, &zero));
    search_args s;
    get_search_args(pl, &s);
    CP_TRY(CP_ARGS(ctx, k, SEARCH_ARGS(pl, s), bx, pl->sbase, pl->list, cap, pl->ncount, pl->overflow));
    CP_TRY(timed(pl, k, &g, NULL));
    return cp_read(ctx, pl->overflow, 0, 4, maxc);
}

/* A transposed list's rows grown to the largest count seen (+ margin) for
 * the rebuild after an overflow. */
static clphys_status grow_capacity(clphys_md_neighbor_plan *pl, cl_uint maxc)
{
    const size_t cap = (size_t)(maxc * 1.2) + 8, n = pl->p.n;
    if (cap * n > pl->ctx->info.max_alloc_bytes / 4)
        return cp_error(pl->ctx, CLPHYS_ERR_OVERFLOW,
                        "neighbor: %u neighbours of one particle need %zu list entries, "
                        "beyond the device's largest allocation",
                        maxc, cap * n);
    pl->capacity = cap;
    return grow_list(pl, cap * n);
}

static clphys_status build_list(clphys_md_neighbor_plan *pl)
{
    clphys_context *ctx = pl->ctx;
    pl->gen++;
    size_t n = pl->p.n, wg = pl->build_wg, g = md_global(n, wg ? wg : 64);
    const size_t *local = wg ? &pl->build_wg : NULL;
    if (pl->p.layout == CLPHYS_MD_NEIGHBOR_CSR) {
        CP_TRY(set_build_args(pl, pl->k_build, 0));
        CP_TRY(timed(pl, pl->k_build, &g, local));
        CP_TRY(md_neighbor_scan(pl, pl->ncount, pl->offset, (cl_uint)n));
        cl_uint total;
        CP_TRY(cp_read(ctx, pl->offset, 4 * n, 4, &total));
        if (total > pl->list_entries) CP_TRY(grow_list(pl, (size_t)(total * 1.2) + 64));
        /* mode 3 (the cpu kernel): copy the staged rows, recompute only longer ones */
        CP_TRY(set_build_args(pl, pl->k_build, pl->stage ? 3 : 1));
        CP_TRY(timed(pl, pl->k_build, &g, local));
        pl->pairs = total;
        return CLPHYS_SUCCESS;
    }
    static const cl_uint zero = 0; /* not touched again: its write goes without a wait */
    for (;;) {
        cl_uint maxc;
        if (pl->p.layout == CLPHYS_MD_NEIGHBOR_STAGED) {
            CP_TRY(build_staged(pl, &maxc));
        } else {
            /* rows in local memory where the list outgrows the cache */
            int rows = pl->k_build_rows && 4 * pl->capacity * n > pl->rows_above;
            cl_kernel k = rows ? pl->k_build_rows : pl->k_build;
            size_t gk = rows ? md_global(n, pl->rows_wg) : g;
            CP_TRY(cp_write_async(ctx, NULL, pl->overflow, 0, 4, &zero, 0, NULL, NULL));
            CP_TRY(set_build_args(pl, k, 2));
            CP_TRY(timed(pl, k, &gk, rows ? &pl->rows_wg : local));
            if (pl->overflow_at) {
                pl->overflow_pending = 1;
                pl->pairs = MD_PAIRS_UNCOUNTED;
                return cp_read_async(ctx, NULL, pl->overflow, 0, 4, pl->overflow_at, 0, NULL, NULL);
            }
            CP_TRY(cp_read(ctx, pl->overflow, 0, 4, &maxc));
        }
        if (maxc <= pl->capacity) break;
        CP_TRY(grow_capacity(pl, maxc));
    }
    pl->pairs = MD_PAIRS_UNCOUNTED;
    return CLPHYS_SUCCESS;
}

clphys_status md_neighbor_overflow_check(clphys_md_neighbor_plan *pl, int *rebuilt)
{
    *rebuilt = 0;
    if (!pl->overflow_pending) return CLPHYS_SUCCESS;
    pl->overflow_pending = 0;
    const cl_uint maxc = *pl->overflow_at;
    if (maxc <= pl->capacity) return CLPHYS_SUCCESS;
    *rebuilt = 1;
    cl_uint *at = pl->overflow_at;
    pl->overflow_at = NULL; /* the rebuild below waits for its counts */
    clphys_status st = grow_capacity(pl, maxc);
    if (!st) st = build_list(pl);
    pl->overflow_at = at;
    return st;
}

/* The list's entries: pl->pairs, or the sum of the counts read back. */
static clphys_status count_pairs(const clphys_md_neighbor_plan *pl, size_t *pairs)
{
    *pairs = pl->pairs;
    if (pl->pairs != MD_PAIRS_UNCOUNTED) return CLPHYS_SUCCESS;
    size_t n = pl->p.n, sum = 0;
    cl_uint *c = malloc(4 * (n ? n : 1));
    if (!c) return cp_error(pl->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "neighbor counts");
    clphys_status st = n ? cp_read(pl->ctx, pl->ncount, 0, 4 * n, c) : CLPHYS_SUCCESS;
    for (size_t i = 0; !st && i < n; i++) sum += c[i];
    free(c);
    if (!st) *pairs = sum;
    return st;
}

clphys_status md_neighbor_pairs(clphys_md_neighbor_plan *pl, size_t *pairs)
{
    CP_TRY(count_pairs(pl, pairs));
    pl->pairs = *pairs;
    return CLPHYS_SUCCESS;
}

clphys_status md_neighbor_rebuild(clphys_md_neighbor_plan *pl, cl_mem *extra_src, cl_mem *extra_dst, int n_extra,
                                  cl_mem img_src, cl_mem img_dst)
{
    clphys_context *ctx = pl->ctx;
    cl_uint n = (cl_uint)pl->p.n, ncells = (cl_uint)pl->ncells;
    size_t g = md_global(n, 64), gc = md_global(ncells, 64);
    cl_int nc[4] = {pl->nc[0], pl->nc[1], pl->nc[2], 0};
    double box[4] = {pl->p.box[0], pl->p.box[1], pl->p.box[2], 0};
    float boxf[4] = {(float)box[0], (float)box[1], (float)box[2], 0};
    cl_uint zero = 0;
    pl->kernel_s = 0;
    CP_TRY(cp_fill(ctx, pl->count, &zero, 4, 4 * pl->ncells));
    cl_kernel k = pl->k_assign;
    CP_TRY(CP_ARGS(ctx, k, pl->pos_in, n, CP_EITHER(pl->real_size == 8, box, boxf), nc, pl->cell, pl->rank, pl->count));
    CP_TRY(timed(pl, k, &g, NULL));
    CP_TRY(md_neighbor_scan(pl, pl->count, pl->start, ncells));
    k = pl->k_scatter;
    CP_TRY(CP_ARGS(ctx, k, pl->cell, pl->rank, pl->start, pl->order, n));
    CP_TRY(timed(pl, k, &g, NULL));
    k = pl->k_order;
    CP_TRY(CP_ARGS(ctx, k, pl->start, pl->order, ncells));
    CP_TRY(timed(pl, k, &gc, NULL));
    CP_TRY(gather(pl, pl->k_gather4, pl->pos_in, pl->pos));
    CP_TRY(gather(pl, pl->k_gatheru, pl->perm_in, pl->perm));
    for (int e = 0; e < n_extra; e++) CP_TRY(gather(pl, pl->k_gather4, extra_src[e], extra_dst[e]));
    if (img_src) CP_TRY(gather(pl, pl->k_gatheri4, img_src, img_dst));
    if (pl->k_pack) {
        k = pl->k_pack;
        CP_TRY(CP_ARGS(ctx, k, pl->cell, pl->order, pl->pcell, n, nc));
        CP_TRY(timed(pl, k, &g, NULL));
    }
    return build_list(pl);
}

clphys_status md_neighbor_want_cells(clphys_md_neighbor_plan *pl)
{
    if (pl->k_pack) return CLPHYS_SUCCESS;
    clphys_context *ctx = pl->ctx;
    cp_defines opt = {0};
    CP_TRY(cp_define_precision(ctx, &opt, pl->p.precision));
    cp_define_int(&opt, "SCAN_WG", pl->scan_wg);
    cp_define_int(&opt, "SCAN_ITEMS", SCAN_ITEMS);
    cl_program cp;
    CP_TRY(cp_program(ctx, &clsrc_md_cell_list_cl, &opt, &cp));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * pl->p.n, NULL, &pl->pcell));
    return cp_kernel(ctx, cp, "cell_pack", &pl->k_pack);
}

clphys_status md_neighbor_upload(clphys_md_neighbor_plan *pl, const double *pos)
{
    clphys_context *ctx = pl->ctx;
    size_t n = pl->p.n;
    for (size_t i = 0; i < 3 * n; i++)
        if (!isfinite(pos[i]))
            return cp_error(ctx, CLPHYS_ERR_INPUT, "neighbor: particle %zu has a non-finite coordinate", i / 3);
    CP_TRY(md_upload_real4(ctx, pl->real_size, pl->pos_in, pos, n, 0, pl->p.box));
    cl_uint *id = malloc(4 * n);
    if (!id) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "neighbor ids");
    for (size_t i = 0; i < n; i++) id[i] = (cl_uint)i;
    clphys_status st = cp_write(ctx, pl->perm_in, 0, 4 * n, id);
    free(id);
    return st;
}

clphys_status clphys_md_neighbor_build(clphys_md_neighbor_plan *pl, const double *pos)
{
    if (!pl || !pos) return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "neighbor: NULL argument");
    CP_TRY(md_neighbor_upload(pl, pos));
    return md_neighbor_rebuild(pl, NULL, NULL, 0, NULL, NULL);
}

double clphys_md_neighbor_build_seconds(const clphys_md_neighbor_plan *pl) { return pl ? pl->kernel_s : 0; }

const char *clphys_md_neighbor_plan_choice(const clphys_md_neighbor_plan *pl) { return pl ? pl->choice : ""; }

clphys_tune_source clphys_md_neighbor_plan_tune_source(const clphys_md_neighbor_plan *pl)
{
    return pl ? pl->source : CLPHYS_TUNE_HEURISTIC;
}

clphys_status md_neighbor_regather(clphys_md_neighbor_plan *pl)
{
    return gather(pl, pl->k_gather4, pl->pos_in, pl->pos);
}

clphys_status clphys_md_neighbor_stats(const clphys_md_neighbor_plan *pl, size_t *pairs, size_t *capacity, int *growths)
{
    if (!pl) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "neighbor: NULL plan");
    if (pairs) CP_TRY(count_pairs(pl, pairs));
    if (capacity) *capacity = pl->capacity;
    if (growths) *growths = pl->growths;
    return CLPHYS_SUCCESS;
}

static size_t last_le(const cl_uint *a, size_t len, cl_uint v) /* largest k: a[k] <= v */
{
    size_t lo = 0, hi = len;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (a[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static int wrap(int v, int m)
{
    v %= m;
    return v < 0 ? v + m : v;
}

/* Staged entries (slots, cl/platform_stage.h) of sorted rows in CSR form -> sorted j. */
static clphys_status decode_staged(clphys_md_neighbor_plan *pl, const cl_uint *off, cl_int *list)
{
    clphys_context *ctx = pl->ctx;
    int bx = pl->stage_bx, w = bx + 2, ns = 9 * w, *nc = pl->nc, nbx = (nc[0] + bx - 1) / bx;
    cl_uint *start = malloc(4 * (pl->ncells + 1)), *base = malloc(4 * (size_t)(ns + 1) * pl->nblocks);
    clphys_status st = (!start || !base) ? cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "stage tables")
                                         : cp_read(ctx, pl->start, 0, 4 * (pl->ncells + 1), start);
    if (!st) st = cp_read(ctx, pl->sbase, 0, 4 * (size_t)(ns + 1) * pl->nblocks, base);
    for (size_t i = 0; !st && i < pl->p.n; i++) {
        size_t c = last_le(start, pl->ncells, (cl_uint)i);
        int cx = (int)(c % nc[0]), cy = (int)(c / nc[0] % nc[1]), cz = (int)(c / nc[0] / nc[1]);
        size_t b = ((size_t)cz * nc[1] + cy) * nbx + cx / bx;
        const cl_uint *bb = base + b * (ns + 1);
        for (cl_uint k = off[i]; k < off[i + 1]; k++) {
            int lc = (int)last_le(bb, (size_t)ns, (cl_uint)list[k]);
            int x = wrap((cx / bx) * bx - 1 + lc % w, nc[0]);
            int y = wrap(cy + lc / w % 3 - 1, nc[1]), z = wrap(cz + lc / w / 3 - 1, nc[2]);
            list[k] = (cl_int)(start[((size_t)z * nc[1] + y) * nc[0] + x] + (cl_uint)list[k] - bb[lc]);
        }
    }
    free(start);
    free(base);
    return st;
}

/* Host copies of the list in CSR form, sorted indices (caller frees); raw
 * keeps staged entries as slots (for the shuffle, which only permutes). */
static clphys_status host_csr(clphys_md_neighbor_plan *pl, cl_uint **off, cl_int **list, cl_uint **perm, int raw)
{
    clphys_context *ctx = pl->ctx;
    size_t n = pl->p.n, pairs;
    CP_TRY(md_neighbor_pairs(pl, &pairs));
    *off = malloc(4 * (n + 1));
    *list = malloc(4 * (pairs + 1));
    *perm = malloc(4 * n);
    if (!*off || !*list || !*perm) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "neighbor list copy");
    CP_TRY(cp_read(ctx, pl->perm, 0, 4 * n, *perm));
    if (pl->p.layout == CLPHYS_MD_NEIGHBOR_CSR) {
        CP_TRY(cp_read(ctx, pl->offset, 0, 4 * (n + 1), *off));
        if (pl->pairs) CP_TRY(cp_read(ctx, pl->list, 0, 4 * pl->pairs, *list));
        return CLPHYS_SUCCESS;
    }
    cl_uint *cnt = malloc(4 * n);
    cl_int *t = malloc(4 * pl->list_entries);
    clphys_status st = (!cnt || !t) ? cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "neighbor list copy")
                                    : cp_read(ctx, pl->ncount, 0, 4 * n, cnt);
    if (!st) st = cp_read(ctx, pl->list, 0, 4 * pl->list_entries, t);
    if (!st) {
        (*off)[0] = 0;
        for (size_t i = 0; i < n; i++) {
            (*off)[i + 1] = (*off)[i] + cnt[i];
            for (cl_uint k = 0; k < cnt[i]; k++) (*list)[(*off)[i] + k] = t[(size_t)k * n + i];
        }
    }
    free(cnt);
    free(t);
    if (!st && !raw && pl->p.layout == CLPHYS_MD_NEIGHBOR_STAGED) st = decode_staged(pl, *off, *list);
    return st;
}

clphys_status clphys_md_neighbor_get(clphys_md_neighbor_plan *pl, size_t *offsets, int *list)
{
    if (!pl || !offsets || !list)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "neighbor: NULL argument");
    size_t n = pl->p.n;
    cl_uint *off = NULL, *perm = NULL;
    cl_int *l = NULL;
    clphys_status st = host_csr(pl, &off, &l, &perm, 0);
    if (!st) {
        /* rows in caller order: row of caller index perm[s] is sorted row s */
        for (size_t s = 0; s < n; s++) offsets[perm[s] + 1] = off[s + 1] - off[s];
        offsets[0] = 0;
        for (size_t i = 0; i < n; i++) offsets[i + 1] += offsets[i];
        for (size_t s = 0; s < n; s++) {
            size_t o = offsets[perm[s]];
            for (cl_uint k = off[s]; k < off[s + 1]; k++) list[o++] = (int)perm[l[k]];
        }
    }
    free(off);
    free(l);
    free(perm);
    return st;
}

clphys_status clphys_md_neighbor_shuffle(clphys_md_neighbor_plan *pl, uint64_t seed)
{
    if (!pl) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "neighbor: NULL plan");
    clphys_context *ctx = pl->ctx;
    size_t n = pl->p.n;
    cl_uint *off = NULL, *perm = NULL;
    cl_int *l = NULL;
    clphys_status st = host_csr(pl, &off, &l, &perm, 1);
    pl->gen++;
    if (!st) {
        for (size_t i = 0; i < n; i++)
            for (cl_uint k = off[i + 1] - off[i]; k > 1; k--) { /* Fisher-Yates */
                cl_uint r = (cl_uint)(cp_splitmix64(&seed) % k);
                cl_int t = l[off[i] + k - 1];
                l[off[i] + k - 1] = l[off[i] + r];
                l[off[i] + r] = t;
            }
        if (pl->p.layout == CLPHYS_MD_NEIGHBOR_CSR) {
            if (pl->pairs) st = cp_write(ctx, pl->list, 0, 4 * pl->pairs, l);
        } else {
            cl_int *t = calloc(pl->list_entries, 4);
            if (!t) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "neighbor shuffle");
            for (size_t i = 0; t && i < n; i++)
                for (cl_uint k = off[i]; k < off[i + 1]; k++) t[(size_t)(k - off[i]) * n + i] = l[k];
            if (t) st = cp_write(ctx, pl->list, 0, 4 * pl->list_entries, t);
            free(t);
        }
    }
    free(off);
    free(l);
    free(perm);
    return st;
}
