/* test_lqcd_blas.c — the fused level-1 kernels of cl/linalg_blas1.cl that the
 * lattice solvers run (through host/linalg/fused.c), fp32 and fp64, against
 * a double-precision CPU reference on fresh random vectors the size of a
 * half field of a 4^3 x 8 lattice: the scalars formed inside the kernels
 * from partial sums left by earlier kernels, the updated fields, the partial
 * sums they leave (added on the host), the device scalars they store, the
 * zero-denominator guards, and a reduction point with a global-sum hook (the
 * kernels after it read the written-back sums).  Pure outputs are poisoned
 * (NaN) before each launch, so an element left unwritten fails.
 * Error measure: max_i |a_i - r_i| / max(|r_i|, 1); 1e-12 in fp64, 2e-5 in
 * fp32 (inputs are O(1)); sums relative to their size. */
#include "util.h"
#include "host/linalg/linalg_internal.h"

#include <complex.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static clphys_context *ctx;
static la_space *pl[2];                          /* fp32, fp64 */
static const size_t NR = 4 * 4 * 4 * 8 / 2 * 24; /* reals of a half field */

static double tol(const la_space *p) { return p->real_size == 8 ? 1e-12 : 2e-5; }

/* Random O(1) values, rounded to the plan's precision (the reference then
 * starts from exactly what the device holds). */
static double *rnd(const la_space *p, size_t n, uint64_t *rng)
{
    double *a = malloc(sizeof(double) * n);
    for (size_t i = 0; i < n; i++) {
        a[i] = 2 * tu_uniform(rng) - 1;
        if (p->real_size == 4) a[i] = (double)(float)a[i];
    }
    return a;
}

static cl_mem dbuf(la_space *p, size_t n, size_t rs)
{
    cl_mem m;
    assert_int_equal(cp_buffer(p->ctx, CL_MEM_READ_WRITE, n * rs, NULL, &m), CLPHYS_SUCCESS);
    return m;
}

/* host doubles -> device reals of size rs (4 or 8) */
static void put(la_space *p, cl_mem m, const double *h, size_t n, size_t rs)
{
    void *t = malloc(n * rs);
    for (size_t i = 0; i < n; i++) {
        if (rs == 4)
            ((float *)t)[i] = (float)h[i];
        else
            ((double *)t)[i] = h[i];
    }
    assert_int_equal(cp_write(p->ctx, m, 0, n * rs, t), CLPHYS_SUCCESS);
    free(t);
}

static void get(la_space *p, cl_mem m, double *h, size_t n, size_t rs)
{
    void *t = malloc(n * rs);
    assert_int_equal(cp_read(p->ctx, m, 0, n * rs, t), CLPHYS_SUCCESS);
    for (size_t i = 0; i < n; i++) h[i] = rs == 4 ? (double)((float *)t)[i] : ((double *)t)[i];
    free(t);
}

static void poison(la_space *p, cl_mem m, size_t n, size_t rs)
{
    double *nan = malloc(sizeof(double) * n);
    tu_poison_f64(nan, n);
    put(p, m, nan, n, rs);
    free(nan);
}

static cl_mem field(la_space *p, const double *h)
{
    cl_mem m = dbuf(p, NR, p->real_size);
    put(p, m, h, NR, p->real_size);
    return m;
}

static cl_mem partial(la_space *p)
{
    cl_mem m;
    assert_int_equal(cp_buffer(p->ctx, CL_MEM_READ_WRITE, la_partial_reals(p) * p->real_size, NULL, &m),
                     CLPHYS_SUCCESS);
    poison(p, m, la_partial_reals(p), p->real_size);
    return m;
}

static double err(const double *a, const double *r, size_t n) { return tu_max_rel_err(a, r, n, 1.0); }

