/* transfer.c — b in and x out of a lattice solve (lqcd_internal.h): the
 * caller's array <-> a page-locked staging array (host threads) <-> the
 * device copy in the caller's layout (DMA) <-> the even and odd fields
 * (spinor_import/export on the device).  Page-locked memory moves 2-3x
 * faster than the caller's pageable array on the H100; in pieces, the host
 * copy of one overlaps the DMA of the one before (bench/lqcd-notes.md).
 * Without page-locked memory the transfers go from the caller's array. */
#include "lqcd_internal.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* On a GPU the pieces overlap host copies and DMA; on a CPU device the "DMA"
 * is a copy on the same cores, so one piece. */
#define GPU_PIECES 8

struct lqcd_transfer {
    clphys_lqcd_dslash_plan *pl; /* fp64: its import/export kernels              */
    cl_mem host;                 /* b and x in the caller's layout, on the device */
    cl_mem pinned;               /* page-locked staging, mapped at pin for the    */
    double *pin;                 /* transfer's life (NULL: none to be had)       */
    int pieces;
};

/* dst = src, n doubles, one contiguous 64-byte-aligned share per host thread */
static void host_copy(double *dst, const double *src, size_t n)
{
#pragma omp parallel
    {
        int nt = 1, t = 0;
#ifdef _OPENMP
        nt = omp_get_num_threads(), t = omp_get_thread_num();
#endif
        size_t per = (n + (size_t)nt - 1) / (size_t)nt;
        per = (per + 7) & ~(size_t)7;
        size_t a = (size_t)t * per, e = a + per < n ? a + per : n;
        if (a < e) memcpy(dst + a, src + a, (e - a) * sizeof(double));
    }
}

/* Piece c of nch over n doubles: [*off, *off + *len), 4 KiB aligned */
static void piece(size_t n, int nch, int c, size_t *off, size_t *len)
{
    size_t per = (n + (size_t)nch - 1) / (size_t)nch;
    per = (per + 511) & ~(size_t)511;
    *off = (size_t)c * per < n ? (size_t)c * per : n;
    *len = *off + per < n ? per : n - *off;
}

void lqcd_transfer_destroy(lqcd_transfer *t)
{
    if (!t) return;
    cp_pinned_release(t->pl->ctx, &t->pinned, (void **)&t->pin);
    cp_release_mem(&t->host);
    free(t);
}

clphys_status lqcd_transfer_create(clphys_lqcd_dslash_plan *p64, lqcd_transfer **out)
{
    clphys_context *ctx = p64->ctx;
    lqcd_transfer *t = calloc(1, sizeof *t);
    if (!t) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "lqcd transfer");
    t->pl = p64;
    t->pieces = clphys_context_device(ctx)->is_gpu ? GPU_PIECES : 1;
    clphys_status st = clphys_lqcd_dslash_field_create(p64, 0, &t->host); /* 24 V doubles, like the host array */
    if (st) {
        lqcd_transfer_destroy(t);
        return st;
    }
    const size_t bytes = p64->vol * 24 * sizeof(double);
    /* no page-locked memory (t->pin NULL): transfers from the caller's array */
    cp_pinned(ctx, bytes, &t->pinned, (void **)&t->pin);
    *out = t;
    return CLPHYS_SUCCESS;
}

clphys_status lqcd_transfer_upload(lqcd_transfer *t, const double *b, cl_mem even, cl_mem odd)
{
    clphys_lqcd_dslash_plan *pl = t->pl;
    clphys_context *ctx = pl->ctx;
    size_t n = pl->vol;
    const size_t nd = n * 24;
    if (t->pin) {
        for (int c = 0; c < t->pieces; c++) {
            size_t off, len;
            piece(nd, t->pieces, c, &off, &len);
            if (!len) continue;
            host_copy(t->pin + off, b + off, len);
            CP_TRY(cp_write_async(ctx, NULL, t->host, off * sizeof(double), len * sizeof(double), t->pin + off, 0, NULL,
                                  NULL));
            CP_TRY(cp_flush(ctx, NULL));
        }
    } else {
        CP_TRY(cp_write(ctx, t->host, 0, nd * sizeof(double), b));
    }
    CP_TRY(CP_ARGS(ctx, pl->imp, even, odd, t->host));
    return cp_launch(ctx, pl->imp, 1, &n, NULL, NULL);
}

clphys_status lqcd_transfer_download(lqcd_transfer *t, cl_mem even, cl_mem odd, double *x)
{
    clphys_lqcd_dslash_plan *pl = t->pl;
    clphys_context *ctx = pl->ctx;
    size_t n = pl->vol;
    const size_t nd = n * 24;
    CP_TRY(CP_ARGS(ctx, pl->exp, t->host, even, odd));
    CP_TRY(cp_launch(ctx, pl->exp, 1, &n, NULL, NULL));
    if (!t->pin) return cp_read(ctx, t->host, 0, nd * sizeof(double), x);
    cl_event ev[GPU_PIECES] = {NULL};
    clphys_status st = CLPHYS_SUCCESS;
    for (int c = 0; c < t->pieces && !st; c++) {
        size_t off, len;
        piece(nd, t->pieces, c, &off, &len);
        if (len)
            st = cp_read_async(ctx, NULL, t->host, off * sizeof(double), len * sizeof(double), t->pin + off, 0, NULL,
                               &ev[c]);
    }
    if (!st) st = cp_flush(ctx, NULL);
    /* the pieces in order, each copied out as soon as it is on the host */
    for (int c = 0; c < t->pieces; c++) {
        size_t off, len;
        piece(nd, t->pieces, c, &off, &len);
        clphys_status sw = cp_wait(ctx, &ev[c]); /* NULL-safe: waits for every read started */
        if (!st && len) st = sw;
        if (!st && len) host_copy(x + off, t->pin + off, len);
    }
    return st;
}
