/* md_mpi_internal.h — the distributed MD plan's pieces (not public):
 * the decomposition (decomp.c), atoms on the host and their migration,
 * scatter and gather (migrate.c), the ghost atoms (ghost.c) and the
 * plan and its steps (mpi.c).  Built only with MPI. */
#ifndef CLPHYS_MD_MPI_INTERNAL_H
#define CLPHYS_MD_MPI_INTERNAL_H

#include "clphys_md_mpi.h"
#include "md_internal.h"
#include "platform/cp_mpi.h"

/* Atoms on the host; x relative to the box's lo corner (3 n), v (3 n),
 * image flags (3 n). */
typedef struct {
    size_t n, cap;
    long long *id;
    int *type;
    double *x, *v;
    int *img;
} md_atoms;

clphys_status md_atoms_reserve(clphys_context *ctx, md_atoms *a, size_t n);
/* Append atom i of src (its x shifted by shift[3], NULL: none). */
clphys_status md_atoms_push(clphys_context *ctx, md_atoms *a, const md_atoms *src, size_t i, const double *shift);
void md_atoms_free(md_atoms *a);

/* One atom as it travels between ranks (md_rec_type). */
typedef struct {
    long long id;
    int type, img[3];
    double x[3], v[3];
} md_rec;

/* md_rec as one MPI datatype, so that counts and displacements are in atoms
 * (up to INT_MAX of them) rather than bytes (INT_MAX / 72: 29.8 million
 * atoms).  Freed with MPI_Type_free. */
clphys_status md_rec_type(clphys_context *ctx, MPI_Datatype *t);
/* Atom k of a from r (a has room), and back. */
void md_rec_put(md_atoms *a, size_t k, const md_rec *r);
void md_rec_get(const md_atoms *a, size_t k, md_rec *r);

/* The grid of subdomains and this rank's place in it. */
typedef struct {
    int P[3], coord[3], rank, size;
    int nbr[3][2];         /* ranks of the lower and upper neighbour per dimension */
    double L[3];           /* box edges                                              */
    double glo[3], ghi[3]; /* the box's bounds (the caller's coordinates)         */
    double lo[3], hi[3];   /* this subdomain, relative to the box's lo corner       */
    double rs;             /* ghost cutoff: r_cut + skin                              */
    int cut[3];            /* P > 1: ghosts along this dimension                     */
    double llo[3];         /* local frame on the device: x_local = x - llo           */
    double lbox[3];        /* local periodic box of the device's neighbour plan      */
} md_decomp;

/* Grid (given, or MPI_Dims_create when grid is NULL or all zero), this
 * rank's coordinates, neighbours, subdomain and local frame; the same
 * checks on every rank (no communication): CLPHYS_ERR_INVALID_ARGUMENT (a
 * grid whose product is not size), CLPHYS_ERR_INPUT (a thin subdomain). */
clphys_status md_decomp_make(clphys_context *ctx, int rank, int size, const int grid[3], const double L[3], double rs,
                             md_decomp *d);
/* The device frame's origin (llo) along c of the subdomain at grid
 * coordinate k. */
double md_decomp_llo(const md_decomp *d, int c, int k);
/* Grid coordinate (0 .. P-1) along dimension c that owns x (in [0, L)). */
int md_decomp_owner(const md_decomp *d, int c, double x);
/* The rank owning position x (3 coordinates in [0, L)). */
int md_decomp_rank_of(const md_decomp *d, const double *x);
/* Box lengths beyond which md_wrap gives up on a position. */
#define MD_WRAP_MAX (1 << 20)
/* x into [0, L) along each dimension by steps of L (whole box lengths at
 * once where x lies more than two out), counting crossings in img; 1 where
 * a coordinate is not finite or lies more than MD_WRAP_MAX box lengths out
 * (or its image count would overflow): x and img are then left part-way,
 * for a message only. */
int md_wrap(const md_decomp *d, double *x, int *img);
/* x into [0, L) as x - L floor(x / L) gives it, without the division for
 * the x within one box length of it (all but a lost atom's). */
