/* lqcd_multi.c — benchmark paths "lqcd_dslash_multi" (the Wilson hopping term
 * over the devices of --device LIST in one process, split along t) and
 * "lqcd_solver_multi" (CGNR and BiCGStab, fp64 and mixed, time to solution),
 * both through clphys_lqcd_dslash_plan_create_multi with one host thread per
 * device; without a list of several devices they add no rows (as the MPI
 * entries without a launcher), so the default run stays as it was.
 *
 * Each row carries the scaling schema (scaling.h; strong scaling): the
 * baseline is the whole lattice on the first device (clphys_lqcd_dslash_plan_create),
 * measured in the same run the same way.  dslash: the time of one
 * application in a loop of back-to-back applications (as a solver issues
 * them), median over rounds, the largest over the devices; beside it the
 * parts of one application (clphys_lqcd_dslash_apply_split, medians, the
 * largest over the devices): interior, pack, exterior, the face copies,
 * the exchange's span (the first face copy down starting to the last copy
 * up ending, device clock: exchange_s of the schema) and the exchange not
 * hidden.  The
 * exchange floor: each device's face bytes down to the host and the same
 * bytes up into the neighbour (clphys_measure_transfers, one after the
 * other: a face goes up only once it is down), no host copy.  Verified
 * against the first device's whole-lattice output.  fp32 hops and the
 * mixed solves run again with the faces in 16 bits (halo_half; rows
 * halo16): verified within 5e-4 of one device, and for the solves the
 * tolerance with the one device's iteration count within 10%. */
#include "lqcd_bench.h"
#include "scaling.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { MAXREP = 50, MAXDEV = 16, LOOP = 20 };

static const char *dims_str(const int d[4], char *buf, size_t n)
{
    snprintf(buf, n, "%dx%dx%dx%d", d[0], d[1], d[2], d[3]);
    return buf;
}

/* Device k's block of a whole-lattice array of 24 doubles per site. */
static void block(const int d[4], const int grid[4], int k, const double *whole, double *part, int to_part)
{
    int ld[4], co[4];
    clphys_lqcd_grid_local(d, grid, k, ld, co);
    const size_t lv = (size_t)ld[0] * ld[1] * ld[2] * ld[3];
#pragma omp parallel for schedule(static)
    for (size_t l = 0; l < lv; l++) {
        size_t r = l, gs = 0, stride = 1;
        for (int mu = 0; mu < 4; mu++) {
            gs += (r % (size_t)ld[mu] + (size_t)co[mu] * ld[mu]) * stride;
            r /= (size_t)ld[mu], stride *= (size_t)d[mu];
        }
        if (to_part)
            memcpy(part + l * 24, whole + gs * 24, 24 * sizeof(double));
        else
            memcpy((double *)whole + gs * 24, part + l * 24, 24 * sizeof(double));
    }
}

/* ---- one host thread per device ------------------------------------------ */
typedef struct {
    clphys_context *ctx; /* the device's (its queue is the plan's)   */
    clphys_lqcd_dslash_plan *pl, *pl32;
    pthread_barrier_t *bar;
    double *in, *out; /* host spinors of this device's sublattice */
    int rep, kind;    /* kind: 0 dslash, 1 solve                  */
    const clphys_lqcd_solver_params *prm;
    double loop_s[MAXREP]; /* per round: one application in a loop     */
    clphys_lqcd_dslash_split parts[MAXREP];
    clphys_lqcd_solver_result res[MAXREP];
    int ok;
} job;