static void check_field(la_space *p, cl_mem m, const double *ref, const char *what)
{
    double *a = malloc(sizeof(double) * NR);
    get(p, m, a, NR, p->real_size);
    double e = err(a, ref, NR);
    print_message("#   %-34s %s: %.2e\n", what, p->real_size == 8 ? "fp64" : "fp32", e);
    assert_true(e <= tol(p));
    free(a);
}

/* |got - ref| / max(scale, 1): scale = the sum of the terms' magnitudes for
 * a sum (rounding grows with it), |ref| for a single value */
static void check_sum(double got, double ref, double scale, const la_space *p, const char *what)
{
    double e = fabs(got - ref) / fmax(scale, 1.0);
    print_message("#   %-34s %s: %.2e\n", what, p->real_size == 8 ? "fp64" : "fp32", e);
    assert_true(isfinite(got) && e <= tol(p));
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* sum conj(a) b over complex pairs */
static double complex cdot(const double *a, const double *b, size_t n)
{
    double complex s = 0;
    for (size_t i = 0; i < n / 2; i++) s += conj(a[2 * i] + I * a[2 * i + 1]) * (b[2 * i] + I * b[2 * i + 1]);
    return s;
}

/* sum |a_i| |b_i| over complex pairs (the scale of cdot's rounding) */
static double cabsdot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n / 2; i++) s += hypot(a[2 * i], a[2 * i + 1]) * hypot(b[2 * i], b[2 * i + 1]);
    return s;
}

/* the sums of a partial-sum buffer as the host adds them (m reals per group) */
static double complex psum(la_space *p, cl_mem part, int m, int c)
{
    double s[3];
    assert_int_equal(la_sums_now(p, part, m, s), CLPHYS_SUCCESS);
    return s[c] + I * s[c + 1];
}

static double complex cat(const double *a, size_t i) { return a[2 * i] + I * a[2 * i + 1]; }
static void cset(double *a, size_t i, double complex v) { a[2 * i] = creal(v), a[2 * i + 1] = cimag(v); }

static void test_cg_dev(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        la_space *p = pl[k];
        if (!p) continue;
        uint64_t rng = tu_rng_init(300 + k);
        double *xa = rnd(p, NR, &rng), *ra = rnd(p, NR, &rng), *pa = rnd(p, NR, &rng), *qa = rnd(p, NR, &rng),
               *ga = rnd(p, NR, &rng);
        cl_mem x = field(p, xa), r = field(p, ra), pp = field(p, pa), q = field(p, qa), gv = field(p, ga);
        cl_mem pg = partial(p), pq = partial(p), prr = partial(p);
        /* <r,r> from ga, <q,q> from qa, both as partial sums of norm2 */
        assert_int_equal(la_fused_norm2_into(p, gv, pg), CLPHYS_SUCCESS);
        assert_int_equal(la_fused_norm2_into(p, q, pq), CLPHYS_SUCCESS);
        assert_int_equal(la_fused_cg_update(p, pp, q, x, r, pg, pq, prr), CLPHYS_SUCCESS);
        /* the kernel forms alpha from the partial sums: reference alpha from
         * the same partial sums added on the host; the sums themselves
         * against the double reference */
        const double gam = creal(psum(p, pg, 2, 0)), qq = creal(psum(p, pq, 2, 0)), alpha = gam / qq;
        check_sum(gam, dot(ga, ga, NR), dot(ga, ga, NR), p, "norm2 partials");
        const double af = p->real_size == 4 ? (double)(float)alpha : alpha;
        for (size_t i = 0; i < NR; i++) xa[i] += af * pa[i], ra[i] -= af * qa[i];
        check_field(p, x, xa, "cg_update_dev x += alpha p");
        check_field(p, r, ra, "cg_update_dev r -= alpha q");
        double s[3], *h = malloc(sizeof(double) * la_partial_reals(p));
        assert_int_equal(la_sums_now(p, prr, 2, s), CLPHYS_SUCCESS);
        check_sum(s[0], dot(ra, ra, NR), dot(ra, ra, NR), p, "cg_update_dev |r|^2 partials");
        get(p, prr, h, la_partial_reals(p), p->real_size);
        check_sum(h[2 * p->ngroups], qq, qq, p, "cg_update_dev <q,q> for the host");
        /* beta = <r,r>_new / <r,r>_old: pnum from ra (the new r), pden = pg */
        double *ya = rnd(p, NR, &rng);
        cl_mem y = field(p, ya);
        assert_int_equal(la_fused_norm2_into(p, r, pq), CLPHYS_SUCCESS);
        assert_int_equal(la_fused_xpay(p, r, y, pq, pg), CLPHYS_SUCCESS);
        double beta = creal(psum(p, pq, 2, 0)) / gam;
        if (p->real_size == 4) beta = (double)(float)beta;
        for (size_t i = 0; i < NR; i++) ya[i] = ra[i] + beta * ya[i];
        check_field(p, y, ya, "xpay_dev p = r + beta p");
        /* <q,q> = 0: alpha = 0, x and r stay */
        double *z = calloc(NR, sizeof(double));
        put(p, q, z, NR, p->real_size);
        double *xb = malloc(sizeof(double) * NR);
        get(p, x, xb, NR, p->real_size);
        assert_int_equal(la_fused_norm2_into(p, q, pq), CLPHYS_SUCCESS);
        assert_int_equal(la_fused_cg_update(p, pp, q, x, r, pg, pq, prr), CLPHYS_SUCCESS);
        check_field(p, x, xb, "cg_update_dev <q,q> = 0 leaves x");
        check_field(p, r, ra, "cg_update_dev <q,q> = 0 leaves r");
        cl_mem all[] = {x, r, pp, q, gv, pg, pq, prr, y};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++) clReleaseMemObject(all[i]);
        free(xa), free(ra), free(pa), free(qa), free(ga), free(ya), free(z), free(xb), free(h);
    }
}

