/* nbody.c — `clphys nbody`: direct-sum N-body integration with the
 * kick-drift-kick leapfrog (NBabel's velocity Verlet is the same scheme), from
 * an NBabel file or a Plummer sphere; prints energies at chosen intervals and
 * writes the snapshot atomically in the input format.
 *
 * One device: one kernel per step.  Several devices (--device A,B,...): the
 * i-particles split between them, the j-particles streamed on two queues
 * each (clphys_nbody_gravity_multi).  Under an MPI launcher (mpirun -np P clphys
 * nbody ...): rank 0 reads the input (or makes the Plummer sphere) and
 * scatters blocks of particles, every rank integrates its own block, the
 * j-blocks travel by the chosen exchange (clphys_nbody_mpi.h), the energy
 * sums are reduced and rank 0 prints the rows and writes the snapshots. */
#include "cli.h"
#include "cli_mpi.h"
#include "opt.h"
#include "outputs.h"
#include "progress.h"

#ifdef CLPHYS_HAVE_MPI
#include "clphys_nbody_mpi.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: clphys nbody (--input FILE | --plummer N --seed S) --dt DT --t-end T --eps EPS\n"
                 "                    [--G G] [--precision fp32|fp64] [--device SPEC[,SPEC...]]\n"
                 "                    [--variant auto|tiled|vector] [--energy-every T] [--output FILE]\n"
                 "                    [--work-group W] [--i-per-item K] [--fast-rsqrt64]\n"
                 "                    [--exchange auto|ring|doubling|hybrid|allgather] [--group G] [--force]\n"
                 "       mpirun -np P clphys nbody ...   the same, distributed over P ranks\n"
                 "  --input         NBabel text file: id m x y z vx vy vz per line\n"
                 "  --plummer N     Plummer sphere of N equal masses in N-body units (G = M = 1, E = -1/4)\n"
                 "  --dt, --t-end   the step and the end time: t_end / dt must be a whole number of steps >= 1\n"
                 "  --energy-every  interval of the energy rows, a whole number of steps (default: start and end)\n"
                 "  --device        one device, or a comma-separated list: the i-particles are split between them\n"
                 "                  in proportion to their measured speed, two queues each; \"gpus\" = every GPU\n"
                 "                  (default: $CLPHYS_DEVICE, else every GPU, else the CPU); under MPI the ranks\n"
                 "                  of a node share the list (rank k of the node takes entries k, k + ranks, ...)\n"
                 "  --work-group, --i-per-item  tiled-kernel tuning (0 = chosen from the device)\n"
                 "  --fast-rsqrt64  fp64: rsqrt from an fp32 estimate + one Newton step (rel. error ~1e-14);\n"
                 "                  default: full fp64 precision (series for r^-3 on NVIDIA, OpenCL rsqrt elsewhere)\n"
                 "  --output        snapshot in the input format, rewritten at every energy row (FILE.tmp.PID, then\n"
                 "                  renamed, so FILE is always a whole snapshot; the last one is at t_end); never the\n"
                 "                  input; an existing FILE is replaced only with --force, checked before the run\n"
                 "  --exchange      under MPI, how the j-particles travel between ranks (Miki, Takahashi & Mori):\n"
                 "                  ring (transport stage), doubling (accumulation stage), hybrid (doubling inside\n"
                 "                  groups of --group ranks, then a ring of groups), allgather (MPI_Allgatherv, then\n"
                 "                  one kernel); auto = hybrid with the largest power-of-two group dividing P\n"
                 "  --group G       hybrid: ranks per accumulation group, a power of two dividing P (0 = auto)\n"
                 "Prints: time kinetic potential total rel_energy_error virial_ratio momentum\n"
                 "(virial_ratio = K/|W|, momentum = |sum m v|, rel_energy_error = (E - E0)/|E0|), and on stderr\n"
                 "the time per step: kernels, exchanges and the part of them the kernels did not hide.\n");
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

typedef struct {
    const char *input, *output, *device;
    double dt, t_end, eps, G, every;
    long long plummer, seed, wg, ipw, group;
    int prec, variant, exchange, nr, force;
    int have_seed, have_dt, have_t_end, have_eps;
} nbody_opts;

/* Steps of length dt in an interval T: a whole number within 1e-6, at least
 * `least` and at most 2^53 (so that k * dt is exact enough to print). */
