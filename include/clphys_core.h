/*
 * clphys_core.h — the library-wide part of the public API: status codes,
 * precision, contexts and devices, measured limits, the tuning cache's
 * options and status, atomic output files.  No compute path's declarations
 * are here: each path's header (clphys_md.h, clphys_nbody.h,
 * clphys_lqcd.h, clphys_poisson.h) includes this file, and so does the
 * OpenCL plumbing inside the library (platform/platform.h), which knows no
 * physics.  The conventions every call follows are at the top of clphys.h;
 * an application includes clphys.h.
 */
#ifndef CLPHYS_CORE_H
#define CLPHYS_CORE_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CLPHYS_SUCCESS = 0,
    CLPHYS_ERR_INVALID_ARGUMENT, /* NULL pointer, size out of range, unknown option   */
    CLPHYS_ERR_DEVICE_NOT_FOUND, /* no device matches the spec; message lists devices */
    CLPHYS_ERR_OPENCL,           /* an OpenCL call failed; message names call and code */
    CLPHYS_ERR_BUILD,            /* kernel compilation failed; message holds the log   */
    CLPHYS_ERR_OUT_OF_MEMORY,    /* a host or device allocation failed                 */
    CLPHYS_ERR_UNSUPPORTED,      /* device lacks a capability (fp64, int64 atomics...) */
    CLPHYS_ERR_IO,               /* a file could not be opened, read or written        */
    CLPHYS_ERR_FORMAT,           /* malformed input file; message names file and line  */
    CLPHYS_ERR_INPUT,            /* physically invalid input (NaN, outside box, ...)   */
    CLPHYS_ERR_NOT_CONVERGED,    /* iteration cap reached; message gives the residual  */
    CLPHYS_ERR_OVERFLOW,         /* a capacity was exceeded and could not be grown     */
    CLPHYS_ERR_VERIFY            /* a result disagreed with its reference              */
} clphys_status;

typedef enum { CLPHYS_FP32 = 0, CLPHYS_FP64 = 1 } clphys_precision;

/* Parameter structs that grow.  Every clphys_*_params struct, and the
 * tuners' clphys_tune_options, begins with size_t struct_size, the size of the struct as the application was
 * compiled: set it with
 *     clphys_poisson_params p = CLPHYS_PARAMS_INIT(clphys_poisson_params);
 * (the other fields zero: the defaults), or leave it 0, which means the
 * struct's layout of soname 1.  A later release appends fields only (a
 * field's zero is its default); the library reads the fields that lie
 * within struct_size and gives the others their defaults, so an application
 * compiled against an older header keeps working, and one that sets a field
 * added after soname 1 must set struct_size.  A struct_size below
 * sizeof(size_t) or above 4096, or a newer application's struct with a
 * field set that this library does not know, is CLPHYS_ERR_INVALID_ARGUMENT
 * from the call that takes it. */
#define CLPHYS_PARAMS_INIT(type)                                                                                       \
    {                                                                                                                  \
        .struct_size = sizeof(type)                                                                                    \
    }

/* Opaque: one device, its OpenCL context and an in-order command queue. */
typedef struct clphys_context clphys_context;

/* What clphys knows of a device, probed once at context creation. */
typedef struct {
    char name[256];
    char vendor[256];
    char platform[256]; /* platform name, e.g. "NVIDIA CUDA"            */
    char driver_version[128];
    char device_version[128];   /* CL_DEVICE_VERSION                            */
    char opencl_c_version[128]; /* CL_DEVICE_OPENCL_C_VERSION                   */
    int platform_index;         /* indices usable in the "P:D" device spec      */
    int device_index;
    int is_gpu, is_cpu;
    unsigned compute_units;
    unsigned clock_mhz;
    cl_ulong global_mem_bytes;
    cl_ulong local_mem_bytes;
    cl_ulong max_alloc_bytes;
    size_t max_work_group_size;
    size_t preferred_wg_multiple; /* CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE */
    int fp64;                     /* cl_khr_fp64                                  */
    int int32_atomics;            /* cl_khr_global_int32_base_atomics (or CL>=1.1)*/
    int int64_atomics;            /* cl_khr_int64_base_atomics                    */
    int subgroups;                /* cl_khr_subgroups or cl_intel_subgroups       */
} clphys_device_info;

/* Library version string, e.g. "0.2.0".  No errors. */
const char *clphys_version(void);

/* Short fixed text of a status ("out of memory", ...); "unknown status" for
 * a value that is not a clphys_status.  No errors. */
