/* grid.c — the process grid of a lattice split between ranks or devices
 * (include/clphys_lqcd.h): a rank's place and its sublattice, its
 * neighbours, the numbering of a face. */
#include "lqcd_internal.h"

clphys_status clphys_lqcd_grid_local(const int dims[4], const int grid[4], int rank, int local[4], int coord[4])
{
    static const char dir[4] = {'x', 'y', 'z', 't'};
    if (!dims || !grid) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "process grid: NULL argument");
    long long size = 1;
    for (int mu = 0; mu < 4; mu++) {
        if (grid[mu] < 1)
            return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "process grid %dx%dx%dx%d: %c entry below 1", grid[0],
                            grid[1], grid[2], grid[3], dir[mu]);
        const int l = dims[mu] / grid[mu];
        if (dims[mu] % grid[mu] || l < 2 || l % 2)
            return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                            "process grid %dx%dx%dx%d does not divide the lattice %dx%dx%dx%d: the %c extent %d over "
                            "%d ranks must give an even local extent >= 2",
                            grid[0], grid[1], grid[2], grid[3], dims[0], dims[1], dims[2], dims[3], dir[mu], dims[mu],
                            grid[mu]);
        size *= grid[mu];
    }
    if (rank < 0 || rank >= size)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "process grid %dx%dx%dx%d has %lld ranks, not rank %d",
                        grid[0], grid[1], grid[2], grid[3], size, rank);
    int r = rank;
    for (int mu = 0; mu < 4; mu++) {
        if (local) local[mu] = dims[mu] / grid[mu];
        if (coord) coord[mu] = r % grid[mu];
        r /= grid[mu];
    }
    return CLPHYS_SUCCESS;
}

int lqcd_grid_rank(const int grid[4], const int coord[4])
{
    return coord[0] + grid[0] * (coord[1] + grid[1] * (coord[2] + grid[2] * coord[3]));
}

void lqcd_grid_neighbours(const int grid[4], const int coord[4], int up[4], int down[4])
{
    for (int mu = 0; mu < 4; mu++) {
        int c[4] = {coord[0], coord[1], coord[2], coord[3]};
        c[mu] = (coord[mu] + 1) % grid[mu];
        up[mu] = lqcd_grid_rank(grid, c);
        c[mu] = (coord[mu] + grid[mu] - 1) % grid[mu];
        down[mu] = lqcd_grid_rank(grid, c);
    }
}

size_t lqcd_face_index(const int dims[4], const int c[4], int mu, int half)
{
    size_t idx = 0, stride = 1;
    for (int nu = 0; nu < 4; nu++)
        if (nu != mu) {
            idx += (size_t)c[nu] * stride;
            stride *= (size_t)dims[nu];
        }
    return half ? idx >> 1 : idx;
}
