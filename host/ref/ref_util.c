/* ref_util.c — see ref_util.h. */
#include "ref_util.h"

#include <stdlib.h>

uint64_t ref_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double ref_uniform(uint64_t *state) { return (double)(ref_splitmix64(state) >> 11) * 0x1.0p-53; }

uint64_t ref_hash64(uint64_t seed, uint64_t i)
{
    uint64_t s = seed + i * 0x9e3779b97f4a7c15ULL;
    return ref_splitmix64(&s);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ref_median(double *v, int n)
{
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double ref_min(const double *v, int n)
{
    double m = n > 0 ? v[0] : 0;
    for (int i = 1; i < n; i++)
        if (v[i] < m) m = v[i];
    return m;
}
