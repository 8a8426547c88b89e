/* halfblock.c — time shapes of the cell-blocked half-cas kernel (cl/lj.cl,
 * lj_half_block) against the per-i kernel on the seed benchmark (fcc,
 * density 0.5 and 1.0, box 50, r_cut 3.0, search 3.3, shuffled list, 100
 * calls), verify each against an fp64 host reference, report the slot
 * overflow per call, the exchange counts (LJ_DIAG_COUNT) and ptxas's
 * register report (-cl-nv-verbose).  Build: see halfblock.sh. */
#include "host/md/md_internal.h"
#include "host/ref/md_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../md_seed.h"

static clphys_context *ctx;
static double edge = 50;
static int calls = 100;

typedef struct {
    const char *name;
    md_lj_tune tu;
    int count; /* 1: global exchanges, 2: local (LJ_DIAG_COUNT) */
} cfg;

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void ptxas_report(clphys_lj_plan *pl, const char *tag)
{
    if (!pl->prog) return;
    size_t sz = 0;
    clGetProgramBuildInfo(pl->prog, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &sz);
    char *log = calloc(sz + 1, 1);
    clGetProgramBuildInfo(pl->prog, ctx->device, CL_PROGRAM_BUILD_LOG, sz, log, NULL);
    for (char *l = strtok(log, "\n"); l; l = strtok(NULL, "\n"))
        if (strstr(l, "registers") || strstr(l, "spill") || strstr(l, "stack"))
            printf("    ptxas %s: %s\n", tag, l);
    free(log);
}

static void run_cfg(const cfg *c, const char *tag, const double *pos, size_t n, const double box[3], int prec,
                    const double *ref, double pe_ref, int reps)
{
    clphys_lj_params p = {.n = n, .box = {box[0], box[1], box[2]}, .epsilon = 1, .sigma = 1, .r_cut = 3.0,
                          .skin = 0.3, .precision = prec, .variant = CLPHYS_LJ_HALF_CAS};
    char extra[256];
    md_lj_tune tu = c->tu;
    snprintf(extra, sizeof extra, "%s%s%s", tu.extra ? tu.extra : "",
             c->count == 1 ? " -DLJ_DIAG_COUNT=1" : c->count == 2 ? " -DLJ_DIAG_COUNT=2" : "",
             strstr(ctx->info.vendor, "NVIDIA") ? " -cl-nv-verbose" : "");
    tu.extra = extra;
    clphys_lj_plan *pl;
    if (md_lj_plan_create_tuned(ctx, &p, &tu, &pl) || clphys_lj_set_positions(pl, pos) ||
        clphys_neighbor_shuffle(pl->nb, 12345)) {
        printf("%-5s %-26s %s failed: %s\n", tag, c->name, prec ? "fp64" : "fp32", clphys_last_error(ctx));
        fflush(stdout);
        return;
    }
    double build = clphys_neighbor_build_seconds(pl->nb);
    if (tu.extra && strstr(tu.extra, "LJ_CELL_IN_W")) { /* pos.w = packed cell */
        size_t rs = prec ? 8 : 4;
        unsigned char *pb = malloc(4 * rs * n);
        cl_uint *pcv = malloc(4 * n);
        cp_read(ctx, pl->nb->pos, 0, 4 * rs * n, pb);
        cp_read(ctx, pl->nb->pcell, 0, 4 * n, pcv);
        for (size_t q = 0; q < n; q++) {
            if (prec) ((double *)pb)[4 * q + 3] = pcv[q];
            else ((float *)pb)[4 * q + 3] = (float)pcv[q];
        }
        cp_write(ctx, pl->nb->pos, 0, 4 * rs * n, pb);
        free(pb), free(pcv);
    }
    double ts[16], t = 0;
    clphys_status st = clphys_lj_evaluate(pl, &t); /* warm-up */
    uint64_t ov0 = 0, ov1 = 0;
    clphys_lj_overflow(pl, &ov0); /* overflow (or exchange count) of one call */
    for (int r = 0; r < reps && !st; r++) {
        ts[r] = 0;
        for (int q = 0; q < calls && !st; q++) st = clphys_lj_evaluate(pl, &ts[r]);
    }
    double *f = malloc(3 * n * sizeof *f);
    clphys_lj_result res = {0};
    if (!st) st = clphys_lj_get(pl, f, &res);
    clphys_lj_overflow(pl, &ov1);
    if (st) {
        printf("%-5s %-26s %s run failed: %s\n", tag, c->name, prec ? "fp64" : "fp32", clphys_last_error(ctx));
        free(f);
        clphys_lj_plan_destroy(pl);
        return;
    }
    double e = 0, s = 0;
    for (size_t q = 0; q < 3 * n; q++) {
        e = isfinite(f[q]) ? fmax(e, fabs(f[q] - ref[q])) : INFINITY;
        s = fmax(s, fabs(ref[q]));
    }
    qsort(ts, reps, sizeof *ts, cmpd);
    char shape[64];
    if (pl->blocked)
        snprintf(shape, sizeof shape, "b%d%d%d t%zu w%zu s%d", pl->block[0], pl->block[1], pl->block[2], pl->tpi,
                 pl->wg, pl->slots);
    else
        snprintf(shape, sizeof shape, "per-i w%zu", pl->wg);
    printf("%-5s %-26s %s %-22s 100calls %7.3f ms (min %7.3f)  err %.2e pe %.2e  %s/call %9.0f  build %.3f ms\n",
           tag, c->name, prec ? "fp64" : "fp32", shape, ts[reps / 2] * 1e3 * 100 / calls, ts[0] * 1e3 * 100 / calls, e / s,
           fabs(res.potential_energy - pe_ref) / fabs(pe_ref),
           c->count == 1 ? "gCAS" : c->count == 2 ? "lCAS" : "ovfl", (double)ov0, build * 1e3);
    (void)ov1;
    fflush(stdout);
    if (c->count == 0) ptxas_report(pl, c->name);
    free(f);
    clphys_lj_plan_destroy(pl);
}

