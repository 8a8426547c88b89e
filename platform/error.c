/* error.c — statuses, OpenCL error names, and the per-context error text. */
#include "platform.h"

#include <stdio.h>
#include <string.h>

/* Failures that happen before a context exists land here (one per thread). */
static _Thread_local char thread_err[CP_ERR_LEN];

static char *err_buf(clphys_context *ctx) { return ctx ? ctx->err : thread_err; }

const char *clphys_version(void) { return CLPHYS_VERSION; }

const char *clphys_status_string(clphys_status s)
{
    switch (s) {
    case CLPHYS_SUCCESS:
        return "success";
    case CLPHYS_ERR_INVALID_ARGUMENT:
        return "invalid argument";
    case CLPHYS_ERR_DEVICE_NOT_FOUND:
        return "device not found";
    case CLPHYS_ERR_OPENCL:
        return "OpenCL error";
    case CLPHYS_ERR_BUILD:
        return "kernel build failed";
    case CLPHYS_ERR_OUT_OF_MEMORY:
        return "out of memory";
    case CLPHYS_ERR_UNSUPPORTED:
        return "unsupported by the device";
    case CLPHYS_ERR_IO:
        return "I/O error";
    case CLPHYS_ERR_FORMAT:
        return "malformed input";
    case CLPHYS_ERR_INPUT:
        return "invalid input";
    case CLPHYS_ERR_NOT_CONVERGED:
        return "not converged";
    case CLPHYS_ERR_OVERFLOW:
        return "capacity exceeded";
    case CLPHYS_ERR_VERIFY:
        return "verification failed";
    }
    return "unknown status";
}

const char *clphys_last_error(const clphys_context *ctx) { return ctx ? ctx->err : thread_err; }

clphys_status cp_error(clphys_context *ctx, clphys_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_buf(ctx), CP_ERR_LEN, fmt, ap);
    va_end(ap);
    return st;
}

void cp_error_append(clphys_context *ctx, const char *fmt, ...)
{
    char *b = err_buf(ctx);
    size_t len = strlen(b);
    if (len + 2 >= CP_ERR_LEN) return;
    if (len) b[len++] = '\n';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b + len, CP_ERR_LEN - len, fmt, ap);
    va_end(ap);
}

const char *cp_cl_error_name(cl_int e)
{
    switch (e) {
        /* A table of names, kept as a table: */
        /* clang-format off */
#define C(x) case x: return #x;
    C(CL_SUCCESS) C(CL_DEVICE_NOT_FOUND) C(CL_DEVICE_NOT_AVAILABLE) C(CL_COMPILER_NOT_AVAILABLE)
    C(CL_MEM_OBJECT_ALLOCATION_FAILURE) C(CL_OUT_OF_RESOURCES) C(CL_OUT_OF_HOST_MEMORY)
    C(CL_PROFILING_INFO_NOT_AVAILABLE) C(CL_MEM_COPY_OVERLAP) C(CL_IMAGE_FORMAT_MISMATCH)
    C(CL_IMAGE_FORMAT_NOT_SUPPORTED) C(CL_BUILD_PROGRAM_FAILURE) C(CL_MAP_FAILURE)
    C(CL_MISALIGNED_SUB_BUFFER_OFFSET) C(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    C(CL_COMPILE_PROGRAM_FAILURE) C(CL_LINKER_NOT_AVAILABLE) C(CL_LINK_PROGRAM_FAILURE)
    C(CL_DEVICE_PARTITION_FAILED) C(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) C(CL_INVALID_VALUE)
    C(CL_INVALID_DEVICE_TYPE) C(CL_INVALID_PLATFORM) C(CL_INVALID_DEVICE) C(CL_INVALID_CONTEXT)
    C(CL_INVALID_QUEUE_PROPERTIES) C(CL_INVALID_COMMAND_QUEUE) C(CL_INVALID_HOST_PTR)
    C(CL_INVALID_MEM_OBJECT) C(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) C(CL_INVALID_IMAGE_SIZE)
    C(CL_INVALID_SAMPLER) C(CL_INVALID_BINARY) C(CL_INVALID_BUILD_OPTIONS) C(CL_INVALID_PROGRAM)
    C(CL_INVALID_PROGRAM_EXECUTABLE) C(CL_INVALID_KERNEL_NAME) C(CL_INVALID_KERNEL_DEFINITION)
    C(CL_INVALID_KERNEL) C(CL_INVALID_ARG_INDEX) C(CL_INVALID_ARG_VALUE) C(CL_INVALID_ARG_SIZE)
    C(CL_INVALID_KERNEL_ARGS) C(CL_INVALID_WORK_DIMENSION) C(CL_INVALID_WORK_GROUP_SIZE)
    C(CL_INVALID_WORK_ITEM_SIZE) C(CL_INVALID_GLOBAL_OFFSET) C(CL_INVALID_EVENT_WAIT_LIST)
    C(CL_INVALID_EVENT) C(CL_INVALID_OPERATION) C(CL_INVALID_GL_OBJECT) C(CL_INVALID_BUFFER_SIZE)
    C(CL_INVALID_MIP_LEVEL) C(CL_INVALID_GLOBAL_WORK_SIZE) C(CL_INVALID_PROPERTY)
    C(CL_INVALID_IMAGE_DESCRIPTOR) C(CL_INVALID_COMPILER_OPTIONS) C(CL_INVALID_LINKER_OPTIONS)
    C(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef C
            /* clang-format on */
            case -1001 : return "CL_PLATFORM_NOT_FOUND_KHR";
    }
    return "unknown OpenCL error";
}

clphys_status cp_cl_error(clphys_context *ctx, cl_int e, const char *what)
{
    int oom = e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_RESOURCES || e == CL_OUT_OF_HOST_MEMORY ||
              e == CL_INVALID_BUFFER_SIZE;
    return cp_error(ctx, oom ? CLPHYS_ERR_OUT_OF_MEMORY : CLPHYS_ERR_OPENCL, "%s failed: %s (%d)", what,
                    cp_cl_error_name(e), (int)e);
}

clphys_status cp_test_failure_due(clphys_context *ctx, cp_test_failure *f, int where, int me, const char *what)
{
    if (!f->at || f->where != where || f->rank != me || ++f->calls != f->at) return CLPHYS_SUCCESS;
    return cp_error(ctx, CLPHYS_ERR_OPENCL, "%s: a device failure injected for the tests (place %d, call %ld)", what,
                    where, f->at);
}
