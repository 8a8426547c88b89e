/* test_lqcd_mpi.c — the lattice path over MPI ranks (host/lqcd/halo.c,
 * gauge_mpi.c), under mpiexec with 2 ranks (process grids 1x1x1x2, 1x1x2x1,
 * 2x1x1x1) and 4 (1x1x2x2, 2x1x1x2, 1x1x1x4), on a 4^3 x 8 lattice; every
 * rank holds the same random inputs (the seed of rank 0) and its own
 * context:
 *  - the distributed operators (full-lattice H and D, H_eo, H_oe, the
 *    even-odd M, the gamma5-folded hops of M^+) equal the single-rank ones
 *    on the same device to 1e-14 in fp64 (2e-6 in fp32), reconstruct-12
 *    and -18, SoA and the device's layout, the faces' copies on a queue of
 *    their own and on the context's, with a random boundary per direction
 *    (antiperiodic, periodic or a U(1) phase, applied at the lattice's ends
 *    whatever the grid), and the CPU reference to 1e-12; outputs poisoned
 *    first;
 *  - gamma5-hermiticity and gauge covariance of the distributed D;
 *  - CGNR and BiCGStab, fp64 and mixed, distributed: the single-rank
 *    iteration count, the single-rank solution to 1e-8, the true residual
 *    of the gathered solution with the CPU reference <= 1.05 tol, with
 *    p,p,p,a and with antiperiodic x, y, z, t; the same result on every rank;
 *  - scatter / gather, the distributed plaquette and link trace against
 *    the single-rank ones, a NERSC file read on rank 0 and scattered;
 *  - the split timing of an application: every part measured, the halo
 *    bytes and messages of the face model;
 *  - failures give the same clear error on every rank: a grid that does not
 *    divide the lattice or does not match the ranks, a gauge file that
 *    fails its checksum, parameters that differ between ranks.
 * With --die (tests/mpi_rank_dies.py) rank 1 exits in the middle of the
 * exchanges, so that the launcher must end the job. */
#include "mpi_util.h"
#include "clphys_lqcd_mpi.h"
#include "host/lqcd/lqcd_internal.h"
#include "host/lqcd/lqcd_mpi_internal.h"
#include "host/lqcd/lqcd_su3.h"
#include "host/ref/lqcd_ref.h"

#include <complex.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static int rank, size;
static clphys_context *ctx;
static const int DIMS[4] = {4, 4, 4, 8};
#define GV (4 * 4 * 4 * 8)
#define PI 3.14159265358979323846

/* the process grids of this run's size */
static const int GRIDS2[3][4] = {{1, 1, 1, 2}, {1, 1, 2, 1}, {2, 1, 1, 1}};
static const int GRIDS4[3][4] = {{1, 1, 2, 2}, {2, 1, 1, 2}, {1, 1, 1, 4}};
static const int (*grids(int *n))[4]
{
    *n = 3;
    return size == 2 ? GRIDS2 : GRIDS4;
}

typedef struct {
    int grid[4], ld[4], coord[4];
    size_t lv;
} geo;

static geo geometry(const int grid[4])
{
    geo g;
    memcpy(g.grid, grid, sizeof g.grid);
    assert_int_equal(clphys_lqcd_grid_local(DIMS, grid, rank, g.ld, g.coord), CLPHYS_SUCCESS);
    g.lv = (size_t)g.ld[0] * g.ld[1] * g.ld[2] * g.ld[3];
    return g;
}

/* This rank's block of a whole-lattice array, per doubles per site (the
 * test's own copy, independent of clphys_lqcd_spinor_scatter). */
static void extract(const geo *g, const double *whole, double *part, size_t per)
{
    for (size_t l = 0; l < g->lv; l++) {
        int c[4];
        size_t r = l;
        for (int mu = 0; mu < 4; mu++)
            c[mu] = (int)(r % (size_t)g->ld[mu]) + g->coord[mu] * g->ld[mu], r /= (size_t)g->ld[mu];
        memcpy(part + l * per, whole + (size_t)lqcd_site(DIMS, c) * per, per * sizeof(double));
    }
}

static double max_all(double v)
{
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return v;
}

static double min_all(double v)
{
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    return v;
}

static void random_spinor(double *psi, size_t n, uint64_t *rng)
{
    for (size_t i = 0; i < 24 * n; i++) psi[i] = 2 * tu_uniform(rng) - 1;
}

/* A random boundary per direction; ph: the reference's phases. */
static void random_bc(uint64_t *rng, clphys_lqcd_dslash_params *p, double complex ph[4], char *name)
{
    name[0] = 0;
    for (int mu = 0; mu < 4; mu++) {
        const double u = tu_uniform(rng);
        p->bc[mu] = u < 0.3 ? CLPHYS_LQCD_BC_PERIODIC : u < 0.7 ? CLPHYS_LQCD_BC_ANTIPERIODIC : CLPHYS_LQCD_BC_PHASE;
        p->bc_phase_by_pi[mu] = p->bc[mu] == CLPHYS_LQCD_BC_PHASE ? 2 * tu_uniform(rng) - 1 : 0;
        ph[mu] = p->bc[mu] == CLPHYS_LQCD_BC_PERIODIC       ? 1
                 : p->bc[mu] == CLPHYS_LQCD_BC_ANTIPERIODIC ? -1
                                                            : cexp(I * PI * p->bc_phase_by_pi[mu]);
        char one[16];
        if (p->bc[mu] == CLPHYS_LQCD_BC_PHASE)
            snprintf(one, sizeof one, "%s%.2fpi", mu ? "," : "", p->bc_phase_by_pi[mu]);
        else
            snprintf(one, sizeof one, "%s%s", mu ? "," : "", p->bc[mu] == CLPHYS_LQCD_BC_PERIODIC ? "p" : "a");
        strcat(name, one);
    }
}

