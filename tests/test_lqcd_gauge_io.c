/* test_lqcd_gauge_io.c — gauge fields (cold/hot starts, reunitarization,
 * plaquette, link trace) and gauge files:
 *  - NERSC round trips in IEEE32BIG/IEEE64BIG, 3x3 and two-row storage, and
 *    ILDG round trips in fp32/fp64: the same bits back, and written again the
 *    same file (NERSC); a flipped byte, a truncated file, a header that
 *    disagrees with the file size and wrong PLAQUETTE / LINK_TRACE are
 *    rejected with CLPHYS_ERR_FORMAT naming the failed check;
 *  - hostile files (issue 17): a header claiming 64^4 on a small file fails
 *    at once, before any allocation; NaN links with a matching checksum,
 *    PLAQUETTE = nan, links scaled by 2 and all-zero links are refused;
 *  - lenient NERSC: whitespace after the data is accepted, other bytes are
 *    not; CHECKSUM = 0 or missing, PLAQUETTE or LINK_TRACE missing: refused
 *    unless allow_unverified, and then reported, with the other checks run;
 *  - files written by other programs (tests/data/gauge/README.md): MILC's
 *    binary sample lat.sample.l4444 (MILC v5) and its ILDG copy
 *    lat.sample.l4444.ildg (written by MILC through QIO), whose plaquette
 *    MILC's sample outputs document (CHECK PLAQ 1.794675 1.774426: 0.5948502
 *    in the 1/3-normalised convention), and lat.sample.l4444.nersc written by
 *    an independent writer (make_nersc.py) as other programs leave NERSC
 *    files (CHECKSUM = 0, a newline after the data). */
#include "util.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <cmocka.h>

static const int DIMS[4] = {4, 4, 4, 8};
static char dir[256];

static void path(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

static void test_cold_hot(void **state)
{
    (void)state;
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    assert_true(fabs(clphys_lqcd_gauge_plaquette(&g) - 1) < 1e-15);
    assert_true(fabs(clphys_lqcd_gauge_link_trace(&g) - 1) < 1e-15);
    clphys_lqcd_gauge_hot(&g, tu_seed());
    assert_true(clphys_lqcd_gauge_unitarity_violation(&g) < 1e-13);
    double p = clphys_lqcd_gauge_plaquette(&g), t = clphys_lqcd_gauge_link_trace(&g);
    print_message("# hot start: plaquette %.5f link trace %.5f\n", p, t);
    /* random links: averages over 6*V plaquettes scatter ~ 1/sqrt(18 V) around 0 */
    assert_true(fabs(p) < 0.1 && fabs(t) < 0.1);
#ifdef _OPENMP
    /* the plaquette sums in a fixed order: the same bits on 1 thread and on 3 */
    const int nt = omp_get_max_threads();
    omp_set_num_threads(1);
    const double p1 = clphys_lqcd_gauge_plaquette(&g);
    omp_set_num_threads(3);
    const double p3 = clphys_lqcd_gauge_plaquette(&g);
    omp_set_num_threads(nt);
    assert_true(p1 == p && p3 == p);
#endif
    /* same seed, same field */
    clphys_lqcd_gauge_field h;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &h), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&h, tu_seed());
    assert_memory_equal(g.u, h.u, sizeof(double) * 72 * g.volume);
    /* perturb, then reunitarize */
    uint64_t rng = tu_rng_init(5);
    for (size_t k = 0; k < 72 * g.volume; k++) g.u[k] += 1e-3 * (tu_uniform(&rng) - 0.5);
    assert_true(clphys_lqcd_gauge_unitarity_violation(&g) > 1e-5);
    clphys_lqcd_gauge_reunitarize(&g);
    assert_true(clphys_lqcd_gauge_unitarity_violation(&g) < 1e-13);
    clphys_lqcd_gauge_destroy(&g);
    clphys_lqcd_gauge_destroy(&h);
}

static unsigned char *slurp(const char *f, long *n);

/* Write g, read it back (r1), write r1 and read that (r2): r2 must be r1 bit
 * for bit (and the NERSC file byte for byte); fp64 with 3 rows gives g's own
 * bits back at once. */
