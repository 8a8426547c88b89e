/* integrator.c — velocity-Verlet NVE on the device (cl/md_integrate.cl) over
 * the LJ plan's cell-sorted particles, with the LAMMPS rebuild policy
 * `neigh_modify every E delay D check yes|no` and LAMMPS lj-unit thermo;
 * the state comes from a host system or stays in an application's device
 * buffers (clphys_md_buffers), which the plan reads and writes by its
 * permutation on the device. */
#include "md_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct clphys_md_plan {
    clphys_context *ctx;
    clphys_md_params p;
    clphys_md_lj_plan *lj;
    size_t n, rs;
    double lo[3], box[3];
    md_verlet vv; /* the integrator's kernels; vv.dmax also takes
                     md_check_state's answer                      */
    cl_mem vel, vel_tmp, img, img_tmp, xref;
    long long step, last_build;
    int rebuilds;
    long long *atom_id; /* host systems: the atoms' IDs, for messages */
    /* bound to an application's buffers (clphys_md_plan_create_cl) */
    int bound;
    clphys_md_buffers b;
    cl_kernel k_check, k_pull, k_push;
    cl_command_queue untimed_q; /* the untimed runs' queue (cp_untimed_begin) */
};

void clphys_md_plan_destroy(clphys_md_plan *pl)
{
    if (!pl) return;
    clphys_md_lj_plan_destroy(pl->lj);
    md_verlet_free(&pl->vv);
    cp_release_kernel(&pl->k_check);
    cp_release_kernel(&pl->k_pull);
    cp_release_kernel(&pl->k_push);
    cp_queue_release(&pl->untimed_q);
    cl_mem *ms[] = {&pl->vel, &pl->vel_tmp, &pl->img, &pl->img_tmp, &pl->xref};
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) cp_release_mem(ms[i]);
    free(pl->atom_id);
    free(pl);
}

/* Forward: sort the uploaded arrays and build the list. */
static clphys_status sort_and_build(clphys_md_plan *pl, double *ks);

/* Host system: the unsorted working arrays in the caller's order
 * (positions relative to lo, velocities with the mass in w, images), then
 * the sort and the list. */
static clphys_status upload(clphys_md_plan *pl, const clphys_md_system *sys)
{
    clphys_context *ctx = pl->ctx;
    clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
    size_t n = pl->n;
    double *x = malloc(3 * n * sizeof *x), *v4 = malloc(4 * n * sizeof *v4);
    cl_int *im = malloc(4 * n * sizeof *im);
    clphys_status st = CLPHYS_SUCCESS;
    if (!x || !v4 || !im) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md upload");
    for (size_t i = 0; !st && i < n; i++) {
        for (int c = 0; c < 3; c++) {
            x[3 * i + c] = sys->x[3 * i + c] - pl->lo[c];
            v4[4 * i + c] = sys->v[3 * i + c];
            im[4 * i + c] = sys->image ? sys->image[3 * i + c] : 0;
        }
        v4[4 * i + 3] = sys->type_mass[sys->type[i]];
        im[4 * i + 3] = 0;
        const long long id = sys->id ? sys->id[i] : (long long)i + 1;
        if (!(v4[4 * i + 3] > 0))
            st =
                cp_error(ctx, CLPHYS_ERR_INPUT, "md: atom %s%lld has mass %g", sys->id ? "ID " : "", id, v4[4 * i + 3]);
        else if (!isfinite(v4[4 * i]) || !isfinite(v4[4 * i + 1]) || !isfinite(v4[4 * i + 2]))
            st = cp_error(ctx, CLPHYS_ERR_INPUT, "md: atom %s%lld has velocity (%g, %g, %g): not finite",
                          sys->id ? "ID " : "", id, v4[4 * i], v4[4 * i + 1], v4[4 * i + 2]);
        else {
            /* an atom may not cross half the box in one step (the minimum
               image of its displacement would hide the move from the list
               check), and m v^2 must be finite */
            const double vv = v4[4 * i] * v4[4 * i] + v4[4 * i + 1] * v4[4 * i + 1] + v4[4 * i + 2] * v4[4 * i + 2];
            const double step = sqrt(vv) * pl->p.dt, half = md_half_box(pl->box);
            if (!(step <= half) || !isfinite(v4[4 * i + 3] * vv))
                st = cp_error(ctx, CLPHYS_ERR_INPUT,
                              "md: atom %s%lld has velocity (%g, %g, %g): it would move |v| dt = %g per step, "
                              "more than half the box (%g), or m v^2 is not finite: the velocity or dt is out of "
                              "bounds",
                              sys->id ? "ID " : "", id, v4[4 * i], v4[4 * i + 1], v4[4 * i + 2], step, half);
        }
    }
    if (!st) st = md_neighbor_upload(nb, x);
    if (!st) st = md_upload4(ctx, pl->rs, pl->vel_tmp, v4, n);
    if (!st) st = cp_write(ctx, pl->img_tmp, 0, 16 * n, im);
    free(x), free(v4), free(im);
    return st ? st : sort_and_build(pl, NULL);
}

