/* poisson_mpi.c — bench entry poisson_mpi: time to solution of the Poisson
 * solver over MPI ranks (include/clphys_poisson_mpi.h) under an MPI launcher
 * (`mpirun -np P clphys bench --path poisson_mpi`; without one it says so
 * and adds no row), beside one device's baselines measured in the same run
 * by rank 0 alone, in the scaling schema (bench/scaling.h).
 *
 * Problem (as bench/poisson.c): a random basin (clphys_poisson_basin, seed
 * 7), 1000 km per share of nx cells, 4000 m deep, nz layers stretched 22 to
 * 1 from the bottom to the top, pure Neumann, white-noise f, mixed
 * precision (or $CLPHYS_BENCH_POISSON_PRECISION: mixed, fp64 or fp32), tol
 * 1e-8 on the true residual.  A share is one device's part:
 * 1024x1024x64 on GPUs, 64x64x16 on CPUs, m x m x 32 with --size (m the
 * nearest whole number to (N / 32)^(1/2)), or $CLPHYS_BENCH_POISSON_SHARE
 * (NXxNYxNZ), or the whole grid's share when $CLPHYS_BENCH_POISSON_GRID
 * (NXxNYxNZ, divisible by the process grid) is set.  The distributed run solves the grid of P shares laid out on
 * MPI_Dims_create's process grid (px nx x py ny x nz), one share per rank.
 *   strong  baseline: that whole grid on rank 0's device alone;
 *   weak    baseline: one share's basin on rank 0's device alone.
 * Times: one solve from host f to host x (clphys_poisson_solve, and
 * clphys_poisson_mpi_solve's largest over the ranks), medians.  The
 * single-device baselines and the ranks use the line kernels auto chooses
 * (what a user gets; clphys_poisson_mpi.h).  efficiency_per_iteration: the efficiency with
 * the iteration counts' ratio divided out (weak: one share's basin is
 * another basin).
 * Floor of the distributed solve: iterations x (bytes of a CG iteration of
 * the whole grid, bench/poisson.c's model, over P) / copy bandwidth, plus
 * the halo bytes over the host-device bandwidth measured here (a field
 * written and read with clphys_poisson_field_write/read): per iteration
 * the fine level's faces are read and the rings written once for the
 * stencil (fp64) and 2 smooth times in the V-cycle (its precision), the
 * coarser levels adding at most as much again.  exchange_s is not measured
 * (null).  gpus: distinct devices (ranks on one host whose platform, device
 * index and CUDA_VISIBLE_DEVICES agree share one; CPU ranks share the CPU).
 * On CPUs also hypre's PFMG-CG (bench/poisson_hypre.c) over the same number
 * of ranks on the same cores, same matrix and tolerance (the whole grid),
 * started by rank 0 with mpiexec in a clean environment (but for
 * OMPI_MCA_hwloc_base_binding_policy: the ranks' binding) while the other
 * ranks wait without spinning; the peer is POISSON_HYPRE_PEER of the build
 * or $CLPHYS_BENCH_POISSON_HYPRE (a build moved to another machine; "none":
 * not run), with
 * --repeat solves: its JSON in the strong rows' params (hypre_pfmg_cg),
 * clphys_over_hypre_time (clphys's solve over hypre's setup + solve) and
 * clphys_over_hypre_solve (over hypre's solve alone; clphys's setup is
 * plan_s), left out (peer_stopped_short) when hypre's true residual is
 * above the tolerance. */
#include "bench.h"
#include "bench_mpi.h"
#include "host/poisson/poisson_peer.h"
#include "host/ref/poisson_ref.h"
#include "scaling.h"

#include "clphys_poisson_mpi.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TOL 1e-8

