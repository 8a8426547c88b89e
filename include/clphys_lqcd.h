/*
 * clphys_lqcd.h — lattice QCD: SU(3) gauge fields, the Wilson-Dirac operator
 * (full lattice and even-odd), Krylov solvers, gauge files (NERSC, ILDG, MILC).
 * Part of the public API, included by clphys.h; it also compiles alone.
 *
 * Conventions (H. Matsufuru's KEK 2008 seed; Chroma/QDP++ for the basis):
 *  - Lattice Lx x Ly x Lz x Lt, every extent even and >= 2.  Host site index
 *    (lexicographic) site = x + Lx*(y + Ly*(z + Lz*t)), x fastest, as in NERSC
 *    files.  Direction mu = 0,1,2,3 is x,y,z,t.  Links are periodic; the fermion
 *    boundary of each direction is periodic, antiperiodic or a U(1) phase
 *    (plan parameters, clphys_lqcd_bc below).
 *  - Boundary phases: psi(x + L_mu mu) = exp(i theta_mu) psi(x) enters the
 *    hopping term as a phase, never through the links (a link times -1 is
 *    not in SU(3), and reconstruct-12 would rebuild its third row wrongly):
 *    the forward hop from x_mu = L_mu - 1 is multiplied by exp(i theta_mu),
 *    the backward hop from x_mu = 0 by exp(-i theta_mu), so D stays
 *    gamma5-hermitian (theta = pi: antiperiodic; Chroma's twisted boundary
 *    with phases_by_pi = theta / pi).
 *  - Host gauge field (double): u[((site*4 + mu)*3 + a)*3 + b] is the complex
 *    U_mu(x)_{ab}, stored as 2 doubles (re, im) — i.e. an array
 *    double[V][4][3][3][2].
 *  - Host spinor (double): psi[(site*4 + s)*3 + c] complex -> double[V][4][3][2].
 *  - Gamma basis: DeGrand-Rossi (chiral) basis of Chroma/QDP++ (QDP++ Gamma(1),
 *    Gamma(2), Gamma(4), Gamma(8) for x, y, z, t).  Each gamma_mu has one
 *    entry per row, row r -> column col, phase:
 *      gamma_x: 0->3 +i, 1->2 +i, 2->1 -i, 3->0 -i
 *      gamma_y: 0->3 -1, 1->2 +1, 2->1 +1, 3->0 -1
 *      gamma_z: 0->2 +i, 1->3 -i, 2->0 -i, 3->1 +i
 *      gamma_t: 0->2 +1, 1->3 +1, 2->0 +1, 3->1 +1
 *    gamma_5 = gamma_x gamma_y gamma_z gamma_t = diag(1, 1, -1, -1).
 *  - Hopping term (Matsufuru; Chroma's Dslash):
 *      H psi(x) = sum_mu [(1 - gamma_mu) U_mu(x) psi(x+mu)
 *                         + (1 + gamma_mu) U_mu(x-mu)^dagger psi(x-mu)],
 *    Wilson-Dirac operator D = 1 - kappa H.  Flop convention: 1320 per site for
 *    H (1368 for D), spin projection halves the colour work.
 *  - Even-odd: parity p = (x+y+z+t) mod 2, even = 0.  Checkerboard index
 *    cb = site/2 within a parity.  H_eo maps odd -> even sites, H_oe even -> odd.
 *    Preconditioned (Schur) operator on even sites
 *      M = 1 - kappa^2 H_eo H_oe;   D x = b  <=>  M x_e = b_e + kappa H_eo b_o,
 *      x_o = b_o + kappa H_oe x_e.
 *  - Device layout (structure of arrays, site index innermost, coalesced): a
 *    full spinor is complex (s*3 + c)*V + p*V/2 + cb; a half (one parity)
 *    spinor complex (s*3 + c)*V/2 + cb; complex = 2 reals of the plan's
 *    precision.  Links: complex (mu*NC + a*3 + b)*V + p*V/2 + cb with NC = 9
 *    (reconstruct-18) or NC = 6 (reconstruct-12: rows 0 and 1 stored, row 2 =
 *    conj(row0 x row1), exact for SU(3)).  With layout CLPHYS_LQCD_AOS (array of
 *    structures, for CPUs) a spinor is complex s*12 + (s_spin*3 + c) with s the
 *    even-odd site (p*V/2 + cb, or cb in a half field) and a link complex
 *    (s*4 + mu)*NC + a*3 + b.
 */
#ifndef CLPHYS_LQCD_H
#define CLPHYS_LQCD_H

#include "clphys_core.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- gauge fields (host, double) --------------------------------------- */
typedef struct {
    int dims[4];   /* Lx, Ly, Lz, Lt                                       */
    size_t volume; /* sites, Lx*Ly*Lz*Lt                                   */
    double *u;     /* double[volume][4][3][3][2], see above; owned         */
} clphys_lqcd_gauge_field;

