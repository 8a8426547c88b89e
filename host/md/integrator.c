/* integrator.c — velocity-Verlet NVE on the device (cl/integrate.cl) over
 * the LJ plan's cell-sorted particles, with the LAMMPS rebuild policy
 * `neigh_modify every E delay 0 check yes|no` and LAMMPS lj-unit thermo. */
#include "md_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct clphys_md_plan {
    clphys_context *ctx;
    clphys_md_params p;
    clphys_lj_plan *lj;
    size_t n, rs;
    double lo[3], box[3];
    cl_kernel k_kd, k_kick, k_disp;
    cl_mem vel, vel_tmp, img, img_tmp, xref, dmax;
    long long step, last_build;
    int rebuilds;
};

void clphys_md_plan_destroy(clphys_md_plan *pl)
{
    if (!pl) return;
    clphys_lj_plan_destroy(pl->lj);
    cp_release_kernel(&pl->k_kd);
    cp_release_kernel(&pl->k_kick);
    cp_release_kernel(&pl->k_disp);
    cl_mem *ms[] = {&pl->vel, &pl->vel_tmp, &pl->img, &pl->img_tmp, &pl->xref, &pl->dmax};
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++)
        cp_release_mem(ms[i]);
    free(pl);
}

static clphys_status copy_buffer(clphys_context *ctx, cl_mem src, cl_mem dst, size_t bytes)
{
    CP_CL(ctx, clEnqueueCopyBuffer(ctx->queue, src, dst, 0, 0, bytes, 0, NULL, NULL));
    return CLPHYS_SUCCESS;
}

static clphys_status upload(clphys_md_plan *pl, const clphys_md_system *sys)
{
    clphys_context *ctx = pl->ctx;
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
        if (!(v4[4 * i + 3] > 0))
            st = cp_error(ctx, CLPHYS_ERR_INPUT, "md: atom %lld has mass %g",
                          sys->id ? sys->id[i] : (long long)i + 1, v4[4 * i + 3]);
    }
    /* velocities and images go in caller order, then follow the sort */
    if (!st) st = clphys_lj_set_positions(pl->lj, x);
    clphys_neighbor_plan *nb = clphys_lj_neighbor(pl->lj);
    if (!st) {
        /* upload as real4 (mass in w) through a host conversion */
        void *buf = malloc(4 * pl->rs * n);
        if (!buf) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md upload");
        for (size_t k = 0; buf && k < 4 * n; k++) {
            if (pl->rs == 8)
                ((double *)buf)[k] = v4[k];
            else
                ((float *)buf)[k] = (float)v4[k];
        }
        if (!st) st = cp_write(ctx, pl->vel_tmp, 0, 4 * pl->rs * n, buf);
        free(buf);
    }
    if (!st) st = cp_write(ctx, pl->img_tmp, 0, 16 * n, im);
    if (!st) st = md_neighbor_gather4(nb, pl->vel_tmp, pl->vel);
    if (!st) st = md_neighbor_gatheri4(nb, pl->img_tmp, pl->img);
    if (!st) st = copy_buffer(ctx, nb->pos, pl->xref, 4 * pl->rs * n);
    free(x), free(v4), free(im);
    return st;
}

