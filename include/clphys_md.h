/*
 * clphys_md.h — cell list, Verlet neighbour list, Lennard-Jones forces and
 * velocity-Verlet molecular dynamics (part of the public API; included by
 * clphys.h).
 *
 * Geometry: a periodic orthorhombic box [0,Lx) x [0,Ly) x [0,Lz) (MD: [lo,
 * hi)); positions outside it are wrapped.  Host positions are arrays of n*3
 * doubles (x0 y0 z0 x1 ...), in the caller's order; results come back in
 * that order.  An MD plan can instead work on the application's own device
 * buffers (clphys_md_buffers).  Inside a plan the particles are kept sorted
 * by cell (counting sort, the permutation kept), which is the grid search of
 * Watanabe, Suzuki & Ito, Prog. Theor. Phys. 126, 203 (2011): cell edge >=
 * r_search, 27 cells.  Each box edge must be >= 2 r_search (minimum image),
 * else CLPHYS_ERR_INPUT.
 */
#ifndef CLPHYS_MD_H
#define CLPHYS_MD_H

#include "clphys_core.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- neighbour list -------------------------------------------------------
 * Verlet list (Verlet, Phys. Rev. 159, 98 (1967)) of every pair within
 * r_search = r_cut + skin, from the cell list. */
typedef enum {
    CLPHYS_MD_NEIGHBOR_FULL = 0, /* every i lists every j within r_search          */
    CLPHYS_MD_NEIGHBOR_HALF = 1  /* each pair once (by sorted index, j > i)        */
} clphys_md_neighbor_kind;

typedef enum {
    CLPHYS_MD_NEIGHBOR_CSR = 0,        /* list[offset[i] .. offset[i+1])             */
    CLPHYS_MD_NEIGHBOR_TRANSPOSED = 1, /* list[k * n + i], k < count[i] <= capacity  */
    CLPHYS_MD_NEIGHBOR_STAGED = 2      /* as TRANSPOSED, but each entry is the slot of
                                       j in the local-memory stage of i's block of
                                       cells (cl/platform_stage.h); full lists only; for
                                       the full-staged LJ variant                 */
} clphys_md_neighbor_layout;

/* The list-building kernel. */
typedef enum {
    CLPHYS_MD_NEIGHBOR_BUILD_AUTO = 0, /* the tuning cache (clphys_md_neighbor_tune),
                                       else cpu on CPUs, item elsewhere          */
    CLPHYS_MD_NEIGHBOR_BUILD_ITEM,     /* one work-item per particle, a candidate
                                       at a time (cl/md_neighbor_list.cl)           */
    CLPHYS_MD_NEIGHBOR_BUILD_CPU       /* the candidates of a cell tested in explicit
                                       vectors, the same rows (cl/md_neighbor_cpu.cl);
                                       PoCL runs it 2-5x faster, Intel's CPU
                                       runtime, which vectorizes across
                                       work-items itself, 2.4-5x slower          */
} clphys_md_neighbor_build_kernel;

typedef struct {
    size_t struct_size; /* sizeof this struct (CLPHYS_PARAMS_INIT), or 0 */
    size_t n;           /* particles, 1 .. 2^31 - 1                   */
    double box[3];      /* Lx Ly Lz, each >= 2 r_search               */
    double r_search;    /* r_cut + skin (length units)                */
    clphys_md_neighbor_kind kind;
    clphys_md_neighbor_layout layout;
    clphys_precision precision;            /* of the positions on the device             */
    size_t capacity;                       /* list entries per particle to start with;
                                              0 = estimated; grows on overflow           */
    int block_cells;                       /* STAGED: cells per block along x; 0 = chosen
                                              so a block holds ~96 particles and its stage
                                              fits local memory                          */
    clphys_md_neighbor_build_kernel build; /* CSR and TRANSPOSED layouts            */
} clphys_md_neighbor_params;

typedef struct clphys_md_neighbor_plan clphys_md_neighbor_plan;