/* Allocate a unit (cold) field.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (g or
 * dims NULL, an extent odd or < 2, the volume above 2^31: the kernels index
 * sites with 32 bits), CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_lqcd_gauge_create(const int dims[4], clphys_lqcd_gauge_field *g);
/* Free the links (g itself is the caller's); NULL and a destroyed field are
 * accepted.  No errors. */
void clphys_lqcd_gauge_destroy(clphys_lqcd_gauge_field *g);
/* The functions below take a field made by clphys_lqcd_gauge_create or
 * clphys_lqcd_gauge_read and have no errors. */
void clphys_lqcd_gauge_cold(clphys_lqcd_gauge_field *g); /* all U = 1 */
/* Independent random SU(3) links (hot start) from a seed: Gram-Schmidt of a
 * complex Gaussian matrix's rows, third row = conj(row0 x row1).  The field
 * depends on the seed only, not on the number of threads. */
void clphys_lqcd_gauge_hot(clphys_lqcd_gauge_field *g, uint64_t seed);
/* Project every link back onto SU(3) (Gram-Schmidt rows 0,1; row 2 as above). */
void clphys_lqcd_gauge_reunitarize(clphys_lqcd_gauge_field *g);
/* Average plaquette (1/3) Re tr U_mu(x) U_nu(x+mu) U_mu(x+nu)^+ U_nu(x)^+ over
 * all sites and the 6 planes mu < nu; 1 on a cold start.  Computed on the
 * host's threads (OpenMP), summed in a fixed order: the result does not
 * depend on the number of threads. */
double clphys_lqcd_gauge_plaquette(const clphys_lqcd_gauge_field *g);
/* Average link trace (1/3) Re tr U_mu(x) over sites and directions. */
double clphys_lqcd_gauge_link_trace(const clphys_lqcd_gauge_field *g);
/* Largest |U U^+ - 1| entry and |det U - 1| over all links (unitarity check);
 * NaN when an entry is NaN, so that `violation <= tol` fails. */
double clphys_lqcd_gauge_unitarity_violation(const clphys_lqcd_gauge_field *g);

/* ---- process grid (runs over MPI ranks: clphys_lqcd_mpi.h) ---------------
 * grid[mu] ranks along direction mu (the QUDA/Grid convention, e.g.
 * 1x1x2x2); rank r sits at coord with r = c0 + P0 (c1 + P1 (c2 + P2 c3))
 * (x fastest, like sites) and holds the sites with coord[mu] local[mu] <=
 * x_mu < (coord[mu] + 1) local[mu], local[mu] = dims[mu] / grid[mu], in its
 * own lexicographic and even-odd order: every local extent is even, so a
 * site has the same parity on its rank and on the whole lattice.
 * clphys_lqcd_grid_local gives local and coord of rank (either may be
 * NULL).  Errors: CLPHYS_ERR_INVALID_ARGUMENT naming the direction (an
 * entry of grid < 1, an extent not divisible by its entry, a local extent
 * odd or < 2), or rank outside 0 .. product of grid - 1; messages:
 * clphys_last_error(NULL). */
clphys_status clphys_lqcd_grid_local(const int dims[4], const int grid[4], int rank, int local[4], int coord[4]);

