/* device.c — discover platforms and devices, probe capabilities, and select
 * one by a spec string (auto|gpu|cpu|nvidia|amd|intel|pocl|P:D). */
#include "platform.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void get_str(cl_device_id d, cl_device_info what, char *buf, size_t n)
{
    buf[0] = 0;
    if (clGetDeviceInfo(d, what, n, buf, NULL) != CL_SUCCESS) buf[0] = 0;
    buf[n - 1] = 0;
}

static int has_ext(const char *exts, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = exts; (p = strstr(p, name)); p += len)
        if ((p == exts || p[-1] == ' ') && (p[len] == ' ' || p[len] == 0)) return 1;
    return 0;
}

/* Work-group size multiple is a kernel property: ask it of a trivial kernel. */
static size_t probe_wg_multiple(cl_device_id d)
{
    size_t m = 0;
    cl_int e;
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    if (e != CL_SUCCESS) return 0;
    const char *src = "__kernel void k(__global float *a) { a[get_global_id(0)] *= 2.0f; }";
    cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &e);
    if (e == CL_SUCCESS && clBuildProgram(p, 1, &d, "", NULL, NULL) == CL_SUCCESS) {
        cl_kernel k = clCreateKernel(p, "k", &e);
        if (e == CL_SUCCESS) {
            clGetKernelWorkGroupInfo(k, d, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof m, &m, NULL);
            clReleaseKernel(k);
        }
    }
    if (p) clReleaseProgram(p);
    clReleaseContext(c);
    return m;
}

clphys_status cp_device_probe(cl_platform_id p, cl_device_id d, clphys_device_info *info)
{
    memset(info, 0, sizeof *info);
    get_str(d, CL_DEVICE_NAME, info->name, sizeof info->name);
    get_str(d, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
    get_str(d, CL_DRIVER_VERSION, info->driver_version, sizeof info->driver_version);
    get_str(d, CL_DEVICE_VERSION, info->device_version, sizeof info->device_version);
    get_str(d, CL_DEVICE_OPENCL_C_VERSION, info->opencl_c_version, sizeof info->opencl_c_version);
    if (clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof info->platform, info->platform, NULL) != CL_SUCCESS)
        info->platform[0] = 0;
    info->platform[sizeof info->platform - 1] = 0;
    cl_device_type type = 0;
    cl_uint cu = 0, clk = 0;
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof clk, &clk, NULL);
    clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof info->global_mem_bytes, &info->global_mem_bytes, NULL);
    clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof info->local_mem_bytes, &info->local_mem_bytes, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof info->max_alloc_bytes, &info->max_alloc_bytes, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof info->max_work_group_size, &info->max_work_group_size,
                    NULL);
    info->is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
    info->is_cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
    info->compute_units = cu;
    info->clock_mhz = clk;

    size_t n = 0;
    clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &n);
    char *exts = calloc(n + 1, 1);
    if (!exts) return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "device probe: out of host memory");
    clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, exts, NULL);
    cp_device_caps(info, exts);
    free(exts);
    return CLPHYS_SUCCESS;
}

void cp_device_caps(clphys_device_info *info, const char *exts)
{
    /* OpenCL >= 1.1 made 32-bit global atomics core. */
    int cl11 = strncmp(info->device_version, "OpenCL 1.0", 10) != 0;
    info->fp64 = has_ext(exts, "cl_khr_fp64");
    info->int32_atomics = cl11 || has_ext(exts, "cl_khr_global_int32_base_atomics");
    info->int64_atomics = has_ext(exts, "cl_khr_int64_base_atomics");
    info->subgroups = has_ext(exts, "cl_khr_subgroups") || has_ext(exts, "cl_intel_subgroups");
}

/* The work-group multiple needs a kernel build: done only for devices in use or listed. */
void cp_device_probe_wg_multiple(cl_device_id d, clphys_device_info *info)
{
    info->preferred_wg_multiple = probe_wg_multiple(d);
}

/* Enumerate every (platform, device) pair.  *ids has 2 entries per device. */
static clphys_status enumerate(clphys_device_info **list, cl_platform_id **plats, cl_device_id **devs, int *count)
{
    cl_uint np = 0;
    *count = 0;
    *list = NULL;
    if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS || np == 0)
        return cp_error(NULL, CLPHYS_ERR_DEVICE_NOT_FOUND,
                        "no OpenCL platform found (is an ICD installed? e.g. apt-get install pocl-opencl-icd; "
                        "OCL_ICD_VENDORS=%s)",
                        getenv("OCL_ICD_VENDORS") ? getenv("OCL_ICD_VENDORS") : "unset");
    cl_platform_id *ps = calloc(np, sizeof *ps);
    if (!ps) return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "out of host memory");
    clGetPlatformIDs(np, ps, NULL);
    int cap = 0, total = 0;
    clphys_device_info *out = NULL;
    cl_platform_id *op = NULL;
    cl_device_id *od = NULL;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0) continue;
        cl_device_id *ds = calloc(nd, sizeof *ds);
        if (!ds) break;
        clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, nd, ds, NULL);
        for (cl_uint d = 0; d < nd; d++) {
            if (total == cap) {
                cap = cap ? 2 * cap : 8;
                void *a = realloc(out, cap * sizeof *out), *b = realloc(op, cap * sizeof *op),
                     *c = realloc(od, cap * sizeof *od);
                if (a) out = a;
                if (b) op = b;
                if (c) od = c;
                if (!a || !b || !c) {
                    free(ds), free(ps), free(out), free(op), free(od);
                    return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "out of host memory");
                }
            }
            cp_device_probe(ps[p], ds[d], &out[total]);
            out[total].platform_index = (int)p;
            out[total].device_index = (int)d;
            op[total] = ps[p];
            od[total] = ds[d];
            total++;
        }
        free(ds);
    }
    free(ps);
    if (total == 0) {
        free(out), free(op), free(od);
        return cp_error(NULL, CLPHYS_ERR_DEVICE_NOT_FOUND, "OpenCL platforms found but no device in any of them");
    }
    *list = out;
    *count = total;
    if (plats)
        *plats = op;
    else
        free(op);
    if (devs)
        *devs = od;
    else
        free(od);
    return CLPHYS_SUCCESS;
}

