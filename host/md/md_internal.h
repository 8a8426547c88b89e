/* md_internal.h — the neighbour plan's device state, shared by the LJ and
 * MD host code of this path (not public). */
#ifndef CLPHYS_MD_INTERNAL_H
#define CLPHYS_MD_INTERNAL_H

#include "platform/platform.h"

struct clphys_neighbor_plan {
    clphys_context *ctx;
    clphys_neighbor_params p;
    int nc[3];
    size_t ncells;
    size_t real_size;            /* 4 or 8 */
    size_t scan_wg;
    cl_kernel k_assign, k_scan, k_scatter, k_order, k_gather4, k_gatheru, k_gatheri4, k_build;
    cl_kernel k_pack;            /* made by md_neighbor_want_cells            */
    cl_mem pos_in, perm_in;      /* unsorted input (real4, uint)              */
    cl_mem pos, perm;            /* sorted by cell; perm[s] = caller index    */
    cl_mem cell, rank, count, start, order;
    cl_mem ncount, offset, list, overflow;
    cl_mem stage;                /* CPUs, CSR: rows of the counting pass, kept
                                    at i*capacity (cl/neighbor_cpu.cl)       */
    cl_kernel k_stage;           /* STAGED: per-block slot offsets            */
    cl_mem sbase;                /* STAGED: nblocks x (9 (bx + 2) + 1) uints  */
    int stage_bx;                /* STAGED: cells per block along x           */
    size_t nblocks;
    cl_uint stage_max;           /* STAGED: largest stage of the last build   */
    cl_mem pcell;                /* packed cell coordinates of each sorted
                                    particle at the last build (k_pack)      */
    size_t list_entries;         /* allocated entries of list                 */
    int capacity;                /* transposed: entries per particle          */
    size_t pairs;
    int growths;
    double kernel_s;             /* profiled time of the last build           */
    unsigned long gen;           /* lists built or reordered so far: plans
                                    that derive lists from this one compare  */
};

/* Order of the half-cas slot lists (cl/half_slot.cl): entries within r_cut
 * first in each row; rows of a block by descending list length (defaults in
 * host/md/lj.c, half_slot_create). */
#define HS_CUT_FIRST 1
#define HS_SORTED_ROWS 2

/* Shape of the half-cas kernel (zeros: the defaults of host/md/lj.c).
 * block: cells per work-group of the cell-blocked kernel (lj_half_block);
 * wg: its work-items; tpi: work-items per i; unroll: list entries gathered
 * ahead (per_i: exchanges in flight); slots: local accumulators; per_i:
 * 1 = the kernel with one work-item per i and global exchanges only
 * (lj_half_cas); extra: more
 * build options (experiments). */
typedef struct {
    int block[3];
    int wg, tpi, unroll, slots, per_i;
    int spread; /* per_i: work-item w takes i = w * s mod n, s the first odd
                   number >= spread coprime with n (0: i = w)               */
    int repl;   /* per_i: copies of the force array the exchanges go to
                   (work-item w: copy w mod repl), summed after (0: 1)     */
    int lfix;   /* blocked: local partial sums as int64 fixed point added
                   by atom_add (cl/lj.cl, LJ_LFIX; needs int64 atomics)    */
    int cells;  /* 1: the earlier cell-blocked kernel lj_half_block (also
                   chosen by tpi > 1 or lfix) instead of lj_half_slot      */
    int order;  /* slot lists: 0 the default, else 1 + HS_* bits          */
    const char *extra;
} md_lj_tune;

struct clphys_lj_plan {
    clphys_context *ctx;
    clphys_lj_params p;
    clphys_lj_variant variant;
    clphys_neighbor_plan *nb;
    cl_kernel k, k_convert;
    cl_mem f, vir, fx3, bad;
    size_t wg, tpi;
    double shift;
    /* half-cas, cell-blocked */
    int blocked, block[3], slots;
    cl_program prog;             /* its program (owned by the context)        */
    size_t nblocks;
    int repl;                    /* per_i: force copies (acc), 1 = f itself    */
    cl_mem acc;
    cl_mem ovf;                  /* slots that did not fit, since last read  */
    /* half-cas, slot lists (cl/half_slot.cl, lj_half_slot) */
    int slotted, order;  /* order: HS_* bits                          */
    cl_kernel k_bcount, k_rows, k_tables, k_derive, k_key, k_rank;
    cl_mem bcount, bstart, rowi, rowof, rowtmp, sbase, slot_j, nslot, hl, hs, hcount;
    int hcap;                    /* entries per row of hl, hs                 */
    unsigned long derived_gen;   /* nb->gen the slot lists were derived from  */
    uint64_t overflow;           /* summed over reads                         */
};

/* clphys_lj_plan_create with the half-cas kernel's shape chosen by the
 * caller (tune may be NULL: defaults). */
clphys_status md_lj_plan_create_tuned(clphys_context *ctx, const clphys_lj_params *p,
                                      const md_lj_tune *tune, clphys_lj_plan **plan);

/* Sort pos_in/perm_in (device) by cell into pos/perm, then build the list.
 * extra_gather: optional (src, dst) real4 pairs also gathered by the order
 * (velocities in MD); n_extra of them; int4 images likewise. */
clphys_status md_neighbor_rebuild(clphys_neighbor_plan *pl, cl_mem *extra_src, cl_mem *extra_dst,
                                  int n_extra, cl_mem img_src, cl_mem img_dst);
/* pos = pos_in gathered by the current order (positions changed, same list). */
clphys_status md_neighbor_regather(clphys_neighbor_plan *pl);
/* dst[s] = src[order[s]] with the order of the last build. */
clphys_status md_neighbor_gather4(clphys_neighbor_plan *pl, cl_mem src, cl_mem dst);
clphys_status md_neighbor_gatheri4(clphys_neighbor_plan *pl, cl_mem src, cl_mem dst);
/* Host copy of pos (n*3 doubles) into a device real4 buffer (w in the 4th
 * component); with box non-NULL each coordinate is wrapped into [0, box). */
clphys_status md_upload_real4(clphys_context *ctx, size_t real_size, cl_mem m, const double *x,
                              size_t n, double w, const double *box);
clphys_status md_download_real4(clphys_context *ctx, size_t real_size, cl_mem m, double *x4,
                                size_t n);
size_t md_global(size_t n, size_t wg);
/* Local memory of one staged block holding `slots` particles (x, y, z and
 * the slot offsets of its cells). */
size_t md_stage_bytes(const clphys_neighbor_plan *pl, size_t slots);
/* Keep pcell (packed cell coordinates of the sorted particles) from the
 * next build on. */
clphys_status md_neighbor_want_cells(clphys_neighbor_plan *pl);

#endif
