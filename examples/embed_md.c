/* embed_md.c — molecular dynamics through the library: LAMMPS's in.lj
 * benchmark set-up (fcc at density 0.8442, T 1.44, r_cut 2.5, skin 0.3,
 * dt 0.005) made by clphys_md_fcc with 4^3 unit cells (256 atoms), 100
 * velocity-Verlet steps on the device, and the thermo rows of LAMMPS's
 * `thermo_style custom step temp pe ke etotal press` (per atom, LJ units).
 * Build: cc embed_md.c $(pkg-config --cflags --libs clphys)
 * Run:   ./a.out [DEVICE] */
#include <clphys.h>
#include <stdio.h>

static void row(const clphys_md_thermo *t)
{
    printf("%6lld %10.6f %11.6f %10.6f %11.6f %10.6f\n", t->step, t->temp, t->pe, t->ke, t->etotal, t->press);
}

int main(int argc, char **argv)
{
    clphys_context *ctx;
    if (clphys_context_create(argc > 1 ? argv[1] : NULL, &ctx) != CLPHYS_SUCCESS) {
        fprintf(stderr, "no device: %s\n", clphys_last_error(NULL));
        return 1;
    }
    clphys_md_system sys = {0};
    clphys_md_plan *plan = NULL;
    clphys_md_thermo t0, t1;
    /* r_cut and skin in sigma; a zeroed variant and precision: the device's default */
    clphys_md_params p = {
        .struct_size = sizeof(clphys_md_params),
        .lj = {.struct_size = sizeof(clphys_md_lj_params), .r_cut = 2.5, .skin = 0.3, .precision = CLPHYS_FP64},
        .dt = 0.005,
        .neigh_every = 1,
        .neigh_check = 1};
    clphys_status st = clphys_md_fcc(0.8442, 4, 1.44, 87287, &sys);
    if (st == CLPHYS_SUCCESS) st = clphys_md_plan_create(ctx, &p, &sys, &plan);
    if (st == CLPHYS_SUCCESS) st = clphys_md_thermo_now(plan, &t0);
    if (st == CLPHYS_SUCCESS) st = clphys_md_run(plan, 100, NULL);
    if (st == CLPHYS_SUCCESS) st = clphys_md_thermo_now(plan, &t1);
    if (st == CLPHYS_SUCCESS) {
        printf("%zu atoms on %s, %d neighbour-list builds\n  step       temp          pe         ke      etotal      "
               "press\n",
               sys.n, clphys_context_device(ctx)->name, clphys_md_rebuilds(plan));
        row(&t0);
        row(&t1);
        /* NVE: the total energy is conserved up to the integrator's error */
        printf("energy drift %.2e per atom\n", t1.etotal - t0.etotal);
    } else {
        fprintf(stderr, "%s: %s\n", clphys_status_string(st), clphys_last_error(ctx));
    }
    clphys_md_plan_destroy(plan);
    clphys_md_system_destroy(&sys);
    clphys_context_destroy(ctx);
    return st == CLPHYS_SUCCESS ? 0 : 1;
}
