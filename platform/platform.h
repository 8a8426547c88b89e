/*
 * platform.h — internal OpenCL plumbing shared by every compute path.
 * Nothing here knows about particles or lattices.
 *
 * The rule for host/ code: it calls OpenCL only through these helpers, so
 * that every call has its error checked and named in one place.  Programs,
 * kernels, buffers, launches, transfers (blocking or with events), further
 * queues, markers, mapping and kernel limits all have a cp_* helper here;
 * a path that needs an OpenCL call with none adds the helper here first.
 * The only OpenCL types host/ code handles are the objects themselves
 * (cl_mem, cl_kernel, cl_event, cl_command_queue) passed to these helpers.
 * clBLAST calls (host/linalg/) are library calls on the context's queue and
 * are not OpenCL calls in this sense.
 */
#ifndef CLPHYS_PLATFORM_H
#define CLPHYS_PLATFORM_H

#include "clphys_core.h"
#include "cl_embedded.h" /* generated: cp_kernel_file and a clsrc_* symbol per kernel file */
#include <stdarg.h>

#define CP_ERR_LEN 16384

struct cp_program_entry;
typedef struct cp_profile cp_profile;

struct clphys_context {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    int profiling; /* queue has CL_QUEUE_PROFILING_ENABLE  */
    clphys_device_info info;
    struct cp_program_entry *programs; /* built programs, owned by the context */
    int span_on;                       /* cp_span_begin: the first launch keeps its event */
    cl_event span_first;               /* the first launch since cp_span_begin */
    cl_program span_prog;              /* the empty kernel that closes a span */
    cl_kernel span_tick;
    cp_profile *prof;       /* CLPHYS_PROFILE: per-kernel times (profile.c) */
    int cache_readonly;     /* the binary cache could not be written: not tried again */
    struct cp_stage *stage; /* staged.c: page-locked slots of large transfers */
    size_t stage_min;       /* staged.c: 0 the default, CP_STAGE_NEVER none */
    size_t stage_chunk;     /* staged.c: 0 the default                    */
    int stage_failed;       /* no page-locked slots: transfers go directly */
    char notes[1024];       /* clphys_context_notes (program.c)     */
    char err[CP_ERR_LEN];
};

/* ---- errors (platform/error.c) ------------------------------------------ */
/* Format the cause into ctx's error text (or the thread's when ctx is NULL)
 * and return st, so callers write: return cp_error(ctx, CLPHYS_ERR_INPUT, ...). */
