/* md_cli.h — the pieces `clphys md` shares between its single-process run
 * (cli/md.c) and its run under an MPI launcher (cli/md_mpi.c). */
#ifndef CLPHYS_CLI_MD_H
#define CLPHYS_CLI_MD_H

#include "clphys.h"

#include <stdio.h>

/* The parsed options (cli/md.c checked them). */
typedef struct {
    const char *data, *out, *xyz, *device;
    double rho, temp; /* --fcc RHO (0: --data), --temp           */
    long long cells, seed, steps, thermo;
    int force;
    clphys_md_params p;
    int grid[3]; /* --grid; 0 0 0: MPI_Dims_create          */
} md_cli;

/* One extended-XYZ frame (species = LAMMPS type number); -1 on a write
 * error. */
int md_cli_xyz_frame(FILE *f, const clphys_md_system *s, long long step, double dt);
/* One thermo row on stdout. */
void md_cli_row(const clphys_md_thermo *t);
/* Close the trajectory and move it into place (ok), or remove it; returns
 * ok, 0 after a message naming the file. */
int md_cli_xyz_finish(FILE *xf, const char *tmp, const char *xyz, int ok);
/* The run under an MPI launcher (every rank): the exit status. */
int md_cli_distributed(const md_cli *o);

#endif
