/* test_capability.c — no hidden capability needs (platform/require.c).
 *
 * Every plan of every path (each variant and precision, the linear-algebra
 * spaces, the limit probes: tests/every_plan.c) is made on the test device as probed and
 * pretending to be a GPU (the GPU-shaped kernels and options), then again
 * with cl_khr_fp64 and with cl_khr_int64_base_atomics switched off in the
 * context's copy of the device info.  Each call must succeed or return
 * CLPHYS_ERR_UNSUPPORTED naming a missing extension, never a build error.
 * Then every program the library built in those contexts is compiled again
 * by clang (OpenCL C 1.2, SPIR target) with every optional extension
 * switched off except those cp_build_check derived from its options
 * (-cl-ext=-all,+...) and warnings made errors: a kernel that uses an
 * extension the host did not check, or that draws a warning, fails there
 * (PoCL's builds pass -w, platform/program.c).  clang: $CLANG, else `clang`
 * on the PATH (Debian: apt-get install clang; scripts/bootstrap.sh installs
 * it).
 *
 * test_gpu_targets feeds the described AMD and Intel GPUs of
 * tests/gpu_targets.c to the capability logic: what they lack is refused by
 * name (scripts/gpu_targets.py checks the same descriptions against the
 * vendors' compilers).
 *
 * The plans: tests/every_plan.c (a new path adds its plans there) and the
 * multi-device ones of tests/every_plan_dist.c. */
#define _POSIX_C_SOURCE 200809L /* popen */
#include "every_plan.h"
#include "gpu_targets.h"
#include "platform/platform.h"
#include "util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static const char *clang_cmd(void)
{
    const char *c = getenv("CLANG");
    return c && *c ? c : "clang";
}

/* The extensions missing from ctx's info, space-separated. */
static void missing(const clphys_device_info *d, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s", d->fp64 ? "" : "cl_khr_fp64 ", d->int64_atomics ? "" : "cl_khr_int64_base_atomics");
}

/* st is success, or UNSUPPORTED naming one of the missing extensions. */
static void expect(clphys_context *ctx, clphys_status st, const char *what)
{
    if (st == CLPHYS_SUCCESS) return;
    char miss[128];
    missing(clphys_context_device(ctx), miss, sizeof miss);
    const char *msg = clphys_last_error(ctx);
    int named = (strstr(miss, "cl_khr_fp64") && strstr(msg, "cl_khr_fp64")) ||
                (strstr(miss, "int64") && strstr(msg, "cl_khr_int64_base_atomics"));
    if (st != CLPHYS_ERR_UNSUPPORTED || !named)
        fail_msg("%s (missing: %s): %s: %s", what, *miss ? miss : "nothing", clphys_status_string(st), msg);
}

static void expect_cb(void *user, clphys_context *ctx, clphys_status st, const char *what)
{
    (void)user;
    expect(ctx, st, what);
}

/* every single-device plan, then the plans over several devices (the
 * context standing for each: the programs of a split lattice) */
static void make_every_plan(clphys_context *ctx)
{
    ep_make_every_plan(ctx, tu_seed(), 1, expect_cb, NULL);
    ep_make_multi_plans(ctx, tu_seed(), expect_cb, NULL);
}

/* clang, told that only the extensions the options name exist, accepts the
 * program; returns the number of programs compiled. */
