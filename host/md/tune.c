/* tune.c — the md path's tuning (the entries are listed in platform/tune.h):
 * which neighbour-list kernel and which LJ variant, with which of its own
 * options, is fastest on a device, by precision, size and density class.
 * The choices plans make for what their params leave to auto
 * (md_neighbor_choose, md_lj_choose: given, else the tuning cache, else the
 * heuristic; cp_tune_choose), and the measuring of clphys_md_neighbor_tune and
 * clphys_md_lj_tune. */
#include "md_internal.h"
#include "platform/tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tuner's version, part of every key it writes: a library whose
 * candidates or timing change raises it, and older entries are not used. */
#define TUNER "tuner=2"
/* The seed benchmark's cutoff and search length (bench/md-notes.md). */
static const double RCUT = 3.0, RSEARCH = 3.3;

double md_neighbours(size_t n, const double box[3], double r_search)
{
    const double v = box[0] * box[1] * box[2];
    return v > 0 ? (double)n / v * 4.18879020478639098 * r_search * r_search * r_search : 0; /* 4/3 pi */
}

/* The axes of the size and density class: a choice serves sizes within 32x
 * and densities within 1.5x of where it was measured (nearest first). */
static void class_axes(cp_tune_axis ax[2], size_t n, double nbrs)
{
    ax[0] = (cp_tune_axis){"n", (double)n, 32};
    ax[1] = (cp_tune_axis){"neighbours", nbrs, 1.5};
}

static const char *prec_name(clphys_precision p) { return p == CLPHYS_FP64 ? "fp64" : "fp32"; }

/* ---- the plans' choices (cp_tune_choose's callbacks) -------------------- */

typedef struct {
    const clphys_md_neighbor_params *p;
    int is_cpu;
    int *cpu_build;
} nb_choice;

static clphys_status nb_defaults(void *user)
{
    nb_choice *c = user;
    /* given, else on CPUs the same kernel in explicit vectors
     * (cl/md_neighbor_cpu.cl says why) */
    *c->cpu_build = c->p->build ? c->p->build == CLPHYS_MD_NEIGHBOR_BUILD_CPU : c->is_cpu;
    return CLPHYS_SUCCESS;
}

static int nb_take(void *user, const char *value)
{
    nb_choice *c = user;
    char build[16];
    if (!cp_tune_value_word(value, "build", build, sizeof build) || (strcmp(build, "cpu") && strcmp(build, "item")))
        return 0;
    *c->cpu_build = !strcmp(build, "cpu");
    return 1;
}

void md_neighbor_choose(clphys_context *ctx, const clphys_md_neighbor_params *p, int *cpu_build,
                        clphys_tune_source *source)
{
    const clphys_device_info *d = clphys_context_device(ctx);
    nb_choice c = {p, d->is_cpu, cpu_build};
    char fields[96];
    snprintf(fields, sizeof fields, "kind=%s layout=%s %s", p->kind == CLPHYS_MD_NEIGHBOR_HALF ? "half" : "full",
             p->layout == CLPHYS_MD_NEIGHBOR_TRANSPOSED ? "transposed" : "csr", TUNER);
    cp_tune_axis ax[2];
    class_axes(ax, p->n, md_neighbours(p->n, p->box, p->r_search));
    const cp_tune_plan t = {.key = {"md_neighbor", "build", prec_name(p->precision), fields},
                            .axes = ax,
                            .naxes = 2,
                            .given =
                                p->build != CLPHYS_MD_NEIGHBOR_BUILD_AUTO || p->layout == CLPHYS_MD_NEIGHBOR_STAGED,
                            .user = &c,
                            .defaults = nb_defaults,
                            .take = nb_take};
    cp_tune_choose(d, &t, source); /* no step of it fails here */
}

/* The heuristic variant of create() in lj.c: the tuner's reference. */
static clphys_md_lj_variant heuristic_variant(const clphys_device_info *d)
{
    return d->is_cpu ? CLPHYS_MD_LJ_CPU : CLPHYS_MD_LJ_FULL_TRANSPOSED;
}

/* The options of an options entry's VALUE that q leaves at 0, for q's
 * variant; 1 when any was taken.  Values out of range are not taken. */
