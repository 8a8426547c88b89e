/* lqcd_internal.h — the dslash plan and the functions the files of
 * host/lqcd/ share.  Includes run one way: dslash.c -> tune.c -> hop.c. */
#ifndef CLPHYS_LQCD_INTERNAL_H
#define CLPHYS_LQCD_INTERNAL_H

#include "clphys_lqcd.h"
#include "platform/platform.h"
#include "host/linalg/linalg.h"

typedef struct lqcd_halo lqcd_halo;
enum { LQCD_FAIL_HOP = 1 }; /* the place of a plan's test failure (fail) */
typedef struct lqcd_multi lqcd_multi;

struct clphys_lqcd_dslash_plan {
    clphys_context *ctx;
    clphys_lqcd_dslash_params p; /* as given, with reconstruct, layout, bc resolved */
    int dims[4];                 /* this rank's lattice                       */
    size_t vol, vh;              /* sites, sites per parity (this rank)       */
    int gdims[4];                /* the whole lattice (dims on one rank)      */
    size_t gvol;
    int grid[4], coord[4];          /* process grid, this rank's place in it     */
    int parts;                      /* bit mu: direction mu split between ranks  */
    double phf[4][2], phb[4][2];    /* phases of the hops across this rank's
                                   upper / lower ends (1 unless the lattice's) */
    size_t real_size;               /* 4 or 8 bytes                              */
    int halo_half;                  /* faces in 16 bits (-DHALO_HALF; multi.c)   */
    cl_kernel hop;                  /* dslash_hop of lqcd_dslash.cl            */
    cl_kernel hop_g5[2];            /* dslash_hop_g5in, dslash_hop_g5out         */
    cl_kernel pack, ext[2];         /* halo_pack, halo_exterior(_g5out) (parts)  */
    cl_kernel imp, exp;             /* spinor_import/export (fp64 plans only)    */
    cl_mem gauge;                   /* links in device layout                    */
    cl_mem tmp;                     /* odd half field for the even-odd operator  */
    cl_mem staging;                 /* field_read/write's host array of one full */
    void *staging_host;             /* field: mapped from staging (page-locked),  */
                                    /* or malloc'd where staging is NULL          */
    size_t local;                   /* work-group size, 0 = runtime's choice     */
    clphys_tune_source tune_source; /* of local (lqcd_tune)              */
    /* Over MPI (halo.c, set by clphys_lqcd_dslash_plan_create_mpi): the exchange,
     * the hop through it, and the global sum the solvers' spaces take. */
    lqcd_halo *halo;
    clphys_status (*halo_hop)(clphys_lqcd_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity,
                              int g5, double *kernel_s, clphys_lqcd_dslash_split *split);
    void (*halo_destroy)(lqcd_halo *h);
    la_global_sum_fn gsum;
    void *gsum_user;
    /* for the tests (tests/test_lqcd_mpi.c): a device failure at a hop
     * over the ranks (place LQCD_FAIL_HOP) */
    cp_test_failure fail;
    /* Over the devices of one process (multi.c, set by
     * clphys_lqcd_dslash_plan_create_multi): this plan's part of the group. */
    lqcd_multi *multi;
};

/* dslash.c: a plan for this rank's part g of the lattice; grid and coord
 * NULL for one rank (the whole lattice).  Builds the kernels (the halo
 * kernels when a direction is split), uploads g, tunes.  The exchange
 * itself is added by halo.c. */
clphys_status lqcd_plan_create(clphys_context *ctx, const clphys_lqcd_gauge_field *g,
                               const clphys_lqcd_dslash_params *p, const int grid[4], const int coord[4],
                               clphys_lqcd_dslash_plan **plan);
/* buf[i] = v in the precision of real_size (4 or 8 bytes). */
void lqcd_put_real(void *buf, size_t real_size, size_t i, double v);

