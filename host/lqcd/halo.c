/* halo.c — Wilson-Dirac plans over MPI ranks (include/clphys_lqcd_mpi.h):
 * the halo exchange of a hop, overlapped with the interior kernel, and the
 * global sums of the solvers.
 *
 * One hop, out parity p (or the full lattice), on the context's queue Q and,
 * on a GPU, a transfer queue X (on a CPU device X is Q):
 *   Q: halo_pack (faces of in, spin-projected)   X: faces -> host (after pack)
 *   Q: dslash_hop* (every hop within the rank)   host: MPI_Irecv/MPI_Isend,
 *      ...                                             MPI_Testall polled
 *   Q: (waits for X) halo_exterior               X: received faces -> device
 * so the exchange runs while the interior kernel does; the device idles
 * only when the exchange outlasts it (clphys_lqcd_dslash_split.exposed_s).  The
 * face layouts and numbering: cl/lqcd_dslash.cl. */
#include "lqcd_internal.h"
#include "lqcd_mpi_internal.h"

#include <stdlib.h>
#include <string.h>

struct lqcd_halo {
    clphys_context *ctx;
    MPI_Comm comm;           /* the plan's duplicate                       */
    int up[4], down[4];      /* neighbour ranks                            */
    lqcd_faces f;            /* face geometry and the face-site list       */
    cl_command_queue xq;     /* face transfers, profiled (GPUs; NULL: the
                                context's queue)                           */
    cl_mem send, recv;       /* device face buffers, room for full fields  */
    cl_mem hsend_m, hrecv_m; /* page-locked host copies ...                */
    char *hsend, *hrecv;     /* ... mapped for the plan's life             */
    cl_mem ghost;            /* links of the ranks below (backward hops)   */
    cl_event last_h2d;       /* the previous upload of received faces, and  */
    cl_event last_ext;       /* the exterior kernel that read them          */
    lqcd_node *node;         /* faces through shared memory (NULL: in MPI's
                                messages; halo_node.c)                      */
};

static void halo_destroy(lqcd_halo *h)
{
    if (!h) return;
    cp_wait(h->ctx, &h->last_h2d);
    cp_wait(h->ctx, &h->last_ext);
    lqcd_node_destroy(h->node);
    cp_queue_release(&h->xq);
    cp_pinned_release(h->ctx, &h->hsend_m, (void **)&h->hsend);
    cp_pinned_release(h->ctx, &h->hrecv_m, (void **)&h->hrecv);
    cl_mem *m[] = {&h->send, &h->recv, &h->ghost, &h->f.list};
    for (int i = 0; i < 4; i++) cp_release_mem(m[i]);
    if (h->comm != MPI_COMM_NULL) MPI_Comm_free(&h->comm);
    free(h);
}

static clphys_status global_sum(void *user, double *sums, int n)
{
    lqcd_halo *h = user;
    return cp_mpi_global_sum(h->comm, h->ctx, sums, n, "lqcd mpi");
}

typedef struct {
    clphys_context *ctx;
    cl_event ev;
} busy_arg;

static clphys_status interior_running(void *arg, int *running)
{
    busy_arg *b = arg;
    int done = 1;
    CP_TRY(cp_event_done(b->ctx, b->ev, &done));
    *running = !done;
    return CLPHYS_SUCCESS;
}

/* A hop's received faces to the device out of the neighbours' halves of
 * their segments: straight where the device takes them (one upload per
 * face, behind the last exterior kernel on X), else copied by threads into
 * the page-locked staging and uploaded from there in one piece; *ev: the
 * last upload. */