static void round_trip(clphys_lqcd_gauge_file_format fmt, clphys_precision p, int rows)
{
    clphys_lqcd_gauge_field g, r1, r2;
    char f1[512], f2[512];
    path(f1, sizeof f1, "rt1");
    path(f2, sizeof f2, "rt2");
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 100 * rows + p);
    assert_int_equal(clphys_lqcd_gauge_write(f1, &g, fmt, p, rows), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_file_info info;
    clphys_status st = clphys_lqcd_gauge_read(f1, NULL, &r1, &info);
    if (st) fail_msg("read: %s", clphys_last_error(NULL));
    assert_int_equal(info.format, fmt);
    assert_int_equal(info.precision, p);
    assert_int_equal(info.rows, rows);
    assert_true(info.checksum_verified);
    assert_string_equal(info.unverified, "");
    assert_memory_equal(r1.dims, DIMS, sizeof DIMS);
    double worst = 0;
    for (size_t k = 0; k < 72 * g.volume; k++) worst = fmax(worst, fabs(r1.u[k] - g.u[k]));
    print_message("# round trip %s %s rows=%d: max |diff| %.3g, plaquette %.8f, unitarity %.2g\n",
                  clphys_lqcd_gauge_file_format_name(fmt), p ? "fp64" : "fp32", rows, worst,
                  clphys_lqcd_gauge_plaquette(&r1), info.unitarity);
    if (p == CLPHYS_FP64 && rows == 3) assert_memory_equal(r1.u, g.u, sizeof(double) * 72 * g.volume);
    assert_true(worst < (p == CLPHYS_FP64 ? 1e-14 : 3e-7));
    assert_int_equal(clphys_lqcd_gauge_write(f2, &r1, fmt, p, rows), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_gauge_read(f2, NULL, &r2, NULL), CLPHYS_SUCCESS);
    assert_memory_equal(r2.u, r1.u, sizeof(double) * 72 * g.volume);
    if (fmt == CLPHYS_LQCD_GAUGE_FILE_NERSC) {
        long n1, n2;
        unsigned char *b1 = slurp(f1, &n1), *b2 = slurp(f2, &n2);
        assert_int_equal(n1, n2);
        assert_memory_equal(b1, b2, (size_t)n1);
        free(b1), free(b2);
    }
    clphys_lqcd_gauge_destroy(&g);
    clphys_lqcd_gauge_destroy(&r1);
    clphys_lqcd_gauge_destroy(&r2);
}

static void test_rt_64_3x3(void **s)
{
    (void)s;
    round_trip(CLPHYS_LQCD_GAUGE_FILE_NERSC, CLPHYS_FP64, 3);
}
static void test_rt_64_2(void **s)
{
    (void)s;
    round_trip(CLPHYS_LQCD_GAUGE_FILE_NERSC, CLPHYS_FP64, 2);
}
static void test_rt_32_3x3(void **s)
{
    (void)s;
    round_trip(CLPHYS_LQCD_GAUGE_FILE_NERSC, CLPHYS_FP32, 3);
}
static void test_rt_32_2(void **s)
{
    (void)s;
    round_trip(CLPHYS_LQCD_GAUGE_FILE_NERSC, CLPHYS_FP32, 2);
}
static void test_rt_ildg_64(void **s)
{
    (void)s;
    round_trip(CLPHYS_LQCD_GAUGE_FILE_ILDG, CLPHYS_FP64, 3);
}
static void test_rt_ildg_32(void **s)
{
    (void)s;
    round_trip(CLPHYS_LQCD_GAUGE_FILE_ILDG, CLPHYS_FP32, 3);
}

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
    clphys_lqcd_gauge_field r;
    clphys_status st = clphys_lqcd_gauge_read_nersc(f, &r);
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
    clphys_lqcd_gauge_field g;
    char f[512], bad[512];
    path(f, sizeof f, "good.nersc");
    path(bad, sizeof bad, "bad.nersc");
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 9);
    assert_int_equal(clphys_lqcd_gauge_write_nersc(f, &g, CLPHYS_FP64, 3), CLPHYS_SUCCESS);
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
    clphys_lqcd_gauge_field r;
    assert_int_equal(clphys_lqcd_gauge_read_nersc(bad, &r), CLPHYS_ERR_IO);
    free(b), free(c);
    clphys_lqcd_gauge_destroy(&g);
}

