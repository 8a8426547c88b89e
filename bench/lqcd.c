/* lqcd.c — benchmark paths "lqcd_dslash" (Wilson hopping term, sites/s) and
 * "lqcd_solver" (even-odd CGNR / BiCGStab, fp64 and mixed precision, solves/s).
 * Byte model (Matsufuru 2008, no credit for cache reuse): per site 8
 * neighbour spinors + 8 links + 1 output spinor, e.g. fp32 reconstruct-12
 * 8 x (96 + 48) + 96 = 1248 bytes; flops 1320 per site (hopping term). */
#include "lqcd_bench.h"
#include "host/ref/lqcd_ref.h"
#include "host/ref/ref_util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic random spinor in [-1, 1), filled in parallel. */
void bench_lqcd_fill_spinor(double *psi, size_t n, uint64_t seed)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) psi[i] = (double)(ref_hash64(seed, i) >> 11) * 0x1.0p-52 - 1;
}

/* The boundary of every plan here: p,p,p,a (a zeroed params struct's). */
static const double complex PPPA[4] = {1, 1, 1, -1};

/* Sampled check against the fp64 reference: max |a - r| / max(|r|, 1) over
 * the 12 components of up to nsample sites spread over the lattice. */
static double sampled_error(const clphys_lqcd_gauge_field *g, const double *in, const double *out, int nsample)
{
    double worst = 0;
    const size_t V = g->volume, step = V / (size_t)nsample > 0 ? V / (size_t)nsample : 1;
    for (size_t x = 0; x < V; x += step) {
        const size_t s = (x + ref_hash64(0, x) % step) % V;
        double complex r[12];
        lqcd_ref_hopping_site(g->dims, (const double complex *)g->u, (const double complex *)in, r, (long long)s, PPPA);
        for (int k = 0; k < 12; k++) {
            const double *a = out + (s * 12 + k) * 2;
            if (!isfinite(a[0]) || !isfinite(a[1])) return INFINITY;
            double d = cabs(a[0] + I * a[1] - r[k]) / fmax(cabs(r[k]), 1.0);
            if (d > worst) worst = d;
        }
    }
    return worst;
}

/* The work-group sizes of one dslash case, for bench_interleave. */
typedef struct {
    clphys_lqcd_dslash_plan *pl;
    cl_mem a, b;
    size_t wg[8];
    int n;
} dslash_rounds;

/* One round of size k: one hopping term; kernel seconds, < 0 when the size
 * cannot launch. */
static double dslash_round(int k, void *user)
{
    const dslash_rounds *u = user;
    double t = 0;
    if (clphys_lqcd_dslash_set_local_size(u->pl, u->wg[k]) ||
        clphys_lqcd_dslash_apply(u->pl, CLPHYS_LQCD_DSLASH_HOPPING, u->b, u->a, &t))
        return -1;
    return t;
}

static void set_dims(int d[4], int l, int lt) { d[0] = d[1] = d[2] = l, d[3] = lt; }

