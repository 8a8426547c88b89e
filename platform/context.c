/* context.c — own or adopted OpenCL context and queue, with the device's capabilities. */
#include "platform.h"

#include <stdlib.h>
#include <string.h>

void cp_programs_release(clphys_context *ctx); /* program.c */

static clphys_status context_alloc(clphys_context **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? CLPHYS_SUCCESS : cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "out of host memory");
}

clphys_status clphys_context_create(const char *spec, clphys_context **out)
{
    if (!out) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_context_create: ctx is NULL");
    *out = NULL;
    clphys_context *ctx;
    CP_TRY(context_alloc(&ctx));
    clphys_status st = cp_select_device(spec, &ctx->platform, &ctx->device, &ctx->info);
    if (st != CLPHYS_SUCCESS) {
        free(ctx);
        return st;
    }
    cl_int e;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ctx->platform, 0};
    ctx->context = clCreateContext(props, 1, &ctx->device, NULL, NULL, &e);
    if (e == CL_SUCCESS) ctx->queue = clCreateCommandQueue(ctx->context, ctx->device, CL_QUEUE_PROFILING_ENABLE, &e);
    if (e != CL_SUCCESS) {
        st = cp_cl_error(NULL, e, ctx->context ? "clCreateCommandQueue" : "clCreateContext");
        clphys_context_destroy(ctx);
        return st;
    }
    ctx->profiling = 1;
    cp_device_probe_wg_multiple(ctx->device, &ctx->info);
    cp_profile_open(ctx);
    *out = ctx;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_context_adopt(cl_context context, cl_device_id device, cl_command_queue queue,
                                   clphys_context **out)
{
    if (!out || !context || !device || !queue)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_context_adopt: NULL argument");
    *out = NULL;
    cl_context qctx = NULL;
    cl_device_id qdev = NULL;
    cl_int e = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof qctx, &qctx, NULL);
    if (e == CL_SUCCESS) e = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof qdev, &qdev, NULL);
    if (e != CL_SUCCESS) return cp_cl_error(NULL, e, "clGetCommandQueueInfo");
    if (qctx != context || qdev != device)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_context_adopt: the queue belongs to another context or device");
    clphys_context *ctx;
    CP_TRY(context_alloc(&ctx));
    cl_platform_id plat = NULL;
    clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL);
    clRetainContext(context);
    clRetainCommandQueue(queue);
    ctx->platform = plat;
    ctx->device = device;
    ctx->context = context;
    ctx->queue = queue;
    cl_command_queue_properties qp = 0;
    clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof qp, &qp, NULL);
    ctx->profiling = (qp & CL_QUEUE_PROFILING_ENABLE) != 0;
    cp_device_probe(plat, device, &ctx->info);
    cp_device_probe_wg_multiple(device, &ctx->info);
    ctx->info.platform_index = ctx->info.device_index = -1;
    cp_profile_open(ctx);
    *out = ctx;
    return CLPHYS_SUCCESS;
}

void clphys_context_destroy(clphys_context *ctx)
{
    if (!ctx) return;
    cp_profile_close(ctx);
    cp_stage_release(ctx);
    cp_programs_release(ctx);
    if (ctx->span_first) clReleaseEvent(ctx->span_first);
    if (ctx->span_tick) clReleaseKernel(ctx->span_tick);
    if (ctx->span_prog) clReleaseProgram(ctx->span_prog);
    if (ctx->queue) {
        clFinish(ctx->queue);
        clReleaseCommandQueue(ctx->queue);
    }
    if (ctx->context) clReleaseContext(ctx->context);
    free(ctx);
}

