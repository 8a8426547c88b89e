/* lj.c — Lennard-Jones plan: owns a neighbour list and one kernel variant
 * (cl/md_lj.cl, cl/md_lj_cpu.cl; the half-cas lists in lj_half_cas.c); forces,
 * energy and virial returned in the caller's order. */
#include "md_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Public names, in enum order; variant v runs kernel "lj_" + its name with
 * '-' as '_' (kernel_name). */
static const char *names[CLPHYS_MD_LJ_NVARIANTS] = {
    "auto", "full-csr", "full-transposed", "full-group", "half-cas", "half-fixedpoint", "cpu", "full-staged"};

const char *clphys_md_lj_variant_name(clphys_md_lj_variant v)
{
    return (unsigned)v < CLPHYS_MD_LJ_NVARIANTS ? names[v] : "unknown";
}

clphys_status clphys_md_lj_variant_from_name(const char *name, clphys_md_lj_variant *v)
{
    char all[256] = "";
    for (int i = 0; i < CLPHYS_MD_LJ_NVARIANTS; i++) {
        if (name && v && !strcmp(name, names[i])) {
            *v = (clphys_md_lj_variant)i;
            return CLPHYS_SUCCESS;
        }
        size_t o = strlen(all);
        snprintf(all + o, sizeof all - o, "%s%s", i ? ", " : "", names[i]);
    }
    return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "unknown LJ variant '%s' (%s)", name ? name : "(null)", all);
}

static void kernel_name(clphys_md_lj_variant v, char *buf, size_t len)
{
    snprintf(buf, len, "lj_%s", names[v]);
    for (char *c = buf; *c; c++)
        if (*c == '-') *c = '_';
}

clphys_md_neighbor_plan *clphys_md_lj_neighbor(clphys_md_lj_plan *pl) { return pl ? pl->nb : NULL; }

clphys_md_lj_variant clphys_md_lj_plan_variant(const clphys_md_lj_plan *pl)
{
    return pl ? pl->variant : CLPHYS_MD_LJ_AUTO;
}

void clphys_md_lj_plan_destroy(clphys_md_lj_plan *pl)
{
    if (!pl) return;
    clphys_md_neighbor_plan_destroy(pl->nb);
    cl_kernel *ks[] = {&pl->k,        &pl->k_convert, &pl->k_bcount, &pl->k_rows, &pl->k_tables,
                       &pl->k_derive, &pl->k_key,     &pl->k_rank,   &pl->k_lanes};
    for (size_t q = 0; q < sizeof ks / sizeof *ks; q++) cp_release_kernel(ks[q]);
    cl_mem *ms[] = {&pl->f,     &pl->vir,   &pl->fx3,    &pl->bad,   &pl->ovf, &pl->bcount, &pl->bstart, &pl->rowi,
                    &pl->rowof, &pl->sbase, &pl->slot_j, &pl->nslot, &pl->hl,  &pl->hs,     &pl->hcount, &pl->rowtmp};
    for (size_t q = 0; q < sizeof ms / sizeof *ms; q++) cp_release_mem(ms[q]);
    free(pl);
}

static clphys_status check_params(clphys_context *ctx, const clphys_md_lj_params *p)
{
    if (!(p->r_cut > 0) || !(p->skin >= 0) || !(p->epsilon > 0) || !(p->sigma > 0))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "lj: r_cut = %g, skin = %g, epsilon = %g, sigma = %g (need r_cut, eps, "
                        "sigma > 0, skin >= 0)",
                        p->r_cut, p->skin, p->epsilon, p->sigma);
    if ((unsigned)p->variant >= CLPHYS_MD_LJ_NVARIANTS)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "lj: unknown variant %d", (int)p->variant);
    if ((unsigned)p->slot_order > CLPHYS_MD_LJ_ORDER_BOTH || (unsigned)p->defer_exchanges > 2 ||
        p->entries_ahead == 1 || (unsigned)p->entries_ahead > 4)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "lj: slot_order = %d (0 .. 4), defer_exchanges = %d (0 .. 2), entries_ahead = %d "
                        "(0, 2 .. 4)",
                        (int)p->slot_order, p->defer_exchanges, p->entries_ahead);
    return CLPHYS_SUCCESS;
}

