/* test_nbody_gravity_mpi.c — gravity over MPI ranks (clphys_nbody_mpi.h), run
 * under mpiexec with 2, 3 and 4 ranks on the test device: for every exchange
 * algorithm, N not divisible by P, P not a power of two (3), a rank with no
 * particles, and two devices per rank (the test device opened twice), each
 * rank's accelerations and potentials equal the single-rank library run to
 * 1e-12 in fp64 (1e-5 against the fp64 reference in fp32; errors measured as
 * in test_gravity).  The timing split is consistent (exchanges as scheduled,
 * exposed <= exchange).  Failures reach every rank with the failing rank
 * named: options that differ, bad input on one rank, a device one rank
 * cannot open, a bad hybrid group; the plan is usable after a failed call.
 * The N-body helpers: scatter + gather give the system back bit for bit,
 * reduced energies equal the single-process ones; the synchronisation probe
 * gives every rank the same fit.
 * Every rank runs every collective call and failures are reduced over the
 * ranks before they are asserted, so a failing check never leaves a rank
 * waiting (the test's timeout is the last guard). */
#include "mpi_util.h"
#include "nbody_util.h"
#include "host/ref/nbody_ref.h"

#include "clphys_nbody_mpi.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static int rank, size;
static clphys_context *ctx[2]; /* the test device, opened twice */
static const double EPS = 0.05;

/* The largest of the ranks' values. */
static double max_all(double v)
{
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return v;
}

/* Every rank's status must be `want`. */
static void all_status(clphys_status st, clphys_status want, const char *what)
{
    int bad = st != want, any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) fail_msg("%s: rank %d got %d (%s), want %d", what, rank, st, clphys_last_error(NULL), want);
}

/* Particle counts: layout 0 balanced (N / P, one more for r < N % P), 1 the
 * last rank empty, 2 everything on rank 0. */
static void counts(int N, int layout, int *n, int *off)
{
    int o = 0;
    for (int r = 0; r < size; r++) {
        int c = layout == 0   ? N / size + (r < N % size)
                : layout == 1 ? (r == size - 1 ? 0 : N / (size - 1) + (r < N % (size - 1)))
                              : (r == 0 ? N : 0);
        if (r == rank) *n = c, *off = o;
        o += c;
    }
}