/* ---- gauge files: NERSC, ILDG, MILC -----------------------------------------
 * Every format holds the links U_mu(x) in site order t,z,y,x (x fastest),
 * mu = 0..3 (x,y,z,t) per site, each a row-major 3x3 complex matrix.
 *  - NERSC: ASCII header BEGIN_HEADER ... END_HEADER with DIMENSION_1..4,
 *    DATATYPE 4D_SU3_GAUGE (rows 0,1 stored, row 2 = conj(row0 x row1)) or
 *    4D_SU3_GAUGE_3x3, FLOATING_POINT IEEE32BIG|IEEE64BIG (also
 *    IEEE32LITTLE|IEEE64LITTLE, and IEEE32|IEEE64 = big), CHECKSUM (hex),
 *    PLAQUETTE, LINK_TRACE; then the link data, then nothing but whitespace.
 *    CHECKSUM is the sum mod 2^32 of the 32-bit words of the link data as
 *    stored (the two rows of 4D_SU3_GAUGE, all of 3x3), in the file's
 *    precision (the convention of e.g. PyQUDA's NERSC reader).
 *  - ILDG: LIME records (ILDG file format 1.1, lqcd.org/ildg): ildg-format
 *    (XML: field su3gauge, precision 32|64, lx ly lz lt), ildg-binary-data
 *    (big-endian 3x3 links), and, when present, the SciDAC checksum record
 *    scidac-checksum (suma/sumb: CRC32 of each site's bytes rotated by its
 *    lexicographic rank mod 29 and mod 31, XORed; QIO's convention).
 *  - MILC: version-5 binary (MILC code's io_lat4.c, its binary_samples):
 *    int32 magic 20103 (its byte order is the file's), dims[4], a 64-byte
 *    time stamp, int32 order (0 = natural site order, the only one read),
 *    uint32 sum29 and sum31, then fp32 3x3 links.  The checksums XOR each
 *    32-bit word rotated left by (72 site + k) mod 29 (mod 31).
 * Files are read from regular files only (a pipe, FIFO or device is
 * refused: its size cannot be checked first).  A NERSC header key that
 * clphys reads (DIMENSION_n, DATATYPE, FLOATING_POINT, CHECKSUM, PLAQUETTE,
 * LINK_TRACE) given twice is refused; ILDG XML is read as XML (comments
 * skipped, every element closed by its own end tag, given once).
 * What is verified on reading, always: the data size against the file's
 * size before anything is allocated (a header cannot make the reader
 * allocate more than the file holds), every link entry finite, every link
 * in SU(3) to CLPHYS_LQCD_GAUGE_UNITARITY_TOL_FP32 (fp32 data) or
 * CLPHYS_LQCD_GAUGE_UNITARITY_TOL_FP64 (|U U^+ - 1| entries and |det U - 1|), and
 * whatever the file carries of checksum, plaquette and link trace
 * (plaquette and trace to 1e-6 x max(|value|, 1): headers print ~10
 * digits).  A file that carries no checksum (NERSC: CHECKSUM missing, or
 * 0 while the data's sum is not; ILDG: no scidac-checksum record; MILC:
 * both sums 0 while the data's are not), or a NERSC file without PLAQUETTE
 * or LINK_TRACE, cannot be verified: it is refused unless allow_unverified
 * is set, and then info->unverified says what was missing.  A checksum,
 * plaquette or trace that is present and wrong is an error, unless
 * allow_unverified is set: then no claim of the header is held against the
 * data, and info->unverified names each one skipped with the data's value
 * (e.g. "LINK_TRACE = 0 skipped (the data's is 0.3)").  A CHECKSUM of 0
 * that the data's sum matches is verified (a cold field of even extents
 * can sum to 0 mod 2^32). */
#define CLPHYS_LQCD_GAUGE_UNITARITY_TOL_FP32 1e-5
#define CLPHYS_LQCD_GAUGE_UNITARITY_TOL_FP64 1e-10

typedef enum {
    CLPHYS_LQCD_GAUGE_FILE_AUTO = 0, /* reading: from the file's first bytes      */
    CLPHYS_LQCD_GAUGE_FILE_NERSC = 1,
    CLPHYS_LQCD_GAUGE_FILE_ILDG = 2,
    CLPHYS_LQCD_GAUGE_FILE_MILC = 3 /* read only                                 */
} clphys_lqcd_gauge_file_format;

/* A zeroed struct: format detected, an unverifiable file refused. */
typedef struct {
    size_t struct_size; /* sizeof this struct (CLPHYS_PARAMS_INIT), or 0 */
    clphys_lqcd_gauge_file_format format;
    int allow_unverified; /* 1: read a file that carries no checksum,
                             and skip (and name) the header's claims
                             that disagree (the CLI's --no-checksum)   */
} clphys_lqcd_gauge_read_params;

/* What a read found. */
typedef struct {
    clphys_lqcd_gauge_file_format format;
    clphys_precision precision; /* of the data in the file                   */
    int rows;                   /* 2 (NERSC 4D_SU3_GAUGE) or 3               */
    int checksum_verified;      /* 1: the file's checksum matched the data   */
    int plaquette_verified;     /* 1: a plaquette in the file matched         */
    int link_trace_verified;    /* 1: a link trace in the file matched        */
    double unitarity;           /* clphys_lqcd_gauge_unitarity_violation of it    */
    char unverified[256];       /* "" or what could not be verified or was
                                   skipped, e.g. "CHECKSUM = 0, no
                                   LINK_TRACE"                               */
} clphys_lqcd_gauge_file_info;

/* Read a gauge file in any of the formats above; *g is created by the call
 * (release it with clphys_lqcd_gauge_destroy; on error it is left empty).  p and
 * info may be NULL (defaults; nothing reported).  Errors, each naming the
 * file and the check that failed: CLPHYS_ERR_IO (cannot open or read, not
 * a regular file),
 * CLPHYS_ERR_FORMAT (not a gauge file of a known format, a malformed or
 * inconsistent header, a size that disagrees with the file, non-finite or
 * non-unitary links, a checksum, plaquette or link trace that disagrees,
 * an unverifiable file without allow_unverified), CLPHYS_ERR_INPUT
 * (dimensions the library does not take: each extent even and >= 2, the
 * volume <= 2^31), CLPHYS_ERR_INVALID_ARGUMENT (NULL file or g),
 * CLPHYS_ERR_OUT_OF_MEMORY.  Messages: clphys_last_error(NULL). */
