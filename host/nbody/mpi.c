/* mpi.c — direct-sum gravity over MPI ranks: the exchange schedules
 * of schedule.c run with non-blocking MPI while the multi-device
 * engine (multi.c) computes the block in hand; the N-body helpers
 * (scatter, gather, reduced energies).  Public API: clphys_nbody_mpi.h.
 *
 * Every position of the call lives once in one host array in global
 * (rank) order, in the plan's precision: a received block is written to
 * its own place and never overwritten during the call, so forwarding a
 * block, uploading it and receiving the next never wait for one another. */
#include "clphys_nbody_mpi.h"
#include "nbody_multi.h"
#include "nbody_schedule.h"
#include "platform/cp_mpi.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct clphys_nbody_gravity_mpi {
    MPI_Comm comm;
    int P, rank;
    clphys_nbody_gravity_multi *m;
    nbody_sched_schedule sched;
    MPI_Datatype real4; /* 4 reals of the plan's precision */
    size_t rs;
    int *count, *displ; /* per rank, this call; displ[P] = the total */
    char *all;          /* every position, global order, plan precision (nbody_multi_staging) */
};

/* The parameters that must agree between ranks, field by field (no padding
 * bytes in what is hashed). */
static void agreed(const clphys_nbody_gravity_params *p, clphys_nbody_gravity_exchange exchange, int group,
                   double v[14])
{
    const double a[14] = {p->precision,    p->variant,    p->G,
                          p->eps,          p->potential,  p->work_group,
                          p->i_per_item,   p->unroll,     p->flush_denormals,
                          p->fast_rsqrt64, p->inline_ptx, p->j_split,
                          exchange,        group};
    memcpy(v, a, sizeof a);
}

clphys_status clphys_nbody_gravity_mpi_create(MPI_Comm comm, clphys_context *const *ctxs, int ndev,
                                              const clphys_nbody_gravity_params *p,
                                              clphys_nbody_gravity_exchange exchange, int group,
                                              clphys_nbody_gravity_mpi **out)
{
    MPI_Comm c;
    CP_TRY(cp_mpi_dup(comm, NULL, &c));
    clphys_status st = CLPHYS_SUCCESS;
    if (!out || !ctxs || ndev < 1 || !p)
        st = cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "gravity mpi: NULL argument or ndev %d < 1", ndev);
    if (out) *out = NULL;
    clphys_nbody_gravity_params pin;
    if (!st) st = CP_PARAMS_IN(NULL, clphys_nbody_gravity_params, p, n_hint, &pin);
    p = &pin;
    st = cp_mpi_agree(c, NULL, st);
    if (!st) {
        double a[14];
        agreed(p, exchange, group, a);
        st = cp_mpi_same(c, NULL, a, sizeof a, "gravity parameters, exchange or group");
    }
    clphys_nbody_gravity_mpi *g = NULL;
    if (!st && !(g = calloc(1, sizeof *g))) st = cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "gravity mpi plan");
    if (g) {
        g->comm = c;
        g->real4 = MPI_DATATYPE_NULL;
        MPI_Comm_size(c, &g->P);
        MPI_Comm_rank(c, &g->rank);
        g->rs = p->precision == CLPHYS_FP64 ? 8 : 4;
        st = nbody_sched_build(NULL, exchange, group, g->P, g->rank, &g->sched);
        if (!st && (!(g->count = calloc((size_t)g->P, sizeof *g->count)) ||
                    !(g->displ = calloc((size_t)g->P + 1, sizeof *g->displ))))
            st = cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "gravity mpi plan");
        if (!st) {
            int e = MPI_Type_contiguous(4, g->rs == 8 ? MPI_DOUBLE : MPI_FLOAT, &g->real4);
            if (e == MPI_SUCCESS) e = MPI_Type_commit(&g->real4);
            if (e != MPI_SUCCESS) st = cp_mpi_error(NULL, e, "MPI_Type_contiguous");
        }
        if (!st) {
            st = clphys_nbody_gravity_multi_create(ctxs, ndev, 2, p, &g->m);
            if (st) cp_error(NULL, st, "%s", clphys_last_error(ctxs[0]));
        }
    }
    st = cp_mpi_agree(c, NULL, st);
    if (st) {
        if (g)
            clphys_nbody_gravity_mpi_destroy(g);
        else
            MPI_Comm_free(&c);
        return st;
    }
    *out = g;
    return CLPHYS_SUCCESS;
}

