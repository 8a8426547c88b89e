/* borders.c — a neighbour-list rebuild of a grid cut along one dimension
 * in one message per neighbour: the atoms that left through a face (as
 * LAMMPS's Comm::exchange migrates them) travel with the positions of the
 * staying atoms within r_cut + skin of that face (the new ghosts, as
 * Comm::borders selects them).  The rounds (migrate.c, then
 * md_ghosts_build_dev: counts, room checks and positions in series) take
 * six message round trips or collectives and five waits for the device;
 * this takes two round trips (the headers, then the records and
 * positions), one collective and two waits (classify's counts with the
 * migrants' records, the packed positions).
 *
 * A rank's ghosts from a neighbour are then that neighbour's staying atoms
 * near the face, and the atoms this rank has just sent it across that face
 * which lie within r_cut + skin of it: both ranks know those, in the same
 * order, so they need no message.  What this leaves out is an atom that
 * arrived through one face and lies within r_cut + skin of the other (a
 * subdomain so thin, or an atom so fast): the receiver sees it, and every
 * rank then makes the ghost lists in rounds instead (md_mpi_rebuild). */
#include "md_mpi_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Message tags: side q's header, records and positions at BORDERS_TAG + 4 q
 * + 0, 1, 2 (the two neighbours may be one rank) */
#define BORDERS_TAG 400

/* A side's header: this rank failed, records, of them ghosts of the
 * receiver (the first ones), positions, where they are (an offset in the
 * sender's node segment, or -1: in the message) */
enum { H_FAILED, H_NREC, H_NBIT, H_NPOS, H_POS_OFF, H_LEN };

/* The face of the one cut dimension c that an atom at x (wrapped into
 * [0, L), outside [lo, hi)) left through: 1 upper, 0 lower; its distance
 * past that face in *depth. */
static int face_left(const md_decomp *d, int c, double x, double *depth)
{
    const double L = d->L[c];
    const double up = md_wrap_into(x - d->hi[c], L), down = md_wrap_into(d->lo[c] - x, L);
    *depth = up < down ? up : down;
    return up < down;
}

/* Room for n records in *r (its contents lost). */
static clphys_status rec_room(clphys_context *ctx, md_rec **r, size_t *cap, size_t n)
{
    if (n <= *cap && *r) return CLPHYS_SUCCESS;
    free(*r);
    *cap = 0;
    *r = malloc((n + n / 2 + 64) * sizeof **r);
    if (!*r) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: records of %zu atoms", n);
    *cap = n + n / 2 + 64;
    return CLPHYS_SUCCESS;
}

/* The migrants in own (global frame, wrapped) sorted into out[q] by the
 * face q they left through, those within r_cut + skin of it first (nbit[q]:
 * they are the receiver's ghosts); out[2] (nout[2] of them) those that
 * are inside the subdomain after all (the device's frame in fp32 rounds
 * differently at a face); an atom that went farther than the next
 * subdomain is CLPHYS_ERR_INPUT. */
static clphys_status sort_migrants(clphys_md_mpi *pl, int c, const char *recs, size_t n, md_rec *out[3], size_t nout[3],
                                   size_t nbit[2])
{
    const md_decomp *d = &pl->d;
    const int P = d->P[c], me = d->coord[c];
    const size_t rb = md_mpi_record_bytes(pl->rs);
    size_t back[2] = {n, n}; /* non-ghosts filled from the back, reversed after */
    CP_TRY(rec_room(pl->ctx, &pl->brec, &pl->brec_cap, 3 * n));
    for (int q = 0; q < 3; q++) out[q] = pl->brec + (size_t)q * n, nout[q] = 0;
    nbit[0] = nbit[1] = 0;
    for (size_t i = 0; i < n; i++) {
        md_rec r;
        const int why = recs ? md_mpi_record_rec(pl, recs + rb * i, &r) : 0;
        if (why) return md_mpi_diverged(pl, &r, why);
        if (!recs) md_rec_get(&pl->own, i, &r);
        const double x = r.x[c];
        double depth;
        const int q = face_left(d, c, x, &depth);
        const int k = md_decomp_owner(d, c, x), want = q ? (me + 1) % P : (me + P - 1) % P;
        if (k == me) {
            out[2][nout[2]++] = r;
            continue;
        }
        if (k != want)
            return cp_error(pl->ctx, CLPHYS_ERR_INPUT,
                            "md mpi: atom ID %lld moved from subdomain %d to %d along %c between two neighbour builds, "
                            "farther than the next subdomain: rebuild more often (neigh_every, neigh_check) or take "
                            "a smaller time step",
                            r.id, me, k, "xyz"[c]);
        out[q][depth < d->rs ? nbit[q]++ : --back[q]] = r;
    }
    for (int q = 0; q < 2; q++) {
        const size_t rest = n - back[q];
        /* the others, in the order they came */
        for (size_t k = 0; k < rest / 2; k++) {
            md_rec t = out[q][back[q] + k];
            out[q][back[q] + k] = out[q][n - 1 - k], out[q][n - 1 - k] = t;
        }
        if (rest) memmove(&out[q][nbit[q]], &out[q][back[q]], rest * sizeof(md_rec));
        nout[q] = nbit[q] + rest;
    }
    return CLPHYS_SUCCESS;
}

