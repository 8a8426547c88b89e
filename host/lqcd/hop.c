/* hop.c — the launch of the Wilson hopping term (cl/wilson_dslash.cl) with a
 * plan's gauge field, work-group size and boundary; every operator of the
 * path and the work-group tuning go through it. */
#include "lqcd_internal.h"

clphys_status lqcd_hop(clphys_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity,
                       double *kernel_s)
{
    return lqcd_hop_g5(pl, out, in, x, a, parity, 0, kernel_s);
}

clphys_status lqcd_hop_g5(clphys_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity, int g5,
                          double *kernel_s)
{
    clphys_context *ctx = pl->ctx;
    cl_kernel k = g5 ? pl->hop_g5[g5 - 1] : pl->hop;
    int xpay = x != NULL;
    cl_mem xx = x ? x : in;
    double tbc = pl->p.antiperiodic_t ? -1.0 : 1.0;
    CP_TRY(CP_ARG(ctx, k, 0, out));
    CP_TRY(CP_ARG(ctx, k, 1, in));
    CP_TRY(CP_ARG(ctx, k, 2, pl->gauge));
    CP_TRY(CP_ARG(ctx, k, 3, xx));
    if (pl->real_size == 4) {
        float af = (float)a, tf = (float)tbc;
        CP_TRY(CP_ARG(ctx, k, 4, af));
        CP_TRY(CP_ARG(ctx, k, 7, tf));
    } else {
        CP_TRY(CP_ARG(ctx, k, 4, a));
        CP_TRY(CP_ARG(ctx, k, 7, tbc));
    }
    CP_TRY(CP_ARG(ctx, k, 5, xpay));
    CP_TRY(CP_ARG(ctx, k, 6, parity));
    size_t n = parity < 0 ? pl->vol : pl->vh;
    size_t global = pl->local ? cp_round_up(n, pl->local) : n;
    return cp_launch(ctx, k, 1, &global, pl->local ? &pl->local : NULL, kernel_s);
}