static int clang_check_programs(clphys_context *ctx)
{
    char src_path[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(src_path, sizeof src_path, "%s/clphys-capability-%ld.cl", tmp && *tmp ? tmp : "/tmp", (long)getpid());
    const cp_kernel_file *file;
    const char *options;
    int i = 0;
    for (; cp_program_at(ctx, i, &file, &options); i++) {
        char *src = cp_kernel_source(file);
        assert_non_null(src);
        FILE *f = fopen(src_path, "w");
        assert_non_null(f);
        fputs(src, f);
        fclose(f);
        free(src);
        char opts[4096], req[256], ext[300] = "-all", cmd[8192];
        cp_build_options(ctx, options, opts, sizeof opts);
        cp_required_extensions(options, req, sizeof req);
        for (char *t = strtok(req, " "); t; t = strtok(NULL, " ")) {
            strcat(ext, ",+");
            strcat(ext, t);
        }
        snprintf(cmd, sizeof cmd,
                 "%s -x cl --target=spir64 -Xclang -finclude-default-header -fsyntax-only -Werror "
                 "-Wno-unused-command-line-argument -Xclang -cl-ext=%s %s %s 2>&1",
                 clang_cmd(), ext, opts, src_path);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        char out[4096] = "";
        size_t got = fread(out, 1, sizeof out - 1, p);
        out[got] = 0;
        int rc = pclose(p);
        if (rc != 0) {
            remove(src_path);
            fail_msg("%s with options \"%s\" uses more than the extensions the host checked (%s):\n%s\n%s", file->name,
                     options, *ext ? ext : "none", cmd, out);
        }
    }
    remove(src_path);
    return i;
}

/* shape 0: as probed; 1: pretending to be a GPU.  mask: 0 none, 1 fp64, 2 int64 atomics. */
static void run_case(int shape, int mask)
{
    clphys_context *ctx = tu_context();
    clphys_device_info *d = (clphys_device_info *)clphys_context_device(ctx);
    if (shape) d->is_gpu = 1, d->is_cpu = 0;
    if (mask == 1) d->fp64 = 0;
    if (mask == 2) d->int64_atomics = 0;
    make_every_plan(ctx);
    int n = clang_check_programs(ctx);
    print_message("# %s%s: %d programs, each accepted by clang with only the extensions checked\n",
                  shape ? "as a GPU" : "as probed",
                  mask == 1   ? ", no fp64"
                  : mask == 2 ? ", no int64 atomics"
                              : "",
                  n);
    assert_true(n >= 10);
    clphys_context_destroy(ctx);
}

static void test_as_probed(void **state)
{
    (void)state;
    run_case(0, 0);
}
static void test_no_fp64(void **state)
{
    (void)state;
    run_case(0, 1);
}
static void test_no_int64_atomics(void **state)
{
    (void)state;
    run_case(0, 2);
}
static void test_gpu_shaped(void **state)
{
    (void)state;
    run_case(1, 0);
}
static void test_gpu_shaped_no_fp64(void **state)
{
    (void)state;
    run_case(1, 1);
}
static void test_gpu_shaped_no_int64_atomics(void **state)
{
    (void)state;
    run_case(1, 2);
}

/* The derivation itself, and the refusal naming the extension. */
static void test_required_extensions(void **state)
{
    (void)state;
    char buf[256];
    cp_required_extensions("-DREAL_T=double -DREAL_IS_DOUBLE=1 -DNEED_INT64_ATOMICS=1", buf, sizeof buf);
    assert_string_equal(buf, "cl_khr_fp64 cl_khr_int64_base_atomics");
    cp_required_extensions("-DREAL_T=float -DNEED_FP64 -DBLAS_WG=256", buf, sizeof buf);
    assert_string_equal(buf, "cl_khr_fp64");
    cp_required_extensions("-DREAL_T=float -DNEED_FP64X=1 -DXNEED_FP64", buf, sizeof buf); /* whole tokens only */
    assert_string_equal(buf, "");
    clphys_context *ctx = tu_context();
    clphys_device_info *d = (clphys_device_info *)clphys_context_device(ctx);
    d->int64_atomics = 0;
    cl_program prog;
    assert_int_equal(cp_program(ctx, &clsrc_platform_probe_cl, probe_options("float", 1), &prog),
                     CLPHYS_ERR_UNSUPPORTED);
    assert_non_null(strstr(clphys_last_error(ctx), "cl_khr_int64_base_atomics"));
    assert_non_null(strstr(clphys_last_error(ctx), "platform_probe.cl"));
    /* a device that compiles only OpenCL C 1.1 */
    char was[sizeof d->opencl_c_version];
    memcpy(was, d->opencl_c_version, sizeof was);
    snprintf(d->opencl_c_version, sizeof d->opencl_c_version, "OpenCL C 1.1 test");
    assert_int_equal(cp_program(ctx, &clsrc_platform_probe_cl, probe_options("float", 0), &prog),
                     CLPHYS_ERR_UNSUPPORTED);
    assert_non_null(strstr(clphys_last_error(ctx), "OpenCL C 1.1"));
    memcpy(d->opencl_c_version, was, sizeof was);
    assert_int_equal(cp_program(ctx, &clsrc_platform_probe_cl, probe_options("float", 0), &prog), CLPHYS_SUCCESS);
    clphys_context_destroy(ctx);
}

/* One plan through clphys_md_plan_create (its programs built), status returned. */
static clphys_status lj_plan(clphys_context *ctx, clphys_md_lj_variant v, clphys_precision prec)
{
    clphys_md_system sys;
    assert_int_equal(clphys_md_fcc(0.8442, 4, 1.44, tu_seed(), &sys), CLPHYS_SUCCESS);
    clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = prec, .variant = v},
                          .dt = 0.005,
                          .neigh_every = 1,
                          .neigh_check = 1};
    clphys_md_plan *pl = NULL;
    clphys_status st = clphys_md_plan_create(ctx, &p, &sys, &pl);
    clphys_md_plan_destroy(pl);
    clphys_md_system_destroy(&sys);
    return st;
}

static clphys_status gravity_fp64_plan(clphys_context *ctx)
{
    clphys_nbody_gravity_params gp = {.precision = CLPHYS_FP64, .variant = CLPHYS_NBODY_GRAVITY_TILED};
    clphys_nbody_gravity_plan *g = NULL;
    clphys_status st = clphys_nbody_gravity_plan_create(ctx, &gp, &g);
    clphys_nbody_gravity_plan_destroy(g);
    return st;
}

static void made(clphys_context *ctx, clphys_status st)
{
    if (st != CLPHYS_SUCCESS) fail_msg("%s: %s", clphys_status_string(st), clphys_last_error(ctx));
}