static int lj_fill(const clphys_device_info *d, clphys_md_lj_params *q, const char *value)
{
    const clphys_md_lj_variant v = q->variant;
    int changed = 0;
    long x, y;
    if (v == CLPHYS_MD_LJ_FULL_GROUP) { /* a pair: the group must divide the work-group */
        if (!q->group_size && !q->work_group_size && cp_tune_value_int(value, "group_size", &x) &&
            cp_tune_value_int(value, "work_group_size", &y) && x >= 1 && y >= x && y % x == 0 &&
            (size_t)y <= d->max_work_group_size)
            q->group_size = (int)x, q->work_group_size = (int)y, changed = 1;
    } else if (v != CLPHYS_MD_LJ_HALF_CAS && !q->work_group_size && cp_tune_value_int(value, "work_group_size", &x) &&
               x >= 1 && (size_t)x <= d->max_work_group_size) {
        q->work_group_size = (int)x, changed = 1;
    }
    if (v == CLPHYS_MD_LJ_HALF_CAS) {
        if (!q->slot_order && cp_tune_value_int(value, "slot_order", &x) && x >= CLPHYS_MD_LJ_ORDER_PLAIN &&
            x <= CLPHYS_MD_LJ_ORDER_BOTH)
            q->slot_order = (clphys_md_lj_slot_order)x, changed = 1;
        if (!q->defer_exchanges && cp_tune_value_int(value, "defer_exchanges", &x) && x >= 1 && x <= 2)
            q->defer_exchanges = (int)x, changed = 1;
        if (!q->entries_ahead && cp_tune_value_int(value, "entries_ahead", &x) && x >= 2 && x <= 4)
            q->entries_ahead = (int)x, changed = 1;
    }
    return changed;
}

/* The key of the options entry of variant v; fields[n] holds its FIELDS. */
static cp_tune_key lj_options_key(clphys_precision prec, clphys_md_lj_variant v, char *fields, size_t n)
{
    snprintf(fields, n, "variant=%s %s", clphys_md_lj_variant_name(v), TUNER);
    return (cp_tune_key){"md_lj", "options", prec_name(prec), fields};
}

typedef struct {
    clphys_context *ctx;
    const clphys_md_lj_params *p;
    clphys_status (*create)(clphys_context *, const clphys_md_lj_params *, clphys_md_lj_plan **);
    clphys_md_lj_plan **plan;
    cp_tune_axis ax[2];
} lj_choice;

/* An options entry of the given variant: a plan with the options it fills. */
static int lj_take_options(void *user, const char *value)
{
    lj_choice *c = user;
    clphys_md_lj_params q = *c->p;
    return lj_fill(clphys_context_device(c->ctx), &q, value) && c->create(c->ctx, &q, c->plan) == CLPHYS_SUCCESS;
}

/* A variant entry (AUTO): that variant with the options of its own entry,
 * when there is one. */
static int lj_take_variant(void *user, const char *value)
{
    lj_choice *c = user;
    const clphys_device_info *d = clphys_context_device(c->ctx);
    char name[32], fields[96], opts[CP_TUNE_VALUE_MAX];
    clphys_md_lj_params q = *c->p;
    if (!cp_tune_value_word(value, "variant", name, sizeof name) ||
        clphys_md_lj_variant_from_name(name, &q.variant) != CLPHYS_SUCCESS || q.variant == CLPHYS_MD_LJ_AUTO)
        return 0;
    const cp_tune_key key = lj_options_key(q.precision, q.variant, fields, sizeof fields);
    if (cp_tune_nearest(d, &key, c->ax, 2, NULL, opts, sizeof opts, NULL)) lj_fill(d, &q, opts);
    return c->create(c->ctx, &q, c->plan) == CLPHYS_SUCCESS;
}

/* The params as given: the given choices, the heuristic's for the rest. */
static clphys_status lj_defaults(void *user)
{
    lj_choice *c = user;
    return c->create(c->ctx, c->p, c->plan);
}

/* 1 when p leaves nothing to the cache: a variant and the options the
 * cache holds for it (an unknown variant too: create() says why). */
static int lj_given(const clphys_md_lj_params *p)
{
    if (p->variant == CLPHYS_MD_LJ_AUTO) return 0;
    if ((unsigned)p->variant >= CLPHYS_MD_LJ_NVARIANTS) return 1;
    if (p->variant == CLPHYS_MD_LJ_FULL_GROUP) return p->group_size || p->work_group_size;
    if (p->variant == CLPHYS_MD_LJ_HALF_CAS) return p->slot_order && p->defer_exchanges && p->entries_ahead;
    return p->work_group_size != 0;
}

