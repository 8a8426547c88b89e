/* multi.c — gravity over several devices with two command queues
 * (lanes) each: the i-set split by measured speed, the j-set streamed in
 * blocks to alternating lanes, one result buffer per lane (no atomics),
 * lanes and devices summed on the host.  The seed's two CUDA streams (Miki,
 * Takahashi & Mori, sec. 3); the engine under the MPI exchanges too
 * (nbody_multi.h).  Public API: include/clphys_nbody.h. */
#include "nbody_multi.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NBODY_MULTI_MAX_DEV 64
#define NBODY_MULTI_LANES   2

typedef struct {
    clphys_context *ctx;             /* lane 0: the caller's; lane 1: adopted on a second queue */
    clphys_nbody_gravity_plan *plan; /* one per lane: its scratch buffers are the lane's alone  */
    cl_mem xj, out;
    size_t cap_j, cap_out;
    int used;   /* kernels of this call so far: later ones accumulate      */
    int last;   /* index in m->ev of the lane's latest event, -1 if none   */
    void *host; /* read-back of out                                        */
    size_t cap_host;
} nbody_multi_lane;

typedef struct {
    nbody_multi_lane lane[NBODY_MULTI_LANES];
    clphys_context *own; /* lane 1's context (same OpenCL context, second queue) */
    cl_mem xi;
    size_t cap_i, i0, ni; /* this call's share of the i-set */
    double weight;
} nbody_multi_device;

struct clphys_nbody_gravity_multi {
    int ndev, queues, next;
    nbody_multi_device *dev;
    clphys_nbody_gravity_params p;
    size_t rs;
    cl_event *ev; /* this call's kernel events: first and last launch of each */
    int *ev_dev;  /* the device of each                                      */
    int nev, cap_ev, kernels;
    cl_mem pin; /* page-locked host staging (nbody_multi_staging), mapped while the plan lives */
    void *pin_host;
    size_t cap_pin;
};

size_t nbody_multi_real_size(const clphys_nbody_gravity_multi *m) { return m->rs; }
clphys_context *nbody_multi_context(const clphys_nbody_gravity_multi *m) { return m->dev[0].lane[0].ctx; }
int nbody_multi_potential(const clphys_nbody_gravity_multi *m) { return m->p.potential; }

/* Make *b hold at least bytes (contents not kept; a buffer still used by a
 * queued command is freed by OpenCL once that command is done). */
static clphys_status ensure(clphys_context *ctx, cl_mem *b, size_t *cap, size_t bytes)
{
    if (*b && *cap >= bytes) return CLPHYS_SUCCESS;
    cp_release_mem(b);
    *cap = 0;
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, bytes ? bytes : 16, NULL, b));
    *cap = bytes;
    return CLPHYS_SUCCESS;
}

static clphys_status ensure_host(clphys_context *ctx, void **h, size_t *cap, size_t bytes)
{
    if (*cap >= bytes && *h) return CLPHYS_SUCCESS;
    void *p = realloc(*h, bytes ? bytes : 16);
    if (!p) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "gravity: %zu bytes of host staging", bytes);
    *h = p, *cap = bytes;
    return CLPHYS_SUCCESS;
}

/* (x, y, z, m) doubles to real4 of rs bytes per real. */
static void to_real4(void *dst, const double *x, size_t n, size_t rs)
{
    if (rs == 8)
        memcpy(dst, x, n * 4 * sizeof(double));
    else
        for (size_t c = 0; c < 4 * n; c++) ((float *)dst)[c] = (float)x[c];
}

/* Interactions per second of device d's lane-0 plan on n particles of a
 * cubic lattice: one warm-up, fastest of three. */
static clphys_status probe_speed(clphys_nbody_gravity_multi *m, int d, double *rate)
{
    nbody_multi_lane *L = &m->dev[d].lane[0];
    const size_t n = clphys_context_device(L->ctx)->is_gpu ? 4096 : 1024;
    double *x = malloc(n * 4 * sizeof *x);
    void *r = malloc(n * 4 * m->rs);
    clphys_status st = x && r ? CLPHYS_SUCCESS : cp_error(L->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "gravity: speed probe");
    cl_mem b = NULL, out = NULL;
    for (size_t i = 0; i < n && !st; i++) {
        x[4 * i] = (double)(i % 16), x[4 * i + 1] = (double)(i / 16 % 16), x[4 * i + 2] = (double)(i / 256);
        x[4 * i + 3] = 1.0 / (double)n;
    }
    if (!st) {
        to_real4(r, x, n, m->rs);
        st = cp_buffer(L->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4 * m->rs, r, &b);
    }
    if (!st) st = cp_buffer(L->ctx, CL_MEM_READ_WRITE, n * 4 * m->rs, NULL, &out);
    double best = INFINITY, t;
    for (int k = 0; k < 4 && !st; k++) {
        st = clphys_nbody_gravity_compute_cl(L->plan, b, n, b, n, 1, out, 0, &t);
        if (k > 0 && t < best) best = t;
    }
    *rate = !st && best > 0 ? (double)n * (double)n / best : 1.0;
    cp_release_mem(&b);
    cp_release_mem(&out);
    free(x);
    free(r);
    return st;
}