clphys_status clphys_lqcd_gauge_read(const char *file, const clphys_lqcd_gauge_read_params *p,
                                     clphys_lqcd_gauge_field *g, clphys_lqcd_gauge_file_info *info);
/* The format of a file from its first bytes (CLPHYS_LQCD_GAUGE_FILE_AUTO when it
 * is none of them).  Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL),
 * CLPHYS_ERR_IO (cannot open, or not a regular file: a pipe is not read,
 * so nothing of it is consumed). */
clphys_status clphys_lqcd_gauge_file_detect(const char *file, clphys_lqcd_gauge_file_format *format);
/* Write g as NERSC (rows 2 or 3 stored) or ILDG (rows must be 3), in
 * precision (big-endian IEEE), with the checksum, plaquette and link trace
 * of the data as a reader will see it; through clphys_output_open/close (a
 * temporary FILE.tmp.PID, then renamed), so FILE is never half written.  Writing then reading gives back the same
 * bits (fp64, 3 rows) and the same file again.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL, format AUTO or MILC, rows not 2 or 3,
 * ILDG with 2 rows, links whose clphys_lqcd_gauge_unitarity_violation is above
 * the readers' tolerance for that precision, CLPHYS_LQCD_GAUGE_UNITARITY_TOL_FP32
 * or _FP64: fp32 links written as fp64 need clphys_lqcd_gauge_reunitarize first), CLPHYS_ERR_IO (cannot create, write
 * or rename; no file is left behind), CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_lqcd_gauge_write(const char *file, const clphys_lqcd_gauge_field *g,
                                      clphys_lqcd_gauge_file_format format, clphys_precision precision, int rows);
/* "nersc", "ildg", "milc" ("auto" for AUTO, "unknown" otherwise). */
const char *clphys_lqcd_gauge_file_format_name(clphys_lqcd_gauge_file_format format);
/* NERSC only, every check required (clphys_lqcd_gauge_read with format NERSC and
 * a zeroed rest); and clphys_lqcd_gauge_write with format NERSC. */
clphys_status clphys_lqcd_gauge_read_nersc(const char *file, clphys_lqcd_gauge_field *g);
clphys_status clphys_lqcd_gauge_write_nersc(const char *file, const clphys_lqcd_gauge_field *g,
                                            clphys_precision precision, int rows);

/* ---- Wilson-Dirac operator ------------------------------------------------ */
typedef struct clphys_lqcd_dslash_plan clphys_lqcd_dslash_plan;

/* The fermion boundary of one direction. */
typedef enum {
    CLPHYS_LQCD_BC_AUTO = 0,     /* periodic in x, y, z, antiperiodic in t (the
                               usual fermion boundary: p,p,p,a)               */
    CLPHYS_LQCD_BC_PERIODIC,     /* theta = 0                                      */
    CLPHYS_LQCD_BC_ANTIPERIODIC, /* theta = pi                                     */
    CLPHYS_LQCD_BC_PHASE         /* theta = pi * bc_phase_by_pi[mu]                */
} clphys_lqcd_bc;

/* A zeroed struct with kappa set is a valid plan: fp32, reconstruct-12,
 * the device's layout, boundary p,p,p,a, the tuned work-group size. */
typedef struct {
    size_t struct_size; /* sizeof this struct (CLPHYS_PARAMS_INIT), or 0 */
    clphys_precision precision;
    int reconstruct;          /* 12 or 18; 0 = 12 (the least memory traffic;
                                 faster on the H100 at both sizes and precisions
                                 of docs/performance.md)                        */
    double kappa;             /* hopping parameter, > 0; no default             */
    clphys_lqcd_bc bc[4];     /* fermion boundary of x, y, z, t                 */
    double bc_phase_by_pi[4]; /* theta_mu / pi for CLPHYS_LQCD_BC_PHASE, finite     */
    size_t local_size;        /* work-group size; 0 = tuned (see below),
                                 CLPHYS_LQCD_DSLASH_WG_RUNTIME = the runtime's choice */
    int layout;               /* CLPHYS_LQCD_LAYOUT_AUTO (SoA on GPUs, AoS on
                                 CPUs, where it is the faster on PoCL),
                                 CLPHYS_LQCD_SOA or CLPHYS_LQCD_AOS              */
    int no_tune;              /* 1: with local_size 0, skip the measurement and
                                 use the heuristic (64 on GPUs, runtime's choice
                                 on CPUs); so does CLPHYS_NO_TUNE=1 in the env  */
    int halo_half;            /* 1: an fp32 plan over several devices
                                 (clphys_lqcd_dslash_plan_create_multi) exchanges its
                                 faces in 16 bits, as QUDA's half-precision
                                 halos: per face site the 12 reals as 16-bit
                                 fixed-point fractions of their largest
                                 magnitude, and that magnitude in fp32 (28 bytes
                                 instead of 48; error 2^-16 of the site's
                                 largest component on the remote hops).  For
                                 the inner operator of mixed-precision solves.
                                 Ignored by fp64 plans, one device and MPI ranks */
} clphys_lqcd_dslash_params;