clphys_status cp_error(clphys_context *ctx, clphys_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A failure made on purpose, for the tests of the distributed paths: on
 * rank `rank`, the at-th call (from 1; calls counts them) of the place
 * `where` fails as a device's would.  at 0: none. */
typedef struct {
    int where, rank;
    long at, calls;
} cp_test_failure;
/* CLPHYS_ERR_OPENCL ("<what>: a device failure injected for the tests")
 * where f asks for this call of `where` on rank me, else success. */
clphys_status cp_test_failure_due(clphys_context *ctx, cp_test_failure *f, int where, int me, const char *what);
/* Append a further line to the error text (e.g. context of an inner failure). */
void cp_error_append(clphys_context *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Map an OpenCL error: allocation failures give CLPHYS_ERR_OUT_OF_MEMORY,
 * everything else CLPHYS_ERR_OPENCL; the message names the call and code. */
clphys_status cp_cl_error(clphys_context *ctx, cl_int err, const char *what);
const char *cp_cl_error_name(cl_int err);
/* Evaluate an OpenCL call; on failure return the mapped status from the caller. */
#define CP_CL(ctx, call)                                                                                               \
    do {                                                                                                               \
        cl_int cp_e_ = (call);                                                                                         \
        if (cp_e_ != CL_SUCCESS) return cp_cl_error((ctx), cp_e_, #call);                                              \
    } while (0)
/* Propagate a clphys_status. */
#define CP_TRY(expr)                                                                                                   \
    do {                                                                                                               \
        clphys_status cp_s_ = (expr);                                                                                  \
        if (cp_s_ != CLPHYS_SUCCESS) return cp_s_;                                                                     \
    } while (0)

/* ---- devices (platform/device.c, platform/context.c) --------------------- */
clphys_status cp_device_probe(cl_platform_id p, cl_device_id d, clphys_device_info *info);
void cp_device_probe_wg_multiple(cl_device_id d, clphys_device_info *info);
/* The capabilities the library checks (fp64, 32- and 64-bit atomics,
 * sub-groups), from the device's CL_DEVICE_EXTENSIONS string `exts` and
 * info->device_version: the probe's rule, also applied to the described
 * AMD and Intel GPUs of tests/gpu_targets.c. */
void cp_device_caps(clphys_device_info *info, const char *exts);
clphys_status cp_select_device(const char *spec, cl_platform_id *plat, cl_device_id *dev, clphys_device_info *info);
/* 1 when the device answers to a class spec of clphys_context_create (gpu,
 * cpu, nvidia, amd, intel, pocl), else 0. */
int cp_device_matches(const clphys_device_info *d, const char *spec);
/* Every GPU as a comma-separated list of "P:D" specs in buf (*count of them;
 * "" and 0 when there is none or buf is too short for more). */
clphys_status cp_gpu_specs(char *buf, size_t len, int *count);

/* ---- build options (platform/defines.c) ------------------------------------
 * A program's options as a map of defines, written in the order added and
 * separated by one space: cp_define_int(&d, "WG", 128) adds -DWG=128,
 * cp_define_str(&d, "B_T", "float") -DB_T=float, cp_define_flag(&d,
 * "LAYOUT_AOS") -DLAYOUT_AOS, cp_define_option(&d, "-cl-denorms-are-zero")
 * a compiler option as it is.  Start from `cp_defines d = {0};`.  The text
 * holds at most CP_DEFINES_MAX - 1 characters: an addition that does not fit
 * (CLPHYS_ERR_OVERFLOW), a name that is no C identifier, a value or option
 * with white space or quotes (CLPHYS_ERR_INVALID_ARGUMENT) is not added, and
 * marks the map: later additions are ignored, cp_defines_check (and so
 * cp_program) returns that status naming the define. */
#define CP_DEFINES_MAX 1024
typedef struct cp_defines {
    char text[CP_DEFINES_MAX]; /* the options so far, NUL-terminated */
    size_t len;                /* strlen(text) */
    clphys_status status;      /* CLPHYS_SUCCESS, or the first addition refused */
    char bad[128];             /* what was refused, for the message */
} cp_defines;
void cp_define_int(cp_defines *d, const char *name, long long value);
void cp_define_str(cp_defines *d, const char *name, const char *value);
void cp_define_flag(cp_defines *d, const char *name);
void cp_define_option(cp_defines *d, const char *option);
/* REAL_T=float, or REAL_T=double and REAL_IS_DOUBLE=1 (cl/platform_common.h) after
 * checking that the device has fp64: CLPHYS_ERR_UNSUPPORTED otherwise. */
clphys_status cp_define_precision(clphys_context *ctx, cp_defines *d, clphys_precision p);
/* CLPHYS_SUCCESS, or d's status with a message naming `program`, the define
 * refused and the options so far (d NULL: success). */
clphys_status cp_defines_check(clphys_context *ctx, const cp_defines *d, const char *program);

/* ---- programs (platform/program.c) ---------------------------------------
 * cp_program: build the embedded kernel file `file`, named by its symbol
 * (&clsrc_nbody_gravity_cl for cl/nbody_gravity.cl: scripts/embed_cl.py makes one per
 * file, so a misspelt file does not link), with `options` added to the
 * device defaults (NULL: none); headers it #includes ("platform_common.h") are resolved from the
 * embedded set (cp_kernel_files).  With CLPHYS_KERNEL_DIR set, the file of
 * that name and its headers are read from that folder instead (kernel
 * development).  Programs are cached in the context (same file + options ->
 * same cl_program; do not release it) and their binaries on disk (see
 * program.c).  A kernel file uses an optional extension only under a macro
 * that the options define (cp_build_check).
 * Errors: CLPHYS_ERR_UNSUPPORTED (cp_build_check), CLPHYS_ERR_BUILD with the
 * build log, CLPHYS_ERR_INVALID_ARGUMENT for a file (or header) missing from
 * CLPHYS_KERNEL_DIR, cp_defines_check's for options that were refused. */
clphys_status cp_program(clphys_context *ctx, const cp_kernel_file *file, const cp_defines *options, cl_program *prog);
/* Build from a source string (used by cp_program and tests).  *from_cache is
 * set to 1 when the binary came from the disk cache.  Caller releases *prog.
 * Errors: as cp_program. */
clphys_status cp_program_from_source(clphys_context *ctx, const char *name, const char *source, const char *options,
                                     cl_program *prog, int *from_cache);
/* What a build with `options` needs of ctx's device (platform/require.c):
 * OpenCL C 1.2, and each extension that a macro of the options enables in
 * cl/platform_common.h (-DREAL_IS_DOUBLE or -DNEED_FP64: cl_khr_fp64;
 * -DNEED_INT64_ATOMICS: cl_khr_int64_base_atomics).  CLPHYS_ERR_UNSUPPORTED
 * naming the program, the extension (or the OpenCL C version) and the device
 * when the device's probed info lacks one; name is only for the message. */
clphys_status cp_build_check(clphys_context *ctx, const char *name, const char *options);
/* Those extensions as a space-separated list in buf ("" for none). */
void cp_required_extensions(const char *options, char *buf, size_t n);
/* The complete options a build passes to the device compiler: -cl-std=CL1.2,
 * -DCLPHYS_GPU=1 or -DCLPHYS_CPU=1, what the kind of device adds (Intel
 * GPUs: program.c's device_options), then options. */
void cp_build_options(const clphys_context *ctx, const char *options, char *buf, size_t n);
/* The i-th program built in ctx (newest first): its file and the options
 * given to cp_program; 0 past the last.  The strings stay ctx's. */
int cp_program_at(const clphys_context *ctx, int i, const cp_kernel_file **file, const char **options);
/* The folder of the on-disk caches (program binaries, tuning files):
 * $CLPHYS_CACHE_DIR, else $XDG_CACHE_HOME/clphys, else ~/.cache/clphys.
 * Returns 0 when CLPHYS_NO_CACHE is set (not "0") or no folder can be named. */
int cp_cache_dir(char *buf, size_t n);
/* mkdir -p, errors ignored (a later open or rename reports them). */
void cp_mkdirs(const char *path);
/* The text of a kernel file with its #include "x.h" lines inlined (from
 * CLPHYS_KERNEL_DIR when set), or NULL; the caller frees it. */
char *cp_kernel_source(const cp_kernel_file *file);
/* Create a kernel; the caller releases it with clReleaseKernel. */
clphys_status cp_kernel(clphys_context *ctx, cl_program prog, const char *name, cl_kernel *k);

/* ---- buffers (platform/buffer.c) ----------------------------------------- */
/* host may be NULL; when non-NULL its bytes are copied in (CL_MEM_COPY_HOST_PTR). */
clphys_status cp_buffer(clphys_context *ctx, cl_mem_flags flags, size_t bytes, const void *host, cl_mem *out);
/* A CL_MEM_USE_HOST_PTR buffer over the `bytes` of host memory at p, which
 * no kernel reads: NVIDIA's OpenCL page-locks p under it, so that copies
 * between a device and p (shared memory between ranks) run at the bus's
 * speed.  NULL where the driver refuses it (the caller copies through its
 * page-locked staging instead); no error is set. */
cl_mem cp_lock_host(clphys_context *ctx, void *p, size_t bytes);
/* Blocking copies on ctx's queue, after the work before them.  Large ones
 * on a GPU go through page-locked chunks (platform/staged.c). */
clphys_status cp_write(clphys_context *ctx, cl_mem m, size_t offset, size_t bytes, const void *src);
clphys_status cp_read(clphys_context *ctx, cl_mem m, size_t offset, size_t bytes, void *dst);
/* ---- large transfers through page-locked chunks (platform/staged.c) -----
 * cp_stage_wanted: whether cp_read / cp_write of `bytes` should take the
 * staged path (by default: a device that is not a CPU, at least 4 MiB, and
 * two or more threads for the host copies, cp_copy_threads_for).
 * cp_stage_ready: wanted, and the context's page-locked slots made (on
 * first use; never where the device refuses them, which is no error).
 * cp_stage_set: from then on stage transfers of at least min_bytes
 * (CP_STAGE_NEVER: none; 0: the default) in chunks of `chunk` bytes (0:
 * 8 MiB); for the tests, which take the staged path on any device.
 * cp_staged_read / cp_staged_write: the staged copies, after
 * cp_stage_ready said yes.  cp_stage_release: at the context's end. */
#define CP_STAGE_NEVER ((size_t)-1)
typedef struct cp_stage cp_stage;
int cp_stage_wanted(const clphys_context *ctx, size_t bytes);
int cp_stage_ready(clphys_context *ctx, size_t bytes);
void cp_stage_set(clphys_context *ctx, size_t min_bytes, size_t chunk);
clphys_status cp_staged_read(clphys_context *ctx, cl_mem m, size_t offset, size_t bytes, void *dst);
clphys_status cp_staged_write(clphys_context *ctx, cl_mem m, size_t offset, size_t bytes, const void *src);
void cp_stage_release(clphys_context *ctx);
/* Fill with a repeated byte pattern (pattern_size 1,2,4,8,16...). */
clphys_status cp_fill(clphys_context *ctx, cl_mem m, const void *pattern, size_t pattern_size, size_t bytes);
/* The size of an application's buffer m; CLPHYS_ERR_INVALID_ARGUMENT when it
 * belongs to another OpenCL context, CLPHYS_ERR_OPENCL when m is no buffer. */
clphys_status cp_mem_bytes(clphys_context *ctx, cl_mem m, size_t *bytes);
void cp_release_mem(cl_mem *m); /* releases and sets NULL; NULL-safe */
void cp_release_kernel(cl_kernel *k);

/* ---- queues, asynchronous transfers, events (platform/queue.c) ----------
 * q NULL means ctx's own queue.  A further queue is in-order, on ctx's device
 * and context; release it with cp_queue_release (which waits for it). */
clphys_status cp_queue_create(clphys_context *ctx, int profiling, cl_command_queue *q);
void cp_queue_release(cl_command_queue *q);
/* A run that asks for no kernel times goes to a queue without profiling
 * (untimed_q) where ctx's own queue profiles: on NVIDIA's OpenCL each
 * command on a profiling queue costs the host time, which a step that waits
 * on the host pays (bench/md-mpi-notes.md, round 22).  cp_untimed_begin
 * makes *untimed_q (once; left NULL where the device refuses a further
 * queue) and puts it in the place of ctx's queue, behind the work already
 * there; cp_untimed_end gives ctx its queue back, behind the run's work.
 * *on tells the end whether the begin switched: not where `timed` (the
 * caller asks for kernel times), a span is open (cp_span_begin), the kernel
 * profile is on (CLPHYS_PROFILE) or ctx's queue does not profile. */
clphys_status cp_untimed_begin(clphys_context *ctx, int timed, cl_command_queue *untimed_q, int *on);
clphys_status cp_untimed_end(clphys_context *ctx, cl_command_queue *untimed_q, int *on);
clphys_status cp_flush(clphys_context *ctx, cl_command_queue q);
clphys_status cp_finish_queue(clphys_context *ctx, cl_command_queue q);
/* Non-blocking read or write on q after the nwait events of wait; *ev (ev may
 * be NULL) completes when the bytes have moved.  The host array must stay
 * valid until then. */
clphys_status cp_read_async(clphys_context *ctx, cl_command_queue q, cl_mem m, size_t offset, size_t bytes, void *dst,
                            cl_uint nwait, const cl_event *wait, cl_event *ev);
clphys_status cp_write_async(clphys_context *ctx, cl_command_queue q, cl_mem m, size_t offset, size_t bytes,
                             const void *src, cl_uint nwait, const cl_event *wait, cl_event *ev);
/* Device-to-device copy on ctx's queue (enqueued, not waited for). */
clphys_status cp_copy(clphys_context *ctx, cl_mem src, size_t src_offset, cl_mem dst, size_t dst_offset, size_t bytes);
/* *ev completes when everything enqueued on q so far has. */
clphys_status cp_marker(clphys_context *ctx, cl_command_queue q, cl_event *ev);
/* Wait for *ev, release it and set it NULL (NULL-safe). */
clphys_status cp_wait(clphys_context *ctx, cl_event *ev);
void cp_release_event(cl_event *ev);
/* *done = 1 when ev (NULL-safe: done) has completed, 0 while it is queued or
 * running; a command that failed gives CLPHYS_ERR_OPENCL. */
clphys_status cp_event_done(clphys_context *ctx, cl_event ev, int *done);
/* Commands enqueued on q (NULL: ctx's queue) after this call start only after
 * the nwait events (from any queue of ctx's OpenCL context) have completed. */
clphys_status cp_enqueue_wait(clphys_context *ctx, cl_command_queue q, cl_uint nwait, const cl_event *wait);
/* Wait for the n events (NULL entries skipped); they stay the caller's. */
clphys_status cp_wait_all(clphys_context *ctx, cl_uint n, const cl_event *ev);
/* Map the first `bytes` of m for the host (blocking) / unmap it (waits, sets
 * *host NULL; NULL-safe). */
clphys_status cp_map(clphys_context *ctx, cl_mem m, cl_map_flags flags, size_t bytes, void **host);
void cp_unmap(clphys_context *ctx, cl_mem m, void **host);
/* Page-locked staging for a plan's transfers: a CL_MEM_ALLOC_HOST_PTR buffer
 * *m of `bytes`, mapped for reading and writing at *host, kept mapped for the
 * plan's life.  On failure both are NULL and the error is returned (a caller
 * may fall back to pageable memory).  cp_pinned_release unmaps and releases
 * it (NULL-safe; sets both NULL). */
clphys_status cp_pinned(clphys_context *ctx, size_t bytes, cl_mem *m, void **host);
void cp_pinned_release(clphys_context *ctx, cl_mem *m, void **host);
/* n bytes from src to dst by `threads` threads (OpenMP; one below 1 KiB a
 * thread, or without OpenMP), for the host copies of ranks that stage
 * through shared memory (platform/copy.c).  cp_copy_threads_for: the count
 * for a rank that shares the host's cores with ranks_here - 1 others (at
 * most 8; 1 beside a CPU device), or the environment variable env's value
 * where it is set (env may be NULL). */
void cp_copy_threads(void *dst, const void *src, size_t n, int threads);
/* The host's page size in bytes (4096 where the system does not say): the
 * unit of the shared segments that buffers page-lock (cp_lock_host). */
size_t cp_page_size(void);
int cp_copy_threads_for(const clphys_context *ctx, int ranks_here, const char *env);
/* The compiled kernel's own limits on ctx's device: the largest work-group
 * (registers may make it smaller than the device's) and its local memory. */
clphys_status cp_kernel_limits(clphys_context *ctx, cl_kernel k, size_t *max_work_group, cl_ulong *local_mem);
/* Kernel k (`name` for the message) launched in work-groups of wg: within
 * its compiled limit and the device's, its local memory within the
 * device's; else CLPHYS_ERR_UNSUPPORTED naming the kernel and every limit
 * (platform/require.c).  For kernels of a fixed or host-chosen size. */
clphys_status cp_check_work_group(clphys_context *ctx, cl_kernel k, const char *name, size_t wg);

/* ---- kernel arguments (platform/args.c) -----------------------------------
 * CP_ARGS(ctx, k, a0, a1, ...) sets every argument of kernel k, in order,
 * from lvalues (a cl_mem, a cl_int, a cl_float4 ...: sizeof and address of
 * each), and returns CLPHYS_ERR_INVALID_ARGUMENT naming the kernel when
 * their number is not the kernel's (CL_KERNEL_NUM_ARGS).  An argument whose
 * size is not its lvalue's is written as a cp_karg: CP_LOCAL(bytes) for
 * __local memory, CP_SIZED(size, ptr) for bytes at ptr, CP_EITHER(c, a, b)
 * for a when c holds else b (a double or a float of the same value, by the
 * program's precision).  At most 32 arguments.
 * CP_ARG_AT(ctx, k, i, v) sets argument i alone, for a launch that changes
 * one argument of a kernel set before; i is checked against the count too. */
typedef struct cp_karg {
    size_t size;       /* bytes of the argument */
    const void *value; /* its bytes; NULL for __local memory */
} cp_karg;
#define CP_LOCAL(bytes)     ((cp_karg){(bytes), NULL})
#define CP_SIZED(size, ptr) ((cp_karg){(size), (ptr)})
#define CP_EITHER(c, a, b)  (*((c) ? &(cp_karg){sizeof(a), &(a)} : &(cp_karg){sizeof(b), &(b)}))
/* a cp_karg as it is, any other lvalue as its size and address */
#define CP_KARG(v)           _Generic((v), cp_karg : (v), default : ((cp_karg){sizeof(v), &(v)}))
#define CP_ARGS(ctx, k, ...) cp_args((ctx), (k), CP_KARGS(__VA_ARGS__))
/* the array and count of cp_args, for a helper that takes them and sets
 * them with cp_args (after adding arguments of its own) */
#define CP_KARGS(...)           (const cp_karg[]){CP_MAP(CP_KARG, __VA_ARGS__)}, CP_NARGS_(__VA_ARGS__)
#define CP_ARG_AT(ctx, k, i, v) cp_arg_at((ctx), (k), (i), CP_KARG(v))
/* Set the n arguments of k from a[0 .. n); n must be k's number of arguments. */
clphys_status cp_args(clphys_context *ctx, cl_kernel k, const cp_karg *a, cl_uint n);
/* Set argument i of k; i must be below k's number of arguments. */
clphys_status cp_arg_at(clphys_context *ctx, cl_kernel k, cl_uint i, cp_karg a);
/* CP_MAP(m, x1, ..., xn): m(x1), ..., m(xn), for n up to 32 */
#define CP_MAP(m, ...) CP_CAT_(CP_MAP_, CP_NARGS_(__VA_ARGS__))(m, __VA_ARGS__)
#define CP_CAT_(a, b)  CP_CAT2_(a, b)
#define CP_CAT2_(a, b) a##b
#define CP_NARGS_(...)                                                                                                 \
    CP_NTH_(__VA_ARGS__, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10,   \
            9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define CP_NTH_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, _22,   \
                _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, n, ...)                                              \
    n
#define CP_MAP_1(m, x)       m(x)
#define CP_MAP_2(m, x, ...)  m(x), CP_MAP_1(m, __VA_ARGS__)
#define CP_MAP_3(m, x, ...)  m(x), CP_MAP_2(m, __VA_ARGS__)
#define CP_MAP_4(m, x, ...)  m(x), CP_MAP_3(m, __VA_ARGS__)
#define CP_MAP_5(m, x, ...)  m(x), CP_MAP_4(m, __VA_ARGS__)
#define CP_MAP_6(m, x, ...)  m(x), CP_MAP_5(m, __VA_ARGS__)
#define CP_MAP_7(m, x, ...)  m(x), CP_MAP_6(m, __VA_ARGS__)
#define CP_MAP_8(m, x, ...)  m(x), CP_MAP_7(m, __VA_ARGS__)
#define CP_MAP_9(m, x, ...)  m(x), CP_MAP_8(m, __VA_ARGS__)
#define CP_MAP_10(m, x, ...) m(x), CP_MAP_9(m, __VA_ARGS__)
#define CP_MAP_11(m, x, ...) m(x), CP_MAP_10(m, __VA_ARGS__)
#define CP_MAP_12(m, x, ...) m(x), CP_MAP_11(m, __VA_ARGS__)
#define CP_MAP_13(m, x, ...) m(x), CP_MAP_12(m, __VA_ARGS__)
#define CP_MAP_14(m, x, ...) m(x), CP_MAP_13(m, __VA_ARGS__)
#define CP_MAP_15(m, x, ...) m(x), CP_MAP_14(m, __VA_ARGS__)
#define CP_MAP_16(m, x, ...) m(x), CP_MAP_15(m, __VA_ARGS__)
#define CP_MAP_17(m, x, ...) m(x), CP_MAP_16(m, __VA_ARGS__)
#define CP_MAP_18(m, x, ...) m(x), CP_MAP_17(m, __VA_ARGS__)
#define CP_MAP_19(m, x, ...) m(x), CP_MAP_18(m, __VA_ARGS__)
#define CP_MAP_20(m, x, ...) m(x), CP_MAP_19(m, __VA_ARGS__)
#define CP_MAP_21(m, x, ...) m(x), CP_MAP_20(m, __VA_ARGS__)
#define CP_MAP_22(m, x, ...) m(x), CP_MAP_21(m, __VA_ARGS__)
#define CP_MAP_23(m, x, ...) m(x), CP_MAP_22(m, __VA_ARGS__)
#define CP_MAP_24(m, x, ...) m(x), CP_MAP_23(m, __VA_ARGS__)
#define CP_MAP_25(m, x, ...) m(x), CP_MAP_24(m, __VA_ARGS__)
#define CP_MAP_26(m, x, ...) m(x), CP_MAP_25(m, __VA_ARGS__)
#define CP_MAP_27(m, x, ...) m(x), CP_MAP_26(m, __VA_ARGS__)
#define CP_MAP_28(m, x, ...) m(x), CP_MAP_27(m, __VA_ARGS__)
#define CP_MAP_29(m, x, ...) m(x), CP_MAP_28(m, __VA_ARGS__)
#define CP_MAP_30(m, x, ...) m(x), CP_MAP_29(m, __VA_ARGS__)
#define CP_MAP_31(m, x, ...) m(x), CP_MAP_30(m, __VA_ARGS__)
#define CP_MAP_32(m, x, ...) m(x), CP_MAP_31(m, __VA_ARGS__)

/* ---- launching and timing (platform/timer.c) ------------------------------ */
/* Enqueue an NDRange.  local may be NULL.  When kernel_s is non-NULL, wait for
 * completion and ADD the kernel's profiled time (end - start, seconds) to it
 * (host wall time when the queue has no profiling).  Adding is for the
 * library's insides, which sum the launches of one call; a public function
 * zeroes its own sum first and SETS the caller's *kernel_s (clphys.h). */
clphys_status cp_launch(clphys_context *ctx, cl_kernel k, cl_uint dim, const size_t *global, const size_t *local,
                        double *kernel_s);
/* As cp_launch, timing nothing: *ev is the launch's event (NULL when the
 * range is empty and nothing was launched), the caller's to wait on, poll,
 * time (cp_event_times) and release. */
clphys_status cp_launch_ev(clphys_context *ctx, cl_kernel k, cl_uint dim, const size_t *global, const size_t *local,
                           cl_event *ev);
/* A 1-D launch of global work-items from global id `offset` on (local 0:
 * the runtime's choice), timing nothing: a kernel that takes its row from
 * get_global_id(0) then runs rows offset .. offset + global - 1. */
clphys_status cp_launch_at(clphys_context *ctx, cl_kernel k, size_t offset, size_t global, size_t local);
/* A 1-D launch on queue q (NULL: ctx's; e.g. a cp_queue_create queue, so
 * that the kernel may run beside those of ctx's queue), timing nothing. */
clphys_status cp_launch_on(clphys_context *ctx, cl_command_queue q, cl_kernel k, size_t global, size_t local);
/* The context's empty kernel (no arguments, built once and kept by ctx):
 * the end marker of spans and the launch of the synchronisation probe. */
clphys_status cp_empty_kernel(clphys_context *ctx, cl_kernel *k);
clphys_status cp_finish(clphys_context *ctx);
size_t cp_round_up(size_t x, size_t m); /* x rounded up to a multiple of m (m = 0: x) */
/* clphys_context_span_begin/_end (clphys.h): between the two, the first
 * cp_launch without kernel_s keeps its event; the others take none, since an
 * event per launch costs the NVIDIA driver ~3.5 us each (bench/md-notes.md),
 * and span_end times an empty kernel enqueued after the last. */
void cp_span_begin(clphys_context *ctx);
clphys_status cp_span_end(clphys_context *ctx, double *seconds);
/* ---- per-kernel profile (platform/profile.c) ------------------------------
 * open: at context creation, when CLPHYS_PROFILE is set and the queue profiles;
 * add: cp_launch hands over the event of every launch (retains k);
 * write: clphys_context_profile_write; close: at context destroy. */
void cp_profile_open(clphys_context *ctx);
void cp_profile_add(clphys_context *ctx, cl_kernel k, cl_event ev);
clphys_status cp_profile_write(clphys_context *ctx, const char *path);
void cp_profile_close(clphys_context *ctx);

/* ---- clocks (platform/clock.c): read by timer.c and profile.c, reads neither */
double cp_now(void);                  /* monotonic host clock, seconds */
double cp_event_seconds(cl_event ev); /* profiled END - START, seconds; < 0 on failure */
/* Profiled START and END of ev in seconds of the device's clock (comparable
 * between the queues of one device); 0, or -1 when they cannot be read. */
int cp_event_times(cl_event ev, double *start, double *end);

/* ---- parameter structs (platform/params.c) ---------------------------------
 * Every public parameter struct begins with size_t struct_size: the
 * application's sizeof of it (CLPHYS_PARAMS_INIT), or 0 for the layout of
 * soname 1, which ends with the field `last` named to CP_PARAMS_IN.  A field
 * is only ever appended (at an offset at or beyond every earlier layout's
 * sizeof), and its zero is its default, so a struct of an older layout
 * reads as ours with the new fields zeroed.  cp_params_in copies src (NULL:
 * all defaults) into dst (lib_size bytes: the library's layout) that way,
 * with dst's struct_size set to lib_size; CLPHYS_ERR_INVALID_ARGUMENT for a
 * struct_size below sizeof(size_t) or above CP_PARAMS_MAX, or a newer
 * application's struct with a field set beyond our layout (the bytes past
 * lib_size up to its struct_size not all zero).  `type` names the struct in
 * the message. */
#define CP_PARAMS_MAX 4096
clphys_status cp_params_in(clphys_context *ctx, const char *type, const void *src, size_t size_1, size_t lib_size,
                           void *dst);
#define CP_PARAMS_IN(ctx, T, src, last, dst)                                                                           \
    cp_params_in((ctx), #T, (src), offsetof(T, last) + sizeof(((const T *)0)->last), sizeof(T), (dst))

/* SplitMix64: the next 64 random bits of *state (platform/rng.c). */
uint64_t cp_splitmix64(uint64_t *state);

/* ---- atomic outputs (platform/output.c; the public part: clphys_output_open) --
 * The temporary name of an output (clphys_output_open says which) into tmp
 * (n bytes), having removed the leftovers of dead processes under that
 * pattern; 0, or ENAMETOOLONG. */
int cp_output_tmp_name(const char *file, char *tmp, size_t n);
/* Enter (pending 1) or leave (0) a temporary file made by another writer
 * (e.g. libnetcdf's) in the registry clphys_outputs_remove_pending clears. */
void cp_output_pending(const char *tmp, int pending);

#endif /* CLPHYS_PLATFORM_H */
