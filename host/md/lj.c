/* lj.c — Lennard-Jones plan: owns a neighbour list and one kernel variant of
 * cl/lj.cl; forces, energy and virial returned in the caller's order. */
#include "md_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long gcd_ul(unsigned long a, unsigned long b)
{
    while (b) {
        unsigned long t = a % b;
        a = b, b = t;
    }
    return a;
}

static const char *names[] = {
    "full-csr", "full-transposed", "full-group", "half-cas", "half-fixedpoint", "cpu", "full-staged", "auto"};

const char *clphys_lj_variant_name(clphys_lj_variant v)
{
    return (unsigned)v <= CLPHYS_LJ_AUTO ? names[v] : "unknown";
}

clphys_status clphys_lj_variant_from_name(const char *name, clphys_lj_variant *v)
{
    for (int i = 0; name && i <= CLPHYS_LJ_AUTO; i++)
        if (!strcmp(name, names[i])) {
            *v = (clphys_lj_variant)i;
            return CLPHYS_SUCCESS;
        }
    return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                    "unknown LJ variant '%s' (full-csr, full-transposed, full-group, half-cas, "
                    "half-fixedpoint, cpu, full-staged, auto)",
                    name ? name : "(null)");
}

clphys_neighbor_plan *clphys_lj_neighbor(clphys_lj_plan *pl)
{
    return pl ? pl->nb : NULL;
}
clphys_lj_variant clphys_lj_plan_variant(const clphys_lj_plan *pl)
{
    return pl->variant;
}

void clphys_lj_plan_destroy(clphys_lj_plan *pl)
{
    if (!pl) return;
    clphys_neighbor_plan_destroy(pl->nb);
    cp_release_kernel(&pl->k);
    cp_release_kernel(&pl->k_convert);
    cp_release_mem(&pl->f);
    cp_release_mem(&pl->vir);
    cp_release_mem(&pl->fx3);
    cp_release_mem(&pl->bad);
    cp_release_mem(&pl->ovf);
    cp_release_mem(&pl->acc);
    cl_kernel *ks[] = {&pl->k_bcount, &pl->k_rows, &pl->k_tables, &pl->k_derive, &pl->k_key, &pl->k_rank};
    for (size_t q = 0; q < sizeof ks / sizeof *ks; q++)
        cp_release_kernel(ks[q]);
    cl_mem *ms[] = {&pl->bcount, &pl->bstart, &pl->rowi,   &pl->rowof, &pl->sbase,
                    &pl->slot_j, &pl->nslot,  &pl->hl,     &pl->hs,    &pl->hcount, &pl->rowtmp};
    for (size_t q = 0; q < sizeof ms / sizeof *ms; q++)
        cp_release_mem(ms[q]);
    free(pl);
}

static clphys_status half_block_create(clphys_context *ctx, clphys_lj_plan *pl, const md_lj_tune *tu,
                                      const char *opt0);
static clphys_status half_slot_create(clphys_context *ctx, clphys_lj_plan *pl, const md_lj_tune *tu,
                                      const char *opt0);

