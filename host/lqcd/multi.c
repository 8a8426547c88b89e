/* multi.c — Wilson-Dirac plans over the devices of one process
 * (clphys_lqcd_dslash_plan_create_multi, include/clphys_lqcd.h): one plan per
 * device, each driven by a host thread of the caller's, the faces crossing
 * the host once.
 *
 * NVIDIA's OpenCL has no peer copy between devices, so a face must go
 * through host memory.  Each device reads its faces into a page-locked
 * buffer of its own (two slots, alternating with the hops) and each
 * neighbour writes them from that same buffer into its device: one copy
 * down, one up, no host copy in between (the scheme of FluidX3D; over MPI
 * ranks, halo.c, the faces also cross between the processes' memories).
 *
 * One hop of device i, its hop number s, on its queue Q and, on a GPU, two
 * transfer queues per face block b, down (X_b) and up (U_b) (on a CPU
 * device the copies go on Q, first: it runs one command after another):
 *   Q: halo_pack                       X_b: block b -> pin_i[s & 1]
 *   Q: dslash_hop* (the interior)      host: as each block is down, publish
 *                                            ready_i[b] = s; as each
 *                                            ready_j[b] >= s (j the
 *                                            neighbour that sends b),
 *                                      U_b:  pin_j[s & 1] block b -> recv
 *   Q: (waits for every U_b) halo_exterior
 * so one block's upload overlaps another's download (the links run both
 * ways at once).  pin_i[s & 1] is written again at hop s + 2, after device
 * i saw its neighbours' blocks of hop s + 1, which a neighbour publishes
 * only after its uploads of hop s out of pin_i completed: two slots need
 * no further wait.
 *
 * The global sums of the solvers (la_space_set_global_sum) are host sums:
 * each member writes its values into a slot, all meet at a barrier, each
 * adds the slots in member order (the same sum on every member).  A member
 * that fails marks the group failed: every member's waits end with an
 * error, so no thread waits for one that has returned. */
#include "lqcd_internal.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MULTI_MAX 16 /* devices of a group                         */
#define SUM_MAX   32 /* values of one reduction point (LA_NSLOT x 4 in the linalg layer) */
#define BLOCKS    8  /* face blocks: 2 sides x 4 directions       */

typedef struct {
    clphys_context *ctx;
    cl_mem pin_m; /* page-locked: this device's faces, two slots */
    char *pin;
    atomic_long ready[BLOCKS]; /* per face block: the hops whose block is
                                  in its slot                              */
} multi_member;

typedef struct {
    int n;
    atomic_int refs, failed;
    int nap;           /* a CPU device among the members: wait asleep */
    size_t slot_bytes; /* one slot: the faces of a full field         */
    multi_member m[MULTI_MAX];
    atomic_int bar_count;
    atomic_long bar_gen;
    double sums[2][MULTI_MAX][SUM_MAX];
} multi_group;

struct lqcd_multi {
    multi_group *g;
    int me, up[4], down[4];
    lqcd_faces f;
    cl_mem send, recv, ghost;                /* device faces out and in, links below */
    cl_command_queue xq[BLOCKS], uq[BLOCKS]; /* per face block, down and up
                                  (GPUs); NULL: Q                         */
    cl_event last_h2d[BLOCKS], last_ext;
    long hops, sum_calls;
};

static void nap(int cpu)
{
    if (!cpu) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
}

static clphys_status group_failed(clphys_context *ctx)
{
    return cp_error(ctx, CLPHYS_ERR_OPENCL,
                    "multi-device plan: another device of the group failed (its own "
                    "call returned the cause); the group is unusable");
}

static int barrier(multi_group *g)
{
    const long gen = atomic_load(&g->bar_gen);
    if (atomic_fetch_add(&g->bar_count, 1) == g->n - 1) {
        atomic_store(&g->bar_count, 0);
        atomic_fetch_add(&g->bar_gen, 1);
        return 1;
    }
    for (unsigned spin = 0; atomic_load(&g->bar_gen) == gen; spin++) {
        if (atomic_load(&g->failed)) return 0;
        if (spin > 256) nap(g->nap);
    }
    return 1;
}

/* The solvers' global sum: slots alternate between calls, so one barrier
 * suffices (a slot is written again only after every member passed the
 * next call's barrier, hence finished reading it). */