/* The single-rank plan of every rank: rank 0 builds the program first, the
 * others then find it in the disk cache (kernel builds dominate the time
 * of this test on PoCL). */
static clphys_lqcd_dslash_plan *single_plan(const clphys_lqcd_gauge_field *g, const clphys_lqcd_dslash_params *p)
{
    clphys_lqcd_dslash_plan *pl = NULL;
    if (rank) MPI_Barrier(MPI_COMM_WORLD);
    clphys_status st = clphys_lqcd_dslash_plan_create(ctx, g, p, &pl);
    if (!rank) MPI_Barrier(MPI_COMM_WORLD);
    if (st) fail_msg("single plan: %s", clphys_last_error(ctx));
    return pl;
}

static clphys_lqcd_dslash_plan *dist_plan(const int grid[4], const clphys_lqcd_gauge_field *local,
                                          const clphys_lqcd_dslash_params *p)
{
    clphys_lqcd_dslash_plan *pl = NULL;
    clphys_status st = clphys_lqcd_dslash_plan_create_mpi(MPI_COMM_WORLD, grid, ctx, local, p, &pl);
    if (st) fail_msg("distributed plan: %s", clphys_last_error(ctx));
    return pl;
}

/* op on host spinors of pl's lattice (n sites): out (zeroed outside the
 * output parity) = op in; g5 1/2: the gamma5-folded hops of M^+ (half
 * fields, even output).  Device outputs poisoned first. */
static void run_op(clphys_lqcd_dslash_plan *pl, int op, int g5, const double *in, double *out, size_t n)
{
    double *nan = malloc(sizeof(double) * 24 * n);
    tu_poison_f64(nan, 24 * n);
    const int half = g5 || op >= CLPHYS_LQCD_DSLASH_H_EO;
    /* parity of in and of out */
    const int pin = !half ? -1 : op == CLPHYS_LQCD_DSLASH_H_EO ? 1 : g5 == 2 ? 1 : 0;
    const int pout = !half ? -1 : op == CLPHYS_LQCD_DSLASH_H_OE || g5 == 1 ? 1 : 0;
    cl_mem a, b;
    assert_int_equal(clphys_lqcd_dslash_field_create(pl, half, &a), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_dslash_field_create(pl, half, &b), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_dslash_field_write(pl, a, pin, in), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_dslash_field_write(pl, b, pout, nan), CLPHYS_SUCCESS);
    clphys_status st;
    if (g5 == 1)
        st = lqcd_hop_g5(pl, b, a, NULL, 0, 1, 1, NULL); /* H_oe gamma5 in_e */
    else if (g5 == 2)
        st = lqcd_hop_g5(pl, b, a, a, -0.0144, 0, 2, NULL); /* in + a gamma5 H_eo in_o, x aliased as odd */
    else
        st = clphys_lqcd_dslash_apply(pl, (clphys_lqcd_dslash_op)op, b, a, NULL);
    if (st) fail_msg("apply: %s", clphys_last_error(ctx));
    memset(out, 0, sizeof(double) * 24 * n);
    assert_int_equal(clphys_lqcd_dslash_field_read(pl, b, pout, out), CLPHYS_SUCCESS);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    free(nan);
}

static const char *const OPS[7] = {"H", "D", "H_eo", "H_oe", "M", "H_oe g5in", "x+a g5 H_eo"};

/* Every op, distributed against single-rank on the same device and the
 * CPU reference (full-lattice H), on grid. */
