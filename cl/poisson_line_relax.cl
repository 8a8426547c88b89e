/* poisson_line_relax.cl — the V-cycle of the Poisson path (host/poisson/vcycle.c):
 * damped Jacobi line relaxation along z and the transfers between levels
 * (include/clphys_poisson.h).  One work-item per (i, j) column, looping over
 * k: with D the column's tridiagonal block of A,
 *   x_new = x_old + omega D^-1 (b - A x_old)
 * (Trottenberg, Oosterlee & Schueller, Multigrid, 2001, 5.1.3), the
 * residual in the flux form of cl/poisson_stencil.cl and D solved by the
 * Thomas algorithm, its factors in private memory, in the form that keeps
 * every quantity a sum of non-negative terms: with u_k = -az_k the vertical
 * couplings and s_k = e_k + (horizontal couplings of k), the pivots are
 * p_k = q_k + u_k with q_k = s_k + u_(k-1) q_(k-1) / p_(k-1), q_0 = s_0.  The
 * usual p_k = a0_k - u_(k-1)^2 / p_(k-1) subtracts numbers 1e8 times larger
 * than the result on an ocean grid (fp32 has 7 digits).  A block that is
 * singular (no horizontal coupling, no excess: the whole problem on one
 * column, or an isolated column of a pure Neumann problem) ends in p = 0
 * exactly; that cell is fixed at 0 (a pseudo-inverse of the block).
 * Kernels:
 *   line_jacobi_zero      x_old = 0 (the first step of a level)
 *   line_jacobi           x_old = xo
 *   line_jacobi_prolong   x_old = xo + P e: the coarse correction e added on
 *                         the fly (piecewise constant onto wet cells)
 *   residual_restrict     bc = R (b - A x): one work-item per coarse column
 *                         sums the residuals of the wet cells of its fine
 *                         columns (R = P^T, so that the V-cycle is symmetric
 *                         on land entries too)
 * Coefficients (e, ax, ay, az) and wrap-around as cl/poisson_stencil.cl;
 * mask: 1 on wet cells (prolongation adds nothing to land).  The coarse
 * column of (i, j) is (i >> sx, j >> sy), sx, sy = 1 when the level below
 * is coarsened in x, y (((i + 1) >> sx, ...) with -DCSHIFT=1: poisson_line_relax.h).  Build options: -DREAL_T (the
 * level's precision: coefficients, x and the coarse correction ec), -DB_T, -DXO_T (types of b and of the output x; the
 * finest level reads the CG's r and writes its z in fp64 while working in fp32), -DNZ. */
#include "platform_common.h"
#include "poisson_line_relax.h"

static inline void line_jacobi_body(const int mode, __global XO_T *restrict xn, __global const real_t *restrict xo,
                                    __global const real_t *restrict ec, __global const uchar *restrict mask,
                                    __global const B_T *restrict b, __global const real_t *restrict e,
                                    __global const real_t *restrict ax, __global const real_t *restrict ay,
                                    __global const real_t *restrict az, real_t omega, int nx, int ny, int ncx, int ncy,
                                    int sx, int sy)
{
    const int i = get_global_id(0), j = get_global_id(1);
    if (i >= nx || j >= ny) return;
    const int plane = nx * ny, cplane = ncx * ncy, col = i + nx * j;
    const cols_t q = columns(i, j, nx, ny, ncx, sx, sy);
    real_t dp[NZ], gp[NZ];
    real_t dprev = 0, rq = 0, up = 0; /* d', q/p and u of the cell above */
    real_t xm = 0, xc = XOLD(col, q.pc, 0);
    for (int k = 0; k < NZ; k++) {
        const int c = col + k * plane, cb = k + 1 < NZ ? c + plane : c;
        const real_t xp = k + 1 < NZ ? XOLD(cb, q.pc, k + 1) : xc;
        const real_t tw = -ax[c + q.dw], te = -ax[c], ts = -ay[c + q.ds], tn = -ay[c], u = -az[c], ek = e[c];
        real_t r = (real_t)b[c];
        if (mode != 0)
            r -= ek * xc + te * (xc - XOLD(c + q.de, q.pe, k)) + tw * (xc - XOLD(c + q.dw, q.pw, k)) +
                 tn * (xc - XOLD(c + q.dn, q.pn, k)) + ts * (xc - XOLD(c + q.ds, q.ps, k)) + u * (xc - xp) +
                 up * (xc - xm);
        const real_t qk = ek + tw + te + ts + tn + up * rq;
        const real_t piv = qk + u;
        const real_t inv = piv > 0 ? (real_t)1 / piv : (real_t)0;
        rq = qk * inv;
        gp[k] = u * inv;
        dprev = dp[k] = (r + up * dprev) * inv;
        up = u;
        xm = xc, xc = xp;
    }
    real_t dlt = 0;
    for (int k = NZ - 1; k >= 0; k--) {
        const int c = col + k * plane;
        dlt = dp[k] + gp[k] * dlt;
        xn[c] = (XO_T)(XOLD(c, q.pc, k) + omega * dlt);
    }
}

#define LINE_ARGS                                                                                                      \
    __global XO_T *restrict xn, __global const real_t *restrict xo, __global const real_t *restrict ec,                \
        __global const uchar *restrict mask, __global const B_T *restrict b, __global const real_t *restrict e,        \
        __global const real_t *restrict ax, __global const real_t *restrict ay, __global const real_t *restrict az,    \
        real_t omega, int nx, int ny, int ncx, int ncy, int sx, int sy
#define LINE_PASS xn, xo, ec, mask, b, e, ax, ay, az, omega, nx, ny, ncx, ncy, sx, sy

__kernel KERNEL_SG void line_jacobi_zero(LINE_ARGS) { line_jacobi_body(0, LINE_PASS); }
__kernel KERNEL_SG void line_jacobi(LINE_ARGS) { line_jacobi_body(1, LINE_PASS); }
__kernel KERNEL_SG void line_jacobi_prolong(LINE_ARGS) { line_jacobi_body(2, LINE_PASS); }

__kernel KERNEL_SG void residual_restrict(__global real_t *restrict bc, __global const real_t *restrict x,
                                          __global const uchar *restrict mask, __global const B_T *restrict b,
                                          __global const real_t *restrict e, __global const real_t *restrict ax,
                                          __global const real_t *restrict ay, __global const real_t *restrict az,
                                          int nx, int ny, int ncx, int ncy, int sx, int sy)
{
    const int I = get_global_id(0), J = get_global_id(1);
    if (I >= ncx || J >= ncy) return;
    const int cplane = ncx * ncy;
    const int i0 = FLO(I, sx), j0 = FLO(J, sy), i1 = FHI(I, sx, nx), j1 = FHI(J, sy, ny);
    for (int k = 0; k < NZ; k++)
        bc[I + ncx * J + k * cplane] = restricted_at(i0, i1, j0, j1, k, nx, ny, ncx, sx, sy, x, mask, b, e, ax, ay, az);
}