#define B(x, y, z) .block = {x, y, z}, .cells = 1 /* the cell-blocked kernel lj_half_block */
static const cfg d05_64[] = {
    {"per-i", {.per_i = 1}, 0},
    {"b222", {B(2, 2, 2)}, 0},
    {"b222-w256", {B(2, 2, 2), .wg = 256}, 0},
    {"b222-t2", {B(2, 2, 2), .tpi = 2, .wg = 384}, 0},
    {"b222-t4", {B(2, 2, 2), .tpi = 4, .wg = 768}, 0},
    {"b222-u2", {B(2, 2, 2), .unroll = 2}, 0},
    {"b222-u8", {B(2, 2, 2), .unroll = 8}, 0},
    {"b222-t2-u2", {B(2, 2, 2), .tpi = 2, .wg = 384, .unroll = 2}, 0},
    {"b222-fl1", {B(2, 2, 2), .extra = "-DLJ_FLUSH=1"}, 0},
    {"b222-cellw", {B(2, 2, 2), .extra = "-DLJ_CELL_IN_W"}, 0},
    {"b221", {B(2, 2, 1)}, 0},
    {"b221-t2", {B(2, 2, 1), .tpi = 2, .wg = 256}, 0},
    {"b422", {B(4, 2, 2)}, 0},
    {"b422-t2", {B(4, 2, 2), .tpi = 2, .wg = 768}, 0},
    {"b224", {B(2, 2, 4)}, 0},
    {"b333", {B(3, 3, 3)}, 0},
    {"b333-t2", {B(3, 3, 3), .tpi = 2, .wg = 1024}, 0},
    {"b222-noflush", {B(2, 2, 2), .extra = "-DLJ_DIAG_NOFLUSH"}, 0},
    {"b222-plain", {B(2, 2, 2), .extra = "-DLJ_DIAG_PLAIN"}, 0},
    {"b222-noscatter", {B(2, 2, 2), .extra = "-DLJ_DIAG_NOSCATTER"}, 0},
    {"b222-t2-noflush", {B(2, 2, 2), .tpi = 2, .wg = 384, .extra = "-DLJ_DIAG_NOFLUSH"}, 0},
    {"b222-t2-plain", {B(2, 2, 2), .tpi = 2, .wg = 384, .extra = "-DLJ_DIAG_PLAIN"}, 0},
    {"b222-count-g", {B(2, 2, 2)}, 1},
    {"b222-count-l", {B(2, 2, 2)}, 2},
    {"b333-count-g", {B(3, 3, 3)}, 1},
};
static const cfg d05_32[] = {
    {"per-i", {.per_i = 1}, 0},
    {"b222", {B(2, 2, 2)}, 0},
    {"b222-t2", {B(2, 2, 2), .tpi = 2, .wg = 384}, 0},
    {"b222-noxy64", {B(2, 2, 2), .extra = "-DLJ_NO_XY64"}, 0},
    {"b222-cellw", {B(2, 2, 2), .extra = "-DLJ_CELL_IN_W"}, 0},
    {"b221", {B(2, 2, 1)}, 0},
    {"b422", {B(4, 2, 2)}, 0},
    {"b333", {B(3, 3, 3)}, 0},
    {"b333-t2", {B(3, 3, 3), .tpi = 2, .wg = 1024}, 0},
    {"b222-count-g", {B(2, 2, 2)}, 1},
};
static const cfg d1_64[] = {
    {"per-i", {.per_i = 1}, 0},
    {"b222", {B(2, 2, 2)}, 0},
    {"b222-t2", {B(2, 2, 2), .tpi = 2, .wg = 768}, 0},
    {"b221", {B(2, 2, 1)}, 0},
    {"b221-t2", {B(2, 2, 1), .tpi = 2, .wg = 512}, 0},
    {"b222-noflush", {B(2, 2, 2), .extra = "-DLJ_DIAG_NOFLUSH"}, 0},
    {"b222-plain", {B(2, 2, 2), .extra = "-DLJ_DIAG_PLAIN"}, 0},
    {"b211", {B(2, 1, 1)}, 0},
    {"b222-count-g", {B(2, 2, 2)}, 1},
};
static const cfg d1_32[] = {
    {"per-i", {.per_i = 1}, 0},
    {"b222", {B(2, 2, 2)}, 0},
    {"b222-t2", {B(2, 2, 2), .tpi = 2, .wg = 768}, 0},
    {"b221", {B(2, 2, 1)}, 0},
};