const char *clphys_status_string(clphys_status status);

/* Details of the last failure on ctx (build log included).  ctx may be NULL:
 * then the last failure of a call that had no context (context creation,
 * device listing) on this thread. Never NULL; "" when there is none.
 * No errors. */
const char *clphys_last_error(const clphys_context *ctx);

/* Every device of every platform, in platform then device order: *list holds
 * *count entries, allocated by the library; release it with
 * clphys_devices_destroy.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (list or count
 * NULL), CLPHYS_ERR_DEVICE_NOT_FOUND (no OpenCL platform installed, or no
 * device in any platform), CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_devices_list(clphys_device_info **list, int *count);
/* Release a list from clphys_devices_list; accepts NULL. */
void clphys_devices_destroy(clphys_device_info *list);

/* Create a context on the device chosen by spec:
 *   "auto"  first GPU, else first CPU      "gpu" / "cpu"  first of that type
 *   "nvidia" "amd" "intel" "pocl"          first device whose platform or vendor names it
 *   "P:D"   platform P, device D (indices as printed by `clphys devices`)
 * spec NULL or "" means getenv("CLPHYS_DEVICE"), else "auto".  The queue is
 * in-order with profiling enabled.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (ctx
 * NULL), CLPHYS_ERR_DEVICE_NOT_FOUND (no device matches, or an unknown spec;
 * the message lists every device found), CLPHYS_ERR_OPENCL (the context or
 * queue could not be made), CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_context_create(const char *spec, clphys_context **ctx);

/* Wrap an application's own context, device and queue.  clphys retains them
 * while it uses them and releases only its own references on destroy; the
 * application keeps ownership.  Kernel times need CL_QUEUE_PROFILING_ENABLE on
 * the queue; without it timings are host wall-clock times.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (a NULL argument, or a queue of another context
 * or device), CLPHYS_ERR_OPENCL (the queue could not be queried),
 * CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_context_adopt(cl_context context, cl_device_id device, cl_command_queue queue,
                                   clphys_context **ctx);
/* Several devices at once: one context per entry of specs, a comma-separated
 * list of device specs as for clphys_context_create ("0:0,0:1",
 * "nvidia,pocl"; a device named twice is opened twice: two contexts on one
 * device), where the entry "gpus" stands for every GPU in platform order.
 * specs NULL or "" means $CLPHYS_DEVICE when it is set, else "gpus" when
 * there is a GPU, else "auto".  share_count > 1 divides the expanded list
 * between share_count processes of one node (e.g. MPI ranks on one host):
 * process share_index gets the entries k with k % share_count ==
 * share_index, or, when the list is shorter than share_count, the single
 * entry share_index % length (processes then share that device).
 * share_count <= 1 keeps the whole list.  *ctxs (*n contexts) is released
 * with clphys_contexts_destroy.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (ctxs
 * or n NULL, an empty entry, share_index outside 0..share_count-1, more
 * than 64 entries), CLPHYS_ERR_DEVICE_NOT_FOUND (an entry matches no
 * device, or "gpus" finds none; the message names the entry), and those of
 * clphys_context_create; nothing stays open on failure. */
clphys_status clphys_contexts_create(const char *specs, int share_index, int share_count, clphys_context ***ctxs,
                                     int *n);
/* Destroy the n contexts and the array; accepts NULL. */
void clphys_contexts_destroy(clphys_context **ctxs, int n);

/* Wait for the queue, release the context's programs and clphys's references;
 * accepts NULL.  Destroy every plan made on ctx first. */
void clphys_context_destroy(clphys_context *ctx);

/* The device, OpenCL context, queue and device id of ctx (NULL when ctx is
 * NULL).  No errors; the objects stay owned by ctx. */
const clphys_device_info *clphys_context_device(const clphys_context *ctx);
cl_context clphys_context_cl_context(const clphys_context *ctx);
cl_command_queue clphys_context_queue(const clphys_context *ctx);
cl_device_id clphys_context_cl_device(const clphys_context *ctx);

/* Conditions met on ctx that are not errors but cost something the user
 * should know of, one line each, each said once per context: e.g. a kernel
 * binary cache folder that cannot be written (every run then compiles its
 * kernels again), or a cached binary that crashed an earlier process as it
 * was loaded (dropped and rebuilt).  "" when there are none; NULL ctx: "".
 * The clphys command prints them as it ends.  No errors. */
const char *clphys_context_notes(const clphys_context *ctx);

