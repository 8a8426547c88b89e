/* platform_probe.cl — the device's measured limits: stream copy and triad bandwidth
 * (bytes read + written), and multiply-add throughput (independent chains so
 * that latency is hidden; 2 flops per mad).  Built once per precision. */
#include "platform_common.h"

__kernel void probe_copy(__global const real4_t *a, __global real4_t *b)
{
    size_t i = get_global_id(0);
    b[i] = a[i];
}

__kernel void probe_triad(__global real4_t *a, __global const real4_t *b, __global const real4_t *c, real_t s)
{
    size_t i = get_global_id(0);
    a[i] = b[i] + s * c[i];
}

/* 8 independent chains x 4 unrolled = 32 mad per iteration per work-item. */
__kernel void probe_mad(__global real_t *out, real_t a, real_t b, int iters)
{
    real_t x0 = (real_t)get_global_id(0) * (real_t)1e-7f, x1 = x0 + (real_t)1, x2 = x0 + (real_t)2, x3 = x0 + (real_t)3,
           x4 = x0 + (real_t)4, x5 = x0 + (real_t)5, x6 = x0 + (real_t)6, x7 = x0 + (real_t)7;
    for (int it = 0; it < iters; it++) {
        for (int u = 0; u < 4; u++) {
            x0 = mad(x0, a, b);
            x1 = mad(x1, a, b);
            x2 = mad(x2, a, b);
            x3 = mad(x3, a, b);
            x4 = mad(x4, a, b);
            x5 = mad(x5, a, b);
            x6 = mad(x6, a, b);
            x7 = mad(x7, a, b);
        }
    }
    out[get_global_id(0)] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}

/* CPU shape: PoCL vectorizes the work-item loop only when it is innermost, so
 * a kernel with its own loop must carry explicit vectors (16 lanes per chain). */
__kernel void probe_mad_vec(__global real_t *out, real_t a, real_t b, int iters)
{
    real16_t x0 = (real16_t)((real_t)get_global_id(0) * (real_t)1e-7f), x1 = x0 + (real_t)1, x2 = x0 + (real_t)2,
             x3 = x0 + (real_t)3, x4 = x0 + (real_t)4, x5 = x0 + (real_t)5, x6 = x0 + (real_t)6, x7 = x0 + (real_t)7;
    real16_t va = (real16_t)a, vb = (real16_t)b;
    for (int it = 0; it < iters; it++) {
        for (int u = 0; u < 4; u++) {
            x0 = mad(x0, va, vb);
            x1 = mad(x1, va, vb);
            x2 = mad(x2, va, vb);
            x3 = mad(x3, va, vb);
            x4 = mad(x4, va, vb);
            x5 = mad(x5, va, vb);
            x6 = mad(x6, va, vb);
            x7 = mad(x7, va, vb);
        }
    }
    real16_t s = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
    real8_t h = s.lo + s.hi;
    real4_t q = h.lo + h.hi;
    out[get_global_id(0)] = (q.x + q.y) + (q.z + q.w);
}
