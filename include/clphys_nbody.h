/*
 * clphys_nbody.h — direct-sum (O(N^2)) gravity and the N-body driver.
 * Part of the public API, included by clphys.h; it also compiles alone.
 *
 * Physics (Miki, Takahashi & Mori, Procedia Comput. Sci. 9, 96 (2012), eq. 1;
 * Nyland, Harris & Prins, GPU Gems 3, ch. 31 (2007)):
 *   a_i   =  sum_j G m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2)
 *   phi_i = -sum_{j != i} G m_j / sqrt(|x_j - x_i|^2 + eps^2)
 * The self term of phi (-G m_i / eps when eps > 0) is removed exactly; with
 * eps = 0 the self pair (r = 0) is skipped by a select, not a branch.  Any
 * consistent units; the driver uses N-body units (G = M = 1, E = -1/4).
 *
 * Layouts.  Host arrays (double): positions x[4*n] = (x, y, z, m) per particle;
 * accelerations acc[3*n] = (ax, ay, az); potentials pot[n].  Device buffers
 * (cl_mem, the plan's precision real = float or double): positions real4[n]
 * (x, y, z, m); results real4[ni] = (ax, ay, az, phi).
 */
#ifndef CLPHYS_NBODY_H
#define CLPHYS_NBODY_H

#include "clphys_core.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CLPHYS_NBODY_GRAVITY_AUTO = 0, /* the tuning cache (clphys_nbody_gravity_tune), else tiled on
                                GPUs/accelerators, vector on CPUs                   */
    CLPHYS_NBODY_GRAVITY_TILED,    /* GPU-shaped: j-tiles in local memory, i_per_item i's  */
    CLPHYS_NBODY_GRAVITY_VECTOR    /* CPU-shaped: real16 over j on an SoA copy, no barriers */
} clphys_nbody_gravity_variant;

typedef struct {
    size_t struct_size; /* sizeof this struct (CLPHYS_PARAMS_INIT), or 0          */
    clphys_precision precision;
    clphys_nbody_gravity_variant variant;
    double G;            /* gravitational constant; 0 = 1 (N-body units)            */
    double eps;          /* Plummer softening length, >= 0                          */
    int potential;       /* 1: also compute phi (one more FMA per interaction)      */
    int work_group;      /* tiled: work-group size = tile length; 0 = from device   */
    int i_per_item;      /* tiled: i-particles per work-item, 1, 2, 4 or 8; 0 = auto */
    int unroll;          /* tiled: unroll factor of the j loop (1..WG); 0 = auto    */
    int flush_denormals; /* fp32: 1 = build with -cl-denorms-are-zero, 2 = with
                            -cl-fast-relaxed-math, -1 = neither; 0 = auto (1 on
                            GPUs)                                                 */
    int fast_rsqrt64;    /* fp64, tiled kernel: how m/r^3 is formed.  -1: OpenCL
                            rsqrt (full precision).  1: fp32 rsqrt estimate + one
                            Newton step, relative error ~1e-14, needs r^2 + eps^2
                            within the fp32 range (1e-37 .. 1e37).  2: an rsqrt
                            estimate + the second-order series for r^-3 (full fp64
                            precision, see cl/nbody_gravity.cl); the estimate is inline
                            PTX on NVIDIA, else fp32 (then the fp32-range limit
                            above applies).  0 = auto: 2 where inline PTX is on,
                            else -1.                                               */
    int inline_ptx;      /* NVIDIA GPUs: rsqrt estimates from inline PTX
                            (rsqrt.approx.ftz: fp32 rsqrt of r^2 + eps^2 below
                            1.2e-38 is flushed, i.e. infinite); 0 = auto (on for
                            NVIDIA GPUs), -1 = off, 1 = on (fails elsewhere)      */
    int j_split;         /* tiled: split the j range into S parts summed by a second
                            kernel (S x ni x real4 scratch), so that the work-groups
                            fill every compute unit evenly; 1 = never, S = 2..64 =
                            always S, 0 = auto (on GPUs: the S <= 64 that leaves the
                            fewest idle compute units in the last wave)            */
    size_t n_hint;       /* particles per call the plan is for (the larger of ni and
                            nj; <= 2^31 - 1): with variant AUTO and i_per_item,
                            work_group, unroll and j_split 0, the shape tuned for
                            the nearest size (clphys_nbody_gravity_tune); 0 = the shape
                            tuned for the largest size; no entry: the defaults  */
} clphys_nbody_gravity_params;

