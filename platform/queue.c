/* queue.c — further command queues, asynchronous transfers with events,
 * mapping, markers and kernel limits: the OpenCL calls host/ code needs
 * beyond blocking reads and writes, each with its error checked. */
#include "platform.h"

static cl_command_queue queue_or_main(clphys_context *ctx, cl_command_queue q) { return q ? q : ctx->queue; }

clphys_status cp_queue_create(clphys_context *ctx, int profiling, cl_command_queue *q)
{
    cl_int e;
    *q = clCreateCommandQueue(ctx->context, ctx->device, profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &e);
    if (e != CL_SUCCESS) {
        *q = NULL;
        return cp_cl_error(ctx, e, "clCreateCommandQueue (a further in-order queue)");
    }
    return CLPHYS_SUCCESS;
}

void cp_queue_release(cl_command_queue *q)
{
    if (q && *q) {
        clFinish(*q);
        clReleaseCommandQueue(*q);
        *q = NULL;
    }
}

/* ctx's queue and *q exchange places, the new one behind the old one's
 * work (a marker and a barrier); where that cannot be enqueued the old one
 * is finished instead.  They exchange places whatever fails. */
static clphys_status switch_queue(clphys_context *ctx, cl_command_queue *q)
{
    cl_event ev = NULL;
    clphys_status st = cp_marker(ctx, NULL, &ev);
    if (st) clFinish(ctx->queue);
    cl_command_queue old = ctx->queue;
    ctx->queue = *q, *q = old;
    if (!st) st = cp_enqueue_wait(ctx, NULL, 1, &ev);
    if (st) clFinish(old);
    cp_release_event(&ev);
    return st;
}

clphys_status cp_untimed_begin(clphys_context *ctx, int timed, cl_command_queue *untimed_q, int *on)
{
    *on = 0;
    if (timed || ctx->span_on || ctx->prof || !ctx->profiling) return CLPHYS_SUCCESS;
    if (!*untimed_q) { /* a device that refuses a further queue runs on ctx's: no error to report */
        cl_int e = CL_SUCCESS;
        cl_command_queue q = clCreateCommandQueue(ctx->context, ctx->device, 0, &e);
        if (e != CL_SUCCESS || !q) return CLPHYS_SUCCESS;
        *untimed_q = q;
    }
    *on = 1;
    clphys_status st = switch_queue(ctx, untimed_q);
    if (st) cp_untimed_end(ctx, untimed_q, on);
    return st;
}

clphys_status cp_untimed_end(clphys_context *ctx, cl_command_queue *untimed_q, int *on)
{
    if (!*on) return CLPHYS_SUCCESS;
    *on = 0;
    return switch_queue(ctx, untimed_q);
}

clphys_status cp_flush(clphys_context *ctx, cl_command_queue q)
{
    CP_CL(ctx, clFlush(queue_or_main(ctx, q)));
    return CLPHYS_SUCCESS;
}

clphys_status cp_finish_queue(clphys_context *ctx, cl_command_queue q)
{
    CP_CL(ctx, clFinish(queue_or_main(ctx, q)));
    return CLPHYS_SUCCESS;
}

clphys_status cp_read_async(clphys_context *ctx, cl_command_queue q, cl_mem m, size_t offset, size_t bytes, void *dst,
                            cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    if (ev) *ev = NULL;
    CP_CL(ctx,
          clEnqueueReadBuffer(queue_or_main(ctx, q), m, CL_FALSE, offset, bytes, dst, nwait, nwait ? wait : NULL, ev));
    return CLPHYS_SUCCESS;
}

clphys_status cp_write_async(clphys_context *ctx, cl_command_queue q, cl_mem m, size_t offset, size_t bytes,
                             const void *src, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    if (ev) *ev = NULL;
    CP_CL(ctx,
          clEnqueueWriteBuffer(queue_or_main(ctx, q), m, CL_FALSE, offset, bytes, src, nwait, nwait ? wait : NULL, ev));
    return CLPHYS_SUCCESS;
}

clphys_status cp_copy(clphys_context *ctx, cl_mem src, size_t src_offset, cl_mem dst, size_t dst_offset, size_t bytes)
{
    if (bytes == 0) return CLPHYS_SUCCESS;
    CP_CL(ctx, clEnqueueCopyBuffer(ctx->queue, src, dst, src_offset, dst_offset, bytes, 0, NULL, NULL));
    return CLPHYS_SUCCESS;
}