clphys_status md_lj_choose(clphys_context *ctx, const clphys_md_lj_params *p,
                           clphys_status (*create)(clphys_context *, const clphys_md_lj_params *, clphys_md_lj_plan **),
                           clphys_md_lj_plan **plan, clphys_tune_source *source)
{
    lj_choice c = {ctx, p, create, plan, {{0}}};
    class_axes(c.ax, p->n, md_neighbours(p->n, p->box, p->r_cut + p->skin));
    char fields[96];
    const int autov = p->variant == CLPHYS_MD_LJ_AUTO;
    const cp_tune_key key = autov ? (cp_tune_key){"md_lj", "variant", prec_name(p->precision), TUNER}
                                  : lj_options_key(p->precision, p->variant, fields, sizeof fields);
    const cp_tune_plan t = {.key = key,
                            .axes = c.ax,
                            .naxes = 2,
                            .given = lj_given(p),
                            .user = &c,
                            .defaults = lj_defaults,
                            .take = autov ? lj_take_variant : lj_take_options};
    return cp_tune_choose(clphys_context_device(ctx), &t, source);
}

/* ---- measuring ------------------------------------------------------------ */

/* One case of the tuners: the seed's input at a density and box edge. */
typedef struct {
    clphys_context *ctx;
    const clphys_tune_options *o;
    int rep, calls, quick;
    clphys_precision prec;
    double rho;
    size_t n;
    double box[3];
    double *pos;
    char axes[64]; /* "n=62500 neighbours=75": the size and density class */
    double *f, *fref, pe_ref;
    int have_ref;
} md_case;

static int case_open(md_case *c, double rho, double edge)
{
    if (clphys_md_lj_seed_input(rho, edge, &c->n, c->box, NULL)) return -1;
    c->rho = rho;
    c->pos = malloc(3 * c->n * sizeof *c->pos);
    c->f = malloc(3 * c->n * sizeof *c->f);
    c->fref = malloc(3 * c->n * sizeof *c->fref);
    if (!c->pos || !c->f || !c->fref || clphys_md_lj_seed_input(rho, edge, &c->n, c->box, c->pos)) return -1;
    snprintf(c->axes, sizeof c->axes, "n=%zu neighbours=%.0f", c->n, md_neighbours(c->n, c->box, RSEARCH));
    c->have_ref = 0;
    return 0;
}

static void case_close(md_case *c)
{
    free(c->pos), free(c->f), free(c->fref);
    c->pos = c->f = c->fref = NULL;
}

/* The options of one LJ candidate (every one explicit: a candidate never
 * reads the cache it is measured for). */
typedef struct {
    clphys_md_lj_variant v;
    int wg, tpi, order, defer, ahead;
} lj_cfg;

/* The heuristic's options for variant v (create() in lj.c, lj_half_cas.c). */
static lj_cfg heuristic_cfg(const clphys_device_info *d, clphys_precision prec, clphys_md_lj_variant v)
{
    lj_cfg c = {v, v == CLPHYS_MD_LJ_FULL_STAGED ? 128 : d->is_cpu ? 16 : 256, 0, 0, 1, 2};
    if ((size_t)c.wg > d->max_work_group_size) c.wg = (int)d->max_work_group_size;
    if (v == CLPHYS_MD_LJ_FULL_GROUP) c.tpi = 8;
    if (v == CLPHYS_MD_LJ_HALF_CAS)
        c.wg = 0, c.order = prec == CLPHYS_FP64 ? CLPHYS_MD_LJ_ORDER_BOTH : CLPHYS_MD_LJ_ORDER_SORTED_ROWS;
    return c;
}

/* max |a - b| / max |b| over n*3 values and the relative PE error */
static double force_diff(size_t n3, const double *a, const double *b)
{
    double d = 0, m = 0;
    for (size_t k = 0; k < n3; k++) {
        if (!isfinite(a[k])) return INFINITY;
        d = fmax(d, fabs(a[k] - b[k])), m = fmax(m, fabs(b[k]));
    }
    return m > 0 ? d / m : d;
}

