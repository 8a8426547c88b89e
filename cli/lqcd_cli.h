/* lqcd_cli.h — what `clphys lqcd solve` hands to its multi-device form
 * (cli/lqcd_multi.c): the options of a solve, already checked. */
#ifndef CLPHYS_CLI_LQCD_H
#define CLPHYS_CLI_LQCD_H

#include "clphys.h"

typedef struct {
    const char *device;       /* a device list: "gpus", "0:0,0:1", ...              */
    double kappa, tol;
    int point;                /* 1: the 12 point sources and the pion correlator   */
    int mixed, max_iter;
    clphys_solver_kind kind;
    clphys_solver_blas blas;
    clphys_bc bc[4];
    int grid[4], have_grid;   /* the split over the devices (default 1x1x1xN)      */
    void (*progress)(void *user, int iter, double rel, int is_true);
} lqcd_solve_cfg;

/* 1 when spec names several devices (a comma-separated list or "gpus"). */
int lqcd_cli_is_list(const char *spec);
/* Solve on the devices of c->device in this process, one host thread each
 * (clphys_dslash_plan_create_multi), the whole field g; prints what the
 * one-device solve prints.  Returns the command's exit status. */
int lqcd_cli_solve_multi(const lqcd_solve_cfg *c, const clphys_gauge_field *g);
/* The random source of every run (n reals, the whole lattice). */
void lqcd_cli_random_source(double *b, size_t n);

#endif
