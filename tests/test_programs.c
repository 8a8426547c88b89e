/* test_programs.c — programs as the platform layer builds them: the embedded
 * kernel files (one symbol each), build options from the define map, kernel
 * arguments set by the counting helper, and the errors of each (a build log,
 * fp64 refused on a device without it, a wrong argument count). */
#include "platform/platform.h"
#include "util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void test_build_error_log(void **state)
{
    (void)state;
    clphys_context *ctx = tu_context();
    const char *bad = "__kernel void k(__global float *a) { a[0] = undefined_symbol_xyz + ; }\n";
    cl_program prog = NULL;
    assert_int_equal(cp_program_from_source(ctx, "bad.cl", bad, "", &prog, NULL), CLPHYS_ERR_BUILD);
    assert_null(prog);
    const char *msg = clphys_last_error(ctx);
    assert_non_null(strstr(msg, "bad.cl"));
    assert_non_null(strstr(msg, "build log"));
    assert_non_null(strstr(msg, "undefined_symbol_xyz"));
    /* a compiler diagnostic is a real error: not retried (the retry is for
       a failure with no message, PoCL's concurrent kernel cache) */
    assert_null(strstr(clphys_context_notes(ctx), "retried once"));
    /* a misspelt kernel file cannot be named: the files are symbols
       (clsrc_platform_probe_cl), and a name without a file does not link */
    clphys_context_destroy(ctx);
}

static void test_embedded_sources(void **state)
{
    (void)state;
    char *src = cp_kernel_source(&clsrc_platform_probe_cl);
    assert_non_null(src);
    assert_non_null(strstr(src, "atomic_add_float")); /* platform_common.h was inlined */
    assert_null(strstr(src, "#include \"platform_common.h\""));
    assert_string_equal(clsrc_platform_probe_cl.name, "platform_probe.cl");
    free(src);
    /* the #include table holds every file, headers too */
    int found = 0;
    for (const cp_kernel_file *const *f = cp_kernel_files; *f; f++) found += *f == &clsrc_lqcd_su3_h;
    assert_int_equal(found, 1);
}

static void test_fp64_unsupported(void **state)
{
    (void)state;
    clphys_context *ctx = tu_context();
    cp_defines d = {0};
    int had = ctx->info.fp64;
    ctx->info.fp64 = 0; /* pretend: the error path must not depend on owning such a device */
    assert_int_equal(cp_define_precision(ctx, &d, CLPHYS_FP64), CLPHYS_ERR_UNSUPPORTED);
    assert_non_null(strstr(clphys_last_error(ctx), "fp64"));
    assert_string_equal(d.text, "");
    ctx->info.fp64 = had;
    assert_int_equal(cp_define_precision(ctx, &d, CLPHYS_FP32), CLPHYS_SUCCESS);
    assert_string_equal(d.text, "-DREAL_T=float");
    clphys_context_destroy(ctx);
}

/* Kernel arguments: CP_ARGS sets them all and refuses a count that is not
 * the kernel's, naming the kernel; CP_ARG_AT refuses an index past the
 * count; CP_EITHER, CP_SIZED and CP_LOCAL reach the kernel as meant (the
 * output, poisoned first, is checked against the host's sum). */
static void test_kernel_args(void **state)
{
    (void)state;
    clphys_context *ctx = tu_context();
    const char *src = "__kernel void args_sum(__global float *out, __global const float *in, float s,\n"
                      "                       __local float *t, uint n) {\n"
                      "  size_t l = get_local_id(0);\n"
                      "  t[l] = l < n ? in[l] : 0.0f;\n"
                      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
                      "  if (l == 0) { float a = 0; for (uint i = 0; i < n; i++) a += t[i]; out[0] = s * a; }\n"
                      "}\n";
    cl_program prog;
    cl_kernel k;
    assert_int_equal(cp_program_from_source(ctx, "args", src, "", &prog, NULL), CLPHYS_SUCCESS);
    assert_int_equal(cp_kernel(ctx, prog, "args_sum", &k), CLPHYS_SUCCESS);
    enum { N = 16 };
    float in[N], poison = -12345.0f, got = 0;
    double want = 0;
    uint64_t rng = tu_rng_init(tu_seed());
    for (int i = 0; i < N; i++) want += in[i] = (float)tu_uniform(&rng);
    cl_mem out, inb;
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, sizeof poison, &poison, &out), CLPHYS_SUCCESS);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_ONLY, sizeof in, in, &inb), CLPHYS_SUCCESS);
    const cl_uint n = N;
    const double s64 = 2.0;
    const float s32 = 3.0f;
    /* one argument too many, one too few: refused with the kernel's name and both counts */
    assert_int_equal(CP_ARGS(ctx, k, out, inb, s32, CP_LOCAL(N * sizeof(float)), n, n), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(clphys_last_error(ctx), "args_sum"));
    assert_non_null(strstr(clphys_last_error(ctx), "takes 5 arguments"));
    assert_non_null(strstr(clphys_last_error(ctx), "gave 6"));
    assert_int_equal(CP_ARGS(ctx, k, out, inb, s32, n), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(clphys_last_error(ctx), "args_sum"));
    assert_non_null(strstr(clphys_last_error(ctx), "gave 4"));
    /* all five: the float picked by CP_EITHER (0: its second), the local array by size */
    assert_int_equal(CP_ARGS(ctx, k, out, inb, CP_EITHER(0, s64, s32), CP_LOCAL(N * sizeof(float)), n), CLPHYS_SUCCESS);
    size_t g = N;
    assert_int_equal(cp_launch(ctx, k, 1, &g, &g, NULL), CLPHYS_SUCCESS);
    assert_int_equal(cp_read(ctx, out, 0, sizeof got, &got), CLPHYS_SUCCESS);
    assert_float_equal(got, 3.0 * want, 1e-5 * 3.0 * want);
    /* one argument again (a float given by its bytes); an index past the count is refused */
    const float s2 = 0.5f;
    assert_int_equal(cp_arg_at(ctx, k, 2, CP_SIZED(sizeof s2, &s2)), CLPHYS_SUCCESS);
    assert_int_equal(CP_ARG_AT(ctx, k, 5, n), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(clphys_last_error(ctx), "args_sum"));
    assert_non_null(strstr(clphys_last_error(ctx), "argument 5"));
    assert_int_equal(cp_write(ctx, out, 0, sizeof poison, &poison), CLPHYS_SUCCESS);
    assert_int_equal(cp_launch(ctx, k, 1, &g, &g, NULL), CLPHYS_SUCCESS);
    assert_int_equal(cp_read(ctx, out, 0, sizeof got, &got), CLPHYS_SUCCESS);
    assert_float_equal(got, 0.5 * want, 1e-5 * want);
    cp_release_mem(&out), cp_release_mem(&inb);
    cp_release_kernel(&k);
    clReleaseProgram(prog);
    clphys_context_destroy(ctx);
}