/* Kernel time of a loop of calls launched back to back (no wait per call), as
 * a simulation runs them: after clphys_context_span_begin, the first kernel
 * that a clphys call launches without being asked for its own time keeps its
 * profiling event (only the first: an event on every launch slows a queue of
 * short kernels on NVIDIA's driver); clphys_context_span_end enqueues an
 * empty kernel, waits for the queue and sets *seconds = START of that kernel -
 * START of the first: the kernels, any idle gaps between them and one launch
 * gap, so never less than their execution time.  Summing per-call times
 * instead (the kernel_s arguments, which wait for each launch) also counts
 * each launch's start-up, which back-to-back launches overlap.  *seconds is 0
 * when no kernel ran and -1 when the queue has no profiling.  _begin: no
 * errors (NULL ignored; a failure to build the empty kernel is reported by
 * _end).  _end errors: CLPHYS_ERR_INVALID_ARGUMENT (ctx or seconds NULL),
 * CLPHYS_ERR_OPENCL (enqueueing, waiting or reading the events failed),
 * CLPHYS_ERR_BUILD (the empty kernel, built by _begin, did not build). */
void clphys_context_span_begin(clphys_context *ctx);
clphys_status clphys_context_span_end(clphys_context *ctx, double *seconds);

/* Where the kernel time goes: when the environment variable CLPHYS_PROFILE
 * is set (to anything but "") as a context is made and its queue has
 * profiling, every kernel that clphys launches keeps its profiling event,
 * and clphys_context_profile_write writes a table of the launches so far to
 * `path` (atomically): per kernel name the launches, total ms, mean, min and
 * max us (END - START of each launch) and share of the kernel time.
 * Kernels launched inside clBLAST are not seen.  An event per launch adds a
 * few us of start-up to each launch on some drivers (NVIDIA), so time a
 * whole run without it.  The CLI writes the table to $CLPHYS_PROFILE as it
 * ends.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL, or no profile kept),
 * CLPHYS_ERR_IO (the file could not be written). */
clphys_status clphys_context_profile_write(clphys_context *ctx, const char *path);

/* Measured limits of a device: the denominators of every "fraction of limit". */
typedef struct {
    double copy_bytes_per_s;  /* b[i] = a[i], bytes read + written per second   */
    double triad_bytes_per_s; /* a[i] = b[i] + s c[i], bytes read + written / s */
    double fma_fp32_flops;    /* fp32 multiply-add chains, 2 flops per FMA      */
    double fma_fp64_flops;    /* 0 when the device has no fp64                  */
    size_t buffer_bytes;      /* size of each bandwidth-probe buffer            */
    int repeat;               /* runs per probe; the figures are medians        */
} clphys_limits;

/* Run the bandwidth and FMA probes (cl/platform_probe.cl) on ctx's device.  Buffers are
 * sized far beyond the last-level cache (512 MiB each on GPUs, 64 MiB on CPUs,
 * capped by the device's max allocation).  repeat <= 0 means 5.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (ctx or limits NULL), CLPHYS_ERR_BUILD (the
 * probe kernels), CLPHYS_ERR_OUT_OF_MEMORY (the probe buffers),
 * CLPHYS_ERR_OPENCL. */
clphys_status clphys_measure_limits(clphys_context *ctx, int repeat, clphys_limits *limits);

/* Host-device transfer limits: the denominators of an exchange's floor
 * (the halo and ghost exchanges of the distributed paths cross the host). */
typedef struct {
    double h2d_bytes_per_s;       /* page-locked host -> device, alone           */
    double d2h_bytes_per_s;       /* device -> page-locked host, alone           */
    double duplex_bytes_per_s;    /* both at once on two queues: bytes moved each
                                     way over the time both take (full duplex:
                                     about the one-way figure; half: about half) */
    double host_copy_bytes_per_s; /* memcpy by one host thread, bytes copied / s  */
    size_t bytes;                 /* per transfer (and per host copy)            */
    int repeat;                   /* rounds; the figures are medians             */
} clphys_transfer_limits;

/* Measure *t on ctx's device with transfers of `bytes` (0: 16 MiB; at most
 * half the device's largest allocation) between device buffers and
 * page-locked host buffers (CL_MEM_ALLOC_HOST_PTR, mapped), each timed on
 * the host clock from enqueue to completion, as an exchange waits for it;
 * repeat <= 0 means 9.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (ctx or t
 * NULL), CLPHYS_ERR_OUT_OF_MEMORY, CLPHYS_ERR_OPENCL. */
