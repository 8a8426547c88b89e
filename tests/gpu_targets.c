/* gpu_targets.c — the described AMD and Intel GPUs (gpu_targets.h). */
#include "gpu_targets.h"
#include "platform/platform.h"

#include <stdio.h>
#include <string.h>

#define AMD_VENDOR   "Advanced Micro Devices, Inc."
#define AMD_PLATFORM "AMD Accelerated Parallel Processing"
/* ROCm's OpenCL runtime on CDNA and RDNA (5.x) */
#define AMD_EXTS                                                                                                       \
    "cl_khr_fp64 cl_khr_global_int32_base_atomics cl_khr_global_int32_extended_atomics "                               \
    "cl_khr_local_int32_base_atomics cl_khr_local_int32_extended_atomics cl_khr_int64_base_atomics "                   \
    "cl_khr_int64_extended_atomics cl_khr_3d_image_writes cl_khr_byte_addressable_store cl_khr_fp16 "                  \
    "cl_amd_device_attribute_query cl_amd_media_ops cl_amd_media_ops2 cl_khr_image2d_from_buffer "                     \
    "cl_khr_subgroups cl_khr_depth_images cl_amd_copy_buffer_p2p cl_amd_assembly_program"
#define INTEL_VENDOR   "Intel(R) Corporation"
#define INTEL_PLATFORM "Intel(R) OpenCL Graphics"
/* Intel's compute runtime (NEO) on Xe-HPG and Xe-HPC; Xe-HPG (Arc, Flex)
 * has no fp64 units and does not report cl_khr_fp64 */
#define INTEL_EXTS_COMMON                                                                                              \
    "cl_khr_byte_addressable_store cl_khr_device_uuid cl_khr_fp16 cl_khr_global_int32_base_atomics "                   \
    "cl_khr_global_int32_extended_atomics cl_khr_icd cl_khr_local_int32_base_atomics "                                 \
    "cl_khr_local_int32_extended_atomics cl_intel_subgroups cl_intel_required_subgroup_size "                          \
    "cl_intel_subgroups_short cl_khr_spir cl_khr_il_program cl_khr_subgroups cl_khr_int64_base_atomics "               \
    "cl_khr_int64_extended_atomics cl_intel_subgroups_char cl_intel_subgroups_long"

const gt_target gt_targets[] = {
    {"gfx90a", "amdgcn", "gfx90a:sramecc+:xnack-", AMD_VENDOR, AMD_PLATFORM, "OpenCL 2.0 ", "OpenCL C 2.0 ", AMD_EXTS,
     65536, 256, 104, 64},
    {"gfx1030", "amdgcn", "gfx1030", AMD_VENDOR, AMD_PLATFORM, "OpenCL 2.0 ", "OpenCL C 2.0 ", AMD_EXTS, 65536, 256, 80,
     32},
    {"acm-g10", "ocloc", "Intel(R) Arc(TM) A770 Graphics", INTEL_VENDOR, INTEL_PLATFORM, "OpenCL 3.0 NEO ",
     "OpenCL C 1.2 ", INTEL_EXTS_COMMON, 65536, 1024, 512, 32},
    {"pvc", "ocloc", "Intel(R) Data Center GPU Max 1550", INTEL_VENDOR, INTEL_PLATFORM, "OpenCL 3.0 NEO ",
     "OpenCL C 1.2 ", INTEL_EXTS_COMMON " cl_khr_fp64", 131072, 1024, 512, 16},
};
const int gt_ntargets = (int)(sizeof gt_targets / sizeof *gt_targets);

const gt_target *gt_find(const char *id)
{
    for (int i = 0; i < gt_ntargets; i++)
        if (!strcmp(gt_targets[i].id, id)) return &gt_targets[i];
    return NULL;
}

void gt_describe(clphys_device_info *info, const gt_target *t)
{
    snprintf(info->name, sizeof info->name, "%s", t->name);
    snprintf(info->vendor, sizeof info->vendor, "%s", t->vendor);
    snprintf(info->platform, sizeof info->platform, "%s", t->platform);
    snprintf(info->device_version, sizeof info->device_version, "%s", t->device_version);
    snprintf(info->opencl_c_version, sizeof info->opencl_c_version, "%s", t->c_version);
    info->is_gpu = 1;
    info->is_cpu = 0;
    info->compute_units = t->compute_units;
    info->local_mem_bytes = t->local_mem;
    info->max_work_group_size = t->max_work_group;
    info->preferred_wg_multiple = t->wg_multiple;
    cp_device_caps(info, t->extensions);
}
