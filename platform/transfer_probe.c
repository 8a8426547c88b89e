/* transfer_probe.c — host-device transfer limits (clphys_measure_transfers):
 * page-locked copies each way and both at once, and one host thread's
 * memory copy, the terms of every exchange floor (bench/lqcd-notes.md). */
#include "platform.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One round: d2h alone, h2d alone, both at once (on two queues), each on
 * the host clock from enqueue to completion (what an exchange waits). */
static clphys_status round_times(clphys_context *ctx, cl_command_queue q[2], cl_mem dev[2], char *pin[2], size_t bytes,
                                 double t[3])
{
    cl_event e[2] = {NULL, NULL};
    double t0 = cp_now();
    CP_TRY(cp_read_async(ctx, q[0], dev[0], 0, bytes, pin[0], 0, NULL, &e[0]));
    CP_TRY(cp_wait(ctx, &e[0]));
    t[0] = cp_now() - t0;
    t0 = cp_now();
    CP_TRY(cp_write_async(ctx, q[1], dev[1], 0, bytes, pin[1], 0, NULL, &e[1]));
    CP_TRY(cp_wait(ctx, &e[1]));
    t[1] = cp_now() - t0;
    t0 = cp_now();
    clphys_status st = cp_read_async(ctx, q[0], dev[0], 0, bytes, pin[0], 0, NULL, &e[0]);
    if (!st) st = cp_write_async(ctx, q[1], dev[1], 0, bytes, pin[1], 0, NULL, &e[1]);
    if (!st) st = cp_flush(ctx, q[0]);
    if (!st) st = cp_flush(ctx, q[1]);
    clphys_status s0 = cp_wait(ctx, &e[0]), s1 = cp_wait(ctx, &e[1]);
    t[2] = cp_now() - t0;
    return st ? st : s0 ? s0 : s1;
}

clphys_status clphys_measure_transfers(clphys_context *ctx, size_t bytes, int repeat, clphys_transfer_limits *t)
{
    if (!ctx || !t) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_measure_transfers: NULL argument");
    memset(t, 0, sizeof *t);
    if (!bytes) bytes = (size_t)16 << 20;
    if (repeat <= 0) repeat = 9;
    const clphys_device_info *d = clphys_context_device(ctx);
    if (d->max_alloc_bytes && bytes > d->max_alloc_bytes / 2) bytes = (size_t)(d->max_alloc_bytes / 2);
    cl_command_queue q[2] = {NULL, NULL};
    cl_mem dev[2] = {NULL, NULL}, pin_m[2] = {NULL, NULL};
    char *pin[2] = {NULL, NULL}, *a = NULL, *b = NULL;
    double *v = calloc(4 * (size_t)repeat, sizeof *v);
    clphys_status st = v ? CLPHYS_SUCCESS : cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "transfer probe");
    for (int i = 0; i < 2 && !st; i++) {
        st = cp_queue_create(ctx, 0, &q[i]);
        if (!st) st = cp_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &dev[i]);
        if (!st) st = cp_pinned(ctx, bytes, &pin_m[i], (void **)&pin[i]);
        if (!st) memset(pin[i], i + 1, bytes);
    }
    double w[3];
    if (!st) st = round_times(ctx, q, dev, pin, bytes, w); /* warm-up */
    for (int r = 0; r < repeat && !st; r++) {
        st = round_times(ctx, q, dev, pin, bytes, w);
        for (int k = 0; k < 3; k++) v[k * repeat + r] = w[k];
    }
    /* one host thread's copy, pages touched first (as MPI's shared-memory
     * path copies a message) */
    if (!st && (!(a = malloc(bytes)) || !(b = malloc(bytes))))
        st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "transfer probe: host buffers");
    if (!st) {
        memset(a, 1, bytes), memset(b, 2, bytes);
        for (int r = 0; r < repeat; r++) {
            const double t0 = cp_now();
            memcpy(r % 2 ? a : b, r % 2 ? b : a, bytes);
            v[3 * repeat + r] = cp_now() - t0;
        }
    }
    if (!st) {
        double *m[4] = {&t->d2h_bytes_per_s, &t->h2d_bytes_per_s, &t->duplex_bytes_per_s, &t->host_copy_bytes_per_s};
        for (int k = 0; k < 4; k++) {
            const double s = median(v + (size_t)k * repeat, repeat);
            *m[k] = s > 0 ? (double)bytes / s : 0;
        }
        t->bytes = bytes;
        t->repeat = repeat;
    }
    for (int i = 0; i < 2; i++) {
        cp_queue_release(&q[i]);
        cp_pinned_release(ctx, &pin_m[i], (void **)&pin[i]);
        cp_release_mem(&dev[i]);
    }
    free(a), free(b), free(v);
    return st;
}