static clphys_status create(clphys_context *ctx, clphys_lj_plan *pl, const md_lj_tune *tu)
{
    clphys_lj_params *p = &pl->p;
    const clphys_device_info *dev = &ctx->info;
    if (p->epsilon == 0) p->epsilon = 1;
    if (p->sigma == 0) p->sigma = 1;
    if (!(p->r_cut > 0) || !(p->skin >= 0) || !(p->epsilon > 0) || !(p->sigma > 0))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "lj: r_cut = %g, skin = %g, epsilon = %g, sigma = %g (need r_cut, eps, "
                        "sigma > 0, skin >= 0)",
                        p->r_cut, p->skin, p->epsilon, p->sigma);
    pl->variant = p->variant;
    /* half-cas is the slot-list kernel (lj_half_slot) on every device: on
     * the H100 7.97 ms fp64 per 100 calls against 14.65 for the earlier
     * cell-blocked kernel (lj_half_block, kept as md_lj_tune.cells and for
     * group_size > 1) and 22.7 for one work-item per i (lj_half_cas,
     * md_lj_tune.per_i); on PoCL 157 against 198 ms in the explorer of its
     * structure (bench/md-notes.md, session 11).
     * auto, measured: on the H100 the full transposed list wins or ties in fp64 and
     * fp32, at 62,500 and 2,048,000 atoms (bench/results/md-h100-2026-11-23.json);
     * on PoCL the explicit-vector cpu variant (md-pocl-2026-11-23.json: ~2x
     * half-cas on in.lj) */
    if (pl->variant == CLPHYS_LJ_AUTO)
        pl->variant = !dev->is_cpu ? CLPHYS_LJ_FULL_TRANSPOSED : CLPHYS_LJ_CPU;
    if ((unsigned)pl->variant >= CLPHYS_LJ_NVARIANTS)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "lj: unknown variant %d",
                        (int)p->variant);
    int fixed = pl->variant == CLPHYS_LJ_HALF_FIXEDPOINT;
    if ((fixed || (pl->variant == CLPHYS_LJ_HALF_CAS && p->precision == CLPHYS_FP64)) &&
        !dev->int64_atomics)
        return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED,
                        "lj: variant %s in %s needs cl_khr_int64_base_atomics, which %s lacks",
                        names[pl->variant], p->precision == CLPHYS_FP64 ? "fp64" : "fp32",
                        dev->name);
    pl->shift = 0;
    if (p->shifted) {
        double s6 = pow(p->sigma / p->r_cut, 6);
        pl->shift = 4 * p->epsilon * s6 * (s6 - 1);
    }
    /* the slot lists are derived from a full transposed list */
    int slotted = pl->variant == CLPHYS_LJ_HALF_CAS && p->group_size <= 1 &&
                  !(tu && (tu->per_i || tu->cells || tu->tpi > 1 || tu->lfix));
    int half = (pl->variant == CLPHYS_LJ_HALF_CAS && !slotted) || fixed;
    clphys_neighbor_params np = {.n = p->n,
                                 .box = {p->box[0], p->box[1], p->box[2]},
                                 .r_search = p->r_cut + p->skin,
                                 .kind = half ? CLPHYS_NEIGHBOR_HALF : CLPHYS_NEIGHBOR_FULL,
                                 .layout = pl->variant == CLPHYS_LJ_FULL_TRANSPOSED || slotted
                                               ? CLPHYS_NEIGHBOR_TRANSPOSED
                                           : pl->variant == CLPHYS_LJ_FULL_STAGED ? CLPHYS_NEIGHBOR_STAGED
                                                                                   : CLPHYS_NEIGHBOR_CSR,
                                 .precision = p->precision};
    CP_TRY(clphys_neighbor_plan_create(ctx, &np, &pl->nb));
    int staged = pl->variant == CLPHYS_LJ_FULL_STAGED;
    /* 256 on GPUs: on the H100 the best or within 2 % of it for full-csr,
     * full-transposed and half-fixedpoint, fp32 and fp64, densities 0.5 and
     * 1.0 (bench/results/lj-h100-2026-11-23-1342654.json; 64 was up to 24 %
     * slower) */
    size_t wg0 = staged ? 128 : dev->is_cpu ? 16 : 256;
    if (wg0 > dev->max_work_group_size) wg0 = dev->max_work_group_size; /* a default only: asked sizes are checked */
    pl->wg = p->work_group_size > 0 ? (size_t)p->work_group_size : wg0;
    pl->tpi = p->group_size > 0 ? (size_t)p->group_size : 8;
    if (pl->variant == CLPHYS_LJ_FULL_GROUP &&
        (pl->tpi & (pl->tpi - 1) || pl->wg % pl->tpi || pl->wg > dev->max_work_group_size))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "lj: group_size %zu must be a power of 2 dividing work_group_size %zu "
                        "(<= %zu)",
                        pl->tpi, pl->wg, dev->max_work_group_size);
    char opt[512];
    CP_TRY(cp_precision_options(ctx, p->precision, opt, sizeof opt));
    size_t o = strlen(opt);
    if (pl->variant == CLPHYS_LJ_FULL_GROUP)
        snprintf(opt + o, sizeof opt - o, " -DLJ_TPI=%zu -DLJ_WG=%zu", pl->tpi, pl->wg);
    if (staged) snprintf(opt + o, sizeof opt - o, " -DLJ_WG=%zu", pl->wg);
    /* fixed point: 2^44 in fp64 (resolution 6e-14, |F| < 5e5), 2^32 in fp32 */
    if (fixed)
        snprintf(opt + o, sizeof opt - o, " -DLJ_FIXED=1 -DFIXED_SCALE=%s",
                 p->precision == CLPHYS_FP64 ? "17592186044416.0" : "4294967296.0");
    size_t rs = p->precision == CLPHYS_FP64 ? 8 : 4, n = p->n;
    cl_program prog = NULL;
    if (slotted) {
        CP_TRY(half_slot_create(ctx, pl, tu, opt));
    } else if (pl->variant == CLPHYS_LJ_HALF_CAS && !(tu && tu->per_i)) {
        CP_TRY(half_block_create(ctx, pl, tu, opt));
    } else {
        if (pl->variant == CLPHYS_LJ_HALF_CAS) { /* per_i (experiments) */
            o = strlen(opt);
            unsigned long sp = 0;
            if (tu->spread > 0)
                for (sp = (unsigned long)tu->spread | 1u; gcd_ul(sp, n) != 1; sp += 2) {}
            pl->repl = tu->repl > 1 ? tu->repl : 1;
            snprintf(opt + o, sizeof opt - o, " -DLJ_HU=%d -DLJ_SPREAD=%lu -DLJ_REPL=%d %s",
                     tu->unroll > 0 ? tu->unroll : 1, sp, pl->repl, tu->extra ? tu->extra : "");
            if (tu->wg > 0) pl->wg = (size_t)tu->wg;
        }
        CP_TRY(cp_program(ctx, pl->variant == CLPHYS_LJ_CPU ? "lj_cpu.cl" : "lj.cl", opt, &prog));
        static const char *kn[] = {"lj_full_csr",   "lj_full_transposed", "lj_full_group", "lj_half_cas",
                                   "lj_half_fixed", "lj_cpu",             "lj_full_staged"};
        CP_TRY(cp_kernel(ctx, prog, kn[pl->variant], &pl->k));
    }
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * rs * n, NULL, &pl->f));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, rs * n, NULL, &pl->vir));
    if (pl->repl > 1) {
        CP_TRY(cp_kernel(ctx, prog, "lj_half_repl_sum", &pl->k_convert));
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, (size_t)pl->repl * 4 * rs * n, NULL, &pl->acc));
    }
    if (fixed) {
        CP_TRY(cp_kernel(ctx, prog, "lj_fixed_convert", &pl->k_convert));
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 24 * n, NULL, &pl->fx3));
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4, NULL, &pl->bad));
    }
    return CLPHYS_SUCCESS;
}