enum { CLPHYS_LQCD_LAYOUT_AUTO = 0, CLPHYS_LQCD_SOA = 1, CLPHYS_LQCD_AOS = 2 };
#define CLPHYS_LQCD_DSLASH_WG_RUNTIME ((size_t)-1)

/* Deprecated (kept for one release): where a plan's work-group size came
 * from is a clphys_tune_source (clphys.h), the same for every path. */
#define CLPHYS_LQCD_DSLASH_WG_GIVEN     CLPHYS_TUNE_GIVEN
#define CLPHYS_LQCD_DSLASH_WG_HEURISTIC CLPHYS_TUNE_HEURISTIC
#define CLPHYS_LQCD_DSLASH_WG_MEASURED  CLPHYS_TUNE_MEASURED
#define CLPHYS_LQCD_DSLASH_WG_CACHED    CLPHYS_TUNE_CACHE

/* Upload g (converted to the precision and compression) and build the kernels.
 * Work-group size tuning (local_size 0, tuning enabled): the half-lattice
 * hopping term is timed with profiling events for 32, 64, 128, 256, 512 (up
 * to what the kernel accepts) and the runtime's choice, after a warm-up
 * each, in 9 interleaved rounds (each size once per round, so that a
 * shared machine's drift falls on all); the fastest by median is used (on
 * CPU devices only when it beats the heuristic by more than 10%, the spread
 * of the ranking from one process to the next) and stored in the tuning cache of every
 * path (one file per device in the program cache folder, tune-HASH.txt:
 * $CLPHYS_CACHE_DIR, else $XDG_CACHE_HOME/clphys, else ~/.cache/clphys;
 * CLPHYS_NO_CACHE=1: measure every time, store nothing), keyed by precision,
 * reconstruct, layout and lattice (and, on a rank of a process grid, its
 * split directions: the interior kernel is timed).  A cache file that is damaged or foreign
 * is ignored and rewritten (written to a temporary file and renamed).
 * Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL, reconstruct not 0/12/18, an
 * unknown layout or boundary, a phase not finite, kappa not > 0, an extent
 * of g odd or < 2, local size above the device maximum),
 * CLPHYS_ERR_UNSUPPORTED (fp64 on a device without it),
 * CLPHYS_ERR_BUILD, CLPHYS_ERR_OUT_OF_MEMORY, CLPHYS_ERR_OPENCL. */
clphys_status clphys_lqcd_dslash_plan_create(clphys_context *ctx, const clphys_lqcd_gauge_field *g,
                                             const clphys_lqcd_dslash_params *p, clphys_lqcd_dslash_plan **plan);
/* Wilson-Dirac plans over n devices of this process, one context each
 * (clphys_contexts_create; one device named twice gives two contexts on
 * it): the lattice of the whole field g is split by grid (product n,
 * clphys_lqcd_grid_local: device k holds the sublattice of rank k), and
 * plans[k] is device k's, its fields that sublattice (host arrays as for
 * clphys_lqcd_dslash_plan_create with the local extents and local lexicographic
 * sites).  Each face of a hop is read from its device into one page-locked
 * buffer and written from that same buffer into the neighbour device, on
 * a queue of its own (GPUs) while the interior kernel runs; then the
 * exterior kernel adds the remote hops (Babich et al., SC'11, as
 * clphys_lqcd_mpi.h; the host staging is that of FluidX3D, an OpenCL
 * lattice-Boltzmann code that drives several GPUs from one process).
 *
 * The plans are used like those of clphys_lqcd_dslash_plan_create_mpi, with
 * threads in place of ranks: clphys_lqcd_dslash_apply(_split, _host) and the
 * solvers (clphys_lqcd_solver_plan_create with plans64[k] and plans32[k] of two
 * groups over the same contexts, b and x device k's local spinors) are
 * collective over the group: n host threads, thread k on plans[k], call
 * the same functions in the same order.  The solvers' reductions are sums
 * over the devices on the host, added in device order (the same on every
 * device); iteration counts and residuals are global.  A failure on one
 * device marks the group failed: that call returns its cause, every other
 * device's current or next collective call returns CLPHYS_ERR_OPENCL
 * ("another device of the group failed"); destroy the plans then.  Do not
 * call the plans of a group from one thread in turn: the first hop waits
 * for the other devices' faces.
 *
 * Release every plan with clphys_lqcd_dslash_plan_destroy (after the threads
 * are done; the page-locked buffers go with the group's last plan), before
 * the contexts.  Errors (no plan made; message in clphys_last_error(NULL)
 * and of ctxs[0]): CLPHYS_ERR_INVALID_ARGUMENT (NULL, n outside 1..16, a
 * grid whose product is not n or that does not divide the lattice), and
 * those of clphys_lqcd_dslash_plan_create on any device. */
