/* timer.c — kernel launches, profiling-event times, the host clock. */
#include "platform.h"

#include <time.h>

double cp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

size_t cp_round_up(size_t x, size_t m) { return m ? (x + m - 1) / m * m : x; }

double cp_event_seconds(cl_event ev)
{
    cl_ulong t0 = 0, t1 = 0;
    if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) != CL_SUCCESS)
        return -1.0;
    return 1e-9 * (double)(t1 - t0);
}

clphys_status cp_arg(clphys_context *ctx, cl_kernel k, cl_uint idx, size_t size, const void *v)
{
    cl_int e = clSetKernelArg(k, idx, size, v);
    if (e != CL_SUCCESS) {
        char name[128] = "?";
        clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
        clphys_status st = cp_cl_error(ctx, e, "clSetKernelArg");
        cp_error_append(ctx, "(kernel %s, argument %u)", name, idx);
        return st;
    }
    return CLPHYS_SUCCESS;
}

clphys_status cp_launch(clphys_context *ctx, cl_kernel k, cl_uint dim, const size_t *global, const size_t *local,
                        double *kernel_s)
{
    for (cl_uint d = 0; d < dim; d++)
        if (global[d] == 0) return CLPHYS_SUCCESS; /* nothing to do: an empty range is not an error */
    cl_event ev = NULL;
    double t0 = kernel_s ? cp_now() : 0;
    cl_int e = clEnqueueNDRangeKernel(ctx->queue, k, dim, NULL, global, local, 0, NULL, kernel_s ? &ev : NULL);
    if (e != CL_SUCCESS) {
        char name[128] = "?";
        clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
        clphys_status st = cp_cl_error(ctx, e, "clEnqueueNDRangeKernel");
        cp_error_append(ctx, "(kernel %s, global %zu, local %zu)", name, global[0], local ? local[0] : 0);
        return st;
    }
    if (kernel_s) {
        e = clWaitForEvents(1, &ev);
        double s = ctx->profiling ? cp_event_seconds(ev) : -1;
        if (s < 0) s = cp_now() - t0;
        clReleaseEvent(ev);
        if (e != CL_SUCCESS) return cp_cl_error(ctx, e, "clWaitForEvents");
        *kernel_s += s;
    }
    return CLPHYS_SUCCESS;
}

clphys_status cp_finish(clphys_context *ctx)
{
    CP_CL(ctx, clFinish(ctx->queue));
    return CLPHYS_SUCCESS;
}
