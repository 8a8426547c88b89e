/* lqcd_bench.h — what the lattice bench entries share (bench/lqcd.c,
 * lqcd_multi.c, lqcd_mpi.c): their inputs and lattices. */
#ifndef CLPHYS_BENCH_LQCD_H
#define CLPHYS_BENCH_LQCD_H

#include "bench.h"

#include <stdint.h>

/* Deterministic random spinor components in [-1, 1) (n reals), filled in
 * parallel. */
void bench_lqcd_fill_spinor(double *psi, size_t n, uint64_t seed);
/* A smooth field: U = reunitarize(1 + eps R), R a random SU(3) matrix, so
 * that a solve takes a realistic number of iterations near (not at)
 * critical kappa. */
void bench_lqcd_smooth_field(clphys_lqcd_gauge_field *g, double eps, uint64_t seed);

/* The lattice --size asks for: about `sites` sites as L^3 x T, L the
 * nearest whole number to sites^(1/4) rounded up to a multiple of xyz_mult,
 * T the same L rounded up to a multiple of t_mult (each rounded to an even
 * number first, as even-odd ordering needs; a split over devices or ranks
 * asks for more). */
void bench_lqcd_sized_dims(long long sites, int xyz_mult, int t_mult, int d[4]);

#endif /* CLPHYS_BENCH_LQCD_H */
