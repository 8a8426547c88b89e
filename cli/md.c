/* md.c — `clphys md`: Lennard-Jones NVE molecular dynamics (velocity Verlet)
 * from a LAMMPS data file or an fcc lattice, thermo rows in LAMMPS lj-unit
 * conventions (thermo_style custom step temp pe ke etotal press), final state
 * written as a LAMMPS data file (atomically). */
#include "cli.h"
#include "cli_mpi.h"
#include "md_cli.h"
#include "opt.h"
#include "outputs.h"
#include "progress.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: clphys md (--data FILE | --fcc RHO --cells N --temp T --seed S) [--epsilon E "
                 "--sigma S]\n"
                 "                 --rcut RC --skin SK --dt DT --steps N [--thermo K] [--neigh-every E]\n"
                 "                 [--neigh-delay D] [--neigh-check yes|no] [--shifted] [--precision fp32|fp64]\n"
                 "                 [--variant NAME|auto] [--device SPEC] [--write-data FILE] [--xyz FILE] [--force]\n"
                 "       mpirun -np P clphys md ... [--grid PXxPYxPZ]   the same, distributed over P ranks\n"
                 "  --data       LAMMPS data file, atom_style atomic (e.g. from LAMMPS write_data)\n"
                 "  --fcc RHO    fcc lattice at number density RHO, N^3 unit cells (1 .. 400), Maxwell-Boltzmann at T\n"
                 "  --variant    full-csr full-transposed full-group full-staged half-cas half-fixedpoint cpu auto\n"
                 "  --steps N    0 .. 2147483647; --thermo K: a thermo row every K steps (default: first and last)\n"
                 "  --xyz FILE   extended-XYZ trajectory, one frame per thermo row (FILE.tmp.PID, then renamed)\n"
                 "  --write-data FILE  the final state as a LAMMPS data file (written atomically)\n"
                 "  --force      replace an existing --write-data or --xyz file (never an input)\n"
                 "  --grid       under MPI: subdomains per dimension (product = ranks; default: slabs 1x1xP where\n"
                 "               they hold no more ghost atoms, else MPI_Dims_create's, largest factor along z),\n"
                 "               each at least r_cut + skin thick; full-list variants only when a dimension is cut;\n"
                 "               one device per rank (--device as without MPI, the node's devices shared out); rank 0\n"
                 "               reads, prints and writes (--write-data, --xyz in atom-ID order)\n"
                 "Defaults: epsilon = sigma = 1, neigh-every 1, neigh-delay 0, neigh-check yes, fp64, auto.\n"
                 "Units are LAMMPS `units lj`; energies per atom, T from 3N-3 degrees of freedom.\n");
}

/* One extended-XYZ frame (species = LAMMPS type number). */
int md_cli_xyz_frame(FILE *f, const clphys_md_system *s, long long step, double dt)
{
    fprintf(f,
            "%zu\nLattice=\"%.10g 0 0 0 %.10g 0 0 0 %.10g\" Origin=\"%.10g %.10g %.10g\" "
            "Properties=species:S:1:pos:R:3:vel:R:3 Time=%.10g pbc=\"T T T\"\n",
            s->n, s->hi[0] - s->lo[0], s->hi[1] - s->lo[1], s->hi[2] - s->lo[2], s->lo[0], s->lo[1], s->lo[2],
            step * dt);
    for (size_t i = 0; i < s->n; i++)
        fprintf(f, "%d %.10g %.10g %.10g %.10g %.10g %.10g\n", s->type[i], s->x[3 * i], s->x[3 * i + 1],
                s->x[3 * i + 2], s->v[3 * i], s->v[3 * i + 1], s->v[3 * i + 2]);
    return ferror(f) ? -1 : 0;
}

void md_cli_row(const clphys_md_thermo *t)
{
    printf("%10lld %14.8g %14.8g %14.8g %14.8g %14.8g\n", t->step, t->temp, t->pe, t->ke, t->etotal, t->press);
}

/* Close the trajectory and move it into place, or remove it; message names the file. */
int md_cli_xyz_finish(FILE *xf, const char *tmp, const char *xyz, int ok)
{
    clphys_status st = clphys_output_close(xf, tmp, xyz, ok);
    if (st && ok) fprintf(stderr, "clphys md: --xyz: %s\n", clphys_last_error(NULL));
    return !st;
}