static clphys_status node_upload(clphys_lqcd_dslash_plan *pl, size_t nq, cl_event *ev)
{
    lqcd_halo *h = pl->halo;
    clphys_context *ctx = pl->ctx;
    const size_t rs = pl->real_size;
    const int direct = lqcd_node_in_direct(h->node);
    clphys_status st = CLPHYS_SUCCESS;
    int any = 0;
    for (int mu = 0; mu < 4 && !st; mu++) {
        const size_t len = 12 * nq * h->f.face_n[mu] * rs;
        for (int side = 0; side < 2 && len && !st; side++) {
            /* side 0 came from the rank above (its block of the faces it sent down) */
            const int from = side ? h->down[mu] : h->up[mu];
            const size_t off = lqcd_face_block(pl, &h->f, mu, side, nq, NULL);
            const char *src = lqcd_node_in(h->node, from);
            if (!src) return cp_error(ctx, CLPHYS_ERR_IO, "halo: no shared staging of rank %d", from);
            if (!direct) {
                cp_copy_threads(h->hrecv + off, src + off, len, lqcd_node_threads(h->node));
                continue;
            }
            cp_release_event(ev);
            st =
                cp_write_async(ctx, h->xq, h->recv, off, len, src + off, !any && h->last_ext ? 1 : 0, &h->last_ext, ev);
            any = 1;
        }
    }
    if (!st && !direct) {
        const size_t bytes = nq * 2 * h->f.face_all * 12 * rs;
        st = cp_write_async(ctx, h->xq, h->recv, 0, bytes, h->hrecv, h->last_ext ? 1 : 0, &h->last_ext, ev);
    }
    return st;
}

/* The hop out = x + a H in (x NULL: H in) of parity (-1: full), g5 as
 * lqcd_hop_g5, through the exchange.  On a local failure the messages of
 * this hop are still sent and received, so that no neighbour waits for
 * them; the failure is then agreed and returned on every rank. */