/* session 9: the per-i kernel with LJ_HU exchanges in flight (u), work-items
 * spread over i (s: md_lj_tune.spread 1999), copies of f (r: md_lj_tune.repl), and the
 * blocked kernel at smaller unrolls, with int64 fixed-point local sums (lfix: md_lj_tune.lfix)
 * and the two bounds (plain racy local adds, no j scatter) at unroll 2 */
static const cfg s9_64[] = {
    {"pi-u1", {.per_i = 1, .unroll = 1}, 0},
    {"pi-u2", {.per_i = 1, .unroll = 2}, 0},
    {"pi-u4", {.per_i = 1, .unroll = 4}, 0},
    {"pi-u8", {.per_i = 1, .unroll = 8}, 0},
    {"pi-u1-s", {.per_i = 1, .unroll = 1, .spread = 1999}, 0},
    {"pi-u2-s", {.per_i = 1, .unroll = 2, .spread = 1999}, 0},
    {"pi-u4-s", {.per_i = 1, .unroll = 4, .spread = 1999}, 0},
    {"pi-u8-s", {.per_i = 1, .unroll = 8, .spread = 1999}, 0},
    {"pi-u4-s-w128", {.per_i = 1, .unroll = 4, .wg = 128, .spread = 1999}, 0},
    {"pi-u4-s-w256", {.per_i = 1, .unroll = 4, .wg = 256, .spread = 1999}, 0},
    {"pi-u4-s-w32", {.per_i = 1, .unroll = 4, .wg = 32, .spread = 1999}, 0},
    {"pi-u4-r4", {.per_i = 1, .unroll = 4, .repl = 4}, 0},
    {"pi-u4-s-r2", {.per_i = 1, .unroll = 4, .spread = 1999, .repl = 2}, 0},
    {"pi-u4-s-r4", {.per_i = 1, .unroll = 4, .spread = 1999, .repl = 4}, 0},
    {"pi-u4-s-r8", {.per_i = 1, .unroll = 4, .spread = 1999, .repl = 8}, 0},
    {"pi-u8-s-r4", {.per_i = 1, .unroll = 8, .spread = 1999, .repl = 4}, 0},
    {"pi-u2-s-r4", {.per_i = 1, .unroll = 2, .spread = 1999, .repl = 4}, 0},
    {"b222-u1", {B(2, 2, 2), .unroll = 1}, 0},
    {"b222-u2", {B(2, 2, 2), .unroll = 2}, 0},
    {"b221-u2", {B(2, 2, 1), .unroll = 2}, 0},
    {"b221-u1", {B(2, 2, 1), .unroll = 1}, 0},
    {"b211-u2", {B(2, 1, 1), .unroll = 2}, 0},
    {"b111-u2", {B(1, 1, 1), .unroll = 2}, 0},
    {"b222-u2-lfix", {B(2, 2, 2), .unroll = 2, .lfix = 1}, 0},
    {"b222-u1-lfix", {B(2, 2, 2), .unroll = 1, .lfix = 1}, 0},
    {"b222-u4-lfix", {B(2, 2, 2), .unroll = 4, .lfix = 1}, 0},
    {"b221-u2-lfix", {B(2, 2, 1), .unroll = 2, .lfix = 1}, 0},
    {"b222-u2-plain", {B(2, 2, 2), .unroll = 2, .extra = "-DLJ_DIAG_PLAIN"}, 0},
    {"b222-u2-noscatter", {B(2, 2, 2), .unroll = 2, .extra = "-DLJ_DIAG_NOSCATTER"}, 0},
};
static const cfg s9_32[] = {
    {"pi-u1", {.per_i = 1, .unroll = 1}, 0},
    {"pi-u4", {.per_i = 1, .unroll = 4}, 0},
    {"pi-u4-s", {.per_i = 1, .unroll = 4, .spread = 1999}, 0},
    {"pi-u8-s", {.per_i = 1, .unroll = 8, .spread = 1999}, 0},
    {"pi-u4-s-r4", {.per_i = 1, .unroll = 4, .spread = 1999, .repl = 4}, 0},
    {"b222-u2", {B(2, 2, 2), .unroll = 2}, 0},
    {"b222-u1", {B(2, 2, 2), .unroll = 1}, 0},
    {"b222-u2-lfix", {B(2, 2, 2), .unroll = 2, .lfix = 1}, 0},
};