/* lj_full_transposed_lanes: work-items per row, and its work-group (eight
 * rows of eight lanes) */
enum { LJ_LANES = 8, LJ_LANES_WG = 64 };

static clphys_status create(clphys_context *ctx, clphys_md_lj_plan *pl)
{
    clphys_md_lj_params *p = &pl->p;
    const clphys_device_info *dev = &ctx->info;
    if (p->epsilon == 0) p->epsilon = 1;
    if (p->sigma == 0) p->sigma = 1;
    CP_TRY(check_params(ctx, p));
    /* auto, when the tuning cache has no entry (clphys_md_lj_plan_create looks
     * first): the full transposed list on GPUs, the explicit-vector cpu
     * variant on CPUs (PoCL); bench/md-notes.md, "Choices", says why */
    pl->variant = p->variant != CLPHYS_MD_LJ_AUTO ? p->variant
                  : !dev->is_cpu                  ? CLPHYS_MD_LJ_FULL_TRANSPOSED
                                                  : CLPHYS_MD_LJ_CPU;
    int fixed = pl->variant == CLPHYS_MD_LJ_HALF_FIXEDPOINT, hcas = pl->variant == CLPHYS_MD_LJ_HALF_CAS;
    int staged = pl->variant == CLPHYS_MD_LJ_FULL_STAGED;
    pl->shift = 0;
    if (p->shifted) {
        double s6 = pow(p->sigma / p->r_cut, 6);
        pl->shift = 4 * p->epsilon * s6 * (s6 - 1);
    }
    /* half-cas derives its half lists (cl/md_half_slot.cl) from a full
     * transposed list, which keeps the rebuild and shuffle of the other
     * variants */
    clphys_md_neighbor_params np = {.n = p->n,
                                    .box = {p->box[0], p->box[1], p->box[2]},
                                    .r_search = p->r_cut + p->skin,
                                    .kind = fixed ? CLPHYS_MD_NEIGHBOR_HALF : CLPHYS_MD_NEIGHBOR_FULL,
                                    .layout = pl->variant == CLPHYS_MD_LJ_FULL_TRANSPOSED || hcas
                                                  ? CLPHYS_MD_NEIGHBOR_TRANSPOSED
                                              : staged ? CLPHYS_MD_NEIGHBOR_STAGED
                                                       : CLPHYS_MD_NEIGHBOR_CSR,
                                    .precision = p->precision};
    CP_TRY(clphys_md_neighbor_plan_create(ctx, &np, &pl->nb));
    /* 256 on GPUs: the best or near it for the one-work-item-per-i kernels
     * on the H100 (bench/md-notes.md, "Choices") */
    size_t wg0 = staged ? 128 : dev->is_cpu ? 16 : 256;
    if (wg0 > dev->max_work_group_size) wg0 = dev->max_work_group_size; /* a default only: asked sizes are checked */
    pl->wg = p->work_group_size > 0 ? (size_t)p->work_group_size : wg0;
    pl->tpi = p->group_size > 0 ? (size_t)p->group_size : 8;
    if (pl->variant == CLPHYS_MD_LJ_FULL_GROUP &&
        (pl->tpi & (pl->tpi - 1) || pl->wg % pl->tpi || pl->wg > dev->max_work_group_size))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "lj: group_size %zu must be a power of 2 dividing work_group_size %zu "
                        "(<= %zu)",
                        pl->tpi, pl->wg, dev->max_work_group_size);
    cp_defines opt = {0};
    CP_TRY(cp_define_precision(ctx, &opt, p->precision));
    size_t rs = p->precision == CLPHYS_FP64 ? 8 : 4, n = p->n;
    if (pl->variant == CLPHYS_MD_LJ_FULL_GROUP) {
        cp_define_int(&opt, "LJ_TPI", pl->tpi);
        cp_define_int(&opt, "LJ_WG", pl->wg);
    }
    if (staged) cp_define_int(&opt, "LJ_WG", pl->wg);
    if (pl->variant == CLPHYS_MD_LJ_FULL_TRANSPOSED) {
        cp_define_int(&opt, "LJ_WG", LJ_LANES_WG);
        cp_define_int(&opt, "LJ_LANES", LJ_LANES);
    }
    /* fixed point: 2^44 in fp64 (resolution 6e-14, |F| < 5e5), 2^32 in fp32 */
    if (fixed) {
        cp_define_int(&opt, "LJ_HALF_FIXEDPOINT", 1);
        cp_define_int(&opt, "NEED_INT64_ATOMICS", 1);
        cp_define_str(&opt, "FIXED_SCALE", p->precision == CLPHYS_FP64 ? "17592186044416.0" : "4294967296.0f");
    }
    cl_program prog = NULL;
    if (hcas) {
        CP_TRY(md_half_cas_create(ctx, pl, &opt));
    } else {
        char kn[32];
        kernel_name(pl->variant, kn, sizeof kn);
        CP_TRY(cp_program(ctx, pl->variant == CLPHYS_MD_LJ_CPU ? &clsrc_md_lj_cpu_cl : &clsrc_md_lj_cl, &opt, &prog));
        CP_TRY(cp_kernel(ctx, prog, kn, &pl->k));
        /* a default size the compiled kernel cannot run (registers) shrinks,
         * unless the kernel was built for it (full-group's local arrays,
         * full-staged's stage) */
        size_t kwg;
        CP_TRY(cp_kernel_limits(ctx, pl->k, &kwg, NULL));
        if (p->work_group_size <= 0 && pl->variant != CLPHYS_MD_LJ_FULL_GROUP && !staged)
            while (pl->wg > kwg && pl->wg > 1) pl->wg /= 2;
        CP_TRY(cp_check_work_group(ctx, pl->k, kn, pl->wg));
        if (pl->variant == CLPHYS_MD_LJ_FULL_TRANSPOSED) {
            CP_TRY(cp_kernel(ctx, prog, "lj_full_transposed_lanes", &pl->k_lanes));
            CP_TRY(cp_check_work_group(ctx, pl->k_lanes, "lj_full_transposed_lanes", LJ_LANES_WG));
        }
    }
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * rs * n, NULL, &pl->f));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, rs * n, NULL, &pl->vir));
    if (fixed) {
        CP_TRY(cp_kernel(ctx, prog, "lj_fixed_convert", &pl->k_convert));
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 24 * n, NULL, &pl->fx3));
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4, NULL, &pl->bad));
    }
    return CLPHYS_SUCCESS;
}

