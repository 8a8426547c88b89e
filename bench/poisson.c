/* poisson.c — benchmark path "poisson" (include/clphys_poisson.h): the
 * 7-point stencil, one V-cycle, and time to solution, every row verified
 * against the fp64 CPU reference (host/ref/poisson_ref.c); on CPUs also
 * hypre's PFMG-CG on the same matrix (bench/poisson_hypre.c, over MPI on the
 * same cores) when it was built, its numbers in the params of the mixed
 * solve rows (hypre_pfmg_cg: iterations, true residual, setup and solve
 * times; clphys_over_hypre_time: clphys host to host over hypre's setup +
 * solve; plan_s is clphys's own setup, the plan's creation), or why not.
 *
 * Problems: an ocean basin 1000 km x 1000 km x 4000 m, nz layers stretched
 * so that the bottom one is 22 times the top one (10 m to 220 m at nz = 64),
 * either a flat box or the random basin of clphys_poisson_basin (seed 7),
 * pure Neumann (singular: the right-hand side projected), a white-noise
 * right-hand side (every scale of the error excited), tol 1e-8 on the true
 * residual.  Sizes: 256x256x32 and 512x512x64 (full), 64x64x16 and
 * 128x128x32 (quick); without --full only the first of each; or --size
 * cells as NxNx32.
 *
 * Byte models (compulsory bytes: each array touched once per kernel,
 * neighbours from caches):
 *  - stencil: 4 coefficient arrays and x read, y written: 6 reals per cell;
 *  - V-cycle: clphys_poisson_info.vcycle_bytes (the arrays of each kernel of
 *    the cycle over all levels);
 *  - a CG iteration: the stencil in fp64, the V-cycle, and the fused
 *    level-1 work of host/linalg (dot p.q, x and r updated with |r|^2, dot
 *    r.z, p = z + beta p: 13 vector passes), 19 fp64 reals per cell + the
 *    V-cycle, + 12 K + 20 bytes per cell for the projection of z over K
 *    singular regions; the floor of a solve is iterations x that / copy
 *    bandwidth.
 * Flops: 13 per cell per stencil (flux form: 6 differences, 7 products). */
#include "bench.h"
#include "host/poisson/poisson_peer.h"
#include "host/ref/poisson_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOL    1e-8
#define MAXREP 9

typedef struct {
    int nx, ny, nz;
} grid;

typedef struct {
    clphys_poisson_geometry g;
    double *dx, *dy, *dz, *depth;
} geom;

static void geom_free(geom *G) { free(G->dx), free(G->dy), free(G->dz), free(G->depth); }

static int geom_make(grid s, int basin, geom *G)
{
    memset(G, 0, sizeof *G);
    G->dx = malloc(sizeof(double) * s.nx), G->dy = malloc(sizeof(double) * s.ny), G->dz = malloc(sizeof(double) * s.nz);
    G->depth = malloc(sizeof(double) * (size_t)s.nx * s.ny);
    if (!G->dx || !G->dy || !G->dz || !G->depth) return -1;
    for (int i = 0; i < s.nx; i++) G->dx[i] = 1e6 / s.nx;
    for (int j = 0; j < s.ny; j++) G->dy[j] = 1e6 / s.ny;
    if (clphys_poisson_levels(s.nz, 4000, pow(22.0, 1.0 / (s.nz > 1 ? s.nz - 1 : 1)), G->dz)) return -1;
    if (basin ? clphys_poisson_basin(s.nx, s.ny, 7, 4000, 0, G->depth) : clphys_poisson_box(s.nx, s.ny, 4000, G->depth))
        return -1;
    G->g = (clphys_poisson_geometry){
        .nx = s.nx, .ny = s.ny, .nz = s.nz, .dx = G->dx, .dy = G->dy, .dz = G->dz, .depth = G->depth};
    return 0;
}

/* white noise in [-1, 1), the same for every run */
static double *noise(size_t n, uint64_t seed)
{
    double *v = malloc(n * sizeof(double));
    if (!v) return NULL;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) v[i] = (double)(ref_hash64(seed, i) >> 11) * 0x1.0p-52 - 1;
    return v;
}

static void grid_name(grid s, char *buf, size_t n) { snprintf(buf, n, "%dx%dx%d", s.nx, s.ny, s.nz); }

