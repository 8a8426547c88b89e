/* blas.c — clBLAST level-1 calls on a dslash plan's queue, dispatched on the
 * plan's precision (S/D real, C/Z complex). */
#include "blas.h"

#include <clblast_c.h>
#include <stdio.h>

#define LB(pl, call)                                                                                   \
    do {                                                                                               \
        CLBlastStatusCode lb_s_ = (call);                                                              \
        if (lb_s_ != CLBlastSuccess)                                                                   \
            return cp_error((pl)->ctx, CLPHYS_ERR_OPENCL, "clBLAST %s failed with status %d", #call,   \
                            (int)lb_s_);                                                               \
    } while (0)

static int dbl(const clphys_dslash_plan *pl) { return pl->real_size == 8; }

/* ---- own kernels (blas1.cl) ------------------------------------------------ */
enum {
    K_AXPY, K_XPAY, K_GAMMA5, K_CAXPY, K_CXPAY, K_DOT, K_NORM2, K_CGUP, K_BP, K_BS, K_BTS, K_BXR,
    K_CGUP_D, K_XPAY_D, K_BP_D, K_BS_D, K_BXR_D, K_SUBN, K_CVT_N, K_CVT_ADD, K_COUNT
};
static const char *const kname[K_COUNT] = {
    "blas_axpy",     "blas_xpay",    "blas_gamma5",   "blas_caxpy",    "blas_cxpay",  "blas_dot_partial",
    "blas_norm2_partial", "blas_cg_update", "bicg_p", "bicg_s",        "bicg_ts",     "bicg_xr",
    "cg_update_dev", "xpay_dev",     "bicg_p_dev",    "bicg_s_dev",    "bicg_xr_dev", "blas_sub_norm",
    "convert_to_single_norm", "convert_add"};
_Static_assert(K_COUNT == sizeof(((clphys_dslash_plan *)0)->kb) / sizeof(cl_kernel), "kb[] holds every kernel");
#define OWN_WG 256

void lb_release(clphys_dslash_plan *pl)
{
    for (int i = 0; i < K_COUNT; i++) cp_release_kernel(&pl->kb[i]);
    cp_release_mem(&pl->partial);
}

static clphys_status own_setup(clphys_dslash_plan *pl)
{
    if (pl->kb[0]) return CLPHYS_SUCCESS;
    char prec[128], opts[256];
    CP_TRY(cp_precision_options(pl->ctx, pl->p.precision, prec, sizeof prec));
    snprintf(opts, sizeof opts, "%s -DNEED_FP64 -DBLAS_WG=%d", prec, OWN_WG);
    cl_program prog;
    CP_TRY(cp_program(pl->ctx, "blas1.cl", opts, &prog));
    for (int i = 0; i < K_COUNT; i++) CP_TRY(cp_kernel(pl->ctx, prog, kname[i], &pl->kb[i]));
    const clphys_device_info *d = clphys_context_device(pl->ctx);
    pl->ngroups = d->is_gpu ? (size_t)d->compute_units * 8 : (size_t)(d->compute_units ? d->compute_units : 1);
    return cp_buffer(pl->ctx, CL_MEM_READ_WRITE, pl->ngroups * 4 * pl->real_size, NULL, &pl->partial);
}

/* Set a real_t argument in the plan's precision. */
static clphys_status arg_real(clphys_dslash_plan *pl, cl_kernel k, cl_uint i, double v)
{
    if (dbl(pl)) return CP_ARG(pl->ctx, k, i, v);
    float f = (float)v;
    return CP_ARG(pl->ctx, k, i, f);
}

/* kernel(y, x, a[, b], n) over the grid-stride range */
static clphys_status own_elementwise(clphys_dslash_plan *pl, int which, cl_mem y, cl_mem x, int nscal, double a,
                                     double b, size_t n)
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[which];
    cl_uint nn = (cl_uint)n, i = 2;
    CP_TRY(CP_ARG(pl->ctx, k, 0, y));
    CP_TRY(CP_ARG(pl->ctx, k, 1, x));
    if (nscal >= 1) CP_TRY(arg_real(pl, k, i++, a));
    if (nscal >= 2) CP_TRY(arg_real(pl, k, i++, b));
    CP_TRY(CP_ARG(pl->ctx, k, i, nn));
    if (which == K_GAMMA5) {
        int aos = pl->p.layout == CLPHYS_LQCD_AOS;
        CP_TRY(CP_ARG(pl->ctx, k, i + 1, aos));
    }
    size_t global = pl->ngroups * OWN_WG, local = OWN_WG;
    return cp_launch(pl->ctx, k, 1, &global, &local, NULL);
}

