/* test_linalg_mpi.c — the linear-algebra layer (host/linalg/) over MPI
 * ranks, run under mpiexec with 2, 3 and 4 ranks: a device failure on the
 * last rank anywhere in a solve (the space's test hook, la_space's fail)
 * ends it with the same error on every rank, none left waiting in a
 * collective (a hang is the test's timeout).  Each rank holds a block of
 * A = -Laplacian (7-point, Dirichlet) + diag(c) + beta D_x (the blocks not
 * coupled: the operator's exchange is left out), sums over the ranks through
 * cp_mpi_global_sum as the Poisson and lattice plans do, and the operator
 * and the Jacobi preconditioner agree their status over the ranks as the
 * plans' do.  The solves are the plans' ones, through the defect
 * correction: preconditioned CG in mixed precision and in fp64 with an fp32
 * preconditioner (Poisson), plain CG, CGNR and BiCGStab on complex vectors
 * with the operator in two stages (the lattice), in fp64 and mixed, fused
 * and (CGNR) clBLAST.  For every place of the hook a solve first counts its
 * calls on the last rank, then fails at the first, middle and last of them
 * (and one more); every rank must return the same error, the last rank its
 * injected one, and a clean solve afterwards must reach the tolerance. */
#include "linalg_test_op.h"
#include "mpi_util.h"
#include "host/linalg/linalg_internal.h" /* the space's failure hook */
#include "platform/cp_mpi.h"

#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

enum { NX = 8, NY = 6, NZ = 5, NPT = NX * NY * NZ };

static int rank, size;
static clphys_context *ctx;

static void all_ok(int ok, const char *what) { tu_mpi_all_ok(ok, what, ctx); }

/* ---- a rank's block of the operator, in one space ---------------------- */
typedef struct {
    clphys_precision prec;
    cl_program prog;
    cl_kernel op, jac;
    cl_mem c;
    cl_uint nc;
    double beta;
    la_space *space;
    la_operator A;
    la_precond M;
} block_op;

/* The plans' hooks agree their status over the ranks (cp_mpi_agree). */
static clphys_status agreed(clphys_status st) { return cp_mpi_agree(MPI_COMM_WORLD, ctx, st); }

static clphys_status apply_beta(block_op *d, cl_mem out, cl_mem in, double beta)
{
    cl_uint nx = NX, ny = NY, nz = NZ;
    float bf = (float)beta;
    size_t g = NPT;
    clphys_status st =
        CP_ARGS(ctx, d->op, out, in, d->c, nx, ny, nz, nz, d->nc, CP_EITHER(d->prec == CLPHYS_FP64, beta, bf));
    if (!st) st = cp_launch(ctx, d->op, 1, &g, NULL, NULL);
    return agreed(st);
}
static clphys_status op_apply(void *u, cl_mem out, cl_mem in) { return apply_beta(u, out, in, ((block_op *)u)->beta); }
static clphys_status op_adjoint(void *u, cl_mem out, cl_mem in)
{
    return apply_beta(u, out, in, -((block_op *)u)->beta);
}
/* the two stages: the first only takes part in the ranks' collective, as a
 * lattice hop's first half does */
static clphys_status op_begin(void *u, int adjoint, cl_mem in)
{
    (void)u, (void)adjoint, (void)in;
    return agreed(CLPHYS_SUCCESS);
}
static clphys_status op_end(void *u, int adjoint, cl_mem out, cl_mem in)
{
    return (adjoint ? op_adjoint : op_apply)(u, out, in);
}

static clphys_status jac_apply(void *u, cl_mem z, cl_mem r)
{
    block_op *d = u;
    cl_uint n = NPT;
    size_t g = n;
    clphys_status st = CP_ARGS(ctx, d->jac, z, r, d->c, n, d->nc);
    if (!st) st = cp_launch(ctx, d->jac, 1, &g, NULL, NULL);
    return agreed(st);
}

