/* mpi.c — the distributed MD plan (include/clphys_md_mpi.h): each rank's
 * owned and ghost atoms in one cell-sorted set on its device (the LJ plan's
 * neighbour plan, in the rank's local frame), velocity Verlet as the
 * single-rank plan runs it (cl/md_integrate.cl), ghost positions exchanged
 * every step (ghost.c), and at each rebuild the owned atoms downloaded,
 * migrated (migrate.c), their ghosts listed anew and the set uploaded
 * and sorted.  Energies and virial are summed over owned atoms only: the
 * full lists give each atom half of each of its pairs (cl/md_lj.cl), and an
 * owned atom's list is complete. */
#include "md_mpi_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int any_cut(const clphys_md_mpi *pl) { return pl->d.cut[0] || pl->d.cut[1] || pl->d.cut[2]; }

static void release_arrays(clphys_md_mpi *pl)
{
    cl_mem *ms[] = {&pl->vel,     &pl->vel_tmp, &pl->img,  &pl->img_tmp, &pl->tag,
                    &pl->tag_tmp, &pl->inv,     &pl->xref, &pl->edge};
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) cp_release_mem(ms[i]);
}

void clphys_md_mpi_destroy(clphys_md_mpi *pl)
{
    if (!pl) return;
    clphys_md_lj_plan_destroy(pl->lj);
    release_arrays(pl);
    cp_release_mem(&pl->counts);
    cp_release_mem(&pl->mig);
    cl_kernel *ks[] = {&pl->k_classify, &pl->k_iota, &pl->k_bind, &pl->k_map, &pl->k_edge, &pl->k_arrive, &pl->k_fill};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) cp_release_kernel(ks[i]);
    md_verlet_free(&pl->vv);
    md_ghost_dev_free(&pl->gd);
    cp_queue_release(&pl->untimed_q);
    if (pl->stage_m)
        cp_pinned_release(pl->ctx, &pl->stage_m, &pl->stage);
    else
        free(pl->stage);
    if (pl->tail_m)
        cp_pinned_release(pl->ctx, &pl->tail_m, &pl->tail);
    else
        free(pl->tail);
    md_ghosts_free(&pl->g);
    md_atoms_free(&pl->own);
    free(pl->near_x), free(pl->near_at), free(pl->brec), free(pl->brin);
    free(pl->type_mass);
    if (pl->comm != MPI_COMM_NULL) MPI_Comm_free(&pl->comm);
    free(pl);
}

static int full_list_variant(clphys_md_lj_variant v)
{
    return v == CLPHYS_MD_LJ_FULL_CSR || v == CLPHYS_MD_LJ_FULL_TRANSPOSED || v == CLPHYS_MD_LJ_FULL_GROUP ||
           v == CLPHYS_MD_LJ_CPU;
}

/* The LJ plan and working arrays for n atoms, and room for a quarter more
 * when a dimension is cut (the count changes at each rebuild; without a
 * cut it never does, and the plan is made for exactly n, as the half-list
 * and staged variants need). */
