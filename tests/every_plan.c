/* every_plan.c — every plan of every path (every_plan.h). */
#include "every_plan.h"
#include "host/linalg/linalg.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    clphys_context *ctx;
    int run;
    ep_check_fn check;
    void *user;
} ep;

static void gravity_plans(const ep *e)
{
    static const clphys_nbody_gravity_params ps[] = {
        {.precision = CLPHYS_FP32},
        {.precision = CLPHYS_FP32, .variant = CLPHYS_NBODY_GRAVITY_TILED, .potential = 1, .eps = 0.01},
        {.precision = CLPHYS_FP32, .variant = CLPHYS_NBODY_GRAVITY_TILED, .flush_denormals = 2},
        {.precision = CLPHYS_FP32, .variant = CLPHYS_NBODY_GRAVITY_VECTOR},
        {.precision = CLPHYS_FP64, .variant = CLPHYS_NBODY_GRAVITY_TILED, .fast_rsqrt64 = -1},
        {.precision = CLPHYS_FP64, .variant = CLPHYS_NBODY_GRAVITY_TILED, .fast_rsqrt64 = 1},
        {.precision = CLPHYS_FP64, .variant = CLPHYS_NBODY_GRAVITY_TILED, .fast_rsqrt64 = 2, .j_split = 2},
        {.precision = CLPHYS_FP64, .variant = CLPHYS_NBODY_GRAVITY_VECTOR, .potential = 1},
    };
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) {
        clphys_nbody_gravity_plan *pl = NULL;
        char what[64];
        snprintf(what, sizeof what, "gravity plan %zu (%s)", i, ps[i].precision == CLPHYS_FP64 ? "fp64" : "fp32");
        e->check(e->user, e->ctx, clphys_nbody_gravity_plan_create(e->ctx, &ps[i], &pl), what);
        clphys_nbody_gravity_plan_destroy(pl);
    }
}

/* Every LJ variant in both precisions through an MD plan, which builds the
 * neighbour list, the forces and the integrator (and runs two steps). */
static void md_plans(const ep *e, uint64_t seed)
{
    clphys_md_system sys;
    clphys_status st = clphys_md_fcc(0.8442, 4, 1.44, seed, &sys);
    e->check(e->user, e->ctx, st, "md FCC system");
    if (st) return;
    for (int v = 1; v < CLPHYS_MD_LJ_NVARIANTS; v++)
        for (int prec = 0; prec < 2; prec++) {
            clphys_md_params p = {.lj = {.r_cut = 2.5,
                                         .skin = 0.3,
                                         .precision = (clphys_precision)prec,
                                         .variant = (clphys_md_lj_variant)v},
                                  .dt = 0.005,
                                  .neigh_every = 1,
                                  .neigh_check = 1};
            clphys_md_plan *pl = NULL;
            char what[96];
            snprintf(what, sizeof what, "md plan, lj %s %s", clphys_md_lj_variant_name((clphys_md_lj_variant)v),
                     prec ? "fp64" : "fp32");
            st = clphys_md_plan_create(e->ctx, &p, &sys, &pl);
            if (!st && e->run) st = clphys_md_run(pl, 2, NULL);
            e->check(e->user, e->ctx, st, what);
            clphys_md_plan_destroy(pl);
        }
    clphys_md_system_destroy(&sys);
}

static void lqcd_plans(const ep *e, uint64_t seed)
{
    const int dims[4] = {4, 4, 4, 4};
    clphys_lqcd_gauge_field g;
    clphys_status st = clphys_lqcd_gauge_create(dims, &g);
    e->check(e->user, e->ctx, st, "gauge field");
    if (st) return;
    clphys_lqcd_gauge_hot(&g, seed);
    clphys_lqcd_dslash_plan *pl[2][2] = {{NULL}}; /* [precision][layout], reconstruct-12 */
    for (int prec = 0; prec < 2; prec++)
        for (int lay = 0; lay < 2; lay++)
            for (int rec = 0; rec < 2; rec++) {
                clphys_lqcd_dslash_params p = {.precision = (clphys_precision)prec,
                                               .reconstruct = rec ? 18 : 12,
                                               .kappa = 0.12,
                                               .layout = lay ? CLPHYS_LQCD_AOS : CLPHYS_LQCD_SOA,
                                               .no_tune = 1};
                clphys_lqcd_dslash_plan *d = NULL;
                char what[64];
                snprintf(what, sizeof what, "dslash plan %s %s reconstruct-%d", prec ? "fp64" : "fp32",
                         lay ? "AoS" : "SoA", p.reconstruct);
                e->check(e->user, e->ctx, clphys_lqcd_dslash_plan_create(e->ctx, &g, &p, &d), what);
                if (rec == 0)
                    pl[prec][lay] = d;
                else
                    clphys_lqcd_dslash_plan_destroy(d);
            }
    for (int lay = 0; lay < 2; lay++)
        for (int blas = 1; blas <= 2 && pl[1][lay]; blas++) {
            clphys_lqcd_solver_params sp = {.mixed = pl[0][lay] != NULL, .blas = (clphys_lqcd_solver_blas)blas};
            clphys_lqcd_solver_plan *s = NULL;
            e->check(e->user, e->ctx, clphys_lqcd_solver_plan_create(pl[1][lay], pl[0][lay], &sp, &s),
                     "solver plan (fp64)");
            clphys_lqcd_solver_plan_destroy(s);
        }
    for (int prec = 0; prec < 2; prec++)
        for (int lay = 0; lay < 2; lay++) clphys_lqcd_dslash_plan_destroy(pl[prec][lay]);
    clphys_lqcd_gauge_destroy(&g);
}