const clphys_device_info *clphys_context_device(const clphys_context *ctx) { return ctx ? &ctx->info : NULL; }
cl_context clphys_context_cl_context(const clphys_context *ctx) { return ctx ? ctx->context : NULL; }
cl_command_queue clphys_context_queue(const clphys_context *ctx) { return ctx ? ctx->queue : NULL; }
cl_device_id clphys_context_cl_device(const clphys_context *ctx) { return ctx ? ctx->device : NULL; }
clphys_status clphys_context_profile_write(clphys_context *ctx, const char *path)
{
    if (!ctx || !path) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_context_profile_write: NULL argument");
    return cp_profile_write(ctx, path);
}
void clphys_context_span_begin(clphys_context *ctx)
{
    if (ctx) cp_span_begin(ctx);
}
clphys_status clphys_context_span_end(clphys_context *ctx, double *seconds)
{
    if (!ctx || !seconds) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_context_span_end: NULL argument");
    return cp_span_end(ctx, seconds);
}

#define MAX_CONTEXTS 64

clphys_status clphys_contexts_create(const char *specs, int share_index, int share_count, clphys_context ***ctxs,
                                     int *n)
{
    if (!ctxs || !n) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_contexts_create: NULL argument");
    *ctxs = NULL;
    *n = 0;
    if (share_count > 1 && (share_index < 0 || share_index >= share_count))
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_contexts_create: share %d of %d", share_index,
                        share_count);
    char gpus[2048];
    int ngpu = 0;
    if (!specs || !*specs) specs = getenv("CLPHYS_DEVICE");
    if (!specs || !*specs) {
        CP_TRY(cp_gpu_specs(gpus, sizeof gpus, &ngpu));
        specs = ngpu ? "gpus" : "auto";
    }
    /* expand the list: "gpus" becomes every GPU's P:D */
    char *list[MAX_CONTEXTS];
    int m = 0;
    clphys_status st = CLPHYS_SUCCESS;
    for (const char *p = specs; !st;) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= 128) {
            st = cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "device list '%s': an empty or overlong entry", specs);
            break;
        }
        char one[128];
        memcpy(one, p, len);
        one[len] = 0;
        const char *add = one;
        if (!strcmp(one, "gpus")) {
            if (!ngpu && (st = cp_gpu_specs(gpus, sizeof gpus, &ngpu))) break;
            if (!ngpu) {
                st = cp_error(NULL, CLPHYS_ERR_DEVICE_NOT_FOUND, "device list '%s': \"gpus\" found no GPU", specs);
                break;
            }
            add = gpus;
        }
        for (const char *q = add; *q && !st;) {
            size_t l = strcspn(q, ",");
            if (m == MAX_CONTEXTS) {
                st = cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "device list '%s': more than %d devices", specs,
                              MAX_CONTEXTS);
                break;
            }
            if (!(list[m] = strndup(q, l)))
                st = cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "device list");
            else
                m++;
            q += l + (q[l] == ',');
        }
        if (!p[len]) break;
        p += len + 1;
    }
    /* this process's share of the list */
    int keep[MAX_CONTEXTS], nk = 0;
    if (!st) {
        if (share_count <= 1) {
            for (int k = 0; k < m; k++) keep[nk++] = k;
        } else if (m < share_count) {
            keep[nk++] = share_index % m;
        } else {
            for (int k = share_index; k < m; k += share_count) keep[nk++] = k;
        }
    }
    clphys_context **c = NULL;
    if (!st && !(c = calloc((size_t)nk, sizeof *c))) st = cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "device list");
    for (int k = 0; k < nk && !st; k++) {
        st = clphys_context_create(list[keep[k]], &c[k]);
        if (st) cp_error_append(NULL, "(device list '%s', entry '%s')", specs, list[keep[k]]);
    }
    for (int k = 0; k < m; k++) free(list[k]);
    if (st) {
        clphys_contexts_destroy(c, nk);
        return st;
    }
    *ctxs = c;
    *n = nk;
    return CLPHYS_SUCCESS;
}

void clphys_contexts_destroy(clphys_context **ctxs, int n)
{
    if (!ctxs) return;
    for (int k = 0; k < n; k++) clphys_context_destroy(ctxs[k]);
    free(ctxs);
}