clphys_status md_mpi_capacity(clphys_md_mpi *pl, size_t n)
{
    clphys_context *ctx = pl->ctx;
    size_t cap = any_cut(pl) ? n + n / 4 + 64 : n;
    clphys_md_lj_plan_destroy(pl->lj);
    pl->lj = NULL;
    release_arrays(pl);
    pl->cap = 0;
    clphys_md_lj_params q = pl->p.lj;
    q.n = cap;
    memcpy(q.box, pl->d.lbox, sizeof q.box);
    CP_TRY(clphys_md_lj_plan_create(ctx, &q, &pl->lj));
    if (any_cut(pl) && !full_list_variant(clphys_md_lj_plan_variant(pl->lj))) {
        if (pl->p.lj.variant != CLPHYS_MD_LJ_AUTO)
            return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED,
                            "md mpi: variant %s is not a full-list variant (full-csr, full-transposed, full-group, "
                            "cpu): half lists would need the reverse exchange of ghost forces, which the "
                            "distributed plan does not do; full-staged is not resized with the atoms",
                            clphys_md_lj_variant_name(pl->p.lj.variant));
        /* auto chose a variant this plan cannot run: the heuristic's full-list one */
        clphys_md_lj_plan_destroy(pl->lj);
        pl->lj = NULL;
        q.variant = ctx->info.is_cpu ? CLPHYS_MD_LJ_CPU : CLPHYS_MD_LJ_FULL_TRANSPOSED;
        CP_TRY(clphys_md_lj_plan_create(ctx, &q, &pl->lj));
    }
    pl->lj->atom_id = NULL;
    size_t b4 = 4 * pl->rs * cap;
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, b4, NULL, &pl->vel));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, b4, NULL, &pl->vel_tmp));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, b4, NULL, &pl->xref));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 16 * cap, NULL, &pl->img));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 16 * cap, NULL, &pl->img_tmp));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 16 * cap, NULL, &pl->tag));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 16 * cap, NULL, &pl->tag_tmp));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * cap, NULL, &pl->inv));
    if (any_cut(pl) && md_lj_lanes(pl->lj)) CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * cap, NULL, &pl->edge));
    pl->cap = cap;
    return CLPHYS_SUCCESS;
}

static clphys_status kernels(clphys_md_mpi *pl)
{
    clphys_context *ctx = pl->ctx;
    CP_TRY(md_verlet_create(ctx, pl->p.lj.precision, &pl->vv));
    CP_TRY(md_mpi_rebuild_kernels(pl));
    return md_ghost_dev_create(ctx, pl->p.lj.precision, &pl->gd);
}

/* Everything of the parameters that must agree between ranks, as text
 * (no struct padding compared). */
static void params_text(const clphys_md_params *p, const int grid[3], int root, char *buf, size_t n)
{
    const clphys_md_lj_params *l = &p->lj;
    snprintf(buf, n, "%.17g %.17g %.17g %.17g %d %d %d %d %d %d %d %d %.17g %d %d %d | %d %d %d | %d", l->epsilon,
             l->sigma, l->r_cut, l->skin, l->shifted, (int)l->precision, (int)l->variant, l->group_size,
             l->work_group_size, (int)l->slot_order, l->defer_exchanges, l->entries_ahead, p->dt, p->neigh_every,
             p->neigh_check, p->neigh_delay, grid ? grid[0] : 0, grid ? grid[1] : 0, grid ? grid[2] : 0, root);
}

/* Box, types and masses from root to all (after root checked them). */
static clphys_status share_box(clphys_md_mpi *pl, int root, const clphys_md_system *sys, double lo[3], double hi[3])
{
    clphys_context *ctx = pl->ctx;
    double b[7] = {0};
    int rank = pl->d.rank;
    clphys_status st = CLPHYS_SUCCESS;
    if (rank == root) {
        if (!sys || (sys->n && (!sys->x || !sys->v)) || sys->ntypes < 1 || !sys->type_mass)
            st = cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "md mpi: no system (x, v, ntypes >= 1, type_mass) on root");
        else
            for (int c = 0; c < 3; c++) b[c] = sys->lo[c], b[3 + c] = sys->hi[c];
        b[6] = st ? 0 : (double)sys->n;
        if (!st) pl->ntypes = sys->ntypes;
    }
    CP_TRY(cp_mpi_agree(pl->comm, ctx, st));
    CP_MPI(ctx, MPI_Bcast(b, 7, MPI_DOUBLE, root, pl->comm));
    CP_MPI(ctx, MPI_Bcast(&pl->ntypes, 1, MPI_INT, root, pl->comm));
    pl->type_mass = calloc((size_t)pl->ntypes + 1, sizeof *pl->type_mass);
    st = pl->type_mass ? CLPHYS_SUCCESS : cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: masses");
    if (!st && rank == root) memcpy(pl->type_mass, sys->type_mass, ((size_t)pl->ntypes + 1) * sizeof(double));
    CP_TRY(cp_mpi_agree(pl->comm, ctx, st));
    CP_MPI(ctx, MPI_Bcast(pl->type_mass, pl->ntypes + 1, MPI_DOUBLE, root, pl->comm));
    for (int c = 0; c < 3; c++) lo[c] = b[c], hi[c] = b[3 + c];
    pl->natoms = (long long)b[6];
    for (int c = 0; c < 3; c++)
        if (!(hi[c] > lo[c]) || !isfinite(hi[c] - lo[c]))
            return cp_error(ctx, CLPHYS_ERR_INPUT, "md mpi: box bounds %c: [%g, %g)", "xyz"[c], lo[c], hi[c]);
    if (!pl->natoms) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "md mpi: an empty system");
    return CLPHYS_SUCCESS;
}

