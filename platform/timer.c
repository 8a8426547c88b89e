/* timer.c — kernel launches: enqueue with an optional wait for the
 * kernel's time, spans of back-to-back launches.  Times come from clock.c;
 * with CLPHYS_PROFILE every launch's event goes to profile.c. */
#include "platform.h"

size_t cp_round_up(size_t x, size_t m) { return m ? (x + m - 1) / m * m : x; }

/* Enqueue k on ctx's queue.  want: the caller needs the event (to wait for
 * it, time it or hand it out). */
static clphys_status enqueue_at(clphys_context *ctx, cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *offset,
                                const size_t *global, const size_t *local, int want, cl_event *out)
{
    cl_event ev = NULL;
    *out = NULL;
    int keep = !want && ctx->span_on && !ctx->span_first && !q;
    cl_int e = clEnqueueNDRangeKernel(q ? q : ctx->queue, k, dim, offset, global, local, 0, NULL,
                                      want || keep || ctx->prof ? &ev : NULL);
    if (e != CL_SUCCESS) {
        char name[128] = "?";
        clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
        clphys_status st = cp_cl_error(ctx, e, "clEnqueueNDRangeKernel");
        cp_error_append(ctx, "(kernel %s, global %zu, local %zu)", name, global[0], local ? local[0] : 0);
        return st;
    }
    if (keep) {
        ctx->span_first = ev;
        if (ctx->prof) clRetainEvent(ev); /* both keep it */
    }
    if (ctx->prof) {
        if (want) clRetainEvent(ev); /* the profile and the caller both keep it */
        cp_profile_add(ctx, k, ev);
    }
    if (want)
        *out = ev;
    else if (ev && !keep && !ctx->prof)
        clReleaseEvent(ev);
    return CLPHYS_SUCCESS;
}

static clphys_status enqueue(clphys_context *ctx, cl_kernel k, cl_uint dim, const size_t *global, const size_t *local,
                             int want, cl_event *out)
{
    return enqueue_at(ctx, NULL, k, dim, NULL, global, local, want, out);
}

clphys_status cp_launch_at(clphys_context *ctx, cl_kernel k, size_t offset, size_t global, size_t local)
{
    if (!global) return CLPHYS_SUCCESS;
    cl_event ev;
    return enqueue_at(ctx, NULL, k, 1, &offset, &global, local ? &local : NULL, 0, &ev);
}

clphys_status cp_launch_on(clphys_context *ctx, cl_command_queue q, cl_kernel k, size_t global, size_t local)
{
    if (!global) return CLPHYS_SUCCESS;
    cl_event ev;
    return enqueue_at(ctx, q, k, 1, NULL, &global, local ? &local : NULL, 0, &ev);
}

clphys_status cp_launch(clphys_context *ctx, cl_kernel k, cl_uint dim, const size_t *global, const size_t *local,
                        double *kernel_s)
{
    for (cl_uint d = 0; d < dim; d++)
        if (global[d] == 0) return CLPHYS_SUCCESS; /* nothing to do: an empty range is not an error */
    cl_event ev = NULL;
    double t0 = kernel_s ? cp_now() : 0;
    CP_TRY(enqueue(ctx, k, dim, global, local, kernel_s != NULL, &ev));
    if (kernel_s) {
        cl_int e = clWaitForEvents(1, &ev);
        double s = ctx->profiling ? cp_event_seconds(ev) : -1;
        if (s < 0) s = cp_now() - t0;
        clReleaseEvent(ev);
        if (e != CL_SUCCESS) return cp_cl_error(ctx, e, "clWaitForEvents");
        *kernel_s += s;
    }
    return CLPHYS_SUCCESS;
}

clphys_status cp_launch_ev(clphys_context *ctx, cl_kernel k, cl_uint dim, const size_t *global, const size_t *local,
                           cl_event *ev)
{
    *ev = NULL;
    for (cl_uint d = 0; d < dim; d++)
        if (global[d] == 0) return CLPHYS_SUCCESS;
    return enqueue(ctx, k, dim, global, local, 1, ev);
}

static void span_clear(clphys_context *ctx)
{
    if (ctx->span_first) clReleaseEvent(ctx->span_first);
    ctx->span_first = NULL;
}

clphys_status cp_empty_kernel(clphys_context *ctx, cl_kernel *k)
{
    *k = NULL;
    if (!ctx->span_tick) {
        static const char src[] = "kernel void cp_span_tick(void) {}\n";
        CP_TRY(cp_program_from_source(ctx, "span_tick", src, "", &ctx->span_prog, NULL));
        clphys_status st = cp_kernel(ctx, ctx->span_prog, "cp_span_tick", &ctx->span_tick);
        if (st) {
            clReleaseProgram(ctx->span_prog);
            ctx->span_prog = NULL;
            return st;
        }
    }
    *k = ctx->span_tick;
    return CLPHYS_SUCCESS;
}

void cp_span_begin(clphys_context *ctx)
{
    span_clear(ctx);
    ctx->span_on = 1;
    cl_kernel k;
    cp_empty_kernel(ctx, &k); /* built here, outside the span; a failure is reported by cp_span_end */
}

/* In an in-order queue a command starts only after the previous one ended,
 * so the START of an empty kernel enqueued after the last launch bounds that
 * launch's END from above (by one launch gap, ~1-4 us on a GPU). */
clphys_status cp_span_end(clphys_context *ctx, double *seconds)
{
    ctx->span_on = 0;
    *seconds = 0;
    if (!ctx->span_first) return CLPHYS_SUCCESS; /* nothing ran */
    if (!ctx->span_tick) {
        span_clear(ctx);
        return cp_error(ctx, CLPHYS_ERR_BUILD, "cp_span_end: the span's end-marker kernel did not build");
    }
    size_t one = 1;
    cl_event tick = NULL;
    cl_int e = clEnqueueNDRangeKernel(ctx->queue, ctx->span_tick, 1, NULL, &one, &one, 0, NULL, &tick);
    if (e == CL_SUCCESS) e = clFinish(ctx->queue);
    cl_ulong t0 = 0, t1 = 0;
    if (!ctx->profiling) *seconds = -1; /* an adopted queue without profiling */
    if (e == CL_SUCCESS && ctx->profiling) {
        e = clGetEventProfilingInfo(ctx->span_first, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
        if (e == CL_SUCCESS) e = clGetEventProfilingInfo(tick, CL_PROFILING_COMMAND_START, sizeof t1, &t1, NULL);
        if (e == CL_SUCCESS) *seconds = t1 > t0 ? 1e-9 * (double)(t1 - t0) : 0;
    }
    if (tick) clReleaseEvent(tick);
    span_clear(ctx);
    if (e != CL_SUCCESS) return cp_cl_error(ctx, e, "cp_span_end");
    return CLPHYS_SUCCESS;
}

clphys_status cp_finish(clphys_context *ctx)
{
    CP_CL(ctx, clFinish(ctx->queue));
    return CLPHYS_SUCCESS;
}