static const char *order_names[] = {"auto", "plain", "cut-first", "sorted-rows", "both"};

/* pl->choice: the variant, the options that apply to it, their source. */
static void describe(clphys_md_lj_plan *pl, const char *source)
{
    const clphys_md_lj_params *p = &pl->p;
    char *c = pl->choice;
    const size_t n = sizeof pl->choice;
    int o = snprintf(c, n, "%s", names[pl->variant]);
    if (pl->variant == CLPHYS_MD_LJ_FULL_GROUP) o += snprintf(c + o, n - (size_t)o, " group_size=%zu", pl->tpi);
    if (pl->variant == CLPHYS_MD_LJ_HALF_CAS)
        o += snprintf(c + o, n - (size_t)o, " slot_order=%s defer_exchanges=%d entries_ahead=%d",
                      order_names[pl->order + 1], p->defer_exchanges ? p->defer_exchanges : 1,
                      p->entries_ahead ? p->entries_ahead : 2);
    snprintf(c + o, n - (size_t)o, " work_group_size=%zu (%s)", pl->wg, source);
}

static clphys_status try_create(clphys_context *ctx, const clphys_md_lj_params *p, clphys_md_lj_plan **plan)
{
    clphys_md_lj_plan *pl = calloc(1, sizeof *pl);
    if (!pl) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "lj plan");
    pl->ctx = ctx;
    pl->p = *p;
    clphys_status st = create(ctx, pl);
    if (st) {
        clphys_md_lj_plan_destroy(pl);
        return st;
    }
    *plan = pl;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_md_lj_plan_create(clphys_context *ctx, const clphys_md_lj_params *p, clphys_md_lj_plan **plan)
{
    if (!ctx || !p || !plan) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "lj: NULL argument");
    *plan = NULL;
    clphys_md_lj_params pin;
    CP_TRY(CP_PARAMS_IN(ctx, clphys_md_lj_params, p, entries_ahead, &pin));
    p = &pin;
    /* what the params leave to auto comes from the tuning cache when it has
     * an entry for this device, precision, size and density class; a cached
     * choice that cannot be made here (another driver's limits) falls back
     * to the heuristic, so the cache never makes a plan fail (the params are
     * checked by create(), after the defaults of their zeros) */
    clphys_tune_source source;
    clphys_status st = md_lj_choose(ctx, p, try_create, plan, &source);
    if (!st) {
        (*plan)->source = source;
        describe(*plan, clphys_tune_source_name(source));
    }
    return st;
}