static void check_ops(const int grid[4], clphys_precision prec, int recon, int layout, uint64_t stream)
{
    uint64_t rng = tu_rng_init(stream);
    geo G = geometry(grid);
    clphys_lqcd_gauge_field g, loc;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + stream);
    assert_int_equal(clphys_lqcd_gauge_scatter(MPI_COMM_WORLD, grid, 0, rank == 0 ? &g : NULL, &loc), CLPHYS_SUCCESS);
    clphys_lqcd_dslash_params p = {
        .precision = prec, .reconstruct = recon, .kappa = 0.12, .no_tune = 1, .layout = layout};
    double complex ph[4];
    char bcname[64];
    random_bc(&rng, &p, ph, bcname);
    double *in = malloc(sizeof(double) * 24 * GV), *ref = malloc(sizeof(double) * 24 * GV),
           *lin = malloc(sizeof(double) * 24 * G.lv), *lref = malloc(sizeof(double) * 24 * G.lv),
           *lout = malloc(sizeof(double) * 24 * G.lv), *cpu = malloc(sizeof(double) * 24 * GV);
    random_spinor(in, GV, &rng);
    extract(&G, in, lin, 24);
    clphys_lqcd_dslash_plan *ps = single_plan(&g, &p);
    /* the faces between ranks of one host (host/lqcd/halo_node.c): in MPI's
     * messages on streams 100 and 200, through shared memory with host
     * copies on both sides on stream 201, straight between the devices and
     * the shared memory elsewhere (CI's ranks share one host) */
    if (stream == 100 || stream == 200) tu_setenv("CLPHYS_LQCD_NODE_STAGING", "0");
    if (stream == 201) tu_setenv("CLPHYS_LQCD_NODE_DIRECT", "0");
    clphys_lqcd_dslash_plan *pd = dist_plan(grid, &loc, &p);
    tu_env_restore();
    const char *way = stream == 100 || stream == 200 ? "messages" : stream == 201 ? "shared, host copies" : "shared";
    /* the other queue arrangement of the faces' copies than the device's own
     * (GPUs: a queue of their own, CPUs: the context's queue) on stream 101 */
    const int other = stream == 101;
    if (other) assert_int_equal(lqcd_halo_transfer_queue(pd, !clphys_context_device(ctx)->is_gpu), CLPHYS_SUCCESS);
    const double tol = prec == CLPHYS_FP64 ? 1e-14 : 2e-6;
    for (int op = 0; op < 7; op++) {
        const int g5 = op < 5 ? 0 : op - 4;
        run_op(ps, g5 ? 0 : op, g5, in, ref, GV);
        run_op(pd, g5 ? 0 : op, g5, lin, lout, G.lv);
        extract(&G, ref, lref, 24);
        const double e = max_all(tu_max_rel_err(lout, lref, 24 * G.lv, 1.0));
        if (rank == 0)
            print_message(
                "# grid %dx%dx%dx%d %s recon-%d %s%s, faces %s, bc %s %-12s distributed vs single rank: %.3g\n",
                grid[0], grid[1], grid[2], grid[3], prec ? "fp64" : "fp32", recon,
                layout == CLPHYS_LQCD_SOA ? "SoA" : "auto layout", other ? ", other copy queue" : "", way, bcname,
                OPS[op], e);
        assert_true(e < tol);
        if (op == 0) { /* and H against the CPU reference */
            lqcd_ref_hopping(DIMS, (const double complex *)g.u, (const double complex *)in, (double complex *)cpu, ph);
            extract(&G, cpu, lref, 24);
            const double ec = max_all(tu_max_rel_err(lout, lref, 24 * G.lv, 1.0));
            assert_true(ec < (prec == CLPHYS_FP64 ? 1e-12 : 2e-5));
        }
    }
    clphys_lqcd_dslash_plan_destroy(ps);
    clphys_lqcd_dslash_plan_destroy(pd);
    clphys_lqcd_gauge_destroy(&g);
    clphys_lqcd_gauge_destroy(&loc);
    free(in), free(ref), free(lin), free(lref), free(lout), free(cpu);
}

static void test_operators_fp64(void **state)
{
    (void)state;
    if (!clphys_context_device(ctx)->fp64) skip();
    int n;
    const int(*gr)[4] = grids(&n);
    /* the configurations of the solver tests: grid 1 in SoA with recon-12
     * (fewer programs to build: kernel builds are most of this test's time) */
    for (int i = 0; i < n; i++)
        check_ops(gr[i], CLPHYS_FP64, i == 1 ? 12 : 18, i == 1 ? CLPHYS_LQCD_SOA : 0, 100 + (uint64_t)i);
}

static void test_operators_fp32(void **state)
{
    (void)state;
    int n;
    const int(*gr)[4] = grids(&n);
    for (int i = 0; i < n; i++) check_ops(gr[i], CLPHYS_FP32, 12, i == 1 ? CLPHYS_LQCD_SOA : 0, 200 + (uint64_t)i);
}