static clphys_status create(clphys_md_mpi *pl, const clphys_md_params *p, const int grid[3], int root,
                            const clphys_md_system *sys)
{
    clphys_context *ctx = pl->ctx;
    int rank, size;
    CP_MPI(ctx, MPI_Comm_rank(pl->comm, &rank));
    CP_MPI(ctx, MPI_Comm_size(pl->comm, &size));
    pl->d.rank = rank;
    char text[512];
    params_text(p, grid, root, text, sizeof text);
    CP_TRY(cp_mpi_same(pl->comm, ctx, text, strlen(text) + 1, "the MD parameters (clphys_md_params, grid, root)"));
    if (!(p->dt > 0) || p->neigh_every < 1 || p->neigh_delay < 0 || !(p->lj.r_cut > 0) || !(p->lj.skin >= 0))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "md mpi: dt = %g (> 0), neigh_every = %d (>= 1), neigh_delay = %d (>= 0), r_cut = %g (> 0), "
                        "skin = %g (>= 0)",
                        p->dt, p->neigh_every, p->neigh_delay, p->lj.r_cut, p->lj.skin);
    pl->p = *p;
    pl->rs = p->lj.precision == CLPHYS_FP64 ? 8 : 4;
    double lo[3], hi[3], L[3];
    CP_TRY(share_box(pl, root, sys, lo, hi));
    for (int c = 0; c < 3; c++) L[c] = hi[c] - lo[c];
    CP_TRY(md_decomp_make(ctx, rank, size, grid, L, p->lj.r_cut + p->lj.skin, &pl->d));
    for (int c = 0; c < 3; c++) pl->d.glo[c] = lo[c], pl->d.ghi[c] = hi[c];
    /* the device: kernels and a first capacity (its failures agreed) */
    clphys_status st = kernels(pl);
    if (!st) st = md_mpi_capacity(pl, (size_t)(pl->natoms / size));
    CP_TRY(cp_mpi_agree(pl->comm, ctx, st));
    CP_TRY(md_scatter(pl->comm, ctx, &pl->d, root, sys, &pl->own));
    CP_TRY(md_mpi_rebuild(pl, 1, NULL));
    st = pl->nlocal ? clphys_md_lj_evaluate(pl->lj, NULL) : CLPHYS_SUCCESS;
    return cp_mpi_agree(pl->comm, ctx, st);
}

clphys_status clphys_md_mpi_create(MPI_Comm comm, clphys_context *ctx, const clphys_md_params *p, const int grid[3],
                                   int root, const clphys_md_system *sys, clphys_md_mpi **plan)
{
    clphys_status st = CLPHYS_SUCCESS;
    if (!ctx || !p || !plan) st = cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "md mpi: NULL context, params or plan");
    if (plan) *plan = NULL;
    clphys_md_params pin;
    if (!st) st = md_params_in(ctx, p, &pin);
    p = &pin;
    int size = 0;
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "md mpi: not a communicator");
    if (!st && (root < 0 || root >= size))
        st = cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "md mpi: root %d of %d ranks", root, size);
    clphys_md_mpi *pl = st ? NULL : calloc(1, sizeof *pl);
    if (!st && !pl) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi plan");
    if (pl) pl->ctx = ctx, pl->comm = MPI_COMM_NULL;
    CP_TRY(cp_mpi_agree(comm, ctx, st));
    st = cp_mpi_dup(comm, ctx, &pl->comm);
    if (!st) st = create(pl, p, grid, root, sys);
    if (st) {
        clphys_md_mpi_destroy(pl);
        return st;
    }
    *plan = pl;
    return CLPHYS_SUCCESS;
}