/* Element i of a device real4 array, as doubles. */
static clphys_status read_real4_at(clphys_md_plan *pl, cl_mem m, size_t i, double out[4])
{
    double d[4];
    float f[4];
    CP_TRY(cp_read(pl->ctx, m, 4 * pl->rs * i, 4 * pl->rs, pl->rs == 8 ? (void *)d : (void *)f));
    for (int c = 0; c < 4; c++) out[c] = pl->rs == 8 ? d[c] : f[c];
    return CLPHYS_SUCCESS;
}

/* Bound plans: the unsorted working arrays (nb->pos_in, vel_tmp, img_tmp) and
 * the identity permutation (nb->perm_in) from the application's buffers
 * (md_pull), ready for the sort. */
static clphys_status pull(clphys_md_plan *pl)
{
    clphys_context *ctx = pl->ctx;
    clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
    cl_kernel k = pl->k_pull;
    size_t g = md_global(pl->n, 64);
    cl_uint n = (cl_uint)pl->n;
    /* the application's state first, as md_check_state takes it */
    CP_TRY(CP_ARGS(ctx, k, pl->b.x, pl->b.v, MD_REAL4_ARG(pl->rs, pl->lo), MD_REAL4_ARG(pl->rs, pl->box), n,
                   pl->b.image, nb->pos_in, pl->vel_tmp, pl->img_tmp, nb->perm_in));
    return cp_launch(ctx, k, 1, &g, NULL, NULL);
}

/* Bound plans: the application's buffers from the working arrays (md_push). */
static clphys_status push(clphys_md_plan *pl, double *ks)
{
    clphys_context *ctx = pl->ctx;
    clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
    cl_kernel k = pl->k_push;
    cl_uint n = (cl_uint)pl->n;
    size_t g = md_global(n, 64);
    CP_TRY(CP_ARGS(ctx, k, nb->pos, pl->vel, pl->img, pl->lj->f, nb->perm, MD_REAL4_ARG(pl->rs, pl->lo), n, pl->b.x,
                   pl->b.v, pl->b.image, pl->b.f));
    return cp_launch(ctx, k, 1, &g, NULL, ks);
}

/* The LJ plan, integrator kernels and working arrays for n atoms in the box
 * [lo, hi). */
static clphys_status setup(clphys_context *ctx, clphys_md_plan *pl, size_t n, const double lo[3], const double hi[3])
{
    clphys_md_params *p = &pl->p;
    if (!(p->dt > 0) || p->neigh_every < 1 || p->neigh_delay < 0)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "md: dt = %g (> 0), neigh_every = %d (>= 1), neigh_delay = %d (>= 0)", p->dt, p->neigh_every,
                        p->neigh_delay);
    pl->n = n;
    for (int c = 0; c < 3; c++) pl->lo[c] = lo[c], pl->box[c] = hi[c] - lo[c];
    p->lj.n = n;
    memcpy(p->lj.box, pl->box, sizeof pl->box);
    CP_TRY(clphys_md_lj_plan_create(ctx, &p->lj, &pl->lj));
    pl->rs = p->lj.precision == CLPHYS_FP64 ? 8 : 4;
    CP_TRY(md_verlet_create(ctx, p->lj.precision, &pl->vv));
    cl_program prog = pl->vv.prog;
    if (pl->bound) {
        CP_TRY(cp_kernel(ctx, prog, "md_check_state", &pl->k_check));
        CP_TRY(cp_kernel(ctx, prog, "md_pull", &pl->k_pull));
        CP_TRY(cp_kernel(ctx, prog, "md_push", &pl->k_push));
    }
    size_t b4 = 4 * pl->rs * pl->n;
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, b4, NULL, &pl->vel));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, b4, NULL, &pl->vel_tmp));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, b4, NULL, &pl->xref));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 16 * pl->n, NULL, &pl->img));
    return cp_buffer(ctx, CL_MEM_READ_WRITE, 16 * pl->n, NULL, &pl->img_tmp);
}

