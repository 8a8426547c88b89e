/*
 * clphys_md.h — cell list, Verlet neighbour list and Lennard-Jones forces
 * (part of the public API; included by clphys.h).
 *
 * Geometry: a periodic orthorhombic box [0,Lx) x [0,Ly) x [0,Lz); positions
 * outside it are wrapped.  Positions are host arrays of n*3 doubles
 * (x0 y0 z0 x1 ...), in the caller's order; results come back in that order.
 * Inside a plan the particles are kept sorted by cell (counting sort, the
 * permutation kept), which is the grid search of Watanabe, Suzuki & Ito,
 * Prog. Theor. Phys. 126, 203 (2011): cell edge >= r_search, 27 cells.
 * Each box edge must be >= 2 r_search (minimum image), else CLPHYS_ERR_INPUT.
 */
#ifndef CLPHYS_MD_H
#define CLPHYS_MD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- neighbour list ------------------------------------------------------- */
typedef enum {
    CLPHYS_NEIGHBOR_FULL = 0, /* every i lists every j within r_search          */
    CLPHYS_NEIGHBOR_HALF = 1  /* each pair once (by sorted index, j > i)        */
} clphys_neighbor_kind;

typedef enum {
    CLPHYS_NEIGHBOR_CSR = 0,        /* list[offset[i] .. offset[i+1])             */
    CLPHYS_NEIGHBOR_TRANSPOSED = 1, /* list[k * n + i], k < count[i] <= capacity  */
    CLPHYS_NEIGHBOR_STAGED = 2      /* as TRANSPOSED, but each entry is the slot of
                                       j in the local-memory stage of i's block of
                                       cells (cl/stage.h); full lists only; for
                                       the full-staged LJ variant                 */
} clphys_neighbor_layout;

typedef struct {
    size_t n;                      /* particles, >= 1                            */
    double box[3];                 /* Lx Ly Lz, each >= 2 r_search               */
    double r_search;               /* r_cut + skin (length units)                */
    clphys_neighbor_kind kind;
    clphys_neighbor_layout layout;
    clphys_precision precision;    /* of the positions on the device             */
    int capacity;                  /* neighbours per particle to start with;
                                      0 = estimated; grows on overflow           */
    int block_cells;               /* STAGED: cells per block along x; 0 = chosen
                                      so a block holds ~96 particles and its stage
                                      fits local memory                          */
} clphys_neighbor_params;

typedef struct clphys_neighbor_plan clphys_neighbor_plan;

/* Errors: CLPHYS_ERR_INVALID_ARGUMENT, CLPHYS_ERR_INPUT (box < 2 r_search),
 * CLPHYS_ERR_UNSUPPORTED (fp64 missing), CLPHYS_ERR_OPENCL/BUILD/OUT_OF_MEMORY. */
clphys_status clphys_neighbor_plan_create(clphys_context *ctx, const clphys_neighbor_params *p,
                                          clphys_neighbor_plan **plan);
void clphys_neighbor_plan_destroy(clphys_neighbor_plan *plan);
/* Upload pos (n*3, caller order), sort by cell, build the list.  When a
 * particle has more neighbours than the capacity (the device's overflow
 * counter), the list grows and is rebuilt: never truncated.  Non-finite
 * positions give CLPHYS_ERR_INPUT naming the particle. */
clphys_status clphys_neighbor_build(clphys_neighbor_plan *plan, const double *pos);
/* Pairs stored (full: sum of counts; half: number of pairs) and the capacity
 * now in use, and how many times the list grew. */
clphys_status clphys_neighbor_stats(const clphys_neighbor_plan *plan, size_t *pairs, int *capacity,
                                    int *growths);
/* Profiled kernel time of the last build (sort + list, growth included), s. */
double clphys_neighbor_build_seconds(const clphys_neighbor_plan *plan);
/* The list in CSR form in caller indices: offsets (n+1), list (pairs entries).
 * For a half list, each pair appears once, under one of its two particles. */
clphys_status clphys_neighbor_get(clphys_neighbor_plan *plan, size_t *offsets, int *list);
/* Shuffle each particle's neighbour order (the seed benchmark's worst case
 * for caches), deterministically from seed.  Host round trip. */
clphys_status clphys_neighbor_shuffle(clphys_neighbor_plan *plan, uint64_t seed);