/* kick_first: the step before's second half kick first; pk, ev (may be
 * NULL): the positions packed, the launch's event (md_verlet_kick_drift) */
static clphys_status kick_drift(clphys_md_mpi *pl, md_rows r, int kick_first, const md_pack_rows *pk, cl_event *ev)
{
    if (!pl->nlocal) return CLPHYS_SUCCESS;
    return md_verlet_kick_drift(&pl->vv, clphys_md_lj_neighbor(pl->lj)->pos, pl->vel, pl->img, pl->lj->f, pl->p.dt,
                                pl->d.lbox, r, kick_first, pk, NULL, ev);
}

static clphys_status kick(clphys_md_mpi *pl, md_rows r)
{
    if (!pl->nlocal) return CLPHYS_SUCCESS;
    return md_verlet_kick(&pl->vv, pl->vel, pl->lj->f, pl->p.dt, r, NULL);
}

/* The rows the step's kicks still owe: all, or all but the far rows where
 * they went ahead; the ghosts' rows never (their positions are the
 * unpack's).  A step's second half kick goes into the next step's
 * kick-drift (kick_owed), but the last step's. */
static md_rows owed(const clphys_md_mpi *pl)
{
    md_rows r = md_rows_all(pl->nlocal);
    if (pl->nown < pl->nlocal) r.perm = clphys_md_lj_neighbor(pl->lj)->perm, r.nown = pl->nown;
    if (pl->far_done) r.skip_at = pl->far_lo, r.skip_n = pl->far_hi - pl->far_lo;
    return r;
}

/* The step's kick-drift of the rows it owes; where the rebuild mapped the
 * first cut dimension's sends (md_ghost_prepack_map), their positions
 * packed on the way for md_ghost_exchange.  The far rows, which went
 * ahead, are never sent: they lie more than r_s inside the interior's
 * cells (far_cells), the sent atoms within r_s of a face at the build. */
static clphys_status step_kick_drift(clphys_md_mpi *pl, int kick_owed)
{
    md_ghost_dev *gd = &pl->gd;
    if (!gd->prepack_n || !pl->nlocal) return kick_drift(pl, owed(pl), kick_owed, NULL, NULL);
    const md_swap *a = &pl->g.swap[0], *b = &pl->g.swap[1];
    md_pack_rows pk = {gd->slot, gd->sendbuf, a->nsend, {0, 0, 0}, {0, 0, 0}};
    pk.da[a->dim] = a->dlocal, pk.db[b->dim] = b->dlocal;
    cp_release_event(&gd->prepack_ev);
    CP_TRY(kick_drift(pl, owed(pl), kick_owed, &pk, &gd->prepack_ev));
    gd->prepacked = 1;
    return CLPHYS_SUCCESS;
}

/* This rank's largest squared displacement since the last build. */
static clphys_status displacement(clphys_md_mpi *pl, double *d2)
{
    *d2 = 0;
    if (!pl->nlocal) return CLPHYS_SUCCESS;
    float f;
    CP_TRY(md_verlet_max_displacement(&pl->vv, clphys_md_lj_neighbor(pl->lj)->pos, pl->xref, pl->d.lbox, pl->nlocal,
                                      NULL, &f));
    *d2 = f;
    return CLPHYS_SUCCESS;
}

/* The LAMMPS rebuild rule (neigh_modify every E delay D check yes|no); the
 * check's largest displacement over all ranks and the ranks' statuses in
 * one MPI_Allreduce. */
