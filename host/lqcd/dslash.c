/* dslash.c — the Wilson-Dirac operator plan: gauge upload in the device
 * layout (SoA, even-odd ordered, reconstruct-12/18), field transfers, and the
 * full-lattice / even-odd operators.  Layouts: include/clphys_lqcd.h. */
#include "lqcd_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Even-odd ordered site of a lexicographic site. */
static size_t eo_site(const int dims[4], size_t vh, size_t lex)
{
    size_t r = lex;
    int s = 0;
    for (int mu = 0; mu < 4; mu++) {
        s += (int)(r % (size_t)dims[mu]);
        r /= (size_t)dims[mu];
    }
    return (size_t)(s & 1) * vh + lex / 2;
}

void lqcd_put_real(void *buf, size_t rs, size_t i, double v)
{
    if (rs == 4)
        ((float *)buf)[i] = (float)v;
    else
        ((double *)buf)[i] = v;
}
#define put lqcd_put_real

static double get(const void *buf, size_t rs, size_t i)
{
    return rs == 4 ? (double)((const float *)buf)[i] : ((const double *)buf)[i];
}

/* The boundary: AUTO resolved (p,p,p,a), every entry checked; then the
 * phases of the hops across this rank's ends (include/clphys_lqcd.h):
 * exp(+i theta) forward from the lattice's upper end, exp(-i theta)
 * backward from its lower end, 1 at an end shared with another rank. */
static clphys_status boundary(clphys_context *ctx, clphys_lqcd_dslash_params *q, const int grid[4], const int coord[4],
                              double phf[4][2], double phb[4][2])
{
    const double pi = 3.14159265358979323846;
    for (int mu = 0; mu < 4; mu++) {
        if (q->bc[mu] == CLPHYS_LQCD_BC_AUTO)
            q->bc[mu] = mu < 3 ? CLPHYS_LQCD_BC_PERIODIC : CLPHYS_LQCD_BC_ANTIPERIODIC;
        if ((unsigned)q->bc[mu] > CLPHYS_LQCD_BC_PHASE)
            return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                            "dslash: boundary %d of direction %d is not one of clphys_lqcd_bc", (int)q->bc[mu], mu);
        if (q->bc[mu] != CLPHYS_LQCD_BC_PHASE)
            q->bc_phase_by_pi[mu] = q->bc[mu] == CLPHYS_LQCD_BC_ANTIPERIODIC;
        else if (!isfinite(q->bc_phase_by_pi[mu]))
            return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "dslash: boundary phase of direction %d is not finite",
                            mu);
        double c = cos(pi * q->bc_phase_by_pi[mu]), s = sin(pi * q->bc_phase_by_pi[mu]);
        if (fabs(c) < 1e-15) c = 0; /* exact at multiples of pi/2 (sin(pi) is 1.2e-16 in double) */
        if (fabs(s) < 1e-15) s = 0;
        const int top = coord[mu] == grid[mu] - 1, bottom = coord[mu] == 0;
        phf[mu][0] = top ? c : 1, phf[mu][1] = top ? s : 0;
        phb[mu][0] = bottom ? c : 1, phb[mu][1] = bottom ? -s : 0;
    }
    return CLPHYS_SUCCESS;
}

clphys_status clphys_lqcd_dslash_plan_create(clphys_context *ctx, const clphys_lqcd_gauge_field *g,
                                             const clphys_lqcd_dslash_params *p, clphys_lqcd_dslash_plan **plan)
{
    return lqcd_plan_create(ctx, g, p, NULL, NULL, plan);
}

