/* poisson_line_staged.cl — the V-cycle kernels of cl/poisson_line_relax.cl in the shape GPUs
 * run well (variant staged, include/clphys_poisson.h): a work-group takes a
 * tile of wx consecutive columns (c = i + nx j, so that a tile of a coarse
 * level with nx < wx still reads whole runs) with wk work-items per column,
 * and runs in three phases:
 *   1. every work-item, for the layers k = lk, lk + wk, ... of its column,
 *      computes the residual r_k = b - A x_old, the row sum s_k of the
 *      column's tridiagonal block without its vertical couplings and the
 *      coupling u_k to the layer below, into local memory;
 *   2. one work-item per column runs the Thomas algorithm of
 *      cl/poisson_line_relax.cl (the same arithmetic, in the same order) on them;
 *   3. every work-item writes x_new = x_old + omega delta for its layers.
 * The global loads and stores are those of the column kernels, coalesced
 * along the tile; none of them waits in the sequential recurrence, which
 * reads only local memory, and the recurrence's 2 nz values per column
 * live there instead of in private arrays (off-chip local memory on GPUs,
 * bench/poisson-notes.md).  With few columns (coarse levels) the host
 * gives a tile fewer columns and more work-items per column.
 * Kernels:
 *   line_staged_zero, line_staged, line_staged_prolong
 *                   x_old = 0, xo, xo + P e (as line_jacobi_zero,
 *                   line_jacobi, line_jacobi_prolong)
 *   restrict_staged bc = R (b - A x) on the next level, and that level's
 *                   first step from x = 0 (the work-group sums the fine
 *                   residuals of its coarse columns, layers in parallel,
 *                   and relaxes them at once: x_c = omega D_c^-1 bc)
 * Local arrays: three of wx (NZ | 1) reals each (column lx at lx (NZ | 1):
 * an odd stride, so that the work-items of one layer hit different banks).
 * Build options as cl/poisson_line_relax.cl. */
#include "platform_common.h"
#include "poisson_line_relax.h"

#define LS (NZ | 1)

/* The Thomas algorithm of cl/poisson_line_relax.cl on one column's local arrays:
 * r holds r_k and gets the correction delta_k, s holds s_k and gets g_k,
 * u holds u_k. */
static inline void thomas_local(__local real_t *r, __local real_t *s, __local const real_t *u)
{
    real_t dprev = 0, rq = 0, up = 0;
    for (int k = 0; k < NZ; k++) {
        const real_t uk = u[k];
        const real_t qk = s[k] + up * rq;
        const real_t piv = qk + uk;
        const real_t inv = piv > 0 ? (real_t)1 / piv : (real_t)0;
        rq = qk * inv;
        s[k] = uk * inv;
        dprev = r[k] = (r[k] + up * dprev) * inv;
        up = uk;
    }
    real_t dlt = 0;
    for (int k = NZ - 1; k >= 0; k--) r[k] = dlt = r[k] + s[k] * dlt;
}

static inline void line_staged_body(const int mode, __global XO_T *restrict xn, __global const real_t *restrict xo,
                                    __global const real_t *restrict ec, __global const uchar *restrict mask,
                                    __global const B_T *restrict b, __global const real_t *restrict e,
                                    __global const real_t *restrict ax, __global const real_t *restrict ay,
                                    __global const real_t *restrict az, real_t omega, int nx, int ny, int ncx, int ncy,
                                    int sx, int sy, __local real_t *lr, __local real_t *ls, __local real_t *lu)
{
    const int plane = nx * ny, cplane = ncx * ncy, col = get_global_id(0);
    const int lk = get_local_id(1), wk = get_local_size(1), l0 = get_local_id(0) * LS;
    const int on = col < plane; /* padding columns only meet the barriers */
    const cols_t q = columns(on ? col % nx : 0, on ? col / nx : 0, nx, ny, ncx, sx, sy);
    for (int k = lk; on && k < NZ; k += wk) {
        const int c = col + k * plane;
        const real_t xc = XOLD(c, q.pc, k);
        const real_t tw = -ax[c + q.dw], te = -ax[c], ts = -ay[c + q.ds], tn = -ay[c], u = -az[c], ek = e[c];
        real_t r = (real_t)b[c];
        if (mode != 0) {
            const real_t xp = k + 1 < NZ ? XOLD(c + plane, q.pc, k + 1) : xc;
            const real_t xm = k > 0 ? XOLD(c - plane, q.pc, k - 1) : (real_t)0;
            const real_t up = k > 0 ? -az[c - plane] : (real_t)0;
            r -= ek * xc + te * (xc - XOLD(c + q.de, q.pe, k)) + tw * (xc - XOLD(c + q.dw, q.pw, k)) +
                 tn * (xc - XOLD(c + q.dn, q.pn, k)) + ts * (xc - XOLD(c + q.ds, q.ps, k)) + u * (xc - xp) +
                 up * (xc - xm);
        }
        lr[l0 + k] = r;
        ls[l0 + k] = ek + tw + te + ts + tn;
        lu[l0 + k] = u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (on && lk == 0) thomas_local(lr + l0, ls + l0, lu + l0);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = lk; on && k < NZ; k += wk) {
        const int c = col + k * plane;
        xn[c] = (XO_T)(XOLD(c, q.pc, k) + omega * lr[l0 + k]);
    }
}

