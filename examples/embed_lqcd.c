/* embed_lqcd.c — lattice QCD through the library: a gauge field (a file in
 * NERSC, ILDG or MILC format, e.g. share/clphys/gauge/lat.sample.l4444, or a
 * random 4^4 field), its plaquette, then the Wilson-Dirac system D x = b
 * (kappa 0.12, antiperiodic in time) solved for a point source by
 * mixed-precision CGNR to a true residual of 1e-8.
 * Build: cc embed_lqcd.c $(pkg-config --cflags --libs clphys)
 * Run:   ./a.out [GAUGE_FILE [DEVICE]] */
#include <clphys.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    clphys_context *ctx;
    if (clphys_context_create(argc > 2 ? argv[2] : NULL, &ctx) != CLPHYS_SUCCESS) {
        fprintf(stderr, "no device: %s\n", clphys_last_error(NULL));
        return 1;
    }
    clphys_lqcd_gauge_field g = {0};
    clphys_status st;
    if (argc > 1) {
        st = clphys_lqcd_gauge_read(argv[1], NULL, &g, NULL); /* checksum and header verified */
    } else {
        const int dims[4] = {4, 4, 4, 4};
        st = clphys_lqcd_gauge_create(dims, &g);
        if (st == CLPHYS_SUCCESS) clphys_lqcd_gauge_hot(&g, 7);
    }
    if (st != CLPHYS_SUCCESS) {
        fprintf(stderr, "%s: %s\n", clphys_status_string(st), clphys_last_error(NULL));
        clphys_context_destroy(ctx);
        return 1;
    }
    printf("lattice %dx%dx%dx%d, plaquette %.12f\n", g.dims[0], g.dims[1], g.dims[2], g.dims[3],
           clphys_lqcd_gauge_plaquette(&g));
    /* an fp64 operator for the outer defect correction, an fp32 one inside */
    clphys_lqcd_dslash_params p64 = CLPHYS_PARAMS_INIT(clphys_lqcd_dslash_params),
                              p32 = CLPHYS_PARAMS_INIT(clphys_lqcd_dslash_params);
    p64.precision = CLPHYS_FP64, p64.kappa = 0.12;
    p32.precision = CLPHYS_FP32, p32.kappa = 0.12;
    clphys_lqcd_dslash_plan *d64 = NULL, *d32 = NULL;
    st = clphys_lqcd_dslash_plan_create(ctx, &g, &p64, &d64);
    if (st == CLPHYS_SUCCESS) st = clphys_lqcd_dslash_plan_create(ctx, &g, &p32, &d32);
    /* spinors double[V][4 spins][3 colours][re, im]; a point source at site 0, spin 0, colour 0 */
    double *b = calloc(g.volume * 24, sizeof *b), *x = calloc(g.volume * 24, sizeof *x);
    if (st == CLPHYS_SUCCESS && (!b || !x)) st = CLPHYS_ERR_OUT_OF_MEMORY;
    clphys_lqcd_solver_params sp = {
        .struct_size = sizeof(clphys_lqcd_solver_params), .kind = CLPHYS_LQCD_SOLVER_CGNR, .tol = 1e-8, .mixed = 1};
    clphys_lqcd_solver_result r = {0};
    if (st == CLPHYS_SUCCESS) {
        b[0] = 1.0;
        st = clphys_lqcd_solve(d64, d32, &sp, b, x, &r);
    }
    if (st == CLPHYS_SUCCESS)
        printf("CGNR on %s: %d iterations, %d restarts, true residual %.2e, %.3f s\n", clphys_context_device(ctx)->name,
               r.iterations, r.restarts, r.rel_residual, r.seconds);
    else
        fprintf(stderr, "%s: %s\n", clphys_status_string(st), clphys_last_error(ctx));
    free(b);
    free(x);
    clphys_lqcd_dslash_plan_destroy(d32);
    clphys_lqcd_dslash_plan_destroy(d64);
    clphys_lqcd_gauge_destroy(&g);
    clphys_context_destroy(ctx);
    return st == CLPHYS_SUCCESS ? 0 : 1;
}