/* Local memory of the cell-blocked kernel for a block shape: the sizes of
 * its tables and the accumulator slots that fit beside them. */
typedef struct {
    int ncell, nrow, scan;
    size_t fit;
} block_shape;

static block_shape shape_of(const int b[3], size_t wg, size_t tpi, size_t rs, size_t local)
{
    block_shape sh;
    sh.ncell = (b[0] + 2) * (b[1] + 2) * (b[2] + 2);
    sh.nrow = b[1] * b[2];
    sh.scan = 1;
    while (sh.scan < sh.ncell + sh.nrow)
        sh.scan *= 2;
    size_t other = (size_t)sh.ncell * 8 + 8 * (size_t)sh.scan + 4 * (size_t)sh.nrow +
                   (tpi > 1 ? 2 * wg * rs : 0) + 256;
    sh.fit = local > other ? (local - other) / (3 * rs) : 0;
    return sh;
}

/* half-cas, cell-blocked (cl/lj.cl, lj_half_block): the block of cells per
 * work-group, its local accumulator slots and work-items.  Defaults: 2x2x2
 * cells (narrower when the receiving part of a typical block's neighbourhood
 * at the mean density + 15 % does not fit in local memory: at density 1.0 in
 * fp64 the 2x2x2 block overflowed 49,500 slots per call and ran 1.9x slower
 * than 2x2x1 on the H100, bench/md-notes.md session 9), 2 list entries
 * gathered ahead (4 ran 1.4x slower there, 8 2.6x), group_size work-items
 * per i (0 = 1), enough work-items for the
 * block's mean particle count + 15 %, slots for every particle of the
 * neighbourhood at the mean density (the busiest blocks, at the periodic
 * wrap, want that many) within the device's local memory, at most 48 KiB.
 * A neighbourhood with more particles sends the excess to global memory
 * (counted: clphys_lj_overflow). */
static clphys_status half_block_create(clphys_context *ctx, clphys_lj_plan *pl, const md_lj_tune *tu,
                                      const char *opt0)
{
    const clphys_device_info *dev = &ctx->info;
    const clphys_lj_params *p = &pl->p;
    clphys_neighbor_plan *nb = pl->nb;
    int dbl = p->precision == CLPHYS_FP64, paired = !dbl && dev->int64_atomics;
    int lfix = tu && tu->lfix;
    size_t rs = dbl || lfix ? 8 : 4; /* bytes per local accumulator word */
    if (lfix) paired = 0;
    if (lfix && !dev->int64_atomics)
        return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED, "lj: fixed-point local sums need cl_khr_int64_base_atomics (%s)",
                        dev->name);
    size_t local = dev->local_mem_bytes < 49152 ? dev->local_mem_bytes : 49152;
    double mean = (double)p->n / (double)nb->ncells; /* particles per cell */
    size_t tpi = tu && tu->tpi > 0 ? (size_t)tu->tpi : p->group_size > 0 ? (size_t)p->group_size : 1;
    int unroll = tu && tu->unroll > 0 ? tu->unroll : 2;
    size_t wg0 = tu && tu->wg > 0 ? (size_t)tu->wg : p->work_group_size > 0 ? (size_t)p->work_group_size : 0;
    static const int shapes[][3] = {{2, 2, 2}, {2, 2, 1}, {2, 1, 1}, {1, 1, 1}};
    size_t wg = 0;
    block_shape sh;
    for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
        for (int d = 0; d < 3; d++) {
            pl->block[d] = tu && tu->block[d] > 0 ? tu->block[d] : shapes[c][d];
            if (pl->block[d] > 8)
                return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                                "lj: half-cas block edge %d > 8 cells", pl->block[d]);
        }
        wg = wg0;
        if (!wg) {
            double want = 1.15 * mean * pl->block[0] * pl->block[1] * pl->block[2] * (double)tpi;
            wg = cp_round_up((size_t)want + 1, 64);
            if (wg > 1024) wg = 1024;
            while (wg > dev->max_work_group_size)
                wg /= 2;
        }
        sh = shape_of(pl->block, wg, tpi, rs, local);
        /* cells of the neighbourhood that can receive (index >= the block's
         * first): all but the layer below, the row below and the cell left */
        int lx = pl->block[0] + 2, recv = sh.ncell - lx * (pl->block[1] + 2) - lx - 1;
        if ((tu && tu->block[0] > 0) || 1.15 * mean * recv <= (double)sh.fit) break;
    }
    if (wg % tpi || wg > dev->max_work_group_size)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "lj: half-cas work-items per i %zu must divide the work-group size %zu "
                        "(<= %zu)",
                        tpi, wg, dev->max_work_group_size);
    if (sh.fit < 64)
        return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED,
                        "lj: half-cas needs more local memory than the %llu bytes of %s",
                        (unsigned long long)dev->local_mem_bytes, dev->name);
    int ncell = sh.ncell, scan = sh.scan;
    size_t slots = tu && tu->slots > 0 ? (size_t)tu->slots : cp_round_up((size_t)(mean * ncell) + 1, 64);
    if (slots > sh.fit) slots = sh.fit;
    pl->slots = (int)slots;
    pl->nblocks = 1;
    for (int d = 0; d < 3; d++)
        pl->nblocks *= (size_t)((nb->nc[d] + pl->block[d] - 1) / pl->block[d]);
    CP_TRY(md_neighbor_want_cells(nb));
    char opt[512];
    for (;;) {
        snprintf(opt, sizeof opt,
                 "%s -DLJ_BLOCK=1 -DLJ_BX=%d -DLJ_BY=%d -DLJ_BZ=%d -DLJ_SLOTS=%zu -DLJ_SCAN=%d "
                 "-DLJ_WG=%zu -DLJ_BTPI=%zu -DLJ_UNROLL=%d%s %s",
                 opt0, pl->block[0], pl->block[1], pl->block[2], slots, scan, wg, tpi, unroll,
                 paired ? " -DLJ_XY64=1" : lfix ? " -DLJ_LFIX=1" : "", tu && tu->extra ? tu->extra : "");
        cl_program prog;
        CP_TRY(cp_program(ctx, "lj.cl", opt, &prog));
        CP_TRY(cp_kernel(ctx, prog, "lj_half_block", &pl->k));
        pl->prog = prog;
        size_t kwg = 0;
        CP_CL(ctx, clGetKernelWorkGroupInfo(pl->k, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg,
                                            &kwg, NULL));
        if (kwg >= wg) break;
        /* the compiled kernel cannot run that many work-items (registers) */
        cp_release_kernel(&pl->k);
        if (wg / 2 < tpi || wg / 2 < 32 || (tu && tu->wg > 0))
            return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED,
                            "lj: half-cas kernel runs at most %zu work-items per group on %s, "
                            "%zu asked",
                            kwg, dev->name, wg);
        wg /= 2;
    }
    pl->wg = wg;
    pl->tpi = tpi;
    pl->blocked = 1;
    cl_uint zero = 0;
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4, NULL, &pl->ovf));
    return cp_write(ctx, pl->ovf, 0, 4, &zero);
}

