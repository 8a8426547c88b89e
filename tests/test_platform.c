/* test_platform.c — the OpenCL plumbing: device selection, context adoption,
 * launches and their profile, the program binary cache, the kernel folder
 * override, and the limit and transfer probes (programs, build options and
 * kernel arguments: test_programs.c). */
#include "platform/platform.h"
#include "util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <math.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

/* The options of a platform_probe.cl build: REAL_T (with REAL_IS_DOUBLE for double),
 * NEED_INT64_ATOMICS when int64 is set. */
static const cp_defines *probe_options(const char *real_t, int int64)
{
    static cp_defines d;
    d = (cp_defines){0};
    cp_define_str(&d, "REAL_T", real_t);
    if (!strcmp(real_t, "double")) cp_define_int(&d, "REAL_IS_DOUBLE", 1);
    if (int64) cp_define_int(&d, "NEED_INT64_ATOMICS", 1);
    return &d;
}

static char cache_dir[256];

/* A kernel whose source is unique to this run, so the first build cannot hit the cache. */
static void unique_source(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n,
             "/* %s %llu */\n__kernel void scale(__global float *a, float s) {\n"
             "  size_t i = get_global_id(0); a[i] = a[i] * s + (float)i; }\n",
             tag, (unsigned long long)tu_seed());
}

/* in[0..n) = fresh random numbers (seed), and the scale kernel of prog on a
 * buffer holding a copy of them, factor s. */
static void scale_setup(clphys_context *ctx, cl_program prog, float *in, size_t n, uint64_t seed, float s, cl_kernel *k,
                        cl_mem *m)
{
    uint64_t rng = tu_rng_init(seed);
    for (size_t i = 0; i < n; i++) in[i] = (float)tu_uniform(&rng);
    assert_int_equal(cp_kernel(ctx, prog, "scale", k), CLPHYS_SUCCESS);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, n * sizeof *in, in, m), CLPHYS_SUCCESS);
    assert_int_equal(CP_ARGS(ctx, *k, *m, s), CLPHYS_SUCCESS);
}

/* Run the scale kernel on fresh random data and check every element. */
static void check_scale_kernel(clphys_context *ctx, cl_program prog)
{
    enum { N = 1000 };
    float in[N], out[N];
    cl_kernel k;
    cl_mem m;
    scale_setup(ctx, prog, in, N, 7, 3.0f, &k, &m);
    size_t g = N;
    double t = 0;
    assert_int_equal(cp_launch(ctx, k, 1, &g, NULL, &t), CLPHYS_SUCCESS);
    assert_true(t > 0);
    tu_poison_f32(out, N);
    assert_int_equal(cp_read(ctx, m, 0, sizeof out, out), CLPHYS_SUCCESS);
    for (int i = 0; i < N; i++) assert_float_equal(out[i], in[i] * 3.0f + (float)i, 1e-5f * (1 + i));
    cp_release_mem(&m);
    cp_release_kernel(&k);
}

/* Span of back-to-back launches: 0 with none; with five, positive and within
 * the host clock around them; the five did run (the chained result). */
static void test_launch_span(void **state)
{
    (void)state;
    clphys_context *ctx;
    assert_int_equal(clphys_context_create(NULL, &ctx), CLPHYS_SUCCESS);
    char src[256];
    unique_source(src, sizeof src, "span");
    cl_program prog;
    assert_int_equal(cp_program_from_source(ctx, "span", src, "", &prog, NULL), CLPHYS_SUCCESS);
    double span = -1;
    clphys_context_span_begin(ctx);
    assert_int_equal(clphys_context_span_end(ctx, &span), CLPHYS_SUCCESS);
    assert_true(span == 0);
    enum { N = 4096, CALLS = 5 };
    static float a[N], out[N];
    cl_kernel k;
    cl_mem m;
    scale_setup(ctx, prog, a, N, 11, 0.5f, &k, &m);
    size_t g = N;
    assert_int_equal(cp_finish(ctx), CLPHYS_SUCCESS);
    double t0 = cp_now();
    clphys_context_span_begin(ctx);
    for (int c = 0; c < CALLS; c++) assert_int_equal(cp_launch(ctx, k, 1, &g, NULL, NULL), CLPHYS_SUCCESS);
    assert_int_equal(clphys_context_span_end(ctx, &span), CLPHYS_SUCCESS);
    double wall = cp_now() - t0;
    assert_true(span > 0);
    assert_true(span <= wall * 1.01 + 1e-4);
    tu_poison_f32(out, N);
    assert_int_equal(cp_read(ctx, m, 0, sizeof out, out), CLPHYS_SUCCESS);
    for (int i = 0; i < N; i++) {
        double x = a[i];
        for (int c = 0; c < CALLS; c++) x = x * 0.5 + i;
        assert_float_equal(out[i], x, 1e-5 * (1 + x));
    }
    assert_int_equal(clphys_context_span_end(NULL, &span), CLPHYS_ERR_INVALID_ARGUMENT);
    cp_release_mem(&m);
    cp_release_kernel(&k);
    clReleaseProgram(prog); /* from cp_program_from_source: the caller's (LeakSanitizer found it kept) */
    clphys_context_destroy(ctx);
}