/* Make a plan: device buffers for n particles and the list's kernels.  The
 * cells have edges >= r_search and number at most 8 n + 64 (larger cells in
 * a box that is vast for its particles: memory follows n, not the box).
 * Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL, n = 0 or >= 2^31, r_search <= 0,
 * unknown layout, staged with a half list), CLPHYS_ERR_INPUT (a box edge
 * < 2 r_search), CLPHYS_ERR_UNSUPPORTED (fp64 missing; a staged block that
 * cannot fit local memory), CLPHYS_ERR_BUILD. */
clphys_status clphys_md_neighbor_plan_create(clphys_context *ctx, const clphys_md_neighbor_params *p,
                                             clphys_md_neighbor_plan **plan);
void clphys_md_neighbor_plan_destroy(clphys_md_neighbor_plan *plan); /* NULL-safe */
/* Upload pos (n*3 doubles x0 y0 z0 x1 ..., caller order, any coordinates:
 * wrapped into the box), sort by cell, build the list; waits for it.  When a
 * particle has more neighbours than the capacity (the device's overflow
 * counter), the list grows and is rebuilt: never truncated.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL), CLPHYS_ERR_INPUT (a non-finite
 * coordinate, naming the particle), CLPHYS_ERR_OVERFLOW (the list would
 * exceed the device's largest allocation). */
clphys_status clphys_md_neighbor_build(clphys_md_neighbor_plan *plan, const double *pos);
/* Pairs stored (full: sum of counts; half: number of pairs), the capacity
 * now in use (entries per particle) and how many times the list grew; each
 * pointer may be NULL.  A transposed or staged list's pairs are summed from
 * its counts, read back from the device for the call (4 n bytes).  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (plan NULL); reading the counts:
 * CLPHYS_ERR_OUT_OF_MEMORY, CLPHYS_ERR_OPENCL. */
clphys_status clphys_md_neighbor_stats(const clphys_md_neighbor_plan *plan, size_t *pairs, size_t *capacity,
                                       int *growths);
/* Profiled kernel time of the last build (sort + list, growth included), s;
 * 0 for NULL. */
double clphys_md_neighbor_build_seconds(const clphys_md_neighbor_plan *plan);
/* The list in CSR form in caller indices: offsets[n + 1], list[pairs] (pairs
 * from clphys_md_neighbor_stats).  For a half list, each pair appears once,
 * under one of its two particles.  Host round trip.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL). */
clphys_status clphys_md_neighbor_get(clphys_md_neighbor_plan *plan, size_t *offsets, int *list);
/* The build kernel in use ("item" or "cpu"; "staged" for that layout) and
 * where it came from (clphys_tune_source_name: "given", "tuning cache",
 * "heuristic"): "cpu (heuristic)".  "" for NULL; the string stays the
 * plan's.  No errors. */
const char *clphys_md_neighbor_plan_choice(const clphys_md_neighbor_plan *plan);
/* Where the build kernel came from: the params (build given, or the staged
 * layout), the tuning cache, or the heuristic (also for NULL); neighbour
 * plans do not measure at creation.  No errors. */
clphys_tune_source clphys_md_neighbor_plan_tune_source(const clphys_md_neighbor_plan *plan);
/* The seed benchmark's input (bench/md-notes.md): fcc at number density
 * rho with m = floor(edge / a) unit cells per side, a = (4 / rho)^(1/3), 4
 * atoms per cell, each coordinate jittered by 0.1 u, u uniform in [0, 1)
 * from a 64-bit LCG seeded by rho.  Sets *n = 4 m^3 and box (the cube of
 * edge m a); pos NULL: only those, else pos[3 n] receives the positions.
 * Errors: CLPHYS_ERR_INVALID_ARGUMENT (n or box NULL, rho or edge not > 0,
 * edge shorter than one cell, more than 2^31 - 1 atoms). */
clphys_status clphys_md_lj_seed_input(double rho, double edge, size_t *n, double box[3], double *pos);
/* Time the list builds (clphys_md_neighbor_build_kernel) of full and half,
 * CSR and transposed lists at the seed's densities 0.5 and 1.0 (GPUs: box
 * edge 50, the seed's size; CPUs 20; quick: 30 and 14) and write
 * the faster per precision, size and density class into the tuning cache
 * (clphys.h, "Tuning").  Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL ctx),
 * those of the plans (a candidate the device cannot run is skipped). */
