/* require.c — what a program build needs of the device, checked before the
 * device compiler sees it.
 *
 * The rule for cl/: a kernel file uses an optional extension only through
 * platform_common.h, which enables it under one macro of the table below, and the
 * host defines that macro in the build options exactly when the build uses
 * the extension.  The options of a build therefore name every extension it
 * needs, and cp_program refuses a build whose device lacks one with
 * CLPHYS_ERR_UNSUPPORTED naming it, instead of a build error (or, on a
 * lenient compiler, a program that silently relies on it).  Every build is
 * also OpenCL C 1.2 (program.c passes -cl-std=CL1.2), which the device must
 * accept.  tests/test_capability.c compiles every program the library
 * builds with clang told that only the named extensions exist. */
#include "platform.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *macro; /* -D<macro> in the build options ... */
    const char *ext;   /* ... enables this extension in platform_common.h */
    size_t flag;       /* the int in clphys_device_info that says the device has it */
} NEEDS[] = {
    {"REAL_IS_DOUBLE", "cl_khr_fp64", offsetof(clphys_device_info, fp64)},
    {"NEED_FP64", "cl_khr_fp64", offsetof(clphys_device_info, fp64)},
    {"NEED_INT64_ATOMICS", "cl_khr_int64_base_atomics", offsetof(clphys_device_info, int64_atomics)},
};
enum { NNEEDS = sizeof NEEDS / sizeof *NEEDS };

/* options contains the token -D<macro> or -D<macro>=... */
static int defines(const char *options, const char *macro)
{
    size_t len = strlen(macro);
    for (const char *p = options; (p = strstr(p, "-D")); p += 2) {
        if (p != options && p[-1] != ' ' && p[-1] != '\t') continue;
        const char *m = p + 2;
        if (!strncmp(m, macro, len) && (m[len] == 0 || m[len] == '=' || m[len] == ' ' || m[len] == '\t')) return 1;
    }
    return 0;
}

void cp_required_extensions(const char *options, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < NNEEDS; i++) {
        if (!options || !defines(options, NEEDS[i].macro) || strstr(buf, NEEDS[i].ext)) continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? " " : "", NEEDS[i].ext);
        if (w < 0 || (size_t)w >= n - used) break;
        used += (size_t)w;
    }
}

/* Major and minor of "OpenCL C M.m ..."; 0 when the text has no version. */
static int c_version(const char *s, int *major, int *minor) { return sscanf(s, "OpenCL C %d.%d", major, minor) == 2; }

clphys_status cp_build_check(clphys_context *ctx, const char *name, const char *options)
{
    const clphys_device_info *d = &ctx->info;
    int ma, mi;
    /* an unreadable version is let through: the build then says what is wrong */
    if (c_version(d->opencl_c_version, &ma, &mi) && (ma < 1 || (ma == 1 && mi < 2)))
        return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED,
                        "device %s compiles %s only; clphys's kernels (%s) are OpenCL C 1.2", d->name,
                        d->opencl_c_version, name);
    for (int i = 0; i < NNEEDS; i++) {
        if (!options || !defines(options, NEEDS[i].macro)) continue;
        int has;
        memcpy(&has, (const char *)d + NEEDS[i].flag, sizeof has);
        if (!has)
            return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED,
                            "%s built with -D%s needs the extension %s, which device %s does not report", name,
                            NEEDS[i].macro, NEEDS[i].ext, d->name);
    }
    return CLPHYS_SUCCESS;
}

clphys_status cp_check_work_group(clphys_context *ctx, cl_kernel k, const char *name, size_t wg)
{
    size_t kwg;
    cl_ulong lm;
    CP_TRY(cp_kernel_limits(ctx, k, &kwg, &lm));
    if (wg > kwg || wg > ctx->info.max_work_group_size || lm > ctx->info.local_mem_bytes)
        return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED,
                        "kernel %s in work-groups of %zu (%llu bytes of local memory) does not fit device %s: the "
                        "compiled kernel runs at most %zu work-items per group, the device %zu, with %llu bytes of "
                        "local memory",
                        name, wg, (unsigned long long)lm, ctx->info.name, kwg, ctx->info.max_work_group_size,
                        (unsigned long long)ctx->info.local_mem_bytes);
    return CLPHYS_SUCCESS;
}
