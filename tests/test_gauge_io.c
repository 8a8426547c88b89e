/* test_gauge_io.c — gauge fields (cold/hot starts, reunitarization,
 * plaquette, link trace) and NERSC files: round trips in IEEE32BIG/IEEE64BIG,
 * 3x3 and two-row storage; a flipped byte, a truncated file, a header that
 * disagrees with the file size and wrong PLAQUETTE / LINK_TRACE are rejected
 * with CLPHYS_ERR_FORMAT naming the failed check. */
#include "util.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static const int DIMS[4] = {4, 4, 4, 8};
static char dir[256];

static void path(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

static void test_cold_hot(void **state)
{
    (void)state;
    clphys_gauge_field g;
    assert_int_equal(clphys_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    assert_true(fabs(clphys_gauge_plaquette(&g) - 1) < 1e-15);
    assert_true(fabs(clphys_gauge_link_trace(&g) - 1) < 1e-15);
    clphys_gauge_hot(&g, tu_seed());
    assert_true(clphys_gauge_unitarity_violation(&g) < 1e-13);
    double p = clphys_gauge_plaquette(&g), t = clphys_gauge_link_trace(&g);
    print_message("# hot start: plaquette %.5f link trace %.5f\n", p, t);
    /* random links: averages over 6*V plaquettes scatter ~ 1/sqrt(18 V) around 0 */
    assert_true(fabs(p) < 0.1 && fabs(t) < 0.1);
    /* same seed, same field */
    clphys_gauge_field h;
    assert_int_equal(clphys_gauge_create(DIMS, &h), CLPHYS_SUCCESS);
    clphys_gauge_hot(&h, tu_seed());
    assert_memory_equal(g.u, h.u, sizeof(double) * 72 * g.volume);
    /* perturb, then reunitarize */
    uint64_t rng = tu_rng_init(5);
    for (size_t k = 0; k < 72 * g.volume; k++) g.u[k] += 1e-3 * (tu_uniform(&rng) - 0.5);
    assert_true(clphys_gauge_unitarity_violation(&g) > 1e-5);
    clphys_gauge_reunitarize(&g);
    assert_true(clphys_gauge_unitarity_violation(&g) < 1e-13);
    clphys_gauge_destroy(&g);
    clphys_gauge_destroy(&h);
}

static void round_trip(clphys_precision p, int rows)
{
    clphys_gauge_field g, r;
    char f[512];
    path(f, sizeof f, "rt.nersc");
    assert_int_equal(clphys_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_gauge_hot(&g, tu_seed() + 100 * rows + p);
    assert_int_equal(clphys_gauge_write_nersc(f, &g, p, rows), CLPHYS_SUCCESS);
    clphys_status st = clphys_gauge_read_nersc(f, &r);
    if (st) fail_msg("read: %s", clphys_last_error(NULL));
    assert_memory_equal(r.dims, DIMS, sizeof DIMS);
    double worst = 0;
    for (size_t k = 0; k < 72 * g.volume; k++) worst = fmax(worst, fabs(r.u[k] - g.u[k]));
    print_message("# round trip %s rows=%d: max |diff| %.3g, plaquette %.8f\n", p ? "IEEE64BIG" : "IEEE32BIG", rows,
                  worst, clphys_gauge_plaquette(&r));
    assert_true(worst < (p == CLPHYS_FP64 ? (rows == 3 ? 0 : 1e-14) : 3e-7) + 1e-300 || worst == 0);
    assert_int_equal(access(f, F_OK), 0);
    clphys_gauge_destroy(&g);
    clphys_gauge_destroy(&r);
}

static void test_rt_64_3x3(void **s) { (void)s; round_trip(CLPHYS_FP64, 3); }
static void test_rt_64_2(void **s) { (void)s; round_trip(CLPHYS_FP64, 2); }
static void test_rt_32_3x3(void **s) { (void)s; round_trip(CLPHYS_FP32, 3); }
static void test_rt_32_2(void **s) { (void)s; round_trip(CLPHYS_FP32, 2); }

static unsigned char *slurp(const char *f, long *n)
{
    FILE *fp = fopen(f, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    *n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *b = malloc(*n);
    assert_int_equal(fread(b, 1, *n, fp), (size_t)*n);
    fclose(fp);
    return b;
}

static void spill(const char *f, const unsigned char *b, long n)
{
    FILE *fp = fopen(f, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(b, 1, n, fp), (size_t)n);
    fclose(fp);
}

static void expect_format_error(const char *f, const char *needle)
{
    clphys_gauge_field r;
    clphys_status st = clphys_gauge_read_nersc(f, &r);
    print_message("# %s -> %s: %s\n", needle, clphys_status_string(st), clphys_last_error(NULL));
    assert_int_equal(st, CLPHYS_ERR_FORMAT);
    assert_non_null(strstr(clphys_last_error(NULL), needle));
    assert_null(r.u);
}

/* Replace the first occurrence of from by to (same length) in b. */
static void patch(unsigned char *b, long n, const char *from, const char *to)
{
    size_t l = strlen(from);
    for (long i = 0; i + (long)l <= n; i++)
        if (!memcmp(b + i, from, l)) {
            memcpy(b + i, to, l);
            return;
        }
    fail_msg("pattern %s not found", from);
}

/* Make the value after key wrong: its first character becomes '9'
 * (-0.004 -> 90.004, 0.004 -> 9.004), or '1' where it is a '9' already
 * (9.2e-05 -> 1.2e-05: a hot field's link trace can print so). */
static void bump(unsigned char *b, long n, const char *key)
{
    size_t l = strlen(key);
    for (long i = 0; i + (long)l < n; i++)
        if (!memcmp(b + i, key, l)) {
            b[i + l] = b[i + l] == '9' ? '1' : '9';
            return;
        }
    fail_msg("key %s not found", key);
}

static void test_corrupt(void **state)
{
    (void)state;
    clphys_gauge_field g;
    char f[512], bad[512];
    path(f, sizeof f, "good.nersc");
    path(bad, sizeof bad, "bad.nersc");
    assert_int_equal(clphys_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_gauge_hot(&g, tu_seed() + 9);
    assert_int_equal(clphys_gauge_write_nersc(f, &g, CLPHYS_FP64, 3), CLPHYS_SUCCESS);
    long n;
    unsigned char *b = slurp(f, &n);
    long data = n - 72 * 8 * g.volume;
    uint64_t rng = tu_rng_init(3);
    /* a flipped bit in the data */
    long at = data + (long)(tu_uniform(&rng) * (n - data));
    b[at] ^= 0x10;
    spill(bad, b, n);
    expect_format_error(bad, "CHECKSUM");
    b[at] ^= 0x10;
    /* truncated */
    spill(bad, b, n - 1000);
    expect_format_error(bad, "file size");
    /* header dimension disagrees with the size */
    unsigned char *c = malloc(n);
    memcpy(c, b, n);
    patch(c, n, "DIMENSION_4 = 8", "DIMENSION_4 = 6");
    spill(bad, c, n);
    expect_format_error(bad, "file size");
    /* wrong plaquette, wrong link trace (first digit after the sign changed) */
    memcpy(c, b, n);
    bump(c, n, "PLAQUETTE = ");
    spill(bad, c, n);
    expect_format_error(bad, "PLAQUETTE");
    memcpy(c, b, n);
    bump(c, n, "LINK_TRACE = ");
    spill(bad, c, n);
    expect_format_error(bad, "LINK_TRACE");
    /* not a NERSC file */
    spill(bad, (const unsigned char *)"hello\n", 6);
    expect_format_error(bad, "BEGIN_HEADER");
    /* missing file */
    path(bad, sizeof bad, "does-not-exist.nersc");
    clphys_gauge_field r;
    assert_int_equal(clphys_gauge_read_nersc(bad, &r), CLPHYS_ERR_IO);
    free(b), free(c);
    clphys_gauge_destroy(&g);
}

/* A write that cannot complete leaves no file behind. */
static void test_atomic_write(void **state)
{
    (void)state;
    clphys_gauge_field g;
    assert_int_equal(clphys_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    char f[512];
    path(f, sizeof f, "no-such-dir/x.nersc");
    assert_int_equal(clphys_gauge_write_nersc(f, &g, CLPHYS_FP64, 3), CLPHYS_ERR_IO);
    assert_int_not_equal(access(f, F_OK), 0);
    clphys_gauge_destroy(&g);
}

static int setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/clphys-gauge-io-XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    const char *names[] = {"rt.nersc", "good.nersc", "bad.nersc"};
    char f[512];
    for (int i = 0; i < 3; i++) {
        path(f, sizeof f, names[i]);
        unlink(f);
    }
    rmdir(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cold_hot),  cmocka_unit_test(test_rt_64_3x3), cmocka_unit_test(test_rt_64_2),
        cmocka_unit_test(test_rt_32_3x3), cmocka_unit_test(test_rt_32_2),   cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_atomic_write),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
