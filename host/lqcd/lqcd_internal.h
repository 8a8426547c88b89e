/* lqcd_internal.h — the dslash plan shared by dslash.c and solver.c. */
#ifndef CLPHYS_LQCD_INTERNAL_H
#define CLPHYS_LQCD_INTERNAL_H

#include "platform/platform.h"

struct clphys_dslash_plan {
    clphys_context *ctx;
    clphys_dslash_params p;
    int dims[4];
    size_t vol, vh;          /* sites, sites per parity                   */
    size_t real_size;        /* 4 or 8 bytes                              */
    cl_kernel hop;           /* dslash_hop of wilson_dslash.cl            */
    cl_kernel hop_g5[2];     /* dslash_hop_g5in, dslash_hop_g5out         */
    cl_kernel imp, exp;      /* spinor_import/export (fp64 plans only)    */
    cl_mem gauge;            /* links in device layout                    */
    cl_mem tmp;              /* odd half field for the even-odd operator  */
    size_t local;            /* work-group size, 0 = runtime's choice     */
    int tune_source;         /* CLPHYS_DSLASH_WG_* of clphys_lqcd.h       */
    int own_blas;            /* 1: level-1 ops from blas1.cl, 0: clBLAST  */
    cl_kernel kb[20];        /* blas1.cl kernels (blas.c), on first use   */
    cl_mem partial;          /* per-group dot partial sums (2 per group)  */
    size_t ngroups;
};

void lb_release(clphys_dslash_plan *pl); /* blas.c: the kernels above */

/* Launch dslash_hop: parity -1 full / 0 / 1; x NULL for out = H in, else
 * out = x + a H in.  lqcd_hop_g5: g5 = 1 reads gamma5 in, g5 = 2 gives
 * x + a gamma5 H in (wilson_dslash.cl). */
clphys_status lqcd_hop(clphys_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity,
                       double *kernel_s);
clphys_status lqcd_hop_g5(clphys_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity, int g5,
                          double *kernel_s);

/* tune.c: choose pl->local (and pl->tune_source) for a plan whose params
 * left local_size at 0: the tuning cache, else a measurement (stored), else
 * the device heuristic when tuning is disabled (CLPHYS_NO_TUNE, no_tune). */
clphys_status lqcd_tune(clphys_dslash_plan *pl);

/* solver.c: switches of a solver plan, for measuring one change against
 * another (bench/lqcd_solver_probe.c); clphys_solver_plan_create sets the
 * defaults, the measured best (bench/lqcd-notes.md). */
#define LQCD_MAX_CHUNKS 32
typedef struct {
    int dev_scalars;   /* own_blas: alpha, beta on the device, |r|^2 read
                          asynchronously (1), or a blocking read per
                          reduction (0)                                     */
    int fused_outer;   /* own_blas: fused kernels in the fp64 outer loop    */
    int xfer_chunks;   /* b and x move in this many pieces, host copy of one
                          overlapping the DMA of another (1: one piece)     */
    int copy_mode;     /* host copy into/out of the staging array: 0 pieces
                          of 512 KB over the threads, 1 one piece per
                          thread, 2 as 1 with non-temporal stores (x86)     */
    int spec_download; /* start reading x back (own queue) while its
                          true residual is computed                        */
    int read_queue;    /* asynchronous reads of partial sums on the second
                          queue (1) or in the main queue's order (0)       */
} lqcd_solver_knobs;
void lqcd_solver_get_knobs(const clphys_solver_plan *sp, lqcd_solver_knobs *kn);
void lqcd_solver_set_knobs(clphys_solver_plan *sp, const lqcd_solver_knobs *kn);
/* dst = src, n doubles, by all host threads; mode as copy_mode above. */
void lqcd_host_copy(double *dst, const double *src, size_t n, int mode);

#endif