static void *dslash_thread(void *arg)
{
    job *j = arg;
    clphys_lqcd_dslash_plan *pl = j->pl;
    cl_mem a = NULL, b = NULL;
    int ok = !clphys_lqcd_dslash_field_create(pl, 0, &a) && !clphys_lqcd_dslash_field_create(pl, 0, &b) &&
             !clphys_lqcd_dslash_field_write(pl, a, -1, j->in);
    clphys_lqcd_dslash_split s;
    if (ok) ok = !clphys_lqcd_dslash_apply_split(pl, CLPHYS_LQCD_DSLASH_HOPPING, b, a, &s); /* warm-up */
    for (int r = 0; r < j->rep; r++) { /* every barrier, failed or not */
        pthread_barrier_wait(j->bar);
        if (!ok) continue;
        const double t0 = bench_now();
        for (int i = 0; i < LOOP && ok; i++) ok = !clphys_lqcd_dslash_apply(pl, CLPHYS_LQCD_DSLASH_HOPPING, b, a, NULL);
        if (ok) ok = clFinish(clphys_context_queue(j->ctx)) == CL_SUCCESS;
        j->loop_s[r] = (bench_now() - t0) / LOOP;
        if (ok) ok = !clphys_lqcd_dslash_apply_split(pl, CLPHYS_LQCD_DSLASH_HOPPING, b, a, &j->parts[r]);
    }
    if (ok) ok = !clphys_lqcd_dslash_field_read(pl, b, -1, j->out);
    if (a) clReleaseMemObject(a);
    if (b) clReleaseMemObject(b);
    j->ok = ok;
    return NULL;
}

static void *solve_thread(void *arg)
{
    job *j = arg;
    clphys_lqcd_solver_plan *sp = NULL;
    int ok = !clphys_lqcd_solver_plan_create(j->pl, j->pl32, j->prm, &sp);
    for (int r = 0; r < j->rep + 1; r++) { /* the first: warm-up; every barrier, failed or not */
        pthread_barrier_wait(j->bar);
        if (ok) ok = !clphys_lqcd_solver_solve(sp, j->in, j->out, &j->res[r ? r - 1 : 0]);
    }
    clphys_lqcd_solver_plan_destroy(sp);
    j->ok = ok;
    return NULL;
}

/* Run fn on n threads (each passes every barrier of its rounds, so that
 * a failure on one device cannot leave the others waiting there; the
 * group's failure ends their applications with an error). */
static int run_threads(int n, job *jobs, void *(*fn)(void *))
{
    pthread_t t[MAXDEV];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)n);
    int ok = 1;
    for (int k = 0; k < n; k++) jobs[k].bar = &bar;
    for (int k = 0; k < n; k++) pthread_create(&t[k], NULL, fn, &jobs[k]);
    for (int k = 0; k < n; k++) pthread_join(t[k], NULL), ok &= jobs[k].ok;
    pthread_barrier_destroy(&bar);
    return ok;
}

static double part_max(const job *jobs, int n, int rep, size_t off)
{
    double worst = 0;
    for (int k = 0; k < n; k++) {
        double v[MAXREP];
        for (int r = 0; r < rep; r++) v[r] = *(const double *)((const char *)&jobs[k].parts[r] + off);
        const double m = ref_median(v, rep);
        worst = m > worst ? m : worst;
    }
    return worst;
}

/* The group's time per round: the slowest device's. */
static double loop_median(const job *jobs, int n, int rep)
{
    double v[MAXREP];
    for (int r = 0; r < rep; r++) {
        v[r] = 0;
        for (int k = 0; k < n; k++) v[r] = jobs[k].loop_s[r] > v[r] ? jobs[k].loop_s[r] : v[r];
    }
    return ref_median(v, rep);
}

