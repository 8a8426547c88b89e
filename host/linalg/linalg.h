/*
 * linalg.h — Krylov solvers and level-1 BLAS over an operator, for every
 * path that solves A x = b on the device (the lattice path's even-odd Wilson
 * system, and the Poisson path's multigrid-preconditioned CG).  Internal to the library.
 *
 * Three objects:
 *  - a vector space (la_space): vectors of n reals of one precision on the
 *    device, the level-1 kernels of cl/linalg_blas1.cl built for it (or clBLAST),
 *    a workspace of LA_NVEC vectors, partial-sum buffers, the page-locked
 *    memory that reductions are read back into, and a further queue for
 *    those reads;
 *  - an operator (la_operator): out = A in on vectors of a space, given by
 *    the path as an apply function and a user pointer (and the adjoint for
 *    CGNR, and optionally the application split in two stages);
 *  - a preconditioner (la_precond): z ~ A^-1 r, possibly in a space of
 *    another precision (fp64 CG with an fp32 V-cycle).
 *
 * Two ways to run the level-1 work, chosen per space (la_blas):
 *  - LA_BLAS_FUSED: the kernels of cl/linalg_blas1.cl.  Updates and the reductions
 *    that follow them share one pass over the vectors; the scalars (alpha,
 *    beta, omega) stay on the device: a kernel that needs one adds the
 *    per-work-group partial sums an earlier kernel left, so the host never
 *    waits on a reduction inside an iteration except for the convergence
 *    check, which it reads asynchronously on the space's read queue.
 *  - LA_BLAS_CLBLAST: clBLAST on the context's queue, scalars on the host,
 *    one blocking read per reduction.
 * The solvers run the same algorithm either way (same iterates up to
 * rounding).  bench/lqcd-notes.md has what each costs on the H100.
 *
 * Reductions and several processes.  Every place where an algorithm needs
 * reduced values is one reduction point, and the fused kernels give each
 * point one set of partial sums (e.g. BiCGStab's |t|^2 and t^H s from one
 * pass).  A space may carry a global-sum hook (la_space_set_global_sum):
 * when set, every reduction point adds its partial sums on the host, calls
 * the hook ONCE with all of that point's values (an MPI_Allreduce in place,
 * over the ranks that each hold a part of the vectors) and writes the
 * global sums back for the kernels that consume them.  Without a hook
 * (the default) a reduction point adds no work at all.  With clBLAST the
 * hook is called once per clBLAST reduction.
 *
 * A failure on one process.  A hook must fail on every process where a sum
 * is not finite (cp_mpi_global_sum does).  Then a device failure on one
 * process anywhere in a solve (la_cg, la_cgnr, la_bicgstab, la_refine_solve)
 * ends it with an error on every process at the next reduction point, none
 * left waiting in a collective: the failed process skips its own level-1
 * work from there, still calls the operator, the preconditioner and a
 * la_refine's outer steps (over processes they have collectives of their
 * own, which must end on every process; the paths' also agree their own
 * failures) and joins the point's sum with NaN.
 *
 * Errors: every function returning clphys_status gives CLPHYS_ERR_OPENCL or
 * CLPHYS_ERR_OUT_OF_MEMORY when the device fails, the hook's status when a
 * global sum fails, and those listed with it; messages through cp_error.
 */
#ifndef CLPHYS_LINALG_H
#define CLPHYS_LINALG_H

#include "platform/platform.h"

typedef enum { LA_BLAS_FUSED = 0, LA_BLAS_CLBLAST = 1 } la_blas;

/* The workspace vectors of a space.  LA_B and LA_X are the caller's: the
 * right-hand side and solution of a solve on this space, and the vectors
 * through which a preconditioner in this space is applied; the solvers use
 * the others. */
enum { LA_B, LA_X, LA_R, LA_P, LA_Q, LA_S, LA_T, LA_R0, LA_NVEC };

typedef struct la_space la_space;

typedef struct {
    clphys_precision precision;
    size_t n;           /* reals per vector (even when complex_values)       */
    int complex_values; /* 1: n/2 complex numbers (re, im); BiCGStab needs it */
    la_blas blas;
    cl_command_queue reads; /* a further in-order queue for asynchronous reads of
                               partial sums, shared by spaces that are never used
                               at once; NULL: the space makes its own             */
} la_space_params;

/* Build the kernels, allocate LA_NVEC vectors, the partial-sum buffers and
 * the page-locked read-back memory.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (n
 * is 0, odd with complex_values, or above 2^32 - 1), CLPHYS_ERR_UNSUPPORTED
 * (an fp64 space on a device without fp64; an fp32 space works on any
 * device, its fused kernels then adding the groups' partial sums and making
 * the scalars in float instead of double: cl/linalg_blas1.cl states the precision
 * of each step), CLPHYS_ERR_BUILD. */
clphys_status la_space_create(clphys_context *ctx, const la_space_params *p, la_space **s);
void la_space_destroy(la_space *s);
cl_mem la_space_vec(const la_space *s, int which);
size_t la_space_n(const la_space *s);
clphys_precision la_space_precision(const la_space *s);
la_blas la_space_blas(const la_space *s);
clphys_context *la_space_context(const la_space *s);