/* grid.c: the rank (or device) at coord of a process grid (x fastest, as
 * clphys_lqcd_grid_local); the ranks above (coord[mu] + 1) and below
 * (coord[mu] - 1), periodic; the face index of a site (coordinates c) in
 * direction mu: the lexicographic index of its other three coordinates (nu
 * ascending), halved when half (one parity: the numbering of
 * cl/lqcd_dslash.cl). */
int lqcd_grid_rank(const int grid[4], const int coord[4]);
void lqcd_grid_neighbours(const int grid[4], const int coord[4], int up[4], int down[4]);
size_t lqcd_face_index(const int dims[4], const int c[4], int mu, int half);

/* faces.c: the faces of a plan split by its grid, shared by the exchanges
 * over ranks (halo.c) and over devices (multi.c). */
typedef struct {
    size_t face_n[4]; /* face sites per parity (0: not split)      */
    size_t face_before[4], face_all;
    cl_mem list;     /* sites with a remote neighbour, p*VH + cb,  */
    size_t nlist[2]; /* even ones first                           */
} lqcd_faces;
/* The geometry and the face-site list (on the device) of pl. */
clphys_status lqcd_faces_init(clphys_lqcd_dslash_plan *pl, lqcd_faces *f);
/* Bytes of one face entry: 12 reals, or with halo_half 12 16-bit
 * fractions and an fp32 scale (cl/lqcd_dslash.cl). */
size_t lqcd_face_entry_bytes(const clphys_lqcd_dslash_plan *pl);
/* Byte offset of face block (mu, side) in a buffer of faces of nq parities
 * (1: a half field, 2: a full one), *bytes (may be NULL) its length. */
size_t lqcd_face_block(const clphys_lqcd_dslash_plan *pl, const lqcd_faces *f, int mu, int side, size_t nq,
                       size_t *bytes);
/* The backward hops' links of direction mu (double[2 face_n][18], entry
 * parity * face_n + face index of the site below) into the device array
 * dev (lqcd_ghost_bytes of it) in pl's precision and compression. */
void lqcd_ghost_store(const clphys_lqcd_dslash_plan *pl, const lqcd_faces *f, int mu, const double *links, void *dev);
size_t lqcd_ghost_bytes(const clphys_lqcd_dslash_plan *pl, const lqcd_faces *f);
/* halo_pack of in's faces (the hop of out parity `parity`, g5 as
 * lqcd_hop_g5) into send, nent face entries; *ev its event. */
clphys_status lqcd_pack_launch(clphys_lqcd_dslash_plan *pl, cl_mem send, cl_mem in, int parity, int g5, size_t nent,
                               cl_event *ev);
/* halo_exterior(_g5out) adding the remote hops from recv to out; *nsites
 * the face sites it covers, *ev its event. */
clphys_status lqcd_exterior_launch(clphys_lqcd_dslash_plan *pl, const lqcd_faces *f, cl_mem out, cl_mem recv,
                                   cl_mem ghost, cl_mem x, double a, int parity, int g5, size_t *nsites, cl_event *ev);
/* The events and counts of one hop through an exchange, for
 * lqcd_hop_times. */
typedef struct {
    cl_event pack, interior, exterior; /* the hop's kernels (NULL: not run) */
    const cl_event *d2h, *h2d;         /* the face copies down and up, */
    int ncopies;                       /* ncopies of each (NULL entries: none) */
    double exchange_s;                 /* the exchange's time; < 0: the copies' span on the device clock */
    size_t bytes;                      /* face bytes sent                      */
    int messages;
    size_t face_sites; /* sites the exterior kernel covered    */
} lqcd_hop_events;
/* The end of a hop of out parity `parity` (-1: full) through an exchange
 * (halo.c, multi.c): when kernel_s or split is wanted (either may be
 * NULL), waits for the exterior kernel and adds the profiled times of the
 * pack, interior and exterior kernels to *kernel_s and, with the copies'
 * times, the exchange's, the device's idle time between the interior's end
 * and the exterior's start (exposed_s) and the counts, to *split. */
