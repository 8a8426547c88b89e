/* lqcd_report.c — what `clphys lqcd solve` prints (one line per solve and a
 * total line; every iteration only with --monitor) and the correlator file
 * it writes with --output (text, or JSON when the name ends in .json),
 * for the one-device, MPI and multi-device forms alike. */
#include "cli.h"
#include "lqcd_cli.h"

#include <stdio.h>
#include <string.h>

void lqcd_cli_monitor(void *user, int iter, double rel, int is_true)
{
    (void)user;
    printf("  iteration %6d  %s = %.6e\n", iter, is_true ? "true |b - D x|/|b|" : "iterated residual ", rel);
}

void lqcd_cli_header(clphys_lqcd_solver_kind kind, int mixed, double kappa, double tol, int point)
{
    printf("%s, %s, kappa %g, tol %g: %s\n", kind == CLPHYS_LQCD_SOLVER_CGNR ? "CGNR" : "BiCGStab",
           mixed ? "mixed fp32/fp64" : "fp64", kappa, tol,
           point ? "12 point sources (spin, colour)" : "a random source");
    fflush(stdout);
}

void lqcd_cli_solve_line(int point, int src, int converged, const clphys_lqcd_solver_result *res, lqcd_cli_total *t)
{
    if (point)
        printf("source spin %d colour %d: ", src / 3, src % 3);
    else
        printf("source random: ");
    printf("%s, %d iterations, %d restarts, residual %.3e, %.3f s (host b to host x), %.1f GFLOP/s\n",
           converged ? "converged" : "NOT CONVERGED", res->iterations, res->restarts, res->rel_residual, res->seconds,
           res->gflops);
    fflush(stdout);
    t->solves++, t->iterations += res->iterations, t->seconds += res->seconds;
}

void lqcd_cli_total_line(const lqcd_cli_total *t)
{
    printf("total: %d solve%s, %lld iterations, %.3f s\n", t->solves, t->solves == 1 ? "" : "s", t->iterations,
           t->seconds);
}

int lqcd_cli_correlator(const char *file, const double *corr, const int dims[4], double kappa)
{
    printf("pion correlator C(t) = sum_x |S(x,t)|^2\n");
    for (int t = 0; t < dims[3]; t++) printf("C %3d %.12e\n", t, corr[t]);
    if (!file) return 0;
    FILE *f;
    char tmp[4200];
    if (clphys_output_open(file, &f, tmp, sizeof tmp)) {
        fprintf(stderr, "clphys lqcd solve: --output: %s\n", clphys_last_error(NULL));
        return 1;
    }
    const size_t n = strlen(file);
    const int json = n >= 5 && !strcmp(file + n - 5, ".json");
    int ok;
    if (json) {
        ok = fprintf(f,
                     "{\"observable\": \"pion correlator C(t) = sum_x |S(x,t)|^2\", \"kappa\": %.17g, "
                     "\"lattice\": [%d, %d, %d, %d], \"C\": [",
                     kappa, dims[0], dims[1], dims[2], dims[3]) > 0;
        for (int t = 0; ok && t < dims[3]; t++) ok = fprintf(f, "%s%.17g", t ? ", " : "", corr[t]) > 0;
        ok = ok && fprintf(f, "]}\n") > 0;
    } else {
        ok = fprintf(f, "# pion correlator C(t) = sum_x |S(x,t)|^2, kappa %.17g, lattice %dx%dx%dx%d\n# t C(t)\n",
                     kappa, dims[0], dims[1], dims[2], dims[3]) > 0;
        for (int t = 0; ok && t < dims[3]; t++) ok = fprintf(f, "%d %.17g\n", t, corr[t]) > 0;
    }
    if (clphys_output_close(f, tmp, file, ok)) {
        fprintf(stderr, "clphys lqcd solve: --output: %s\n", clphys_last_error(NULL));
        return 1;
    }
    printf("wrote %s (the correlator, %s)\n", file, json ? "JSON" : "text");
    return 0;
}