clphys_status clphys_measure_transfers(clphys_context *ctx, size_t bytes, int repeat, clphys_transfer_limits *t);

/* The cost of one synchronisation, measured as Miki, Takahashi & Mori
 * measured it (HA-PACS N-body paper, sec. 5, Fig. 7 and Table 2): N_sub empty
 * kernels enqueued back to back on every device's queue, then the host waits
 * for every queue (over MPI, clphys_mpi.h, followed by a barrier of the
 * ranks).  The wall time t_tot(N_sub) = t_sync + N_sub t_launch is fitted by
 * least squares over N_sub = 1, 2, 4, ..., max_launches, each point the
 * median of `repeat` runs (over MPI, the largest of the ranks' medians). */
typedef struct {
    double t_sync_s;       /* intercept: waiting for the queues (+ the barrier), s */
    double t_launch_s;     /* slope: one more asynchronous empty-kernel launch, s  */
    double rms_residual_s; /* of the fit                                          */
    int points;            /* launch counts fitted: n_sub[points], t_tot_s[points] */
    double n_sub[16], t_tot_s[16];
    int max_launches, repeat;
    int devices; /* devices of this process                              */
    int ranks;   /* 1 without MPI                                        */
} clphys_sync_cost;

/* Measure *c on the n devices of ctxs (each context's own queue).
 * max_launches <= 0 means 64 (at most 32768), repeat <= 0 means 9.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (ctxs, an entry or c NULL, n < 1),
 * CLPHYS_ERR_BUILD (the empty kernel), CLPHYS_ERR_OPENCL.  Messages:
 * clphys_last_error(NULL). */
clphys_status clphys_measure_sync(clphys_context *const *ctxs, int n, int max_launches, int repeat,
                                  clphys_sync_cost *c);

/* ---- Tuning: the choices `auto` makes, measured per device --------------
 * Which kernel variant and work-group size is fastest depends on the device
 * and its OpenCL implementation, not only on GPU versus CPU.  Each path's
 * tuner (clphys_md_neighbor_tune, clphys_md_lj_tune, clphys_nbody_gravity_tune,
 * clphys_lqcd_dslash_tune, clphys_poisson_tune; `clphys tune` runs them; the
 * dslash and Poisson plans also time their own at creation when the cache
 * has no entry for their lattice or grid) times the variants and their
 * options at a few representative sizes in both precisions and writes the
 * fastest per device (name, vendor, platform, driver), path, precision and
 * size class (and density class for neighbour lists and LJ) into the tuning
 * cache: one versioned, checksummed text file per device, tune-HASH.txt in
 * the folder of the kernel cache ($CLPHYS_CACHE_DIR, else
 * $XDG_CACHE_HOME/clphys, else ~/.cache/clphys), replaced atomically under a
 * lock; its format is documented in platform/tune.h.  A plan asked for
 * *_AUTO (or an option left 0) takes the cached choice of the nearest tuned
 * size, else the heuristic of its header (clphys_tune_source says which); a
 * damaged, foreign or missing file is ignored.  CLPHYS_NO_TUNE=1 makes plans ignore the cache (and skip the
 * measurements some plans make at creation); CLPHYS_NO_CACHE=1 disables it. */

/* One choice a tuner made (handed to clphys_tune_options.chosen). */
typedef struct {
    const char *path;      /* "lj", "gravity", ...                               */
    const char *what;      /* what was chosen: "variant", "options", "shape" ... */
    const char *precision; /* "fp32", "fp64", "mixed"                            */
    const char *fields;    /* the case, e.g. "n=62500 neighbours=75"             */
    const char *choice;    /* the value stored, e.g. "variant=half-cas ..."      */
    double best_s;         /* measured time of the choice (s per call)           */
    double untuned_s;      /* of the heuristic's choice, same case; 0 unknown    */
    int candidates;        /* configurations timed                               */
} clphys_tune_choice;

/* What a tuner (clphys_<path>_tune) is asked; NULL: every field 0.  It grows
 * as the parameter structs do: CLPHYS_PARAMS_INIT(clphys_tune_options), or
 * struct_size 0 for this layout; a bad struct_size is
 * CLPHYS_ERR_INVALID_ARGUMENT from the tuner. */
