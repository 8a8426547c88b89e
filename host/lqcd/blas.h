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


/* ---- scalars on the device (own kernels only).  These enqueue and return:
 * partial sums (per work-group, ngroups of them) go to buffers made by
 * lb_partial_create (lb_partial_reals reals: up to 4 per group and 4
 * extras); a kernel that needs alpha or beta adds them itself (blas1.cl).
 * n as above (reals for real ops, complex numbers for the bicg and cdotc). */
clphys_status lb_partial_create(clphys_dslash_plan *pl, cl_mem *part);
size_t lb_partial_reals(const clphys_dslash_plan *pl);
clphys_status lb_norm2_into(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem part);   /* |x|^2, 2 per group */
clphys_status lb_cdotc_into(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem y, cl_mem part); /* conj(x) y */
/* alpha = sum pg / sum pq; x += alpha p; r -= alpha q; |r|^2 into prr, and
 * prr[2 ngroups] = sum pq */
clphys_status lb_cg_update_dev(clphys_dslash_plan *pl, size_t n, cl_mem p, cl_mem q, cl_mem x, cl_mem r, cl_mem pg,
                               cl_mem pq, cl_mem prr);
/* y = x + (sum pnum / sum pden) y */
clphys_status lb_xpay_dev(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem y, cl_mem pnum, cl_mem pden);
/* BiCGStab with its scalars in state (double[8]: rho, alpha, omega, <r0,v>),
 * cl/blas1.cl: {|t|^2, conj(t) s} into part (4 per group; with t = s = r it
 * gives the {|r|^2, conj(r0) r} that starts the iteration when r0 = r) */
clphys_status lb_bicg_ts_into(clphys_dslash_plan *pl, size_t n, cl_mem t, cl_mem s, cl_mem part);
clphys_status lb_bicg_p_dev(clphys_dslash_plan *pl, size_t n, cl_mem p, cl_mem r, cl_mem v, cl_mem pxr, cl_mem state,
                            int first);
clphys_status lb_bicg_s_dev(clphys_dslash_plan *pl, size_t n, cl_mem s, cl_mem r, cl_mem v, cl_mem pxr, cl_mem pd,
                            cl_mem state);
clphys_status lb_bicg_xr_dev(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem r, cl_mem p, cl_mem s, cl_mem t,
                             cl_mem r0, cl_mem pts, cl_mem state, cl_mem pxr);
/* The fp64 outer loop: r = b - t and |r|^2 into part; dst32 = (float) src64
 * and |src64|^2 into part (fp64 plan); e = (double) e32, x += e. */
clphys_status lb_sub_norm_into(clphys_dslash_plan *pl, size_t n, cl_mem r, cl_mem b, cl_mem t, cl_mem part);
clphys_status lb_convert_single_norm(clphys_dslash_plan *pl, size_t n, cl_mem dst32, cl_mem src64, cl_mem part);
clphys_status lb_convert_add(clphys_dslash_plan *pl, size_t n, cl_mem x, cl_mem e, cl_mem e32);
/* Non-blocking read of nreal reals of part on queue q (host: page-locked
 * memory, so that the read does not hold the host); lb_sum_host adds the
 * groups' partial sums of such a copy (m = 2 or 4 reals per group, out gets
 * m - (m == 4) sums); lb_host_real is element i of it; lb_sum_now reads
 * (blocking) and adds. */
clphys_status lb_read_async(clphys_dslash_plan *pl, cl_command_queue q, cl_mem part, size_t nreal, void *host,
                            cl_uint nwait, const cl_event *wait, cl_event *ev);
void lb_sum_host(const clphys_dslash_plan *pl, const void *host, int m, double out[3]);
double lb_host_real(const clphys_dslash_plan *pl, const void *host, size_t i);
clphys_status lb_sum_now(clphys_dslash_plan *pl, cl_mem part, int m, double out[3]);

#endif