clphys_status clphys_lqcd_dslash_plan_create_multi(int n, clphys_context *const *ctxs, const int grid[4],
                                                   const clphys_lqcd_gauge_field *g, const clphys_lqcd_dslash_params *p,
                                                   clphys_lqcd_dslash_plan **plans);
/* Release the plan (NULL accepted).  No errors. */
void clphys_lqcd_dslash_plan_destroy(clphys_lqcd_dslash_plan *plan);
/* The work-group size in use (0: the runtime's choice); *source, if
 * non-NULL, receives where it came from, a clphys_tune_source value.  No
 * errors (plan NULL gives 0). */
size_t clphys_lqcd_dslash_local_size(const clphys_lqcd_dslash_plan *plan, int *source);
/* Where the plan's work-group size came from: the params' local_size
 * (GIVEN), the tuning cache, a measurement at plan creation, or the
 * heuristic (also for NULL).  No errors. */
clphys_tune_source clphys_lqcd_dslash_plan_tune_source(const clphys_lqcd_dslash_plan *plan);
/* Time the half hop at every work-group size the kernel accepts (as plan
 * creation does) on one hot lattice (GPUs 32^4, CPUs 16^4; quick: 16^4 and
 * 8^4) in both precisions (quick: reconstruct-12 only,
 * else 12 and 18), and write the fastest into the tuning cache (clphys.h,
 * "Tuning"), replacing what a plan measured before; plans of that lattice
 * then read it.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL ctx), those of
 * clphys_lqcd_dslash_plan_create, CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_lqcd_dslash_tune(clphys_context *ctx, const clphys_tune_options *opt);
/* Change the work-group size (0: the runtime's choice), e.g. while tuning.
 * Errors: CLPHYS_ERR_INVALID_ARGUMENT (plan NULL, above the device's
 * maximum); a size the kernel cannot launch shows as CLPHYS_ERR_OPENCL at
 * the next application. */
clphys_status clphys_lqcd_dslash_set_local_size(clphys_lqcd_dslash_plan *plan, size_t local_size);

typedef enum {
    CLPHYS_LQCD_DSLASH_HOPPING = 0, /* out = H in (full lattice)                     */
    CLPHYS_LQCD_DSLASH_WILSON,      /* out = D in = in - kappa H in (full lattice)   */
    CLPHYS_LQCD_DSLASH_H_EO,        /* out_even = H_eo in_odd   (half fields)        */
    CLPHYS_LQCD_DSLASH_H_OE,        /* out_odd  = H_oe in_even  (half fields)        */
    CLPHYS_LQCD_DSLASH_EO_PREC      /* out_even = (1 - kappa^2 H_eo H_oe) in_even    */
} clphys_lqcd_dslash_op;

/* Number of complex values in a device field: 12*V (full) or 6*V (half).
 * No errors (plan NULL gives 0). */
size_t clphys_lqcd_dslash_field_complex(const clphys_lqcd_dslash_plan *plan, int half);
/* Allocate a device field (full or half) of the plan's precision; the
 * caller releases it (clReleaseMemObject).  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL), CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_lqcd_dslash_field_create(clphys_lqcd_dslash_plan *plan, int half, cl_mem *field);
/* Host spinor (double[V][4][3][2], lexicographic) <-> device full field, or,
 * with parity 0/1, <-> the half field of that parity (parity -1 = full).
 * Both wait for the transfer.  The first of them on a plan allocates a host
 * staging array of one full field in the plan's precision (page-locked
 * where the runtime offers it), kept until the plan is destroyed; so two
 * threads must not transfer through one plan at once.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL, parity not -1/0/1),
 * CLPHYS_ERR_OUT_OF_MEMORY, CLPHYS_ERR_OPENCL. */
clphys_status clphys_lqcd_dslash_field_write(clphys_lqcd_dslash_plan *plan, cl_mem field, int parity,
                                             const double *psi);
clphys_status clphys_lqcd_dslash_field_read(clphys_lqcd_dslash_plan *plan, cl_mem field, int parity, double *psi);
/* Apply op on device fields (out != in; full fields for HOPPING and
 * WILSON, half fields otherwise).  kernel_s, if non-NULL: the call waits
 * and SETS *kernel_s to the summed profiled time of its kernels (EO_PREC:
 * two), in seconds.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL field, out ==
 * in, unknown op), CLPHYS_ERR_OPENCL. */
