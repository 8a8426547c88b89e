/* lqcd_mpi.c — benchmark paths "lqcd_dslash_mpi" (the Wilson hopping term over
 * MPI ranks, split into its parts) and "lqcd_solver_mpi" (even-odd CGNR, fp64 and
 * mixed, distributed: time to solution), run under an MPI launcher
 * (mpirun -np P clphys bench --path lqcd_dslash_mpi,lqcd_solver_mpi); without one they
 * add no rows.  Every rank holds one device (ranks may share one GPU).
 *
 * Each row is one process grid (1x1x1xP, and 1x1x2x2 for 4 ranks) and
 * carries in params the grid, the ranks and the parts of one application,
 * medians over the repetitions, each the largest over the ranks:
 * interior, pack and exterior kernels, face copies to and from the host,
 * the MPI exchange, and the exchange not hidden (the device idle between
 * the interior's end and the exterior's start).  Beside them:
 *  - single_s: the same hop on one rank (rank 0, the others idle) for the
 *    whole lattice, on the same device, timed the same way (wall time of an
 *    application; single_kernel_s its kernel); overhead = wall / single_s - 1
 *    (ranks sharing one GPU do the single rank's work between them);
 *  - the model: exchange = d2h + messages x latency + halo bytes /
 *    bandwidth + h2d (latency and bandwidth measured by
 *    clphys_mpi_measure_network at the halo's message size), interior =
 *    single_kernel_s x local / global sites (the single rank's rate),
 *    time = pack + max(interior, exchange) + exterior;
 *  - the overlap criterion (the share of the boundary work, not the goal:
 *    the goal is speedup, in the scaling schema): exterior + pack <= (face
 *    fraction + 0.10) x interior, face fraction = sites with a neighbour on
 *    another rank / sites; and the strict ratio (exterior + pack) / (face
 *    fraction x interior).
 * Every row also carries the scaling schema (scaling.h, strong; baseline:
 * single_s) and the exchange floor: each rank's halo bytes down to the
 * host, one host copy (Open MPI's shared-memory path between ranks of one
 * host) and up into the neighbour's device, over the bandwidths of
 * clphys_measure_transfers.
 * Verified against the single-rank result (gathered on rank 0). */
#include "bench.h"
#include "bench_mpi.h"
#include "clphys_lqcd_mpi.h"
#include "lqcd_bench.h"
#include "scaling.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MAXREP = 50 };

static void fill(double *psi, size_t n, uint64_t seed)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) psi[i] = (double)(ref_hash64(seed, i) >> 11) * 0x1.0p-52 - 1;
}

/* The grids of P ranks. */
static int grids_of(int P, int g[2][4])
{
    int n = 0;
    g[n][0] = g[n][1] = g[n][2] = 1, g[n][3] = P, n++;
    if (P == 4) g[n][0] = g[n][1] = 1, g[n][2] = g[n][3] = 2, n++;
    return n;
}

static double max_over(MPI_Comm c, double v)
{
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, c);
    return v;
}

/* One status for all ranks (a rank's failure fails the case everywhere). */
static int all_ok(MPI_Comm c, int ok)
{
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, c);
    return ok;
}

static const char *dims_str(const int d[4], char *buf, size_t n)
{
    snprintf(buf, n, "%dx%dx%dx%d", d[0], d[1], d[2], d[3]);
    return buf;
}

/* The single-rank hop (HOPPING, full lattice) on rank 0, timed as the
 * distributed one (clphys_lqcd_dslash_apply_split): t[0] the median wall time of
 * an application, t[1] of the kernel; its output in out (rank 0); the
 * others wait. */