clphys_status clphys_md_neighbor_tune(clphys_context *ctx, const clphys_tune_options *opt);

/* Shuffle each particle's neighbour order (the seed benchmark's worst case
 * for caches), deterministically from seed.  Host round trip.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (plan NULL). */
clphys_status clphys_md_neighbor_shuffle(clphys_md_neighbor_plan *plan, uint64_t seed);

/* ---- Lennard-Jones forces --------------------------------------------------
 * U(r) = 4 eps [(sigma/r)^12 - (sigma/r)^6] - shift for r < r_cut, 0 beyond;
 * shift = 0 (LAMMPS lj/cut, the default) or U(r_cut) when shifted.
 * F_i = sum_j 24 eps [2 (sigma/r)^12 - (sigma/r)^6] / r^2 (x_i - x_j).
 * Virial W = sum over pairs r_ij . F_ij (pressure P = (2 KE + W) / (3 V)).
 * Each variant runs the kernel of its name (lj_full_csr for full-csr, ...)
 * in cl/md_lj.cl, cl/md_lj_cpu.cl for cpu. */
typedef enum {
    CLPHYS_MD_LJ_AUTO = 0,        /* the tuning cache (clphys_md_lj_tune), else
                                  full-transposed on GPUs, cpu on CPUs          */
    CLPHYS_MD_LJ_FULL_CSR,        /* one work-item per i, full CSR list             */
    CLPHYS_MD_LJ_FULL_TRANSPOSED, /* one work-item per i, list[k*n+i]: coalesced    */
    CLPHYS_MD_LJ_FULL_GROUP,      /* group_size work-items share i, local reduction */
    CLPHYS_MD_LJ_HALF_CAS,        /* third law, atomic add from compare-exchange:
                                  each pair once (half list taken from the full
                                  list by half-space), j forces summed per block
                                  of cells in local memory, one global exchange
                                  per particle and block (cl/md_half_slot.cl makes
                                  its lists)                                    */
    CLPHYS_MD_LJ_HALF_FIXEDPOINT, /* third law, int64 fixed point: bit-identical    */
    CLPHYS_MD_LJ_CPU,             /* CPU-shaped: block of i, vectors over j (full)  */
    CLPHYS_MD_LJ_FULL_STAGED,     /* work-group per block of cells, neighbours'
                                  positions staged in local memory (full list)  */
    CLPHYS_MD_LJ_NVARIANTS        /* the variants are 1 .. CLPHYS_MD_LJ_NVARIANTS - 1 */
} clphys_md_lj_variant;

/* Order of the half-cas slot lists (cl/md_half_slot.cl), derived after every
 * list build: a warp runs as long as its longest row, and in fp64 its
 * exchanges bunch into its first steps when the entries within r_cut come
 * first. */
typedef enum {
    CLPHYS_MD_LJ_ORDER_AUTO = 0,    /* fp64: BOTH; fp32: SORTED_ROWS                  */
    CLPHYS_MD_LJ_ORDER_PLAIN,       /* rows in cell order, entries in list order     */
    CLPHYS_MD_LJ_ORDER_CUT_FIRST,   /* in each row, the entries within r_cut first   */
    CLPHYS_MD_LJ_ORDER_SORTED_ROWS, /* rows of a block by descending list length     */
    CLPHYS_MD_LJ_ORDER_BOTH         /* CUT_FIRST and SORTED_ROWS                     */
} clphys_md_lj_slot_order;

typedef struct {
    size_t struct_size;    /* sizeof this struct (CLPHYS_PARAMS_INIT), or 0 */
    size_t n;              /* particles, >= 1                               */
    double box[3];         /* Lx Ly Lz (length units)                       */
    double epsilon, sigma; /* LJ units; 0 means 1                           */
    double r_cut, skin;    /* list built to r_cut + skin                    */
    int shifted;           /* 1: U(r_cut) subtracted                        */
    clphys_precision precision;
    clphys_md_lj_variant variant; /* 0 = CLPHYS_MD_LJ_AUTO                            */
    int group_size;               /* full-group: work-items per i (power of 2,
                                     0 = 8); other variants ignore it              */
    int work_group_size;          /* 0 = tuned, else 256 on GPUs, 16 on CPUs;
                                     full-staged: 128; half-cas: 0 = from the
                                     block's mean particle count                   */
    /* half-cas only; 0 = auto: the tuning cache for this device, precision,
     * size and density class (clphys_md_lj_tune), else the defaults below (the
     * best choice changes with density, bench/md-notes.md): */
    clphys_md_lj_slot_order slot_order;
    int defer_exchanges; /* 0 = auto = 1: off; 2: an entry's local
                            exchanges examined only after the next
                            pair's arithmetic                             */
    int entries_ahead;   /* list entries each work-item loads ahead of
                            use, 2 .. 4 (auto: 2)                         */
} clphys_md_lj_params;