static int whole_steps(const char *opt, double T, double dt, long long least, long long *out)
{
    const double s = T / dt;
    if (!isfinite(s) || s > 9007199254740992.0) {
        fprintf(stderr, "clphys nbody: %s / --dt = %g / %g = %g steps: too many (at most 2^53)\n", opt, T, dt, s);
        return 2;
    }
    const long long k = llround(s);
    if (s < (double)least * (1 - 1e-6)) {
        fprintf(stderr, "clphys nbody: %s / --dt = %g / %g = %g: fewer than %lld step%s\n", opt, T, dt, s, least,
                least == 1 ? "" : "s");
        return 2;
    }
    if (fabs(s - (double)k) > 1e-6 * fmax(1.0, s)) {
        fprintf(stderr, "clphys nbody: %s / --dt = %g / %g = %.9g is not a whole number of steps\n", opt, T, dt, s);
        return 2;
    }
    *out = k;
    return 0;
}

/* The force calculation of this run: one of the three plans. */
typedef struct {
    clphys_context **ctxs;
    int nd;
    clphys_nbody_gravity_plan *plan;   /* one device, one process */
    clphys_nbody_gravity_multi *multi; /* several devices, one process */
#ifdef CLPHYS_HAVE_MPI
    clphys_nbody_gravity_mpi *mpi; /* MPI ranks */
    MPI_Comm comm;
#endif
    int dist;
} engine;

static clphys_status force(engine *e, const clphys_nbody_system *s, double *acc, double *pot, int check,
                           clphys_nbody_gravity_timing *t)
{
    memset(t, 0, sizeof *t);
#ifdef CLPHYS_HAVE_MPI
    if (e->mpi) return clphys_nbody_gravity_mpi_compute(e->mpi, s->n, s->x, acc, pot, t);
#endif
    if (e->multi) return clphys_nbody_gravity_multi_compute(e->multi, s->n, NULL, s->n, s->x, 0, acc, pot, t);
    const double t0 = now();
    clphys_status st = clphys_nbody_gravity_compute(e->plan, s->n, NULL, s->n, s->x, acc, pot, 0, check, &t->kernel_s);
    t->total_s = now() - t0;
    t->kernels = 1;
    return st;
}

/* fp32: 1, having said so on stderr, when a particle's mass, coordinate or
 * velocity is beyond what fp32 forces hold (above 1e15 or, for a
 * coordinate other than 0, below 1e-15 in magnitude: r^2 and m / r^2 would
 * overflow or vanish, and a pair be lost); the reader's own bounds are
 * fp64's. */
static int fp32_out_of_range(const clphys_nbody_system *s)
{
    for (size_t i = 0; i < s->n; i++)
        for (int c = 0; c < 7; c++) {
            const double v = c < 4 ? s->x[4 * i + (c + 3) % 4] : s->v[3 * i + c - 4], a = fabs(v);
            if (a > 1e15 || (c >= 1 && c < 4 && a > 0 && a < 1e-15)) {
                fprintf(stderr,
                        "clphys nbody: invalid input: particle %zu: %s = %g is out of the fp32 range of clphys nbody "
                        "(0 or 1e-15 .. 1e15 in magnitude for coordinates, at most 1e15 otherwise); use --precision "
                        "fp64\n",
                        i,
                        c == 0  ? "mass"
                        : c < 4 ? "a coordinate"
                                : "a velocity",
                        v);
                return 1;
            }
        }
    return 0;
}

/* The progress line of the run (progress.h): erased before any message. */
static cli_progress prog;

/* CLPHYS_ERR_INPUT, having said so on stderr naming step k and the first
 * particle of s whose position, velocity, kinetic energy m v^2 / 2,
 * acceleration or potential (acc, pot: NULL to skip) is not finite; success
 * when there is none. */
static clphys_status finite_state(const clphys_nbody_system *s, const double *acc, const double *pot, long long k,
                                  double t)
{
    for (size_t i = 0; i < s->n; i++) {
        const double *x = s->x + 4 * i, *v = s->v + 3 * i, m = x[3];
        const double ke = 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        const char *what = !isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2])   ? "position"
                           : !isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]) ? "velocity"
                           : !isfinite(ke)                                         ? "kinetic energy m v^2 / 2"
                           : acc && (!isfinite(acc[3 * i]) || !isfinite(acc[3 * i + 1]) || !isfinite(acc[3 * i + 2]))
                               ? "acceleration"
                           : pot && !isfinite(pot[i]) ? "potential"
                                                      : NULL;
        if (what) {
            cli_progress_clear(&prog);
            fprintf(stderr,
                    "clphys nbody: invalid input: step %lld (t = %g): particle %zu%s has a non-finite %s: x = (%g, %g, "
                    "%g), v = (%g, %g, "
                    "%g), m = %g; the integration diverged (a close encounter with too small --eps, or "
                    "--dt too large)\n",
                    k, t, i, cli_mpi_size() > 1 ? " of this rank" : "", what, x[0], x[1], x[2], v[0], v[1], v[2], m);
            return CLPHYS_ERR_INPUT;
        }
    }
    return CLPHYS_SUCCESS;
}