/* The headers received, checked: counts within what one message holds, a
 * node offset inside the sender's segment. */
static clphys_status check_header(const md_ghost_dev *gd, const long long h[H_LEN], int from)
{
    const long long r3 = 3 * (long long)gd->rs;
    const int bad = h[H_NREC] < 0 || h[H_NREC] > INT_MAX || h[H_NBIT] < 0 || h[H_NBIT] > h[H_NREC] || h[H_NPOS] < 0 ||
                    r3 * h[H_NPOS] > INT_MAX || h[H_POS_OFF] < -1 ||
                    (h[H_POS_OFF] >= 0 &&
                     (gd->node <= 0 || (unsigned long long)h[H_POS_OFF] > gd->node_bytes ||
                      (unsigned long long)(r3 * h[H_NPOS]) > gd->node_bytes - (unsigned long long)h[H_POS_OFF]));
    if (bad)
        return cp_error(gd->ctx, CLPHYS_ERR_IO,
                        "md mpi: rebuild header from rank %d (%lld atoms, %lld ghosts of them, %lld positions at "
                        "%lld) out of range",
                        from, h[H_NREC], h[H_NBIT], h[H_NPOS], h[H_POS_OFF]);
    return CLPHYS_SUCCESS;
}

/* Atom r, which left through face q of the cut dimension c, as this
 * rank's ghost beyond that face: its position in the device frame (the
 * periodic image next to the face), three reals of size rs at dst. */
static void ghost_position(const clphys_md_mpi *pl, int c, int q, const md_rec *r, void *dst)
{
    const md_decomp *d = &pl->d;
    for (int k = 0; k < 3; k++) {
        double x = r->x[k];
        if (k == c && q == 0 && x >= d->lo[k]) x -= d->L[k];
        if (k == c && q == 1 && x < d->hi[k]) x += d->L[k];
        const double v = k == c ? x - d->llo[k] : md_wrap_into(x - d->llo[k], d->lbox[k]);
        if (pl->rs == 8)
            ((double *)dst)[k] = v;
        else
            ((float *)dst)[k] = (float)v;
    }
}

