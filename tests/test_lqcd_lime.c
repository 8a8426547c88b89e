/* test_lqcd_lime.c — the LIME record layer of ILDG files (host/lqcd/lime.c):
 * records written and read back (types, lengths, flags, padding, data), and
 * malformed files refused with CLPHYS_ERR_FORMAT naming the offset: a bad
 * magic, a wrong version, a type without its NUL, a length beyond the end
 * of the file, a file ending inside a header. */
#include "host/lqcd/lqcd_lime.h"
#include "util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static FILE *mem_file(const unsigned char *b, size_t n)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    rewind(f);
    return f;
}

static void round_trip(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    /* lengths around the padding boundary, random data */
    uint64_t rng = tu_rng_init(2);
    size_t len[5] = {0, 1, 7, 8, 1000 + (size_t)(tu_uniform(&rng) * 100)};
    unsigned char *data[5];
    for (int i = 0; i < 5; i++) {
        data[i] = malloc(len[i] + 1);
        for (size_t k = 0; k < len[i]; k++) data[i][k] = (unsigned char)(ref_splitmix64(&rng) >> 56);
        char type[32];
        snprintf(type, sizeof type, "record-%d", i);
        assert_int_equal(lqcd_lime_write(f, type, data[i], len[i], i == 0, i == 4), 0);
    }
    fflush(f);
    uint64_t size = (uint64_t)ftello(f), pos = 0;
    lqcd_lime_record r;
    int end;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(lqcd_lime_next(f, "mem", size, &pos, &r, &end), CLPHYS_SUCCESS);
        assert_int_equal(end, 0);
        char type[32];
        snprintf(type, sizeof type, "record-%d", i);
        assert_string_equal(r.type, type);
        assert_int_equal(r.length, len[i]);
        assert_int_equal(r.offset % 8, 0); /* every record starts 8-aligned */
        assert_int_equal(r.mb, i == 0);
        assert_int_equal(r.me, i == 4);
        char *b;
        assert_int_equal(lqcd_lime_read_small(f, "mem", &r, 1 << 20, &b), CLPHYS_SUCCESS);
        assert_memory_equal(b, data[i], len[i]);
        free(b);
        free(data[i]);
    }
    assert_int_equal(lqcd_lime_next(f, "mem", size, &pos, &r, &end), CLPHYS_SUCCESS);
    assert_int_equal(end, 1);
    fclose(f);
}

static void expect_bad(const unsigned char *b, size_t n, const char *needle)
{
    FILE *f = mem_file(b, n);
    uint64_t pos = 0;
    lqcd_lime_record r;
    int end;
    clphys_status st = lqcd_lime_next(f, "bad.lime", n, &pos, &r, &end);
    print_message("# %s -> %s\n", needle, clphys_last_error(NULL));
    assert_int_equal(st, CLPHYS_ERR_FORMAT);
    assert_non_null(strstr(clphys_last_error(NULL), needle));
    fclose(f);
}

static void malformed(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_int_equal(lqcd_lime_write(f, "ildg-format", "0123456789", 10, 1, 1), 0);
    long n = ftell(f);
    unsigned char good[256];
    rewind(f);
    assert_int_equal(fread(good, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    unsigned char b[256];
    memcpy(b, good, (size_t)n);
    b[0] ^= 1;
    expect_bad(b, (size_t)n, "magic");
    memcpy(b, good, (size_t)n);
    b[5] = 2;
    expect_bad(b, (size_t)n, "version");
    memcpy(b, good, (size_t)n);
    memset(b + 16, 'a', 128);
    expect_bad(b, (size_t)n, "NUL");
    memcpy(b, good, (size_t)n);
    b[8] = 0x7f; /* length 2^62 + ... */
    expect_bad(b, (size_t)n, "claims");
    expect_bad(good, 100, "too short");
    /* the last record's padding may be missing */
    FILE *g = mem_file(good, 144 + 10);
    uint64_t pos = 0;
    lqcd_lime_record r;
    int end;
    assert_int_equal(lqcd_lime_next(g, "short-pad", 154, &pos, &r, &end), CLPHYS_SUCCESS);
    assert_int_equal(lqcd_lime_next(g, "short-pad", 154, &pos, &r, &end), CLPHYS_SUCCESS);
    assert_int_equal(end, 1);
    fclose(g);
    /* a record larger than a caller's limit */
    g = mem_file(good, (size_t)n);
    pos = 0;
    assert_int_equal(lqcd_lime_next(g, "mem", (uint64_t)n, &pos, &r, &end), CLPHYS_SUCCESS);
    char *data;
    assert_int_equal(lqcd_lime_read_small(g, "mem", &r, 4, &data), CLPHYS_ERR_FORMAT);
    assert_null(data);
    fclose(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(round_trip), cmocka_unit_test(malformed)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
