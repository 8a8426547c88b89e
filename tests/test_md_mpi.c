/* test_md_mpi.c — the distributed MD plan (include/clphys_md_mpi.h) under
 * mpiexec with 2, 3 or 4 ranks (grids 2x1x1; 1x3x1; 2x2x1 and 1x1x4):
 * thermo rows equal to the single-rank plan's (clphys_md_plan, on rank 0)
 * to 1e-10 relative in fp64 over 200 steps, for a small in.lj (fcc 0.8442,
 * rc 2.5, skin 0.3, rebuild every 20 steps) with each full-list variant and
 * a dilute hot gas (rebuild check every step); the gathered final state
 * (positions, image flags, atom IDs) equal to the single-rank one; total
 * momentum conserved; atoms crossing the periodic boundary and ranks left
 * without atoms; LAMMPS's in.lj log reproduced as test_md's single-rank
 * run reproduces it; errors (a thin subdomain, parameters differing between
 * ranks, a half-list variant, a rank without a device) the same on every
 * rank; the node staging's threaded copy (md_node_stage_copy) moving every
 * byte.  With --die (tests/mpi_rank_dies.py) rank 1 exits in the middle of
 * a run. */
#include "clphys_md_mpi.h"
#include "host/md/md_mpi_internal.h" /* the interior atoms kept on the device */
#include "md_util.h"
#include "mpi_util.h"

#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static clphys_context *ctx;
static int rank, size;
/* compare_run's last plan: its rebuilds, and those whose ghost lists went
 * with the migrants (md_mpi_borders) */
static int last_merged, last_rebuilds;
/* compare_run's plan at its end: the kick-drift packed the first cut
 * dimension's positions (md_ghost_prepack_map), on every rank; that
 * dimension thinner than 2 (r_cut + skin) on some rank */
static int last_prepack, last_thin;

/* The grids of this number of ranks. */
static int grids(int g[2][3])
{
    static const int g2[1][3] = {{2, 1, 1}}, g3[1][3] = {{1, 3, 1}}, g4[2][3] = {{2, 2, 1}, {1, 1, 4}};
    if (size == 2) return memcpy(g, g2, sizeof g2), 1;
    if (size == 3) return memcpy(g, g3, sizeof g3), 1;
    return memcpy(g, g4, sizeof g4), 2;
}

#define NCOL 6
static void row_of(const clphys_md_thermo *t, double *r)
{
    r[0] = (double)t->step, r[1] = t->temp, r[2] = t->pe, r[3] = t->ke, r[4] = t->etotal, r[5] = t->press;
}

/* Single-rank run on rank 0: thermo rows every `every` steps (nrows) and
 * the final state (downloaded into *fin, a copy of sys), broadcast. */
static void single_rank(const clphys_md_params *p, const clphys_md_system *sys, int steps, int every, double *rows,
                        clphys_md_system *fin)
{
    int nrows = steps / every + 1;
    if (rank == 0) {
        clphys_md_plan *pl;
        assert_int_equal(clphys_md_plan_create(ctx, p, sys, &pl), CLPHYS_SUCCESS);
        for (int k = 0; k < nrows; k++) {
            if (k) assert_int_equal(clphys_md_run(pl, every, NULL), CLPHYS_SUCCESS);
            clphys_md_thermo t;
            assert_int_equal(clphys_md_thermo_now(pl, &t), CLPHYS_SUCCESS);
            row_of(&t, rows + NCOL * k);
        }
        assert_int_equal(clphys_md_download(pl, fin), CLPHYS_SUCCESS);
        clphys_md_plan_destroy(pl);
    }
    MPI_Bcast(rows, NCOL * nrows, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(b), 1e-300); }

/* Copy of a system's arrays (single_rank downloads into it). */
static void copy_system(const clphys_md_system *s, clphys_md_system *c)
{
    *c = *s;
    size_t n = s->n;
    c->type_mass = malloc((size_t)(s->ntypes + 1) * sizeof(double));
    memcpy(c->type_mass, s->type_mass, (size_t)(s->ntypes + 1) * sizeof(double));
    c->id = malloc(n * sizeof *c->id), c->type = malloc(n * sizeof *c->type);
    c->x = malloc(3 * n * sizeof *c->x), c->v = malloc(3 * n * sizeof *c->v), c->image = malloc(3 * n * sizeof(int));
    memcpy(c->id, s->id, n * sizeof *c->id), memcpy(c->type, s->type, n * sizeof *c->type);
    memcpy(c->x, s->x, 3 * n * sizeof *c->x), memcpy(c->v, s->v, 3 * n * sizeof *c->v);
    if (s->image)
        memcpy(c->image, s->image, 3 * n * sizeof(int));
    else
        memset(c->image, 0, 3 * n * sizeof(int));
}

static void momentum(const clphys_md_system *s, double p[3])
{
    p[0] = p[1] = p[2] = 0;
    for (size_t i = 0; i < s->n; i++)
        for (int c = 0; c < 3; c++) p[c] += s->type_mass[s->type[i]] * s->v[3 * i + c];
}

/* The forces of the ghosts' rows are zero after a step where the variant
 * skips them (full-transposed: emptied list rows; cpu: pos.w < 0), and
 * every ghost carries the marker. */
static void ghost_rows_skipped(clphys_md_mpi *pl)
{
    const clphys_md_lj_variant v = pl->lj->variant;
    const size_t ng = pl->g.nghost, rs = pl->rs, n = pl->nlocal;
    if (!ng || (v != CLPHYS_MD_LJ_FULL_TRANSPOSED && v != CLPHYS_MD_LJ_CPU)) return;
    cl_uint *slot = malloc(4 * ng);
    char *f = malloc(4 * rs * n), *x = malloc(4 * rs * n);
    assert_int_equal(cp_read(ctx, pl->gd.recv_idx, 0, 4 * ng, slot), CLPHYS_SUCCESS);
    assert_int_equal(cp_read(ctx, pl->lj->f, 0, 4 * rs * n, f), CLPHYS_SUCCESS);
    assert_int_equal(cp_read(ctx, clphys_md_lj_neighbor(pl->lj)->pos, 0, 4 * rs * n, x), CLPHYS_SUCCESS);
    size_t marked = 0;
    for (size_t k = 0; k < ng; k++) {
        assert_true(slot[k] < n);
        for (int c = 0; c < 3; c++) {
            double fc = rs == 8 ? ((double *)f)[4 * slot[k] + c] : ((float *)f)[4 * slot[k] + c];
            assert_true(fc == 0);
        }
        double w = rs == 8 ? ((double *)x)[4 * slot[k] + 3] : ((float *)x)[4 * slot[k] + 3];
        marked += w == MD_GHOST_W;
    }
    assert_int_equal(marked, ng);
    free(slot), free(f), free(x);
}