static int single_hop(bench_run *run, MPI_Comm c, const clphys_lqcd_gauge_field *g, const clphys_lqcd_dslash_params *p,
                      const double *in, double *out, double t[2])
{
    int rank, ok = 1;
    MPI_Comm_rank(c, &rank);
    t[0] = t[1] = 0;
    if (rank == 0) {
        clphys_lqcd_dslash_plan *pl = NULL;
        cl_mem a = NULL, b = NULL;
        double wall[MAXREP], ks[MAXREP];
        clphys_lqcd_dslash_split s;
        const int rep = run->repeat < MAXREP ? run->repeat : MAXREP;
        ok = !clphys_lqcd_dslash_plan_create(run->ctx, g, p, &pl) && !clphys_lqcd_dslash_field_create(pl, 0, &a) &&
             !clphys_lqcd_dslash_field_create(pl, 0, &b) && !clphys_lqcd_dslash_field_write(pl, a, -1, in) &&
             !clphys_lqcd_dslash_apply_split(pl, CLPHYS_LQCD_DSLASH_HOPPING, b, a, &s);
        for (int i = 0; i < rep && ok; i++) {
            ok = !clphys_lqcd_dslash_apply_split(pl, CLPHYS_LQCD_DSLASH_HOPPING, b, a, &s);
            wall[i] = s.wall_s, ks[i] = s.interior_s;
        }
        if (ok) ok = !clphys_lqcd_dslash_field_read(pl, b, -1, out);
        if (ok)
            t[0] = ref_median(wall, rep), t[1] = ref_median(ks, rep);
        else
            bench_fail(run, "lqcd_dslash_mpi", "single rank", clphys_last_error(run->ctx));
        if (a) clReleaseMemObject(a);
        if (b) clReleaseMemObject(b);
        clphys_lqcd_dslash_plan_destroy(pl);
    }
    bench_mpi_quiet_barrier(c);
    MPI_Bcast(t, 2, MPI_DOUBLE, 0, c);
    return all_ok(c, ok);
}

typedef struct {
    double v[10]; /* interior pack exterior d2h h2d mpi exposed wall kernels exchange */
} parts;

static void split_parts(const clphys_lqcd_dslash_split *s, parts *p)
{
    const double v[10] = {s->interior_s,
                          s->pack_s,
                          s->exterior_s,
                          s->d2h_s,
                          s->h2d_s,
                          s->mpi_s,
                          s->exposed_s,
                          s->wall_s,
                          s->interior_s + s->pack_s + s->exterior_s,
                          s->d2h_s + s->mpi_s + s->h2d_s};
    memcpy(p->v, v, sizeof v);
}

/* One distributed case: the grid, one precision, on this rank's part loc
 * of the field and lin of the source (the lattice gd). */
