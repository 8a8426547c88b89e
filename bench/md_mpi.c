/* md_mpi.c — bench entry md_mpi: LAMMPS in.lj (fcc 0.8442, r_cut 2.5, skin
 * 0.3, rebuild every 20 steps, no check, dt 0.005, T 1.44) over MPI ranks
 * by spatial decomposition (clphys_md_mpi.h), under an MPI launcher
 * (`mpirun -np P clphys bench --path md_mpi`; without one it says so and
 * adds no row), one device per rank, the plan's default grid
 * (MPI_Dims_create's largest factor along z).  Rows in the
 * scaling schema (scaling.h), fp32 and fp64:
 *   strong  N atoms in all (GPU 32,000, 256,000, 2,048,000; quick or CPU
 *           4,000 and 32,000; --size N: N), baseline = the single-rank
 *           clphys_md_plan on the same N on rank 0's device;
 *   weak    n atoms per device (GPU 1,048,576 = 64^3 cells; quick or CPU
 *           4,000; --size N: N), the lattice of P such blocks, baseline =
 *           one block on one device.
 * rate: wall-clock steps/s of the distributed run as a user gets it (the
 * median over `repeat` timed runs of `steps` steps, each the slowest rank's
 * time); the baseline measured in the same run on rank 0 while the other
 * ranks wait (sleeping, so that a CPU device keeps its cores).  Then one run
 * with the plan's timing on (each phase waited for: clphys_md_mpi_timing)
 * gives the split per step (the largest over the ranks): force, neighbour
 * build, integration, ghost exchange (its section; its messages; the wait
 * not hidden by device work), migration.  The row's exchange_s: the
 * messages plus the copies timed at their size.
 * The exchange's floor: per cut dimension the device-to-host copy of the
 * positions both its swaps send, the network (clphys_mpi_measure_network:
 * latency + bytes / bandwidth) and the host-to-device copy of those
 * received, the copies timed on this device at the run's mean size per
 * dimension, from and to page-locked host memory as the exchange stages
 * them.
 * Verified: strong, fp64: the final thermo row equals the baseline's (1e-8
 * relative); fp32 (whose trajectories part chaotically within the run):
 * the step-0 row equals the baseline's (1e-5) and the total energy drifts
 * less than 1e-2; weak, the step-0 potential energy
 * per atom equals the baseline block's (fp64 1e-10, fp32 1e-5) and the
 * total energy drifts less than 1e-2.  On CPU devices LAMMPS (its fastest
 * installed configuration, P threads or ranks) runs on in.lj beside it
 * (bench/peers/lammps_lj.py). */
#include "bench.h"
#include "bench_mpi.h"
#include "md_peers.h"
#include "datadir.h"
#include "scaling.h"

#include "clphys_md_mpi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARM 10

typedef struct {
    MPI_Comm comm;
    int P, rank, k, gpus, grid[3];
    clphys_network_limits net;
} md_env;

/* fcc at density rho with m[0] x m[1] x m[2] unit cells (LAMMPS `lattice
 * fcc`: 4 atoms per cell), velocities Maxwell-Boltzmann at temp from seed
 * (Box-Muller on ref_uniform), zero total momentum, scaled to exactly temp
 * (3N - 3 degrees of freedom), mass 1: clphys_md_fcc on a box that need not
 * be a cube. */