/* Launch k (arguments set) over the reduction grid and add the groups'
 * partial sums on the host: one blocking read of m x ngroups reals (m = 2, or
 * 4 for the three-value BiCGStab reductions); r receives m - (m == 4) sums. */
static clphys_status own_reduce_m(clphys_dslash_plan *pl, cl_kernel k, int m, double *r)
{
    size_t global = pl->ngroups * OWN_WG, local = OWN_WG;
    CP_TRY(cp_launch(pl->ctx, k, 1, &global, &local, NULL));
    double buf[4 * 4096];
    float fbuf[4 * 4096];
    size_t g = pl->ngroups < 4096 ? pl->ngroups : 4096, nv = (size_t)m * g;
    if (dbl(pl)) CP_TRY(cp_read(pl->ctx, pl->partial, 0, nv * sizeof(double), buf));
    else {
        CP_TRY(cp_read(pl->ctx, pl->partial, 0, nv * sizeof(float), fbuf));
        for (size_t i = 0; i < nv; i++) buf[i] = fbuf[i];
    }
    const int nout = m == 4 ? 3 : m;
    for (int j = 0; j < nout; j++) r[j] = 0;
    for (size_t i = 0; i < g; i++)
        for (int j = 0; j < nout; j++) r[j] += buf[(size_t)m * i + (size_t)j];
    return CLPHYS_SUCCESS;
}

static clphys_status own_reduce(clphys_dslash_plan *pl, cl_kernel k, double r[2])
{
    return own_reduce_m(pl, k, 2, r);
}

static clphys_status own_dot(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem y, int cplx, double r[2])
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_DOT];
    cl_uint nn = (cl_uint)n;
    CP_TRY(CP_ARG(pl->ctx, k, 0, pl->partial));
    CP_TRY(CP_ARG(pl->ctx, k, 1, x));
    CP_TRY(CP_ARG(pl->ctx, k, 2, y));
    CP_TRY(CP_ARG(pl->ctx, k, 3, nn));
    CP_TRY(CP_ARG(pl->ctx, k, 4, cplx));
    return own_reduce(pl, k, r);
}

clphys_status lb_norm2(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem scratch, double *r)
{
    if (!pl->own_blas) return lb_dot(pl, n, x, x, scratch, r);
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_NORM2];
    cl_uint nn = (cl_uint)n;
    double c[2];
    CP_TRY(CP_ARG(pl->ctx, k, 0, pl->partial));
    CP_TRY(CP_ARG(pl->ctx, k, 1, x));
    CP_TRY(CP_ARG(pl->ctx, k, 2, nn));
    CP_TRY(own_reduce(pl, k, c));
    *r = c[0];
    return CLPHYS_SUCCESS;
}

clphys_status lb_cg_update(clphys_dslash_plan *pl, size_t n, double alpha, cl_mem p, cl_mem q, cl_mem x, cl_mem r,
                           cl_mem scratch, double *rr)
{
    if (!pl->own_blas) {
        CP_TRY(lb_axpy(pl, n, alpha, p, x));
        CP_TRY(lb_axpy(pl, n, -alpha, q, r));
        return lb_dot(pl, n, r, r, scratch, rr);
    }
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_CGUP];
    cl_uint nn = (cl_uint)n;
    double c[2];
    CP_TRY(CP_ARG(pl->ctx, k, 0, pl->partial));
    CP_TRY(CP_ARG(pl->ctx, k, 1, x));
    CP_TRY(CP_ARG(pl->ctx, k, 2, r));
    CP_TRY(CP_ARG(pl->ctx, k, 3, p));
    CP_TRY(CP_ARG(pl->ctx, k, 4, q));
    CP_TRY(arg_real(pl, k, 5, alpha));
    CP_TRY(CP_ARG(pl->ctx, k, 6, nn));
    CP_TRY(own_reduce(pl, k, c));
    *rr = c[0];
    return CLPHYS_SUCCESS;
}

clphys_status lb_gamma5(clphys_dslash_plan *pl, size_t n, cl_mem in, cl_mem out)
{
    /* AoS spins 2,3 are not one strided range: always the own kernel there */
    if (pl->own_blas || pl->p.layout == CLPHYS_LQCD_AOS) return own_elementwise(pl, K_GAMMA5, out, in, 0, 0, 0, n);
    if (in != out) CP_TRY(lb_copy(pl, n, in, out));
    return lb_scal(pl, n / 2, -1.0, out, n / 2);
}