#define STAGED_ARGS                                                                                                    \
    __global XO_T *restrict xn, __global const real_t *restrict xo, __global const real_t *restrict ec,                \
        __global const uchar *restrict mask, __global const B_T *restrict b, __global const real_t *restrict e,        \
        __global const real_t *restrict ax, __global const real_t *restrict ay, __global const real_t *restrict az,    \
        real_t omega, int nx, int ny, int ncx, int ncy, int sx, int sy, __local real_t *lr, __local real_t *ls,        \
        __local real_t *lu
#define STAGED_PASS xn, xo, ec, mask, b, e, ax, ay, az, omega, nx, ny, ncx, ncy, sx, sy, lr, ls, lu

__kernel KERNEL_SG void line_staged_zero(STAGED_ARGS) { line_staged_body(0, STAGED_PASS); }
__kernel KERNEL_SG void line_staged(STAGED_ARGS) { line_staged_body(1, STAGED_PASS); }
__kernel KERNEL_SG void line_staged_prolong(STAGED_ARGS) { line_staged_body(2, STAGED_PASS); }

/* Work-groups over tiles of coarse columns; each coarse cell's residual
 * summed as residual_restrict sums it (restricted_at). */
__kernel KERNEL_SG void restrict_staged(__global real_t *restrict xcn, __global real_t *restrict bc,
                                        __global const real_t *restrict x, __global const uchar *restrict mask,
                                        __global const B_T *restrict b, __global const real_t *restrict e,
                                        __global const real_t *restrict ax, __global const real_t *restrict ay,
                                        __global const real_t *restrict az, __global const real_t *restrict ce,
                                        __global const real_t *restrict cax, __global const real_t *restrict cay,
                                        __global const real_t *restrict caz, real_t omega, int nx, int ny, int ncx,
                                        int ncy, int sx, int sy, __local real_t *lr, __local real_t *ls,
                                        __local real_t *lu)
{
    const int cplane = ncx * ncy, cc0 = get_global_id(0);
    const int lk = get_local_id(1), wk = get_local_size(1), l0 = get_local_id(0) * LS;
    const int on = cc0 < cplane;
    const int I = on ? cc0 % ncx : 0, J = on ? cc0 / ncx : 0;
    const int i0 = FLO(I, sx), j0 = FLO(J, sy), i1 = FHI(I, sx, nx), j1 = FHI(J, sy, ny);
    /* the coarse column's west and south neighbours, for its row sums */
    const int cdw = (I > 0 ? I - 1 : ncx - 1) - I, cds = ((J > 0 ? J - 1 : ncy - 1) - J) * ncx;
    for (int k = lk; on && k < NZ; k += wk) {
        const real_t s = restricted_at(i0, i1, j0, j1, k, nx, ny, ncx, sx, sy, x, mask, b, e, ax, ay, az);
        const int cc = cc0 + k * cplane;
        bc[cc] = s;
        const real_t tw = -cax[cc + cdw], te = -cax[cc], ts = -cay[cc + cds], tn = -cay[cc], ek = ce[cc];
        lr[l0 + k] = s;
        ls[l0 + k] = ek + tw + te + ts + tn;
        lu[l0 + k] = -caz[cc];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (on && lk == 0) thomas_local(lr + l0, ls + l0, lu + l0);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = lk; on && k < NZ; k += wk) xcn[cc0 + k * cplane] = (real_t)0 + omega * lr[l0 + k];
}