static clphys_status create(clphys_context *ctx, clphys_md_plan *pl, const clphys_md_system *sys)
{
    clphys_md_params *p = &pl->p;
    if (!(p->dt > 0) || p->neigh_every < 1 || p->neigh_delay < 0)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "md: dt = %g (> 0), neigh_every = %d (>= 1), neigh_delay = %d (>= 0)", p->dt,
                        p->neigh_every, p->neigh_delay);
    pl->n = sys->n;
    for (int c = 0; c < 3; c++)
        pl->lo[c] = sys->lo[c], pl->box[c] = sys->hi[c] - sys->lo[c];
    p->lj.n = sys->n;
    memcpy(p->lj.box, pl->box, sizeof pl->box);
    CP_TRY(clphys_lj_plan_create(ctx, &p->lj, &pl->lj));
    pl->rs = p->lj.precision == CLPHYS_FP64 ? 8 : 4;
    char opt[256];
    CP_TRY(cp_precision_options(ctx, p->lj.precision, opt, sizeof opt));
    cl_program prog;
    CP_TRY(cp_program(ctx, "integrate.cl", opt, &prog));
    CP_TRY(cp_kernel(ctx, prog, "md_kick_drift", &pl->k_kd));
    CP_TRY(cp_kernel(ctx, prog, "md_kick", &pl->k_kick));
    CP_TRY(cp_kernel(ctx, prog, "md_max_displacement", &pl->k_disp));
    size_t b4 = 4 * pl->rs * pl->n;
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, b4, NULL, &pl->vel));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, b4, NULL, &pl->vel_tmp));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, b4, NULL, &pl->xref));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 16 * pl->n, NULL, &pl->img));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 16 * pl->n, NULL, &pl->img_tmp));
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, 4, NULL, &pl->dmax));
    CP_TRY(upload(pl, sys));
    pl->rebuilds = 1;
    return clphys_lj_evaluate(pl->lj, NULL);
}

clphys_status clphys_md_plan_create(clphys_context *ctx, const clphys_md_params *p,
                                    const clphys_md_system *sys, clphys_md_plan **plan)
{
    if (!ctx || !p || !sys || !plan || !sys->n)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "md: NULL argument or empty system");
    *plan = NULL;
    clphys_md_plan *pl = calloc(1, sizeof *pl);
    if (!pl) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md plan");
    pl->ctx = ctx;
    pl->p = *p;
    clphys_status st = create(ctx, pl, sys);
    if (st) {
        clphys_md_plan_destroy(pl);
        return st;
    }
    *plan = pl;
    return CLPHYS_SUCCESS;
}

int clphys_md_rebuilds(const clphys_md_plan *pl)
{
    return pl ? pl->rebuilds : 0;
}

/* Arguments: real scalars and the box in the plan's precision. */
static clphys_status arg_real(clphys_md_plan *pl, cl_kernel k, cl_uint i, double v)
{
    float f = (float)v;
    return pl->rs == 8 ? CP_ARG(pl->ctx, k, i, v) : CP_ARG(pl->ctx, k, i, f);
}

static clphys_status arg_box(clphys_md_plan *pl, cl_kernel k, cl_uint i)
{
    double b[4] = {pl->box[0], pl->box[1], pl->box[2], 0};
    float f[4] = {(float)b[0], (float)b[1], (float)b[2], 0};
    return pl->rs == 8 ? CP_ARG(pl->ctx, k, i, b) : CP_ARG(pl->ctx, k, i, f);
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
    clphys_context *ctx = pl->ctx;
    clphys_neighbor_plan *nb = clphys_lj_neighbor(pl->lj);
    cl_uint zero = 0, n = (cl_uint)pl->n, bits;
    size_t g = md_global(n, 64), l = 64;
    CP_TRY(cp_write(ctx, pl->dmax, 0, 4, &zero));
    cl_kernel k = pl->k_disp;
    CP_TRY(CP_ARG(ctx, k, 0, nb->pos));
    CP_TRY(CP_ARG(ctx, k, 1, pl->xref));
    CP_TRY(arg_box(pl, k, 2));
    CP_TRY(CP_ARG(ctx, k, 3, n));
    CP_TRY(CP_ARG(ctx, k, 4, pl->dmax));
    CP_TRY(cp_launch(ctx, k, 1, &g, &l, ks));
    CP_TRY(cp_read(ctx, pl->dmax, 0, 4, &bits));
    float d2;
    memcpy(&d2, &bits, 4);
    double half_skin = 0.5 * pl->p.lj.skin;
    *yes = d2 > half_skin * half_skin;
    return CLPHYS_SUCCESS;
}