static void run_system(double rho, const cfg *c64, size_t n64, const cfg *c32, size_t n32, const char *only)
{
    size_t n;
    double box[3];
    double *pos = md_seed_system(rho, edge, &n, box);
    char tag[16];
    snprintf(tag, sizeof tag, "d%g", rho);
    clphys_lj_params lp = {.n = n, .box = {box[0], box[1], box[2]}, .r_cut = 3.0, .skin = 0.3,
                           .precision = CLPHYS_FP64, .variant = CLPHYS_LJ_FULL_CSR};
    clphys_lj_plan *rp;
    if (clphys_lj_plan_create(ctx, &lp, &rp) || clphys_lj_set_positions(rp, pos)) {
        printf("ref plan: %s\n", clphys_last_error(ctx));
        return;
    }
    size_t pairs, *off = malloc((n + 1) * sizeof *off);
    clphys_neighbor_stats(rp->nb, &pairs, NULL, NULL);
    int *list = malloc(pairs * sizeof *list);
    clphys_neighbor_get(rp->nb, off, list);
    clphys_lj_plan_destroy(rp);
    double *ref64 = malloc(3 * n * sizeof *ref64), *ref32 = malloc(3 * n * sizeof *ref32);
    double *pos32 = malloc(3 * n * sizeof *pos32), pe64, pe32, w, box32[3];
    for (size_t q = 0; q < 3 * n; q++) pos32[q] = (float)pos[q];
    for (int c = 0; c < 3; c++) box32[c] = (float)box[c];
    md_ref_lj_list(n, pos, box, 1, 1, 3.0, 0, off, list, ref64, &pe64, &w);
    md_ref_lj_list(n, pos32, box32, 1, 1, 3.0, 0, off, list, ref32, &pe32, &w);
    printf("%s: n %zu box %.4f full-list pairs %zu\n", tag, n, box[0], pairs);
    fflush(stdout);
    for (size_t k = 0; k < n64; k++)
        if (!only || strstr(only, c64[k].name)) run_cfg(&c64[k], tag, pos, n, box, CLPHYS_FP64, ref64, pe64, 5);
    for (size_t k = 0; k < n32; k++)
        if (!only || strstr(only, c32[k].name)) run_cfg(&c32[k], tag, pos32, n, box, CLPHYS_FP32, ref32, pe32, 5);
    free(off), free(list), free(ref64), free(ref32), free(pos32), free(pos);
}