static clphys_status need_rebuild(clphys_md_mpi *pl, clphys_status st, int *yes)
{
    long long ago = pl->step - pl->last_build;
    *yes = 0;
    int due = !(ago < pl->p.neigh_delay || ago % pl->p.neigh_every);
    /* not due on a cut grid: the ghost exchange that follows agrees on st */
    if (!due && any_cut(pl)) return st;
    double v[2] = {0, st ? 1 : 0};
    if (due && pl->p.neigh_check && !st) st = displacement(pl, &v[0]), v[1] = st ? 1 : 0;
    if (due && pl->p.neigh_check) {
        CP_MPI(pl->ctx, MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, pl->comm));
    } else {
        CP_MPI(pl->ctx, MPI_Allreduce(MPI_IN_PLACE, &v[1], 1, MPI_DOUBLE, MPI_MAX, pl->comm));
    }
    if (v[1] > 0) return cp_mpi_agree(pl->comm, pl->ctx, st);
    double hs = 0.5 * pl->p.lj.skin;
    /* the single-rank plan compares the float it reduced on the device */
    *yes = due && (!pl->p.neigh_check || (float)v[0] > (float)(hs * hs));
    return CLPHYS_SUCCESS;
}

/* md_ghost_exchange's work during the messages: the forces of the rows
 * with no ghost neighbour; where a step follows, the far rows' second half
 * kick and the next step's kick-drift behind them (their forces are in,
 * and nothing beside reads their positions), which the device would
 * otherwise run between the rows beside the ghosts and the next pack. */
static clphys_status interior_forces(void *arg)
{
    clphys_md_mpi *pl = arg;
    CP_TRY(md_lj_evaluate_rows(pl->lj, pl->row_lo, pl->row_hi - pl->row_lo));
    if (!pl->far_next) return CLPHYS_SUCCESS;
    CP_TRY(kick_drift(pl, md_rows_span(pl->far_lo, pl->far_hi), 1, NULL, NULL));
    pl->far_done = 1;
    return CLPHYS_SUCCESS;
}

/* ctx's queue to wait for the work queued on the exchange's copyq (the
 * rows beside the ghosts); after a failure copyq is finished instead, so
 * that nothing still writes the forces. */
static clphys_status join_copyq(clphys_md_mpi *pl, clphys_status st)
{
    cl_event ev = NULL;
    if (!st) st = cp_marker(pl->ctx, pl->gd.copyq, &ev);
    if (!st) st = cp_enqueue_wait(pl->ctx, NULL, 1, &ev);
    cp_release_event(&ev);
    clphys_status f = st ? cp_finish_queue(pl->ctx, pl->gd.copyq) : cp_flush(pl->ctx, pl->gd.copyq);
    return st ? st : f;
}

static double lap(clphys_md_mpi *pl, clphys_md_mpi_timing *tm, double *t)
{
    if (!tm) return 0;
    cp_finish(pl->ctx);
    double now = cp_now(), d = now - *t;
    *t = now;
    return d;
}

static clphys_status run_steps(clphys_md_mpi *pl, int steps, clphys_md_mpi_timing *tm, clphys_status st);

clphys_status clphys_md_mpi_run(clphys_md_mpi *pl, int steps, clphys_md_mpi_timing *tm)
{
    if (!pl || steps < 0)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "md mpi: NULL plan or steps = %d < 0", steps);
    /* a local failure to switch is agreed by the steps' first collective */
    int on;
    clphys_status st = cp_untimed_begin(pl->ctx, tm != NULL, &pl->untimed_q, &on);
    st = run_steps(pl, steps, tm, st);
    clphys_status e = cp_untimed_end(pl->ctx, &pl->untimed_q, &on);
    return st ? st : e;
}