clphys_status clphys_lqcd_dslash_apply(clphys_lqcd_dslash_plan *plan, clphys_lqcd_dslash_op op, cl_mem out, cl_mem in,
                                       double *kernel_s);
/* One application split into its parts, for plans over MPI ranks
 * (clphys_lqcd_mpi.h): the interior kernel runs while the spin-projected
 * faces travel between ranks, then the exterior kernel adds the hops whose
 * neighbour is on another rank (Babich et al., SC'11).  On one rank the
 * whole hop is the interior and the other parts are 0.  Times in seconds,
 * summed over the hops of the call (EO_PREC: two). */
typedef struct {
    double interior_s;   /* profiled: the hopping kernel (hops within the rank) */
    double pack_s;       /* profiled: spin projection of the faces to send      */
    double exterior_s;   /* profiled: the hops from the received faces          */
    double d2h_s, h2d_s; /* profiled: packed faces to the host, received ones back */
    double mpi_s;        /* over MPI ranks, host clock: messages posted
                            (MPI_Irecv/MPI_Isend) to all complete; over the
                            devices of one process (multi), profiled: the
                            exchange's span, first face copy down starting to
                            last face copy up ending                             */
    double exposed_s;    /* the exchange not hidden: the device idle between the
                            interior kernel's end and the exterior's start
                            (profiled clock of the queue)                       */
    double wall_s;       /* host clock, the whole call, waited for              */
    size_t halo_bytes;   /* sent by this rank (12 reals per face site)          */
    int messages;        /* sent by this rank                                   */
    int hops;            /* half- or full-lattice hops in the call              */
    size_t sites;        /* output sites of those hops, this rank               */
    size_t face_sites;   /* of them, the sites with a neighbour on another rank */
} clphys_lqcd_dslash_split;

/* Apply op as clphys_lqcd_dslash_apply, wait, and SET *split (zeroed first).
 * Errors: those of clphys_lqcd_dslash_apply; CLPHYS_ERR_INVALID_ARGUMENT for
 * split NULL. */
clphys_status clphys_lqcd_dslash_apply_split(clphys_lqcd_dslash_plan *plan, clphys_lqcd_dslash_op op, cl_mem out,
                                             cl_mem in, clphys_lqcd_dslash_split *split);
/* Host convenience: full-lattice op on host spinors (double[V][4][3][2]).
 * Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL, op not HOPPING or WILSON),
 * CLPHYS_ERR_OUT_OF_MEMORY, CLPHYS_ERR_OPENCL. */
clphys_status clphys_lqcd_dslash_apply_host(clphys_lqcd_dslash_plan *plan, clphys_lqcd_dslash_op op, double *out,
                                            const double *in);

/* ---- solvers: D x = b on the even-odd system ------------------------------
 * An fp64 defect-correction loop computes the true residual r = b - D x in
 * fp64 on both parities, solves the even-odd system M e_e = r_e + kappa
 * H_eo r_o (M = 1 - kappa^2 H_eo H_oe) approximately with CGNR or BiCGStab
 * (in fp32 when mixed: the single-precision solver as preconditioner of the
 * double one, Matsufuru 2008), sets e_o = r_o + kappa H_oe e_e and x += e,
 * until |r| / |b| <= tol.  The Krylov solvers and level-1 BLAS are those of
 * the library's linear-algebra layer. */
typedef enum {
    CLPHYS_LQCD_SOLVER_AUTO = 0, /* CGNR: converges for any invertible D          */
    CLPHYS_LQCD_SOLVER_CGNR,     /* CG on M^+ M, M^+ = gamma5 M gamma5            */
    CLPHYS_LQCD_SOLVER_BICGSTAB  /* BiCGStab (van der Vorst 1992) on M: fewer
                               applications of M, may break down (then the
                               outer loop restarts it)                       */
} clphys_lqcd_solver_kind;

/* How the level-1 work (updates, dot products, norms) runs. */
typedef enum {
    CLPHYS_LQCD_SOLVER_BLAS_AUTO = 0, /* fused on every device: measured faster on the
                                    H100 in all four solver rows and on PoCL in
                                    three of four (bench/lqcd-notes.md)          */
    CLPHYS_LQCD_SOLVER_BLAS_FUSED,    /* cl/linalg_blas1.cl: updates and the reductions after
                                    them in one pass; scalars on the device, the
                                    host waits once per iteration (convergence) */
    CLPHYS_LQCD_SOLVER_BLAS_CLBLAST   /* clBLAST on the context's queue, scalars on
                                    the host, a blocking read per reduction      */
} clphys_lqcd_solver_blas;