/* the fixed parts of a row */
static void row_init(bench_row *r, const char *variant, const char *prec, size_t n, int repeat)
{
    memset(r, 0, sizeof *r);
    snprintf(r->path, sizeof r->path, "poisson");
    snprintf(r->variant, sizeof r->variant, "%s", variant);
    snprintf(r->precision, sizeof r->precision, "%s", prec);
    r->n = (long long)n;
    r->repeat = repeat;
    snprintf(r->rate_unit, sizeof r->rate_unit, "unknowns/s");
}

/* ---- the stencil ------------------------------------------------------------------- */

/* max over wet rows of |y - y_ref| / sum_d |a_d x_nb|; land rows must give y = x */
static double stencil_error(grid s, const double *a, const double *x, const double *y, const double *yr)
{
    const size_t n = (size_t)s.nx * s.ny * s.nz;
    double worst = 0;
#pragma omp parallel for schedule(static) reduction(max : worst)
    for (size_t c = 0; c < n; c++) {
        double e;
        if (!isfinite(y[c]))
            e = INFINITY;
        else if (a[3 * n + c] == 0)
            e = y[c] == x[c] || y[c] == (float)x[c] ? 0 : INFINITY;
        else {
            double scale = 1e-300;
            for (int d = -3; d <= 3; d++)
                scale += fabs(a[(size_t)(d + 3) * n + c] * x[poisson_ref_neighbor(s.nx, s.ny, s.nz, c, d)]);
            e = fabs(y[c] - yr[c]) / scale;
        }
        worst = e > worst ? e : worst;
    }
    return worst;
}

static const int gpu_shapes[][2] = {{32, 1}, {32, 2}, {32, 4},  {32, 8},  {64, 1},
                                    {64, 2}, {64, 4}, {128, 1}, {128, 2}, {256, 1}};

/* the stencil's median kernel time for each precision with the plan's own
 * (tuned) variant, for the V-cycle rows' time ratio */
static double tuned_stencil_s[2];