/* cp_untimed_begin / cp_untimed_end: an untimed run goes to a queue
 * without profiling behind the work already queued, and ctx gets its own
 * queue back behind the run's (launches before the switch, one on the
 * untimed queue, one after, whose result depends on their order); a timed
 * run and an open span keep ctx's queue. */
static void test_untimed_queue(void **state)
{
    (void)state;
    clphys_context *ctx = tu_context();
    char src[256];
    unique_source(src, sizeof src, "untimed");
    cl_program prog;
    assert_int_equal(cp_program_from_source(ctx, "untimed", src, "", &prog, NULL), CLPHYS_SUCCESS);
    enum { N = 1 << 18 };
    static float a[N], out[N];
    cl_kernel k;
    cl_mem m;
    scale_setup(ctx, prog, a, N, 17, 0.5f, &k, &m);
    const cl_command_queue own = clphys_context_queue(ctx);
    cl_command_queue uq = NULL;
    int on = 1;
    size_t g = N;
    /* many launches before the switch: the untimed one must wait for all */
    enum { BEFORE = 24 };
    float s[BEFORE + 2];
    for (int c = 0; c < BEFORE; c++) s[c] = 0.5f;
    s[BEFORE] = 2.0f, s[BEFORE + 1] = 3.0f;
    for (int c = 0; c < BEFORE + 2; c++) {
        if (c == BEFORE) {
            assert_int_equal(cp_untimed_begin(ctx, 0, &uq, &on), CLPHYS_SUCCESS);
            assert_int_equal(on, 1);
            assert_true(clphys_context_queue(ctx) != own && uq == own); /* they exchanged places */
            cl_command_queue_properties qp = 0;
            assert_int_equal(
                clGetCommandQueueInfo(clphys_context_queue(ctx), CL_QUEUE_PROPERTIES, sizeof qp, &qp, NULL),
                CL_SUCCESS);
            assert_false(qp & CL_QUEUE_PROFILING_ENABLE);
        }
        assert_int_equal(CP_ARGS(ctx, k, m, s[c]), CLPHYS_SUCCESS);
        assert_int_equal(cp_launch(ctx, k, 1, &g, NULL, NULL), CLPHYS_SUCCESS);
        if (c == BEFORE) {
            assert_int_equal(cp_untimed_end(ctx, &uq, &on), CLPHYS_SUCCESS);
            assert_int_equal(on, 0);
            assert_true(clphys_context_queue(ctx) == own);
        }
    }
    tu_poison_f32(out, N);
    assert_int_equal(cp_read(ctx, m, 0, sizeof out, out), CLPHYS_SUCCESS);
    for (int i = 0; i < N; i++) {
        double x = a[i];
        for (int c = 0; c < BEFORE + 2; c++) x = x * s[c] + i;
        assert_float_equal(out[i], x, 1e-5 * (1 + fabs(x)));
    }
    /* the untimed queue is made once and kept; these keep ctx's queue */
    const cl_command_queue made = uq;
    assert_non_null(made);
    assert_int_equal(cp_untimed_begin(ctx, 1, &uq, &on), CLPHYS_SUCCESS);
    assert_int_equal(on, 0);
    clphys_context_span_begin(ctx);
    assert_int_equal(cp_untimed_begin(ctx, 0, &uq, &on), CLPHYS_SUCCESS);
    assert_int_equal(on, 0);
    double span;
    assert_int_equal(clphys_context_span_end(ctx, &span), CLPHYS_SUCCESS);
    assert_true(clphys_context_queue(ctx) == own && uq == made);
    assert_int_equal(cp_untimed_end(ctx, &uq, &on), CLPHYS_SUCCESS); /* not switched: nothing to do */
    assert_true(clphys_context_queue(ctx) == own);
    cp_queue_release(&uq);
    cp_release_mem(&m);
    cp_release_kernel(&k);
    clReleaseProgram(prog);
    clphys_context_destroy(ctx);
}

/* Large transfers through page-locked chunks (platform/staged.c), forced on
 * any device with 4 KiB chunks: writes and reads of every length around a
 * chunk's and at odd offsets move exactly their bytes and nothing beside
 * them; a read sees the queue's work before it; a copy past the buffer's
 * end fails without leaving events behind, and the next copy works; the
 * default stages large copies on GPUs only, where the host copies have
 * two threads or more. */