/* half-cas, slot lists (cl/half_slot.cl, lj_half_slot): the block of cells
 * per work-group, its accumulator slots and work-items.  Defaults: 3x2x2
 * cells (320 work-groups on the seed's 15^3 cells fit the H100 in one wave;
 * 2x2x2 ran 1.3x slower, bench/md-notes.md session 11), narrower when the
 * neighbourhood at the mean density + 15 % does not fit in local memory (at
 * most 48 KiB) or the block's particles + 15 % exceed 256 (at density 1.0,
 * fp32, 3x2x2 blocks of ~520 particles took 57.6 ms per 100 calls, 2x2x1
 * 35.1 in fp64); work-items for the block's mean particle count + 15 %
 * (32 .. 256).  A denser neighbourhood sends the excess to global memory
 * (counted: clphys_lj_overflow).  Rows of a block by list length, and in
 * fp64 the entries within r_cut first (cl/half_slot.cl). */
static clphys_status half_slot_create(clphys_context *ctx, clphys_lj_plan *pl, const md_lj_tune *tu,
                                      const char *opt0)
{
    const clphys_device_info *dev = &ctx->info;
    clphys_neighbor_plan *nb = pl->nb;
    size_t rs = pl->p.precision == CLPHYS_FP64 ? 8 : 4, n = pl->p.n;
    size_t local = (dev->local_mem_bytes < 49152 ? dev->local_mem_bytes : 49152) - 256;
    double mean = (double)n / (double)nb->ncells;
    static const int shapes[][3] = {{3, 2, 2}, {2, 2, 2}, {2, 2, 1}, {2, 1, 1}, {1, 1, 1}};
    int fixed_shape = tu && tu->block[0] > 0;
    size_t slots = 0;
    for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
        for (int d = 0; d < 3; d++) {
            pl->block[d] = fixed_shape ? tu->block[d] : shapes[c][d];
            if (pl->block[d] < 1 || pl->block[d] > 8)
                return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "lj: half-cas block edge %d (1 .. 8 cells)",
                                pl->block[d]);
        }
        double nlc = (pl->block[0] + 2.0) * (pl->block[1] + 2.0) * (pl->block[2] + 1.0);
        double rows = 1.15 * mean * pl->block[0] * pl->block[1] * pl->block[2];
        slots = cp_round_up((size_t)(1.15 * mean * nlc) + 1, 64);
        if (fixed_shape || (3 * rs * slots <= local && rows <= 256)) break;
    }
    if (tu && tu->slots > 0) slots = (size_t)tu->slots;
    if (3 * rs * slots > local) slots = local / (3 * rs) / 32 * 32;
    if (slots < 32)
        return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED, "lj: half-cas needs more local memory than the %llu bytes of %s",
                        (unsigned long long)dev->local_mem_bytes, dev->name);
    size_t wg = tu && tu->wg > 0 ? (size_t)tu->wg : pl->p.work_group_size > 0 ? (size_t)pl->p.work_group_size : 0;
    int asked = wg > 0;
    if (!wg) {
        wg = cp_round_up((size_t)(1.15 * mean * pl->block[0] * pl->block[1] * pl->block[2] ) + 1, 32);
        wg = wg < 32 ? 32 : wg > 256 ? 256 : wg;
        while (wg > dev->max_work_group_size)
            wg /= 2;
    }
    if (wg > dev->max_work_group_size)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "lj: half-cas work-group size %zu > %zu", wg,
                        dev->max_work_group_size);
    pl->nblocks = 1;
    for (int d = 0; d < 3; d++)
        pl->nblocks *= (size_t)((nb->nc[d] + pl->block[d] - 1) / pl->block[d]);
    CP_TRY(md_neighbor_want_cells(nb));
    char opt[512];
    snprintf(opt, sizeof opt, "%s -DHS_BX=%d -DHS_BY=%d -DHS_BZ=%d", opt0, pl->block[0], pl->block[1],
             pl->block[2]);
    cl_program hp;
    CP_TRY(cp_program(ctx, "half_slot.cl", opt, &hp));
    CP_TRY(cp_kernel(ctx, hp, "hs_block_count", &pl->k_bcount));
    CP_TRY(cp_kernel(ctx, hp, "hs_rows", &pl->k_rows));
    CP_TRY(cp_kernel(ctx, hp, "hs_tables", &pl->k_tables));
    CP_TRY(cp_kernel(ctx, hp, "hs_derive", &pl->k_derive));
    CP_TRY(cp_kernel(ctx, hp, "hs_key", &pl->k_key));
    CP_TRY(cp_kernel(ctx, hp, "hs_rank", &pl->k_rank));
    /* H100, seed benchmark, density 0.5 (md-notes session 12): fp64 7.84 ms
     * per 100 calls in plain order, 6.73 with both orders; fp32 6.94 plain,
     * 6.63 with rows by length, 7.04 with both */
    pl->order = tu && tu->order > 0 ? tu->order - 1
                : pl->p.precision == CLPHYS_FP64 ? HS_CUT_FIRST | HS_SORTED_ROWS : HS_SORTED_ROWS;
    for (;;) {
        snprintf(opt, sizeof opt, "%s -DLJ_SLOT=1 -DLJ_SLOTS=%zu -DLJ_WG=%zu %s", opt0, slots, wg,
                 tu && tu->extra ? tu->extra : "");
        cl_program prog;
        CP_TRY(cp_program(ctx, "lj.cl", opt, &prog));
        CP_TRY(cp_kernel(ctx, prog, "lj_half_slot", &pl->k));
        pl->prog = prog;
        size_t kwg = 0;
        CP_CL(ctx, clGetKernelWorkGroupInfo(pl->k, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL));
        if (kwg >= wg) break;
        cp_release_kernel(&pl->k); /* the compiled kernel cannot run that many (registers) */
        if (asked || wg / 2 < 32)
            return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED,
                            "lj: half-cas kernel runs at most %zu work-items per group on %s, %zu asked", kwg,
                            dev->name, wg);
        wg /= 2;
    }
    pl->wg = wg;
    pl->tpi = 1;
    pl->slots = (int)slots;
    pl->slotted = 1;
    pl->blocked = 1;
    size_t nb1 = pl->nblocks, nlc = (size_t)(pl->block[0] + 2) * (pl->block[1] + 2) * (pl->block[2] + 1);
    pl->hcap = nb->capacity / 2 + 16;
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * nb1, NULL, &pl->bcount));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * (nb1 + 1), NULL, &pl->bstart));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &pl->rowi));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &pl->rowof));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &pl->rowtmp));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * nb1 * nlc, NULL, &pl->sbase));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * nb1 * slots, NULL, &pl->slot_j));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * nb1, NULL, &pl->nslot));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &pl->hcount));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * (size_t)pl->hcap * n, NULL, &pl->hl));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 2 * (size_t)pl->hcap * n, NULL, &pl->hs));
    cl_uint zero = 0;
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4, NULL, &pl->ovf));
    return cp_write(ctx, pl->ovf, 0, 4, &zero);
}