typedef struct {
    double potential_energy; /* total, not per atom                           */
    double virial;           /* W = sum over pairs r_ij . F_ij                */
} clphys_md_lj_result;

typedef struct clphys_md_lj_plan clphys_md_lj_plan;

/* Make a plan: its neighbour plan (the list the variant reads), kernels and
 * force buffers.  Errors: as clphys_md_neighbor_plan_create, plus
 * CLPHYS_ERR_INVALID_ARGUMENT (r_cut <= 0, skin < 0, epsilon or sigma < 0,
 * unknown variant, group_size not a power of 2 dividing work_group_size,
 * half-cas options out of range), CLPHYS_ERR_UNSUPPORTED (half-cas in fp64
 * and half-fixedpoint need cl_khr_int64_base_atomics; half-cas needs more
 * local memory than the device has; the compiled kernel cannot run the
 * work-group size asked). */
clphys_status clphys_md_lj_plan_create(clphys_context *ctx, const clphys_md_lj_params *p, clphys_md_lj_plan **plan);
void clphys_md_lj_plan_destroy(clphys_md_lj_plan *plan); /* NULL-safe */
/* Upload positions (n*3 doubles, caller order) and build the neighbour
 * list.  Errors: as clphys_md_neighbor_build. */
clphys_status clphys_md_lj_set_positions(clphys_md_lj_plan *plan, const double *pos);
/* Upload new positions (n*3 doubles, caller order) keeping the current list
 * and cell order (the caller guarantees no particle moved more than skin/2
 * since the last build).  Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL). */
clphys_status clphys_md_lj_update_positions(clphys_md_lj_plan *plan, const double *pos);
/* Evaluate forces, energy and virial on the device with the current list.
 * kernel_s non-NULL: the call waits and sets *kernel_s to the profiled time
 * of its kernels (s); NULL: the kernels stay queued (back-to-back calls;
 * time them with clphys_context_span_begin/_end; clphys_md_lj_get waits for
 * them).  Errors: CLPHYS_ERR_INVALID_ARGUMENT (plan NULL). */
clphys_status clphys_md_lj_evaluate(clphys_md_lj_plan *plan, double *kernel_s);
/* Read back: forces (n*3 doubles, caller order, energy units / length; may
 * be NULL) and totals (may be NULL).  Errors: CLPHYS_ERR_INVALID_ARGUMENT
 * (plan NULL), CLPHYS_ERR_INPUT (a non-finite force: overlapping atoms; the
 * message names the particle and its nearest neighbour),
 * CLPHYS_ERR_OVERFLOW (half-fixedpoint: a force beyond its fixed-point
 * range). */
clphys_status clphys_md_lj_get(clphys_md_lj_plan *plan, double *forces, clphys_md_lj_result *res);
/* set_positions + evaluate + get; errors as those. */
clphys_status clphys_md_lj_compute(clphys_md_lj_plan *plan, const double *pos, double *forces,
                                   clphys_md_lj_result *res);
/* half-cas sums the j forces of a block of cells in local accumulators,
 * one per particle of the block's neighbourhood, within the device's local
 * memory; particles beyond that go to global memory directly (correct,
 * slower).  *slots: how many, summed over this plan's evaluations (0 for
 * the other variants).  Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL). */
clphys_status clphys_md_lj_overflow(clphys_md_lj_plan *plan, size_t *slots);
/* The plan's neighbour list (e.g. to shuffle it or read its stats); NULL
 * for NULL. */
