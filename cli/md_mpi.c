/* md_mpi.c — `mpirun -np P clphys md ...`: the run of cli/md.c over MPI
 * ranks (include/clphys_md_mpi.h).  Rank 0 reads the data file (or makes
 * the lattice) and scatters it, prints the thermo rows (reduced over the
 * ranks) and every message a single process prints, and writes --xyz and
 * --write-data from the state gathered in atom-ID order (FILE.tmp.PID,
 * renamed only when everything succeeded).  Every failure is agreed
 * between the ranks (clphys_mpi_agree), so each returns 1 and none waits. */
#include "cli.h"
#include "cli_mpi.h"
#include "md_cli.h"
#include "outputs.h"

#ifdef CLPHYS_HAVE_MPI
#include "clphys_md_mpi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Every option but --device, as text: they must agree between ranks
 * (an MPMD launch may give each rank its own device). */
static void options_text(const md_cli *o, char *buf, size_t n)
{
    const clphys_md_params *p = &o->p;
    snprintf(buf, n,
             "%s|%s|%s|%.17g|%.17g|%lld|%lld|%lld|%lld|%d|%.17g|%.17g|%.17g|%.17g|%d|%d|%d|%.17g|%d|%d|%d|%dx%dx%d",
             o->data ? o->data : "", o->out ? o->out : "", o->xyz ? o->xyz : "", o->rho, o->temp, o->cells, o->seed,
             o->steps, o->thermo, o->force, p->lj.epsilon, p->lj.sigma, p->lj.r_cut, p->lj.skin, p->lj.shifted,
             (int)p->lj.precision, (int)p->lj.variant, p->dt, p->neigh_every, p->neigh_check, p->neigh_delay,
             o->grid[0], o->grid[1], o->grid[2]);
}

/* A failure all ranks agreed on: rank 0 prints it (the message is ctx's,
 * or clphys_last_error(NULL) before there is a context). */
static int fail(int rank, clphys_status st, const clphys_context *ctx)
{
    if (rank == 0) cli_fail("md", st, ctx);
    return 1;
}

/* The state gathered on rank 0 and one xyz frame written there (*ok = 0
 * on every rank after a write error, which rank 0 names). */
static clphys_status frame(MPI_Comm comm, int rank, clphys_md_mpi *plan, FILE *xf, long long step, double dt,
                           const char *xyz, int *ok)
{
    clphys_md_system all;
    memset(&all, 0, sizeof all);
    clphys_status st = clphys_md_mpi_gather(plan, 0, &all);
    if (st) return st;
    int good = rank != 0 || !md_cli_xyz_frame(xf, &all, step, dt);
    if (!good) fprintf(stderr, "clphys md: --xyz %s: write failed: %s\n", xyz, strerror(errno));
    clphys_md_system_destroy(&all);
    MPI_Allreduce(MPI_IN_PLACE, &good, 1, MPI_INT, MPI_MIN, comm);
    *ok = good;
    return CLPHYS_SUCCESS;
}