static clphys_md_plan *new_plan(clphys_context *ctx, const clphys_md_params *p)
{
    clphys_md_plan *pl = calloc(1, sizeof *pl);
    if (!pl) {
        cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md plan");
        return NULL;
    }
    pl->ctx = ctx;
    pl->p = *p;
    return pl;
}

static clphys_status finish_create(clphys_md_plan *pl, clphys_status st, clphys_md_plan **plan)
{
    if (st) {
        clphys_md_plan_destroy(pl);
        return st;
    }
    *plan = pl;
    return CLPHYS_SUCCESS;
}

clphys_status md_params_in(clphys_context *ctx, const clphys_md_params *p, clphys_md_params *out)
{
    CP_TRY(CP_PARAMS_IN(ctx, clphys_md_params, p, neigh_delay, out));
    clphys_md_lj_params lj;
    CP_TRY(CP_PARAMS_IN(ctx, clphys_md_lj_params, &out->lj, entries_ahead, &lj));
    out->lj = lj;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_md_plan_create(clphys_context *ctx, const clphys_md_params *p, const clphys_md_system *sys,
                                    clphys_md_plan **plan)
{
    if (!ctx || !p || !sys || !plan || !sys->n)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "md: NULL argument or empty system");
    *plan = NULL;
    clphys_md_params pin;
    CP_TRY(md_params_in(ctx, p, &pin));
    p = &pin;
    clphys_md_plan *pl = new_plan(ctx, p);
    if (!pl) return CLPHYS_ERR_OUT_OF_MEMORY;
    clphys_status st = setup(ctx, pl, sys->n, sys->lo, sys->hi);
    if (!st && sys->id) {
        pl->atom_id = malloc(sys->n * sizeof *pl->atom_id);
        if (!pl->atom_id)
            st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md plan: atom IDs");
        else
            memcpy(pl->atom_id, sys->id, sys->n * sizeof *pl->atom_id);
        if (!st) pl->lj->atom_id = pl->atom_id;
    }
    if (!st) st = upload(pl, sys);
    if (!st) st = clphys_md_lj_evaluate(pl->lj, NULL);
    return finish_create(pl, st, plan);
}

/* Bound plans: CLPHYS_ERR_INPUT naming the first atom of the application's
 * buffers whose state cannot be integrated (md_check_state). */
static clphys_status check_state(clphys_md_plan *pl)
{
    clphys_context *ctx = pl->ctx;
    cl_kernel k = pl->k_check;
    cl_uint n = (cl_uint)pl->n, bad = n;
    size_t g = md_global(n, 64);
    CP_TRY(cp_write(ctx, pl->vv.dmax, 0, 4, &bad));
    CP_TRY(
        CP_ARGS(ctx, k, pl->b.x, pl->b.v, MD_REAL4_ARG(pl->rs, pl->lo), MD_REAL4_ARG(pl->rs, pl->box), n, pl->vv.dmax));
    CP_TRY(cp_launch(ctx, k, 1, &g, NULL, NULL));
    CP_TRY(cp_read(ctx, pl->vv.dmax, 0, 4, &bad));
    if (bad >= n) return CLPHYS_SUCCESS;
    double x[4], v[4];
    CP_TRY(read_real4_at(pl, pl->b.x, bad, x));
    CP_TRY(read_real4_at(pl, pl->b.v, bad, v));
    return cp_error(ctx, CLPHYS_ERR_INPUT,
                    "md: atom %u (buffer index) has x = (%g, %g, %g), v = (%g, %g, %g), mass %g: need finite "
                    "values, mass > 0 and a position within one box length of [lo, hi)",
                    bad, x[0], x[1], x[2], v[0], v[1], v[2], v[3]);
}

/* Sort the unsorted working arrays (positions, permutation, velocities,
 * images) by cell and build the list; the displacement check (where
 * neigh_check asks for it) starts here. */
static clphys_status sort_and_build(clphys_md_plan *pl, double *ks)
{
    clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
    nb->untimed = !ks; /* no wait per launch where no time is asked for */
    CP_TRY(md_neighbor_rebuild(nb, &pl->vel_tmp, &pl->vel, 1, pl->img_tmp, pl->img));
    if (ks) *ks += nb->kernel_s;
    if (pl->p.neigh_check) CP_TRY(cp_copy(pl->ctx, nb->pos, 0, pl->xref, 0, 4 * pl->rs * pl->n));
    pl->last_build = pl->step;
    pl->rebuilds++;
    return CLPHYS_SUCCESS;
}

