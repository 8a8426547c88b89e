/* args.c — kernel arguments set all at once (CP_ARGS) or one by one
 * (CP_ARG_AT), each checked against the kernel's own count: a launch whose
 * host code and kernel file disagree on the arguments stops with the
 * kernel's name instead of running with a stale or missing one. */
#include "platform.h"

#include <stdio.h>

/* The kernel's name for a message ("?" when the runtime will not say). */
static void kernel_name(cl_kernel k, char *name, size_t n)
{
    if (clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, n, name, NULL) != CL_SUCCESS) snprintf(name, n, "?");
}

/* CL_KERNEL_NUM_ARGS, asked at every call: a read from the runtime's kernel
 * object, cheaper than one clSetKernelArg (docs/design.md, "Kernels"), and
 * no table of kernels that could outlive their release. */
static clphys_status num_args(clphys_context *ctx, cl_kernel k, cl_uint *n)
{
    CP_CL(ctx, clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof *n, n, NULL));
    return CLPHYS_SUCCESS;
}

static clphys_status set(clphys_context *ctx, cl_kernel k, cl_uint i, const cp_karg *a)
{
    cl_int e = clSetKernelArg(k, i, a->size, a->value);
    if (e != CL_SUCCESS) {
        char name[128];
        kernel_name(k, name, sizeof name);
        clphys_status st = cp_cl_error(ctx, e, "clSetKernelArg");
        cp_error_append(ctx, "(kernel %s, argument %u of %zu bytes)", name, i, a->size);
        return st;
    }
    return CLPHYS_SUCCESS;
}

clphys_status cp_args(clphys_context *ctx, cl_kernel k, const cp_karg *a, cl_uint n)
{
    cl_uint want;
    CP_TRY(num_args(ctx, k, &want));
    if (want != n) {
        char name[128];
        kernel_name(k, name, sizeof name);
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "kernel %s takes %u arguments; the host gave %u", name, want,
                        n);
    }
    for (cl_uint i = 0; i < n; i++) CP_TRY(set(ctx, k, i, &a[i]));
    return CLPHYS_SUCCESS;
}

clphys_status cp_arg_at(clphys_context *ctx, cl_kernel k, cl_uint i, cp_karg a)
{
    cl_uint want;
    CP_TRY(num_args(ctx, k, &want));
    if (i >= want) {
        char name[128];
        kernel_name(k, name, sizeof name);
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "kernel %s takes %u arguments; the host set argument %u",
                        name, want, i);
    }
    return set(ctx, k, i, &a);
}