clphys_status clphys_nbody_gravity_multi_create(clphys_context *const *ctxs, int ndev, int queues,
                                                const clphys_nbody_gravity_params *p, clphys_nbody_gravity_multi **out)
{
    if (!out) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "gravity multi: NULL plan pointer");
    *out = NULL;
    if (!ctxs || !p || ndev < 1 || ndev > NBODY_MULTI_MAX_DEV || queues < 0 || queues > NBODY_MULTI_LANES)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "gravity multi: NULL argument, %d devices (1..%d) or %d queues (0..%d)", ndev,
                        NBODY_MULTI_MAX_DEV, queues, NBODY_MULTI_LANES);
    for (int d = 0; d < ndev; d++)
        if (!ctxs[d]) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "gravity multi: context %d is NULL", d);
    clphys_nbody_gravity_params pin;
    CP_TRY(CP_PARAMS_IN(ctxs[0], clphys_nbody_gravity_params, p, n_hint, &pin));
    p = &pin;
    clphys_nbody_gravity_multi *m = calloc(1, sizeof *m);
    if (m) m->dev = calloc((size_t)ndev, sizeof *m->dev);
    if (!m || !m->dev) {
        free(m);
        return cp_error(ctxs[0], CLPHYS_ERR_OUT_OF_MEMORY, "gravity multi");
    }
    m->ndev = ndev;
    m->queues = queues ? queues : NBODY_MULTI_LANES;
    m->p = *p;
    m->rs = p->precision == CLPHYS_FP64 ? 8 : 4;
    clphys_status st = CLPHYS_SUCCESS;
    for (int d = 0; d < ndev && !st; d++) {
        nbody_multi_device *D = &m->dev[d];
        D->weight = 1;
        D->lane[0].ctx = ctxs[d];
        if (m->queues > 1) {
            cl_command_queue q = NULL;
            st = cp_queue_create(ctxs[d], 1, &q);
            if (!st) {
                st = clphys_context_adopt(clphys_context_cl_context(ctxs[d]), clphys_context_cl_device(ctxs[d]), q,
                                          &D->own);
                if (st) cp_error(ctxs[d], st, "gravity multi: second queue: %s", clphys_last_error(NULL));
                cp_queue_release(&q); /* the adopted context holds its own reference */
            }
            D->lane[1].ctx = D->own;
        }
        for (int l = 0; l < m->queues && !st; l++) {
            D->lane[l].last = -1;
            st = clphys_nbody_gravity_plan_create(D->lane[l].ctx, p, &D->lane[l].plan);
            if (st && l) cp_error(ctxs[d], st, "%s", clphys_last_error(D->lane[l].ctx));
        }
        if (st) cp_error_append(ctxs[d], "(device %d of the multi-device plan)", d);
        if (st && d) cp_error(ctxs[0], st, "%s", clphys_last_error(ctxs[d]));
    }
    for (int d = 0; d < ndev && !st && ndev > 1; d++) {
        st = probe_speed(m, d, &m->dev[d].weight);
        if (st && d) cp_error(ctxs[0], st, "device %d: %s", d, clphys_last_error(ctxs[d]));
    }
    if (st) {
        clphys_nbody_gravity_multi_destroy(m);
        return st;
    }
    *out = m;
    return CLPHYS_SUCCESS;
}