static clphys_nbody_gravity_params params(clphys_precision p, double eps)
{
    clphys_nbody_gravity_params prm = {0, p, CLPHYS_NBODY_GRAVITY_AUTO, 1.0, eps, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    return prm;
}

/* One plan, two calls with different layouts; errors against the reference. */
static void distributed(clphys_precision p, clphys_nbody_gravity_exchange ex, int group, int ndev, int N)
{
    const double tol = p == CLPHYS_FP64 ? 1e-12 : 1e-5;
    double *x = tg_random_particles(N, 11);
    if (p == CLPHYS_FP32)
        for (int k = 0; k < 4 * N; k++) x[k] = (float)x[k];
    double *ra = malloc(3 * N * sizeof *ra), *rp = malloc(N * sizeof *rp);
    if (p == CLPHYS_FP64) { /* the single-rank library run on this rank's device */
        clphys_nbody_gravity_params prm = params(p, EPS);
        clphys_nbody_gravity_plan *pl;
        assert_int_equal(clphys_nbody_gravity_plan_create(ctx[0], &prm, &pl), CLPHYS_SUCCESS);
        assert_int_equal(clphys_nbody_gravity_compute(pl, N, NULL, N, x, ra, rp, 0, 0, NULL), CLPHYS_SUCCESS);
        clphys_nbody_gravity_plan_destroy(pl);
    } else {
        nbody_ref_gravity(N, NULL, N, x, 1.0, EPS, ra, rp);
    }
    clphys_nbody_gravity_params prm = params(p, EPS);
    clphys_nbody_gravity_mpi *g = NULL;
    all_status(clphys_nbody_gravity_mpi_create(MPI_COMM_WORLD, ctx, ndev, &prm, ex, group, &g), CLPHYS_SUCCESS,
               "create");
    clphys_nbody_gravity_exchange used;
    int G;
    clphys_nbody_gravity_mpi_info(g, &used, &G);
    if (ex != CLPHYS_NBODY_GRAVITY_EXCHANGE_AUTO)
        assert_int_equal(used, ex);
    else
        assert_int_equal(used, CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID);
    for (int layout = 0; layout < 3; layout++) {
        int n = 0, off = 0;
        counts(N, layout, &n, &off);
        double *acc = malloc(3 * (n ? n : 1) * sizeof *acc), *pot = malloc((n ? n : 1) * sizeof *pot);
        tu_poison_f64(acc, 3 * (size_t)n);
        tu_poison_f64(pot, (size_t)n);
        clphys_nbody_gravity_timing t;
        clphys_status st = clphys_nbody_gravity_mpi_compute(g, n, x + 4 * off, acc, pot, &t);
        all_status(st, CLPHYS_SUCCESS, "compute");
        double ea = 0, ep = 0;
        tg_errors(n, x + 4 * off, N, x, EPS, acc, pot, ra + 3 * off, rp + off, &ea, &ep);
        /* the schedule's exchange count; the split adds up */
        int want = used == CLPHYS_NBODY_GRAVITY_EXCHANGE_ALLGATHER ? 1
                   : used == CLPHYS_NBODY_GRAVITY_EXCHANGE_RING    ? size - 1
                                                                   : -1;
        double bad = (want >= 0 && t.exchanges != want) || (size > 1 && t.exchanges < 1) ||
                     !(t.exposed_s <= t.exchange_s + 1e-9) || !(t.total_s > 0) || (n && !(t.kernel_s > 0)) ||
                     (size > 1 && !(t.bytes_sent > 0 || n == 0));
        double e = max_all(fmax(ea, ep)), b = max_all(bad);
        if (!(e < tol))
            fail_msg("%s group %d, %d device(s), P %d, N %d, layout %d: error %.3g (tol %.0e)",
                     clphys_nbody_gravity_exchange_name(ex), group, ndev, size, N, layout, e, tol);
        if (b)
            fail_msg("%s layout %d: timing split inconsistent on some rank (exchanges %d exchange %g exposed %g)",
                     clphys_nbody_gravity_exchange_name(ex), layout, t.exchanges, t.exchange_s, t.exposed_s);
        free(acc), free(pot);
    }
    clphys_nbody_gravity_mpi_destroy(g);
    free(x), free(ra), free(rp);
}

static const clphys_nbody_gravity_exchange all_ex[] = {
    CLPHYS_NBODY_GRAVITY_EXCHANGE_RING, CLPHYS_NBODY_GRAVITY_EXCHANGE_DOUBLING, CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID,
    CLPHYS_NBODY_GRAVITY_EXCHANGE_ALLGATHER, CLPHYS_NBODY_GRAVITY_EXCHANGE_AUTO};

static void exchanges_fp64(void **state)
{
    (void)state;
    if (!clphys_context_device(ctx[0])->fp64) skip();
    for (int e = 0; e < 5; e++) distributed(CLPHYS_FP64, all_ex[e], 0, 1, 7 * size + 2);
    if (size % 2 == 0 && size > 2) distributed(CLPHYS_FP64, CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID, 2, 1, 7 * size + 3);
    distributed(CLPHYS_FP64, CLPHYS_NBODY_GRAVITY_EXCHANGE_RING, 0, 1, size - 1); /* fewer particles than ranks */
}

static void exchanges_fp32(void **state)
{
    (void)state;
    for (int e = 0; e < 4; e++) distributed(CLPHYS_FP32, all_ex[e], 0, 1, 300 + size);
}

static void two_devices_per_rank(void **state)
{
    (void)state;
    if (!clphys_context_device(ctx[0])->fp64) skip();
    distributed(CLPHYS_FP64, CLPHYS_NBODY_GRAVITY_EXCHANGE_RING, 0, 2, 5 * size + 1);
    distributed(CLPHYS_FP64, CLPHYS_NBODY_GRAVITY_EXCHANGE_DOUBLING, 0, 2, 5 * size + 1);
}

static void failures(void **state)
{
    (void)state;
    clphys_nbody_gravity_params prm = params(CLPHYS_FP32, EPS);
    clphys_nbody_gravity_mpi *g = NULL;
    /* an option that differs on the last rank */
    if (rank == size - 1) prm.eps = 2 * EPS;
    all_status(clphys_nbody_gravity_mpi_create(MPI_COMM_WORLD, ctx, 1, &prm, CLPHYS_NBODY_GRAVITY_EXCHANGE_RING, 0, &g),
               CLPHYS_ERR_INVALID_ARGUMENT, "differing eps");
    assert_null(g);
    assert_non_null(strstr(clphys_last_error(NULL), "differ"));
    prm.eps = EPS;
    /* a hybrid group that is not a power of two dividing P */
    all_status(
        clphys_nbody_gravity_mpi_create(MPI_COMM_WORLD, ctx, 1, &prm, CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID, 3, &g),
        CLPHYS_ERR_INVALID_ARGUMENT, "group 3");
    /* no device on one rank */
    all_status(clphys_nbody_gravity_mpi_create(MPI_COMM_WORLD, rank == size - 1 ? NULL : ctx, 1, &prm,
                                               CLPHYS_NBODY_GRAVITY_EXCHANGE_RING, 0, &g),
               CLPHYS_ERR_INVALID_ARGUMENT, "NULL contexts on one rank");
    char want[32];
    snprintf(want, sizeof want, "rank %d", size - 1);
    if (rank != size - 1) assert_non_null(strstr(clphys_last_error(NULL), want));
    /* a device that one rank cannot open, agreed as the command does it */
    clphys_context **c = NULL;
    int nc = 0;
    clphys_status st = rank == size - 1 ? clphys_contexts_create("97:97", 0, 1, &c, &nc) : CLPHYS_SUCCESS;
    all_status(clphys_mpi_agree(MPI_COMM_WORLD, NULL, st), CLPHYS_ERR_DEVICE_NOT_FOUND, "device 97:97");
    assert_non_null(strstr(clphys_last_error(NULL), "97:97"));
    /* bad input on one rank: every rank fails, then the plan still works */
    all_status(
        clphys_nbody_gravity_mpi_create(MPI_COMM_WORLD, ctx, 1, &prm, CLPHYS_NBODY_GRAVITY_EXCHANGE_DOUBLING, 0, &g),
        CLPHYS_SUCCESS, "create");
    double x[8] = {0.1 * rank, 0, 0, 1, 0.1 * rank + 0.05, 0, 0, 1}, acc[6], pot[2];
    if (rank == size - 1) x[5] = NAN;
    all_status(clphys_nbody_gravity_mpi_compute(g, 2, x, acc, pot, NULL), CLPHYS_ERR_INPUT, "NaN on one rank");
    if (rank != size - 1) assert_non_null(strstr(clphys_last_error(NULL), want));
    x[5] = 0;
    all_status(clphys_nbody_gravity_mpi_compute(g, 2, x, acc, NULL, NULL), CLPHYS_SUCCESS, "after the failure");
    all_status(clphys_nbody_gravity_mpi_compute(g, 1, NULL, acc, NULL, NULL), CLPHYS_ERR_INVALID_ARGUMENT, "NULL x");
    clphys_nbody_gravity_mpi_destroy(g);
    clphys_nbody_gravity_mpi_destroy(NULL);
}

static void nbody_helpers(void **state)
{
    (void)state;
    const int N = 3 * size + 1;
    clphys_nbody_system all = {0, NULL, NULL}, local, back = {0, NULL, NULL};
    if (rank == 0) assert_int_equal(clphys_nbody_plummer(NULL, N, 5, &all), CLPHYS_SUCCESS);
    all_status(clphys_nbody_mpi_scatter(MPI_COMM_WORLD, 0, &all, &local), CLPHYS_SUCCESS, "scatter");
    assert_int_equal(local.n, (size_t)(N / size + (rank < N % size)));
    all_status(clphys_nbody_mpi_gather(MPI_COMM_WORLD, 0, &local, &back), CLPHYS_SUCCESS, "gather");
    double pot_local[64];
    for (size_t i = 0; i < local.n; i++) pot_local[i] = -1.0 - local.x[4 * i]; /* any values */
    clphys_nbody_energy e;
    all_status(clphys_nbody_mpi_energy(MPI_COMM_WORLD, &local, pot_local, &e), CLPHYS_SUCCESS, "energy");
    double bad = 0;
    if (rank == 0) {
        bad = back.n != all.n || memcmp(back.x, all.x, 4 * N * sizeof(double)) ||
              memcmp(back.v, all.v, 3 * N * sizeof(double));
        double pot[64];
        for (int i = 0; i < N; i++) pot[i] = -1.0 - all.x[4 * i];
        clphys_nbody_energy e1;
        assert_int_equal(clphys_nbody_energy_of(NULL, &all, pot, &e1), CLPHYS_SUCCESS);
        bad += fabs(e.kinetic - e1.kinetic) > 1e-14 * fabs(e1.kinetic) ||
               fabs(e.potential - e1.potential) > 1e-14 * fabs(e1.potential) || fabs(e.momentum - e1.momentum) > 1e-14;
    }
    if (max_all(bad)) fail_msg("scatter/gather or reduced energies differ from the single-process ones");
    clphys_nbody_system_destroy(&all);
    clphys_nbody_system_destroy(&back);
    clphys_nbody_system_destroy(&local);
    all_status(clphys_nbody_mpi_scatter(MPI_COMM_WORLD, size, NULL, &local), CLPHYS_ERR_INVALID_ARGUMENT, "root");
}

static void sync_over_ranks(void **state)
{
    (void)state;
    clphys_sync_cost c;
    all_status(clphys_mpi_measure_sync(MPI_COMM_WORLD, ctx, 1, 8, 3, &c), CLPHYS_SUCCESS, "sync probe");
    assert_int_equal(c.ranks, size);
    assert_int_equal(c.points, 4);
    double lo = c.t_sync_s, hi = c.t_sync_s;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    assert_true(lo == hi && isfinite(lo));
    for (int i = 0; i < c.points; i++) assert_true(c.t_tot_s[i] > 0);
}

int main(int argc, char **argv)
{
    tu_mpi_init(&argc, &argv, &rank, &size, ctx, 2);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exchanges_fp64), cmocka_unit_test(exchanges_fp32), cmocka_unit_test(two_devices_per_rank),
        cmocka_unit_test(failures),       cmocka_unit_test(nbody_helpers),  cmocka_unit_test(sync_over_ranks),
    };
    return tu_mpi_run_group("test_gravity_mpi", tests, size >= 2, "at least 2", ctx, 2);
}
