/* test_bench_harness.c — the bench harness's interleaved timing
 * (bench_interleave: warm-up, turning order, a failing variant dropped) and
 * the report's auto_vs_best: round-by-round ratios when auto and the best
 * were timed in the same rounds, the ratio of medians otherwise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <cjson/cJSON.h>

#include "bench.h"
#include "scaling.h"

typedef struct {
    int order[256], n;   /* the variants in the order they ran */
    int fail_k, fail_at; /* variant fail_k fails on its fail_at-th call (1-based); 0: never */
    int calls[8];
} log_t;

static double fake_time(int k, void *user)
{
    log_t *l = user;
    l->order[l->n++] = k;
    const int c = ++l->calls[k];
    if (l->fail_at && k == l->fail_k && c >= l->fail_at) return -1;
    return 1.0 + k + 0.01 * c; /* distinct per variant and per call */
}

static void interleave_warms_up_then_turns(void **state)
{
    (void)state;
    log_t l = {0};
    double s[3 * 4];
    assert_int_equal(bench_interleave(3, 4, fake_time, &l, s), 3);
    /* one untimed call each, then rounds starting at variant r mod 3 */
    const int want[] = {0, 1, 2, 0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2};
    assert_int_equal(l.n, 15);
    for (int i = 0; i < 15; i++) assert_int_equal(l.order[i], want[i]);
    /* the warm-up's value (call 1) is not kept: round 0 of variant 0 is call 2 */
    assert_true(s[0 * 4 + 0] > 1.015 && s[0 * 4 + 0] < 1.025);
    assert_true(s[2 * 4 + 3] > 3.045 && s[2 * 4 + 3] < 3.055);
}

static void interleave_drops_a_failing_variant(void **state)
{
    (void)state;
    log_t l = {.fail_k = 1, .fail_at = 3};
    double s[3 * 5];
    assert_int_equal(bench_interleave(3, 5, fake_time, &l, s), 2);
    for (int r = 0; r < 5; r++) {
        assert_true(s[1 * 5 + r] < 0); /* every round of the failed variant */
        assert_true(s[0 * 5 + r] > 0 && s[2 * 5 + r] > 0);
    }
    assert_int_equal(l.calls[1], 3); /* never called after it failed */
    /* failing at the warm-up: never timed */
    log_t w = {.fail_k = 2, .fail_at = 1};
    assert_int_equal(bench_interleave(3, 5, fake_time, &w, s), 2);
    assert_int_equal(w.calls[2], 1);
}

static void set_rounds_median_min(void **state)
{
    (void)state;
    bench_row r;
    memset(&r, 0, sizeof r);
    const double s[5] = {3, 1, 5, 2, 4};
    bench_set_rounds(&r, s, 5);
    assert_int_equal(r.nrounds, 5);
    assert_int_equal(r.repeat, 5);
    assert_true(r.kernel_s_median == 3 && r.kernel_s_min == 1);
    assert_true(r.round_s[0] == 3 && r.round_s[4] == 4); /* in round order */
}

/* auto_vs_best from the JSON of a run with two rows of one case. */
static double json_auto_vs_best(bench_row *rows, int n, char *method, size_t mlen)
{
    clphys_device_info dev;
    memset(&dev, 0, sizeof dev);
    bench_run run;
    memset(&run, 0, sizeof run);
    run.dev = &dev;
    run.rows = rows, run.nrows = run.cap = n;
    run.verify = 1;
    run.cpu_busy0 = -1;
    run.t_start = bench_now();
    char file[] = "/tmp/clphys-test-bench-XXXXXX", err[256];
    int fd = mkstemp(file);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(bench_write_json(&run, file, err, sizeof err), 0);
    FILE *f = fopen(file, "r");
    assert_non_null(f);
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = 0;
    fclose(f);
    remove(file);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "results"), 0);
    const double q = cJSON_GetObjectItem(a, "auto_vs_best")->valuedouble;
    snprintf(method, mlen, "%s", cJSON_GetObjectItem(a, "auto_vs_best_method")->valuestring);
    assert_string_equal(cJSON_GetObjectItem(a, "best_variant")->valuestring, "other");
    cJSON_Delete(root);
    return q;
}

static void auto_vs_best_pairs_rounds(void **state)
{
    (void)state;
    static bench_row rows[2];
    memset(rows, 0, sizeof rows);
    for (int k = 0; k < 2; k++) {
        snprintf(rows[k].path, sizeof rows[k].path, "md_lj");
        snprintf(rows[k].precision, sizeof rows[k].precision, "fp32");
        rows[k].n = 10;
        rows[k].verified = 1;
    }
    snprintf(rows[0].variant, sizeof rows[0].variant, "auto");
    snprintf(rows[0].auto_choice, sizeof rows[0].auto_choice, "x");
    snprintf(rows[1].variant, sizeof rows[1].variant, "other");
    /* the machine's speed drifts by 2x between rounds; auto is 3% slower
     * than other in every round, but the medians land in different halves */
    const double a[5] = {1.03, 1.03, 2.06, 2.06, 2.06}, o[5] = {1.0, 1.0, 1.0, 2.0, 2.0};
    bench_set_rounds(&rows[0], a, 5);
    bench_set_rounds(&rows[1], o, 5);
    char method[128];
    double q = json_auto_vs_best(rows, 2, method, sizeof method);
    assert_true(q > 1.0299 && q < 1.0301);
    assert_non_null(strstr(method, "round-by-round"));
    /* not timed in the same rounds: the ratio of medians */
    rows[1].nrounds = 0;
    q = json_auto_vs_best(rows, 2, method, sizeof method);
    assert_true(q > 2.0599 && q < 2.0601);
    assert_non_null(strstr(method, "medians"));
}