static void dslash_grid(bench_run *run, MPI_Comm c, const int grid[4], const int gd[4],
                        const clphys_lqcd_gauge_field *loc, const double *lin, const clphys_lqcd_dslash_params *prm,
                        const double *single_out, const double single[2], const clphys_network_limits *net)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    char lat[32], gr[32], what[96];
    dims_str(gd, lat, sizeof lat);
    dims_str(grid, gr, sizeof gr);
    const char *pname = prm->precision == CLPHYS_FP64 ? "fp64" : "fp32";
    snprintf(what, sizeof what, "%s %s grid %s", lat, pname, gr);
    clphys_lqcd_dslash_plan *pl = NULL;
    cl_mem a = NULL, b = NULL;
    double *lout = NULL, *gout = NULL;
    const int rep = run->repeat < MAXREP ? run->repeat : MAXREP;
    parts med;
    clphys_lqcd_dslash_split s = {0};
    /* collective calls return one status on every rank, so ok stays the
     * same everywhere between the all_ok calls */
    int ok = all_ok(c, (lout = malloc(sizeof(double) * 24 * loc->volume)) != NULL);
    if (ok) ok = !clphys_lqcd_dslash_plan_create_mpi(c, grid, run->ctx, loc, prm, &pl);
    ok = all_ok(c, ok && !clphys_lqcd_dslash_field_create(pl, 0, &a) && !clphys_lqcd_dslash_field_create(pl, 0, &b) &&
                       !clphys_lqcd_dslash_field_write(pl, a, -1, lin));
    if (ok) {
        parts rs[MAXREP];
        ok = !clphys_lqcd_dslash_apply_split(pl, CLPHYS_LQCD_DSLASH_HOPPING, b, a, &s); /* warm-up */
        MPI_Barrier(c);
        for (int i = 0; i < rep && ok; i++) {
            ok = !clphys_lqcd_dslash_apply_split(pl, CLPHYS_LQCD_DSLASH_HOPPING, b, a, &s);
            split_parts(&s, &rs[i]);
        }
        ok = all_ok(c, ok && !clphys_lqcd_dslash_field_read(pl, b, -1, lout));
        for (int k = 0; k < 10 && ok; k++) {
            double col[MAXREP];
            for (int i = 0; i < rep; i++) col[i] = rs[i].v[k];
            med.v[k] = max_over(c, ref_median(col, rep));
        }
    }
    if (!ok) {
        bench_fail(run, "lqcd_dslash_mpi", what, clphys_last_error(pl ? run->ctx : NULL));
        goto done;
    }
    /* the check: the gathered output against the single rank's */
    if (rank == 0) gout = malloc(sizeof(double) * 24 * (size_t)gd[0] * gd[1] * gd[2] * gd[3]);
    double err = 0;
    if (clphys_lqcd_spinor_gather(c, grid, gd, 0, lout, gout)) {
        bench_fail(run, "lqcd_dslash_mpi", what, clphys_last_error(NULL));
        goto done;
    }
    if (rank == 0) {
        const size_t n = 24 * (size_t)gd[0] * gd[1] * gd[2] * gd[3];
        for (size_t i = 0; i < n; i++) {
            const double d =
                isfinite(gout[i]) ? fabs(gout[i] - single_out[i]) / fmax(fabs(single_out[i]), 1.0) : INFINITY;
            if (d > err) err = d;
        }
    }
    MPI_Bcast(&err, 1, MPI_DOUBLE, 0, c);
    const double gv = (double)gd[0] * gd[1] * gd[2] * gd[3], lv = (double)loc->volume;
    const double t_int = med.v[0], t_pack = med.v[1], t_ext = med.v[2], d2h = med.v[3], h2d = med.v[4],
                 t_mpi = med.v[5], exposed = med.v[6], wall = med.v[7], xch = med.v[9];
    const double face = (double)s.face_sites / (double)s.sites;
    const double net_s = s.messages * net->latency_s +
                         (net->bandwidth_bytes_per_s > 0 ? (double)s.halo_bytes / net->bandwidth_bytes_per_s : 0);
    const double single_s = single[0], m_xch = d2h + net_s + h2d, m_int = single[1] * lv / gv;
    const double m_total = t_pack + fmax(m_int, m_xch) + t_ext;
    const double overlap_lhs = t_ext + t_pack, overlap_rhs = (face + 0.10) * t_int;
    /* the floor: each rank's faces down to the host, one host copy into the
     * neighbour's memory (Open MPI's shared-memory path between ranks of a
     * host), up into its device */
    const clphys_transfer_limits *x = &run->xfer;
    const double hb = (double)s.halo_bytes;
    const double floor_s = x->d2h_bytes_per_s > 0 && x->h2d_bytes_per_s > 0 && x->host_copy_bytes_per_s > 0
                               ? hb / x->d2h_bytes_per_s + hb / x->host_copy_bytes_per_s + hb / x->h2d_bytes_per_s
                               : -1;
    const bench_scaling sc = {.gpus = bench_mpi_devices(run, c),
                              .ranks = size,
                              .weak = 0,
                              .n_per_device = (long long)lv,
                              .baseline_s = single_s,
                              .step_s = wall,
                              .exchange_s = xch,
                              .exchange_floor_s = floor_s};
    bench_row r;
    const int at = bench_scaling_row(&r, &sc, "lqcd_dslash_mpi", pname, (long long)gv, rep, "halo-recon%d-%s",
                                     prm->reconstruct ? prm->reconstruct : 12, gr);
    r.kernel_s_median = r.kernel_s_min = med.v[8];
    r.total_s_median = wall;
    int len =
        at +
        snprintf(
            r.params + at, sizeof r.params - at,
            ",\"lattice\":\"%s\",\"grid\":\"%s\",\"floor_terms\":\"halo_bytes/d2h + "
            "halo_bytes/host_copy + halo_bytes/h2d\",\"op\":\"hopping, full lattice\","
            "\"interior_s\":%.4g,\"pack_s\":%.4g,\"exterior_s\":%.4g,\"d2h_s\":%.4g,\"h2d_s\":%.4g,"
            "\"mpi_s\":%.4g,\"exposed_s\":%.4g,\"wall_s\":%.4g,"
            "\"hidden_share\":%.3f,\"single_s\":%.4g,\"single_kernel_s\":%.4g,\"overhead\":%.3f,\"halo_bytes\":%zu,"
            "\"messages\":%d,"
            "\"face_fraction\":%.4f,\"latency_s\":%.3g,\"bandwidth_Bps\":%.4g,\"model_net_s\":%.4g,"
            "\"model_exchange_s\":%.4g,\"model_interior_s\":%.4g,\"model_s\":%.4g,"
            "\"overlap_lhs_s\":%.4g,\"overlap_rhs_s\":%.4g,\"overlap_met\":%s,\"overlap_strict_ratio\":%.3f}",
            lat, gr, t_int, t_pack, t_ext, d2h, h2d, t_mpi, exposed, wall, xch > 0 ? fmax(0, 1 - exposed / xch) : 1,
            single_s, single[1], single_s > 0 ? wall / single_s - 1 : 0, s.halo_bytes, s.messages, face, net->latency_s,
            net->bandwidth_bytes_per_s, net_s, m_xch, m_int, m_total, overlap_lhs, overlap_rhs,
            overlap_lhs <= overlap_rhs ? "true" : "false", face > 0 && t_int > 0 ? overlap_lhs / (face * t_int) : 0);
    if (len >= (int)sizeof r.params) {
        bench_fail(run, "lqcd_dslash_mpi", what, "params longer than the row holds");
        goto done;
    }
    r.rate = gv / wall;
    snprintf(r.rate_unit, sizeof r.rate_unit, "sites/s");
    r.gflops = 1320.0 * gv / wall * 1e-9;
    snprintf(r.flops_convention, sizeof r.flops_convention, "1320 per site (hopping term), over the wall time");
    bench_set_fraction(run, &r, prm->precision == CLPHYS_FP64 ? "fma_fp64_flops" : "fma_fp32_flops", r.gflops * 1e9);
    r.max_rel_error = err;
    r.verified = err < (prm->precision == CLPHYS_FP64 ? 1e-13 : 1e-5);
    snprintf(r.note, sizeof r.note,
             "kernel_s = interior + pack + exterior, total_s = wall per application; "
             "each part the median over repetitions, the largest over ranks; error against the single-rank hop");
    bench_add_row(run, &r);
    if (rank == 0)
        fprintf(stderr,
                "  dslash_mpi %s: wall %.4g s (single rank %.4g s), interior %.4g pack %.4g exterior %.4g, exchange "
                "%.4g (model %.4g, floor %.4g), exposed %.4g; model total %.4g s; speedup %.3g over %d device(s)\n",
                what, wall, single_s, t_int, t_pack, t_ext, xch, m_xch, floor_s, exposed, m_total,
                bench_scaling_speedup(&sc), sc.gpus);
