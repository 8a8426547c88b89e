/* test_tune_choose.c — the one sequence by which every path's plan makes a
 * tuned choice (cp_tune_choose, platform/tune.h), with a fake plan whose
 * "measurement" is a callback, so no device is needed: a given order wins
 * and touches nothing; CLPHYS_NO_TUNE and the params' no_tune keep the
 * heuristic without reading the cache; a cache entry is taken; with nothing
 * cached the plan measures, takes and stores the fastest; an entry the plan
 * refuses is as none; nothing launched keeps the heuristic; a measurement
 * that fails is the plan's error; a path that does not measure at creation
 * keeps the heuristic; the nearest size class is found; and a cache that
 * cannot be written costs only the next measurement. */
#include "util.h"
#include "platform/tune.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static char dir[4096];
static clphys_device_info dev;

/* The fake plan: its choice (a work-group size), what was called. */
typedef struct {
    int wg; /* the plan's choice: 0 none yet                     */
    int defaults, takes, measures;
    int refuse;         /* take() refuses every VALUE                        */
    int launch;         /* measure(): 1 times candidates, 0 launches none    */
    clphys_status fail; /* measure() returns this                            */
    char taken[64];     /* the last VALUE take() was given                   */
} fake;

enum { HEURISTIC_WG = 64, FASTEST_WG = 128 };

static clphys_status fake_defaults(void *user)
{
    fake *f = user;
    f->defaults++;
    f->wg = HEURISTIC_WG;
    return CLPHYS_SUCCESS;
}

static int fake_take(void *user, const char *value)
{
    fake *f = user;
    size_t wg;
    f->takes++;
    snprintf(f->taken, sizeof f->taken, "%s", value);
    if (f->refuse || !cp_tune_value_size(value, "wg", &wg)) return 0;
    f->wg = (int)wg;
    return 1;
}

static clphys_status fake_measure(void *user, char *value, size_t n)
{
    fake *f = user;
    f->measures++;
    f->wg = 32; /* left at a candidate, as a real measurement may */
    if (f->fail) return f->fail;
    if (f->launch) snprintf(value, n, "wg=%d s=1.5e-05", FASTEST_WG);
    return CLPHYS_SUCCESS;
}

static cp_tune_plan plan_of(fake *f, const char *fields)
{
    return (cp_tune_plan){.key = {"fake", "wg", "fp32", fields},
                          .user = f,
                          .defaults = fake_defaults,
                          .take = fake_take,
                          .measure = fake_measure};
}

static int entries(void) { return cp_tune_count(&dev); }

static void test_given(void **state)
{
    (void)state;
    fake f = {.launch = 1};
    cp_tune_plan t = plan_of(&f, "case=given");
    t.given = 1;
    clphys_tune_source src = CLPHYS_TUNE_CACHE;
    assert_int_equal(cp_tune_choose(&dev, &t, &src), CLPHYS_SUCCESS);
    assert_int_equal(src, CLPHYS_TUNE_GIVEN);
    assert_int_equal(f.defaults, 1);
    assert_int_equal(f.takes + f.measures, 0);
    assert_int_equal(entries(), 0);
    /* a cached entry does not change a given choice */
    const cp_tune_key k = t.key;
    assert_int_equal(cp_tune_put(&dev, &k, "wg=256"), 0);
    assert_int_equal(cp_tune_choose(&dev, &t, &src), CLPHYS_SUCCESS);
    assert_int_equal(src, CLPHYS_TUNE_GIVEN);
    assert_int_equal(f.wg, HEURISTIC_WG);
    assert_int_equal(f.takes, 0);
}