static void test_bicg_dev(void **state)
{
    (void)state;
    const size_t NC = NR / 2;
    for (int k = 0; k < 2; k++) {
        la_space *p = pl[k];
        if (!p) continue;
        uint64_t rng = tu_rng_init(400 + k);
        double *pa = rnd(p, NR, &rng), *ra = rnd(p, NR, &rng), *va = rnd(p, NR, &rng), *r0 = rnd(p, NR, &rng),
               *ta = rnd(p, NR, &rng), *xa = rnd(p, NR, &rng);
        cl_mem pp = field(p, pa), r = field(p, ra), v = field(p, va), R0 = field(p, r0), t = field(p, ta),
               x = field(p, xa), s = dbuf(p, NR, p->real_size), st = p->state;
        cl_mem pxr = partial(p), pd = partial(p), pts = partial(p);
        double S[8] = {0.7, -0.2, 0.4, 0.9, -0.3, 0.5, NAN, NAN}, Sd[8];
        put(p, st, S, 8, 8);
        /* pxr = {|r0|^2, conj(r0) r} from bicg_ts with t = r0, s = r */
        assert_int_equal(la_fused_bicg_ts(p, R0, r, pxr), CLPHYS_SUCCESS);
        const double complex rn = psum(p, pxr, 4, 1);
        check_sum(creal(rn), creal(cdot(r0, ra, NR)), cabsdot(r0, ra, NR), p, "bicg_ts conj(t) s partials (re)");
        check_sum(cimag(rn), cimag(cdot(r0, ra, NR)), cabsdot(r0, ra, NR), p, "bicg_ts conj(t) s partials (im)");
        /* p = r + beta (p - omega v), beta = (rn / rho) (alpha / omega) */
        assert_int_equal(la_fused_bicg_p(p, pp, r, v, pxr, 0), CLPHYS_SUCCESS);
        const double complex rho = S[0] + I * S[1], al = S[2] + I * S[3], om = S[4] + I * S[5];
        double complex beta = rn / rho * (al / om);
        double complex omr = om;
        if (p->real_size == 4) beta = (float)creal(beta) + I * (float)cimag(beta), omr = (float)S[4] + I * (float)S[5];
        for (size_t i = 0; i < NC; i++) cset(pa, i, cat(ra, i) + beta * (cat(pa, i) - omr * cat(va, i)));
        check_field(p, pp, pa, "bicg_p_dev");
        poison(p, pp, NR, p->real_size);
        assert_int_equal(la_fused_bicg_p(p, pp, r, v, pxr, 1), CLPHYS_SUCCESS);
        check_field(p, pp, ra, "bicg_p_dev first: p = r");
        get(p, pp, pa, NR, p->real_size);
        /* s = r - alpha v, alpha = rn / <r0, v>; state rho, alpha, <r0,v> */
        poison(p, s, NR, p->real_size);
        double nan8[8];
        tu_poison_f64(nan8, 8);
        nan8[4] = S[4], nan8[5] = S[5];
        put(p, st, nan8, 8, 8);
        assert_int_equal(la_fused_cdotc_into(p, R0, v, pd), CLPHYS_SUCCESS);
        assert_int_equal(la_fused_bicg_s(p, s, r, v, pxr, pd), CLPHYS_SUCCESS);
        const double complex d = psum(p, pd, 2, 0), alpha = rn / d;
        check_sum(creal(d), creal(cdot(r0, va, NR)), cabsdot(r0, va, NR), p, "cdotc partials (re)");
        check_sum(cimag(d), cimag(cdot(r0, va, NR)), cabsdot(r0, va, NR), p, "cdotc partials (im)");
        double complex alr = p->real_size == 4 ? (float)creal(alpha) + I * (float)cimag(alpha) : alpha;
        double *sa = malloc(sizeof(double) * NR);
        for (size_t i = 0; i < NC; i++) cset(sa, i, cat(ra, i) - alr * cat(va, i));
        check_field(p, s, sa, "bicg_s_dev");
        get(p, st, Sd, 8, 8);
        check_sum(Sd[0], creal(rn), cabs(rn), p, "bicg_s_dev state rho (re)");
        check_sum(Sd[1], cimag(rn), cabs(rn), p, "bicg_s_dev state rho (im)");
        check_sum(Sd[2], creal(alpha), cabs(alpha), p, "bicg_s_dev state alpha (re)");
        check_sum(Sd[3], cimag(alpha), cabs(alpha), p, "bicg_s_dev state alpha (im)");
        check_sum(Sd[6], creal(d), cabs(d), p, "bicg_s_dev state <r0,v> (re)");
        check_sum(Sd[7], cimag(d), cabs(d), p, "bicg_s_dev state <r0,v> (im)");
        assert_true(Sd[4] == S[4] && Sd[5] == S[5]); /* omega left alone */
        /* x += alpha p + omega s, r = s - omega t, omega = conj(t) s / |t|^2 */
        assert_int_equal(la_fused_bicg_ts(p, t, s, pts), CLPHYS_SUCCESS);
        get(p, s, sa, NR, p->real_size);
        const double complex ts_ts = psum(p, pts, 4, 1), omega = ts_ts / creal(psum(p, pts, 4, 0));
        check_sum(creal(ts_ts), creal(cdot(ta, sa, NR)), cabsdot(ta, sa, NR), p, "bicg_ts conj(t) s (re)");
        check_sum(creal(psum(p, pts, 4, 0)), dot(ta, ta, NR), dot(ta, ta, NR), p, "bicg_ts |t|^2");
        double complex omr2 = p->real_size == 4 ? (float)creal(omega) + I * (float)cimag(omega) : omega;
        poison(p, pxr, la_partial_reals(p), p->real_size);
        Sd[4] = Sd[5] = NAN;
        put(p, st, Sd, 8, 8);
        assert_int_equal(la_fused_bicg_xr(p, x, r, pp, s, t, R0, pts, pxr), CLPHYS_SUCCESS);
        for (size_t i = 0; i < NC; i++) {
            cset(xa, i, cat(xa, i) + alr * cat(pa, i) + omr2 * cat(sa, i));
            cset(ra, i, cat(sa, i) - omr2 * cat(ta, i));
        }
        check_field(p, x, xa, "bicg_xr_dev x");
        check_field(p, r, ra, "bicg_xr_dev r");
        double sums[3], S2[8];
        assert_int_equal(la_sums_now(p, pxr, 4, sums), CLPHYS_SUCCESS);
        check_sum(sums[0], dot(ra, ra, NR), dot(ra, ra, NR), p, "bicg_xr_dev |r|^2 partials");
        const double complex r0r = cdot(r0, ra, NR);
        check_sum(sums[1], creal(r0r), cabsdot(r0, ra, NR), p, "bicg_xr_dev conj(r0) r (re)");
        check_sum(sums[2], cimag(r0r), cabsdot(r0, ra, NR), p, "bicg_xr_dev conj(r0) r (im)");
        get(p, st, S2, 8, 8);
        check_sum(S2[4], creal(omega), cabs(omega), p, "bicg_xr_dev state omega (re)");
        check_sum(S2[5], cimag(omega), cabs(omega), p, "bicg_xr_dev state omega (im)");
        /* <r0, v> = 0: alpha = 0 and s = r */
        double *z = calloc(NR, sizeof(double));
        put(p, v, z, NR, p->real_size);
        poison(p, s, NR, p->real_size);
        assert_int_equal(la_fused_cdotc_into(p, R0, v, pd), CLPHYS_SUCCESS);
        assert_int_equal(la_fused_bicg_s(p, s, r, v, pxr, pd), CLPHYS_SUCCESS);
        check_field(p, s, ra, "bicg_s_dev <r0,v> = 0: s = r");
        get(p, st, S2, 8, 8);
        assert_true(S2[2] == 0 && S2[3] == 0 && S2[6] == 0 && S2[7] == 0);
        cl_mem all[] = {pp, r, v, R0, t, x, s, pxr, pd, pts};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++) clReleaseMemObject(all[i]);
        free(pa), free(ra), free(va), free(r0), free(ta), free(xa), free(sa), free(z);
    }
}

