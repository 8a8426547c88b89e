/* hop.c — the launch of the Wilson hopping term (cl/wilson_dslash.cl) with a
 * plan's gauge field, work-group size and boundary phases; every operator of
 * the path and the work-group tuning go through it.  On a plan over MPI
 * ranks the hop goes through the halo exchange (halo.c). */
#include "lqcd_internal.h"

#include <string.h>

clphys_status lqcd_phase_args(clphys_dslash_plan *pl, cl_kernel k, cl_uint idx)
{
    clphys_context *ctx = pl->ctx;
    if (pl->real_size == 4) {
        cl_float8 f, b;
        for (int i = 0; i < 8; i++) f.s[i] = (float)pl->phf[i / 2][i % 2], b.s[i] = (float)pl->phb[i / 2][i % 2];
        CP_TRY(CP_ARG(ctx, k, idx, f));
        return CP_ARG(ctx, k, idx + 1, b);
    }
    cl_double8 f, b;
    for (int i = 0; i < 8; i++) f.s[i] = pl->phf[i / 2][i % 2], b.s[i] = pl->phb[i / 2][i % 2];
    CP_TRY(CP_ARG(ctx, k, idx, f));
    return CP_ARG(ctx, k, idx + 1, b);
}

clphys_status lqcd_hop_kernel(clphys_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity, int g5,
                              cl_kernel *kout, size_t *global)
{
    clphys_context *ctx = pl->ctx;
    cl_kernel k = g5 ? pl->hop_g5[g5 - 1] : pl->hop;
    int xpay = x != NULL;
    cl_mem xx = x ? x : in;
    CP_TRY(CP_ARG(ctx, k, 0, out));
    CP_TRY(CP_ARG(ctx, k, 1, in));
    CP_TRY(CP_ARG(ctx, k, 2, pl->gauge));
    CP_TRY(CP_ARG(ctx, k, 3, xx));
    if (pl->real_size == 4) {
        float af = (float)a;
        CP_TRY(CP_ARG(ctx, k, 4, af));
    } else {
        CP_TRY(CP_ARG(ctx, k, 4, a));
    }
    CP_TRY(CP_ARG(ctx, k, 5, xpay));
    CP_TRY(CP_ARG(ctx, k, 6, parity));
    CP_TRY(lqcd_phase_args(pl, k, 7));
    size_t n = parity < 0 ? pl->vol : pl->vh;
    *global = pl->local ? cp_round_up(n, pl->local) : n;
    *kout = k;
    return CLPHYS_SUCCESS;
}

clphys_status lqcd_hop(clphys_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity,
                       double *kernel_s)
{
    return lqcd_hop_g5(pl, out, in, x, a, parity, 0, kernel_s);
}

clphys_status lqcd_hop_g5(clphys_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity, int g5,
                          double *kernel_s)
{
    if (pl->halo_hop) return pl->halo_hop(pl, out, in, x, a, parity, g5, kernel_s, NULL);
    cl_kernel k;
    size_t global;
    CP_TRY(lqcd_hop_kernel(pl, out, in, x, a, parity, g5, &k, &global));
    return cp_launch(pl->ctx, k, 1, &global, pl->local ? &pl->local : NULL, kernel_s);
}

clphys_status lqcd_hop_split(clphys_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity, int g5,
                             clphys_dslash_split *split)
{
    if (pl->halo_hop) return pl->halo_hop(pl, out, in, x, a, parity, g5, NULL, split);
    double t = 0;
    CP_TRY(lqcd_hop_g5(pl, out, in, x, a, parity, g5, &t));
    split->interior_s += t;
    split->hops++;
    split->sites += parity < 0 ? pl->vol : pl->vh;
    return CLPHYS_SUCCESS;
}
