/* nbody.c — `clphys nbody`: direct-sum N-body integration with the
 * kick-drift-kick leapfrog (NBabel's velocity Verlet is the same scheme), from
 * an NBabel file or a Plummer sphere; prints energies at chosen intervals and
 * writes the final snapshot atomically in the input format. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: clphys nbody (--input FILE | --plummer N --seed S) --dt DT --t-end T --eps EPS\n"
            "                    [--G G] [--precision fp32|fp64] [--device SPEC] [--variant auto|tiled|vector]\n"
            "                    [--energy-every T] [--output FILE] [--work-group W] [--i-per-item K]\n"
            "                    [--fast-rsqrt64]\n"
            "  --input         NBabel text file: id m x y z vx vy vz per line\n"
            "  --plummer N     Plummer sphere of N equal masses in N-body units (G = M = 1, E = -1/4)\n"
            "  --energy-every  interval of the energy rows (default: start and end only)\n"
            "  --work-group, --i-per-item  tiled-kernel tuning (0 = chosen from the device)\n"
            "  --fast-rsqrt64  fp64: rsqrt from an fp32 estimate + one Newton step (rel. error ~1e-14);\n"
            "                  default: full fp64 precision (series for r^-3 on NVIDIA, OpenCL rsqrt elsewhere)\n"
            "  --output        snapshot in the input format, rewritten at every energy row (FILE.tmp, then\n"
            "                  renamed, so FILE is always a whole snapshot; the last one is at t_end)\n"
            "Prints: time kinetic potential total rel_energy_error virial_ratio momentum\n"
            "(virial_ratio = K/|W|, momentum = |sum m v|, rel_energy_error = (E - E0)/|E0|).\n");
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int parse_double(const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return end != s && !*end && isfinite(*v);
}

int cmd_nbody(int argc, char **argv)
{
    const char *input = NULL, *output = NULL, *device = NULL, *prec = "fp64", *variant = "auto";
    double dt = NAN, t_end = NAN, eps = NAN, G = 1, every = 0;
    long long plummer = 0;
    unsigned long long seed = 1;
    int have_seed = 0, wg = 0, ipw = 0, nr = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--fast-rsqrt64")) {
            nr = 1;
            continue;
        }
        if (!more) {
            fprintf(stderr, "clphys nbody: %s needs a value (or is unknown)\n", a);
            usage(stderr);
            return 2;
        }
        const char *v = argv[++i];
        int ok = 1;
        if (!strcmp(a, "--input")) input = v;
        else if (!strcmp(a, "--output")) output = v;
        else if (!strcmp(a, "--device")) device = v;
        else if (!strcmp(a, "--precision")) prec = v;
        else if (!strcmp(a, "--variant")) variant = v;
        else if (!strcmp(a, "--dt")) ok = parse_double(v, &dt);
        else if (!strcmp(a, "--t-end")) ok = parse_double(v, &t_end);
        else if (!strcmp(a, "--eps")) ok = parse_double(v, &eps);
        else if (!strcmp(a, "--G")) ok = parse_double(v, &G);
        else if (!strcmp(a, "--energy-every")) ok = parse_double(v, &every);
        else if (!strcmp(a, "--plummer")) plummer = atoll(v), ok = plummer > 0 && plummer < 0x7fffffff;
        else if (!strcmp(a, "--work-group")) wg = atoi(v), ok = wg >= 0;
        else if (!strcmp(a, "--i-per-item")) ipw = atoi(v), ok = ipw >= 0;
        else if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 0), have_seed = 1;
        else {
            fprintf(stderr, "clphys nbody: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "clphys nbody: bad value '%s' for %s\n", v, a);
            return 2;
        }
    }
    if (!input == !plummer || (plummer && !have_seed)) {
        fprintf(stderr, "clphys nbody: give either --input FILE or --plummer N --seed S\n");
        usage(stderr);
        return 2;
    }
    if (!(dt > 0) || !(t_end >= 0) || !(eps >= 0) || !(every >= 0) || G == 0) {
        fprintf(stderr, "clphys nbody: --dt > 0, --t-end >= 0, --eps >= 0, --energy-every >= 0 and --G != 0 are "
                        "required\n");
        return 2;
    }
    clphys_gravity_params prm = {CLPHYS_FP64, CLPHYS_GRAVITY_AUTO, G, eps, 1, wg, ipw, 0, 0, nr, 0, 0};
    if (!strcmp(prec, "fp32")) prm.precision = CLPHYS_FP32;
    else if (strcmp(prec, "fp64")) {
        fprintf(stderr, "clphys nbody: --precision must be fp32 or fp64\n");
        return 2;
    }
    if (!strcmp(variant, "tiled")) prm.variant = CLPHYS_GRAVITY_TILED;
    else if (!strcmp(variant, "vector")) prm.variant = CLPHYS_GRAVITY_VECTOR;
    else if (strcmp(variant, "auto")) {
        fprintf(stderr, "clphys nbody: --variant must be auto, tiled or vector\n");
        return 2;
    }

    clphys_nbody_system s = {0, NULL, NULL};
    clphys_status st = input ? clphys_nbody_read(NULL, input, &s) : clphys_nbody_plummer(NULL, (size_t)plummer, seed, &s);
    if (st) return cli_fail("nbody", st, NULL);
    clphys_context *ctx = NULL;
    clphys_gravity_plan *plan = NULL;
    double *acc = malloc(3 * (size_t)s.n * sizeof *acc), *pot = malloc((size_t)s.n * sizeof *pot);
    int rc = 1;
    if (!acc || !pot) {
        fprintf(stderr, "clphys nbody: out of memory for %zu particles\n", s.n);
        goto done;
    }
    if ((st = clphys_context_create(device, &ctx))) {
        rc = cli_fail("nbody", st, NULL);
        goto done;
    }
    if ((st = clphys_gravity_plan_create(ctx, &prm, &plan))) goto fail;
    /* full input check (coincident points with eps = 0) once; finiteness every step */
    if ((st = clphys_gravity_compute(plan, s.n, NULL, s.n, s.x, acc, pot, 0, 1, NULL))) goto fail;

    long long nsteps = llround(t_end / dt), out_every = every > 0 ? llround(every / dt) : nsteps;
    if (out_every < 1) out_every = 1;
    clphys_nbody_energy e0, e;
    if ((st = clphys_nbody_energy_of(ctx, &s, pot, &e0))) goto fail;
    const clphys_device_info *dev = clphys_context_device(ctx);
    printf("# clphys nbody: N = %zu, dt = %g, t_end = %g, eps = %g, G = %g, %s, %s on %s\n", s.n, dt, t_end, eps, G,
           prec, clphys_gravity_plan_variant(plan), dev->name);
    printf("%-12s %-22s %-22s %-22s %-16s %-14s %s\n", "time", "kinetic", "potential", "total", "rel_energy_error",
           "virial_ratio", "momentum");
    const double E0 = e0.total;