clphys_status md_mpi_borders(clphys_md_mpi *pl, size_t nstay, const char *recs, size_t nmig, const size_t a[2],
                             int packed, clphys_status st, int *rounds, clphys_status *late, size_t *narr)
{
    *late = CLPHYS_SUCCESS;
    *narr = 0;
    clphys_context *ctx = pl->ctx;
    md_ghost_dev *gd = &pl->gd;
    const md_decomp *d = &pl->d;
    const int c = d->cut[0] ? 0 : d->cut[1] ? 1 : 2;
    const size_t r3 = 3 * pl->rs;
    /* this rank's own reason to make the ghost lists in rounds */
    int local_rounds = !packed;
    *rounds = 0;
    md_rec *out[3] = {NULL, NULL, NULL}, *in = NULL;
    size_t nout[3] = {0, 0, 0}, nbit[2] = {0, 0};
    /* the migrants sorted while the packed positions come to hsend, then
     * waited for (after a failure before, nothing enqueued matters) */
    if (!st) st = sort_migrants(pl, c, recs, recs ? nmig : pl->own.n, out, nout, nbit);
    pl->own.n = 0; /* the arrivals from here on, where the lists are made in rounds */
    clphys_status w = cp_finish(ctx);
    if (!st) st = w;
    /* node staging: this rank's positions into its segment's half, where
     * they fit (else in the message) */
    const int node = gd->node > 0 && packed && r3 * (a[0] + a[1]) <= gd->node_bytes / 2;
    const size_t out_off = gd->node > 0 && gd->parity ? gd->node_bytes / 2 : 0;
    if (gd->node > 0) gd->parity ^= 1;
    if (node && !st && a[0] + a[1]) md_node_stage_copy(gd, gd->node_seg + out_off, gd->hsend, r3 * (a[0] + a[1]));
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the segment's bytes before the header */
    long long hout[2][H_LEN], hin[2][H_LEN];
    memset(hin, 0, sizeof hin);
    MPI_Datatype rt = MPI_DATATYPE_NULL;
    clphys_status ms = md_rec_type(ctx, &rt);
    /* the headers in one round trip; the records and positions sent at
     * once but received once their sizes are known: the headers' requests
     * apart (a large send completes only when its receive is posted) */
    MPI_Request rh[8], rd[16];
    int nrh = 0, nrd = 0;
    const double t0 = cp_now();
    for (int q = 0; q < 2 && !ms; q++) {
        const int ok = !st;
        const size_t npos = ok && packed ? a[q] : 0;
        hout[q][H_FAILED] = !ok, hout[q][H_NREC] = ok ? (long long)nout[q] : 0;
        hout[q][H_NBIT] = ok ? (long long)nbit[q] : 0, hout[q][H_NPOS] = (long long)npos;
        hout[q][H_POS_OFF] = node ? (long long)(out_off + r3 * (q ? a[0] : 0)) : -1;
        cp_mpi_slice h = {hout[q], H_LEN, MPI_LONG_LONG}, i = {hin[q], H_LEN, MPI_LONG_LONG};
        cp_mpi_slice o[2] = {{out[q] ? (void *)out[q] : (void *)hout[q], (int)hout[q][H_NREC], rt},
                             {(char *)gd->hsend + r3 * (q ? a[0] : 0), node ? 0 : (int)(r3 * npos), MPI_BYTE}};
        const int to = d->nbr[c][q], from = d->nbr[c][1 - q], tag = BORDERS_TAG + 4 * q;
        ms = cp_mpi_post(ctx, pl->comm, to, &h, 1, from, &i, 1, tag, rh, &nrh);
        if (!ms) ms = cp_mpi_post(ctx, pl->comm, to, o, 2, from, NULL, 0, tag + 1, rd, &nrd);
    }
    /* every request over, whatever fails (cp_mpi_wait_exposed) */
    cp_mpi_overlap none = {0, 0, 0};
    w = cp_mpi_wait_exposed(ctx, nrh, rh, t0, &none);
    if (!ms) ms = w;
    /* post q brought side q's message of the neighbour below (q 1) or above
     * (q 0): its migrants came in through this rank's face 1 - q, its
     * positions are the ghosts of swap q (md_ghost_exchange's order) */
    /* (a neighbour that failed sent empty messages; its status comes with
     * the agreement below).  A header out of range: its messages are
     * still received, as empty ones (MPI reports the truncation), so that
     * their sender does not wait */
    for (int q = 0; q < 2 && !ms; q++) {
        clphys_status hs = check_header(gd, hin[q], d->nbr[c][1 - q]);
        if (hs) memset(hin[q], 0, sizeof hin[q]), hin[q][H_POS_OFF] = -1;
        if (!st) st = hs;
    }
    const size_t nin[2] = {ms ? 0 : (size_t)hin[0][H_NREC], ms ? 0 : (size_t)hin[1][H_NREC]};
    const size_t npin[2] = {ms ? 0 : (size_t)hin[0][H_NPOS], ms ? 0 : (size_t)hin[1][H_NPOS]};
    /* swap q's ghosts: the neighbour's positions, then this rank's own
     * migrants to it that are its ghosts (nbit[1 - q]) */
    const size_t nr[2] = {npin[0] + nbit[1], npin[1] + nbit[0]}, ng = nr[0] + nr[1];
    /* (the migrants' records may still be on their way out) */
    if (!ms) ms = rec_room(ctx, &pl->brin, &pl->brin_cap, nin[0] + nin[1]);
    if (!ms) in = pl->brin;
    /* where hrecv is short the positions are still received (into scratch) */
    char *scratch = NULL;
    if (!ms && ng > gd->recv_cap) {
        local_rounds = 1;
        scratch = malloc(r3 * (npin[0] + npin[1]) + 1);
        if (!scratch) ms = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: ghosts (%zu)", ng);
    }
    for (int q = 0; q < 2 && !ms; q++) {
        char *dst = scratch ? scratch + r3 * (q ? npin[0] : 0) : (char *)gd->hrecv + r3 * (q ? nr[0] : 0);
        const int inmsg = hin[q][H_POS_OFF] < 0;
        cp_mpi_slice i[2] = {{in + (q ? nin[0] : 0), (int)nin[q], rt},
                             {dst, inmsg ? (int)(r3 * npin[q]) : 0, MPI_BYTE}};
        ms = cp_mpi_post(ctx, pl->comm, d->nbr[c][q], NULL, 0, d->nbr[c][1 - q], i, 2, BORDERS_TAG + 4 * q + 1, rd,
                         &nrd);
    }
    w = cp_mpi_wait_exposed(ctx, nrd, rd, t0, &none);
    if (!ms) ms = w;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (rt != MPI_DATATYPE_NULL) MPI_Type_free(&rt);
    if (!st) st = ms;
    /* the positions through the segments, this rank's ghosts behind them */
    for (int q = 0; q < 2 && !st; q++) {
        char *dst = scratch ? scratch + r3 * (q ? npin[0] : 0) : (char *)gd->hrecv + r3 * (q ? nr[0] : 0);
        if (hin[q][H_POS_OFF] >= 0 && npin[q])
            md_node_stage_copy(gd, dst, (const char *)gd->node_peer[c][q] + hin[q][H_POS_OFF], r3 * npin[q]);
        for (size_t k = 0; !scratch && k < nbit[1 - q]; k++)
            ghost_position(pl, c, 1 - q, &out[1 - q][k], dst + r3 * (npin[q] + k));
    }
    free(scratch);
    /* the arrivals: owned here (else an error), and none within r_cut +
     * skin of the face it did not come through, which no neighbour's list
     * would hold (then the lists are made in rounds); nor an atom that
     * stayed after all, which no list holds either */
    const size_t nall = nin[0] + nin[1];
    if (nout[2]) local_rounds = 1;
    for (size_t k = 0; !st && k < nall; k++) {
        const md_rec *r = &in[k];
        const int through = k < nin[0] ? 1 : 0; /* the face it came through */
        const double x = r->x[c];
        if (md_decomp_owner(d, c, x) != d->coord[c] || !(r->type >= 1 && r->type <= pl->ntypes)) {
            st = cp_error(ctx, CLPHYS_ERR_IO, "md mpi: atom ID %lld arrived at rank %d outside its subdomain", r->id,
                          d->rank);
            break;
        }
        if (through ? x < d->lo[c] + d->rs : x >= d->hi[c] - d->rs) local_rounds = 1;
    }
    /* the arrivals that are a neighbour's ghosts: swap q sends those that
     * came through face q, the first hin[1 - q][H_NBIT] of post 1 - q's */
    size_t nb[2] = {0, 0};
    const size_t first[2] = {nstay + nin[0], nstay};
    if (!st) {
        nb[0] = (size_t)hin[1][H_NBIT], nb[1] = (size_t)hin[0][H_NBIT];
        if (a[0] + a[1] + nb[0] + nb[1] > gd->send_cap || nstay + nall + ng > pl->cap) local_rounds = 1;
    }
    /* one collective: every rank's status, and whether any makes its lists
     * in rounds */
    int v[2] = {st ? 1 : 0, local_rounds}, e = MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, pl->comm);
    if (e != MPI_SUCCESS) return cp_mpi_error(ctx, e, "MPI_Allreduce (rebuild)");
    if (st || v[0]) return cp_mpi_agree(pl->comm, ctx, st ? st : CLPHYS_SUCCESS);
    *rounds = v[1];
    if (*rounds) {
        /* the arrivals and the atoms that stayed after all to pl->own, for
         * md_ghosts_build_dev */
        CP_TRY(md_atoms_reserve(ctx, &pl->own, nall + nout[2]));
        for (size_t k = 0; k < nall; k++) md_rec_put(&pl->own, k, &in[k]);
        for (size_t k = 0; k < nout[2]; k++) md_rec_put(&pl->own, nall + k, &out[2][k]);
        pl->own.n = nall + nout[2];
        return CLPHYS_SUCCESS;
    }
    *narr = nall;
    if (!*rounds)
        *late = md_ghost_borders_finish(gd, d, &pl->g, clphys_md_lj_neighbor(pl->lj)->pos_in, nstay + nall, a, pl->inv,
                                        first, nb, nr);
    return CLPHYS_SUCCESS;
}