/* s11: block shapes whose work-group count fits the H100 in one wave (3x2x2: 320 blocks at the
 * seed's 15^3 cells; the slot-coded explorer halfslot.c ran 3x2x2 1.3x faster than 2x2x2) */
static const cfg s11_64[] = {
    {"b222-u1", {B(2, 2, 2), .unroll = 1}, 0},
    {"b322-u1", {B(3, 2, 2), .unroll = 1}, 0},
    {"b322-u2", {B(3, 2, 2), .unroll = 2}, 0},
    {"b232-u1", {B(2, 3, 2), .unroll = 1}, 0},
    {"b332-u1", {B(3, 3, 2), .unroll = 1}, 0},
    {"b322-u1-lfix", {B(3, 2, 2), .unroll = 1, .lfix = 1}, 0},
    {"b322-u1-plain", {B(3, 2, 2), .unroll = 1, .extra = "-DLJ_DIAG_PLAIN"}, 0},
    {"b322-u1-noscatter", {B(3, 2, 2), .unroll = 1, .extra = "-DLJ_DIAG_NOSCATTER"}, 0},
};
static const cfg s11_32[] = {
    {"b222-u1", {B(2, 2, 2), .unroll = 1}, 0},
    {"b322-u1", {B(3, 2, 2), .unroll = 1}, 0},
    {"b322-u2", {B(3, 2, 2), .unroll = 2}, 0},
    {"b332-u1", {B(3, 3, 2), .unroll = 1}, 0},
};

/* s12: the library's slot-list kernel (lj_half_slot) with list entries loaded LJ_SLOT_PIPE ahead and
 * positions one fewer.  H100, session 11 (bench/md-notes.md): fp64 9.36 / 7.80 / 8.17 / 8.01 ms at
 * 1 / 2 / 3 / 4 ahead, fp32 9.59 / 6.93 / 7.18 / 7.07; the local accumulators' old values read one
 * entry ahead too (an experiment since removed) 10.0 / 8.7: the guesses went stale */
static const cfg s12_64[] = {
    {"slot-p1", {.extra = "-DLJ_SLOT_PIPE=1"}, 0},
    {"slot", {0}, 0},
    {"slot-p3", {.extra = "-DLJ_SLOT_PIPE=3"}, 0},
    {"slot-p4", {.extra = "-DLJ_SLOT_PIPE=4"}, 0},
    {"slot-b222", {.block = {2, 2, 2}}, 0},
};
static const cfg s12_32[] = {
    {"slot-p1", {.extra = "-DLJ_SLOT_PIPE=1"}, 0},
    {"slot", {0}, 0},
    {"slot-p3", {.extra = "-DLJ_SLOT_PIPE=3"}, 0},
};

/* s13: lj_half_slot with an entry's exchanges examined only after the next pair's math (LJ_SLOT_DEFER
 * 1), and with that entry's old values read before the wait as well (2); split: work-groups per block.
 * H100, session 12 (bench/md-notes.md): fp64 7.93-7.96 ms plain, 8.94 / 11.4 deferred, 8.86 / 11.6 / 13.4
 * split 2 / 3 / 4; fp32 7.07 plain, 8.49-8.67 deferred (the split rows, md_lj_tune.split, were removed
 * with that option after the run; commit ae20903 has them) */
