/* stats.c — order statistics of repeated timings, and the host clock they use. */
#include "bench.h"

#include <stdlib.h>
#include <time.h>

double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    if (n <= 0) return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double bench_min(const double *v, int n)
{
    double m = n > 0 ? v[0] : 0;
    for (int i = 1; i < n; i++)
        if (v[i] < m) m = v[i];
    return m;
}
