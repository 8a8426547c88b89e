/* buffer.c — device buffers with allocation failures reported as out-of-memory. */
#include "platform.h"

clphys_status cp_buffer(clphys_context *ctx, cl_mem_flags flags, size_t bytes, const void *host, cl_mem *out)
{
    *out = NULL;
    if (bytes == 0) bytes = 16; /* OpenCL forbids empty buffers; keep a valid handle */
    if (bytes > ctx->info.max_alloc_bytes && ctx->info.max_alloc_bytes)
        return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY,
                        "a buffer of %zu bytes exceeds the device's largest allocation (%llu bytes) on %s", bytes,
                        (unsigned long long)ctx->info.max_alloc_bytes, ctx->info.name);
    cl_int e;
    if (host) flags |= CL_MEM_COPY_HOST_PTR;
    *out = clCreateBuffer(ctx->context, flags, bytes, (void *)host, &e);
    if (e != CL_SUCCESS) {
        *out = NULL;
        clphys_status st = cp_cl_error(ctx, e, "clCreateBuffer");
        cp_error_append(ctx, "(allocating %zu bytes on %s)", bytes, ctx->info.name);
        return st;
    }
    return CLPHYS_SUCCESS;
}

clphys_status cp_write(clphys_context *ctx, cl_mem m, size_t offset, size_t bytes, const void *src)
{
    if (bytes == 0) return CLPHYS_SUCCESS;
    if (cp_stage_ready(ctx, bytes)) return cp_staged_write(ctx, m, offset, bytes, src);
    CP_CL(ctx, clEnqueueWriteBuffer(ctx->queue, m, CL_TRUE, offset, bytes, src, 0, NULL, NULL));
    return CLPHYS_SUCCESS;
}

clphys_status cp_read(clphys_context *ctx, cl_mem m, size_t offset, size_t bytes, void *dst)
{
    if (bytes == 0) return CLPHYS_SUCCESS;
    if (cp_stage_ready(ctx, bytes)) return cp_staged_read(ctx, m, offset, bytes, dst);
    CP_CL(ctx, clEnqueueReadBuffer(ctx->queue, m, CL_TRUE, offset, bytes, dst, 0, NULL, NULL));
    return CLPHYS_SUCCESS;
}

clphys_status cp_fill(clphys_context *ctx, cl_mem m, const void *pattern, size_t pattern_size, size_t bytes)
{
    if (bytes == 0) return CLPHYS_SUCCESS;
    CP_CL(ctx, clEnqueueFillBuffer(ctx->queue, m, pattern, pattern_size, 0, bytes, 0, NULL, NULL));
    return CLPHYS_SUCCESS;
}

clphys_status cp_mem_bytes(clphys_context *ctx, cl_mem m, size_t *bytes)
{
    cl_context c = NULL;
    *bytes = 0;
    CP_CL(ctx, clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof c, &c, NULL));
    if (c != ctx->context)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "a buffer of another OpenCL context than the clphys context's");
    CP_CL(ctx, clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof *bytes, bytes, NULL));
    return CLPHYS_SUCCESS;
}

void cp_release_mem(cl_mem *m)
{
    if (m && *m) {
        clReleaseMemObject(*m);
        *m = NULL;
    }
}

void cp_release_kernel(cl_kernel *k)
{
    if (k && *k) {
        clReleaseKernel(*k);
        *k = NULL;
    }
}

cl_mem cp_lock_host(clphys_context *ctx, void *p, size_t bytes)
{
    cl_int e = CL_SUCCESS;
    cl_mem m = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, p, &e);
    return e == CL_SUCCESS ? m : NULL;
}
