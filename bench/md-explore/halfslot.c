/* halfslot.c — experiment: half-cas with slot-coded list entries
 * (halfslot.cl) on the seed benchmark (fcc, density 0.5 / 1.0, box 50, r_cut
 * 3.0, search 3.3, neighbour order shuffled, 100 calls), against the
 * library's half-cas and full-transposed in the same run.  The host builds
 * the block order, the half-space list, the slots and (optionally) an order
 * of each warp's entries in which no two lanes of a step share a slot.
 * Every row is verified against an fp64 host reference of the same pairs.
 * Run: build-rel/x/halfslot [count|run] [d05|d1|all] [names|-]  (halfslot.sh builds it) */
#include "host/md/md_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../md_seed.h"

static clphys_context *ctx;

static double img(double d, double b)
{
    double h = 0.5 * b;
    d = d > h ? d - b : d;
    return d < -h ? d + b : d;
}

typedef struct {
    size_t n;
    double box[3];
    int nc[3], bs[3], nb[3], nblk, wg, slots_max, kmax, max_ni;
    double *pos;         /* block order, 3n */
    uint32_t *bstart, *sstart, *cnt;
    int32_t *slot_j, *jl; /* jl: transposed by row, kmax * n */
    uint32_t *rowi;       /* particle of row r */
    uint16_t *sl;
    size_t npairs, nfull, lanes_steps, conflicts, wave, wsteps;
} hs_sys;

static int wrap(int v, int m) { return v < 0 ? v + m : v >= m ? v - m : v; }

/* Bank matching for one lane group at one step (sched 3): lane u may take
 * any remaining entry of its list (ent[u][0..ne[u])) whose slot is not used
 * yet in this step; a maximum matching of lanes to banks (slot mod bank),
 * by augmenting paths (Kuhn). */
typedef struct {
    int nl, bank;
    const uint32_t *ent[32];
    int ne[32];
    const int32_t *slot_of;
    const int *stamp;
    int st;
    int mbank[32], pick[32], seen[32];
} hs_match;

static int hs_try(hs_match *M, int u)
{
    for (int x = 0; x < M->ne[u]; x++) {
        uint32_t e = M->ent[u][0] + (uint32_t)x;
        int sv = M->slot_of[e];
        if (M->stamp[sv] == M->st) continue;
        int b = sv % M->bank;
        if (M->seen[b]) continue;
        M->seen[b] = 1;
        if (M->mbank[b] < 0 || hs_try(M, M->mbank[b])) {
            M->mbank[b] = u;
            M->pick[u] = (int)e;
            return 1;
        }
    }
    return 0;
}