/* Measure when nothing is cached, then read the stored entry. */
static void test_measure_then_cache(void **state)
{
    (void)state;
    fake f = {.launch = 1};
    const cp_tune_plan t = plan_of(&f, "case=measure");
    clphys_tune_source src;
    assert_int_equal(cp_tune_choose(&dev, &t, &src), CLPHYS_SUCCESS);
    assert_int_equal(src, CLPHYS_TUNE_MEASURED);
    assert_int_equal(f.wg, FASTEST_WG);
    assert_int_equal(f.measures, 1);
    assert_int_equal(f.defaults, 0);
    char v[CP_TUNE_VALUE_MAX];
    assert_int_equal(cp_tune_get(&dev, &t.key, v, sizeof v), 1);
    assert_string_equal(v, "wg=128 s=1.5e-05");
    /* the next plan: the cache, no measurement */
    fake g = {.launch = 1};
    const cp_tune_plan t2 = plan_of(&g, "case=measure");
    assert_int_equal(cp_tune_choose(&dev, &t2, &src), CLPHYS_SUCCESS);
    assert_int_equal(src, CLPHYS_TUNE_CACHE);
    assert_int_equal(g.wg, FASTEST_WG);
    assert_int_equal(g.measures + g.defaults, 0);
    assert_string_equal(g.taken, "wg=128 s=1.5e-05");
    /* another key: measured again */
    fake h = {.launch = 1};
    const cp_tune_plan t3 = plan_of(&h, "case=other");
    assert_int_equal(cp_tune_choose(&dev, &t3, &src), CLPHYS_SUCCESS);
    assert_int_equal(src, CLPHYS_TUNE_MEASURED);
    assert_int_equal(h.measures, 1);
    assert_int_equal(entries(), 2);
}

/* CLPHYS_NO_TUNE and no_tune: the heuristic; the cache is neither read nor written. */
static void test_disabled(void **state)
{
    (void)state;
    fake f = {.launch = 1};
    cp_tune_plan t = plan_of(&f, "case=off");
    const cp_tune_key k = t.key;
    assert_int_equal(cp_tune_put(&dev, &k, "wg=256"), 0);
    clphys_tune_source src;
    setenv("CLPHYS_NO_TUNE", "1", 1);
    assert_int_equal(cp_tune_choose(&dev, &t, &src), CLPHYS_SUCCESS);
    unsetenv("CLPHYS_NO_TUNE");
    assert_int_equal(src, CLPHYS_TUNE_HEURISTIC);
    assert_int_equal(f.wg, HEURISTIC_WG);
    assert_int_equal(f.takes + f.measures, 0);
    setenv("CLPHYS_NO_TUNE", "0", 1); /* "0": tuning stays on */
    assert_int_equal(cp_tune_choose(&dev, &t, &src), CLPHYS_SUCCESS);
    unsetenv("CLPHYS_NO_TUNE");
    assert_int_equal(src, CLPHYS_TUNE_CACHE);
    assert_int_equal(f.wg, 256);
    fake g = {.launch = 1};
    t = plan_of(&g, "case=off");
    t.no_tune = 1;
    assert_int_equal(cp_tune_choose(&dev, &t, &src), CLPHYS_SUCCESS);
    assert_int_equal(src, CLPHYS_TUNE_HEURISTIC);
    assert_int_equal(g.wg, HEURISTIC_WG);
    assert_int_equal(g.takes + g.measures, 0);
    assert_int_equal(entries(), 1);
}

/* An entry the plan refuses is as none; nothing launched keeps the
 * heuristic and stores nothing; a failed measurement is the plan's error;
 * a path that does not measure at creation keeps the heuristic. */
static void test_fallbacks(void **state)
{
    (void)state;
    fake f = {.launch = 1, .refuse = 1};
    cp_tune_plan t = plan_of(&f, "case=refused");
    const cp_tune_key k = t.key;
    assert_int_equal(cp_tune_put(&dev, &k, "wg=99999"), 0);
    clphys_tune_source src;
    assert_int_equal(cp_tune_choose(&dev, &t, &src), CLPHYS_SUCCESS);
    assert_int_equal(f.measures, 1);
    assert_int_equal(f.takes, 2); /* the entry, then the measured value: both refused */
    assert_int_equal(src, CLPHYS_TUNE_HEURISTIC);
    assert_int_equal(f.wg, HEURISTIC_WG);

    fake g = {.launch = 0};
    t = plan_of(&g, "case=none-launched");
    assert_int_equal(cp_tune_choose(&dev, &t, &src), CLPHYS_SUCCESS);
    assert_int_equal(src, CLPHYS_TUNE_HEURISTIC);
    assert_int_equal(g.wg, HEURISTIC_WG); /* not the candidate measure() left */
    assert_int_equal(g.measures, 1);
    assert_int_equal(g.takes, 0);
    char v[CP_TUNE_VALUE_MAX];
    assert_int_equal(cp_tune_get(&dev, &t.key, v, sizeof v), 0);

    fake h = {.launch = 1, .fail = CLPHYS_ERR_OUT_OF_MEMORY};
    t = plan_of(&h, "case=failed");
    assert_int_equal(cp_tune_choose(&dev, &t, &src), CLPHYS_ERR_OUT_OF_MEMORY);
    assert_int_equal(cp_tune_get(&dev, &t.key, v, sizeof v), 0);

    fake m = {.launch = 1};
    t = plan_of(&m, "case=no-measure");
    t.measure = NULL;
    assert_int_equal(cp_tune_choose(&dev, &t, &src), CLPHYS_SUCCESS);
    assert_int_equal(src, CLPHYS_TUNE_HEURISTIC);
    assert_int_equal(m.wg, HEURISTIC_WG);
    assert_int_equal(m.takes, 0);
}