static double complex dot_all(const double *a, const double *b, size_t n)
{
    double s[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        s[0] += a[2 * i] * b[2 * i] + a[2 * i + 1] * b[2 * i + 1];
        s[1] += a[2 * i] * b[2 * i + 1] - a[2 * i + 1] * b[2 * i];
    }
    MPI_Allreduce(MPI_IN_PLACE, s, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return s[0] + I * s[1];
}

static void gamma5_host(double *psi, size_t n)
{
    for (size_t x = 0; x < n; x++)
        for (int k = 12; k < 24; k++) psi[x * 24 + k] = -psi[x * 24 + k];
}

/* <chi, g5 D g5 psi> = <D chi, psi> with the distributed D and global sums;
 * then D[U^g](g psi) = g D[U] psi, U^g_mu(x) = g(x) U_mu(x) g(x+mu)^+. */
static void test_hermiticity_covariance(void **state)
{
    (void)state;
    const clphys_precision prec = clphys_context_device(ctx)->fp64 ? CLPHYS_FP64 : CLPHYS_FP32;
    int n;
    const int(*gr)[4] = grids(&n);
    const int *grid = gr[0];
    geo G = geometry(grid);
    uint64_t rng = tu_rng_init(300);
    clphys_lqcd_gauge_field g, gt, gx, loc, loct;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &gt), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &gx), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 301);
    clphys_lqcd_gauge_hot(&gx, tu_seed() + 302); /* gx.u[site*4 + 0] holds g(x) */
    const double complex *U = (const double complex *)g.u, *Gm = (const double complex *)gx.u;
    for (long long x = 0; x < GV; x++)
        for (int mu = 0; mu < 4; mu++) {
            double complex tmp[9];
            lqcd_su3_mul(tmp, Gm + x * 36, U + (x * 4 + mu) * 9);
            lqcd_su3_mul_dag((double complex *)gt.u + (x * 4 + mu) * 9, tmp, Gm + lqcd_neighbor(DIMS, x, mu, 1) * 36);
        }
    assert_int_equal(clphys_lqcd_gauge_scatter(MPI_COMM_WORLD, grid, 0, &g, &loc), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_gauge_scatter(MPI_COMM_WORLD, grid, 0, &gt, &loct), CLPHYS_SUCCESS);
    clphys_lqcd_dslash_params p = {.precision = prec, .reconstruct = 18, .kappa = 0.13, .no_tune = 1};
    double complex ph[4];
    char bcname[64];
    random_bc(&rng, &p, ph, bcname);
    double *psi = malloc(sizeof(double) * 24 * GV), *gpsi = malloc(sizeof(double) * 24 * GV),
           *lpsi = malloc(sizeof(double) * 24 * G.lv), *lchi = malloc(sizeof(double) * 24 * G.lv),
           *t = malloc(sizeof(double) * 24 * G.lv), *dchi = malloc(sizeof(double) * 24 * G.lv),
           *lg = malloc(sizeof(double) * 24 * G.lv);
    random_spinor(psi, GV, &rng);
    extract(&G, psi, lpsi, 24);
    random_spinor(lchi, G.lv, &rng); /* any chi: each rank its own part */
    clphys_lqcd_dslash_plan *pd = dist_plan(grid, &loc, &p), *pt = dist_plan(grid, &loct, &p);
    gamma5_host(lpsi, G.lv);
    run_op(pd, CLPHYS_LQCD_DSLASH_WILSON, 0, lpsi, t, G.lv);
    gamma5_host(t, G.lv);
    gamma5_host(lpsi, G.lv);
    run_op(pd, CLPHYS_LQCD_DSLASH_WILSON, 0, lchi, dchi, G.lv);
    const double complex l = dot_all(lchi, t, 12 * G.lv), r = dot_all(dchi, lpsi, 12 * G.lv);
    const double eh = cabs(l - r) / cabs(r);
    /* covariance: g psi on the whole lattice, then this rank's part */
    for (long long x = 0; x < GV; x++)
        for (int s = 0; s < 4; s++)
            for (int i = 0; i < 3; i++) {
                double complex acc = 0;
                for (int j = 0; j < 3; j++)
                    acc += Gm[x * 36 + i * 3 + j] *
                           (psi[x * 24 + (s * 3 + j) * 2] + I * psi[x * 24 + (s * 3 + j) * 2 + 1]);
                gpsi[x * 24 + (s * 3 + i) * 2] = creal(acc), gpsi[x * 24 + (s * 3 + i) * 2 + 1] = cimag(acc);
            }
    extract(&G, gpsi, lchi, 24);
    run_op(pt, CLPHYS_LQCD_DSLASH_WILSON, 0, lchi, t, G.lv);    /* D[U^g] g psi */
    run_op(pd, CLPHYS_LQCD_DSLASH_WILSON, 0, lpsi, dchi, G.lv); /* D[U] psi     */
    double *gx_loc = malloc(sizeof(double) * 72 * G.lv);
    extract(&G, gx.u, gx_loc, 72);
    for (size_t x = 0; x < G.lv; x++)
        for (int s = 0; s < 4; s++)
            for (int i = 0; i < 3; i++) {
                double complex acc = 0;
                const double complex *gm = (const double complex *)gx_loc + x * 36;
                for (int j = 0; j < 3; j++)
                    acc += gm[i * 3 + j] * (dchi[x * 24 + (s * 3 + j) * 2] + I * dchi[x * 24 + (s * 3 + j) * 2 + 1]);
                lg[x * 24 + (s * 3 + i) * 2] = creal(acc), lg[x * 24 + (s * 3 + i) * 2 + 1] = cimag(acc);
            }
    const double ec = max_all(tu_max_rel_err(t, lg, 24 * G.lv, 1.0));
    if (rank == 0)
        print_message("# grid %dx%dx%dx%d bc %s: gamma5-hermiticity rel diff %.3g, gauge covariance %.3g\n", grid[0],
                      grid[1], grid[2], grid[3], bcname, eh, ec);
    const double tol = prec == CLPHYS_FP64 ? 1e-12 : 1e-5;
    assert_true(eh < tol);
    assert_true(ec < 10 * tol);
    clphys_lqcd_dslash_plan_destroy(pd), clphys_lqcd_dslash_plan_destroy(pt);
    clphys_lqcd_gauge_destroy(&g), clphys_lqcd_gauge_destroy(&gt), clphys_lqcd_gauge_destroy(&gx);
    clphys_lqcd_gauge_destroy(&loc), clphys_lqcd_gauge_destroy(&loct);
    free(psi), free(gpsi), free(lpsi), free(lchi), free(t), free(dchi), free(lg), free(gx_loc);
}