/* The lattice d in one precision: the first device alone, then all. */
static void dslash_case(bench_run *run, const int d[4], const clphys_lqcd_gauge_field *g, double *in,
                        clphys_precision prec, int half)
{
    const int n = run->ndevices, grid[4] = {1, 1, 1, n};
    const size_t V = g->volume, lv = V / (size_t)n;
    const int rep = run->repeat < MAXREP ? run->repeat : MAXREP;
    const clphys_lqcd_dslash_params prm = {.precision = prec, .reconstruct = 12, .kappa = 0.125},
                                    prm_half = {
                                        .precision = prec, .reconstruct = 12, .kappa = 0.125, .halo_half = half};
    char lat[32], gr[32], what[96];
    dims_str(d, lat, sizeof lat), dims_str(grid, gr, sizeof gr);
    const char *pname = prec == CLPHYS_FP64 ? "fp64" : "fp32";
    snprintf(what, sizeof what, "%s %s%s over %d devices", lat, pname, half ? " 16-bit faces" : "", n);
    double *ref = malloc(sizeof(double) * 24 * V), *out = malloc(sizeof(double) * 24 * V);
    job *one = calloc(1, sizeof *one), *jobs = calloc((size_t)n, sizeof *jobs);
    clphys_lqcd_dslash_plan *single = NULL, *pl[MAXDEV] = {NULL};
    int ok = ref && out && one && jobs;
    /* the baseline: the whole lattice on the first device */
    if (ok) ok = !clphys_lqcd_dslash_plan_create(run->ctx, g, &prm, &single);
    if (ok) {
        *one = (job){.ctx = run->ctx, .pl = single, .in = in, .out = ref, .rep = rep};
        ok = run_threads(1, one, dslash_thread);
    }
    clphys_lqcd_dslash_plan_destroy(single);
    if (!ok) {
        bench_fail(run, "lqcd_dslash_multi", what, clphys_last_error(run->ctx));
        goto done;
    }
    const double base_s = loop_median(one, 1, rep);
    ok = !clphys_lqcd_dslash_plan_create_multi(n, run->devices, grid, g, &prm_half, pl);
    for (int k = 0; k < n && ok; k++) {
        jobs[k] = (job){.ctx = run->devices[k],
                        .pl = pl[k],
                        .in = malloc(sizeof(double) * 24 * lv),
                        .out = malloc(sizeof(double) * 24 * lv),
                        .rep = rep};
        ok = jobs[k].in && jobs[k].out;
        if (ok) block(d, grid, k, in, jobs[k].in, 1);
    }
    if (ok) ok = run_threads(n, jobs, dslash_thread);
    if (!ok) {
        bench_fail(run, "lqcd_dslash_multi", what,
                   clphys_last_error(NULL)[0] ? clphys_last_error(NULL) : clphys_last_error(run->ctx));
        goto done;
    }
    for (int k = 0; k < n; k++) block(d, grid, k, out, jobs[k].out, 0);
    double err = 0;
    for (size_t i = 0; i < 24 * V; i++) {
        const double e = isfinite(out[i]) ? fabs(out[i] - ref[i]) / fmax(fabs(ref[i]), 1.0) : INFINITY;
        err = e > err ? e : err;
    }
    const double step = loop_median(jobs, n, rep);
#define PART(f) part_max(jobs, n, rep, offsetof(clphys_lqcd_dslash_split, f))
    const double t_int = PART(interior_s), t_pack = PART(pack_s), t_ext = PART(exterior_s), d2h = PART(d2h_s),
                 h2d = PART(h2d_s), wait = PART(mpi_s), exposed = PART(exposed_s), wall = PART(wall_s);
#undef PART
    const clphys_lqcd_dslash_split *s0 = &jobs[0].parts[0];
    const double bytes = (double)s0->halo_bytes;
    const clphys_transfer_limits *x = &run->xfer;
    const double floor_s = n > 1 && x->d2h_bytes_per_s > 0 && x->h2d_bytes_per_s > 0
                               ? bytes / x->d2h_bytes_per_s + bytes / x->h2d_bytes_per_s
                               : -1;
    const bench_scaling sc = {.gpus = bench_distinct_devices(run),
                              .ranks = 1,
                              .weak = 0,
                              .n_per_device = (long long)lv,
                              .baseline_s = base_s,
                              .step_s = step,
                              .exchange_s = n > 1 ? wait : -1,
                              .exchange_floor_s = floor_s};
    bench_row r;
    const int at = bench_scaling_row(&r, &sc, "lqcd_dslash_multi", pname, (long long)V, rep, "halo%s-recon12-%s",
                                     half ? "16" : "", gr);
    r.kernel_s_median = r.kernel_s_min = t_int + t_pack + t_ext;
    r.total_s_median = step;
    int len = at + snprintf(r.params + at, sizeof r.params - at,
                            ",\"lattice\":\"%s\",\"grid\":\"%s\",\"devices\":%d,\"op\":\"hopping, full lattice\","
                            "\"interior_s\":%.4g,\"pack_s\":%.4g,\"exterior_s\":%.4g,\"d2h_s\":%.4g,\"h2d_s\":%.4g,"
                            "\"exchange_span_s\":%.4g,\"exposed_s\":%.4g,\"split_wall_s\":%.4g,\"halo_bytes\":%zu,"
                            "\"floor_terms\":\"halo_bytes/d2h + halo_bytes/h2d, no host copy\",\"h2d_Bps\":%.4g,"
                            "\"d2h_Bps\":%.4g,\"loop\":%d}",
                            lat, gr, n, t_int, t_pack, t_ext, d2h, h2d, wait, exposed, wall, s0->halo_bytes,
                            x->h2d_bytes_per_s, x->d2h_bytes_per_s, LOOP);
    if (len >= (int)sizeof r.params) {
        bench_fail(run, "lqcd_dslash_multi", what, "params longer than the row holds");
        goto done;
    }
    r.rate = (double)V / step;
    snprintf(r.rate_unit, sizeof r.rate_unit, "sites/s");
    r.gflops = 1320.0 * (double)V / step * 1e-9;
    snprintf(r.flops_convention, sizeof r.flops_convention, "1320 per site (hopping term), over step_s");
    bench_set_fraction(run, &r, prec == CLPHYS_FP64 ? "fma_fp64_flops" : "fma_fp32_flops", r.gflops * 1e9 / n);
    r.max_rel_error = err;
    r.verified = err < (prec == CLPHYS_FP64 ? 1e-13 : half ? 5e-4 : 1e-5); /* 16-bit faces: 2^-16 of a site's largest */
    snprintf(r.note, sizeof r.note,
             "step_s: one application in a loop of %d, the slowest device; parts: medians of "
             "clphys_lqcd_dslash_apply_split, the largest over devices; fraction per device; error against one device",
             LOOP);
    bench_add_row(run, &r);
    fprintf(stderr,
            "  dslash_multi %s: %.4g s per application (one device %.4g s, speedup %.2f), interior %.4g, exchange "
            "%.4g (floor %.4g), exposed %.4g\n",
            what, step, base_s, base_s / step, t_int, sc.exchange_s, floor_s, exposed);
done:
    for (int k = 0; k < n; k++) {
        clphys_lqcd_dslash_plan_destroy(pl[k]);
        if (jobs) free(jobs[k].in), free(jobs[k].out);
    }
    free(ref), free(out), free(one), free(jobs);
}

