/* mpi_util.h — the scaffold the MPI tests share (tests/mpi_util.c; built into
 * the tests that meson runs under a launcher): MPI started with one test
 * seed on every rank, and one exit status agreed by every rank. */
#ifndef CLPHYS_TEST_MPI_UTIL_H
#define CLPHYS_TEST_MPI_UTIL_H

#include "util.h"

#include <mpi.h>

/* MPI_Init, this process's rank and the number of ranks (MPI_COMM_WORLD),
 * rank 0's test seed on every rank (tu_seed; CLPHYS_TEST_SEED replays it,
 * so that the ranks draw the same random input), then nctx contexts on the
 * test device in ctx[] (tu_context) and the command line: returns 1 for
 * `--die` (the caller then runs its rank-dies case), else 0, a first
 * argument naming the tests to run (cmocka_set_test_filter, e.g.
 * test_dilute_gas). */
int tu_mpi_init(int *argc, char ***argv, int *rank, int *size, clphys_context **ctx, int nctx);

/* Runs the cmocka group `tests` (an array, no fixtures) when sizes_ok,
 * else says on stderr that `name` needs `need` ranks and counts that as a
 * failure; then agrees one status over every rank, destroys the nctx
 * contexts ctx[] (tu_mpi_init's) and calls MPI_Finalize.  Returns the
 * exit status: 1 when any rank failed. */
#define tu_mpi_run_group(name, tests, sizes_ok, need, ctx, nctx)                                                       \
    tu_mpi_finish((sizes_ok) ? cmocka_run_group_tests(tests, NULL, NULL) : tu_mpi_wrong_size(name, need), ctx, nctx)
int tu_mpi_wrong_size(const char *name, const char *need);
int tu_mpi_finish(int failed, clphys_context **ctx, int nctx);

/* Fails the test on every rank (cmocka) where ok is 0 on any: `what`,
 * this rank and, where it failed here, ctx's last error. */
void tu_mpi_all_ok(int ok, const char *what, clphys_context *ctx);

/* For the --die runs (tests/mpi_rank_dies.py): says on stderr
 * "rank R: exiting without MPI_Finalize WHERE I" and leaves the process
 * at once (status 3), as a crashed rank would. */
void tu_mpi_die(int rank, const char *where, int i) __attribute__((noreturn));

#endif
