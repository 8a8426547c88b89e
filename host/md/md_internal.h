/* md_internal.h — the neighbour plan's device state, shared by the LJ and
 * MD host code of this path (not public). */
#ifndef CLPHYS_MD_INTERNAL_H
#define CLPHYS_MD_INTERNAL_H

#include "clphys_md.h"
#include "platform/platform.h"

#include <math.h>

struct clphys_md_neighbor_plan {
    clphys_context *ctx;
    clphys_md_neighbor_params p;
    int nc[3];
    size_t ncells;
    size_t real_size; /* 4 or 8 */
    size_t scan_wg;
    cl_kernel k_assign, k_scan, k_scatter, k_order, k_gather4, k_gatheru, k_gatheri4, k_build;
    cl_kernel k_scan_sums, k_scan_write; /* the scan over many work-groups   */
    cl_mem scan_sums, scan_base;         /* its blocks' sums, scanned         */
    size_t scan_blocks;                  /* blocks they have room for          */
    size_t build_wg;                     /* k_build's work-group (NB_WG); 0: cpu or staged kernel  */
    cl_kernel k_build_rows;              /* neighbor_build with rows in local memory (NB_LCAP > 0) */
    size_t rows_wg;                      /* its work-group                                       */
    size_t rows_above;                   /* transposed lists of more bytes use k_build_rows      */
    cl_kernel k_pack;                    /* made by md_neighbor_want_cells            */
    cl_mem pos_in, perm_in;              /* unsorted input (real4, uint)              */
    cl_mem pos, perm;                    /* sorted by cell; perm[s] = caller index    */
    cl_mem cell, rank, count, start, order;
    cl_mem ncount, offset, list, overflow;
    cl_mem stage;      /* CPUs, CSR: rows of the counting pass, kept
                          at i*capacity (cl/md_neighbor_cpu.cl)       */
    cl_kernel k_stage; /* STAGED: per-block slot offsets            */
    cl_mem sbase;      /* STAGED: nblocks x (9 (bx + 2) + 1) uints  */
    int stage_bx;      /* STAGED: cells per block along x           */
    size_t nblocks;
    cl_uint stage_max;   /* STAGED: largest stage of the last build   */
    cl_mem pcell;        /* packed cell coordinates of each sorted
                            particle at the last build (k_pack)      */
    size_t list_entries; /* allocated entries of list                 */
    size_t capacity;     /* transposed: entries per particle          */
    size_t pairs;        /* CSR: entries; else MD_PAIRS_UNCOUNTED until
                            md_neighbor_pairs sums the counts          */
    int growths;
    double kernel_s;           /* profiled time of the last build           */
    int untimed;               /* 1: builds neither wait for nor time their
                                  launches (kernel_s 0): the MD plans when no
                                  time is asked for                          */
    cl_uint *overflow_at;      /* set by the caller (page-locked): a transposed
                                  build leaves the largest row count there,
                                  read without a wait, and the check to
                                  md_neighbor_overflow_check                 */
    int overflow_pending;      /* such a read is queued and not checked yet  */
    int cpu_build;             /* 1: cl/md_neighbor_cpu.cl builds the list     */
    char choice[64];           /* clphys_md_neighbor_plan_choice               */
    clphys_tune_source source; /* of the build kernel (md_neighbor_choose)  */
    unsigned long gen;         /* lists built or reordered so far: plans
                                  that derive lists from this one compare  */
};

/* Order of the half-cas slot lists (cl/md_half_slot.cl): entries within r_cut
 * first in each row; rows of a block by descending list length.  The bits
 * are clphys_md_lj_slot_order - 1. */
#define HS_CUT_FIRST   1
#define HS_SORTED_ROWS 2

struct clphys_md_lj_plan {
    clphys_context *ctx;
    clphys_md_lj_params p;
    clphys_md_lj_variant variant; /* AUTO resolved                             */
    clphys_md_neighbor_plan *nb;
    cl_kernel k, k_convert, k_lanes; /* k_lanes: full-transposed's edge rows */
    cl_mem f, vir, fx3, bad;         /* f: real4 per sorted particle (force, energy
                                        share); fx3, bad: half-fixedpoint          */
    size_t wg, tpi;
    double shift;
    /* half-cas (lj_half_cas.c): blocks of cells, slot lists */
    int block[3], slots, order; /* order: HS_* bits                          */
    size_t nblocks;
    cl_mem ovf; /* slots that did not fit, since last read  */
    cl_kernel k_bcount, k_rows, k_tables, k_derive, k_key, k_rank;
    cl_mem bcount, bstart, rowi, rowof, rowtmp, sbase, slot_j, nslot, hl, hs, hcount;
    size_t hcap;               /* entries per row of hl, hs                 */
    unsigned long derived_gen; /* nb->gen the slot lists were derived from  */
    size_t overflow;           /* summed over reads                         */
    const long long *atom_id;  /* MD plans: each atom's ID (caller order), so
                                  that messages name the file's atoms; NULL:
                                  messages give 0-based caller indices      */
    char choice[192];          /* clphys_md_lj_plan_choice                     */
    clphys_tune_source source; /* of variant and options (md_lj_choose)     */
};