static void test_staged_transfers(void **state)
{
    (void)state;
    clphys_context *ctx = tu_context();
    assert_int_equal(cp_stage_wanted(ctx, (size_t)64 << 20),
                     !clphys_context_device(ctx)->is_cpu && cp_copy_threads_for(ctx, 1, NULL) >= 2);
    assert_false(cp_stage_wanted(ctx, (size_t)1 << 20));
    enum { B = 200003, C = 4096 };
    cp_stage_set(ctx, 1, C);
    assert_true(cp_stage_wanted(ctx, 1));
    static unsigned char src[B], dev[B], dst[B];
    uint64_t rng = tu_rng_init(tu_seed());
    for (size_t i = 0; i < B; i++) src[i] = (unsigned char)(256 * tu_uniform(&rng));
    cl_mem m;
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, B, NULL, &m), CLPHYS_SUCCESS);
    const size_t cases[][2] = {{0, 1},         {0, C - 1},     {0, C},     {0, C + 1}, {13, 3 * C + 7},
                               {C - 1, 2 * C}, {100, B - 100}, {0, 3 * C}, {0, B}};
    const unsigned char poison = 0xA5;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const size_t off = cases[c][0], len = cases[c][1];
        assert_int_equal(cp_fill(ctx, m, &poison, 1, B), CLPHYS_SUCCESS);
        assert_int_equal(cp_write(ctx, m, off, len, src + off), CLPHYS_SUCCESS);
        /* checked through the direct path */
        assert_int_equal(clEnqueueReadBuffer(clphys_context_queue(ctx), m, CL_TRUE, 0, B, dev, 0, NULL, NULL),
                         CL_SUCCESS);
        for (size_t i = 0; i < B; i++)
            if (dev[i] != (i >= off && i < off + len ? src[i] : poison))
                fail_msg("write of %zu bytes at %zu: byte %zu is %u", len, off, i, dev[i]);
        memset(dst, 0x5A, B);
        assert_int_equal(cp_read(ctx, m, off, len, dst + off), CLPHYS_SUCCESS);
        for (size_t i = 0; i < B; i++)
            if (dst[i] != (i >= off && i < off + len ? src[i] : 0x5A))
                fail_msg("read of %zu bytes at %zu: byte %zu is %u", len, off, i, dst[i]);
    }
    assert_non_null(ctx->stage); /* the staged path ran */
    /* the queue's work before a read: a fill not waited for */
    const unsigned char seven = 7;
    assert_int_equal(cp_fill(ctx, m, &seven, 1, B), CLPHYS_SUCCESS);
    assert_int_equal(cp_read(ctx, m, 0, B, dst), CLPHYS_SUCCESS);
    for (size_t i = 0; i < B; i++) assert_int_equal(dst[i], 7);
    /* past the end: an error, and the context goes on */
    assert_int_not_equal(cp_read(ctx, m, B - 5 * C, 6 * C, dst), CLPHYS_SUCCESS);
    assert_int_not_equal(cp_write(ctx, m, B - 5 * C, 6 * C, src), CLPHYS_SUCCESS);
    assert_int_equal(cp_write(ctx, m, 0, B, src), CLPHYS_SUCCESS);
    assert_int_equal(cp_read(ctx, m, 0, B, dst), CLPHYS_SUCCESS);
    assert_memory_equal(dst, src, B);
    cp_stage_set(ctx, CP_STAGE_NEVER, 0);
    assert_false(cp_stage_wanted(ctx, (size_t)1 << 30));
    cp_release_mem(&m);
    clphys_context_destroy(ctx);
}

/* CLPHYS_PROFILE: every launch is counted under its kernel's name, across
 * more launches than are kept pending (1024), including timed launches and
 * a span; the table is written atomically, an unwritable path is an IO error
 * that leaves nothing behind, and a context made without it has no profile. */
static void test_kernel_profile(void **state)
{
    (void)state;
    clphys_context *plain, *ctx;
    assert_int_equal(clphys_context_create(NULL, &plain), CLPHYS_SUCCESS);
    char path[512];
    snprintf(path, sizeof path, "%s/profile-%llu.txt", cache_dir, (unsigned long long)tu_seed());
    assert_int_equal(clphys_context_profile_write(plain, path), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(access(path, F_OK), -1);
    clphys_context_destroy(plain);
    tu_setenv("CLPHYS_PROFILE", "1");
    assert_int_equal(clphys_context_create(NULL, &ctx), CLPHYS_SUCCESS);
    tu_env_restore();
    char src[256];
    unique_source(src, sizeof src, "profile");
    cl_program prog;
    assert_int_equal(cp_program_from_source(ctx, "profile", src, "", &prog, NULL), CLPHYS_SUCCESS);
    enum { N = 64, CALLS = 1100 };
    static float a[N], out[N];
    cl_kernel k;
    cl_mem m;
    scale_setup(ctx, prog, a, N, 13, 1.0f, &k, &m);
    size_t g = N;
    double t = 0, span = 0;
    clphys_context_span_begin(ctx);
    for (int c = 0; c < CALLS - 1; c++) assert_int_equal(cp_launch(ctx, k, 1, &g, NULL, NULL), CLPHYS_SUCCESS);
    assert_int_equal(clphys_context_span_end(ctx, &span), CLPHYS_SUCCESS);
    assert_true(span > 0);
    assert_int_equal(cp_launch(ctx, k, 1, &g, NULL, &t), CLPHYS_SUCCESS);
    assert_true(t > 0);
    cp_release_kernel(&k); /* the profile keeps its own reference */
    tu_poison_f32(out, N);
    assert_int_equal(cp_read(ctx, m, 0, sizeof out, out), CLPHYS_SUCCESS);
    for (int i = 0; i < N; i++) /* x -> x + i, CALLS times */
        assert_float_equal(out[i], a[i] + (float)CALLS * i, 1e-4 * (1 + CALLS * i));
    assert_int_equal(clphys_context_profile_write(ctx, path), CLPHYS_SUCCESS);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    unsigned long launches = 0, header_launches = 0;
    double total_ms = 0;
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        char name[64];
        unsigned long n;
        double total, mean;
        if (line[0] == '#') {
            const char *q = strstr(line, "; ");
            if (q && !header_launches) sscanf(q + 2, "%lu launches", &header_launches);
            continue;
        }
        assert_int_equal(sscanf(line, "%63s %lu %lf %lf", name, &n, &total, &mean), 4);
        assert_string_equal(name, "scale");
        assert_true(total > 0 && mean > 0);
        launches = n, total_ms = total, rows++;
    }
    fclose(f);
    /* in-order queue: the span's closing kernel starts after the last launch
     * ends, so the span holds at least the launches' own times */
    assert_true(span >= (total_ms - 0.001) * 1e-3 - t); /* the table rounds to 1 us */
    assert_int_equal(rows, 1);
    assert_int_equal(launches, CALLS);
    assert_int_equal(header_launches, CALLS);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_int_equal(access(tmp, F_OK), -1);
    remove(path);
    assert_int_equal(clphys_context_profile_write(ctx, "/nonexistent-dir/profile.txt"), CLPHYS_ERR_IO);
    assert_int_equal(access("/nonexistent-dir/profile.txt.tmp", F_OK), -1);
    assert_int_equal(clphys_context_profile_write(NULL, path), CLPHYS_ERR_INVALID_ARGUMENT);
    cp_release_mem(&m);
    clReleaseProgram(prog);
    clphys_context_destroy(ctx);
}

