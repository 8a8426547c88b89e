/*
 * clphys_gravity.h — direct-sum (O(N^2)) gravity and the N-body driver.
 * Part of the public API; include clphys.h, not this file.
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
#ifndef CLPHYS_GRAVITY_H
#define CLPHYS_GRAVITY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    CLPHYS_GRAVITY_AUTO = 0, /* tiled on GPUs/accelerators, vector on CPUs           */
    CLPHYS_GRAVITY_TILED,    /* GPU-shaped: j-tiles in local memory, i_per_item i's  */
    CLPHYS_GRAVITY_VECTOR    /* CPU-shaped: real16 over j on an SoA copy, no barriers */
} clphys_gravity_variant;

typedef struct {
    clphys_precision precision;
    clphys_gravity_variant variant;
    double G;          /* gravitational constant; 0 = 1 (N-body units)            */
    double eps;        /* Plummer softening length, >= 0                          */
    int potential;     /* 1: also compute phi (one more FMA per interaction)      */
    int work_group;    /* tiled: work-group size = tile length; 0 = from device   */
    int i_per_item;    /* tiled: i-particles per work-item, 1, 2, 4 or 8; 0 = auto */
    int unroll;        /* tiled: unroll factor of the j loop (1..WG); 0 = auto    */
    int flush_denormals; /* fp32: 1 = build with -cl-denorms-are-zero, 2 = with
                            -cl-fast-relaxed-math, -1 = neither; 0 = auto (1 on
                            GPUs)                                                 */
    int fast_rsqrt64;  /* fp64, tiled kernel: how m/r^3 is formed.  -1: OpenCL
                          rsqrt (full precision).  1: fp32 rsqrt estimate + one
                          Newton step, relative error ~1e-14, needs r^2 + eps^2
                          within the fp32 range (1e-37 .. 1e37).  2: an rsqrt
                          estimate + the second-order series for r^-3 (full fp64
                          precision, see cl/gravity.cl); the estimate is inline
                          PTX on NVIDIA, else fp32 (then the fp32-range limit
                          above applies).  0 = auto: 2 where inline PTX is on,
                          else -1.                                               */
    int inline_ptx;    /* NVIDIA GPUs: rsqrt estimates from inline PTX
                          (rsqrt.approx.ftz: fp32 rsqrt of r^2 + eps^2 below
                          1.2e-38 is flushed, i.e. infinite); 0 = auto (on for
                          NVIDIA GPUs), -1 = off, 1 = on (fails elsewhere)      */
    int j_split;       /* tiled: split the j range into S parts summed by a second
                          kernel (S x ni x real4 scratch), so that the work-groups
                          fill every compute unit evenly; 1 = never, S = 2..64 =
                          always S, 0 = auto (on GPUs: the S <= 64 that leaves the
                          fewest idle compute units in the last wave)            */
} clphys_gravity_params;

typedef struct clphys_gravity_plan clphys_gravity_plan;

/* Build the kernel for p (a zeroed struct asks for the defaults: fp32, the
 * variant chosen by device type, G = 1, eps = 0, no potential).  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (a NULL argument; eps < 0 or not finite, G not
 * finite; i_per_item not 0, 1, 2, 4 or 8; j_split outside 0..64;
 * fast_rsqrt64 or flush_denormals outside -1..2; unroll outside 0..work
 * group; a work group beyond the device's size or local memory),
 * CLPHYS_ERR_UNSUPPORTED (fp64 on a device without it), CLPHYS_ERR_BUILD,
 * CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_gravity_plan_create(clphys_context *ctx, const clphys_gravity_params *p,
                                         clphys_gravity_plan **plan);
/* Release the plan's kernels and buffers; accepts NULL. */
void clphys_gravity_plan_destroy(clphys_gravity_plan *plan);
/* The variant actually chosen, e.g. "tiled-local-i4-w256-u32-ftz-ptx" or
 * "vector-16" (suffixes: -uN unroll, -ftz flushed denormals, -fast
 * -cl-fast-relaxed-math, -ptx inline-PTX rsqrt, fp64 -nr Newton rsqrt, -s2
 * series for r^-3, -jS j range split in S, as used by the latest call).
 * "" for a NULL plan; no errors. */
const char *clphys_gravity_plan_variant(const clphys_gravity_plan *plan);

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
clphys_status clphys_gravity_compute(clphys_gravity_plan *plan, size_t ni, const double *xi, size_t nj,
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
clphys_status clphys_gravity_compute_cl(clphys_gravity_plan *plan, cl_mem xi, size_t ni, cl_mem xj, size_t nj,
                                        int i_in_j, cl_mem out, int accumulate, double *kernel_s);

/* ---- N-body driver pieces ------------------------------------------------ */
/* The arrays belong to the system: the calls below that fill one allocate
 * them, clphys_nbody_system_destroy frees them. */
typedef struct {
    size_t n;    /* particles                */
    double *x;   /* x[4*n] = (x, y, z, m)  */
    double *v;   /* v[3*n] = (vx, vy, vz)  */
} clphys_nbody_system;

/* Free s->x and s->v and zero *s (the struct itself is the caller's);
 * accepts NULL. */
void clphys_nbody_system_destroy(clphys_nbody_system *s);

/* Read the NBabel text format (nbabel.org): one particle per line,
 * `id m x y z vx vy vz`; blank lines and lines starting with '#' are skipped.
 * *s is overwritten (not freed first); on failure it is left empty.  ctx may
 * be NULL (message via clphys_last_error(NULL)).  Errors name the file and
 * line: CLPHYS_ERR_INVALID_ARGUMENT (file or s NULL), CLPHYS_ERR_IO (cannot
 * open or read), CLPHYS_ERR_FORMAT (a line longer than 4094 characters, a
 * field count other than 8, a field that is not a number), CLPHYS_ERR_INPUT
 * (NaN/inf, negative mass, total mass <= 0, no particles),
 * CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_nbody_read(clphys_context *ctx, const char *file, clphys_nbody_system *s);
/* Write the same format (id = index, %.17g: read back bit for bit) to
 * file.tmp, then rename: never a half-written file.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (file or s NULL, or n > 0 with NULL arrays),
 * CLPHYS_ERR_IO (cannot create, write or rename; file.tmp removed),
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
    double kinetic;       /* K = sum m v^2 / 2                                      */
    double potential;     /* W = sum m_i phi_i / 2                                  */
    double total;         /* E = K + W                                              */
    double virial_ratio;  /* Q = K / |W|; 0.5 in virial equilibrium                  */
    double momentum;      /* |sum m v|                                              */
} clphys_nbody_energy;
/* Energies of s from pot[s->n] (e.g. from clphys_gravity_compute with
 * p.potential).  Errors: CLPHYS_ERR_INVALID_ARGUMENT (s, pot or e NULL, or
 * n > 0 with NULL arrays); ctx may be NULL. */
clphys_status clphys_nbody_energy_of(clphys_context *ctx, const clphys_nbody_system *s, const double *pot,
                                     clphys_nbody_energy *e);

#ifdef __cplusplus
}
#endif

#endif /* CLPHYS_GRAVITY_H */
