/* ghost.c — ghost atoms of a distributed MD plan: the lists made at
 * each neighbour-list rebuild (LAMMPS's Comm::borders: six exchanges, x
 * then y then z, atoms within r_cut + skin of a face, those received
 * earlier forwarded, so edges and corners arrive without exchanges of their
 * own), on the device (md_ghosts_build_dev) or on the host
 * (md_ghosts_build: the first rebuild, CLPHYS_MD_HOST_GHOSTS), and the
 * positions that travel every step along those lists, packed and unpacked
 * on the device (cl/md_ghost.cl). */
#include "md_mpi_internal.h"

#include <stdlib.h>
#include <string.h>

void md_ghosts_free(md_ghosts *g)
{
    free(g->gx), free(g->send);
    memset(g, 0, sizeof *g);
}

static const double *pos_of(const md_atoms *own, const md_ghosts *g, size_t i)
{
    return i < own->n ? own->x + 3 * i : g->gx + 3 * (i - own->n);
}

static clphys_status room(clphys_context *ctx, md_ghosts *g, size_t nsend, size_t nghost)
{
    if (nsend > g->send_cap) {
        size_t cap = nsend + nsend / 2 + 64;
        cl_uint *s = realloc(g->send, cap * sizeof *s);
        if (!s) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: ghost lists");
        g->send = s, g->send_cap = cap;
    }
    if (nghost > g->gcap) {
        size_t cap = nghost + nghost / 2 + 64;
        double *x = realloc(g->gx, 3 * cap * sizeof *x);
        if (!x) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: ghost atoms");
        g->gx = x, g->gcap = cap;
    }
    return CLPHYS_SUCCESS;
}

/* Swap side's neighbours, and the shifts into the receiver's coordinates
 * and device frame. */
static void swap_geometry(const md_decomp *d, int c, int side, md_swap *sw)
{
    const int P = d->P[c], me = d->coord[c];
    sw->dim = c;
    sw->to = d->nbr[c][side], sw->from = d->nbr[c][1 - side];
    /* through the periodic boundary the receiver sees the image */
    sw->shift = side == 0 ? (me == 0 ? d->L[c] : 0) : (me == P - 1 ? -d->L[c] : 0);
    const int to_k = side == 0 ? (me + P - 1) % P : (me + 1) % P;
    sw->dlocal = d->llo[c] + sw->shift - md_decomp_llo(d, c, to_k);
}

/* Swap side (0: to the lower neighbour, 1: to the upper) along c of the
 * atoms 0 .. nbefore - 1. */
static clphys_status one_swap(MPI_Comm comm, clphys_context *ctx, const md_decomp *d, const md_atoms *own, md_ghosts *g,
                              int c, int side, size_t nbefore)
{
    md_swap *sw = &g->swap[g->nswap++];
    swap_geometry(d, c, side, sw);
    sw->off = g->nsend;
    clphys_status st = CLPHYS_SUCCESS;
    size_t ns = 0;
    for (size_t i = 0; i < nbefore; i++) {
        double x = pos_of(own, g, i)[c];
        if (side == 0 ? x < d->lo[c] + d->rs : x >= d->hi[c] - d->rs) {
            if ((st = room(ctx, g, g->nsend + ns + 1, g->nghost))) break;
            g->send[g->nsend + ns++] = (cl_uint)i;
        }
    }
    st = cp_mpi_agree(comm, ctx, st);
    if (st) return st;
    sw->nsend = ns;
    double *out = malloc(3 * (ns ? ns : 1) * sizeof *out);
    long long n_out = (long long)ns, n_in = 0;
    if (!out) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: ghost exchange");
    for (size_t k = 0; !st && k < ns; k++) {
        memcpy(out + 3 * k, pos_of(own, g, g->send[sw->off + k]), 3 * sizeof *out);
        out[3 * k + c] += sw->shift;
    }
    if ((st = cp_mpi_agree(comm, ctx, st))) {
        free(out);
        return st;
    }
    int e = MPI_Sendrecv(&n_out, 1, MPI_LONG_LONG, sw->to, 200 + c, &n_in, 1, MPI_LONG_LONG, sw->from, 200 + c, comm,
                         MPI_STATUS_IGNORE);
    if (e != MPI_SUCCESS) st = cp_mpi_error(ctx, e, "MPI_Sendrecv (ghost counts)");
    /* 24 bytes a ghost: three doubles here, at most three in a step's message */
    if (!st && 24 * (n_in + (long long)g->nghost) > (long long)INT32_MAX)
        st = cp_error(ctx, CLPHYS_ERR_OVERFLOW, "md mpi: %lld ghost atoms: too many for one message", n_in);
    if (!st) st = room(ctx, g, g->nsend + ns, g->nghost + (size_t)n_in);
    st = cp_mpi_agree(comm, ctx, st);
    if (!st) {
        e = MPI_Sendrecv(out, 3 * (int)ns, MPI_DOUBLE, sw->to, 201 + c, g->gx + 3 * g->nghost, 3 * (int)n_in,
                         MPI_DOUBLE, sw->from, 201 + c, comm, MPI_STATUS_IGNORE);
        if (e != MPI_SUCCESS) st = cp_mpi_error(ctx, e, "MPI_Sendrecv (ghost positions)");
    }
    free(out);
    if (!st) {
        sw->first = own->n + g->nghost;
        sw->nrecv = (size_t)n_in;
        g->nghost += (size_t)n_in;
        g->nsend += ns;
    }
    return cp_mpi_agree(comm, ctx, st);
}

