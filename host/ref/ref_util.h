/* ref_util.h — the random inputs and order statistics that tests and bench
 * share (part of the reference library, not of libclphys): one SplitMix64
 * stream (Steele, Lea & Flood, OOPSLA 2014) and one median. */
#ifndef CLPHYS_REF_UTIL_H
#define CLPHYS_REF_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* The next 64 random bits of *state. */
uint64_t ref_splitmix64(uint64_t *state);
/* Uniform in [0, 1) with 53 random bits. */
double ref_uniform(uint64_t *state);
/* Random bits for element i of a stream seeded by seed, independent of the
 * order elements are drawn in (for filling arrays in parallel). */
uint64_t ref_hash64(uint64_t seed, uint64_t i);
/* Median of n samples (sorted in place); 0 for n <= 0. */
double ref_median(double *samples, int n);
/* Smallest of n samples; 0 for n <= 0. */
double ref_min(const double *samples, int n);

#endif