typedef struct clphys_nbody_gravity_plan clphys_nbody_gravity_plan;

/* Build the kernel for p (a zeroed struct asks for the defaults: fp32, the
 * variant chosen by device type, G = 1, eps = 0, no potential).  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (a NULL argument; eps < 0 or not finite, G not
 * finite; i_per_item not 0, 1, 2, 4 or 8; j_split outside 0..64;
 * fast_rsqrt64 or flush_denormals outside -1..2; unroll outside 0..work
 * group; a work group beyond the device's size or local memory),
 * CLPHYS_ERR_UNSUPPORTED (fp64 on a device without it; a tiled kernel the
 * compiler made unable to run its work group), CLPHYS_ERR_BUILD,
 * CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_nbody_gravity_plan_create(clphys_context *ctx, const clphys_nbody_gravity_params *p,
                                               clphys_nbody_gravity_plan **plan);
/* Release the plan's kernels and buffers; accepts NULL. */
void clphys_nbody_gravity_plan_destroy(clphys_nbody_gravity_plan *plan);
/* The variant actually chosen, e.g. "tiled-local-i4-w256-u32-ftz-ptx" or
 * "vector-16" (suffixes: -uN unroll, -ftz flushed denormals, -fast
 * -cl-fast-relaxed-math, -ptx inline-PTX rsqrt, fp64 -nr Newton rsqrt, -s2
 * series for r^-3, -jS j range split in S, as used by the latest call).
 * "" for a NULL plan; no errors. */
const char *clphys_nbody_gravity_plan_variant(const clphys_nbody_gravity_plan *plan);

/* Where the plan's kernel shape came from: the params (any of variant,
 * i_per_item, work_group, unroll, j_split given), the tuning cache, or the
 * heuristic (also for NULL); gravity plans do not measure at creation.  No
 * errors. */
clphys_tune_source clphys_nbody_gravity_plan_tune_source(const clphys_nbody_gravity_plan *plan);
/* Deprecated (kept for one release): clphys_nbody_gravity_plan_tune_source(plan)
 * == CLPHYS_TUNE_CACHE.  No errors (0 for NULL). */
int clphys_nbody_gravity_plan_tuned(const clphys_nbody_gravity_plan *plan);

/* Time the kernel shapes (tiled: i-particles per work-item, unroll, work
 * group, j split; and the vector kernel on CPUs) at a few sizes in both
 * precisions, each candidate's accelerations checked against the first
 * one's, and write the fastest per precision and size into the tuning
 * cache (clphys.h, "Tuning"); plans then take it for AUTO.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL ctx), CLPHYS_ERR_VERIFY (the default
 * shape did not run), CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_nbody_gravity_tune(clphys_context *ctx, const clphys_tune_options *opt);

/* Host arrays.  xi == NULL: the i-set is the j-set (ni ignored; self term
 * removed).  Otherwise xi[4*ni] is a different set (no self term).  acc[3*ni]
 * (required) and pot[ni] (may be NULL; needs p.potential) are overwritten, or
 * added to when accumulate != 0.  ni and nj are at most 2^31 - 1 (the
 * kernels index particles with int).  The call waits for its result.
 * kernel_s, when non-NULL, is SET to the summed profiled time of the kernels
 * this call launched (clphys.h).  Errors: CLPHYS_ERR_INVALID_ARGUMENT (plan,
 * xj or acc NULL; a count above 2^31 - 1; xi NULL with nj = 0; pot asked of a
 * plan without p.potential), CLPHYS_ERR_INPUT (the positions are checked: a
 * NaN/inf coordinate or mass, a negative mass, or with eps = 0 and
 * check_coincident != 0 two particles at the same point; the message names
 * the particle(s)), CLPHYS_ERR_OUT_OF_MEMORY (host staging, device buffers),
 * CLPHYS_ERR_OPENCL. */