/* ---- tuning (tune.c; platform/tune.h lists the entries) ---------------- */
/* Particles within r_search of one at the mean density: the density class. */
double md_neighbours(size_t n, const double box[3], double r_search);
/* The build kernel of a plan of p, chosen as every path chooses
 * (cp_tune_choose): given (or the staged layout's own), else the tuning
 * cache's entry of the nearest size and density class, else the heuristic
 * (cpu on CPU devices, item elsewhere).  *cpu_build 1 for cpu; *source
 * where it came from. */
void md_neighbor_choose(clphys_context *ctx, const clphys_md_neighbor_params *p, int *cpu_build,
                        clphys_tune_source *source);
/* Make *plan by create() with the variant and options chosen as every path
 * chooses (cp_tune_choose): p's when it leaves nothing to auto; else what
 * it leaves to auto (variant AUTO, options 0) from the tuning cache's
 * entries of the nearest size and density class, when a plan of them can
 * be made here (values out of range are not taken); else the heuristic
 * (create() with p).  *source where the choice came from. */
clphys_status md_lj_choose(clphys_context *ctx, const clphys_md_lj_params *p,
                           clphys_status (*create)(clphys_context *, const clphys_md_lj_params *, clphys_md_lj_plan **),
                           clphys_md_lj_plan **plan, clphys_tune_source *source);
/* Tune one case (tests): the variants vs[nv] at their heuristic options
 * plus half-cas's deferred exchanges, in precision prec on the seed input
 * at density rho and box edge; stores as clphys_md_lj_tune. */
clphys_status md_lj_tune_case(clphys_context *ctx, const clphys_tune_options *o, clphys_precision prec, double rho,
                              double edge, const clphys_md_lj_variant *vs, int nv);

/* half-cas: blocks, slots, work-group size and kernels for pl (its
 * neighbour plan made); opt0: the precision's build options. */
clphys_status md_half_cas_create(clphys_context *ctx, clphys_md_lj_plan *pl, const cp_defines *opt0);
/* The slot lists from the neighbour plan's full list (after each build or
 * shuffle): rows of each block, slot tables, half-space entries; the row
 * capacity grows when a row outgrows it.  Kernel time goes to the build's. */
clphys_status md_half_cas_derive(clphys_md_lj_plan *pl);

/* Sort pos_in/perm_in (device) by cell into pos/perm, then build the list.
 * extra_gather: optional (src, dst) real4 pairs also gathered by the order
 * (velocities in MD); n_extra of them; int4 images likewise. */
clphys_status md_neighbor_rebuild(clphys_md_neighbor_plan *pl, cl_mem *extra_src, cl_mem *extra_dst, int n_extra,
                                  cl_mem img_src, cl_mem img_dst);
/* out[k] = in[0] + ... + in[k - 1] for k = 0 .. n (n + 1 uints; in and out
 * distinct), by one work-group where n fits one block of pl->scan_wg *
 * SCAN_ITEMS entries, else over a work-group a block (the block sums grown
 * where short).  Enqueued only. */
clphys_status md_neighbor_scan(clphys_md_neighbor_plan *pl, cl_mem in, cl_mem out, cl_uint n);
/* pos_in = pos (n*3 doubles, wrapped into the box; non-finite: an error
 * naming the particle), perm_in = the identity: the input of a rebuild. */
clphys_status md_neighbor_upload(clphys_md_neighbor_plan *pl, const double *pos);
/* pos = pos_in gathered by the current order (positions changed, same list). */
clphys_status md_neighbor_regather(clphys_md_neighbor_plan *pl);
/* After a build with overflow_at set, once the caller's queue has read the
 * count (its wait on a later command of the in-order queue): where a row
 * overflowed, the list grown and built again, waited for, and *rebuilt 1
 * (what was launched on the short list must run again); else nothing. */
clphys_status md_neighbor_overflow_check(clphys_md_neighbor_plan *pl, int *rebuilt);
/* pos.w of a distributed plan's ghost atom on the device (owned atoms and
 * every other plan's particles have 0): the list build
 * (cl/md_neighbor_list.cl, cl/md_neighbor_cpu.cl) gives such rows of a full
 * list no entries and the cpu force kernel (cl/md_lj_cpu.cl) skips them,
 * since a ghost's force is never used. */