static int dslash_case(bench_run *run, const int dims[4])
{
    clphys_lqcd_gauge_field g;
    if (clphys_lqcd_gauge_create(dims, &g)) {
        bench_fail(run, "lqcd_dslash", "gauge field", clphys_last_error(NULL));
        return 0;
    }
    clphys_lqcd_gauge_hot(&g, 12345);
    const size_t V = g.volume;
    double *in = malloc(sizeof(double) * 24 * V), *out = malloc(sizeof(double) * 24 * V);
    if (!in || !out) {
        bench_fail(run, "lqcd_dslash", "host spinors", "out of memory");
        goto done;
    }
    bench_lqcd_fill_spinor(in, 24 * V, 99);
    char size[64];
    snprintf(size, sizeof size, "%dx%dx%dx%d", dims[0], dims[1], dims[2], dims[3]);
    if (run->quick) { /* the plain C reference row, fp64, one thread */
        double t0 = bench_now();
        lqcd_ref_hopping(dims, (const double complex *)g.u, (const double complex *)in, (double complex *)out, PPPA);
        double t = bench_now() - t0;
        bench_row r = {0};
        snprintf(r.path, sizeof r.path, "lqcd_dslash");
        snprintf(r.variant, sizeof r.variant, "c-reference");
        snprintf(r.precision, sizeof r.precision, "fp64");
        r.n = (long long)V;
        snprintf(r.params, sizeof r.params, "{\"lattice\":\"%s\",\"reconstruct\":18,\"threads\":1}", size);
        r.repeat = 1;
        r.kernel_s_median = r.kernel_s_min = r.total_s_median = t;
        r.rate = V / t;
        snprintf(r.rate_unit, sizeof r.rate_unit, "sites/s");
        r.gflops = 1320.0 * V / t * 1e-9;
        snprintf(r.flops_convention, sizeof r.flops_convention, "1320 per site (hopping term)");
        r.bytes_per_s = (8.0 * (192 + 144) + 192) * V / t;
        snprintf(r.byte_model, sizeof r.byte_model, "8 spinors + 8 links + 1 spinor per site, no cache reuse");
        bench_set_fraction(run, &r, "copy_bytes_per_s", r.bytes_per_s);
        r.verified = 1;
        snprintf(r.note, sizeof r.note, "host CPU, not the OpenCL device; fraction is of the device's copy bandwidth");
        bench_add_row(run, &r);
    }
    /* fixed sizes, then (last) the size the plan chose by measurement */
    static const size_t wg_gpu[] = {32, 64, 128, 256, 512, 0, 0};
    static const size_t wg_cpu[] = {0, 0};
    const size_t *wgs = run->dev->is_gpu ? wg_gpu : wg_cpu;
    int nwg = run->dev->is_gpu ? 7 : 2;
    /* GPUs: SoA only; CPUs: AoS (their default layout), and SoA with --full */
    for (int aos = run->dev->is_gpu || run->full ? 0 : 1; aos < (run->dev->is_gpu ? 1 : 2); aos++)
        for (int prec = 0; prec < 2; prec++) {
            const char *pname = prec ? "fp64" : "fp32";
            if (!bench_wants_precision(run, pname)) continue;
            for (int recon = 12; recon <= 18; recon += 6) {
                clphys_lqcd_dslash_params prm = {.precision = (clphys_precision)prec,
                                                 .reconstruct = recon,
                                                 .kappa = 0.125,
                                                 .layout = aos ? CLPHYS_LQCD_AOS : CLPHYS_LQCD_SOA};
                clphys_lqcd_dslash_plan *pl = NULL;
                cl_mem a = NULL, b = NULL;
                char what[128];
                snprintf(what, sizeof what, "%s %s recon-%d %s", aos ? "aos" : "soa", pname, recon, size);
                if (clphys_lqcd_dslash_plan_create(run->ctx, &g, &prm, &pl) ||
                    clphys_lqcd_dslash_field_create(pl, 0, &a) || clphys_lqcd_dslash_field_create(pl, 0, &b) ||
                    clphys_lqcd_dslash_field_write(pl, a, -1, in)) {
                    bench_fail(run, "lqcd_dslash", what, clphys_last_error(run->ctx));
                    goto next;
                }
                double best_rate = 0, total = 0, tt[3];
                size_t best_wg = 0;
                int tsrc;
                const size_t tuned_wg = clphys_lqcd_dslash_local_size(pl, &tsrc);
                static const char *const src_name[] = {"given", "heuristic", "measured", "cache"};
                /* the sizes, timed in interleaved rounds (bench_interleave): the
                 * tuned one is compared with the others under the same drift */
                dslash_rounds u = {pl, a, b, {0}, 0};
                for (int w = 0; w < nwg; w++) {
                    const size_t wg = w == nwg - 1 ? tuned_wg : wgs[w];
                    if (wg <= run->dev->max_work_group_size) u.wg[u.n++] = wg;
                }
                const int rounds = bench_rounds(run, run->repeat, 31);
                double s[8 * BENCH_MAX_ROUNDS];
                bench_interleave(u.n, rounds, dslash_round, &u, s);
                for (int w = 0; w < u.n; w++) {
                    const int is_tuned = w == u.n - 1;
                    const size_t wg = u.wg[w];
                    if (s[w * rounds] < 0) {
                        if (is_tuned)
                            bench_fail(run, "lqcd_dslash", what, clphys_last_error(run->ctx));
                        else /* e.g. fp64 at 512 on the H100: too many registers per group */
                            fprintf(stderr, "  dslash    %s: work-group size %zu cannot launch here, skipped: %s\n",
                                    what, wg, clphys_last_error(run->ctx));
                        continue;
                    }
                    int ok = clphys_lqcd_dslash_set_local_size(pl, wg) == CLPHYS_SUCCESS;
                    /* total: upload, apply, download (host layout conversion
                     * included), timed for the first work-group size that runs */
                    int nt = total == 0 ? (run->repeat < 3 ? run->repeat : 3) : 0;
                    for (int i = 0; i < nt && ok; i++) {
                        double t0 = bench_now();
                        ok = !clphys_lqcd_dslash_field_write(pl, a, -1, in) &&
                             !clphys_lqcd_dslash_apply(pl, CLPHYS_LQCD_DSLASH_HOPPING, b, a, NULL) &&
                             !clphys_lqcd_dslash_field_read(pl, b, -1, out);
                        tt[i] = bench_now() - t0;
                    }
                    if (nt)
                        total = ref_median(tt, nt);
                    else if (ok) /* this size's output, for the check */
                        ok = !clphys_lqcd_dslash_apply(pl, CLPHYS_LQCD_DSLASH_HOPPING, b, a, NULL) &&
                             !clphys_lqcd_dslash_field_read(pl, b, -1, out);
                    if (!ok) {
                        bench_fail(run, "lqcd_dslash", what, clphys_last_error(run->ctx));
                        continue;
                    }
                    bench_row r = {0};
                    snprintf(r.path, sizeof r.path, "lqcd_dslash");
                    if (is_tuned)
                        snprintf(r.variant, sizeof r.variant, "%s-recon%d-tuned", aos ? "aos" : "soa", recon);
                    else
                        snprintf(r.variant, sizeof r.variant, "%s-recon%d-wg%zu", aos ? "aos" : "soa", recon, wg);
                    snprintf(r.precision, sizeof r.precision, "%s", pname);
                    r.n = (long long)V;
                    /* auto picks the work-group size; layout and reconstruction are given */
                    snprintf(r.case_key, sizeof r.case_key, "%s-recon%d", aos ? "aos" : "soa", recon);
                    if (is_tuned)
                        snprintf(r.auto_choice, sizeof r.auto_choice, "local_size=%zu (%s)", wg,
                                 clphys_tune_source_name((clphys_tune_source)tsrc));
                    /* the least DRAM traffic (each link and spinor once: 4 links
                     * + 1 spinor in + 1 out per site), to show how much the
                     * standard model owes to cache reuse */
                    int nc = recon == 12 ? 6 : 9, rs = prec ? 8 : 4;
                    double ubytes = (4.0 * 2 * nc + 48) * rs;
                    bench_set_rounds(&r, s + w * rounds, rounds);
                    snprintf(r.params, sizeof r.params,
                             "{\"lattice\":\"%s\",\"reconstruct\":%d,\"local_size\":%zu,\"tuned_local_size\":%zu,"
                             "\"tune_source\":\"%s\",\"bytes_per_site\":%d,"
                             "\"unique_bytes_per_site\":%.0f,\"unique_fraction_of_copy\":%.4f,"
                             "\"timing\":\"interleaved rounds of the case's work-group sizes\"}",
                             size, recon, wg, tuned_wg, src_name[tsrc & 3], (8 * (24 + 2 * nc) + 24) * rs, ubytes,
                             run->limits.copy_bytes_per_s > 0
                                 ? ubytes * V / r.kernel_s_median / run->limits.copy_bytes_per_s
                                 : 0);
                    r.total_s_median = total;
                    r.rate = V / r.kernel_s_median;
                    snprintf(r.rate_unit, sizeof r.rate_unit, "sites/s");
                    r.gflops = 1320.0 * V / r.kernel_s_median * 1e-9;
                    snprintf(r.flops_convention, sizeof r.flops_convention, "1320 per site (hopping term)");
                    double bps = (8.0 * (24 + 2 * (recon == 12 ? 6 : 9)) + 24) * (prec ? 8 : 4);
                    r.bytes_per_s = bps * V / r.kernel_s_median;
                    snprintf(r.byte_model, sizeof r.byte_model,
                             "8 spinors + 8 links + 1 spinor per site, no cache reuse");
                    bench_set_fraction(run, &r, "copy_bytes_per_s", r.bytes_per_s);
                    r.max_rel_error = run->verify ? sampled_error(&g, in, out, 2048) : 0;
                    r.verified = r.max_rel_error < (prec ? 1e-12 : 2e-5);
                    snprintf(r.note, sizeof r.note,
                             "error on 2048 sampled sites; wg 0 = runtime's choice; -tuned = the size the plan chose "
                             "by timing (tune_source); the standard model counts L2 hits as DRAM traffic (fraction can "
                             "exceed 1)");
                    if (!is_tuned && r.rate > best_rate) best_rate = r.rate, best_wg = wg;
                    bench_add_row(run, &r);
                }
                fprintf(stderr,
                        "  dslash    %s: best fixed work-group size here %zu, tuned at plan creation %zu (%s)\n", what,
                        best_wg, tuned_wg, src_name[tsrc & 3]);
            next:
                if (a) clReleaseMemObject(a);
                if (b) clReleaseMemObject(b);
                clphys_lqcd_dslash_plan_destroy(pl);
            }
        }
done:
    free(in);
    free(out);
    clphys_lqcd_gauge_destroy(&g);
    return 0;
}

