/* halo_node.c — a hop's faces between ranks of one host through shared
 * memory instead of MPI's messages (halo.c).
 *
 * Open MPI moves a message between two processes of one host with a copy in
 * and a copy out by one core each: about 1.5 ms for the 2 x 5.3 MB faces of
 * a 48^3 x 96 hop, against a 0.92 ms interior kernel that should hide it
 * (issue 27's measurement on 2 x H200).  Here the faces go from the sending
 * device straight into the sender's segment of an MPI-3 shared window and
 * from there straight into the receiving device: each side's segment is
 * covered by a CL_MEM_USE_HOST_PTR buffer, which NVIDIA's OpenCL page-locks,
 * so both copies run at the bus's speed (the MD path's finding,
 * bench/md-mpi-notes.md, round 13).  Where a driver refuses such a buffer,
 * that side is copied through the page-locked staging by a few host
 * threads.  The messages shrink to empty ones that order the two sides.
 *
 * Each segment holds two halves used on alternate hops: a rank writes a half
 * again two hops later, after its neighbours' empty messages of the hop in
 * between, which each of them sends only after its copy out of that half
 * has ended (halo.c waits for the last upload before it posts). */
#include "lqcd_mpi_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PEERS 8

struct lqcd_node {
    clphys_context *ctx;
    MPI_Win win;
    size_t half;  /* bytes of one half (a page multiple)           */
    char *seg;    /* this rank's segment, page-aligned             */
    cl_mem seg_m; /* the buffer over it (NULL: copied by threads)   */
    int npeer;    /* the neighbours' segments, mapped by the window */
    int peer_rank[MAX_PEERS];
    char *peer[MAX_PEERS];
    cl_mem peer_m[MAX_PEERS]; /* buffers over them: all, or none (copied) */
    int parity;               /* the half of the next hop                 */
    int threads;              /* host copies where a side has no buffer   */
};

static char *page_up(void *p)
{
    const uintptr_t pg = (uintptr_t)cp_page_size();
    return (char *)(((uintptr_t)p + pg - 1) / pg * pg);
}

void lqcd_node_destroy(lqcd_node *n)
{
    if (!n) return;
    /* no copy of the device's may still touch a segment */
    cp_finish(n->ctx);
    cp_release_mem(&n->seg_m);
    for (int i = 0; i < n->npeer; i++) cp_release_mem(&n->peer_m[i]);
    if (n->win != MPI_WIN_NULL) MPI_Win_free(&n->win);
    free(n);
}

clphys_status lqcd_node_create(MPI_Comm comm, clphys_context *ctx, size_t bytes, const int *ranks, int nranks,
                               lqcd_node **out)
{
    *out = NULL;
    /* on where every rank shares this host; CLPHYS_LQCD_NODE_STAGING=0 keeps
     * MPI's messages (to time both, and for the tests).  CLPHYS_LQCD_NODE_DIRECT
     * sets which sides the devices copy straight: 1 this rank's segment, 2
     * the neighbours', 3 both (the default), 0 neither (to time them, and for
     * the tests) */
    const char *env = getenv("CLPHYS_LQCD_NODE_STAGING"), *de = getenv("CLPHYS_LQCD_NODE_DIRECT");
    const int direct = de && *de ? atoi(de) & 3 : 3;
    int size = 0, on = 0, nsize = 0;
    MPI_Comm_size(comm, &size);
    CP_TRY(cp_mpi_one_host(comm, ctx, !(env && strcmp(env, "0") == 0) && size > 1, &on, &nsize));
    if (!on) return CLPHYS_SUCCESS;
    lqcd_node *n = calloc(1, sizeof *n);
    clphys_status st = n ? CLPHYS_SUCCESS : cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "halo: shared staging");
    if (n) n->ctx = ctx, n->win = MPI_WIN_NULL, n->threads = cp_copy_threads_for(ctx, size, NULL);
    /* each rank's segment on its own pages (one page more, to align it) */
    const size_t pg = cp_page_size();
    if (n) n->half = (bytes + pg - 1) / pg * pg;
    MPI_Info info = MPI_INFO_NULL;
    void *base = NULL;
    if (!st) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
    }
    /* collective: every rank takes part (with 0 bytes after a failure) */
    const MPI_Aint want = st ? 0 : (MPI_Aint)(2 * n->half + pg);
    MPI_Win win = MPI_WIN_NULL;
    const int e = MPI_Win_allocate_shared(want, 1, info, comm, &base, &win);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    if (n) n->win = win;
    if (!st && e != MPI_SUCCESS) st = cp_mpi_error(ctx, e, "MPI_Win_allocate_shared (halo staging)");
    if (!st) n->seg = page_up(base);
    for (int i = 0; !st && i < nranks; i++) {
        int k = 0;
        while (k < n->npeer && n->peer_rank[k] != ranks[i]) k++;
        if (k < n->npeer || ranks[i] < 0) continue;
        if (k == MAX_PEERS) {
            st = cp_error(ctx, CLPHYS_ERR_UNSUPPORTED, "halo: more than %d neighbours", MAX_PEERS);
            break;
        }
        MPI_Aint sz = 0;
        int du = 0;
        void *p = NULL;
        const int q = MPI_Win_shared_query(win, ranks[i], &sz, &du, &p);
        if (q != MPI_SUCCESS || !p || (size_t)sz < 2 * n->half + pg) {
            st = q != MPI_SUCCESS ? cp_mpi_error(ctx, q, "MPI_Win_shared_query (halo staging)")
                                  : cp_error(ctx, CLPHYS_ERR_IO, "halo: rank %d's shared staging is missing", ranks[i]);
            break;
        }
        n->peer_rank[k] = ranks[i], n->peer[k] = page_up(p), n->npeer++;
    }
    /* the buffers over the segments, where the driver takes them (local:
     * a side without one is copied by threads) */
    if (!st && (direct & 1)) n->seg_m = cp_lock_host(ctx, n->seg, 2 * n->half);
    int all = !st && (direct & 2);
    for (int k = 0; all && k < n->npeer; k++) all = (n->peer_m[k] = cp_lock_host(ctx, n->peer[k], 2 * n->half)) != NULL;
    if (!all) /* the receiving side is one way for every face */
        for (int k = 0; k < n->npeer; k++) cp_release_mem(&n->peer_m[k]);
    st = cp_mpi_agree(comm, ctx, st);
    if (st) {
        /* MPI_Win_free: collective, every rank is here */
        if (n)
            lqcd_node_destroy(n);
        else if (win != MPI_WIN_NULL)
            MPI_Win_free(&win);
        return st;
    }
    *out = n;
    return CLPHYS_SUCCESS;
}

char *lqcd_node_out(const lqcd_node *n) { return n->seg + (n->parity ? n->half : 0); }

int lqcd_node_out_direct(const lqcd_node *n) { return n->seg_m != NULL; }

int lqcd_node_in_direct(const lqcd_node *n) { return n->npeer > 0 && n->peer_m[0] != NULL; }

const char *lqcd_node_in(const lqcd_node *n, int rank)
{
    for (int k = 0; k < n->npeer; k++)
        if (n->peer_rank[k] == rank) return n->peer[k] + (n->parity ? n->half : 0);
    return NULL;
}

void lqcd_node_flip(lqcd_node *n) { n->parity ^= 1; }

int lqcd_node_threads(const lqcd_node *n) { return n->threads; }