#define MD_GHOST_W (-1.0)
/* Host copy of pos (n*3 doubles) into a device real4 buffer (w in the 4th
 * component); with box non-NULL each coordinate is wrapped into [0, box). */
clphys_status md_upload_real4(clphys_context *ctx, size_t real_size, cl_mem m, const double *x, size_t n, double w,
                              const double *box);
/* n real4 between host doubles (n*4) and a device buffer. */
clphys_status md_upload4(clphys_context *ctx, size_t real_size, cl_mem m, const double *x4, size_t n);
clphys_status md_download_real4(clphys_context *ctx, size_t real_size, cl_mem m, double *x4, size_t n);
size_t md_global(size_t n, size_t wg);
/* A real4 (w = 0) or real kernel argument in the precision of rs bytes (8:
 * double, else float), for CP_ARGS: MD_REAL4_ARG(pl->rs, box),
 * MD_REAL_ARG(pl->rs, dt).  The value lives in a compound literal of the
 * enclosing block, so it outlasts the CP_ARGS of the same statement. */
typedef struct {
    double d[4];
    float f[4];
    cp_karg arg;
} md_real4;
static inline cp_karg *md_real4_set(md_real4 *r, size_t rs, const double v[3], size_t count)
{
    for (int c = 0; c < 4; c++) r->d[c] = c < 3 ? v[c] : 0, r->f[c] = (float)r->d[c];
    r->arg = rs == 8 ? CP_SIZED(count * sizeof r->d[0], r->d) : CP_SIZED(count * sizeof r->f[0], r->f);
    return &r->arg;
}
#define MD_REAL4_ARG(rs, v) (*md_real4_set(&(md_real4){.d = {0}}, (rs), (v), 4))
#define MD_REAL_ARG(rs, x)  (*md_real4_set(&(md_real4){.d = {0}}, (rs), (const double[3]){(x), 0, 0}, 1))
/* Local memory of one staged block holding `slots` particles (x, y, z and
 * the slot offsets of its cells). */
size_t md_stage_bytes(const clphys_md_neighbor_plan *pl, size_t slots);
/* Keep pcell (packed cell coordinates of the sorted particles) from the
 * next build on. */
clphys_status md_neighbor_want_cells(clphys_md_neighbor_plan *pl);

/* Distributed plans (mpi.c): the plan works on its first n particles
 * from now on, n at most the n it was made for (its buffers' size); the
 * staged layout and half-cas are not resized (their block tables follow
 * the count made for).  The transposed list grows when capacity * n
 * exceeds it. */
clphys_status md_neighbor_set_count(clphys_md_neighbor_plan *pl, size_t n);
/* Entries in the list (the sum of the counts), summed on the host on first
 * use after a build of a transposed or staged list: a rebuild does not read
 * the counts back for a total it does not need. */
#define MD_PAIRS_UNCOUNTED ((size_t)-1)
clphys_status md_neighbor_pairs(clphys_md_neighbor_plan *pl, size_t *pairs);
clphys_status md_lj_set_count(clphys_md_lj_plan *pl, size_t n);
/* The forces of rows first .. first + count - 1 only (and of at most a
 * work-group of rows beyond, up to n: a later call for those rows writes
 * them again), for the variants whose kernel takes one row per work-item
 * from its global id (md_lj_rows_supported: full-csr, full-transposed);
 * queued, not waited for.  The distributed plan overlaps the ghost exchange
 * with the rows that have no ghost neighbour. */
int md_lj_rows_supported(const clphys_md_lj_plan *pl);
clphys_status md_lj_evaluate_rows(clphys_md_lj_plan *pl, size_t first, size_t count);
/* The forces of the rows outside lo .. hi - 1 (rows 0 .. lo - 1 and hi ..
 * n - 1), queued: the rows a distributed plan computes once the ghosts are
 * in.  With lanes (md_lj_lanes: full-transposed): the nrows rows listed in
 * rows (a device array of sorted row indices, each at most once, a subset
 * of those outside: the plan lists the ones holding owned atoms), one
 * launch of lj_full_transposed_lanes on queue q (NULL: ctx's), several
 * work-items per row (the rows are too few for one each to keep a GPU
 * busy); full-csr: every row outside, by md_lj_evaluate_rows on each range
 * (the lower one may run on to a work-group past lo - 1; rows and q
 * unused).  CLPHYS_ERR_INVALID_ARGUMENT
 * unless lo <= hi <= n, the variant is one of md_lj_rows_supported's and,
 * with lanes, rows is given for a non-empty outside no smaller than
 * nrows. */