static clphys_status global_sum(void *u, double *sums, int n)
{
    (void)u;
    return cp_mpi_global_sum(MPI_COMM_WORLD, ctx, sums, n, "test_linalg_mpi");
}

static void op_create(block_op *d, clphys_precision prec, la_blas blas, int nc, double beta, const double *c)
{
    memset(d, 0, sizeof *d);
    d->prec = prec, d->nc = (cl_uint)nc, d->beta = beta;
    cp_defines opts = {0};
    int cached;
    clphys_status st = cp_define_precision(ctx, &opts, prec);
    if (!st) st = cp_program_from_source(ctx, "test_linalg_mpi_op", LA_TEST_OP_SRC, opts.text, &d->prog, &cached);
    if (!st) st = cp_kernel(ctx, d->prog, "op_apply", &d->op);
    if (!st) st = cp_kernel(ctx, d->prog, "jacobi", &d->jac);
    const size_t rs = prec == CLPHYS_FP64 ? 8 : 4;
    char buf[NPT * 8];
    for (size_t i = 0; i < NPT; i++) {
        if (rs == 8)
            ((double *)buf)[i] = c[i];
        else
            ((float *)buf)[i] = (float)c[i];
    }
    if (!st) st = cp_buffer(ctx, CL_MEM_READ_ONLY, NPT * rs, buf, &d->c);
    la_space_params sp = {.precision = prec, .n = (size_t)NPT * nc, .complex_values = nc == 2, .blas = blas};
    if (!st) st = la_space_create(ctx, &sp, &d->space);
    all_ok(!st, "operator");
    la_space_set_global_sum(d->space, global_sum, NULL);
    d->A = (la_operator){.space = d->space,
                         .user = d,
                         .apply = op_apply,
                         .apply_adjoint = op_adjoint,
                         .begin = nc == 2 ? op_begin : NULL,
                         .end = nc == 2 ? op_end : NULL};
    d->M = (la_precond){.space = d->space, .user = d, .apply = jac_apply};
}

static void op_destroy(block_op *d)
{
    la_space_destroy(d->space);
    cp_release_mem(&d->c);
    cp_release_kernel(&d->op);
    cp_release_kernel(&d->jac);
}

/* ---- the solves -------------------------------------------------------- */
typedef struct {
    const char *name;
    la_method method;
    int nc, mixed, precond, clblast;
} solve_case;

static const solve_case CASES[] = {
    {"PCG mixed (Poisson)", LA_CG, 1, 1, 1, 0},
    {"PCG fp64, fp32 preconditioner (Poisson)", LA_CG, 1, 0, 1, 0},
    {"CG fp64", LA_CG, 1, 0, 0, 0},
    {"CGNR fp64 (lattice)", LA_CGNR, 2, 0, 0, 0},
    {"CGNR mixed (lattice)", LA_CGNR, 2, 1, 0, 0},
    {"BiCGStab fp64 (lattice)", LA_BICGSTAB, 2, 0, 0, 0},
    {"BiCGStab mixed (lattice)", LA_BICGSTAB, 2, 1, 0, 0},
    {"CGNR fp64 clBLAST (lattice)", LA_CGNR, 2, 0, 0, 1},
};

static const char *const PLACE[] = {NULL,         "sums kernel", "update kernel", "read wait",
                                    "write-back", "xpay",        "copy",          "preconditioner"};

/* whether case k reaches place w */
static int reaches(const solve_case *k, int w)
{
    if (w == LA_FAIL_PRECOND) return k->precond;
    if (k->clblast) return w == LA_FAIL_SUMS || w == LA_FAIL_COPY;
    return 1;
}