/* The slot lists from the neighbour plan's full list (after each build or
 * shuffle): rows of each block, slot tables, half-space entries; the row
 * capacity grows when a row outgrows it.  Kernel time goes to the build's. */
static clphys_status half_slot_derive(clphys_lj_plan *pl)
{
    clphys_context *ctx = pl->ctx;
    clphys_neighbor_plan *nb = pl->nb;
    cl_uint n = (cl_uint)pl->p.n, nbk = (cl_uint)pl->nblocks, slots = (cl_uint)pl->slots;
    cl_int nc[4] = {nb->nc[0], nb->nc[1], nb->nc[2], 0};
    size_t g = md_global(n, 64), gb = md_global(nbk, 64);
    double *ks = &nb->kernel_s;
    cl_kernel k = pl->k_bcount;
    CP_TRY(CP_ARG(ctx, k, 0, nb->start));
    CP_TRY(CP_ARG(ctx, k, 1, nc));
    CP_TRY(CP_ARG(ctx, k, 2, nbk));
    CP_TRY(CP_ARG(ctx, k, 3, pl->bcount));
    CP_TRY(cp_launch(ctx, k, 1, &gb, NULL, ks));
    cl_uint *bs = malloc(4 * ((size_t)nbk + 1));
    if (!bs) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "lj: half-cas block table");
    clphys_status st = cp_read(ctx, pl->bcount, 0, 4 * (size_t)nbk, bs + 1);
    bs[0] = 0;
    for (size_t b = 0; b < nbk; b++) /* exclusive scan of the counts */
        bs[b + 1] += bs[b];
    if (!st) st = cp_write(ctx, pl->bstart, 0, 4 * ((size_t)nbk + 1), bs);
    free(bs);
    CP_TRY(st);
    k = pl->k_rows;
    CP_TRY(CP_ARG(ctx, k, 0, nb->start));
    CP_TRY(CP_ARG(ctx, k, 1, nb->pcell));
    CP_TRY(CP_ARG(ctx, k, 2, nc));
    CP_TRY(CP_ARG(ctx, k, 3, n));
    CP_TRY(CP_ARG(ctx, k, 4, pl->bstart));
    CP_TRY(CP_ARG(ctx, k, 5, pl->rowi));
    CP_TRY(CP_ARG(ctx, k, 6, pl->rowof));
    CP_TRY(cp_launch(ctx, k, 1, &g, NULL, ks));
    int dbl = pl->p.precision == CLPHYS_FP64;
    double box[4] = {pl->p.box[0], pl->p.box[1], pl->p.box[2], 0};
    float boxf[4] = {(float)box[0], (float)box[1], (float)box[2], 0};
    double rc2 = pl->p.r_cut * pl->p.r_cut;
    float rc2f = (float)rc2;
    if (pl->order & HS_SORTED_ROWS) {
        k = pl->k_key; /* keys of the sorted particles, in hcount (overwritten below) */
        CP_TRY(CP_ARG(ctx, k, 0, nb->pos));
        CP_TRY(CP_ARG(ctx, k, 1, n));
        CP_TRY(dbl ? CP_ARG(ctx, k, 2, box) : CP_ARG(ctx, k, 2, boxf));
        CP_TRY(dbl ? CP_ARG(ctx, k, 3, rc2) : CP_ARG(ctx, k, 3, rc2f));
        CP_TRY(CP_ARG(ctx, k, 4, nb->ncount));
        CP_TRY(CP_ARG(ctx, k, 5, nb->list));
        CP_TRY(CP_ARG(ctx, k, 6, pl->hcount));
        CP_TRY(cp_launch(ctx, k, 1, &g, NULL, ks));
        k = pl->k_rank;
        CP_TRY(CP_ARG(ctx, k, 0, nb->pcell));
        CP_TRY(CP_ARG(ctx, k, 1, nc));
        CP_TRY(CP_ARG(ctx, k, 2, n));
        CP_TRY(CP_ARG(ctx, k, 3, pl->bstart));
        CP_TRY(CP_ARG(ctx, k, 4, pl->rowi));
        CP_TRY(CP_ARG(ctx, k, 5, pl->hcount));
        CP_TRY(CP_ARG(ctx, k, 6, pl->rowtmp));
        CP_TRY(CP_ARG(ctx, k, 7, pl->rowof));
        CP_TRY(cp_launch(ctx, k, 1, &g, NULL, ks));
        cl_mem t = pl->rowi; /* the reordered rows become rowi */
        pl->rowi = pl->rowtmp;
        pl->rowtmp = t;
    }
    k = pl->k_tables;
    CP_TRY(CP_ARG(ctx, k, 0, nb->start));
    CP_TRY(CP_ARG(ctx, k, 1, nc));
    CP_TRY(CP_ARG(ctx, k, 2, nbk));
    CP_TRY(CP_ARG(ctx, k, 3, pl->bstart));
    CP_TRY(CP_ARG(ctx, k, 4, pl->rowi));
    CP_TRY(CP_ARG(ctx, k, 5, slots));
    CP_TRY(CP_ARG(ctx, k, 6, pl->sbase));
    CP_TRY(CP_ARG(ctx, k, 7, pl->slot_j));
    CP_TRY(CP_ARG(ctx, k, 8, pl->nslot));
    CP_TRY(cp_launch(ctx, k, 1, &gb, NULL, ks));
    cl_uint cut_first = (pl->order & HS_CUT_FIRST) != 0;
    for (;;) {
        cl_uint zero = 0, maxc = 0, cap = (cl_uint)pl->hcap;
        CP_TRY(cp_write(ctx, nb->overflow, 0, 4, &zero));
        k = pl->k_derive;
        cl_mem args[] = {nb->start, nb->pcell, nb->ncount, nb->list, pl->bstart, pl->rowi, pl->rowof, pl->sbase,
                         pl->hl,    pl->hs};
        CP_TRY(CP_ARG(ctx, k, 0, nb->pos));
        CP_TRY(CP_ARG(ctx, k, 1, n));
        CP_TRY(dbl ? CP_ARG(ctx, k, 2, box) : CP_ARG(ctx, k, 2, boxf));
        CP_TRY(CP_ARG(ctx, k, 3, nc));
        for (cl_uint a = 0; a < 10; a++)
            CP_TRY(CP_ARG(ctx, k, 4 + a, args[a]));
        CP_TRY(CP_ARG(ctx, k, 14, cap));
        CP_TRY(CP_ARG(ctx, k, 15, pl->hcount));
        CP_TRY(CP_ARG(ctx, k, 16, nb->overflow));
        CP_TRY(dbl ? CP_ARG(ctx, k, 17, rc2) : CP_ARG(ctx, k, 17, rc2f));
        CP_TRY(CP_ARG(ctx, k, 18, cut_first));
        CP_TRY(cp_launch(ctx, k, 1, &g, NULL, ks));
        CP_TRY(cp_read(ctx, nb->overflow, 0, 4, &maxc));
        if (maxc <= cap) break;
        size_t grow = (size_t)(maxc * 1.2) + 8;
        cp_release_mem(&pl->hl);
        cp_release_mem(&pl->hs);
        pl->hcap = (int)grow;
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * grow * n, NULL, &pl->hl));
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 2 * grow * n, NULL, &pl->hs));
    }
    pl->derived_gen = nb->gen;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_lj_plan_create(clphys_context *ctx, const clphys_lj_params *p,
                                    clphys_lj_plan **plan)
{
    return md_lj_plan_create_tuned(ctx, p, NULL, plan);
}