/* The scaling schema: strong speedup and efficiency over the devices, weak
 * efficiency as the baseline's time over the step's, no speedup for weak
 * scaling, unmeasured figures (a baseline too) as null, and valid JSON
 * inside braces. */
static void scaling_schema(void **state)
{
    (void)state;
    bench_scaling st = {2, 2, 0, 1000, 1.0, 0.625, 0.1, 0.05};
    assert_true(bench_scaling_speedup(&st) > 1.599 && bench_scaling_speedup(&st) < 1.601);
    assert_true(bench_scaling_efficiency(&st) > 0.799 && bench_scaling_efficiency(&st) < 0.801);
    bench_scaling wk = {4, 4, 1, 1000, 1.0, 1.25, -1, -1};
    assert_true(bench_scaling_speedup(&wk) == 0);
    assert_true(bench_scaling_efficiency(&wk) > 0.799 && bench_scaling_efficiency(&wk) < 0.801);
    bench_scaling bad = {2, 1, 0, 10, 0, 1.0, -1, -1};
    assert_true(bench_scaling_efficiency(&bad) == 0);
    const bench_scaling *cases[] = {&st, &wk};
    for (int k = 0; k < 2; k++) {
        char buf[512], obj[520];
        const int c = bench_scaling_json(cases[k], buf, sizeof buf);
        assert_true(c > 0 && c < (int)sizeof buf);
        snprintf(obj, sizeof obj, "{%s}", buf);
        cJSON *j = cJSON_Parse(obj);
        assert_non_null(j);
        assert_string_equal(cJSON_GetObjectItem(j, "scaling")->valuestring, k ? "weak" : "strong");
        assert_int_equal(cJSON_GetObjectItem(j, "gpus")->valueint, k ? 4 : 2);
        assert_true(k ? cJSON_IsNull(cJSON_GetObjectItem(j, "speedup"))
                      : cJSON_GetObjectItem(j, "speedup")->valuedouble > 1.59);
        assert_true(k ? cJSON_IsNull(cJSON_GetObjectItem(j, "exchange_floor_s"))
                      : cJSON_GetObjectItem(j, "exchange_floor_s")->valuedouble == 0.05);
        cJSON_Delete(j);
    }
    /* a run that measured no baseline: baseline_s, speedup and efficiency null */
    bench_scaling nb = {1, 8, 0, 1000, -1, 0.5, -1, -1};
    char nbuf[512], nobj[520];
    assert_true(bench_scaling_json(&nb, nbuf, sizeof nbuf) < (int)sizeof nbuf);
    snprintf(nobj, sizeof nobj, "{%s}", nbuf);
    cJSON *nj = cJSON_Parse(nobj);
    assert_non_null(nj);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(nj, "baseline_s")) &&
                cJSON_IsNull(cJSON_GetObjectItem(nj, "speedup")) &&
                cJSON_IsNull(cJSON_GetObjectItem(nj, "efficiency")));
    assert_true(cJSON_GetObjectItem(nj, "step_s")->valuedouble == 0.5);
    cJSON_Delete(nj);
    /* truncation is reported as snprintf does */
    char small[16];
    assert_true(bench_scaling_json(&st, small, sizeof small) >= (int)sizeof small);
}

/* A distributed row begun by bench_scaling_row: the identity set (variant
 * formatted), the row cleared of what a previous use left, and params the
 * schema's members followed by the caller's, one valid JSON object; the
 * returned length stays inside params. */
static void scaling_row(void **state)
{
    (void)state;
    bench_scaling sc = {2, 4, 0, 5000, 1.0, 0.625, 0.1, -1};
    bench_row r;
    memset(&r, 0x5a, sizeof r); /* poisoned: what the helper does not set must come out zero */
    const int at = bench_scaling_row(&r, &sc, "md_mpi", "fp64", 10000, 7, "in.lj-%s-%d", "strong", 3);
    assert_string_equal(r.path, "md_mpi");
    assert_string_equal(r.precision, "fp64");
    assert_string_equal(r.variant, "in.lj-strong-3");
    assert_int_equal(r.n, 10000);
    assert_int_equal(r.repeat, 7);
    assert_true(r.total_s_median == 0 && r.verified == 0 && r.note[0] == 0 && r.case_key[0] == 0);
    assert_int_equal(at, (int)strlen(r.params));
    snprintf(r.params + at, sizeof r.params - at, ",\"grid\":\"%dx%dx%d\"}", 1, 2, 2);
    cJSON *j = cJSON_Parse(r.params);
    assert_non_null(j);
    assert_int_equal(cJSON_GetObjectItem(j, "ranks")->valueint, 4);
    assert_string_equal(cJSON_GetObjectItem(j, "scaling")->valuestring, "strong");
    assert_true(cJSON_GetObjectItem(j, "efficiency")->valuedouble > 0.799);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "exchange_floor_s")));
    assert_string_equal(cJSON_GetObjectItem(j, "grid")->valuestring, "1x2x2");
    cJSON_Delete(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(interleave_warms_up_then_turns),
        cmocka_unit_test(interleave_drops_a_failing_variant),
        cmocka_unit_test(set_rounds_median_min),
        cmocka_unit_test(auto_vs_best_pairs_rounds),
        cmocka_unit_test(scaling_schema),
        cmocka_unit_test(scaling_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
