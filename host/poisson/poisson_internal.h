/* poisson_internal.h — the Poisson plan and what the files of host/poisson/
 * share.  Order of use: geometry.c or operator.c make the fine operator on
 * the host, hierarchy.c coarsens it, plan.c makes the plan, plan_build.c
 * uploads the operator and builds the kernels, stencil.c and vcycle.c launch
 * them, solve.c runs CG; plan_info.c and fields.c hold the small public calls
 * on a plan. */
#ifndef CLPHYS_POISSON_INTERNAL_H
#define CLPHYS_POISSON_INTERNAL_H

#include "clphys_poisson.h"
#include "platform/platform.h"
#include "host/linalg/linalg.h"

#define POISSON_WET    1   /* the mask of a wet cell, as in cl/poisson_line_relax.cl         */
#define POISSON_VEC_WG 256 /* work-group size of region_sums (cl/poisson_vec.cl)    */

/* A symmetric 7-point operator on the host in fp64 in the kernels' form
 * (cl/poisson_stencil.cl): the excess e = a0 - sum |couplings| of each row
 * (lambda V; exactly 0 where the row sums to zero; 1 on land) and the
 * forward couplings (<= 0), with the mask of wet cells. */
typedef struct {
    int nx, ny, nz;
    size_t n;
    double *e, *ax, *ay, *az;
    unsigned char *mask;
} poisson_op;

clphys_status poisson_op_alloc(clphys_context *ctx, poisson_op *op, int nx, int ny, int nz);
void poisson_op_free(poisson_op *op);
/* The sum of |couplings| of cell c (wrap-around in x and y as the kernels). */
double poisson_offdiag_sum(const poisson_op *op, size_t c);

/* geometry.c: A from a geometry; w = cell volumes on wet cells, 0 on land.
 * Checks the geometry (errors of clphys_poisson_plan_create). */
clphys_status poisson_check_geometry(clphys_context *ctx, const clphys_poisson_geometry *g);
clphys_status poisson_assemble(clphys_context *ctx, const clphys_poisson_geometry *g, poisson_op *op, double *w);
/* The geometry's metrics (also used by manufactured.c): x and y positions
 * of cell centres and faces in the grid's own coordinates (m, or radians in
 * lonlat), and depths of centres. */
typedef struct {
    double *xc, *xf; /* nx centres, nx + 1 faces                        */
    double *yc, *yf; /* ny, ny + 1                                      */
    double *zc, *zf; /* nz, nz + 1 (depth, positive down)               */
} poisson_metrics;
clphys_status poisson_metrics_make(clphys_context *ctx, const clphys_poisson_geometry *g, poisson_metrics *m);
void poisson_metrics_free(poisson_metrics *m);
/* Sizes (m, m^2, m^3) of cell (i, j, k): the areas of its east, north and
 * top faces, its volume, and the distances from its centre to the centres
 * of its east and north neighbours (east of i = nx - 1 is i = 0). */
double poisson_area_east(const clphys_poisson_geometry *g, const poisson_metrics *m, int i, int j, int k);
double poisson_area_north(const clphys_poisson_geometry *g, const poisson_metrics *m, int i, int j, int k);
double poisson_area_top(const clphys_poisson_geometry *g, const poisson_metrics *m, int i, int j);
double poisson_volume(const clphys_poisson_geometry *g, const poisson_metrics *m, int i, int j, int k);
double poisson_dist_east(const clphys_poisson_geometry *g, const poisson_metrics *m, int i, int j);
double poisson_dist_north(const clphys_poisson_geometry *g, const poisson_metrics *m, int i, int j);
/* 1 when cell (i, j, k) is wet: its centre above the sea floor */
int poisson_wet(const clphys_poisson_geometry *g, const poisson_metrics *m, int i, int j, int k);
#define POISSON_EARTH_RADIUS 6371000.0
#define POISSON_PI           3.14159265358979323846

/* operator.c: A from a caller's 7 arrays (checked: clphys_poisson.h). */
clphys_status poisson_from_seven(clphys_context *ctx, int nx, int ny, int nz, const double *a, poisson_op *op);
void poisson_to_seven(const poisson_op *op, double *a);

/* regions.c: label the connected wet regions in which every row sums to
 * zero (singular); label[c] = region or -1.  *nregions regions, ordered by
 * size (0 the largest). */
clphys_status poisson_singular_regions(clphys_context *ctx, const poisson_op *op, int *label, int *nregions);

/* hierarchy.c: the coarse operator of op (x-y coarsening, coarse_scale on
 * the horizontal couplings). */
clphys_status poisson_coarsen(clphys_context *ctx, const poisson_op *fine, double coarse_scale, poisson_op *coarse,
                              int *sx, int *sy);

