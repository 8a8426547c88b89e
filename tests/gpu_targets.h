/* gpu_targets.h — AMD and Intel GPUs that clphys has never run on, described
 * as their OpenCL drivers would report them, so that the host's choices for
 * them (build options, work-group sizes, variants, refusals) can be made on
 * any machine: copied into a context's device info, every plan the library
 * makes there asks for exactly the programs it would build on that GPU.
 * scripts/gpu_targets.py compiles those programs with the vendors' own
 * compilers (clang-15 with ROCm's device libraries for amdgcn; Intel's
 * ocloc) and checks that the compilers accept exactly the extensions these
 * descriptions list; tests/test_capability.c checks the refusals.
 *
 * Sources of the values: the vendors' published specifications and the
 * drivers' documented defaults (ROCm's OpenCL runtime: work-groups of at
 * most 256; Intel's compute runtime: 1024); none was read from a driver on
 * the hardware, since none is lent here. */
#ifndef CLPHYS_TEST_GPU_TARGETS_H
#define CLPHYS_TEST_GPU_TARGETS_H

#include "clphys.h"

typedef struct {
    const char *id;       /* the compiler's name of the target: gfx90a, acm-g10, ...   */
    const char *compiler; /* "amdgcn" (clang-15 -mcpu=id) or "ocloc" (-device id)      */
    const char *name;     /* CL_DEVICE_NAME                                            */
    const char *vendor;   /* CL_DEVICE_VENDOR                                          */
    const char *platform; /* CL_PLATFORM_NAME                                          */
    const char *device_version, *c_version;
    const char *extensions; /* CL_DEVICE_EXTENSIONS (the entries the library looks at) */
    cl_ulong local_mem;     /* CL_DEVICE_LOCAL_MEM_SIZE, bytes                           */
    size_t max_work_group;  /* CL_DEVICE_MAX_WORK_GROUP_SIZE                             */
    unsigned compute_units; /* CL_DEVICE_MAX_COMPUTE_UNITS                               */
    size_t wg_multiple;     /* the wave (AMD) or SIMD (Intel) width                      */
} gt_target;

extern const gt_target gt_targets[];
extern const int gt_ntargets;

/* The target of that id, or NULL. */
const gt_target *gt_find(const char *id);
/* Replace info's identity and capabilities by t's, through the probe's own
 * rule for extensions (cp_device_caps); the driver version and the indices
 * stay, so that binaries cached for the real device are never mistaken for
 * another's. */
void gt_describe(clphys_device_info *info, const gt_target *t);

#endif