static void stencil_rows(bench_run *run, grid s, clphys_poisson_plan *pl, const double *a)
{
    const size_t n = (size_t)s.nx * s.ny * s.nz;
    char gname[64];
    grid_name(s, gname, sizeof gname);
    double *x = noise(n, 11), *y = malloc(n * sizeof(double)), *yr = malloc(n * sizeof(double));
    double *ks = malloc(sizeof(double) * (size_t)run->repeat);
    if (!x || !y || !yr || !ks) {
        bench_fail(run, "poisson", "stencil", "out of memory");
        goto done;
    }
    poisson_ref_apply(s.nx, s.ny, s.nz, a, x, yr);
    clphys_poisson_info info;
    clphys_poisson_plan_info(pl, &info);
    const int tv = info.variant, tl[2] = {info.local_size[0], info.local_size[1]}, tsrc = info.tune_source;
    static const char *const vname[] = {"auto", "column", "cell", "column-vec"}, *const src[] = {"given", "heuristic",
                                                                                                 "measured", "cache"};
    /* GPUs: each variant in every shape with --full; by default at the runtime's shape */
    const int nshape = run->dev->is_gpu && run->full ? (int)(sizeof gpu_shapes / sizeof gpu_shapes[0]) : 0;
    for (int prec = 0; prec < 2; prec++) {
        const char *pname = prec ? "fp64" : "fp32";
        if (!bench_wants_precision(run, pname)) continue;
        cl_mem fx = NULL, fy = NULL;
        if (clphys_poisson_field_create(pl, (clphys_precision)prec, &fx) ||
            clphys_poisson_field_create(pl, (clphys_precision)prec, &fy) ||
            clphys_poisson_field_write(pl, (clphys_precision)prec, fx, x)) {
            bench_fail(run, "poisson", "stencil fields", clphys_last_error(run->ctx));
            goto next;
        }
        /* configurations: the tuned one first, then every variant x shape */
        for (int cfg = -1; cfg < 3 * (nshape ? nshape : 1); cfg++) {
            const int v = cfg < 0 ? tv : 1 + cfg / (nshape ? nshape : 1);
            const int *shape = cfg < 0 ? tl : nshape ? gpu_shapes[cfg % nshape] : NULL;
            if (clphys_poisson_set_stencil(pl, (clphys_poisson_stencil)v, shape)) continue;
            double warm = 0;
            int ok = clphys_poisson_apply(pl, (clphys_precision)prec, fy, fx, &warm) == CLPHYS_SUCCESS;
            for (int i = 0; i < run->repeat && ok; i++)
                ok = clphys_poisson_apply(pl, (clphys_precision)prec, fy, fx, &ks[i]) == CLPHYS_SUCCESS;
            double t0 = bench_now(), total = 0;
            if (ok) { /* with transfers: x in, y out */
                ok = !clphys_poisson_field_write(pl, (clphys_precision)prec, fx, x) &&
                     !clphys_poisson_apply(pl, (clphys_precision)prec, fy, fx, NULL) &&
                     !clphys_poisson_field_read(pl, (clphys_precision)prec, fy, y);
                total = bench_now() - t0;
            }
            if (!ok) {
                fprintf(stderr, "  poisson   stencil %s %s %dx%d %s: skipped: %s\n", vname[v], pname,
                        shape ? shape[0] : 0, shape ? shape[1] : 0, gname, clphys_last_error(run->ctx));
                continue;
            }
            bench_row r;
            char variant[48];
            if (cfg < 0)
                snprintf(variant, sizeof variant, "stencil-%s-tuned", vname[v]);
            else if (shape)
                snprintf(variant, sizeof variant, "stencil-%s-%dx%d", vname[v], shape[0], shape[1]);
            else
                snprintf(variant, sizeof variant, "stencil-%s", vname[v]);
            row_init(&r, variant, pname, n, run->repeat);
            r.kernel_s_median = ref_median(ks, run->repeat);
            r.kernel_s_min = ref_min(ks, run->repeat);
            r.total_s_median = total;
            r.rate = (double)n / r.kernel_s_median;
            r.gflops = 13.0 * r.rate * 1e-9;
            snprintf(r.flops_convention, sizeof r.flops_convention, "13 per cell (flux form)");
            const double rs = prec ? 8 : 4;
            r.bytes_per_s = 6 * rs * r.rate;
            snprintf(r.byte_model, sizeof r.byte_model, "6 reals per cell: 4 coefficient arrays + x read, y written");
            bench_set_fraction(run, &r, "copy_bytes_per_s", r.bytes_per_s);
            r.max_rel_error = run->verify ? stencil_error(s, a, x, y, yr) : 0;
            r.verified = r.max_rel_error <= (prec ? 1e-13 : 1e-5);
            snprintf(r.params, sizeof r.params,
                     "{\"grid\":\"%s\",\"variant\":\"%s\",\"local_size\":\"%dx%d\",\"tuned\":\"%s %dx%d (%s)\","
                     "\"bytes_per_cell\":%.0f,\"wet_fraction\":%.4f}",
                     gname, vname[v], shape ? shape[0] : 0, shape ? shape[1] : 0, vname[tv], tl[0], tl[1],
                     src[tsrc & 3], 6 * rs, (double)info.wet / (double)n);
            snprintf(r.note, sizeof r.note,
                     "error: max over rows of |y - y_ref| / sum |a x| (fp64 CPU reference); total_s: x written, "
                     "applied, y read");
            if (cfg < 0) tuned_stencil_s[prec] = r.kernel_s_median;
            bench_add_row(run, &r);
        }
        clphys_poisson_set_stencil(pl, (clphys_poisson_stencil)tv, tl);
    next:
        if (fx) clReleaseMemObject(fx);
        if (fy) clReleaseMemObject(fy);
    }
done:
    free(x), free(y), free(yr), free(ks);
}

/* ---- the V-cycle ------------------------------------------------------------------- */

/* work-group shapes timed on GPUs: column (lx, ly) along i and j; staged
 * (columns per tile, work-items per column), its default first */
static const int gpu_vshapes[][2] = {{32, 2}, {32, 1}, {32, 4}, {64, 1}, {64, 2}, {128, 1}}; /* 32x2: the default */
static const int staged_vshapes[][2] = {{0, 0}, {16, 16}, {64, 4}};
static const char *const line_names[] = {"auto", "column", "column-vec", "staged"};

/* V-cycle rows of one line variant (AUTO: the CPU's default, column-vec);
 * staged: its default shape, and on the last size (all_shapes) two more */
