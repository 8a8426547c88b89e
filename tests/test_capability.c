/* test_capability.c — no hidden capability needs (platform/require.c).
 *
 * Every plan of every path (each variant and precision, the linear-algebra
 * spaces, the limit probes) is made on the test device as probed and
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
 * A new path adds its plans to make_every_plan(). */
#define _POSIX_C_SOURCE 200809L /* popen */
#include "host/linalg/linalg.h"
#include "util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

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

static void gravity_plans(clphys_context *ctx)
{
    static const clphys_gravity_params ps[] = {
        {.precision = CLPHYS_FP32},
        {.precision = CLPHYS_FP32, .variant = CLPHYS_GRAVITY_TILED, .potential = 1, .eps = 0.01},
        {.precision = CLPHYS_FP32, .variant = CLPHYS_GRAVITY_TILED, .flush_denormals = 2},
        {.precision = CLPHYS_FP32, .variant = CLPHYS_GRAVITY_VECTOR},
        {.precision = CLPHYS_FP64, .variant = CLPHYS_GRAVITY_TILED, .fast_rsqrt64 = -1},
        {.precision = CLPHYS_FP64, .variant = CLPHYS_GRAVITY_TILED, .fast_rsqrt64 = 1},
        {.precision = CLPHYS_FP64, .variant = CLPHYS_GRAVITY_TILED, .fast_rsqrt64 = 2, .j_split = 2},
        {.precision = CLPHYS_FP64, .variant = CLPHYS_GRAVITY_VECTOR, .potential = 1},
    };
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) {
        clphys_gravity_plan *pl = NULL;
        char what[64];
        snprintf(what, sizeof what, "gravity plan %zu", i);
        expect(ctx, clphys_gravity_plan_create(ctx, &ps[i], &pl), what);
        clphys_gravity_plan_destroy(pl);
    }
}

/* Every LJ variant in both precisions through an MD plan, which builds the
 * neighbour list, the forces and the integrator and runs two steps. */
static void md_plans(clphys_context *ctx)
{
    clphys_md_system sys;
    assert_int_equal(clphys_md_fcc(0.8442, 4, 1.44, tu_seed(), &sys), CLPHYS_SUCCESS);
    for (int v = 1; v < CLPHYS_LJ_NVARIANTS; v++)
        for (int prec = 0; prec < 2; prec++) {
            clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = (clphys_precision)prec,
                                         .variant = (clphys_lj_variant)v},
                                  .dt = 0.005, .neigh_every = 1, .neigh_check = 1};
            clphys_md_plan *pl = NULL;
            char what[96];
            snprintf(what, sizeof what, "md plan, lj %s %s", clphys_lj_variant_name((clphys_lj_variant)v),
                     prec ? "fp64" : "fp32");
            clphys_status st = clphys_md_plan_create(ctx, &p, &sys, &pl);
            if (!st) st = clphys_md_run(pl, 2, NULL);
            expect(ctx, st, what);
            clphys_md_plan_destroy(pl);
        }
    clphys_md_system_destroy(&sys);
}

static void lqcd_plans(clphys_context *ctx)
{
    const int dims[4] = {4, 4, 4, 4};
    clphys_gauge_field g;
    assert_int_equal(clphys_gauge_create(dims, &g), CLPHYS_SUCCESS);
    clphys_gauge_hot(&g, tu_seed());
    clphys_dslash_plan *pl[2][2] = {{NULL}}; /* [precision][layout], reconstruct-12 */
    for (int prec = 0; prec < 2; prec++)
        for (int lay = 0; lay < 2; lay++)
            for (int rec = 0; rec < 2; rec++) {
                clphys_dslash_params p = {.precision = (clphys_precision)prec, .reconstruct = rec ? 18 : 12,
                                          .kappa = 0.12, .layout = lay ? CLPHYS_LQCD_AOS : CLPHYS_LQCD_SOA,
                                          .no_tune = 1};
                clphys_dslash_plan *d = NULL;
                char what[64];
                snprintf(what, sizeof what, "dslash plan %s %s reconstruct-%d", prec ? "fp64" : "fp32",
                         lay ? "AoS" : "SoA", p.reconstruct);
                expect(ctx, clphys_dslash_plan_create(ctx, &g, &p, &d), what);
                if (rec == 0) pl[prec][lay] = d;
                else clphys_dslash_plan_destroy(d);
            }
    for (int lay = 0; lay < 2; lay++)
        for (int blas = 1; blas <= 2 && pl[1][lay]; blas++) {
            clphys_solver_params sp = {.mixed = pl[0][lay] != NULL, .blas = (clphys_solver_blas)blas};
            clphys_solver_plan *s = NULL;
            expect(ctx, clphys_solver_plan_create(pl[1][lay], pl[0][lay], &sp, &s), "solver plan");
            clphys_solver_plan_destroy(s);
        }
    for (int prec = 0; prec < 2; prec++)
        for (int lay = 0; lay < 2; lay++) clphys_dslash_plan_destroy(pl[prec][lay]);
    clphys_gauge_destroy(&g);
}

