/* test_nbody_gravity_multi.c — gravity over several devices with two queues each
 * (clphys_nbody_gravity_multi), in one process: the test device opened twice
 * (two contexts) gives the single-device result to 1e-12 (fp64; 1e-5 fp32,
 * errors measured as in test_gravity) for any i split (weights), j block
 * size and number of queues, and bit for bit the one-device multi plan's.
 * Also without a device: every exchange schedule (schedule.c) for
 * P = 1..17 delivers each block to each rank exactly once, from a rank that
 * holds it, with matching sends and receives and the stage counts the
 * algorithms promise; the performance model's limits; the sync-probe fit;
 * the device-list parser. */
#include "util.h"
#include "nbody_util.h"
#include "host/nbody/nbody_schedule.h"
#include "host/ref/nbody_ref.h"
#include "platform/cp_sync.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static clphys_context *ctx[2]; /* the test device, opened twice */

/* ---- schedules --------------------------------------------------------------- */
static int in_range(nbody_sched_range r, int P, int b) { return r.cnt > 0 && ((b - r.lo) % P + P) % P < r.cnt; }

static void check_schedule(clphys_nbody_gravity_exchange ex, int group, int P, int want_stages)
{
    nbody_sched_schedule *s = calloc((size_t)P, sizeof *s);
    char *held = calloc((size_t)P * P, 1); /* held[r * P + b] */
    for (int r = 0; r < P; r++) {
        assert_int_equal(nbody_sched_build(NULL, ex, group, P, r, &s[r]), CLPHYS_SUCCESS);
        held[r * P + r] = 1;
        if (s[r].nstages != s[0].nstages)
            fail_msg("P %d: rank %d has %d stages, rank 0 %d", P, r, s[r].nstages, s[0].nstages);
    }
    if (want_stages >= 0 && s[0].nstages != want_stages)
        fail_msg("%s group %d P %d: %d stages, want %d", clphys_nbody_gravity_exchange_name(ex), group, P, s[0].nstages,
                 want_stages);
    for (int k = 0; k < s[0].nstages; k++) {
        char *next = malloc((size_t)P * P);
        memcpy(next, held, (size_t)P * P);
        for (int r = 0; r < P; r++) {
            const nbody_sched_stage *st = &s[r].stage[k];
            const nbody_sched_stage *src = &s[st->from].stage[k];
            /* the sender sends to me what I expect, and holds it */
            if (src->to != r || src->send.cnt != st->recv.cnt || ((src->send.lo - st->recv.lo) % P + P) % P)
                fail_msg("P %d stage %d: rank %d expects [%d +%d] from %d, which sends [%d +%d] to %d", P, k, r,
                         st->recv.lo, st->recv.cnt, st->from, src->send.lo, src->send.cnt, src->to);
            for (int b = 0; b < P; b++) {
                if (in_range(st->send, P, b) && !held[r * P + b])
                    fail_msg("P %d stage %d: rank %d sends block %d it does not hold", P, k, r, b);
                if (in_range(st->recv, P, b)) {
                    if (held[r * P + b]) fail_msg("P %d stage %d: rank %d receives block %d twice", P, k, r, b);
                    next[r * P + b] = 1;
                }
            }
            int lo[2], cnt[2], np = nbody_sched_pieces(st->recv, P, lo, cnt), tot = 0;
            for (int i = 0; i < np; i++) {
                assert_true(lo[i] >= 0 && lo[i] + cnt[i] <= P);
                tot += cnt[i];
            }
            assert_int_equal(tot, st->recv.cnt);
        }
        memcpy(held, next, (size_t)P * P);
        free(next);
    }
    for (int i = 0; i < P * P; i++)
        if (!held[i])
            fail_msg("%s P %d: rank %d never gets block %d", clphys_nbody_gravity_exchange_name(ex), P, i / P, i % P);
    for (int r = 0; r < P; r++) nbody_sched_free(&s[r]);
    free(s);
    free(held);
}