static clphys_status halo_hop(clphys_lqcd_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity,
                              int g5, double *kernel_s, clphys_lqcd_dslash_split *split)
{
    lqcd_halo *h = pl->halo;
    clphys_context *ctx = pl->ctx;
    const size_t nq = parity < 0 ? 2 : 1, rs = pl->real_size;
    const size_t nent = nq * 2 * h->f.face_all, bytes = nent * 12 * rs;
    cl_event ev_pack = NULL, ev_d2h = NULL, ev_int = NULL, ev_h2d = NULL, ev_ext = NULL;
    cl_kernel k = NULL;
    size_t global = 0;
    clphys_status st = CLPHYS_SUCCESS;
    if (pl->fail.at) {
        int me = 0;
        MPI_Comm_rank(h->comm, &me);
        st = cp_test_failure_due(ctx, &pl->fail, LQCD_FAIL_HOP, me, "lqcd mpi");
    }
    /* 1. pack the faces of in; 2. to the host on X (with node staging
     * straight into this hop's half of the rank's segment where the device
     * takes it); 3. the interior */
    lqcd_node *node = h->node;
    char *out_host = node && lqcd_node_out_direct(node) ? lqcd_node_out(node) : h->hsend;
    if (!st) st = lqcd_pack_launch(pl, h->send, in, parity, g5, nent, &ev_pack);
    if (!st) st = cp_read_async(ctx, h->xq, h->send, 0, bytes, out_host, 1, &ev_pack, &ev_d2h);
    if (!st) st = cp_flush(ctx, h->xq);
    if (!st) st = lqcd_hop_kernel(pl, out, in, x, a, parity, g5, &k, &global);
    if (!st) st = cp_launch_ev(ctx, k, 1, &global, pl->local ? &pl->local : NULL, &ev_int);
    if (!st) st = cp_flush(ctx, NULL);
    /* 4. the faces on the host, the last upload out of the receive memory */
    if (!st) st = cp_wait_all(ctx, 1, &ev_d2h);
    clphys_status sw = cp_wait(ctx, &h->last_h2d);
    if (!st) st = sw;
    if (!st && node && out_host == h->hsend)
        cp_copy_threads(lqcd_node_out(node), h->hsend, bytes, lqcd_node_threads(node));
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the segment's bytes before the messages */
    /* 5. the messages, posted whatever happened above (with node staging
     * empty: they say that this rank's half is written and that it is done
     * with the neighbours' halves of the hop before) */
    MPI_Request req[16];
    int nreq = 0, nsend = 0;
    const MPI_Datatype type = rs == 8 ? MPI_DOUBLE : MPI_FLOAT;
    const double t_post = cp_now();
    clphys_status sm = CLPHYS_SUCCESS;
    for (int mu = 0; mu < 4 && !sm; mu++) {
        if (!h->f.face_n[mu]) continue;
        const int count = node ? 0 : (int)(12 * nq * h->f.face_n[mu]);
        for (int side = 0; side < 2 && !sm; side++) {
            const size_t off = lqcd_face_block(pl, &h->f, mu, side, nq, NULL);
            /* side 0 goes down (the forward hops of the rank below), side 1 up */
            const cp_mpi_slice s = {h->hsend + off, count, type}, r = {h->hrecv + off, count, type};
            sm = cp_mpi_post(ctx, h->comm, side ? h->up[mu] : h->down[mu], &s, 1, side ? h->down[mu] : h->up[mu], &r, 1,
                             2 * mu + side, req, &nreq);
            nsend++;
        }
    }
    /* 6. wait, polling, while the interior kernel runs */
    cp_mpi_overlap ov = {0};
    busy_arg ba = {ctx, ev_int};
    /* a CPU device needs the cores the poll would spin on: it naps instead */
    if (!sm)
        sm = cp_mpi_wait_overlapped(ctx, nreq, req, t_post, ev_int ? interior_running : NULL, &ba,
                                    clphys_context_device(ctx)->is_cpu, &ov);
    else { /* the faces posted before the failure: hsend and hrecv stay MPI's until then */
        cp_mpi_overlap none = {0};
        cp_mpi_wait_exposed(ctx, nreq, req, t_post, &none);
    }
    if (!st) st = sm;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    /* 7. received faces to the device, after the last exterior read them
     * (with node staging out of the neighbours' halves); 8. the exterior
     * kernel after them */
    if (!st && node)
        st = node_upload(pl, nq, &ev_h2d);
    else if (!st)
        st = cp_write_async(ctx, h->xq, h->recv, 0, bytes, h->hrecv, h->last_ext ? 1 : 0, &h->last_ext, &ev_h2d);
    if (node) lqcd_node_flip(node); /* every rank, every hop */
    if (!st) st = cp_flush(ctx, h->xq);
    if (!st) st = cp_enqueue_wait(ctx, NULL, 1, &ev_h2d);
    size_t n = 0;
    if (!st) st = lqcd_exterior_launch(pl, &h->f, out, h->recv, h->ghost, x, a, parity, g5, &n, &ev_ext);
    if (!st) st = cp_flush(ctx, NULL);
    /* timing: profiled kernels and copies, the messages' time on the host */
    const lqcd_hop_events he = {ev_pack, ev_int, ev_ext, &ev_d2h, &ev_h2d, 1, ov.exchange_s, bytes, nsend, n};
    if (!st) st = lqcd_hop_times(pl, parity, &he, kernel_s, split);
    cp_release_event(&ev_pack);
    cp_release_event(&ev_d2h);
    cp_release_event(&ev_int);
    cp_release_event(&h->last_ext);
    h->last_h2d = ev_h2d;
    h->last_ext = ev_ext;
    /* the same status on every rank, so that a solver (host/linalg) stops
     * on all of them at this hop, leaving none in the next exchange or sum */
    return cp_mpi_agree(h->comm, ctx, st);
}