/* The single cache file in cache_dir whose name ends in .bin (there is one per key). */
static int cache_files(char names[][512], int max)
{
    DIR *d = opendir(cache_dir);
    int n = 0;
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        size_t l = strlen(e->d_name);
        if (l > 4 && !strcmp(e->d_name + l - 4, ".bin")) snprintf(names[n++], 512, "%s/%s", cache_dir, e->d_name);
    }
    closedir(d);
    return n;
}

static void clear_cache(void)
{
    char names[64][512];
    int n = cache_files(names, 64);
    for (int i = 0; i < n; i++) remove(names[i]);
}

static void test_select_each_device(void **state)
{
    (void)state;
    clphys_device_info *list;
    int n;
    assert_int_equal(clphys_devices_list(&list, &n), CLPHYS_SUCCESS);
    assert_true(n >= 1);
    for (int i = 0; i < n; i++) {
        char spec[32];
        snprintf(spec, sizeof spec, "%d:%d", list[i].platform_index, list[i].device_index);
        clphys_context *ctx;
        assert_int_equal(clphys_context_create(spec, &ctx), CLPHYS_SUCCESS);
        const clphys_device_info *d = clphys_context_device(ctx);
        assert_string_equal(d->name, list[i].name);
        assert_true(d->compute_units >= 1);
        assert_true(d->global_mem_bytes > 0 && d->max_work_group_size >= 1);
        assert_true(d->preferred_wg_multiple >= 1);
        clphys_context_destroy(ctx);
    }
    /* auto: a GPU when there is one, else a CPU */
    int any_gpu = 0;
    for (int i = 0; i < n; i++) any_gpu |= list[i].is_gpu;
    clphys_context *ctx;
    assert_int_equal(clphys_context_create("auto", &ctx), CLPHYS_SUCCESS);
    assert_int_equal(clphys_context_device(ctx)->is_gpu, any_gpu);
    clphys_context_destroy(ctx);
    /* a vendor spec opens a device of that vendor, or finds none: whichever
     * implementations are installed */
    static const char *const vendor[][3] = {{"nvidia", "nvidia", "nvidia"},
                                            {"amd", "amd", "advanced micro"},
                                            {"intel", "intel", "intel"},
                                            {"pocl", "portable", "pocl"}};
    for (int v = 0; v < 4; v++) {
        clphys_status st = clphys_context_create(vendor[v][0], &ctx);
        if (st == CLPHYS_ERR_DEVICE_NOT_FOUND) continue;
        assert_int_equal(st, CLPHYS_SUCCESS);
        char both[600];
        snprintf(both, sizeof both, "%s %s", clphys_context_device(ctx)->platform, clphys_context_device(ctx)->vendor);
        for (char *c = both; *c; c++) *c = (char)tolower((unsigned char)*c);
        assert_true(strstr(both, vendor[v][1]) || strstr(both, vendor[v][2]));
        clphys_context_destroy(ctx);
    }
    clphys_devices_destroy(list);
}

static void test_unknown_spec_lists_devices(void **state)
{
    (void)state;
    clphys_device_info *list;
    int n;
    assert_int_equal(clphys_devices_list(&list, &n), CLPHYS_SUCCESS);
    clphys_context *ctx = (clphys_context *)0x1;
    assert_int_equal(clphys_context_create("banana", &ctx), CLPHYS_ERR_DEVICE_NOT_FOUND);
    assert_null(ctx);
    const char *msg = clphys_last_error(NULL);
    assert_non_null(strstr(msg, "banana"));
    assert_non_null(strstr(msg, "devices found"));
    for (int i = 0; i < n; i++) assert_non_null(strstr(msg, list[i].name));
    assert_int_equal(clphys_context_create("97:3", &ctx), CLPHYS_ERR_DEVICE_NOT_FOUND);
    assert_non_null(strstr(clphys_last_error(NULL), list[0].name));
    clphys_devices_destroy(list);
}