/* The global sum of a reduction point: sums[0..n-1] hold this process's
 * values; replace them by the sums over all processes. */
typedef clphys_status (*la_global_sum_fn)(void *user, double *sums, int n);
/* fn NULL removes the hook. */
void la_space_set_global_sum(la_space *s, la_global_sum_fn fn, void *user);

/* ---- operators and preconditioners ---------------------------------------
 * out = A in with out != in, both vectors of `space`.  The functions queue
 * their kernels on the context's queue and return (no wait). */
typedef struct {
    la_space *space;
    void *user;
    clphys_status (*apply)(void *user, cl_mem out, cl_mem in);
    /* out = A^H in; needed by CGNR; NULL where A is self-adjoint */
    clphys_status (*apply_adjoint)(void *user, cl_mem out, cl_mem in);
    /* Optional, both or neither: the application in two stages, begin then
     * end == apply (adjoint 0) or apply_adjoint (adjoint 1).  begin may write
     * only the operator's own temporaries, so that a solver can queue it
     * before it waits for a reduction's read-back and the device has work
     * during the round trip (in vain only on the last iteration). */
    clphys_status (*begin)(void *user, int adjoint, cl_mem in);
    clphys_status (*end)(void *user, int adjoint, cl_mem out, cl_mem in);
} la_operator;

/* z ~ A^-1 r, a fixed symmetric positive definite map for CG, z != r
 * vectors of `space`.  When that is not the solver's space (another
 * precision: fp64 CG with an fp32 V-cycle), the solver converts r into
 * space's LA_B, applies M into its LA_X and converts z back. */
typedef struct {
    la_space *space;
    void *user;
    clphys_status (*apply)(void *user, cl_mem z, cl_mem r);
} la_precond;

/* ---- Krylov solvers -------------------------------------------------------
 * Solve A x = b from x = 0 on the operator's space; stop when the iterated
 * residual |b - A x| reaches target (an absolute value) or after max_iter
 * iterations.  b and x are vectors of the space other than LA_R..LA_R0.
 * progress (may be NULL) gets the iteration number (+ iter_offset) and the
 * iterated residual / scale after every iteration, with is_true = 0. */
typedef struct {
    double target;
    int max_iter;
    double scale;
    int iter_offset;
    void (*progress)(void *user, int iter, double rel_residual, int is_true);
    void *user;
} la_krylov_params;

typedef struct {
    int iterations;
    int applications; /* of A or A^H */
} la_krylov_result;

/* Conjugate gradients (Hestenes & Stiefel 1952) for Hermitian positive
 * definite A; with M non-NULL, preconditioned CG (z = M r).  b is left as
 * it is.  Per iteration: one A, one M, two reduction points (three with M).
 * Also ends when the iterated residual has not halved in 50 iterations (it
 * has stalled at the floor of its precision). */
clphys_status la_cg(const la_operator *A, const la_precond *M, cl_mem b, cl_mem x, const la_krylov_params *p,
                    la_krylov_result *res);
/* CGNR: CG on A^H A x = A^H b, stopping on |b - A x| (Saad, Iterative
 * Methods, alg. 8.4).  b is overwritten by the residual b - A x.  Per
 * iteration: A and A^H once each, three reduction points. */
clphys_status la_cgnr(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p, la_krylov_result *res);
/* BiCGStab (van der Vorst 1992) on a complex space; b is left as it is.  A
 * breakdown (<r0, v> = 0 or omega = 0) ends the call early, so that the
 * caller restarts.  Per iteration: A twice, three reduction points.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT on a real space. */
clphys_status la_bicgstab(const la_operator *A, cl_mem b, cl_mem x, const la_krylov_params *p, la_krylov_result *res);

typedef enum { LA_CG, LA_CGNR, LA_BICGSTAB } la_method;

/* ---- defect correction (mixed precision) --------------------------------
 * x = 0; repeat: r = b - A x in the outer precision (the true residual);
 * stop when |r| <= tol |b|; solve the correction equation A' e = r' with a
 * Krylov method in the inner operator's space (its precision: fp32 makes
 * the solve mixed, "the single-precision solver as preconditioner of the
 * double one"; fp64 makes it a restarted solve), to |r' - A' e| <=
 * max(tol |b| / 2, inner_tol |r'|) (inner_tol only when mixed); x += e.
 * The problem supplies the outer steps, so that A' may be a reduced system
 * (the lattice's even-odd Schur complement) and r', e map to r, x through
 * it.  The inner right-hand side is LA_B of the inner space, e its LA_X. */