/* A distributed solve against the single-rank one and the CPU reference. */
static void solve_case(const int grid[4], clphys_lqcd_solver_kind kind, int mixed, int aaaa, int layout,
                       uint64_t stream)
{
    uint64_t rng = tu_rng_init(stream);
    geo G = geometry(grid);
    clphys_lqcd_gauge_field g, loc;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + stream);
    assert_int_equal(clphys_lqcd_gauge_scatter(MPI_COMM_WORLD, grid, 0, &g, &loc), CLPHYS_SUCCESS);
    clphys_lqcd_dslash_params p64 = {.precision = CLPHYS_FP64,
                                     .reconstruct = layout == CLPHYS_LQCD_SOA ? 12 : 18,
                                     .kappa = 0.124,
                                     .no_tune = 1,
                                     .layout = layout};
    if (aaaa)
        for (int mu = 0; mu < 4; mu++) p64.bc[mu] = CLPHYS_LQCD_BC_ANTIPERIODIC;
    clphys_lqcd_dslash_params p32 = p64;
    p32.precision = CLPHYS_FP32, p32.reconstruct = 12;
    const double complex ph[4] = {aaaa ? -1 : 1, aaaa ? -1 : 1, aaaa ? -1 : 1, -1};
    double *b = malloc(sizeof(double) * 24 * GV), *xs = malloc(sizeof(double) * 24 * GV),
           *xg = malloc(sizeof(double) * 24 * GV), *lb = malloc(sizeof(double) * 24 * G.lv),
           *lx = malloc(sizeof(double) * 24 * G.lv);
    random_spinor(b, GV, &rng);
    assert_int_equal(clphys_lqcd_spinor_scatter(MPI_COMM_WORLD, grid, DIMS, 0, b, lb), CLPHYS_SUCCESS);
    clphys_lqcd_dslash_plan *s64 = single_plan(&g, &p64), *s32 = single_plan(&g, &p32);
    clphys_lqcd_dslash_plan *d64 = dist_plan(grid, &loc, &p64), *d32 = dist_plan(grid, &loc, &p32);
    const clphys_lqcd_solver_params prm = {.kind = kind, .tol = 1e-10, .max_iter = 2000, .mixed = mixed};
    clphys_lqcd_solver_result rs, rd;
    tu_poison_f64(xs, 24 * GV);
    tu_poison_f64(lx, 24 * G.lv);
    if (clphys_lqcd_solve(s64, s32, &prm, b, xs, &rs)) fail_msg("single solve: %s", clphys_last_error(ctx));
    if (clphys_lqcd_solve(d64, d32, &prm, lb, lx, &rd)) fail_msg("distributed solve: %s", clphys_last_error(ctx));
    assert_int_equal(clphys_lqcd_spinor_gather(MPI_COMM_WORLD, grid, DIMS, 0, lx, xg), CLPHYS_SUCCESS);
    /* the same result on every rank */
    assert_true(max_all(rd.rel_residual) == min_all(rd.rel_residual));
    assert_true(max_all(rd.iterations) == min_all(rd.iterations));
    double ref_res = 0, diff = 0;
    if (rank == 0) {
        double complex *dx = malloc(sizeof(double complex) * 12 * GV);
        lqcd_ref_wilson(DIMS, (const double complex *)g.u, (const double complex *)xg, dx, 0.124, ph);
        double r = 0, nb = 0, d = 0, nx = 0;
        for (size_t k = 0; k < 12 * GV; k++) {
            const double complex bk = b[2 * k] + I * b[2 * k + 1];
            r += pow(cabs(bk - dx[k]), 2), nb += pow(cabs(bk), 2);
            d += pow(xg[2 * k] - xs[2 * k], 2) + pow(xg[2 * k + 1] - xs[2 * k + 1], 2);
            nx += xs[2 * k] * xs[2 * k] + xs[2 * k + 1] * xs[2 * k + 1];
        }
        ref_res = sqrt(r / nb), diff = sqrt(d / nx);
        free(dx);
        print_message("# grid %dx%dx%dx%d %s %s %s: iterations %d (single rank %d), restarts %d (%d), residual %.3g, "
                      "reference %.3g, |x - x_single| / |x| %.3g\n",
                      grid[0], grid[1], grid[2], grid[3], aaaa ? "a,a,a,a" : "p,p,p,a",
                      kind == CLPHYS_LQCD_SOLVER_BICGSTAB ? "BiCGStab" : "CGNR", mixed ? "mixed" : "fp64",
                      rd.iterations, rs.iterations, rd.restarts, rs.restarts, rd.rel_residual, ref_res, diff);
    }
    ref_res = max_all(ref_res), diff = max_all(diff);
    assert_true(ref_res <= 1.05e-10);
    assert_true(fabs(ref_res - rd.rel_residual) <= 1e-3 * ref_res + 1e-14);
    assert_true(diff < 1e-8);
    /* fp64 iterates in the same order up to summation order: the same
     * counts.  Mixed: the fp32 inner iterations' sums, taken in another
     * order over the ranks, can reach the restart and stop tests one
     * iteration apart (seed 30648338185: BiCGStab 10 against 9, both at
     * the tolerance, solutions within 5e-11) */
    const int slack = mixed ? 1 : 0;
    assert_true(abs(rd.iterations - rs.iterations) <= slack);
    assert_true(abs(rd.restarts - rs.restarts) <= slack);
    clphys_lqcd_dslash_plan_destroy(s64), clphys_lqcd_dslash_plan_destroy(s32);
    clphys_lqcd_dslash_plan_destroy(d64), clphys_lqcd_dslash_plan_destroy(d32);
    clphys_lqcd_gauge_destroy(&g), clphys_lqcd_gauge_destroy(&loc);
    free(b), free(xs), free(xg), free(lb), free(lx);
}

static void test_solvers(void **state)
{
    (void)state;
    if (!clphys_context_device(ctx)->fp64) skip();
    int n;
    const int(*gr)[4] = grids(&n);
    solve_case(gr[0], CLPHYS_LQCD_SOLVER_CGNR, 0, 0, 0, 400);
    solve_case(gr[1], CLPHYS_LQCD_SOLVER_CGNR, 1, 1, CLPHYS_LQCD_SOA, 401);
    solve_case(gr[2], CLPHYS_LQCD_SOLVER_BICGSTAB, 0, 1, 0, 402);
    solve_case(gr[0], CLPHYS_LQCD_SOLVER_BICGSTAB, 1, 0, 0, 403);
}