clphys_status cp_marker(clphys_context *ctx, cl_command_queue q, cl_event *ev)
{
    *ev = NULL;
    CP_CL(ctx, clEnqueueMarkerWithWaitList(queue_or_main(ctx, q), 0, NULL, ev));
    return CLPHYS_SUCCESS;
}

clphys_status cp_wait(clphys_context *ctx, cl_event *ev)
{
    if (!ev || !*ev) return CLPHYS_SUCCESS;
    cl_int e = clWaitForEvents(1, ev);
    clReleaseEvent(*ev);
    *ev = NULL;
    return e == CL_SUCCESS ? CLPHYS_SUCCESS : cp_cl_error(ctx, e, "clWaitForEvents");
}

void cp_release_event(cl_event *ev)
{
    if (ev && *ev) {
        clReleaseEvent(*ev);
        *ev = NULL;
    }
}

clphys_status cp_map(clphys_context *ctx, cl_mem m, cl_map_flags flags, size_t bytes, void **host)
{
    cl_int e = CL_SUCCESS;
    *host = clEnqueueMapBuffer(ctx->queue, m, CL_TRUE, flags, 0, bytes, 0, NULL, NULL, &e);
    if (!*host || e != CL_SUCCESS) {
        *host = NULL;
        return cp_cl_error(ctx, e != CL_SUCCESS ? e : CL_MAP_FAILURE, "clEnqueueMapBuffer");
    }
    return CLPHYS_SUCCESS;
}

void cp_unmap(clphys_context *ctx, cl_mem m, void **host)
{
    if (!host || !*host) return;
    clEnqueueUnmapMemObject(ctx->queue, m, *host, 0, NULL, NULL);
    clFinish(ctx->queue); /* the mapping is gone before the buffer may be released */
    *host = NULL;
}

clphys_status cp_pinned(clphys_context *ctx, size_t bytes, cl_mem *m, void **host)
{
    *host = NULL;
    clphys_status st = cp_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, m);
    if (!st) st = cp_map(ctx, *m, CL_MAP_READ | CL_MAP_WRITE, bytes, host);
    if (st) cp_release_mem(m);
    return st;
}

void cp_pinned_release(clphys_context *ctx, cl_mem *m, void **host)
{
    if (m && *m) cp_unmap(ctx, *m, host);
    cp_release_mem(m);
}

clphys_status cp_kernel_limits(clphys_context *ctx, cl_kernel k, size_t *max_work_group, cl_ulong *local_mem)
{
    size_t wg = 0;
    cl_ulong lm = 0;
    CP_CL(ctx, clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
    CP_CL(ctx, clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof lm, &lm, NULL));
    if (max_work_group) *max_work_group = wg;
    if (local_mem) *local_mem = lm;
    return CLPHYS_SUCCESS;
}

clphys_status cp_event_done(clphys_context *ctx, cl_event ev, int *done)
{
    *done = 1;
    if (!ev) return CLPHYS_SUCCESS;
    cl_int s = CL_COMPLETE;
    CP_CL(ctx, clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL));
    if (s < 0) return cp_cl_error(ctx, s, "a command that was waited for (its execution status)");
    *done = s == CL_COMPLETE;
    return CLPHYS_SUCCESS;
}

clphys_status cp_enqueue_wait(clphys_context *ctx, cl_command_queue q, cl_uint nwait, const cl_event *wait)
{
    if (nwait == 0) return CLPHYS_SUCCESS;
    CP_CL(ctx, clEnqueueBarrierWithWaitList(queue_or_main(ctx, q), nwait, wait, NULL));
    return CLPHYS_SUCCESS;
}

clphys_status cp_wait_all(clphys_context *ctx, cl_uint n, const cl_event *ev)
{
    cl_event live[64];
    cl_uint k = 0;
    for (cl_uint i = 0; i < n; i++) {
        if (ev[i]) live[k++] = ev[i];
        if (k == 64 || (i + 1 == n && k)) {
            CP_CL(ctx, clWaitForEvents(k, live));
            k = 0;
        }
    }
    return CLPHYS_SUCCESS;
}