#define ROW(t, en)                                                                                               \
    printf("%-12.6g %-22.15g %-22.15g %-22.15g %-16.6e %-14.8g %.6e\n", (t), (en).kinetic, (en).potential,          \
           (en).total, E0 != 0 ? ((en).total - E0) / fabs(E0) : 0.0, (en).virial_ratio, (en).momentum)
    ROW(0.0, e0);
    fflush(stdout);
    double t0 = now(), kern = 0;
    const size_t n = s.n;
    for (long long k = 1; k <= nsteps; k++) {
        for (size_t i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) {
                s.v[3 * i + c] += 0.5 * dt * acc[3 * i + c]; /* kick */
                s.x[4 * i + c] += dt * s.v[3 * i + c];       /* drift */
            }
        double ks = 0;
        if ((st = clphys_gravity_compute(plan, s.n, NULL, s.n, s.x, acc, pot, 0, 0, &ks))) goto fail;
        kern += ks;
        for (size_t i = 0; i < 3 * n; i++) s.v[i] += 0.5 * dt * acc[i]; /* kick */
        if (k % out_every == 0 || k == nsteps) {
            if ((st = clphys_nbody_energy_of(ctx, &s, pot, &e))) goto fail;
            ROW(k * dt, e);
            fflush(stdout);
            /* the snapshot follows each energy row, replaced atomically */
            if (output && (st = clphys_nbody_write(ctx, output, &s))) goto fail;
        }
    }
    double wall = now() - t0;
    fprintf(stderr, "clphys nbody: %lld steps in %.3f s (kernel %.3f s, %.3g interactions/s in the kernel)\n", nsteps,
            wall, kern, kern > 0 ? (double)nsteps * n * n / kern : 0.0);
    if (output && nsteps == 0 && (st = clphys_nbody_write(ctx, output, &s))) goto fail;
    rc = 0;
    goto done;
fail:
    rc = cli_fail("nbody", st, ctx);
done:
    clphys_gravity_plan_destroy(plan);
    rc = cli_context_done(ctx, rc);
    clphys_nbody_system_destroy(&s);
    free(acc);
    free(pot);
    return rc;
}