/* Block order, half-space list (shuffled, then scheduled if sched), slots. */
static int hs_build(hs_sys *S, const double *pin, size_t n, const double box[3], double rs, const int bs[3],
                    int sched, int wg, int window, int sortlen, int bank)
{
    memset(S, 0, sizeof *S);
    S->n = n;
    for (int d = 0; d < 3; d++) {
        S->box[d] = box[d];
        S->nc[d] = (int)floor(box[d] / rs);
        S->bs[d] = bs[d];
        S->nb[d] = (S->nc[d] + bs[d] - 1) / bs[d];
        if (S->nc[d] < 3) return -1;
    }
    int ncell = S->nc[0] * S->nc[1] * S->nc[2];
    S->nblk = S->nb[0] * S->nb[1] * S->nb[2];
    int bv = bs[0] * bs[1] * bs[2];
    /* key = block * bv + local cell; the cells of a block in x-fastest order */
    size_t nkey = (size_t)S->nblk * bv;
    uint32_t *kc = calloc(nkey + 1, 4), *key = malloc(n * 4), *cellof = malloc(n * 4);
    int *keycell = malloc(nkey * sizeof(int));
    for (size_t q = 0; q < nkey; q++) keycell[q] = -1;
    for (size_t i = 0; i < n; i++) {
        int c[3];
        for (int d = 0; d < 3; d++) {
            double x = pin[3 * i + d] - box[d] * floor(pin[3 * i + d] / box[d]);
            c[d] = (int)(x * S->nc[d] / box[d]);
            c[d] = c[d] < 0 ? 0 : c[d] >= S->nc[d] ? S->nc[d] - 1 : c[d];
        }
        int b = ((c[2] / bs[2]) * S->nb[1] + c[1] / bs[1]) * S->nb[0] + c[0] / bs[0];
        int l = ((c[2] % bs[2]) * bs[1] + c[1] % bs[1]) * bs[0] + c[0] % bs[0];
        key[i] = (uint32_t)b * bv + l;
        keycell[key[i]] = (c[2] * S->nc[1] + c[1]) * S->nc[0] + c[0];
        kc[key[i] + 1]++;
    }
    for (size_t q = 0; q < nkey; q++) kc[q + 1] += kc[q];
    uint32_t *fill = malloc(nkey * 4);
    memcpy(fill, kc, nkey * 4);
    S->pos = malloc(3 * n * sizeof(double));
    uint32_t *cstart = calloc(ncell, 4), *ccount = calloc(ncell, 4);
    for (size_t i = 0; i < n; i++) {
        uint32_t s = fill[key[i]]++;
        for (int d = 0; d < 3; d++)
            S->pos[3 * s + d] = pin[3 * i + d] - box[d] * floor(pin[3 * i + d] / box[d]);
    }
    for (size_t q = 0; q < nkey; q++)
        if (keycell[q] >= 0) {
            cstart[keycell[q]] = kc[q];
            ccount[keycell[q]] = kc[q + 1] - kc[q];
            for (uint32_t s = kc[q]; s < kc[q + 1]; s++) cellof[s] = keycell[q];
        }
    S->bstart = malloc((S->nblk + 1) * 4);
    for (int b = 0; b <= S->nblk; b++) S->bstart[b] = kc[(size_t)b * bv];
    /* half-space list, shuffled */
    double rs2 = rs * rs;
    uint32_t *off = calloc(n + 1, 4);
    size_t cap = 64 * n;
    int32_t *lst = malloc(cap * 4);
    size_t np = 0, nfull = 0;
    uint64_t rng = 12345;
    for (size_t i = 0; i < n; i++) {
        int c = cellof[i], cx = c % S->nc[0], cy = c / S->nc[0] % S->nc[1], cz = c / S->nc[0] / S->nc[1];
        size_t k0 = np;
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int cc = (wrap(cz + dz, S->nc[2]) * S->nc[1] + wrap(cy + dy, S->nc[1])) * S->nc[0] +
                             wrap(cx + dx, S->nc[0]);
                    for (uint32_t j = cstart[cc]; j < cstart[cc] + ccount[cc]; j++) {
                        if (j == i) continue;
                        double rx = img(S->pos[3 * j] - S->pos[3 * i], box[0]);
                        double ry = img(S->pos[3 * j + 1] - S->pos[3 * i + 1], box[1]);
                        double rz = img(S->pos[3 * j + 2] - S->pos[3 * i + 2], box[2]);
                        if (rx * rx + ry * ry + rz * rz >= rs2) continue;
                        nfull++;
                        int up = rz > 0 || (rz == 0 && (ry > 0 || (ry == 0 && (rx > 0 || (rx == 0 && j > i)))));
                        if (!up) continue;
                        if (np == cap) lst = realloc(lst, (cap *= 2) * 4);
                        lst[np++] = (int32_t)j;
                    }
                }
        for (size_t k = np - 1; k > k0 && np > k0; k--) { /* Fisher-Yates */
            size_t r = k0 + cp_splitmix64(&rng) % (k - k0 + 1);
            int32_t t = lst[k]; lst[k] = lst[r]; lst[r] = t;
        }
        off[i + 1] = (uint32_t)np;
    }
    S->npairs = np, S->nfull = nfull;
    /* slots: the block's own i first, then the other cells its entries reach */
    S->sstart = malloc((S->nblk + 1) * 4);
    int32_t *cbase = malloc(ncell * sizeof(int32_t));
    for (int c = 0; c < ncell; c++) cbase[c] = -1;
    int32_t *slot_of = malloc(np * 4); /* per entry */
    size_t scap = 2 * n, sn = 0;
    S->slot_j = malloc(scap * 4);
    int *cells = malloc(ncell * sizeof(int));
    S->slots_max = 0, S->max_ni = 0;
    for (int b = 0; b < S->nblk; b++) {
        uint32_t i0 = S->bstart[b], i1 = S->bstart[b + 1];
        S->sstart[b] = (uint32_t)sn;
        int nci = 0;
        if ((int)(i1 - i0) > S->max_ni) S->max_ni = (int)(i1 - i0);
        for (uint32_t i = i0; i < i1; i++) {
            if (sn == scap) S->slot_j = realloc(S->slot_j, (scap *= 2) * 4);
            S->slot_j[sn++] = (int32_t)i;
        }
        for (uint32_t i = i0; i < i1; i++)
            for (uint32_t k = off[i]; k < off[i + 1]; k++) {
                int j = lst[k];
                if ((uint32_t)j >= i0 && (uint32_t)j < i1) continue;
                int cj = (int)cellof[j];
                if (cbase[cj] == -1) cbase[cj] = -2, cells[nci++] = cj;
            }
        for (int q = 0; q < nci; q++) { /* cells in index order */
            for (int r = q + 1; r < nci; r++)
                if (cells[r] < cells[q]) { int t = cells[q]; cells[q] = cells[r]; cells[r] = t; }
            int c = cells[q];
            cbase[c] = (int32_t)(sn - S->sstart[b]);
            for (uint32_t j = cstart[c]; j < cstart[c] + ccount[c]; j++) {
                if (sn == scap) S->slot_j = realloc(S->slot_j, (scap *= 2) * 4);
                S->slot_j[sn++] = (int32_t)j;
            }
        }
        for (uint32_t i = i0; i < i1; i++)
            for (uint32_t k = off[i]; k < off[i + 1]; k++) {
                int j = lst[k];
                slot_of[k] = ((uint32_t)j >= i0 && (uint32_t)j < i1) ? (int32_t)(j - i0)
                                                                       : cbase[cellof[j]] + (int32_t)(j - cstart[cellof[j]]);
            }
        for (int q = 0; q < nci; q++) cbase[cells[q]] = -1;
        int ns = (int)(sn - S->sstart[b]);
        if (ns > S->slots_max) S->slots_max = ns;
    }
    S->sstart[S->nblk] = (uint32_t)sn;
    /* schedule: per warp (32 consecutive q of a block, q = t + m wg), step by
     * step, each lane takes its first entry whose slot no other lane took */
    S->wg = wg;
    int *stamp = calloc(S->slots_max + 1, sizeof(int)), st = 0;
    static int bstamp[2][32];
    int bst = 0;
    memset(bstamp, 0, sizeof bstamp);
    /* count the shared-memory wavefronts of the schedule below: per step
     * and lane group, the largest number of distinct slots in one bank */
    S->kmax = 0;
    for (size_t i = 0; i < n; i++)
        if ((int)(off[i + 1] - off[i]) > S->kmax) S->kmax = (int)(off[i + 1] - off[i]);
    /* rows: the block's i, longest list first if sortlen (row r -> particle rowi[r]) */
    S->rowi = malloc(n * 4);
    for (size_t i = 0; i < n; i++) S->rowi[i] = (uint32_t)i;
    for (int b = 0; b < S->nblk && sortlen; b++) /* insertion sort by length, descending */
        for (uint32_t r = S->bstart[b] + 1; r < S->bstart[b + 1]; r++) {
            uint32_t v = S->rowi[r], lv = off[v + 1] - off[v], x = r;
            while (x > S->bstart[b] && off[S->rowi[x - 1] + 1] - off[S->rowi[x - 1]] < lv) {
                S->rowi[x] = S->rowi[x - 1];
                x--;
            }
            S->rowi[x] = v;
        }
    for (int b = 0; b < S->nblk; b++) {
        uint32_t i0 = S->bstart[b], i1 = S->bstart[b + 1];
        for (uint32_t w0 = i0; w0 < i1; w0 += 32) {
            uint32_t w1 = w0 + 32 < i1 ? w0 + 32 : i1;
            int kw = 0;
            for (uint32_t r = w0; r < w1; r++) {
                uint32_t i = S->rowi[r];
                if ((int)(off[i + 1] - off[i]) > kw) kw = (int)(off[i + 1] - off[i]);
            }
            for (int k = 0; k < kw; k++) {
                if (k % window == 0) st++;
                bst++; /* banks: one step (one shared-memory instruction) */
                if (sched == 3) { /* matching, group after group */
                    for (uint32_t g0 = w0; g0 < w1; g0 += (uint32_t)bank) {
                        hs_match M = {.bank = bank, .slot_of = slot_of, .stamp = stamp, .st = st};
                        uint32_t base[32];
                        int lanes[32];
                        for (uint32_t r = g0; r < w1 && r < g0 + (uint32_t)bank; r++) {
                            uint32_t i = S->rowi[r];
                            if (off[i] + k >= off[i + 1]) continue;
                            base[M.nl] = off[i] + k;
                            M.ent[M.nl] = &base[M.nl];
                            M.ne[M.nl] = (int)(off[i + 1] - off[i] - k);
                            lanes[M.nl++] = (int)r;
                        }
                        for (int b = 0; b < bank; b++) M.mbank[b] = -1;
                        for (int u = 0; u < M.nl; u++) {
                            M.pick[u] = -1;
                            memset(M.seen, 0, sizeof M.seen);
                            hs_try(&M, u);
                        }
                        for (int u = 0; u < M.nl; u++) {
                            uint32_t a = base[u], e = a + (uint32_t)M.ne[u], pick = a;
                            if (M.pick[u] >= 0 && stamp[slot_of[M.pick[u]]] != st) pick = (uint32_t)M.pick[u];
                            else
                                for (uint32_t x = a; x < e; x++)
                                    if (stamp[slot_of[x]] != st) { pick = x; break; }
                            if (stamp[slot_of[pick]] == st) S->conflicts++;
                            stamp[slot_of[pick]] = st;
                            int32_t tj = lst[a], ts = slot_of[a];
                            lst[a] = lst[pick], slot_of[a] = slot_of[pick];
                            if (pick != a) lst[pick] = tj, slot_of[pick] = ts;
                        }
                        (void)lanes;
                    }
                    S->lanes_steps += 32;
                    continue;
                }
                for (uint32_t r = w0; r < w1; r++) {
                    uint32_t i = S->rowi[r];
                    uint32_t a = off[i] + k, e = off[i + 1];
                    if (a >= e) continue;
                    uint32_t pick = a;
                    if (sched == 2) { /* a free slot in a free bank of its lane group, else a free slot */
                        uint32_t second = e;
                        uint32_t grp = (r - w0) / (uint32_t)bank;
                        pick = e;
                        for (uint32_t x = a; x < e; x++) {
                            if (stamp[slot_of[x]] == st) continue;
                            if (second == e) second = x;
                            if (bstamp[grp][slot_of[x] % bank] != bst) { pick = x; break; }
                        }
                        if (pick == e) pick = second == e ? a : second;
                        bstamp[grp][slot_of[pick] % bank] = bst;
                    } else if (sched)
                        for (uint32_t x = a; x < e; x++)
                            if (stamp[slot_of[x]] != st) { pick = x; break; }
                    if (stamp[slot_of[pick]] == st) S->conflicts++;
                    stamp[slot_of[pick]] = st;
                    int32_t tj = lst[a], ts = slot_of[a]; /* swap pick and a */
                    lst[a] = lst[pick], slot_of[a] = slot_of[pick];
                    if (pick != a) lst[pick] = tj, slot_of[pick] = ts;
                }
                S->lanes_steps += 32;
            }
        }
    }
    /* transposed, by row */
    S->cnt = malloc(n * 4);
    S->jl = malloc((size_t)S->kmax * n * 4);
    S->sl = malloc((size_t)S->kmax * n * 2);
    for (size_t r = 0; r < n; r++) {
        uint32_t i = S->rowi[r];
        S->cnt[r] = off[i + 1] - off[i];
        for (uint32_t k = 0; k < S->cnt[r]; k++) {
            S->jl[(size_t)k * n + r] = lst[off[i] + k];
            S->sl[(size_t)k * n + r] = (uint16_t)slot_of[off[i] + k];
        }
    }
    /* shared-memory wavefronts per warp step: per lane group of `bank`
     * lanes, the most distinct slots that fall in one bank (s mod bank) */
    S->wave = 0, S->wsteps = 0;
    for (int b = 0; b < S->nblk; b++)
        for (uint32_t w0 = S->bstart[b]; w0 < S->bstart[b + 1]; w0 += 32) {
            uint32_t w1 = w0 + 32 < S->bstart[b + 1] ? w0 + 32 : S->bstart[b + 1];
            uint32_t kw = 0;
            for (uint32_t r = w0; r < w1; r++) kw = S->cnt[r] > kw ? S->cnt[r] : kw;
            for (uint32_t k = 0; k < kw; k++) {
                for (uint32_t g0 = w0; g0 < w1; g0 += bank) {
                    int slots[32], ns = 0, load[32] = {0}, mx = 0;
                    for (uint32_t r = g0; r < w1 && r < g0 + bank; r++) {
                        if (k >= S->cnt[r]) continue;
                        int sv = S->sl[(size_t)k * n + r], dup = 0;
                        for (int q = 0; q < ns; q++) dup |= slots[q] == sv;
                        if (dup) continue;
                        slots[ns++] = sv;
                        if (++load[sv % bank] > mx) mx = load[sv % bank];
                    }
                    S->wave += mx;
                }
                S->wsteps++;
            }
        }
    free(kc), free(key), free(cellof), free(keycell), free(fill), free(cstart), free(ccount), free(off), free(lst);
    free(cbase), free(slot_of), free(cells), free(stamp);
    return S->slots_max < 65536 ? 0 : -1;
}