/* The energies of step k (time t), which must be finite (under MPI they are
 * the same on every rank, and so is the verdict); *said = 1 when the
 * message is out (on rank 0). */
static clphys_status energy(engine *e, const clphys_nbody_system *s, const double *pot, long long k, double t,
                            clphys_nbody_energy *en, int *said)
{
    clphys_status st;
#ifdef CLPHYS_HAVE_MPI
    if (e->dist)
        st = clphys_nbody_mpi_energy(e->comm, s, pot, en);
    else
#endif
        st = clphys_nbody_energy_of(NULL, s, pot, en);
    (void)e;
    if (st || (isfinite(en->kinetic) && isfinite(en->potential) && isfinite(en->total))) return st;
    *said = 1;
    if (cli_mpi_rank() > 0 || finite_state(s, NULL, pot, k, t)) return CLPHYS_ERR_INPUT;
    fprintf(stderr,
            "clphys nbody: invalid input: step %lld (t = %g): the energies are not finite (kinetic %g, potential %g, "
            "total %g); the integration diverged (a close encounter with too small --eps, or --dt too large)\n",
            k, t, en->kinetic, en->potential, en->total);
    return CLPHYS_ERR_INPUT;
}

/* The snapshot: under MPI gathered on rank 0, which writes it; the status is
 * agreed. */
static clphys_status snapshot(engine *e, const char *file, const clphys_nbody_system *s)
{
#ifdef CLPHYS_HAVE_MPI
    if (e->dist) {
        clphys_nbody_system all = {0, NULL, NULL};
        clphys_status st = clphys_nbody_mpi_gather(e->comm, 0, s, &all);
        if (st) return st;
        if (cli_mpi_rank() == 0) st = clphys_nbody_write(NULL, file, &all);
        clphys_nbody_system_destroy(&all);
        return clphys_mpi_agree(e->comm, NULL, st);
    }
#endif
    (void)e;
    return clphys_nbody_write(NULL, file, s);
}

static int parse(int argc, char **argv, nbody_opts *o)
{
    memset(o, 0, sizeof *o);
    o->G = 1;
    o->prec = 1; /* fp64 */
    int help = 0;
    const cli_opt opts[] = {
        CLI_OPT_STRING("--input", &o->input),
        CLI_OPT_STRING("--output", &o->output),
        CLI_OPT_FLAG("--force", &o->force),
        CLI_OPT_STRING("--device", &o->device),
        {.name = "--plummer", .kind = CLI_INT, .out = &o->plummer, .lo = 1, .hi = 2147483647},
        {.name = "--seed", .kind = CLI_INT, .out = &o->seed, .lo = 0, .hi = 9.2e18, .given = &o->have_seed},
        {.name = "--dt", .kind = CLI_REAL, .out = &o->dt, .lo = 0, .hi = INFINITY, .lo_open = 1, .given = &o->have_dt},
        {.name = "--t-end",
         .kind = CLI_REAL,
         .out = &o->t_end,
         .lo = 0,
         .hi = INFINITY,
         .lo_open = 1,
         .given = &o->have_t_end},
        {.name = "--eps", .kind = CLI_REAL, .out = &o->eps, .lo = 0, .hi = INFINITY, .given = &o->have_eps},
        CLI_OPT_REAL("--G", &o->G, -INFINITY, INFINITY),
        CLI_OPT_POSITIVE("--energy-every", &o->every),
        CLI_OPT_CHOICE("--precision", &o->prec, "fp32|fp64"),
        CLI_OPT_CHOICE("--variant", &o->variant, "auto|tiled|vector"),
        CLI_OPT_INT("--work-group", &o->wg, 0, 1024),
        CLI_OPT_INT("--i-per-item", &o->ipw, 0, 8),
        CLI_OPT_FLAG("--fast-rsqrt64", &o->nr),
        CLI_OPT_CHOICE("--exchange", &o->exchange, "auto|ring|doubling|hybrid|allgather"),
        CLI_OPT_INT("--group", &o->group, 0, 1 << 20),
        CLI_OPT_END,
    };
    if (cli_parse("nbody", argc, argv, opts, NULL, 0, NULL, &help)) return 2;
    if (help) {
        usage(stdout);
        return 1;
    }
    if (!o->input == !o->plummer || (o->plummer && !o->have_seed) || (o->input && o->have_seed)) {
        fprintf(stderr, "clphys nbody: give either --input FILE or --plummer N --seed S\n");
        return 2;
    }
    if (!o->have_dt || !o->have_t_end || !o->have_eps) {
        fprintf(stderr, "clphys nbody: --dt, --t-end and --eps are required\n");
        return 2;
    }
    if (o->G == 0) {
        fprintf(stderr, "clphys nbody: --G: must not be 0\n");
        return 2;
    }
    return 0;
}