clphys_status lqcd_plan_create(clphys_context *ctx, const clphys_lqcd_gauge_field *g,
                               const clphys_lqcd_dslash_params *p, const int grid[4], const int coord[4],
                               clphys_lqcd_dslash_plan **plan)
{
    if (!ctx || !g || !g->u || !p || !plan)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_lqcd_dslash_plan_create: NULL argument");
    *plan = NULL;
    clphys_lqcd_dslash_params pin;
    CP_TRY(CP_PARAMS_IN(ctx, clphys_lqcd_dslash_params, p, halo_half, &pin));
    p = &pin;
    static const int one[4] = {1, 1, 1, 1}, zero[4] = {0, 0, 0, 0};
    if (!grid) grid = one, coord = zero;
    /* the defaults of a zeroed struct: reconstruct-12 (less memory traffic;
     * faster in every H100 row of docs/performance.md), SoA on GPUs and AoS on CPUs
     * (faster on PoCL, bench/results/lqcd-pocl-2026-11-23.json), p,p,p,a */
    clphys_lqcd_dslash_params q = *p;
    if (!q.reconstruct) q.reconstruct = 12;
    if (q.layout == CLPHYS_LQCD_LAYOUT_AUTO)
        q.layout = clphys_context_device(ctx)->is_gpu ? CLPHYS_LQCD_SOA : CLPHYS_LQCD_AOS;
    if (q.reconstruct != 12 && q.reconstruct != 18)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "dslash: reconstruct %d is not 12 or 18", q.reconstruct);
    if (q.layout != CLPHYS_LQCD_SOA && q.layout != CLPHYS_LQCD_AOS)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "dslash: layout %d is not SoA (%d) or AoS (%d)", q.layout,
                        CLPHYS_LQCD_SOA, CLPHYS_LQCD_AOS);
    if (!(q.kappa > 0) || !isfinite(q.kappa))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "dslash: kappa %g must be given (> 0)", q.kappa);
    for (int mu = 0; mu < 4; mu++)
        if (g->dims[mu] < 2 || g->dims[mu] % 2)
            return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "dslash: extent %d of direction %d must be even",
                            g->dims[mu], mu);
    double phf[4][2], phb[4][2];
    CP_TRY(boundary(ctx, &q, grid, coord, phf, phb));
    p = &q;
    int parts = 0;
    for (int mu = 0; mu < 4; mu++) parts |= (grid[mu] > 1) << mu;
    cp_defines opts = {0};
    CP_TRY(cp_define_precision(ctx, &opts, p->precision));
    const int halo_half = parts && p->halo_half && p->precision == CLPHYS_FP32;
    static const char *const extent[4] = {"LX", "LY", "LZ", "LT"};
    for (int mu = 0; mu < 4; mu++) cp_define_int(&opts, extent[mu], g->dims[mu]);
    cp_define_int(&opts, "RECON", p->reconstruct);
    cp_define_int(&opts, "PARTS", parts);
    if (p->layout == CLPHYS_LQCD_AOS) cp_define_flag(&opts, "LAYOUT_AOS");
    if (halo_half) cp_define_flag(&opts, "HALO_HALF");
    clphys_lqcd_dslash_plan *pl = calloc(1, sizeof *pl);
    if (!pl) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "dslash plan");
    pl->ctx = ctx;
    pl->p = *p;
    memcpy(pl->dims, g->dims, sizeof pl->dims);
    pl->vol = g->volume;
    pl->vh = pl->vol / 2;
    pl->gvol = 1;
    for (int mu = 0; mu < 4; mu++) {
        pl->grid[mu] = grid[mu], pl->coord[mu] = coord[mu];
        pl->gdims[mu] = g->dims[mu] * grid[mu];
        pl->gvol *= (size_t)pl->gdims[mu];
    }
    pl->parts = parts;
    memcpy(pl->phf, phf, sizeof phf);
    memcpy(pl->phb, phb, sizeof phb);
    pl->real_size = p->precision == CLPHYS_FP64 ? 8 : 4;
    pl->halo_half = halo_half;
    pl->local = p->local_size == CLPHYS_LQCD_DSLASH_WG_RUNTIME ? 0 : p->local_size;
    if (pl->local > clphys_context_device(ctx)->max_work_group_size) {
        size_t wg = pl->local;
        free(pl);
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "dslash: work-group size %zu above the device maximum %zu",
                        wg, clphys_context_device(ctx)->max_work_group_size);
    }
    clphys_status st;
    cl_program prog;
    const int nc = p->reconstruct == 12 ? 6 : 9;
    size_t nreal = pl->vol * 4 * nc * 2;
    void *buf = malloc(nreal * pl->real_size);
    if (!buf) {
        free(pl);
        return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "dslash plan: gauge staging");
    }