static void vcycle_rows(bench_run *run, grid s, const geom *G, int smooth, clphys_poisson_line line, int all_shapes)
{
    const size_t n = (size_t)s.nx * s.ny * s.nz;
    char gname[64];
    grid_name(s, gname, sizeof gname);
    double *r = noise(n, 13), *z = malloc(n * sizeof(double)), *zr = malloc(n * sizeof(double));
    double *a = malloc(7 * n * sizeof(double)), *ks = malloc(sizeof(double) * (size_t)run->repeat);
    poisson_ref_mg *mg = NULL;
    if (!r || !z || !zr || !a || !ks) {
        bench_fail(run, "poisson", "vcycle", "out of memory");
        goto done;
    }
    for (int prec = 0; prec < 2; prec++) {
        const char *pname = prec ? "fp64" : "fp32";
        if (!bench_wants_precision(run, pname)) continue;
        const clphys_poisson_params p = {
            .precision = prec ? CLPHYS_POISSON_FP64 : CLPHYS_POISSON_MIXED, .smooth = smooth, .line = line};
        clphys_poisson_plan *pl = NULL;
        cl_mem fr = NULL, fz = NULL;
        if (clphys_poisson_plan_create(run->ctx, &G->g, &p, &pl) || clphys_poisson_field_create(pl, CLPHYS_FP64, &fr) ||
            clphys_poisson_field_create(pl, CLPHYS_FP64, &fz) || clphys_poisson_field_write(pl, CLPHYS_FP64, fr, r)) {
            bench_fail(run, "poisson", "vcycle plan", clphys_last_error(run->ctx));
            goto next;
        }
        clphys_poisson_info info;
        clphys_poisson_plan_info(pl, &info);
        if (!mg && run->verify) { /* the same hierarchy for both precisions */
            clphys_poisson_plan_operator(pl, a, NULL, NULL);
            mg = poisson_ref_mg_create(s.nx, s.ny, s.nz, a, 0.5);
            if (mg) poisson_ref_vcycle(mg, smooth, 0.8, r, zr);
        }
        const int staged = info.line == CLPHYS_POISSON_LINE_STAGED;
        const int nshape = !run->dev->is_gpu ? 1
                           : staged    ? (all_shapes ? (int)(sizeof staged_vshapes / sizeof staged_vshapes[0]) : 1)
                           : run->full ? (int)(sizeof gpu_vshapes / sizeof gpu_vshapes[0])
                                       : 1;
        for (int sh = 0; sh < nshape; sh++) {
            const int *shape = !run->dev->is_gpu ? NULL : staged ? staged_vshapes[sh] : gpu_vshapes[sh];
            if (clphys_poisson_set_vcycle_shape(pl, shape)) continue;
            clphys_poisson_plan_info(pl, &info); /* the shape the default resolved to */
            double warm = 0;
            int ok = !clphys_poisson_vcycle(pl, fz, fr, &warm);
            for (int i = 0; i < run->repeat && ok; i++) ok = !clphys_poisson_vcycle(pl, fz, fr, &ks[i]);
            if (ok) ok = !clphys_poisson_field_read(pl, CLPHYS_FP64, fz, z);
            if (!ok) {
                fprintf(stderr, "  poisson   vcycle %s %s: skipped: %s\n", pname, gname, clphys_last_error(run->ctx));
                continue;
            }
            double dmax = 0, zmax = 0;
            for (size_t c = 0; c < n && mg; c++) {
                if (!isfinite(z[c])) dmax = INFINITY;
                dmax = fmax(dmax, fabs(z[c] - zr[c])), zmax = fmax(zmax, fabs(zr[c]));
            }
            bench_row row;
            char variant[48];
            if (shape)
                snprintf(variant, sizeof variant, "vcycle-%s-smooth%d-%dx%d", line_names[info.line], smooth,
                         info.vcycle_local_size[0], info.vcycle_local_size[1]);
            else
                snprintf(variant, sizeof variant, "vcycle-%s-smooth%d", line_names[info.line], smooth);
            row_init(&row, variant, pname, n, run->repeat);
            row.kernel_s_median = ref_median(ks, run->repeat);
            row.kernel_s_min = ref_min(ks, run->repeat);
            row.total_s_median = row.kernel_s_median;
            row.rate = (double)n / row.kernel_s_median;
            row.bytes_per_s = info.vcycle_bytes / row.kernel_s_median;
            snprintf(row.byte_model, sizeof row.byte_model, "each array of each V-cycle kernel once (vcycle_bytes)");
            bench_set_fraction(run, &row, "copy_bytes_per_s", row.bytes_per_s);
            row.max_rel_error = run->verify ? (mg ? dmax / zmax : INFINITY) : 0;
            /* fp64: the library and the reference run the line solves' recurrence
             * in two equivalent orders, and columns whose vertical couplings are
             * ~1e6 times the horizontal ones amplify that rounding, the same on
             * every device (bench/poisson-notes.md), so 1e-9 */
            row.verified = row.max_rel_error <= (prec ? 1e-9 : 1e-4);
            const double sbytes = prec ? info.stencil_bytes_fp64 : info.stencil_bytes_fp32;
            snprintf(row.params, sizeof row.params,
                     "{\"grid\":\"%s\",\"line\":\"%s\",\"levels\":%d,\"smooth\":%d,\"omega\":0.8,\"coarse_scale\":0.5,"
                     "\"local_size\":\"%dx%d\",\"vcycle_bytes\":%.6g,\"stencil_equivalents\":%.3f,"
                     "\"time_over_stencil\":%.3f,\"io\":\"fp64 r in, fp64 z out\"}",
                     gname, line_names[info.line], info.levels, smooth, shape ? info.vcycle_local_size[0] : 0,
                     shape ? info.vcycle_local_size[1] : 0, info.vcycle_bytes, info.vcycle_bytes / sbytes,
                     tuned_stencil_s[prec] > 0 ? row.kernel_s_median / tuned_stencil_s[prec] : 0);
            snprintf(row.note, sizeof row.note,
                     "kernel_s: first kernel START to last END of one V-cycle; error: max |z - z_ref| / max |z_ref| "
                     "(fp64 CPU V-cycle); stencil_equivalents: V-cycle bytes over one stencil's of the same "
                     "precision (goal <= 10)");
            bench_add_row(run, &row);
        }
    next:
        if (fr) clReleaseMemObject(fr);
        if (fz) clReleaseMemObject(fz);
        clphys_poisson_plan_destroy(pl);
    }
done:
    poisson_ref_mg_destroy(mg);
    free(r), free(z), free(zr), free(a), free(ks);
}

