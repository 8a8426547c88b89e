/* hop.c — the launch of the Wilson hopping term (cl/lqcd_dslash.cl) with a
 * plan's gauge field, work-group size and boundary phases; every operator of
 * the path and the work-group tuning go through it.  On a plan over MPI
 * ranks the hop goes through the halo exchange (halo.c). */
#include "lqcd_internal.h"

#include <string.h>

void lqcd_phase_args(const clphys_lqcd_dslash_plan *pl, lqcd_phases *ph, cp_karg a[2])
{
    for (int i = 0; i < 8; i++) {
        ph->f32[0].s[i] = (float)pl->phf[i / 2][i % 2], ph->f32[1].s[i] = (float)pl->phb[i / 2][i % 2];
        ph->f64[0].s[i] = pl->phf[i / 2][i % 2], ph->f64[1].s[i] = pl->phb[i / 2][i % 2];
    }
    for (int d = 0; d < 2; d++)
        a[d] = pl->real_size == 4 ? CP_SIZED(sizeof ph->f32[d], &ph->f32[d]) : CP_SIZED(sizeof ph->f64[d], &ph->f64[d]);
}

clphys_status lqcd_hop_kernel(clphys_lqcd_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity,
                              int g5, cl_kernel *kout, size_t *global)
{
    clphys_context *ctx = pl->ctx;
    cl_kernel k = g5 ? pl->hop_g5[g5 - 1] : pl->hop;
    int xpay = x != NULL;
    cl_mem xx = x ? x : in;
    const float af = (float)a;
    lqcd_phases ph;
    cp_karg phase[2];
    lqcd_phase_args(pl, &ph, phase);
    CP_TRY(CP_ARGS(ctx, k, out, in, pl->gauge, xx, CP_EITHER(pl->real_size == 4, af, a), xpay, parity, phase[0],
                   phase[1]));
    size_t n = parity < 0 ? pl->vol : pl->vh;
    *global = pl->local ? cp_round_up(n, pl->local) : n;
    *kout = k;
    return CLPHYS_SUCCESS;
}

clphys_status lqcd_hop(clphys_lqcd_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity,
                       double *kernel_s)
{
    return lqcd_hop_g5(pl, out, in, x, a, parity, 0, kernel_s);
}

clphys_status lqcd_hop_g5(clphys_lqcd_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity, int g5,
                          double *kernel_s)
{
    if (pl->halo_hop) return pl->halo_hop(pl, out, in, x, a, parity, g5, kernel_s, NULL);
    cl_kernel k;
    size_t global;
    CP_TRY(lqcd_hop_kernel(pl, out, in, x, a, parity, g5, &k, &global));
    return cp_launch(pl->ctx, k, 1, &global, pl->local ? &pl->local : NULL, kernel_s);
}

clphys_status lqcd_hop_split(clphys_lqcd_dslash_plan *pl, cl_mem out, cl_mem in, cl_mem x, double a, int parity, int g5,
                             clphys_lqcd_dslash_split *split)
{
    if (pl->halo_hop) return pl->halo_hop(pl, out, in, x, a, parity, g5, NULL, split);
    double t = 0;
    CP_TRY(lqcd_hop_g5(pl, out, in, x, a, parity, g5, &t));
    split->interior_s += t;
    split->hops++;
    split->sites += parity < 0 ? pl->vol : pl->vh;
    return CLPHYS_SUCCESS;
}