static clphys_status run_steps(clphys_md_mpi *pl, int steps, clphys_md_mpi_timing *tm, clphys_status st)
{
    double t = cp_now();
    /* a run that failed mid-step left no usable state */
    pl->far_done = 0;
    int kick_owed = 0;
    for (int s = 0; s < steps; s++) {
        const int split = pl->row_hi > pl->row_lo;
        int overlapped = 0, beside = pl->edge != NULL;
        if (!st) st = step_kick_drift(pl, kick_owed);
        pl->far_done = kick_owed = 0;
        /* not on the last step: the run ends with every row at its step */
        pl->far_next = split && s + 1 < steps && pl->far_hi > pl->far_lo;
        pl->step++;
        int yes;
        /* a local failure of the step before is agreed here or by the exchange */
        st = need_rebuild(pl, st, &yes);
        if (st && !(any_cut(pl) && !yes)) return st;
        if (tm) tm->integrate_s += lap(pl, tm, &t);
        if (yes) {
            CP_TRY(md_mpi_rebuild(pl, 0, tm));
            lap(pl, tm, &t);
        } else if (any_cut(pl)) {
            double b = 0;
            cp_mpi_overlap ov0 = pl->ov;
            const long long w0 = pl->gd.waits;
            st = md_ghost_exchange(pl->comm, &pl->gd, &pl->g, clphys_md_lj_neighbor(pl->lj)->pos,
                                   split && !st ? interior_forces : NULL, pl, pl->ctx->info.is_cpu, &b,
                                   tm ? &pl->ov : NULL, &beside, st);
            if (tm) {
                tm->exchange_s += lap(pl, tm, &t);
                tm->exposed_s += pl->ov.exposed_s - ov0.exposed_s;
                tm->messages_s += pl->ov.exchange_s - ov0.exchange_s;
                tm->ghost_bytes += b;
                tm->device_waits += pl->gd.waits - w0;
            }
            CP_TRY(st);
            overlapped = split;
        }
        if (!pl->nlocal)
            st = CLPHYS_SUCCESS;
        else if (overlapped) {
            /* the rows with ghost neighbours, now that the ghosts are here:
             * behind their unpack on copyq where it went there, beside the
             * interior rows (which end after the ghosts arrive: the device
             * fills the interior's last wave with them) */
            st =
                md_lj_evaluate_edges(pl->lj, pl->row_lo, pl->row_hi, pl->edge, pl->nedge, beside ? pl->gd.copyq : NULL);
            if (beside) st = join_copyq(pl, st);
        } else if (!pl->forces_ahead) {
            st = clphys_md_lj_evaluate(pl->lj, NULL);
        }
        pl->forces_ahead = 0;
        if (tm) tm->force_s += lap(pl, tm, &t);
        if (s + 1 < steps)
            kick_owed = 1;
        else if (!st)
            st = kick(pl, owed(pl));
        if (tm) tm->integrate_s += lap(pl, tm, &t), tm->steps++;
    }
    if (!st) st = cp_finish(pl->ctx);
    return cp_mpi_agree(pl->comm, pl->ctx, st);
}