clphys_md_neighbor_plan *clphys_md_lj_neighbor(clphys_md_lj_plan *plan);
/* Variant actually used (AUTO resolved). */
clphys_md_lj_variant clphys_md_lj_plan_variant(const clphys_md_lj_plan *plan);
/* The variant and options in use and where they came from
 * (clphys_tune_source_name), e.g. "half-cas slot_order=both
 * defer_exchanges=2 entries_ahead=3 work_group_size=224 (tuning cache)"
 * ("given": the variant and every option the cache holds for it in the
 * params; "heuristic": no cache entry, or tuning off).  "" for NULL; the
 * string stays the plan's. */
const char *clphys_md_lj_plan_choice(const clphys_md_lj_plan *plan);
/* Where the variant and options came from: the params, the tuning cache,
 * or the heuristic (also for NULL), as clphys_md_lj_plan_choice says; LJ
 * plans do not measure at creation.  No errors. */
clphys_tune_source clphys_md_lj_plan_tune_source(const clphys_md_lj_plan *plan);
/* Time every variant and its own options (work-group size; full-group's
 * work-items per i; half-cas's slot order, deferred exchanges and entries
 * ahead) on the seed benchmark's input (clphys_md_lj_seed_input, shuffled
 * lists, calls back to back as an MD step runs them) at densities 0.5 and
 * 1.0 (sizes as clphys_md_neighbor_tune), both precisions, each candidate's forces
 * checked against the first one's, and write per precision, size and
 * density class the fastest variant and each variant's fastest options into
 * the tuning cache; AUTO and options left 0 then take them.  Errors:
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL ctx), CLPHYS_ERR_VERIFY (no candidate of
 * a case agreed with the reference), those of the plans (a candidate the
 * device cannot run is skipped). */
clphys_status clphys_md_lj_tune(clphys_context *ctx, const clphys_tune_options *opt);
/* "auto", "full-csr", ...; "unknown" outside the enum. */
const char *clphys_md_lj_variant_name(clphys_md_lj_variant v);
/* The variant of a name.  Errors: CLPHYS_ERR_INVALID_ARGUMENT (unknown name;
 * the message lists the names). */
clphys_status clphys_md_lj_variant_from_name(const char *name, clphys_md_lj_variant *v);

/* ---- molecular dynamics: velocity Verlet NVE, LAMMPS conventions ----------
 * Units: LAMMPS `units lj` (k_B = 1).  A system in host memory: */
typedef struct {
    size_t n;
    double lo[3], hi[3]; /* box bounds (orthorhombic, periodic)           */
    int ntypes;
    double *type_mass; /* [ntypes + 1], 1-based like LAMMPS             */
    long long *id;     /* n atom ids                                   */
    int *type;         /* n, 1 .. ntypes                               */
    double *x, *v;     /* n*3 positions (inside the box) and velocities */
    int *image;        /* n*3 image flags                              */
} clphys_md_system;

/* Free the arrays of a system filled by the calls below and zero it; NULL-safe. */
void clphys_md_system_destroy(clphys_md_system *sys);
/* Read a LAMMPS data file, atom_style atomic: header counts and box bounds,
 * Masses, Atoms (id type x y z [ix iy iz]), optional Velocities; Pair Coeffs
 * ignored.  A gzip-compressed file (in.lj.data.gz) is read as its text,
 * through zlib, whatever its name.  Atoms up to one box length outside are wrapped (image flags
 * updated).  Atom IDs are any 1 .. 2^63 - 1, in any order (looked up
 * through a sorted table: memory in proportion to the atoms).  Every number
 * is read whole; the header's counts are checked against the sections
 * (arrays grow as lines arrive, never beyond the header's count), a section
 * may appear once.  Errors (message names file and line, and the atom by
 * its ID): CLPHYS_ERR_IO, CLPHYS_ERR_FORMAT (malformed lines, counts that
 * disagree, repeated sections or IDs, what clphys does not read: other atom
 * styles, triclinic boxes, bonds, a NUL or control byte: binary data, a
 * truncated or damaged gzip stream), CLPHYS_ERR_INPUT
 * (an atom more than one box length outside, a type outside 1 .. ntypes, a
 * non-finite velocity, an image flag at INT_MAX or INT_MIN that the wrap
 * would carry beyond the int range),
 * CLPHYS_ERR_OUT_OF_MEMORY. The error text is clphys_last_error(NULL). */
