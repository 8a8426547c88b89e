/* cli_mpi.h — MPI for the commands that run distributed (nbody now, lqcd
 * later).  main() initialises MPI only when the process was started by an
 * MPI launcher (mpirun/mpiexec set OMPI_COMM_WORLD_SIZE, PMI_SIZE or
 * PMIX_RANK), so a plain `clphys ...` pays nothing and prints no MPI
 * messages.  A command asks cli_mpi_comm for the world communicator.
 *
 * Exit rule under a launcher: a command returns 1 only for failures all
 * ranks agreed on (clphys_mpi_agree: every rank fails the same way and
 * finalises); any other failure (2: a usage error, which another rank given
 * other arguments may not share) makes main call MPI_Abort, so that no rank
 * is left waiting in a collective call. */
#ifndef CLPHYS_CLI_MPI_H
#define CLPHYS_CLI_MPI_H

#ifdef CLPHYS_HAVE_MPI
#include <mpi.h>
#endif

/* 1 when an MPI launcher started this process. */
int cli_mpi_launched(void);
/* From main(), before the command: MPI_Init when launched.  Returns 0, or 2
 * after a message (MPI_Init failed; launched with several ranks by a build
 * without MPI). */
int cli_mpi_start(int *argc, char ***argv);
/* From main(), after the command, with its exit status: MPI_Finalize, or
 * MPI_Abort for rc = 2 with several ranks (see above).  Returns rc. */
int cli_mpi_end(int rc);
/* This process's rank in the world (0 when MPI was not started). */
int cli_mpi_rank(void);

#ifdef CLPHYS_HAVE_MPI
/* 1 with *comm = MPI_COMM_WORLD when MPI was started, else 0. */
int cli_mpi_comm(MPI_Comm *comm);
/* This rank's index among the ranks of its node and their number
 * (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED): how ranks of one node share
 * its devices (clphys_contexts_create).  0 and 1 without MPI. */
void cli_mpi_node(int *index, int *count);
#endif

#endif