/* ---- the plan ---------------------------------------------------------------- */
enum { POISSON_E, POISSON_AX, POISSON_AY, POISSON_AZ, POISSON_NCOEF };

typedef struct {
    int nx, ny;
    int sx, sy; /* this level is (finer >> sx, finer >> sy); 0 on level 0 */
    size_t n;
    cl_mem a[POISSON_NCOEF]; /* in the V-cycle's precision (level 0: may alias)      */
    cl_mem mask;
    cl_mem x[2], b; /* b: coarse levels only                                */
    int own_a;      /* 0 when a[] aliases the plan's fine arrays             */
    int vec;        /* the column-vec kernels run this level                 */
} poisson_level;

/* Kernels of one build of cl/poisson_line_relax.cl (column), cl/poisson_line_relax_vec.cl
 * (column-vec: POISSON_LJ_PROLONG is prolong_add there) or cl/poisson_line_staged.cl
 * (staged: POISSON_RESTRICT also relaxes the coarse level's first step) */
enum { POISSON_LJ_ZERO, POISSON_LJ, POISSON_LJ_PROLONG, POISSON_RESTRICT, POISSON_NLINE };

struct clphys_poisson_plan {
    clphys_context *ctx;
    clphys_poisson_params prm; /* defaults resolved                                  */
    int nx, ny, nz;
    size_t n, wet;
    int from_geometry; /* rhs is f (b = -V f) rather than b                 */
    poisson_op fine;   /* host copy of the fine operator (fp64)             */
    double *w;         /* projection weights (n)                            */
    int *label;        /* singular regions (n), or NULL when none           */
    int nregions;
    double *region_w; /* sum of w per region                               */
    double *region_n; /* cells per region                                  */
    /* device: the fine operator in fp64 (CG) and fp32 (fp32 CG, apply) */
    cl_mem a64[POISSON_NCOEF], a32[POISSON_NCOEF];
    cl_mem w_mem, label_mem, partial, shift, bint; /* bint: b of the system solved (n)  */
    cl_mem rhs_mem, x_mem;                         /* host solves: the caller's rhs and x on the device  */
    size_t vec_groups;
    cl_kernel k_stencil[2][3]; /* [precision][column, cell, column-vec]             */
    cl_kernel k_rhs, k_rsum, k_rmean, k_rshift;
    /* the V-cycle */
    clphys_precision lev_prec; /* precision of the levels                           */
    int nlev;
    poisson_level *lev;
    cl_kernel k_fine[POISSON_NLINE], k_last[POISSON_NLINE], k_coarse[POISSON_NLINE]; /* column or staged */
    cl_kernel v_fine[POISSON_NLINE], v_last[POISSON_NLINE], v_coarse[POISSON_NLINE]; /* column-vec */
    clphys_poisson_line line;
    int vw; /* lanes of column-vec                               */
    /* stencil choice */
    clphys_poisson_stencil variant;
    size_t local[2];                /* stencil work-group (0: runtime's)                 */
    size_t vlocal[2];               /* V-cycle work-group (staged: columns per tile and
                                       work-items per column)                            */
    size_t vkmax;                   /* the largest work-group every V-cycle kernel takes */
    clphys_tune_source tune_source; /* of variant and local (tune.c)           */
    /* the solver */
    cl_command_queue reads;
    la_space *s64, *s32;
    la_operator op64, op32;
    la_precond M;
    /* time split: events of the current solve */
    int timing;
    cl_event *ev; /* pairs (first, last) of V-cycles, then stencils    */
    int *ev_kind; /* 0 V-cycle, 1 stencil, per pair                    */
    int nev, cap_ev;
    /* a rank's part of a distributed plan (host/poisson/mpi_plan.c): the
     * levels below the fine one given (dist_ops[l - 1], block with halo,
     * taken by the plan), label and regions given, the line kernels built
     * with -DCSHIFT=1 (cl/poisson_line_relax.h), column where column-vec was chosen */
    poisson_op *dist_ops;
    int dist_levels; /* levels in all, the fine one included; 0: not distributed */
};

/* plan.c */
size_t poisson_real_size(clphys_precision p);
/* A plan with the defaults of params resolved, its fine operator and w
 * still to be set (pl->fine, pl->w: n doubles, zeroed). */
clphys_status poisson_plan_new(clphys_context *ctx, const clphys_poisson_params *params, int nx, int ny, int nz,
                               clphys_poisson_plan **out);
/* A plan whose fine operator is op (taken: op is left empty), w 1 on wet
 * cells: the coarse plan of a distributed one. */
clphys_status poisson_plan_from_op(clphys_context *ctx, const clphys_poisson_params *params, poisson_op *op,
                                   clphys_poisson_plan **out);