int md_cli_distributed(const md_cli *o)
{
    MPI_Comm comm;
    cli_mpi_comm(&comm);
    const int rank = cli_mpi_rank(), size = cli_mpi_size();
    char text[8192];
    options_text(o, text, sizeof text);
    clphys_status st =
        clphys_mpi_same(comm, NULL, text, strlen(text) + 1, "the options of clphys md (all but --device)");
    if (st) return fail(rank, st, NULL);
    /* outputs checked on rank 0, which writes them */
    int bad = 0;
    if (rank == 0) {
        const cli_file inputs[] = {{"--data", o->data}}, outputs[] = {{"--write-data", o->out}, {"--xyz", o->xyz}};
        bad = cli_check_outputs("md", inputs, 1, outputs, 2, o->force) != 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
    if (bad) return 1;
    clphys_md_system sys;
    memset(&sys, 0, sizeof sys);
    if (rank == 0)
        st = o->rho > 0 ? clphys_md_fcc(o->rho, (int)o->cells, o->temp, (uint64_t)o->seed, &sys)
                        : clphys_md_read_lammps_data(o->data, &sys);
    if ((st = clphys_mpi_agree(comm, NULL, st))) {
        clphys_md_system_destroy(&sys);
        return fail(rank, st, NULL);
    }
    /* one device per rank: the node's devices shared out between its ranks */
    int node = 0, per_node = 1, nd = 0;
    cli_mpi_node(&node, &per_node);
    clphys_context **ctxs = NULL;
    st = clphys_contexts_create(o->device, node, per_node, &ctxs, &nd);
    if ((st = clphys_mpi_agree(comm, NULL, st))) {
        clphys_md_system_destroy(&sys);
        return fail(rank, st, NULL);
    }
    clphys_context *ctx = ctxs[0];
    clphys_md_mpi *plan = NULL;
    clphys_md_thermo t;
    const int any_grid = o->grid[0] || o->grid[1] || o->grid[2];
    st = clphys_md_mpi_create(comm, ctx, &o->p, any_grid ? o->grid : NULL, 0, rank == 0 ? &sys : NULL, &plan);
    const size_t natoms = sys.n;
    clphys_md_system_destroy(&sys);
    if (!st) st = clphys_md_mpi_thermo(plan, &t);
    FILE *xf = NULL;
    char xtmp[4200] = "";
    int ok = 1; /* --xyz written so far */
    if (!st && o->xyz && rank == 0) {
        snprintf(xtmp, sizeof xtmp, "%s.tmp.%ld", o->xyz, (long)getpid());
        xf = fopen(xtmp, "w");
        if (!xf) ok = 0, fprintf(stderr, "clphys md: --xyz %s: cannot create %s: %s\n", o->xyz, xtmp, strerror(errno));
    }
    if (!st) MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!st && ok && rank == 0) {
        printf("   Step          Temp          PotEng         KinEng         TotEng         Press  "
               "   \n");
        md_cli_row(&t);
    }
    if (!st && ok && o->xyz) st = frame(comm, rank, plan, xf, 0, o->p.dt, o->xyz, &ok);
    for (long long done = 0; !st && ok && done < o->steps;) {
        long long chunk = o->thermo > 0 ? o->thermo : o->steps;
        if (chunk > o->steps - done) chunk = o->steps - done;
        st = clphys_md_mpi_run(plan, (int)chunk, NULL);
        done += chunk;
        if (!st) st = clphys_md_mpi_thermo(plan, &t);
        if (!st && rank == 0) md_cli_row(&t);
        if (!st && o->xyz) st = frame(comm, rank, plan, xf, t.step, o->p.dt, o->xyz, &ok);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    /* the trajectory moved into place only when every frame was written */
    if (xf && !md_cli_xyz_finish(xf, xtmp, o->xyz, ok && !st)) ok = 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    int rc = st ? fail(rank, st, ctx) : ok ? 0 : 1;
    if (!rc && rank == 0) {
        int grid[3];
        const char *variant = clphys_md_mpi_info(plan, grid, NULL, NULL, NULL);
        fprintf(stderr,
                "clphys md: %lld steps of %zu atoms in %.3f s (%.1f steps/s, %d neighbour builds) on %d ranks "
                "(grid %dx%dx%d; rank 0: %s), %s %s\n",
                o->steps, natoms, wall, o->steps / wall, clphys_md_mpi_rebuilds(plan), size, grid[0], grid[1], grid[2],
                clphys_context_device(ctx)->name, o->p.lj.precision == CLPHYS_FP64 ? "fp64" : "fp32", variant);
    }
    if (!rc && o->out) {
        clphys_md_system all;
        memset(&all, 0, sizeof all);
        st = clphys_md_mpi_gather(plan, 0, &all);
        if (!st && rank == 0) st = clphys_md_write_lammps_data(o->out, &all);
        clphys_md_system_destroy(&all);
        if ((st = clphys_mpi_agree(comm, ctx, st))) rc = fail(rank, st, ctx);
    }
    clphys_md_mpi_destroy(plan);
    for (int d = 1; d < nd; d++) clphys_context_destroy(ctxs[d]);
    rc = cli_context_done(ctx, rc);
    free(ctxs);
    return rc;
}
#else
int md_cli_distributed(const md_cli *o)
{
    (void)o;
    fprintf(stderr, "clphys md: started by an MPI launcher, but this build has no MPI\n");
    return 2;
}
#endif