static void hs_free(hs_sys *S)
{
    free(S->rowi), free(S->pos), free(S->bstart), free(S->sstart), free(S->cnt), free(S->slot_j), free(S->jl), free(S->sl);
}

/* fp64 reference of the listed pairs (each once), positions given */
static void hs_ref(const hs_sys *S, const double *x, double rc, double *f, double *pe, double *vir)
{
    size_t n = S->n;
    memset(f, 0, 3 * n * sizeof *f);
    *pe = 0, *vir = 0;
    for (size_t r = 0; r < n; r++)
        for (uint32_t k = 0; k < S->cnt[r]; k++) {
            size_t i = S->rowi[r], j = (size_t)S->jl[(size_t)k * n + r];
            double d[3], r2 = 0;
            for (int c = 0; c < 3; c++) d[c] = img(x[3 * i + c] - x[3 * j + c], S->box[c]), r2 += d[c] * d[c];
            if (r2 >= rc * rc) continue;
            double ir2 = 1 / r2, sr6 = ir2 * ir2 * ir2, fp = 24 * sr6 * (2 * sr6 - 1) * ir2;
            for (int c = 0; c < 3; c++) f[3 * i + c] += fp * d[c], f[3 * j + c] -= fp * d[c];
            *pe += 4 * sr6 * (sr6 - 1);
            *vir += fp * r2;
        }
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    const char *name;
    int bs[3], sched, acc, unroll, prec; /* prec -1 both */
    int sortlen, maxreg;
} cfg;