static int fcc_box(const int m[3], double rho, double temp, uint64_t seed, clphys_md_system *s)
{
    memset(s, 0, sizeof *s);
    const size_t n = 4 * (size_t)m[0] * m[1] * m[2];
    const double a = cbrt(4.0 / rho);
    static const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
    s->n = n, s->ntypes = 1;
    s->type_mass = calloc(2, sizeof(double));
    s->id = malloc(n * sizeof *s->id), s->type = malloc(n * sizeof *s->type);
    s->x = malloc(3 * n * sizeof *s->x), s->v = malloc(3 * n * sizeof *s->v);
    s->image = calloc(3 * n, sizeof *s->image);
    if (!s->type_mass || !s->id || !s->type || !s->x || !s->v || !s->image) {
        clphys_md_system_destroy(s);
        return -1;
    }
    s->type_mass[1] = 1;
    for (int c = 0; c < 3; c++) s->lo[c] = 0, s->hi[c] = m[c] * a;
    uint64_t st = seed;
    double p[3] = {0, 0, 0}, ke2 = 0;
    size_t i = 0;
    for (int z = 0; z < m[2]; z++)
        for (int y = 0; y < m[1]; y++)
            for (int x = 0; x < m[0]; x++)
                for (int b = 0; b < 4; b++, i++) {
                    const int cell[3] = {x, y, z};
                    s->id[i] = (long long)i + 1, s->type[i] = 1;
                    for (int c = 0; c < 3; c++) {
                        s->x[3 * i + c] = (cell[c] + basis[b][c]) * a;
                        double u1 = ref_uniform(&st), u2 = ref_uniform(&st);
                        s->v[3 * i + c] = sqrt(-2 * log(1 - u1)) * cos(6.283185307179586 * u2);
                        p[c] += s->v[3 * i + c];
                    }
                }
    for (i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) s->v[3 * i + c] -= p[c] / n, ke2 += s->v[3 * i + c] * s->v[3 * i + c];
    const double scale = n > 1 && ke2 > 0 ? sqrt(temp * (3.0 * n - 3) / ke2) : 0;
    for (i = 0; i < 3 * n; i++) s->v[i] *= scale;
    return 0;
}

static clphys_md_params in_lj(int fp64)
{
    clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = fp64 ? CLPHYS_FP64 : CLPHYS_FP32},
                          .dt = 0.005,
                          .neigh_every = 20,
                          .neigh_check = 0};
    return p;
}

/* The single-rank plan's steps one at a time, each waited for: the median
 * step without a rebuild and the mean of those with one. */
typedef struct {
    double plain_s, rebuild_s;
    int rebuilds;
} base_split;

/* The single-rank plan on rank 0: per-step wall time (median of reps runs
 * of steps steps), thermo at the start and after WARM + (reps + 1) steps;
 * the last steps run one at a time for *bs. */
static clphys_status baseline(bench_run *run, const clphys_md_system *s, int fp64, int steps, int reps, double *step_s,
                              clphys_md_thermo t[2], base_split *bs)
{
    clphys_md_params p = in_lj(fp64);
    clphys_md_plan *pl = NULL;
    double *v = malloc((size_t)reps * sizeof *v);
    clphys_status st = v ? clphys_md_plan_create(run->ctx, &p, s, &pl) : CLPHYS_ERR_OUT_OF_MEMORY;
    if (!st) st = clphys_md_thermo_now(pl, &t[0]);
    if (!st) st = clphys_md_run(pl, WARM, NULL);
    for (int r = 0; !st && r < reps; r++) {
        /* no span: the run asks for no kernel times, as the distributed
         * one, so both take the queue without profiling (cp_untimed_begin) */
        double t0 = bench_now();
        st = clphys_md_run(pl, steps, NULL);
        v[r] = (bench_now() - t0) / steps;
    }
    /* as the distributed run's timed split: one step at a time */
    double *one = st ? NULL : malloc((size_t)steps * sizeof *one), sum_b = 0;
    int np = 0;
    memset(bs, 0, sizeof *bs);
    if (!st && !one) st = CLPHYS_ERR_OUT_OF_MEMORY;
    for (int k = 0; !st && k < steps; k++) {
        const int b0 = clphys_md_rebuilds(pl);
        double t0 = bench_now();
        st = clphys_md_run(pl, 1, NULL);
        if (!st && clFinish(clphys_context_queue(run->ctx)) != CL_SUCCESS) st = CLPHYS_ERR_OPENCL;
        const double d = bench_now() - t0;
        if (clphys_md_rebuilds(pl) > b0)
            sum_b += d, bs->rebuilds++;
        else
            one[np++] = d;
    }
    if (!st && np) bs->plain_s = ref_median(one, np);
    if (!st && bs->rebuilds) bs->rebuild_s = sum_b / bs->rebuilds;
    free(one);
    if (!st) st = clphys_md_thermo_now(pl, &t[1]);
    if (!st) *step_s = ref_median(v, reps);
    clphys_md_plan_destroy(pl);
    free(v);
    return st;
}

/* Median seconds of a blocking copy of `bytes` between page-locked host
 * memory (a mapped CL_MEM_ALLOC_HOST_PTR buffer, as the exchange stages)
 * and the device, each way: d2h, h2d; 0 when it cannot be measured. */