/* Seconds per call of one candidate, back to back (the span of c->calls
 * launches queued at once, as an MD step runs them), median of c->rep; < 0
 * when it cannot run here or its forces disagree with the first
 * candidate's (the case's reference). */
static double lj_time(md_case *c, const lj_cfg *g)
{
    clphys_md_lj_params p = {.n = c->n,
                             .box = {c->box[0], c->box[1], c->box[2]},
                             .epsilon = 1,
                             .sigma = 1,
                             .r_cut = RCUT,
                             .skin = RSEARCH - RCUT,
                             .precision = c->prec,
                             .variant = g->v,
                             .group_size = g->tpi,
                             .work_group_size = g->wg,
                             .slot_order = (clphys_md_lj_slot_order)g->order,
                             .defer_exchanges = g->defer,
                             .entries_ahead = g->ahead};
    clphys_md_lj_plan *pl = NULL;
    clphys_md_lj_result res = {0};
    double t[16], sum = 0;
    const int rep = c->rep < 16 ? c->rep : 16;
    clphys_status st = clphys_md_lj_plan_create(c->ctx, &p, &pl);
    if (!st) st = clphys_md_lj_set_positions(pl, c->pos);
    if (!st) st = clphys_md_neighbor_shuffle(clphys_md_lj_neighbor(pl), 12345);
    if (!st) st = clphys_md_lj_evaluate(pl, NULL);
    if (!st) st = clphys_md_lj_get(pl, c->f, &res);
    for (int r = 0; r < rep && !st; r++) {
        clphys_context_span_begin(c->ctx);
        for (int k = 0; k < c->calls && !st; k++) st = clphys_md_lj_evaluate(pl, NULL);
        double span = 0;
        clphys_status se = clphys_context_span_end(c->ctx, &span);
        if (!st) st = se;
        if (!st && !(span > 0)) { /* no profiling: per-call kernel times */
            span = 0;
            for (int k = 0; k < c->calls && !st; k++) st = clphys_md_lj_evaluate(pl, &sum), span += sum;
        }
        t[r] = span / c->calls;
    }
    clphys_md_lj_plan_destroy(pl);
    if (st) return -1;
    const double tol = c->prec == CLPHYS_FP64 ? 1e-9 : 1e-3;
    if (!c->have_ref) {
        memcpy(c->fref, c->f, 3 * c->n * sizeof *c->f);
        c->pe_ref = res.potential_energy;
        c->have_ref = 1;
    } else if (!(force_diff(3 * c->n, c->f, c->fref) <= tol) ||
               !(fabs(res.potential_energy - c->pe_ref) <= tol * fabs(c->pe_ref))) {
        return -1;
    }
    return cp_median(t, rep);
}

/* The VALUE of an options entry: the options that apply to g's variant. */
static void cfg_value(const lj_cfg *g, double s, char *buf, size_t n)
{
    if (g->v == CLPHYS_MD_LJ_HALF_CAS)
        snprintf(buf, n, "slot_order=%d defer_exchanges=%d entries_ahead=%d s=%.6g", g->order, g->defer, g->ahead, s);
    else if (g->v == CLPHYS_MD_LJ_FULL_GROUP)
        snprintf(buf, n, "group_size=%d work_group_size=%d s=%.6g", g->tpi, g->wg, s);
    else
        snprintf(buf, n, "work_group_size=%d s=%.6g", g->wg, s);
}

/* Time g and keep it in *best when faster; the candidates counted. */
static void try_cfg(md_case *c, const lj_cfg *g, lj_cfg *best, double *best_s, int *count)
{
    double s = lj_time(c, g);
    (*count)++;
    if (s > 0 && (*best_s <= 0 || s < *best_s)) *best = *g, *best_s = s;
}