static const cfg cfgs[] = {
    /* name, block, schedule, acc (0 none 1 plain 2 cas 3 fixed 4 batched cas), unroll, prec, sortlen, maxreg */
    {"b222-cas-u2", {2, 2, 2}, 1, 2, 2, -1, 0, 0},
    {"b222-none-u2", {2, 2, 2}, 1, 0, 2, -1, 0, 0},
    {"b222-bat-u2", {2, 2, 2}, 1, 4, 2, -1, 0, 0},
    {"b222-bat-u4", {2, 2, 2}, 1, 4, 4, -1, 0, 0},
    {"b222-bat-u2-sort", {2, 2, 2}, 1, 4, 2, -1, 1, 0},
    {"b222-bat-u2-r64", {2, 2, 2}, 1, 4, 2, -1, 0, 64},
    {"b222-bat-u4-r64", {2, 2, 2}, 1, 4, 4, -1, 0, 64},
    {"b222-none-u2-r64", {2, 2, 2}, 1, 0, 2, -1, 0, 64},
    {"b322-cas-u2", {3, 2, 2}, 1, 2, 2, -1, 0, 0},
    {"b322-none-u2", {3, 2, 2}, 1, 0, 2, -1, 0, 0},
    {"b322-plain-u2", {3, 2, 2}, 1, 1, 2, -1, 0, 0},
    {"b322-fix-u2", {3, 2, 2}, 1, 3, 2, -1, 0, 0},
    {"b322-bat-u2", {3, 2, 2}, 1, 4, 2, -1, 0, 0},
    {"b322-bat-u4", {3, 2, 2}, 1, 4, 4, -1, 0, 0},
    {"b322-bat-u2-nosched", {3, 2, 2}, 0, 4, 2, -1, 0, 0},
    {"b322-bat-u2-r64", {3, 2, 2}, 1, 4, 2, -1, 0, 64},
    {"b322-bat-u4-r64", {3, 2, 2}, 1, 4, 4, -1, 0, 64},
    {"b322-bat-u2-sort-r64", {3, 2, 2}, 1, 4, 2, -1, 1, 64},
    {"b322-bat-u4-sort-r64", {3, 2, 2}, 1, 4, 4, -1, 1, 64},
    {"b322-none-u2-r64", {3, 2, 2}, 1, 0, 2, -1, 0, 64},
    {"b221-bat-u2-r64", {2, 2, 1}, 1, 4, 2, -1, 0, 64},
    {"b211-bat-u4-r64", {2, 1, 1}, 1, 4, 4, -1, 0, 64},
    {"b322-cas-u2-bank", {3, 2, 2}, 2, 2, 2, -1, 0, 0},
    {"b322-plain-u2-bank", {3, 2, 2}, 2, 1, 2, -1, 0, 0},
    {"b322-fix-u2-bank", {3, 2, 2}, 2, 3, 2, -1, 0, 0},
    {"b322-cas-u1-bank", {3, 2, 2}, 2, 2, 1, -1, 0, 0},
    {"b222-cas-u2-bank", {2, 2, 2}, 2, 2, 2, -1, 0, 0},
    {"b322-bat-u2-bank", {3, 2, 2}, 2, 4, 2, -1, 0, 0},
    {"b322-cas-u2-nosched", {3, 2, 2}, 0, 2, 2, -1, 0, 0},
    {"b322-cas-u2-match", {3, 2, 2}, 3, 2, 2, -1, 0, 0},
    {"b322-plain-u2-match", {3, 2, 2}, 3, 1, 2, -1, 0, 0},
    {"b322-fix-u2-match", {3, 2, 2}, 3, 3, 2, -1, 0, 0},
    {"b322-cas-u1-match", {3, 2, 2}, 3, 2, 1, -1, 0, 0},
    {"b222-cas-u2-match", {2, 2, 2}, 3, 2, 2, -1, 0, 0},
};

