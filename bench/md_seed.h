/* md_seed.h — the seed's LJ benchmark input for bench/md.c: fcc with m =
 * floor(edge / a) cells per side, a = (4 / rho)^(1/3), 4 atoms per cell,
 * each coordinate jittered by 0.1 u, u uniform in [0, 1) from a 64-bit LCG
 * seeded by rho (the generator of the experiments in bench/md-notes.md, so
 * their tables and the bench rows time the same particles).  Returns
 * positions (3 n doubles, malloc'd; NULL when out of memory), n and the
 * cubic box. */
#ifndef CLPHYS_BENCH_MD_SEED_H
#define CLPHYS_BENCH_MD_SEED_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static inline double *md_seed_system(double rho, double edge, size_t *n, double box[3])
{
    double a = pow(4.0 / rho, 1.0 / 3.0);
    int m = (int)floor(edge / a);
    static const double basis[4][3] = {{0, 0, 0}, {.5, .5, 0}, {.5, 0, .5}, {0, .5, .5}};
    *n = 4 * (size_t)m * m * m;
    box[0] = box[1] = box[2] = m * a;
    double *pos = malloc(3 * *n * sizeof *pos);
    if (!pos) return NULL;
    uint64_t s = 0x5eed + (uint64_t)(rho * 1000);
    size_t i = 0;
    for (int z = 0; z < m; z++)
        for (int y = 0; y < m; y++)
            for (int x = 0; x < m; x++)
                for (int b = 0; b < 4; b++, i++) {
                    int c3[3] = {x, y, z};
                    for (int c = 0; c < 3; c++) {
                        s = s * 6364136223846793005ull + 1442695040888963407ull;
                        double u = (double)(s >> 11) / 9007199254740992.0;
                        pos[3 * i + c] = (c3[c] + basis[b][c]) * a + 0.1 * u;
                    }
                }
    return pos;
}

#endif