clphys_status lqcd_hop_times(const clphys_lqcd_dslash_plan *pl, int parity, const lqcd_hop_events *ev, double *kernel_s,
                             clphys_lqcd_dslash_split *split);

/* multi.c: release pl's part of its group (the group with its last plan);
 * the member index of pl in its group, -1 for a plan of no group. */
void lqcd_multi_release(clphys_lqcd_dslash_plan *pl);
int lqcd_multi_member(const clphys_lqcd_dslash_plan *pl);
/* Mark pl's group failed (a caller's error before a collective call), so
 * that no other device waits for this one (NULL or no group: nothing). */
void lqcd_multi_fail(clphys_lqcd_dslash_plan *pl);

/* hop.c: launch dslash_hop: parity -1 full / 0 / 1; x NULL for out = H in,
 * else out = x + a H in.  lqcd_hop_g5: g5 = 1 reads gamma5 in, g5 = 2 gives
 * x + a gamma5 H in (lqcd_dslash.cl).  kernel_s as cp_launch (added to).
 * On a plan over ranks these go through the halo exchange (halo_hop);
 * lqcd_hop_split also adds the parts of the hop to *split. */
clphys_status lqcd_hop(clphys_lqcd_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity,
                       double *kernel_s);
clphys_status lqcd_hop_g5(clphys_lqcd_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity, int g5,
                          double *kernel_s);
clphys_status lqcd_hop_split(clphys_lqcd_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity, int g5,
                             clphys_lqcd_dslash_split *split);
/* The hopping kernel of g5 with its arguments set, and its global size:
 * the interior kernel of halo.c. */
clphys_status lqcd_hop_kernel(clphys_lqcd_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity,
                              int g5, cl_kernel *k, size_t *global);
/* The boundary phases as the hopping kernels take them, forward and
 * backward: real8 each, in either precision. */
typedef struct {
    cl_float8 f32[2];
    cl_double8 f64[2];
} lqcd_phases;
/* Fill ph from the plan; a[0], a[1]: the two phase arguments in the plan's
 * precision, pointing into ph (keep it until the arguments are set). */
void lqcd_phase_args(const clphys_lqcd_dslash_plan *pl, lqcd_phases *ph, cp_karg a[2]);

/* tune.c: choose pl->local (and pl->tune_source) by the one sequence of
 * every path (cp_tune_choose): the params' local_size, else the tuning
 * cache, else a measurement (then stored), else the device heuristic when
 * tuning is off (CLPHYS_NO_TUNE, no_tune) or nothing launched. */
clphys_status lqcd_tune(clphys_lqcd_dslash_plan *pl);

/* eo_operator.c: the even-odd preconditioned operator M = 1 - kappa^2 H_eo
 * H_oe of pl and M^+ = gamma5 M gamma5 on half fields, as an operator of
 * the linear-algebra layer on space s (half fields of pl's precision). */
void lqcd_eo_operator(clphys_lqcd_dslash_plan *pl, la_space *s, la_operator *op);

/* transfer.c: b in and x out of a solve.  The caller's host spinors
 * (double[V][4][3][2]) move through a page-locked staging array (all host
 * threads copy) and one device buffer in the caller's layout, in pieces so
 * that the host copy of one piece overlaps the DMA of another, and change
 * layout on the device (spinor_import/export) into the even and odd fields. */
typedef struct lqcd_transfer lqcd_transfer;
clphys_status lqcd_transfer_create(clphys_lqcd_dslash_plan *p64, lqcd_transfer **t);
void lqcd_transfer_destroy(lqcd_transfer *t);
clphys_status lqcd_transfer_upload(lqcd_transfer *t, const double *b, cl_mem even, cl_mem odd);
clphys_status lqcd_transfer_download(lqcd_transfer *t, cl_mem even, cl_mem odd, double *x);

#endif