#pragma omp parallel for schedule(static)
    for (size_t lex = 0; lex < pl->vol; lex++) {
        size_t s = eo_site(pl->dims, pl->vh, lex);
        for (int mu = 0; mu < 4; mu++)
            for (int k = 0; k < nc; k++) {
                size_t ci = p->layout == CLPHYS_LQCD_AOS ? (s * 4 + (size_t)mu) * (size_t)nc + (size_t)k
                                                         : ((size_t)mu * nc + k) * pl->vol + s;
                const double *src = g->u + ((lex * 4 + mu) * 9 + k) * 2;
                put(buf, pl->real_size, 2 * ci, src[0]);
                put(buf, pl->real_size, 2 * ci + 1, src[1]);
            }
    }
    if ((st = cp_program(ctx, &clsrc_lqcd_dslash_cl, &opts, &prog)) != CLPHYS_SUCCESS ||
        (st = cp_kernel(ctx, prog, "dslash_hop", &pl->hop)) != CLPHYS_SUCCESS ||
        (st = cp_kernel(ctx, prog, "dslash_hop_g5in", &pl->hop_g5[0])) != CLPHYS_SUCCESS ||
        (st = cp_kernel(ctx, prog, "dslash_hop_g5out", &pl->hop_g5[1])) != CLPHYS_SUCCESS ||
        (parts && ((st = cp_kernel(ctx, prog, "halo_pack", &pl->pack)) != CLPHYS_SUCCESS ||
                   (st = cp_kernel(ctx, prog, "halo_exterior", &pl->ext[0])) != CLPHYS_SUCCESS ||
                   (st = cp_kernel(ctx, prog, "halo_exterior_g5out", &pl->ext[1])) != CLPHYS_SUCCESS)) ||
        (p->precision == CLPHYS_FP64 && ((st = cp_kernel(ctx, prog, "spinor_import", &pl->imp)) != CLPHYS_SUCCESS ||
                                         (st = cp_kernel(ctx, prog, "spinor_export", &pl->exp)) != CLPHYS_SUCCESS)) ||
        (st = cp_buffer(ctx, CL_MEM_READ_ONLY, nreal * pl->real_size, buf, &pl->gauge)) != CLPHYS_SUCCESS ||
        (st = cp_buffer(ctx, CL_MEM_READ_WRITE, pl->vh * 24 * pl->real_size, NULL, &pl->tmp)) != CLPHYS_SUCCESS) {
        free(buf);
        clphys_lqcd_dslash_plan_destroy(pl);
        return st;
    }
    free(buf);
    if ((st = lqcd_tune(pl)) != CLPHYS_SUCCESS) {
        clphys_lqcd_dslash_plan_destroy(pl);
        return st;
    }
    *plan = pl;
    return CLPHYS_SUCCESS;
}

size_t clphys_lqcd_dslash_local_size(const clphys_lqcd_dslash_plan *pl, int *source)
{
    if (source) *source = (int)clphys_lqcd_dslash_plan_tune_source(pl);
    return pl ? pl->local : 0;
}

clphys_tune_source clphys_lqcd_dslash_plan_tune_source(const clphys_lqcd_dslash_plan *pl)
{
    return pl ? pl->tune_source : CLPHYS_TUNE_HEURISTIC;
}

void clphys_lqcd_dslash_plan_destroy(clphys_lqcd_dslash_plan *pl)
{
    if (!pl) return;
    if (pl->halo_destroy) pl->halo_destroy(pl->halo);
    lqcd_multi_release(pl);
    cp_release_kernel(&pl->hop);
    cp_release_kernel(&pl->pack);
    cp_release_kernel(&pl->ext[0]);
    cp_release_kernel(&pl->ext[1]);
    cp_release_kernel(&pl->hop_g5[0]);
    cp_release_kernel(&pl->hop_g5[1]);
    cp_release_kernel(&pl->imp);
    cp_release_kernel(&pl->exp);
    cp_release_mem(&pl->gauge);
    cp_release_mem(&pl->tmp);
    if (pl->staging)
        cp_pinned_release(pl->ctx, &pl->staging, &pl->staging_host);
    else
        free(pl->staging_host);
    free(pl);
}