/* ---- time to solution, and the hypre peer ------------------------------------------- */

typedef struct {
    double s_med, total_med, plan_s;
    int iterations, restarts;
    double residual, ref_residual;
    double vcycle_s, stencil_s, other_s;
    double vcycle_bytes;
    int levels;
    int ok;
} solve_stats;

static int cmp_runs(int rep) { return rep < 1 ? 1 : rep < MAXREP ? rep : MAXREP; }

/* median times of solves on device fields and host to host, the last
 * result, and the true residual by the reference */
static solve_stats solve_case(bench_run *run, const geom *G, clphys_poisson_precision prec, int smooth, const double *f,
                              const double *b, const double *a)
{
    solve_stats st = {0};
    const size_t n = (size_t)G->g.nx * G->g.ny * G->g.nz;
    const clphys_poisson_params p = {.precision = prec, .tol = TOL, .smooth = smooth};
    const int rep = cmp_runs(run->repeat);
    double dev[MAXREP], tot[MAXREP];
    clphys_poisson_plan *pl = NULL;
    cl_mem fm = NULL, xm = NULL;
    double *x = malloc(n * sizeof(double));
    clphys_poisson_result res = {0};
    const double t0 = bench_now();
    int ok = x && !clphys_poisson_plan_create(run->ctx, &G->g, &p, &pl);
    st.plan_s = bench_now() - t0;
    ok = ok && !clphys_poisson_field_create(pl, CLPHYS_FP64, &fm) &&
         !clphys_poisson_field_create(pl, CLPHYS_FP64, &xm) && !clphys_poisson_field_write(pl, CLPHYS_FP64, fm, f) &&
         !clphys_poisson_solve_mem(pl, fm, xm, &res);
    for (int i = 0; i < rep && ok; i++) {
        ok = !clphys_poisson_solve_mem(pl, fm, xm, &res);
        dev[i] = res.seconds;
        if (ok) ok = !clphys_poisson_solve(pl, f, x, &res);
        tot[i] = res.seconds;
    }
    if (ok) {
        clphys_poisson_info info;
        clphys_poisson_plan_info(pl, &info);
        st.s_med = ref_median(dev, rep), st.total_med = ref_median(tot, rep);
        st.iterations = res.iterations, st.restarts = res.restarts, st.residual = res.rel_residual;
        st.vcycle_s = res.vcycle_s, st.stencil_s = res.stencil_s, st.other_s = res.other_s;
        st.vcycle_bytes = info.vcycle_bytes, st.levels = info.levels;
        st.ref_residual = run->verify ? poisson_ref_residual(G->g.nx, G->g.ny, G->g.nz, a, b, x) : 0;
        st.ok = 1;
    } else {
        bench_fail(run, "poisson", "solve", clphys_last_error(run->ctx));
    }
    if (fm) clReleaseMemObject(fm);
    if (xm) clReleaseMemObject(xm);
    clphys_poisson_plan_destroy(pl);
    free(x);
    return st;
}

