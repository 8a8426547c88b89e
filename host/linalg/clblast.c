/* clblast.c — level-1 operations through clBLAST on the context's queue,
 * dispatched on the space's precision (S/D real, C/Z complex), whole
 * vectors; the reductions read their result back (blocking) and are each a
 * reduction point. */
#include "linalg_internal.h"

#include <clblast_c.h>

static clphys_status lb_status(la_space *s, CLBlastStatusCode c, const char *what);
/* return the failure of a clBLAST call, named by its text */
#define LB(s, call) CP_TRY(lb_status((s), (call), #call))

static int dbl(const la_space *s) { return s->real_size == 8; }
static size_t nc(const la_space *s) { return s->p.n / 2; }

clphys_status la_clblast_copy(la_space *s, cl_mem x, cl_mem y)
{
    CP_TRY(la_injected(s, LA_FAIL_COPY));
    cl_command_queue q = clphys_context_queue(s->ctx);
    if (dbl(s))
        LB(s, CLBlastDcopy(s->p.n, x, 0, 1, y, 0, 1, &q, NULL));
    else
        LB(s, CLBlastScopy(s->p.n, x, 0, 1, y, 0, 1, &q, NULL));
    return CLPHYS_SUCCESS;
}

clphys_status la_clblast_axpy(la_space *s, double a, cl_mem x, cl_mem y)
{
    CP_TRY(la_injected(s, LA_FAIL_COPY));
    cl_command_queue q = clphys_context_queue(s->ctx);
    if (dbl(s))
        LB(s, CLBlastDaxpy(s->p.n, a, x, 0, 1, y, 0, 1, &q, NULL));
    else
        LB(s, CLBlastSaxpy(s->p.n, (float)a, x, 0, 1, y, 0, 1, &q, NULL));
    return CLPHYS_SUCCESS;
}

/* y = x + b y as scal and axpy (clBLAST has no xpay) */
clphys_status la_clblast_xpay(la_space *s, cl_mem x, double b, cl_mem y)
{
    cl_command_queue q = clphys_context_queue(s->ctx);
    if (dbl(s))
        LB(s, CLBlastDscal(s->p.n, b, y, 0, 1, &q, NULL));
    else
        LB(s, CLBlastSscal(s->p.n, (float)b, y, 0, 1, &q, NULL));
    return la_clblast_axpy(s, 1.0, x, y);
}

clphys_status la_clblast_caxpy(la_space *s, const double a[2], cl_mem x, cl_mem y)
{
    cl_command_queue q = clphys_context_queue(s->ctx);
    if (dbl(s)) {
        cl_double2 za = {{a[0], a[1]}};
        LB(s, CLBlastZaxpy(nc(s), za, x, 0, 1, y, 0, 1, &q, NULL));
    } else {
        cl_float2 ca = {{(float)a[0], (float)a[1]}};
        LB(s, CLBlastCaxpy(nc(s), ca, x, 0, 1, y, 0, 1, &q, NULL));
    }
    return CLPHYS_SUCCESS;
}

clphys_status la_clblast_cxpay(la_space *s, cl_mem x, const double b[2], cl_mem y)
{
    cl_command_queue q = clphys_context_queue(s->ctx);
    if (dbl(s)) {
        cl_double2 zb = {{b[0], b[1]}};
        LB(s, CLBlastZscal(nc(s), zb, y, 0, 1, &q, NULL));
    } else {
        cl_float2 cb = {{(float)b[0], (float)b[1]}};
        LB(s, CLBlastCscal(nc(s), cb, y, 0, 1, &q, NULL));
    }
    const double one[2] = {1, 0};
    return la_clblast_caxpy(s, one, x, y);
}

/* CLBlast's status as the layer's */
static clphys_status lb_status(la_space *s, CLBlastStatusCode c, const char *what)
{
    return c == CLBlastSuccess ? CLPHYS_SUCCESS
                               : cp_error(s->ctx, CLPHYS_ERR_OPENCL, "clBLAST %s failed with status %d", what, (int)c);
}

/* The dots read their result whatever happened before (st), but only
 * where it did not fail, and join the reduction point in any case. */
clphys_status la_clblast_dot(la_space *s, clphys_status st, cl_mem x, cl_mem y, double *r)
{
    cl_command_queue q = clphys_context_queue(s->ctx);
    if (!st) st = la_injected(s, LA_FAIL_SUMS);
    if (!st && dbl(s)) {
        st = lb_status(s, CLBlastDdot(s->p.n, s->scratch, 0, x, 0, 1, y, 0, 1, &q, NULL), "Ddot");
        if (!st) st = cp_read(s->ctx, s->scratch, 0, sizeof(double), r);
    } else if (!st) {
        float f = 0;
        st = lb_status(s, CLBlastSdot(s->p.n, s->scratch, 0, x, 0, 1, y, 0, 1, &q, NULL), "Sdot");
        if (!st) st = cp_read(s->ctx, s->scratch, 0, sizeof f, &f);
        *r = f;
    }
    return la_reduce_value(s, st, r, 1);
}

clphys_status la_clblast_cdotc(la_space *s, clphys_status st, cl_mem x, cl_mem y, double r[2])
{
    cl_command_queue q = clphys_context_queue(s->ctx);
    if (!st) st = la_injected(s, LA_FAIL_SUMS);
    if (!st && dbl(s)) {
        st = lb_status(s, CLBlastZdotc(nc(s), s->scratch, 0, x, 0, 1, y, 0, 1, &q, NULL), "Zdotc");
        if (!st) st = cp_read(s->ctx, s->scratch, 0, 2 * sizeof(double), r);
    } else if (!st) {
        float f[2] = {0, 0};
        st = lb_status(s, CLBlastCdotc(nc(s), s->scratch, 0, x, 0, 1, y, 0, 1, &q, NULL), "Cdotc");
        if (!st) st = cp_read(s->ctx, s->scratch, 0, sizeof f, f);
        r[0] = f[0], r[1] = f[1];
    }
    return la_reduce_value(s, st, r, 2);
}