void clphys_nbody_gravity_multi_destroy(clphys_nbody_gravity_multi *m)
{
    if (!m) return;
    if (m->dev) nbody_multi_abort(m);
    for (int d = 0; m->dev && d < m->ndev; d++) {
        nbody_multi_device *D = &m->dev[d];
        for (int l = 0; l < NBODY_MULTI_LANES; l++) {
            clphys_nbody_gravity_plan_destroy(D->lane[l].plan);
            cp_release_mem(&D->lane[l].xj);
            cp_release_mem(&D->lane[l].out);
            free(D->lane[l].host);
        }
        cp_release_mem(&D->xi);
        clphys_context_destroy(D->own);
    }
    if (m->pin) cp_pinned_release(m->dev[0].lane[0].ctx, &m->pin, &m->pin_host);
    free(m->ev);
    free(m->ev_dev);
    free(m->dev);
    free(m);
}

clphys_status clphys_nbody_gravity_multi_weights(clphys_nbody_gravity_multi *m, const double *set, double *get)
{
    if (!m) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "gravity multi weights: NULL plan");
    if (set) {
        double sum = 0;
        for (int d = 0; d < m->ndev; d++) {
            if (!isfinite(set[d]) || set[d] < 0)
                return cp_error(nbody_multi_context(m), CLPHYS_ERR_INVALID_ARGUMENT,
                                "gravity multi weights: weight %d = %g", d, set[d]);
            sum += set[d];
        }
        if (!(sum > 0))
            return cp_error(nbody_multi_context(m), CLPHYS_ERR_INVALID_ARGUMENT, "gravity multi weights: all zero");
        for (int d = 0; d < m->ndev; d++) m->dev[d].weight = set[d];
    }
    if (get) {
        double sum = 0;
        for (int d = 0; d < m->ndev; d++) sum += m->dev[d].weight;
        for (int d = 0; d < m->ndev; d++) get[d] = m->dev[d].weight / sum;
    }
    return CLPHYS_SUCCESS;
}

const char *clphys_nbody_gravity_multi_info(const clphys_nbody_gravity_multi *m, int *ndev, int *queues)
{
    if (ndev) *ndev = m ? m->ndev : 0;
    if (queues) *queues = m ? m->queues : 0;
    return m ? clphys_nbody_gravity_plan_variant(m->dev[0].lane[0].plan) : "";
}

/* ---- the engine ------------------------------------------------------------ */
clphys_status nbody_multi_staging(clphys_nbody_gravity_multi *m, size_t bytes, void **host)
{
    clphys_context *ctx = nbody_multi_context(m);
    if (!m->pin || m->cap_pin < bytes) {
        cp_pinned_release(ctx, &m->pin, &m->pin_host);
        m->cap_pin = 0;
        const size_t want = bytes > 16 ? bytes + bytes / 4 : 16; /* room to grow a little */
        CP_TRY(cp_pinned(ctx, want, &m->pin, &m->pin_host));
        m->cap_pin = want;
    }
    *host = m->pin_host;
    return CLPHYS_SUCCESS;
}

static void drop_events(clphys_nbody_gravity_multi *m)
{
    for (int k = 0; k < m->nev; k++) cp_release_event(&m->ev[k]);
    m->nev = 0;
    for (int d = 0; d < m->ndev; d++)
        for (int l = 0; l < NBODY_MULTI_LANES; l++) m->dev[d].lane[l].last = -1;
}

void nbody_multi_abort(clphys_nbody_gravity_multi *m)
{
    for (int d = 0; d < m->ndev; d++)
        for (int l = 0; l < m->queues; l++)
            if (m->dev[d].lane[l].ctx) cp_finish_queue(m->dev[d].lane[l].ctx, NULL);
    drop_events(m);
}

clphys_status nbody_multi_begin(clphys_nbody_gravity_multi *m, size_t ni, const void *xi)
{
    drop_events(m);
    m->next = 0;
    m->kernels = 0;
    double wsum = 0, wcum = 0;
    for (int d = 0; d < m->ndev; d++) wsum += m->dev[d].weight;
    size_t i0 = 0;
    for (int d = 0; d < m->ndev; d++) {
        nbody_multi_device *D = &m->dev[d];
        wcum += D->weight;
        size_t i1 = d == m->ndev - 1 ? ni : (size_t)floor((double)ni * (wcum / wsum) + 0.5);
        if (i1 < i0) i1 = i0;
        if (i1 > ni) i1 = ni;
        D->i0 = i0, D->ni = i1 - i0, i0 = i1;
        for (int l = 0; l < m->queues; l++) D->lane[l].used = 0;
        if (!D->ni) continue;
        clphys_context *c0 = D->lane[0].ctx;
        const size_t bytes = D->ni * 4 * m->rs;
        CP_TRY(ensure(c0, &D->xi, &D->cap_i, bytes));
        cl_event up = NULL;
        CP_TRY(cp_write_async(c0, NULL, D->xi, 0, bytes, (const char *)xi + D->i0 * 4 * m->rs, 0, NULL, &up));
        clphys_status st = CLPHYS_SUCCESS;
        for (int l = 1; l < m->queues && !st; l++) st = cp_enqueue_wait(D->lane[l].ctx, NULL, 1, &up);
        cp_release_event(&up);
        CP_TRY(st);
        for (int l = 0; l < m->queues; l++) CP_TRY(ensure(D->lane[l].ctx, &D->lane[l].out, &D->lane[l].cap_out, bytes));
    }
    return CLPHYS_SUCCESS;
}