static void copy_times(bench_run *run, size_t bytes, double *d2h, double *h2d)
{
    *d2h = *h2d = 0;
    if (!bytes) return;
    cl_int err = CL_SUCCESS, e2 = CL_SUCCESS;
    cl_context c = clphys_context_cl_context(run->ctx);
    cl_command_queue q = clphys_context_queue(run->ctx);
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, bytes, NULL, &err);
    cl_mem pin = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &e2);
    void *h = NULL;
    if (err == CL_SUCCESS && e2 == CL_SUCCESS)
        h = clEnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &err);
    double a[9], b[9];
    for (int r = 0; h && err == CL_SUCCESS && r < 9; r++) {
        double t0 = bench_now();
        err = clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, h, 0, NULL, NULL);
        double t1 = bench_now();
        if (err == CL_SUCCESS) err = clEnqueueWriteBuffer(q, m, CL_TRUE, 0, bytes, h, 0, NULL, NULL);
        a[r] = t1 - t0, b[r] = bench_now() - t1;
    }
    if (h && err == CL_SUCCESS) *d2h = ref_median(a, 9), *h2d = ref_median(b, 9);
    if (h) clEnqueueUnmapMemObject(q, pin, h, 0, NULL, NULL), clFinish(q);
    if (m) clReleaseMemObject(m);
    if (pin) clReleaseMemObject(pin);
}

/* The split of one instrumented run (largest over the ranks) and the
 * exchange's floor from this rank's copies and the network probe. */
typedef struct {
    clphys_md_mpi_timing tm;
    double floor_s, d2h_s, h2d_s, msg_bytes;
    double ghosts, owned;
} split;