static void test_env_device(void **state)
{
    (void)state;
    clphys_context *ctx;
    tu_setenv("CLPHYS_DEVICE", "no-such-device"); /* the run's own choice is put back below */
    assert_int_equal(clphys_context_create(NULL, &ctx), CLPHYS_ERR_DEVICE_NOT_FOUND);
    tu_setenv("CLPHYS_DEVICE", "0:0");
    assert_int_equal(clphys_context_create("", &ctx), CLPHYS_SUCCESS);
    clphys_context_destroy(ctx);
    tu_env_restore();
}

static void test_adopt_context(void **state)
{
    (void)state;
    cl_platform_id p;
    cl_device_id d;
    assert_int_equal(clGetPlatformIDs(1, &p, NULL), CL_SUCCESS);
    assert_int_equal(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL), CL_SUCCESS);
    cl_int e;
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); /* no profiling: host timing fallback */
    assert_int_equal(e, CL_SUCCESS);
    cl_context other = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    clphys_context *ctx;
    assert_int_equal(clphys_context_adopt(other, d, q, &ctx), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(clphys_context_adopt(c, d, q, &ctx), CLPHYS_SUCCESS);
    assert_ptr_equal(clphys_context_queue(ctx), q);
    assert_ptr_equal(clphys_context_cl_context(ctx), c);
    char src[512];
    unique_source(src, sizeof src, "adopt");
    cl_program prog;
    assert_int_equal(cp_program_from_source(ctx, "adopt", src, "", &prog, NULL), CLPHYS_SUCCESS);
    check_scale_kernel(ctx, prog);
    clReleaseProgram(prog);
    clphys_context_destroy(ctx);
    /* The application's objects are still alive and usable after destroy.  Reference counts
     * are not compared: the spec calls them stale at once, and PoCL's events may still hold
     * a reference to the queue for a moment (seen as a count of 2 in one run). */
    assert_int_equal(clFinish(q), CL_SUCCESS);
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof(float), NULL, &e);
    assert_int_equal(e, CL_SUCCESS);
    float one = 1.0f, back = 0.0f;
    assert_int_equal(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof one, &one, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof back, &back, 0, NULL, NULL), CL_SUCCESS);
    assert_true(back == 1.0f);
    clReleaseMemObject(m);
    clReleaseCommandQueue(q);
    clReleaseContext(other);
    clReleaseContext(c);
}

static void test_program_cache_hit(void **state)
{
    (void)state;
    clphys_context *ctx = tu_context();
    clear_cache();
    char src[512];
    unique_source(src, sizeof src, "cache-hit");
    cl_program prog;
    int hit = -1;
    assert_int_equal(cp_program_from_source(ctx, "t", src, "-DX=1", &prog, &hit), CLPHYS_SUCCESS);
    assert_int_equal(hit, 0);
    clReleaseProgram(prog);
    assert_int_equal(cp_program_from_source(ctx, "t", src, "-DX=1", &prog, &hit), CLPHYS_SUCCESS);
    assert_int_equal(hit, 1);
    check_scale_kernel(ctx, prog);
    clReleaseProgram(prog);
    /* other options: another key, not a hit */
    assert_int_equal(cp_program_from_source(ctx, "t", src, "-DX=2", &prog, &hit), CLPHYS_SUCCESS);
    assert_int_equal(hit, 0);
    clReleaseProgram(prog);
    /* the in-context cache returns the same program for the same file and options */
    cl_program a, b;
    assert_int_equal(cp_program(ctx, &clsrc_platform_probe_cl, probe_options("float", 0), &a), CLPHYS_SUCCESS);
    assert_int_equal(cp_program(ctx, &clsrc_platform_probe_cl, probe_options("float", 0), &b), CLPHYS_SUCCESS);
    assert_ptr_equal(a, b);
    clphys_context_destroy(ctx);
}

/* Damage the one cache file in a given way, then expect a rebuild that works and re-caches. */
static void damage_and_rebuild(void (*damage)(const char *path, long size), const char *tag)
{
    clphys_context *ctx = tu_context();
    clear_cache();
    char src[512];
    unique_source(src, sizeof src, tag);
    cl_program prog;
    int hit;
    assert_int_equal(cp_program_from_source(ctx, tag, src, "", &prog, &hit), CLPHYS_SUCCESS);
    clReleaseProgram(prog);
    char names[4][512];
    assert_int_equal(cache_files(names, 4), 1);
    FILE *f = fopen(names[0], "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    damage(names[0], size);
    hit = -1;
    assert_int_equal(cp_program_from_source(ctx, tag, src, "", &prog, &hit), CLPHYS_SUCCESS);
    assert_int_equal(hit, 0);
    check_scale_kernel(ctx, prog);
    clReleaseProgram(prog);
    assert_int_equal(cp_program_from_source(ctx, tag, src, "", &prog, &hit), CLPHYS_SUCCESS);
    assert_int_equal(hit, 1); /* the rebuild replaced the damaged file */
    clReleaseProgram(prog);
    clphys_context_destroy(ctx);
}

static void flip_last_byte(const char *path, long size)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, size - 1, SEEK_SET);
    int c = fgetc(f);
    fseek(f, size - 1, SEEK_SET);
    fputc(c ^ 0x5a, f);
    fclose(f);
}