clphys_status clphys_nbody_gravity_compute(clphys_nbody_gravity_plan *plan, size_t ni, const double *xi, size_t nj,
                                           const double *xj, double *acc, double *pot, int accumulate,
                                           int check_coincident, double *kernel_s);

/* Caller-owned device buffers (used in place, nothing copied): xi real4[ni],
 * xj real4[nj], out real4[ni] = (ax, ay, az, phi) written or, with accumulate,
 * added to; ni, nj at most 2^31 - 1.  i_in_j != 0 says particle k of xi is
 * also in xj (remove the self term).  No input checking.  kernel_s: when
 * non-NULL the call waits for its kernels and SETS *kernel_s to their summed
 * profiled time; when NULL the kernels may still be queued on return.
 * Errors: CLPHYS_ERR_INVALID_ARGUMENT (plan or a buffer NULL, a count above
 * 2^31 - 1), CLPHYS_ERR_OUT_OF_MEMORY (the j split's scratch, the vector
 * kernel's SoA copy), CLPHYS_ERR_OPENCL (e.g. a buffer smaller than its
 * count). */
clphys_status clphys_nbody_gravity_compute_cl(clphys_nbody_gravity_plan *plan, cl_mem xi, size_t ni, cl_mem xj,
                                              size_t nj, int i_in_j, cl_mem out, int accumulate, double *kernel_s);

/* ---- Several devices, two command queues each ---------------------------
 * The seed's two-stream scheme (Miki, Takahashi & Mori, sec. 3, Fig. 3) over
 * any number of OpenCL devices in one process: the i-particles are split
 * between the devices in proportion to their measured speed; the
 * j-particles are streamed to every device in blocks; each device has
 * `queues` in-order command queues (lanes), and block b goes to lane
 * b % queues: its upload and kernel run while the other lane's kernel does,
 * and while MPI exchanges the next block (clphys_nbody_mpi.h).  Each lane
 * accumulates into its own result buffer (no atomics); the lanes and
 * devices are summed on the host in double precision in a fixed order, so
 * the split between devices changes a result only through the kernel's own
 * order of j (none when it sums j in order: j_split = 1 or the vector
 * kernel, then any split gives the same bits).  A device
 * short of i-particles (below ~8192 on the seed's M2090) leaves compute
 * units idle that the second lane's kernel can fill: the seed's
 * super-linear effect.  Lane 0 uses the caller's context and queue; lane 1 a
 * second queue on the same OpenCL context. */
typedef struct clphys_nbody_gravity_multi clphys_nbody_gravity_multi;

/* Per-call timing of the multi-device and MPI calls (seconds, this process). */
typedef struct {
    double total_s;       /* wall time of the call                                  */
    double kernel_s;      /* summed profiled time of its kernels over devices and
                             lanes (END - START each; concurrent kernels both count,
                             so it may exceed total_s)                              */
    double kernel_span_s; /* from the first kernel's START to the last one's END
                          on the device where that is longest (profiling clock):
                          the kernels' wall time, concurrency and gaps included */
    double exchange_s;    /* MPI: wall time from posting each exchange to seeing it
                             complete, summed over the exchanges (0 without MPI)    */
    double exposed_s;     /* MPI: of exchange_s, the time the rank waited with no
                             kernel of its own running: the exchange not hidden     */
    double bytes_sent;    /* MPI: bytes this rank sent                              */
    int exchanges;        /* MPI: exchange stages (messages to one partner each)    */
    int kernels;          /* gravity calls launched, summed over devices            */
} clphys_nbody_gravity_timing;

