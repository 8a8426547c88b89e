/* lqcd_multi.c — `clphys lqcd solve FILE --device gpus` (or a list such as
 * 0:0,0:1): the lattice split over the devices of one process, one host
 * thread per device calling the solver collectively
 * (clphys_lqcd_dslash_plan_create_multi, include/clphys_lqcd.h). */
#include "cli.h"
#include "lqcd_cli.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDEV 16

int lqcd_cli_is_list(const char *spec) { return spec && (strchr(spec, ',') || !strcmp(spec, "gpus")); }

typedef struct {
    clphys_lqcd_solver_plan *sp;
    double *b, *x;
    clphys_lqcd_solver_result res;
    clphys_status st;
} job;

static void *solve_thread(void *arg)
{
    job *j = arg;
    j->st = clphys_lqcd_solver_solve(j->sp, j->b, j->x, &j->res);
    return NULL;
}

/* Between the whole lattice (dims) and device k's block (grid). */
static void block(const int dims[4], const int grid[4], int k, double *whole, double *part, int to_part)
{
    int ld[4], co[4];
    clphys_lqcd_grid_local(dims, grid, k, ld, co);
    const size_t lv = (size_t)ld[0] * ld[1] * ld[2] * ld[3];
    for (size_t l = 0; l < lv; l++) {
        size_t r = l, gs = 0, stride = 1;
        for (int mu = 0; mu < 4; mu++) {
            gs += (r % (size_t)ld[mu] + (size_t)co[mu] * ld[mu]) * stride;
            r /= (size_t)ld[mu], stride *= (size_t)dims[mu];
        }
        if (to_part)
            memcpy(part + l * 24, whole + gs * 24, 24 * sizeof(double));
        else
            memcpy(whole + gs * 24, part + l * 24, 24 * sizeof(double));
    }
}

int lqcd_cli_solve_multi(const lqcd_solve_cfg *c, const clphys_lqcd_gauge_field *g)
{
    clphys_context **ctxs = NULL;
    int n = 0, rc = 1;
    clphys_status st = clphys_contexts_create(c->device, 0, 1, &ctxs, &n);
    if (st) return cli_fail("lqcd", st, NULL);
    int grid[4] = {1, 1, 1, n};
    if (c->have_grid) memcpy(grid, c->grid, sizeof grid);
    clphys_lqcd_dslash_plan *p64[MAXDEV] = {NULL}, *p32[MAXDEV] = {NULL};
    job jobs[MAXDEV];
    memset(jobs, 0, sizeof jobs);
    const size_t V = g->volume;
    double *b = calloc(24 * V, sizeof(double)), *x = calloc(24 * V, sizeof(double));
    double *corr = calloc((size_t)g->dims[3], sizeof(double));
    if (n > MAXDEV) {
        fprintf(stderr, "clphys lqcd: %d devices, at most %d in one process\n", n, MAXDEV);
        goto out;
    }
    if (!b || !x || !corr) {
        fprintf(stderr, "clphys lqcd: out of memory\n");
        goto out;
    }
    clphys_lqcd_dslash_params a = {.precision = CLPHYS_FP64, .reconstruct = 18, .kappa = c->kappa}, s32;
    memcpy(a.bc, c->bc, sizeof a.bc);
    s32 = a;
    s32.precision = CLPHYS_FP32, s32.reconstruct = 12;
    st = clphys_lqcd_dslash_plan_create_multi(n, ctxs, grid, g, &a, p64);
    if (!st && c->mixed) st = clphys_lqcd_dslash_plan_create_multi(n, ctxs, grid, g, &s32, p32);
    if (st) {
        rc = cli_fail("lqcd", st, NULL);
        goto out;
    }
    const clphys_lqcd_solver_params prm = {.kind = c->kind,
                                           .tol = c->tol,
                                           .max_iter = c->max_iter,
                                           .mixed = c->mixed,
                                           .blas = c->blas,
                                           .progress = c->progress};
    for (int k = 0; k < n && !st; k++) {
        const size_t lv = V / (size_t)n;
        jobs[k].b = malloc(sizeof(double) * 24 * lv), jobs[k].x = malloc(sizeof(double) * 24 * lv);
        if (!jobs[k].b || !jobs[k].x) {
            fprintf(stderr, "clphys lqcd: out of memory\n");
            goto out;
        }
        /* only device 0 reports the iterations (the same on every device) */
        clphys_lqcd_solver_params pk = prm;
        if (k) pk.progress = NULL;
        if ((st = clphys_lqcd_solver_plan_create(p64[k], p32[k], &pk, &jobs[k].sp))) rc = cli_fail("lqcd", st, ctxs[k]);
    }
    if (st) goto out;
    printf("%d devices in this process, grid %dx%dx%dx%d\n", n, grid[0], grid[1], grid[2], grid[3]);
    const int nsrc = c->point ? 12 : 1, lt = g->dims[3];
    const size_t vol3 = V / (size_t)lt;
    lqcd_cli_total total = {0};
    lqcd_cli_header(c->kind, c->mixed, c->kappa, c->tol, nsrc == 12);
    for (int src = 0; src < nsrc; src++) {
        memset(b, 0, sizeof(double) * 24 * V);
        if (nsrc == 1)
            lqcd_cli_random_source(b, 24 * V);
        else
            b[src * 2] = 1; /* site 0, spin src/3, colour src%3 */
        for (int k = 0; k < n; k++) block(g->dims, grid, k, b, jobs[k].b, 1);
        pthread_t t[MAXDEV];
        for (int k = 0; k < n; k++) pthread_create(&t[k], NULL, solve_thread, &jobs[k]);
        for (int k = 0; k < n; k++) pthread_join(t[k], NULL);
        int bad = -1;
        for (int k = 0; k < n && bad < 0; k++)
            if (jobs[k].st && jobs[k].st != CLPHYS_ERR_NOT_CONVERGED) bad = k;
        const clphys_lqcd_solver_result *res = &jobs[0].res;
        lqcd_cli_solve_line(nsrc == 12, src, !jobs[0].st, res, &total);
        if (bad >= 0 || jobs[0].st) {
            rc = cli_fail("lqcd", bad >= 0 ? jobs[bad].st : jobs[0].st, ctxs[bad >= 0 ? bad : 0]);
            goto out;
        }
        for (int k = 0; k < n; k++) block(g->dims, grid, k, x, jobs[k].x, 0);
        for (size_t site = 0; site < V; site++)
            for (int kk = 0; kk < 24; kk++) corr[(int)(site / vol3)] += x[site * 24 + kk] * x[site * 24 + kk];
    }
    lqcd_cli_total_line(&total);
    rc = nsrc == 12 ? lqcd_cli_correlator(c->output, corr, g->dims, c->kappa) : 0;
out:
    for (int k = 0; k < n && k < MAXDEV; k++) {
        clphys_lqcd_solver_plan_destroy(jobs[k].sp);
        clphys_lqcd_dslash_plan_destroy(p64[k]), clphys_lqcd_dslash_plan_destroy(p32[k]);
        free(jobs[k].b), free(jobs[k].x);
    }
    free(b), free(x), free(corr);
    for (int k = 1; k < n; k++) clphys_context_destroy(ctxs[k]);
    rc = cli_context_done(n ? ctxs[0] : NULL, rc);
    clphys_contexts_destroy(ctxs, 0);
    return rc;
}