void clphys_nbody_gravity_mpi_destroy(clphys_nbody_gravity_mpi *g)
{
    if (!g) return;
    clphys_nbody_gravity_multi_destroy(g->m);
    nbody_sched_free(&g->sched);
    if (g->real4 != MPI_DATATYPE_NULL) MPI_Type_free(&g->real4);
    if (g->comm != MPI_COMM_NULL) MPI_Comm_free(&g->comm);
    free(g->count);
    free(g->displ);
    free(g);
}

const char *clphys_nbody_gravity_mpi_info(const clphys_nbody_gravity_mpi *g, clphys_nbody_gravity_exchange *exchange,
                                          int *group)
{
    if (exchange) *exchange = g ? g->sched.exchange : CLPHYS_NBODY_GRAVITY_EXCHANGE_AUTO;
    if (group) *group = g ? g->sched.group : 0;
    return g ? clphys_nbody_gravity_multi_info(g->m, NULL, NULL) : "";
}

/* The blocks of the cyclic range r as slices of the global array. */
static int slices(const clphys_nbody_gravity_mpi *g, nbody_sched_range r, cp_mpi_slice *sl, const void **ptr,
                  size_t *cnt)
{
    int lo[2], n[2], k = nbody_sched_pieces(r, g->P, lo, n);
    for (int i = 0; i < k; i++) {
        const int a = g->displ[lo[i]], b = g->displ[lo[i] + n[i]];
        sl[i] = (cp_mpi_slice){g->all + (size_t)a * 4 * g->rs, b - a, g->real4};
        ptr[i] = sl[i].buf;
        cnt[i] = (size_t)(b - a);
    }
    return k;
}

/* nbody_multi_busy for the wait loop; a device failure is kept in *dev and reported
 * as "not running", so that the exchanges still complete. */
typedef struct {
    clphys_nbody_gravity_multi *m;
    clphys_status *dev;
} busy_arg;
static clphys_status busy(void *arg, int *running)
{
    busy_arg *b = arg;
    *running = 0;
    if (*b->dev) return CLPHYS_SUCCESS;
    *b->dev = nbody_multi_busy(b->m, running);
    if (*b->dev) *running = 0;
    return CLPHYS_SUCCESS;
}

/* The exchanges and the kernels of one call (counts and the own block in
 * place).  MPI failures return at once (*dev untouched); device failures go
 * to *dev and the exchanges continue. */
