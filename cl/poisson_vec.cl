/* poisson_vec.cl — fp64 vector kernels of a Poisson solve
 * (host/poisson/solve.c), over n cells:
 *   poisson_rhs    b = (sw w) (sr rhs) on wet cells (w > 0), 0 on land, so
 *                  that whatever the caller left in land cells is ignored;
 *                  sw and sr powers of two that keep b within range
 *   region_sums    per-work-group partial sums over the cells of one
 *                  singular region (label == region) of v, or of w v
 *   region_mean    shift[region] = scale * (the sum of region_sums' partials),
 *                  one work-group, so that the host need not wait for it
 *   region_shift   v -= shift[label], or w shift[label], on labelled cells
 * The projection of a singular region (include/clphys_poisson.h): b -= w
 * (sum b) / (sum w) (sums of v, shift weighted) and x -= (sum w x) / (sum w)
 * (sums weighted, shift not); and, after every V-cycle in the CG, z loses
 * its plain mean over the region (sums and shift unweighted, scale 1 /
 * cells), which keeps the null space of A out of the search directions:
 * without it CG diverges once the residual reaches rounding (Kaasschieter,
 * J. Comput. Appl. Math. 24, 265 (1988)).  Built with -DREAL_T=double -DREAL_IS_DOUBLE=1
 * and -DVEC_WG, the work-group size of region_sums (a power of two). */
#include "platform_common.h"

__kernel void poisson_rhs(__global double *restrict b, __global const double *restrict rhs,
                          __global const double *restrict w, double sw, double sr, uint n)
{
    const uint i = get_global_id(0);
    if (i < n) b[i] = w[i] > 0 ? (sw * w[i]) * (sr * rhs[i]) : 0.0;
}

__kernel __attribute__((reqd_work_group_size(VEC_WG, 1, 1))) void
region_sums(__global double *restrict partial, __global const double *restrict v, __global const double *restrict w,
            __global const int *restrict label, int region, int weighted, uint n)
{
    __local double s[VEC_WG];
    double acc = 0;
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        if (label[i] == region) acc += weighted ? w[i] * v[i] : v[i];
    const uint l = get_local_id(0);
    s[l] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = VEC_WG / 2; k > 0; k >>= 1) {
        if (l < k) s[l] += s[l + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) partial[get_group_id(0)] = s[0];
}

__kernel __attribute__((reqd_work_group_size(VEC_WG, 1, 1))) void region_mean(__global double *restrict shift,
                                                                              __global const double *restrict partial,
                                                                              uint ngroups, int region, double scale)
{
    __local double s[VEC_WG];
    const uint l = get_local_id(0);
    double acc = 0;
    for (uint g = l; g < ngroups; g += VEC_WG) acc += partial[g];
    s[l] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = VEC_WG / 2; k > 0; k >>= 1) {
        if (l < k) s[l] += s[l + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) shift[region] = scale * s[0];
}

__kernel void region_shift(__global double *restrict v, __global const double *restrict w,
                           __global const int *restrict label, __global const double *restrict shift, int weighted,
                           uint n)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const int r = label[i];
    if (r >= 0) v[i] -= weighted ? w[i] * shift[r] : shift[r];
}