/* A device failure on the last rank in the middle of a solve (made by the
 * plan's test hook, fail): at the first, a middle and the last hop over
 * the ranks of a CGNR solve, fp64 and mixed (the fp32 plan's hops).  Every
 * rank returns the same error, none is left waiting (a hang is the test's
 * timeout), and the plans then solve to the tolerance. */
static void test_device_failure(void **state)
{
    (void)state;
    if (!clphys_context_device(ctx)->fp64) skip();
    int n;
    const int(*gr)[4] = grids(&n);
    geo G = geometry(gr[0]);
    clphys_lqcd_gauge_field g, loc;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 410);
    assert_int_equal(clphys_lqcd_gauge_scatter(MPI_COMM_WORLD, gr[0], 0, &g, &loc), CLPHYS_SUCCESS);
    clphys_lqcd_dslash_params p64 = {.precision = CLPHYS_FP64, .reconstruct = 18, .kappa = 0.124, .no_tune = 1};
    clphys_lqcd_dslash_params p32 = p64;
    p32.precision = CLPHYS_FP32, p32.reconstruct = 12;
    clphys_lqcd_dslash_plan *d64 = dist_plan(gr[0], &loc, &p64), *d32 = dist_plan(gr[0], &loc, &p32);
    uint64_t rng = tu_rng_init(411);
    double *b = malloc(sizeof(double) * 24 * GV), *lb = malloc(sizeof(double) * 24 * G.lv),
           *lx = malloc(sizeof(double) * 24 * G.lv);
    random_spinor(b, GV, &rng);
    assert_int_equal(clphys_lqcd_spinor_scatter(MPI_COMM_WORLD, gr[0], DIMS, 0, b, lb), CLPHYS_SUCCESS);
    clphys_lqcd_solver_result r;
    for (int mixed = 0; mixed < 2; mixed++) {
        const clphys_lqcd_solver_params prm = {
            .kind = CLPHYS_LQCD_SOLVER_CGNR, .tol = 1e-10, .max_iter = 2000, .mixed = mixed};
        clphys_lqcd_dslash_plan *hp = mixed ? d32 : d64; /* the plan whose hops fail */
        /* the hops of one solve, counted on the failing rank */
        hp->fail = (cp_test_failure){LQCD_FAIL_HOP, size - 1, LONG_MAX, 0};
        if (clphys_lqcd_solve(d64, mixed ? d32 : NULL, &prm, lb, lx, &r)) fail_msg("%s", clphys_last_error(ctx));
        long hops = hp->fail.calls;
        MPI_Bcast(&hops, 1, MPI_LONG, size - 1, MPI_COMM_WORLD);
        assert_true(hops >= 3);
        const long at[3] = {1, hops / 2, hops};
        for (int k = 0; k < 3; k++) {
            hp->fail.at = at[k], hp->fail.calls = 0;
            const int st = (int)clphys_lqcd_solve(d64, mixed ? d32 : NULL, &prm, lb, lx, &r);
            if (max_all(st) != min_all(st) || st == CLPHYS_SUCCESS)
                fail_msg("%s: failure at hop %ld of %ld: statuses %g .. %g over the ranks", mixed ? "mixed" : "fp64",
                         at[k], hops, min_all(st), max_all(st));
        }
        hp->fail.at = 0;
        if (clphys_lqcd_solve(d64, mixed ? d32 : NULL, &prm, lb, lx, &r) || !(r.rel_residual <= 1e-10))
            fail_msg("a solve after the failures: %s", clphys_last_error(ctx));
        if (rank == 0)
            print_message("# device failures (%s, %ld hops a solve): an error on every rank at hop 1, %ld, %ld\n",
                          mixed ? "mixed" : "fp64", hops, at[1], at[2]);
    }
    clphys_lqcd_dslash_plan_destroy(d64), clphys_lqcd_dslash_plan_destroy(d32);
    clphys_lqcd_gauge_destroy(&g), clphys_lqcd_gauge_destroy(&loc);
    free(b), free(lb), free(lx);
}

/* Scatter and gather are inverse; the distributed plaquette and link trace
 * equal the single-rank ones; a NERSC file read on rank 0 and scattered
 * gives every rank its part. */
