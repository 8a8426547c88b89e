/* linalg_internal.h — the vector space and the device-scalar kernels of
 * cl/linalg_blas1.cl, shared by the files of host/linalg/ only. */
#ifndef CLPHYS_LA_INTERNAL_H
#define CLPHYS_LA_INTERNAL_H

#include "linalg.h"

/* Kernels of cl/linalg_blas1.cl, in the order of kernel_names (fused.c). */
enum {
    K_AXPY,
    K_DOT,
    K_NORM2,
    K_SUB_NORM,
    K_CG_UPDATE,
    K_XPAY,
    K_BICG_TS,
    K_BICG_P,
    K_BICG_S,
    K_BICG_XR,
    K_TO_SINGLE,
    K_TO_DOUBLE,
    K_TO_SINGLE_NORM,
    K_CONVERT_ADD,
    K_COUNT
};
extern const char *const la_kernel_names[K_COUNT];

#define LA_WG                                                                                                          \
    256                 /* work-group size of the reduction grid (BLAS_WG), where                                      \
                           the device allows it (space.c: build)                   */
#define LA_NSLOT      4 /* partial-sum buffers of a space                          */
#define LA_MAX_GROUPS 4096
/* The places of a space's test failure (fail; tests/test_linalg_mpi.c): a
 * kernel that leaves a reduction point's partial sums (dot, norm), a
 * solver's update kernel (cg_update_dev, bicg_s_dev, bicg_xr_dev), the host
 * wait for a reduction point's read, the write-back of its global sums,
 * xpay_dev or bicg_p_dev, a level-1 fill, copy, axpy or conversion, the
 * start of a preconditioner's application. */
enum { LA_FAIL_SUMS = 1, LA_FAIL_UPDATE, LA_FAIL_WAIT, LA_FAIL_WRITE, LA_FAIL_XPAY, LA_FAIL_COPY, LA_FAIL_PRECOND };

#define LA_STALL                                                                                                       \
    50 /* CG ends after this many iterations in which the                                                              \
          residual did not halve: it has stalled at its                                                                \
          precision's floor (the caller's true residual decides) */

struct la_space {
    clphys_context *ctx;
    la_space_params p;
    size_t real_size;
    cl_kernel k[K_COUNT];
    size_t ngroups;  /* work-groups of the reduction grid                  */
    size_t wg;       /* their size (LA_WG or less)                          */
    size_t acc_size; /* bytes of a scalar of linalg_blas1.cl (acc_t): 8, or 4
                        on a device without fp64                            */
    cl_mem v[LA_NVEC];
    /* Partial sums, up to 4 reals per work-group and 4 more after them
     * (la_partial_reals); slot i of the two-step norms is part[i]. */
    cl_mem part[LA_NSLOT];
    cl_mem state;         /* BiCGStab's device scalars, acc_t[8]                 */
    cl_mem scratch;       /* clBLAST's reduction results                         */
    cl_mem hbuf;          /* page-locked: LA_NSLOT partial arrays, then the state */
    char *hp;             /* hbuf mapped                                         */
    size_t hslot, hstate; /* byte offsets in hp: of slot 1, of the state copy    */
    size_t hwrite;        /* and of the global sums written back (4 per buffer)  */
    cl_command_queue reads;
    int own_reads;
    la_global_sum_fn gsum;
    void *gsum_user;
    cp_test_failure fail; /* for the tests: a device failure at a place above,
                             armed on the one process that fails (rank unused) */
};

/* CLPHYS_ERR_OPENCL where s->fail asks for this call of `where`, else success. */
clphys_status la_injected(la_space *s, int where);

/* Reals in a partial-sum buffer. */
size_t la_partial_reals(const la_space *s);
/* Groups whose partial sums a consumer adds: all, or 1 once a global-sum hook
 * has written the reduced values to group 0. */
cl_uint la_sum_groups(const la_space *s);

/* ---- reductions (space.c) -----------------------------------------------
 * A failure on one process.  Over several processes (a global-sum hook set),
 * a failure of this process's device between two reduction points must not
 * end its solve at once: the others would wait for it in their next
 * collective.  A solver carries it as its status st instead: it skips its
 * own further level-1 work, still calls the operator and preconditioner
 * (la_go: over processes their hooks have collectives of their own, which
 * the others reach) and joins the next reduction point with NaN, which the
 * global sum turns into an error on every process (la_global_sum_fn); every
 * process leaves there.  So that each takes the same way until then, a
 * solver decides (converged, breakdown) only on the values of a reduction
 * point, never on one process's reads of the device, and nothing of its own
 * can fail between the point before a decision and that decision (the
 * write-back of the point's sums waits for it: la_reduce_write).  Without a
 * hook a failure ends the solve at once, as it always did. */