int cmd_md(int argc, char **argv)
{
    const char *data = NULL, *out = NULL, *xyz = NULL, *device = NULL, *variant = "auto";
    /* negative (or 0 for the ranges that exclude it): not given; the parser
       writes a value only when the option is there */
    double rho = 0, temp = -1, eps = 1, sigma = 1, rc = 0, skin = -1, dt = 0;
    long long cells = 0, steps = -1, thermo = 0, every = 1, delay = 0, seed = -1;
    int prec = 1, check = 0, shifted = 0, force = 0, help = 0, grid[3] = {0, 0, 0};
    const cli_opt opts[] = {
        CLI_OPT_STRING("--data", &data),
        CLI_OPT_POSITIVE("--fcc", &rho),
        CLI_OPT_INT("--cells", &cells, 1, 400),
        CLI_OPT_REAL("--temp", &temp, 0, INFINITY),
        CLI_OPT_INT("--seed", &seed, 0, (double)LLONG_MAX),
        CLI_OPT_POSITIVE("--epsilon", &eps),
        CLI_OPT_POSITIVE("--sigma", &sigma),
        CLI_OPT_POSITIVE("--rcut", &rc),
        CLI_OPT_REAL("--skin", &skin, 0, INFINITY),
        CLI_OPT_POSITIVE("--dt", &dt),
        CLI_OPT_INT("--steps", &steps, 0, INT_MAX),
        CLI_OPT_INT("--thermo", &thermo, 0, INT_MAX),
        CLI_OPT_INT("--neigh-every", &every, 1, INT_MAX),
        CLI_OPT_INT("--neigh-delay", &delay, 0, INT_MAX),
        CLI_OPT_CHOICE("--neigh-check", &check, "yes|no"),
        CLI_OPT_FLAG("--shifted", &shifted),
        CLI_OPT_CHOICE("--precision", &prec, "fp32|fp64"),
        CLI_OPT_STRING("--variant", &variant),
        CLI_OPT_STRING("--device", &device),
        CLI_OPT_STRING("--write-data", &out),
        CLI_OPT_STRING("--xyz", &xyz),
        CLI_OPT_FLAG("--force", &force),
        CLI_OPT_DIMS("--grid", grid, 3, 1, 1 << 20),
        CLI_OPT_END,
    };
    if (cli_parse("md", argc, argv, opts, NULL, 0, NULL, &help)) return 2;
    if (help) {
        usage(stdout);
        return 0;
    }
    /* which of the required options are missing, by name */
    char missing[256] = "";
#define NEED(flag, name)                                                                                               \
    if (!(flag)) snprintf(missing + strlen(missing), sizeof missing - strlen(missing), " %s", name)
    const int fcc = rho > 0;
    if (!data && !fcc) NEED(0, "--data or --fcc");
    if (fcc) {
        NEED(cells > 0, "--cells");
        NEED(temp >= 0, "--temp");
        NEED(seed >= 0, "--seed");
    }
    NEED(rc > 0, "--rcut");
    NEED(skin >= 0, "--skin");
    NEED(dt > 0, "--dt");
    NEED(steps >= 0, "--steps");
#undef NEED
    if (data && fcc) {
        fprintf(stderr, "clphys md: --data and --fcc: give one of them\n");
        return 2;
    }
    if (!fcc && (cells > 0 || temp >= 0 || seed >= 0)) {
        fprintf(stderr, "clphys md: --cells, --temp and --seed go with --fcc\n");
        return 2;
    }
    if (missing[0]) {
        fprintf(stderr, "clphys md: missing%s (clphys md --help lists the options)\n", missing);
        return 2;
    }
    const int dist = cli_mpi_launched();
    if (grid[0] && !dist && grid[0] * grid[1] * grid[2] != 1) {
        fprintf(stderr, "clphys md: --grid %dx%dx%d: one process has one subdomain (run under mpirun -np P)\n", grid[0],
                grid[1], grid[2]);
        return 2;
    }
    const cli_file inputs[] = {{"--data", data}}, outputs[] = {{"--write-data", out}, {"--xyz", xyz}};
    if (!dist && cli_check_outputs("md", inputs, 1, outputs, 2, force)) return 2;
    clphys_md_params p = {.lj = {.epsilon = eps,
                                 .sigma = sigma,
                                 .r_cut = rc,
                                 .skin = skin,
                                 .shifted = shifted,
                                 .precision = prec ? CLPHYS_FP64 : CLPHYS_FP32},
                          .dt = dt,
                          .neigh_every = (int)every,
                          .neigh_check = check == 0,
                          .neigh_delay = (int)delay};
    if (clphys_md_lj_variant_from_name(variant, &p.lj.variant)) {
        fprintf(stderr, "clphys md: --variant: %s\n", clphys_last_error(NULL));
        return 2;
    }
    if (dist) {
        md_cli o = {.data = data,
                    .out = out,
                    .xyz = xyz,
                    .device = device,
                    .rho = rho,
                    .temp = temp,
                    .cells = cells,
                    .seed = seed,
                    .steps = steps,
                    .thermo = thermo,
                    .force = force,
                    .p = p,
                    .grid = {grid[0], grid[1], grid[2]}};
        return md_cli_distributed(&o);
    }
    clphys_md_system sys;
    clphys_status st =
        fcc ? clphys_md_fcc(rho, (int)cells, temp, (uint64_t)seed, &sys) : clphys_md_read_lammps_data(data, &sys);
    if (st) return cli_fail("md", st, NULL);
    clphys_context *ctx;
    st = clphys_context_create(device, &ctx);
    if (st) {
        clphys_md_system_destroy(&sys);
        return cli_fail("md", st, NULL);
    }
    clphys_md_plan *plan = NULL;
    clphys_md_thermo t;
    st = clphys_md_plan_create(ctx, &p, &sys, &plan);
    if (!st) st = clphys_md_thermo_now(plan, &t); /* the state is checked before any row is printed */
    const long long total = steps, k = thermo;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    FILE *xf = NULL;
    char xtmp[4200];
    int xyz_ok = 1;
    if (!st && xyz) {
        if (clphys_output_open(xyz, &xf, xtmp, sizeof xtmp)) {
            fprintf(stderr, "clphys md: --xyz: %s\n", clphys_last_error(NULL));
            clphys_md_plan_destroy(plan);
            clphys_md_system_destroy(&sys);
            return cli_context_done(ctx, 1);
        }
    }
    if (!st) {
        printf("   Step          Temp          PotEng         KinEng         TotEng         Press  "
               "   \n");
        md_cli_row(&t);
        if (xf && md_cli_xyz_frame(xf, &sys, 0, dt)) xyz_ok = 0;
    }
    /* on a terminal, the steps between thermo rows run in pieces of about a
       two-hundredth of the run, so that the progress line moves (the plan
       counts its steps: pieces give the same trajectory) */
    cli_progress prog;
    cli_progress_start(&prog, "md", "step", 1);
    const long long piece = prog.on ? (total / 200 > 1 ? total / 200 : 1) : total;
    for (long long done = 0; !st && xyz_ok && done < total;) {
        long long chunk = k > 0 ? k : total;
        if (chunk > total - done) chunk = total - done;
        for (long long ran = 0; !st && ran < chunk;) {
            const long long m = chunk - ran < piece ? chunk - ran : piece;
            st = clphys_md_run(plan, (int)m, NULL);
            ran += m;
            cli_progress_show(&prog, done + ran, total);
        }
        done += chunk;
        if (!st) st = clphys_md_thermo_now(plan, &t);
        cli_progress_clear(&prog);
        if (!st) md_cli_row(&t);
        if (!st && xf) st = clphys_md_download(plan, &sys);
        if (!st && xf && md_cli_xyz_frame(xf, &sys, t.step, dt)) xyz_ok = 0;
    }
    cli_progress_clear(&prog);
    if (!xyz_ok) fprintf(stderr, "clphys md: --xyz %s: write failed: %s\n", xyz, strerror(errno));
    if (xf && !md_cli_xyz_finish(xf, xtmp, xyz, !st && xyz_ok)) xyz_ok = 0;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    if (!st && xyz_ok)
        fprintf(stderr,
                "clphys md: %lld steps of %zu atoms in %.3f s (%.1f steps/s, %d neighbour builds) "
                "on %s, %s %s\n",
                total, sys.n, wall, total / wall, clphys_md_rebuilds(plan), clphys_context_device(ctx)->name,
                prec ? "fp64" : "fp32", clphys_md_lj_variant_name(p.lj.variant));
    int r = st ? cli_fail("md", st, ctx) : xyz_ok ? 0 : 1;
    if (!r && out) {
        st = clphys_md_download(plan, &sys);
        if (!st) st = clphys_md_write_lammps_data(out, &sys);
        if (st) r = cli_fail("md", st, NULL);
    }
    clphys_md_plan_destroy(plan);
    r = cli_context_done(ctx, r);
    clphys_md_system_destroy(&sys);
    return r;
}
