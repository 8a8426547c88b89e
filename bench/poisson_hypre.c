/* poisson_hypre.c — the peer of `clphys bench --path poisson` on CPUs:
 * hypre's structured-grid interface, CG preconditioned by one PFMG V-cycle
 * (Ashby & Falgout 1996; Falgout & Jones 2000), on the same matrix and
 * right-hand side, to the same tolerance, over MPI ranks on the same cores.
 *   mpiexec -np P poisson_hypre FILE RELAX
 * FILE (written by bench/poisson.c, host byte order): "CPPOIS1" and a NUL,
 * int32 nx, ny, nz, repeat, double tol, then the 7 coefficient arrays of
 * include/clphys_poisson.h (7 n doubles, wrap-around coefficients making x
 * or y periodic) and b (n doubles).  RELAX: PFMG's relaxation (1 weighted
 * Jacobi, 2 symmetric red/black Gauss-Seidel).  Each rank owns a slab of
 * y.  Prints one JSON object on stdout: iterations, hypre's final
 * relative residual (the iterated one), the true |b - A x| / |b| from a
 * matvec, and the median setup and solve wall times of `repeat` runs.
 *
 * A domain without land whose every row sums to zero (the bench's flat
 * box: pure Neumann, one region) is singular, and rounding leaves its
 * assembled matrix with a tiny eigenvalue of either sign along the
 * constants; CG preconditioned by PFMG then stalls (at a true residual
 * of 2.2e-3 on the 64x64x16 box).  The peer solves it as clphys does in
 * effect, on the range: b projected to zero sum, and the null space
 * removed by fixing the first cell at 0 (its row the identity times its
 * diagonal, b there 0, its couplings in the neighbours' rows dropped: the
 * solution of the singular system minus its value there, an SPD system).
 * The true residual is that of the original system: the fixed cell's
 * residual is minus the sum of the others' (1^T A = 0, 1^T b = 0). */