clphys_status md_lj_plan_create_tuned(clphys_context *ctx, const clphys_lj_params *p,
                                      const md_lj_tune *tune, clphys_lj_plan **plan)
{
    if (!ctx || !p || !plan) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "lj: NULL argument");
    *plan = NULL;
    clphys_lj_plan *pl = calloc(1, sizeof *pl);
    if (!pl) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "lj plan");
    pl->ctx = ctx;
    pl->p = *p;
    clphys_status st = create(ctx, pl, tune);
    if (st) {
        clphys_lj_plan_destroy(pl);
        return st;
    }
    *plan = pl;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_lj_set_positions(clphys_lj_plan *pl, const double *pos)
{
    if (!pl) return CLPHYS_ERR_INVALID_ARGUMENT;
    return clphys_neighbor_build(pl->nb, pos);
}

clphys_status clphys_lj_update_positions(clphys_lj_plan *pl, const double *pos)
{
    if (!pl || !pos) return CLPHYS_ERR_INVALID_ARGUMENT;
    size_t rs = pl->p.precision == CLPHYS_FP64 ? 8 : 4;
    CP_TRY(md_upload_real4(pl->ctx, rs, pl->nb->pos_in, pos, pl->p.n, 0, pl->p.box));
    return md_neighbor_regather(pl->nb);
}