/* Face geometry, the face-site list, the buffers. */
static clphys_status halo_buffers(clphys_lqcd_dslash_plan *pl, lqcd_halo *h)
{
    clphys_context *ctx = pl->ctx;
    const size_t rs = pl->real_size;
    clphys_status st = lqcd_faces_init(pl, &h->f);
    const size_t bytes = 2 * 2 * h->f.face_all * 12 * rs; /* full fields: both parities */
    if (!st) st = cp_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &h->send);
    if (!st) st = cp_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &h->recv);
    if (!st) st = cp_pinned(ctx, bytes, &h->hsend_m, (void **)&h->hsend);
    if (!st) st = cp_pinned(ctx, bytes, &h->hrecv_m, (void **)&h->hrecv);
    /* A GPU copies on its own engines while a kernel runs: the faces move on
     * a queue of their own.  A CPU device runs one command after another, so
     * there the copies go first on the context's queue (pack, faces to the
     * host, then the interior), or they would wait for the interior kernel. */
    if (!st && clphys_context_device(ctx)->is_gpu) st = cp_queue_create(ctx, 1, &h->xq);
    return st;
}

/* The backward hops' links: U_mu of the rank below's sites at its upper
 * end, entry parity * FACE_N + i, exchanged once (in double, on the host)
 * and stored in the plan's precision and compression. */
static clphys_status halo_ghost_links(clphys_lqcd_dslash_plan *pl, lqcd_halo *h, const clphys_lqcd_gauge_field *g)
{
    clphys_context *ctx = pl->ctx;
    const size_t ng = 2 * h->f.face_all;
    double *send = malloc((ng ? ng : 1) * 18 * sizeof(double)), *recv = malloc((ng ? ng : 1) * 18 * sizeof(double));
    void *dev = malloc(lqcd_ghost_bytes(pl, &h->f));
    clphys_status st =
        send && recv && dev ? CLPHYS_SUCCESS : cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "halo: ghost links");
    for (int mu = 0; mu < 4 && !st; mu++) {
        const size_t fn = h->f.face_n[mu];
        if (!fn) continue;
        for (size_t x = 0; x < pl->vol; x++) {
            int c[4];
            size_t r = x;
            for (int k = 0; k < 4; k++) c[k] = (int)(r % (size_t)pl->dims[k]), r /= (size_t)pl->dims[k];
            if (c[mu] != pl->dims[mu] - 1) continue;
            const size_t q = (size_t)((c[0] + c[1] + c[2] + c[3]) & 1),
                         e = q * fn + lqcd_face_index(pl->dims, c, mu, 1);
            memcpy(send + e * 18, g->u + (x * 4 + (size_t)mu) * 18, 18 * sizeof(double));
        }
        int err = lqcd_sendrecv_doubles(h->comm, send, h->up[mu], recv, h->down[mu], 2 * fn * 18, 30 + mu);
        if (err != MPI_SUCCESS) {
            st = cp_mpi_error(ctx, err, "halo: ghost links");
            break;
        }
        lqcd_ghost_store(pl, &h->f, mu, recv, dev);
    }
    if (!st) st = cp_buffer(ctx, CL_MEM_READ_ONLY, lqcd_ghost_bytes(pl, &h->f), dev, &h->ghost);
    free(send), free(recv), free(dev);
    return st;
}

clphys_status lqcd_halo_transfer_queue(clphys_lqcd_dslash_plan *pl, int separate)
{
    lqcd_halo *h = pl->halo;
    if (!h || !pl->parts || !separate == !h->xq) return CLPHYS_SUCCESS;
    cp_wait(pl->ctx, &h->last_h2d);
    cp_wait(pl->ctx, &h->last_ext);
    if (!separate) {
        cp_queue_release(&h->xq);
        return CLPHYS_SUCCESS;
    }
    return cp_queue_create(pl->ctx, 1, &h->xq);
}

/* The parameters every rank must share. */
typedef struct {
    int dims[4];
    int precision;
    double kappa;
    int bc[4];
    double by_pi[4];
} shared_params;

