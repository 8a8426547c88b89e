/*
 * scaling.h — the one scaling schema of every distributed bench row
 * (gravity, lattice, MD, Poisson over several devices or MPI ranks).
 *
 * A row measured on several devices carries in its params, from
 * bench_scaling_json():
 *   gpus          distinct devices the run used
 *   ranks         MPI ranks (1 for one process driving several devices)
 *   scaling       "strong" (the same whole problem as the baseline) or
 *                 "weak" (each device keeps the baseline's share)
 *   n_per_device  particles, sites or cells per device
 *   baseline_s    one device running the same work, measured in the same
 *                 session on the same machine: the whole problem (strong),
 *                 one device's share (weak; for direct-sum gravity n
 *                 i-particles against all N j-particles); null (with
 *                 speedup and efficiency) where the run measured none
 *                 (baseline_s < 0 in bench_scaling)
 *   step_s        the distributed run's time for the same unit of work
 *   speedup       strong: baseline_s / step_s; weak: null (weak scaling
 *                 asks for a constant time, not a shorter one)
 *   efficiency    strong: speedup / gpus; weak: baseline_s / step_s;
 *                 above 1 only for a measured super-linear effect
 *   exchange_s, exchange_floor_s
 *                 the measured halo or ghost exchange per step, and its
 *                 floor (bytes over the measured host-device and network
 *                 bandwidths, plus the host copies the design makes);
 *                 null where not measured
 * Durations in seconds; every figure a median.
 */
#ifndef CLPHYS_BENCH_SCALING_H
#define CLPHYS_BENCH_SCALING_H

#include "bench.h"

#include <stddef.h>

typedef struct {
    int gpus;                /* distinct devices                          */
    int ranks;               /* MPI ranks                                 */
    int weak;                /* 0: strong scaling, 1: weak scaling        */
    long long n_per_device;  /* particles, sites or cells per device      */
    double baseline_s;       /* one device, same work (see above); < 0: none */
    double step_s;           /* the distributed run                       */
    double exchange_s;       /* measured exchange per step; < 0: none     */
    double exchange_floor_s; /* its floor; < 0: none                      */
} bench_scaling;

/* speedup (strong; 0 for weak or when a time is not positive) and
 * efficiency (0 when a time is not positive) of s. */
double bench_scaling_speedup(const bench_scaling *s);
double bench_scaling_efficiency(const bench_scaling *s);

/* Writes the schema's members (no braces: `"gpus":2,...`) into buf; the
 * caller puts them inside its params object.  Returns the length written,
 * as snprintf does (>= len: truncated). */
int bench_scaling_json(const bench_scaling *s, char *buf, size_t len);

/* A distributed row begun: *r cleared; its path, precision, n (the whole
 * problem), repeat and variant (a printf format and its arguments) set;
 * its params opened with the schema's members of s (`{"gpus":2,...`), for
 * the caller to append its own members (each after a comma) and close
 * with `}`.  Returns the length of r->params, at most its size - 1, where
 * the caller's members go. */
int bench_scaling_row(bench_row *r, const bench_scaling *s, const char *path, const char *precision, long long n,
                      int repeat, const char *variant, ...) __attribute__((format(printf, 7, 8)));

#endif /* CLPHYS_BENCH_SCALING_H */