const char *clphys_md_lj_plan_choice(const clphys_md_lj_plan *pl) { return pl ? pl->choice : ""; }

clphys_tune_source clphys_md_lj_plan_tune_source(const clphys_md_lj_plan *pl)
{
    return pl ? pl->source : CLPHYS_TUNE_HEURISTIC;
}

clphys_status md_lj_set_count(clphys_md_lj_plan *pl, size_t n)
{
    pl->p.n = n;
    return md_neighbor_set_count(pl->nb, n);
}

clphys_status clphys_md_lj_set_positions(clphys_md_lj_plan *pl, const double *pos)
{
    if (!pl) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "lj: NULL plan");
    return clphys_md_neighbor_build(pl->nb, pos);
}

clphys_status clphys_md_lj_update_positions(clphys_md_lj_plan *pl, const double *pos)
{
    if (!pl || !pos) return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "lj: NULL argument");
    size_t rs = pl->p.precision == CLPHYS_FP64 ? 8 : 4;
    CP_TRY(md_upload_real4(pl->ctx, rs, pl->nb->pos_in, pos, pl->p.n, 0, pl->p.box));
    return md_neighbor_regather(pl->nb);
}

/* The forces: every row, or (count > 0: full-csr and full-transposed)
 * rows first .. first + count - 1 and at most a work-group beyond, or
 * (rows non-NULL: full-transposed) the count rows listed in rows by
 * lj_full_transposed_lanes, on queue q (NULL: ctx's). */