clphys_status clphys_lj_evaluate(clphys_lj_plan *pl, double *kernel_s)
{
    if (!pl) return CLPHYS_ERR_INVALID_ARGUMENT;
    clphys_context *ctx = pl->ctx;
    clphys_neighbor_plan *nb = pl->nb;
    if (pl->slotted && pl->derived_gen != nb->gen) CP_TRY(half_slot_derive(pl));
    cl_kernel k = pl->k;
    cl_uint n = (cl_uint)pl->p.n;
    int dbl = pl->p.precision == CLPHYS_FP64;
    double rc = pl->p.r_cut, sg = pl->p.sigma, ep = pl->p.epsilon;
    double d[4] = {pl->p.box[0], pl->p.box[1], pl->p.box[2], 0};
    double c[5] = {rc * rc, 4 * ep, 24 * ep, sg * sg, pl->shift};
    float df[4] = {(float)d[0], (float)d[1], (float)d[2], 0}, cf[5];
    for (int i = 0; i < 5; i++)
        cf[i] = (float)c[i];
    cl_uint a = 0;
    CP_TRY(CP_ARG(ctx, k, a++, nb->pos));
    CP_TRY(CP_ARG(ctx, k, a++, n));
    int staged = pl->variant == CLPHYS_LJ_FULL_STAGED;
    cl_mem rows = pl->slotted ? pl->hcount
                  : pl->variant == CLPHYS_LJ_FULL_TRANSPOSED || staged ? nb->ncount : nb->offset;
    CP_TRY(CP_ARG(ctx, k, a++, rows));
    cl_mem list = pl->slotted ? pl->hl : nb->list;
    CP_TRY(CP_ARG(ctx, k, a++, list));
    double id[4] = {1 / d[0], 1 / d[1], 1 / d[2], 0};
    float idf[4] = {(float)id[0], (float)id[1], (float)id[2], 0};
    CP_TRY(dbl ? CP_ARG(ctx, k, a, d) : CP_ARG(ctx, k, a, df));
    a++;
    CP_TRY(dbl ? CP_ARG(ctx, k, a, id) : CP_ARG(ctx, k, a, idf));
    a++;
    for (int i = 0; i < 5; i++, a++)
        CP_TRY(dbl ? CP_ARG(ctx, k, a, c[i]) : CP_ARG(ctx, k, a, cf[i]));
    size_t rs = dbl ? 8 : 4;
    if (pl->variant == CLPHYS_LJ_HALF_FIXEDPOINT) {
        cl_long z = 0;
        cl_uint zu = 0;
        CP_TRY(cp_fill(ctx, pl->fx3, &z, 8, 24 * (size_t)n));
        CP_TRY(cp_write(ctx, pl->bad, 0, 4, &zu));
        CP_TRY(CP_ARG(ctx, k, a++, pl->fx3));
    } else if (pl->variant == CLPHYS_LJ_HALF_CAS) {
        cl_mem dst = pl->repl > 1 ? pl->acc : pl->f;
        size_t bytes = (pl->repl > 1 ? (size_t)pl->repl : 1) * 4 * rs * n;
        if (dbl) {
            double z = 0;
            CP_TRY(cp_fill(ctx, dst, &z, 8, bytes));
        } else {
            float z = 0;
            CP_TRY(cp_fill(ctx, dst, &z, 4, bytes));
        }
    }
    cl_mem fout = pl->repl > 1 ? pl->acc : pl->f;
    CP_TRY(CP_ARG(ctx, k, a++, fout));
    CP_TRY(CP_ARG(ctx, k, a++, pl->vir));
    size_t g;
    if (pl->variant == CLPHYS_LJ_HALF_FIXEDPOINT) CP_TRY(CP_ARG(ctx, k, a++, pl->bad));
    if (staged) {
        cl_int nc[4] = {nb->nc[0], nb->nc[1], nb->nc[2], 0}, bx = nb->stage_bx;
        cl_uint stcap = nb->stage_max > 0 ? nb->stage_max : 1;
        CP_TRY(CP_ARG(ctx, k, a++, nb->start));
        CP_TRY(CP_ARG(ctx, k, a++, nb->sbase));
        CP_TRY(CP_ARG(ctx, k, a++, nc));
        CP_TRY(CP_ARG(ctx, k, a++, bx));
        CP_TRY(cp_arg(ctx, k, a++, 3 * rs * stcap, NULL)); /* local: the stage */
        CP_TRY(CP_ARG(ctx, k, a++, stcap));
        CP_TRY(cp_arg(ctx, k, a++, 4 * (9 * (size_t)(bx + 2) + 1), NULL)); /* local: slot offsets */
    }
    if (pl->slotted) {
        CP_TRY(CP_ARG(ctx, k, a++, pl->hs));
        CP_TRY(CP_ARG(ctx, k, a++, pl->bstart));
        CP_TRY(CP_ARG(ctx, k, a++, pl->rowi));
        CP_TRY(CP_ARG(ctx, k, a++, pl->slot_j));
        CP_TRY(CP_ARG(ctx, k, a++, pl->nslot));
        CP_TRY(CP_ARG(ctx, k, a++, pl->ovf));
        g = pl->nblocks * pl->wg;
    } else if (pl->blocked) {
        cl_int nc[4] = {nb->nc[0], nb->nc[1], nb->nc[2], 0};
        CP_TRY(CP_ARG(ctx, k, a++, nb->start));
        CP_TRY(CP_ARG(ctx, k, a++, nb->pcell));
        CP_TRY(CP_ARG(ctx, k, a++, nc));
        CP_TRY(CP_ARG(ctx, k, a++, pl->ovf));
        g = pl->nblocks * pl->wg;
    } else if (pl->variant == CLPHYS_LJ_FULL_GROUP)
        g = md_global((size_t)n * pl->tpi, pl->wg);
    else if (staged)
        g = nb->nblocks * pl->wg; /* one work-group per block of cells */
    else if (pl->variant == CLPHYS_LJ_CPU)
        g = md_global((n + 31) / 32, pl->wg); /* LJ_CPU_BLOCK = 32 i per work-item */
    else
        g = md_global(n, pl->wg);
    double t = 0; /* waited for only when asked for the time: back-to-back calls stay queued */
    CP_TRY(cp_launch(ctx, k, 1, &g, &pl->wg, kernel_s ? &t : NULL));
    if (pl->repl > 1) {
        CP_TRY(CP_ARG(ctx, pl->k_convert, 0, pl->acc));
        CP_TRY(CP_ARG(ctx, pl->k_convert, 1, pl->f));
        CP_TRY(CP_ARG(ctx, pl->k_convert, 2, n));
        size_t gc = md_global(4 * (size_t)n, 64);
        CP_TRY(cp_launch(ctx, pl->k_convert, 1, &gc, NULL, kernel_s ? &t : NULL));
    }
    if (pl->variant == CLPHYS_LJ_HALF_FIXEDPOINT) {
        CP_TRY(CP_ARG(ctx, pl->k_convert, 0, pl->fx3));
        CP_TRY(CP_ARG(ctx, pl->k_convert, 1, pl->f));
        CP_TRY(CP_ARG(ctx, pl->k_convert, 2, n));
        size_t gc = md_global(n, 64);
        CP_TRY(cp_launch(ctx, pl->k_convert, 1, &gc, NULL, kernel_s ? &t : NULL));
    }
    if (kernel_s) *kernel_s += t;
    return CLPHYS_SUCCESS;
}

