/* lj_half_cas.c — the half-cas variant's lists and kernel (cl/md_half_slot.cl,
 * lj_half_cas in cl/md_lj.cl): the blocks of cells, their local accumulator
 * slots and work-group size, and the slot lists derived from the plan's
 * full transposed list after every build or shuffle. */
#include "md_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The block of cells per work-group, its accumulator slots and work-items.
 * Defaults: 3x2x2 cells (on the seed's 15^3 cells that makes 320
 * work-groups, which fit a GPU of ~130 compute units in one wave; 2x2x2
 * makes a second, partial wave: bench/md-notes.md), narrower
 * when the neighbourhood at the mean density + 15 % does not fit in local
 * memory (at most 48 KiB) or the block's particles + 15 % exceed 256 (more
 * rows than work-items run the block in several passes); work-items for the
 * block's mean particle count + 15 % (32 .. 256).  A denser neighbourhood
 * sends the excess to global memory (counted: clphys_md_lj_overflow).  The
 * order of the lists (cl/md_half_slot.cl): the params', else in fp64 both
 * orders and in fp32 the rows by length only (the entries within r_cut
 * measured slower in fp32 on the H100: bench/md-notes.md). */
clphys_status md_half_cas_create(clphys_context *ctx, clphys_md_lj_plan *pl, const cp_defines *opt0)
{
    const clphys_device_info *dev = &ctx->info;
    const clphys_md_lj_params *p = &pl->p;
    clphys_md_neighbor_plan *nb = pl->nb;
    size_t rs = p->precision == CLPHYS_FP64 ? 8 : 4, n = p->n;
    size_t local = (dev->local_mem_bytes < 49152 ? dev->local_mem_bytes : 49152) - 256;
    double mean = (double)n / (double)nb->ncells;
    static const int shapes[][3] = {{3, 2, 2}, {2, 2, 2}, {2, 2, 1}, {2, 1, 1}, {1, 1, 1}};
    size_t slots = 0;
    for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
        for (int d = 0; d < 3; d++) pl->block[d] = shapes[c][d];
        double nlc = (pl->block[0] + 2.0) * (pl->block[1] + 2.0) * (pl->block[2] + 1.0);
        double rows = 1.15 * mean * pl->block[0] * pl->block[1] * pl->block[2];
        slots = cp_round_up((size_t)(1.15 * mean * nlc) + 1, 64);
        if (3 * rs * slots <= local && rows <= 256) break;
    }
    if (3 * rs * slots > local) slots = local / (3 * rs) / 32 * 32;
    if (slots < 32)
        return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED, "lj: half-cas needs more local memory than the %llu bytes of %s",
                        (unsigned long long)dev->local_mem_bytes, dev->name);
    size_t wg = p->work_group_size > 0 ? (size_t)p->work_group_size : 0;
    int asked = wg > 0;
    if (!wg) {
        /* whole waves: 64 work-items on AMD's CDNA (its preferred multiple),
         * else NVIDIA's 32; 160 would leave half of CDNA's third wave idle */
        size_t wave = dev->is_gpu && dev->preferred_wg_multiple > 32 && dev->preferred_wg_multiple <= 256
                          ? dev->preferred_wg_multiple
                          : 32;
        wg = cp_round_up((size_t)(1.15 * mean * pl->block[0] * pl->block[1] * pl->block[2]) + 1, wave);
        wg = wg < wave ? wave : wg > 256 ? 256 : wg;
        while (wg > dev->max_work_group_size) wg /= 2;
    }
    if (wg > dev->max_work_group_size)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "lj: half-cas work-group size %zu > %zu", wg,
                        dev->max_work_group_size);
    pl->nblocks = 1;
    for (int d = 0; d < 3; d++) pl->nblocks *= (size_t)((nb->nc[d] + pl->block[d] - 1) / pl->block[d]);
    CP_TRY(md_neighbor_want_cells(nb));
    cp_defines opt = *opt0;
    cp_define_int(&opt, "HS_BX", pl->block[0]);
    cp_define_int(&opt, "HS_BY", pl->block[1]);
    cp_define_int(&opt, "HS_BZ", pl->block[2]);
    cl_program hp;
    CP_TRY(cp_program(ctx, &clsrc_md_half_slot_cl, &opt, &hp));
    CP_TRY(cp_kernel(ctx, hp, "hs_block_count", &pl->k_bcount));
    CP_TRY(cp_kernel(ctx, hp, "hs_rows", &pl->k_rows));
    CP_TRY(cp_kernel(ctx, hp, "hs_tables", &pl->k_tables));
    CP_TRY(cp_kernel(ctx, hp, "hs_derive", &pl->k_derive));
    CP_TRY(cp_kernel(ctx, hp, "hs_key", &pl->k_key));
    CP_TRY(cp_kernel(ctx, hp, "hs_rank", &pl->k_rank));
    /* clphys_md_lj_slot_order - 1 = its HS_* bits */
    pl->order = p->slot_order != CLPHYS_MD_LJ_ORDER_AUTO ? (int)p->slot_order - 1
                : p->precision == CLPHYS_FP64            ? HS_CUT_FIRST | HS_SORTED_ROWS
                                                         : HS_SORTED_ROWS;
    int ahead = p->entries_ahead > 0 ? p->entries_ahead : 2, defer = p->defer_exchanges == 2;
    for (;;) {
        /* fp64 exchanges 64-bit words: atom_cmpxchg */
        opt = *opt0;
        cp_define_int(&opt, "LJ_HALF_CAS", 1);
        cp_define_int(&opt, "LJ_SLOTS", slots);
        cp_define_int(&opt, "LJ_WG", wg);
        cp_define_int(&opt, "LJ_AHEAD", ahead);
        cp_define_int(&opt, "LJ_DEFER", defer);
        if (p->precision == CLPHYS_FP64) cp_define_int(&opt, "NEED_INT64_ATOMICS", 1);
        cl_program prog;
        CP_TRY(cp_program(ctx, &clsrc_md_lj_cl, &opt, &prog));
        CP_TRY(cp_kernel(ctx, prog, "lj_half_cas", &pl->k));
        size_t kwg = 0;
        CP_TRY(cp_kernel_limits(ctx, pl->k, &kwg, NULL));
        if (kwg >= wg) break;
        cp_release_kernel(&pl->k); /* the compiled kernel cannot run that many (registers) */
        if (asked || wg / 2 < 32)
            return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED,
                            "lj: half-cas kernel runs at most %zu work-items per group on %s, %zu asked", kwg,
                            dev->name, wg);
        wg /= 2;
    }
    pl->wg = wg;
    pl->slots = (int)slots;
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
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * pl->hcap * n, NULL, &pl->hl));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 2 * pl->hcap * n, NULL, &pl->hs));
    cl_uint zero = 0;
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4, NULL, &pl->ovf));
    return cp_write(ctx, pl->ovf, 0, 4, &zero);
}

