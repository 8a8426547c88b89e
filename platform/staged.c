/* staged.c — large transfers between pageable host memory and a GPU's
 * buffer, through a few page-locked chunks.
 *
 * Why: on the H200 hosts a Poisson solve from host arrays of 537 MB spent
 * 0.42-0.44 s in its copies up and down (and its check of the right-hand
 * side); through these chunks, the copies and the check by 8 threads,
 * 0.086 s (bench/poisson-notes.md, section 13).  Page-locked copies run at
 * 47-55 GB/s from 4 MiB up (../shared/DEVICE.md); a chunk's bus copy, to or
 * from its page-locked slot, overlaps the host copies of the chunks beside
 * it.
 *
 * The slots are the context's (CL_MEM_ALLOC_HOST_PTR buffers mapped for its
 * life), made at its first large transfer.  Like the context's queue and
 * error text they serve one thread at a time.  CPU devices copy directly
 * (their "device" memory is host memory already), and so does a process
 * with one core for the host copies. */
#include "platform.h"

#include <stdlib.h>

enum { SLOTS = 3 };

struct cp_stage {
    cl_mem m[SLOTS];
    void *h[SLOTS];
    size_t chunk;
    int threads;
};

/* 8 MiB chunks: page-locked copies reach 47-55 GB/s from 4 MiB up
 * (../shared/DEVICE.md); transfers below 4 MiB go directly. */
#define STAGE_CHUNK ((size_t)8 << 20)
#define STAGE_MIN   ((size_t)4 << 20)

void cp_stage_release(clphys_context *ctx)
{
    cp_stage *s = ctx->stage;
    if (!s) return;
    for (int i = 0; i < SLOTS; i++) cp_pinned_release(ctx, &s->m[i], &s->h[i]);
    free(s);
    ctx->stage = NULL;
}

void cp_stage_set(clphys_context *ctx, size_t min_bytes, size_t chunk)
{
    cp_stage_release(ctx);
    ctx->stage_min = min_bytes, ctx->stage_chunk = chunk;
    ctx->stage_failed = 0;
}

int cp_stage_wanted(const clphys_context *ctx, size_t bytes)
{
    if (ctx->stage_failed || ctx->stage_min == CP_STAGE_NEVER) return 0;
    if (ctx->stage_min) return bytes >= ctx->stage_min;
    /* one thread's memcpy, 7-11 GB/s, is no faster than the driver's own
     * pageable path: a process bound to one core copies directly */
    return !ctx->info.is_cpu && bytes >= STAGE_MIN && cp_copy_threads_for(ctx, 1, NULL) >= 2;
}

/* The context's slots, made on first use; NULL where the device refuses
 * page-locked buffers (cp_stage_ready then says no, now and later). */
static cp_stage *stage_get(clphys_context *ctx)
{
    if (ctx->stage) return ctx->stage;
    cp_stage *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->chunk = ctx->stage_chunk ? ctx->stage_chunk : STAGE_CHUNK;
    s->threads = cp_copy_threads_for(ctx, 1, NULL);
    ctx->stage = s;
    for (int i = 0; i < SLOTS; i++)
        if (cp_pinned(ctx, s->chunk, &s->m[i], &s->h[i])) {
            cp_stage_release(ctx);
            ctx->stage_failed = 1;
            ctx->err[0] = 0; /* not the caller's error: it copies directly */
            return NULL;
        }
    return s;
}

/* Wait for the events still out after a failure; the first status stays. */
static clphys_status drain(clphys_context *ctx, cl_event ev[SLOTS], clphys_status st)
{
    for (int i = 0; i < SLOTS; i++) {
        clphys_status w = ev[i] ? cp_wait(ctx, &ev[i]) : CLPHYS_SUCCESS;
        if (!st) st = w;
    }
    return st;
}

int cp_stage_ready(clphys_context *ctx, size_t bytes) { return cp_stage_wanted(ctx, bytes) && stage_get(ctx); }

/* chunk k's bytes, of nc chunks of C */
static size_t chunk_len(size_t k, size_t nc, size_t C, size_t bytes) { return k + 1 < nc ? C : bytes - k * C; }

clphys_status cp_staged_read(clphys_context *ctx, cl_mem m, size_t offset, size_t bytes, void *dst)
{
    const cp_stage *s = ctx->stage;
    const size_t C = s->chunk, nc = (bytes + C - 1) / C;
    cl_event ev[SLOTS] = {NULL};
    clphys_status st = CLPHYS_SUCCESS;
    size_t next = 0; /* the next chunk to put on the queue */
    for (; next < nc && next < SLOTS && !st; next++)
        st = cp_read_async(ctx, NULL, m, offset + next * C, chunk_len(next, nc, C, bytes), s->h[next % SLOTS], 0, NULL,
                           &ev[next % SLOTS]);
    if (!st) st = cp_flush(ctx, NULL);
    for (size_t k = 0; k < nc && !st; k++) {
        const size_t slot = k % SLOTS;
        if ((st = cp_wait(ctx, &ev[slot]))) break;
        cp_copy_threads((char *)dst + k * C, s->h[slot], chunk_len(k, nc, C, bytes), s->threads);
        if (next < nc) {
            st = cp_read_async(ctx, NULL, m, offset + next * C, chunk_len(next, nc, C, bytes), s->h[slot], 0, NULL,
                               &ev[slot]);
            next++;
            if (!st) st = cp_flush(ctx, NULL);
        }
    }
    return drain(ctx, ev, st);
}

clphys_status cp_staged_write(clphys_context *ctx, cl_mem m, size_t offset, size_t bytes, const void *src)
{
    const cp_stage *s = ctx->stage;
    const size_t C = s->chunk, nc = (bytes + C - 1) / C;
    cl_event ev[SLOTS] = {NULL};
    clphys_status st = CLPHYS_SUCCESS;
    for (size_t k = 0; k < nc && !st; k++) {
        const size_t slot = k % SLOTS;
        /* the slot's last chunk has left it */
        if (ev[slot] && (st = cp_wait(ctx, &ev[slot]))) break;
        cp_copy_threads(s->h[slot], (const char *)src + k * C, chunk_len(k, nc, C, bytes), s->threads);
        st = cp_write_async(ctx, NULL, m, offset + k * C, chunk_len(k, nc, C, bytes), s->h[slot], 0, NULL, &ev[slot]);
        if (!st) st = cp_flush(ctx, NULL);
    }
    return drain(ctx, ev, st);
}