/* With axes: the nearest size class's entry (as the md and nbody plans). */
static void test_nearest(void **state)
{
    (void)state;
    const cp_tune_key k1 = {"fake", "wg", "fp32", "tuner=1 n=1000"}, k2 = {"fake", "wg", "fp32", "tuner=1 n=100000"};
    assert_int_equal(cp_tune_put(&dev, &k1, "wg=16"), 0);
    assert_int_equal(cp_tune_put(&dev, &k2, "wg=512"), 0);
    fake f = {.launch = 1};
    cp_tune_plan t = plan_of(&f, "tuner=1");
    const cp_tune_axis ax = {"n", 50000, 0};
    t.axes = &ax, t.naxes = 1, t.measure = NULL;
    clphys_tune_source src;
    assert_int_equal(cp_tune_choose(&dev, &t, &src), CLPHYS_SUCCESS);
    assert_int_equal(src, CLPHYS_TUNE_CACHE);
    assert_int_equal(f.wg, 512);
}

/* A cache that cannot be written: the choice is still measured and made,
 * the next plan measures again; once writable, the measurement is kept. */
static void test_unwritable(void **state)
{
    (void)state;
    char file[4200];
    snprintf(file, sizeof file, "%s/not-a-folder", dir);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    setenv("CLPHYS_CACHE_DIR", file, 1); /* a regular file: no cache folder can be made there */
    clphys_tune_source src;
    for (int k = 1; k <= 2; k++) {
        fake f = {.launch = 1};
        const cp_tune_plan t = plan_of(&f, "case=unwritable");
        assert_int_equal(cp_tune_choose(&dev, &t, &src), CLPHYS_SUCCESS);
        assert_int_equal(src, CLPHYS_TUNE_MEASURED);
        assert_int_equal(f.wg, FASTEST_WG);
        assert_int_equal(f.measures, 1); /* each plan measures: nothing was kept */
    }
    setenv("CLPHYS_CACHE_DIR", dir, 1);
    fake g = {.launch = 1}, h = {.launch = 1};
    const cp_tune_plan t = plan_of(&g, "case=unwritable"), t2 = plan_of(&h, "case=unwritable");
    assert_int_equal(cp_tune_choose(&dev, &t, &src), CLPHYS_SUCCESS);
    assert_int_equal(src, CLPHYS_TUNE_MEASURED);
    assert_int_equal(cp_tune_choose(&dev, &t2, &src), CLPHYS_SUCCESS);
    assert_int_equal(src, CLPHYS_TUNE_CACHE);
    assert_int_equal(h.measures, 0);
    remove(file);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(clphys_tune_source_name(CLPHYS_TUNE_GIVEN), "given");
    assert_string_equal(clphys_tune_source_name(CLPHYS_TUNE_HEURISTIC), "heuristic");
    assert_string_equal(clphys_tune_source_name(CLPHYS_TUNE_MEASURED), "measured");
    assert_string_equal(clphys_tune_source_name(CLPHYS_TUNE_CACHE), "tuning cache");
    assert_string_equal(clphys_tune_source_name((clphys_tune_source)7), "unknown");
}

/* Each test starts from an empty cache folder. */
static int setup(void **state)
{
    (void)state;
    tu_tempdir("tune-choose", dir, sizeof dir);
    setenv("CLPHYS_CACHE_DIR", dir, 1);
    unsetenv("CLPHYS_NO_CACHE");
    unsetenv("CLPHYS_NO_TUNE");
    memset(&dev, 0, sizeof dev);
    snprintf(dev.name, sizeof dev.name, "Fake Device");
    snprintf(dev.vendor, sizeof dev.vendor, "Test");
    snprintf(dev.platform, sizeof dev.platform, "Test Platform");
    snprintf(dev.driver_version, sizeof dev.driver_version, "1");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_remove_tempdir(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_given, setup, teardown),
        cmocka_unit_test_setup_teardown(test_measure_then_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disabled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fallbacks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nearest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable, setup, teardown),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