int bench_lqcd_dslash(bench_run *run)
{
    int d[4];
    if (run->size > 0) {
        bench_lqcd_sized_dims(run->size, 2, 2, d);
        return dslash_case(run, d);
    }
    if (run->quick) {
        set_dims(d, 8, 8);
        dslash_case(run, d);
        set_dims(d, 16, 16);
        return dslash_case(run, d);
    }
    set_dims(d, 32, 32);
    if (!run->full) return dslash_case(run, d); /* 48^3 x 96: 10x the sites, the full sweep */
    dslash_case(run, d);
    set_dims(d, 48, 96);
    return dslash_case(run, d);
}

/* l rounded up to a multiple of m, itself made even and at least 2 */
static int round_up(int l, int m)
{
    m = m < 2 ? 2 : m + m % 2;
    return l < m ? m : (l + m - 1) / m * m;
}

void bench_lqcd_sized_dims(long long sites, int xyz_mult, int t_mult, int d[4])
{
    const double r = floor(pow((double)sites, 0.25) + 0.5);
    const int l = r > 4096 ? 4096 : (int)r;
    d[0] = d[1] = d[2] = round_up(l, xyz_mult), d[3] = round_up(l, t_mult);
}

/* A smooth field: U = reunitarize(1 + eps R), R a random SU(3) matrix — closer to
 * a thermalized configuration than a hot start, so the solve takes a
 * realistic number of iterations at kappa near (not at) critical. */