/* The distributed run on grid g against the single-rank rows and final
 * state (rank 0's copy in ref, sorted by ID like the gather when the
 * system's IDs are 1 .. n in order). */
static void compare_run(const clphys_md_params *p, const int g[3], const clphys_md_system *sys, int steps, int every,
                        const double *rows, const clphys_md_system *ref, const char *what, size_t *interior)
{
    int nrows = steps / every + 1;
    clphys_md_mpi *pl;
    assert_int_equal(clphys_md_mpi_create(MPI_COMM_WORLD, ctx, p, g, 0, rank == 0 ? sys : NULL, &pl), CLPHYS_SUCCESS);
    double worst = 0;
    size_t own_min = (size_t)-1;
    clphys_md_mpi_timing tm;
    memset(&tm, 0, sizeof tm);
    int timed_builds = 0;
    long long timed_steps = 0;
    const cl_command_queue own = clphys_context_queue(ctx);
    for (int k = 0; k < nrows; k++) {
        /* every other run timed (the device waited for at each phase), the
         * others as a user runs them (on a queue without profiling, the
         * context's own given back after: cp_untimed_begin) */
        if (k) {
            const int b0 = clphys_md_mpi_rebuilds(pl);
            assert_int_equal(clphys_md_mpi_run(pl, every, k & 1 ? &tm : NULL), CLPHYS_SUCCESS);
            assert_true(clphys_context_queue(ctx) == own);
            if (k & 1) timed_builds += clphys_md_mpi_rebuilds(pl) - b0, timed_steps += every;
        }
        clphys_md_thermo t;
        assert_int_equal(clphys_md_mpi_thermo(pl, &t), CLPHYS_SUCCESS);
        double r[NCOL];
        row_of(&t, r);
        for (int c = 0; c < NCOL; c++) {
            double e = rel(r[c], rows[NCOL * k + c]);
            worst = fmax(worst, e);
            if (!(e <= 1e-10)) {
                fprintf(stderr, "rank %d %s grid %dx%dx%d step %g column %d: %.17g vs single rank %.17g\n", rank, what,
                        g[0], g[1], g[2], rows[NCOL * k], c, r[c], rows[NCOL * k + c]);
                fail();
            }
        }
        size_t own;
        clphys_md_mpi_info(pl, NULL, NULL, &own, NULL);
        if (own < own_min) own_min = own;
        if (interior) *interior += pl->nint;
    }
    /* the timing counts its runs' rebuilds (not the one of the creation),
     * as many as the rule asks for (every neigh_every steps without the
     * check), and one wait for the device per cut dimension in a step
     * without a rebuild, at most */
    const int ncut = (g[0] > 1) + (g[1] > 1) + (g[2] > 1);
    assert_int_equal(tm.steps, timed_steps);
    assert_int_equal(tm.rebuilds, timed_builds);
    if (!p->neigh_check && !p->neigh_delay && every % p->neigh_every == 0)
        assert_int_equal(tm.rebuilds, timed_steps / p->neigh_every);
    assert_true(tm.device_waits <= (long long)ncut * (tm.steps - tm.rebuilds));
    ghost_rows_skipped(pl);
    clphys_md_system all;
    memset(&all, 0, sizeof all);
    assert_int_equal(clphys_md_mpi_gather(pl, 0, rank == 0 ? &all : NULL), CLPHYS_SUCCESS);
    unsigned long long mn = own_min, gmin;
    MPI_Allreduce(&mn, &gmin, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) {
        /* every atom once, the single rank's positions and image flags */
        assert_int_equal(all.n, ref->n);
        double dx = 0, dv = 0;
        for (size_t i = 0; i < all.n; i++) {
            assert_true(all.id[i] == ref->id[i]);
            for (int c = 0; c < 3; c++) {
                assert_int_equal(all.image[3 * i + c], ref->image[3 * i + c]);
                dx = fmax(dx, fabs(all.x[3 * i + c] - ref->x[3 * i + c]));
                dv = fmax(dv, fabs(all.v[3 * i + c] - ref->v[3 * i + c]));
            }
        }
        double p0[3], p1[3], vmax = 0;
        momentum(sys, p0), momentum(&all, p1);
        for (size_t i = 0; i < 3 * all.n; i++) vmax = fmax(vmax, fabs(all.v[i]));
        for (int c = 0; c < 3; c++) assert_true(fabs(p1[c] - p0[c]) <= 1e-12 * vmax * (double)all.n);
        fprintf(stderr,
                "  %s grid %dx%dx%d (%s): thermo max rel diff %.2e over %d steps, positions %.2e, velocities %.2e, "
                "momentum change %.1e %.1e %.1e, fewest atoms on a rank %llu, %d rebuilds (%d with the ghost lists "
                "sent with the migrants, %d in rounds after them)\n",
                what, g[0], g[1], g[2], clphys_md_mpi_info(pl, NULL, NULL, NULL, NULL), worst, steps, dx, dv,
                p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2], gmin, clphys_md_mpi_rebuilds(pl), pl->merged_builds,
                pl->round_builds);
        assert_true(dx < 1e-9 && dv < 1e-9);
        clphys_md_system_destroy(&all);
    }
    last_merged = pl->merged_builds, last_rebuilds = clphys_md_mpi_rebuilds(pl);
    /* the kick-drift packs where a rank sends, unless asked not to or a
     * row is sent both ways (checked by the callers whose subdomains are
     * thin and full of atoms) */
    const int c0 = g[0] > 1 ? 0 : g[1] > 1 ? 1 : 2, sends = pl->g.nsend > 0;
    const char *pp = getenv("CLPHYS_MD_PREPACK");
    const int off = pp && strcmp(pp, "0") == 0;
    int v[2] = {pl->gd.prepack_n > 0, pl->d.hi[c0] - pl->d.lo[c0] < 2 * pl->d.rs};
    if (off) assert_false(v[0]);
    if (!v[1] && sends && !off && g[c0] > 1) assert_true(v[0]);
    MPI_Allreduce(MPI_IN_PLACE, &v[0], 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &v[1], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    last_prepack = v[0], last_thin = v[1];
    clphys_md_mpi_destroy(pl);
}