static void test_outer(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        la_space *p = pl[k];
        if (!p) continue;
        uint64_t rng = tu_rng_init(500 + k);
        double *ba = rnd(p, NR, &rng), *ta = rnd(p, NR, &rng), *ra = malloc(sizeof(double) * NR);
        cl_mem b = field(p, ba), t = field(p, ta), r = dbuf(p, NR, p->real_size), part = partial(p);
        poison(p, r, NR, p->real_size);
        assert_int_equal(la_fused_sub_norm(p, r, b, t, part), CLPHYS_SUCCESS);
        for (size_t i = 0; i < NR; i++) ra[i] = ba[i] - ta[i];
        check_field(p, r, ra, "sub_norm r = b - t");
        double s[3];
        assert_int_equal(la_sums_now(p, part, 2, s), CLPHYS_SUCCESS);
        check_sum(s[0], dot(ra, ra, NR), dot(ra, ra, NR), p, "sub_norm |r|^2 partials");
        cl_mem all[] = {b, t, r, part};
        for (size_t i = 0; i < 4; i++) clReleaseMemObject(all[i]);
        free(ba), free(ta), free(ra);
    }
    /* the conversions belong to the fp64 plan */
    la_space *p = pl[1];
    if (!p) return;
    uint64_t rng = tu_rng_init(510);
    double *src = rnd(p, NR, &rng), *xa = rnd(p, NR, &rng), *ea = rnd(pl[0] ? pl[0] : p, NR, &rng);
    for (size_t i = 0; i < NR; i++) ea[i] = (double)(float)ea[i];
    cl_mem s64 = field(p, src), d32 = dbuf(p, NR, 4), part = partial(p), x = field(p, xa), e = dbuf(p, NR, 8),
           e32 = dbuf(p, NR, 4);
    poison(p, d32, NR, 4);
    assert_int_equal(la_fused_convert_single_norm(p, d32, s64, part), CLPHYS_SUCCESS);
    double *got = malloc(sizeof(double) * NR), *ref = malloc(sizeof(double) * NR), sums[3];
    get(p, d32, got, NR, 4);
    for (size_t i = 0; i < NR; i++) ref[i] = (double)(float)src[i];
    assert_true(err(got, ref, NR) == 0);
    assert_int_equal(la_sums_now(p, part, 2, sums), CLPHYS_SUCCESS);
    check_sum(sums[0], dot(src, src, NR), dot(src, src, NR), p, "convert_to_single_norm |src|^2");
    put(p, e32, ea, NR, 4);
    poison(p, e, NR, 8);
    assert_int_equal(la_fused_convert_add(p, x, e, e32), CLPHYS_SUCCESS);
    get(p, e, got, NR, 8);
    assert_true(err(got, ea, NR) == 0);
    for (size_t i = 0; i < NR; i++) xa[i] += ea[i];
    check_field(p, x, xa, "convert_add x += (double) e32");
    if (pl[0]) /* the correction is added in fp64 */
        assert_int_equal(la_convert_add(pl[0], x, e, p, e32), CLPHYS_ERR_INVALID_ARGUMENT);
    cl_mem all[] = {s64, d32, part, x, e, e32};
    for (size_t i = 0; i < 6; i++) clReleaseMemObject(all[i]);
    free(src), free(xa), free(ea), free(got), free(ref);
}

