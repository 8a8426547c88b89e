/* test_params.c — parameter structs that can gain fields (clphys_core.h,
 * CLPHYS_PARAMS_INIT; platform/params.c):
 *  - the reader: NULL gives the defaults, struct_size 0 the whole layout of
 *    soname 1, a smaller struct_size (an application compiled against an
 *    older header) copies the fields within it and zeroes (defaults) the
 *    rest, a larger one (a newer application) is taken when the fields this
 *    library lacks are unset and refused when one is set, a size below
 *    sizeof(size_t) or above 4096 is refused;
 *  - old applications end to end: a Poisson plan and a gravity plan whose
 *    struct_size stops before fields holding values the plans refuse are
 *    made, with those fields at their defaults (the Poisson solve reaches
 *    the default tolerance), and the same structs at full size are refused;
 *  - every call that takes a parameter struct refuses an absurd struct_size
 *    with CLPHYS_ERR_INVALID_ARGUMENT naming the struct, the lj struct
 *    inside clphys_md_params included, and every tuner refuses one in
 *    clphys_tune_options, or a newer application's with a field set that
 *    this library lacks. */
#include "util.h"
#include "platform/platform.h"
#ifdef CLPHYS_HAVE_MPI
#include "clphys_poisson_mpi.h"
#endif

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void reader(void **state)
{
    (void)state;
    clphys_poisson_params src, dst;
    memset(&src, 0, sizeof src);
    src.tol = 1e-6, src.max_iter = 7, src.smooth = 3, src.omega = 0.5, src.no_time_split = 1;
    memset(&dst, 0x5a, sizeof dst);
    assert_int_equal(cp_params_in(NULL, "p", NULL, sizeof src, sizeof dst, &dst), CLPHYS_SUCCESS);
    assert_int_equal(dst.struct_size, sizeof dst);
    assert_true(dst.tol == 0 && dst.max_iter == 0 && dst.omega == 0 && !dst.progress && !dst.user);
    /* 0: soname 1's layout, every field read */
    assert_int_equal(CP_PARAMS_IN(NULL, clphys_poisson_params, &src, user, &dst), CLPHYS_SUCCESS);
    assert_int_equal(dst.struct_size, sizeof dst);
    assert_true(dst.tol == 1e-6 && dst.max_iter == 7 && dst.smooth == 3 && dst.omega == 0.5 && dst.no_time_split == 1);
    /* an older application's struct: what lies beyond its size is never read */
    src.struct_size = offsetof(clphys_poisson_params, omega);
    assert_int_equal(CP_PARAMS_IN(NULL, clphys_poisson_params, &src, user, &dst), CLPHYS_SUCCESS);
    assert_true(dst.tol == 1e-6 && dst.max_iter == 7 && dst.smooth == 3);
    assert_true(dst.omega == 0 && dst.coarse_scale == 0 && dst.no_time_split == 0 && !dst.progress);
    assert_int_equal(dst.struct_size, sizeof dst);
    /* a newer application's struct: 16 more bytes, unset, then one set */
    unsigned char newer[sizeof(clphys_poisson_params) + 16];
    memset(newer, 0, sizeof newer);
    src.struct_size = sizeof newer;
    memcpy(newer, &src, sizeof src);
    assert_int_equal(CP_PARAMS_IN(NULL, clphys_poisson_params, newer, user, &dst), CLPHYS_SUCCESS);
    assert_true(dst.omega == 0.5 && dst.no_time_split == 1);
    newer[sizeof src + 9] = 1;
    assert_int_equal(CP_PARAMS_IN(NULL, clphys_poisson_params, newer, user, &dst), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(clphys_last_error(NULL), "does not have"));
    /* absurd sizes */
    const size_t absurd[] = {1, sizeof(size_t) - 1, 4097, (size_t)-1};
    for (size_t i = 0; i < sizeof absurd / sizeof *absurd; i++) {
        src.struct_size = absurd[i];
        assert_int_equal(CP_PARAMS_IN(NULL, clphys_poisson_params, &src, user, &dst), CLPHYS_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(clphys_last_error(NULL), "clphys_poisson_params: struct_size"));
    }
    /* the public initializer */
    const clphys_md_lj_params lj = CLPHYS_PARAMS_INIT(clphys_md_lj_params);
    assert_int_equal(lj.struct_size, sizeof lj);
    assert_true(lj.n == 0 && lj.r_cut == 0 && lj.variant == CLPHYS_MD_LJ_AUTO);
}