typedef struct {
    la_method method;
    const la_operator *inner;
    const la_precond *precond; /* LA_CG only; NULL: none                         */
    la_space *outer;
    double tol;       /* > 0                                            */
    int max_iter;     /* inner iterations in all, > 0                   */
    double inner_tol; /* 0: 1e-5                                        */
    void (*progress)(void *user, int iter, double rel_residual, int is_true);
    void *user;
    void *problem;
    /* r = b - A x and *r2 = |r|^2, one reduction point, its last step.
     * first = 1 on the first call, where x = 0: set x = 0, let r be b, *r2 =
     * |b|^2.  st: a failure of this process in the correction before, which
     * with a global sum still calls the operator, skips the level-1 work and
     * goes to the point (la_norms_finish's st), so that every process
     * returns an error there; without one st is always success. */
    clphys_status (*residual)(void *problem, int first, clphys_status st, double *r2);
    /* The inner right-hand side r' from r into b_inner; with want_norm (mixed
     * solves) also *norm2 = |r'|^2, one reduction point, its last step. */
    clphys_status (*inner_rhs)(void *problem, cl_mem b_inner, int want_norm, double *norm2);
    /* x += the correction from the inner solution e; with a global sum a
     * failure of this process alone goes on into the next residual. */
    clphys_status (*correct)(void *problem, cl_mem e);
} la_refine;

typedef struct {
    int iterations;      /* inner iterations in all                            */
    int restarts;        /* corrections applied                                */
    int applications;    /* of the inner operator or its adjoint               */
    int residuals;       /* true residuals after the first (x = 0) one         */
    double rel_residual; /* the last true |r| / |b| (0 when b = 0)             */
} la_refine_result;

/* Runs until converged, the cap, a non-finite residual, an inner solve
 * that makes no progress, or a correction after which the true residual is
 * above half the one before (stagnation at the outer precision's floor);
 * the caller compares rel_residual with tol.
 * Errors: CLPHYS_ERR_INVALID_ARGUMENT (tol or max_iter not positive, a
 * method the inner operator cannot run). */
clphys_status la_refine_solve(const la_refine *rf, la_refine_result *res);

/* Defect correction for one operator given in two precisions: A_outer on
 * the outer space and A_inner on the inner one (or A_outer itself: a
 * restarted solve in one precision); M, if not NULL, preconditions an inner
 * CG.  b and x: the caller's buffers of the outer space's length and
 * precision (not workspace vectors); b is left as it is.  Errors as
 * la_refine_solve. */
clphys_status la_solve_refined(const la_operator *A_outer, const la_operator *A_inner, const la_precond *M,
                               la_method method, cl_mem b, cl_mem x, double tol, int max_iter, double inner_tol,
                               la_refine_result *res);
/* The same with la_refine's progress report (may be NULL). */
clphys_status la_solve_refined_monitored(const la_operator *A_outer, const la_operator *A_inner, const la_precond *M,
                                         la_method method, cl_mem b, cl_mem x, double tol, int max_iter,
                                         double inner_tol,
                                         void (*progress)(void *user, int iter, double rel_residual, int is_true),
                                         void *user, la_refine_result *res);

/* ---- level-1 operations on a space (both ways unless noted) ------------- */
clphys_status la_zero(la_space *s, cl_mem x);                     /* x = 0      */
clphys_status la_copy(la_space *s, cl_mem src, cl_mem dst);       /* dst = src  */
clphys_status la_axpy(la_space *s, double a, cl_mem x, cl_mem y); /* y += a x   */
/* *r2 = |x|^2, one reduction point, blocking. */
clphys_status la_norm2(la_space *s, cl_mem x, double *r2);
/* Norms in two steps, so that a path can put other kernels between the
 * passes and still read all values at one reduction point: la_norm2_start
 * (|x|^2) and la_sub_start (r = b - t, and |r|^2 in the same pass) queue
 * their pass and leave the partial sums in `slot` (0..3; fused; with
 * clBLAST la_sub_start is a copy and an axpy and the norm waits);
 * la_norms_finish gives |v[i]|^2 for i < k from slots 0..k-1 (fused) or by
 * reading v[i] (clBLAST).  st: the caller's status since its passes (a
 * failure of one of them or of its work between): with a global sum the
 * point still joins the sum, with NaN, and every process returns an error;
 * without one la_norms_finish returns st at once. */
clphys_status la_norm2_start(la_space *s, cl_mem x, int slot);
clphys_status la_sub_start(la_space *s, cl_mem r, cl_mem b, cl_mem t, int slot);
clphys_status la_norms_finish(la_space *s, clphys_status st, int k, const cl_mem *v, double *out);
/* Between spaces of one length: dst (space d) = src (space s) in d's
 * precision; la_convert_norm also gives *norm2 = |src|^2 (one reduction
 * point; fused: the same pass); la_convert_add: e = (hi) e_lo, x += e, with
 * x, e of hi and e_lo of lo.  Errors: CLPHYS_ERR_INVALID_ARGUMENT when the
 * lengths differ. */
clphys_status la_convert(la_space *d, cl_mem dst, la_space *s, cl_mem src);
clphys_status la_convert_norm(la_space *d, cl_mem dst, la_space *s, cl_mem src, double *norm2);
clphys_status la_convert_add(la_space *hi, cl_mem x, cl_mem e, la_space *lo, cl_mem e_lo);

#endif /* CLPHYS_LINALG_H */