static clphys_status keep_events(clphys_nbody_gravity_multi *m, cl_event *ev, nbody_multi_lane *L, int d)
{
    if (m->nev + 2 > m->cap_ev) {
        int cap = m->cap_ev ? 2 * m->cap_ev : 64;
        cl_event *e = realloc(m->ev, (size_t)cap * sizeof *e);
        if (e) m->ev = e;
        int *di = e ? realloc(m->ev_dev, (size_t)cap * sizeof *di) : NULL;
        if (di) m->ev_dev = di;
        if (!e || !di) {
            cp_release_event(&ev[0]), cp_release_event(&ev[1]);
            return cp_error(L->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "gravity: event list");
        }
        m->cap_ev = cap;
    }
    for (int k = 0; k < 2; k++)
        if (ev[k]) L->last = m->nev, m->ev_dev[m->nev] = d, m->ev[m->nev++] = ev[k];
    return CLPHYS_SUCCESS;
}

clphys_status nbody_multi_block(clphys_nbody_gravity_multi *m, int nparts, const void *const *xj, const size_t *nj,
                                int i_in_j)
{
    size_t n = 0;
    for (int k = 0; k < nparts; k++) n += nj[k];
    if (n == 0) return CLPHYS_SUCCESS;
    const int l = m->next;
    m->next = (m->next + 1) % m->queues;
    for (int d = 0; d < m->ndev; d++) {
        nbody_multi_device *D = &m->dev[d];
        nbody_multi_lane *L = &D->lane[l];
        if (!D->ni) continue;
        CP_TRY(ensure(L->ctx, &L->xj, &L->cap_j, n * 4 * m->rs));
        size_t off = 0;
        for (int k = 0; k < nparts; k++) {
            if (nj[k]) CP_TRY(cp_write_async(L->ctx, NULL, L->xj, off, nj[k] * 4 * m->rs, xj[k], 0, NULL, NULL));
            off += nj[k] * 4 * m->rs;
        }
        cl_event ev[2] = {NULL, NULL};
        clphys_status st = nbody_gravity_launch(L->plan, D->xi, D->ni, L->xj, n, i_in_j, L->out, L->used, ev);
        if (!st)
            st = keep_events(m, ev, L, d);
        else
            cp_release_event(&ev[0]), cp_release_event(&ev[1]);
        if (!st) st = cp_flush(L->ctx, NULL);
        if (st) {
            if (L->ctx != nbody_multi_context(m))
                cp_error(nbody_multi_context(m), st, "device %d: %s", d, clphys_last_error(L->ctx));
            return st;
        }
        L->used++;
        m->kernels++;
    }
    return CLPHYS_SUCCESS;
}

clphys_status nbody_multi_busy(clphys_nbody_gravity_multi *m, int *running)
{
    *running = 0;
    for (int d = 0; d < m->ndev; d++)
        for (int l = 0; l < m->queues; l++) {
            nbody_multi_lane *L = &m->dev[d].lane[l];
            if (L->last < 0) continue;
            int done = 1;
            CP_TRY(cp_event_done(L->ctx, m->ev[L->last], &done));
            if (!done) {
                *running = 1;
                return CLPHYS_SUCCESS;
            }
        }
    return CLPHYS_SUCCESS;
}

static double real_at(const void *h, size_t k, size_t rs)
{
    return rs == 8 ? ((const double *)h)[k] : (double)((const float *)h)[k];
}