void bench_lqcd_smooth_field(clphys_lqcd_gauge_field *g, double eps, uint64_t seed)
{
    clphys_lqcd_gauge_hot(g, seed);
    const size_t n = g->volume * 4;
    double *u = g->u;
    for (size_t l = 0; l < n; l++)
        for (int k = 0; k < 9; k++) {
            u[l * 18 + 2 * k] *= eps;
            u[l * 18 + 2 * k + 1] *= eps;
            if (k % 4 == 0) u[l * 18 + 2 * k] += 1;
        }
    clphys_lqcd_gauge_reunitarize(g);
}

static int solver_case(bench_run *run, const int dims[4])
{
    if (!bench_wants_precision(run, "fp64") || !run->dev->fp64) return 0;
    clphys_lqcd_gauge_field g;
    if (clphys_lqcd_gauge_create(dims, &g)) {
        bench_fail(run, "lqcd_solver", "gauge field", clphys_last_error(NULL));
        return 0;
    }
    bench_lqcd_smooth_field(&g, 0.35, 777);
    const double kappa = 0.122, tol = 1e-10;
    const size_t V = g.volume;
    double *b = malloc(sizeof(double) * 24 * V), *x = malloc(sizeof(double) * 24 * V);
    bench_lqcd_fill_spinor(b, 24 * V, 4242);
    char size[64];
    snprintf(size, sizeof size, "%dx%dx%dx%d", dims[0], dims[1], dims[2], dims[3]);
    double plaq = clphys_lqcd_gauge_plaquette(&g);
    /* SoA on every device, so that the rows of CPUs and GPUs compare */
    clphys_lqcd_dslash_params p64p = {.precision = CLPHYS_FP64,
                                      .reconstruct = 12,
                                      .kappa = kappa,
                                      .layout = CLPHYS_LQCD_SOA},
                              p32p = p64p;
    p32p.precision = CLPHYS_FP32;
    clphys_lqcd_dslash_plan *p64 = NULL, *p32 = NULL;
    if (clphys_lqcd_dslash_plan_create(run->ctx, &g, &p64p, &p64) ||
        clphys_lqcd_dslash_plan_create(run->ctx, &g, &p32p, &p32)) {
        bench_fail(run, "lqcd_solver", size, clphys_last_error(run->ctx));
        goto done;
    }
    int src64, src32;
    size_t wg64 = clphys_lqcd_dslash_local_size(p64, &src64), wg32 = clphys_lqcd_dslash_local_size(p32, &src32);
    /* clBLAST, then the fused kernels of cl/linalg_blas1.cl.  The fp64 and the mixed
     * solver of a pair alternate, solve by solve, so that the host's noise
     * (the 2 x 201 MB of b and x at 32^4 move through host memory) falls on
     * both alike; the speed-ups are medians of the per-pair ratios. */
    enum { MAXREP = 9 };
    /* the default run: CGNR with the fused kernels; BiCGStab and clBLAST with --full */
    for (int kind = 0; kind < (run->full ? 2 : 1); kind++)
        for (int fused = run->full ? 0 : 1; fused < 2; fused++) {
            const char *name = kind ? "bicgstab" : "cgnr";
            int rep = run->repeat < 1 ? 1 : run->repeat < MAXREP ? run->repeat : MAXREP;
            if (!run->full && !run->repeat_given && rep > 3) rep = 3; /* hundreds of iterations a solve: small spread */
            double times[2][MAXREP], totals[2][MAXREP], ups[2][MAXREP], downs[2][MAXREP];
            double rt[MAXREP], rtot[MAXREP];
            clphys_lqcd_solver_result res[2] = {{0}};
            clphys_lqcd_solver_plan *sp[2] = {NULL, NULL}; /* made once, outside the timing */
            clphys_status st = CLPHYS_SUCCESS;
            clphys_lqcd_solver_params prm[2];
            for (int mixed = 0; mixed < 2; mixed++)
                prm[mixed] = (clphys_lqcd_solver_params){
                    .kind = kind ? CLPHYS_LQCD_SOLVER_BICGSTAB : CLPHYS_LQCD_SOLVER_CGNR,
                    .tol = tol,
                    .max_iter = 20000,
                    .mixed = mixed,
                    .blas = fused ? CLPHYS_LQCD_SOLVER_BLAS_FUSED : CLPHYS_LQCD_SOLVER_BLAS_CLBLAST};
            for (int mixed = 0; mixed < 2 && !st; mixed++) {
                st = clphys_lqcd_solver_plan_create(p64, p32, &prm[mixed], &sp[mixed]);
                if (!st)
                    st = clphys_lqcd_solver_solve(sp[mixed], b, x,
                                                  &res[mixed]); /* warm-up: clBLAST compiles, first touch */
            }
            for (int i = 0; i < rep && !st; i++) {
                for (int mixed = 0; mixed < 2 && !st; mixed++) {
                    st = clphys_lqcd_solver_solve(sp[mixed], b, x, &res[mixed]);
                    times[mixed][i] = res[mixed].iterate_s;
                    totals[mixed][i] = res[mixed].seconds;
                    ups[mixed][i] = res[mixed].upload_s;
                    downs[mixed][i] = res[mixed].download_s;
                }
                if (!st) rt[i] = times[0][i] / times[1][i], rtot[i] = totals[0][i] / totals[1][i];
            }
            for (int mixed = 0; mixed < 2; mixed++) {
                clphys_lqcd_solver_plan_destroy(sp[mixed]);
                sp[mixed] = NULL;
            }
            const double sp_dev = st ? 0 : ref_median(rt, rep), sp_tot = st ? 0 : ref_median(rtot, rep);
            for (int mixed = 0; mixed < 2; mixed++) {
                /* once more in the one-shot form: workspace allocated and freed in the call;
                 * its x is the one verified below */
                double one_shot = 0;
                clphys_lqcd_solver_result r1 = {0};
                if (!st) {
                    st = clphys_lqcd_solve(p64, p32, &prm[mixed], b, x, &r1);
                    one_shot = r1.seconds;
                }
                if (st) {
                    bench_fail(run, "lqcd_solver", name, clphys_last_error(run->ctx));
                    break;
                }
                bench_row r = {0};
                snprintf(r.path, sizeof r.path, "lqcd_solver");
                snprintf(r.variant, sizeof r.variant, "eo-%s%s%s", name, mixed ? "-mixed" : "",
                         fused ? "-fused" : "-clblast");
                snprintf(r.precision, sizeof r.precision, "%s", mixed ? "mixed" : "fp64");
                r.n = (long long)V;
                r.repeat = rep;
                r.kernel_s_median = ref_median(times[mixed], rep);
                r.kernel_s_min = ref_min(times[mixed], rep);
                r.total_s_median = ref_median(totals[mixed], rep);
                snprintf(r.params, sizeof r.params,
                         "{\"lattice\":\"%s\",\"kappa\":%g,\"tol\":%g,\"iterations\":%d,\"restarts\":%d,"
                         "\"plaquette\":%.6f,\"inner\":\"%s\",\"blas\":\"%s\",\"upload_s_median\":%.6f,"
                         "\"download_s_median\":%.6f,\"local_size_fp64\":%zu,\"local_size_fp32\":%zu,"
                         "\"speedup_time_to_solution\":%.3f,\"speedup_fields_on_device\":%.3f,\"one_shot_s\":%.4f}",
                         size, kappa, tol, r1.iterations, r1.restarts, plaq,
                         mixed ? "fp32 recon-12 (outer fp64 recon-12)" : "fp64 recon-12",
                         fused ? "fused (cl/linalg_blas1.cl)" : "clBLAST", ref_median(ups[mixed], rep),
                         ref_median(downs[mixed], rep), wg64, wg32, mixed ? sp_tot : 1.0, mixed ? sp_dev : 1.0,
                         one_shot);
                r.rate = 1.0 / r.kernel_s_median;
                snprintf(r.rate_unit, sizeof r.rate_unit, "solves/s");
                r.gflops = r1.gflops * r1.seconds / r1.iterate_s; /* over the solve proper */
                snprintf(r.flops_convention, sizeof r.flops_convention, "1368 per site per D-equivalent application");
                bench_set_fraction(run, &r, mixed ? "fma_fp32_flops" : "fma_fp64_flops", r.gflops * 1e9);
                r.max_rel_error = r1.rel_residual;
                r.verified = r1.rel_residual <= tol;
                if (run->verify && run->quick) { /* independent check with the CPU reference */
                    double complex *dx = malloc(sizeof(double complex) * 12 * V);
                    lqcd_ref_wilson(dims, (const double complex *)g.u, (const double complex *)x, dx, kappa, PPPA);
                    double rr = 0, bb = 0;
                    for (size_t k = 0; k < 12 * V; k++) {
                        double complex bk = b[2 * k] + I * b[2 * k + 1];
                        rr += pow(cabs(bk - dx[k]), 2), bb += pow(cabs(bk), 2);
                    }
                    free(dx);
                    r.max_rel_error = sqrt(rr / bb);
                    r.verified = r.max_rel_error <= 1.05 * tol;
                }
                /* what the two times hold (details: include/clphys_lqcd.h) */
                static const char what_t[] =
                    "kernel_s: solve on device fields; total_s: time to solution, host b to host x, "
                    "plan made before; fp64 and mixed solves alternate";
                if (mixed)
                    snprintf(r.note, sizeof r.note,
                             "%s; max_rel_error = true |b-Dx|/|b|; mixed speed-up, median of per-pair ratios: %.2fx "
                             "on device fields, %.2fx host to host",
                             what_t, sp_dev, sp_tot);
                else
                    snprintf(r.note, sizeof r.note, "%s; max_rel_error = true |b-Dx|/|b|", what_t);
                bench_add_row(run, &r);
            }
        }
done:
    clphys_lqcd_dslash_plan_destroy(p64);
    clphys_lqcd_dslash_plan_destroy(p32);
    free(b), free(x);
    clphys_lqcd_gauge_destroy(&g);
    return 0;
}

int bench_lqcd_solver(bench_run *run)
{
    int d[4];
    if (run->size > 0) {
        bench_lqcd_sized_dims(run->size, 2, 2, d);
    } else {
        set_dims(d, run->quick ? 8 : 32, run->quick ? 8 : 32);
    }
    return solver_case(run, d);
}
