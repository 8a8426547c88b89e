/* md_cell.h — the cell of a position and the minimum image: one rule for the
 * cell list, the sort and the neighbour builds (they must agree: a particle
 * binned in one cell and searched from another would lose pairs).  The
 * position is wrapped into [0, box) first; the clamp catches wrap-around
 * rounding to exactly box. */
#ifndef CLPHYS_CELL_H
#define CLPHYS_CELL_H
#include "platform_common.h"

/* p wrapped into the periodic box (w unchanged). */
static inline real4_t wrap_box(real4_t p, real4_t box)
{
    return (real4_t)(p.x - box.x * floor(p.x / box.x), p.y - box.y * floor(p.y / box.y),
                     p.z - box.z * floor(p.z / box.z), p.w);
}

static inline int4 cell_of(real4_t p, real4_t box, int4 nc)
{
    real4_t w = wrap_box(p, box);
    return (int4)(clamp((int)(w.x * (real_t)nc.x / box.x), 0, nc.x - 1),
                  clamp((int)(w.y * (real_t)nc.y / box.y), 0, nc.y - 1),
                  clamp((int)(w.z * (real_t)nc.z / box.z), 0, nc.z - 1), 0);
}
/* Minimum image for positions inside [0, box] (wrapped on upload and by the
 * integrator): one conditional shift, no division. */
static inline real_t nb_image(real_t d, real_t b)
{
    real_t h = REAL_C(0.5) * b;
    d = d > h ? d - b : d;
    return d < -h ? d + b : d;
}
/* Cell coordinate v taken periodically into 0 .. m-1 (any int v). */
static inline int cell_wrap(int v, int m)
{
    v %= m;
    return v < 0 ? v + m : v;
}
/* Neighbour-cell offsets to search along each dimension, lo[d] .. hi[d]:
 * with 2 cells -1 and +1 are the same cell, with 1 all three are, so each
 * distinct cell is visited once. */
static inline void search_range(int4 nc, int4 *lo, int4 *hi)
{
    *lo = (int4)(nc.x > 2 ? -1 : 0, nc.y > 2 ? -1 : 0, nc.z > 2 ? -1 : 0, 0);
    *hi = (int4)(nc.x > 1 ? 1 : 0, nc.y > 1 ? 1 : 0, nc.z > 1 ? 1 : 0, 0);
}
#endif
