/* verlet.c — the velocity-Verlet kernels of cl/md_integrate.cl as both MD
 * plans launch them (integrator.c on one device, mpi.c over ranks): the
 * first half kick and drift, the second half kick, and the largest
 * displacement since the last build (LAMMPS's `neigh_modify check yes`). */
#include "md_internal.h"

#include <stdio.h>
#include <string.h>

clphys_status md_verlet_create(clphys_context *ctx, clphys_precision prec, md_verlet *v)
{
    memset(v, 0, sizeof *v);
    v->ctx = ctx;
    v->rs = prec == CLPHYS_FP64 ? 8 : 4;
    cp_defines opt = {0};
    CP_TRY(cp_define_precision(ctx, &opt, prec));
    for (v->disp_wg = 64; v->disp_wg > ctx->info.max_work_group_size;) v->disp_wg /= 2;
    cp_define_int(&opt, "MD_WG", v->disp_wg);
    CP_TRY(cp_program(ctx, &clsrc_md_integrate_cl, &opt, &v->prog));
    CP_TRY(cp_kernel(ctx, v->prog, "md_kick_drift", &v->k_kd));
    CP_TRY(cp_kernel(ctx, v->prog, "md_kick_drift_pack", &v->k_kdp));
    CP_TRY(cp_kernel(ctx, v->prog, "md_kick", &v->k_kick));
    CP_TRY(cp_kernel(ctx, v->prog, "md_max_displacement", &v->k_disp));
    CP_TRY(cp_check_work_group(ctx, v->k_disp, "md_max_displacement", v->disp_wg));
    return cp_buffer(ctx, CL_MEM_READ_WRITE, 4, NULL, &v->dmax);
}

void md_verlet_free(md_verlet *v)
{
    cp_release_kernel(&v->k_kd);
    cp_release_kernel(&v->k_kdp);
    cp_release_kernel(&v->k_kick);
    cp_release_kernel(&v->k_disp);
    cp_release_mem(&v->dmax);
}

/* The kernels' row arguments for r: a[0 .. 3] = n, skip_at, skip_n,
 * nown; *perm (a placeholder, not read, where r has none: a[3] is ~0);
 * *g the launch size, 0 where no row is left. */
static clphys_status rows_args(const md_verlet *v, md_rows r, cl_uint a[4], cl_mem *perm, size_t *g)
{
    if (r.skip_n > r.n || r.skip_at > r.n - r.skip_n || r.n > CL_UINT_MAX || (r.perm && r.nown >= CL_UINT_MAX))
        return cp_error(v->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "md: rows %zu .. %zu skipped of %zu", r.skip_at,
                        r.skip_at + r.skip_n, r.n);
    a[0] = (cl_uint)(r.n - r.skip_n), a[1] = (cl_uint)r.skip_at, a[2] = (cl_uint)r.skip_n;
    a[3] = r.perm ? (cl_uint)r.nown : CL_UINT_MAX;
    *perm = r.perm ? r.perm : v->dmax;
    *g = a[0] ? md_global(a[0], 64) : 0;
    return CLPHYS_SUCCESS;
}

clphys_status md_verlet_kick_drift(md_verlet *v, cl_mem pos, cl_mem vel, cl_mem img, cl_mem f, double dt,
                                   const double box[3], md_rows r, int kick_first, const md_pack_rows *pk, double *ks,
                                   cl_event *ev)
{
    const cl_int kf = kick_first != 0;
    const cl_uint na = pk ? (cl_uint)pk->na : 0;
    cl_uint a[4];
    cl_mem perm;
    size_t g;
    if (ev) *ev = NULL;
    CP_TRY(rows_args(v, r, a, &perm, &g));
    if (!g) return CLPHYS_SUCCESS;
    cl_kernel k = pk ? v->k_kdp : v->k_kd;
    if (pk)
        CP_TRY(CP_ARGS(v->ctx, k, pos, vel, img, f, MD_REAL_ARG(v->rs, dt), MD_REAL4_ARG(v->rs, box), a[0], a[1], a[2],
                       perm, a[3], kf, pk->slot, na, MD_REAL4_ARG(v->rs, pk->da), MD_REAL4_ARG(v->rs, pk->db),
                       pk->buf));
    else
        CP_TRY(CP_ARGS(v->ctx, k, pos, vel, img, f, MD_REAL_ARG(v->rs, dt), MD_REAL4_ARG(v->rs, box), a[0], a[1], a[2],
                       perm, a[3], kf));
    return ev ? cp_launch_ev(v->ctx, k, 1, &g, NULL, ev) : cp_launch(v->ctx, k, 1, &g, NULL, ks);
}

clphys_status md_verlet_kick(md_verlet *v, cl_mem vel, cl_mem f, double dt, md_rows r, double *ks)
{
    cl_uint a[4];
    cl_mem perm;
    size_t g;
    CP_TRY(rows_args(v, r, a, &perm, &g));
    if (!g) return CLPHYS_SUCCESS;
    CP_TRY(CP_ARGS(v->ctx, v->k_kick, vel, f, MD_REAL_ARG(v->rs, dt), a[0], a[1], a[2], perm, a[3]));
    return cp_launch(v->ctx, v->k_kick, 1, &g, NULL, ks);
}

clphys_status md_verlet_max_displacement(md_verlet *v, cl_mem pos, cl_mem xref, const double box[3], size_t n,
                                         double *ks, float *d2)
{
    clphys_context *ctx = v->ctx;
    cl_kernel k = v->k_disp;
    cl_uint zero = 0, nn = (cl_uint)n, bits;
    size_t g = md_global(n, v->disp_wg), l = v->disp_wg;
    CP_TRY(cp_write(ctx, v->dmax, 0, 4, &zero));
    CP_TRY(CP_ARGS(ctx, k, pos, xref, MD_REAL4_ARG(v->rs, box), nn, v->dmax));
    CP_TRY(cp_launch(ctx, k, 1, &g, &l, ks));
    CP_TRY(cp_read(ctx, v->dmax, 0, 4, &bits));
    memcpy(d2, &bits, 4);
    return CLPHYS_SUCCESS;
}