clphys_status lb_xpay(clphys_dslash_plan *pl, size_t n, cl_mem x, double b, cl_mem y)
{
    if (pl->own_blas) return own_elementwise(pl, K_XPAY, y, x, 1, b, 0, n);
    CP_TRY(lb_scal(pl, n, b, y, 0));
    return lb_axpy(pl, n, 1.0, x, y);
}

clphys_status lb_cxpay(clphys_dslash_plan *pl, size_t n, cl_mem x, double bre, double bim, cl_mem y)
{
    if (pl->own_blas) return own_elementwise(pl, K_CXPAY, y, x, 2, bre, bim, n);
    CP_TRY(lb_cscal(pl, n, bre, bim, y));
    return lb_caxpy(pl, n, 1.0, 0.0, x, y);
}

clphys_status lb_axpy(clphys_dslash_plan *pl, size_t n, double a, cl_mem x, cl_mem y)
{
    if (pl->own_blas) return own_elementwise(pl, K_AXPY, y, x, 1, a, 0, n);
    cl_command_queue q = pl->ctx->queue;
    if (dbl(pl)) LB(pl, CLBlastDaxpy(n, a, x, 0, 1, y, 0, 1, &q, NULL));
    else LB(pl, CLBlastSaxpy(n, (float)a, x, 0, 1, y, 0, 1, &q, NULL));
    return CLPHYS_SUCCESS;
}

clphys_status lb_scal(clphys_dslash_plan *pl, size_t n, double a, cl_mem x, size_t off)
{
    cl_command_queue q = pl->ctx->queue;
    if (dbl(pl)) LB(pl, CLBlastDscal(n, a, x, off, 1, &q, NULL));
    else LB(pl, CLBlastSscal(n, (float)a, x, off, 1, &q, NULL));
    return CLPHYS_SUCCESS;
}

clphys_status lb_copy(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem y)
{
    if (pl->own_blas) {
        CP_CL(pl->ctx, clEnqueueCopyBuffer(pl->ctx->queue, x, y, 0, 0, n * pl->real_size, 0, NULL, NULL));
        return CLPHYS_SUCCESS;
    }
    cl_command_queue q = pl->ctx->queue;
    if (dbl(pl)) LB(pl, CLBlastDcopy(n, x, 0, 1, y, 0, 1, &q, NULL));
    else LB(pl, CLBlastScopy(n, x, 0, 1, y, 0, 1, &q, NULL));
    return CLPHYS_SUCCESS;
}

clphys_status lb_dot(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem y, cl_mem scratch, double *r)
{
    if (pl->own_blas) {
        double c[2];
        CP_TRY(own_dot(pl, n, x, y, 0, c));
        *r = c[0];
        return CLPHYS_SUCCESS;
    }
    cl_command_queue q = pl->ctx->queue;
    if (dbl(pl)) {
        LB(pl, CLBlastDdot(n, scratch, 0, x, 0, 1, y, 0, 1, &q, NULL));
        CP_TRY(cp_read(pl->ctx, scratch, 0, sizeof(double), r));
    } else {
        float f;
        LB(pl, CLBlastSdot(n, scratch, 0, x, 0, 1, y, 0, 1, &q, NULL));
        CP_TRY(cp_read(pl->ctx, scratch, 0, sizeof f, &f));
        *r = f;
    }
    return CLPHYS_SUCCESS;
}

clphys_status lb_caxpy(clphys_dslash_plan *pl, size_t n, double are, double aim, cl_mem x, cl_mem y)
{
    if (pl->own_blas) return own_elementwise(pl, K_CAXPY, y, x, 2, are, aim, n);
    cl_command_queue q = pl->ctx->queue;
    if (dbl(pl)) {
        cl_double2 a = {{are, aim}};
        LB(pl, CLBlastZaxpy(n, a, x, 0, 1, y, 0, 1, &q, NULL));
    } else {
        cl_float2 a = {{(float)are, (float)aim}};
        LB(pl, CLBlastCaxpy(n, a, x, 0, 1, y, 0, 1, &q, NULL));
    }
    return CLPHYS_SUCCESS;
}