/* A plan over the ndev contexts of ctxs (one device each; a device may
 * appear twice through two contexts), each with `queues` lanes (1 or 2; 0
 * means 2) and one gravity plan per lane made from p.  With ndev > 1 each
 * device's speed is measured at creation (one kernel of 4096 particles on a
 * GPU, 1024 on a CPU, fastest of 3) and the i-particles are split in
 * proportion (clphys_nbody_gravity_multi_weights reads or sets the weights).  The
 * contexts stay the caller's and must outlive the plan.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL, ndev < 1 or above 64, queues outside
 * 0..2, a NULL context, and those of clphys_nbody_gravity_plan_create), and those
 * of clphys_nbody_gravity_plan_create on each device.  Messages of this call and
 * of the others below: clphys_last_error(ctxs[0]). */
clphys_status clphys_nbody_gravity_multi_create(clphys_context *const *ctxs, int ndev, int queues,
                                                const clphys_nbody_gravity_params *p, clphys_nbody_gravity_multi **m);
/* Release the plans, queues and buffers; accepts NULL. */
void clphys_nbody_gravity_multi_destroy(clphys_nbody_gravity_multi *m);
/* The weights of the i split, one per device (any positive scale): set[ndev]
 * (may be NULL) replaces them, then get[ndev] (may be NULL) receives them
 * normalised to sum 1.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (m NULL; a weight
 * not finite or negative, or all zero). */
clphys_status clphys_nbody_gravity_multi_weights(clphys_nbody_gravity_multi *m, const double *set, double *get);
/* Devices and lanes: *ndev, *queues (either may be NULL); the variant of
 * device 0's kernel (clphys_nbody_gravity_plan_variant) is returned.  "" for NULL. */
const char *clphys_nbody_gravity_multi_info(const clphys_nbody_gravity_multi *m, int *ndev, int *queues);
/* As clphys_nbody_gravity_compute (same layouts, checks and self-term rule: xi NULL
 * means the i-set is the j-set), over the plan's devices with the j-set
 * streamed in blocks of j_block particles (0: nj / (2 x queues), rounded up to
 * a multiple of 256), block b on lane b % queues.  acc and pot are
 * overwritten (pot may be NULL; needs p.potential).  timing may be NULL.
 * Waits for its result.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (m, xj or acc
 * NULL, a count above 2^31 - 1, xi NULL with nj = 0, pot without
 * p.potential), CLPHYS_ERR_INPUT (as clphys_nbody_gravity_compute, without the
 * coincidence check), CLPHYS_ERR_OUT_OF_MEMORY, CLPHYS_ERR_OPENCL (the
 * message names the device). */
clphys_status clphys_nbody_gravity_multi_compute(clphys_nbody_gravity_multi *m, size_t ni, const double *xi, size_t nj,
                                                 const double *xj, size_t j_block, double *acc, double *pot,
                                                 clphys_nbody_gravity_timing *timing);

/* ---- Exchange algorithms between MPI ranks and their performance model ---
 * Each of P ranks owns a block of particles and needs the force of all of
 * them; the j-blocks travel by one of (clphys_nbody_mpi.h):
 *  RING       the seed's transport stage (Fig. 4): P - 1 steps, each sending
 *             the block just received to rank + 1 and receiving the next from
 *             rank - 1 (MPI_Isend/MPI_Irecv) while the kernel works on the
 *             current one.
 *  DOUBLING   the accumulation stage (Fig. 5, 6): stage k sends everything
 *             gathered so far, so the set doubles and ceil(log2 P) exchanges
 *             suffice.  P a power of two: partner = rank XOR 2^k (the seed's
 *             pairs).  Other P: the dissemination order of Bruck et al. (IEEE
 *             TPDS 8, 1143 (1997)): send to rank + 2^k, receive from rank -
 *             2^k (mod P), the last stage carrying only the P - 2^k blocks
 *             still missing; every block still arrives exactly once.
 *  HYBRID     the seed's combination: DOUBLING inside aligned groups of G
 *             ranks (G a power of two dividing P), then RING between the P/G
 *             groups, one group's gathered set per step.  G = 1 is RING and
 *             G = P (a power of two) is DOUBLING.
 *  ALLGATHER  the plain baseline: MPI_Allgatherv of every block, then one
 *             kernel over all j; nothing overlapped.
 * AUTO is HYBRID with the largest power of two dividing P as G. */
