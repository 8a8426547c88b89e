/* fused.c — launches of the cl/linalg_blas1.cl kernels over a space's reduction
 * grid (ngroups work-groups of s->wg, each work-item striding through the
 * vector), through one helper that sets the arguments from a format. */
#include "linalg_internal.h"

#include <stdarg.h>

const char *const la_kernel_names[K_COUNT] = {"blas_axpy",
                                              "blas_dot_partial",
                                              "blas_norm2_partial",
                                              "blas_sub_norm",
                                              "cg_update_dev",
                                              "xpay_dev",
                                              "bicg_ts",
                                              "bicg_p_dev",
                                              "bicg_s_dev",
                                              "bicg_xr_dev",
                                              "convert_to_single",
                                              "convert_to_double",
                                              "convert_to_single_norm",
                                              "convert_add"};

/* Set kernel k's arguments from fmt, one letter each: m cl_mem, r a real in
 * the space's precision (passed as double), u cl_uint, i int, then launch it
 * over the reduction grid.  The vector length (u) is always the last
 * argument and added here: n reals, or n/2 complex numbers with cplx. */
/* The place of the test failure (la_injected) that kernel k stands for. */
static int fail_place(int k)
{
    switch (k) {
    case K_DOT:
    case K_NORM2:
    case K_SUB_NORM:
    case K_BICG_TS:
    case K_TO_SINGLE_NORM:
        return LA_FAIL_SUMS;
    case K_CG_UPDATE:
    case K_BICG_S:
    case K_BICG_XR:
        return LA_FAIL_UPDATE;
    case K_XPAY:
    case K_BICG_P:
        return LA_FAIL_XPAY;
    default:
        return LA_FAIL_COPY;
    }
}

static clphys_status launch(la_space *s, int k, int cplx, const char *fmt, ...)
{
    CP_TRY(la_injected(s, fail_place(k)));
    enum { MAXA = 24 };
    cl_kernel kr = s->k[k];
    /* each argument's value, kept until cp_args has set them all */
    union {
        cl_mem m;
        double d;
        float f;
        cl_uint u;
        int i;
    } v[MAXA];
    cp_karg a[MAXA];
    cl_uint i = 0;
    va_list ap;
    va_start(ap, fmt);
    for (const char *f = fmt; *f && i + 1 < MAXA; f++, i++) {
        if (*f == 'm') {
            v[i].m = va_arg(ap, cl_mem);
            a[i] = CP_SIZED(sizeof v[i].m, &v[i].m);
        } else if (*f == 'r') {
            v[i].d = va_arg(ap, double);
            if (s->real_size != 8) v[i].f = (float)v[i].d;
            a[i] = s->real_size == 8 ? CP_SIZED(sizeof v[i].d, &v[i].d) : CP_SIZED(sizeof v[i].f, &v[i].f);
        } else if (*f == 'u') {
            v[i].u = va_arg(ap, cl_uint);
            a[i] = CP_SIZED(sizeof v[i].u, &v[i].u);
        } else {
            v[i].i = va_arg(ap, int);
            a[i] = CP_SIZED(sizeof v[i].i, &v[i].i);
        }
    }
    va_end(ap);
    v[i].u = (cl_uint)(cplx ? s->p.n / 2 : s->p.n);
    a[i] = CP_SIZED(sizeof v[i].u, &v[i].u);
    CP_TRY(cp_args(s->ctx, kr, a, i + 1));
    size_t global = s->ngroups * s->wg, local = s->wg;
    return cp_launch(s->ctx, kr, 1, &global, &local, NULL);
}

clphys_status la_fused_axpy(la_space *s, double a, cl_mem x, cl_mem y) { return launch(s, K_AXPY, 0, "mmr", y, x, a); }

clphys_status la_fused_norm2_into(la_space *s, cl_mem x, cl_mem part) { return launch(s, K_NORM2, 0, "mm", part, x); }

clphys_status la_fused_dot_into(la_space *s, cl_mem x, cl_mem y, cl_mem part)
{
    return launch(s, K_DOT, 0, "mmmi", part, x, y, 0);
}

clphys_status la_fused_cdotc_into(la_space *s, cl_mem x, cl_mem y, cl_mem part)
{
    return launch(s, K_DOT, 1, "mmmi", part, x, y, 1);
}

clphys_status la_fused_sub_norm(la_space *s, cl_mem r, cl_mem b, cl_mem t, cl_mem part)
{
    return launch(s, K_SUB_NORM, 0, "mmmm", part, r, b, t);
}

clphys_status la_fused_cg_update(la_space *s, cl_mem p, cl_mem q, cl_mem x, cl_mem r, cl_mem pg, cl_mem pq, cl_mem prr)
{
    return launch(s, K_CG_UPDATE, 0, "mmmmmmmu", prr, x, r, p, q, pg, pq, la_sum_groups(s));
}

clphys_status la_fused_xpay(la_space *s, cl_mem x, cl_mem y, cl_mem pnum, cl_mem pden)
{
    return launch(s, K_XPAY, 0, "mmmmu", y, x, pnum, pden, la_sum_groups(s));
}

clphys_status la_fused_bicg_ts(la_space *s, cl_mem t, cl_mem sv, cl_mem part)
{
    return launch(s, K_BICG_TS, 1, "mmm", part, t, sv);
}

clphys_status la_fused_bicg_p(la_space *s, cl_mem p, cl_mem r, cl_mem v, cl_mem pxr, int first)
{
    return launch(s, K_BICG_P, 1, "mmmmmiu", p, r, v, pxr, s->state, first, la_sum_groups(s));
}

clphys_status la_fused_bicg_s(la_space *s, cl_mem sv, cl_mem r, cl_mem v, cl_mem pxr, cl_mem pd)
{
    return launch(s, K_BICG_S, 1, "mmmmmmu", sv, r, v, pxr, pd, s->state, la_sum_groups(s));
}

clphys_status la_fused_bicg_xr(la_space *s, cl_mem x, cl_mem r, cl_mem p, cl_mem sv, cl_mem t, cl_mem r0, cl_mem pts,
                               cl_mem pxr)
{
    return launch(s, K_BICG_XR, 1, "mmmmmmmmmu", pxr, x, r, p, sv, t, r0, pts, s->state, la_sum_groups(s));
}

/* The conversions have one work-item per element (no reduction grid). */
clphys_status la_fused_convert(la_space *hi, cl_mem dst, cl_mem src, int to_single)
{
    cl_kernel k = hi->k[to_single ? K_TO_SINGLE : K_TO_DOUBLE];
    cl_uint n = (cl_uint)hi->p.n;
    size_t global = hi->p.n;
    CP_TRY(la_injected(hi, LA_FAIL_COPY));
    CP_TRY(CP_ARGS(hi->ctx, k, dst, src, n));
    return cp_launch(hi->ctx, k, 1, &global, NULL, NULL);
}

clphys_status la_fused_convert_single_norm(la_space *hi, cl_mem dst32, cl_mem src64, cl_mem part)
{
    return launch(hi, K_TO_SINGLE_NORM, 0, "mmm", part, dst32, src64);
}

clphys_status la_fused_convert_add(la_space *hi, cl_mem x, cl_mem e, cl_mem e32)
{
    return launch(hi, K_CONVERT_ADD, 0, "mmm", x, e, e32);
}
