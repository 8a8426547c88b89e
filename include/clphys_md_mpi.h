/*
 * clphys_md_mpi.h — Lennard-Jones molecular dynamics over MPI ranks by
 * spatial decomposition with ghost atoms (Plimpton, J. Comp. Phys. 117, 1
 * (1995); LAMMPS's `comm` and `neighbor` conventions).  Includes mpi.h
 * (through clphys_mpi.h, whose conventions hold here: the caller's
 * communicator, duplicated; every collective call returns the same status
 * on every rank, the failing rank named in clphys_last_error).  Built when
 * meson finds MPI; clphys.h does not include it.
 *
 * Decomposition: the periodic box is cut into a grid PX x PY x PZ of equal
 * orthogonal subdomains, one per rank (rank = cx + PX (cy + PY cz)), each
 * rank on its own device (one context).  Each rank owns the atoms inside
 * its subdomain and keeps, as ghost atoms, copies of the atoms within
 * r_search = r_cut + skin of its faces, received in six exchanges per step:
 * x (to the lower, then the upper neighbour), then y, then z, the ghosts
 * received in x forwarded in y and z, so that edges and corners come for
 * free.  Along a dimension with one subdomain the box stays periodic on
 * the device (no ghosts).  A subdomain thinner than r_search along a
 * dimension cut into several is an error (ghosts travel one hop only).
 * At each neighbour-list rebuild atoms that left their subdomain move to
 * the rank that owns them now (ids, types, positions, velocities, image
 * flags), and the ghost lists are made anew; the `neigh_check` criterion
 * (the largest displacement since the last build above skin/2 on any rank)
 * is one MPI_Allreduce.
 *
 * Forces come from full Verlet lists over owned and ghost atoms (the
 * full-list variants of clphys_md_lj_variant: full-csr, full-transposed,
 * full-group, cpu); each owned atom sees all its neighbours, so no ghost
 * force travels back.  The half-list and full-staged variants are refused
 * when any dimension is cut (CLPHYS_ERR_UNSUPPORTED): the half lists would
 * need the reverse exchange of ghost forces, which this plan does not do.
 * The trajectory equals the single-rank clphys_md_plan's up to the order of
 * summation (tests/test_md_mpi.c: thermo to 1e-10 relative in fp64 over
 * 200 steps).
 *
 * Device work per step: velocity Verlet on the device over the rank's cell-
 * sorted atoms; ghost positions (three reals each) packed into a device
 * buffer by a kernel (cl/md_ghost.cl), copied to page-locked host memory
 * on a second queue where the device gives one, exchanged (both swaps of a
 * dimension at once) in MPI_Isend/MPI_Irecv messages or, where every rank
 * runs on one host, through POSIX shared memory with a 16-byte MPI header
 * per neighbour (CLPHYS_MD_NODE_STAGING=0: the messages), copied back and
 * unpacked by a kernel.  On a grid cut along z only, with full-csr or
 * full-transposed, the forces of the rows whose lists hold no ghost (the
 * cells away from the two faces: contiguous in the cell order) run while
 * the ghosts travel, the other rows after (full-transposed: beside the
 * first on the copies' queue); otherwise the exchange is not overlapped
 * (the timing's exposed_s says what it costs).  At a rebuild the atoms
 * that stay in the subdomain stay on the device (cl/md_rebuild.cl): only
 * the migrants cross to the host, and the ghost lists are selected on the
 * device (but at the first rebuild); a ghost's own row of the Verlet list is left empty (its force is
 * never used).  Where one dimension is cut, each neighbour gets its
 * migrants and its new ghosts' positions in one message (LAMMPS's exchange
 * and borders together): the atoms just sent across a face that lie within
 * r_search of it are ghosts both ranks know already.  Where an arrival lies
 * within r_search of the other face (a subdomain under about 2 r_search
 * thick), every rank makes the lists in rounds after the migration instead
 * (CLPHYS_MD_GHOST_ROUNDS=1 asks for that always).
 */
#ifndef CLPHYS_MD_MPI_H
#define CLPHYS_MD_MPI_H

#include "clphys_md.h"
#include "clphys_mpi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct clphys_md_mpi clphys_md_mpi;

/* Wall-clock split of clphys_md_mpi_run on this rank, summed over its
 * steps (s).  Filled only when asked for: the run then waits for the device
 * at each phase boundary, which a run without timing does not. */
typedef struct {
    double force_s;           /* the LJ kernels (see exchange_s)                  */
    double integrate_s;       /* the two half kicks and the drift, and the
                                 rebuild check (with its MPI_Allreduce)           */
    double neighbor_s;        /* at rebuilds: sort, list and the ghosts' sorted
                                 places on the device                             */
    double exchange_s;        /* ghost positions: pack kernel, device-host copies,
                                 messages, copies back, unpack kernel; with the
                                 overlap also the interior rows' forces, which run
                                 meanwhile (force_s then holds the other rows',
                                 and the last unpack where those rows run on the
                                 copies' queue beside the interior)              */
    double exposed_s;         /* the time spent waiting for the messages while no
                                 device work ran (not hidden by the interior
                                 rows' forces; all of the wait without them)      */
    double messages_s;        /* the messages, from posting to completion         */
    double neighbor_kernel_s; /* the sort's and list's kernels in neighbor_s
                             (profiled where the context profiles, else each
                             kernel's wall time)                              */
    double migrate_s;         /* at rebuilds: migration and ghost lists (host and
                                 MPI)                                             */
    double download_s;        /* at rebuilds: the atoms near a cut face (or all of
                                 them) sorted out on the device and copied to the
                                 host                                             */
    double upload_s;          /* at rebuilds: those atoms and the ghosts back to
                                 the device                                       */
    double ghost_bytes;       /* bytes of ghost positions this rank sent, summed
                                 over steps                                       */
    long long steps;
    long long device_waits; /* the host's blocking waits for the device in
                             steps without a rebuild (the ghost exchange's
                             copies to the host: one per cut dimension)       */
    int rebuilds;           /* rebuilds within these steps                      */
} clphys_md_mpi_timing;