typedef enum {
    CLPHYS_NBODY_GRAVITY_EXCHANGE_AUTO = 0,
    CLPHYS_NBODY_GRAVITY_EXCHANGE_RING,
    CLPHYS_NBODY_GRAVITY_EXCHANGE_DOUBLING,
    CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID,
    CLPHYS_NBODY_GRAVITY_EXCHANGE_ALLGATHER
} clphys_nbody_gravity_exchange;

/* "auto", "ring", "doubling", "hybrid", "allgather"; "" for another value. */
const char *clphys_nbody_gravity_exchange_name(clphys_nbody_gravity_exchange e);

/* The performance model of one distributed force calculation (the seed's
 * sec. 6, made general): the schedule of the chosen exchange for `ranks`
 * ranks of n particles each is replayed in time.  Exchange k takes
 * latency_s + bytes_k / bandwidth (one latency per message) and starts when
 * the host has posted it, i.e. once exchange k - 1 has arrived (its data is
 * forwarded); the kernel of each received block takes t_calc_s * nj / n and
 * runs on lane b % 2 once its block has arrived and the lane's previous
 * kernel is done; while two kernels overlap, they share the device at a
 * total rate of `concurrency` (1: no gain, 2: each as fast as alone — the
 * seed's idle compute units below 8192 particles per GPU).  ranks_per_device
 * k > 1 (ranks sharing one device, time-sliced) multiplies every kernel time
 * by k.  The step ends when the last kernel has, plus t_sync_s once.  With
 * concurrency 2, zero network time and t_sync 0 this gives the seed's upper
 * bound regime; with concurrency 1 and a hidden network, efficiency 1. */
typedef struct {
    clphys_nbody_gravity_exchange exchange;
    int group;                    /* HYBRID: G, as in clphys_nbody_gravity_mpi_create      */
    int ranks;                    /* P >= 1                                          */
    int ranks_per_device;         /* k >= 1; 0 means 1                               */
    double n;                     /* particles per rank                              */
    double t_calc_s;              /* one kernel of n i- x n j-particles, device alone */
    double concurrency;           /* two lanes' throughput / one lane's, 1..2; 0 = 1 */
    double latency_s;             /* per message                                     */
    double bandwidth_bytes_per_s; /* 0 = infinite                                */
    double bytes_per_particle;    /* 16 (fp32 real4) or 32 (fp64 real4)          */
    double t_sync_s;              /* e.g. clphys_mpi_measure_sync's t_sync_s         */
} clphys_nbody_gravity_model;

typedef struct {
    double step_s;     /* predicted wall time of one force calculation            */
    double kernel_s;   /* kernel time of the rank alone (sum, as if serial)       */
    double exchange_s; /* summed exchange times                                   */
    double exposed_s;  /* time with an exchange outstanding and no kernel running */
    double efficiency; /* ranks * ranks_per_device * t_calc_s / step_s: the
                          interactions per second of the P / k devices against
                          P / k times one device's at n particles in one kernel,
                          i.e. the seed's weak-scaling P(N/P; P) / (P(N/P; 1) P)
                          as its eqs. 6-7 write it (k = 1)                       */
    int exchanges;
} clphys_nbody_gravity_prediction;

/* Predict *out from *m.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL; ranks < 1
 * or above 2^20; n, t_calc_s, latency, bandwidth, bytes or t_sync negative
 * or not finite; concurrency outside 0..2; an invalid group). */