static void run_cfg(const cfg *c, const hs_sys *S, int prec, const char *tag, int calls, int reps)
{
    size_t n = S->n, rs = prec ? 8 : 4;
    int dbl = prec == CLPHYS_FP64;
    int wg = S->wg;
    int slots = (S->slots_max + 31) / 32 * 32;
    size_t accb = (size_t)3 * slots * (c->acc == 3 ? 8 : rs);
    if (accb > clphys_context_device(ctx)->local_mem_bytes) {
        printf("%-5s %-18s %s: %zu B of local memory needed, skipped\n", tag, c->name, prec ? "fp64" : "fp32", accb);
        return;
    }
    char opt[512];
    cp_precision_options(ctx, prec, opt, sizeof opt);
    size_t o = strlen(opt);
    int nv = strstr(ctx->info.vendor, "NVIDIA") != NULL;
    snprintf(opt + o, sizeof opt - o, " -DWG=%d -DSLOTS=%d -DACC=%d -DUNROLL=%d%s", wg, slots, c->acc, c->unroll,
             nv ? " -cl-nv-verbose" : "");
    if (nv && c->maxreg) {
        o = strlen(opt);
        snprintf(opt + o, sizeof opt - o, " -cl-nv-maxrregcount=%d", c->maxreg);
    }
    cl_program prog;
    cl_kernel k, kz;
    if (cp_program(ctx, "halfslot.cl", opt, &prog) || cp_kernel(ctx, prog, "hs_half", &k) ||
        cp_kernel(ctx, prog, "hs_zero", &kz)) {
        printf("%-18s build failed: %s\n", c->name, clphys_last_error(ctx));
        return;
    }
    /* buffers */
    void *p4 = malloc(4 * rs * n);
    for (size_t i = 0; i < n; i++)
        for (int q = 0; q < 4; q++) {
            double v = q < 3 ? S->pos[3 * i + q] : 0;
            if (dbl) ((double *)p4)[4 * i + q] = v; else ((float *)p4)[4 * i + q] = (float)v;
        }
    cl_mem bpos, bbs, bss, bsj, bcnt, bjl, bsl, bf, be, bv, brow;
    cl_mem_flags ro = CL_MEM_READ_ONLY;
    int err = cp_buffer(ctx, ro, 4 * rs * n, p4, &bpos) || cp_buffer(ctx, ro, 4 * (S->nblk + 1), S->bstart, &bbs) ||
              cp_buffer(ctx, ro, 4 * (S->nblk + 1), S->sstart, &bss) ||
              cp_buffer(ctx, ro, 4 * (size_t)S->sstart[S->nblk], S->slot_j, &bsj) ||
              cp_buffer(ctx, ro, 4 * n, S->cnt, &bcnt) || cp_buffer(ctx, ro, 4 * (size_t)S->kmax * n, S->jl, &bjl) ||
              cp_buffer(ctx, ro, 2 * (size_t)S->kmax * n, S->sl, &bsl) ||
              cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * rs * n, NULL, &bf) ||
              cp_buffer(ctx, CL_MEM_READ_WRITE, rs * n, NULL, &be) || cp_buffer(ctx, CL_MEM_READ_WRITE, rs * n, NULL, &bv) ||
              cp_buffer(ctx, ro, 4 * n, S->rowi, &brow);
    free(p4);
    if (err) {
        printf("%-18s buffers: %s\n", c->name, clphys_last_error(ctx));
        return;
    }
    cl_uint nn = (cl_uint)n, m4 = (cl_uint)(4 * n);
    double d4[4] = {S->box[0], S->box[1], S->box[2], 0}, cc[5] = {9.0, 4.0, 24.0, 1.0, 0.0};
    float f4[4] = {(float)d4[0], (float)d4[1], (float)d4[2], 0}, cf[5] = {9.0f, 4.0f, 24.0f, 1.0f, 0.0f};
    cl_uint a = 0;
    CP_ARG(ctx, k, a++, bpos); CP_ARG(ctx, k, a++, nn); CP_ARG(ctx, k, a++, bbs); CP_ARG(ctx, k, a++, brow); CP_ARG(ctx, k, a++, bss);
    CP_ARG(ctx, k, a++, bsj); CP_ARG(ctx, k, a++, bcnt); CP_ARG(ctx, k, a++, bjl); CP_ARG(ctx, k, a++, bsl);
    if (dbl) CP_ARG(ctx, k, a++, d4); else CP_ARG(ctx, k, a++, f4);
    for (int q = 0; q < 5; q++, a++) {
        if (dbl) CP_ARG(ctx, k, a, cc[q]); else CP_ARG(ctx, k, a, cf[q]);
    }
    CP_ARG(ctx, k, a++, bf); CP_ARG(ctx, k, a++, be); CP_ARG(ctx, k, a++, bv);
    CP_ARG(ctx, kz, 0, bf); CP_ARG(ctx, kz, 1, m4);
    size_t g = (size_t)S->nblk * wg, l = wg, gz = cp_round_up(4 * n, 256), lz = 256;
    double *ts = malloc(reps * sizeof *ts), *sp = malloc(reps * sizeof *sp);
    clphys_status st = 0;
    for (int r = -1; r < reps && !st; r++) { /* per launch, each waited for */
        double t = 0;
        for (int q = 0; q < calls && !st; q++)
            st = cp_launch(ctx, kz, 1, &gz, &lz, &t) || cp_launch(ctx, k, 1, &g, &l, &t);
        if (r >= 0) ts[r] = t;
    }
    for (int r = 0; r < reps && !st; r++) { /* back to back */
        clphys_context_span_begin(ctx);
        for (int q = 0; q < calls && !st; q++)
            st = cp_launch(ctx, kz, 1, &gz, &lz, NULL) || cp_launch(ctx, k, 1, &g, &l, NULL);
        st = st ? st : clphys_context_span_end(ctx, &sp[r]);
    }
    /* one poisoned, verified call */
    double nanv = NAN;
    float nanf = NAN;
    if (dbl) cp_fill(ctx, bf, &nanv, 8, 32 * n), cp_fill(ctx, be, &nanv, 8, 8 * n), cp_fill(ctx, bv, &nanv, 8, 8 * n);
    else cp_fill(ctx, bf, &nanf, 4, 16 * n), cp_fill(ctx, be, &nanf, 4, 4 * n), cp_fill(ctx, bv, &nanf, 4, 4 * n);
    if (!st) st = cp_launch(ctx, kz, 1, &gz, &lz, NULL) || cp_launch(ctx, k, 1, &g, &l, NULL);
    void *fb = malloc(4 * rs * n), *eb = malloc(rs * n), *vb = malloc(rs * n);
    if (!st) st = cp_read(ctx, bf, 0, 4 * rs * n, fb) || cp_read(ctx, be, 0, rs * n, eb) || cp_read(ctx, bv, 0, rs * n, vb);
    if (st) {
        printf("%-5s %-18s %s failed: %s\n", tag, c->name, prec ? "fp64" : "fp32", clphys_last_error(ctx));
    } else {
        double *x = malloc(3 * n * sizeof *x), *fr = malloc(3 * n * sizeof *fr), pe, vir;
        for (size_t q = 0; q < 3 * n; q++) x[q] = dbl ? S->pos[q] : (double)(float)S->pos[q];
        hs_ref(S, x, 3.0, fr, &pe, &vir);
        double e = 0, s = 0, pes = 0, vs = 0;
        for (size_t i = 0; i < n; i++) {
            for (int q = 0; q < 3; q++) {
                double v = dbl ? ((double *)fb)[4 * i + q] : ((float *)fb)[4 * i + q];
                e = isfinite(v) ? fmax(e, fabs(v - fr[3 * i + q])) : INFINITY;
                s = fmax(s, fabs(fr[3 * i + q]));
            }
            pes += dbl ? ((double *)eb)[i] : ((float *)eb)[i];
            vs += dbl ? ((double *)vb)[i] : ((float *)vb)[i];
        }
        qsort(ts, reps, sizeof *ts, cmpd), qsort(sp, reps, sizeof *sp, cmpd);
        printf("%-5s %-18s %s wg %3d slots %4d kmax %2d  100calls per-launch %7.3f ms  span %7.3f ms (min %7.3f)  "
               "err %.2e pe %.2e vir %.2e\n",
               tag, c->name, prec ? "fp64" : "fp32", wg, slots, S->kmax, ts[reps / 2] / calls * 100 * 1e3,
               sp[reps / 2] / calls * 100 * 1e3, sp[0] / calls * 100 * 1e3, e / s, isfinite(pes) ? fabs(pes - pe) / fabs(pe) : INFINITY,
               isfinite(vs) ? fabs(vs - vir) / fabs(vir) : INFINITY);
        free(x), free(fr);
    }
    fflush(stdout);
    /* ptxas report */
    size_t sz = 0;
    clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &sz);
    char *log = calloc(sz + 1, 1);
    clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, sz, log, NULL);
    for (char *ln = strtok(log, "\n"); ln; ln = strtok(NULL, "\n"))
        if (strstr(ln, "registers") || strstr(ln, "spill")) printf("    ptxas %s: %s\n", c->name, ln);
    free(log), free(fb), free(eb), free(vb), free(ts), free(sp);
    clReleaseKernel(k), clReleaseKernel(kz);
    cl_mem all[] = {bpos, bbs, bss, bsj, bcnt, bjl, bsl, bf, be, bv, brow};
    for (size_t q = 0; q < sizeof all / sizeof *all; q++) clReleaseMemObject(all[q]);
}