clphys_status md_ghosts_build(MPI_Comm comm, clphys_context *ctx, const md_decomp *d, const md_atoms *own, md_ghosts *g)
{
    g->nswap = 0, g->nghost = 0, g->nsend = 0;
    for (int c = 0; c < 3; c++) {
        if (!d->cut[c]) continue;
        /* the ghosts received in this dimension lie beyond the faces (the
         * subdomain is at least rs thick): only those of the dimensions
         * before travel on */
        size_t nbefore = own->n + g->nghost;
        CP_TRY(one_swap(comm, ctx, d, own, g, c, 0, nbefore));
        CP_TRY(one_swap(comm, ctx, d, own, g, c, 1, nbefore));
    }
    return CLPHYS_SUCCESS;
}

/* ---- the device side ------------------------------------------------------ */
clphys_status md_ghost_dev_create(clphys_context *ctx, clphys_precision prec, md_ghost_dev *gd)
{
    memset(gd, 0, sizeof *gd);
    gd->ctx = ctx;
    gd->rs = prec == CLPHYS_FP64 ? 8 : 4;
    cp_defines opt = {0};
    CP_TRY(cp_define_precision(ctx, &opt, prec));
    cl_program prog;
    CP_TRY(cp_program(ctx, &clsrc_md_ghost_cl, &opt, &prog));
    CP_TRY(cp_kernel(ctx, prog, "md_ghost_pack", &gd->k_pack));
    CP_TRY(cp_kernel(ctx, prog, "md_ghost_unpack", &gd->k_unpack));
    CP_TRY(cp_kernel(ctx, prog, "md_ghost_select", &gd->k_select));
    CP_TRY(cp_kernel(ctx, prog, "md_ghost_places", &gd->k_places));
    CP_TRY(cp_kernel(ctx, prog, "md_ghost_borders", &gd->k_borders));
    CP_TRY(cp_kernel(ctx, prog, "md_ghost_borders_pack", &gd->k_bpack));
    CP_TRY(cp_kernel(ctx, prog, "md_ghost_borders_lists", &gd->k_blists));
    CP_TRY(cp_kernel(ctx, prog, "md_ghost_slots", &gd->k_slots));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 2 * sizeof(cl_uint), NULL, &gd->count));
    /* a device that gives no second queue keeps the copies on ctx's queue
     * (the same events, all on one in-order queue); CLPHYS_MD_ONE_QUEUE=1
     * asks for that path (to time the two against each other, and for the
     * tests) */
    /* CLPHYS_MD_HOST_GHOSTS=1: a rebuild's ghost lists made on the host
     * from the atoms near the faces (md_ghosts_build), as before the device
     * made them (md_ghosts_build_dev): to time both, and for the tests */
    const char *hg = getenv("CLPHYS_MD_HOST_GHOSTS");
    gd->host_lists = hg && *hg && strcmp(hg, "0") != 0;
    /* CLPHYS_MD_GHOST_ROUNDS=1: a rebuild of a grid cut along one dimension
     * makes its ghost lists in rounds after the migration
     * (md_ghosts_build_dev) instead of sending them with the migrants
     * (md_mpi_borders): to time both, and for the tests */
    const char *gr = getenv("CLPHYS_MD_GHOST_ROUNDS");
    gd->rounds_only = gr && *gr && strcmp(gr, "0") != 0;
    gd->node = -1; /* decided at the first rebuild (md_node_stage_reserve) */
    /* CLPHYS_MD_PREPACK=0: the first cut dimension's positions packed by
     * md_ghost_pack after the kick-drift, as the later dimensions' are
     * (to time both, and for the tests) */
    const char *pp = getenv("CLPHYS_MD_PREPACK");
    gd->prepack_off = pp && *pp && strcmp(pp, "0") == 0;
    const char *one = getenv("CLPHYS_MD_ONE_QUEUE");
    if ((one && *one && strcmp(one, "0") != 0) || cp_queue_create(ctx, 0, &gd->copyq) != CLPHYS_SUCCESS)
        gd->copyq = NULL;
    return CLPHYS_SUCCESS;
}

void md_ghost_dev_free(md_ghost_dev *gd)
{
    /* the last copy back from hrecv may still be queued */
    if (gd->ctx) cp_finish(gd->ctx);
    for (int c = 0; c < 3; c++) cp_release_event(&gd->h2d[c]);
    cp_release_event(&gd->prepack_ev);
    md_node_stage_close(gd);
    cp_queue_release(&gd->copyq);
    cp_release_kernel(&gd->k_pack);
    cp_release_kernel(&gd->k_unpack);
    cp_release_kernel(&gd->k_select);
    cp_release_kernel(&gd->k_places);
    cp_release_kernel(&gd->k_borders);
    cp_release_kernel(&gd->k_bpack);
    cp_release_kernel(&gd->k_blists);
    cp_release_kernel(&gd->k_slots);
    cl_mem *ms[] = {&gd->send_idx, &gd->recv_idx, &gd->sendbuf, &gd->recvbuf, &gd->count, &gd->slot};
    for (size_t i = 0; i < 6; i++) cp_release_mem(ms[i]);
    gd->slot_cap = gd->prepack_n = 0;
    if (gd->hsend_m)
        cp_pinned_release(gd->ctx, &gd->hsend_m, &gd->hsend);
    else
        free(gd->hsend);
    if (gd->hrecv_m)
        cp_pinned_release(gd->ctx, &gd->hrecv_m, &gd->hrecv);
    else
        free(gd->hrecv);
    gd->hsend = gd->hrecv = NULL;
    gd->send_cap = gd->recv_cap = 0;
}

/* Room for n entries in an index buffer and its buffer of packed
 * positions (three reals each: md_ghost.cl), and the host staging
 * (page-locked: the copies of every step run at the bus's speed; pageable
 * memory where the device gives none). */