/* ---- Lennard-Jones forces --------------------------------------------------
 * U(r) = 4 eps [(sigma/r)^12 - (sigma/r)^6] - shift for r < r_cut, 0 beyond;
 * shift = 0 (LAMMPS lj/cut, the default) or U(r_cut) when shifted.
 * F_i = sum_j 24 eps [2 (sigma/r)^12 - (sigma/r)^6] / r^2 (x_i - x_j).
 * Virial W = sum over pairs r_ij . F_ij (pressure P = (2 KE + W) / (3 V)). */
typedef enum {
    CLPHYS_LJ_FULL_CSR = 0,      /* one work-item per i, full CSR list             */
    CLPHYS_LJ_FULL_TRANSPOSED,   /* one work-item per i, list[k*n+i]: coalesced    */
    CLPHYS_LJ_FULL_GROUP,        /* group_size work-items share i, local reduction */
    CLPHYS_LJ_HALF_CAS,          /* third law, atomic add from compare-exchange:
                                    each pair once (half list taken from the full
                                    list by half-space), j forces summed per block
                                    of cells in local memory, one global exchange
                                    per particle and block; rows of a block by
                                    list length, entries within r_cut first
                                    (fp64), so a warp's lanes stay busy together */
    CLPHYS_LJ_HALF_FIXEDPOINT,   /* third law, int64 fixed point: bit-identical    */
    CLPHYS_LJ_CPU,               /* CPU-shaped: block of i, vectors over j (full)  */
    CLPHYS_LJ_FULL_STAGED,       /* work-group per block of cells, neighbours'
                                    positions staged in local memory (full list)  */
    CLPHYS_LJ_AUTO,              /* full-transposed on GPUs, cpu on CPUs           */
    CLPHYS_LJ_NVARIANTS = CLPHYS_LJ_AUTO
} clphys_lj_variant;

typedef struct {
    size_t n;
    double box[3];
    double epsilon, sigma;       /* LJ units; 0 means 1                           */
    double r_cut, skin;          /* list built to r_cut + skin                    */
    int shifted;                 /* 1: U(r_cut) subtracted                        */
    clphys_precision precision;
    clphys_lj_variant variant;
    int group_size;              /* full-group work-items per i (power of 2, 0 = 8);
                                    half-cas: > 1 runs the earlier cell-blocked
                                    kernel (half list j > i) with that many
                                    work-items per i                              */
    int work_group_size;         /* 0 = 256 on GPUs, 16 on CPUs; full-staged: 128;
                                    half-cas: 0 = from the block's mean particle
                                    count                                         */
} clphys_lj_params;

typedef struct {
    double potential_energy;     /* total, not per atom                           */
    double virial;               /* W = sum over pairs r_ij . F_ij                */
} clphys_lj_result;

typedef struct clphys_lj_plan clphys_lj_plan;

/* Errors as the neighbour plan, plus CLPHYS_ERR_UNSUPPORTED when the variant
 * needs cl_khr_int64_base_atomics (half-cas in fp64, half-fixedpoint) and the
 * device lacks it. */
clphys_status clphys_lj_plan_create(clphys_context *ctx, const clphys_lj_params *p,
                                    clphys_lj_plan **plan);
void clphys_lj_plan_destroy(clphys_lj_plan *plan);
/* Upload positions (n*3, caller order) and build the neighbour list. */
clphys_status clphys_lj_set_positions(clphys_lj_plan *plan, const double *pos);
/* Upload new positions (caller order) keeping the current list and cell
 * order (the caller guarantees no particle moved more than skin/2). */
clphys_status clphys_lj_update_positions(clphys_lj_plan *plan, const double *pos);
/* Evaluate forces, energy and virial on the device with the current list;
 * when kernel_s is non-NULL the call waits and the profiled kernel time is
 * added to it, else the kernels stay queued (back-to-back calls; time them
 * with clphys_context_span_begin/_end; clphys_lj_get waits for them). */
clphys_status clphys_lj_evaluate(clphys_lj_plan *plan, double *kernel_s);
/* Read back: forces (n*3, caller order; may be NULL) and totals (may be NULL).
 * A non-finite force (overlapping atoms) gives CLPHYS_ERR_INPUT naming the
 * particle and its nearest neighbour. */
clphys_status clphys_lj_get(clphys_lj_plan *plan, double *forces, clphys_lj_result *res);
/* set_positions + evaluate + get. */
clphys_status clphys_lj_compute(clphys_lj_plan *plan, const double *pos, double *forces,
                                clphys_lj_result *res);