static clphys_status exchange_and_compute(clphys_nbody_gravity_mpi *g, size_t n, clphys_status *dev, cp_mpi_overlap *ov,
                                          double *bytes_sent)
{
    const size_t r4 = 4 * g->rs;
    char *own = g->all + (size_t)g->displ[g->rank] * r4;
    *dev = nbody_multi_begin(g->m, n, own);
    if (g->sched.exchange == CLPHYS_NBODY_GRAVITY_EXCHANGE_ALLGATHER) {
        const double t0 = cp_now();
        CP_MPI(NULL, MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g->all, g->count, g->displ, g->real4, g->comm));
        const double t = cp_now() - t0;
        ov->exchange_s += t, ov->exposed_s += t, ov->exchanges++;
        *bytes_sent += (double)n * (double)r4 * (g->P - 1);
        const void *all = g->all;
        const size_t total = (size_t)g->displ[g->P];
        if (!*dev) *dev = nbody_multi_block(g->m, 1, &all, &total, 1);
        return CLPHYS_SUCCESS;
    }
    if (!*dev && n) {
        const void *p = own;
        *dev = nbody_multi_block(g->m, 1, &p, &n, 1);
    }
    busy_arg b = {g->m, dev};
    const int nap = clphys_context_device(nbody_multi_context(g->m))->is_cpu;
    for (int s = 0; s < g->sched.nstages; s++) {
        const nbody_sched_stage *st = &g->sched.stage[s];
        cp_mpi_slice snd[2], rcv[2];
        const void *sp[2], *rp[2];
        size_t sc[2], rc[2];
        const int ns = slices(g, st->send, snd, sp, sc), nr = slices(g, st->recv, rcv, rp, rc);
        MPI_Request req[4];
        int nreq = 0;
        const double t_post = cp_now();
        /* a stage's messages complete before the next stage posts, and MPI keeps
         * the order of messages between two ranks: tags may repeat */
        CP_TRY(cp_mpi_post(NULL, g->comm, st->to, snd, ns, st->from, rcv, nr, 8 * (s % 1024), req, &nreq));
        for (int k = 0; k < ns; k++) *bytes_sent += (double)sc[k] * (double)r4;
        CP_TRY(cp_mpi_wait_overlapped(NULL, nreq, req, t_post, busy, &b, nap, ov));
        if (!*dev) *dev = nbody_multi_block(g->m, nr, rp, rc, 0);
    }
    return CLPHYS_SUCCESS;
}

clphys_status clphys_nbody_gravity_mpi_compute(clphys_nbody_gravity_mpi *g, size_t n, const double *x, double *acc,
                                               double *pot, clphys_nbody_gravity_timing *t)
{
    if (!g) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "gravity mpi compute: NULL plan");
    const double t0 = cp_now();
    clphys_nbody_gravity_timing tm;
    memset(&tm, 0, sizeof tm);
    clphys_status st = CLPHYS_SUCCESS;
    if (n > INT_MAX || (n && (!x || !acc)))
        st = cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "gravity mpi compute: NULL array or %zu particles", n);
    else if (pot && !nbody_multi_potential(g->m))
        st =
            cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "gravity mpi compute: potentials asked of a plan without them");
    else if (n)
        st = nbody_gravity_check_positions(NULL, "i", (int)n, x, 0, 0, NULL);
    /* the counts and every rank's status in one collective */
    long long mine[2] = {st ? 0 : (long long)n, (long long)st}, *both = malloc(2 * (size_t)g->P * sizeof *both);
    if (!both) return cp_mpi_agree(g->comm, NULL, cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "gravity mpi compute"));
    int e = MPI_Allgather(mine, 2, MPI_LONG_LONG, both, 2, MPI_LONG_LONG, g->comm);
    if (e != MPI_SUCCESS) {
        free(both);
        return cp_mpi_error(NULL, e, "MPI_Allgather (gravity counts)");
    }
    long long total = 0;
    int failed = 0;
    for (int r = 0; r < g->P; r++) {
        failed |= both[2 * r + 1] != 0;
        g->count[r] = (int)both[2 * r];
        g->displ[r] = (int)total;
        total += both[2 * r];
    }
    free(both);
    /* a failing rank passes its status and message to the agreement; the
     * others pass success (and every rank sees the same total) */
    if (failed) return cp_mpi_agree(g->comm, NULL, st);
    if (total > INT_MAX)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "gravity mpi compute: %lld particles in all, above 2^31 - 1",
                        total);
    g->displ[g->P] = (int)total;
    const size_t r4 = 4 * g->rs;
    void *all = NULL;
    st = nbody_multi_staging(g->m, (size_t)total * r4, &all);
    if (st) cp_error(NULL, st, "gravity mpi: %lld positions: %s", total, clphys_last_error(nbody_multi_context(g->m)));
    g->all = all;
    st = cp_mpi_agree(g->comm, NULL, st);
    if (st) return st;
    char *own = g->all + (size_t)g->displ[g->rank] * r4;
    if (g->rs == 8)
        memcpy(own, x, n * r4);
    else
        for (size_t c = 0; c < 4 * n; c++) ((float *)own)[c] = (float)x[c];

    clphys_status dev = CLPHYS_SUCCESS;
    cp_mpi_overlap ov = {0, 0, 0};
    st = exchange_and_compute(g, n, &dev, &ov, &tm.bytes_sent);
    if (!st && !dev) dev = nbody_multi_end(g->m, acc, pot, &tm);
    if (st || dev) nbody_multi_abort(g->m);
    if (!st && dev) {
        st = dev;
        const char *msg = clphys_last_error(nbody_multi_context(g->m));
        cp_error(NULL, st, "%s", msg);
    }
    /* one status on every rank (after an MPI failure the others may hang in
     * MPI until the launcher ends the job: nothing better can be done) */
    st = cp_mpi_agree(g->comm, NULL, st);
    tm.exchange_s = ov.exchange_s;
    tm.exposed_s = ov.exposed_s;
    tm.exchanges = ov.exchanges;
    tm.total_s = cp_now() - t0;
    if (t) *t = tm;
    return st;
}