clphys_status lb_cscal(clphys_dslash_plan *pl, size_t n, double are, double aim, cl_mem x)
{
    cl_command_queue q = pl->ctx->queue;
    if (dbl(pl)) {
        cl_double2 a = {{are, aim}};
        LB(pl, CLBlastZscal(n, a, x, 0, 1, &q, NULL));
    } else {
        cl_float2 a = {{(float)are, (float)aim}};
        LB(pl, CLBlastCscal(n, a, x, 0, 1, &q, NULL));
    }
    return CLPHYS_SUCCESS;
}

clphys_status lb_cdotc(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem y, cl_mem scratch, double r[2])
{
    if (pl->own_blas) return own_dot(pl, n, x, y, 1, r);
    cl_command_queue q = pl->ctx->queue;
    if (dbl(pl)) {
        LB(pl, CLBlastZdotc(n, scratch, 0, x, 0, 1, y, 0, 1, &q, NULL));
        CP_TRY(cp_read(pl->ctx, scratch, 0, 2 * sizeof(double), r));
    } else {
        float f[2];
        LB(pl, CLBlastCdotc(n, scratch, 0, x, 0, 1, y, 0, 1, &q, NULL));
        CP_TRY(cp_read(pl->ctx, scratch, 0, sizeof f, f));
        r[0] = f[0], r[1] = f[1];
    }
    return CLPHYS_SUCCESS;
}

/* ---- BiCGStab's fused steps (own kernels only) ----------------------------- */
clphys_status lb_bicg_p(clphys_dslash_plan *pl, size_t n, cl_mem p, cl_mem r, cl_mem v, const double beta[2],
                        const double omega[2])
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_BP];
    cl_uint nn = (cl_uint)n;
    CP_TRY(CP_ARG(pl->ctx, k, 0, p));
    CP_TRY(CP_ARG(pl->ctx, k, 1, r));
    CP_TRY(CP_ARG(pl->ctx, k, 2, v));
    CP_TRY(arg_real(pl, k, 3, beta[0]));
    CP_TRY(arg_real(pl, k, 4, beta[1]));
    CP_TRY(arg_real(pl, k, 5, omega[0]));
    CP_TRY(arg_real(pl, k, 6, omega[1]));
    CP_TRY(CP_ARG(pl->ctx, k, 7, nn));
    size_t global = pl->ngroups * OWN_WG, local = OWN_WG;
    return cp_launch(pl->ctx, k, 1, &global, &local, NULL);
}

clphys_status lb_bicg_s(clphys_dslash_plan *pl, size_t n, cl_mem s, cl_mem r, cl_mem v, const double alpha[2])
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_BS];
    cl_uint nn = (cl_uint)n;
    CP_TRY(CP_ARG(pl->ctx, k, 0, s));
    CP_TRY(CP_ARG(pl->ctx, k, 1, r));
    CP_TRY(CP_ARG(pl->ctx, k, 2, v));
    CP_TRY(arg_real(pl, k, 3, alpha[0]));
    CP_TRY(arg_real(pl, k, 4, alpha[1]));
    CP_TRY(CP_ARG(pl->ctx, k, 5, nn));
    size_t global = pl->ngroups * OWN_WG, local = OWN_WG;
    return cp_launch(pl->ctx, k, 1, &global, &local, NULL);
}

clphys_status lb_bicg_ts(clphys_dslash_plan *pl, size_t n, cl_mem t, cl_mem s, double out[3])
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_BTS];
    cl_uint nn = (cl_uint)n;
    CP_TRY(CP_ARG(pl->ctx, k, 0, pl->partial));
    CP_TRY(CP_ARG(pl->ctx, k, 1, t));
    CP_TRY(CP_ARG(pl->ctx, k, 2, s));
    CP_TRY(CP_ARG(pl->ctx, k, 3, nn));
    return own_reduce_m(pl, k, 4, out);
}

clphys_status lb_bicg_xr(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem r, cl_mem p, cl_mem s, cl_mem t, cl_mem r0,
                         const double alpha[2], const double omega[2], double out[3])
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_BXR];
    cl_uint nn = (cl_uint)n;
    cl_mem m[7] = {pl->partial, x, r, p, s, t, r0};
    for (cl_uint i = 0; i < 7; i++) CP_TRY(CP_ARG(pl->ctx, k, i, m[i]));
    CP_TRY(arg_real(pl, k, 7, alpha[0]));
    CP_TRY(arg_real(pl, k, 8, alpha[1]));
    CP_TRY(arg_real(pl, k, 9, omega[0]));
    CP_TRY(arg_real(pl, k, 10, omega[1]));
    CP_TRY(CP_ARG(pl->ctx, k, 11, nn));
    return own_reduce_m(pl, k, 4, out);
}