double md_wrap_into(double x, double L);

/* Root's system scattered to the owners of its atoms (root: sys; others:
 * NULL).  Collective; statuses agreed. */
clphys_status md_scatter(MPI_Comm comm, clphys_context *ctx, const md_decomp *d, int root, const clphys_md_system *sys,
                         md_atoms *own);
/* Atoms outside this subdomain (x wrapped into [0, L)) to their owners, in
 * the six exchanges x, y, z (both sides of a dimension at once, side 0's
 * arrivals appended before side 1's); an atom more than one subdomain away
 * is CLPHYS_ERR_INPUT.  st: this rank's status so far.  Every rank makes
 * the same MPI calls whatever its status (a rank that failed sends nothing
 * and keeps nothing it receives), and none of them agrees a status: the
 * one returned is this rank's, for the caller to agree (cp_mpi_agree, or
 * a collective that carries it) before anything else collective. */
clphys_status md_migrate(MPI_Comm comm, clphys_context *ctx, const md_decomp *d, md_atoms *own, clphys_status st);
/* Every rank's atoms on root, sorted by ID, into *all (allocated; types
 * and masses from ntypes, type_mass).  Collective; statuses agreed. */
clphys_status md_gather(MPI_Comm comm, clphys_context *ctx, const md_decomp *d, int root, const md_atoms *own,
                        int ntypes, const double *type_mass, clphys_md_system *all);

/* One of the six ghost exchanges: atoms sent to `to` (their local indices,
 * at send[off .. off + nsend)), atoms received from `from` as local indices
 * first .. first + nrecv - 1. */
typedef struct {
    int dim, to, from;
    size_t off, nsend, first, nrecv;
    double shift;  /* added along dim to a sent atom (the receiver's
                      coordinates, periodic images included)             */
    double dlocal; /* the same between the two ranks' device frames      */
} md_swap;

typedef struct {
    md_swap swap[6];
    int nswap;
    size_t nghost;
    double *gx;    /* ghost positions, receiver's coordinates (3 nghost) */
    cl_uint *send; /* local indices of the atoms sent, all swaps         */
    size_t nsend, send_cap, gcap;
} md_ghosts;

/* The ghost lists of the owned atoms own (inside this subdomain): six
 * exchanges of positions, those received in x forwarded in y and z.
 * Collective; statuses agreed. */
clphys_status md_ghosts_build(MPI_Comm comm, clphys_context *ctx, const md_decomp *d, const md_atoms *own,
                              md_ghosts *g);
void md_ghosts_free(md_ghosts *g);

/* The device side of the per-step ghost exchange (cl/md_ghost.cl). */
enum { MD_DIRECT_SEND = 1, MD_DIRECT_RECV = 2 }; /* md_ghost_dev's node_direct */