int md_lj_lanes(const clphys_md_lj_plan *pl);
clphys_status md_lj_evaluate_edges(clphys_md_lj_plan *pl, size_t lo, size_t hi, cl_mem rows, size_t nrows,
                                   cl_command_queue q);
/* The application's MD parameters in the library's layout, the embedded
 * lj parameters too (cp_params_in; integrator.c). */
clphys_status md_params_in(clphys_context *ctx, const clphys_md_params *p, clphys_md_params *out);

/* Velocity Verlet on the device (verlet.c, cl/md_integrate.cl), as the
 * single-rank plan (integrator.c) and the distributed one (mpi.c) run
 * it; arrays are real4 in the plan's precision (velocities with the mass
 * in w, forces with the energy in w), images int4. */
typedef struct {
    clphys_context *ctx;
    size_t rs;       /* bytes of a real: 4 or 8 */
    size_t disp_wg;  /* md_max_displacement's work-group (MD_WG): 64, or the device's most */
    cl_program prog; /* md_integrate.cl with these options (owned by ctx)  */
    cl_kernel k_kd, k_kdp, k_kick, k_disp;
    cl_mem dmax; /* one uint: the displacement's float bits          */
} md_verlet;

clphys_status md_verlet_create(clphys_context *ctx, clphys_precision prec, md_verlet *v);
void md_verlet_free(md_verlet *v);
/* The rows a Verlet kernel runs over: 0 .. n - 1 but the skip_n rows
 * from skip_at (md_rows_all: all n; md_rows_span: a .. b - 1 alone), and
 * where perm is not NULL but those holding ghosts (perm[row] >= nown). */
typedef struct {
    size_t n, skip_at, skip_n;
    cl_mem perm;
    size_t nown;
} md_rows;
/* Half the shortest edge of a box: an atom that moves farther in one step
 * escapes the minimum image (the bound of clphys_md_thermo_now). */
static inline double md_half_box(const double box[3]) { return 0.5 * fmin(box[0], fmin(box[1], box[2])); }
/* CLPHYS_ERR_INPUT at a thermo of step: `who` (an atom's name) has velocity
 * v[3], over half the box a step (md_half_box) at dt: the integration
 * diverged.  The same for energies that are not finite (sums: m v^2, the
 * potential energy, the virial). */
clphys_status md_diverged_speed(clphys_context *ctx, long long step, const char *who, const double v[3], double dt,
                                double half);
clphys_status md_diverged_energies(clphys_context *ctx, long long step, double ke2, double pe, double vir);
static inline md_rows md_rows_all(size_t n) { return (md_rows){n, 0, 0, NULL, 0}; }
static inline md_rows md_rows_span(size_t a, size_t b) { return (md_rows){b, 0, a, NULL, 0}; }
/* Where md_verlet_kick_drift packs the new positions (md_kick_drift_pack):
 * row i's at buf's place slot[i] (three reals; ~0: none), moved by da
 * below place na and by db from it. */
typedef struct {
    cl_mem slot, buf;
    size_t na;
    double da[3], db[3];
} md_pack_rows;
/* Rows r: v += f/m dt/2, x += v dt wrapped into [0, box) with the
 * crossings counted in img (md_kick_drift); with kick_first the second
 * half kick of the step before first, v += f/m dt/2 with the same f (so
 * that a step's last kernel and the next one's first read v and f once;
 * the result is md_verlet_kick's then this one's to the bit); with pk (may
 * be NULL) the new positions also packed as pk says.  Queued: with ev NULL
 * its kernel time added to *ks (may be NULL), else *ev its launch's event
 * (NULL where no row is left).  CLPHYS_ERR_INVALID_ARGUMENT: r outside
 * 0 .. n - 1. */
clphys_status md_verlet_kick_drift(md_verlet *v, cl_mem pos, cl_mem vel, cl_mem img, cl_mem f, double dt,
                                   const double box[3], md_rows r, int kick_first, const md_pack_rows *pk, double *ks,
                                   cl_event *ev);
/* Rows r: v += f/m dt/2 (md_kick); queued. */
clphys_status md_verlet_kick(md_verlet *v, cl_mem vel, cl_mem f, double dt, md_rows r, double *ks);
/* *d2: the largest squared minimum-image displacement of pos from xref
 * (in the periodic box), as the float the device reduced; waits for it. */
clphys_status md_verlet_max_displacement(md_verlet *v, cl_mem pos, cl_mem xref, const double box[3], size_t n,
                                         double *ks, float *d2);

#endif