/* hypre's PFMG-CG on (a, b): a JSON fragment into out (its object, or why
 * not); *total_s (setup + solve), *iters and *true_res set when it ran */
static void hypre_peer(grid s, const double *a, const double *b, char *out, size_t outn, double *total_s, int *iters,
                       double *true_res)
{
    *total_s = 0, *iters = 0, *true_res = INFINITY;
#ifndef POISSON_HYPRE_PEER
    (void)s, (void)a, (void)b;
    snprintf(out, outn, "\"hypre\":\"not built: %s\"", POISSON_HYPRE_WHY);
#else
    const size_t n = (size_t)s.nx * s.ny * s.nz;
    char file[] = "/tmp/clphys_poisson_hypre_XXXXXX", cmd[1024], line[1024] = "";
    const int fd = mkstemp(file);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    const int32_t h[4] = {s.nx, s.ny, s.nz, 3};
    const double tol = TOL;
    int ok = f && fwrite("CPPOIS1", 1, 8, f) == 8 && fwrite(h, sizeof h, 1, f) == 1 && fwrite(&tol, 8, 1, f) == 1 &&
             fwrite(a, 8, 7 * n, f) == 7 * n && fwrite(b, 8, n, f) == n;
    if (f) ok = fclose(f) == 0 && ok;
    snprintf(out, outn, "\"hypre\":\"%s failed\"", POISSON_HYPRE_PEER);
    if (ok) {
        snprintf(cmd, sizeof cmd, "'%s' %s -np 2 '%s' '%s' 1 2>/dev/null", POISSON_MPIEXEC,
                 geteuid() == 0 ? "--allow-run-as-root" : "", POISSON_HYPRE_PEER, file);
        FILE *p = popen(cmd, "r");
        if (p && fgets(line, sizeof line, p) && line[0] == '{') {
            line[strcspn(line, "\n")] = 0;
            const char *it = strstr(line, "\"iterations\":"), *tr = strstr(line, "\"true_rel_residual\":");
            const char *su = strstr(line, "\"setup_s_median\":"), *so = strstr(line, "\"solve_s_median\":");
            double setup = 0, solve = 0;
            if (it && tr && su && so && sscanf(it + 13, "%d", iters) == 1 && sscanf(tr + 20, "%lf", true_res) == 1 &&
                sscanf(su + 17, "%lf", &setup) == 1 && sscanf(so + 17, "%lf", &solve) == 1) {
                *total_s = setup + solve;
                snprintf(out, outn, "\"hypre_pfmg_cg\":%.900s", line);
            }
        }
        if (p) pclose(p);
    }
    remove(file);
#endif
}