clphys_status clphys_lqcd_dslash_set_local_size(clphys_lqcd_dslash_plan *pl, size_t local)
{
    if (!pl) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "dslash: NULL plan");
    size_t mx = clphys_context_device(pl->ctx)->max_work_group_size;
    if (local > mx)
        return cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "dslash: work-group size %zu above the device maximum %zu", local, mx);
    pl->local = local;
    return CLPHYS_SUCCESS;
}

size_t clphys_lqcd_dslash_field_complex(const clphys_lqcd_dslash_plan *pl, int half)
{
    return pl ? (half ? pl->vh : pl->vol) * 12 : 0;
}

clphys_status clphys_lqcd_dslash_field_create(clphys_lqcd_dslash_plan *pl, int half, cl_mem *field)
{
    if (!pl || !field) return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "dslash field: NULL");
    return cp_buffer(pl->ctx, CL_MEM_READ_WRITE, clphys_lqcd_dslash_field_complex(pl, half) * 2 * pl->real_size, NULL,
                     field);
}

/* Copy between host AoS lexicographic spinors and a device-layout staging
 * array; to_dev selects the direction. */
static void stage(const clphys_lqcd_dslash_plan *pl, int parity, void *dev, double *host, int to_dev)
{
    size_t stride = parity < 0 ? pl->vol : pl->vh;
#pragma omp parallel for schedule(static)
    for (size_t lex = 0; lex < pl->vol; lex++) {
        size_t s = eo_site(pl->dims, pl->vh, lex);
        if (parity >= 0) {
            if ((s >= pl->vh) != (parity == 1)) continue;
            s -= (size_t)parity * pl->vh;
        }
        for (int k = 0; k < 12; k++) {
            size_t ci = pl->p.layout == CLPHYS_LQCD_AOS ? s * 12 + (size_t)k : (size_t)k * stride + s;
            double *h = host + (lex * 12 + k) * 2;
            if (to_dev) {
                put(dev, pl->real_size, 2 * ci, h[0]);
                put(dev, pl->real_size, 2 * ci + 1, h[1]);
            } else {
                h[0] = get(dev, pl->real_size, 2 * ci);
                h[1] = get(dev, pl->real_size, 2 * ci + 1);
            }
        }
    }
}

/* The plan's staging array, made at the first field transfer and kept: a
 * fresh array per call costs its page faults every time (200 MB for a 32^4
 * fp64 field), and page-locked memory moves faster over PCIe. */
static clphys_status staging_array(clphys_lqcd_dslash_plan *pl, void **buf)
{
    if (!pl->staging_host) {
        const size_t bytes = clphys_lqcd_dslash_field_complex(pl, 0) * 2 * pl->real_size;
        if (cp_pinned(pl->ctx, bytes, &pl->staging, &pl->staging_host) != CLPHYS_SUCCESS &&
            !(pl->staging_host = malloc(bytes)))
            return cp_error(pl->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "dslash field staging");
    }
    *buf = pl->staging_host;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_lqcd_dslash_field_write(clphys_lqcd_dslash_plan *pl, cl_mem field, int parity, const double *psi)
{
    if (!pl || !field || !psi || parity < -1 || parity > 1)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "dslash field write: bad argument");
    size_t bytes = clphys_lqcd_dslash_field_complex(pl, parity >= 0) * 2 * pl->real_size;
    void *buf = NULL;
    CP_TRY(staging_array(pl, &buf));
    stage(pl, parity, buf, (double *)psi, 1);
    return cp_write(pl->ctx, field, 0, bytes, buf);
}

clphys_status clphys_lqcd_dslash_field_read(clphys_lqcd_dslash_plan *pl, cl_mem field, int parity, double *psi)
{
    if (!pl || !field || !psi || parity < -1 || parity > 1)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "dslash field read: bad argument");
    size_t bytes = clphys_lqcd_dslash_field_complex(pl, parity >= 0) * 2 * pl->real_size;
    void *buf = NULL;
    CP_TRY(staging_array(pl, &buf));
    CP_TRY(cp_read(pl->ctx, field, 0, bytes, buf));
    stage(pl, parity, buf, psi, 0);
    return CLPHYS_SUCCESS;
}

