/* poisson_line_relax.h — what the two GPU shapes of the V-cycle's kernels share
 * (cl/poisson_line_relax.cl, one work-item per column; cl/poisson_line_staged.cl, a
 * work-group per tile of columns): the neighbouring columns of (i, j) with
 * their coarse columns, x_old with the coarse correction added on the fly,
 * the residual b - A x of one cell and its restriction to a coarse cell.  Coefficients (e, ax, ay, az),
 * flux form and wrap-around as cl/poisson_stencil.cl.  Needs -DNZ and
 * -DREAL_T; B_T (type of b) defaults to real_t.  Include after platform_common.h. */
#ifndef CLPHYS_CL_LINE_RELAX_H
#define CLPHYS_CL_LINE_RELAX_H

#ifndef B_T
#define B_T real_t
#endif
#ifndef XO_T
#define XO_T real_t
#endif
/* -DCSHIFT=1 (a rank's block of a distributed plan, host/poisson/mpi_plan.c):
 * the block starts at local column 1 behind a one-cell halo on every level,
 * so that fine column i lies in coarse column (i + 1) >> 1 and coarse
 * column I holds fine columns 2 I - 1 and 2 I (where coarsened); 0: i >> 1. */
#ifndef CSHIFT
#define CSHIFT 0
#endif
/* the coarse column of fine column i; the fine columns [FLO, FHI) of coarse
 * column I (s: 1 where coarsened, 0 where not; n: the fine extent) */
#define CCOL(i, s)   (((i) + ((s) ? CSHIFT : 0)) >> (s))
#define FLO(I, s)    max(((I) << (s)) - ((s) ? CSHIFT : 0), 0)
#define FHI(I, s, n) min(((I) << (s)) - ((s) ? CSHIFT : 0) + (1 << (s)), (n))

/* The neighbours of column (i, j) in x and y, with wrap-around. */
typedef struct {
    int dw, de, ds, dn;     /* index offsets of the four neighbouring columns */
    int pc, pw, pe, ps, pn; /* their coarse columns (and that of (i, j))    */
} cols_t;

static inline cols_t columns(int i, int j, int nx, int ny, int ncx, int sx, int sy)
{
    const int iw = i > 0 ? i - 1 : nx - 1, ie = i + 1 < nx ? i + 1 : 0;
    const int js = j > 0 ? j - 1 : ny - 1, jn = j + 1 < ny ? j + 1 : 0;
    cols_t q;
    q.dw = iw - i, q.de = ie - i, q.ds = (js - j) * nx, q.dn = (jn - j) * nx;
    q.pc = CCOL(i, sx) + ncx * CCOL(j, sy);
    q.pw = CCOL(iw, sx) + ncx * CCOL(j, sy), q.pe = CCOL(ie, sx) + ncx * CCOL(j, sy);
    q.ps = CCOL(i, sx) + ncx * CCOL(js, sy), q.pn = CCOL(i, sx) + ncx * CCOL(jn, sy);
    return q;
}

/* x_old at cell c, coarse cell p, layer kk: mode 0 zero, 1 xo, 2 xo + P e
 * (needs mode, xo, ec, mask and cplane in scope) */
#define XOLD(c, p, kk) (mode == 0 ? (real_t)0 : xo[c] + (mode == 2 && mask[c] ? ec[(p) + (kk)*cplane] : (real_t)0))

/* (b - A x) at cell c = (i, j, k) of a column with neighbour offsets q */
static inline real_t residual_at(int c, int k, int plane, const cols_t q, __global const real_t *restrict x,
                                 __global const B_T *restrict b, __global const real_t *restrict e,
                                 __global const real_t *restrict ax, __global const real_t *restrict ay,
                                 __global const real_t *restrict az)
{
    const int u = k > 0 ? c - plane : c, d = k + 1 < NZ ? c + plane : c;
    const real_t azu = k > 0 ? az[u] : 0, xc = x[c];
    const real_t ax_ = e[c] * xc - ax[c] * (xc - x[c + q.de]) - ax[c + q.dw] * (xc - x[c + q.dw]) -
                       ay[c] * (xc - x[c + q.dn]) - ay[c + q.ds] * (xc - x[c + q.ds]) - az[c] * (xc - x[d]) -
                       azu * (xc - x[u]);
    return (real_t)b[c] - ax_;
}

/* R (b - A x) at coarse cell (I, J, k): the sum of the residuals of the wet
 * fine cells of columns i0 <= i < i1, j0 <= j < j1 (R = P^T, so that the
 * V-cycle is symmetric on land entries too); one order for every kernel */
static inline real_t restricted_at(int i0, int i1, int j0, int j1, int k, int nx, int ny, int ncx, int sx, int sy,
                                   __global const real_t *restrict x, __global const uchar *restrict mask,
                                   __global const B_T *restrict b, __global const real_t *restrict e,
                                   __global const real_t *restrict ax, __global const real_t *restrict ay,
                                   __global const real_t *restrict az)
{
    const int plane = nx * ny;
    real_t s = 0;
    for (int j = j0; j < j1; j++)
        for (int i = i0; i < i1; i++) {
            const int c = i + nx * j + k * plane;
            if (mask[c]) s += residual_at(c, k, plane, columns(i, j, nx, ny, ncx, sx, sy), x, b, e, ax, ay, az);
        }
    return s;
}

#endif /* CLPHYS_CL_LINE_RELAX_H */
