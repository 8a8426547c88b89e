/* sync.c — the cost of a synchronisation, by the method of Miki, Takahashi &
 * Mori (sec. 5): empty kernels launched asynchronously, then one wait,
 * timed for several launch counts and fitted by a straight line.  Over MPI
 * (platform/mpi.c) the wait ends with a barrier and each point is the
 * slowest rank's; the callbacks below carry that in without MPI here. */
#include "cp_sync.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One run: n_sub empty kernels on every queue, wait for all, barrier.  A
 * device failure (in *dev_st, kept) skips the device work but not the
 * barriers, so that no other process is left waiting in one. */
static clphys_status one_run(clphys_context *const *ctxs, int n, const cl_kernel *k, int n_sub,
                             const cp_sync_hooks *hooks, clphys_status *dev_st, double *t)
{
    if (hooks && hooks->barrier) CP_TRY(hooks->barrier(hooks->arg)); /* start together, untimed */
    size_t one = 1;
    double t0 = cp_now();
    for (int d = 0; d < n && !*dev_st; d++)
        for (int i = 0; i < n_sub && !*dev_st; i++) {
            cl_int e = clEnqueueNDRangeKernel(clphys_context_queue(ctxs[d]), k[d], 1, NULL, &one, &one, 0, NULL, NULL);
            if (e != CL_SUCCESS) *dev_st = cp_cl_error(NULL, e, "clEnqueueNDRangeKernel (sync probe)");
        }
    for (int d = 0; d < n && !*dev_st; d++) {
        cl_int e = clFinish(clphys_context_queue(ctxs[d]));
        if (e != CL_SUCCESS) *dev_st = cp_cl_error(NULL, e, "clFinish (sync probe)");
    }
    if (hooks && hooks->barrier) CP_TRY(hooks->barrier(hooks->arg));
    *t = cp_now() - t0;
    return CLPHYS_SUCCESS;
}

void cp_sync_fit(clphys_sync_cost *c)
{
    const int m = c->points;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < m; i++) {
        sx += c->n_sub[i], sy += c->t_tot_s[i];
        sxx += c->n_sub[i] * c->n_sub[i], sxy += c->n_sub[i] * c->t_tot_s[i];
    }
    const double det = m * sxx - sx * sx;
    c->t_launch_s = det > 0 ? (m * sxy - sx * sy) / det : 0;
    c->t_sync_s = m > 0 ? (sy - c->t_launch_s * sx) / m : 0;
    double r2 = 0;
    for (int i = 0; i < m; i++) {
        const double r = c->t_tot_s[i] - c->t_sync_s - c->t_launch_s * c->n_sub[i];
        r2 += r * r;
    }
    c->rms_residual_s = m > 0 ? sqrt(r2 / m) : 0;
}

clphys_status cp_sync_measure(clphys_context *const *ctxs, int n, int max_launches, int repeat,
                              const cp_sync_hooks *hooks, clphys_sync_cost *c)
{
    if (!c || !ctxs || n < 1) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "sync probe: NULL argument or n < 1");
    for (int d = 0; d < n; d++)
        if (!ctxs[d]) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "sync probe: context %d is NULL", d);
    memset(c, 0, sizeof *c);
    if (max_launches <= 0) max_launches = 64;
    if (max_launches > 32768) max_launches = 32768;
    if (repeat <= 0) repeat = 9;
    c->max_launches = max_launches;
    c->repeat = repeat;
    c->devices = n;
    c->ranks = 1;
    cl_kernel k[64];
    if (n > 64) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "sync probe: more than 64 devices");
    clphys_status st = CLPHYS_SUCCESS;
    for (int d = 0; d < n && !st; d++)
        if ((st = cp_empty_kernel(ctxs[d], &k[d])))
            st = cp_error(NULL, st, "sync probe, device %d: %s", d, clphys_last_error(ctxs[d]));
    if (hooks && hooks->agree) st = hooks->agree(hooks->arg, st);
    if (st) return st;
    double *t = malloc((size_t)repeat * sizeof *t);
    if (!t) st = cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "sync probe");
    if (hooks && hooks->agree) st = hooks->agree(hooks->arg, st);
    if (st) {
        free(t);
        return st;
    }
    /* st: a failure of the barrier itself (then give up at once); dev: of a
     * device, carried to the agreement at the end */
    clphys_status dev = CLPHYS_SUCCESS;
    double warm;
    st = one_run(ctxs, n, k, 1, hooks, &dev, &warm);
    for (int n_sub = 1; !st && n_sub <= max_launches && c->points < 16; n_sub *= 2) {
        for (int r = 0; r < repeat && !st; r++) st = one_run(ctxs, n, k, n_sub, hooks, &dev, &t[r]);
        if (st) break;
        qsort(t, (size_t)repeat, sizeof *t, cmp_double);
        c->n_sub[c->points] = n_sub;
        c->t_tot_s[c->points++] = repeat % 2 ? t[repeat / 2] : 0.5 * (t[repeat / 2 - 1] + t[repeat / 2]);
    }
    free(t);
    if (st) return st;
    if (hooks && hooks->agree)
        st = hooks->agree(hooks->arg, dev);
    else
        st = dev;
    if (!st && hooks && hooks->max) st = hooks->max(hooks->arg, c->t_tot_s, c->points);
    if (st) return st;
    cp_sync_fit(c);
    return CLPHYS_SUCCESS;
}

clphys_status clphys_measure_sync(clphys_context *const *ctxs, int n, int max_launches, int repeat, clphys_sync_cost *c)
{
    return cp_sync_measure(ctxs, n, max_launches, repeat, NULL, c);
}