/* The default grid (md_decomp_make with no grid): slabs along z where
 * they hold no more ghost atoms than MPI_Dims_create's grid (4 ranks of a
 * cube: 1x1x4; 8 ranks of a large cube: 2x2x2), MPI_Dims_create's where
 * slabs would be thinner than r_cut + skin or hold more ghosts. */
static void test_default_grid(void **state)
{
    (void)state;
    const struct {
        int size;
        double L;
        int want[3];
    } cases[] = {{2, 33.6, {1, 1, 2}}, {4, 33.6, {1, 1, 4}}, {3, 33.6, {1, 1, 3}}, {8, 200, {2, 2, 2}},
                 {8, 20, {2, 2, 2}},   {6, 30, {1, 1, 6}},   {6, 100, {1, 2, 3}},  {12, 100, {2, 2, 3}}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const double L[3] = {cases[k].L, cases[k].L, cases[k].L};
        md_decomp d;
        assert_int_equal(md_decomp_make(ctx, 0, cases[k].size, NULL, L, 2.8, &d), CLPHYS_SUCCESS);
        for (int c = 0; c < 3; c++)
            if (d.P[c] != cases[k].want[c])
                fail_msg("%d ranks, box %g: grid %dx%dx%d, expected %dx%dx%d", cases[k].size, cases[k].L, d.P[0],
                         d.P[1], d.P[2], cases[k].want[0], cases[k].want[1], cases[k].want[2]);
    }
}

/* A small in.lj (7^3 fcc cells, 1372 atoms: a subdomain of 1x1x4 is as
 * thick as r_cut + skin allows), each full-list variant. */
static void test_in_lj_variants(void **state)
{
    (void)state;
    clphys_md_system s, ref;
    unsigned long long seed = tu_seed();
    assert_int_equal(clphys_md_fcc(0.8442, 7, 1.44, seed, &s), CLPHYS_SUCCESS);
    const clphys_md_lj_variant vs[] = {CLPHYS_MD_LJ_FULL_CSR, CLPHYS_MD_LJ_FULL_TRANSPOSED, CLPHYS_MD_LJ_FULL_GROUP,
                                       CLPHYS_MD_LJ_CPU};
    int g[2][3], ng = grids(g);
    double rows[NCOL * 11];
    for (size_t v = 0; v < sizeof vs / sizeof *vs; v++) {
        clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = CLPHYS_FP64, .variant = vs[v]},
                              .dt = 0.005,
                              .neigh_every = 20,
                              .neigh_check = 0};
        copy_system(&s, &ref);
        single_rank(&p, &s, 200, 20, rows, &ref);
        for (int k = 0; k < ng; k++) {
            compare_run(&p, g[k], &s, 200, 20, rows, &ref, clphys_md_lj_variant_name(vs[v]), NULL);
            /* 1x3x1 (3.92 thick) and 1x1x4 (2.94): rows within r_cut + skin
             * of both faces, packed by md_ghost_pack */
            if (last_thin) assert_false(last_prepack);
        }
        clphys_md_system_destroy(&ref);
    }
    clphys_md_system_destroy(&s);
}

/* in.lj on 10^3 cells (4000 atoms): subdomains of 2x1x1 and 2x2x1 thick
 * enough that most atoms stay on the device through each rebuild (the
 * interior kept by cl/md_rebuild.cl; the thinner grids send all through the
 * host), full-transposed. */
static void test_in_lj_interior(void **state)
{
    (void)state;
    clphys_md_system s, ref;
    assert_int_equal(clphys_md_fcc(0.8442, 10, 1.44, tu_seed() + 1, &s), CLPHYS_SUCCESS);
    int g[2][3];
    grids(g);
    double rows[NCOL * 11];
    clphys_md_params p = {
        .lj = {.r_cut = 2.5, .skin = 0.3, .precision = CLPHYS_FP64, .variant = CLPHYS_MD_LJ_FULL_TRANSPOSED},
        .dt = 0.005,
        .neigh_every = 20,
        .neigh_check = 0};
    copy_system(&s, &ref);
    single_rank(&p, &s, 200, 20, rows, &ref);
    size_t interior = 0;
    compare_run(&p, g[0], &s, 200, 20, rows, &ref, "in.lj 4000 atoms", &interior);
    unsigned long long mine = interior, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) fprintf(stderr, "  interior atoms kept on the devices, summed over rows and ranks: %llu\n", all);
    if (g[0][0] * g[0][1] * g[0][2] != 3) assert_true(all > 0); /* 1x3x1: 5.6 thick, no interior */
    clphys_md_system_destroy(&ref);
    clphys_md_system_destroy(&s);
}

/* fcc at 0.8442 with mx x my x mz unit cells, random velocities (zero
 * momentum), ids 1 .. n in order. */
static void fcc_cells(int mx, int my, int mz, clphys_md_system *s)
{
    static const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
    const size_t n = 4 * (size_t)mx * my * mz;
    const double a = cbrt(4 / 0.8442);
    memset(s, 0, sizeof *s);
    s->n = n, s->ntypes = 1;
    s->type_mass = calloc(2, sizeof(double)), s->type_mass[1] = 1;
    s->id = malloc(n * sizeof *s->id), s->type = malloc(n * sizeof *s->type);
    s->x = malloc(3 * n * sizeof *s->x), s->v = malloc(3 * n * sizeof *s->v), s->image = calloc(3 * n, sizeof(int));
    s->hi[0] = mx * a, s->hi[1] = my * a, s->hi[2] = mz * a;
    uint64_t rng = tu_rng_init(77);
    double p[3] = {0, 0, 0};
    size_t i = 0;
    for (int z = 0; z < mz; z++)
        for (int y = 0; y < my; y++)
            for (int x = 0; x < mx; x++)
                for (int b = 0; b < 4; b++, i++) {
                    const int c3[3] = {x, y, z};
                    s->id[i] = (long long)i + 1, s->type[i] = 1;
                    for (int c = 0; c < 3; c++) {
                        s->x[3 * i + c] = (c3[c] + basis[b][c]) * a;
                        s->v[3 * i + c] = 3.5 * (tu_uniform(&rng) - 0.5);
                        p[c] += s->v[3 * i + c];
                    }
                }
    for (i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) s->v[3 * i + c] -= p[c] / (double)n;
}