static void truncate_half(const char *path, long size) { assert_int_equal(truncate(path, size / 2), 0); }

static void foreign_key(const char *path, long size)
{
    (void)size;
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 12, SEEK_SET); /* first byte of the stored key ("device=...") */
    fputc('X', f);
    fclose(f);
}

static void test_cache_corrupt_byte(void **state)
{
    (void)state;
    damage_and_rebuild(flip_last_byte, "flip");
}
static void test_cache_truncated(void **state)
{
    (void)state;
    damage_and_rebuild(truncate_half, "trunc");
}
static void test_cache_foreign(void **state)
{
    (void)state;
    damage_and_rebuild(foreign_key, "foreign");
}
/* Issue 32 M5: an entry grown to 3 GB (sparse) is refused from its header
 * and size, not read whole first (3.26 GB before). */
static void grow_3g(const char *path, long size)
{
    (void)size;
    assert_int_equal(truncate(path, 3L << 30), 0);
}
static void test_cache_grown(void **state)
{
    (void)state;
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    damage_and_rebuild(grow_3g, "grown");
    getrusage(RUSAGE_SELF, &b);
    print_message("# peak resident set %ld -> %ld KB\n", a.ru_maxrss, b.ru_maxrss);
    assert_true(b.ru_maxrss - a.ru_maxrss < 512 * 1024);
}

/* Issue 17, defect 7: a driver binary cut short inside an envelope that
 * checks out (length and digest recomputed, as a driver fault or a crafted
 * file would leave it).  PoCL may crash inside clCreateProgramWithBinary on
 * it; a child process loads it (the test's own executable, re-run with
 * --load-cached), then a second child must succeed: a crash leaves the load
 * marker, which makes the next load drop the entry and rebuild. */
static const char *self_exe;
/* OCL_ICD_FILENAMES as the process began (main takes it): the Khronos ICD
 * loader splits it in place, its ':' overwritten by NULs, and a child
 * started after the first OpenCL call would see only the first library's
 * platform (NVIDIA's hosts list PoCL first) */
static char *icd_filenames;

static int run_child_as(const char *src_file, int quiet)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (icd_filenames) setenv("OCL_ICD_FILENAMES", icd_filenames, 1);
        if (quiet && !freopen("/dev/null", "w", stderr)) _exit(126);
        execl(self_exe, self_exe, "--load-cached", src_file, (char *)NULL);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}
static int run_child(const char *src_file) { return run_child_as(src_file, 0); }
static int run_child_quiet(const char *src_file) { return run_child_as(src_file, 1); }

static void rewrite_envelope_cut_short(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    unsigned char *b = malloc((size_t)n);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    uint32_t klen;
    memcpy(&klen, b + 8, 4);
    size_t off = 12 + klen; /* blen (8), digest (16), binary */
    uint64_t blen;
    memcpy(&blen, b + off, 8);
    uint64_t cut = blen / 3;
    memcpy(b + off, &cut, 8);
    /* the same digest as program.c computes: two FNV-1a streams */
    uint64_t d[2] = {0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL ^ cut};
    for (int k = 0; k < 2; k++)
        for (uint64_t i = 0; i < cut; i++) d[k] = (d[k] ^ b[off + 24 + i]) * 0x100000001b3ULL;
    memcpy(b + off + 8, d, 16);
    f = fopen(path, "wb");
    assert_int_equal(fwrite(b, 1, off + 24 + cut, f), off + 24 + cut);
    fclose(f);
    free(b);
}

static void test_cache_cut_short_binary(void **state)
{
    (void)state;
    clear_cache();
    char src[512], src_file[600];
    unique_source(src, sizeof src, "cut-short");
    snprintf(src_file, sizeof src_file, "%s/cut-short.cl", cache_dir);
    FILE *f = fopen(src_file, "w");
    assert_non_null(f);
    fputs(src, f);
    fclose(f);
    int status = run_child(src_file); /* builds and stores */
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char names[4][512];
    assert_int_equal(cache_files(names, 4), 1);
    rewrite_envelope_cut_short(names[0]);
    status = run_child_quiet(src_file); /* its crash inside the driver is the point: no report of it */
    fprintf(stderr, "# a binary cut to a third in a valid envelope: first load %s\n",
            WIFSIGNALED(status)   ? "crashed the child (signal)"
            : WEXITSTATUS(status) ? "failed"
                                  : "was refused and rebuilt");
    status = run_child(src_file); /* never a second crash on the same entry */
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    status = run_child(src_file); /* and the rebuilt entry is a cache hit again */
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    unlink(src_file);
}