clphys_status clphys_md_read_lammps_data(const char *file, clphys_md_system *sys);
/* Write a LAMMPS data file (atomic style, with Velocities) to file.tmp.PID,
 * then rename: never a half-written file.  Errors: CLPHYS_ERR_INVALID_ARGUMENT
 * (NULL), CLPHYS_ERR_IO (clphys_last_error(NULL) names the file). */
clphys_status clphys_md_write_lammps_data(const char *file, const clphys_md_system *sys);
/* fcc lattice at number density rho (LAMMPS `lattice fcc rho`), cells^3 unit
 * cells (4 cells^3 atoms), mass 1, Maxwell-Boltzmann velocities at temp from
 * seed with zero total momentum, scaled to exactly temp (3N - 3 dof).
 * Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL, rho <= 0, cells outside 1 ..
 * 400, temp < 0), CLPHYS_ERR_OUT_OF_MEMORY. */
clphys_status clphys_md_fcc(double rho, int cells, double temp, uint64_t seed, clphys_md_system *sys);

typedef struct {
    size_t struct_size;     /* sizeof this struct (CLPHYS_PARAMS_INIT), or 0 */
    clphys_md_lj_params lj; /* n and box are taken from the system; its own
                            struct_size counts (0: soname 1's layout).
                            Embedded by value: clphys_md_lj_params gains a
                            field only with a soname bump (it would move
                            the fields below)                            */
    double dt;              /* time step (tau)                               */
    int neigh_every;        /* consider a rebuild every E steps (>= 1)       */
    int neigh_check;        /* 1: rebuild only when some atom moved > skin/2
                               (maximum reduced on the device); 0: always    */
    int neigh_delay;        /* no rebuild until D steps after the last one
                               (>= 0); LAMMPS `neigh_modify delay D`: a
                               rebuild is considered when steps since the
                               last build >= D and divisible by E          */
} clphys_md_params;

/* LAMMPS `thermo_style custom step temp pe ke etotal press`, norm yes:
 * energies per atom, T = 2 KE / (3N - 3), P = (2 KE + W) / (3 V). */
typedef struct {
    long long step;
    double temp, pe, ke, etotal, press;
} clphys_md_thermo;

typedef struct clphys_md_plan clphys_md_plan;

/* Plan over a host system: upload sys (copied; sys is not used afterwards)
 * and compute the initial forces.  Errors: as clphys_md_lj_plan_create, plus
 * CLPHYS_ERR_INVALID_ARGUMENT (NULL, n = 0, dt <= 0, neigh_every < 1,
 * neigh_delay < 0), CLPHYS_ERR_INPUT (a mass <= 0, a non-finite
 * coordinate or velocity, a velocity that would carry the atom more than
 * half the smallest box edge in one step (|v| dt > min L / 2: the minimum
 * image of its displacement would hide the move from the list check) or
 * whose m v^2 is not finite; the message names the atom by sys->id, and
 * later errors name atoms so too). */
clphys_status clphys_md_plan_create(clphys_context *ctx, const clphys_md_params *p, const clphys_md_system *sys,
                                    clphys_md_plan **plan);

/* The application's own device buffers: an MD state that stays on the
 * device across steps (no host round trip).  Caller order (particle k of
 * every buffer is the same atom); real = float for CLPHYS_FP32, double for
 * CLPHYS_FP64 (the plan's lj.precision); each buffer at least n elements.
 * The application owns and releases them (after the plan); they must stay
 * valid while the plan lives.  The plan keeps its own copy sorted by cell
 * (its working arrays): it reads the buffers at clphys_md_plan_create_cl and
 * clphys_md_refresh, and writes x, v, f and image at the end of every
 * clphys_md_run (enqueued on the context's queue: later work on that queue
 * sees them). */