/* a box of 8 x 8 x 4 cells, every cell wet */
typedef struct {
    double dx[8], dy[8], dz[4], depth[64];
    clphys_poisson_geometry g;
} box;

static void make_box(box *b)
{
    for (int i = 0; i < 8; i++) b->dx[i] = b->dy[i] = 1000;
    assert_int_equal(clphys_poisson_levels(4, 400, 1, b->dz), CLPHYS_SUCCESS);
    assert_int_equal(clphys_poisson_box(8, 8, 400, b->depth), CLPHYS_SUCCESS);
    memset(&b->g, 0, sizeof b->g);
    b->g.nx = 8, b->g.ny = 8, b->g.nz = 4;
    b->g.dx = b->dx, b->g.dy = b->dy, b->g.dz = b->dz, b->g.depth = b->depth;
    b->g.helmholtz = 1e-6; /* non-singular */
}

static void old_application_poisson(void **state)
{
    (void)state;
    clphys_context *ctx = tu_context();
    if (!clphys_context_device(ctx)->fp64) {
        clphys_context_destroy(ctx);
        skip();
    }
    box b;
    make_box(&b);
    clphys_poisson_params p = CLPHYS_PARAMS_INIT(clphys_poisson_params);
    p.precision = CLPHYS_POISSON_FP64;
    p.variant = CLPHYS_POISSON_STENCIL_CELL;
    p.line = CLPHYS_POISSON_LINE_COLUMN;
    /* fields the old application does not have: values the plan refuses */
    p.tol = -1, p.max_iter = -1, p.smooth = -1, p.omega = 7, p.coarse_scale = 9;
    p.local_size[0] = p.local_size[1] = -1;
    p.vcycle_local_size[0] = p.vcycle_local_size[1] = -3;
    clphys_poisson_plan *pl = NULL;
    assert_int_equal(clphys_poisson_plan_create(ctx, &b.g, &p, &pl), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_null(pl);
    p.struct_size = offsetof(clphys_poisson_params, tol);
    assert_int_equal(clphys_poisson_plan_create(ctx, &b.g, &p, &pl), CLPHYS_SUCCESS);
    clphys_poisson_info info;
    clphys_poisson_plan_info(pl, &info);
    assert_int_equal(info.variant, CLPHYS_POISSON_STENCIL_CELL); /* within the old size: read */
    assert_int_equal(info.line, CLPHYS_POISSON_LINE_COLUMN);
    assert_true(info.vcycle_local_size[0] > 0 && info.vcycle_local_size[1] > 0); /* beyond: the default */
    uint64_t rng = tu_rng_init(1);
    double rhs[256], x[256];
    for (int c = 0; c < 256; c++) rhs[c] = tu_uniform(&rng) - 0.5;
    tu_poison_f64(x, 256);
    clphys_poisson_result res;
    assert_int_equal(clphys_poisson_solve(pl, rhs, x, &res), CLPHYS_SUCCESS);
    assert_true(res.rel_residual <= 1e-8); /* the default tol, not -1 */
    assert_true(res.iterations > 0 && res.iterations <= 1000);
    for (int c = 0; c < 256; c++) assert_true(isfinite(x[c]));
    clphys_poisson_plan_destroy(pl);
    clphys_context_destroy(ctx);
}

static void old_application_gravity(void **state)
{
    (void)state;
    clphys_context *ctx = tu_context();
    clphys_nbody_gravity_params p = CLPHYS_PARAMS_INIT(clphys_nbody_gravity_params);
    p.eps = 0.01;
    p.j_split = 999; /* outside 0..64: refused when read */
    clphys_nbody_gravity_plan *pl = NULL;
    assert_int_equal(clphys_nbody_gravity_plan_create(ctx, &p, &pl), CLPHYS_ERR_INVALID_ARGUMENT);
    p.struct_size = offsetof(clphys_nbody_gravity_params, j_split);
    assert_int_equal(clphys_nbody_gravity_plan_create(ctx, &p, &pl), CLPHYS_SUCCESS);
    clphys_nbody_gravity_plan_destroy(pl);
    clphys_context_destroy(ctx);
}

/* the status of a call and that its message names the struct */
static void refused(clphys_status st, const clphys_context *ctx, const char *type)
{
    assert_int_equal(st, CLPHYS_ERR_INVALID_ARGUMENT);
    const char *msg = clphys_last_error(ctx);
    if (!strstr(msg, type)) fail_msg("message \"%s\" does not name %s", msg, type);
}

static void absurd_sizes(void **state)
{
    (void)state;
    clphys_context *ctx = tu_context();
    static const size_t sizes[] = {1, 4097};
    for (int s = 0; s < 2; s++) {
        const size_t bad = sizes[s];
        clphys_nbody_gravity_params gp = {.struct_size = bad};
        clphys_nbody_gravity_plan *gpl = NULL;
        refused(clphys_nbody_gravity_plan_create(ctx, &gp, &gpl), ctx, "clphys_nbody_gravity_params");
        clphys_nbody_gravity_multi *gm = NULL;
        refused(clphys_nbody_gravity_multi_create(&ctx, 1, 1, &gp, &gm), ctx, "clphys_nbody_gravity_params");

        clphys_md_neighbor_params np = {.struct_size = bad, .n = 64, .box = {4, 4, 4}, .r_search = 1};
        clphys_md_neighbor_plan *npl = NULL;
        refused(clphys_md_neighbor_plan_create(ctx, &np, &npl), ctx, "clphys_md_neighbor_params");

        clphys_md_lj_params lp = {.struct_size = bad, .n = 64, .box = {6, 6, 6}, .r_cut = 2.5, .skin = 0.3};
        clphys_md_lj_plan *lpl = NULL;
        refused(clphys_md_lj_plan_create(ctx, &lp, &lpl), ctx, "clphys_md_lj_params");

        double x[3] = {1, 1, 1}, v[3] = {0, 0, 0}, mass[2] = {0, 1};
        int type = 1;
        clphys_md_system sys = {
            .n = 1, .lo = {0, 0, 0}, .hi = {6, 6, 6}, .ntypes = 1, .type_mass = mass, .type = &type, .x = x, .v = v};
        clphys_md_params mp = {.struct_size = bad, .lj = {.r_cut = 2.5, .skin = 0.3}, .dt = 0.005, .neigh_every = 1};
        clphys_md_plan *mpl = NULL;
        refused(clphys_md_plan_create(ctx, &mp, &sys, &mpl), ctx, "clphys_md_params");
        mp.struct_size = 0, mp.lj.struct_size = bad; /* the embedded struct counts its own size */
        refused(clphys_md_plan_create(ctx, &mp, &sys, &mpl), ctx, "clphys_md_lj_params");
        cl_int err;
        cl_mem m[3];
        for (int i = 0; i < 3; i++) {
            m[i] = clCreateBuffer(clphys_context_cl_context(ctx), CL_MEM_READ_WRITE, 64, NULL, &err);
            assert_int_equal(err, CL_SUCCESS);
        }
        clphys_md_buffers mb = {.n = 1, .lo = {0, 0, 0}, .hi = {6, 6, 6}, .x = m[0], .v = m[1], .f = m[2]};
        mp.struct_size = bad, mp.lj.struct_size = 0;
        refused(clphys_md_plan_create_cl(ctx, &mp, &mb, &mpl), ctx, "clphys_md_params");
        for (int i = 0; i < 3; i++) clReleaseMemObject(m[i]);

        clphys_lqcd_gauge_field g;
        static const int dims[4] = {4, 4, 4, 4};
        assert_int_equal(clphys_lqcd_gauge_create(dims, &g), CLPHYS_SUCCESS);
        clphys_lqcd_dslash_params dp = {.struct_size = bad, .kappa = 0.12};
        clphys_lqcd_dslash_plan *dpl = NULL;
        refused(clphys_lqcd_dslash_plan_create(ctx, &g, &dp, &dpl), ctx, "clphys_lqcd_dslash_params");
        static const int grid[4] = {1, 1, 1, 1};
        refused(clphys_lqcd_dslash_plan_create_multi(1, &ctx, grid, &g, &dp, &dpl), ctx, "clphys_lqcd_dslash_params");
        if (clphys_context_device(ctx)->fp64) { /* the solver's plans are fp64 */
            dp.struct_size = 0, dp.precision = CLPHYS_FP64;
            assert_int_equal(clphys_lqcd_dslash_plan_create(ctx, &g, &dp, &dpl), CLPHYS_SUCCESS);
            clphys_lqcd_solver_params sp = {.struct_size = bad};
            clphys_lqcd_solver_plan *spl = NULL;
            refused(clphys_lqcd_solver_plan_create(dpl, NULL, &sp, &spl), ctx, "clphys_lqcd_solver_params");
            double b[24 * 256], sol[24 * 256];
            memset(b, 0, sizeof b);
            clphys_lqcd_solver_result sr;
            refused(clphys_lqcd_solve(dpl, NULL, &sp, b, sol, &sr), ctx, "clphys_lqcd_solver_params");
            clphys_lqcd_dslash_plan_destroy(dpl);
        }
        clphys_lqcd_gauge_destroy(&g);
        clphys_lqcd_gauge_read_params rp = {.struct_size = bad};
        clphys_lqcd_gauge_field rg;
        refused(clphys_lqcd_gauge_read("no-such-file", &rp, &rg, NULL), NULL, "clphys_lqcd_gauge_read_params");

        box bx;
        make_box(&bx);
        clphys_poisson_params pp = {.struct_size = bad};
        clphys_poisson_plan *ppl = NULL;
        refused(clphys_poisson_plan_create(ctx, &bx.g, &pp, &ppl), ctx, "clphys_poisson_params");
        double *a = calloc(7 * 256, sizeof(double));
        assert_non_null(a);
        for (int c = 0; c < 256; c++) a[3 * 256 + c] = 1; /* the identity */
        const clphys_poisson_operator op = {.nx = 8, .ny = 8, .nz = 4, .a = a};
        refused(clphys_poisson_plan_create_operator(ctx, &op, &pp, &ppl), ctx, "clphys_poisson_params");
        free(a);
        /* every tuner, before any work */
        clphys_status (*const tuners[])(clphys_context *, const clphys_tune_options *) = {
            clphys_md_neighbor_tune, clphys_md_lj_tune, clphys_nbody_gravity_tune, clphys_lqcd_dslash_tune,
            clphys_poisson_tune};
        for (size_t t = 0; t < sizeof tuners / sizeof *tuners; t++) {
            clphys_tune_options to = {.struct_size = bad, .quick = 1};
            refused(tuners[t](ctx, &to), ctx, "clphys_tune_options");
            /* a newer application's struct with a field this library lacks set */
            _Alignas(clphys_tune_options) unsigned char newer[sizeof to + 8];
            memset(newer, 0, sizeof newer);
            to.struct_size = sizeof newer;
            memcpy(newer, &to, sizeof to);
            newer[sizeof to + 3] = 1;
            refused(tuners[t](ctx, (const clphys_tune_options *)(const void *)newer), ctx, "clphys_tune_options");
        }
#ifdef CLPHYS_HAVE_MPI
        clphys_poisson_mpi_params pm = {.struct_size = bad};
        int block[4];
        refused(clphys_poisson_mpi_block(16, 16, 2, &pm, 0, block, NULL), NULL, "clphys_poisson_mpi_params");
#endif
    }
    clphys_context_destroy(ctx);
}

int main(void)
{
    setenv("CLPHYS_NO_TUNE", "1", 1); /* the plans here time nothing */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reader),
        cmocka_unit_test(old_application_poisson),
        cmocka_unit_test(old_application_gravity),
        cmocka_unit_test(absurd_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