/* Nearest other particle to sorted particle s (O(n), only on failure). */
static double nearest(clphys_lj_plan *pl, size_t s, size_t *jmin)
{
    size_t n = pl->p.n, rs = pl->p.precision == CLPHYS_FP64 ? 8 : 4;
    double *x4 = malloc(4 * n * sizeof *x4), best = INFINITY;
    if (!x4 || md_download_real4(pl->ctx, rs, pl->nb->pos, x4, n)) {
        free(x4);
        return NAN;
    }
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

clphys_status clphys_lj_get(clphys_lj_plan *pl, double *forces, clphys_lj_result *res)
{
    if (!pl) return CLPHYS_ERR_INVALID_ARGUMENT;
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
        for (size_t i = 0; !st && i < n; i++)
            w[i] = wf[i];
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
        if (!isfinite(f4[4 * s]) || !isfinite(f4[4 * s + 1]) || !isfinite(f4[4 * s + 2]) ||
            !isfinite(f4[4 * s + 3])) {
            size_t j = 0;
            double d = nearest(pl, s, &j);
            st = cp_error(ctx, CLPHYS_ERR_INPUT,
                          "lj: non-finite force on particle %u: particles %u and %u are %g apart "
                          "(overlapping atoms)",
                          perm[s], perm[s], perm[j], d);
        }
        e += f4[4 * s + 3];
        v += w[s];
        if (forces)
            for (int c = 0; c < 3; c++)
                forces[3 * (size_t)perm[s] + c] = f4[4 * s + c];
    }
    if (!st && res) res->potential_energy = e, res->virial = v;
    free(f4);
    free(w);
    free(perm);
    return st;
}

clphys_status clphys_lj_overflow(clphys_lj_plan *pl, uint64_t *slots)
{
    if (!pl || !slots) return CLPHYS_ERR_INVALID_ARGUMENT;
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

clphys_status clphys_lj_compute(clphys_lj_plan *pl, const double *pos, double *forces,
                                clphys_lj_result *res)
{
    CP_TRY(clphys_lj_set_positions(pl, pos));
    CP_TRY(clphys_lj_evaluate(pl, NULL));
    return clphys_lj_get(pl, forces, res);
}