static clphys_status grow(md_ghost_dev *gd, size_t n, size_t *cap, cl_mem *idx, cl_mem *buf, void **host, cl_mem *hm)
{
    if (n <= *cap) return CLPHYS_SUCCESS;
    size_t c = n + n / 4 + 64;
    CP_TRY(cp_finish(gd->ctx)); /* a copy from the old staging may be queued */
    if (gd->copyq) CP_TRY(cp_finish_queue(gd->ctx, gd->copyq));
    cp_release_mem(idx), cp_release_mem(buf);
    if (*hm)
        cp_pinned_release(gd->ctx, hm, host);
    else
        free(*host);
    *host = NULL;
    *cap = 0;
    if (cp_pinned(gd->ctx, 3 * gd->rs * c, hm, host)) *host = malloc(3 * gd->rs * c);
    if (!*host) return cp_error(gd->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: ghost staging");
    CP_TRY(cp_buffer(gd->ctx, CL_MEM_READ_WRITE, 4 * c, NULL, idx));
    CP_TRY(cp_buffer(gd->ctx, CL_MEM_READ_WRITE, 3 * gd->rs * c, NULL, buf));
    *cap = c;
    return CLPHYS_SUCCESS;
}

clphys_status md_ghost_dev_reserve(md_ghost_dev *gd, const md_ghosts *g)
{
    CP_TRY(grow(gd, g->nsend, &gd->send_cap, &gd->send_idx, &gd->sendbuf, &gd->hsend, &gd->hsend_m));
    return grow(gd, g->nghost, &gd->recv_cap, &gd->recv_idx, &gd->recvbuf, &gd->hrecv, &gd->hrecv_m);
}

/* Pack both swaps of a dimension, a's send list and b's behind it (the
 * lists are contiguous: md_ghosts_build appends), into sendbuf in one
 * launch, each atom moved into its receiver's frame.  *ev (if ev is not
 * NULL): the launch's event, NULL where neither swap sends. */
static clphys_status pack(md_ghost_dev *gd, const md_swap *a, const md_swap *b, cl_mem pos, cl_event *ev)
{
    clphys_context *ctx = gd->ctx;
    cl_kernel k = gd->k_pack;
    cl_uint off = (cl_uint)a->off, na = (cl_uint)a->nsend, n = (cl_uint)(a->nsend + b->nsend);
    double da[4] = {0, 0, 0, 0}, db[4] = {0, 0, 0, 0};
    da[a->dim] = a->dlocal, db[b->dim] = b->dlocal;
    float fa[4] = {(float)da[0], (float)da[1], (float)da[2], 0}, fb[4] = {(float)db[0], (float)db[1], (float)db[2], 0};
    size_t gsz = md_global(n, 64);
    if (ev) *ev = NULL;
    if (!n) return CLPHYS_SUCCESS;
    CP_TRY(CP_ARGS(ctx, k, pos, gd->send_idx, off, n, na, CP_EITHER(gd->rs == 8, da, fa),
                   CP_EITHER(gd->rs == 8, db, fb), gd->sendbuf));
    return ev ? cp_launch_ev(ctx, k, 1, &gsz, NULL, ev) : cp_launch(ctx, k, 1, &gsz, NULL, NULL);
}

/* The ghosts at recv_idx[off .. off + n) from recvbuf, after *arrived (the
 * copy to recvbuf, on copyq; released here). */
static clphys_status unpack(md_ghost_dev *gd, size_t roff, size_t nrecv, cl_mem pos, cl_event *arrived,
                            cl_command_queue q)
{
    clphys_context *ctx = gd->ctx;
    /* on copyq the copy is already ahead of it */
    clphys_status st = q ? CLPHYS_SUCCESS : cp_enqueue_wait(ctx, NULL, *arrived ? 1 : 0, arrived);
    cp_release_event(arrived);
    CP_TRY(st);
    cl_kernel k = gd->k_unpack;
    cl_uint off = (cl_uint)roff, n = (cl_uint)nrecv;
    CP_TRY(CP_ARGS(ctx, k, pos, gd->recv_idx, off, n, gd->recvbuf));
    return cp_launch_on(ctx, q, k, md_global(n, 64), 0);
}

/* Device work that runs while the messages travel: *running 1 until the
 * marker event completes. */
static clphys_status marker_busy(void *arg, int *running)
{
    md_ghost_dev *gd = arg;
    int done = 1;
    if (gd->marker) CP_TRY(cp_event_done(gd->ctx, gd->marker, &done));
    *running = !done;
    return CLPHYS_SUCCESS;
}

/* Enqueue `work` (may be NULL) on ctx's queue, with mark a marker behind
 * it (the end marker_busy watches; a command of its own on some devices,
 * so only where the wait not hidden is measured), and flush the queue. */
static clphys_status overlapped_work(md_ghost_dev *gd, clphys_status (*work)(void *arg), void *arg, int mark,
                                     clphys_status st)
{
    if (!st && work) {
        st = work(arg);
        if (!st && mark) st = cp_marker(gd->ctx, NULL, &gd->marker);
    }
    return st ? st : cp_flush(gd->ctx, NULL);
}

/* Post the messages of one dimension's two swaps: the positions
 * themselves (MPI's copies), or with node staging (node) their 16-byte
 * headers (offset in the sender's segment, bytes), hdr_out[q] sent and
 * hdr_in[q] received.  On a failure the swap posted before it stays in rq
 * (*nrq requests) for the caller to complete (cp_mpi_post). */
static clphys_status post(MPI_Comm comm, md_ghost_dev *gd, int node, const md_swap *const sw[2], const size_t rof[2],
                          size_t out_off, long long hdr_out[2][2], long long hdr_in[2][2], int tag, MPI_Request *rq,
                          int *nrq)
{
    clphys_context *ctx = gd->ctx;
    const size_t r3 = 3 * gd->rs;
    clphys_status ms = CLPHYS_SUCCESS;
    for (int q = 0; q < 2 && !ms; q++) {
        if (node) {
            hdr_out[q][0] = (long long)(out_off + r3 * sw[q]->off), hdr_out[q][1] = (long long)(r3 * sw[q]->nsend);
            cp_mpi_slice out = {hdr_out[q], 2, MPI_LONG_LONG}, in = {hdr_in[q], 2, MPI_LONG_LONG};
            ms = cp_mpi_post(ctx, comm, sw[q]->to, &out, 1, sw[q]->from, &in, 1, tag + q, rq, nrq);
        } else {
            cp_mpi_slice out = {(char *)gd->hsend + r3 * sw[q]->off, (int)(r3 * sw[q]->nsend), MPI_BYTE};
            cp_mpi_slice in = {(char *)gd->hrecv + r3 * rof[q], (int)(r3 * sw[q]->nrecv), MPI_BYTE};
            ms = cp_mpi_post(ctx, comm, sw[q]->to, &out, 1, sw[q]->from, &in, 1, tag + q, rq, nrq);
        }
    }
    return ms;
}

/* The received positions to recvbuf, on copyq: from hrecv, or with node
 * staging (node) from the senders' segments at their headers' offsets
 * (checked against the lists), straight (node_direct's MD_DIRECT_RECV)
 * or copied into hrecv first.  *arrived: the event of the last copy
 * (copyq is in order). */
static clphys_status copy_back(md_ghost_dev *gd, int node, const md_swap *const sw[2], const size_t rof[2], size_t ro,
                               size_t nr, long long hdr_in[2][2], cl_event *arrived)
{
    clphys_context *ctx = gd->ctx;
    const size_t r3 = 3 * gd->rs;
    const char *src[2] = {NULL, NULL};
    size_t len[2] = {0, 0};
    for (int q = 0; node && q < 2; q++) {
        const unsigned long long off = (unsigned long long)hdr_in[q][0], n = (unsigned long long)hdr_in[q][1];
        if (n != r3 * sw[q]->nrecv || off > gd->node_bytes || n > gd->node_bytes - off)
            return cp_error(ctx, CLPHYS_ERR_IO,
                            "md mpi: ghost header from rank %d (%llu bytes at %llu) does not match its list (%zu)",
                            sw[q]->from, n, off, r3 * sw[q]->nrecv);
        src[q] = (const char *)gd->node_peer[sw[q]->dim][q] + off, len[q] = (size_t)n;
    }
    if (node && (gd->node_direct & MD_DIRECT_RECV)) {
        /* one copy where both sides come from one neighbour's segment
         * back to back (two ranks along a dimension: its two send lists),
         * as they land (rof[1] follows rof[0]) */
        if (len[0] && src[1] == src[0] + len[0]) len[0] += len[1], len[1] = 0;
        clphys_status st = CLPHYS_SUCCESS;
        for (int q = 0; q < 2 && !st; q++) {
            if (!len[q]) continue;
            cp_release_event(arrived);
            st = cp_write_async(ctx, gd->copyq, gd->recvbuf, r3 * rof[q], len[q], src[q], 0, NULL, arrived);
        }
        return st;
    }
    for (int q = 0; node && q < 2; q++) md_node_stage_copy(gd, (char *)gd->hrecv + r3 * rof[q], src[q], len[q]);
    return cp_write_async(ctx, gd->copyq, gd->recvbuf, r3 * ro, r3 * nr, (char *)gd->hrecv + r3 * ro, 0, NULL, arrived);
}

/* Where the copy to the host of a swap starting at send place `first`
 * lands: this rank's segment at out_off (node staging, node_direct's
 * MD_DIRECT_SEND), else hsend. */
static void *send_host(md_ghost_dev *gd, int node, size_t out_off, size_t first)
{
    const size_t at = 3 * gd->rs * first;
    return node && (gd->node_direct & MD_DIRECT_SEND) ? (void *)(gd->node_seg + out_off + at)
                                                      : (void *)((char *)gd->hsend + at);
}

clphys_status md_ghost_exchange(MPI_Comm comm, md_ghost_dev *gd, const md_ghosts *g, cl_mem pos,
                                clphys_status (*during)(void *arg), void *arg, int nap, double *bytes,
                                cp_mpi_overlap *ov, int *beside, clphys_status st)
{
    /* the last dimension's unpack on copyq, beside `during` */
    const int side = beside && *beside && gd->copyq && during;
    if (beside) *beside = 0;
    clphys_context *ctx = gd->ctx;
    const size_t r3 = 3 * gd->rs; /* bytes of one packed position */
    const int node = gd->node > 0;
    /* node staging: this exchange's half of the segment */
    const size_t out_off = node && gd->parity ? gd->node_bytes / 2 : 0;
    gd->parity ^= 1;
    /* the two swaps of a dimension are independent (the atoms one sends
     * were there before the other's arrived): one copy to the host for
     * both, both messages in flight at once, one copy back, one unpack.
     * Their sends and receives are contiguous (md_ghosts_build appends).
     * Every message is sent and received even after a local failure (the
     * others wait for it); the failure is agreed at the end. */
    for (int s = 0; s < g->nswap; s += 2) {
        const md_swap *a = &g->swap[s], *b = &g->swap[s + 1];
        const md_swap *const sw[2] = {a, b};
        const int c = a->dim;
        const size_t ro = a->first - g->swap[0].first; /* swap 0 receives the first ghost */
        const size_t ns = a->nsend + b->nsend, nr = a->nrecv + b->nrecv;
        const size_t rof[2] = {ro, ro + a->nrecv};
        const int last = s + 2 >= g->nswap;
        cl_event packed = NULL, copied = NULL;
        if (s == 0 && gd->prepacked) /* by the kick-drift */
            packed = gd->prepack_ev, gd->prepack_ev = NULL;
        else if (!st)
            st = pack(gd, a, b, pos, &packed);
        /* the copy to the host on copyq after the packs; the last
         * dimension's `during` on ctx's queue right behind the packs, so
         * that the device runs it while the copies and messages travel.
         * With a second queue `during` is enqueued first (nothing on the
         * host stands between the packs and the forces); on one queue
         * after the copy, which must not wait for it */
        clphys_status (*work)(void *) = last ? during : NULL;
        if (gd->copyq) st = overlapped_work(gd, work, arg, ov != NULL, st);
        if (!st && ns)
            st = cp_read_async(ctx, gd->copyq, gd->sendbuf, r3 * a->off, r3 * ns, send_host(gd, node, out_off, a->off),
                               1, &packed, &copied);
        if (!st && ns && gd->copyq) st = cp_flush(ctx, gd->copyq);
        if (!gd->copyq) st = overlapped_work(gd, work, arg, ov != NULL, st);
        cp_release_event(&packed);
        if (copied) {
            clphys_status w = cp_wait(ctx, &copied);
            if (!st) st = w;
            gd->waits++;
        }
        if (node && gd->h2d[c]) {
            /* the last copy out of hrecv, or (node_direct) out of the
             * neighbours' segments, is over before hrecv is written again
             * and before the header below tells the neighbours that their
             * half is free (the copy to the host above, behind it on
             * copyq, is missing where this rank sends nothing) */
            clphys_status w = cp_wait(ctx, &gd->h2d[c]);
            if (!st) st = w;
        }
        if (node && !(gd->node_direct & MD_DIRECT_SEND) && !st && ns)
            md_node_stage_copy(gd, gd->node_seg + out_off + r3 * a->off, (char *)gd->hsend + r3 * a->off, r3 * ns);
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the segment's bytes before the header */
        MPI_Request rq[4];
        int nrq = 0;
        long long hdr_out[2][2] = {{0, 0}, {0, 0}}, hdr_in[2][2] = {{0, 0}, {0, 0}};
        const double t_post = cp_now();
        clphys_status ms = post(comm, gd, node, sw, rof, out_off, hdr_out, hdr_in, 300 + s, rq, &nrq);
        cp_mpi_overlap none = {0, 0, 0};
        if (!ms)
            ms = cp_mpi_wait_overlapped(ctx, nrq, rq, t_post, last && during && ov ? marker_busy : NULL, gd, nap,
                                        ov ? ov : &none);
        else /* the swap posted before the failure: its buffers are on this stack and in hrecv */
            cp_mpi_wait_exposed(ctx, nrq, rq, t_post, &none);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        cp_release_event(&gd->marker);
        if (!st) st = ms;
        /* the copy back on copyq, not waited for by the host: hrecv is
         * written again only by the next exchange's messages (node
         * staging: its copies, after the wait for h2d above), posted after
         * the host waited for its copy to the host, which copyq (in order)
         * runs after this one; the unpack on ctx's queue waits for it */
        cl_event arrived = NULL;
        if (!st && nr) st = copy_back(gd, node, sw, rof, ro, nr, hdr_in, &arrived);
        if (!st && gd->copyq && nr) st = cp_flush(ctx, gd->copyq);
        if (!st && node && arrived && clRetainEvent(arrived) == CL_SUCCESS) gd->h2d[c] = arrived;
        const int here = last && side;
        if (!st && nr) st = unpack(gd, ro, nr, pos, &arrived, here ? gd->copyq : NULL);
        if (!st && nr && here) *beside = 1, st = cp_flush(ctx, gd->copyq);
        cp_release_event(&arrived);
        if (bytes) *bytes += (double)(r3 * ns);
    }
    gd->prepacked = 0;
    cp_release_event(&gd->prepack_ev);
    return cp_mpi_agree(comm, ctx, st);
}

clphys_status md_ghost_prepack_map(md_ghost_dev *gd, const md_ghosts *g, size_t nlocal, cl_uint *dup)
{
    /* not touched again after the read: the zero needs no wait */
    static const cl_uint zero = 0, none = ~0u;
    clphys_context *ctx = gd->ctx;
    gd->prepack_n = 0;
    *dup = 0;
    const size_t n = g->nswap >= 2 ? g->swap[0].nsend + g->swap[1].nsend : 0;
    if (gd->prepack_off || !n || !nlocal || g->swap[0].off) return CLPHYS_SUCCESS;
    if (nlocal > gd->slot_cap) {
        CP_TRY(cp_finish(ctx)); /* a kick-drift may still read it */
        cp_release_mem(&gd->slot);
        gd->slot_cap = 0;
        const size_t cap = nlocal + nlocal / 4 + 64;
        CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * cap, NULL, &gd->slot));
        gd->slot_cap = cap;
    }
    cl_int ce = clEnqueueFillBuffer(ctx->queue, gd->slot, &none, 4, 0, 4 * nlocal, 0, NULL, NULL);
    if (ce != CL_SUCCESS) return cp_cl_error(ctx, ce, "clEnqueueFillBuffer (ghost slots)");
    /* gd->count is free after the lists (md_ghosts_build_dev's counts) */
    CP_TRY(cp_write_async(ctx, NULL, gd->count, 0, 4, &zero, 0, NULL, NULL));
    const cl_uint nn = (cl_uint)n;
    CP_TRY(CP_ARGS(ctx, gd->k_slots, gd->send_idx, nn, gd->slot, gd->count));
    size_t gsz = md_global(n, 64);
    CP_TRY(cp_launch(ctx, gd->k_slots, 1, &gsz, NULL, NULL));
    CP_TRY(cp_read_async(ctx, NULL, gd->count, 0, 4, dup, 0, NULL, NULL));
    gd->prepack_n = n;
    return CLPHYS_SUCCESS;
}

