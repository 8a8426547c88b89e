/* hierarchy.c — the coarse operators of the V-cycle (include/clphys_poisson.h),
 * on the host in fp64.
 *
 * Coarsening is in x and y only (2 x 2 columns -> 1, the layers kept): with
 * line relaxation along z, errors that are smooth along x and y are what
 * the smoother leaves, however strong the vertical coupling (Trottenberg et
 * al., Multigrid, 5.1).  A coarse cell aggregates the wet cells of its fine
 * columns; prolongation is piecewise constant onto those wet cells and
 * restriction its transpose.  The coarse operator keeps the Galerkin sums
 * for what piecewise-constant transfers represent exactly (the vertical
 * couplings and each cell's excess lambda V: a constant stays in the null
 * space, a Helmholtz term keeps its weight) and scales the horizontal ones:
 * the Galerkin product over-weights them by the factor 2 of the coarse
 * spacing, which rediscretization on the coarse grid does not
 * (coarse_scale 0.5), measured in bench/poisson-notes.md.  Everything is
 * taken over the mask, so coasts stay closed on every level; the kernels'
 * form (excess and couplings) keeps zero row sums exact. */
#include "poisson_internal.h"

#include <math.h>
#include <stdlib.h>

clphys_status poisson_coarsen(clphys_context *ctx, const poisson_op *f, double coarse_scale, poisson_op *c, int *sx_out,
                              int *sy_out)
{
    const int sx = f->nx > 1, sy = f->ny > 1;
    const int ncx = sx ? (f->nx + 1) / 2 : f->nx, ncy = sy ? (f->ny + 1) / 2 : f->ny, nz = f->nz;
    CP_TRY(poisson_op_alloc(ctx, c, ncx, ncy, nz));
    const size_t fplane = (size_t)f->nx * f->ny, cplane = (size_t)ncx * ncy;
    /* one coarse layer per thread: the sums of a layer touch that layer only */
#pragma omp parallel for schedule(static)
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < f->ny; j++)
            for (int i = 0; i < f->nx; i++) {
                const size_t fc = (size_t)i + (size_t)f->nx * j + fplane * k;
                if (!(f->mask[fc] & POISSON_WET)) continue;
                const int I = i >> sx, J = j >> sy;
                const size_t cc = (size_t)I + (size_t)ncx * J + cplane * k;
                c->mask[cc] = POISSON_WET;
                c->e[cc] += f->e[fc];
                c->az[cc] += f->az[fc];
                /* a horizontal coupling between two coarse cells is the coarse
                 * cell's forward coupling; one inside a coarse cell drops out */
                const int ie = i + 1 < f->nx ? i + 1 : 0, jn = j + 1 < f->ny ? j + 1 : 0;
                if (f->ax[fc] != 0 && (ie >> sx) != I) c->ax[cc] += coarse_scale * f->ax[fc];
                if (f->ay[fc] != 0 && (jn >> sy) != J) c->ay[cc] += coarse_scale * f->ay[fc];
            }
    for (size_t cc = 0; cc < c->n; cc++)
        if (!(c->mask[cc] & POISSON_WET)) c->e[cc] = 1;
    *sx_out = sx, *sy_out = sy;
    return CLPHYS_SUCCESS;
}