/* half-cas sums the j forces of a block of cells in local accumulators,
 * one per particle of the block's neighbourhood, within the device's local
 * memory; particles beyond that go to global memory directly (correct,
 * slower).  *slots: how many, summed over this plan's evaluations (0 for
 * the other variants). */
clphys_status clphys_lj_overflow(clphys_lj_plan *plan, uint64_t *slots);
/* The plan's neighbour list (e.g. to shuffle it or read its stats). */
clphys_neighbor_plan *clphys_lj_neighbor(clphys_lj_plan *plan);
/* Variant actually used (AUTO resolved). */
clphys_lj_variant clphys_lj_plan_variant(const clphys_lj_plan *plan);
const char *clphys_lj_variant_name(clphys_lj_variant v);   /* "full-csr", ...  */
clphys_status clphys_lj_variant_from_name(const char *name, clphys_lj_variant *v);

/* ---- molecular dynamics: velocity Verlet NVE, LAMMPS conventions ----------
 * Units: LAMMPS `units lj` (k_B = 1).  A system in host memory: */
typedef struct {
    size_t n;
    double lo[3], hi[3];         /* box bounds (orthorhombic, periodic)           */
    int ntypes;
    double *type_mass;           /* [ntypes + 1], 1-based like LAMMPS             */
    long long *id;               /* n atom ids                                   */
    int *type;                   /* n, 1 .. ntypes                               */
    double *x, *v;               /* n*3 positions (inside the box) and velocities */
    int *image;                  /* n*3 image flags                              */
} clphys_md_system;

void clphys_md_system_free(clphys_md_system *sys);
/* Read a LAMMPS data file, atom_style atomic: header counts and box bounds,
 * Masses, Atoms (id type x y z [ix iy iz]), optional Velocities; Pair Coeffs
 * ignored.  Atoms up to one box length outside are wrapped (image flags
 * updated).  Errors (message names file and line): CLPHYS_ERR_IO,
 * CLPHYS_ERR_FORMAT, CLPHYS_ERR_UNSUPPORTED (other atom styles, triclinic,
 * bonds), CLPHYS_ERR_INPUT (atom far outside the box, bad type). The error
 * text is clphys_last_error(NULL). */
clphys_status clphys_md_read_lammps_data(const char *file, clphys_md_system *sys);
/* Write a LAMMPS data file (atomic style, with Velocities) to file.tmp, then
 * rename: never a half-written file. */
clphys_status clphys_md_write_lammps_data(const char *file, const clphys_md_system *sys);
/* fcc lattice at number density rho (LAMMPS `lattice fcc rho`), cells^3 unit
 * cells (4 cells^3 atoms), mass 1, Maxwell-Boltzmann velocities at temp from
 * seed with zero total momentum, scaled to exactly temp (3N - 3 dof). */
clphys_status clphys_md_fcc(double rho, int cells, double temp, uint64_t seed, clphys_md_system *sys);

typedef struct {
    clphys_lj_params lj;         /* n and box are taken from the system           */
    double dt;                   /* time step (tau)                               */
    int neigh_every;             /* consider a rebuild every E steps (>= 1)       */
    int neigh_check;             /* 1: rebuild only when some atom moved > skin/2
                                    (maximum reduced on the device); 0: always    */
    int neigh_delay;             /* no rebuild until D steps after the last one
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

/* Upload sys and compute the initial forces.  Errors as clphys_lj_plan_create. */
clphys_status clphys_md_plan_create(clphys_context *ctx, const clphys_md_params *p,
                                    const clphys_md_system *sys, clphys_md_plan **plan);
void clphys_md_plan_destroy(clphys_md_plan *plan);
/* Advance steps time steps on the device; kernel time added to *kernel_s. */
clphys_status clphys_md_run(clphys_md_plan *plan, int steps, double *kernel_s);
/* Thermo of the current state (reads energies and velocities back). */
clphys_status clphys_md_thermo_now(clphys_md_plan *plan, clphys_md_thermo *t);
/* Copy positions, velocities and image flags back into sys (caller order). */
clphys_status clphys_md_download(clphys_md_plan *plan, clphys_md_system *sys);
/* Neighbour-list builds so far (the initial one included). */
int clphys_md_rebuilds(const clphys_md_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* CLPHYS_MD_H */