static void test_fields(void **state)
{
    (void)state;
    int n;
    const int(*gr)[4] = grids(&n);
    char path[64] = "";
    if (rank == 0) {
        snprintf(path, sizeof path, "/tmp/clphys-lqcd-mpi-XXXXXX");
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
    }
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 500);
    if (rank == 0) assert_int_equal(clphys_lqcd_gauge_write_nersc(path, &g, CLPHYS_FP64, 3), CLPHYS_SUCCESS);
    const double plaq = clphys_lqcd_gauge_plaquette(&g), trace = clphys_lqcd_gauge_link_trace(&g);
    for (int i = 0; i < n; i++) {
        geo G = geometry(gr[i]);
        clphys_lqcd_gauge_field loc, lf;
        int dims[4] = {0};
        assert_int_equal(clphys_lqcd_gauge_scatter(MPI_COMM_WORLD, gr[i], 0, rank ? NULL : &g, &loc), CLPHYS_SUCCESS);
        assert_int_equal(clphys_lqcd_gauge_read_mpi(MPI_COMM_WORLD, gr[i], path, NULL, &lf, dims), CLPHYS_SUCCESS);
        assert_memory_equal(dims, DIMS, sizeof dims);
        double *part = malloc(sizeof(double) * 72 * G.lv);
        extract(&G, g.u, part, 72);
        assert_memory_equal(loc.u, part, sizeof(double) * 72 * G.lv);
        assert_memory_equal(lf.u, part, sizeof(double) * 72 * G.lv); /* written and read in fp64 */
        double pl = 0, tr = 0;
        assert_int_equal(clphys_lqcd_gauge_plaquette_mpi(MPI_COMM_WORLD, gr[i], &loc, &pl, &tr), CLPHYS_SUCCESS);
        if (rank == 0)
            print_message("# grid %dx%dx%dx%d: plaquette %.15f (single rank %.15f), link trace %.15f (%.15f)\n",
                          gr[i][0], gr[i][1], gr[i][2], gr[i][3], pl, plaq, tr, trace);
        assert_true(fabs(pl - plaq) < 1e-14 && fabs(tr - trace) < 1e-14);
        /* spinors: scatter then gather is the identity */
        double *s = malloc(sizeof(double) * 24 * GV), *s2 = malloc(sizeof(double) * 24 * GV),
               *ls = malloc(sizeof(double) * 24 * G.lv), *ex = malloc(sizeof(double) * 24 * G.lv);
        uint64_t rng = tu_rng_init(510 + (uint64_t)i);
        random_spinor(s, GV, &rng);
        tu_poison_f64(s2, 24 * GV);
        assert_int_equal(clphys_lqcd_spinor_scatter(MPI_COMM_WORLD, gr[i], DIMS, 0, s, ls), CLPHYS_SUCCESS);
        extract(&G, s, ex, 24);
        assert_memory_equal(ls, ex, sizeof(double) * 24 * G.lv);
        assert_int_equal(clphys_lqcd_spinor_gather(MPI_COMM_WORLD, gr[i], DIMS, 0, ls, rank ? NULL : s2),
                         CLPHYS_SUCCESS);
        if (rank == 0) assert_memory_equal(s, s2, sizeof(double) * 24 * GV);
        free(part), free(s), free(s2), free(ls), free(ex);
        clphys_lqcd_gauge_destroy(&loc), clphys_lqcd_gauge_destroy(&lf);
    }
    /* a file that fails its checks: every rank gets rank 0's message */
    if (rank == 0) {
        FILE *f = fopen(path, "r+b");
        assert_non_null(f);
        char buf[8192];
        size_t len = fread(buf, 1, sizeof buf, f);
        char *ck = strstr(buf, "CHECKSUM");
        assert_true(ck && ck < buf + len);
        char *eq = strchr(ck, '=') + 1;
        while (*eq == ' ') eq++;
        *eq = *eq == '0' ? '1' : '0'; /* one hex digit of the checksum changed */
        fseek(f, 0, SEEK_SET);
        fwrite(buf, 1, len, f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    clphys_lqcd_gauge_field lf;
    assert_int_equal(clphys_lqcd_gauge_read_mpi(MPI_COMM_WORLD, gr[0], path, NULL, &lf, NULL), CLPHYS_ERR_FORMAT);
    if (rank == 0) print_message("# damaged file, every rank: %s\n", clphys_last_error(NULL));
    assert_non_null(strstr(clphys_last_error(NULL), "CHECKSUM"));
    if (rank) assert_non_null(strstr(clphys_last_error(NULL), "rank 0: "));
    assert_null(lf.u);
    if (rank == 0) remove(path);
    clphys_lqcd_gauge_destroy(&g);
}

/* A grid that does not divide the lattice or does not match the ranks,
 * parameters that differ between ranks: the same error on every rank. */
static void test_failures(void **state)
{
    (void)state;
    clphys_lqcd_gauge_field g, loc;
    const int odd[4] = {4, 4, 4, 6}; /* t over 2 or 4 ranks: 3 or not divisible */
    assert_int_equal(clphys_lqcd_gauge_create(odd, &g), CLPHYS_SUCCESS);
    const int gt[4] = {1, 1, 1, size};
    assert_int_equal(clphys_lqcd_gauge_scatter(MPI_COMM_WORLD, gt, 0, &g, &loc), CLPHYS_ERR_INVALID_ARGUMENT);
    if (rank == 0) print_message("# %s\n", clphys_last_error(NULL));
    assert_non_null(strstr(clphys_last_error(NULL), "does not divide the lattice"));
    const int wrong[4] = {1, 1, 1, size + 1};
    assert_int_equal(clphys_lqcd_gauge_scatter(MPI_COMM_WORLD, wrong, 0, &g, &loc), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(clphys_last_error(NULL), "ranks"));
    clphys_lqcd_gauge_destroy(&g);
    /* kappa differs on the last rank */
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_gauge_scatter(MPI_COMM_WORLD, gt, 0, &g, &loc), CLPHYS_SUCCESS);
    clphys_lqcd_dslash_params p = {.kappa = rank == size - 1 ? 0.13 : 0.12, .no_tune = 1};
    clphys_lqcd_dslash_plan *pl = (clphys_lqcd_dslash_plan *)&p;
    assert_int_equal(clphys_lqcd_dslash_plan_create_mpi(MPI_COMM_WORLD, gt, ctx, &loc, &p, &pl),
                     CLPHYS_ERR_INVALID_ARGUMENT);
    assert_null(pl);
    assert_non_null(strstr(clphys_last_error(ctx), "differ between ranks"));
    /* a grid that does not match the ranks */
    p.kappa = 0.12;
    assert_int_equal(clphys_lqcd_dslash_plan_create_mpi(MPI_COMM_WORLD, wrong, ctx, &loc, &p, &pl),
                     CLPHYS_ERR_INVALID_ARGUMENT);
    assert_null(pl);
    clphys_lqcd_gauge_destroy(&g), clphys_lqcd_gauge_destroy(&loc);
}