static clphys_status evaluate(clphys_md_lj_plan *pl, double *kernel_s, size_t first, size_t count, cl_mem rows,
                              cl_command_queue q)
{
    clphys_context *ctx = pl->ctx;
    clphys_md_neighbor_plan *nb = pl->nb;
    clphys_md_lj_variant v = pl->variant;
    int hcas = v == CLPHYS_MD_LJ_HALF_CAS, staged = v == CLPHYS_MD_LJ_FULL_STAGED;
    if (hcas && pl->derived_gen != nb->gen) CP_TRY(md_half_cas_derive(pl));
    cl_kernel k = rows ? pl->k_lanes : pl->k;
    cl_uint n = (cl_uint)pl->p.n;
    int dbl = pl->p.precision == CLPHYS_FP64;
    double rc = pl->p.r_cut, sg = pl->p.sigma, ep = pl->p.epsilon;
    double d[4] = {pl->p.box[0], pl->p.box[1], pl->p.box[2], 0};
    double c[5] = {rc * rc, 4 * ep, 24 * ep, sg * sg, pl->shift};
    float df[4] = {(float)d[0], (float)d[1], (float)d[2], 0}, cf[5];
    for (int i = 0; i < 5; i++) cf[i] = (float)c[i];
    /* the arguments differ by variant: gathered here, set at once */
    cp_karg arg[32];
    cl_uint a = 0;
    arg[a++] = CP_KARG(nb->pos);
    arg[a++] = CP_KARG(n);
    cl_mem counts = hcas ? pl->hcount : v == CLPHYS_MD_LJ_FULL_TRANSPOSED || staged ? nb->ncount : nb->offset;
    arg[a++] = CP_KARG(counts);
    cl_mem list = hcas ? pl->hl : nb->list;
    arg[a++] = CP_KARG(list);
    double id[4] = {1 / d[0], 1 / d[1], 1 / d[2], 0};
    float idf[4] = {(float)id[0], (float)id[1], (float)id[2], 0};
    arg[a++] = CP_EITHER(dbl, d, df);
    arg[a++] = CP_EITHER(dbl, id, idf);
    for (int i = 0; i < 5; i++) arg[a++] = CP_EITHER(dbl, c[i], cf[i]);
    size_t rs = dbl ? 8 : 4;
    if (v == CLPHYS_MD_LJ_HALF_FIXEDPOINT) {
        cl_long z = 0;
        cl_uint zu = 0;
        CP_TRY(cp_fill(ctx, pl->fx3, &z, 8, 24 * (size_t)n));
        CP_TRY(cp_write(ctx, pl->bad, 0, 4, &zu));
        arg[a++] = CP_KARG(pl->fx3);
    } else if (hcas) { /* the exchanges add to f */
        double z = 0;
        float zf = 0;
        CP_TRY(dbl ? cp_fill(ctx, pl->f, &z, 8, 4 * rs * n) : cp_fill(ctx, pl->f, &zf, 4, 4 * rs * n));
    }
    arg[a++] = CP_KARG(pl->f);
    arg[a++] = CP_KARG(pl->vir);
    size_t g;
    if (v == CLPHYS_MD_LJ_HALF_FIXEDPOINT) arg[a++] = CP_KARG(pl->bad);
    cl_int nc[4] = {nb->nc[0], nb->nc[1], nb->nc[2], 0}, bx = nb->stage_bx;
    cl_uint stcap = nb->stage_max > 0 ? nb->stage_max : 1;
    if (staged) {
        arg[a++] = CP_KARG(nb->start);
        arg[a++] = CP_KARG(nb->sbase);
        arg[a++] = CP_KARG(nc);
        arg[a++] = CP_KARG(bx);
        arg[a++] = CP_LOCAL(3 * rs * stcap); /* the stage */
        arg[a++] = CP_KARG(stcap);
        arg[a++] = CP_LOCAL(4 * (9 * (size_t)(bx + 2) + 1)); /* slot offsets */
    }
    if (hcas) {
        arg[a++] = CP_KARG(pl->hs);
        arg[a++] = CP_KARG(pl->bstart);
        arg[a++] = CP_KARG(pl->rowi);
        arg[a++] = CP_KARG(pl->slot_j);
        arg[a++] = CP_KARG(pl->nslot);
        arg[a++] = CP_KARG(pl->ovf);
        g = pl->nblocks * pl->wg; /* one work-group per block of cells */
    } else if (v == CLPHYS_MD_LJ_FULL_GROUP)
        g = md_global((size_t)n * pl->tpi, pl->wg);
    else if (staged)
        g = nb->nblocks * pl->wg; /* one work-group per block of cells */
    else if (v == CLPHYS_MD_LJ_CPU)
        g = md_global((n + 31) / 32, pl->wg); /* LJ_CPU_BLOCK = 32 i per work-item */
    else
        g = md_global(n, pl->wg);
    if (rows) {
        cl_uint nrows = (cl_uint)count;
        arg[a++] = CP_KARG(rows);
        arg[a++] = CP_KARG(nrows);
        CP_TRY(cp_args(ctx, k, arg, a));
        size_t wg = LJ_LANES_WG, gl = md_global((size_t)nrows * LJ_LANES, wg);
        return cp_launch_on(ctx, q, k, nrows ? gl : 0, wg);
    }
    CP_TRY(cp_args(ctx, k, arg, a));
    if (count) return cp_launch_at(ctx, k, first, md_global(count, pl->wg), pl->wg);
    double t = 0; /* waited for only when asked for the time: back-to-back calls stay queued */
    CP_TRY(cp_launch(ctx, k, 1, &g, &pl->wg, kernel_s ? &t : NULL));
    if (v == CLPHYS_MD_LJ_HALF_FIXEDPOINT) {
        CP_TRY(CP_ARGS(ctx, pl->k_convert, pl->fx3, pl->f, n));
        size_t gc = md_global(n, 64);
        CP_TRY(cp_launch(ctx, pl->k_convert, 1, &gc, NULL, kernel_s ? &t : NULL));
    }
    if (kernel_s) *kernel_s = t;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_md_lj_evaluate(clphys_md_lj_plan *pl, double *kernel_s)
{
    if (!pl) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "lj: NULL plan");
    return evaluate(pl, kernel_s, 0, 0, NULL, NULL);
}

