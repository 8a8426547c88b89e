/* embed_poisson.c — the ocean model's pressure Poisson equation through the
 * library: a random basin (coast, shelf, seamounts) of 64 x 48 columns 5 km
 * wide and 16 layers 250 m thick, the source f of a manufactured solution
 * p = cos(pi X) cos(pi Y) cos(pi Z) (clphys_poisson_manufactured), and
 * div(grad p) = f solved by CG with a mixed-precision multigrid V-cycle to a
 * true residual of 1e-8 (no flux through coasts, floor and lid: the problem
 * is singular, so f and p are taken with zero mean, as the result says).
 * Build: cc embed_poisson.c $(pkg-config --cflags --libs clphys)
 * Run:   ./a.out [DEVICE] */
#include <clphys.h>
#include <stdio.h>
#include <stdlib.h>

enum { NX = 64, NY = 48, NZ = 16 };

int main(int argc, char **argv)
{
    clphys_context *ctx;
    if (clphys_context_create(argc > 1 ? argv[1] : NULL, &ctx) != CLPHYS_SUCCESS) {
        fprintf(stderr, "no device: %s\n", clphys_last_error(NULL));
        return 1;
    }
    static double dx[NX], dy[NY], dz[NZ], depth[NX * NY];
    const size_t n = (size_t)NX * NY * NZ; /* cell (i, j, k) at (k * NY + j) * NX + i, k = 0 at the surface */
    double *f = malloc(n * sizeof *f), *p_exact = malloc(n * sizeof *p_exact), *p = malloc(n * sizeof *p);
    for (int i = 0; i < NX; i++) dx[i] = 5000.0;
    for (int j = 0; j < NY; j++) dy[j] = 5000.0;
    clphys_poisson_geometry g = {.nx = NX, .ny = NY, .nz = NZ, .dx = dx, .dy = dy, .dz = dz, .depth = depth};
    clphys_poisson_params prm = {
        .struct_size = sizeof(clphys_poisson_params), .precision = CLPHYS_POISSON_MIXED, .tol = 1e-8};
    clphys_poisson_plan *plan = NULL;
    clphys_poisson_result r = {0};
    clphys_status st = f && p_exact && p ? CLPHYS_SUCCESS : CLPHYS_ERR_OUT_OF_MEMORY;
    if (st == CLPHYS_SUCCESS) st = clphys_poisson_basin(NX, NY, 1, 4000.0, 0, depth);
    if (st == CLPHYS_SUCCESS) st = clphys_poisson_levels(NZ, 4000.0, 1.0, dz);
    if (st == CLPHYS_SUCCESS) st = clphys_poisson_manufactured(&g, f, p_exact);
    if (st == CLPHYS_SUCCESS) st = clphys_poisson_plan_create(ctx, &g, &prm, &plan);
    if (st == CLPHYS_SUCCESS) st = clphys_poisson_solve(plan, f, p, &r);
    if (st == CLPHYS_SUCCESS) {
        /* p and p_exact agree up to a constant (zero-mean p) and the O(h^2) discretization
         * error; p_exact is 0 on land and nowhere else (cell centres avoid its zeros) */
        double sum = 0, sum_exact = 0, err = 0, top = 0;
        size_t wet = 0;
        for (size_t c = 0; c < n; c++)
            if (p_exact[c] != 0) sum += p[c], sum_exact += p_exact[c], wet++;
        for (size_t c = 0; c < n; c++)
            if (p_exact[c] != 0) {
                const double d = (p[c] - sum / wet) - (p_exact[c] - sum_exact / wet);
                if (d > err || -d > err) err = d > 0 ? d : -d;
                if (p_exact[c] > top || -p_exact[c] > top) top = p_exact[c] > 0 ? p_exact[c] : -p_exact[c];
            }
        printf("%zu wet cells on %s: %d CG iterations, true residual %.2e, %.3f s; max error %.2e of max |p|\n", wet,
               clphys_context_device(ctx)->name, r.iterations, r.rel_residual, r.seconds, err / top);
    } else {
        fprintf(stderr, "%s: %s\n", clphys_status_string(st), clphys_last_error(ctx));
    }
    clphys_poisson_plan_destroy(plan);
    free(f), free(p_exact), free(p);
    clphys_context_destroy(ctx);
    return st == CLPHYS_SUCCESS ? 0 : 1;
}
