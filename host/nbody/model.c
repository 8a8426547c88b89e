/* model.c — the performance model of a distributed force calculation
 * (clphys_nbody_gravity_model_predict): the schedule of the exchange
 * (schedule.c) replayed in time for rank 0 of P identical ranks,
 * with the kernels of the two lanes sharing the device as the model's
 * `concurrency` says.  The seed's sec. 6.2 model is the special case of a
 * free network and concurrency 2 (its eqs. 4-7 count whole kernel times on
 * two streams). */
#include "nbody_schedule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double ready, work; /* arrival of its block; seconds when running alone */
    int lane;
} mk;

/* Replay the kernels: each lane runs its kernels in order, a kernel starts
 * once ready and its lane's previous one is done; two running kernels share
 * the device at total rate c.  Returns the end of the last kernel and adds
 * the idle gaps (the device waiting for a block) to *idle. */
static double replay(const mk *k, int nk, double c, double *idle)
{
    double rem[2] = {0, 0}, now = 0;
    int head[2] = {-1, -1}, next[2] = {0, 0};
    /* next[l]: the index from which to look for lane l's next kernel */
    for (;;) {
        for (int l = 0; l < 2; l++)
            if (head[l] < 0) {
                int i = next[l];
                while (i < nk && k[i].lane != l) i++;
                if (i < nk)
                    head[l] = i, rem[l] = k[i].work, next[l] = i + 1;
                else
                    next[l] = nk;
            }
        if (head[0] < 0 && head[1] < 0) return now;
        int act[2] = {0, 0}, nact = 0;
        double wake = INFINITY;
        for (int l = 0; l < 2; l++) {
            if (head[l] < 0) continue;
            if (k[head[l]].ready <= now)
                act[l] = 1, nact++;
            else if (k[head[l]].ready < wake)
                wake = k[head[l]].ready;
        }
        if (!nact) {
            *idle += wake - now;
            now = wake;
            continue;
        }
        const double rate = nact == 2 ? c / 2 : 1;
        double dt = wake - now;
        for (int l = 0; l < 2; l++)
            if (act[l] && rem[l] / rate < dt) dt = rem[l] / rate;
        now += dt;
        for (int l = 0; l < 2; l++)
            if (act[l]) {
                rem[l] -= rate * dt;
                if (rem[l] <= 1e-15 * k[head[l]].work) head[l] = -1;
            }
    }
}

static int bad(double v) { return !isfinite(v) || v < 0; }

clphys_status clphys_nbody_gravity_model_predict(const clphys_nbody_gravity_model *m,
                                                 clphys_nbody_gravity_prediction *out)
{
    if (!m || !out) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "gravity model: NULL argument");
    memset(out, 0, sizeof *out);
    if (m->ranks < 1 || m->ranks > (1 << 20) || m->ranks_per_device < 0 || bad(m->n) || bad(m->t_calc_s) ||
        bad(m->latency_s) || bad(m->bandwidth_bytes_per_s) || bad(m->bytes_per_particle) || bad(m->t_sync_s) ||
        !(m->concurrency >= 0 && m->concurrency <= 2))
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "gravity model: a parameter out of range (ranks %d, n %g, "
                        "t_calc %g, latency %g, bandwidth %g, bytes %g, t_sync %g, concurrency %g)",
                        m->ranks, m->n, m->t_calc_s, m->latency_s, m->bandwidth_bytes_per_s, m->bytes_per_particle,
                        m->t_sync_s, m->concurrency);
    nbody_sched_schedule s;
    CP_TRY(nbody_sched_build(NULL, m->exchange, m->group, m->ranks, 0, &s));
    const int P = m->ranks;
    const double k = m->ranks_per_device ? m->ranks_per_device : 1;
    const double c = m->concurrency >= 1 ? m->concurrency : 1;
    const double tc = m->t_calc_s * k; /* the device is time-sliced between k ranks */
    const double block_bytes = m->n * m->bytes_per_particle;
    const double inv_bw = m->bandwidth_bytes_per_s > 0 ? 1 / m->bandwidth_bytes_per_s : 0;
    mk *ker = malloc((size_t)(s.nstages + 1) * sizeof *ker);
    if (!ker) {
        nbody_sched_free(&s);
        return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "gravity model");
    }
    int nk = 0;
    double arrive = 0;
    if (s.exchange == CLPHYS_NBODY_GRAVITY_EXCHANGE_ALLGATHER) {
        /* as a ring allgather: P - 1 steps of one block each, nothing overlapped */
        if (P > 1) {
            out->exchange_s = (P - 1) * (m->latency_s + block_bytes * inv_bw);
            out->exchanges = P - 1;
        }
        ker[nk++] = (mk){out->exchange_s, tc * P, 0};
    } else {
        ker[nk++] = (mk){0, tc, 0}; /* the own block, while exchange 1 travels */
        for (int i = 0; i < s.nstages; i++) {
            /* posted once the previous exchange has arrived (its data is forwarded) */
            const double x = m->latency_s + s.stage[i].recv.cnt * block_bytes * inv_bw;
            arrive += x;
            out->exchange_s += x;
            ker[nk] = (mk){arrive, tc * s.stage[i].recv.cnt, nk % 2};
            nk++;
        }
        out->exchanges = s.nstages;
    }
    for (int i = 0; i < nk; i++) out->kernel_s += ker[i].work;
    double idle = 0;
    const double end = replay(ker, nk, c, &idle);
    out->exposed_s = idle;
    out->step_s = end + m->t_sync_s;
    out->efficiency = out->step_s > 0 ? P * k * m->t_calc_s / out->step_s : 0;
    free(ker);
    nbody_sched_free(&s);
    return CLPHYS_SUCCESS;
}