/* The child: build the kernel of a file through the cache, run it, exit 0. */
static int load_cached(const char *src_file)
{
    FILE *f = fopen(src_file, "r");
    if (!f) {
        fprintf(stderr, "# child: cannot open %s\n", src_file);
        return 3;
    }
    char src[1024];
    size_t n = fread(src, 1, sizeof src - 1, f);
    fclose(f);
    src[n] = 0;
    clphys_context *ctx;
    clphys_status st = clphys_context_create(getenv("CLPHYS_TEST_DEVICE"), &ctx);
    if (st) { /* said, so that a failing parent's log tells why, with what finds the platforms */
        const char *v = getenv("OCL_ICD_VENDORS"), *fn = getenv("OCL_ICD_FILENAMES");
        fprintf(stderr, "# child: no context: %s\n# child: OCL_ICD_VENDORS=%s OCL_ICD_FILENAMES=%s\n",
                clphys_last_error(NULL), v ? v : "(unset)", fn ? fn : "(unset)");
        return 4;
    }
    cl_program prog;
    int hit = 0;
    st = cp_program_from_source(ctx, "child", src, "", &prog, &hit);
    if (!st) {
        fprintf(stderr, "# child: %s%s%s\n", hit ? "cache hit" : "built from source",
                *clphys_context_notes(ctx) ? "; " : "", clphys_context_notes(ctx));
        clReleaseProgram(prog);
    } else
        fprintf(stderr, "# child: the build failed: %s\n", clphys_last_error(ctx));
    clphys_context_destroy(ctx);
    return st ? 5 : 0;
}

/* A cache folder that cannot be written: said once in the context's notes,
 * and the builds still work. */
static void test_cache_readonly(void **state)
{
    (void)state;
    char ro[600];
    snprintf(ro, sizeof ro, "%s/readonly", cache_dir);
    /* a path below a regular file cannot be a folder, whoever runs the test (root ignores modes) */
    FILE *f = fopen(ro, "w");
    assert_non_null(f);
    fclose(f);
    char sub[700];
    snprintf(sub, sizeof sub, "%s/cache", ro);
    tu_setenv("CLPHYS_CACHE_DIR", sub);
    clphys_context *ctx = tu_context();
    assert_string_equal(clphys_context_notes(ctx), "");
    for (int k = 0; k < 2; k++) {
        char src[512], tag[16];
        snprintf(tag, sizeof tag, "ro%d", k);
        unique_source(src, sizeof src, tag);
        cl_program prog;
        assert_int_equal(cp_program_from_source(ctx, tag, src, "", &prog, NULL), CLPHYS_SUCCESS);
        check_scale_kernel(ctx, prog);
        clReleaseProgram(prog);
    }
    const char *notes = clphys_context_notes(ctx);
    fprintf(stderr, "# notes: %s\n", notes);
    assert_non_null(strstr(notes, "kernel cache: cannot write in"));
    assert_null(strchr(notes, '\n')); /* once, though two programs were built */
    clphys_context_destroy(ctx);
    tu_env_restore();
    unlink(ro);
}

/* CLPHYS_KERNEL_DIR replaces the embedded sources (kernel development): the
 * folder's platform_probe.cl stands for clsrc_platform_probe_cl, and a file the folder lacks is
 * an error naming it. */
static void test_kernel_dir_override(void **state)
{
    (void)state;
    char dir[300], path[400];
    snprintf(dir, sizeof dir, "%s/kdir", cache_dir);
    mkdir(cache_dir, 0755);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/platform_probe.cl", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("#include \"dev.h\"\n__kernel void scale(__global float *a, float s) { size_t i = get_global_id(0); a[i] = "
          "DEV_SCALE(a[i], s) + (float)i; }\n",
          f);
    fclose(f);
    snprintf(path, sizeof path, "%s/dev.h", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("#define DEV_SCALE(x, s) ((x) * (s))\n", f);
    fclose(f);
    tu_setenv("CLPHYS_KERNEL_DIR", dir);
    char *src = cp_kernel_source(&clsrc_platform_probe_cl);
    assert_non_null(src);
    assert_non_null(strstr(src, "#define DEV_SCALE"));
    free(src);
    assert_null(cp_kernel_source(&clsrc_nbody_gravity_cl)); /* embedded files are not consulted then */
    clphys_context *ctx = tu_context();
    cl_program prog;
    assert_int_equal(cp_program(ctx, &clsrc_platform_probe_cl, NULL, &prog), CLPHYS_SUCCESS);
    check_scale_kernel(ctx, prog);
    assert_int_equal(cp_program(ctx, &clsrc_nbody_gravity_cl, NULL, &prog), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(clphys_last_error(ctx), "nbody_gravity.cl"));
    clphys_context_destroy(ctx);
    tu_env_restore();
    remove(path);
    snprintf(path, sizeof path, "%s/platform_probe.cl", dir);
    remove(path);
    rmdir(dir);
}

static void test_out_of_memory(void **state)
{
    (void)state;
    clphys_context *ctx = tu_context();
    cl_mem m;
    size_t huge = (size_t)ctx->info.max_alloc_bytes + ((size_t)1 << 30);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, huge, NULL, &m), CLPHYS_ERR_OUT_OF_MEMORY);
    assert_null(m);
    assert_non_null(strstr(clphys_last_error(ctx), "bytes"));
    clphys_context_destroy(ctx);
}