/* A distributed MD plan on comm (duplicated).  root's system *sys (read on
 * root only; NULL elsewhere) is scattered to the owners of its atoms.
 * grid[3]: subdomains per dimension, their product the size of comm; NULL
 * or all zero: slabs along z (1x1xP) where they are at least r_cut + skin
 * thick and hold no more ghost atoms than MPI_Dims_create's grid, else
 * MPI_Dims_create's factors with the largest along z (2 or 4 ranks of a
 * cube: 1x1x2, 1x1x4; 8 ranks of a large cube: 2x2x2).  A grid cut along z
 * only lets the forces of the atoms away from its faces run while the
 * ghosts travel; clphys_md_mpi_info gives the grid chosen.  ctx: this rank's device.  p and grid must
 * be the same on every rank.  Collective.  Errors, the same on every rank
 * (the message names the failing rank): CLPHYS_ERR_INVALID_ARGUMENT (NULL
 * ctx or plan, no system on root, a grid whose product is not the number of
 * ranks, p or grid differing between ranks, those of clphys_md_plan_create),
 * CLPHYS_ERR_INPUT (a subdomain thinner than r_cut + skin along a
 * dimension cut into several; a dimension not cut shorter than 2 (r_cut +
 * skin); a mass <= 0, a non-finite coordinate or velocity, a coordinate
 * more than 2^20 box lengths out, naming the atom by its ID),
 * CLPHYS_ERR_UNSUPPORTED (a half-list or full-staged variant
 * with a dimension cut), CLPHYS_ERR_OUT_OF_MEMORY, those of the device
 * (CLPHYS_ERR_BUILD, CLPHYS_ERR_OPENCL), CLPHYS_ERR_IO (MPI). */
clphys_status clphys_md_mpi_create(MPI_Comm comm, clphys_context *ctx, const clphys_md_params *p, const int grid[3],
                                   int root, const clphys_md_system *sys, clphys_md_mpi **plan);
/* Release the plan (not collective); NULL-safe. */
void clphys_md_mpi_destroy(clphys_md_mpi *plan);
/* Advance steps (>= 0, the same on every rank) time steps; returns when
 * this rank's device has finished them (the wall time of the call is the
 * run's, as a user sees it).  timing: NULL,
 * or this rank's split added to *timing (see clphys_md_mpi_timing).
 * Untimed (timing NULL, no open span, no CLPHYS_PROFILE) the steps go to a
 * queue of the plan's without profiling, as clphys_md_run's do.
 * Collective.  Errors, the same on every rank: CLPHYS_ERR_INVALID_ARGUMENT
 * (NULL plan, steps < 0), CLPHYS_ERR_INPUT (an atom moved farther than one
 * subdomain between two rebuilds: rebuild more often; the integration
 * diverged: at a rebuild, an atom leaving its subdomain with a position not
 * finite or a velocity that moves it more than half the box a step, the
 * bound of clphys_md_thermo_now), CLPHYS_ERR_OVERFLOW
 * (a list beyond the device's allocation), CLPHYS_ERR_OPENCL, CLPHYS_ERR_IO. */
clphys_status clphys_md_mpi_run(clphys_md_mpi *plan, int steps, clphys_md_mpi_timing *timing);
/* Thermo of the whole system (clphys_md_thermo: LAMMPS lj units, norm yes),
 * the sums of every rank reduced; every rank gets the same *t.  Collective.
 * Errors, the same on every rank: CLPHYS_ERR_INVALID_ARGUMENT (NULL),
 * CLPHYS_ERR_INPUT (a non-finite force: overlapping atoms; the integration
 * diverged: an atom moves more than half the box a step, or the energies
 * are not finite), CLPHYS_ERR_IO. */
clphys_status clphys_md_mpi_thermo(clphys_md_mpi *plan, clphys_md_thermo *t);
/* The whole system on root, in atom-ID order: *all is overwritten with
 * arrays the call allocates (free with clphys_md_system_destroy); untouched
 * on the other ranks (may be NULL there).  Positions inside [lo, hi), image
 * flags counting the crossings.  Collective.  Errors, the same on every
 * rank: CLPHYS_ERR_INVALID_ARGUMENT (NULL all on root, root out of range),
 * CLPHYS_ERR_OUT_OF_MEMORY, CLPHYS_ERR_OPENCL, CLPHYS_ERR_IO. */
clphys_status clphys_md_mpi_gather(clphys_md_mpi *plan, int root, clphys_md_system *all);
/* This rank's grid (grid[3], may be NULL), its coordinates in it (coord[3],
 * may be NULL), and the atoms it owns and holds as ghosts now (may be NULL).
 * Returns the LJ variant in use (clphys_md_lj_plan_choice of this rank's plan);
 * "" for NULL.  Not collective. */
const char *clphys_md_mpi_info(const clphys_md_mpi *plan, int grid[3], int coord[3], size_t *owned, size_t *ghosts);
/* Neighbour-list builds so far, the initial one included; 0 for NULL. */
int clphys_md_mpi_rebuilds(const clphys_md_mpi *plan);

#ifdef __cplusplus
}
#endif

#ifndef CLPHYS_NO_DEPRECATED
#include "clphys_deprecated.h" /* the old names, one release (docs/naming.md) */
#endif
#endif /* CLPHYS_MD_MPI_H */