/* The column of test_overlap and test_rounds_growth: 6x6x32 fcc cells
 * (4,608 atoms, 53.7 long) with rank 0's velocities on every rank, its grid
 * 1x1xP in g; in.lj's cutoff and skin in fp64, the lists rebuilt every 20
 * steps without the check, variant v. */
static clphys_md_params column(clphys_md_system *s, int g[3], clphys_md_lj_variant v)
{
    fcc_cells(6, 6, 32, s);
    MPI_Bcast(s->v, 3 * (int)s->n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    g[0] = 1, g[1] = 1, g[2] = size;
    return (clphys_md_params){
        .lj = {.r_cut = 2.5, .skin = 0.3, .precision = CLPHYS_FP64, .variant = v}, .dt = 0.005, .neigh_every = 20};
}

/* A grid cut along z only (1x1xP, P the ranks) of a column 6x6x32 fcc
 * cells (4,608 atoms, 53.7 long): the forces of the rows with no ghost
 * neighbour run while the ghosts travel, the others after
 * (md_lj_evaluate_rows); full-transposed and full-csr with the exchange's
 * copies on their own queue, full-transposed again with everything on one
 * queue (CLPHYS_MD_ONE_QUEUE=1, the path of a device without a second),
 * the rebuilds' ghost lists made on the host (CLPHYS_MD_HOST_GHOSTS=1;
 * elsewhere the device makes them: sent with the migrants, but in rounds
 * after them for full-csr, CLPHYS_MD_GHOST_ROUNDS=1) and the positions in MPI's messages
 * (CLPHYS_MD_NODE_STAGING=0; elsewhere through shared memory: the device
 * copies straight into and out of the segments for the first
 * full-transposed (CLPHYS_MD_NODE_DIRECT=3), full-csr's go through host
 * staging, copied by 3 threads (CLPHYS_MD_NODE_DIRECT=0)), and once more on
 * one queue with the positions through shared memory, copied into it
 * through host staging and straight out of it (CLPHYS_MD_NODE_DIRECT=2);
 * the other tests take the default, straight into the segments only. */
static void test_overlap(void **state)
{
    (void)state;
    clphys_md_system s, ref;
    int g[3];
    const clphys_md_lj_variant vs[] = {CLPHYS_MD_LJ_FULL_TRANSPOSED, CLPHYS_MD_LJ_FULL_CSR,
                                       CLPHYS_MD_LJ_FULL_TRANSPOSED, CLPHYS_MD_LJ_FULL_TRANSPOSED};
    clphys_md_params p = column(&s, g, vs[0]);
    for (int v = 0; v < 4; v++) {
        const int one_queue = v >= 2, messages = v == 2;
        if (v == 0) /* both sides of the segments copied by the device */
            tu_setenv("CLPHYS_MD_NODE_DIRECT", "3");
        else if (messages)
            tu_setenv("CLPHYS_MD_ONE_QUEUE", "1"), tu_setenv("CLPHYS_MD_HOST_GHOSTS", "1"),
                tu_setenv("CLPHYS_MD_NODE_STAGING", "0");
        else if (one_queue) /* and the positions copied straight only out of the segments */
            tu_setenv("CLPHYS_MD_ONE_QUEUE", "1"), tu_setenv("CLPHYS_MD_NODE_DIRECT", "2");
        else if (v == 1) /* the copies by 3 threads, the ghost lists in rounds, the pack after the drift */
            tu_setenv("CLPHYS_MD_STAGING_THREADS", "3"), tu_setenv("CLPHYS_MD_GHOST_ROUNDS", "1"),
                tu_setenv("CLPHYS_MD_NODE_DIRECT", "0"), tu_setenv("CLPHYS_MD_PREPACK", "0");
        p.lj.variant = vs[v];
        double rows[NCOL * 11];
        copy_system(&s, &ref);
        single_rank(&p, &s, 200, 20, rows, &ref);
        /* the overlap is there on every rank */
        clphys_md_mpi *pl;
        assert_int_equal(clphys_md_mpi_create(MPI_COMM_WORLD, ctx, &p, g, 0, rank == 0 ? &s : NULL, &pl),
                         CLPHYS_SUCCESS);
        assert_true(pl->row_hi > pl->row_lo);
        /* within it the rows far enough from the ghosts to go ahead a kick
         * and a drift: there on 2 ranks (26.9 thick), and for lanes on 3
         * where the LJ kernel's work-groups are small (PoCL's 16 rows:
         * lanes cut the interior to whole work-groups, and NVIDIA's 256
         * leave no far cells in this system's 17.9-thick interior) */
        assert_true(pl->far_hi == pl->far_lo || (pl->far_lo >= pl->row_lo && pl->far_hi <= pl->row_hi));
        if (size == 2 || (size == 3 && pl->edge && pl->lj->wg <= 64)) assert_true(pl->far_hi > pl->far_lo);
        assert_true(one_queue ? pl->gd.copyq == NULL : pl->gd.copyq != NULL);
        assert_int_equal(pl->gd.host_lists, messages);
        /* the ranks of a test share one host: node staging, but where it is turned off */
        assert_int_equal(pl->gd.node, !messages);
        /* copy threads: as asked, else 1 beside a CPU device (its own
         * threads have the cores), else the host's cores shared, 1 .. 8 */
        if (v == 1 || ctx->info.is_cpu)
            assert_int_equal(pl->gd.node_threads, v == 1 ? 3 : 1);
        else
            assert_true(pl->gd.node_threads >= 1 && pl->gd.node_threads <= 8);
        if (!messages)
            assert_int_equal(pl->gd.node_direct, v == 1 ? 0 : v == 3 ? MD_DIRECT_RECV : 3);
        else
            assert_int_equal(pl->gd.node_direct, MD_DIRECT_SEND); /* the default, unused here */
        unsigned long long rows_in = pl->row_hi - pl->row_lo, sum = 0;
        MPI_Reduce(&rows_in, &sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) fprintf(stderr, "  overlap: %llu of %zu atoms' forces run while the ghosts travel\n", sum, s.n);
        clphys_md_mpi_destroy(pl);
        compare_run(&p, g, &s, 200, 20, rows, &ref,
                    messages    ? "full-transposed, one queue, MPI's messages"
                    : one_queue ? "full-transposed, one queue"
                                : clphys_md_lj_variant_name(vs[v]),
                    NULL);
        /* subdomains 13 or more thick: every rebuild but the first (from
         * the host) sends the ghost lists with the migrants, unless told
         * otherwise */
        assert_int_equal(last_merged, v == 0 || v == 3 ? last_rebuilds - 1 : 0);
        assert_int_equal(last_prepack, v != 1);
        tu_env_restore();
        clphys_md_system_destroy(&ref);
    }
    clphys_md_system_destroy(&s);
}

/* The column (full-transposed, grid 1x1xP) in s, its single rank's thermo
 * rows at steps 0, 20 and 40 in rows (NCOL each, run on ref), and a
 * distributed plan of it at step 0. */
static clphys_md_mpi *column_plan(clphys_md_system *s, clphys_md_system *ref, double *rows)
{
    int g[3];
    const clphys_md_params p = column(s, g, CLPHYS_MD_LJ_FULL_TRANSPOSED);
    copy_system(s, ref);
    single_rank(&p, s, 40, 20, rows, ref);
    clphys_md_mpi *pl = NULL;
    assert_int_equal(clphys_md_mpi_create(MPI_COMM_WORLD, ctx, &p, g, 0, rank == 0 ? s : NULL, &pl), CLPHYS_SUCCESS);
    return pl;
}

/* A plan at step 19 run to step 20, then to 40: its thermo rows equal the
 * single rank's rows[1] and rows[2] (NCOL each) to 1e-10 relative. */
static void steps_20_and_40(clphys_md_mpi *pl, const double *rows)
{
    for (int k = 1; k < 3; k++) {
        assert_int_equal(clphys_md_mpi_run(pl, k == 1 ? 1 : 20, NULL), CLPHYS_SUCCESS);
        clphys_md_thermo t;
        assert_int_equal(clphys_md_mpi_thermo(pl, &t), CLPHYS_SUCCESS);
        double r[NCOL];
        row_of(&t, r);
        for (int c = 0; c < NCOL; c++) assert_true(rel(r[c], rows[NCOL * k + c]) <= 1e-10);
    }
}

/* Ghost lists that outgrow their room in the middle of a rebuild made in
 * rounds (md_ghosts_build_dev's again): the send room grows, the
 * positions go in MPI's messages while a node segment's half is too small
 * for them, and the segments follow the lists at the rebuild's end.  After
 * 19 steps the plan is shrunk by hand to send room for 8 atoms and segments
 * of one page (as ghosts that suddenly multiply would leave it), so that
 * the rebuild at step 20 outgrows both; the run must then equal the single
 * rank's (column 6x6x32 fcc cells, grid 1x1xP, the rounds asked for by
 * CLPHYS_MD_GHOST_ROUNDS=1). */
static void test_rounds_growth(void **state)
{
    (void)state;
    clphys_md_system s, ref;
    double rows[NCOL * 3];
    tu_setenv("CLPHYS_MD_GHOST_ROUNDS", "1");
    clphys_md_mpi *pl = column_plan(&s, &ref, rows);
    assert_int_equal(pl->gd.node, 1);
    assert_int_equal(clphys_md_mpi_run(pl, 19, NULL), CLPHYS_SUCCESS);
    const size_t room = pl->gd.send_cap;
    md_node_stage_close(&pl->gd);
    pl->gd.send_cap = 8;
    assert_int_equal(md_node_stage_reserve(pl->comm, &pl->gd, &pl->d), CLPHYS_SUCCESS);
    const size_t shrunk = pl->gd.node_bytes;
    assert_true(shrunk < 3 * pl->rs * room);
    const int builds0 = clphys_md_mpi_rebuilds(pl), merged0 = pl->merged_builds;
    steps_20_and_40(pl, rows);
    /* two rebuilds, both in rounds, the segments grown past the send room */
    assert_int_equal(clphys_md_mpi_rebuilds(pl) - builds0, 2);
    assert_int_equal(pl->merged_builds, merged0);
    assert_true(pl->gd.send_cap > 8 && pl->gd.node_bytes >= 2 * 3 * pl->rs * pl->gd.send_cap);
    if (rank == 0)
        fprintf(stderr, "  rounds growth: send room 8 -> %zu atoms, segments %zu -> %zu bytes\n", pl->gd.send_cap,
                shrunk, pl->gd.node_bytes);
    clphys_md_mpi_destroy(pl);
    tu_env_restore();
    clphys_md_system_destroy(&ref);
    clphys_md_system_destroy(&s);
}

/* A Verlet list that overflows at a rebuild whose forces were launched
 * behind it (pl->forces_ahead: the list's overflow count is read without a
 * wait and checked after the rebuild's last wait): after 19 steps every
 * rank's list is cut by hand to 8 entries a row, so that the rebuild at
 * step 20 overflows; the list must grow, be built again and the step's
 * forces computed again, and the run equal the single rank's (column 6x6x32
 * fcc cells, grid 1x1xP). */
static void test_list_overflow(void **state)
{
    (void)state;
    clphys_md_system s, ref;
    double rows[NCOL * 3];
    clphys_md_mpi *pl = column_plan(&s, &ref, rows);
    assert_int_equal(clphys_md_mpi_run(pl, 19, NULL), CLPHYS_SUCCESS);
    clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
    const int growths0 = nb->growths;
    const size_t cap0 = nb->capacity;
    nb->capacity = 8;
    steps_20_and_40(pl, rows);
    /* the rebuild at step 20 grew the list back past 8 entries a row */
    assert_true(nb->growths > growths0 && nb->capacity > 8);
    assert_false(nb->overflow_pending);
    if (rank == 0)
        fprintf(stderr, "  list overflow: 8 entries a row -> %zu (%zu before), %d growths\n", nb->capacity, cap0,
                nb->growths - growths0);
    clphys_md_mpi_destroy(pl);
    clphys_md_system_destroy(&ref);
    clphys_md_system_destroy(&s);
}

/* A dilute hot gas packed into rank 0's corner of the box, drifting
 * towards the lower faces: atoms cross the periodic boundary into the
 * last subdomains, ranks start (and may end) empty; rebuild check every
 * step (neigh_check yes: one MPI_Allreduce); each full-list variant. */
static void test_dilute_gas(void **state)
{
    (void)state;
    const size_t n = 64;
    clphys_md_system s;
    memset(&s, 0, sizeof s);
    s.n = n, s.ntypes = 1;
    for (int c = 0; c < 3; c++) s.lo[c] = -1.0, s.hi[c] = 13.5;
    s.type_mass = calloc(2, sizeof(double)), s.type_mass[1] = 1.0;
    s.id = malloc(n * sizeof *s.id), s.type = malloc(n * sizeof *s.type);
    s.x = malloc(3 * n * sizeof *s.x), s.v = malloc(3 * n * sizeof *s.v), s.image = calloc(3 * n, sizeof(int));
    uint64_t rng = tu_rng_init(7);
    for (size_t i = 0; i < n; i++) {
        s.id[i] = (long long)i + 1, s.type[i] = 1;
        int k[3] = {(int)(i % 4), (int)(i / 4 % 4), (int)(i / 16)};
        for (int c = 0; c < 3; c++) {
            s.x[3 * i + c] = s.lo[c] + 0.3 + 1.05 * k[c] + 0.05 * tu_uniform(&rng);
            s.v[3 * i + c] = 3.0 * (tu_uniform(&rng) - 0.5) - 2.0;
        }
    }
    /* rank 0 computes the reference from these values: every rank has them */
    MPI_Bcast(s.x, 3 * (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Bcast(s.v, 3 * (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = CLPHYS_FP64, .variant = CLPHYS_MD_LJ_FULL_CSR},
                          .dt = 0.005,
                          .neigh_every = 1,
                          .neigh_check = 1};
    int g[2][3], ng = grids(g);
    double rows[NCOL * 11];
    const clphys_md_lj_variant vs[] = {CLPHYS_MD_LJ_FULL_CSR, CLPHYS_MD_LJ_FULL_TRANSPOSED, CLPHYS_MD_LJ_FULL_GROUP,
                                       CLPHYS_MD_LJ_CPU};
    for (size_t v = 0; v < sizeof vs / sizeof *vs; v++) {
        p.lj.variant = vs[v];
        clphys_md_system ref;
        copy_system(&s, &ref);
        single_rank(&p, &s, 200, 20, rows, &ref);
        if (rank == 0) {
            int crossed = 0;
            for (size_t i = 0; i < 3 * n; i++) crossed += ref.image[i] != 0;
            fprintf(stderr, "  dilute gas (%s): %d periodic crossings in the single-rank run\n",
                    clphys_md_lj_variant_name(vs[v]), crossed);
            assert_true(crossed > 0);
        }
        char what[64];
        snprintf(what, sizeof what, "dilute gas %s", clphys_md_lj_variant_name(vs[v]));
        for (int k = 0; k < ng; k++) compare_run(&p, g[k], &s, 200, 20, rows, &ref, what, NULL);
        clphys_md_system_destroy(&ref);
    }
    clphys_md_system_destroy(&s);
}

/* LAMMPS's in.lj (32000 atoms, tests/data/md) distributed: thermo rows of
 * steps 0, 10, 20 within 1e-6 of LAMMPS's log, as test_md's single-rank
 * run (test_lammps_in_lj). */
static void test_lammps_in_lj(void **state)
{
    (void)state;
    char dir[256] = "";
    double ref[3][TM_THERMO_COLS];
    clphys_md_system s;
    memset(&s, 0, sizeof s);
    if (rank == 0) {
        tu_tempdir("md_mpi", dir, sizeof dir);
        tm_lammps_in_lj(dir, &s, ref);
        tu_remove_tempdir(dir);
    }
    MPI_Bcast(ref, 3 * NCOL, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = CLPHYS_FP64, .variant = CLPHYS_MD_LJ_AUTO},
                          .dt = 0.005,
                          .neigh_every = 20,
                          .neigh_check = 0};
    int g[2][3];
    grids(g);
    clphys_md_mpi *pl;
    assert_int_equal(clphys_md_mpi_create(MPI_COMM_WORLD, ctx, &p, g[0], 0, rank == 0 ? &s : NULL, &pl),
                     CLPHYS_SUCCESS);
    double worst = 0;
    for (int k = 0; k < 3; k++) {
        if (k) assert_int_equal(clphys_md_mpi_run(pl, 10, NULL), CLPHYS_SUCCESS);
        clphys_md_thermo t;
        assert_int_equal(clphys_md_mpi_thermo(pl, &t), CLPHYS_SUCCESS);
        double got[NCOL];
        row_of(&t, got);
        if (k == 0) assert_true(fabs(t.pe - -6.773368053) < 5e-10);
        for (int c = 0; c < NCOL; c++) {
            double e = rel(got[c], ref[k][c]);
            worst = fmax(worst, e);
            if (c == 0 ? got[c] != ref[k][c] : !(e <= 1e-6)) {
                fprintf(stderr, "step %g column %d: %.15g vs LAMMPS %.15g\n", ref[k][0], c, got[c], ref[k][c]);
                fail();
            }
        }
    }
    if (rank == 0)
        fprintf(stderr, "  in.lj steps 0-20 on grid %dx%dx%d vs LAMMPS: max relative difference %.2e\n", g[0][0],
                g[0][1], g[0][2], worst);
    clphys_md_mpi_destroy(pl);
    clphys_md_system_destroy(&s);
}

/* Every rank gets the same status, and rank 0's message names `want`. */
static void expect_all(clphys_status got, clphys_status want, const char *text)
{
    assert_int_equal(got, want);
    const char *m = clphys_last_error(ctx);
    if (!strstr(m, text)) {
        fprintf(stderr, "rank %d: message \"%s\" lacks \"%s\"\n", rank, m, text);
        fail();
    }
}

/* An atom that crosses two subdomains between neighbour builds (4 slabs
 * along x, 3.0 thick: it flies 6.0 in 20 steps, from rank 0's slab into
 * rank 2's, no neighbour of rank 0): CLPHYS_ERR_INPUT on every rank at
 * the migration, no hang.  The other atoms stand still 3.0 apart (beyond
 * r_cut) and off its lane: no force anywhere. */
static void too_far(const clphys_md_params *p)
{
    clphys_md_system s;
    memset(&s, 0, sizeof s);
    const size_t n = 4 * 3 * 3 - 3; /* the lane y = z = 1.5 holds the flier only */
    s.n = n, s.ntypes = 1;
    s.lo[0] = s.lo[1] = s.lo[2] = 0, s.hi[0] = 12, s.hi[1] = s.hi[2] = 9;
    s.type_mass = calloc(2, sizeof(double)), s.type_mass[1] = 1.0;
    s.id = malloc(n * sizeof *s.id), s.type = malloc(n * sizeof *s.type);
    s.x = malloc(3 * n * sizeof *s.x), s.v = calloc(3 * n, sizeof *s.v), s.image = calloc(3 * n, sizeof(int));
    size_t m = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) {
                if (j == 0 && k == 0 && i > 0) continue;
                s.id[m] = (long long)m + 1, s.type[m] = 1;
                s.x[3 * m] = 1.5 + 3 * i, s.x[3 * m + 1] = 1.5 + 3 * j, s.x[3 * m + 2] = 1.5 + 3 * k;
                m++;
            }
    assert_int_equal(m, n);
    s.v[0] = 60; /* atom 1 at x = 1.5, 0.3 a step */
    clphys_md_params q = *p;
    q.neigh_every = 20, q.neigh_check = 0;
    const int g[3] = {size, 1, 1};
    clphys_md_mpi *pl = NULL;
    assert_int_equal(clphys_md_mpi_create(MPI_COMM_WORLD, ctx, &q, g, 0, rank == 0 ? &s : NULL, &pl), CLPHYS_SUCCESS);
    expect_all(clphys_md_mpi_run(pl, 20, NULL), CLPHYS_ERR_INPUT, "farther than the next subdomain");
    clphys_md_mpi_destroy(pl);
    clphys_md_system_destroy(&s);
}

/* A time step far too large (fcc at T 3.0, dt 0.2): the integration
 * diverges, and every rank returns CLPHYS_ERR_INPUT saying so, at a
 * rebuild (a migrant too fast or too far out) or at the thermo, with no
 * hang: positions grow until subtracting the box edge no longer changes
 * them, and nothing may wrap them one box length at a time. */
static void diverges(const clphys_md_params *p, const int g[3])
{
    clphys_md_system s;
    assert_int_equal(clphys_md_fcc(0.8442, 10, 3.0, 7, &s), CLPHYS_SUCCESS);
    clphys_md_params q = *p;
    q.dt = 0.2, q.neigh_every = 20, q.neigh_check = 0;
    clphys_md_mpi *pl = NULL;
    assert_int_equal(clphys_md_mpi_create(MPI_COMM_WORLD, ctx, &q, g, 0, rank == 0 ? &s : NULL, &pl), CLPHYS_SUCCESS);
    clphys_status st = clphys_md_mpi_run(pl, 100, NULL);
    clphys_md_thermo t;
    if (!st) st = clphys_md_mpi_thermo(pl, &t);
    expect_all(st, CLPHYS_ERR_INPUT, "the integration diverged");
    clphys_md_mpi_destroy(pl);
    clphys_md_system_destroy(&s);
}

static void test_failures(void **state)
{
    (void)state;
    clphys_md_system s;
    clphys_md_mpi *pl = NULL;
    int g[2][3];
    grids(g);
    clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = CLPHYS_FP64, .variant = CLPHYS_MD_LJ_FULL_CSR},
                          .dt = 0.005,
                          .neigh_every = 20};
    /* a subdomain thinner than r_cut + skin: 3 cells of fcc 0.8442 (5.04)
     * cut in two */
    assert_int_equal(clphys_md_fcc(0.8442, 3, 1.0, 1, &s), CLPHYS_SUCCESS);
    int thin[3] = {1, 1, 1};
    thin[0] = size;
    expect_all(clphys_md_mpi_create(MPI_COMM_WORLD, ctx, &p, thin, 0, rank == 0 ? &s : NULL, &pl), CLPHYS_ERR_INPUT,
               "thinner than r_cut + skin");
    assert_null(pl);
    clphys_md_system_destroy(&s);
    assert_int_equal(clphys_md_fcc(0.8442, 7, 1.0, 1, &s), CLPHYS_SUCCESS);
    /* a grid that does not match the ranks */
    int wrong[3] = {size + 1, 1, 1};
    expect_all(clphys_md_mpi_create(MPI_COMM_WORLD, ctx, &p, wrong, 0, rank == 0 ? &s : NULL, &pl),
               CLPHYS_ERR_INVALID_ARGUMENT, "subdomains for");
    /* parameters that differ between ranks */
    clphys_md_params q = p;
    if (rank == size - 1) q.dt = 0.004;
    expect_all(clphys_md_mpi_create(MPI_COMM_WORLD, ctx, &q, g[0], 0, rank == 0 ? &s : NULL, &pl),
               CLPHYS_ERR_INVALID_ARGUMENT, "differ between ranks");
    /* half lists: refused when a dimension is cut */
    q = p;
    q.lj.variant = CLPHYS_MD_LJ_HALF_FIXEDPOINT;
    expect_all(clphys_md_mpi_create(MPI_COMM_WORLD, ctx, &q, g[0], 0, rank == 0 ? &s : NULL, &pl),
               CLPHYS_ERR_UNSUPPORTED, "reverse exchange");
    /* a rank without a device (its context could not be made) */
    clphys_status st =
        clphys_md_mpi_create(MPI_COMM_WORLD, rank == 1 ? NULL : ctx, &p, g[0], 0, rank == 0 ? &s : NULL, &pl);
    assert_int_equal(st, CLPHYS_ERR_INVALID_ARGUMENT);
    if (rank != 1) assert_non_null(strstr(clphys_last_error(ctx), "rank 1"));
    assert_null(pl);
    /* no system on root */
    expect_all(clphys_md_mpi_create(MPI_COMM_WORLD, ctx, &p, g[0], 0, NULL, &pl), CLPHYS_ERR_INVALID_ARGUMENT,
               "no system");
    /* an atom too far out of the box to place (md_wrap refuses it) */
    s.x[3 * 5] = 1e300;
    expect_all(clphys_md_mpi_create(MPI_COMM_WORLD, ctx, &p, g[0], 0, rank == 0 ? &s : NULL, &pl), CLPHYS_ERR_INPUT,
               "box lengths outside the box");
    assert_null(pl);
    clphys_md_system_destroy(&s);
    diverges(&p, g[0]);
    if (size >= 4) too_far(&p);
}