/* st is CLPHYS_ERR_UNSUPPORTED and the message names ext and the device. */
static void refused(clphys_context *ctx, clphys_status st, const char *ext)
{
    const char *msg = clphys_last_error(ctx);
    assert_int_equal(st, CLPHYS_ERR_UNSUPPORTED);
    if (!strstr(msg, ext) || !strstr(msg, clphys_context_device(ctx)->name))
        fail_msg("the refusal does not name %s and the device: %s", ext, msg);
}

/* The described AMD and Intel GPUs (tests/gpu_targets.c) through the
 * capability logic, as their drivers would report them.  What the vendors'
 * compilers accept is checked against the same descriptions by
 * scripts/gpu_targets.py (CI): gfx90a's clang takes fp64 and 64-bit
 * atomics, acm-g10's ocloc takes 64-bit atomics and refuses fp64. */
static void test_gpu_targets(void **state)
{
    (void)state;
    clphys_context *ctx = tu_context();
    clphys_device_info *d = (clphys_device_info *)clphys_context_device(ctx);
    const clphys_device_info probed = *d;
    cl_program prog;

    /* AMD gfx90a: both extensions, so fp64 and int64-atomic programs build */
    const gt_target *amd = gt_find("gfx90a");
    assert_non_null(amd);
    gt_describe(d, amd);
    assert_true(d->is_gpu && d->fp64 && d->int64_atomics && d->max_work_group_size == 256);
    made(ctx, gravity_fp64_plan(ctx));
    made(ctx, lj_plan(ctx, CLPHYS_MD_LJ_HALF_FIXEDPOINT, CLPHYS_FP64));
    /* the same description without 64-bit atomics: the int64 program is refused by name */
    char exts[2048];
    snprintf(exts, sizeof exts, "%s", amd->extensions);
    char *at = strstr(exts, "cl_khr_int64_base_atomics");
    assert_non_null(at);
    memcpy(at, "cl_khr_int64_base_atomicX", 25); /* a near miss must not count */
    cp_device_caps(d, exts);
    assert_false(d->int64_atomics);
    assert_true(d->fp64);
    refused(ctx, lj_plan(ctx, CLPHYS_MD_LJ_HALF_FIXEDPOINT, CLPHYS_FP32), "cl_khr_int64_base_atomics");
    refused(ctx, cp_program(ctx, &clsrc_platform_probe_cl, probe_options("float", 1), &prog),
            "cl_khr_int64_base_atomics");

    /* Intel acm-g10 (Arc A770): no fp64; every fp64 plan is refused naming cl_khr_fp64 */
    const gt_target *intel = gt_find("acm-g10");
    assert_non_null(intel);
    gt_describe(d, intel);
    assert_true(d->is_gpu && !d->fp64 && d->int64_atomics && d->max_work_group_size == 1024);
    refused(ctx, cp_program(ctx, &clsrc_platform_probe_cl, probe_options("double", 0), &prog), "cl_khr_fp64");
    refused(ctx, gravity_fp64_plan(ctx), "cl_khr_fp64");
    refused(ctx, lj_plan(ctx, CLPHYS_MD_LJ_FULL_CSR, CLPHYS_FP64), "cl_khr_fp64");
    clphys_poisson_plan *pp = NULL;
    const double h[2] = {1, 1}, dz[1] = {1}, depth[4] = {1, 1, 1, 1};
    const clphys_poisson_geometry g = {.nx = 2, .ny = 2, .nz = 1, .dx = h, .dy = h, .dz = dz, .depth = depth};
    clphys_poisson_params pparams = {.precision = CLPHYS_POISSON_FP32, .no_tune = 1};
    refused(ctx, clphys_poisson_plan_create(ctx, &g, &pparams, &pp), "cl_khr_fp64"); /* its CG is fp64 */
    assert_null(pp);
    /* and what it has builds: fp32 with 64-bit atomics */
    made(ctx, lj_plan(ctx, CLPHYS_MD_LJ_HALF_FIXEDPOINT, CLPHYS_FP32));
    /* Intel pvc (Max 1550) has fp64 */
    gt_describe(d, gt_find("pvc"));
    assert_true(d->fp64 && d->int64_atomics);
    made(ctx, gravity_fp64_plan(ctx));
    *d = probed;
    clphys_context_destroy(ctx);
}

static int setup(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "command -v '%s' >/dev/null 2>&1", clang_cmd());
    if (system(cmd) != 0) {
        fprintf(stderr, "clang not found (set CLANG, or apt-get install clang): it is this test's second compiler\n");
        return -1;
    }
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_required_extensions),
        cmocka_unit_test(test_as_probed),
        cmocka_unit_test(test_no_fp64),
        cmocka_unit_test(test_no_int64_atomics),
        cmocka_unit_test(test_gpu_shaped),
        cmocka_unit_test(test_gpu_shaped_no_fp64),
        cmocka_unit_test(test_gpu_shaped_no_int64_atomics),
        cmocka_unit_test(test_gpu_targets),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
