/* md_ref.h — fp64 CPU references for the md path: O(N^2) neighbour search
 * and Lennard-Jones forces, energy and virial (minimum image, periodic box
 * [0,L)^3 orthorhombic).  Positions and forces are n*3 doubles. */
#ifndef CLPHYS_MD_REF_H
#define CLPHYS_MD_REF_H

#include <stddef.h>

/* Every pair i < j with |r_ij| < r_search: *pairs holds 2 ints per pair,
 * lexicographically sorted (malloc'ed, caller frees).  Returns 0, -1 on OOM. */
int md_ref_pairs(size_t n, const double *pos, const double box[3], double r_search, int **pairs, size_t *npairs);
/* The number of those pairs only: the same O(N^2) test spread over the host's
 * threads (OpenMP), for checks at sizes where the serial search takes minutes. */
size_t md_ref_pair_count(size_t n, const double *pos, const double box[3], double r_search);

/* LJ over all pairs (O(N^2)): U = 4 eps [(s/r)^12 - (s/r)^6] - shift (shift =
 * U(r_cut) when shifted), forces (n*3), total energy, virial W = sum r.F. */
void md_ref_lj(size_t n, const double *pos, const double box[3], double eps, double sigma, double r_cut, int shifted,
               double *forces, double *pe, double *virial);

/* The same over a full CSR list (offsets n+1, list; each pair twice), for
 * systems too large for O(N^2); the list must contain every pair within r_cut. */
void md_ref_lj_list(size_t n, const double *pos, const double box[3], double eps, double sigma, double r_cut,
                    int shifted, const size_t *offsets, const int *list, double *forces, double *pe, double *virial);

/* The md path's force verification: ||F - F_ref||_2 / ||S||_2 over all
 * components, S_i,c = sum_j |f_ij,c| (the magnitudes of the pair forces
 * summed).  Why not |F_ref|: near the LJ minimum (fcc at density 1.0) net
 * forces are small differences of large pair forces, and the rounding error
 * of a sum scales with S.  Particles with a pair whose r^2 lies within
 * rel_window * r_cut^2 of the cutoff are left out (*excluded counts them):
 * within rounding such a pair may be counted or not, and F jumps by F(r_cut).
 * pos and box must be what the device computed with (rounded to float for
 * fp32), ref the fp64 forces from them.  off/list: a full CSR list covering
 * r_cut (caller order), or NULL for all pairs (O(N^2)).  NaN/Inf gives Inf. */
double md_ref_force_error(size_t n, const double *pos, const double box[3], double eps, double sigma, double r_cut,
                          const size_t *off, const int *list, const double *f, const double *ref, double rel_window,
                          size_t *excluded);

/* For positions a test does not choose (a trajectory's): each pair whose
 * r^2 lies within rel_window * r_cut^2 of the cutoff may be counted by the
 * device or not (md_ref_force_error), so its force f_ij is put into ref or
 * taken out of it, at both ends, whichever the forces f of its two
 * particles agree with better.  ref: md_ref_lj's forces of pos (n*3, caller
 * order), changed in place.  Returns the number of such pairs; a comparison
 * with rel_window 0 then leaves no particle out, and a device that dropped
 * or added a pair outside the window still shows its whole error. */
size_t md_ref_settle_cut_pairs(size_t n, const double *pos, const double box[3], double eps, double sigma, double r_cut,
                               const double *f, double *ref, double rel_window);

/* md_ref_force_error in two steps, for checking several force arrays
 * against one input: the scales S and the flags of the particles left out
 * depend on the positions only.  md_ref_force_scale fills *sc (0, or -1 when
 * out of memory; free with md_ref_scale_free); md_ref_force_error_scaled
 * gives what md_ref_force_error would for f against ref. */
typedef struct {
    size_t n;
    double *s; /* S, n*3 */
    char *amb; /* 1: a pair at the cutoff within rel_window, left out */
} md_ref_scale;
int md_ref_force_scale(size_t n, const double *pos, const double box[3], double eps, double sigma, double r_cut,
                       const size_t *off, const int *list, double rel_window, md_ref_scale *sc);
double md_ref_force_error_scaled(const md_ref_scale *sc, const double *f, const double *ref, size_t *excluded);
void md_ref_scale_free(md_ref_scale *sc);

#endif