clphys_status clphys_nbody_gravity_model_predict(const clphys_nbody_gravity_model *m,
                                                 clphys_nbody_gravity_prediction *out);

/* ---- N-body driver pieces ------------------------------------------------ */
/* The arrays belong to the system: the calls below that fill one allocate
 * them, clphys_nbody_system_destroy frees them. */
typedef struct {
    size_t n;  /* particles                */
    double *x; /* x[4*n] = (x, y, z, m)  */
    double *v; /* v[3*n] = (vx, vy, vz)  */
} clphys_nbody_system;

/* Free s->x and s->v and zero *s (the struct itself is the caller's);
 * accepts NULL. */
void clphys_nbody_system_destroy(clphys_nbody_system *s);

/* Read the NBabel text format (nbabel.org): one particle per line,
 * `id m x y z vx vy vz`; blank lines and lines starting with '#' are skipped;
 * a gzip-compressed file is read as its text, through zlib.
 * *s is overwritten (not freed first); on failure it is left empty.  ctx may
 * be NULL (message via clphys_last_error(NULL)).  Errors name the file and
 * line: CLPHYS_ERR_INVALID_ARGUMENT (file or s NULL), CLPHYS_ERR_IO (cannot
 * open or read), CLPHYS_ERR_FORMAT (a line longer than 4094 characters, a
 * NUL or control byte (binary data), a truncated or damaged gzip stream, a
 * field count other than 8, a field that is not
 * a number), CLPHYS_ERR_INPUT (NaN/inf, negative mass, total mass <= 0, no
 * particles, a mass, coordinate or velocity above 1e100 in magnitude, a
 * coordinate other than 0 below 1e-100 in magnitude: the bounds that keep
 * m v^2 and r^2 finite and nonzero in double precision),
 * CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_nbody_read(clphys_context *ctx, const char *file, clphys_nbody_system *s);
/* Write the same format (id = index, %.17g: read back bit for bit) through
 * clphys_output_open/close (a temporary FILE.tmp.PID, then renamed: never a
 * half-written file).  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (file or s NULL, or n > 0 with NULL arrays),
 * CLPHYS_ERR_IO (file not a regular file, cannot create, write or rename,
 * saying why, e.g. "No space left on device"; the temporary file removed),
 * CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_nbody_write(clphys_context *ctx, const char *file, const clphys_nbody_system *s);
/* Plummer sphere (Aarseth, Henon & Wielen, A&A 37, 183 (1974)) of n equal
 * masses in N-body units (G = M = 1, scale a = 3 pi / 16 so E = -1/4), moved
 * to the centre-of-mass frame; deterministic for a seed.  *s is overwritten
 * (not freed first).  Errors: CLPHYS_ERR_INVALID_ARGUMENT (s NULL or n = 0),
 * CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_nbody_plummer(clphys_context *ctx, size_t n, uint64_t seed, clphys_nbody_system *s);

/* Energies of a system given phi per particle (phi as defined above). */
typedef struct {
    double kinetic;      /* K = sum m v^2 / 2                                      */
    double potential;    /* W = sum m_i phi_i / 2                                  */
    double total;        /* E = K + W                                              */
    double virial_ratio; /* Q = K / |W|; 0.5 in virial equilibrium                  */
    double momentum;     /* |sum m v|                                              */
} clphys_nbody_energy;
/* Energies of s from pot[s->n] (e.g. from clphys_nbody_gravity_compute with
 * p.potential).  Errors: CLPHYS_ERR_INVALID_ARGUMENT (s, pot or e NULL, or
 * n > 0 with NULL arrays); ctx may be NULL. */
clphys_status clphys_nbody_energy_of(clphys_context *ctx, const clphys_nbody_system *s, const double *pot,
                                     clphys_nbody_energy *e);

#ifdef __cplusplus
}
#endif

#ifndef CLPHYS_NO_DEPRECATED
#include "clphys_deprecated.h" /* the old names, one release (docs/naming.md) */
#endif
#endif /* CLPHYS_NBODY_H */