typedef struct {
    clphys_context *ctx;
    size_t rs; /* 4 or 8 */
    cl_kernel k_pack, k_unpack, k_select, k_places, k_borders, k_bpack, k_blists, k_slots;
    cl_mem send_idx, recv_idx, sendbuf, recvbuf;
    cl_mem count;    /* md_ghost_select's counters, one a side           */
    int host_lists;  /* rebuilds make the ghost lists on the host        */
    int rounds_only; /* CLPHYS_MD_GHOST_ROUNDS: never with the migrants   */
    size_t send_cap, recv_cap;
    void *hsend, *hrecv; /* host staging: page-locked (hsend_m, hrecv_m
                            mapped) where the device gives it, else malloc */
    cl_mem hsend_m, hrecv_m;
    cl_command_queue copyq; /* the copies' own in-order queue (events order
                             them against ctx's queue, which runs the
                             kernels); NULL where the device gives none:
                             the copies then go on ctx's queue */
    cl_event marker;        /* end of the device work overlapped with messages */
    long long waits;        /* blocking waits for the device, counted          */
    /* node staging (node_stage.c): -1 not yet decided, 0 the positions
     * travel in MPI's messages, 1 through shared memory (every rank on one
     * host) */
    int node;
    char *node_seg;    /* this rank's segment: two halves of sendbuf's size */
    size_t node_bytes; /* of every rank's segment                            */
    long long node_plan, node_gen;
    void *node_maps[6]; /* the neighbours' segments                           */
    int node_nmaps;
    void *node_peer[3][2]; /* the segment swap (c, side) receives from           */
    int parity;            /* the half the next exchange writes                  */
    int node_threads;      /* threads of md_node_stage_copy                      */
    int node_direct;       /* MD_DIRECT_SEND: the device copies straight
                              into this rank's segment (page-locked under
                              node_seg_m), else through hsend;
                              MD_DIRECT_RECV: straight out of the
                              neighbours' (under node_maps_m), else through
                              hrecv                                         */
    cl_mem node_seg_m, node_maps_m[6];
    cl_event h2d[3]; /* each dimension's last copy out of a neighbour's
                        segment; waited for before its next header      */
    /* the first cut dimension's positions packed by the step's kick-drift
     * (md_ghost_prepack_map) */
    cl_mem slot;         /* each local row's place in sendbuf, ~0: none   */
    size_t slot_cap;     /* rows slot has room for                       */
    size_t prepack_n;    /* the sends the kick-drift packs; 0: the pack
                            kernel packs them                           */
    int prepack_off;     /* CLPHYS_MD_PREPACK=0: never                     */
    int prepacked;       /* this step's kick-drift packed them            */
    cl_event prepack_ev; /* that kick-drift's launch (may be NULL)       */
} md_ghost_dev;

clphys_status md_ghost_dev_create(clphys_context *ctx, clphys_precision prec, md_ghost_dev *gd);
void md_ghost_dev_free(md_ghost_dev *gd);
/* Room for g's lists: send_idx and recv_idx (which md_mpi_rebuild fills
 * with the sorted places of the atoms sent and of the ghosts received),
 * their buffers of packed positions (three reals an atom) and host
 * staging. */
clphys_status md_ghost_dev_reserve(md_ghost_dev *gd, const md_ghosts *g);
/* Node staging: decided at the first call (on where every rank of comm
 * shares one host, a dimension is cut and CLPHYS_MD_NODE_STAGING is not
 * 0), then the segments grown to sendbuf's capacity where some rank's has
 * outgrown them.  Call after every rebuild.  Collective; statuses agreed. */
clphys_status md_node_stage_reserve(MPI_Comm comm, md_ghost_dev *gd, const md_decomp *d);
/* memcpy of n bytes by gd->node_threads OpenMP threads (one core copies
 * at about a fifth of the host's memory bandwidth); the copies of ranks
 * whose device does not copy straight to or from the segments (node_direct). */
void md_node_stage_copy(const md_ghost_dev *gd, void *dst, const void *src, size_t n);
/* Unmap the segments (local). */
void md_node_stage_close(md_ghost_dev *gd);
/* The ghost lists made on the device at a rebuild: pos (the unsorted
 * positions, local frame) holds the nown owned atoms at 0 .. nown - 1; per
 * cut dimension and side md_ghost_select lists the atoms before that
 * dimension within r_cut + skin of the face into gd's send_idx (unsorted
 * local indices), their positions travel as a step's do, and the ghosts
 * received are appended to pos (w MD_GHOST_W) with their places in recv_idx; g gets
 * the swaps (gx and send unused).  A dimension's two sides go together
 * (one wait for both counts, one room check, one copy to the host, one
 * wait after the unpack, one agreement), side 0's lists and ghosts
 * before side 1's, as md_ghost_exchange expects.  cap: the atoms pos has room for.
 * *again 1 (on every rank) when some rank lacked room (the send list, the
 * received ghosts' buffers or cap): g's counts are those reached, *need
 * this rank's atoms so far; the caller grows (md_ghost_dev_reserve on
 * larger counts, the plan past *need) and calls again.  before: this
 * rank's status so far (its migration, its upload of pos): a failure skips the device
 * work (pos may then be NULL) and is agreed in the first dimension's room
 * check instead of a collective of its own.  Collective; statuses agreed. */