done:
    if (a) clReleaseMemObject(a);
    if (b) clReleaseMemObject(b);
    clphys_lqcd_dslash_plan_destroy(pl);
    free(lout), free(gout);
}

static void set_dims(int d[4], int l, int lt) { d[0] = d[1] = d[2] = l, d[3] = lt; }

int bench_lqcd_dslash_mpi(bench_run *run)
{
    MPI_Comm c;
    int rank, size;
    if (!bench_mpi_begin("lqcd_dslash_mpi", &c, &rank, &size)) return 0;
    int sizes[2][4], nsize = 2, grids[2][4];
    if (run->size > 0) /* every extent a multiple of 2 P: each grid's split stays even */
        bench_lqcd_sized_dims(run->size, 2 * size, 2 * size, sizes[0]), nsize = 1;
    else if (run->quick)
        set_dims(sizes[0], 8, 8), set_dims(sizes[1], 8, 16);
    else
        set_dims(sizes[0], 32, 32), set_dims(sizes[1], 48, 96);
    const int ngrid = grids_of(size, grids);
    for (int si = 0; si < nsize; si++) {
        const int *d = sizes[si];
        clphys_lqcd_gauge_field g = {{0}, 0, NULL};
        double *in = NULL, *out[2] = {NULL, NULL}; /* out: the single rank's, fp32 and fp64 */
        const size_t V = (size_t)d[0] * d[1] * d[2] * d[3];
        int ok = 1;
        if (rank == 0) {
            ok = !clphys_lqcd_gauge_create(d, &g);
            if (ok) clphys_lqcd_gauge_hot(&g, 12345);
            in = malloc(sizeof(double) * 24 * V);
            for (int k = 0; k < 2; k++) out[k] = malloc(sizeof(double) * 24 * V);
            ok = ok && in && out[0] && out[1];
            if (ok) fill(in, 24 * V, 99);
        }
        if (!all_ok(c, ok)) {
            bench_fail(run, "lqcd_dslash_mpi", "inputs", "out of memory");
            free(in), free(out[0]), free(out[1]);
            clphys_lqcd_gauge_destroy(&g);
            continue;
        }
        /* the halo's message size for the network probe: a face in fp32 */
        const long long msg = (long long)(V / (size_t)d[3] / (size_t)size) * 12 * 4;
        clphys_network_limits net = {0};
        if (size > 1 && clphys_mpi_measure_network(c, msg > 64 ? msg : 64, 20, &net))
            bench_fail(run, "lqcd_dslash_mpi", "network probe", clphys_last_error(NULL));
        /* the single rank first (rank 0 alone), then each grid: the field
         * and the source scattered once for both precisions */
        double single_s[2][2] = {{0, 0}, {0, 0}}; /* per precision: wall, kernel */
        int want[2] = {0, 0};
        for (int prec = 0; prec < 2; prec++) {
            want[prec] = bench_wants_precision(run, prec ? "fp64" : "fp32");
            const clphys_lqcd_dslash_params prm = {
                .precision = (clphys_precision)prec, .reconstruct = 12, .kappa = 0.125};
            if (want[prec]) want[prec] = single_hop(run, c, &g, &prm, in, out[prec], single_s[prec]);
        }
        for (int gi = 0; gi < ngrid && (want[0] || want[1]); gi++) {
            clphys_lqcd_gauge_field loc = {{0}, 0, NULL};
            double *lin = NULL;
            ok = !clphys_lqcd_gauge_scatter(c, grids[gi], 0, rank == 0 ? &g : NULL, &loc);
            if (ok) ok = (lin = malloc(sizeof(double) * 24 * loc.volume)) != NULL;
            ok = all_ok(c, ok);
            if (ok) ok = !clphys_lqcd_spinor_scatter(c, grids[gi], d, 0, in, lin);
            if (!ok) bench_fail(run, "lqcd_dslash_mpi", "scatter", clphys_last_error(NULL));
            for (int prec = 0; prec < 2 && ok; prec++) {
                const clphys_lqcd_dslash_params prm = {
                    .precision = (clphys_precision)prec, .reconstruct = 12, .kappa = 0.125};
                if (want[prec]) dslash_grid(run, c, grids[gi], d, &loc, lin, &prm, out[prec], single_s[prec], &net);
            }
            clphys_lqcd_gauge_destroy(&loc);
            free(lin);
        }
        free(in), free(out[0]), free(out[1]);
        clphys_lqcd_gauge_destroy(&g);
    }
    return 0;
}

