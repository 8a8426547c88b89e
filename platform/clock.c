/* clock.c — the two clocks every timing uses: the host's monotonic clock and
 * a profiling event's END - START.  A leaf of platform/: launches (timer.c)
 * and the per-kernel profile (profile.c) both read these, neither is read here. */
#include "platform.h"

#include <time.h>

double cp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double cp_event_seconds(cl_event ev)
{
    cl_ulong t0 = 0, t1 = 0;
    if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) != CL_SUCCESS)
        return -1.0;
    return 1e-9 * (double)(t1 - t0);
}

int cp_event_times(cl_event ev, double *start, double *end)
{
    cl_ulong t0 = 0, t1 = 0;
    if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) != CL_SUCCESS)
        return -1;
    *start = 1e-9 * (double)t0;
    *end = 1e-9 * (double)t1;
    return 0;
}