int md_lj_rows_supported(const clphys_md_lj_plan *pl)
{
    return pl->variant == CLPHYS_MD_LJ_FULL_CSR || pl->variant == CLPHYS_MD_LJ_FULL_TRANSPOSED;
}

clphys_status md_lj_evaluate_rows(clphys_md_lj_plan *pl, size_t first, size_t count)
{
    if (!md_lj_rows_supported(pl))
        return cp_error(pl->ctx, CLPHYS_ERR_UNSUPPORTED, "lj: rows of variant %s", names[pl->variant]);
    if (!count || first >= pl->p.n) return CLPHYS_SUCCESS;
    return evaluate(pl, NULL, first, count, NULL, NULL);
}

int md_lj_lanes(const clphys_md_lj_plan *pl) { return pl->k_lanes != NULL; }

clphys_status md_lj_evaluate_edges(clphys_md_lj_plan *pl, size_t lo, size_t hi, cl_mem rows, size_t nrows,
                                   cl_command_queue q)
{
    if (!md_lj_rows_supported(pl) || lo > hi || hi > pl->p.n || (pl->k_lanes && !rows && lo + (pl->p.n - hi)) ||
        (pl->k_lanes && nrows > lo + (pl->p.n - hi)))
        return cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "lj: edge rows below %zu and from %zu of %zu (%s; %zu listed)", lo, hi, pl->p.n,
                        names[pl->variant], rows ? nrows : 0);
    if (pl->k_lanes) return nrows ? evaluate(pl, NULL, 0, nrows, rows, q) : CLPHYS_SUCCESS;
    /* full-csr: a launch per range */
    CP_TRY(md_lj_evaluate_rows(pl, 0, lo));
    return md_lj_evaluate_rows(pl, hi, pl->p.n - hi);
}

/* Nearest other particle to sorted particle s (O(n), only on failure), its
 * index in *jmin (s when none has a finite distance), and the position of s
 * in xs. */
static double nearest(clphys_md_lj_plan *pl, size_t s, size_t *jmin, double xs[3])
{
    size_t n = pl->p.n, rs = pl->p.precision == CLPHYS_FP64 ? 8 : 4;
    double *x4 = malloc(4 * n * sizeof *x4), best = INFINITY;
    *jmin = s;
    xs[0] = xs[1] = xs[2] = NAN;
    if (!x4 || md_download_real4(pl->ctx, rs, pl->nb->pos, x4, n)) {
        free(x4);
        return NAN;
    }
    for (int c = 0; c < 3; c++) xs[c] = x4[4 * s + c];
    for (size_t j = 0; j < n; j++) {
        if (j == s) continue;
        double r2 = 0;
        for (int c = 0; c < 3; c++) {
            double d = x4[4 * j + c] - x4[4 * s + c];
            d -= pl->p.box[c] * nearbyint(d / pl->p.box[c]);
            r2 += d * d;
        }
        if (r2 < best) best = r2, *jmin = j;
    }
    free(x4);
    return sqrt(best);
}

/* The error of a non-finite force on sorted particle s: overlapping atoms
 * only when the nearest is closer than sigma / 2; otherwise a position
 * that is no longer finite (a diverged run) or forces out of range. */