/* A smooth field (U = reunitarize(1 + 0.35 R)), so that the solve takes a
 * realistic number of iterations (as bench/lqcd.c). */
static void smooth_field(clphys_lqcd_gauge_field *g, uint64_t seed)
{
    clphys_lqcd_gauge_hot(g, seed);
    for (size_t l = 0; l < g->volume * 4; l++)
        for (int k = 0; k < 9; k++) {
            g->u[l * 18 + 2 * k] = 0.35 * g->u[l * 18 + 2 * k] + (k % 4 == 0);
            g->u[l * 18 + 2 * k + 1] *= 0.35;
        }
    clphys_lqcd_gauge_reunitarize(g);
}

/* Time to solution, host b to host x (the largest over ranks), of one
 * solver plan: median over the repetitions after a warm-up. */
static int solve_timed(bench_run *run, MPI_Comm c, clphys_lqcd_dslash_plan *p64, clphys_lqcd_dslash_plan *p32,
                       const clphys_lqcd_solver_params *prm, const double *b, double *x, clphys_lqcd_solver_result *res,
                       double *t_med)
{
    clphys_lqcd_solver_plan *sp = NULL;
    const int rep = run->repeat < 5 ? run->repeat : 5;
    double t[5];
    int ok = !clphys_lqcd_solver_plan_create(p64, p32, prm, &sp) && !clphys_lqcd_solver_solve(sp, b, x, res);
    for (int i = 0; i < rep && ok; i++) {
        if (c != MPI_COMM_NULL) MPI_Barrier(c);
        ok = !clphys_lqcd_solver_solve(sp, b, x, res);
        t[i] = c != MPI_COMM_NULL ? max_over(c, res->seconds) : res->seconds;
    }
    clphys_lqcd_solver_plan_destroy(sp);
    if (ok) *t_med = ref_median(t, rep);
    return ok;
}