clphys_status nbody_multi_end(clphys_nbody_gravity_multi *m, double *acc, double *pot, clphys_nbody_gravity_timing *t)
{
    cl_event rd[NBODY_MULTI_MAX_DEV * NBODY_MULTI_LANES];
    int nrd = 0;
    clphys_status st = CLPHYS_SUCCESS;
    for (int d = 0; d < m->ndev && !st; d++) {
        nbody_multi_device *D = &m->dev[d];
        for (int l = 0; l < m->queues && !st && D->ni; l++) {
            nbody_multi_lane *L = &D->lane[l];
            if (!L->used) continue;
            const size_t bytes = D->ni * 4 * m->rs;
            st = ensure_host(L->ctx, &L->host, &L->cap_host, bytes);
            if (!st) st = cp_read_async(L->ctx, NULL, L->out, 0, bytes, L->host, 0, NULL, &rd[nrd++]);
        }
    }
    /* one at a time: clWaitForEvents takes the events of one OpenCL context */
    for (int k = 0; k < nrd && !st; k++) st = cp_wait_all(nbody_multi_context(m), 1, &rd[k]);
    for (int k = 0; k < nrd; k++) cp_release_event(&rd[k]);
    if (st) return st;
    for (int d = 0; d < m->ndev; d++) {
        nbody_multi_device *D = &m->dev[d];
        for (size_t i = 0; i < D->ni; i++) {
            double r[4] = {0, 0, 0, 0};
            for (int l = 0; l < m->queues; l++)
                if (D->lane[l].used)
                    for (int c = 0; c < 4; c++) r[c] += real_at(D->lane[l].host, 4 * i + c, m->rs);
            for (int c = 0; c < 3; c++) acc[3 * (D->i0 + i) + c] = r[c];
            if (pot) pot[D->i0 + i] = r[3];
        }
    }
    if (t) {
        double ks = 0, span = 0;
        for (int d = 0; d < m->ndev; d++) {
            double first = INFINITY, last = -INFINITY, a, b;
            for (int k = 0; k < m->nev; k++)
                if (m->ev_dev[k] == d && !cp_event_times(m->ev[k], &a, &b)) {
                    ks += b - a;
                    first = fmin(first, a), last = fmax(last, b);
                }
            if (last > first) span = fmax(span, last - first);
        }
        t->kernel_s = ks;
        t->kernel_span_s = span;
        t->kernels = m->kernels;
    }
    drop_events(m);
    return CLPHYS_SUCCESS;
}

/* ---- the public call: j streamed in blocks ---------------------------------- */
clphys_status clphys_nbody_gravity_multi_compute(clphys_nbody_gravity_multi *m, size_t ni, const double *xi, size_t nj,
                                                 const double *xj, size_t j_block, double *acc, double *pot,
                                                 clphys_nbody_gravity_timing *t)
{
    if (!m) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "gravity multi compute: NULL plan");
    clphys_context *ctx = nbody_multi_context(m);
    const double t0 = cp_now();
    if (t) memset(t, 0, sizeof *t);
    if (!xi) ni = nj;
    if (!xj || !acc || ni > INT_MAX || nj > INT_MAX || (!xi && nj == 0))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "gravity multi compute: NULL array or bad count (ni %zu, nj %zu; at most 2^31 - 1)", ni, nj);
    if (pot && !m->p.potential)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "gravity multi compute: potentials asked of a plan without them");
    if (xi) CP_TRY(nbody_gravity_check_positions(ctx, "i", (int)ni, xi, 0, 0, NULL));
    CP_TRY(nbody_gravity_check_positions(ctx, "j", (int)nj, xj, 0, 0, NULL));
    const size_t r4 = 4 * m->rs;
    void *stage;
    CP_TRY(nbody_multi_staging(m, (nj + (xi ? ni : 0)) * r4, &stage));
    char *sj = stage, *si = xi ? sj + nj * r4 : sj;
    to_real4(sj, xj, nj, m->rs);
    if (xi) to_real4(si, xi, ni, m->rs);
    size_t block = j_block;
    if (!block) block = cp_round_up((nj + 2 * (size_t)m->queues - 1) / (2 * (size_t)m->queues), 256);
    if (block < 1) block = 1;
    clphys_status st = nbody_multi_begin(m, ni, si);
    for (size_t off = 0; off < nj && !st; off += block) {
        const size_t cnt = nj - off < block ? nj - off : block;
        const void *part = sj + off * r4;
        st = nbody_multi_block(m, 1, &part, &cnt, !xi && off == 0);
    }
    if (!st) st = nbody_multi_end(m, acc, pot, t);
    if (st) {
        nbody_multi_abort(m);
        return st;
    }
    if (t) t->total_s = cp_now() - t0;
    return CLPHYS_SUCCESS;
}
