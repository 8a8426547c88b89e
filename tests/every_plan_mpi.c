/* every_plan_mpi.c — the plans of a problem split between MPI ranks
 * (every_plan.h, ep_make_mpi_plans), made through the calls an application
 * makes on each rank: each rank's context then holds the programs its rank
 * builds (rank 0's of the Poisson plan include its gathered coarse levels). */
#include "every_plan.h"
#include "clphys_nbody_mpi.h"
#include "clphys_lqcd_mpi.h"
#include "clphys_md_mpi.h"
#include "clphys_poisson_mpi.h"

#include <stdio.h>
#include <stdlib.h>

/* The lattice split along t between the ranks (-DPARTS=8: the usual
 * split), every precision, layout and reconstruction (the messages carry
 * fp32 or fp64), and the mixed-precision solver over it. */
static void lqcd_mpi(MPI_Comm comm, clphys_context *ctx, uint64_t seed, ep_check_fn check, void *user)
{
    int size, rank;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    const int grid[4] = {1, 1, 1, size}, dims[4] = {4, 4, 4, 4};
    clphys_lqcd_gauge_field g;
    clphys_status st = clphys_lqcd_gauge_create(dims, &g);
    check(user, ctx, st, "local gauge field");
    if (st) return;
    clphys_lqcd_gauge_hot(&g, seed + (uint64_t)rank); /* the plans do not look at the values */
    clphys_lqcd_dslash_plan *pl[2][2] = {{NULL}};     /* [precision][layout], reconstruct-12 */
    for (int prec = 0; prec < 2; prec++)
        for (int lay = 0; lay < 2; lay++)
            for (int rec = 0; rec < 2; rec++) {
                clphys_lqcd_dslash_params p = {.precision = (clphys_precision)prec,
                                               .reconstruct = rec ? 18 : 12,
                                               .kappa = 0.12,
                                               .layout = lay ? CLPHYS_LQCD_AOS : CLPHYS_LQCD_SOA,
                                               .no_tune = 1};
                clphys_lqcd_dslash_plan *d = NULL;
                char what[96];
                snprintf(what, sizeof what, "dslash mpi plan 1x1x1x%d %s %s reconstruct-%d", size,
                         prec ? "fp64" : "fp32", lay ? "AoS" : "SoA", p.reconstruct);
                check(user, ctx, clphys_lqcd_dslash_plan_create_mpi(comm, grid, ctx, &g, &p, &d), what);
                if (rec == 0)
                    pl[prec][lay] = d;
                else
                    clphys_lqcd_dslash_plan_destroy(d);
            }
    if (pl[1][0] && pl[0][0]) {
        clphys_lqcd_solver_params sp = {.mixed = 1};
        clphys_lqcd_solver_plan *s = NULL;
        check(user, ctx, clphys_lqcd_solver_plan_create(pl[1][0], pl[0][0], &sp, &s), "mixed solver plan over mpi");
        clphys_lqcd_solver_plan_destroy(s);
    }
    for (int prec = 0; prec < 2; prec++)
        for (int lay = 0; lay < 2; lay++) clphys_lqcd_dslash_plan_destroy(pl[prec][lay]);
    clphys_lqcd_gauge_destroy(&g);
}

/* x cut between the ranks, both precisions, the variant the host picks. */
static void md_mpi(MPI_Comm comm, clphys_context *ctx, uint64_t seed, ep_check_fn check, void *user)
{
    int size, rank;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    clphys_md_system sys;
    /* 4 x size FCC cells along each edge: a subdomain 4 cells thick */
    clphys_status st = clphys_md_fcc(0.8442, 4 * size, 1.44, seed, &sys);
    check(user, ctx, st, "md FCC system");
    if (st) return;
    const int grid[3] = {size, 1, 1};
    for (int prec = 0; prec < 2; prec++) {
        clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = (clphys_precision)prec},
                              .dt = 0.005,
                              .neigh_every = 1,
                              .neigh_check = 1};
        clphys_md_mpi *pl = NULL;
        check(user, ctx, clphys_md_mpi_create(comm, ctx, &p, grid, 0, rank == 0 ? &sys : NULL, &pl),
              prec ? "md mpi plan (fp64)" : "md mpi plan (fp32)");
        clphys_md_mpi_destroy(pl);
    }
    clphys_md_system_destroy(&sys);
}

/* Each precision with the column and the staged line relaxation (the
 * column-vec one runs as column there), coarse levels kept on the ranks
 * down to 2 columns, then gathered onto rank 0. */
static void poisson_mpi(MPI_Comm comm, clphys_context *ctx, ep_check_fn check, void *user)
{
    enum { NX = 16, NY = 16, NZ = 8 };
    double dx[NX], dy[NY], dz[NZ], depth[NX * NY];
    for (int i = 0; i < NX; i++) dx[i] = 1000;
    for (int j = 0; j < NY; j++) dy[j] = 1000;
    for (int k = 0; k < NZ; k++) dz[k] = 10;
    for (int c = 0; c < NX * NY; c++) depth[c] = 10.0 * NZ;
    int rank;
    MPI_Comm_rank(comm, &rank);
    const clphys_poisson_geometry g = {.nx = NX, .ny = NY, .nz = NZ, .dx = dx, .dy = dy, .dz = dz, .depth = depth};
    static const char *const pname[] = {"mixed", "fp64", "fp32"};
    static const clphys_poisson_line lines[] = {CLPHYS_POISSON_LINE_COLUMN, CLPHYS_POISSON_LINE_STAGED};
    const clphys_poisson_mpi_params mp = {.gather_columns = 2};
    for (int prec = 0; prec < 3; prec++)
        for (int l = 0; l < 2; l++) {
            clphys_poisson_params p = {.precision = (clphys_poisson_precision)prec,
                                       .variant = CLPHYS_POISSON_STENCIL_COLUMN,
                                       .line = lines[l],
                                       .no_tune = 1};
            clphys_poisson_mpi_plan *pl = NULL;
            char what[96];
            snprintf(what, sizeof what, "poisson mpi plan %s, %s line", pname[prec], l ? "staged" : "column");
            check(user, ctx, clphys_poisson_mpi_plan_create(ctx, comm, rank == 0 ? &g : NULL, &p, &mp, &pl), what);
            clphys_poisson_mpi_plan_destroy(pl);
        }
}

static void gravity_mpi(MPI_Comm comm, clphys_context *ctx, ep_check_fn check, void *user)
{
    for (int prec = 0; prec < 2; prec++) {
        clphys_nbody_gravity_params p = {.precision = (clphys_precision)prec};
        clphys_nbody_gravity_mpi *g = NULL;
        check(user, ctx, clphys_nbody_gravity_mpi_create(comm, &ctx, 1, &p, CLPHYS_NBODY_GRAVITY_EXCHANGE_AUTO, 0, &g),
              prec ? "gravity mpi plan (fp64)" : "gravity mpi plan (fp32)");
        clphys_nbody_gravity_mpi_destroy(g);
    }
}

void ep_make_mpi_plans(MPI_Comm comm, clphys_context *ctx, uint64_t seed, ep_check_fn check, void *user)
{
    lqcd_mpi(comm, ctx, seed, check, user);
    md_mpi(comm, ctx, seed, check, user);
    poisson_mpi(comm, ctx, check, user);
    gravity_mpi(comm, ctx, check, user);
}