static void test_status_strings(void **state)
{
    (void)state;
    for (int s = CLPHYS_SUCCESS; s <= CLPHYS_ERR_VERIFY; s++) {
        const char *t = clphys_status_string((clphys_status)s);
        assert_non_null(t);
        assert_string_not_equal(t, "unknown status");
    }
    assert_string_equal(clphys_version(), CLPHYS_VERSION);
}

static void test_probes_plausible(void **state)
{
    (void)state;
    clphys_context *ctx = tu_context();
    clphys_limits lim;
    assert_int_equal(clphys_measure_limits(ctx, 3, &lim), CLPHYS_SUCCESS);
    /* from a slow CPU (0.5 GB/s, 1 GFLOP/s) to beyond any current GPU (20 TB/s, 1 PFLOP/s) */
    assert_true(lim.copy_bytes_per_s > 5e8 && lim.copy_bytes_per_s < 2e13);
    assert_true(lim.triad_bytes_per_s > 5e8 && lim.triad_bytes_per_s < 2e13);
    assert_true(lim.fma_fp32_flops > 1e9 && lim.fma_fp32_flops < 1e15);
    if (ctx->info.fp64) assert_true(lim.fma_fp64_flops > 1e8 && lim.fma_fp64_flops <= 1.5 * lim.fma_fp32_flops);
    assert_true(lim.buffer_bytes >= ((size_t)16 << 20));
    fprintf(stderr, "# %s: copy %.1f GB/s, triad %.1f GB/s, fp32 %.1f GFLOP/s, fp64 %.1f GFLOP/s\n", ctx->info.name,
            lim.copy_bytes_per_s / 1e9, lim.triad_bytes_per_s / 1e9, lim.fma_fp32_flops / 1e9,
            lim.fma_fp64_flops / 1e9);
    clphys_context_destroy(ctx);
}

/* The transfer probe: plausible figures, the size as asked (clamped to half
 * the largest allocation), NULL refused. */
static void test_transfers_plausible(void **state)
{
    (void)state;
    clphys_context *ctx = tu_context();
    clphys_transfer_limits t;
    assert_int_equal(clphys_measure_transfers(ctx, (size_t)1 << 20, 3, &t), CLPHYS_SUCCESS);
    const double v[4] = {t.h2d_bytes_per_s, t.d2h_bytes_per_s, t.duplex_bytes_per_s, t.host_copy_bytes_per_s};
    for (int i = 0; i < 4; i++) assert_true(v[i] > 1e7 && v[i] < 1e13); /* 10 MB/s .. 10 TB/s */
    assert_true(t.bytes == ((size_t)1 << 20) || t.bytes == ctx->info.max_alloc_bytes / 2);
    assert_int_equal(t.repeat, 3);
    assert_int_equal(clphys_measure_transfers(ctx, 0, 0, NULL), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(clphys_measure_transfers(NULL, 0, 0, &t), CLPHYS_ERR_INVALID_ARGUMENT);
    fprintf(stderr, "# %s: h2d %.1f GB/s, d2h %.1f GB/s, both %.1f GB/s each way, memcpy %.1f GB/s\n", ctx->info.name,
            v[0] / 1e9, v[1] / 1e9, v[2] / 1e9, v[3] / 1e9);
    clphys_context_destroy(ctx);
}

int main(int argc, char **argv)
{
    self_exe = argv[0];
    if (getenv("OCL_ICD_FILENAMES")) icd_filenames = strdup(getenv("OCL_ICD_FILENAMES"));
    if (argc == 3 && !strcmp(argv[1], "--load-cached")) return load_cached(argv[2]);
    const char *base = getenv("CLPHYS_CACHE_DIR");
    snprintf(cache_dir, sizeof cache_dir, "%s/platform-test-%ld", base && *base ? base : "/tmp", (long)getpid());
    setenv("CLPHYS_CACHE_DIR", cache_dir, 1);
    unsetenv("CLPHYS_NO_CACHE");
    tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_strings),     cmocka_unit_test(test_transfers_plausible),
        cmocka_unit_test(test_select_each_device), cmocka_unit_test(test_unknown_spec_lists_devices),
        cmocka_unit_test(test_env_device),         cmocka_unit_test(test_adopt_context),
        cmocka_unit_test(test_launch_span),        cmocka_unit_test(test_kernel_profile),
        cmocka_unit_test(test_untimed_queue),      cmocka_unit_test(test_staged_transfers),
        cmocka_unit_test(test_program_cache_hit),  cmocka_unit_test(test_cache_corrupt_byte),
        cmocka_unit_test(test_cache_truncated),    cmocka_unit_test(test_cache_foreign),
        cmocka_unit_test(test_cache_grown),        cmocka_unit_test(test_cache_cut_short_binary),
        cmocka_unit_test(test_cache_readonly),     cmocka_unit_test(test_kernel_dir_override),
        cmocka_unit_test(test_out_of_memory),      cmocka_unit_test(test_probes_plausible),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    clear_cache();
    rmdir(cache_dir);
    return failed;
}
