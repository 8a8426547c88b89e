/* test_cli_opt.c — the strict option parser of every command (cli/opt.c):
 * whole-string numbers, ranges, NaN and inf refused, unknown, missing and
 * repeated options refused, both "--name value" and "--name=value". */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cli/opt.h"

typedef struct {
    long long steps;
    double dt;
    int prec, flag, grid[4];
    const char *out;
    int dt_given;
} vals;

static int run(vals *v, int argc, char **argv, const char **pos, int max_pos, int *npos)
{
    cli_opt dt = CLI_OPT_POSITIVE("--dt", &v->dt);
    dt.given = &v->dt_given;
    const cli_opt opts[] = {
        CLI_OPT_INT("--steps", &v->steps, 0, 2147483647),
        dt,
        CLI_OPT_CHOICE("--precision", &v->prec, "fp32|fp64|mixed"),
        CLI_OPT_FLAG("--force", &v->flag),
        CLI_OPT_DIMS("--grid", v->grid, 4, 1, 4096),
        CLI_OPT_STRING("--output", &v->out),
        CLI_OPT_END,
    };
    int help;
    memset(v, 0, sizeof *v);
    v->steps = -7; /* untouched unless given */
    int rc = cli_parse("test", argc, argv, opts, pos, max_pos, npos, &help);
    return rc ? rc : (help ? 1 : 0);
}

#define ARGV(...)     ((char *[]){"prog", __VA_ARGS__})
#define ARGC(...)     ((int)(sizeof((char *[]){"prog", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(v, ...) run(v, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), NULL, 0, NULL)

static void accepts_good_values(void **state)
{
    (void)state;
    vals v;
    assert_int_equal(PARSE(&v, "--steps", "100", "--dt=0.005", "--precision", "mixed", "--force", "--grid", "1x1x2x2",
                           "--output", "x.nc"),
                     0);
    assert_int_equal(v.steps, 100);
    assert_true(v.dt == 0.005);
    assert_int_equal(v.prec, 2);
    assert_int_equal(v.flag, 1);
    assert_int_equal(v.grid[2], 2);
    assert_int_equal(v.grid[3], 2);
    assert_string_equal(v.out, "x.nc");
    assert_int_equal(v.dt_given, 1);
    assert_int_equal(PARSE(&v, "--steps", "2147483647"), 0);
    assert_int_equal(v.steps, 2147483647);
    assert_int_equal(PARSE(&v), 0);
    assert_int_equal(v.steps, -7); /* not given: left alone */
    assert_int_equal(v.dt_given, 0);
}

static void refuses_bad_numbers(void **state)
{
    (void)state;
    vals v;
    const char *bad_int[] = {"10abc", "abc", "",    " 5", "1e19", "4294967297", "9223372036854775808",
                             "-1",    "1.5", "0x10"};
    for (size_t i = 0; i < sizeof bad_int / sizeof *bad_int; i++)
        assert_int_equal(PARSE(&v, "--steps", (char *)bad_int[i]), 2);
    const char *bad_real[] = {"nan", "NaN", "inf", "-inf", "1e999", "0", "-0.1", "0.1x", "", "x"};
    for (size_t i = 0; i < sizeof bad_real / sizeof *bad_real; i++)
        assert_int_equal(PARSE(&v, "--dt", (char *)bad_real[i]), 2);
    const char *bad_dims[] = {"1x1x2", "1x1x2x2x1", "1x1xx2", "1x1x2x", "x1x1x2", "1x1x2x0", "1x1x2xa", "1*1*2*2"};
    for (size_t i = 0; i < sizeof bad_dims / sizeof *bad_dims; i++)
        assert_int_equal(PARSE(&v, "--grid", (char *)bad_dims[i]), 2);
    assert_int_equal(PARSE(&v, "--precision", "fp16"), 2);
    assert_int_equal(PARSE(&v, "--precision", "fp3"), 2);
}

static void refuses_bad_options(void **state)
{
    (void)state;
    vals v;
    assert_int_equal(PARSE(&v, "--stepz", "5"), 2);                 /* unknown */
    assert_int_equal(PARSE(&v, "--steps"), 2);                      /* no value */
    assert_int_equal(PARSE(&v, "--output", "--force"), 2);          /* the next option is not a value */
    assert_int_equal(PARSE(&v, "--steps", "1", "--steps", "2"), 2); /* twice */
    assert_int_equal(PARSE(&v, "--force=yes"), 2);                  /* a flag takes no value */
    assert_int_equal(PARSE(&v, "--output="), 2);                    /* empty string */
    assert_int_equal(PARSE(&v, "stray"), 2);                        /* no positionals allowed */
    assert_int_equal(PARSE(&v, "--help"), 1);
}

/* A range up to LLONG_MAX (a double of 2^63 in the table) takes it, and refuses 2^63. */
static void full_range(void **state)
{
    (void)state;
    long long seed = -1;
    int help;
    const cli_opt opts[] = {CLI_OPT_INT("--seed", &seed, 0, (double)LLONG_MAX), CLI_OPT_END};
    char *ok[] = {"prog", "--seed", "9223372036854775807"}, *bad[] = {"prog", "--seed", "9223372036854775808"};
    assert_int_equal(cli_parse("test", 3, ok, opts, NULL, 0, NULL, &help), 0);
    assert_true(seed == LLONG_MAX);
    assert_int_equal(cli_parse("test", 3, bad, opts, NULL, 0, NULL, &help), 2);
    char *one[] = {"prog", "--seed", "1"};
    assert_int_equal(cli_parse("test", 3, one, opts, NULL, 0, NULL, &help), 0);
    assert_int_equal(seed, 1);
}

static void positionals(void **state)
{
    (void)state;
    vals v;
    const char *pos[2];
    int npos;
    assert_int_equal(
        run(&v, ARGC("solve", "--steps", "3", "file"), ARGV("solve", "--steps", "3", "file"), pos, 2, &npos), 0);
    assert_int_equal(npos, 2);
    assert_string_equal(pos[0], "solve");
    assert_string_equal(pos[1], "file");
    assert_int_equal(run(&v, ARGC("a", "b", "c"), ARGV("a", "b", "c"), pos, 2, &npos), 2);
    /* a negative number is a value, not an option */
    assert_int_equal(PARSE(&v, "--dt", "-1"), 2); /* refused by its range, not as a missing value */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accepts_good_values), cmocka_unit_test(refuses_bad_numbers),
        cmocka_unit_test(refuses_bad_options), cmocka_unit_test(positionals),
        cmocka_unit_test(full_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
