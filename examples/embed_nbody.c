/* embed_nbody.c — embed the gravity kernels: accelerations and potentials of
 * a Plummer sphere, then its energies in N-body units (E should be near -1/4).
 * Build: cc embed_nbody.c $(pkg-config --cflags --libs clphys)
 * Run:   ./a.out [DEVICE] */
#include <clphys.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    clphys_context *ctx;
    if (clphys_context_create(argc > 1 ? argv[1] : NULL, &ctx) != CLPHYS_SUCCESS) {
        fprintf(stderr, "no device: %s\n", clphys_last_error(NULL));
        return 1;
    }
    clphys_nbody_system s = {0};
    /* struct_size: the size this program was compiled with, so that a later
     * library whose struct has more fields reads only these (clphys_core.h) */
    clphys_nbody_gravity_params p = {.struct_size = sizeof(clphys_nbody_gravity_params),
                                     .precision = CLPHYS_FP32,
                                     .G = 1.0,
                                     .eps = 1e-3,
                                     .potential = 1};
    clphys_nbody_gravity_plan *plan = NULL;
    double *acc = NULL, *pot = NULL;
    clphys_nbody_energy e;
    clphys_status st = clphys_nbody_plummer(ctx, 4096, 42, &s);
    if (st == CLPHYS_SUCCESS) st = clphys_nbody_gravity_plan_create(ctx, &p, &plan);
    if (st == CLPHYS_SUCCESS) {
        acc = malloc(3 * sizeof(double) * s.n); /* (ax, ay, az) per particle */
        pot = malloc(sizeof(double) * s.n);
        st = acc && pot ? clphys_nbody_gravity_compute(plan, s.n, NULL, s.n, s.x, acc, pot, 0, 0, NULL)
                        : CLPHYS_ERR_OUT_OF_MEMORY;
    }
    if (st == CLPHYS_SUCCESS) st = clphys_nbody_energy_of(ctx, &s, pot, &e);
    if (st == CLPHYS_SUCCESS)
        printf("%s on %s: K %.5f  W %.5f  E %.5f  Q %.3f\n", clphys_nbody_gravity_plan_variant(plan),
               clphys_context_device(ctx)->name, e.kinetic, e.potential, e.total, e.virial_ratio);
    else
        fprintf(stderr, "%s: %s\n", clphys_status_string(st), clphys_last_error(ctx));
    free(acc);
    free(pot);
    clphys_nbody_gravity_plan_destroy(plan);
    clphys_nbody_system_destroy(&s);
    clphys_context_destroy(ctx);
    return st == CLPHYS_SUCCESS ? 0 : 1;
}
