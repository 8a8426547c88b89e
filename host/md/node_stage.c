/* node_stage.c — the per-step ghost positions of ranks that share a host
 * through shared memory instead of MPI's messages.
 *
 * On one host Open MPI moves a message through its shared-memory transport
 * with a copy in and a copy out by one core each (bench/md-mpi-notes.md:
 * 0.11-0.18 ms per step for 636 KB, longer than the copies to and from the
 * devices).  Here the sender copies the positions from its page-locked
 * staging into a segment of shared memory the receiver has mapped, and the
 * receiver from there into its own page-locked staging, each copy by a few
 * threads; the message shrinks to a 16-byte header (offset and length) that
 * orders the two copies.  The devices' copies stay page-locked: a copy
 * between a device and pageable memory (the segment) waits for every queue
 * of the device on NVIDIA's OpenCL, including the forces it should overlap.
 *
 * Segments are POSIX shared memory, one per rank, mapped by the ranks that
 * receive from it and unlinked as soon as they have (nothing is left in
 * /dev/shm once a plan is made, and a plan's release unmaps locally: not
 * collective, as clphys_md_mpi_destroy promises).  Each segment holds two
 * halves used on alternate steps: a sender writes a half again two steps
 * later, after the receiver's next header, which the receiver sends only
 * after its copy out of that half.
 *
 * Where the device takes it (node_direct), this rank's segment, or the
 * neighbours' it maps, is covered by a CL_MEM_USE_HOST_PTR buffer, which
 * NVIDIA's OpenCL page-locks: the device then copies straight into it (or
 * out of them) at the speed of its own page-locked staging and beside the
 * forces, and that side's host copy is gone (bench/md-mpi-notes.md, round
 * 13).  Without the buffer such a copy goes through the driver's own
 * staging at a fifth of the speed and waits for every queue of the
 * device. */
#include "md_mpi_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void md_node_stage_copy(const md_ghost_dev *gd, void *dst, const void *src, size_t n)
{
    cp_copy_threads(dst, src, n, gd->node_threads);
}

static void unregister_all(md_ghost_dev *gd)
{
    if (!gd->node_seg_m && !gd->node_maps_m[0]) return;
    /* no copy of the device's may still touch a segment */
    if (gd->copyq) clFinish(gd->copyq);
    cp_finish(gd->ctx);
    cp_release_mem(&gd->node_seg_m);
    for (int i = 0; i < 6; i++) cp_release_mem(&gd->node_maps_m[i]);
}

static void unmap_all(md_ghost_dev *gd)
{
    unregister_all(gd);
    for (int i = 0; i < gd->node_nmaps; i++) munmap(gd->node_maps[i], gd->node_bytes);
    if (gd->node_seg) munmap(gd->node_seg, gd->node_bytes);
    gd->node_seg = NULL, gd->node_nmaps = 0;
    memset(gd->node_peer, 0, sizeof gd->node_peer);
}

/* The segments under buffers: this rank's (MD_DIRECT_SEND) and its
 * neighbours' (MD_DIRECT_RECV); where one is refused its side is copied
 * through hsend or hrecv as before (local: the two sides of a segment
 * choose independently). */
static void register_all(md_ghost_dev *gd)
{
    if ((gd->node_direct & MD_DIRECT_SEND) && !(gd->node_seg_m = cp_lock_host(gd->ctx, gd->node_seg, gd->node_bytes)))
        gd->node_direct &= ~MD_DIRECT_SEND;
    int ok = 1;
    for (int i = 0; ok && (gd->node_direct & MD_DIRECT_RECV) && i < gd->node_nmaps; i++)
        ok = (gd->node_maps_m[i] = cp_lock_host(gd->ctx, gd->node_maps[i], gd->node_bytes)) != NULL;
    if (!ok) {
        for (int i = 0; i < 6; i++) cp_release_mem(&gd->node_maps_m[i]);
        gd->node_direct &= ~MD_DIRECT_RECV;
    }
}

void md_node_stage_close(md_ghost_dev *gd)
{
    unmap_all(gd);
    gd->node_bytes = 0;
}

static void seg_name(char *buf, size_t n, long long pid, long long plan, long long gen)
{
    snprintf(buf, n, "/clphys-md-%lld-%lld-%lld", pid, plan, gen);
}

/* This rank's segment of `bytes` (created, not yet unlinked: *name). */
static clphys_status create_segment(md_ghost_dev *gd, const char *name, size_t bytes)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return cp_error(gd->ctx, CLPHYS_ERR_IO, "md mpi: shm_open %s for the ghost staging failed", name);
    void *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)bytes) == 0) p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        shm_unlink(name);
        return cp_error(gd->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: %zu bytes of shared ghost staging", bytes);
    }
    gd->node_seg = p;
    return CLPHYS_SUCCESS;
}

/* A neighbour's segment, read-only unless the device copies out of it
 * (a driver may refuse to page-lock a mapping it cannot write). */