int cmd_nbody(int argc, char **argv)
{
    nbody_opts o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc == 1 ? 0 : rc;
    long long nsteps, out_every;
    if (whole_steps("--t-end", o.t_end, o.dt, 1, &nsteps)) return 2;
    if (o.every > 0) {
        if (whole_steps("--energy-every", o.every, o.dt, 1, &out_every)) return 2;
    } else {
        out_every = nsteps;
    }
    const clphys_nbody_gravity_exchange exchanges[] = {
        CLPHYS_NBODY_GRAVITY_EXCHANGE_AUTO, CLPHYS_NBODY_GRAVITY_EXCHANGE_RING, CLPHYS_NBODY_GRAVITY_EXCHANGE_DOUBLING,
        CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID, CLPHYS_NBODY_GRAVITY_EXCHANGE_ALLGATHER};
    const clphys_nbody_gravity_variant variants[] = {CLPHYS_NBODY_GRAVITY_AUTO, CLPHYS_NBODY_GRAVITY_TILED,
                                                     CLPHYS_NBODY_GRAVITY_VECTOR};
    clphys_nbody_gravity_params prm = {0,
                                       o.prec ? CLPHYS_FP64 : CLPHYS_FP32,
                                       variants[o.variant],
                                       o.G,
                                       o.eps,
                                       1,
                                       (int)o.wg,
                                       (int)o.ipw,
                                       0,
                                       0,
                                       o.nr,
                                       0,
                                       0,
                                       0};

    engine e;
    memset(&e, 0, sizeof e);
    const int rank = cli_mpi_rank();
#ifdef CLPHYS_HAVE_MPI
    e.dist = cli_mpi_comm(&e.comm);
#endif
    clphys_status st = CLPHYS_SUCCESS;
    int said = 0; /* the failure's message is out */
    clphys_nbody_system s = {0, NULL, NULL}, all = {0, NULL, NULL};
    double *acc = NULL, *pot = NULL;
    size_t N = 0;
#ifdef CLPHYS_HAVE_MPI
    int nranks = 1;
    if (e.dist) {
        MPI_Comm_size(e.comm, &nranks);
        /* every option but --device must agree (MPMD launches may differ) */
        char text[4096];
        snprintf(text, sizeof text, "%s|%s|%lld|%lld|%.17g|%.17g|%.17g|%.17g|%.17g|%d|%d|%lld|%lld|%d|%d|%lld",
                 o.input ? o.input : "", o.output ? o.output : "", o.plummer, o.seed, o.dt, o.t_end, o.eps, o.G,
                 o.every, o.prec, o.variant, o.wg, o.ipw, o.nr, o.exchange, o.group);
        if ((st = clphys_mpi_same(e.comm, NULL, text, strlen(text) + 1,
                                  "the options of clphys nbody (all but "
                                  "--device)")))
            goto fail;
    }
#endif
    /* the snapshot file, checked before any work (rank 0 writes it) */
    int bad_output = 0;
    if (rank == 0) {
        const cli_file inputs[] = {{"--input", o.input}}, outputs[] = {{"--output", o.output}};
        bad_output = cli_check_outputs("nbody", inputs, 1, outputs, 1, o.force) != 0;
    }
#ifdef CLPHYS_HAVE_MPI
    if (e.dist) MPI_Allreduce(MPI_IN_PLACE, &bad_output, 1, MPI_INT, MPI_MAX, e.comm);
#endif
    if (bad_output) {
        rc = e.dist ? 1 : 2; /* under a launcher 1, not 2: main ends the job on 2 */
        goto done;
    }
    if (rank == 0)
        st = o.input ? clphys_nbody_read(NULL, o.input, &all)
                     : clphys_nbody_plummer(NULL, (size_t)o.plummer, (uint64_t)o.seed, &all);
    if (!st && rank == 0 && !o.prec && fp32_out_of_range(&all)) st = CLPHYS_ERR_INPUT, said = 1;
    N = all.n;
#ifdef CLPHYS_HAVE_MPI
    if (e.dist) {
        if ((st = clphys_mpi_agree(e.comm, NULL, st))) goto fail;
        st = clphys_nbody_mpi_scatter(e.comm, 0, &all, &s);
        clphys_nbody_system_destroy(&all);
        if (st) goto fail;
    }
#endif
    if (!e.dist) {
        if (st) goto fail;
        s = all;
        all = (clphys_nbody_system){0, NULL, NULL};
    }
    acc = malloc(3 * (s.n ? s.n : 1) * sizeof *acc), pot = malloc((s.n ? s.n : 1) * sizeof *pot);
    if (!acc || !pot) {
        fprintf(stderr, "clphys nbody: out of memory for %zu particles\n", s.n);
        rc = e.dist ? 2 : 1; /* not agreed: under MPI main aborts the job */
        goto done;
    }
    {
        int node = 0, per_node = 1;
#ifdef CLPHYS_HAVE_MPI
        if (e.dist) cli_mpi_node(&node, &per_node);
#endif
        st = clphys_contexts_create(o.device, node, per_node, &e.ctxs, &e.nd);
    }
#ifdef CLPHYS_HAVE_MPI
    if (e.dist) {
        if ((st = clphys_mpi_agree(e.comm, NULL, st))) goto fail;
        st = clphys_nbody_gravity_mpi_create(e.comm, e.ctxs, e.nd, &prm, exchanges[o.exchange], (int)o.group, &e.mpi);
        if (st) goto fail;
    }
#else
    (void)exchanges;
    if (!st && (o.exchange || o.group)) fprintf(stderr, "clphys nbody: --exchange and --group apply under MPI only\n");
#endif
    if (!e.dist) {
        if (st) goto fail;
        if (e.nd > 1) {
            st = clphys_nbody_gravity_multi_create(e.ctxs, e.nd, 2, &prm, &e.multi);
        } else {
            st = clphys_nbody_gravity_plan_create(e.ctxs[0], &prm, &e.plan);
        }
        if (st) goto fail_ctx;
    }

    clphys_nbody_gravity_timing t, sum;
    memset(&sum, 0, sizeof sum);
    /* the full input check (coincident points with eps = 0) once, on one device */
    if ((st = force(&e, &s, acc, pot, 1, &t))) goto fail_ctx;
    clphys_nbody_energy e0, en;
    if (!e.dist && finite_state(&s, acc, pot, 0, 0.0)) goto fail_said;
    if ((st = energy(&e, &s, pot, 0, 0.0, &e0, &said))) goto fail;
    const double E0 = e0.total;
    if (rank == 0) {
        const clphys_device_info *dev = clphys_context_device(e.ctxs[0]);
        const char *variant = e.plan    ? clphys_nbody_gravity_plan_variant(e.plan)
                              : e.multi ? clphys_nbody_gravity_multi_info(e.multi, NULL, NULL)
                                        : "";
        char where[512];
        snprintf(where, sizeof where, "%s", dev->name);
#ifdef CLPHYS_HAVE_MPI
        if (e.mpi) {
            clphys_nbody_gravity_exchange ex;
            int g;
            variant = clphys_nbody_gravity_mpi_info(e.mpi, &ex, &g);
            snprintf(where, sizeof where, "%d ranks (rank 0: %d device%s, %s), exchange %s%s%.0d", nranks, e.nd,
                     e.nd > 1 ? "s" : "", dev->name, clphys_nbody_gravity_exchange_name(ex),
                     ex == CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID ? ", group " : "",
                     ex == CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID ? g : 0);
        } else
#endif
            if (e.nd > 1)
            snprintf(where, sizeof where, "%d devices (first: %s), two queues each", e.nd, dev->name);
        printf("# clphys nbody: N = %zu, dt = %g, t_end = %g, eps = %g, G = %g, %s, %s on %s\n", N, o.dt, o.t_end,
               o.eps, o.G, o.prec ? "fp64" : "fp32", variant, where);
        printf("%-12s %-22s %-22s %-22s %-16s %-14s %s\n", "time", "kinetic", "potential", "total", "rel_energy_error",
               "virial_ratio", "momentum");
    }
#define ROW(t, en)                                                                                                     \
    if (rank == 0) {                                                                                                   \
        printf("%-12.6g %-22.15g %-22.15g %-22.15g %-16.6e %-14.8g %.6e\n", (t), (en).kinetic, (en).potential,         \
               (en).total, E0 != 0 ? ((en).total - E0) / fabs(E0) : 0.0, (en).virial_ratio, (en).momentum);            \
        fflush(stdout);                                                                                                \
    }
    ROW(0.0, e0);
    const double t0 = now();
    const size_t n = s.n;
    const double dt = o.dt;
    cli_progress_start(&prog, "nbody", "step", rank == 0);
    for (long long k = 1; k <= nsteps; k++) {
        for (size_t i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) {
                s.v[3 * i + c] += 0.5 * dt * acc[3 * i + c]; /* kick */
                s.x[4 * i + c] += dt * s.v[3 * i + c];       /* drift */
            }
        if ((st = force(&e, &s, acc, pot, 0, &t))) goto fail_ctx;
        sum.total_s += t.total_s, sum.kernel_s += t.kernel_s, sum.exchange_s += t.exchange_s;
        sum.exposed_s += t.exposed_s;
        for (size_t i = 0; i < 3 * n; i++) s.v[i] += 0.5 * dt * acc[i]; /* kick */
        /* one process: every step (O(n) beside the force's O(n^2)); under MPI
           at the energy rows, whose verdict every rank shares */
        if (!e.dist && finite_state(&s, acc, pot, k, k * dt)) goto fail_said;
        cli_progress_show(&prog, k, nsteps);
        if (k % out_every == 0 || k == nsteps) {
            if ((st = energy(&e, &s, pot, k, k * dt, &en, &said))) goto fail;
            cli_progress_clear(&prog);
            ROW(k * dt, en);
            /* the snapshot follows each energy row, replaced atomically */
            if (o.output && (st = snapshot(&e, o.output, &s))) goto fail;
        }
    }
    double wall = now() - t0, split[4] = {sum.total_s, sum.kernel_s, sum.exchange_s, sum.exposed_s};
#ifdef CLPHYS_HAVE_MPI
    if (e.dist) MPI_Allreduce(MPI_IN_PLACE, split, 4, MPI_DOUBLE, MPI_MAX, e.comm);
#endif
    if (rank == 0) {
        /* one summary line */
        const double per = 1e3 / (double)nsteps;
        char rate[64] = "";
        if (!e.dist && split[1] > 0)
            snprintf(rate, sizeof rate, " (%.3g interactions/s in the kernels)",
                     (double)nsteps * (double)N * (double)N / split[1]);
        fprintf(stderr,
                "clphys nbody: %lld steps of %zu particles in %.3f s%s; per step %.4g ms in the force "
                "calculation: kernels %.4g ms, exchanges %.4g ms, of which not hidden by the kernels %.4g ms%s\n",
                nsteps, N, wall, rate, split[0] * per, split[1] * per, split[2] * per, split[3] * per,
                e.dist ? " (largest over the ranks)" : "");
    }
    rc = 0;
    goto done;
fail_ctx:
    cli_progress_clear(&prog);
    /* a device's message is on its context (one process) */
    if (!e.dist && e.ctxs) {
        rc = cli_fail("nbody", st, e.ctxs[0]);
        goto done;
    }
fail:
    cli_progress_clear(&prog);
    if (said) {
    fail_said:
        rc = 1;
        goto done;
    }
    rc = cli_fail("nbody", st, NULL);
done:
    clphys_nbody_gravity_plan_destroy(e.plan);
    clphys_nbody_gravity_multi_destroy(e.multi);
#ifdef CLPHYS_HAVE_MPI
    clphys_nbody_gravity_mpi_destroy(e.mpi);
#endif
    if (e.ctxs && e.nd == 1 && !e.dist) {
        rc = cli_context_done(e.ctxs[0], rc);
        free(e.ctxs);
    } else {
        clphys_contexts_destroy(e.ctxs, e.nd);
    }
    clphys_nbody_system_destroy(&s);
    clphys_nbody_system_destroy(&all);
    free(acc);
    free(pot);
    return rc;
}