/* The define map: the options in the order added; an addition that does not
 * fit is an overflow naming it (nothing cut, nothing after it added), a
 * malformed name or value is refused, and cp_program builds nothing with
 * either. */
static void test_defines(void **state)
{
    (void)state;
    clphys_context *ctx = tu_context();
    cp_defines d = {0};
    cp_define_str(&d, "REAL_T", "float");
    cp_define_int(&d, "WG", 128);
    cp_define_int(&d, "OFF", -3);
    cp_define_flag(&d, "LAYOUT_AOS");
    cp_define_option(&d, "-cl-denorms-are-zero");
    assert_string_equal(d.text, "-DREAL_T=float -DWG=128 -DOFF=-3 -DLAYOUT_AOS -cl-denorms-are-zero");
    assert_int_equal(d.len, strlen(d.text));
    assert_int_equal(cp_defines_check(ctx, &d, "platform_probe.cl"), CLPHYS_SUCCESS);

    /* fill to the brim with fresh random names: the one that does not fit is named */
    uint64_t rng = tu_rng_init(tu_seed());
    cp_defines full = {0};
    char name[32], last[32] = "";
    size_t before = 0;
    for (int i = 0; full.status == CLPHYS_SUCCESS; i++) {
        snprintf(name, sizeof name, "D%d_%llu", i, (unsigned long long)(cp_splitmix64(&rng) % 100000));
        before = full.len;
        snprintf(last, sizeof last, "%s", name);
        cp_define_int(&full, name, i);
    }
    assert_int_equal(full.status, CLPHYS_ERR_OVERFLOW);
    assert_int_equal(full.len, before); /* the refused define left no piece behind */
    assert_int_equal(strlen(full.text), before);
    assert_true(before < CP_DEFINES_MAX && before + 32 > CP_DEFINES_MAX); /* refused near the end only */
    cp_define_int(&full, "X", 1);                                         /* ignored after the fault */
    assert_int_equal(full.len, before);
    cl_program prog = NULL;
    assert_int_equal(cp_program(ctx, &clsrc_platform_probe_cl, &full, &prog), CLPHYS_ERR_OVERFLOW);
    assert_null(prog);
    const char *msg = clphys_last_error(ctx);
    assert_non_null(strstr(msg, "platform_probe.cl"));
    assert_non_null(strstr(msg, last));

    /* malformed: a name that is no identifier, a value that would split */
    const char *bad_names[] = {"1X", "A B", "", "X=1"};
    for (size_t i = 0; i < sizeof bad_names / sizeof *bad_names; i++) {
        cp_defines b = {0};
        cp_define_int(&b, bad_names[i], 1);
        assert_int_equal(b.status, CLPHYS_ERR_INVALID_ARGUMENT);
        assert_int_equal(b.len, 0);
    }
    cp_defines b = {0};
    cp_define_str(&b, "B_T", "float -DX");
    assert_int_equal(b.status, CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(cp_program(ctx, &clsrc_platform_probe_cl, &b, &prog), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(clphys_last_error(ctx), "B_T"));
    b = (cp_defines){0};
    cp_define_option(&b, "cl-fast-relaxed-math");
    assert_int_equal(b.status, CLPHYS_ERR_INVALID_ARGUMENT);
    clphys_context_destroy(ctx);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_error_log),  cmocka_unit_test(test_embedded_sources),
        cmocka_unit_test(test_fp64_unsupported), cmocka_unit_test(test_kernel_args),
        cmocka_unit_test(test_defines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
