/* platform_stage.h — geometry of the staged full list (cl/md_neighbor_staged.cl builds
 * it, lj_full_staged in cl/md_lj.cl uses it).  The cells are cut into blocks of
 * BX consecutive cells along x in one (y, z) row, block b = (bz * nc.y + by)
 * * nbx + bxi with nbx = ceil(nc.x / BX).  A block's stage is the positions
 * of the NS = 9 (BX + 2) cells around it, local cell lc = (dz + 1) * 3 (BX + 2)
 * + (dy + 1) (BX + 2) + lx, lx = 0 .. BX + 1 <-> cell x = bxi BX - 1 + lx,
 * y = by + dy, z = bz + dz (periodic), stored cell after cell from
 * base[b * (NS + 1) + lc].  A list entry of particle i is the slot of j in the
 * stage of i's block.  With fewer than BX + 2 cells along a dimension a cell
 * appears in several local cells; each entry names the one its search used. */
#ifndef CLPHYS_STAGE_H
#define CLPHYS_STAGE_H
#include "md_cell.h"

/* Global cell index of local cell lc of block b. */
static inline uint stage_cell(int4 nc, int bx, uint b, int lc)
{
    int nbx = (nc.x + bx - 1) / bx, w = bx + 2;
    int bxi = (int)(b % (uint)nbx), by = (int)(b / (uint)nbx) % nc.y, bz = (int)(b / (uint)nbx / (uint)nc.y);
    int lx = lc % w, r = lc / w;
    int x = cell_wrap(bxi * bx - 1 + lx, nc.x);
    int y = cell_wrap(by + r % 3 - 1, nc.y);
    int z = cell_wrap(bz + r / 3 - 1, nc.z);
    return (uint)((z * nc.y + y) * nc.x + x);
}
#endif