clphys_status clphys_md_mpi_thermo(clphys_md_mpi *pl, clphys_md_thermo *t)
{
    if (!pl || !t) return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "md mpi: NULL argument");
    clphys_context *ctx = pl->ctx;
    size_t n = pl->nlocal, nown = pl->nown;
    double sum[3] = {0, 0, 0}; /* potential energy, virial, 2 KE */
    const double half = md_half_box(pl->d.L);
    double vmax2 = 0; /* the fastest owned atom's |v|^2, at row fast */
    size_t fast = 0;
    clphys_status st = CLPHYS_SUCCESS;
    if (n) {
        clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
        double *f4 = malloc(4 * n * sizeof *f4), *v4 = malloc(4 * n * sizeof *v4), *w = malloc(n * sizeof *w);
        float *wf = malloc(n * sizeof *wf);
        cl_uint *perm = malloc(4 * n);
        st = (!f4 || !v4 || !w || !wf || !perm) ? cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: thermo")
                                                : md_download_real4(ctx, pl->rs, pl->lj->f, f4, n);
        if (!st) st = md_download_real4(ctx, pl->rs, pl->vel, v4, n);
        if (!st) st = cp_read(ctx, pl->lj->vir, 0, pl->rs * n, pl->rs == 8 ? (void *)w : (void *)wf);
        if (!st && pl->rs == 4)
            for (size_t s = 0; s < n; s++) w[s] = wf[s];
        if (!st) st = cp_read(ctx, nb->perm, 0, 4 * n, perm);
        for (size_t s = 0; !st && s < n; s++) {
            size_t i = perm[s];
            if (i >= nown) continue;
            if (!isfinite(f4[4 * s]) || !isfinite(f4[4 * s + 1]) || !isfinite(f4[4 * s + 2]) ||
                !isfinite(f4[4 * s + 3])) {
                cl_int tg[4] = {0, 0, 0, 0};
                cp_read(ctx, pl->tag, 16 * s, 16, tg);
                st = cp_error(ctx, CLPHYS_ERR_INPUT, "md: non-finite force on atom ID %lld (overlapping atoms)",
                              (long long)(((unsigned long long)(cl_uint)tg[1] << 32) | (cl_uint)tg[0]));
            }
            const double vv = v4[4 * s] * v4[4 * s] + v4[4 * s + 1] * v4[4 * s + 1] + v4[4 * s + 2] * v4[4 * s + 2];
            sum[0] += f4[4 * s + 3];
            sum[1] += w[s];
            sum[2] += v4[4 * s + 3] * vv;
            if (vmax2 == vmax2 && !(vv <= vmax2)) vmax2 = vv, fast = s; /* a NaN stays */
        }
        /* clphys_md_thermo_now's bound: a faster atom crosses more than half
         * the box a step */
        if (!st && nown && !(sqrt(vmax2) * pl->p.dt <= half)) {
            cl_int tg[4] = {0, 0, 0, 0};
            cp_read(ctx, pl->tag, 16 * fast, 16, tg);
            char who[64];
            snprintf(who, sizeof who, "atom ID %lld",
                     (long long)(((unsigned long long)(cl_uint)tg[1] << 32) | (cl_uint)tg[0]));
            st = md_diverged_speed(ctx, pl->step, who, v4 + 4 * fast, pl->p.dt, half);
        }
        free(f4), free(v4), free(w), free(wf), free(perm);
    }
    CP_TRY(cp_mpi_agree(pl->comm, ctx, st));
    CP_MPI(ctx, MPI_Allreduce(MPI_IN_PLACE, sum, 3, MPI_DOUBLE, MPI_SUM, pl->comm));
    /* the same sums on every rank: the same error */
    if (!isfinite(sum[0]) || !isfinite(sum[1]) || !isfinite(sum[2]))
        return md_diverged_energies(ctx, pl->step, sum[2], sum[0], sum[1]);
    const double N = (double)pl->natoms, vol = pl->d.L[0] * pl->d.L[1] * pl->d.L[2];
    t->step = pl->step;
    t->temp = N > 1 ? sum[2] / (3.0 * N - 3.0) : 0;
    t->pe = sum[0] / N;
    t->ke = 0.5 * sum[2] / N;
    t->etotal = t->pe + t->ke;
    t->press = (sum[2] + sum[1]) / (3.0 * vol);
    return CLPHYS_SUCCESS;
}

clphys_status clphys_md_mpi_gather(clphys_md_mpi *pl, int root, clphys_md_system *all)
{
    if (!pl) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "md mpi: NULL plan");
    clphys_status st = CLPHYS_SUCCESS;
    if (root < 0 || root >= pl->d.size || (pl->d.rank == root && !all))
        st = cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                      "md mpi: gather to root %d of %d ranks needs a system there", root, pl->d.size);
    md_atoms own;
    memset(&own, 0, sizeof own);
    if (!st) st = md_mpi_download_owned(pl, &own);
    st = cp_mpi_agree(pl->comm, pl->ctx, st);
    if (!st) st = md_gather(pl->comm, pl->ctx, &pl->d, root, &own, pl->ntypes, pl->type_mass, all);
    md_atoms_free(&own);
    return st;
}

const char *clphys_md_mpi_info(const clphys_md_mpi *pl, int grid[3], int coord[3], size_t *owned, size_t *ghosts)
{
    if (!pl) return "";
    for (int c = 0; c < 3; c++) {
        if (grid) grid[c] = pl->d.P[c];
        if (coord) coord[c] = pl->d.coord[c];
    }
    if (owned) *owned = pl->nown;
    if (ghosts) *ghosts = pl->g.nghost;
    return clphys_md_lj_plan_choice(pl->lj);
}

int clphys_md_mpi_rebuilds(const clphys_md_mpi *pl) { return pl ? pl->rebuilds : 0; }