static clphys_status map_peer(md_ghost_dev *gd, const char *name, void **out)
{
    const int rw = gd->node_direct & MD_DIRECT_RECV;
    int fd = shm_open(name, rw ? O_RDWR : O_RDONLY, 0);
    if (fd < 0) return cp_error(gd->ctx, CLPHYS_ERR_IO, "md mpi: shm_open %s (a neighbour's ghost staging)", name);
    void *p = mmap(NULL, gd->node_bytes, rw ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return cp_error(gd->ctx, CLPHYS_ERR_IO, "md mpi: mmap of %s", name);
    *out = p;
    return CLPHYS_SUCCESS;
}

/* Every rank's segment (created again, `bytes` each) and its neighbours'
 * mapped.  Collective. */
static clphys_status remake(MPI_Comm comm, md_ghost_dev *gd, const md_decomp *d, size_t bytes)
{
    static long long plans; /* one name per plan and generation in a process */
    clphys_context *ctx = gd->ctx;
    unmap_all(gd);
    gd->node_bytes = bytes;
    if (!gd->node_plan) gd->node_plan = ++plans;
    gd->node_gen++;
    long long me[2] = {(long long)getpid(), gd->node_plan}, *all = malloc(2 * (size_t)d->size * sizeof *all);
    char name[96];
    seg_name(name, sizeof name, me[0], me[1], gd->node_gen);
    clphys_status st = all ? create_segment(gd, name, bytes) : cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi");
    int e = MPI_Allgather(me, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, comm);
    if (e != MPI_SUCCESS && !st) st = cp_mpi_error(ctx, e, "MPI_Allgather (ghost staging names)");
    if ((st = cp_mpi_agree(comm, ctx, st))) {
        if (gd->node_seg) shm_unlink(name);
        free(all);
        return st;
    }
    /* the segment of each rank this one receives from (swap c, side:
     * from the neighbour on the other side), mapped once per rank */
    int mapped_rank[6];
    for (int c = 0; c < 3 && !st; c++) {
        if (!d->cut[c]) continue;
        for (int side = 0; side < 2 && !st; side++) {
            const int from = d->nbr[c][1 - side];
            int k = 0;
            while (k < gd->node_nmaps && mapped_rank[k] != from) k++;
            if (k == gd->node_nmaps) {
                char peer[96];
                seg_name(peer, sizeof peer, all[2 * from], all[2 * from + 1], gd->node_gen);
                st = map_peer(gd, peer, &gd->node_maps[k]);
                if (st) break;
                mapped_rank[gd->node_nmaps++] = from;
            }
            gd->node_peer[c][side] = gd->node_maps[k];
        }
    }
    free(all);
    /* unlinked once every rank has mapped what it needs */
    st = cp_mpi_agree(comm, ctx, st);
    shm_unlink(name);
    if (st)
        md_node_stage_close(gd);
    else
        register_all(gd);
    return st;
}

clphys_status md_node_stage_reserve(MPI_Comm comm, md_ghost_dev *gd, const md_decomp *d)
{
    clphys_context *ctx = gd->ctx;
    if (gd->node < 0) {
        /* decided once per plan, the same on every rank: on when every rank
         * shares this host (the communicator is one node's) and a dimension
         * is cut; CLPHYS_MD_NODE_STAGING=0 keeps MPI's messages (to time
         * both, and for the tests) */
        const char *env = getenv("CLPHYS_MD_NODE_STAGING");
        int want = !(env && strcmp(env, "0") == 0) && (d->cut[0] || d->cut[1] || d->cut[2]), on = 0, nsize = 0;
        CP_TRY(cp_mpi_one_host(comm, ctx, want, &on, &nsize));
        gd->node = on;
        /* copy threads (CLPHYS_MD_STAGING_THREADS sets them) */
        gd->node_threads = cp_copy_threads_for(ctx, nsize, "CLPHYS_MD_STAGING_THREADS");
        /* the device copies straight into this rank's segment, and its
         * neighbours' positions come through hrecv: each side done
         * straight removes one of the two host copies; both sides (the
         * same pages under two processes' buffers) made a step of
         * 2,048,000 atoms on two H100 1-2 % slower than neither, though
         * fastest below a million atoms (bench/md-mpi-notes.md, round 13).
         * CLPHYS_MD_NODE_DIRECT sets the sides: 0 none (both through
         * hsend and hrecv by the threads above), 1 this rank's segment, 2
         * the neighbours', 3 both (to time them, and for the tests) */
        const char *de = getenv("CLPHYS_MD_NODE_DIRECT");
        gd->node_direct = de && *de ? atoi(de) & (MD_DIRECT_SEND | MD_DIRECT_RECV) : MD_DIRECT_SEND;
    }
    if (!gd->node) return CLPHYS_SUCCESS;
    /* two halves of the send buffer's capacity, and every rank the same
     * size (the receivers map it without asking) */
    unsigned long long need = 2 * 3 * gd->rs * (gd->send_cap ? gd->send_cap : 1024);
    CP_MPI(ctx, MPI_Allreduce(MPI_IN_PLACE, &need, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm));
    if (need <= gd->node_bytes) return CLPHYS_SUCCESS;
    size_t bytes = (size_t)need, page = cp_page_size();
    bytes = (bytes + bytes / 4 + page - 1) / page * page;
    return remake(comm, gd, d, bytes);
}
