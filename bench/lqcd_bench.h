/* lqcd_bench.h — what the lattice bench entries share (bench/lqcd.c,
 * lqcd_multi.c): their inputs. */
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

#endif /* CLPHYS_BENCH_LQCD_H */