/* A zeroed struct asks for CGNR to 1e-10 with fused level-1 kernels in fp64. */
typedef struct {
    size_t struct_size; /* sizeof this struct (CLPHYS_PARAMS_INIT), or 0          */
    clphys_lqcd_solver_kind kind;
    double tol;       /* target |b - D x| / |b| (true fp64 residual); 0 = 1e-10 */
    int max_iter;     /* cap on inner Krylov iterations in all; 0 = 10000 */
    int mixed;        /* 1: fp32 inner solves in fp64 defect correction  */
    double inner_tol; /* relative reduction per inner solve (mixed), 0 = 1e-5 */
    clphys_lqcd_solver_blas blas;
    /* Called (may be NULL) after every Krylov iteration with the iterated
     * residual estimate |r'_e - M e_e| / |b| (is_true = 0), and at every
     * defect-correction cycle with the true fp64 |b - D x| / |b| (is_true = 1). */
    void (*progress)(void *user, int iter, double rel_residual, int is_true);
    void *user;
} clphys_lqcd_solver_params;

typedef struct {
    int iterations;      /* Krylov iterations, all restarts together       */
    int restarts;        /* defect-correction cycles                       */
    double rel_residual; /* true |b - D x| / |b| in fp64 at the end         */
    double seconds;      /* wall time of the whole call: host b in to host
                            x out (upload, layout conversion, solve, true
                            residual, download); with clphys_lqcd_solve
                            also the workspace allocation                  */
    double iterate_s;    /* wall time of the solve proper, fields on device */
    double upload_s;     /* b: host -> device fields, both parities         */
    double download_s;   /* x: device fields -> host                        */
    double gflops;       /* 1368 flops per site per D application counted   */
} clphys_lqcd_solver_result;

/* A solver plan owns the device workspace (fp64 and, when mixed, fp32 half
 * fields, the host-layout transfer buffer, a page-locked staging array of
 * 24 V doubles), so that repeated solves with the same gauge field allocate
 * and build nothing: a solve copies b into the staging array (all threads),
 * uploads it, changes the layout on the device, iterates and checks the
 * true residual on the device (reductions read back a few kilobytes of
 * partial sums), and downloads x the same way.  plan64 must be CLPHYS_FP64;
 * plan32 (fp32, same lattice, layout, kappa and boundary) is needed when
 * params->mixed and ignored otherwise (may be NULL).  The dslash plans must
 * outlive the solver plan.  Plans over MPI ranks (clphys_lqcd_mpi.h) make a
 * distributed solver: b and x are then each rank's part, every call is
 * collective and every reduction sums over the ranks.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL, plan64
 * not fp64, plan32 missing or not matching for mixed (over another grid too), tol, max_iter or
 * inner_tol negative, an unknown kind or blas), CLPHYS_ERR_UNSUPPORTED (no
 * fp64 on the device), CLPHYS_ERR_BUILD, CLPHYS_ERR_OUT_OF_MEMORY,
 * CLPHYS_ERR_OPENCL. */
typedef struct clphys_lqcd_solver_plan clphys_lqcd_solver_plan;
clphys_status clphys_lqcd_solver_plan_create(clphys_lqcd_dslash_plan *plan64, clphys_lqcd_dslash_plan *plan32,
                                             const clphys_lqcd_solver_params *params, clphys_lqcd_solver_plan **plan);
/* Solve D x = b with the plan's parameters.  b, x: host spinors
 * double[V][4][3][2]; x is the solution (its input value is ignored).  *res
 * is filled also on failure.  Errors: CLPHYS_ERR_NOT_CONVERGED with the
 * residual reached when max_iter is exhausted (or a breakdown left no
 * progress), CLPHYS_ERR_INVALID_ARGUMENT (NULL), CLPHYS_ERR_OPENCL. */
clphys_status clphys_lqcd_solver_solve(clphys_lqcd_solver_plan *plan, const double *b, double *x,
                                       clphys_lqcd_solver_result *res);
/* Release the plan (NULL accepted).  No errors. */
void clphys_lqcd_solver_plan_destroy(clphys_lqcd_solver_plan *plan);

/* One-shot form of clphys_lqcd_solver_plan_create / _solve / _destroy: arguments
 * and errors as there. */
clphys_status clphys_lqcd_solve(clphys_lqcd_dslash_plan *plan64, clphys_lqcd_dslash_plan *plan32,
                                const clphys_lqcd_solver_params *params, const double *b, double *x,
                                clphys_lqcd_solver_result *res);

#ifdef __cplusplus
}
#endif

#ifndef CLPHYS_NO_DEPRECATED
#include "clphys_deprecated.h" /* the old names, one release (docs/naming.md) */
#endif
#endif /* CLPHYS_LQCD_H */