static void solve_rows(bench_run *run, grid s, int basin, int smooth, int with_fp32)
{
    if (!bench_wants_precision(run, "fp64")) return;
    const size_t n = (size_t)s.nx * s.ny * s.nz;
    char gname[64];
    grid_name(s, gname, sizeof gname);
    geom G;
    double *f = noise(n, 17), *a = malloc(7 * n * sizeof(double)), *w = malloc(n * sizeof(double));
    double *b = malloc(n * sizeof(double));
    unsigned char *mask = malloc(n);
    int *label = malloc(n * sizeof(int));
    clphys_poisson_plan *pl = NULL;
    const clphys_poisson_params p0 = {.no_tune = 1};
    if (!f || !a || !w || !b || !mask || !label || geom_make(s, basin, &G) ||
        clphys_poisson_plan_create(run->ctx, &G.g, &p0, &pl) || clphys_poisson_plan_operator(pl, a, mask, w)) {
        bench_fail(run, "poisson", "solve setup", clphys_last_error(run->ctx));
        goto done;
    }
    clphys_poisson_plan_destroy(pl);
    pl = NULL;
    const int regions = poisson_ref_projected_rhs(s.nx, s.ny, s.nz, a, w, mask, f, -1.0, b, label);
    static const char *const names[3] = {"mixed", "fp64", "fp32"};
    static const clphys_poisson_precision precs[3] = {CLPHYS_POISSON_MIXED, CLPHYS_POISSON_FP64, CLPHYS_POISSON_FP32};
    solve_stats st[3] = {{0}};
    for (int k = 0; k < (with_fp32 ? 3 : 2); k++) st[k] = solve_case(run, &G, precs[k], smooth, f, b, a);
    char peer[1024] = "";
    double hypre_s = 0, hypre_res = INFINITY;
    int hypre_it = 0;
    if (!run->dev->is_gpu && smooth == 2) hypre_peer(s, a, b, peer, sizeof peer, &hypre_s, &hypre_it, &hypre_res);
    const int hypre_ok = hypre_res <= 1.05 * TOL; /* as clphys's own rows are verified */
    size_t wet = 0;
    for (size_t c = 0; c < n; c++) wet += mask[c];
    for (int k = 0; k < (with_fp32 ? 3 : 2); k++) {
        if (!st[k].ok) continue;
        bench_row r;
        char variant[48];
        snprintf(variant, sizeof variant, "solve-%s-%s%s", basin ? "basin" : "box", names[k],
                 smooth == 2 ? "" : "-smooth1");
        row_init(&r, variant, k == 0 ? "mixed" : names[k], n, cmp_runs(run->repeat));
        r.kernel_s_median = st[k].s_med;
        r.kernel_s_min = st[k].s_med;
        r.total_s_median = st[k].total_med;
        r.rate = 1.0 / st[k].s_med;
        snprintf(r.rate_unit, sizeof r.rate_unit, "solves/s");
        const double rs_cg = k == 2 ? 4 : 8;
        /* a singular region's projection of z after each V-cycle (fp64 z):
         * partial sums (z, label) and the shift (z, label read, z written) */
        const double proj = k == 2 ? 0 : (12.0 * regions + 20.0) * (double)n;
        const double iter_bytes = 19.0 * rs_cg * (double)n + st[k].vcycle_bytes + (regions > 0 ? proj : 0);
        const double floor_s =
            run->limits.copy_bytes_per_s > 0 ? st[k].iterations * iter_bytes / run->limits.copy_bytes_per_s : 0;
        r.bytes_per_s = st[k].iterations * iter_bytes / st[k].s_med;
        snprintf(r.byte_model, sizeof r.byte_model, "per CG iteration: stencil + V-cycle + 13 level-1 passes");
        bench_set_fraction(run, &r, "copy_bytes_per_s", r.bytes_per_s);
        r.max_rel_error = st[k].ref_residual;
        r.verified = !run->verify || st[k].ref_residual <= 1.05 * TOL;
        char extra[1200] = "";
        /* a peer that did not reach the tolerance is flagged and left out of the ratio: its time is not
           the time of the same answer */
        if (k == 0 && peer[0] && hypre_it > 0 && hypre_ok)
            snprintf(extra, sizeof extra, ",%.900s,\"hypre_reached_tol\":true,\"clphys_over_hypre_time\":%.4f", peer,
                     hypre_s > 0 ? st[0].total_med / hypre_s : 0);
        else if (k == 0 && peer[0] && hypre_it > 0)
            snprintf(extra, sizeof extra, ",%.900s,\"hypre_reached_tol\":false,\"clphys_over_hypre_time\":null", peer);
        else if (k == 0 && peer[0])
            snprintf(extra, sizeof extra, ",%.900s", peer);
        snprintf(r.params, sizeof r.params,
                 "{\"grid\":\"%s\",\"problem\":\"%s, pure Neumann, white-noise f\",\"wet\":%zu,\"singular_regions\":%d,"
                 "\"tol\":%g,\"iterations\":%d,\"restarts\":%d,\"rel_residual\":%.3e,\"levels\":%d,\"smooth\":%d,"
                 "\"bytes_per_iteration\":%.6g,\"floor_s\":%.6g,\"fraction_of_floor\":%.4f,"
                 "\"speedup_vs_fp64\":%.3f,\"split_s\":{\"vcycle\":%.6f,\"stencil\":%.6f,\"other\":%.6f},"
                 "\"plan_s\":%.4f%s}",
                 gname, basin ? "random basin (seed 7)" : "flat box", wet, regions, TOL, st[k].iterations,
                 st[k].restarts, st[k].residual, st[k].levels, smooth, iter_bytes, floor_s,
                 floor_s > 0 ? floor_s / st[k].s_med : 0, st[1].ok ? st[1].s_med / st[k].s_med : 0, st[k].vcycle_s,
                 st[k].stencil_s, st[k].other_s, st[k].plan_s, extra);
        snprintf(r.note, sizeof r.note,
                 "kernel_s: solve on device fields (clphys_poisson_solve_mem); total_s: host f to host x; "
                 "max_rel_error: true |b - A x| / |b| by the fp64 CPU reference; floor: iterations x "
                 "bytes_per_iteration / copy bandwidth");
        bench_add_row(run, &r);
    }
    /* the peer goes into the mixed row's params (hypre_pfmg_cg), not a row
     * of its own: a row is a clphys result verified by the reference */
    if (hypre_it > 0)
        fprintf(stderr,
                "  poisson   hypre PFMG-CG %s %s: %d iterations, %.4g s, true residual %.2e%s; clphys mixed %d "
                "iterations, %.4g s\n",
                basin ? "basin" : "box", gname, hypre_it, hypre_s, hypre_res,
                hypre_ok ? "" : " (NOT the tolerance: flagged, left out of the ratio)", st[0].iterations,
                st[0].total_med);
    else if (!run->dev->is_gpu && smooth == 2)
        fprintf(stderr, "  poisson   hypre peer: %s\n", peer);
done:
    clphys_poisson_plan_destroy(pl);
    geom_free(&G);
    free(f), free(a), free(w), free(b), free(mask), free(label);
}