/* $CLPHYS_BENCH_POISSON_PRECISION (default mixed) */
static clphys_poisson_precision bench_precision(const char **name)
{
    const char *e = getenv("CLPHYS_BENCH_POISSON_PRECISION");
    if (e && !strcmp(e, "fp64")) return *name = "fp64", CLPHYS_POISSON_FP64;
    if (e && !strcmp(e, "fp32")) return *name = "fp32", CLPHYS_POISSON_FP32;
    return *name = "mixed", CLPHYS_POISSON_MIXED;
}

typedef struct {
    clphys_poisson_geometry g;
    double *dx, *dy, *dz, *depth;
} geom;

static void geom_free(geom *G) { free(G->dx), free(G->dy), free(G->dz), free(G->depth); }

/* shares sx x sy of nx x ny x nz cells, 1000 km each (cell > 0: square
 * cells of that many metres instead) */
static int geom_make(int nx, int ny, int nz, int sx, int sy, double cell, geom *G)
{
    memset(G, 0, sizeof *G);
    const int gx = nx * sx, gy = ny * sy;
    G->dx = malloc(sizeof(double) * gx), G->dy = malloc(sizeof(double) * gy), G->dz = malloc(sizeof(double) * nz);
    G->depth = malloc(sizeof(double) * (size_t)gx * gy);
    if (!G->dx || !G->dy || !G->dz || !G->depth) return -1;
    for (int i = 0; i < gx; i++) G->dx[i] = cell > 0 ? cell : 1e6 / nx;
    for (int j = 0; j < gy; j++) G->dy[j] = cell > 0 ? cell : 1e6 / ny;
    if (clphys_poisson_levels(nz, 4000, pow(22.0, 1.0 / (nz > 1 ? nz - 1 : 1)), G->dz)) return -1;
    if (clphys_poisson_basin(gx, gy, 7, 4000, 0, G->depth)) return -1;
    G->g = (clphys_poisson_geometry){
        .nx = gx, .ny = gy, .nz = nz, .dx = G->dx, .dy = G->dy, .dz = G->dz, .depth = G->depth};
    return 0;
}

static double *noise(size_t n, uint64_t seed)
{
    double *v = malloc(n * sizeof(double));
    if (!v) return NULL;
    for (size_t i = 0; i < n; i++) v[i] = (double)(ref_hash64(seed, i) >> 11) * 0x1.0p-52 - 1;
    return v;
}

typedef struct {
    double s; /* median seconds of a solve   */
    int iterations;
    double residual;
    double iter_bytes; /* of a CG iteration           */
    int ok;
} single_run;

/* rank 0 alone: solves of G (median of repeat) and, when h2d is not NULL,
 * the host-device bandwidth (an n-double field written and read) */
static void single(bench_run *run, const geom *G, const double *f, single_run *o, double *h2d)
{
    memset(o, 0, sizeof *o);
    const char *pname;
    const clphys_poisson_params prm = {.precision = bench_precision(&pname), .tol = TOL};
    clphys_poisson_plan *pl = NULL;
    const size_t n = (size_t)G->g.nx * G->g.ny * G->g.nz;
    double *x = malloc(n * sizeof(double)), *t = malloc(sizeof(double) * (size_t)run->repeat);
    clphys_status st = x && t ? clphys_poisson_plan_create(run->ctx, &G->g, &prm, &pl) : CLPHYS_ERR_OUT_OF_MEMORY;
    clphys_poisson_result res = {0};
    for (int r = 0; r < run->repeat && !st; r++) {
        st = clphys_poisson_solve(pl, f, x, &res);
        t[r] = res.seconds;
    }
    if (!st) {
        clphys_poisson_info info;
        clphys_poisson_plan_info(pl, &info);
        o->s = ref_median(t, run->repeat), o->iterations = res.iterations, o->residual = res.rel_residual;
        o->iter_bytes = 19.0 * 8 * (double)n + info.vcycle_bytes +
                        (info.singular_regions ? (12.0 * info.singular_regions + 20.0) * (double)n : 0);
        o->ok = 1;
    }
    cl_mem fld = NULL;
    if (!st && h2d && !(st = clphys_poisson_field_create(pl, CLPHYS_FP64, &fld))) {
        double bw[3];
        for (int r = 0; r < 3 && !st; r++) {
            const double t0 = bench_now();
            st = clphys_poisson_field_write(pl, CLPHYS_FP64, fld, f);
            if (!st) st = clphys_poisson_field_read(pl, CLPHYS_FP64, fld, x);
            bw[r] = 2.0 * 8 * (double)n / (bench_now() - t0);
        }
        *h2d = st ? 0 : ref_median(bw, 3);
        clReleaseMemObject(fld);
    }
    if (st) bench_fail(run, "poisson_mpi", "one-device baseline", clphys_last_error(run->ctx));
    clphys_poisson_plan_destroy(pl);
    free(x), free(t);
}

