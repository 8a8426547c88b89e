/* rng.c — the one pseudo-random stream of the library (SplitMix64, Steele,
 * Lea & Flood, OOPSLA 2014): seeded inputs (fcc velocities, Plummer spheres,
 * hot gauge fields, shuffled lists) are reproducible from their seed alone. */
#include "platform.h"

uint64_t cp_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