/* Bound plans: read the application's buffers, sort them by cell into the
 * working arrays, build the list, and write the forces of those positions
 * to the application's f. */
static clphys_status bound_start(clphys_md_plan *pl)
{
    CP_TRY(check_state(pl));
    CP_TRY(pull(pl));
    CP_TRY(sort_and_build(pl, NULL));
    CP_TRY(clphys_md_lj_evaluate(pl->lj, NULL));
    return push(pl, NULL);
}

clphys_status clphys_md_plan_create_cl(clphys_context *ctx, const clphys_md_params *p, const clphys_md_buffers *b,
                                       clphys_md_plan **plan)
{
    if (!ctx || !p || !b || !plan || !b->n || !b->x || !b->v || !b->f)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "md: NULL argument, n = 0 or a NULL x, v or f buffer");
    *plan = NULL;
    clphys_md_params pin;
    CP_TRY(md_params_in(ctx, p, &pin));
    p = &pin;
    size_t rs = p->lj.precision == CLPHYS_FP64 ? 8 : 4;
    cl_mem ms[] = {b->x, b->v, b->f, b->image};
    static const char *what[] = {"x", "v", "f", "image"};
    for (int q = 0; q < 4; q++) {
        size_t have = 0, want = (q < 3 ? 4 * rs : 16) * b->n;
        if (!ms[q]) continue;
        CP_TRY(cp_mem_bytes(ctx, ms[q], &have));
        if (have < want)
            return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                            "md: buffer %s holds %zu bytes; %zu atoms need %zu (%s4 each, %s)", what[q], have, b->n,
                            want, q < 3 ? (rs == 8 ? "double" : "float") : "int", rs == 8 ? "fp64" : "fp32");
    }
    clphys_md_plan *pl = new_plan(ctx, p);
    if (!pl) return CLPHYS_ERR_OUT_OF_MEMORY;
    pl->bound = 1;
    pl->b = *b;
    clphys_status st = setup(ctx, pl, b->n, b->lo, b->hi);
    if (!st) st = bound_start(pl);
    return finish_create(pl, st, plan);
}

clphys_status clphys_md_refresh(clphys_md_plan *pl)
{
    if (!pl || !pl->bound)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "md: refresh needs a plan bound to device buffers (clphys_md_plan_create_cl)");
    return bound_start(pl);
}

int clphys_md_rebuilds(const clphys_md_plan *pl) { return pl ? pl->rebuilds : 0; }

/* The atom ID (or 0-based index) of sorted slot s, for messages. */
static void atom_name(clphys_md_plan *pl, const cl_uint *perm, size_t s, char *buf, size_t n)
{
    if (pl->atom_id)
        snprintf(buf, n, "atom ID %lld", pl->atom_id[perm[s]]);
    else
        snprintf(buf, n, "atom %u (0-based index)", perm[s]);
}

/* CLPHYS_ERR_INPUT naming the step and the first atom whose position,
 * velocity or kinetic energy m v^2 / 2 is not finite (a diverged run);
 * success when every one is finite.  O(n) downloads: called when a sum
 * (the displacement check, the thermo) already says something is not. */
static clphys_status check_finite(clphys_md_plan *pl)
{
    clphys_context *ctx = pl->ctx;
    clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
    size_t n = pl->n;
    double *x4 = malloc(4 * n * sizeof *x4), *v4 = malloc(4 * n * sizeof *v4);
    cl_uint *perm = malloc(4 * n);
    clphys_status st = (!x4 || !v4 || !perm) ? cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md check")
                                             : md_download_real4(ctx, pl->rs, nb->pos, x4, n);
    if (!st) st = md_download_real4(ctx, pl->rs, pl->vel, v4, n);
    if (!st) st = cp_read(ctx, nb->perm, 0, 4 * n, perm);
    for (size_t s = 0; !st && s < n; s++) {
        const double *x = x4 + 4 * s, *v = v4 + 4 * s;
        const double ke = 0.5 * v[3] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        const char *what = !isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2])   ? "position"
                           : !isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]) ? "velocity"
                           : !isfinite(ke)                                         ? "kinetic energy m v^2 / 2"
                                                                                   : NULL;
        if (!what) continue;
        char who[64];
        atom_name(pl, perm, s, who, sizeof who);
        st = cp_error(ctx, CLPHYS_ERR_INPUT,
                      "md: step %lld: %s has a non-finite %s: x = (%g, %g, %g), v = (%g, %g, %g): the integration "
                      "diverged (dt too large for the forces, or velocities out of bounds)",
                      pl->step, who, what, x[0] + pl->lo[0], x[1] + pl->lo[1], x[2] + pl->lo[2], v[0], v[1], v[2]);
    }
    free(x4), free(v4), free(perm);
    return st;
}