clphys_status md_ghosts_build_dev(MPI_Comm comm, md_ghost_dev *gd, const md_decomp *d, cl_mem pos, size_t nown,
                                  size_t cap, md_ghosts *g, int *again, size_t *need, clphys_status before);
/* After a rebuild's lists are in sorted places (send_idx), each local
 * row's place in the first cut dimension's send lists into slot, so that
 * the step's kick-drift packs those positions (md_kick_drift_pack) instead
 * of md_ghost_pack after it: gd->prepack_n set to their count (0 where
 * CLPHYS_MD_PREPACK=0, no dimension is cut or none is sent).  A row sent
 * both ways is counted into *dup (page-locked; read behind the launch, so
 * valid after the caller's next wait), and the caller then sets prepack_n
 * to 0.  Enqueued only. */
clphys_status md_ghost_prepack_map(md_ghost_dev *gd, const md_ghosts *g, size_t nlocal, cl_uint *dup);
/* One step's ghost positions: pack from pos, exchange, unpack into pos, a
 * dimension at a time.  The copies to and from the host go on copyq (pack
 * and unpack on ctx's queue wait for them through events).  during (may be
 * NULL): enqueues device work that needs no ghost (the interior rows'
 * forces) right after the last dimension's pack, so that it runs while that
 * dimension's copies and messages travel;
 * ov (may be NULL) receives the messages' time and the part of it waited
 * with no device work running (cp_mpi_wait_overlapped; nap: a CPU device);
 * only with ov does a marker behind `during` tell when that work ends.
 * *beside (may be NULL) 1 asks for the last dimension's unpack on copyq
 * (where there is one and `during`), so that work queued behind it there
 * runs beside `during`: *beside is then 1 where that was done (the caller
 * joins copyq to ctx's queue before the forces are used), else 0.
 * Where gd->prepacked the step's kick-drift packed the first dimension
 * (after gd->prepack_ev, released here) and no pack runs for it.
 * Collective: st is this rank's status so far (a failure skips the device
 * work, the messages still travel), agreed at the end with the exchange's
 * own.  *bytes: the bytes sent by this rank, added. */
clphys_status md_ghost_exchange(MPI_Comm comm, md_ghost_dev *gd, const md_ghosts *g, cl_mem pos,
                                clphys_status (*during)(void *arg), void *arg, int nap, double *bytes,
                                cp_mpi_overlap *ov, int *beside, clphys_status st);

/* A rebuild of a grid cut along one dimension sends each neighbour its
 * migrants and its new ghosts' positions in one message (borders.c); the
 * device's part: */
/* md_ghost_borders over the n atoms at the front of pos (md_classify's
 * staying ones, counts its counters): the lower face's list into send_idx
 * (up to send_cap), the upper face's into scratch (up to room), counted in
 * counts[2] and counts[3]; then their positions packed into sendbuf in the
 * receivers' frames (md_ghost_borders_pack: where both lists had room,
 * counts[2] + counts[3] <= send_cap).  Enqueued only. */
clphys_status md_ghost_borders_select(md_ghost_dev *gd, const md_decomp *d, cl_mem pos, size_t n, cl_mem counts,
                                      cl_mem scratch, size_t room);
/* The packed positions of a[0] + a[1] atoms to hsend.  Enqueued only. */
clphys_status md_ghost_borders_read(md_ghost_dev *gd, const size_t a[2]);
/* The device's ghost lists and g's swaps after the messages: swap q sends
 * a[q] atoms of its face's list (swap 1's in scratch), then nb[q] arrivals
 * from local index first[q] on; it receives nr[q] ghosts, whose positions
 * the caller left in hrecv (swap 0's, then swap 1's), placed from nown on
 * (w MD_GHOST_W).  Room: send_cap >= a[0] + nb[0] + a[1] + nb[1],
 * recv_cap >= nr[0] + nr[1], a plan of nown + nr[0] + nr[1] atoms.
 * Enqueued only. */