typedef struct {
    size_t n;            /* atoms, >= 1                                   */
    double lo[3], hi[3]; /* box bounds (orthorhombic, periodic)           */
    cl_mem x;            /* real4 (x, y, z, w): positions, read within
                            one box length of [lo, hi) and wrapped into
                            it, written inside it; w carried along      */
    cl_mem v;            /* real4 (vx, vy, vz, mass), mass > 0            */
    cl_mem f;            /* real4 (fx, fy, fz, u), written only: force
                            on the atom and its share u of the potential
                            energy (the shares sum to the total; how a
                            pair's energy is split depends on the
                            variant)                                     */
    cl_mem image;        /* int4 (ix, iy, iz, 0) image flags, updated as
                            atoms cross the box; may be NULL (not kept)  */
} clphys_md_buffers;

/* Plan bound to the buffers of b (copied: the handles, not the data): reads
 * x, v and image, builds the list and writes the initial forces to f.  A
 * device check of the state (one word read back) gives CLPHYS_ERR_INPUT
 * naming the first atom with a non-finite coordinate or velocity, a position
 * outside [lo - L, hi + L) or a mass <= 0.  Errors: as
 * clphys_md_plan_create, plus CLPHYS_ERR_INVALID_ARGUMENT (a NULL x, v or f,
 * or a buffer smaller than n elements of the plan's precision). */
clphys_status clphys_md_plan_create_cl(clphys_context *ctx, const clphys_md_params *p, const clphys_md_buffers *b,
                                       clphys_md_plan **plan);
/* Bound plans: re-read x, v and image from the buffers after the application
 * changed them (e.g. a thermostat rescaled v, atoms were moved), rebuild the
 * list and write the forces of those positions to f; the trajectory then
 * continues from there.  Without it, clphys_md_run continues from the plan's
 * own copy and overwrites the buffers.  Errors: as clphys_md_plan_create_cl;
 * CLPHYS_ERR_INVALID_ARGUMENT for a plan made from a host system. */
clphys_status clphys_md_refresh(clphys_md_plan *plan);
void clphys_md_plan_destroy(clphys_md_plan *plan); /* NULL-safe; buffers stay */
/* Advance steps (>= 0) time steps on the device; a bound plan then writes
 * its state to the buffers.  kernel_s non-NULL: waits, and sets *kernel_s
 * to the profiled time of the kernels launched (s); NULL: the work may
 * still be queued on return (each rebuild check reads one word back).
 * Without kernel_s, an open span or CLPHYS_PROFILE the steps go to a queue
 * of the plan's without profiling (on NVIDIA's OpenCL each command on a
 * profiling queue costs host time), which the context's queue waits for:
 * work enqueued there after the call runs after the steps.
 * Errors: CLPHYS_ERR_INVALID_ARGUMENT (plan NULL, steps < 0),
 * CLPHYS_ERR_OVERFLOW (a rebuilt list beyond the device's allocation),
 * CLPHYS_ERR_INPUT naming the step and the atom when the displacement
 * check (run at every step it is due) finds a position that is not
 * finite: a diverged run. */
clphys_status clphys_md_run(clphys_md_plan *plan, int steps, double *kernel_s);
/* Thermo of the plan's current state (reads energies, virial and velocities
 * back).  Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL), CLPHYS_ERR_INPUT
 * naming the step and the atom: a non-finite force (overlapping atoms when
 * the nearest is closer than sigma / 2, else a diverged position or a
 * force beyond the precision's range), a non-finite position, velocity or
 * energy, or an atom whose |v| dt exceeds half the smallest box edge. */
clphys_status clphys_md_thermo_now(clphys_md_plan *plan, clphys_md_thermo *t);
/* Copy positions (inside [lo, hi)), velocities and image flags back into sys
 * (n*3 each, caller order; image may be NULL); sys->n must be the plan's n.
 * Errors: CLPHYS_ERR_INVALID_ARGUMENT (NULL, other n). */
clphys_status clphys_md_download(clphys_md_plan *plan, clphys_md_system *sys);
/* Neighbour-list builds so far (the initial one included); 0 for NULL. */
int clphys_md_rebuilds(const clphys_md_plan *plan);

#ifdef __cplusplus
}
#endif

#ifndef CLPHYS_NO_DEPRECATED
#include "clphys_deprecated.h" /* the old names, one release (docs/naming.md) */
#endif
#endif /* CLPHYS_MD_H */