static clphys_status need_rebuild(clphys_md_plan *pl, int *yes, double *ks)
{
    long long ago = pl->step - pl->last_build;
    *yes = 0;
    if (ago < pl->p.neigh_delay || ago % pl->p.neigh_every) return CLPHYS_SUCCESS;
    if (!pl->p.neigh_check) {
        *yes = 1;
        return CLPHYS_SUCCESS;
    }
    float d2;
    CP_TRY(md_verlet_max_displacement(&pl->vv, clphys_md_lj_neighbor(pl->lj)->pos, pl->xref, pl->box, pl->n, ks, &d2));
    if (!isfinite(d2)) CP_TRY(check_finite(pl));
    double half_skin = 0.5 * pl->p.lj.skin;
    *yes = d2 > half_skin * half_skin;
    return CLPHYS_SUCCESS;
}

/* The sorted arrays become the unsorted input of a new sort. */
static clphys_status rebuild(clphys_md_plan *pl, double *ks)
{
    clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
    cl_mem t = nb->pos_in;
    nb->pos_in = nb->pos, nb->pos = t;
    t = nb->perm_in, nb->perm_in = nb->perm, nb->perm = t;
    t = pl->vel_tmp, pl->vel_tmp = pl->vel, pl->vel = t;
    t = pl->img_tmp, pl->img_tmp = pl->img, pl->img = t;
    return sort_and_build(pl, ks);
}

static clphys_status run_steps(clphys_md_plan *pl, int steps, double *kernel_s);

clphys_status clphys_md_run(clphys_md_plan *pl, int steps, double *kernel_s)
{
    if (!pl || steps < 0)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "md: NULL plan or steps = %d < 0", steps);
    int on;
    CP_TRY(cp_untimed_begin(pl->ctx, kernel_s != NULL, &pl->untimed_q, &on));
    clphys_status st = run_steps(pl, steps, kernel_s), e = cp_untimed_end(pl->ctx, &pl->untimed_q, &on);
    return st ? st : e;
}

static clphys_status run_steps(clphys_md_plan *pl, int steps, double *kernel_s)
{
    double ks = 0, *kp = kernel_s ? &ks : NULL, t = 0;
    /* a step's second half kick goes into the next step's kick-drift, but
     * the last step's: the run ends with the velocities at its step */
    for (int s = 0; s < steps; s++) {
        clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
        CP_TRY(md_verlet_kick_drift(&pl->vv, nb->pos, pl->vel, pl->img, pl->lj->f, pl->p.dt, pl->box,
                                    md_rows_all(pl->n), s > 0, NULL, kp, NULL));
        pl->step++;
        int yes;
        CP_TRY(need_rebuild(pl, &yes, kp));
        if (yes) CP_TRY(rebuild(pl, kp));
        CP_TRY(clphys_md_lj_evaluate(pl->lj, kernel_s ? &t : NULL));
        ks += t;
        if (s + 1 == steps) CP_TRY(md_verlet_kick(&pl->vv, pl->vel, pl->lj->f, pl->p.dt, md_rows_all(pl->n), kp));
    }
    if (pl->bound) CP_TRY(push(pl, kp));
    if (kernel_s) *kernel_s = ks;
    return CLPHYS_SUCCESS;
}

clphys_status md_diverged_speed(clphys_context *ctx, long long step, const char *who, const double v[3], double dt,
                                double half)
{
    return cp_error(ctx, CLPHYS_ERR_INPUT,
                    "md: step %lld: %s has velocity (%g, %g, %g): it moves |v| dt = %g per step, more than half the "
                    "box (%g): the integration diverged (dt too large for the forces)",
                    step, who, v[0], v[1], v[2], sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) * dt, half);
}

clphys_status md_diverged_energies(clphys_context *ctx, long long step, double ke2, double pe, double vir)
{
    return cp_error(ctx, CLPHYS_ERR_INPUT,
                    "md: step %lld: the energies are not finite (sum m v^2 = %g, potential %g, virial %g): the "
                    "integration diverged",
                    step, ke2, pe, vir);
}