#include <HYPRE_struct_ls.h>
#include <mpi.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void fail(const char *what)
{
    fprintf(stderr, "poisson_hypre: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc != 3) fail("usage: poisson_hypre FILE RELAX");
    FILE *f = fopen(argv[1], "rb");
    char magic[8];
    int32_t h[4];
    double tol;
    if (!f || fread(magic, 1, 8, f) != 8 || memcmp(magic, "CPPOIS1", 8) || fread(h, sizeof h, 1, f) != 1 ||
        fread(&tol, sizeof tol, 1, f) != 1)
        fail("cannot read the header of the matrix file");
    const int nx = h[0], ny = h[1], nz = h[2], repeat = h[3] > 0 ? h[3] : 1, relax = atoi(argv[2]);
    const size_t n = (size_t)nx * ny * nz, plane = (size_t)nx * ny;
    double *a = malloc(7 * n * sizeof(double)), *b = malloc(n * sizeof(double));
    if (!a || !b || fread(a, sizeof(double), 7 * n, f) != 7 * n || fread(b, sizeof(double), n, f) != n)
        fail("cannot read the matrix file");
    fclose(f);
    /* pure Neumann without land: every row's excess a0 - sum |off| within
       1e-12 a0 (the library's own rule), and no land row */
    int pure = 1;
    double b0 = 0; /* the fixed cell's right-hand side, for the original system's norm of b */
    for (size_t c = 0; c < n && pure; c++) {
        double off = 0;
        for (int d = 0; d < 7; d++)
            if (d != 3) off += fabs(a[(size_t)d * n + c]);
        pure = a[3 * n + c] > 0 && a[3 * n + c] - off <= 1e-12 * a[3 * n + c];
    }
    if (pure) {
        double sb = 0;
        for (size_t c = 0; c < n; c++) sb += b[c];
        for (size_t c = 0; c < n; c++) b[c] -= sb / (double)n; /* onto the range: zero sum */
        /* fix cell 0: its neighbours (i + 1, j + 1, k + 1; or across a periodic edge) lose their coupling to it */
        const size_t east = 1, north = (size_t)nx, below = plane;
        a[(1 + 3) * n + 0] = a[(2 + 3) * n + 0] = a[(3 + 3) * n + 0] = 0;
        a[(-1 + 3) * n + 0] = a[(-2 + 3) * n + 0] = a[(-3 + 3) * n + 0] = 0;
        a[(-1 + 3) * n + east] = 0, a[(-2 + 3) * n + north] = 0;
        if (nz > 1) a[(-3 + 3) * n + below] = 0;
        if (nx > 1) a[(1 + 3) * n + (size_t)(nx - 1)] = 0;              /* periodic x: west of 0 */
        if (ny > 1) a[(2 + 3) * n + (size_t)(ny - 1) * (size_t)nx] = 0; /* periodic y: south of 0 */
        b0 = b[0], b[0] = 0;
    }
    HYPRE_Init();
    /* this rank's slab of y */
    const int j0 = (int)((long long)ny * rank / np), j1 = (int)((long long)ny * (rank + 1) / np);
    HYPRE_Int lo[3] = {0, j0, 0}, hi[3] = {nx - 1, j1 - 1, nz - 1};
    int px = 0, py = 0;
    for (int k = 0; k < nz; k++) {
        for (int j = 0; j < ny; j++) px |= a[2 * n + (size_t)k * plane + (size_t)j * nx] != 0; /* west of i = 0 */
        for (int i = 0; i < nx; i++) py |= a[1 * n + (size_t)k * plane + (size_t)i] != 0;      /* south of j = 0 */
    }
    HYPRE_StructGrid grid;
    HYPRE_StructGridCreate(MPI_COMM_WORLD, 3, &grid);
    if (j1 > j0) HYPRE_StructGridSetExtents(grid, lo, hi);
    HYPRE_Int periodic[3] = {px ? nx : 0, py ? ny : 0, 0};
    HYPRE_StructGridSetPeriodic(grid, periodic);
    HYPRE_StructGridAssemble(grid);
    /* hypre's stencil entries and the matching 7-array offsets d (-3..3) */
    HYPRE_Int off[7][3] = {{0, 0, 0}, {-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
    const int dmap[7] = {0, -1, 1, -2, 2, -3, 3};
    HYPRE_StructStencil st;
    HYPRE_StructStencilCreate(3, 7, &st);
    for (int s = 0; s < 7; s++) HYPRE_StructStencilSetElement(st, s, off[s]);
    HYPRE_StructMatrix A;
    HYPRE_StructMatrixCreate(MPI_COMM_WORLD, grid, st, &A);
    HYPRE_StructMatrixInitialize(A);
    const size_t mine = (size_t)nx * (size_t)(j1 - j0) * nz;
    double *vals = malloc(7 * (mine ? mine : 1) * sizeof(double)), *vb = malloc((mine ? mine : 1) * sizeof(double));
    HYPRE_Int entries[7] = {0, 1, 2, 3, 4, 5, 6};
    size_t m = 0;
    for (int k = 0; k < nz; k++)
        for (int j = j0; j < j1; j++)
            for (int i = 0; i < nx; i++, m++) {
                const size_t c = (size_t)i + (size_t)nx * j + plane * k;
                for (int s = 0; s < 7; s++) vals[7 * m + s] = a[(size_t)(dmap[s] + 3) * n + c];
                vb[m] = b[c];
                if (vals[7 * m] == 0) vals[7 * m] = 1; /* land: the identity row clphys uses */
            }
    if (mine) HYPRE_StructMatrixSetBoxValues(A, lo, hi, 7, entries, vals);
    HYPRE_StructMatrixAssemble(A);
    HYPRE_StructVector bv, xv, rv;
    HYPRE_StructVector *vs[3] = {&bv, &xv, &rv};
    for (int v = 0; v < 3; v++) {
        HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid, vs[v]);
        HYPRE_StructVectorInitialize(*vs[v]);
    }
    if (mine) HYPRE_StructVectorSetBoxValues(bv, lo, hi, vb);
    HYPRE_StructVectorAssemble(bv);
    double *tsetup = malloc(sizeof(double) * repeat), *tsolve = malloc(sizeof(double) * repeat);
    HYPRE_Int iters = 0;
    double final_rel = 0;
    for (int r = 0; r < repeat; r++) {
        for (size_t q = 0; q < mine; q++) vals[q] = 0;
        if (mine) HYPRE_StructVectorSetBoxValues(xv, lo, hi, vals);
        HYPRE_StructVectorAssemble(xv);
        HYPRE_StructSolver pcg, pfmg;
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        HYPRE_StructPCGCreate(MPI_COMM_WORLD, &pcg);
        HYPRE_StructPCGSetTol(pcg, tol);
        HYPRE_StructPCGSetTwoNorm(pcg, 1);
        HYPRE_StructPCGSetRelChange(pcg, 0);
        HYPRE_StructPCGSetMaxIter(pcg, 1000);
        HYPRE_StructPFMGCreate(MPI_COMM_WORLD, &pfmg);
        HYPRE_StructPFMGSetMaxIter(pfmg, 1);
        HYPRE_StructPFMGSetTol(pfmg, 0.0);
        HYPRE_StructPFMGSetZeroGuess(pfmg);
        HYPRE_StructPFMGSetRelaxType(pfmg, relax);
        HYPRE_StructPFMGSetNumPreRelax(pfmg, 1);
        HYPRE_StructPFMGSetNumPostRelax(pfmg, 1);
        HYPRE_StructPFMGSetSkipRelax(pfmg, 0); /* the problem is not isotropic */
        HYPRE_StructPCGSetPrecond(pcg, HYPRE_StructPFMGSolve, HYPRE_StructPFMGSetup, pfmg);
        HYPRE_StructPCGSetup(pcg, A, bv, xv);
        MPI_Barrier(MPI_COMM_WORLD);
        const double t1 = MPI_Wtime();
        HYPRE_StructPCGSolve(pcg, A, bv, xv);
        MPI_Barrier(MPI_COMM_WORLD);
        const double t2 = MPI_Wtime();
        tsetup[r] = t1 - t0, tsolve[r] = t2 - t1;
        HYPRE_StructPCGGetNumIterations(pcg, &iters);
        HYPRE_StructPCGGetFinalRelativeResidualNorm(pcg, &final_rel);
        HYPRE_StructPCGDestroy(pcg);
        HYPRE_StructPFMGDestroy(pfmg);
    }
    /* the true residual r = b - A x */
    if (mine) HYPRE_StructVectorSetBoxValues(rv, lo, hi, vb);
    HYPRE_StructVectorAssemble(rv);
    HYPRE_StructMatrixMatvec(-1.0, A, xv, 1.0, rv);
    double loc[3] = {0, 0, 0}, glob[3];
    if (mine) HYPRE_StructVectorGetBoxValues(rv, lo, hi, vals);
    for (size_t q = 0; q < mine; q++) loc[0] += vals[q] * vals[q], loc[1] += vb[q] * vb[q], loc[2] += vals[q];
    MPI_Allreduce(loc, glob, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (pure) glob[0] += glob[2] * glob[2], glob[1] += b0 * b0; /* the fixed cell's row of the original system */
    qsort(tsetup, (size_t)repeat, sizeof(double), cmp);
    qsort(tsolve, (size_t)repeat, sizeof(double), cmp);
    if (rank == 0)
        printf("{\"hypre\":\"%s\",\"ranks\":%d,\"relax\":%d,\"iterations\":%d,\"final_rel_residual\":%.6e,"
               "\"true_rel_residual\":%.6e,\"setup_s_median\":%.6e,\"solve_s_median\":%.6e,\"repeat\":%d,"
               "\"null_space\":\"%s\"}\n",
               HYPRE_RELEASE_VERSION, np, relax, (int)iters, final_rel, glob[1] > 0 ? sqrt(glob[0] / glob[1]) : 0,
               tsetup[repeat / 2], tsolve[repeat / 2], repeat,
               pure ? "pure Neumann: b projected to zero sum, cell 0 fixed at 0" : "none removed");
    HYPRE_StructMatrixDestroy(A);
    for (int v = 0; v < 3; v++) HYPRE_StructVectorDestroy(*vs[v]);
    HYPRE_StructStencilDestroy(st);
    HYPRE_StructGridDestroy(grid);
    free(a), free(b), free(vals), free(vb), free(tsetup), free(tsolve);
    HYPRE_Finalize();
    MPI_Finalize();
    return 0;
}