static int ilog2_ceil(int p)
{
    int k = 0;
    while ((1 << k) < p) k++;
    return k;
}

static void schedules(void **state)
{
    (void)state;
    for (int P = 1; P <= 17; P++) {
        check_schedule(CLPHYS_NBODY_GRAVITY_EXCHANGE_RING, 0, P, P - 1);
        check_schedule(CLPHYS_NBODY_GRAVITY_EXCHANGE_DOUBLING, 0, P, ilog2_ceil(P));
        for (int G = 1; G <= P; G *= 2)
            if (P % G == 0) check_schedule(CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID, G, P, ilog2_ceil(G) + P / G - 1);
        check_schedule(CLPHYS_NBODY_GRAVITY_EXCHANGE_AUTO, 0, P, -1);
        nbody_sched_schedule s;
        assert_int_equal(nbody_sched_build(NULL, CLPHYS_NBODY_GRAVITY_EXCHANGE_ALLGATHER, 0, P, 0, &s), CLPHYS_SUCCESS);
        assert_int_equal(s.nstages, 0);
        nbody_sched_free(&s);
    }
    nbody_sched_schedule s;
    /* P = 8: doubling is the seed's XOR pairs */
    assert_int_equal(nbody_sched_build(NULL, CLPHYS_NBODY_GRAVITY_EXCHANGE_DOUBLING, 0, 8, 5, &s), CLPHYS_SUCCESS);
    for (int k = 0; k < 3; k++) assert_int_equal(s.stage[k].to, 5 ^ (1 << k));
    assert_int_equal(s.bruck, 0);
    nbody_sched_free(&s);
    assert_int_equal(nbody_sched_build(NULL, CLPHYS_NBODY_GRAVITY_EXCHANGE_DOUBLING, 0, 6, 5, &s), CLPHYS_SUCCESS);
    assert_int_equal(s.bruck, 1);
    nbody_sched_free(&s);
    assert_int_equal(nbody_sched_build(NULL, CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID, 3, 6, 0, &s),
                     CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(nbody_sched_build(NULL, CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID, 4, 6, 0, &s),
                     CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(nbody_sched_build(NULL, CLPHYS_NBODY_GRAVITY_EXCHANGE_RING, 0, 4, 4, &s),
                     CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(nbody_sched_build(NULL, (clphys_nbody_gravity_exchange)9, 0, 4, 0, &s),
                     CLPHYS_ERR_INVALID_ARGUMENT);
    assert_string_equal(clphys_nbody_gravity_exchange_name(CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID), "hybrid");
}

/* ---- the model ----------------------------------------------------------------- */
static clphys_nbody_gravity_prediction predict(clphys_nbody_gravity_exchange ex, int P, double c, double lat, double bw,
                                               double ts)
{
    clphys_nbody_gravity_model m = {ex, 0, P, 1, 4096, 1e-3, c, lat, bw, 16, ts};
    clphys_nbody_gravity_prediction out;
    assert_int_equal(clphys_nbody_gravity_model_predict(&m, &out), CLPHYS_SUCCESS);
    return out;
}

static void model(void **state)
{
    (void)state;
    const clphys_nbody_gravity_exchange ex[] = {
        CLPHYS_NBODY_GRAVITY_EXCHANGE_RING, CLPHYS_NBODY_GRAVITY_EXCHANGE_DOUBLING,
        CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID, CLPHYS_NBODY_GRAVITY_EXCHANGE_ALLGATHER};
    for (int e = 0; e < 4; e++)
        for (int P = 1; P <= 64; P = P < 8 ? P + 1 : 2 * P) {
            /* a free network, no sync, no concurrency: P kernels back to back, efficiency 1 */
            clphys_nbody_gravity_prediction p = predict(ex[e], P, 1, 0, 0, 0);
            if (fabs(p.step_s - P * 1e-3) > 1e-12 || fabs(p.efficiency - 1) > 1e-9 || p.exposed_s > 1e-15)
                fail_msg("%s P %d: step %g eff %g exposed %g", clphys_nbody_gravity_exchange_name(ex[e]), P, p.step_s,
                         p.efficiency, p.exposed_s);
            assert_true(fabs(p.kernel_s - P * 1e-3) < 1e-12);
            /* two concurrent kernels at full speed: never better than 2, and better than 1 with P > 1 where
             * blocks overlap (not the single allgather kernel) */
            p = predict(ex[e], P, 2, 0, 0, 0);
            assert_true(p.efficiency <= 2 + 1e-9);
            if (P > 1 && ex[e] != CLPHYS_NBODY_GRAVITY_EXCHANGE_ALLGATHER) assert_true(p.efficiency > 1.2);
            /* a slow network shows as exposed exchange; the allgather baseline exposes all of it */
            clphys_nbody_gravity_prediction q = predict(ex[e], P, 1, 2e-3, 1e9, 1e-5);
            assert_true(q.efficiency < 1);
            if (P > 1) {
                assert_true(q.exposed_s > 0 && q.exposed_s <= q.exchange_s + 1e-15);
                if (ex[e] == CLPHYS_NBODY_GRAVITY_EXCHANGE_ALLGATHER)
                    assert_true(fabs(q.exposed_s - q.exchange_s) < 1e-15);
            }
            assert_true(q.step_s >= P * 1e-3 + 1e-5 - 1e-15);
        }
    /* the seed's upper bound (sec. 6.2: free network, t_sync 0, two streams at full speed, the
     * accumulation stage): 2.0, 1.33, 1.6, 1.45, 1.52, 1.49, 1.51 for 4 .. 256 GPUs, two GPUs per MPI
     * process there, so P = 2 .. 128 ranks here */
    const double seed_upper[] = {2.0, 1.33, 1.6, 1.45, 1.52, 1.49, 1.51};
    for (int k = 0; k < 7; k++) {
        clphys_nbody_gravity_prediction d = predict(CLPHYS_NBODY_GRAVITY_EXCHANGE_DOUBLING, 2 << k, 2, 0, 0, 0);
        if (fabs(d.efficiency - seed_upper[k]) > 0.006)
            fail_msg("doubling, P = %d, concurrency 2: efficiency %.4f, the seed's bound %.2f", 2 << k, d.efficiency,
                     seed_upper[k]);
    }
    /* the ring with P - 1 exchanges of t_x < t_calc each hides them all: t = P t_calc + t_sync */
    clphys_nbody_gravity_prediction r = predict(CLPHYS_NBODY_GRAVITY_EXCHANGE_RING, 8, 1, 1e-5, 1e9, 2e-5);
    assert_true(fabs(r.step_s - (8e-3 + 2e-5)) < 1e-12);
    assert_int_equal(r.exchanges, 7);
    /* ... and not when each exchange outlasts a kernel: then (P - 1) t_x + t_calc */
    r = predict(CLPHYS_NBODY_GRAVITY_EXCHANGE_RING, 8, 1, 2e-3, 0, 0);
    assert_true(fabs(r.step_s - (7 * 2e-3 + 1e-3)) < 1e-12);
    /* sharing one device between k ranks makes each kernel k times longer */
    clphys_nbody_gravity_model m = {CLPHYS_NBODY_GRAVITY_EXCHANGE_RING, 0, 4, 4, 4096, 1e-3, 1, 0, 0, 16, 0};
    clphys_nbody_gravity_prediction p;
    assert_int_equal(clphys_nbody_gravity_model_predict(&m, &p), CLPHYS_SUCCESS);
    assert_true(fabs(p.step_s - 16e-3) < 1e-12 && fabs(p.efficiency - 1) < 1e-9);
    m.concurrency = 3;
    assert_int_equal(clphys_nbody_gravity_model_predict(&m, &p), CLPHYS_ERR_INVALID_ARGUMENT);
    m.concurrency = 1, m.t_calc_s = NAN;
    assert_int_equal(clphys_nbody_gravity_model_predict(&m, &p), CLPHYS_ERR_INVALID_ARGUMENT);
    m.t_calc_s = 1e-3, m.exchange = CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID, m.group = 3;
    assert_int_equal(clphys_nbody_gravity_model_predict(&m, &p), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(clphys_nbody_gravity_model_predict(NULL, &p), CLPHYS_ERR_INVALID_ARGUMENT);
}

/* ---- the sync fit and probe -------------------------------------------------------- */
static void sync_probe(void **state)
{
    (void)state;
    clphys_sync_cost c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < 5; i++) c.n_sub[i] = 1 << i, c.t_tot_s[i] = 3e-5 + 2e-6 * (1 << i);
    c.points = 5;
    cp_sync_fit(&c);
    assert_true(fabs(c.t_sync_s - 3e-5) < 1e-15 && fabs(c.t_launch_s - 2e-6) < 1e-16 && c.rms_residual_s < 1e-15);
    assert_int_equal(clphys_measure_sync(ctx, 2, 16, 3, &c), CLPHYS_SUCCESS);
    assert_int_equal(c.points, 5);
    assert_int_equal(c.devices, 2);
    assert_int_equal(c.ranks, 1);
    for (int i = 0; i < c.points; i++) assert_true(c.t_tot_s[i] > 0 && c.n_sub[i] == (1 << i));
    assert_true(isfinite(c.t_sync_s) && isfinite(c.t_launch_s));
    assert_int_equal(clphys_measure_sync(ctx, 0, 16, 3, &c), CLPHYS_ERR_INVALID_ARGUMENT);
}

/* ---- the device list ------------------------------------------------------------------ */
static void device_list(void **state)
{
    (void)state;
    char two[300];
    snprintf(two, sizeof two, "%s,%s", tu_device_spec(), tu_device_spec());
    clphys_context **c;
    int n;
    assert_int_equal(clphys_contexts_create(two, 0, 1, &c, &n), CLPHYS_SUCCESS);
    assert_int_equal(n, 2);
    assert_true(c[0] != c[1]);
    clphys_contexts_destroy(c, n);
    for (int share = 0; share < 3; share++) { /* 2 entries over 3 processes: one each, the third shares */
        assert_int_equal(clphys_contexts_create(two, share, 3, &c, &n), CLPHYS_SUCCESS);
        assert_int_equal(n, 1);
        clphys_contexts_destroy(c, n);
    }
    assert_int_equal(clphys_contexts_create(two, 1, 2, &c, &n), CLPHYS_SUCCESS);
    assert_int_equal(n, 1);
    clphys_contexts_destroy(c, n);
    snprintf(two, sizeof two, "%s,,%s", tu_device_spec(), tu_device_spec());
    assert_int_equal(clphys_contexts_create(two, 0, 1, &c, &n), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_null(c);
    snprintf(two, sizeof two, "%s,97:97", tu_device_spec());
    assert_int_equal(clphys_contexts_create(two, 0, 1, &c, &n), CLPHYS_ERR_DEVICE_NOT_FOUND);
    assert_non_null(strstr(clphys_last_error(NULL), "97:97"));
    assert_int_equal(clphys_contexts_create(tu_device_spec(), 2, 2, &c, &n), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(clphys_contexts_create(tu_device_spec(), 0, 1, NULL, &n), CLPHYS_ERR_INVALID_ARGUMENT);
    clphys_contexts_destroy(NULL, 0);
}

/* ---- several devices against one ------------------------------------------------------- */
static clphys_nbody_gravity_params params(clphys_precision p, double eps)
{
    /* j_split 1: each i sums its j in order whatever the number of i per
     * device, so that any split gives the one-device result bit for bit */
    clphys_nbody_gravity_params prm = {0, p, CLPHYS_NBODY_GRAVITY_AUTO, 1.0, eps, 1, 0, 0, 0, 0, 0, 0, 1, 0};
    return prm;
}

/* multi plan over ndev contexts, `queues` lanes, blocks of jb, weights w (NULL: measured) */
static void multi_run(clphys_precision p, double eps, int ndev, int queues, const double *w, int ni, const double *xi,
                      int nj, const double *xj, size_t jb, double *acc, double *pot)
{
    clphys_nbody_gravity_params prm = params(p, eps);
    clphys_nbody_gravity_multi *m = NULL;
    clphys_status st = clphys_nbody_gravity_multi_create(ctx, ndev, queues, &prm, &m);
    if (st) fail_msg("multi create: %s", clphys_last_error(ctx[0]));
    int nd, nq;
    clphys_nbody_gravity_multi_info(m, &nd, &nq);
    assert_int_equal(nd, ndev);
    assert_int_equal(nq, queues ? queues : 2);
    if (w) assert_int_equal(clphys_nbody_gravity_multi_weights(m, w, NULL), CLPHYS_SUCCESS);
    double got[2];
    assert_int_equal(clphys_nbody_gravity_multi_weights(m, NULL, got), CLPHYS_SUCCESS);
    assert_true(fabs(got[0] + (ndev > 1 ? got[1] : 0) - 1) < 1e-12);
    tu_poison_f64(acc, 3 * (size_t)ni);
    tu_poison_f64(pot, (size_t)ni);
    clphys_nbody_gravity_timing t;
    st = clphys_nbody_gravity_multi_compute(m, ni, xi, nj, xj, jb, acc, pot, &t);
    if (st) fail_msg("multi compute: %s", clphys_last_error(ctx[0]));
    assert_true(t.total_s > 0 && t.kernel_s > 0 && t.kernels >= 1 && t.exchanges == 0);
    clphys_nbody_gravity_multi_destroy(m);
}

static void several_devices(clphys_precision p)
{
    if (p == CLPHYS_FP64 && !clphys_context_device(ctx[0])->fp64) skip();
    const double tol = p == CLPHYS_FP64 ? 1e-12 : 1e-5, eps = 0.05;
    const int n = 611, ni = 300; /* not multiples of a block or a work-group */
    double *x = tg_random_particles(n, 1), *xi = tg_random_particles(ni, 2);
    if (p == CLPHYS_FP32)
        for (int k = 0; k < 4 * n; k++) x[k] = (float)x[k];
    double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot), *ra = malloc(3 * n * sizeof *ra),
           *rp = malloc(n * sizeof *rp), *a1 = malloc(3 * n * sizeof *a1), *p1 = malloc(n * sizeof *p1);
    nbody_ref_gravity(n, NULL, n, x, 1.0, eps, ra, rp);
    const double w_even[2] = {1, 1}, w_first[2] = {1, 0}, w_second[2] = {0, 1}, w_skew[2] = {1, 3};
    const double *ws[] = {NULL, w_even, w_first, w_second, w_skew};
    const size_t blocks[] = {0, 1, 100, 611, 5000};
    double ea, ep;
    /* one device, one multi plan: the reference for bit-for-bit comparisons */
    multi_run(p, eps, 1, 2, NULL, n, NULL, n, x, 100, a1, p1);
    tg_errors(n, x, n, x, eps, a1, p1, ra, rp, &ea, &ep);
    if (!(ea < tol && ep < tol)) fail_msg("one device: acc err %.3g pot err %.3g", ea, ep);
    for (int k = 0; k < 5; k++) {
        multi_run(p, eps, 2, 2, ws[k], n, NULL, n, x, 100, acc, pot);
        tg_errors(n, x, n, x, eps, acc, pot, ra, rp, &ea, &ep);
        if (!(ea < tol && ep < tol)) fail_msg("two devices, weights %d: acc err %.3g pot err %.3g", k, ea, ep);
        if (memcmp(acc, a1, 3 * n * sizeof *acc) || memcmp(pot, p1, n * sizeof *pot))
            fail_msg("two devices, weights %d: not bit for bit the one-device result", k);
    }
    for (int b = 0; b < 5; b++)
        for (int q = 1; q <= 2; q++) {
            multi_run(p, eps, 2, q, NULL, n, NULL, n, x, blocks[b], acc, pot);
            tg_errors(n, x, n, x, eps, acc, pot, ra, rp, &ea, &ep);
            if (!(ea < tol && ep < tol))
                fail_msg("blocks of %zu, %d queue(s): acc err %.3g pot err %.3g", blocks[b], q, ea, ep);
        }
    /* a separate i-set (no self term) */
    if (p == CLPHYS_FP32)
        for (int k = 0; k < 4 * ni; k++) xi[k] = (float)xi[k];
    nbody_ref_gravity(ni, xi, n, x, 1.0, eps, ra, rp);
    multi_run(p, eps, 2, 2, w_skew, ni, xi, n, x, 64, acc, pot);
    tg_errors(ni, xi, n, x, eps, acc, pot, ra, rp, &ea, &ep);
    if (!(ea < tol && ep < tol)) fail_msg("i != j: acc err %.3g pot err %.3g", ea, ep);
    free(x), free(xi), free(acc), free(pot), free(ra), free(rp), free(a1), free(p1);
}
static void several_devices_fp64(void **state)
{
    (void)state;
    several_devices(CLPHYS_FP64);
}
static void several_devices_fp32(void **state)
{
    (void)state;
    several_devices(CLPHYS_FP32);
}

static void multi_errors(void **state)
{
    (void)state;
    clphys_nbody_gravity_params prm = params(CLPHYS_FP32, 0.01);
    clphys_nbody_gravity_multi *m = NULL;
    assert_int_equal(clphys_nbody_gravity_multi_create(ctx, 0, 2, &prm, &m), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(clphys_nbody_gravity_multi_create(ctx, 2, 3, &prm, &m), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_null(m);
    prm.eps = -1;
    assert_int_equal(clphys_nbody_gravity_multi_create(ctx, 2, 2, &prm, &m), CLPHYS_ERR_INVALID_ARGUMENT);
    prm.eps = 0.01, prm.potential = 0;
    assert_int_equal(clphys_nbody_gravity_multi_create(ctx, 2, 2, &prm, &m), CLPHYS_SUCCESS);
    double x[8] = {0, 0, 0, 1, 1, 0, 0, NAN}, acc[6], pot[2];
    assert_int_equal(clphys_nbody_gravity_multi_compute(m, 2, NULL, 2, x, 0, acc, pot, NULL),
                     CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(clphys_nbody_gravity_multi_compute(m, 2, NULL, 2, x, 0, acc, NULL, NULL), CLPHYS_ERR_INPUT);
    assert_non_null(strstr(clphys_last_error(ctx[0]), "particle 1"));
    const double bad[2] = {1, -1}, zero[2] = {0, 0};
    assert_int_equal(clphys_nbody_gravity_multi_weights(m, bad, NULL), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_int_equal(clphys_nbody_gravity_multi_weights(m, zero, NULL), CLPHYS_ERR_INVALID_ARGUMENT);
    x[7] = 1; /* usable again after the errors */
    assert_int_equal(clphys_nbody_gravity_multi_compute(m, 2, NULL, 2, x, 1, acc, NULL, NULL), CLPHYS_SUCCESS);
    assert_true(acc[0] > 0.99 && acc[0] < 1.01 && acc[3] < -0.99);
    clphys_nbody_gravity_multi_destroy(m);
    clphys_nbody_gravity_multi_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(schedules),
        cmocka_unit_test(model),
        cmocka_unit_test(device_list),
        cmocka_unit_test(sync_probe),
        cmocka_unit_test(several_devices_fp64),
        cmocka_unit_test(several_devices_fp32),
        cmocka_unit_test(multi_errors),
    };
    return tu_run_group(tests, .ctx = ctx, .nctx = 2);
}