static void device_failure(void **state)
{
    (void)state;
    if (!clphys_context_device(ctx)->fp64) skip(); /* the outer loop is fp64 */
    double c[NPT];
    uint64_t rng = tu_rng_init(600 + (uint64_t)rank);
    for (int i = 0; i < NPT; i++) c[i] = 0.01 * pow(1e4, tu_uniform(&rng));
    const int ncase = (int)(sizeof CASES / sizeof CASES[0]);
    for (int ci = 0; ci < ncase; ci++) {
        const solve_case *k = &CASES[ci];
        const la_blas blas = k->clblast ? LA_BLAS_CLBLAST : LA_BLAS_FUSED;
        const double beta = k->nc == 2 ? 0.3 : 0;
        block_op o64, o32;
        op_create(&o64, CLPHYS_FP64, blas, k->nc, beta, c);
        const int need32 = k->mixed || k->precond;
        if (need32) op_create(&o32, CLPHYS_FP32, blas, k->nc, beta, c);
        const la_operator *inner = k->mixed ? &o32.A : &o64.A;
        const la_precond *M = k->precond ? &o32.M : NULL;
        la_space *fs = inner->space; /* the space whose work fails: the solver's */
        const size_t n = (size_t)NPT * k->nc;
        double *h = malloc(n * sizeof(double));
        for (size_t i = 0; i < n; i++) h[i] = tu_uniform(&rng) - 0.5;
        cl_mem b = NULL, x = NULL;
        clphys_status st = cp_buffer(ctx, CL_MEM_READ_WRITE, n * 8, h, &b);
        if (!st) st = cp_buffer(ctx, CL_MEM_READ_WRITE, n * 8, NULL, &x);
        all_ok(!st, "vectors");
        la_refine_result rr;
        const double tol = 1e-9;
        int cases = 0;
        for (int w = LA_FAIL_SUMS; w <= LA_FAIL_PRECOND; w++) {
            if (!reaches(k, w)) continue;
            /* the calls of that place in one solve, counted on the last rank */
            if (rank == size - 1) fs->fail = (cp_test_failure){w, 0, LONG_MAX, 0};
            st = la_solve_refined(&o64.A, inner, M, k->method, b, x, tol, 2000, 0, &rr);
            all_ok(!st && rr.rel_residual <= tol, "a solve counting the calls");
            long calls = fs->fail.calls;
            MPI_Bcast(&calls, 1, MPI_LONG, size - 1, MPI_COMM_WORLD);
            if (calls < 4) fail_msg("%s: place %s called %ld times", k->name, PLACE[w], calls);
            const long at[4] = {1, 2, calls / 2, calls};
            for (int j = 0; j < 4; j++) {
                if (rank == size - 1) fs->fail = (cp_test_failure){w, 0, at[j], 0};
                const int s = (int)la_solve_refined(&o64.A, inner, M, k->method, b, x, tol, 2000, 0, &rr);
                int lo, hi, mine = rank == size - 1 && !strstr(clphys_last_error(ctx), "injected"), wrong;
                MPI_Allreduce(&s, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
                MPI_Allreduce(&s, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
                MPI_Allreduce(&mine, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
                if (lo != hi || lo == CLPHYS_SUCCESS || wrong)
                    fail_msg("%s: failure at %s, call %ld of %ld: statuses %d .. %d over the ranks%s", k->name,
                             PLACE[w], at[j], calls, lo, hi, wrong ? ", the last rank's not its own" : "");
                cases++;
            }
        }
        fs->fail = (cp_test_failure){0};
        st = la_solve_refined(&o64.A, inner, M, k->method, b, x, tol, 2000, 0, &rr);
        all_ok(!st && rr.rel_residual <= tol, "a solve after the failures");
        if (rank == 0)
            print_message("# %s: %d failures, each an error on every rank; then %d iterations to %.1e\n", k->name,
                          cases, rr.iterations, rr.rel_residual);
        cp_release_mem(&b), cp_release_mem(&x);
        free(h);
        op_destroy(&o64);
        if (need32) op_destroy(&o32);
    }
}

int main(int argc, char **argv)
{
    tu_mpi_init(&argc, &argv, &rank, &size, &ctx, 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(device_failure)};
    return tu_mpi_run_group("test_linalg_mpi", tests, size >= 2, "at least 2", &ctx, 1);
}