static void linalg_spaces(clphys_context *ctx)
{
    for (int prec = 0; prec < 2; prec++)
        for (int blas = 0; blas < 2; blas++) {
            la_space_params p = {.precision = (clphys_precision)prec, .n = 1024, .complex_values = 1,
                                 .blas = (la_blas)blas};
            la_space *s = NULL;
            expect(ctx, la_space_create(ctx, &p, &s), prec ? "fp64 linear-algebra space" : "fp32 space");
            la_space_destroy(s);
        }
}

static void make_every_plan(clphys_context *ctx)
{
    gravity_plans(ctx);
    md_plans(ctx);
    lqcd_plans(ctx);
    linalg_spaces(ctx);
    clphys_limits lim;
    expect(ctx, clphys_measure_limits(ctx, 1, &lim), "limit probes");
}

/* clang, told that only the extensions the options name exist, accepts the
 * program; returns the number of programs compiled. */
static int clang_check_programs(clphys_context *ctx)
{
    char src_path[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(src_path, sizeof src_path, "%s/clphys-capability-%ld.cl", tmp && *tmp ? tmp : "/tmp", (long)getpid());
    const char *file, *options;
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
            fail_msg("%s with options \"%s\" uses more than the extensions the host checked (%s):\n%s\n%s", file,
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
                  shape ? "as a GPU" : "as probed", mask == 1 ? ", no fp64" : mask == 2 ? ", no int64 atomics" : "", n);
    assert_true(n >= 10);
    clphys_context_destroy(ctx);
}

static void test_as_probed(void **state) { (void)state; run_case(0, 0); }
static void test_no_fp64(void **state) { (void)state; run_case(0, 1); }
static void test_no_int64_atomics(void **state) { (void)state; run_case(0, 2); }
static void test_gpu_shaped(void **state) { (void)state; run_case(1, 0); }
static void test_gpu_shaped_no_fp64(void **state) { (void)state; run_case(1, 1); }
static void test_gpu_shaped_no_int64_atomics(void **state) { (void)state; run_case(1, 2); }

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
    assert_int_equal(cp_program(ctx, "probe.cl", "-DREAL_T=float -DNEED_INT64_ATOMICS=1", &prog),
                     CLPHYS_ERR_UNSUPPORTED);
    assert_non_null(strstr(clphys_last_error(ctx), "cl_khr_int64_base_atomics"));
    assert_non_null(strstr(clphys_last_error(ctx), "probe.cl"));
    /* a device that compiles only OpenCL C 1.1 */
    char was[sizeof d->opencl_c_version];
    memcpy(was, d->opencl_c_version, sizeof was);
    snprintf(d->opencl_c_version, sizeof d->opencl_c_version, "OpenCL C 1.1 test");
    assert_int_equal(cp_program(ctx, "probe.cl", "-DREAL_T=float", &prog), CLPHYS_ERR_UNSUPPORTED);
    assert_non_null(strstr(clphys_last_error(ctx), "OpenCL C 1.1"));
    memcpy(d->opencl_c_version, was, sizeof was);
    assert_int_equal(cp_program(ctx, "probe.cl", "-DREAL_T=float", &prog), CLPHYS_SUCCESS);
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
        cmocka_unit_test(test_required_extensions), cmocka_unit_test(test_as_probed),
        cmocka_unit_test(test_no_fp64),             cmocka_unit_test(test_no_int64_atomics),
        cmocka_unit_test(test_gpu_shaped),          cmocka_unit_test(test_gpu_shaped_no_fp64),
        cmocka_unit_test(test_gpu_shaped_no_int64_atomics),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
