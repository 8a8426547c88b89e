/* test_cli_old_names.c — `clphys bench --path` and `clphys tune --path` take
 * the names from before the one-stem rule for one release (cli/old_names.c,
 * docs/naming.md): each old name becomes its new one, other names and their
 * order are kept, an over-long list is refused.  rename-keep-file */
#include "cli/old_names.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

static void test_each_old_name(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"neighbor", "md_neighbor"},
        {"lj", "md_lj"},
        {"gravity", "nbody_gravity"},
        {"gravity_multi", "nbody_gravity_multi"},
        {"gravity_mpi", "nbody_gravity_mpi"},
        {"dslash", "lqcd_dslash"},
        {"solver", "lqcd_solver"},
        {"dslash_multi", "lqcd_dslash_multi"},
        {"solver_multi", "lqcd_solver_multi"},
        {"dslash_mpi", "lqcd_dslash_mpi"},
        {"solver_mpi", "lqcd_solver_mpi"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const char *nw = cli_new_path_name(pairs[i][0], strlen(pairs[i][0]));
        assert_non_null(nw);
        assert_string_equal(nw, pairs[i][1]);
        assert_null(cli_new_path_name(pairs[i][1], strlen(pairs[i][1]))); /* a new name is not old */
    }
    /* names that did not change, and prefixes of old ones */
    assert_null(cli_new_path_name("md", 2));
    assert_null(cli_new_path_name("poisson", 7));
    assert_null(cli_new_path_name("md_mpi", 6));
    assert_null(cli_new_path_name("gravity", 6));
    assert_null(cli_new_path_name("gravityx", 8));
}

static void test_lists(void **state)
{
    (void)state;
    const char *list = NULL;
    assert_int_equal(cli_new_path_names("bench", &list), 0);
    assert_null(list);
    const char *plain = "md,poisson_mpi";
    list = plain;
    assert_int_equal(cli_new_path_names("bench", &list), 0);
    assert_ptr_equal(list, plain); /* nothing old: the caller's string */
    list = "gravity,md,dslash_mpi,solver";
    assert_int_equal(cli_new_path_names("tune", &list), 0);
    assert_string_equal(list, "nbody_gravity,md,lqcd_dslash_mpi,lqcd_solver");
    list = "lj,,neighbor"; /* an empty item is the suite's to refuse: kept */
    assert_int_equal(cli_new_path_names("bench", &list), 0);
    assert_string_equal(list, "md_lj,,md_neighbor");
    static char longest[6000];
    for (size_t i = 0; i + 3 < sizeof longest; i += 3) memcpy(longest + i, "lj,", 3);
    longest[sizeof longest - 3] = 'l', longest[sizeof longest - 2] = 'j', longest[sizeof longest - 1] = 0;
    list = longest;
    assert_int_equal(cli_new_path_names("bench", &list), 2);
    assert_ptr_equal(list, longest);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_each_old_name), cmocka_unit_test(test_lists)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