/* The parts of one application: each measured, the face model's bytes and
 * messages (12 reals per face site, two messages per split direction and
 * side), the face sites of the output parity. */
static void test_split_timing(void **state)
{
    (void)state;
    int n;
    const int(*gr)[4] = grids(&n);
    const int *grid = gr[0];
    geo G = geometry(grid);
    clphys_lqcd_gauge_field g, loc;
    assert_int_equal(clphys_lqcd_gauge_create(DIMS, &g), CLPHYS_SUCCESS);
    clphys_lqcd_gauge_hot(&g, tu_seed() + 600);
    assert_int_equal(clphys_lqcd_gauge_scatter(MPI_COMM_WORLD, grid, 0, &g, &loc), CLPHYS_SUCCESS);
    clphys_lqcd_dslash_params p = {.precision = CLPHYS_FP32, .kappa = 0.12, .no_tune = 1};
    clphys_lqcd_dslash_plan *pl = dist_plan(grid, &loc, &p);
    cl_mem a, b;
    assert_int_equal(clphys_lqcd_dslash_field_create(pl, 1, &a), CLPHYS_SUCCESS);
    assert_int_equal(clphys_lqcd_dslash_field_create(pl, 1, &b), CLPHYS_SUCCESS);
    const float one = 1;
    assert_int_equal(cp_fill(ctx, a, &one, sizeof one, G.lv / 2 * 24 * sizeof(float)), CLPHYS_SUCCESS);
    clphys_lqcd_dslash_split s;
    assert_int_equal(clphys_lqcd_dslash_apply_split(pl, CLPHYS_LQCD_DSLASH_EO_PREC, b, a, &s), CLPHYS_SUCCESS);
    size_t face = 0, sites = 0; /* face sites per parity and sites with a remote neighbour */
    int split = 0;
    for (int mu = 0; mu < 4; mu++)
        if (grid[mu] > 1) face += G.lv / (size_t)G.ld[mu] / 2, split++;
    for (size_t x = 0; x < G.lv; x++) {
        int c[4], any = 0;
        lqcd_coords(G.ld, (long long)x, c);
        for (int mu = 0; mu < 4; mu++) any |= grid[mu] > 1 && (c[mu] == 0 || c[mu] == G.ld[mu] - 1);
        sites += (size_t)any;
    }
    if (rank == 0)
        print_message("# split of M (2 hops): interior %.3g s, pack %.3g s, exterior %.3g s, d2h %.3g s, h2d %.3g s, "
                      "MPI %.3g s, exposed %.3g s, wall %.3g s, %zu bytes in %d messages, %zu of %zu sites on faces\n",
                      s.interior_s, s.pack_s, s.exterior_s, s.d2h_s, s.h2d_s, s.mpi_s, s.exposed_s, s.wall_s,
                      s.halo_bytes, s.messages, s.face_sites, s.sites);
    assert_int_equal(s.hops, 2);
    assert_true(s.interior_s > 0 && s.pack_s > 0 && s.exterior_s > 0 && s.mpi_s > 0 && s.exposed_s >= 0);
    assert_true(s.wall_s >= s.interior_s);
    assert_int_equal(s.halo_bytes, 2 * 2 * face * 12 * sizeof(float));
    assert_int_equal(s.messages, 2 * 2 * split);
    assert_int_equal(s.sites, G.lv);
    assert_int_equal(s.face_sites, sites);
    clReleaseMemObject(a), clReleaseMemObject(b);
    clphys_lqcd_dslash_plan_destroy(pl);
    clphys_lqcd_gauge_destroy(&g), clphys_lqcd_gauge_destroy(&loc);
}

/* --die: rank 1 leaves in the middle of the exchanges. */
static int rank_dies(void)
{
    const int grid[4] = {1, 1, 1, size};
    clphys_lqcd_gauge_field g, loc;
    clphys_lqcd_gauge_create(DIMS, &g);
    if (clphys_lqcd_gauge_scatter(MPI_COMM_WORLD, grid, 0, &g, &loc)) return 1;
    clphys_lqcd_dslash_params p = {.kappa = 0.12, .no_tune = 1};
    clphys_lqcd_dslash_plan *pl = dist_plan(grid, &loc, &p);
    cl_mem a, b;
    clphys_lqcd_dslash_field_create(pl, 1, &a);
    clphys_lqcd_dslash_field_create(pl, 1, &b);
    for (int i = 0; i < 1000000; i++) {
        if (rank == 1 && i == 5) tu_mpi_die(rank, "in application", i);
        clphys_lqcd_dslash_apply(pl, CLPHYS_LQCD_DSLASH_EO_PREC, b, a, NULL);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (tu_mpi_init(&argc, &argv, &rank, &size, &ctx, 1)) return rank_dies();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_operators_fp64),
        cmocka_unit_test(test_operators_fp32),
        cmocka_unit_test(test_hermiticity_covariance),
        cmocka_unit_test(test_solvers),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_device_failure),
        cmocka_unit_test(test_split_timing),
    };
    return tu_mpi_run_group("test_lqcd_mpi", tests, size == 2 || size == 4, "2 or 4", &ctx, 1);
}