/* the library's variants on the same input, for comparison */
static void run_lib(const double *pos, size_t n, const double box[3], int prec, const char *tag, int calls, int reps)
{
    clphys_lj_variant vs[2] = {CLPHYS_LJ_FULL_TRANSPOSED, CLPHYS_LJ_HALF_CAS};
    for (int v = 0; v < 2; v++) {
        clphys_lj_params p = {.n = n, .box = {box[0], box[1], box[2]}, .epsilon = 1, .sigma = 1, .r_cut = 3.0,
                              .skin = 0.3, .precision = prec, .variant = vs[v]};
        clphys_lj_plan *pl;
        if (clphys_lj_plan_create(ctx, &p, &pl) || clphys_lj_set_positions(pl, pos) ||
            clphys_neighbor_shuffle(pl->nb, 12345)) {
            printf("lib %s: %s\n", clphys_lj_variant_name(vs[v]), clphys_last_error(ctx));
            return;
        }
        double ts[16], sp[16];
        clphys_lj_evaluate(pl, NULL);
        for (int r = 0; r < reps; r++) {
            ts[r] = 0;
            for (int q = 0; q < calls; q++) clphys_lj_evaluate(pl, &ts[r]);
            clphys_context_span_begin(ctx);
            for (int q = 0; q < calls; q++) clphys_lj_evaluate(pl, NULL);
            clphys_context_span_end(ctx, &sp[r]);
        }
        qsort(ts, reps, sizeof *ts, cmpd), qsort(sp, reps, sizeof *sp, cmpd);
        printf("%-5s lib-%-14s %s 100calls per-launch %7.3f ms  span %7.3f ms\n", tag, clphys_lj_variant_name(vs[v]),
               prec ? "fp64" : "fp32", ts[reps / 2] / calls * 100 * 1e3, sp[reps / 2] / calls * 100 * 1e3);
        fflush(stdout);
        clphys_lj_plan_destroy(pl);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "run", *which = argc > 2 ? argv[2] : "d05";
    const char *only = argc > 3 && strcmp(argv[3], "-") ? argv[3] : NULL;
    double edge = argc > 4 ? atof(argv[4]) : 50;
    int calls = argc > 5 ? atoi(argv[5]) : 100, reps = 5;
    int count = !strcmp(mode, "count");
    if (!count && clphys_context_create(getenv("CLPHYS_DEVICE") ? getenv("CLPHYS_DEVICE") : "auto", &ctx)) {
        fprintf(stderr, "%s\n", clphys_last_error(NULL));
        return 1;
    }
    if (ctx) printf("device %s\n", clphys_context_device(ctx)->name);
    double rhos[2] = {0.5, 1.0};
    for (int d = 0; d < 2; d++) {
        if ((d == 0 && !strcmp(which, "d1")) || (d == 1 && !strcmp(which, "d05"))) continue;
        size_t n;
        double box[3];
        double *pos = md_seed_system(rhos[d], edge, &n, box);
        char tag[16];
        snprintf(tag, sizeof tag, "d%g", rhos[d]);
        for (int prec = 1; prec >= 0; prec--) {
            if (!count) run_lib(pos, n, box, prec, tag, calls, reps);
            for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; c++) {
                const cfg *cf = &cfgs[c];
                if ((cf->prec >= 0 && cf->prec != prec) || (only && !strstr(only, cf->name))) continue;
                hs_sys S;
                double t0 = cp_now();
                int wg = 0;
                { /* work-group: the block's i rounded up to warps, at most 256 */
                    hs_sys probe;
                    if (hs_build(&probe, pos, n, box, 3.3, cf->bs, 0, 32, 1, 0, 16)) {
                        printf("%s: build failed\n", cf->name);
                        continue;
                    }
                    wg = (probe.max_ni + 31) / 32 * 32;
                    wg = wg > 256 ? 256 : wg;
                    hs_free(&probe);
                }
                if (hs_build(&S, pos, n, box, 3.3, cf->bs, cf->sched, wg, cf->acc == 4 ? cf->unroll : 1, cf->sortlen, prec ? 16 : 32)) {
                    printf("%s: build failed\n", cf->name);
                    continue;
                }
                double tb = cp_now() - t0;
                if (count || prec == 1)
                    printf("%-5s %-18s n %zu pairs %zu (full %zu) blocks %d max_ni %d slots_max %d kmax %d "
                           "lane use %.3f same-slot lanes per 1000 lane-steps %.2f wavefronts per warp step %.2f  host build %.2f s\n",
                           tag, cf->name, n, S.npairs, S.nfull, S.nblk, S.max_ni, S.slots_max, S.kmax,
                           (double)S.npairs / S.lanes_steps, 1000.0 * S.conflicts / S.lanes_steps, (double)S.wave / S.wsteps, tb);
                if (!count) run_cfg(cf, &S, prec, tag, calls, reps);
                hs_free(&S);
            }
            if (count) break;
        }
        free(pos);
    }
    if (ctx) clphys_context_destroy(ctx);
    return 0;
}