/* The slot lists from the neighbour plan's full list (after each build or
 * shuffle): rows of each block, slot tables, half-space entries; the row
 * capacity grows when a row outgrows it.  Kernel time goes to the build's. */
clphys_status md_half_cas_derive(clphys_md_lj_plan *pl)
{
    clphys_context *ctx = pl->ctx;
    clphys_md_neighbor_plan *nb = pl->nb;
    cl_uint n = (cl_uint)pl->p.n, nbk = (cl_uint)pl->nblocks, slots = (cl_uint)pl->slots;
    cl_int nc[4] = {nb->nc[0], nb->nc[1], nb->nc[2], 0};
    size_t g = md_global(n, 64), gb = md_global(nbk, 64);
    double *ks = &nb->kernel_s;
    cl_kernel k = pl->k_bcount;
    CP_TRY(CP_ARGS(ctx, k, nb->start, nc, nbk, pl->bcount));
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
    CP_TRY(CP_ARGS(ctx, k, nb->start, nb->pcell, nc, n, pl->bstart, pl->rowi, pl->rowof));
    CP_TRY(cp_launch(ctx, k, 1, &g, NULL, ks));
    int dbl = pl->p.precision == CLPHYS_FP64;
    double box[4] = {pl->p.box[0], pl->p.box[1], pl->p.box[2], 0};
    float boxf[4] = {(float)box[0], (float)box[1], (float)box[2], 0};
    double rc2 = pl->p.r_cut * pl->p.r_cut;
    float rc2f = (float)rc2;
    if (pl->order & HS_SORTED_ROWS) {
        k = pl->k_key; /* keys of the sorted particles, in hcount (overwritten below) */
        CP_TRY(CP_ARGS(ctx, k, nb->pos, n, CP_EITHER(dbl, box, boxf), CP_EITHER(dbl, rc2, rc2f), nb->ncount, nb->list,
                       pl->hcount));
        CP_TRY(cp_launch(ctx, k, 1, &g, NULL, ks));
        k = pl->k_rank;
        CP_TRY(CP_ARGS(ctx, k, nb->pcell, nc, n, pl->bstart, pl->rowi, pl->hcount, pl->rowtmp, pl->rowof));
        CP_TRY(cp_launch(ctx, k, 1, &g, NULL, ks));
        cl_mem t = pl->rowi; /* the reordered rows become rowi */
        pl->rowi = pl->rowtmp;
        pl->rowtmp = t;
    }
    k = pl->k_tables;
    CP_TRY(CP_ARGS(ctx, k, nb->start, nc, nbk, pl->bstart, pl->rowi, slots, pl->sbase, pl->slot_j, pl->nslot));
    CP_TRY(cp_launch(ctx, k, 1, &gb, NULL, ks));
    cl_uint cut_first = (pl->order & HS_CUT_FIRST) != 0;
    for (;;) {
        cl_uint zero = 0, maxc = 0, cap = (cl_uint)pl->hcap;
        CP_TRY(cp_write(ctx, nb->overflow, 0, 4, &zero));
        k = pl->k_derive;
        cl_mem args[] = {nb->start, nb->pcell, nb->ncount, nb->list, pl->bstart,
                         pl->rowi,  pl->rowof, pl->sbase,  pl->hl,   pl->hs};
        CP_TRY(CP_ARGS(ctx, k, nb->pos, n, CP_EITHER(dbl, box, boxf), nc, args[0], args[1], args[2], args[3], args[4],
                       args[5], args[6], args[7], args[8], args[9], cap, pl->hcount, nb->overflow,
                       CP_EITHER(dbl, rc2, rc2f), cut_first));
        CP_TRY(cp_launch(ctx, k, 1, &g, NULL, ks));
        CP_TRY(cp_read(ctx, nb->overflow, 0, 4, &maxc));
        if (maxc <= cap) break;
        size_t grow = (size_t)(maxc * 1.2) + 8;
        cp_release_mem(&pl->hl);
        cp_release_mem(&pl->hs);
        pl->hcap = grow;
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * grow * n, NULL, &pl->hl));
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 2 * grow * n, NULL, &pl->hs));
    }
    pl->derived_gen = nb->gen;
    return CLPHYS_SUCCESS;
}
