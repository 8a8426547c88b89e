/* md.c — `clphys md`: Lennard-Jones NVE molecular dynamics (velocity Verlet)
 * from a LAMMPS data file or an fcc lattice, thermo rows in LAMMPS lj-unit
 * conventions (thermo_style custom step temp pe ke etotal press), final state
 * written as a LAMMPS data file (atomically). */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: clphys md (--data FILE | --fcc RHO --cells N --temp T --seed S) [--epsilon E "
        "--sigma S]\n"
        "                 --rcut RC --skin SK --dt DT --steps N [--thermo K] [--neigh-every E]\n"
        "                 [--neigh-delay D] [--neigh-check yes|no] [--shifted] [--precision fp32|fp64]\n"
        "                 [--variant NAME|auto] [--device SPEC] [--write-data FILE] [--xyz FILE]\n"
        "  --data       LAMMPS data file, atom_style atomic (e.g. from LAMMPS write_data)\n"
        "  --fcc RHO    fcc lattice at number density RHO, N^3 unit cells, Maxwell-Boltzmann at T\n"
        "  --variant    full-csr full-transposed full-group full-staged half-cas half-fixedpoint cpu auto\n"
        "  --thermo K   a thermo row every K steps (default: first and last step only)\n"
        "  --xyz FILE   extended-XYZ trajectory, one frame per thermo row (FILE.tmp, then "
        "renamed)\n"
        "Defaults: epsilon = sigma = 1, neigh-every 1, neigh-delay 0, neigh-check yes, fp64, auto.\n"
        "Units are LAMMPS `units lj`; energies per atom, T from 3N-3 degrees of freedom.\n");
}

static int num(const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return end != s && !*end && isfinite(*v);
}

/* One extended-XYZ frame (species = LAMMPS type number). */
static int xyz_frame(FILE *f, const clphys_md_system *s, long long step, double dt)
{
    fprintf(f,
            "%zu\nLattice=\"%.10g 0 0 0 %.10g 0 0 0 %.10g\" Origin=\"%.10g %.10g %.10g\" "
            "Properties=species:S:1:pos:R:3:vel:R:3 Time=%.10g pbc=\"T T T\"\n",
            s->n, s->hi[0] - s->lo[0], s->hi[1] - s->lo[1], s->hi[2] - s->lo[2], s->lo[0], s->lo[1],
            s->lo[2], step * dt);
    for (size_t i = 0; i < s->n; i++)
        fprintf(f, "%d %.10g %.10g %.10g %.10g %.10g %.10g\n", s->type[i], s->x[3 * i],
                s->x[3 * i + 1], s->x[3 * i + 2], s->v[3 * i], s->v[3 * i + 1], s->v[3 * i + 2]);
    return ferror(f) ? -1 : 0;
}

static void row(const clphys_md_thermo *t)
{
    printf("%10lld %14.8g %14.8g %14.8g %14.8g %14.8g\n", t->step, t->temp, t->pe, t->ke, t->etotal,
           t->press);
}