clphys_status clphys_md_thermo_now(clphys_md_plan *pl, clphys_md_thermo *t)
{
    if (!pl || !t) return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "md: NULL argument");
    size_t n = pl->n;
    clphys_md_lj_result r;
    clphys_status gst = clphys_md_lj_get(pl->lj, NULL, &r);
    if (gst) {
        cp_error_append(pl->ctx, "(at step %lld)", pl->step);
        return gst;
    }
    double *v4 = malloc(4 * n * sizeof *v4);
    if (!v4) return cp_error(pl->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md thermo");
    clphys_status st = md_download_real4(pl->ctx, pl->rs, pl->vel, v4, n);
    double ke2 = 0, vmax2 = 0, vfast[3] = {0, 0, 0}; /* sum m v^2 = 2 KE; the fastest atom */
    size_t fast = 0;
    for (size_t i = 0; !st && i < n; i++) {
        const double vv = v4[4 * i] * v4[4 * i] + v4[4 * i + 1] * v4[4 * i + 1] + v4[4 * i + 2] * v4[4 * i + 2];
        ke2 += v4[4 * i + 3] * vv;
        if (vv > vmax2) vmax2 = vv, fast = i, memcpy(vfast, v4 + 4 * i, sizeof vfast);
    }
    free(v4);
    CP_TRY(st);
    /* the bound of the input holds at every row: a faster atom crosses more
       than half the box per step, which the list check cannot see */
    const double half = md_half_box(pl->box);
    if (isfinite(vmax2) && sqrt(vmax2) * pl->p.dt > half) {
        cl_uint *perm = malloc(4 * n);
        char who[64] = "an atom";
        if (perm && !cp_read(pl->ctx, clphys_md_lj_neighbor(pl->lj)->perm, 0, 4 * n, perm))
            atom_name(pl, perm, fast, who, sizeof who);
        free(perm);
        return md_diverged_speed(pl->ctx, pl->step, who, vfast, pl->p.dt, half);
    }
    if (!isfinite(ke2) || !isfinite(r.potential_energy) || !isfinite(r.virial)) {
        CP_TRY(check_finite(pl));
        return md_diverged_energies(pl->ctx, pl->step, ke2, r.potential_energy, r.virial);
    }
    double vol = pl->box[0] * pl->box[1] * pl->box[2];
    t->step = pl->step;
    t->temp = n > 1 ? ke2 / (3.0 * n - 3.0) : 0;
    t->pe = r.potential_energy / n;
    t->ke = 0.5 * ke2 / n;
    t->etotal = t->pe + t->ke;
    t->press = (ke2 + r.virial) / (3.0 * vol);
    return CLPHYS_SUCCESS;
}

clphys_status clphys_md_download(clphys_md_plan *pl, clphys_md_system *sys)
{
    if (!pl || !sys || !sys->x || !sys->v || sys->n != pl->n)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "md: download needs a system of the plan's %zu atoms with x and v", pl ? pl->n : 0);
    clphys_context *ctx = pl->ctx;
    clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
    size_t n = pl->n;
    double *x4 = malloc(4 * n * sizeof *x4), *v4 = malloc(4 * n * sizeof *v4);
    cl_int *im = malloc(16 * n);
    cl_uint *perm = malloc(4 * n);
    clphys_status st = (!x4 || !v4 || !im || !perm) ? cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md download")
                                                    : md_download_real4(ctx, pl->rs, nb->pos, x4, n);
    if (!st) st = md_download_real4(ctx, pl->rs, pl->vel, v4, n);
    if (!st) st = cp_read(ctx, pl->img, 0, 16 * n, im);
    if (!st) st = cp_read(ctx, nb->perm, 0, 4 * n, perm);
    for (size_t s = 0; !st && s < n; s++) {
        size_t i = perm[s];
        for (int c = 0; c < 3; c++) {
            double x = x4[4 * s + c];
            int img = im[4 * s + c];
            /* keep the stored coordinate inside [lo, hi) */
            if (x >= pl->box[c]) x -= pl->box[c], img++;
            if (x < 0) x += pl->box[c], img--;
            sys->x[3 * i + c] = x + pl->lo[c];
            sys->v[3 * i + c] = v4[4 * s + c];
            if (sys->image) sys->image[3 * i + c] = img;
        }
    }
    free(x4), free(v4), free(im), free(perm);
    return st;
}