static void one_case(bench_run *run, md_env *e, int fp64, int weak, const int cells[3], const int base_cells[3])
{
    const int steps = run->quick || !run->dev->is_gpu ? 20 : 100;
    const int reps = run->repeat > 0 ? run->repeat : 3;
    clphys_md_system all, base;
    memset(&all, 0, sizeof all), memset(&base, 0, sizeof base);
    const long long N = 4LL * cells[0] * cells[1] * cells[2], nb = 4LL * base_cells[0] * base_cells[1] * base_cells[2];
    char what[96];
    snprintf(what, sizeof what, "%s %s N=%lld", fp64 ? "fp64" : "fp32", weak ? "weak" : "strong", N);
    clphys_status st = CLPHYS_SUCCESS;
    double bstep = 0;
    clphys_md_thermo bt[2];
    base_split bs;
    memset(bt, 0, sizeof bt), memset(&bs, 0, sizeof bs);
    if (e->rank == 0) {
        if (fcc_box(cells, 0.8442, 1.44, 87287, &all) || fcc_box(base_cells, 0.8442, 1.44, 87287, &base))
            st = CLPHYS_ERR_OUT_OF_MEMORY;
        if (!st) st = baseline(run, &base, fp64, steps, reps, &bstep, bt, &bs);
        if (st) bench_fail(run, "md_mpi", what, clphys_last_error(run->ctx));
        clphys_md_system_destroy(&base);
    }
    bench_mpi_quiet_barrier(e->comm);
    if (clphys_mpi_agree(e->comm, NULL, st)) {
        clphys_md_system_destroy(&all);
        return;
    }
    clphys_md_params p = in_lj(fp64);
    clphys_md_mpi *pl = NULL;
    clphys_md_thermo t[2];
    double *v = malloc((size_t)reps * sizeof *v);
    st = v ? CLPHYS_SUCCESS : CLPHYS_ERR_OUT_OF_MEMORY;
    st = clphys_mpi_agree(e->comm, NULL, st);
    /* strong rows on the plan's default grid; the weak lattice is laid out
     * on e->grid, one block per subdomain */
    int g[3] = {0, 0, 0};
    if (weak) memcpy(g, e->grid, sizeof g);
    if (!st) st = clphys_md_mpi_create(e->comm, run->ctx, &p, g, 0, e->rank == 0 ? &all : NULL, &pl);
    if (!st) clphys_md_mpi_info(pl, g, NULL, NULL, NULL);
    clphys_md_system_destroy(&all);
    if (!st) st = clphys_md_mpi_thermo(pl, &t[0]);
    if (!st) st = clphys_md_mpi_run(pl, WARM, NULL);
    for (int r = 0; !st && r < reps; r++) {
        MPI_Barrier(e->comm);
        double t0 = bench_now();
        st = clphys_md_mpi_run(pl, steps, NULL);
        double dt = (bench_now() - t0) / steps;
        MPI_Allreduce(&dt, &v[r], 1, MPI_DOUBLE, MPI_MAX, e->comm);
    }
    split sp;
    memset(&sp, 0, sizeof sp);
    if (!st) st = clphys_md_mpi_run(pl, steps, &sp.tm);
    if (!st) st = clphys_md_mpi_thermo(pl, &t[1]);
    const char *variant = clphys_md_mpi_info(pl, NULL, NULL, NULL, NULL);
    char lj[192];
    snprintf(lj, sizeof lj, "%s", variant);
    if (!st) {
        size_t own = 0, gh = 0;
        clphys_md_mpi_info(pl, NULL, NULL, &own, &gh);
        /* per cut dimension one copy each way of both swaps' positions and
         * two messages in flight (md_ghost_exchange) */
        int ndim = (g[0] > 1) + (g[1] > 1) + (g[2] > 1);
        double per_step = sp.tm.steps ? sp.tm.ghost_bytes / sp.tm.steps : 0;
        sp.msg_bytes = ndim ? per_step / ndim : 0;
        copy_times(run, (size_t)sp.msg_bytes, &sp.d2h_s, &sp.h2d_s);
        const double bw = e->net.bandwidth_bytes_per_s;
        sp.floor_s = ndim * (sp.d2h_s + sp.h2d_s + e->net.latency_s + (bw > 0 ? sp.msg_bytes / bw : 0));
        sp.ghosts = (double)gh, sp.owned = (double)own;
        double m[19] = {sp.tm.force_s,
                        sp.tm.integrate_s,
                        sp.tm.neighbor_s,
                        sp.tm.exchange_s,
                        sp.tm.exposed_s,
                        sp.tm.migrate_s,
                        sp.tm.ghost_bytes,
                        sp.floor_s,
                        sp.d2h_s,
                        sp.h2d_s,
                        sp.msg_bytes,
                        sp.ghosts,
                        sp.owned,
                        sp.tm.messages_s,
                        sp.tm.download_s,
                        sp.tm.upload_s,
                        sp.tm.rebuilds,
                        (double)sp.tm.device_waits,
                        sp.tm.neighbor_kernel_s};
        MPI_Allreduce(MPI_IN_PLACE, m, 19, MPI_DOUBLE, MPI_MAX, e->comm);
        sp.tm.force_s = m[0], sp.tm.integrate_s = m[1], sp.tm.neighbor_s = m[2], sp.tm.exchange_s = m[3];
        sp.tm.exposed_s = m[4], sp.tm.migrate_s = m[5], sp.tm.ghost_bytes = m[6], sp.floor_s = m[7];
        sp.d2h_s = m[8], sp.h2d_s = m[9], sp.msg_bytes = m[10], sp.ghosts = m[11], sp.owned = m[12];
        sp.tm.messages_s = m[13], sp.tm.download_s = m[14], sp.tm.upload_s = m[15];
        sp.tm.rebuilds = (int)m[16], sp.tm.device_waits = (long long)m[17], sp.tm.neighbor_kernel_s = m[18];
    }
    if (st) {
        if (e->rank == 0) bench_fail(run, "md_mpi", what, clphys_last_error(NULL));
    } else if (e->rank == 0) {
        const double step = ref_median(v, reps), S = sp.tm.steps > 0 ? (double)sp.tm.steps : 1;
        /* the exchange: the run's messages (posted to completed) and the
         * copies timed at their size; tm.exchange_s also holds the pack and
         * unpack kernels and, overlapped, the interior rows' forces */
        const int ndim = (g[0] > 1) + (g[1] > 1) + (g[2] > 1);
        const double exch = sp.tm.messages_s / S + ndim * (sp.d2h_s + sp.h2d_s);
        bench_scaling sc = {e->gpus, e->P, weak, weak ? nb : N / e->gpus, bstep, step, exch, sp.floor_s};
        bench_row r;
        const int at =
            bench_scaling_row(&r, &sc, "md_mpi", fp64 ? "fp64" : "fp32", N, reps, "in.lj-%s", weak ? "weak" : "strong");
        r.total_s_median = step;
        r.rate = step > 0 ? 1 / step : 0;
        snprintf(r.rate_unit, sizeof r.rate_unit, "steps/s");
        snprintf(r.flops_convention, sizeof r.flops_convention, "none");
        snprintf(r.case_key, sizeof r.case_key, "%s", weak ? "weak" : "strong");
        double err;
        if (weak) {
            double drift = fabs(t[1].etotal - t[0].etotal) / fabs(t[0].etotal);
            err = fmax(fabs(t[0].pe - bt[0].pe) / fabs(bt[0].pe), 0);
            r.verified = err <= (fp64 ? 1e-10 : 1e-5) && drift < 1e-2;
        } else if (fp64) {
            const double a[5] = {t[1].temp, t[1].pe, t[1].ke, t[1].etotal, t[1].press};
            const double b[5] = {bt[1].temp, bt[1].pe, bt[1].ke, bt[1].etotal, bt[1].press};
            err = 0;
            for (int c = 0; c < 5; c++) err = fmax(err, fabs(a[c] - b[c]) / fmax(fabs(b[c]), 1e-300));
            r.verified = err <= 1e-8 && t[1].step == bt[1].step;
        } else {
            /* fp32 trajectories part chaotically within these steps (the
             * single rank's own fp32 rows differ by 1e-3 from run to run
             * order), so the final row proves nothing: the step-0 row (the
             * same positions, forces summed in another order) and the
             * energy drift */
            const double a[4] = {t[0].temp, t[0].pe, t[0].etotal, t[0].press};
            const double b[4] = {bt[0].temp, bt[0].pe, bt[0].etotal, bt[0].press};
            err = 0;
            for (int c = 0; c < 4; c++) err = fmax(err, fabs(a[c] - b[c]) / fmax(fabs(b[c]), 1e-300));
            double drift = fabs(t[1].etotal - t[0].etotal) / fabs(t[0].etotal);
            r.verified = err <= 1e-5 && drift < 1e-2 && t[1].step == bt[1].step;
        }
        r.max_rel_error = err;
        snprintf(
            r.params + at, sizeof r.params - at,
            ",\"grid\":\"%dx%dx%d\",\"ranks_per_device\":%d,\"steps\":%d,\"baseline_atoms\":%lld,"
            "\"baseline_steps_per_s\":%.6g,\"force_s\":%.6g,\"neighbor_s\":%.6g,\"integrate_s\":%.6g,"
            "\"exposed_s\":%.6g,\"messages_s\":%.6g,\"exchange_section_s\":%.6g,\"migrate_s\":%.6g,\"download_s\":%.6g,"
            "\"upload_s\":%.6g,\"rebuild_s\":%.6g,\"rebuild_kernels_s\":%.6g,\"rebuilds_in_split\":%d,"
            "\"device_waits_per_step\":%.4g,\"baseline_plain_step_s\":%.6g,\"baseline_rebuild_step_s\":%.6g,"
            "\"baseline_rebuilds_in_split\":%d,"
            "\"split_is\":\"per step, each phase waited for, largest over the ranks; rebuild_s: one rebuild "
            "(download + migrate + upload + neighbor), rebuild_kernels_s: the sort's and list's kernels in it; "
            "baseline_*_step_s: the single-rank plan's steps one at a time, waited "
            "for\",\"ghost_bytes_per_step\":%.6g,\"bytes_per_dimension\":%.6g,\"d2h_s\":%.6g,\"h2d_s\":%.6g,"
            "\"latency_s\":%.6g,\"bandwidth_bytes_per_s\":%.6g,\"ghosts_max\":%.0f,\"owned_max\":%.0f,"
            "\"rebuilds_since_create\":%d,\"lj\":\"%s\",\"verified_by\":\"%s\"}",
            g[0], g[1], g[2], e->k, steps, nb, bstep > 0 ? 1 / bstep : 0, sp.tm.force_s / S, sp.tm.neighbor_s / S,
            sp.tm.integrate_s / S, sp.tm.exposed_s / S, sp.tm.messages_s / S, sp.tm.exchange_s / S, sp.tm.migrate_s / S,
            sp.tm.download_s / S, sp.tm.upload_s / S,
            sp.tm.rebuilds ? (sp.tm.download_s + sp.tm.migrate_s + sp.tm.upload_s + sp.tm.neighbor_s) / sp.tm.rebuilds
                           : 0,
            sp.tm.rebuilds ? sp.tm.neighbor_kernel_s / sp.tm.rebuilds : 0, sp.tm.rebuilds,
            (double)sp.tm.device_waits / S, bs.plain_s, bs.rebuild_s, bs.rebuilds, sp.tm.ghost_bytes / S, sp.msg_bytes,
            sp.d2h_s, sp.h2d_s, e->net.latency_s, e->net.bandwidth_bytes_per_s, sp.ghosts, sp.owned,
            clphys_md_mpi_rebuilds(pl), lj,
            weak   ? "step-0 PE per atom vs the baseline block; energy drift < 1e-2"
            : fp64 ? "final thermo row vs the single-rank baseline"
                   : "step-0 thermo row vs the single-rank baseline (1e-5); energy drift < 1e-2");
        snprintf(r.note, sizeof r.note,
                 "%s P %d grid %dx%dx%d: %.4g ms/step vs one device %.4g ms (%s %.3g); exchange %.3g ms (floor %.3g)",
                 weak ? "weak" : "strong", e->P, g[0], g[1], g[2], 1e3 * step, 1e3 * bstep,
                 weak ? "efficiency" : "speedup", weak ? bench_scaling_efficiency(&sc) : bench_scaling_speedup(&sc),
                 1e3 * exch, 1e3 * sp.floor_s);
        bench_add_row(run, &r);
    }
    clphys_md_mpi_destroy(pl);
    free(v);
}