/* Whether a solver with status st still calls the operator or
 * preconditioner: healthy, or failed with a global sum. */
static inline int la_go(const la_space *s, clphys_status st) { return !st || s->gsum; }
/* st, or r where st is success: this process's first failure. */
static inline clphys_status la_keep(clphys_status st, clphys_status r) { return st ? st : r; }

/* The reduction point of the partial sums just queued into part[0..k-1]
 * (m = 2 or 4 reals per group), for a caller whose status since the last
 * point is *st.  Without a hook: nothing; returns *st != 0.  With one: the
 * host adds each buffer's groups and calls the hook once for all k * m
 * values (NaN where *st or this point's read failed), gives them in out
 * (may be NULL; m per buffer, the fourth of a 4-real layout 0) and, with
 * write, writes them to group 0 of each buffer for the kernels that consume
 * them; returns nonzero where the hook failed, which it does on every
 * process alike (then *st holds this process's first failure).  A failure
 * of the write-back is this process's alone: left in *st, the call returns
 * 0 and the caller goes on to its next point. */
int la_reduce(la_space *s, clphys_status *st, int k, const cl_mem *part, int m, int write, double *out);
/* la_reduce's write-back, later (a point whose sums are consumed only after
 * a decision on them); nothing without a hook or where st is set.  Returns
 * la_keep(st, its failure). */
clphys_status la_reduce_write(la_space *s, clphys_status st, int k, const cl_mem *part, int m);
/* la_reduce with *st 0 and write, returning *st (a caller with no failure to carry). */
clphys_status la_reduce_point(la_space *s, int k, const cl_mem *part, int m);
/* A reduction point in two steps, so that the caller can queue work that
 * neither writes part nor reads its group 0 before the host waits: start
 * reads the partial sums on the read queue behind a marker of the main
 * queue (*ev NULL and nothing done without a hook); end waits for *ev and
 * goes on as la_reduce. */
clphys_status la_reduce_start(la_space *s, int k, const cl_mem *part, int m, cl_event *ev);
int la_reduce_end(la_space *s, clphys_status *st, int k, const cl_mem *part, int m, int write, cl_event *ev,
                  double *out);
/* The sums (m - (m == 4) of them) of one buffer, read now (blocking). */
clphys_status la_sums_now(la_space *s, cl_mem part, int m, double out[3]);
/* v as a real of the space (rounded to fp32 in an fp32 space). */
double la_real(const la_space *s, double v);
/* The sums of one buffer after its reduction point as its consumers see
 * them: with a hook from the point's values v (m of them), rounded to the
 * space's precision, so no read that could fail on one process; without one
 * read now (la_sums_now). */
clphys_status la_sums_after(la_space *s, cl_mem part, int m, const double *v, double out[3]);
/* Start reading the first nreal reals of part (and, with state, the device
 * scalars) into the page-locked memory, on the read queue behind a marker
 * of the main queue (so the main queue's next kernels do not wait for the
 * copy); *ev completes when all is on the host. */
clphys_status la_read_async(la_space *s, cl_mem part, size_t nreal, int state, cl_event *ev);
/* Sums of such a copy (m reals per group), element i of it, the state copy. */
void la_sum_host(const la_space *s, int m, double out[3]);
double la_host_real(const la_space *s, size_t i);
void la_host_state(const la_space *s, double out[8]);
/* A clBLAST result (n values) at a reduction point, for a caller whose
 * status is st (NaN into the hook where set); returns la_keep(st, the
 * hook's status). */
clphys_status la_reduce_value(la_space *s, clphys_status st, double *v, int n);

/* ---- fused kernels (fused.c), over the whole vector of s; partial sums
 * written by a kernel are in the norm2 layout (2 reals per group) unless
 * said otherwise.  These queue and return. */
clphys_status la_fused_norm2_into(la_space *s, cl_mem x, cl_mem part);           /* |x|^2               */
clphys_status la_fused_dot_into(la_space *s, cl_mem x, cl_mem y, cl_mem part);   /* x . y (real)        */
clphys_status la_fused_cdotc_into(la_space *s, cl_mem x, cl_mem y, cl_mem part); /* conj(x) y (complex) */
/* alpha = sum pg / sum pq (0 unless sum pq > 0); x += alpha p; r -= alpha q;
 * |r|^2 into prr, and prr[2 ngroups] = sum pq. */