/* ---- the path ------------------------------------------------------------------------ */

static void one_size(bench_run *run, grid s, int last)
{
    char gname[64];
    grid_name(s, gname, sizeof gname);
    fprintf(stderr, "  poisson   %s\n", gname);
    const size_t n = (size_t)s.nx * s.ny * s.nz;
    geom G;
    double *a = malloc(7 * n * sizeof(double));
    clphys_poisson_plan *pl = NULL;
    const clphys_poisson_params p = {0}; /* tuned variant */
    if (!a || geom_make(s, 1, &G) || clphys_poisson_plan_create(run->ctx, &G.g, &p, &pl) ||
        clphys_poisson_plan_operator(pl, a, NULL, NULL)) {
        bench_fail(run, "poisson", gname, clphys_last_error(run->ctx));
    } else {
        stencil_rows(run, s, pl, a);
        clphys_poisson_plan_destroy(pl);
        pl = NULL;
        free(a);
        a = NULL;
        /* the plan's default (staged on GPUs, column-vec on CPUs); GPUs'
         * full sweep: column and staged side by side (the column kernels are
         * four more programs to build) */
        const int nline = run->dev->is_gpu && run->full ? 2 : 1;
        const clphys_poisson_line lines[2] = {nline == 2 ? CLPHYS_POISSON_LINE_COLUMN : CLPHYS_POISSON_LINE_AUTO,
                                              CLPHYS_POISSON_LINE_STAGED};
        for (int v = 0; v < nline; v++) {
            vcycle_rows(run, s, &G, 2, lines[v], last);
            if (run->dev->is_gpu && last) vcycle_rows(run, s, &G, 1, lines[v], 0);
        }
    }
    clphys_poisson_plan_destroy(pl);
    free(a);
    geom_free(&G);
    solve_rows(run, s, 0, 2, 1);
    solve_rows(run, s, 1, 2, 1);
    if (run->dev->is_gpu && last) solve_rows(run, s, 1, 1, 0);
}

int bench_poisson(bench_run *run)
{
    if (!run->dev->fp64) {
        bench_fail(run, "poisson", "(path)", "the device has no fp64: the CG is fp64");
        return 0;
    }
    if (run->size > 0) {
        const int m = bench_grid_side(run->size, 32);
        one_size(run, (grid){m, m, 32}, 1);
        return 0;
    }
    const grid quick[2] = {{64, 64, 16}, {128, 128, 32}}, full[2] = {{256, 256, 32}, {512, 512, 64}};
    /* the default run: the first size (the second is 8x the cells); --full: both */
    const int ns = run->full ? 2 : 1;
    for (int i = 0; i < ns; i++) one_size(run, run->quick ? quick[i] : full[i], i == ns - 1);
    return 0;
}