/* A NERSC file written here (IEEE64BIG, 3x3), independent of the library's
 * writer: cks NULL = the right checksum, "-" = no CHECKSUM line, else that
 * text; plaq / trace likewise (NULL = the field's value); trail after the data. */
static void nersc_file(const char *f, const clphys_lqcd_gauge_field *g, const char *cks, const char *plaq,
                       const char *trace, const char *trail)
{
    size_t n = g->volume * 72;
    unsigned char *raw = malloc(8 * n);
    uint32_t sum = 0;
    for (size_t k = 0; k < n; k++) {
        uint64_t u;
        memcpy(&u, &g->u[k], 8);
        for (int i = 0; i < 8; i++) raw[8 * k + i] = (unsigned char)(u >> (56 - 8 * i));
        sum += (uint32_t)(u >> 32) + (uint32_t)u;
    }
    FILE *fp = fopen(f, "wb");
    assert_non_null(fp);
    fprintf(fp, "BEGIN_HEADER\nDATATYPE = 4D_SU3_GAUGE_3x3\n");
    for (int mu = 0; mu < 4; mu++) fprintf(fp, "DIMENSION_%d = %d\n", mu + 1, g->dims[mu]);
    if (!cks)
        fprintf(fp, "CHECKSUM = %x\n", sum);
    else if (strcmp(cks, "-"))
        fprintf(fp, "CHECKSUM = %s\n", cks);
    if (!plaq)
        fprintf(fp, "PLAQUETTE = %.15g\n", clphys_lqcd_gauge_plaquette(g));
    else if (strcmp(plaq, "-"))
        fprintf(fp, "PLAQUETTE = %s\n", plaq);
    if (!trace)
        fprintf(fp, "LINK_TRACE = %.15g\n", clphys_lqcd_gauge_link_trace(g));
    else if (strcmp(trace, "-"))
        fprintf(fp, "LINK_TRACE = %s\n", trace);
    fprintf(fp, "FLOATING_POINT = IEEE64BIG\nEND_HEADER\n");
    assert_int_equal(fwrite(raw, 8, n, fp), n);
    if (trail) fputs(trail, fp);
    fclose(fp);
    free(raw);
}

static clphys_status read_lenient(const char *f, clphys_lqcd_gauge_field *r, clphys_lqcd_gauge_file_info *info)
{
    clphys_lqcd_gauge_read_params p = {.allow_unverified = 1};
    clphys_status st = clphys_lqcd_gauge_read(f, &p, r, info);
    print_message("# lenient %s -> %s: %s [unverified: %s]\n", strrchr(f, '/') + 1, clphys_status_string(st),
                  clphys_last_error(NULL), st ? "" : info->unverified);
    return st;
}

/* Issue 17, defect 3: NaN and non-SU(3) links fail every check. */
static void test_nan_and_non_unitary(void **state)
{
    (void)state;
    clphys_lqcd_gauge_field g, r;
    clphys_lqcd_gauge_file_info info;
    char f[512];
    path(f, sizeof f, "hostile.nersc");
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 17);
    /* NaN links with a checksum that matches them */
    uint64_t rng = tu_rng_init(17);
    size_t at = (size_t)(tu_uniform(&rng) * 72 * g.volume);
    double keep = g.u[at];
    g.u[at] = NAN;
    assert_true(isnan(clphys_lqcd_gauge_unitarity_violation(&g)));
    nersc_file(f, &g, NULL, "0.5", "0.5", NULL);
    expect_format_error(f, "non-finite");
    assert_int_equal(read_lenient(f, &r, &info), CLPHYS_ERR_FORMAT);
    g.u[at] = keep;
    /* PLAQUETTE = nan */
    nersc_file(f, &g, NULL, "nan", NULL, NULL);
    expect_format_error(f, "PLAQUETTE = nan is not a finite number");
    /* every link scaled by 2, checksum and header of the scaled field */
    for (size_t k = 0; k < 72 * g.volume; k++) g.u[k] *= 2;
    nersc_file(f, &g, NULL, NULL, NULL, NULL);
    expect_format_error(f, "not in SU(3)");
    /* all zero */
    memset(g.u, 0, sizeof(double) * 72 * g.volume);
    nersc_file(f, &g, "0", "0", "0", NULL);
    assert_int_equal(read_lenient(f, &r, &info), CLPHYS_ERR_FORMAT);
    assert_non_null(strstr(clphys_last_error(NULL), "not in SU(3)"));
    clphys_lqcd_gauge_destroy(&g);
}

