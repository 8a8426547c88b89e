/* lqcd_cli.h — what `clphys lqcd solve` hands to its multi-device form
 * (cli/lqcd_multi.c): the options of a solve, already checked. */
#ifndef CLPHYS_CLI_LQCD_H
#define CLPHYS_CLI_LQCD_H

#include "clphys.h"

typedef struct {
    const char *device; /* a device list: "gpus", "0:0,0:1", ...              */
    double kappa, tol;
    int point; /* 1: the 12 point sources and the pion correlator   */
    int mixed, max_iter;
    clphys_lqcd_solver_kind kind;
    clphys_lqcd_solver_blas blas;
    clphys_lqcd_bc bc[4];
    int grid[4], have_grid; /* the split over the devices (default 1x1x1xN)      */
    void (*progress)(void *user, int iter, double rel, int is_true); /* --monitor, else NULL   */
    const char *output; /* --output FILE for the correlator, or NULL             */
} lqcd_solve_cfg;

/* What the solves print and write (cli/lqcd_report.c). */
typedef struct {
    int solves;
    long long iterations;
    double seconds;
} lqcd_cli_total;
/* --monitor: every iteration's residual (a solver progress callback). */
void lqcd_cli_monitor(void *user, int iter, double rel, int is_true);
/* The line before the solves: solver, precision, kappa, tol, sources. */
void lqcd_cli_header(clphys_lqcd_solver_kind kind, int mixed, double kappa, double tol, int point);
/* One line per solve (source, verdict, iterations, residual, time), added to *t. */
void lqcd_cli_solve_line(int point, int src, int converged, const clphys_lqcd_solver_result *res, lqcd_cli_total *t);
/* The total line: solves, iterations, seconds. */
void lqcd_cli_total_line(const lqcd_cli_total *t);
/* The correlator C(t), t = 0 .. dims[3] - 1, on stdout, and into file when
 * not NULL (text, or JSON for a name ending in .json; written atomically
 * through clphys_output_open/close).  0, or 1 after saying why on stderr. */
int lqcd_cli_correlator(const char *file, const double *corr, const int dims[4], double kappa);

/* 1 when spec names several devices (a comma-separated list or "gpus"). */
int lqcd_cli_is_list(const char *spec);
/* Solve on the devices of c->device in this process, one host thread each
 * (clphys_lqcd_dslash_plan_create_multi), the whole field g; prints what the
 * one-device solve prints.  Returns the command's exit status. */
int lqcd_cli_solve_multi(const lqcd_solve_cfg *c, const clphys_lqcd_gauge_field *g);
/* The random source of every run (n reals, the whole lattice). */
void lqcd_cli_random_source(double *b, size_t n);

#endif