static clphys_status multi_sum(void *user, double *sums, int n)
{
    clphys_lqcd_dslash_plan *pl = user;
    lqcd_multi *x = pl->multi;
    multi_group *g = x->g;
    if (n > SUM_MAX) {
        atomic_store(&g->failed, 1);
        return cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "multi-device sum: %d values (at most %d)", n, SUM_MAX);
    }
    const int k = (int)(x->sum_calls++ & 1);
    memcpy(g->sums[k][x->me], sums, sizeof(double) * (size_t)n);
    if (!barrier(g)) return group_failed(pl->ctx);
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int m = 0; m < g->n; m++) s += g->sums[k][m][i];
        sums[i] = s;
    }
    return CLPHYS_SUCCESS;
}

/* The hop through the group (the file's comment). */
static clphys_status multi_hop(clphys_lqcd_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity,
                               int g5, double *kernel_s, clphys_lqcd_dslash_split *split)
{
    lqcd_multi *xm = pl->multi;
    multi_group *g = xm->g;
    clphys_context *ctx = pl->ctx;
    if (atomic_load(&g->failed)) return group_failed(ctx);
    const size_t nq = parity < 0 ? 2 : 1, nent = nq * 2 * xm->f.face_all;
    const long s = ++xm->hops;
    const size_t slot = (size_t)(s & 1) * g->slot_bytes;
    char *mine = g->m[xm->me].pin + slot;
    cl_event ev_pack = NULL, ev_int = NULL, ev_ext = NULL, d2h[BLOCKS] = {0}, h2d[BLOCKS] = {0};
    int blk[BLOCKS][2], nb = 0;
    for (int mu = 0; mu < 4; mu++)
        for (int side = 0; side < 2 && xm->f.face_n[mu]; side++) blk[nb][0] = mu, blk[nb][1] = side, nb++;
    cl_kernel k = NULL;
    size_t global = 0, bytes_out = 0;
    const int gpu = xm->xq[0] != NULL;
    clphys_status st = lqcd_pack_launch(pl, xm->send, in, parity, g5, nent, &ev_pack);
    if (!st && !gpu) { /* CPU: the copies first, then the interior */
        bytes_out = nent * lqcd_face_entry_bytes(pl);
        st = cp_read_async(ctx, NULL, xm->send, 0, bytes_out, mine, 1, &ev_pack, &d2h[0]);
    }
    for (int b = 0; b < nb && gpu && !st; b++) {
        size_t len;
        const size_t off = lqcd_face_block(pl, &xm->f, blk[b][0], blk[b][1], nq, &len);
        st = cp_read_async(ctx, xm->xq[b], xm->send, off, len, mine + off, 1, &ev_pack, &d2h[b]);
        if (!st) st = cp_flush(ctx, xm->xq[b]);
        bytes_out += len;
    }
    if (!st) st = lqcd_hop_kernel(pl, out, in, x, a, parity, g5, &k, &global);
    if (!st) st = cp_launch_ev(ctx, k, 1, &global, pl->local ? &pl->local : NULL, &ev_int);
    if (!st) st = cp_flush(ctx, NULL);
    /* the last hop's uploads out of the neighbours' slots done (file comment) */
    for (int b = 0; b < BLOCKS; b++) {
        clphys_status sw = cp_wait(ctx, &xm->last_h2d[b]);
        if (!st) st = sw;
    }
    /* each block published as soon as it is down, and each received block
     * sent up as soon as its sender published it: one block's upload
     * overlaps another's download */
    const unsigned all = (1u << nb) - 1;
    unsigned pub = 0, up = 0;
    for (unsigned spin = 0; !st && (pub != all || up != all); spin++) {
        int moved = 0;
        for (int b = 0; b < nb && !st; b++) {
            int done = 0;
            if (pub >> b & 1 || (st = cp_event_done(ctx, d2h[gpu ? b : 0], &done)) || !done) continue;
            atomic_store_explicit(&g->m[xm->me].ready[b], s, memory_order_release);
            pub |= 1u << b, moved = 1;
        }
        for (int b = 0; b < nb && !st; b++) {
            const int mu = blk[b][0], side = blk[b][1], from = side ? xm->down[mu] : xm->up[mu];
            if (up >> b & 1 || atomic_load_explicit(&g->m[from].ready[b], memory_order_acquire) < s) continue;
            size_t len;
            const size_t off = lqcd_face_block(pl, &xm->f, mu, side, nq, &len);
            cl_command_queue q = gpu ? xm->uq[b] : NULL;
            st = cp_write_async(ctx, q, xm->recv, off, len, g->m[from].pin + slot + off, xm->last_ext ? 1 : 0,
                                &xm->last_ext, &h2d[b]);
            if (!st) st = cp_flush(ctx, q);
            up |= 1u << b, moved = 1;
        }
        if (!st && !moved) {
            if (atomic_load(&g->failed))
                st = group_failed(ctx);
            else if (spin > 256)
                nap(g->nap);
        }
    }
    if (st) { /* no neighbour waits for this device's blocks */
        atomic_store(&g->failed, 1);
        for (int b = 0; b < nb; b++) atomic_store_explicit(&g->m[xm->me].ready[b], s, memory_order_release);
        goto out;
    }
    if (!st && gpu) st = cp_enqueue_wait(ctx, NULL, (cl_uint)nb, h2d);
    size_t nsites = 0;
    if (!st) st = lqcd_exterior_launch(pl, &xm->f, out, xm->recv, xm->ghost, x, a, parity, g5, &nsites, &ev_ext);
    if (!st) st = cp_flush(ctx, NULL);
    /* timing: the exchange is the copies' span on the device clock */
    const lqcd_hop_events he = {ev_pack, ev_int, ev_ext, d2h, h2d, nb, -1, bytes_out, nb, nsites};
    if (!st) st = lqcd_hop_times(pl, parity, &he, kernel_s, split);
    if (st) atomic_store(&g->failed, 1);
out:
    cp_release_event(&ev_pack);
    cp_release_event(&ev_int);
    for (int b = 0; b < BLOCKS; b++) {
        cp_release_event(&d2h[b]);
        xm->last_h2d[b] = h2d[b];
    }
    cp_release_event(&xm->last_ext);
    xm->last_ext = ev_ext;
    return st;
}

