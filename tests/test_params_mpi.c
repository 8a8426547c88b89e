/* test_params_mpi.c — the collective calls that take a parameter struct
 * (clphys_nbody_gravity_mpi_create, clphys_md_mpi_create,
 * clphys_lqcd_dslash_plan_create_mpi, clphys_poisson_mpi_plan_create) read it
 * at its struct_size like the others (platform/params.c; test_params.c),
 * and a struct_size refused on one rank only is refused on every rank
 * with the same status, so that no rank goes on into a collective the
 * others have left.  Run under mpiexec with 2 ranks. */
#include "util.h"
#include "clphys_nbody_mpi.h"
#include "clphys_lqcd_mpi.h"
#include "clphys_md_mpi.h"
#include "clphys_poisson_mpi.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static int rank, size;
static clphys_context *ctx;

/* the struct_size of each case on this rank: absurd on rank 1 only, then on
 * every rank */
static size_t case_size(int c) { return c == 0 ? (rank == 1 ? 1 : 0) : 4097; }

static void every_rank_refuses(clphys_status st)
{
    assert_int_equal(st, CLPHYS_ERR_INVALID_ARGUMENT);
    int mine = (int)st, lo, hi;
    MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    assert_int_equal(lo, hi);
}

static void gravity(void **state)
{
    (void)state;
    for (int c = 0; c < 2; c++) {
        clphys_nbody_gravity_params p = {.struct_size = case_size(c), .eps = 0.01};
        clphys_nbody_gravity_mpi *g = NULL;
        every_rank_refuses(
            clphys_nbody_gravity_mpi_create(MPI_COMM_WORLD, &ctx, 1, &p, CLPHYS_NBODY_GRAVITY_EXCHANGE_AUTO, 0, &g));
        assert_null(g);
    }
}

static void md(void **state)
{
    (void)state;
    clphys_md_system sys = {0};
    if (rank == 0) assert_int_equal(clphys_md_fcc(0.8442, 4, 1.0, 7, &sys), CLPHYS_SUCCESS);
    for (int c = 0; c < 4; c++) { /* the md struct's size, then the embedded lj struct's */
        clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3}, .dt = 0.005, .neigh_every = 10};
        if (c < 2)
            p.struct_size = case_size(c);
        else
            p.lj.struct_size = case_size(c - 2);
        clphys_md_mpi *m = NULL;
        every_rank_refuses(clphys_md_mpi_create(MPI_COMM_WORLD, ctx, &p, NULL, 0, rank == 0 ? &sys : NULL, &m));
        assert_null(m);
    }
    clphys_md_system_destroy(&sys);
}

static void dslash(void **state)
{
    (void)state;
    static const int dims[4] = {4, 4, 4, 4}, grid[4] = {1, 1, 1, 2};
    clphys_lqcd_gauge_field g;
    assert_int_equal(clphys_lqcd_gauge_create(dims, &g), CLPHYS_SUCCESS);
    for (int c = 0; c < 2; c++) {
        clphys_lqcd_dslash_params p = {.struct_size = case_size(c), .kappa = 0.12};
        clphys_lqcd_dslash_plan *pl = NULL;
        every_rank_refuses(clphys_lqcd_dslash_plan_create_mpi(MPI_COMM_WORLD, grid, ctx, &g, &p, &pl));
        assert_null(pl);
    }
    clphys_lqcd_gauge_destroy(&g);
}

static void poisson(void **state)
{
    (void)state;
    double dx[8], dz[4], depth[64];
    for (int i = 0; i < 8; i++) dx[i] = 1000;
    assert_int_equal(clphys_poisson_levels(4, 400, 1, dz), CLPHYS_SUCCESS);
    assert_int_equal(clphys_poisson_box(8, 8, 400, depth), CLPHYS_SUCCESS);
    const clphys_poisson_geometry g = {.nx = 8, .ny = 8, .nz = 4, .dx = dx, .dy = dx, .dz = dz, .depth = depth};
    for (int c = 0; c < 4; c++) { /* the solver's struct, then the decomposition's */
        clphys_poisson_params p = {.struct_size = c < 2 ? case_size(c) : 0};
        clphys_poisson_mpi_params mp = {.struct_size = c < 2 ? 0 : case_size(c - 2)};
        clphys_poisson_mpi_plan *pl = NULL;
        every_rank_refuses(clphys_poisson_mpi_plan_create(ctx, MPI_COMM_WORLD, rank == 0 ? &g : NULL, &p, &mp, &pl));
        assert_null(pl);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    setenv("CLPHYS_NO_TUNE", "1", 1);
    ctx = tu_context();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gravity),
        cmocka_unit_test(md),
        cmocka_unit_test(dslash),
        cmocka_unit_test(poisson),
    };
    int failed = 1;
    if (size != 2)
        fprintf(stderr, "test_params_mpi needs 2 ranks\n");
    else
        failed = cmocka_run_group_tests(tests, NULL, NULL);
    int any;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    clphys_context_destroy(ctx);
    MPI_Finalize();
    return any ? 1 : 0;
}