static void set_dims(int d[4], int l, int lt) { d[0] = d[1] = d[2] = l, d[3] = lt; }

/* 0 (and a line saying why) without several devices. */
static int several(const bench_run *run, const char *path)
{
    if (run->ndevices > 1) return 1;
    fprintf(stderr, "  %s: needs several devices (clphys bench --device gpus or --device 0:0,0:1 --path %s); no rows\n",
            path, path);
    return 0;
}

int bench_lqcd_dslash_multi(bench_run *run)
{
    if (!several(run, "lqcd_dslash_multi")) return 0;
    int sizes[2][4], nsize = 2;
    if (run->size > 0)
        bench_lqcd_sized_dims(run->size, 2, 2 * run->ndevices, sizes[0]), nsize = 1;
    else if (run->quick)
        set_dims(sizes[0], 8, 8), set_dims(sizes[1], 8, 16);
    else
        set_dims(sizes[0], 32, 32), set_dims(sizes[1], 48, 96);
    for (int si = 0; si < nsize; si++) {
        const int *d = sizes[si];
        if (d[3] % (2 * run->ndevices)) continue;
        clphys_lqcd_gauge_field g = {{0}, 0, NULL};
        const size_t V = (size_t)d[0] * d[1] * d[2] * d[3];
        double *in = malloc(sizeof(double) * 24 * V);
        if (!in || clphys_lqcd_gauge_create(d, &g)) {
            bench_fail(run, "lqcd_dslash_multi", "inputs", "out of memory");
            free(in);
            continue;
        }
        clphys_lqcd_gauge_hot(&g, 12345);
        bench_lqcd_fill_spinor(in, 24 * V, 99);
        for (int prec = 0; prec < 2; prec++)
            if (bench_wants_precision(run, prec ? "fp64" : "fp32") && (!prec || run->dev->fp64))
                for (int half = 0; half < 1 + !prec; half++) dslash_case(run, d, &g, in, (clphys_precision)prec, half);
        free(in);
        clphys_lqcd_gauge_destroy(&g);
    }
    return 0;
}