/* The coordinate search of variant v's own options from *best. */
static void search_variant(md_case *c, clphys_md_lj_variant v, lj_cfg *best, double *best_s, int *count)
{
    const clphys_device_info *d = clphys_context_device(c->ctx);
    const int gpu = !d->is_cpu;
    lj_cfg g;
    if (v == CLPHYS_MD_LJ_HALF_CAS) {
        /* whether deferring the exchange checks pays depends on density
         * (bench/md-notes.md): timed even when quick */
        if (!c->quick)
            for (int o = CLPHYS_MD_LJ_ORDER_PLAIN; o <= CLPHYS_MD_LJ_ORDER_BOTH; o++) {
                g = *best, g.order = o;
                if (o != best->order) try_cfg(c, &g, best, best_s, count);
            }
        g = *best, g.defer = 2;
        try_cfg(c, &g, best, best_s, count);
        if (!c->quick)
            for (int a = 3; a <= 4; a++) {
                g = *best, g.ahead = a;
                try_cfg(c, &g, best, best_s, count);
            }
        return;
    }
    if (c->quick) return;
    if (v == CLPHYS_MD_LJ_FULL_GROUP) {
        static const int tpis[] = {2, 4, 8, 16};
        for (int k = 0; k < 4; k++) {
            g = *best, g.tpi = tpis[k];
            if (g.tpi != best->tpi && g.wg % g.tpi == 0) try_cfg(c, &g, best, best_s, count);
        }
        return;
    }
    /* work-group sizes: 160 is among them because a full list of ~75
     * neighbours can favour a size that is not a power of two
     * (bench/md-notes.md) */
    static const int wg_gpu[] = {64, 128, 160, 256}, wg_cpu[] = {8, 16, 32, 64};
    const int *wgs = gpu ? wg_gpu : wg_cpu;
    for (int k = 0; k < 4; k++) {
        g = *best, g.wg = wgs[k];
        if (g.wg == best->wg || (size_t)g.wg > d->max_work_group_size ||
            (g.wg == 160 && v != CLPHYS_MD_LJ_FULL_TRANSPOSED))
            continue;
        try_cfg(c, &g, best, best_s, count);
    }
}

/* Variant v: its heuristic options (their time in *first_s), then each
 * option in turn (coordinate search from the best so far); the heuristic's
 * options stay unless beaten by more than a margin (cp_tune_beats); *best_s <= 0 when
 * nothing ran. */
static void tune_variant(md_case *c, clphys_md_lj_variant v, lj_cfg *best, double *best_s, double *first_s, int *count)
{
    const clphys_device_info *d = clphys_context_device(c->ctx);
    *best_s = -1;
    const lj_cfg h = heuristic_cfg(d, c->prec, v);
    try_cfg(c, &h, best, best_s, count);
    *first_s = *best_s;
    if (*best_s <= 0) return;
    search_variant(c, v, best, best_s, count);
    if (!cp_tune_beats(d, *best_s, *first_s)) *best = h, *best_s = *first_s;
}

static clphys_status tune_lj_case(md_case *c, const clphys_md_lj_variant *vs, int nv)
{
    const clphys_device_info *d = clphys_context_device(c->ctx);
    const char *pn = prec_name(c->prec);
    char fields[160], value[256];
    /* the heuristic's variant first: it is the reference of the others */
    const clphys_md_lj_variant h = heuristic_variant(d);
    lj_cfg order[CLPHYS_MD_LJ_NVARIANTS];
    int no = 0;
    for (int k = 0; k < nv; k++)
        if (vs[k] == h) order[no++].v = h;
    for (int k = 0; k < nv; k++)
        if (vs[k] != h) order[no++].v = vs[k];
    lj_cfg best_all = {0}, h_best = {0};
    double best_all_s = -1, untuned_s = 0, h_s = -1;
    int total = 0;
    for (int k = 0; k < no; k++) {
        lj_cfg b;
        double s, first;
        int count = 0;
        tune_variant(c, order[k].v, &b, &s, &first, &count);
        total += count;
        if (k == 0 && !c->have_ref)
            return cp_error(c->ctx, CLPHYS_ERR_VERIFY,
                            "lj tune: the %s variant did not run "
                            "(%s %s)",
                            clphys_md_lj_variant_name(order[k].v), pn, c->axes);
        if (s <= 0) continue;
        if (order[k].v == h) untuned_s = first, h_best = b, h_s = s; /* the heuristic: its variant at its options */
        snprintf(fields, sizeof fields, "variant=%s %s %s", clphys_md_lj_variant_name(b.v), TUNER, c->axes);
        cfg_value(&b, s, value, sizeof value);
        const cp_tune_key key = {"md_lj", "options", pn, fields};
        cp_tune_store(c->o, d, &key, value, s, first, count);
        if (best_all_s <= 0 || s < best_all_s) best_all = b, best_all_s = s;
    }
    if (best_all_s <= 0) return CLPHYS_SUCCESS;
    /* the heuristic's variant stays unless beaten by more than a margin (cp_tune_beats) */
    if (best_all.v != h && h_s > 0 && !cp_tune_beats(d, best_all_s, h_s)) best_all = h_best, best_all_s = h_s;
    snprintf(fields, sizeof fields, "%s %s", TUNER, c->axes);
    snprintf(value, sizeof value, "variant=%s s=%.6g", clphys_md_lj_variant_name(best_all.v), best_all_s);
    const cp_tune_key key = {"md_lj", "variant", pn, fields};
    cp_tune_store(c->o, d, &key, value, best_all_s, untuned_s, total);
    return CLPHYS_SUCCESS;
}