clphys_status la_fused_cg_update(la_space *s, cl_mem p, cl_mem q, cl_mem x, cl_mem r, cl_mem pg, cl_mem pq, cl_mem prr);
/* y = x + (sum pnum / sum pden) y (beta 0 unless sum pden > 0) */
clphys_status la_fused_xpay(la_space *s, cl_mem x, cl_mem y, cl_mem pnum, cl_mem pden);
/* BiCGStab, complex, scalars in s->state (rho, alpha, omega, <r0, v>):
 * {|t|^2, conj(t) s} into part (4 per group); p = r + beta (p - omega v)
 * (first: p = r); s = r - alpha v; x += alpha p + omega s, r = s - omega t
 * with {|r|^2, conj(r0) r} into pxr.  Layouts: linalg_blas1.cl. */
clphys_status la_fused_bicg_ts(la_space *s, cl_mem t, cl_mem sv, cl_mem part);
clphys_status la_fused_bicg_p(la_space *s, cl_mem p, cl_mem r, cl_mem v, cl_mem pxr, int first);
clphys_status la_fused_bicg_s(la_space *s, cl_mem sv, cl_mem r, cl_mem v, cl_mem pxr, cl_mem pd);
clphys_status la_fused_bicg_xr(la_space *s, cl_mem x, cl_mem r, cl_mem p, cl_mem sv, cl_mem t, cl_mem r0, cl_mem pts,
                               cl_mem pxr);
clphys_status la_fused_axpy(la_space *s, double a, cl_mem x, cl_mem y);
clphys_status la_fused_sub_norm(la_space *s, cl_mem r, cl_mem b, cl_mem t, cl_mem part); /* r = b - t, |r|^2 */
/* precision changes, kernels of the fp64 space hi, n = hi's length */
clphys_status la_fused_convert(la_space *hi, cl_mem dst, cl_mem src, int to_single);
clphys_status la_fused_convert_single_norm(la_space *hi, cl_mem dst32, cl_mem src64, cl_mem part);
clphys_status la_fused_convert_add(la_space *hi, cl_mem x, cl_mem e, cl_mem e32);

/* ---- clBLAST (clblast.c), on the context's queue, whole vectors --------- */
clphys_status la_clblast_copy(la_space *s, cl_mem x, cl_mem y);
clphys_status la_clblast_axpy(la_space *s, double a, cl_mem x, cl_mem y);
clphys_status la_clblast_xpay(la_space *s, cl_mem x, double b, cl_mem y); /* y = x + b y      */
clphys_status la_clblast_caxpy(la_space *s, const double a[2], cl_mem x, cl_mem y);
clphys_status la_clblast_cxpay(la_space *s, cl_mem x, const double b[2], cl_mem y);
/* Blocking reductions, each one reduction point, for a caller whose status
 * is st (la_reduce_value); the level-1 updates above are not called where it
 * is set. */
clphys_status la_clblast_dot(la_space *s, clphys_status st, cl_mem x, cl_mem y, double *r);
clphys_status la_clblast_cdotc(la_space *s, clphys_status st, cl_mem x, cl_mem y, double r[2]);

/* ---- shared by the solvers (cg.c) --------------------------------------- */
/* z = M r for a solver on space s (converting through M's space if needed),
 * for a caller whose status is st: where set, the conversions are skipped
 * and M is applied only with a global sum (la_go).  Returns la_keep(st, its
 * failure). */
clphys_status la_precond_apply(const la_precond *M, la_space *s, cl_mem z, cl_mem r, clphys_status st);
/* The solvers of linalg.h for a caller whose status is st (a failure before
 * the call): where set, the solve goes on only with a global sum, up to its
 * first reduction point, and returns st. */
clphys_status la_krylov(la_method method, const la_operator *A, const la_precond *M, cl_mem b, cl_mem x,
                        const la_krylov_params *p, la_krylov_result *res, clphys_status st);
/* CGNR and BiCGStab after la_krylov's checks (cgnr.c, bicgstab.c). */
clphys_status la_cgnr_run(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p, la_krylov_result *res,
                          clphys_status st);
clphys_status la_bicgstab_run(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p,
                              la_krylov_result *res, clphys_status st);
/* progress report of an iteration */
void la_report(const la_krylov_params *p, int it, double rnorm);

#endif