int cmd_md(int argc, char **argv)
{
    const char *data = NULL, *out = NULL, *xyz = NULL, *device = NULL, *prec = "fp64",
               *variant = "auto";
    double rho = NAN, temp = NAN, eps = 1, sigma = 1, rc = NAN, skin = NAN, dt = NAN;
    double cells = 0, steps = -1, thermo = 0, every = 1, delay = 0, seed = -1;
    int check = 1, shifted = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--shifted")) {
            shifted = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "clphys md: %s needs a value (or is unknown)\n", a);
            usage(stderr);
            return 2;
        }
        const char *v = argv[++i];
        int ok = 1;
        if (!strcmp(a, "--data"))
            data = v;
        else if (!strcmp(a, "--write-data"))
            out = v;
        else if (!strcmp(a, "--xyz"))
            xyz = v;
        else if (!strcmp(a, "--device"))
            device = v;
        else if (!strcmp(a, "--precision"))
            prec = v, ok = !strcmp(v, "fp32") || !strcmp(v, "fp64");
        else if (!strcmp(a, "--variant"))
            variant = v;
        else if (!strcmp(a, "--neigh-check"))
            check = !strcmp(v, "yes"), ok = check || !strcmp(v, "no");
        else if (!strcmp(a, "--fcc"))
            ok = num(v, &rho) && rho > 0;
        else if (!strcmp(a, "--temp"))
            ok = num(v, &temp) && temp >= 0;
        else if (!strcmp(a, "--epsilon"))
            ok = num(v, &eps) && eps > 0;
        else if (!strcmp(a, "--sigma"))
            ok = num(v, &sigma) && sigma > 0;
        else if (!strcmp(a, "--rcut"))
            ok = num(v, &rc) && rc > 0;
        else if (!strcmp(a, "--skin"))
            ok = num(v, &skin) && skin >= 0;
        else if (!strcmp(a, "--dt"))
            ok = num(v, &dt) && dt > 0;
        else if (!strcmp(a, "--cells"))
            ok = num(v, &cells) && cells >= 1 && cells == floor(cells);
        else if (!strcmp(a, "--steps"))
            ok = num(v, &steps) && steps >= 0 && steps == floor(steps);
        else if (!strcmp(a, "--thermo"))
            ok = num(v, &thermo) && thermo >= 0 && thermo == floor(thermo);
        else if (!strcmp(a, "--neigh-every"))
            ok = num(v, &every) && every >= 1 && every == floor(every);
        else if (!strcmp(a, "--neigh-delay"))
            ok = num(v, &delay) && delay >= 0 && delay == floor(delay);
        else if (!strcmp(a, "--seed"))
            ok = num(v, &seed) && seed >= 0 && seed == floor(seed);
        else {
            fprintf(stderr, "clphys md: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "clphys md: bad value '%s' for %s\n", v, a);
            return 2;
        }
    }
    int fcc = !isnan(rho);
    if ((data != NULL) == fcc || (fcc && (cells < 1 || isnan(temp) || seed < 0)) || isnan(rc) ||
        isnan(skin) || isnan(dt) || steps < 0) {
        fprintf(stderr, "clphys md: need --data FILE or --fcc RHO --cells N --temp T --seed S, and "
                        "--rcut --skin --dt --steps\n");
        usage(stderr);
        return 2;
    }
    clphys_md_params p = {.lj = {.epsilon = eps,
                                 .sigma = sigma,
                                 .r_cut = rc,
                                 .skin = skin,
                                 .shifted = shifted,
                                 .precision = strcmp(prec, "fp64") ? CLPHYS_FP32 : CLPHYS_FP64},
                          .dt = dt,
                          .neigh_every = (int)every,
                          .neigh_check = check,
                          .neigh_delay = (int)delay};
    clphys_status st = clphys_lj_variant_from_name(variant, &p.lj.variant);
    if (st) return cli_fail("md", st, NULL);
    clphys_md_system sys;
    st = fcc ? clphys_md_fcc(rho, (int)cells, temp, (uint64_t)seed, &sys)
             : clphys_md_read_lammps_data(data, &sys);
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
    long long total = (long long)steps, k = (long long)thermo;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    FILE *xf = NULL;
    char xtmp[4096];
    if (!st && xyz) {
        snprintf(xtmp, sizeof xtmp, "%s.tmp", xyz);
        xf = fopen(xtmp, "w");
        if (!xf) {
            fprintf(stderr, "clphys md: %s: cannot create\n", xtmp);
            st = CLPHYS_ERR_IO;
        }
    }
    if (!st) {
        printf("   Step          Temp          PotEng         KinEng         TotEng         Press  "
               "   \n");
        st = clphys_md_thermo_now(plan, &t);
        if (!st) row(&t);
        if (!st && xf && xyz_frame(xf, &sys, 0, dt)) st = CLPHYS_ERR_IO;
    }
    for (long long done = 0; !st && done < total;) {
        long long chunk = k > 0 ? k : total;
        if (chunk > total - done) chunk = total - done;
        st = clphys_md_run(plan, (int)chunk, NULL);
        done += chunk;
        if (!st) st = clphys_md_thermo_now(plan, &t);
        if (!st) row(&t);
        if (!st && xf) st = clphys_md_download(plan, &sys);
        if (!st && xf && xyz_frame(xf, &sys, t.step, dt)) st = CLPHYS_ERR_IO;
    }
    if (xf) {
        int bad = fclose(xf) != 0 || st;
        if (bad || rename(xtmp, xyz)) {
            remove(xtmp);
            if (!st) {
                fprintf(stderr, "clphys md: %s: write failed\n", xyz);
                st = CLPHYS_ERR_IO;
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    if (!st)
        fprintf(stderr,
                "clphys md: %lld steps of %zu atoms in %.3f s (%.1f steps/s, %d neighbour builds) "
                "on %s, %s %s\n",
                total, sys.n, wall, total / wall, clphys_md_rebuilds(plan),
                clphys_context_device(ctx)->name, prec, clphys_lj_variant_name(p.lj.variant));
    if (!st && out) {
        st = clphys_md_download(plan, &sys);
        if (!st) st = clphys_md_write_lammps_data(out, &sys);
        if (st) {
            int r = cli_fail("md", st, NULL);
            clphys_md_plan_destroy(plan);
            r = cli_context_done(ctx, r);
            clphys_md_system_destroy(&sys);
            return r;
        }
    }
    int r = st ? cli_fail("md", st, ctx) : 0;
    clphys_md_plan_destroy(plan);
    r = cli_context_done(ctx, r);
    clphys_md_system_destroy(&sys);
    return r;
}