/* The cases: the seed's densities at box edges by device kind. */
typedef struct {
    double rho, edge;
} seed_case;

static int seed_cases(const clphys_device_info *d, int quick, seed_case *out)
{
    /* GPUs: the seed's own size (box edge 50: 62,500 and 119,164 atoms);
     * CPUs: the size the bench runs there (box edge 14: 1,372 and 2,048
     * atoms), since the best work-group size of the CPU kernels changes with
     * the size */
    static const seed_case gpu[] = {{0.5, 50}, {1.0, 50}}, gpu_quick[] = {{0.5, 30}, {1.0, 30}},
                           cpu[] = {{0.5, 14}, {1.0, 14}}, cpu_quick[] = {{0.5, 14}, {1.0, 14}};
    const seed_case *s = d->is_cpu ? (quick ? cpu_quick : cpu) : (quick ? gpu_quick : gpu);
    const int n = 2;
    memcpy(out, s, (size_t)n * sizeof *s);
    return n;
}

/* Run fn over every (precision, case), with progress. */
static clphys_status each_case(clphys_context *ctx, const clphys_tune_options *opt, const char *path,
                               clphys_status (*fn)(md_case *, void *), void *user)
{
    if (!ctx) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "%s tune: NULL context", path);
    clphys_tune_options oin;
    CP_TRY(CP_PARAMS_IN(ctx, clphys_tune_options, opt, user, &oin));
    const clphys_tune_options *o = &oin;
    const clphys_device_info *d = clphys_context_device(ctx);
    seed_case sc[4];
    const int quick = o && o->quick, ns = seed_cases(d, quick, sc), np = d->fp64 ? 2 : 1;
    clphys_status st = CLPHYS_SUCCESS;
    const double t0 = cp_now();
    for (int k = 0; k < ns * np && !st; k++) {
        md_case c = {.ctx = ctx, .o = o, .quick = quick, .prec = k % np ? CLPHYS_FP64 : CLPHYS_FP32};
        /* CPUs: calls of 0.1-1 ms, whose loops differ by 20% on a VM
         * whose hypervisor steals time: more of them (bench/md-notes.md) */
        c.rep = o && o->repeat > 0 ? o->repeat : d->is_cpu ? 7 : 3;
        c.calls = d->is_cpu ? 5 : 20;
        if (case_open(&c, sc[k / np].rho, sc[k / np].edge)) {
            case_close(&c);
            return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "%s tune: the seed input", path);
        }
        char what[128];
        snprintf(what, sizeof what, "%s density %.1f, %s", prec_name(c.prec), c.rho, c.axes);
        cp_tune_step(o, path, k + 1, ns * np, what);
        st = fn(&c, user);
        case_close(&c);
    }
    if (!st) cp_tune_mark(clphys_context_device(ctx), path, quick, cp_now() - t0);
    return st;
}

static clphys_status lj_case_fn(md_case *c, void *user)
{
    (void)user;
    clphys_md_lj_variant vs[CLPHYS_MD_LJ_NVARIANTS];
    int nv = 0;
    for (int v = 1; v < CLPHYS_MD_LJ_NVARIANTS; v++) vs[nv++] = (clphys_md_lj_variant)v;
    return tune_lj_case(c, vs, nv);
}

clphys_status clphys_md_lj_tune(clphys_context *ctx, const clphys_tune_options *o)
{
    return each_case(ctx, o, "md_lj", lj_case_fn, NULL);
}

/* For tests: tune one case of the given variants (quick: heuristic options
 * and half-cas's deferred exchanges only) at the seed's density rho and box
 * edge. */