/* Issue 17, defect 2: a header's count is checked against the file before
 * anything of its size is allocated (64^4 claimed by a small file). */
static void test_header_count_not_trusted(void **state)
{
    (void)state;
    char f[512];
    path(f, sizeof f, "hostile.nersc");
    FILE *fp = fopen(f, "wb");
    fprintf(fp,
            "BEGIN_HEADER\nDATATYPE = 4D_SU3_GAUGE_3x3\nDIMENSION_1 = 64\nDIMENSION_2 = 64\nDIMENSION_3 = 64\n"
            "DIMENSION_4 = 64\nCHECKSUM = 1\nPLAQUETTE = 1\nLINK_TRACE = 1\nFLOATING_POINT = IEEE64BIG\nEND_HEADER\n");
    for (int k = 0; k < 9600; k++) fputc(k & 0xff, fp);
    fclose(fp);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    expect_format_error(f, "file size");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    print_message("# refused in %.4f s\n", s);
    assert_true(s < 0.5);
    /* dimensions beyond what the library takes, and odd ones */
    fp = fopen(f, "wb");
    fprintf(fp, "BEGIN_HEADER\nDATATYPE = 4D_SU3_GAUGE_3x3\nDIMENSION_1 = 65536\nDIMENSION_2 = 65536\nDIMENSION_3 = "
                "65536\nDIMENSION_4 = 65536\nCHECKSUM = 1\nPLAQUETTE = 1\nLINK_TRACE = 1\nFLOATING_POINT = IEEE64BIG\n"
                "END_HEADER\n");
    fclose(fp);
    clphys_lqcd_gauge_field r;
    assert_int_equal(clphys_lqcd_gauge_read(f, NULL, &r, NULL), CLPHYS_ERR_INPUT);
    assert_non_null(strstr(clphys_last_error(NULL), "volume above 2^31"));
    assert_null(r.u);
}

/* Lenient NERSC: what other programs write (trailing newline, CHECKSUM = 0,
 * a missing PLAQUETTE or LINK_TRACE) is read only when asked, the other
 * checks still run, and a real mismatch stays an error. */
/* A cold field on 8^4 sums to 0 mod 2^32 (NERSC: 4096 sites x 12 words
 * 0x3ff00000 of 1.0): the writer's CHECKSUM = 0 is a true checksum, and
 * what clphys writes it reads back, verified, in every format and size. */