clphys_status clphys_devices_list(clphys_device_info **list, int *count)
{
    if (!list || !count) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_devices_list: NULL argument");
    cl_device_id *ds;
    CP_TRY(enumerate(list, NULL, &ds, count));
    for (int i = 0; i < *count; i++) cp_device_probe_wg_multiple(ds[i], &(*list)[i]);
    free(ds);
    return CLPHYS_SUCCESS;
}

void clphys_devices_destroy(clphys_device_info *list) { free(list); }

static int icontains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return 0;
}

int cp_device_matches(const clphys_device_info *d, const char *spec)
{
    if (!strcmp(spec, "gpu")) return d->is_gpu;
    if (!strcmp(spec, "cpu")) return d->is_cpu;
    if (!strcmp(spec, "nvidia")) return icontains(d->platform, "nvidia") || icontains(d->vendor, "nvidia");
    if (!strcmp(spec, "amd"))
        return icontains(d->platform, "amd") || icontains(d->vendor, "advanced micro devices") ||
               (d->is_gpu && icontains(d->vendor, "amd"));
    if (!strcmp(spec, "intel"))
        return icontains(d->platform, "intel") ||
               (!icontains(d->platform, "portable") && icontains(d->vendor, "intel"));
    if (!strcmp(spec, "pocl"))
        return icontains(d->platform, "portable computing language") || icontains(d->platform, "pocl");
    return 0;
}

/* Select a device; on success fills platform/device ids and info. */
clphys_status cp_select_device(const char *spec, cl_platform_id *plat, cl_device_id *dev, clphys_device_info *info)
{
    if (!spec || !*spec) spec = getenv("CLPHYS_DEVICE");
    if (!spec || !*spec) spec = "auto";
    clphys_device_info *list;
    cl_platform_id *ps;
    cl_device_id *ds;
    int n;
    CP_TRY(enumerate(&list, &ps, &ds, &n));
    int pick = -1, known = 1;
    int pi, di;
    char tail;
    if (sscanf(spec, "%d:%d%c", &pi, &di, &tail) == 2) {
        for (int i = 0; i < n; i++)
            if (list[i].platform_index == pi && list[i].device_index == di) pick = i;
    } else if (!strcmp(spec, "auto")) {
        for (int i = 0; i < n && pick < 0; i++)
            if (list[i].is_gpu) pick = i;
        for (int i = 0; i < n && pick < 0; i++)
            if (list[i].is_cpu) pick = i;
        if (pick < 0) pick = 0;
    } else if (!strcmp(spec, "gpu") || !strcmp(spec, "cpu") || !strcmp(spec, "nvidia") || !strcmp(spec, "amd") ||
               !strcmp(spec, "intel") || !strcmp(spec, "pocl")) {
        for (int i = 0; i < n && pick < 0; i++)
            if (cp_device_matches(&list[i], spec)) pick = i;
    } else {
        known = 0;
    }
    clphys_status st = CLPHYS_SUCCESS;
    if (pick < 0) {
        st = cp_error(
            NULL, CLPHYS_ERR_DEVICE_NOT_FOUND,
            known ? "no device matches '%s'; devices found:"
                  : "unknown device spec '%s' (use auto, gpu, cpu, nvidia, amd, intel, pocl or P:D); devices found:",
            spec);
        for (int i = 0; i < n; i++)
            cp_error_append(NULL, "  %d:%d  %s  [%s, %s]", list[i].platform_index, list[i].device_index, list[i].name,
                            list[i].platform,
                            list[i].is_gpu   ? "GPU"
                            : list[i].is_cpu ? "CPU"
                                             : "other");
    } else {
        *plat = ps[pick];
        *dev = ds[pick];
        *info = list[pick];
    }
    free(list), free(ps), free(ds);
    return st;
}

clphys_status cp_gpu_specs(char *buf, size_t len, int *count)
{
    clphys_device_info *list;
    int n;
    *count = 0;
    buf[0] = 0;
    CP_TRY(enumerate(&list, NULL, NULL, &n));
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        if (!list[i].is_gpu) continue;
        int w =
            snprintf(buf + used, len - used, "%s%d:%d", used ? "," : "", list[i].platform_index, list[i].device_index);
        if (w < 0 || (size_t)w >= len - used) break;
        used += (size_t)w;
        ++*count;
    }
    free(list);
    return CLPHYS_SUCCESS;
}