/* ---- the ghost lists made on the device, at a rebuild -------------------- */

/* Both swaps of dimension sw[0]->dim: the atoms 0 .. n-1 of pos below the
 * lower face's r_s (side 0) and at or above the upper one's (side 1),
 * appended to send_idx from sw[0]->off, side 1's behind side 0's (the
 * kernel places them from its counter); count[0], count[1] of them, read
 * in one wait (written only up to the room there). */
static clphys_status select_both(md_ghost_dev *gd, const md_decomp *d, md_swap *const sw[2], cl_mem pos, size_t n,
                                 cl_uint count[2])
{
    /* not touched again after the read: the counters' zeros need no wait */
    static const cl_uint zero[2] = {0, 0};
    clphys_context *ctx = gd->ctx;
    cl_kernel k = gd->k_select;
    const int c = sw[0]->dim;
    const cl_uint nn = (cl_uint)n, off = (cl_uint)sw[0]->off;
    const cl_uint room = gd->send_cap > sw[0]->off ? (cl_uint)(gd->send_cap - sw[0]->off) : 0;
    const cl_int dim = c;
    const size_t gsz = md_global(n, 64);
    count[0] = count[1] = 0;
    if (!n) return CLPHYS_SUCCESS;
    CP_TRY(cp_write_async(ctx, NULL, gd->count, 0, sizeof zero, zero, 0, NULL, NULL));
    for (cl_int side = 0; side < 2; side++) {
        const double face = side == 0 ? d->lo[c] - d->llo[c] + d->rs : d->hi[c] - d->llo[c] - d->rs;
        const float facef = (float)face;
        CP_TRY(CP_ARGS(ctx, k, pos, nn, dim, side, CP_EITHER(gd->rs == 8, face, facef), off, room, gd->send_idx,
                       gd->count));
        CP_TRY(cp_launch(ctx, k, 1, &gsz, NULL, NULL));
    }
    return cp_read(ctx, gd->count, 0, 2 * sizeof *count, count);
}