/* md_wrap: steps of L near the box, whole box lengths far out (the same
 * place and image count), and a refusal, not an endless loop, of what
 * cannot be placed: a coordinate not finite, more than MD_WRAP_MAX box
 * lengths out, or an image count that would overflow. */
static void test_wrap(void **state)
{
    (void)state;
    md_decomp d;
    memset(&d, 0, sizeof d);
    d.L[0] = d.L[1] = d.L[2] = 8.0;
    const struct {
        double x;
        int img;
        int ret;
        double want;
        int want_img;
    } cases[] = {{3.0, 0, 0, 3.0, 0},
                 {-0.5, 0, 0, 7.5, -1},
                 {20.0, 1, 0, 4.0, 3},
                 {-12.0, 0, 0, 4.0, -2},
                 {8.0 * 1000 + 2.0, 0, 0, 2.0, 1000},
                 {-8.0 * 1000 + 2.0, 5, 0, 2.0, -995},
                 {8.0 * (MD_WRAP_MAX + 2.0), 0, 1, 0, 0},
                 {1e300, 0, 1, 0, 0},
                 {-1e300, 0, 1, 0, 0},
                 {INFINITY, 0, 1, 0, 0},
                 {NAN, 0, 1, 0, 0},
                 {8.0 * 100 + 1.0, INT_MAX - 50, 1, 0, 0},
                 {9.0, INT_MAX, 1, 0, 0},
                 {-1.0, INT_MIN, 1, 0, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        double x[3] = {cases[k].x, 1.0, 7.0};
        int img[3] = {cases[k].img, 0, 0};
        assert_int_equal(md_wrap(&d, x, img), cases[k].ret);
        if (cases[k].ret) continue;
        assert_true(x[0] == cases[k].want);
        assert_int_equal(img[0], cases[k].want_img);
        assert_true(x[1] == 1.0 && x[2] == 7.0 && img[1] == 0 && img[2] == 0);
    }
}

/* md_node_stage_copy by 1 to 16 threads moves exactly n bytes, for the
 * sizes whose share per thread is a whole number of cache lines with bytes
 * left over (12 and 24 bytes a ghost: 43 mod 128 ghosts in fp32 by eight
 * threads), around the size below which one thread copies, and at random
 * sizes; the bytes around the destination untouched. */
static void test_staging_copy(void **state)
{
    (void)state;
    static const int threads[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16};
    const size_t most = 300000, guard = 64;
    unsigned char *src = malloc(most), *dst = malloc(most + 2 * guard);
    assert_non_null(src), assert_non_null(dst);
    uint64_t rng = tu_rng_init(4242 + (uint64_t)rank);
    for (size_t i = 0; i < most; i++) src[i] = (unsigned char)(256 * tu_uniform(&rng));
    md_ghost_dev gd;
    memset(&gd, 0, sizeof gd);
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
        const int T = gd.node_threads = threads[t];
        size_t sizes[64];
        int m = 0;
        for (size_t a = 43; m < 16; a += 128 * 11) sizes[m] = (m % 2 ? 24 : 12) * a, m++;
        for (int d = -8; d <= 8; d++) sizes[m++] = (size_t)(1024 * T + d * 3);
        while (m < 64) sizes[m++] = 1 + (size_t)(tu_uniform(&rng) * (double)(most - 1));
        for (int k = 0; k < m; k++) {
            const size_t n = sizes[k] < most ? sizes[k] : most;
            memset(dst, 0xa5, n + 2 * guard);
            md_node_stage_copy(&gd, dst + guard, src, n);
            if (memcmp(dst + guard, src, n) != 0) fail_msg("%d threads, %zu bytes: not every byte copied", T, n);
            for (size_t i = 0; i < guard; i++)
                if (dst[i] != 0xa5 || dst[guard + n + i] != 0xa5)
                    fail_msg("%d threads, %zu bytes: a byte outside the copy written", T, n);
        }
    }
    free(src), free(dst);
}

