/* nbody_bench.h — what the gravity bench entries share (bench/nbody_gravity.c,
 * nbody_gravity_multi.c, nbody_gravity_mpi.c): their input and their error measure. */
#ifndef CLPHYS_BENCH_GRAVITY_H
#define CLPHYS_BENCH_GRAVITY_H

#include "bench.h"

/* The softening of every gravity bench case. */
#define BENCH_GRAVITY_EPS 0.01

/* n particles uniform in the unit cube, masses in [0.5, 1.5) / n (the shared
 * SplitMix64 stream, fixed seed: every run, and every MPI rank, times the
 * same input); x[4*n], malloc'd, NULL when out of memory. */
double *bench_nbody_gravity_particles(long long n);
/* max_i |a_i - a_ref,i| / rms_i |a_ref,i| over nv particles (inf for NaN). */
double bench_nbody_gravity_error(int nv, const double *acc, const double *ref);

/* A zeroed row with its path, variant, precision, size and repeat set. */
void bench_nbody_gravity_row(bench_row *r, const char *path, const char *variant, int fp64, long long n, int repeat);
/* rate = inter / seconds interactions/s, GFLOP/s at 20 flops each, and the
 * fraction of one device's FMA limit per device (devices of the run). */
void bench_nbody_gravity_rates(bench_run *run, bench_row *r, double inter, double seconds, int fp64, int devices);
/* max_rel_error and verified (1e-10 fp64, 1e-4 fp32) of nv accelerations. */
void bench_nbody_gravity_verify(const bench_run *run, bench_row *r, int nv, const double *acc, const double *ref,
                                int fp64);

#endif
