/* test_mpi.c — the MPI plumbing of the distributed paths (platform/mpi.c),
 * run under mpiexec with 2 and 3 ranks: one status agreed by every rank, with
 * the failing rank named; options compared between ranks; the network probe
 * gives every rank the same positive figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "platform/cp_mpi.h"
#include "mpi_util.h"

static int rank, size;

static void agree_success(void **state)
{
    (void)state;
    assert_int_equal(cp_mpi_agree(MPI_COMM_WORLD, NULL, CLPHYS_SUCCESS), CLPHYS_SUCCESS);
}

static void agree_reports_the_failing_rank(void **state)
{
    (void)state;
    /* the last rank fails, and so does rank 1 when there are 3 ranks: the lowest wins */
    int fail_here = rank == size - 1 || (size > 2 && rank == 1);
    clphys_status local = CLPHYS_SUCCESS;
    if (fail_here) local = cp_error(NULL, rank == 1 ? CLPHYS_ERR_INPUT : CLPHYS_ERR_IO, "boom on %d", rank);
    clphys_status st = cp_mpi_agree(MPI_COMM_WORLD, NULL, local);
    assert_int_equal(st, CLPHYS_ERR_INPUT); /* rank 1 is the lowest failing rank in both layouts */
    if (rank != 1) assert_non_null(strstr(clphys_last_error(NULL), "rank 1: boom on 1"));
}

static void same_options(void **state)
{
    (void)state;
    double opts[3] = {0.5, 1e-3, 42};
    assert_int_equal(cp_mpi_same(MPI_COMM_WORLD, NULL, opts, sizeof opts, "options"), CLPHYS_SUCCESS);
    if (rank == size - 1) opts[1] = 2e-3;
    assert_int_equal(cp_mpi_same(MPI_COMM_WORLD, NULL, opts, sizeof opts, "the N-body options"),
                     CLPHYS_ERR_INVALID_ARGUMENT);
    char want[64];
    snprintf(want, sizeof want, "rank %d differs", size - 1);
    assert_non_null(strstr(clphys_last_error(NULL), want));
    assert_non_null(strstr(clphys_last_error(NULL), "the N-body options"));
}

static void network_probe(void **state)
{
    (void)state;
    clphys_network_limits lim;
    assert_int_equal(clphys_mpi_measure_network(MPI_COMM_WORLD, 1 << 16, 5, &lim), CLPHYS_SUCCESS);
    assert_int_equal(lim.ranks, size);
    assert_true(lim.latency_s > 0 && lim.latency_s < 1);
    assert_true(lim.bandwidth_bytes_per_s > 0);
    double mine[2] = {lim.latency_s, lim.bandwidth_bytes_per_s}, lo[2], hi[2];
    MPI_Allreduce(mine, lo, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(mine, hi, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    assert_true(lo[0] == hi[0] && lo[1] == hi[1]); /* the same figures on every rank */
    assert_int_equal(clphys_mpi_measure_network(MPI_COMM_WORLD, 0, 0, NULL), CLPHYS_ERR_INVALID_ARGUMENT);
}

int main(int argc, char **argv)
{
    tu_mpi_init(&argc, &argv, &rank, &size, NULL, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(agree_success),
        cmocka_unit_test(agree_reports_the_failing_rank),
        cmocka_unit_test(same_options),
        cmocka_unit_test(network_probe),
    };
    return tu_mpi_run_group("test_mpi", tests, size >= 2, "at least 2", NULL, 0);
}