/* --die: rank 1 leaves in the middle of a run. */
static int rank_dies(void)
{
    clphys_md_system s;
    memset(&s, 0, sizeof s);
    if (rank == 0 && clphys_md_fcc(0.8442, 7, 1.0, 1, &s)) return 1;
    clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = CLPHYS_FP64}, .dt = 0.005, .neigh_every = 20};
    int g[3] = {size, 1, 1};
    clphys_md_mpi *pl;
    if (clphys_md_mpi_create(MPI_COMM_WORLD, ctx, &p, g, 0, rank == 0 ? &s : NULL, &pl)) return 1;
    for (int i = 0; i < 1000000; i++) {
        if (rank == 1 && i == 5) tu_mpi_die(rank, "after step", i);
        clphys_md_mpi_run(pl, 1, NULL);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (tu_mpi_init(&argc, &argv, &rank, &size, &ctx, 1)) return rank_dies();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_lj_variants), cmocka_unit_test(test_in_lj_interior),
        cmocka_unit_test(test_overlap),        cmocka_unit_test(test_dilute_gas),
        cmocka_unit_test(test_lammps_in_lj),   cmocka_unit_test(test_failures),
        cmocka_unit_test(test_default_grid),   cmocka_unit_test(test_rounds_growth),
        cmocka_unit_test(test_staging_copy),   cmocka_unit_test(test_list_overflow),
        cmocka_unit_test(test_wrap),
    };
    return tu_mpi_run_group("test_md_mpi", tests, size >= 2 && size <= 4, "2, 3 or 4", &ctx, 1);
}