/* ---- scalars on the device: enqueue only; the partial sums go to buffers
 * of lb_partial_create, read back (if at all) with lb_read_async ---------- */
clphys_status lb_partial_create(clphys_dslash_plan *pl, cl_mem *part)
{
    CP_TRY(own_setup(pl));
    return cp_buffer(pl->ctx, CL_MEM_READ_WRITE, lb_partial_reals(pl) * pl->real_size, NULL, part);
}

size_t lb_partial_reals(const clphys_dslash_plan *pl) { return 4 * pl->ngroups + 4; }

static clphys_status grid(clphys_dslash_plan *pl, cl_kernel k)
{
    size_t global = pl->ngroups * OWN_WG, local = OWN_WG;
    return cp_launch(pl->ctx, k, 1, &global, &local, NULL);
}

/* Set arguments from a list: cl_mem pointers, then the trailing uints. */
static clphys_status set_mems(clphys_dslash_plan *pl, cl_kernel k, const cl_mem *m, cl_uint nm)
{
    for (cl_uint i = 0; i < nm; i++) CP_TRY(CP_ARG(pl->ctx, k, i, m[i]));
    return CLPHYS_SUCCESS;
}

clphys_status lb_norm2_into(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem part)
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_NORM2];
    cl_uint nn = (cl_uint)n;
    CP_TRY(CP_ARG(pl->ctx, k, 0, part));
    CP_TRY(CP_ARG(pl->ctx, k, 1, x));
    CP_TRY(CP_ARG(pl->ctx, k, 2, nn));
    return grid(pl, k);
}

clphys_status lb_cdotc_into(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem y, cl_mem part)
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_DOT];
    cl_uint nn = (cl_uint)n;
    int cplx = 1;
    const cl_mem m[3] = {part, x, y};
    CP_TRY(set_mems(pl, k, m, 3));
    CP_TRY(CP_ARG(pl->ctx, k, 3, nn));
    CP_TRY(CP_ARG(pl->ctx, k, 4, cplx));
    return grid(pl, k);
}

clphys_status lb_cg_update_dev(clphys_dslash_plan *pl, size_t n, cl_mem p, cl_mem q, cl_mem x, cl_mem r, cl_mem pg,
                               cl_mem pq, cl_mem prr)
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_CGUP_D];
    cl_uint nn = (cl_uint)n, ng = (cl_uint)pl->ngroups;
    const cl_mem m[7] = {prr, x, r, p, q, pg, pq};
    CP_TRY(set_mems(pl, k, m, 7));
    CP_TRY(CP_ARG(pl->ctx, k, 7, ng));
    CP_TRY(CP_ARG(pl->ctx, k, 8, nn));
    return grid(pl, k);
}

clphys_status lb_xpay_dev(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem y, cl_mem pnum, cl_mem pden)
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_XPAY_D];
    cl_uint nn = (cl_uint)n, ng = (cl_uint)pl->ngroups;
    const cl_mem m[4] = {y, x, pnum, pden};
    CP_TRY(set_mems(pl, k, m, 4));
    CP_TRY(CP_ARG(pl->ctx, k, 4, ng));
    CP_TRY(CP_ARG(pl->ctx, k, 5, nn));
    return grid(pl, k);
}

clphys_status lb_bicg_ts_into(clphys_dslash_plan *pl, size_t n, cl_mem t, cl_mem s, cl_mem part)
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_BTS];
    cl_uint nn = (cl_uint)n;
    const cl_mem m[3] = {part, t, s};
    CP_TRY(set_mems(pl, k, m, 3));
    CP_TRY(CP_ARG(pl->ctx, k, 3, nn));
    return grid(pl, k);
}

clphys_status lb_bicg_p_dev(clphys_dslash_plan *pl, size_t n, cl_mem p, cl_mem r, cl_mem v, cl_mem pxr, cl_mem state,
                            int first)
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_BP_D];
    cl_uint nn = (cl_uint)n, ng = (cl_uint)pl->ngroups;
    const cl_mem m[5] = {p, r, v, pxr, state};
    CP_TRY(set_mems(pl, k, m, 5));
    CP_TRY(CP_ARG(pl->ctx, k, 5, first));
    CP_TRY(CP_ARG(pl->ctx, k, 6, ng));
    CP_TRY(CP_ARG(pl->ctx, k, 7, nn));
    return grid(pl, k);
}