clphys_status clphys_lqcd_dslash_plan_create_mpi(MPI_Comm comm, const int grid[4], clphys_context *ctx,
                                                 const clphys_lqcd_gauge_field *local,
                                                 const clphys_lqcd_dslash_params *p, clphys_lqcd_dslash_plan **plan)
{
    MPI_Comm c;
    CP_TRY(cp_mpi_dup(comm, ctx, &c));
    if (plan) *plan = NULL;
    int coord[4];
    clphys_status st = CLPHYS_SUCCESS;
    if (!ctx || !local || !local->u || !p || !plan || !grid)
        st = cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_lqcd_dslash_plan_create_mpi: NULL argument");
    else if ((st = lqcd_grid_check(c, grid, local->dims, coord))) /* message in the thread's error */
        st = cp_error(ctx, st, "%s", clphys_last_error(NULL));
    clphys_lqcd_dslash_params pin;
    if (!st) st = CP_PARAMS_IN(ctx, clphys_lqcd_dslash_params, p, halo_half, &pin);
    p = &pin;
    st = cp_mpi_agree(c, ctx, st);
    if (!st) {
        shared_params sp = {.precision = (int)p->precision, .kappa = p->kappa};
        for (int mu = 0; mu < 4; mu++)
            sp.dims[mu] = local->dims[mu], sp.bc[mu] = (int)p->bc[mu], sp.by_pi[mu] = p->bc_phase_by_pi[mu];
        st = cp_mpi_same(c, ctx, &sp, sizeof sp, "local lattice extents, precision, kappa or boundary");
    }
    /* Every rank builds the same program (the same local extents and
     * split directions): the first rank of each node builds it (and tunes)
     * first, the others then find it in the disk caches. */
    clphys_lqcd_dslash_plan *pl = NULL;
    if (!st) {
        MPI_Comm node = MPI_COMM_NULL;
        int nrank = 0, rank = 0;
        MPI_Comm_rank(c, &rank);
        if (MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) == MPI_SUCCESS)
            MPI_Comm_rank(node, &nrank);
        if (node != MPI_COMM_NULL && nrank) MPI_Barrier(node);
        clphys_lqcd_dslash_params q = *p;
        q.halo_half = 0; /* the messages carry fp32 or fp64 */
        clphys_status sl = lqcd_plan_create(ctx, local, &q, grid, coord, &pl);
        if (node != MPI_COMM_NULL && !nrank) MPI_Barrier(node);
        if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
        st = cp_mpi_agree(c, ctx, sl);
    }
    lqcd_halo *h = NULL;
    if (!st) {
        h = calloc(1, sizeof *h);
        if (!h)
            st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "halo");
        else {
            h->ctx = ctx;
            h->comm = c;
            c = MPI_COMM_NULL; /* the halo owns it now */
            lqcd_grid_neighbours(grid, coord, h->up, h->down);
            pl->halo = h;
            pl->halo_destroy = halo_destroy;
            if (pl->parts) st = halo_buffers(pl, h);
        }
        st = cp_mpi_agree(h ? h->comm : c, ctx, st);
    }
    if (!st && pl->parts) {
        /* the neighbours whose faces this rank receives, for the shared staging */
        int from[8];
        for (int mu = 0; mu < 4; mu++)
            from[2 * mu] = h->f.face_n[mu] ? h->up[mu] : -1, from[2 * mu + 1] = h->f.face_n[mu] ? h->down[mu] : -1;
        st = lqcd_node_create(h->comm, ctx, 2 * 2 * h->f.face_all * 12 * pl->real_size, from, 8, &h->node);
    }
    if (!st && pl->parts) st = cp_mpi_agree(h->comm, ctx, halo_ghost_links(pl, h, local));
    if (st) {
        clphys_lqcd_dslash_plan_destroy(pl); /* frees the halo and its communicator */
        if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
        return st;
    }
    if (pl->parts) pl->halo_hop = halo_hop; /* a 1x1x1x1 grid hops as one rank does */
    pl->gsum = global_sum;
    pl->gsum_user = h;
    *plan = pl;
    return CLPHYS_SUCCESS;
}
