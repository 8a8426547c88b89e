/* cli_mpi.c — see cli_mpi.h. */
#include "cli_mpi.h"

#include <stdio.h>
#include <stdlib.h>

int cli_mpi_launched(void) { return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK"); }

#ifdef CLPHYS_HAVE_MPI
static int started;

int cli_mpi_start(int *argc, char ***argv)
{
    if (!cli_mpi_launched()) return 0;
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "clphys: MPI_Init failed\n");
        return 2;
    }
    started = 1;
    return 0;
}

int cli_mpi_end(int rc)
{
    if (!started) return rc;
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rc == 2 && size > 1) MPI_Abort(MPI_COMM_WORLD, rc);
    MPI_Finalize();
    return rc;
}

int cli_mpi_rank(void)
{
    int r = 0;
    if (started) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int cli_mpi_size(void)
{
    int n = 1;
    if (started) MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

int cli_mpi_comm(MPI_Comm *comm)
{
    if (!started) return 0;
    *comm = MPI_COMM_WORLD;
    return 1;
}

void cli_mpi_node(int *index, int *count)
{
    *index = 0, *count = 1;
    MPI_Comm node;
    if (!started || MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return;
    MPI_Comm_rank(node, index);
    MPI_Comm_size(node, count);
    MPI_Comm_free(&node);
}
#else
int cli_mpi_start(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *n = getenv("OMPI_COMM_WORLD_SIZE");
    if (!n) n = getenv("PMI_SIZE");
    if (n && atol(n) > 1) {
        fprintf(stderr,
                "clphys: started by an MPI launcher with %s ranks, but this build has no MPI "
                "(rebuild with MPI installed: meson setup -Dmpi=enabled)\n",
                n);
        return 2;
    }
    return 0;
}
int cli_mpi_end(int rc) { return rc; }
int cli_mpi_rank(void) { return 0; }
int cli_mpi_size(void) { return 1; }
#endif