/* The counts of both swaps: n_out[q] to sw[q]->to, n_in[q] from
 * sw[q]->from, all four messages in flight at once (the two neighbours may
 * be one rank: the tags tell the sides apart).  Sent even after a local
 * failure: the neighbours wait for them. */
static clphys_status swap_counts(MPI_Comm comm, clphys_context *ctx, md_swap *const sw[2], long long n_out[2],
                                 long long n_in[2])
{
    MPI_Request rq[4];
    int nrq = 0;
    clphys_status st = CLPHYS_SUCCESS;
    for (int q = 0; q < 2 && !st; q++) {
        cp_mpi_slice out = {&n_out[q], 1, MPI_LONG_LONG}, in = {&n_in[q], 1, MPI_LONG_LONG};
        st = cp_mpi_post(ctx, comm, sw[q]->to, &out, 1, sw[q]->from, &in, 1, 200 + 2 * sw[q]->dim + q, rq, &nrq);
    }
    /* every request over, whatever fails (cp_mpi_wait_exposed) */
    cp_mpi_overlap none = {0, 0, 0};
    clphys_status w = cp_mpi_wait_exposed(ctx, nrq, rq, cp_now(), &none);
    return st ? st : w;
}

/* The positions of both swaps of a dimension (sw[q]->nsend atoms packed
 * from pos) to sw[q]->to, and the n_in[q] ghosts from sw[q]->from into pos
 * from nlocal on, side 0's then side 1's (their w MD_GHOST_W), through the
 * step's pack and unpack kernels: one copy to the host, the four messages
 * at once (node: through the segments' half at out_off with headers, as
 * md_ghost_exchange; else the positions in MPI's messages), one wait for
 * the uploads and the unpack.  The messages travel even after a local
 * failure (st, or one here): the neighbours wait. */