static clphys_status bad_force(clphys_md_lj_plan *pl, size_t s, const cl_uint *perm)
{
    clphys_context *ctx = pl->ctx;
    size_t j;
    double xs[3], d = nearest(pl, s, &j, xs);
    char who[64], other[64];
    if (pl->atom_id) {
        snprintf(who, sizeof who, "atom ID %lld", pl->atom_id[perm[s]]);
        snprintf(other, sizeof other, "atom ID %lld", pl->atom_id[perm[j]]);
    } else {
        snprintf(who, sizeof who, "particle %u (0-based index)", perm[s]);
        snprintf(other, sizeof other, "particle %u", perm[j]);
    }
    const char *what = pl->atom_id ? "md" : "lj";
    if (!isfinite(xs[0]) || !isfinite(xs[1]) || !isfinite(xs[2]))
        return cp_error(ctx, CLPHYS_ERR_INPUT,
                        "%s: non-finite force on %s, whose position (%g, %g, %g) is not finite: the integration "
                        "diverged (velocities or dt too large for the forces)",
                        what, who, xs[0], xs[1], xs[2]);
    if (j != s && d < 0.5 * pl->p.sigma) {
        if (pl->atom_id)
            return cp_error(ctx, CLPHYS_ERR_INPUT,
                            "md: non-finite force on %s: atoms ID %lld and ID %lld are %g apart (overlapping atoms)",
                            who, pl->atom_id[perm[s]], pl->atom_id[perm[j]], d);
        return cp_error(ctx, CLPHYS_ERR_INPUT,
                        "lj: non-finite force on %s: particles %u and %u are %g apart (overlapping atoms)", who,
                        perm[s], perm[j], d);
    }
    return cp_error(ctx, CLPHYS_ERR_INPUT,
                    "%s: non-finite force on %s at (%g, %g, %g), the nearest (%s) %g away, not overlapping: the "
                    "force overflowed the %s range (epsilon, sigma or the positions out of range)",
                    what, who, xs[0], xs[1], xs[2], j != s ? other : "none", d,
                    pl->p.precision == CLPHYS_FP64 ? "fp64" : "fp32");
}

clphys_status clphys_md_lj_get(clphys_md_lj_plan *pl, double *forces, clphys_md_lj_result *res)
{
    if (!pl) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "lj: NULL plan");
    clphys_context *ctx = pl->ctx;
    size_t n = pl->p.n, rs = pl->p.precision == CLPHYS_FP64 ? 8 : 4;
    double *f4 = malloc(4 * n * sizeof *f4), *w = malloc(n * sizeof *w);
    cl_uint *perm = malloc(4 * n);
    clphys_status st = (!f4 || !w || !perm) ? cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "lj results")
                                            : md_download_real4(ctx, rs, pl->f, f4, n);
    if (!st && rs == 8) st = cp_read(ctx, pl->vir, 0, 8 * n, w);
    if (!st && rs == 4) {
        float *wf = (float *)perm; /* reuse: read the floats, then widen */
        st = cp_read(ctx, pl->vir, 0, 4 * n, wf);
        for (size_t i = 0; !st && i < n; i++) w[i] = wf[i];
    }
    if (!st) st = cp_read(ctx, pl->nb->perm, 0, 4 * n, perm);
    if (!st && pl->bad) {
        cl_uint bad;
        st = cp_read(ctx, pl->bad, 0, 4, &bad);
        if (!st && bad)
            st = cp_error(ctx, CLPHYS_ERR_OVERFLOW,
                          "lj: a force exceeds the fixed-point range of half-fixedpoint "
                          "(|F| >= %g); use another variant",
                          rs == 8 ? 5.2e5 : 2.1e9);
    }
    double e = 0, v = 0;
    for (size_t s = 0; !st && s < n; s++) {
        if (!isfinite(f4[4 * s]) || !isfinite(f4[4 * s + 1]) || !isfinite(f4[4 * s + 2]) || !isfinite(f4[4 * s + 3])) {
            st = bad_force(pl, s, perm);
            break;
        }
        e += f4[4 * s + 3];
        v += w[s];
        if (forces)
            for (int c = 0; c < 3; c++) forces[3 * (size_t)perm[s] + c] = f4[4 * s + c];
    }
    if (!st && res) res->potential_energy = e, res->virial = v;
    free(f4);
    free(w);
    free(perm);
    return st;
}

clphys_status clphys_md_lj_overflow(clphys_md_lj_plan *pl, size_t *slots)
{
    if (!pl || !slots) return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "lj: NULL argument");
    if (pl->ovf) {
        cl_uint c = 0, zero = 0;
        CP_TRY(cp_read(pl->ctx, pl->ovf, 0, 4, &c));
        if (c) {
            pl->overflow += c;
            CP_TRY(cp_write(pl->ctx, pl->ovf, 0, 4, &zero));
        }
    }
    *slots = pl->overflow;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_md_lj_compute(clphys_md_lj_plan *pl, const double *pos, double *forces, clphys_md_lj_result *res)
{
    CP_TRY(clphys_md_lj_set_positions(pl, pos));
    CP_TRY(clphys_md_lj_evaluate(pl, NULL));
    return clphys_md_lj_get(pl, forces, res);
}
