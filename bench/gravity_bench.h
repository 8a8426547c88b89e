/* gravity_bench.h — what the gravity bench entries share (bench/gravity.c,
 * gravity_multi.c, gravity_mpi.c): their input and their error measure. */
#ifndef CLPHYS_BENCH_GRAVITY_H
#define CLPHYS_BENCH_GRAVITY_H

/* The softening of every gravity bench case. */
#define BENCH_GRAVITY_EPS 0.01

/* n particles uniform in the unit cube, masses in [0.5, 1.5) / n (the shared
 * SplitMix64 stream, fixed seed: every run, and every MPI rank, times the
 * same input); x[4*n], malloc'd, NULL when out of memory. */
double *bench_gravity_particles(long long n);
/* max_i |a_i - a_ref,i| / rms_i |a_ref,i| over nv particles (inf for NaN). */
double bench_gravity_error(int nv, const double *acc, const double *ref);

#endif