static void test_cold_checksum_zero(void **state)
{
    (void)state;
    const int dims[4] = {8, 8, 8, 8};
    clphys_lqcd_gauge_field g, r;
    clphys_lqcd_gauge_file_info info;
    char f[512];
    path(f, sizeof f, "cold.nersc");
    assert_int_equal(clphys_lqcd_gauge_create(dims, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_cold(&g);
    for (int rows = 2; rows <= 3; rows++)
        for (int prec = 0; prec < 2; prec++) {
            assert_int_equal(clphys_lqcd_gauge_write_nersc(f, &g, prec ? CLPHYS_FP64 : CLPHYS_FP32, rows),
                             CLPHYS_SUCCESS);
            clphys_status st = clphys_lqcd_gauge_read(f, NULL, &r, &info);
            if (st) print_message("# %s\n", clphys_last_error(NULL));
            assert_int_equal(st, CLPHYS_SUCCESS);
            assert_true(info.checksum_verified && info.plaquette_verified && info.link_trace_verified);
            assert_string_equal(info.unverified, "");
            clphys_lqcd_gauge_destroy(&r);
        }
    clphys_lqcd_gauge_destroy(&g);
}

/* A field with fp32's unitarity error (the MILC sample's links, read as
 * fp32) is not written as fp64, which no reader would take, and leaves no
 * file; reunitarized, it is written and reads back verified. */
static void test_fp32_links_as_fp64(void **state)
{
    (void)state;
    const int dims[4] = {4, 4, 4, 4};
    clphys_lqcd_gauge_field g, r;
    clphys_lqcd_gauge_file_info info;
    char f[512];
    path(f, sizeof f, "promoted.nersc");
    assert_int_equal(clphys_lqcd_gauge_create(dims, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, 1 + (tu_seed() & 0xffff));
    for (size_t k = 0; k < g.volume * 4 * 18; k++) g.u[k] = (double)(float)g.u[k];
    assert_true(clphys_lqcd_gauge_unitarity_violation(&g) > CLPHYS_LQCD_GAUGE_UNITARITY_TOL_FP64);
    remove(f);
    assert_int_equal(clphys_lqcd_gauge_write_nersc(f, &g, CLPHYS_FP64, 3), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(clphys_last_error(NULL), "reunitarize"));
    assert_int_equal(access(f, F_OK), -1);
    assert_int_equal(clphys_lqcd_gauge_write_nersc(f, &g, CLPHYS_FP32, 3), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_reunitarize(&g);
    assert_int_equal(clphys_lqcd_gauge_write_nersc(f, &g, CLPHYS_FP64, 3), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_gauge_read(f, NULL, &r, &info), CLPHYS_SUCCESS);
    assert_true(info.checksum_verified && info.plaquette_verified);
    clphys_lqcd_gauge_destroy(&r);
    clphys_lqcd_gauge_destroy(&g);
}

static void test_lenient_nersc(void **state)
{
    (void)state;
    clphys_lqcd_gauge_field g, r;
    clphys_lqcd_gauge_file_info info;
    char f[512];
    path(f, sizeof f, "lenient.nersc");
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 23);
    /* whitespace after the data: accepted, nothing said */
    nersc_file(f, &g, NULL, NULL, NULL, "\n \r\n\t");
    assert_int_equal(clphys_lqcd_gauge_read(f, NULL, &r, &info), CLPHYS_SUCCESS);
    assert_string_equal(info.unverified, "");
    assert_true(info.checksum_verified && info.plaquette_verified && info.link_trace_verified);
    assert_memory_equal(r.u, g.u, sizeof(double) * 72 * g.volume);
    clphys_lqcd_gauge_destroy(&r);
    nersc_file(f, &g, NULL, NULL, NULL, "\nx");
    expect_format_error(f, "not whitespace");
    /* CHECKSUM = 0, no CHECKSUM, no PLAQUETTE, no LINK_TRACE */
    const char *cks[] = {"0", "-", NULL, NULL}, *plq[] = {NULL, NULL, "-", NULL}, *trc[] = {NULL, NULL, NULL, "-"};
    const char *said[] = {"CHECKSUM = 0", "no CHECKSUM", "no PLAQUETTE", "no LINK_TRACE"};
    for (int i = 0; i < 4; i++) {
        nersc_file(f, &g, cks[i], plq[i], trc[i], "\n");
        expect_format_error(f, said[i]);
        assert_int_equal(read_lenient(f, &r, &info), CLPHYS_SUCCESS);
        assert_non_null(strstr(info.unverified, said[i]));
        assert_int_equal(info.checksum_verified, cks[i] == NULL);
        assert_int_equal(info.plaquette_verified, plq[i] == NULL);
        clphys_lqcd_gauge_destroy(&r);
    }
    /* a wrong plaquette, link trace or checksum is an error; allowed
       unverified, it is skipped (not verifying covers every claim) and named */
    nersc_file(f, &g, "0", "0.75", NULL, NULL);
    expect_format_error(f, "PLAQUETTE mismatch");
    assert_int_equal(read_lenient(f, &r, &info), CLPHYS_SUCCESS);
    assert_non_null(strstr(info.unverified, "CHECKSUM = 0, PLAQUETTE = 0.75 skipped (the data's is "));
    assert_true(!info.plaquette_verified && info.link_trace_verified && !info.checksum_verified);
    clphys_lqcd_gauge_destroy(&r);
    nersc_file(f, &g, NULL, NULL, "0", NULL);
    expect_format_error(f, "LINK_TRACE mismatch");
    assert_int_equal(read_lenient(f, &r, &info), CLPHYS_SUCCESS);
    assert_non_null(strstr(info.unverified, "LINK_TRACE = 0 skipped (the data's is "));
    assert_true(info.plaquette_verified && !info.link_trace_verified && info.checksum_verified);
    clphys_lqcd_gauge_destroy(&r);
    nersc_file(f, &g, "1234abcd", NULL, NULL, NULL);
    expect_format_error(f, "CHECKSUM mismatch");
    assert_int_equal(read_lenient(f, &r, &info), CLPHYS_SUCCESS);
    assert_non_null(strstr(info.unverified, "CHECKSUM = 1234abcd skipped (the data's is "));
    assert_false(info.checksum_verified);
    clphys_lqcd_gauge_destroy(&r);
    clphys_lqcd_gauge_destroy(&g);
}

/* The documented plaquette of MILC's lat.sample.l4444: CHECK PLAQ 1.794675
 * 1.774426 (spatial, temporal Re tr averages) = 3 x 0.5948501667; printed
 * to 7 digits, so +-2e-7 here. */
#define MILC_SAMPLE_PLAQ ((1.794675 + 1.774426) / 6)

static void read_sample(const char *name, clphys_lqcd_gauge_file_format fmt, int lenient, clphys_lqcd_gauge_field *g,
                        clphys_lqcd_gauge_file_info *info)
{
    char f[512];
    char rel[256];
    snprintf(rel, sizeof rel, "gauge/%s", name);
    tu_data_path(f, sizeof f, rel);
    clphys_lqcd_gauge_read_params p = {.allow_unverified = lenient};
    clphys_status st = clphys_lqcd_gauge_read(f, &p, g, info);
    if (st) fail_msg("%s: %s", name, clphys_last_error(NULL));
    double plaq = clphys_lqcd_gauge_plaquette(g);
    print_message("# %s (%s): %dx%dx%dx%d plaquette %.9f (MILC: %.9f) unitarity %.2g checksum %s%s%s\n", name,
                  clphys_lqcd_gauge_file_format_name(info->format), g->dims[0], g->dims[1], g->dims[2], g->dims[3],
                  plaq, MILC_SAMPLE_PLAQ, info->unitarity, info->checksum_verified ? "verified" : "not verified",
                  info->unverified[0] ? ": " : "", info->unverified);
    assert_int_equal(info->format, fmt);
    assert_true(fabs(plaq - MILC_SAMPLE_PLAQ) < 3e-7);
    assert_int_equal(g->volume, 256);
}

static void test_milc_sample(void **state)
{
    (void)state;
    clphys_lqcd_gauge_field m, i, n;
    clphys_lqcd_gauge_file_info info;
    read_sample("lat.sample.l4444", CLPHYS_LQCD_GAUGE_FILE_MILC, 0, &m, &info);
    assert_true(info.checksum_verified);
    assert_int_equal(info.precision, CLPHYS_FP32);
    /* the ILDG copy (QIO, big-endian, scidac-checksum) is the same field, bit for bit */
    read_sample("lat.sample.l4444.ildg", CLPHYS_LQCD_GAUGE_FILE_ILDG, 0, &i, &info);
    assert_true(info.checksum_verified);
    assert_memory_equal(i.u, m.u, sizeof(double) * 72 * m.volume);
    /* the NERSC file of an independent writer: CHECKSUM = 0, so strict reading refuses it */
    char f[512];
    tu_data_path(f, sizeof f, "gauge/lat.sample.l4444.nersc");
    assert_int_equal(clphys_lqcd_gauge_read(f, NULL, &n, NULL), CLPHYS_ERR_FORMAT);
    assert_non_null(strstr(clphys_last_error(NULL), "CHECKSUM = 0"));
    read_sample("lat.sample.l4444.nersc", CLPHYS_LQCD_GAUGE_FILE_NERSC, 1, &n, &info);
    assert_string_equal(info.unverified, "CHECKSUM = 0");
    assert_true(info.plaquette_verified && info.link_trace_verified);
    for (size_t l = 0; l < 4 * m.volume; l++) assert_memory_equal(n.u + 18 * l, m.u + 18 * l, 12 * sizeof(double));
    /* converted to ILDG and NERSC by clphys and read back: the same bits */
    char out[512];
    path(out, sizeof out, "converted");
    clphys_lqcd_gauge_field c;
    assert_int_equal(clphys_lqcd_gauge_write(out, &m, CLPHYS_LQCD_GAUGE_FILE_ILDG, CLPHYS_FP32, 3), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_gauge_read(out, NULL, &c, NULL), CLPHYS_SUCCESS);
    assert_memory_equal(c.u, m.u, sizeof(double) * 72 * m.volume);
    clphys_lqcd_gauge_destroy(&c);
    assert_int_equal(clphys_lqcd_gauge_write(out, &m, CLPHYS_LQCD_GAUGE_FILE_NERSC, CLPHYS_FP32, 3), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_gauge_read(out, NULL, &c, NULL), CLPHYS_SUCCESS);
    assert_memory_equal(c.u, m.u, sizeof(double) * 72 * m.volume);
    clphys_lqcd_gauge_destroy(&c);
    clphys_lqcd_gauge_destroy(&m);
    clphys_lqcd_gauge_destroy(&i);
    clphys_lqcd_gauge_destroy(&n);
}

/* MILC and ILDG files made hostile: a flipped data byte fails the
 * checksum, a header claiming a huge lattice fails before allocating. */
static void test_hostile_milc_ildg(void **state)
{
    (void)state;
    char src[512], f[512];
    clphys_lqcd_gauge_field r;
    path(f, sizeof f, "hostile.bin");
    long n;
    tu_data_path(src, sizeof src, "gauge/lat.sample.l4444");
    unsigned char *b = slurp(src, &n);
    b[96 + 1000] ^= 4;
    spill(f, b, n);
    assert_int_equal(clphys_lqcd_gauge_read(f, NULL, &r, NULL), CLPHYS_ERR_FORMAT);
    assert_non_null(strstr(clphys_last_error(NULL), "MILC checksum mismatch"));
    b[96 + 1000] ^= 4;
    b[4] = 0, b[5] = 1; /* nx = 256 */
    spill(f, b, n);
    assert_int_equal(clphys_lqcd_gauge_read(f, NULL, &r, NULL), CLPHYS_ERR_FORMAT);
    assert_non_null(strstr(clphys_last_error(NULL), "file size"));
    free(b);
    tu_data_path(src, sizeof src, "gauge/lat.sample.l4444.ildg");
    b = slurp(src, &n);
    patch(b, n, "<lx>4</lx>", "<lx>8</lx>");
    spill(f, b, n);
    assert_int_equal(clphys_lqcd_gauge_read(f, NULL, &r, NULL), CLPHYS_ERR_FORMAT);
    assert_non_null(strstr(clphys_last_error(NULL), "ildg-binary-data has"));
    patch(b, n, "<lx>8</lx>", "<lx>4</lx>");
    b[n - 280 - 100] ^= 1; /* in the last site's data, before the checksum record (144 + 136 bytes) */
    spill(f, b, n);
    assert_int_equal(clphys_lqcd_gauge_read(f, NULL, &r, NULL), CLPHYS_ERR_FORMAT);
    print_message("# %s\n", clphys_last_error(NULL));
    free(b);
}

/* A write that cannot complete leaves no file behind. */
static void test_atomic_write(void **state)
{
    (void)state;
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    char f[512];
    path(f, sizeof f, "no-such-dir/x.nersc");
    assert_int_equal(clphys_lqcd_gauge_write_nersc(f, &g, CLPHYS_FP64, 3), CLPHYS_ERR_IO);
    assert_int_not_equal(access(f, F_OK), 0);
    clphys_lqcd_gauge_destroy(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cold_hot),
        cmocka_unit_test(test_rt_64_3x3),
        cmocka_unit_test(test_rt_64_2),
        cmocka_unit_test(test_rt_32_3x3),
        cmocka_unit_test(test_rt_32_2),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_atomic_write),
        cmocka_unit_test(test_rt_ildg_64),
        cmocka_unit_test(test_rt_ildg_32),
        cmocka_unit_test(test_nan_and_non_unitary),
        cmocka_unit_test(test_header_count_not_trusted),
        cmocka_unit_test(test_lenient_nersc),
        cmocka_unit_test(test_cold_checksum_zero),
        cmocka_unit_test(test_fp32_links_as_fp64),
        cmocka_unit_test(test_milc_sample),
        cmocka_unit_test(test_hostile_milc_ildg),
    };
    return tu_run_group(tests, .tempdir = "gauge_io", .dir = dir, .dir_size = sizeof dir);
}