int bench_lqcd_solver_mpi(bench_run *run)
{
    MPI_Comm c;
    int rank, size, d[4], grids[2][4];
    if (!bench_mpi_begin("lqcd_solver_mpi", &c, &rank, &size)) return 0;
    if (!bench_wants_precision(run, "fp64") || !run->dev->fp64) return 0;
    if (run->size > 0)
        bench_lqcd_sized_dims(run->size, 2 * size, 2 * size, d);
    else
        set_dims(d, run->quick ? 8 : 32, run->quick ? 8 : 32);
    const int ngrid = grids_of(size, grids);
    const size_t V = (size_t)d[0] * d[1] * d[2] * d[3];
    const double kappa = 0.122, tol = 1e-10;
    const int gpus = bench_mpi_devices(run, c);
    clphys_lqcd_gauge_field g = {{0}, 0, NULL};
    double *b = NULL, *x = NULL;
    char lat[32];
    dims_str(d, lat, sizeof lat);
    int ok = 1;
    if (rank == 0) {
        ok = !clphys_lqcd_gauge_create(d, &g);
        if (ok) smooth_field(&g, 777);
        b = malloc(sizeof(double) * 24 * V), x = malloc(sizeof(double) * 24 * V);
        ok = ok && b && x;
        if (ok) fill(b, 24 * V, 4242);
    }
    if (!all_ok(c, ok)) {
        bench_fail(run, "lqcd_solver_mpi", lat, "out of memory");
        goto out;
    }
    for (int mixed = 0; mixed < 2; mixed++) {
        clphys_lqcd_dslash_params p64 = {.precision = CLPHYS_FP64, .reconstruct = 12, .kappa = kappa}, p32 = p64;
        p32.precision = CLPHYS_FP32;
        const clphys_lqcd_solver_params prm = {
            .kind = CLPHYS_LQCD_SOLVER_CGNR, .tol = tol, .max_iter = 20000, .mixed = mixed};
        /* one rank */
        double single_s = 0;
        int single_it = 0;
        ok = 1;
        if (rank == 0) {
            clphys_lqcd_dslash_plan *s64 = NULL, *s32 = NULL;
            clphys_lqcd_solver_result res;
            ok = !clphys_lqcd_dslash_plan_create(run->ctx, &g, &p64, &s64) &&
                 (!mixed || !clphys_lqcd_dslash_plan_create(run->ctx, &g, &p32, &s32)) &&
                 solve_timed(run, MPI_COMM_NULL, s64, s32, &prm, b, x, &res, &single_s);
            single_it = res.iterations;
            if (!ok) bench_fail(run, "lqcd_solver_mpi", "single rank", clphys_last_error(run->ctx));
            clphys_lqcd_dslash_plan_destroy(s64);
            clphys_lqcd_dslash_plan_destroy(s32);
        }
        bench_mpi_quiet_barrier(c);
        MPI_Bcast(&single_s, 1, MPI_DOUBLE, 0, c);
        MPI_Bcast(&single_it, 1, MPI_INT, 0, c);
        if (!all_ok(c, ok)) continue;
        for (int gi = 0; gi < ngrid; gi++) {
            char gr[32], what[96];
            dims_str(grids[gi], gr, sizeof gr);
            snprintf(what, sizeof what, "%s %s grid %s", lat, mixed ? "mixed" : "fp64", gr);
            clphys_lqcd_gauge_field loc = {{0}, 0, NULL};
            clphys_lqcd_dslash_plan *d64 = NULL, *d32 = NULL;
            clphys_lqcd_solver_result res = {0};
            double t = 0, *lb = NULL, *lx = NULL;
            /* collective calls return one status on every rank, so ok
             * stays the same everywhere between the all_ok calls */
            ok = !clphys_lqcd_gauge_scatter(c, grids[gi], 0, rank == 0 ? &g : NULL, &loc);
            if (ok) {
                lb = malloc(sizeof(double) * 24 * loc.volume), lx = malloc(sizeof(double) * 24 * loc.volume);
                ok = lb && lx;
            }
            ok = all_ok(c, ok);
            if (ok) ok = !clphys_lqcd_spinor_scatter(c, grids[gi], d, 0, b, lb);
            if (ok) ok = !clphys_lqcd_dslash_plan_create_mpi(c, grids[gi], run->ctx, &loc, &p64, &d64);
            if (ok && mixed) ok = !clphys_lqcd_dslash_plan_create_mpi(c, grids[gi], run->ctx, &loc, &p32, &d32);
            if (ok) ok = solve_timed(run, c, d64, d32, &prm, lb, lx, &res, &t);
            ok = all_ok(c, ok);
            if (!ok)
                bench_fail(run, "lqcd_solver_mpi", what, clphys_last_error(run->ctx));
            else {
                const bench_scaling sc = {.gpus = gpus,
                                          .ranks = size,
                                          .weak = 0,
                                          .n_per_device = (long long)loc.volume,
                                          .baseline_s = single_s,
                                          .step_s = t,
                                          .exchange_s = -1,
                                          .exchange_floor_s = -1};
                bench_row r;
                const int at =
                    bench_scaling_row(&r, &sc, "lqcd_solver_mpi", mixed ? "mixed" : "fp64", (long long)V,
                                      run->repeat < 5 ? run->repeat : 5, "eo-cgnr%s-%s", mixed ? "-mixed" : "", gr);
                r.kernel_s_median = r.kernel_s_min = r.total_s_median = t;
                snprintf(r.params + at, sizeof r.params - at,
                         ",\"lattice\":\"%s\",\"grid\":\"%s\",\"kappa\":%g,\"tol\":%g,\"iterations\":%d,"
                         "\"restarts\":%d,\"single_rank_iterations\":%d,\"single_s\":%.4g,\"overhead\":%.3f,"
                         "\"inner\":\"%s\"}",
                         lat, gr, kappa, tol, res.iterations, res.restarts, single_it, single_s,
                         single_s > 0 ? t / single_s - 1 : 0, mixed ? "fp32 recon-12" : "fp64 recon-12");
                r.rate = 1 / t;
                snprintf(r.rate_unit, sizeof r.rate_unit, "solves/s");
                r.gflops = res.gflops;
                snprintf(r.flops_convention, sizeof r.flops_convention, "1368 per site per D-equivalent application");
                bench_set_fraction(run, &r, mixed ? "fma_fp32_flops" : "fma_fp64_flops", r.gflops * 1e9);
                r.max_rel_error = res.rel_residual;
                r.verified = res.rel_residual <= tol && res.iterations == single_it;
                snprintf(r.note, sizeof r.note,
                         "time to solution, host b to host x, the largest over ranks; verified: converged and the "
                         "single-rank iteration count");
                bench_add_row(run, &r);
            }
            clphys_lqcd_dslash_plan_destroy(d64);
            clphys_lqcd_dslash_plan_destroy(d32);
            clphys_lqcd_gauge_destroy(&loc);
            free(lb), free(lx);
        }
    }
out:
    free(b), free(x);
    clphys_lqcd_gauge_destroy(&g);
    return 0;
}