clphys_status md_ghost_borders_finish(md_ghost_dev *gd, const md_decomp *d, md_ghosts *g, cl_mem pos, size_t nown,
                                      const size_t a[2], cl_mem scratch, const size_t first[2], const size_t nb[2],
                                      const size_t nr[2]);

/* The plan (include/clphys_md_mpi.h).  The rank's atoms live on its
 * device in the LJ plan's neighbour plan, in local index order [interior
 * atoms][owned atoms that came through the host][ghosts] before each sort:
 * local index < nown is owned. */
struct clphys_md_mpi {
    MPI_Comm comm;
    clphys_context *ctx;
    clphys_md_params p;
    md_decomp d;
    int ntypes;
    double *type_mass;
    long long natoms; /* over all ranks                               */
    md_atoms own;     /* owned atoms that went through the host at the
                         last rebuild (near a face, arrived, or all at
                         the first); scratch in between               */
    double *near_x;   /* the staying atoms within 1.1 r_s of a cut face
                         at the last rebuild (global frame), the first
                         part of the ghost lists' atoms; near_x + 3 nnear:
                         own's positions after them                   */
    cl_uint *near_at; /* their places at the front of the sort's input */
    size_t nnear, near_cap;
    md_ghosts g;
    md_ghost_dev gd;
    clphys_md_lj_plan *lj;
    size_t cap;                /* atoms the LJ plan and buffers were made for   */
    size_t nlocal, nown, nint; /* owned + ghosts; owned; interior (kept on the
                                  device through the last rebuild)             */
    size_t row_lo, row_hi;     /* sorted rows with no ghost in their lists: the
                                  cells of a grid cut along z only, away from
                                  its faces (contiguous in the cell order);
                                  their forces run while the ghosts travel.
                                  Empty: no overlap                            */
    size_t nedge;              /* with lanes: the rows outside them that hold
                                  owned atoms, listed in edge (md_edge_rows)   */
    size_t far_lo, far_hi;     /* within row_lo .. row_hi, the rows farther
                                  than r_s from every row outside it: no
                                  force beside the interior's reads them, so
                                  their second half kick and the next
                                  kick-drift run while the ghosts travel
                                  (interior_rows).  Empty: none go ahead      */
    int far_next;              /* this step's exchange sends them ahead       */
    int far_done;              /* they went ahead: the next kick-drift skips
                                  them                                        */
    int forces_ahead;          /* the rebuild launched the step's forces
                                  behind its list, before its last wait      */
    cp_mpi_overlap ov;         /* the messages of the run being timed          */
    void *stage;               /* host staging of the rebuilds' copies:
                                  page-locked (stage_m mapped), else malloc    */
    cl_mem stage_m;
    size_t stage_bytes;
    void *tail; /* the rebuild's last reads, TAIL_BYTES (rebuild.c): page-
                   locked where the driver allows (tail_m mapped), apart
                   from the staging, which an upload may still read    */
    cl_mem tail_m;
    /* the untimed runs' queue (cp_untimed_begin) */
    cl_command_queue untimed_q;
    size_t rs;
    md_verlet vv; /* velocity Verlet's kernels (verlet.c)          */
    cl_kernel k_classify, k_iota, k_bind, k_map, k_edge, k_arrive, k_fill;
    cl_mem mig; /* atoms' records at a rebuild (md_classify's migrants,
                   md_arrive's arrivals), mig_cap of them        */
    size_t mig_cap;
    size_t mig_guess;    /* migrants' records read with the counts       */
    md_rec *brec, *brin; /* md_mpi_borders' records: the migrants by
                            side, the arrivals (kept: no pages to
                            fault in at every rebuild)          */
    size_t brec_cap, brin_cap;
    int merged_builds, round_builds; /* rebuilds with the ghost lists
                                        sent with the migrants, and those
                                        of such a grid made in rounds */
    cl_mem vel, vel_tmp, img, img_tmp, tag, tag_tmp, inv, xref, edge, counts;
    long long step, last_build;
    int rebuilds;
};