#ifdef POISSON_HYPRE_PEER
/* whether an executable named name is in one of path's folders */
static int on_path(const char *name, const char *path)
{
    char dir[4096];
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        if (n && n < sizeof dir - 64) {
            snprintf(dir, sizeof dir, "%.*s/%s", (int)n, p, name);
            if (access(dir, X_OK) == 0) return 1;
        }
        p += n + (p[n] == ':');
    }
    return 0;
}
#endif

/* rank 0, CPU devices: hypre's PFMG-CG over P ranks on the system of G
 * with right-hand side f: its JSON object into out (or why not); *total_s
 * (setup + solve) and *true_res when it ran */
static void hypre_peer(bench_run *run, const geom *G, const double *f, int P, char *out, size_t outn, double *total_s,
                       double *solve_s, double *true_res)
{
    *total_s = *solve_s = 0, *true_res = INFINITY;
#ifndef POISSON_HYPRE_PEER
    (void)run, (void)G, (void)f, (void)P;
    snprintf(out, outn, "\"hypre\":\"not built: %s\"", POISSON_HYPRE_WHY);
#else
    const char *env = getenv("CLPHYS_BENCH_POISSON_HYPRE");
    if (env && !strcmp(env, "none")) {
        snprintf(out, outn, "\"hypre\":\"not run (CLPHYS_BENCH_POISSON_HYPRE=none)\"");
        return;
    }
    const size_t n = (size_t)G->g.nx * G->g.ny * G->g.nz;
    double *a = malloc(7 * n * sizeof(double)), *w = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
    unsigned char *mask = malloc(n);
    int *label = malloc(n * sizeof(int));
    clphys_poisson_plan *pl = NULL;
    const clphys_poisson_params p0 = {.no_tune = 1};
    const char *peer = getenv("CLPHYS_BENCH_POISSON_HYPRE");
    if (!peer || !*peer) peer = POISSON_HYPRE_PEER;
    snprintf(out, outn, "\"hypre\":\"%.300s failed\"", peer);
    if (!a || !w || !b || !mask || !label || clphys_poisson_plan_create(run->ctx, &G->g, &p0, &pl) ||
        clphys_poisson_plan_operator(pl, a, mask, w) ||
        poisson_ref_projected_rhs(G->g.nx, G->g.ny, G->g.nz, a, w, mask, f, -1.0, b, label) < 0) {
        snprintf(out, outn, "\"hypre\":\"the system could not be made\"");
        goto done;
    }
    char file[] = "/tmp/clphys_poisson_hypre_XXXXXX", errf[] = "/tmp/clphys_poisson_hypre_err_XXXXXX", cmd[2048],
         line[1024] = "";
    const int fd = mkstemp(file), efd = mkstemp(errf);
    if (efd >= 0) close(efd);
    FILE *fp = fd >= 0 ? fdopen(fd, "wb") : NULL;
    const int32_t h[4] = {G->g.nx, G->g.ny, G->g.nz, run->repeat > 3 ? run->repeat : 3};
    const double tol = TOL;
    int ok = fp && fwrite("CPPOIS1", 1, 8, fp) == 8 && fwrite(h, sizeof h, 1, fp) == 1 && fwrite(&tol, 8, 1, fp) == 1 &&
             fwrite(a, 8, 7 * n, fp) == 7 * n && fwrite(b, 8, n, fp) == n;
    if (fp) ok = fclose(fp) == 0 && ok;
    /* a launcher of its own: the environment of this job's launcher left
     * out; the configured mpiexec, or the one on PATH where that is absent
     * (a build moved to another machine), or $CLPHYS_BENCH_MPIEXEC; one
     * OpenMP thread per rank (one core each, as clphys's ranks) */
    const char *path = getenv("PATH"), *ld = getenv("LD_LIBRARY_PATH"), *home = getenv("HOME");
    const char *bind = getenv("OMPI_MCA_hwloc_base_binding_policy"), *mpx = getenv("CLPHYS_BENCH_MPIEXEC");
    if (!mpx || !*mpx) mpx = access(POISSON_MPIEXEC, X_OK) == 0 ? POISSON_MPIEXEC : "mpiexec";
    /* Open MPI's launcher refuses to start, even on this host alone, when
     * its remote agent (ssh or rsh) is nowhere: keep the caller's choice,
     * else name one that exists, since no remote launch happens here */
    const char *agent = getenv("OMPI_MCA_plm_rsh_agent");
    if (!agent || !*agent) agent = on_path("ssh", path) || on_path("rsh", path) ? NULL : "/bin/false";
    const char *const quoted[6] = {peer, bind, mpx, path, ld, agent};
    for (int q = 0; q < 6; q++) ok = ok && !(quoted[q] && strchr(quoted[q], '\''));
    if (ok && efd >= 0) {
        snprintf(
            cmd, sizeof cmd,
            "env -i PATH='%s' LD_LIBRARY_PATH='%s' HOME='%s' OMPI_ALLOW_RUN_AS_ROOT=1 "
            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMP_NUM_THREADS=1 %s%s%s%s%s%s'%s' "
            "-np %d '%s' '%s' 1 2>'%s'",
            path ? path : "/usr/bin:/bin", ld ? ld : "", home ? home : "/tmp",
            bind ? "OMPI_MCA_hwloc_base_binding_policy='" : "", bind ? bind : "", bind ? "' " : "",
            agent ? "OMPI_MCA_plm_rsh_agent='" : "", agent ? agent : "", agent ? "' " : "", mpx, P, peer, file, errf);
        FILE *p = popen(cmd, "r");
        int got = 0;
        while (p && !got && fgets(line, sizeof line, p)) got = line[0] == '{';
        if (got) {
            line[strcspn(line, "\n")] = 0;
            const char *tr = strstr(line, "\"true_rel_residual\":");
            const char *su = strstr(line, "\"setup_s_median\":"), *so = strstr(line, "\"solve_s_median\":");
            double setup = 0, solve = 0;
            if (tr && su && so && sscanf(tr + 20, "%lf", true_res) == 1 && sscanf(su + 17, "%lf", &setup) == 1 &&
                sscanf(so + 17, "%lf", &solve) == 1) {
                *total_s = setup + solve, *solve_s = solve;
                snprintf(out, outn, "\"hypre_pfmg_cg\":%.900s", line);
            }
        }
        if (p) pclose(p);
        if (!got) { /* why: the last line the peer or its launcher wrote to stderr */
            FILE *e = fopen(errf, "r");
            char last[1024] = "", cur[1024];
            while (e && fgets(cur, sizeof cur, e))
                if (cur[strspn(cur, " \t\r\n-")]) snprintf(last, sizeof last, "%s", cur);
            if (e) fclose(e);
            for (char *c = last; *c; c++)
                if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) *c = ' ';
            snprintf(out, outn, "\"hypre\":\"%.300s failed: %.300s\"", peer, last);
        }
    }
    remove(file);
    if (efd >= 0) remove(errf);