/* One solver configuration on lattice d: the first device alone, then all. */
static void solve_case(bench_run *run, const int d[4], const clphys_lqcd_gauge_field *g, double *b,
                       clphys_lqcd_solver_kind kind, int mixed, int half)
{
    const int n = run->ndevices, grid[4] = {1, 1, 1, n};
    const size_t V = g->volume, lv = V / (size_t)n;
    const int rep = run->repeat < 3 ? run->repeat : 3;
    const double kappa = 0.122, tol = 1e-10;
    clphys_lqcd_dslash_params p64 = {.precision = CLPHYS_FP64, .reconstruct = 12, .kappa = kappa}, p32 = p64, m32p;
    p32.precision = CLPHYS_FP32;
    m32p = p32;
    m32p.halo_half = half;
    const clphys_lqcd_solver_params prm = {.kind = kind, .tol = tol, .max_iter = 20000, .mixed = mixed};
    const char *kname = kind == CLPHYS_LQCD_SOLVER_BICGSTAB ? "bicgstab" : "cgnr";
    char lat[32], gr[32], what[96];
    dims_str(d, lat, sizeof lat), dims_str(grid, gr, sizeof gr);
    snprintf(what, sizeof what, "%s %s %s%s over %d devices", lat, kname, mixed ? "mixed" : "fp64",
             half ? " 16-bit faces" : "", n);
    double *x = malloc(sizeof(double) * 24 * V);
    job *one = calloc(1, sizeof *one), *jobs = calloc((size_t)n, sizeof *jobs);
    clphys_lqcd_dslash_plan *s64 = NULL, *s32 = NULL, *m64[MAXDEV] = {NULL}, *m32[MAXDEV] = {NULL};
    int ok = x && one && jobs;
    if (ok)
        ok = !clphys_lqcd_dslash_plan_create(run->ctx, g, &p64, &s64) &&
             (!mixed || !clphys_lqcd_dslash_plan_create(run->ctx, g, &p32, &s32));
    if (ok) {
        *one = (job){.ctx = run->ctx, .pl = s64, .pl32 = s32, .in = b, .out = x, .rep = rep, .prm = &prm};
        ok = run_threads(1, one, solve_thread);
    }
    clphys_lqcd_dslash_plan_destroy(s64), clphys_lqcd_dslash_plan_destroy(s32);
    if (!ok) {
        bench_fail(run, "lqcd_solver_multi", what, clphys_last_error(run->ctx));
        goto done;
    }
    double v[MAXREP];
    for (int r = 0; r < rep; r++) v[r] = one->res[r].seconds;
    const double base_s = ref_median(v, rep);
    ok = !clphys_lqcd_dslash_plan_create_multi(n, run->devices, grid, g, &p64, m64) &&
         (!mixed || !clphys_lqcd_dslash_plan_create_multi(n, run->devices, grid, g, &m32p, m32));
    for (int k = 0; k < n && ok; k++) {
        jobs[k] = (job){.ctx = run->devices[k],
                        .pl = m64[k],
                        .pl32 = m32[k],
                        .in = malloc(sizeof(double) * 24 * lv),
                        .out = malloc(sizeof(double) * 24 * lv),
                        .rep = rep,
                        .prm = &prm};
        ok = jobs[k].in && jobs[k].out;
        if (ok) block(d, grid, k, b, jobs[k].in, 1);
    }
    if (ok) ok = run_threads(n, jobs, solve_thread);
    if (!ok) {
        bench_fail(run, "lqcd_solver_multi", what,
                   clphys_last_error(NULL)[0] ? clphys_last_error(NULL) : clphys_last_error(run->ctx));
        goto done;
    }
    for (int r = 0; r < rep; r++) {
        v[r] = 0;
        for (int k = 0; k < n; k++) v[r] = jobs[k].res[r].seconds > v[r] ? jobs[k].res[r].seconds : v[r];
    }
    const double step = ref_median(v, rep);
    const clphys_lqcd_solver_result *res = &jobs[0].res[0], *r1 = &one->res[0];
    const bench_scaling sc = {.gpus = bench_distinct_devices(run),
                              .ranks = 1,
                              .weak = 0,
                              .n_per_device = (long long)lv,
                              .baseline_s = base_s,
                              .step_s = step,
                              .exchange_s = -1,
                              .exchange_floor_s = -1};
    bench_row r;
    const int at = bench_scaling_row(&r, &sc, "lqcd_solver_multi", mixed ? "mixed" : "fp64", (long long)V, rep,
                                     "eo-%s%s%s-%.20s", kname, mixed ? "-mixed" : "", half ? "-halo16" : "", gr);
    r.kernel_s_median = r.kernel_s_min = r.total_s_median = step;
    snprintf(r.params + at, sizeof r.params - at,
             ",\"lattice\":\"%s\",\"grid\":\"%s\",\"devices\":%d,\"kappa\":%g,\"tol\":%g,\"iterations\":%d,"
             "\"restarts\":%d,\"one_device_iterations\":%d,\"one_device_restarts\":%d,\"inner\":\"%s\"}",
             lat, gr, n, kappa, tol, res->iterations, res->restarts, r1->iterations, r1->restarts,
             mixed ? "fp32 recon-12" : "fp64 recon-12");
    r.rate = 1 / step;
    snprintf(r.rate_unit, sizeof r.rate_unit, "solves/s");
    r.gflops = res->gflops;
    snprintf(r.flops_convention, sizeof r.flops_convention, "1368 per site per D-equivalent application");
    bench_set_fraction(run, &r, mixed ? "fma_fp32_flops" : "fma_fp64_flops", r.gflops * 1e9 / n);
    r.max_rel_error = res->rel_residual;
    /* fp64: the one device's iteration count; mixed: within 10% of it */
    r.verified = res->rel_residual <= tol && (mixed ? abs(res->iterations - r1->iterations) <= r1->iterations / 10 + 1
                                                    : res->iterations == r1->iterations);
    snprintf(r.note, sizeof r.note,
             "time to solution, host b to host x, the slowest device; verified: converged with the one device's "
             "iteration count (mixed: within 10%%)");
    bench_add_row(run, &r);
    fprintf(stderr, "  solver_multi %s: %.4g s (one device %.4g s, speedup %.2f), iterations %d (one device %d)\n",
            what, step, base_s, base_s / step, res->iterations, r1->iterations);
done:
    for (int k = 0; k < n; k++) {
        clphys_lqcd_dslash_plan_destroy(m64[k]), clphys_lqcd_dslash_plan_destroy(m32[k]);
        if (jobs) free(jobs[k].in), free(jobs[k].out);
    }
    free(x), free(one), free(jobs);
}