/* plan_build.c: the rest of a plan once pl->fine, w and (distributed) label
 * are set; the fine operator of precision p and its stencil kernels, made on
 * first use (the fp32 copy of A when first asked for). */
clphys_status poisson_plan_finish(clphys_poisson_plan *pl);
clphys_status poisson_ensure_precision(clphys_poisson_plan *pl, clphys_precision p);

/* stencil.c: y = A x with the plan's variant in precision p (kernel_s as
 * cp_launch); the stencil as an operator of the linear-algebra layer. */
clphys_status poisson_stencil(clphys_poisson_plan *pl, clphys_precision p, cl_mem y, cl_mem x, double *kernel_s);
void poisson_stencil_operator(clphys_poisson_plan *pl, clphys_precision p, la_space *s, la_operator *op);
/* tune.c: the stencil's variant and shape (given, tuning cache, timing,
 * heuristic: cp_tune_choose); pl->tune_source where they came from. */
clphys_status poisson_choose_stencil(clphys_poisson_plan *pl);

/* vcycle.c: build the V-cycle's kernels of pl->line (and vkmax; staged
 * chosen by AUTO falls back to column when its kernels take fewer than
 * POISSON_STAGED_MIN_GROUP work-items); z = B r; the preconditioner. */
clphys_status poisson_vcycle_build(clphys_poisson_plan *pl);
/* one Jacobi line step of the column kernels on level l (xn from xo, + P e
 * in the prolongating kernel), and bc of level l + 1 = R (b - A x) */
clphys_status poisson_line(clphys_poisson_plan *pl, cl_kernel k, int l, cl_mem xn, cl_mem xo, cl_mem e, cl_mem b,
                           double omega, cl_event *ev);
clphys_status poisson_restrict_residual(clphys_poisson_plan *pl, int l, cl_mem x, cl_mem b);
/* one step of the column-vec kernels (k of v_fine, v_last or v_coarse) on
 * level l, whose nx is a multiple of pl->vw: xn from xo (line_jacobi_vec)
 * or from 0 (line_jacobi_zero_vec), b */
clphys_status poisson_line_vec(clphys_poisson_plan *pl, cl_kernel k, int l, cl_mem xn, cl_mem xo, cl_mem b,
                               double omega, cl_event *ev);
clphys_status poisson_vcycle_run(clphys_poisson_plan *pl, cl_mem z, cl_mem r, double *kernel_s);
void poisson_vcycle_precond(clphys_poisson_plan *pl, la_space *s, la_precond *M);
double poisson_vcycle_bytes(const clphys_poisson_plan *pl);
/* local memory of a staged kernel's work-group of wx columns (3 wx (nz | 1)
 * reals of the levels' precision) */
size_t poisson_staged_local_bytes(const clphys_poisson_plan *pl, size_t wx);
/* the smallest work-group with which AUTO keeps staged (8 columns x 4) */
#define POISSON_STAGED_MIN_GROUP 32

/* solve.c: bint = s w rhs on wet cells; the partial sums of v (or w v)
 * over region r into pl->partial; v -= shift[label] (or w shift[label]) */
clphys_status poisson_make_rhs(clphys_poisson_plan *pl, cl_mem rhs, int kw, int kr);
clphys_status poisson_region_partials(clphys_poisson_plan *pl, cl_mem v, int r, int weighted);
clphys_status poisson_region_apply_shift(clphys_poisson_plan *pl, cl_mem v, int weighted);

/* solve.c: z loses its plain mean over every singular region (fp64 z) */
clphys_status poisson_project_z(clphys_poisson_plan *pl, cl_mem z);

/* solve.c: event pairs of a solve (kind 0 V-cycle, 1 stencil) */
void poisson_events_clear(clphys_poisson_plan *pl);
void poisson_events_add(clphys_poisson_plan *pl, int kind, cl_event first, cl_event last);
void poisson_events_sum(clphys_poisson_plan *pl, double *vcycle_s, double *stencil_s);

/* netcdf_check.c: a file to be opened by libnetcdf: a regular file, its
 * format (1, 2, 5: classic CDF-1, CDF-2, CDF-5; 4: NetCDF-4/HDF5) and
 * size; a classic header is checked whole (counts the file can hold,
 * every variable's data inside the file).  CLPHYS_ERR_IO (cannot open, not
 * a regular file), CLPHYS_ERR_FORMAT naming the file and the defect. */
typedef struct {
    int format;
    uint64_t size;
} poisson_nc_file;
clphys_status poisson_nc_check(const char *file, poisson_nc_file *info);
/* A NetCDF-4 variable holds at most this many values per byte of its file:
 * beyond 256:1 (1024:1 for 4-byte values, about zlib's limit) a variable
 * is taken as never written, and is refused before its values are
 * allocated. */
#define POISSON_NC4_VALUES_PER_BYTE 256

#endif