void lqcd_multi_fail(clphys_lqcd_dslash_plan *pl)
{
    if (pl && pl->multi) atomic_store(&pl->multi->g->failed, 1);
}

int lqcd_multi_member(const clphys_lqcd_dslash_plan *pl) { return pl && pl->multi ? pl->multi->me : -1; }

void lqcd_multi_release(clphys_lqcd_dslash_plan *pl)
{
    lqcd_multi *x = pl->multi;
    if (!x) return;
    for (int b = 0; b < BLOCKS; b++) cp_wait(pl->ctx, &x->last_h2d[b]);
    cp_wait(pl->ctx, &x->last_ext);
    for (int b = 0; b < BLOCKS; b++) cp_queue_release(&x->xq[b]), cp_queue_release(&x->uq[b]);
    cl_mem *m[] = {&x->send, &x->recv, &x->ghost, &x->f.list};
    for (int i = 0; i < 4; i++) cp_release_mem(m[i]);
    multi_group *g = x->g;
    /* the page-locked slots stay until the group's last plan: a neighbour's
     * copies read them */
    if (g && atomic_fetch_sub(&g->refs, 1) == 1) {
        for (int i = 0; i < g->n; i++) cp_pinned_release(g->m[i].ctx, &g->m[i].pin_m, (void **)&g->m[i].pin);
        free(g);
    }
    free(x);
    pl->multi = NULL;
}

/* The sublattice at coord of the whole field g (local extents ld). */
static clphys_status local_field(const clphys_lqcd_gauge_field *g, const int ld[4], const int coord[4],
                                 clphys_lqcd_gauge_field *loc)
{
    CP_TRY(clphys_lqcd_gauge_create(ld, loc));
    for (size_t l = 0; l < loc->volume; l++) {
        size_t r = l, gs = 0, stride = 1;
        for (int mu = 0; mu < 4; mu++) {
            const size_t c = r % (size_t)ld[mu] + (size_t)coord[mu] * (size_t)ld[mu];
            r /= (size_t)ld[mu];
            gs += c * stride;
            stride *= (size_t)g->dims[mu];
        }
        memcpy(loc->u + l * 72, g->u + gs * 72, 72 * sizeof(double));
    }
    return CLPHYS_SUCCESS;
}