static clphys_status rebuild(clphys_md_plan *pl, double *ks)
{
    clphys_neighbor_plan *nb = clphys_lj_neighbor(pl->lj);
    cl_mem t = nb->pos_in;
    nb->pos_in = nb->pos, nb->pos = t;
    t = nb->perm_in, nb->perm_in = nb->perm, nb->perm = t;
    t = pl->vel_tmp, pl->vel_tmp = pl->vel, pl->vel = t;
    t = pl->img_tmp, pl->img_tmp = pl->img, pl->img = t;
    CP_TRY(md_neighbor_rebuild(nb, &pl->vel_tmp, &pl->vel, 1, pl->img_tmp, pl->img));
    if (ks) *ks += nb->kernel_s;
    CP_TRY(copy_buffer(pl->ctx, nb->pos, pl->xref, 4 * pl->rs * pl->n));
    pl->last_build = pl->step;
    pl->rebuilds++;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_md_run(clphys_md_plan *pl, int steps, double *kernel_s)
{
    if (!pl || steps < 0) return CLPHYS_ERR_INVALID_ARGUMENT;
    clphys_context *ctx = pl->ctx;
    cl_uint n = (cl_uint)pl->n;
    size_t g = md_global(n, 64);
    double ks = 0;
    for (int s = 0; s < steps; s++) {
        clphys_neighbor_plan *nb = clphys_lj_neighbor(pl->lj);
        cl_kernel k = pl->k_kd;
        CP_TRY(CP_ARG(ctx, k, 0, nb->pos));
        CP_TRY(CP_ARG(ctx, k, 1, pl->vel));
        CP_TRY(CP_ARG(ctx, k, 2, pl->img));
        CP_TRY(CP_ARG(ctx, k, 3, pl->lj->f));
        CP_TRY(arg_real(pl, k, 4, pl->p.dt));
        CP_TRY(arg_box(pl, k, 5));
        CP_TRY(CP_ARG(ctx, k, 6, n));
        CP_TRY(cp_launch(ctx, k, 1, &g, NULL, kernel_s ? &ks : NULL));
        pl->step++;
        int yes;
        CP_TRY(need_rebuild(pl, &yes, kernel_s ? &ks : NULL));
        if (yes) CP_TRY(rebuild(pl, kernel_s ? &ks : NULL));
        CP_TRY(clphys_lj_evaluate(pl->lj, kernel_s ? &ks : NULL));
        nb = clphys_lj_neighbor(pl->lj);
        k = pl->k_kick;
        CP_TRY(CP_ARG(ctx, k, 0, pl->vel));
        CP_TRY(CP_ARG(ctx, k, 1, pl->lj->f));
        CP_TRY(arg_real(pl, k, 2, pl->p.dt));
        CP_TRY(CP_ARG(ctx, k, 3, n));
        CP_TRY(cp_launch(ctx, k, 1, &g, NULL, kernel_s ? &ks : NULL));
    }
    if (kernel_s) *kernel_s += ks;
    return cp_finish(ctx);
}

clphys_status clphys_md_thermo_now(clphys_md_plan *pl, clphys_md_thermo *t)
{
    if (!pl || !t) return CLPHYS_ERR_INVALID_ARGUMENT;
    size_t n = pl->n;
    clphys_lj_result r;
    CP_TRY(clphys_lj_get(pl->lj, NULL, &r));
    double *v4 = malloc(4 * n * sizeof *v4);
    if (!v4) return cp_error(pl->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md thermo");
    clphys_status st = md_download_real4(pl->ctx, pl->rs, pl->vel, v4, n);
    double ke2 = 0; /* sum m v^2 = 2 KE */
    for (size_t i = 0; !st && i < n; i++)
        ke2 += v4[4 * i + 3] * (v4[4 * i] * v4[4 * i] + v4[4 * i + 1] * v4[4 * i + 1] +
                                v4[4 * i + 2] * v4[4 * i + 2]);
    free(v4);
    CP_TRY(st);
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
    if (!pl || !sys || sys->n != pl->n) return CLPHYS_ERR_INVALID_ARGUMENT;
    clphys_context *ctx = pl->ctx;
    clphys_neighbor_plan *nb = clphys_lj_neighbor(pl->lj);
    size_t n = pl->n;
    double *x4 = malloc(4 * n * sizeof *x4), *v4 = malloc(4 * n * sizeof *v4);
    cl_int *im = malloc(16 * n);
    cl_uint *perm = malloc(4 * n);
    clphys_status st = (!x4 || !v4 || !im || !perm)
                           ? cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md download")
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