static clphys_status swap_positions(MPI_Comm comm, md_ghost_dev *gd, md_swap *const sw[2], cl_mem pos, size_t nghost,
                                    size_t nlocal, const size_t n_in[2], int node, size_t out_off, clphys_status st)
{
    clphys_context *ctx = gd->ctx;
    const size_t r3 = 3 * gd->rs, ns = sw[0]->nsend + sw[1]->nsend, nr = n_in[0] + n_in[1];
    if (!st) st = pack(gd, sw[0], sw[1], pos, NULL);
    /* the two send lists are contiguous: side 1's from side 0's end */
    if (!st && ns)
        st = cp_read_async(ctx, NULL, gd->sendbuf, r3 * sw[0]->off, r3 * ns, send_host(gd, node, out_off, sw[0]->off),
                           0, NULL, NULL);
    if (!st) st = cp_finish(ctx);
    MPI_Request rq[4];
    int nrq = 0;
    const size_t rof[2] = {nghost, nghost + n_in[0]};
    long long hdr_out[2][2] = {{0, 0}, {0, 0}}, hdr_in[2][2] = {{0, 0}, {0, 0}};
    const md_swap *const csw[2] = {sw[0], sw[1]};
    for (int q = 0; q < 2; q++) sw[q]->nrecv = n_in[q]; /* what post and copy_back expect */
    /* with node staging through the ranks' shared segments as a step's
     * exchange: this rank's positions into its segment, a header to each
     * receiver */
    if (node && !(gd->node_direct & MD_DIRECT_SEND) && !st && ns)
        md_node_stage_copy(gd, gd->node_seg + out_off + r3 * sw[0]->off, (char *)gd->hsend + r3 * sw[0]->off, r3 * ns);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the segment's bytes before the header */
    clphys_status ms = post(comm, gd, node, csw, rof, out_off, hdr_out, hdr_in, 210 + 2 * sw[0]->dim, rq, &nrq);
    /* every request over, whatever fails (cp_mpi_wait_exposed) */
    cp_mpi_overlap none = {0, 0, 0};
    clphys_status w = cp_mpi_wait_exposed(ctx, nrq, rq, cp_now(), &none);
    if (!ms) ms = w;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!st) st = ms;
    if (!st && nr) {
        /* both sides' ghosts are contiguous in pos, recv_idx and recvbuf:
         * their places written on the device (nothing to upload), one
         * upload (with node staging copied into hrecv first), fill and
         * unpack; hrecv stays until the wait */
        const double gw[4] = {0, 0, 0, MD_GHOST_W}; /* the unpack keeps w */
        const float gwf[4] = {0, 0, 0, (float)MD_GHOST_W};
        cl_uint off = (cl_uint)nghost, first = (cl_uint)nlocal, n = (cl_uint)nr;
        size_t gsz = md_global(nr, 64);
        st = CP_ARGS(ctx, gd->k_places, gd->recv_idx, off, first, n);
        if (!st) st = cp_launch(ctx, gd->k_places, 1, &gsz, NULL, NULL);
        cl_event arrived = NULL;
        if (!st) st = copy_back(gd, node, csw, rof, nghost, nr, hdr_in, &arrived);
        if (!st && gd->copyq) st = cp_flush(ctx, gd->copyq);
        if (!st) st = cp_enqueue_wait(ctx, NULL, arrived ? 1 : 0, &arrived);
        cp_release_event(&arrived);
        if (!st) {
            cl_int ce = clEnqueueFillBuffer(ctx->queue, pos, gd->rs == 8 ? (const void *)gw : (const void *)gwf,
                                            4 * gd->rs, 4 * gd->rs * nlocal, 4 * gd->rs * nr, 0, NULL, NULL);
            if (ce != CL_SUCCESS) st = cp_cl_error(ctx, ce, "clEnqueueFillBuffer (ghost positions)");
        }
        cl_event none = NULL;
        if (!st) st = unpack(gd, nghost, nr, pos, &none, NULL);
        /* hrecv is reused; after a failure the enqueued copy may still
         * read it */
        clphys_status w = cp_finish(ctx);
        if (!st) st = w;
    }
    return st;
}

