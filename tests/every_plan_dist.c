/* every_plan_dist.c — the plans only a split problem makes (every_plan.h):
 * the Wilson-Dirac plans of a process grid (halo_pack, halo_exterior:
 * -DPARTS, -DHALO_HALF), the distributed MD plan (cl/md_ghost.cl,
 * cl/md_rebuild.cl), the distributed Poisson plan (cl/poisson_halo.cl, the
 * line relaxations with -DCSHIFT) and the gravity plans over several devices
 * and ranks, each made through the public call an application makes. */
#include "every_plan.h"

#include <stdio.h>
#include <stdlib.h>

/* The same context n times: each member's program is built in it, as on n
 * devices of that description. */
static clphys_context **repeat(clphys_context *ctx, int n)
{
    clphys_context **c = malloc(sizeof *c * (size_t)n);
    for (int k = 0; c && k < n; k++) c[k] = ctx;
    return c;
}

/* Every direction split (grid 2x2x2x2, -DPARTS=15: the face code of each
 * direction compiled), SoA as on GPUs, reconstruct-12: fp32 with 16-bit
 * faces (the multi-device plan's option) and fp64. */
static void lqcd_multi(clphys_context *ctx, uint64_t seed, ep_check_fn check, void *user)
{
    static const int grid[4] = {2, 2, 2, 2}, dims[4] = {8, 8, 8, 8};
    enum { N = 16 };
    clphys_lqcd_gauge_field g;
    clphys_context **c = repeat(ctx, N);
    clphys_status st = c ? clphys_lqcd_gauge_create(dims, &g) : CLPHYS_ERR_OUT_OF_MEMORY;
    check(user, ctx, st, "multi-device gauge field");
    if (st) {
        free(c);
        return;
    }
    clphys_lqcd_gauge_hot(&g, seed);
    for (int prec = 0; prec < 2; prec++) {
        clphys_lqcd_dslash_params p = {.precision = (clphys_precision)prec,
                                       .reconstruct = 12,
                                       .kappa = 0.12,
                                       .layout = CLPHYS_LQCD_SOA,
                                       .halo_half = prec == 0,
                                       .no_tune = 1};
        clphys_lqcd_dslash_plan *pl[N] = {NULL};
        char what[96];
        snprintf(what, sizeof what, "multi-device dslash plans 2x2x2x2 %s", prec ? "fp64" : "fp32 16-bit faces");
        check(user, ctx, clphys_lqcd_dslash_plan_create_multi(N, c, grid, &g, &p, pl), what);
        for (int k = 0; k < N; k++) clphys_lqcd_dslash_plan_destroy(pl[k]);
    }
    clphys_lqcd_gauge_destroy(&g);
    free(c);
}

static void gravity_multi(clphys_context *ctx, ep_check_fn check, void *user)
{
    for (int prec = 0; prec < 2; prec++) {
        clphys_nbody_gravity_params p = {.precision = (clphys_precision)prec};
        clphys_nbody_gravity_multi *m = NULL;
        check(user, ctx, clphys_nbody_gravity_multi_create(&ctx, 1, 1, &p, &m),
              prec ? "gravity multi-device plan (fp64)" : "gravity multi-device plan (fp32)");
        clphys_nbody_gravity_multi_destroy(m);
    }
}

void ep_make_multi_plans(clphys_context *ctx, uint64_t seed, ep_check_fn check, void *user)
{
    lqcd_multi(ctx, seed, check, user);
    gravity_multi(ctx, check, user);
}