done:
    clphys_poisson_plan_destroy(pl);
    free(a), free(w), free(b), free(mask), free(label);
#endif
}

int bench_poisson_mpi(bench_run *run)
{
    MPI_Comm comm;
    int P, rank;
    if (!bench_mpi_begin("poisson_mpi", &comm, &rank, &P)) return 0;
    int share[3] = {1024, 1024, 64};
    if (!run->dev->is_gpu || run->quick) share[0] = share[1] = 64, share[2] = 16;
    if (run->size > 0) /* --size N: N cells a share, as poisson's grid m x m x 32 */
        share[0] = share[1] = bench_grid_side(run->size, 32), share[2] = 32;
    const char *env = getenv("CLPHYS_BENCH_POISSON_SHARE");
    if (env && (sscanf(env, "%dx%dx%d", &share[0], &share[1], &share[2]) != 3 || share[0] < 4 || share[1] < 4 ||
                share[2] < 1)) {
        if (rank == 0) bench_fail(run, "poisson_mpi", "CLPHYS_BENCH_POISSON_SHARE", "not NXxNYxNZ (NX, NY >= 4)");
        return 0;
    }
    int dims[2] = {0, 0};
    MPI_Dims_create(P, 2, dims);
    const char *genv0 = getenv("CLPHYS_BENCH_POISSON_GRID");
    int whole_grid[3];
    if (genv0 &&
        (sscanf(genv0, "%dx%dx%d", &whole_grid[0], &whole_grid[1], &whole_grid[2]) != 3 || whole_grid[0] % dims[0] ||
         whole_grid[1] % dims[1] || whole_grid[0] / dims[0] < 4 || whole_grid[1] / dims[1] < 4 || whole_grid[2] < 1)) {
        if (rank == 0)
            bench_fail(run, "poisson_mpi", "CLPHYS_BENCH_POISSON_GRID", "not NXxNYxNZ divisible by the grid");
        return 0;
    }
    if (genv0) share[0] = whole_grid[0] / dims[0], share[1] = whole_grid[1] / dims[1], share[2] = whole_grid[2];
    const int gpus = run->dev->is_gpu ? bench_mpi_devices(run, comm) : 1;
    geom whole, one;
    /* a fixed grid is the same basin at every rank count: 15.625 km cells
     * (64 to 1000 km, as the CPU share) */
    const double cell = genv0 ? 1e6 / 64 : 0;
    int bad = geom_make(share[0], share[1], share[2], dims[0], dims[1], cell, &whole) ||
              geom_make(share[0], share[1], share[2], 1, 1, cell, &one);
    const size_t n = (size_t)whole.g.nx * whole.g.ny * whole.g.nz, n1 = (size_t)share[0] * share[1] * share[2];
    double *f = rank == 0 ? noise(n, 29) : NULL, *f1 = rank == 0 ? noise(n1, 29) : NULL;
    bad |= rank == 0 && (!f || !f1);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
    if (bad) {
        if (rank == 0) bench_fail(run, "poisson_mpi", "inputs", "out of memory or a bad share");
        geom_free(&whole), geom_free(&one), free(f), free(f1);
        return 0;
    }
    /* the one-device baselines, rank 0 alone */
    /* $CLPHYS_BENCH_POISSON_GATHER: gather_columns values to compare
     * ("64,256"), one distributed plan and pair of rows each */
    int gather[8] = {0}, ngather = 1;
    const char *genv = getenv("CLPHYS_BENCH_POISSON_GATHER");
    if (genv && *genv) {
        ngather = 0;
        for (const char *q = genv; *q && ngather < 8;) {
            char *e;
            const long v = strtol(q, &e, 10);
            if (e == q || v < 2 || v > 1 << 20) break;
            gather[ngather++] = (int)v;
            q = *e == ',' ? e + 1 : e;
        }
        if (!ngather) ngather = 1, gather[0] = 0;
    }
    /* unnamed: the device type's default, as the CLI takes it */
    const int gnamed = gather[0] != 0;
    if (!gather[0]) gather[0] = clphys_poisson_mpi_default_gather(run->ctx);
    double *t = malloc(sizeof(double) * (size_t)run->repeat);
    single_run strong = {0}, weak = {0};
    double h2d = 0;
    if (rank == 0) {
        /* $CLPHYS_BENCH_POISSON_BASELINE=0: no one-device solves (baseline_s
         * null; the same grid's baseline measured in another run); a fixed
         * grid has no weak row */
        const char *be = getenv("CLPHYS_BENCH_POISSON_BASELINE");
        if (be && !strcmp(be, "0"))
            strong.ok = 1, strong.s = -1;
        else
            single(run, &whole, f, &strong, &h2d);
        if (!genv0) single(run, &one, f1, &weak, NULL);
    }
    /* hypre over P ranks on the same cores (CPU devices) */
    char peer[1024] = "";
    double hypre_s = 0, hypre_solve_s = 0, hypre_res = INFINITY;
    if (!run->dev->is_gpu && rank == 0)
        hypre_peer(run, &whole, f, P, peer, sizeof peer, &hypre_s, &hypre_solve_s, &hypre_res);
    bench_mpi_quiet_barrier(comm);
    /* the ranks, once per gather threshold */
    const char *pname;
    const clphys_poisson_params prm = {.precision = bench_precision(&pname), .tol = TOL};
    for (int gi = 0; gi < ngather; gi++) {
        const clphys_poisson_mpi_params mp = {0, {dims[0], dims[1]}, gather[gi]};
        clphys_poisson_mpi_plan *d = NULL;
        const double tp = bench_now();
        clphys_status st = clphys_poisson_mpi_plan_create(run->ctx, comm, &whole.g, &prm, &mp, &d);
        const double plan_s = bench_now() - tp;
        clphys_poisson_mpi_info info = {0};
        double *fb = NULL, *xb = NULL;
        char gname[24] = "";
        if (ngather > 1 || gnamed) snprintf(gname, sizeof gname, "-g%d", gather[gi]);
        clphys_poisson_result res = {0};
        if (!st) {
            clphys_poisson_mpi_plan_info(d, &info);
            const size_t nb = (size_t)info.block[2] * info.block[3] * info.nz;
            fb = malloc(sizeof(double) * (nb + 1)), xb = malloc(sizeof(double) * (nb + 1));
            st = clphys_mpi_agree(comm, run->ctx, fb && xb && t ? CLPHYS_SUCCESS : CLPHYS_ERR_OUT_OF_MEMORY);
        }
        if (!st) st = clphys_poisson_mpi_scatter(d, f, fb);
        for (int r = 0; r < run->repeat && !st; r++) {
            MPI_Barrier(comm);
            st = clphys_poisson_mpi_solve(d, fb, xb, &res);
            t[r] = res.seconds;
            MPI_Allreduce(MPI_IN_PLACE, &t[r], 1, MPI_DOUBLE, MPI_MAX, comm);
        }
        double halo = info.halo_bytes;
        MPI_Allreduce(MPI_IN_PLACE, &halo, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (st && rank == 0) bench_fail(run, "poisson_mpi", "distributed solve", clphys_last_error(run->ctx));
        if (!st && rank == 0) {
            const double step = ref_median(t, run->repeat);
            /* faces read and rings written: the stencil's fp64 exchange and 2
             * smooth V-cycle exchanges in fp32, doubled for the coarser levels */
            const double halo_iter = 2 * halo * (1 + 2.0 * 2 * 0.5 * 2);
            /* no floor without the one-device plan's bytes (baseline skipped) */
            const double floor_s = !(strong.iter_bytes > 0)
                                       ? 0
                                       : (run->limits.copy_bytes_per_s > 0
                                              ? res.iterations * strong.iter_bytes / P / run->limits.copy_bytes_per_s
                                              : 0) +
                                             (h2d > 0 ? res.iterations * halo_iter / h2d : 0);
            for (int w = 0; w < 2; w++) {
                const single_run *b = w ? &weak : &strong;
                if (!b->ok) continue;
                const bench_scaling sc = {gpus, P,    w,  w ? (long long)n1 : (long long)(n / (size_t)P),
                                          b->s, step, -1, h2d > 0 ? res.iterations * halo_iter / h2d : -1};
                bench_row row;
                const int at =
                    bench_scaling_row(&row, &sc, "poisson_mpi", pname, (long long)n, run->repeat,
                                      "solve-basin-%s-%dx%d%s", w ? "weak" : "strong", dims[0], dims[1], gname);
                row.kernel_s_median = row.kernel_s_min = row.total_s_median = step;
                row.rate = 1.0 / step;
                snprintf(row.rate_unit, sizeof row.rate_unit, "solves/s");
                row.max_rel_error = res.rel_residual;
                row.verified = res.rel_residual <= 1.05 * TOL && b->residual <= 1.05 * TOL;
                char extra[1300] = "";
                if (!w && peer[0]) {
                    if (hypre_s > 0 && hypre_res <= 1.05 * TOL)
                        snprintf(extra, sizeof extra,
                                 ",%.1000s,\"clphys_over_hypre_time\":%.4f,\"clphys_over_hypre_solve\":%.4f", peer,
                                 step / hypre_s, hypre_solve_s > 0 ? step / hypre_solve_s : 0);
                    else
                        snprintf(extra, sizeof extra, ",%.1000s,\"peer_stopped_short\":true", peer);
                }
                snprintf(
                    row.params + at, sizeof row.params - at,
                    ",\"grid\":\"%dx%dx%d\",\"process_grid\":\"%dx%d\",\"share\":\"%dx%dx%d\",\"problem\":\"random "
                    "basin (seed 7), pure Neumann, white-noise f\",\"tol\":%g,\"iterations\":%d,"
                    "\"baseline_iterations\":%d,\"rel_residual\":%.3e,\"baseline_rel_residual\":%.3e,"
                    "\"levels\":%d,\"levels_distributed\":%d,\"floor_s\":%.6g,\"fraction_of_floor\":%.4f,"
                    "\"halo_bytes_per_iteration\":%.6g,\"host_device_bytes_per_s\":%.6g,\"plan_s\":%.4f,"
                    "\"line_ranks\":\"%s\",\"line_baseline\":\"auto\",\"gather_columns\":%d,"
                    "\"efficiency_per_iteration\":%.4g%s}",
                    whole.g.nx, whole.g.ny, whole.g.nz, dims[0], dims[1], share[0], share[1], share[2], TOL,
                    res.iterations, b->iterations, res.rel_residual, b->residual, info.levels, info.levels_distributed,
                    floor_s, floor_s > 0 ? floor_s / step : 0, halo_iter, h2d, plan_s,
                    info.line == CLPHYS_POISSON_LINE_STAGED       ? "staged"
                    : info.line == CLPHYS_POISSON_LINE_COLUMN_VEC ? "column-vec"
                                                                  : "column",
                    gather[gi],
                    bench_scaling_efficiency(&sc) * res.iterations / (b->iterations > 0 ? b->iterations : 1), extra);
                snprintf(row.note, sizeof row.note,
                         "%s scaling over %d ranks (%d devices): %.4g s against %.4g s on one device (%s); %d vs %d "
                         "iterations",
                         w ? "weak" : "strong", P, gpus, step, b->s, w ? "one share" : "the whole grid", res.iterations,
                         b->iterations);
                bench_add_row(run, &row);
            }
        }
        clphys_poisson_mpi_plan_destroy(d);
        free(fb), free(xb);
        fb = xb = NULL;
    }
    geom_free(&whole), geom_free(&one);
    free(f), free(f1), free(t);
    return 0;
}