/* The LJ plan and working arrays for n atoms (mpi.c; the data on the
 * device is lost). */
clphys_status md_mpi_capacity(clphys_md_mpi *pl, size_t n);
/* The rebuild kernels (cl/md_rebuild.cl) and their counters. */
clphys_status md_mpi_rebuild_kernels(clphys_md_mpi *pl);
/* A neighbour-list rebuild (rebuild.c): the atoms still inside the
 * subdomain stay on the device, the migrants are downloaded, migrated
 * (md_migrate) and the arrivals uploaded, the ghost lists made on the device
 * (md_ghosts_build_dev; on the host from the near-face atoms with
 * CLPHYS_MD_HOST_GHOSTS, and at the first rebuild: md_ghosts_build), and
 * everything sorted and listed; first: pl->own holds every owned atom (from
 * the scatter).  Collective, statuses agreed; adds to tm (may be NULL). */
clphys_status md_mpi_rebuild(clphys_md_mpi *pl, int first, clphys_md_mpi_timing *tm);
/* A rebuild's migrants and new ghosts (borders.c), for a grid cut along
 * one dimension: the nmig migrants are md_classify's records at recs (the
 * device's form, MD_REC_*), or with recs NULL in pl->own (global frame,
 * wrapped); the nstay staying atoms are at the front of the unsorted
 * arrays, a[q] of them listed near face q (md_ghost_borders_select: the
 * upper face's in pl->inv) and, where packed, their positions on their way
 * to hsend (md_ghost_borders_read).  Each neighbour gets its migrants and
 * those positions in one message.  *rounds 1 (on every rank): some rank
 * needs the ghost lists made in rounds (an arrival near the other face, no
 * room, or not packed), nothing on the device done, pl->own the arrivals;
 * else the ghost lists and pl->g made on the device
 * (md_ghost_borders_finish), the *narr arrivals in pl->brin for
 * md_mpi_upload_recs (local index nstay on), pl->own empty.  st: this
 * rank's status so far.  Collective, statuses agreed, but the device work
 * enqueued at the end, whose failure is left in *late. */
clphys_status md_mpi_borders(clphys_md_mpi *pl, size_t nstay, const char *recs, size_t nmig, const size_t a[2],
                             int packed, clphys_status st, int *rounds, clphys_status *late, size_t *narr);
/* Bytes of an atom's device record at a rebuild (cl/md_rebuild.cl's
 * MD_REC_*): position and velocity (real4 of rs-byte reals), image and tag
 * (int4). */
size_t md_mpi_record_bytes(size_t rs);
/* A device record (MD_REC_*, the local frame) as an md_rec (global frame,
 * wrapped); nonzero where the integration diverged (1 a position not finite
 * or more than MD_WRAP_MAX box lengths out, 2 a velocity that moves the
 * atom more than half the box a step): md_mpi_diverged then names it. */
int md_mpi_record_rec(const clphys_md_mpi *pl, const void *rec, md_rec *r);
/* CLPHYS_ERR_INPUT naming atom r (as md_mpi_record_rec left it), the step
 * and why (md_mpi_record_rec's code): the integration diverged. */
clphys_status md_mpi_diverged(const clphys_md_mpi *pl, const md_rec *r, int why);
/* n atoms to the unsorted arrays from local index at on: as records in
 * one copy and one md_arrive launch (mig grown where short).  Enqueued
 * only. */
clphys_status md_mpi_upload_recs(clphys_md_mpi *pl, size_t at, const md_rec *r, size_t n);
/* Every owned atom from the device into out (overwritten; positions
 * relative to the box's lo corner, wrapped, images counted). */
clphys_status md_mpi_download_owned(clphys_md_mpi *pl, md_atoms *out);

#endif