typedef struct {
    size_t struct_size;
    int quick;  /* 1: one size per path, fewer candidates (CI, CPUs)  */
    int repeat; /* timed runs per candidate (median); 0 = 3           */
    /* Called (each may be NULL) as a case starts (k of n cases of the path)
     * and with every choice made; nothing is printed by the library. */
    void (*progress)(void *user, const char *path, int k, int n, const char *what);
    void (*chosen)(void *user, const clphys_tune_choice *choice);
    void *user;
} clphys_tune_options;

/* What the tuning cache holds for a device. */
typedef struct {
    int entries;         /* entries in its file; 0 none, -1 damaged or foreign */
    int tuned_paths;     /* paths tuned by clphys_<path>_tune                  */
    char paths[256];     /* their names, comma-separated                       */
    char last_tuned[32]; /* UTC date of the latest ("" never)                  */
    int quick;           /* 1: a quick tuning among them                       */
    char file[4096];     /* the file ("" when the cache is disabled)           */
} clphys_tune_status;

/* Fill *s for dev (e.g. an entry of clphys_devices_list).  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL). */
clphys_status clphys_tune_status_get(const clphys_device_info *dev, clphys_tune_status *s);

/* Where a plan's tuned choice came from, the same for every path (one
 * sequence, platform/tune.h cp_tune_choose): the params, else the tuning
 * cache, else a measurement at plan creation (paths that time there), else
 * the heuristic.  Read it with clphys_poisson_plan_info (tune_source),
 * clphys_lqcd_dslash_plan_tune_source, clphys_nbody_gravity_plan_tune_source,
 * clphys_md_neighbor_plan_tune_source, clphys_md_lj_plan_tune_source.  The values
 * are those of the deprecated CLPHYS_LQCD_DSLASH_WG_* names and of the former
 * int tune_source of clphys_poisson_info. */
typedef enum {
    CLPHYS_TUNE_GIVEN = 0,     /* the params fixed every choice                    */
    CLPHYS_TUNE_HEURISTIC = 1, /* the rule by device type of the path's header:
                                  tuning off (the params' no_tune or
                                  CLPHYS_NO_TUNE), no usable cache entry, and no
                                  measurement (the path does not time at plan
                                  creation, or nothing could be launched)        */
    CLPHYS_TUNE_MEASURED = 2,  /* timed at plan creation, then stored in the cache */
    CLPHYS_TUNE_CACHE = 3      /* read from the tuning cache                       */
} clphys_tune_source;

/* "given", "heuristic", "measured", "tuning cache"; "unknown" for another
 * value.  No errors. */
const char *clphys_tune_source_name(clphys_tune_source source);

/* ---- output files: whole or absent ---------------------------------------------
 * Every file clphys writes is written to a temporary name in its folder and
 * renamed over FILE once complete, so FILE is never half written.  The
 * temporary name is FILE.tmp.PID, or DIR/.clphys-H.tmp.PID (H: 16 hex
 * digits of a hash of the name) when that would exceed the folder's name
 * length limit (NAME_MAX).  A temporary file of that pattern whose process
 * is gone (a run killed with SIGKILL or a crash) is removed by the next
 * clphys_output_open of the same FILE.  FILE, where it exists, must be a
 * regular file (a device node or FIFO is never replaced).
 * clphys_output_open creates the temporary file (its name into tmp, of
 * tmp_size bytes; PATH_MAX + 32 suffices) and opens *f on it, binary.
 * Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL), CLPHYS_ERR_IO (FILE not a
 * regular file, the name too long, cannot create). */
clphys_status clphys_output_open(const char *file, FILE **f, char *tmp, size_t tmp_size);
/* Flush, sync and close f; when ok and all that succeeded, rename tmp to
 * file, otherwise remove tmp.  ok = 0 says a write failed: call it right
 * after the failed write, so that errno still names the cause.  Errors:
 * CLPHYS_ERR_IO naming the file and the system's reason (e.g. "No space
 * left on device"), CLPHYS_ERR_INVALID_ARGUMENT (NULL). */
clphys_status clphys_output_close(FILE *f, const char *tmp, const char *file, int ok);
/* Remove every temporary file of an output still being written in this
 * process (opened, not yet closed).  Async-signal-safe (unlink(2) only):
 * for an application's SIGINT/SIGTERM/SIGHUP handler, before it re-raises
 * the signal; the library installs no handler itself. */
void clphys_outputs_remove_pending(void);

#ifdef __cplusplus
}
#endif

#ifndef CLPHYS_NO_DEPRECATED
#include "clphys_deprecated.h" /* the old names, one release (docs/naming.md) */
#endif
#endif /* CLPHYS_CORE_H */