/* The backward hops' links of the device at coord: U_mu of the sites at
 * the upper end of the sublattice below, numbered as that device's faces
 * (halo.c exchanges the same entries between ranks). */
static clphys_status ghost_links(clphys_lqcd_dslash_plan *pl, lqcd_multi *x, const clphys_lqcd_gauge_field *g)
{
    const size_t ng = 2 * x->f.face_all;
    double *links = malloc((ng ? ng : 1) * 18 * sizeof(double));
    void *dev = malloc(lqcd_ghost_bytes(pl, &x->f));
    clphys_status st =
        links && dev ? CLPHYS_SUCCESS : cp_error(pl->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "multi-device plan: ghost links");
    for (int mu = 0; mu < 4 && !st; mu++) {
        const size_t fn = x->f.face_n[mu];
        if (!fn) continue;
        for (size_t l = 0; l < pl->vol; l++) {
            int c[4];
            size_t r = l, gs = 0, stride = 1;
            for (int k = 0; k < 4; k++) c[k] = (int)(r % (size_t)pl->dims[k]), r /= (size_t)pl->dims[k];
            if (c[mu] != pl->dims[mu] - 1) continue;
            for (int k = 0; k < 4; k++) {
                int below = pl->coord[k] - (k == mu);
                if (below < 0) below += pl->grid[k];
                gs += (size_t)(below * pl->dims[k] + c[k]) * stride;
                stride *= (size_t)pl->gdims[k];
            }
            const size_t q = (size_t)((c[0] + c[1] + c[2] + c[3]) & 1);
            const size_t e = q * fn + lqcd_face_index(pl->dims, c, mu, 1);
            memcpy(links + e * 18, g->u + (gs * 4 + (size_t)mu) * 18, 18 * sizeof(double));
        }
        lqcd_ghost_store(pl, &x->f, mu, links, dev);
    }
    if (!st) st = cp_buffer(pl->ctx, CL_MEM_READ_ONLY, lqcd_ghost_bytes(pl, &x->f), dev, &x->ghost);
    free(links), free(dev);
    return st;
}

/* Member k of group g: the plan of its sublattice, faces, buffers. */
static clphys_status member_create(multi_group *g, int k, const int grid[4], const clphys_lqcd_gauge_field *whole,
                                   const clphys_lqcd_dslash_params *p, clphys_lqcd_dslash_plan **out)
{
    clphys_context *ctx = g->m[k].ctx;
    int ld[4], coord[4];
    CP_TRY(clphys_lqcd_grid_local(whole->dims, grid, k, ld, coord));
    clphys_lqcd_gauge_field loc = {{0}, 0, NULL};
    clphys_status st = local_field(whole, ld, coord, &loc);
    if (st) return cp_error(ctx, st, "multi-device plan: %s", clphys_last_error(NULL));
    clphys_lqcd_dslash_plan *pl = NULL;
    clphys_lqcd_dslash_params q = *p;
    q.halo_half = p->halo_half && p->precision == CLPHYS_FP32; /* the only plans that take it */
    st = lqcd_plan_create(ctx, &loc, &q, grid, coord, &pl);
    clphys_lqcd_gauge_destroy(&loc);
    if (st) return st;
    lqcd_multi *x = calloc(1, sizeof *x);
    if (!x) {
        clphys_lqcd_dslash_plan_destroy(pl);
        return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "multi-device plan");
    }
    x->g = g, x->me = k;
    atomic_fetch_add(&g->refs, 1);
    pl->multi = x;
    lqcd_grid_neighbours(grid, coord, x->up, x->down);
    if (pl->parts) {
        st = lqcd_faces_init(pl, &x->f);
        const size_t bytes = 2 * 2 * x->f.face_all * lqcd_face_entry_bytes(pl); /* full fields */
        g->slot_bytes = bytes; /* the same on every member: equal sublattices */
        if (!st) st = cp_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &x->send);
        if (!st) st = cp_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &x->recv);
        if (!st) st = cp_pinned(ctx, 2 * bytes, &g->m[k].pin_m, (void **)&g->m[k].pin);
        if (!st) st = ghost_links(pl, x, whole);
        /* A GPU copies on its own engines while a kernel runs: each face
         * block on a queue of its own.  A CPU device runs one command after
         * another: the copies go on the plan's queue, before the interior. */
        int nb = 0;
        for (int mu = 0; mu < 4; mu++) nb += x->f.face_n[mu] ? 2 : 0;
        for (int b = 0; b < nb && !st && clphys_context_device(ctx)->is_gpu; b++) {
            st = cp_queue_create(ctx, 1, &x->xq[b]);
            if (!st) st = cp_queue_create(ctx, 1, &x->uq[b]);
        }
        if (!st) pl->halo_hop = multi_hop;
    }
    pl->gsum = multi_sum;
    pl->gsum_user = pl;
    if (st) {
        clphys_lqcd_dslash_plan_destroy(pl);
        return st;
    }
    *out = pl;
    return CLPHYS_SUCCESS;
}