/* The hops of op: out = x + a H in (x NULL: H in) of the parity, g5 as
 * lqcd_hop_g5; EO_PREC is two, through pl->tmp. */
static clphys_status apply_op(clphys_lqcd_dslash_plan *pl, clphys_lqcd_dslash_op op, cl_mem out, cl_mem in,
                              double *kernel_s, clphys_lqcd_dslash_split *split)
{
    const double k = pl->p.kappa;
    cl_mem o[2] = {out, NULL}, i[2] = {in, NULL}, x[2] = {NULL, NULL};
    double a[2] = {0, 0};
    int par[2], n = 1;
    switch (op) {
    case CLPHYS_LQCD_DSLASH_HOPPING:
        par[0] = -1;
        break;
    case CLPHYS_LQCD_DSLASH_WILSON:
        par[0] = -1, x[0] = in, a[0] = -k;
        break;
    case CLPHYS_LQCD_DSLASH_H_EO:
        par[0] = 0;
        break;
    case CLPHYS_LQCD_DSLASH_H_OE:
        par[0] = 1;
        break;
    case CLPHYS_LQCD_DSLASH_EO_PREC:
        n = 2, o[0] = pl->tmp, par[0] = 1;
        o[1] = out, i[1] = pl->tmp, x[1] = in, a[1] = -k * k, par[1] = 0;
        break;
    default:
        lqcd_multi_fail(pl);
        return cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_lqcd_dslash_apply: unknown op %d", (int)op);
    }
    for (int h = 0; h < n; h++)
        CP_TRY(split ? lqcd_hop_split(pl, o[h], i[h], x[h], a[h], par[h], 0, split)
                     : lqcd_hop(pl, o[h], i[h], x[h], a[h], par[h], kernel_s));
    return CLPHYS_SUCCESS;
}

clphys_status clphys_lqcd_dslash_apply(clphys_lqcd_dslash_plan *pl, clphys_lqcd_dslash_op op, cl_mem out, cl_mem in,
                                       double *kernel_s)
{
    if (!pl || !out || !in || out == in) {
        lqcd_multi_fail(pl); /* the other devices of a group must not wait for this one */
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_lqcd_dslash_apply: NULL field or out == in");
    }
    if (kernel_s) *kernel_s = 0;
    return apply_op(pl, op, out, in, kernel_s, NULL);
}

clphys_status clphys_lqcd_dslash_apply_split(clphys_lqcd_dslash_plan *pl, clphys_lqcd_dslash_op op, cl_mem out,
                                             cl_mem in, clphys_lqcd_dslash_split *split)
{
    if (!pl || !out || !in || out == in || !split) {
        lqcd_multi_fail(pl);
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_lqcd_dslash_apply_split: NULL field or split, or out == in");
    }
    memset(split, 0, sizeof *split);
    const double t0 = cp_now();
    CP_TRY(apply_op(pl, op, out, in, NULL, split));
    CP_TRY(cp_finish(pl->ctx));
    split->wall_s = cp_now() - t0;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_lqcd_dslash_apply_host(clphys_lqcd_dslash_plan *pl, clphys_lqcd_dslash_op op, double *out,
                                            const double *in)
{
    if (!pl || !out || !in) return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "dslash: NULL");
    if (op != CLPHYS_LQCD_DSLASH_HOPPING && op != CLPHYS_LQCD_DSLASH_WILSON)
        return cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_lqcd_dslash_apply_host: full-lattice ops only");
    cl_mem a = NULL, b = NULL;
    clphys_status st;
    if ((st = clphys_lqcd_dslash_field_create(pl, 0, &a)) == CLPHYS_SUCCESS &&
        (st = clphys_lqcd_dslash_field_create(pl, 0, &b)) == CLPHYS_SUCCESS &&
        (st = clphys_lqcd_dslash_field_write(pl, a, -1, in)) == CLPHYS_SUCCESS &&
        (st = clphys_lqcd_dslash_apply(pl, op, b, a, NULL)) == CLPHYS_SUCCESS)
        st = clphys_lqcd_dslash_field_read(pl, b, -1, out);
    cp_release_mem(&a);
    cp_release_mem(&b);
    return st;
}