/* ---- N-body helpers ------------------------------------------------------------ */
static clphys_status alloc_system(size_t n, clphys_nbody_system *s)
{
    s->n = n;
    s->x = malloc((n ? n : 1) * 4 * sizeof *s->x);
    s->v = malloc((n ? n : 1) * 3 * sizeof *s->v);
    if (s->x && s->v) return CLPHYS_SUCCESS;
    clphys_nbody_system_destroy(s);
    return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "nbody: %zu particles", n);
}

/* counts and displacements of `per` doubles per particle from particle counts */
static void scaled(int P, const long long *cnt, int per, int *c, int *d)
{
    long long o = 0;
    for (int r = 0; r < P; r++) c[r] = (int)(cnt[r] * per), d[r] = (int)o, o += cnt[r] * per;
}

clphys_status clphys_nbody_mpi_scatter(MPI_Comm comm, int root, const clphys_nbody_system *all,
                                       clphys_nbody_system *local)
{
    int P, rank;
    CP_MPI(NULL, MPI_Comm_size(comm, &P));
    CP_MPI(NULL, MPI_Comm_rank(comm, &rank));
    clphys_status st = CLPHYS_SUCCESS;
    if (local) *local = (clphys_nbody_system){0, NULL, NULL};
    if (!local || root < 0 || root >= P || (rank == root && (!all || (all->n && (!all->x || !all->v)))))
        st = cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "nbody scatter: NULL system or root %d of %d", root, P);
    long long N = !st && rank == root ? (long long)all->n : 0;
    if (!st && rank == root && N * 4 > INT_MAX)
        st = cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "nbody scatter: %lld particles, above (2^31 - 1) / 4", N);
    CP_TRY(cp_mpi_agree(comm, NULL, st));
    CP_MPI(NULL, MPI_Bcast(&N, 1, MPI_LONG_LONG, root, comm));
    long long *cnt = malloc((size_t)P * sizeof *cnt);
    int *c = malloc(2 * (size_t)P * sizeof *c);
    if (!cnt || !c) st = cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "nbody scatter");
    if (!st) {
        for (int r = 0; r < P; r++) cnt[r] = N / P + (r < N % P);
        st = alloc_system((size_t)cnt[rank], local);
    }
    st = cp_mpi_agree(comm, NULL, st);
    int e = MPI_SUCCESS;
    if (!st) {
        scaled(P, cnt, 4, c, c + P);
        e = MPI_Scatterv(rank == root ? all->x : NULL, c, c + P, MPI_DOUBLE, local->x, c[rank], MPI_DOUBLE, root, comm);
        scaled(P, cnt, 3, c, c + P);
        if (e == MPI_SUCCESS)
            e = MPI_Scatterv(rank == root ? all->v : NULL, c, c + P, MPI_DOUBLE, local->v, c[rank], MPI_DOUBLE, root,
                             comm);
        if (e != MPI_SUCCESS) st = cp_mpi_error(NULL, e, "MPI_Scatterv (nbody)");
    }
    free(cnt);
    free(c);
    if (st) clphys_nbody_system_destroy(local);
    return st;
}