/* The message in the thread's error and ctx0's. */
static clphys_status both_error(clphys_context *ctx0, clphys_status st, const char *msg)
{
    cp_error(ctx0, st, "multi-device plan: %s", msg);
    return cp_error(NULL, st, "multi-device plan: %s", msg);
}

clphys_status clphys_lqcd_dslash_plan_create_multi(int n, clphys_context *const *ctxs, const int grid[4],
                                                   const clphys_lqcd_gauge_field *g, const clphys_lqcd_dslash_params *p,
                                                   clphys_lqcd_dslash_plan **plans)
{
    if (!plans || n < 1 || n > MULTI_MAX || !ctxs)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_lqcd_dslash_plan_create_multi: plans or ctxs NULL, or %d devices (1 to %d)", n,
                        MULTI_MAX);
    for (int k = 0; k < n; k++) plans[k] = NULL;
    for (int k = 0; k < n; k++)
        if (!ctxs[k])
            return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_lqcd_dslash_plan_create_multi: context %d NULL",
                            k);
    if (!g || !g->u || !p || !grid) return both_error(ctxs[0], CLPHYS_ERR_INVALID_ARGUMENT, "NULL argument");
    clphys_lqcd_dslash_params pin;
    CP_TRY(CP_PARAMS_IN(ctxs[0], clphys_lqcd_dslash_params, p, halo_half, &pin));
    p = &pin;
    long long size = 1;
    for (int mu = 0; mu < 4; mu++) size *= grid[mu] > 0 ? grid[mu] : 0;
    char msg[1024];
    if (size != n) {
        snprintf(msg, sizeof msg, "grid %dx%dx%dx%d has %lld parts, not the %d devices", grid[0], grid[1], grid[2],
                 grid[3], size, n);
        return both_error(ctxs[0], CLPHYS_ERR_INVALID_ARGUMENT, msg);
    }
    if (clphys_lqcd_grid_local(g->dims, grid, 0, NULL, NULL)) {
        snprintf(msg, sizeof msg, "%s", clphys_last_error(NULL));
        return both_error(ctxs[0], CLPHYS_ERR_INVALID_ARGUMENT, msg);
    }
    multi_group *grp = calloc(1, sizeof *grp);
    if (!grp) return both_error(ctxs[0], CLPHYS_ERR_OUT_OF_MEMORY, "out of host memory");
    grp->n = n;
    atomic_store(&grp->refs, 1); /* this call's, dropped at its end */
    for (int k = 0; k < n; k++) {
        grp->m[k].ctx = ctxs[k];
        grp->nap |= clphys_context_device(ctxs[k])->is_cpu;
    }
    clphys_status st = CLPHYS_SUCCESS;
    for (int k = 0; k < n && !st; k++) st = member_create(grp, k, grid, g, p, &plans[k]);
    if (st) {
        int bad = 0;
        while (bad < n - 1 && plans[bad]) bad++;
        char cause[900];
        snprintf(cause, sizeof cause, "%s", clphys_last_error(ctxs[bad]));
        for (int k = 0; k < n; k++) clphys_lqcd_dslash_plan_destroy(plans[k]), plans[k] = NULL;
        snprintf(msg, sizeof msg, "device %d: %s", bad, cause);
        both_error(ctxs[0], st, msg);
    }
    if (atomic_fetch_sub(&grp->refs, 1) == 1) {
        for (int i = 0; i < n; i++) cp_pinned_release(grp->m[i].ctx, &grp->m[i].pin_m, (void **)&grp->m[i].pin);
        free(grp);
    }
    return st;
}