clphys_status md_ghosts_build_dev(MPI_Comm comm, md_ghost_dev *gd, const md_decomp *d, cl_mem pos, size_t nown,
                                  size_t cap, md_ghosts *g, int *again, size_t *need, clphys_status before)
{
    clphys_context *ctx = gd->ctx;
    g->nswap = 0, g->nghost = 0, g->nsend = 0;
    *again = 0, *need = nown;
    if (!d->cut[0] && !d->cut[1] && !d->cut[2]) return cp_mpi_agree(comm, ctx, before);
    size_t nlocal = nown;
    /* node staging (md_node_stage_reserve decided it, at an earlier
     * rebuild): one half of the segments for the whole call, as a step's
     * exchange takes one */
    const size_t out_off = gd->node > 0 && gd->parity ? gd->node_bytes / 2 : 0;
    if (gd->node > 0) gd->parity ^= 1;
    for (int c = 0; c < 3; c++) {
        if (!d->cut[c]) continue;
        /* both swaps from the atoms before this dimension (the ghosts it
         * receives lie beyond the faces; md_ghosts_build): independent, so
         * they go together, side 0's lists and ghosts before side 1's */
        const size_t nbefore = nlocal;
        md_swap *const sw[2] = {&g->swap[g->nswap], &g->swap[g->nswap + 1]};
        g->nswap += 2;
        for (int side = 0; side < 2; side++) swap_geometry(d, c, side, sw[side]);
        sw[0]->off = g->nsend;
        cl_uint cnt[2] = {0, 0};
        /* a failure before (the first dimension's only) skips the device
         * work; the counts still travel and the room check agrees it */
        clphys_status st = before;
        before = CLPHYS_SUCCESS;
        if (!st) st = select_both(gd, d, sw, pos, nbefore, cnt);
        sw[1]->off = sw[0]->off + cnt[0];
        long long n_out[2] = {cnt[0], cnt[1]}, n_in[2] = {0, 0};
        clphys_status ms = swap_counts(comm, ctx, sw, n_out, n_in);
        if (!st) st = ms;
        const long long in_all = n_in[0] + n_in[1];
        if (!st && (n_in[0] < 0 || n_in[1] < 0 || 24 * (in_all + (long long)g->nghost) > (long long)INT32_MAX))
            st = cp_error(ctx, CLPHYS_ERR_OVERFLOW, "md mpi: %lld ghost atoms: too many for one message", in_all);
        /* room in the send list, the received ghosts' buffers and the
         * plan: if any rank lacks it, every rank stops here and the caller
         * grows and calls again */
        const size_t nin = st ? 0 : (size_t)in_all, nsend = (size_t)cnt[0] + cnt[1];
        /* v[2]: some rank's half segment too small for its send list (the
         * segments follow the lists at the end of a rebuild): MPI's
         * messages for this dimension on every rank */
        double v[3] = {st ? 1 : 0, 0, gd->node > 0 ? 0 : 1};
        if (!st && (sw[0]->off + nsend > gd->send_cap || g->nghost + nin > gd->recv_cap || nlocal + nin > cap))
            v[1] = 1;
        if (gd->node > 0 && 3 * gd->rs * (sw[0]->off + nsend) > gd->node_bytes / 2) v[2] = 1;
        CP_MPI(ctx, MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_MAX, comm));
        if (v[0] > 0) return cp_mpi_agree(comm, ctx, st);
        if (v[1] > 0) {
            g->nsend = sw[0]->off + nsend, g->nghost += nin;
            *again = 1, *need = nlocal + nin;
            return CLPHYS_SUCCESS;
        }
        const size_t in[2] = {(size_t)n_in[0], (size_t)n_in[1]};
        sw[0]->nsend = cnt[0], sw[1]->nsend = cnt[1];
        st = swap_positions(comm, gd, sw, pos, g->nghost, nlocal, in, v[2] == 0, out_off, st);
        CP_TRY(cp_mpi_agree(comm, ctx, st));
        for (int q = 0; q < 2; q++) {
            sw[q]->first = nlocal;
            sw[q]->nrecv = in[q];
            nlocal += in[q];
        }
        g->nghost += nin;
        g->nsend += nsend;
    }
    return CLPHYS_SUCCESS;
}