clphys_status clphys_nbody_mpi_gather(MPI_Comm comm, int root, const clphys_nbody_system *local,
                                      clphys_nbody_system *all)
{
    int P, rank;
    CP_MPI(NULL, MPI_Comm_size(comm, &P));
    CP_MPI(NULL, MPI_Comm_rank(comm, &rank));
    clphys_status st = CLPHYS_SUCCESS;
    if (!local || root < 0 || root >= P || (rank == root && !all) || (local->n && (!local->x || !local->v)))
        st = cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "nbody gather: NULL system or root %d of %d", root, P);
    CP_TRY(cp_mpi_agree(comm, NULL, st));
    long long n = (long long)local->n, *cnt = malloc((size_t)P * sizeof *cnt), N = 0;
    int *c = malloc(2 * (size_t)P * sizeof *c);
    if (!cnt || !c) st = cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "nbody gather");
    int e = st ? MPI_SUCCESS : MPI_Allgather(&n, 1, MPI_LONG_LONG, cnt, 1, MPI_LONG_LONG, comm);
    if (e != MPI_SUCCESS) st = cp_mpi_error(NULL, e, "MPI_Allgather (nbody)");
    for (int r = 0; !st && r < P; r++) N += cnt[r];
    if (!st && N * 4 > INT_MAX)
        st = cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "nbody gather: %lld particles, above (2^31 - 1) / 4", N);
    if (!st && rank == root) st = alloc_system((size_t)N, all);
    st = cp_mpi_agree(comm, NULL, st);
    if (!st) {
        scaled(P, cnt, 4, c, c + P);
        e = MPI_Gatherv(local->x, c[rank], MPI_DOUBLE, rank == root ? all->x : NULL, c, c + P, MPI_DOUBLE, root, comm);
        scaled(P, cnt, 3, c, c + P);
        if (e == MPI_SUCCESS)
            e = MPI_Gatherv(local->v, c[rank], MPI_DOUBLE, rank == root ? all->v : NULL, c, c + P, MPI_DOUBLE, root,
                            comm);
        if (e != MPI_SUCCESS) st = cp_mpi_error(NULL, e, "MPI_Gatherv (nbody)");
        if (st && rank == root) clphys_nbody_system_destroy(all);
    }
    free(cnt);
    free(c);
    return st;
}

clphys_status clphys_nbody_mpi_energy(MPI_Comm comm, const clphys_nbody_system *s, const double *pot,
                                      clphys_nbody_energy *e)
{
    clphys_status st = CLPHYS_SUCCESS;
    if (!s || !e || (s->n && (!s->x || !s->v || !pot)))
        st = cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "nbody energy: NULL argument");
    CP_TRY(cp_mpi_agree(comm, NULL, st));
    double sum[5] = {0, 0, 0, 0, 0}; /* K, W, momentum x, y, z */
    for (size_t i = 0; i < s->n; i++) {
        const double m = s->x[4 * i + 3], *v = s->v + 3 * i;
        sum[0] += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        sum[1] += 0.5 * m * pot[i];
        for (int c = 0; c < 3; c++) sum[2 + c] += m * v[c];
    }
    CP_MPI(NULL, MPI_Allreduce(MPI_IN_PLACE, sum, 5, MPI_DOUBLE, MPI_SUM, comm));
    e->kinetic = sum[0];
    e->potential = sum[1];
    e->total = sum[0] + sum[1];
    e->virial_ratio = sum[1] != 0 ? sum[0] / fabs(sum[1]) : 0;
    e->momentum = sqrt(sum[2] * sum[2] + sum[3] * sum[3] + sum[4] * sum[4]);
    return CLPHYS_SUCCESS;
}