/* A global-sum hook that scales value i by i + 1, so that a kernel reading
 * anything but the written-back group 0 gets other scalars. */
static int hook_calls, hook_n;
static clphys_status scale_hook(void *user, double *sums, int n)
{
    (void)user;
    hook_calls++, hook_n = n;
    for (int i = 0; i < n; i++) sums[i] *= i + 1;
    return CLPHYS_SUCCESS;
}

/* The real dot, axpy, the two-step norms, the conversion with its norm, and
 * a reduction point through a global-sum hook. */
static void test_level1(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        la_space *p = pl[k];
        if (!p) continue;
        uint64_t rng = tu_rng_init(600 + k);
        double *xa = rnd(p, NR, &rng), *ya = rnd(p, NR, &rng), *ta = rnd(p, NR, &rng);
        cl_mem x = field(p, xa), y = field(p, ya), t = field(p, ta), pa = partial(p), pb = partial(p);
        assert_int_equal(la_fused_dot_into(p, x, y, pa), CLPHYS_SUCCESS);
        check_sum(creal(psum(p, pa, 2, 0)), dot(xa, ya, NR), NR, p, "dot partials (real)");
        assert_int_equal(la_fused_axpy(p, 0.375, x, y), CLPHYS_SUCCESS);
        for (size_t i = 0; i < NR; i++) ya[i] += 0.375 * xa[i];
        check_field(p, y, ya, "axpy");
        /* two-step norms: |x|^2 and r = y - t with |r|^2, read together */
        cl_mem r = dbuf(p, NR, p->real_size);
        poison(p, r, NR, p->real_size);
        double n2[2], *ra = malloc(sizeof(double) * NR);
        assert_int_equal(la_norm2_start(p, x, 0), CLPHYS_SUCCESS);
        assert_int_equal(la_sub_start(p, r, y, t, 1), CLPHYS_SUCCESS);
        const cl_mem v[2] = {x, r};
        assert_int_equal(la_norms_finish(p, CLPHYS_SUCCESS, 2, v, n2), CLPHYS_SUCCESS);
        for (size_t i = 0; i < NR; i++) ra[i] = ya[i] - ta[i];
        check_field(p, r, ra, "sub_start r = y - t");
        check_sum(n2[0], dot(xa, xa, NR), dot(xa, xa, NR), p, "norms_finish |x|^2");
        check_sum(n2[1], dot(ra, ra, NR), dot(ra, ra, NR), p, "norms_finish |y - t|^2");
        /* a reduction point with the hook: the host and the kernel after it
         * see the hook's values; xpay's beta = 1 |x|^2 / (3 |y|^2) */
        la_space_set_global_sum(p, scale_hook, NULL);
        hook_calls = 0;
        assert_int_equal(la_fused_norm2_into(p, x, pa), CLPHYS_SUCCESS);
        assert_int_equal(la_fused_norm2_into(p, y, pb), CLPHYS_SUCCESS);
        const cl_mem both[2] = {pa, pb};
        assert_int_equal(la_reduce_point(p, 2, both, 2), CLPHYS_SUCCESS);
        assert_int_equal(hook_calls, 1);
        assert_int_equal(hook_n, 4);
        const double xx = dot(xa, xa, NR), yy = dot(ya, ya, NR);
        check_sum(creal(psum(p, pa, 2, 0)), xx, xx, p, "hooked |x|^2 (x 1)");
        check_sum(creal(psum(p, pb, 2, 0)), 3 * yy, 3 * yy, p, "hooked |y|^2 (x 3)");
        assert_int_equal(la_fused_xpay(p, x, t, pa, pb), CLPHYS_SUCCESS);
        double beta = xx / (3 * yy);
        if (p->real_size == 4) beta = (double)(float)beta;
        for (size_t i = 0; i < NR; i++) ta[i] = xa[i] + beta * ta[i];
        check_field(p, t, ta, "xpay after the reduction point");
        la_space_set_global_sum(p, NULL, NULL);
        cl_mem all[] = {x, y, t, pa, pb, r};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++) clReleaseMemObject(all[i]);
        free(xa), free(ya), free(ta), free(ra);
    }
    /* fp64 -> fp32 with the norm in one pass */
    if (!pl[0] || !pl[1]) return;
    uint64_t rng = tu_rng_init(610);
    double *src = rnd(pl[1], NR, &rng), *got = malloc(sizeof(double) * NR), n2;
    cl_mem s64 = field(pl[1], src), d32 = dbuf(pl[0], NR, 4);
    poison(pl[0], d32, NR, 4);
    assert_int_equal(la_convert_norm(pl[0], d32, pl[1], s64, &n2), CLPHYS_SUCCESS);
    get(pl[0], d32, got, NR, 4);
    for (size_t i = 0; i < NR; i++) assert_true(got[i] == (double)(float)src[i]);
    check_sum(n2, dot(src, src, NR), dot(src, src, NR), pl[1], "convert_norm |src|^2");
    clReleaseMemObject(s64);
    clReleaseMemObject(d32);
    free(src), free(got);
}

static int setup(void **state)
{
    (void)state;
    if (!clphys_context_device(ctx)->fp64) return 0; /* the layer needs fp64 */
    for (int k = 0; k < 2; k++) {
        la_space_params sp = {
            .precision = k ? CLPHYS_FP64 : CLPHYS_FP32, .n = NR, .complex_values = 1, .blas = LA_BLAS_FUSED};
        if (la_space_create(ctx, &sp, &pl[k])) {
            fprintf(stderr, "%s\n", clphys_last_error(ctx));
            return -1;
        }
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) la_space_destroy(pl[k]);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cg_dev), cmocka_unit_test(test_bicg_dev),
                                       cmocka_unit_test(test_outer), cmocka_unit_test(test_level1)};
    return tu_run_group(tests, .ctx = &ctx, .nctx = 1, .setup = setup, .teardown = teardown);
}
