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

/* BiCGStab's fused steps, own kernels only (n complex numbers):
 * p = r + beta (p - omega v);  s = r - alpha v;
 * out = {|t|^2, conj(t) s};  x += alpha p + omega s, r = s - omega t,
 * out = {|r|^2, conj(r0) r}. */
clphys_status lb_bicg_p(clphys_dslash_plan *pl, size_t n, cl_mem p, cl_mem r, cl_mem v, const double beta[2],
                        const double omega[2]);
clphys_status lb_bicg_s(clphys_dslash_plan *pl, size_t n, cl_mem s, cl_mem r, cl_mem v, const double alpha[2]);
clphys_status lb_bicg_ts(clphys_dslash_plan *pl, size_t n, cl_mem t, cl_mem s, double out[3]);
clphys_status lb_bicg_xr(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem r, cl_mem p, cl_mem s, cl_mem t, cl_mem r0,
                         const double alpha[2], const double omega[2], double out[3]);

/* out = gamma5 in (second half of a SoA half field negated), n reals. */
clphys_status lb_gamma5(clphys_dslash_plan *pl, size_t n, cl_mem in, cl_mem out);
/* y = x + b y (real, n reals; complex, n complex) */
clphys_status lb_xpay(clphys_dslash_plan *pl, size_t n, cl_mem x, double b, cl_mem y);
clphys_status lb_cxpay(clphys_dslash_plan *pl, size_t n, cl_mem x, double bre, double bim, cl_mem y);

#endif
