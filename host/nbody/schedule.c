/* schedule.c — the stages of each exchange algorithm (see
 * clphys_nbody.h for the algorithms, nbody_schedule.h for the form). */
#include "nbody_schedule.h"

#include <stdlib.h>

static int is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }
static int mod(int a, int p) { return ((a % p) + p) % p; }

const char *clphys_nbody_gravity_exchange_name(clphys_nbody_gravity_exchange e)
{
    switch (e) {
    case CLPHYS_NBODY_GRAVITY_EXCHANGE_AUTO:
        return "auto";
    case CLPHYS_NBODY_GRAVITY_EXCHANGE_RING:
        return "ring";
    case CLPHYS_NBODY_GRAVITY_EXCHANGE_DOUBLING:
        return "doubling";
    case CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID:
        return "hybrid";
    case CLPHYS_NBODY_GRAVITY_EXCHANGE_ALLGATHER:
        return "allgather";
    }
    return "";
}

int nbody_sched_pieces(nbody_sched_range r, int ranks, int lo[2], int cnt[2])
{
    if (r.cnt <= 0) return 0;
    lo[0] = mod(r.lo, ranks);
    if (lo[0] + r.cnt <= ranks) {
        cnt[0] = r.cnt;
        return 1;
    }
    cnt[0] = ranks - lo[0];
    lo[1] = 0;
    cnt[1] = r.cnt - cnt[0];
    return 2;
}

/* XOR pairs inside aligned groups of g ranks: stage k exchanges the aligned
 * 2^k-group of rank with its partner's. */
static int xor_stages(nbody_sched_stage *st, int rank, int g)
{
    int n = 0;
    for (int size = 1; size < g; size *= 2, n++) {
        const int partner = rank ^ size;
        st[n].to = st[n].from = partner;
        st[n].send = (nbody_sched_range){rank & ~(size - 1), size};
        st[n].recv = (nbody_sched_range){partner & ~(size - 1), size};
    }
    return n;
}

clphys_status nbody_sched_build(clphys_context *ctx, clphys_nbody_gravity_exchange ex, int group, int P, int r,
                                nbody_sched_schedule *s)
{
    s->stage = NULL;
    s->nstages = 0;
    s->bruck = 0;
    if (P < 1 || r < 0 || r >= P)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "gravity exchange: rank %d of %d", r, P);
    int G = 1;
    while (P % (2 * G) == 0) G *= 2; /* the largest power of two dividing P */
    if (ex == CLPHYS_NBODY_GRAVITY_EXCHANGE_AUTO) ex = CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID, group = 0;
    if (ex == CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID && group != 0) {
        if (!is_pow2(group) || P % group)
            return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                            "gravity exchange: hybrid group %d is not a power of two dividing the %d ranks", group, P);
        G = group;
    }
    if (ex < CLPHYS_NBODY_GRAVITY_EXCHANGE_RING || ex > CLPHYS_NBODY_GRAVITY_EXCHANGE_ALLGATHER)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "gravity exchange: unknown algorithm %d", (int)ex);
    s->exchange = ex;
    s->ranks = P;
    s->rank = r;
    s->group = ex == CLPHYS_NBODY_GRAVITY_EXCHANGE_RING       ? 1
               : ex == CLPHYS_NBODY_GRAVITY_EXCHANGE_DOUBLING ? (is_pow2(P) ? P : 0)
               : ex == CLPHYS_NBODY_GRAVITY_EXCHANGE_HYBRID   ? G
                                                              : 0;
    if (ex == CLPHYS_NBODY_GRAVITY_EXCHANGE_ALLGATHER || P == 1) return CLPHYS_SUCCESS;
    s->stage = calloc((size_t)P, sizeof *s->stage); /* every schedule has at most P - 1 stages */
    if (!s->stage) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "gravity exchange schedule");
    nbody_sched_stage *st = s->stage;
    int n = 0;
    if (ex == CLPHYS_NBODY_GRAVITY_EXCHANGE_DOUBLING && !is_pow2(P)) {
        /* Bruck's dissemination: rank r holds blocks r - h + 1 .. r */
        s->bruck = 1;
        for (int h = 1; h < P; n++) {
            const int cnt = h < P - h ? h : P - h;
            st[n].to = mod(r + h, P);
            st[n].from = mod(r - h, P);
            st[n].send = (nbody_sched_range){mod(r - cnt + 1, P), cnt};
            st[n].recv = (nbody_sched_range){mod(st[n].from - cnt + 1, P), cnt};
            h += cnt;
        }
    } else {
        const int g = ex == CLPHYS_NBODY_GRAVITY_EXCHANGE_RING       ? 1
                      : ex == CLPHYS_NBODY_GRAVITY_EXCHANGE_DOUBLING ? P
                                                                     : G;
        n = xor_stages(st, r, g);
        /* then the ring over the P / g groups, one group's set per step */
        const int Q = P / g, q = r / g;
        for (int k = 1; k < Q; k++, n++) {
            st[n].to = mod(r + g, P);
            st[n].from = mod(r - g, P);
            st[n].send = (nbody_sched_range){mod(q - k + 1, Q) * g, g};
            st[n].recv = (nbody_sched_range){mod(q - k, Q) * g, g};
        }
    }
    s->nstages = n;
    return CLPHYS_SUCCESS;
}

void nbody_sched_free(nbody_sched_schedule *s)
{
    if (!s) return;
    free(s->stage);
    s->stage = NULL;
    s->nstages = 0;
}