static const cfg s13_64[] = {
    {"slot", {0}, 0},
    {"slot-d1", {.extra = "-DLJ_SLOT_DEFER=1"}, 0},
    {"slot-d2", {.extra = "-DLJ_SLOT_DEFER=2"}, 0},
    {"slot-d1-p1", {.extra = "-DLJ_SLOT_DEFER=1 -DLJ_SLOT_PIPE=1"}, 0},
    {"slot-d1-p3", {.extra = "-DLJ_SLOT_DEFER=1 -DLJ_SLOT_PIPE=3"}, 0},
    {"slot-d2-p3", {.extra = "-DLJ_SLOT_DEFER=2 -DLJ_SLOT_PIPE=3"}, 0},
    {"slot-d1-b222", {.block = {2, 2, 2}, .extra = "-DLJ_SLOT_DEFER=1"}, 0},
    {"slot-again", {0}, 0},
};
static const cfg s13_32[] = {
    {"slot", {0}, 0},
    {"slot-d1", {.extra = "-DLJ_SLOT_DEFER=1"}, 0},
    {"slot-d2", {.extra = "-DLJ_SLOT_DEFER=2"}, 0},
    {"slot-d1-p3", {.extra = "-DLJ_SLOT_DEFER=1 -DLJ_SLOT_PIPE=3"}, 0},
    {"slot-again", {0}, 0},
};

/* s14: slot lists with the entries within r_cut first in each row (order 2), the rows of a block by
 * descending list length (3), or both (4); 1 = plain order.  H100, session 12: fp64 7.84-7.91 / 7.74-7.76
 * / 7.30 / 6.73-6.74 ms; fp32 6.94-7.05 / 7.49-7.57 / 6.63-7.38 / 7.04-7.09; s14hi (density 1.0) fp64
 * 30.2 / 28.6 / 29.8 / 27.7 ms, deferred exchanges with both orders 23.3 */
static const cfg s14_64[] = {
    {"slot-o1", {.order = 1}, 0},
    {"slot-o2", {.order = 2}, 0},
    {"slot-o3", {.order = 3}, 0},
    {"slot-o4", {.order = 4}, 0},
    {"slot-o4-p3", {.order = 4, .extra = "-DLJ_SLOT_PIPE=3"}, 0},
    {"slot-o4-b222", {.block = {2, 2, 2}, .order = 4}, 0},
    {"slot-o4-d1", {.order = 4, .extra = "-DLJ_SLOT_DEFER=1"}, 0},
    {"slot-o1-again", {.order = 1}, 0},
};
static const cfg s14_32[] = {
    {"slot-o1", {.order = 1}, 0},
    {"slot-o2", {.order = 2}, 0},
    {"slot-o3", {.order = 3}, 0},
    {"slot-o4", {.order = 4}, 0},
};

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    const char *only = argc > 2 && strcmp(argv[2], "-") ? argv[2] : NULL;
    if (argc > 3) edge = atof(argv[3]);
    if (argc > 4) calls = atoi(argv[4]);
    if (clphys_context_create(getenv("CLPHYS_DEVICE") ? getenv("CLPHYS_DEVICE") : "auto", &ctx)) {
        fprintf(stderr, "%s\n", clphys_last_error(NULL));
        return 1;
    }
    printf("device %s, driver %s\n", clphys_context_device(ctx)->name, clphys_context_device(ctx)->driver_version);
#define N(a) (sizeof a / sizeof *a)
    if (!strcmp(mode, "s9")) run_system(0.5, s9_64, N(s9_64), s9_32, N(s9_32), only);
    if (!strcmp(mode, "s11")) run_system(0.5, s11_64, N(s11_64), s11_32, N(s11_32), only);
    if (!strcmp(mode, "s12")) run_system(0.5, s12_64, N(s12_64), s12_32, N(s12_32), only);
    if (!strcmp(mode, "s13")) run_system(0.5, s13_64, N(s13_64), s13_32, N(s13_32), only);
    if (!strcmp(mode, "s14")) run_system(0.5, s14_64, N(s14_64), s14_32, N(s14_32), only);
    if (!strcmp(mode, "s14hi")) run_system(1.0, s14_64, N(s14_64), s14_32, N(s14_32), only);
    if (strstr(mode, "d05")  || !strcmp(mode, "all")) run_system(0.5, d05_64, N(d05_64), d05_32, N(d05_32), only);
    if (strstr(mode, "d1") || !strcmp(mode, "all")) run_system(1.0, d1_64, N(d1_64), d1_32, N(d1_32), only);
    clphys_context_destroy(ctx);
    return 0;
}