int bench_lqcd_solver_multi(bench_run *run)
{
    if (!several(run, "lqcd_solver_multi")) return 0;
    if (!bench_wants_precision(run, "fp64") || !run->dev->fp64) return 0;
    int sizes[2][4], nsize = run->quick ? 1 : 2;
    if (run->size > 0)
        bench_lqcd_sized_dims(run->size, 2, 2 * run->ndevices, sizes[0]), nsize = 1;
    else if (run->quick)
        set_dims(sizes[0], 8, 8);
    else
        set_dims(sizes[0], 32, 32), set_dims(sizes[1], 48, 96);
    for (int si = 0; si < nsize; si++) {
        const int *d = sizes[si];
        if (d[3] % (2 * run->ndevices)) continue;
        clphys_lqcd_gauge_field g = {{0}, 0, NULL};
        const size_t V = (size_t)d[0] * d[1] * d[2] * d[3];
        double *b = malloc(sizeof(double) * 24 * V);
        if (!b || clphys_lqcd_gauge_create(d, &g)) {
            bench_fail(run, "lqcd_solver_multi", "inputs", "out of memory");
            free(b);
            continue;
        }
        bench_lqcd_smooth_field(&g, 0.35, 777);
        bench_lqcd_fill_spinor(b, 24 * V, 4242);
        /* fp64 CGNR on the smaller lattice only (the mixed solves are the goal) */
        if (si == 0) solve_case(run, d, &g, b, CLPHYS_LQCD_SOLVER_CGNR, 0, 0);
        for (int half = 0; half < 2; half++) { /* the inner operator's faces in fp32, then in 16 bits */
            solve_case(run, d, &g, b, CLPHYS_LQCD_SOLVER_CGNR, 1, half);
            solve_case(run, d, &g, b, CLPHYS_LQCD_SOLVER_BICGSTAB, 1, half);
        }
        free(b);
        clphys_lqcd_gauge_destroy(&g);
    }
    return 0;
}