clphys_status lb_bicg_s_dev(clphys_dslash_plan *pl, size_t n, cl_mem s, cl_mem r, cl_mem v, cl_mem pxr, cl_mem pd,
                            cl_mem state)
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_BS_D];
    cl_uint nn = (cl_uint)n, ng = (cl_uint)pl->ngroups;
    const cl_mem m[6] = {s, r, v, pxr, pd, state};
    CP_TRY(set_mems(pl, k, m, 6));
    CP_TRY(CP_ARG(pl->ctx, k, 6, ng));
    CP_TRY(CP_ARG(pl->ctx, k, 7, nn));
    return grid(pl, k);
}

clphys_status lb_bicg_xr_dev(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem r, cl_mem p, cl_mem s, cl_mem t,
                             cl_mem r0, cl_mem pts, cl_mem state, cl_mem pxr)
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_BXR_D];
    cl_uint nn = (cl_uint)n, ng = (cl_uint)pl->ngroups;
    const cl_mem m[9] = {pxr, x, r, p, s, t, r0, pts, state};
    CP_TRY(set_mems(pl, k, m, 9));
    CP_TRY(CP_ARG(pl->ctx, k, 9, ng));
    CP_TRY(CP_ARG(pl->ctx, k, 10, nn));
    return grid(pl, k);
}

clphys_status lb_sub_norm_into(clphys_dslash_plan *pl, size_t n, cl_mem r, cl_mem b, cl_mem t, cl_mem part)
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_SUBN];
    cl_uint nn = (cl_uint)n;
    const cl_mem m[4] = {part, r, b, t};
    CP_TRY(set_mems(pl, k, m, 4));
    CP_TRY(CP_ARG(pl->ctx, k, 4, nn));
    return grid(pl, k);
}

clphys_status lb_convert_single_norm(clphys_dslash_plan *pl, size_t n, cl_mem dst32, cl_mem src64, cl_mem part)
{
    if (!dbl(pl)) return cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "lb_convert_single_norm: fp64 plan only");
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_CVT_N];
    cl_uint nn = (cl_uint)n;
    const cl_mem m[3] = {part, dst32, src64};
    CP_TRY(set_mems(pl, k, m, 3));
    CP_TRY(CP_ARG(pl->ctx, k, 3, nn));
    return grid(pl, k);
}

clphys_status lb_convert_add(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem e, cl_mem e32)
{
    CP_TRY(own_setup(pl));
    cl_kernel k = pl->kb[K_CVT_ADD];
    cl_uint nn = (cl_uint)n;
    const cl_mem m[3] = {x, e, e32};
    CP_TRY(set_mems(pl, k, m, 3));
    CP_TRY(CP_ARG(pl->ctx, k, 3, nn));
    return grid(pl, k);
}

clphys_status lb_read_async(clphys_dslash_plan *pl, cl_command_queue q, cl_mem part, size_t nreal, void *host,
                            cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    CP_CL(pl->ctx, clEnqueueReadBuffer(q, part, CL_FALSE, 0, nreal * pl->real_size, host, nwait, wait, ev));
    return CLPHYS_SUCCESS;
}

void lb_sum_host(const clphys_dslash_plan *pl, const void *host, int m, double out[3])
{
    const int nout = m == 4 ? 3 : m;
    for (int j = 0; j < 3; j++) out[j] = 0;
    for (size_t g = 0; g < pl->ngroups; g++)
        for (int j = 0; j < nout; j++)
            out[j] += dbl(pl) ? ((const double *)host)[(size_t)m * g + (size_t)j]
                              : (double)((const float *)host)[(size_t)m * g + (size_t)j];
}

double lb_host_real(const clphys_dslash_plan *pl, const void *host, size_t i)
{
    return dbl(pl) ? ((const double *)host)[i] : (double)((const float *)host)[i];
}

clphys_status lb_sum_now(clphys_dslash_plan *pl, cl_mem part, int m, double out[3])
{
    double buf[4 * 4096 + 4];
    if (pl->ngroups > 4096) return cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "lb_sum_now: too many groups");
    CP_TRY(cp_read(pl->ctx, part, 0, (size_t)m * pl->ngroups * pl->real_size, buf));
    lb_sum_host(pl, buf, m, out);
    return CLPHYS_SUCCESS;
}
