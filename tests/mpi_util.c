/* mpi_util.c — see mpi_util.h. */
#include "mpi_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tu_mpi_init(int *argc, char ***argv, int *rank, int *size, clphys_context **ctx, int nctx)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    unsigned long long seed = *rank == 0 ? (unsigned long long)tu_seed() : 0;
    MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (*rank) { /* before this rank's first tu_seed(), which reads it */
        char s[32];
        snprintf(s, sizeof s, "%llu", seed);
        setenv("CLPHYS_TEST_SEED", s, 1);
        tu_seed();
    }
    for (int i = 0; i < nctx; i++) ctx[i] = tu_context();
    if (*argc > 1 && !strcmp((*argv)[1], "--die")) return 1;
    if (*argc > 1) cmocka_set_test_filter((*argv)[1]);
    return 0;
}

int tu_mpi_wrong_size(const char *name, const char *need)
{
    fprintf(stderr, "%s needs %s ranks\n", name, need);
    return 1;
}

int tu_mpi_finish(int failed, clphys_context **ctx, int nctx)
{
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < nctx; i++) clphys_context_destroy(ctx[i]);
    MPI_Finalize();
    return any ? 1 : 0;
}

void tu_mpi_die(int rank, const char *where, int i)
{
    fprintf(stderr, "rank %d: exiting without MPI_Finalize %s %d\n", rank, where, i);
    _exit(3);
}

void tu_mpi_all_ok(int ok, const char *what, clphys_context *ctx)
{
    int bad = !ok, any = 0, rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) fail_msg("%s failed on some rank (rank %d: %s)", what, rank, ok ? "ok" : clphys_last_error(ctx));
}