int bench_md_mpi(bench_run *run)
{
    md_env e;
    memset(&e, 0, sizeof e);
    if (!bench_mpi_begin("md_mpi", &e.comm, &e.rank, &e.P)) return 0;
    bench_mpi_sharing(run, e.comm, &e.k, &e.gpus);
    int f[3] = {0, 0, 0}; /* the weak rows' grid: MPI_Dims_create's factors, the largest along z */
    MPI_Dims_create(e.P, 3, f);
    e.grid[0] = f[2], e.grid[1] = f[1], e.grid[2] = f[0];
    clphys_status st = clphys_mpi_measure_network(e.comm, 1 << 20, 20, &e.net);
    if (st) {
        if (e.rank == 0) bench_fail(run, "md_mpi", "network probe", clphys_last_error(NULL));
        return 1;
    }
    if (e.rank == 0)
        fprintf(stderr, "  md_mpi: %d ranks (grid %dx%dx%d), %d per device; latency %.3g us, bandwidth %.3g GB/s\n",
                e.P, e.grid[0], e.grid[1], e.grid[2], e.k, 1e6 * e.net.latency_s, 1e-9 * e.net.bandwidth_bytes_per_s);
    const int cpu = run->quick || !run->dev->is_gpu;
    long long strong[3] = {32000, 256000, 2048000}, weak = 1048576;
    int ns = 3;
    if (cpu) strong[0] = 4000, strong[1] = 32000, ns = 2, weak = 4000;
    if (run->size > 0) strong[0] = run->size, ns = 1, weak = run->size;
    for (int f = 0; f < 2; f++) {
        if (!bench_wants_precision(run, f ? "fp64" : "fp32")) continue;
        for (int s = 0; s < ns; s++) {
            int m = bench_fcc_cells(strong[s]), c[3] = {m, m, m};
            one_case(run, &e, f, 0, c, c);
        }
        int m = bench_fcc_cells(weak), b[3] = {m, m, m}, c[3] = {m * e.grid[0], m * e.grid[1], m * e.grid[2]};
        one_case(run, &e, f, 1, c, b);
    }
    /* LAMMPS on in.lj (32,000 atoms) on the same cores, P threads or ranks */
    if (!run->dev->is_gpu && e.rank == 0) {
        const char *dir = bench_data_dir();
        char in[512], status[1024];
        snprintf(in, sizeof in, "%s/md/in.lj", dir);
        md_peer_lammps(run, "md_mpi", in, e.P, -6.773368053, status, sizeof status);
        if (status[0]) fprintf(stderr, "  md_mpi: LAMMPS not run: %s\n", status);
    }
    bench_mpi_quiet_barrier(e.comm);
    return 0;
}