/* ---- a rebuild's ghost lists sent with the migrants (borders.c) --------- */
/* The one cut dimension of d. */
static int cut_dim(const md_decomp *d) { return d->cut[0] ? 0 : d->cut[1] ? 1 : 2; }

clphys_status md_ghost_borders_select(md_ghost_dev *gd, const md_decomp *d, cl_mem pos, size_t n, cl_mem counts,
                                      cl_mem scratch, size_t room)
{
    if (!n) return CLPHYS_SUCCESS;
    clphys_context *ctx = gd->ctx;
    const int c = cut_dim(d);
    const double lo = d->lo[c] - d->llo[c] + d->rs, hi = d->hi[c] - d->llo[c] - d->rs;
    const float lof = (float)lo, hif = (float)hi;
    const cl_uint nn = (cl_uint)n, room0 = (cl_uint)gd->send_cap, room1 = (cl_uint)room;
    const cl_int dim = c;
    CP_TRY(CP_ARGS(ctx, gd->k_borders, pos, nn, counts, dim, CP_EITHER(gd->rs == 8, lo, lof),
                   CP_EITHER(gd->rs == 8, hi, hif), gd->send_idx, room0, scratch, room1));
    size_t g = md_global(n, 64);
    CP_TRY(cp_launch(ctx, gd->k_borders, 1, &g, NULL, NULL));
    /* the positions packed behind it, their counts read on the device: up
     * to send_cap of them (more, and the host sends none) */
    if (!gd->send_cap) return CLPHYS_SUCCESS;
    double da[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    float fa[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    for (int q = 0; q < 2; q++) {
        md_swap sw;
        swap_geometry(d, c, q, &sw);
        da[q][c] = sw.dlocal, fa[q][c] = (float)sw.dlocal;
    }
    CP_TRY(CP_ARGS(ctx, gd->k_bpack, pos, gd->send_idx, scratch, counts, room0, room1,
                   CP_EITHER(gd->rs == 8, da[0], fa[0]), CP_EITHER(gd->rs == 8, da[1], fa[1]), gd->sendbuf));
    g = md_global(gd->send_cap, 64);
    return cp_launch(ctx, gd->k_bpack, 1, &g, NULL, NULL);
}

clphys_status md_ghost_borders_read(md_ghost_dev *gd, const size_t a[2])
{
    const size_t n = a[0] + a[1];
    if (!n) return CLPHYS_SUCCESS;
    CP_TRY(cp_read_async(gd->ctx, NULL, gd->sendbuf, 0, 3 * gd->rs * n, gd->hsend, 0, NULL, NULL));
    return cp_flush(gd->ctx, NULL);
}

clphys_status md_ghost_borders_finish(md_ghost_dev *gd, const md_decomp *d, md_ghosts *g, cl_mem pos, size_t nown,
                                      const size_t a[2], cl_mem scratch, const size_t first[2], const size_t nb[2],
                                      const size_t nr[2])
{
    clphys_context *ctx = gd->ctx;
    const size_t ns0 = a[0] + nb[0], ng = nr[0] + nr[1];
    g->nswap = 2, g->nsend = ns0 + a[1] + nb[1], g->nghost = ng;
    for (int q = 0; q < 2; q++) {
        md_swap *sw = &g->swap[q];
        swap_geometry(d, cut_dim(d), q, sw);
        sw->off = q ? ns0 : 0, sw->nsend = a[q] + nb[q];
        sw->first = nown + (q ? nr[0] : 0), sw->nrecv = nr[q];
    }
    /* the ghosts' positions (in hrecv, the caller's) up on copyq as a
     * step's are (so that the next exchange writes hrecv after this copy),
     * then one launch: the send lists [a0 lower face][b0][a1 upper face][b1],
     * the ghosts' places behind the owned atoms and their positions there */
    cl_event arrived = NULL;
    clphys_status st = CLPHYS_SUCCESS;
    if (ng)
        st = cp_write_async(ctx, gd->copyq, gd->recvbuf, 0, 3 * gd->rs * ng, gd->hrecv, 0, NULL,
                            gd->copyq ? &arrived : NULL);
    if (!st && arrived) st = cp_flush(ctx, gd->copyq);
    if (!st && arrived) st = cp_enqueue_wait(ctx, NULL, 1, &arrived);
    cp_release_event(&arrived);
    CP_TRY(st);
    size_t m = ng > a[1] ? ng : a[1];
    if (nb[0] > m) m = nb[0];
    if (nb[1] > m) m = nb[1];
    if (!m) return CLPHYS_SUCCESS;
    const cl_uint a0 = (cl_uint)a[0], a1 = (cl_uint)a[1], nb0 = (cl_uint)nb[0], nb1 = (cl_uint)nb[1];
    const cl_uint f0 = (cl_uint)first[0], f1 = (cl_uint)first[1], no = (cl_uint)nown, n = (cl_uint)ng;
    const double w = MD_GHOST_W;
    const float wf = (float)MD_GHOST_W;
    CP_TRY(CP_ARGS(ctx, gd->k_blists, gd->send_idx, scratch, a0, a1, nb0, f0, nb1, f1, gd->recv_idx, pos, no, n,
                   gd->recvbuf, CP_EITHER(gd->rs == 8, w, wf)));
    size_t gsz = md_global(m, 64);
    return cp_launch(ctx, gd->k_blists, 1, &gsz, NULL, NULL);
}