static void linalg_spaces(const ep *e)
{
    for (int prec = 0; prec < 2; prec++)
        for (int blas = 0; blas < 2; blas++) {
            la_space_params p = {
                .precision = (clphys_precision)prec, .n = 1024, .complex_values = 1, .blas = (la_blas)blas};
            la_space *s = NULL;
            e->check(e->user, e->ctx, la_space_create(e->ctx, &p, &s),
                     prec ? "linear-algebra space (fp64)" : "linear-algebra space (fp32)");
            la_space_destroy(s);
        }
}

/* The Poisson solver in its three precisions with each line-relaxation
 * variant (column stencil), then each other stencil (default line), on a
 * 16 x 8 x 8 box (and two CG iterations run: NOT_CONVERGED is expected). */
static void poisson_plans(const ep *e)
{
    enum { NX = 16, NY = 8, NZ = 8 };
    double dx[NX], dy[NY], dz[NZ], depth[NX * NY], *rhs = malloc(sizeof(double) * NX * NY * NZ),
                                                   *x = malloc(sizeof(double) * NX * NY * NZ);
    if (!rhs || !x) {
        e->check(e->user, e->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson inputs");
        free(rhs), free(x);
        return;
    }
    for (int i = 0; i < NX; i++) dx[i] = 1000;
    for (int j = 0; j < NY; j++) dy[j] = 1000;
    for (int k = 0; k < NZ; k++) dz[k] = 10;
    for (int c = 0; c < NX * NY; c++) depth[c] = 10.0 * NZ;
    for (int c = 0; c < NX * NY * NZ; c++) rhs[c] = (double)(c % 7) - 3.0;
    const clphys_poisson_geometry g = {.nx = NX, .ny = NY, .nz = NZ, .dx = dx, .dy = dy, .dz = dz, .depth = depth};
    static const char *const pname[] = {"mixed", "fp64", "fp32"};
    static const struct {
        clphys_poisson_stencil s;
        clphys_poisson_line l;
        const char *name;
    } vs[] = {
        {CLPHYS_POISSON_STENCIL_COLUMN, CLPHYS_POISSON_LINE_COLUMN, "column stencil, column line"},
        {CLPHYS_POISSON_STENCIL_COLUMN, CLPHYS_POISSON_LINE_COLUMN_VEC, "column stencil, column-vec line"},
        {CLPHYS_POISSON_STENCIL_COLUMN, CLPHYS_POISSON_LINE_STAGED, "column stencil, staged line"},
        {CLPHYS_POISSON_STENCIL_CELL, CLPHYS_POISSON_LINE_AUTO, "cell stencil"},
        {CLPHYS_POISSON_STENCIL_COLUMN_VEC, CLPHYS_POISSON_LINE_AUTO, "column-vec stencil"},
    };
    for (int prec = 0; prec < 3; prec++)
        for (size_t v = 0; v < sizeof vs / sizeof *vs; v++) {
            clphys_poisson_params p = {.precision = (clphys_poisson_precision)prec,
                                       .variant = vs[v].s,
                                       .line = vs[v].l,
                                       .max_iter = 2,
                                       .no_tune = 1};
            clphys_poisson_plan *pl = NULL;
            clphys_poisson_result r;
            char what[96];
            snprintf(what, sizeof what, "poisson plan %s, %s", pname[prec], vs[v].name);
            clphys_status st = clphys_poisson_plan_create(e->ctx, &g, &p, &pl);
            if (!st && e->run) st = clphys_poisson_solve(pl, rhs, x, &r);
            e->check(e->user, e->ctx, st == CLPHYS_ERR_NOT_CONVERGED ? CLPHYS_SUCCESS : st, what);
            clphys_poisson_plan_destroy(pl);
        }
    free(rhs), free(x);
}

void ep_make_every_plan(clphys_context *ctx, uint64_t seed, int run, ep_check_fn check, void *user)
{
    const ep e = {ctx, run, check, user};
    gravity_plans(&e);
    md_plans(&e, seed);
    lqcd_plans(&e, seed);
    linalg_spaces(&e);
    poisson_plans(&e);
    clphys_limits lim;
    check(user, ctx, clphys_measure_limits(ctx, 1, &lim), "limit probes");
}
