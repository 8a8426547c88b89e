/* blas.h — level-1 operations on device fields of a dslash plan's precision,
 * through clBLAST on the context's queue (fields as real or complex arrays),
 * or, when the plan's own_blas is set, through the kernels of cl/blas1.cl. */
#ifndef CLPHYS_LQCD_BLAS_H
#define CLPHYS_LQCD_BLAS_H

#include "lqcd_internal.h"

/* n counts reals for the real ops, complex numbers for the c* ops.  scratch is
 * a buffer of at least 2 reals of the plan's precision used for results. */
clphys_status lb_axpy(clphys_dslash_plan *pl, size_t n, double a, cl_mem x, cl_mem y);          /* y += a x */
clphys_status lb_scal(clphys_dslash_plan *pl, size_t n, double a, cl_mem x, size_t off);        /* x *= a   */
clphys_status lb_copy(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem y);                    /* y = x    */
clphys_status lb_dot(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem y, cl_mem scratch, double *r);
clphys_status lb_caxpy(clphys_dslash_plan *pl, size_t n, double are, double aim, cl_mem x, cl_mem y);
clphys_status lb_cscal(clphys_dslash_plan *pl, size_t n, double are, double aim, cl_mem x);
/* r = sum conj(x_i) y_i */
clphys_status lb_cdotc(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem y, cl_mem scratch, double r[2]);

/* r = |x|^2 (own kernels: x read once) */
clphys_status lb_norm2(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem scratch, double *r);
/* x += alpha p; r -= alpha q; rr = |r|^2 (own kernels: one fused pass) */
clphys_status lb_cg_update(clphys_dslash_plan *pl, size_t n, double alpha, cl_mem p, cl_mem q, cl_mem x, cl_mem r,
                           cl_mem scratch, double *rr);

/* Scalars on the device (cl/blas1.cl, S = 5 doubles: gamma, qq, alpha,
 * |rho|^2, beta), nothing read back: |x|^2 into S by `what` (0: qq and
 * alpha, 2: beta and gamma, 3: gamma); x += alpha p, r -= alpha q and |r|^2;
 * y = x + beta y. */
clphys_status lb_dev_norm2(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem S, int what);
clphys_status lb_dev_cg_update(clphys_dslash_plan *pl, size_t n, cl_mem p, cl_mem q, cl_mem x, cl_mem r, cl_mem S);
clphys_status lb_dev_xpay(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem y, cl_mem S);

/* out = gamma5 in (second half of a SoA half field negated), n reals. */
clphys_status lb_gamma5(clphys_dslash_plan *pl, size_t n, cl_mem in, cl_mem out);
/* y = x + b y (real, n reals; complex, n complex) */
clphys_status lb_xpay(clphys_dslash_plan *pl, size_t n, cl_mem x, double b, cl_mem y);
clphys_status lb_cxpay(clphys_dslash_plan *pl, size_t n, cl_mem x, double bre, double bim, cl_mem y);

#endif