clphys_status md_lj_tune_case(clphys_context *ctx, const clphys_tune_options *opt, clphys_precision prec, double rho,
                              double edge, const clphys_md_lj_variant *vs, int nv)
{
    clphys_tune_options oin;
    CP_TRY(CP_PARAMS_IN(ctx, clphys_tune_options, opt, user, &oin));
    const clphys_tune_options *o = &oin;
    md_case c = {.ctx = ctx, .o = o, .quick = 1, .prec = prec, .rep = o && o->repeat > 0 ? o->repeat : 3, .calls = 2};
    clphys_status st =
        case_open(&c, rho, edge) ? cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "lj tune: input") : tune_lj_case(&c, vs, nv);
    case_close(&c);
    return st;
}

/* ---- the neighbour list's build kernel --------------------------------------- */

/* Median kernel seconds of a build (sort + list) with kernel b; *pairs set. */
static double build_time(md_case *c, clphys_md_neighbor_kind kind, clphys_md_neighbor_layout lay,
                         clphys_md_neighbor_build_kernel b, size_t *pairs)
{
    clphys_md_neighbor_params p = {.n = c->n,
                                   .box = {c->box[0], c->box[1], c->box[2]},
                                   .r_search = RSEARCH,
                                   .kind = kind,
                                   .layout = lay,
                                   .precision = c->prec,
                                   .build = b};
    clphys_md_neighbor_plan *pl = NULL;
    double t[16];
    const int rep = c->rep < 16 ? c->rep : 16;
    clphys_status st = clphys_md_neighbor_plan_create(c->ctx, &p, &pl);
    if (!st) st = clphys_md_neighbor_build(pl, c->pos); /* warm-up: the list grows to fit */
    for (int r = 0; r < rep && !st; r++) {
        st = clphys_md_neighbor_build(pl, c->pos);
        t[r] = clphys_md_neighbor_build_seconds(pl);
    }
    if (!st) st = clphys_md_neighbor_stats(pl, pairs, NULL, NULL);
    clphys_md_neighbor_plan_destroy(pl);
    return st ? -1 : cp_median(t, rep);
}

static clphys_status neighbor_case_fn(md_case *c, void *user)
{
    (void)user;
    const clphys_device_info *d = clphys_context_device(c->ctx);
    for (int kind = 0; kind < 2; kind++)
        for (int lay = 0; lay < 2; lay++) {
            size_t pairs[2] = {0, 0};
            double s[2];
            for (int b = 0; b < 2; b++)
                s[b] = build_time(c, (clphys_md_neighbor_kind)kind, (clphys_md_neighbor_layout)lay,
                                  b ? CLPHYS_MD_NEIGHBOR_BUILD_CPU : CLPHYS_MD_NEIGHBOR_BUILD_ITEM, &pairs[b]);
            /* the two kernels make the same rows; in fp32 a pair at r_search
             * may round either way */
            const double slack = c->prec == CLPHYS_FP64 ? 0 : 1e-6 * (double)pairs[0];
            if (s[0] > 0 && s[1] > 0 && fabs((double)pairs[0] - (double)pairs[1]) > slack)
                return cp_error(c->ctx, CLPHYS_ERR_VERIFY,
                                "neighbor tune: the item and cpu kernels found %zu and %zu "
                                "pairs (%s %s)",
                                pairs[0], pairs[1], prec_name(c->prec), c->axes);
            const int win = s[1] > 0 && (s[0] <= 0 || s[1] < s[0]);
            if (s[win] <= 0) continue;
            char fields[160], value[64];
            snprintf(fields, sizeof fields, "kind=%s layout=%s %s %s", kind ? "half" : "full",
                     lay ? "transposed" : "csr", TUNER, c->axes);
            snprintf(value, sizeof value, "build=%s s=%.6g", win ? "cpu" : "item", s[win]);
            const cp_tune_key key = {"md_neighbor", "build", prec_name(c->prec), fields};
            cp_tune_store(c->o, d, &key, value, s[win], s[d->is_cpu ? 1 : 0] > 0 ? s[d->is_cpu ? 1 : 0] : 0, 2);
        }
    return CLPHYS_SUCCESS;
}

clphys_status clphys_md_neighbor_tune(clphys_context *ctx, const clphys_tune_options *o)
{
    return each_case(ctx, o, "md_neighbor", neighbor_case_fn, NULL);
}
