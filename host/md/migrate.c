/* migrate.c — atoms of a distributed MD plan on the host: root's system
 * scattered to the owners, atoms migrating to their new owner at each
 * neighbour-list rebuild (six exchanges, x then y then z, as LAMMPS's
 * Comm::exchange), and the whole system gathered on root in atom-ID order. */
#include "md_mpi_internal.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

clphys_status md_rec_type(clphys_context *ctx, MPI_Datatype *t)
{
    int e = MPI_Type_contiguous((int)sizeof(md_rec), MPI_BYTE, t);
    if (e == MPI_SUCCESS) e = MPI_Type_commit(t);
    return e == MPI_SUCCESS ? CLPHYS_SUCCESS : cp_mpi_error(ctx, e, "MPI_Type_contiguous (atom records)");
}

clphys_status md_atoms_reserve(clphys_context *ctx, md_atoms *a, size_t n)
{
    if (n <= a->cap) return CLPHYS_SUCCESS;
    size_t cap = n + n / 2 + 16;
    long long *id = realloc(a->id, cap * sizeof *id);
    if (id) a->id = id;
    int *type = realloc(a->type, cap * sizeof *type);
    if (type) a->type = type;
    double *x = realloc(a->x, 3 * cap * sizeof *x);
    if (x) a->x = x;
    double *v = realloc(a->v, 3 * cap * sizeof *v);
    if (v) a->v = v;
    int *img = realloc(a->img, 3 * cap * sizeof *img);
    if (img) a->img = img;
    if (!id || !type || !x || !v || !img)
        return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: atoms on the host (%zu)", cap);
    a->cap = cap;
    return CLPHYS_SUCCESS;
}

void md_atoms_free(md_atoms *a)
{
    free(a->id), free(a->type), free(a->x), free(a->v), free(a->img);
    memset(a, 0, sizeof *a);
}

void md_rec_put(md_atoms *a, size_t k, const md_rec *r)
{
    a->id[k] = r->id, a->type[k] = r->type;
    for (int c = 0; c < 3; c++) a->x[3 * k + c] = r->x[c], a->v[3 * k + c] = r->v[c], a->img[3 * k + c] = r->img[c];
}

void md_rec_get(const md_atoms *a, size_t k, md_rec *r)
{
    memset(r, 0, sizeof *r);
    r->id = a->id[k], r->type = a->type[k];
    for (int c = 0; c < 3; c++) r->x[c] = a->x[3 * k + c], r->v[c] = a->v[3 * k + c], r->img[c] = a->img[3 * k + c];
}

/* Atom i of a to place k (k < i). */
static void move(md_atoms *a, size_t k, size_t i)
{
    a->id[k] = a->id[i], a->type[k] = a->type[i];
    memcpy(a->x + 3 * k, a->x + 3 * i, 3 * sizeof *a->x);
    memcpy(a->v + 3 * k, a->v + 3 * i, 3 * sizeof *a->v);
    memcpy(a->img + 3 * k, a->img + 3 * i, 3 * sizeof *a->img);
}

clphys_status md_atoms_push(clphys_context *ctx, md_atoms *a, const md_atoms *src, size_t i, const double *shift)
{
    CP_TRY(md_atoms_reserve(ctx, a, a->n + 1));
    md_rec r;
    md_rec_get(src, i, &r);
    if (shift)
        for (int c = 0; c < 3; c++) r.x[c] += shift[c];
    md_rec_put(a, a->n++, &r);
    return CLPHYS_SUCCESS;
}

/* counts[r] records to each rank r from recs (grouped by rank), to root's
 * nothing; every rank receives its own into own.  Collective. */
clphys_status md_scatter(MPI_Comm comm, clphys_context *ctx, const md_decomp *d, int root, const clphys_md_system *sys,
                         md_atoms *own)
{
    clphys_status st = CLPHYS_SUCCESS;
    int *counts = NULL, *displs = NULL, mine = 0;
    md_rec *recs = NULL, *in = NULL;
    if (d->rank == root) {
        size_t n = sys->n;
        counts = calloc((size_t)d->size, sizeof *counts);
        displs = calloc((size_t)d->size, sizeof *displs);
        int *dest = malloc((n ? n : 1) * sizeof *dest);
        recs = malloc((n ? n : 1) * sizeof *recs);
        if (!counts || !displs || !dest || !recs) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: scatter");
        if (!st && n > (size_t)INT_MAX)
            st = cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "md mpi: %zu atoms: more than one scatter holds", n);
        for (size_t i = 0; !st && i < n; i++) {
            const long long id = sys->id ? sys->id[i] : (long long)i + 1;
            const int t = sys->type ? sys->type[i] : 1;
            int ok = t >= 1 && t <= sys->ntypes && sys->type_mass && sys->type_mass[t] > 0;
            for (int c = 0; c < 3; c++) ok = ok && isfinite(sys->x[3 * i + c]) && isfinite(sys->v[3 * i + c]);
            if (!ok) {
                st = cp_error(ctx, CLPHYS_ERR_INPUT,
                              "md: atom ID %lld: type %d (1 .. %d) with mass > 0, finite position and velocity "
                              "needed",
                              id, t, sys->ntypes);
                break;
            }
            md_rec *r = &recs[i];
            memset(r, 0, sizeof *r);
            r->id = id, r->type = t;
            for (int c = 0; c < 3; c++) {
                r->x[c] = sys->x[3 * i + c] - sys->lo[c];
                r->v[c] = sys->v[3 * i + c];
                r->img[c] = sys->image ? sys->image[3 * i + c] : 0;
            }
            if (md_wrap(d, r->x, r->img)) {
                st = cp_error(ctx, CLPHYS_ERR_INPUT,
                              "md: atom ID %lld: position (%g, %g, %g) more than %d box lengths outside the box, or "
                              "image flags (%d, %d, %d) that would overflow",
                              id, sys->x[3 * i], sys->x[3 * i + 1], sys->x[3 * i + 2], MD_WRAP_MAX, r->img[0],
                              r->img[1], r->img[2]);
                break;
            }
            dest[i] = md_decomp_rank_of(d, r->x);
            counts[dest[i]]++;
        }
        if (!st) {
            /* group by rank: a counting sort */
            md_rec *sorted = malloc((n ? n : 1) * sizeof *sorted);
            if (!sorted) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: scatter");
            for (int r = 1; !st && r < d->size; r++) displs[r] = displs[r - 1] + counts[r - 1];
            int *at = st ? NULL : malloc((size_t)d->size * sizeof *at);
            if (!st && !at) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: scatter");
            if (!st) {
                memcpy(at, displs, (size_t)d->size * sizeof *at);
                for (size_t i = 0; i < n; i++) sorted[at[dest[i]]++] = recs[i];
                free(recs);
                recs = sorted;
            } else {
                free(sorted);
            }
            free(at);
        }
        free(dest);
    }
    st = cp_mpi_agree(comm, ctx, st);
    if (!st) {
        int e = MPI_Scatter(counts, 1, MPI_INT, &mine, 1, MPI_INT, root, comm);
        if (e != MPI_SUCCESS) st = cp_mpi_error(ctx, e, "MPI_Scatter");
    }
    if (!st) {
        in = malloc((mine ? (size_t)mine : 1) * sizeof *in);
        if (!in) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: scatter");
        /* the receive buffer is needed before the collective: agree first */
        st = cp_mpi_agree(comm, ctx, st);
    }
    MPI_Datatype rt = MPI_DATATYPE_NULL;
    if (!st) st = cp_mpi_agree(comm, ctx, md_rec_type(ctx, &rt));
    if (!st) {
        int e = MPI_Scatterv(recs, counts, displs, rt, in, mine, rt, root, comm);
        if (e != MPI_SUCCESS) st = cp_mpi_error(ctx, e, "MPI_Scatterv");
    }
    if (rt != MPI_DATATYPE_NULL) MPI_Type_free(&rt);
    size_t m = (size_t)mine;
    if (!st) st = md_atoms_reserve(ctx, own, m);
    for (size_t k = 0; !st && k < m; k++) md_rec_put(own, k, &in[k]);
    if (!st) own->n = m;
    free(counts), free(displs), free(recs), free(in);
    return cp_mpi_agree(comm, ctx, st);
}

/* Both sides' records of one dimension: out[q] (nout[q] records) to
 * nbr[c][q], those from nbr[c][1 - q] appended to own, side 0's then side
 * 1's.  The two sides are independent (what each sends was chosen before
 * either arrived), so the counts of both travel at once, then the records
 * of both (the neighbours may be one rank: the tags tell the sides apart).
 * Every message is sent and received even after a local failure (st:
 * nothing sent, nothing kept), so that no neighbour waits; md_migrate's
 * caller agrees the status. */
static clphys_status swap_atoms(MPI_Comm comm, clphys_context *ctx, const md_decomp *d, int c, md_rec *const out[2],
                                const int nout_in[2], md_atoms *own, clphys_status st)
{
    int nout[2] = {st ? 0 : nout_in[0], st ? 0 : nout_in[1]}, nin[2] = {0, 0};
    MPI_Request rq[4];
    int nrq = 0;
    clphys_status ms = CLPHYS_SUCCESS;
    for (int q = 0; q < 2 && !ms; q++) {
        cp_mpi_slice o = {&nout[q], 1, MPI_INT}, i = {&nin[q], 1, MPI_INT};
        ms = cp_mpi_post(ctx, comm, d->nbr[c][q], &o, 1, d->nbr[c][1 - q], &i, 1, 100 + 4 * c + 2 * q, rq, &nrq);
    }
    /* every request over, whatever fails (cp_mpi_wait_exposed) */
    cp_mpi_overlap none = {0, 0, 0};
    clphys_status w = cp_mpi_wait_exposed(ctx, nrq, rq, cp_now(), &none);
    if (!ms) ms = w;
    if (!st) st = ms;
    const size_t most = (size_t)INT_MAX;
    if (!st && (nin[0] < 0 || nin[1] < 0 || (size_t)nin[0] + (size_t)nin[1] > most))
        st = cp_error(ctx, CLPHYS_ERR_OVERFLOW, "md mpi: %d and %d atoms arriving: too many for one message", nin[0],
                      nin[1]);
    const size_t all = st ? 0 : (size_t)nin[0] + (size_t)nin[1];
    md_rec *in = malloc((all ? all : 1) * sizeof *in);
    if (!st && !in) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: migration");
    if (!st) st = md_atoms_reserve(ctx, own, own->n + all);
    /* a rank without room still receives (into nothing it keeps: MPI
     * reports the truncation, ignored after the failure) */
    md_rec dummy;
    MPI_Datatype rt = MPI_DATATYPE_NULL;
    nrq = 0, ms = md_rec_type(ctx, &rt);
    for (int q = 0; q < 2 && !ms; q++) {
        cp_mpi_slice o = {out[q] ? (void *)out[q] : (void *)&dummy, nout[q], rt};
        cp_mpi_slice i = {st ? (void *)&dummy : (void *)(in + (q ? nin[0] : 0)), st ? 0 : nin[q], rt};
        ms = cp_mpi_post(ctx, comm, d->nbr[c][q], &o, 1, d->nbr[c][1 - q], &i, 1, 101 + 4 * c + 2 * q, rq, &nrq);
    }
    w = cp_mpi_wait_exposed(ctx, nrq, rq, cp_now(), &none);
    if (rt != MPI_DATATYPE_NULL) MPI_Type_free(&rt);
    if (!ms) ms = w;
    if (!st) st = ms;
    for (size_t k = 0; !st && k < all; k++) md_rec_put(own, own->n++, &in[k]);
    free(in);
    return st;
}

clphys_status md_migrate(MPI_Comm comm, clphys_context *ctx, const md_decomp *d, md_atoms *own, clphys_status st)
{
    for (size_t i = 0; !st && i < own->n; i++)
        if (md_wrap(d, own->x + 3 * i, own->img + 3 * i))
            st = cp_error(ctx, CLPHYS_ERR_INPUT,
                          "md mpi: atom ID %lld at (%g, %g, %g), not finite or far outside the box: the integration "
                          "diverged (dt too large for the forces)",
                          own->id[i], own->x[3 * i], own->x[3 * i + 1], own->x[3 * i + 2]);
    for (int c = 0; c < 3; c++) {
        if (!d->cut[c]) continue;
        md_rec *out[2] = {NULL, NULL};
        int nout[2] = {0, 0};
        if (!st) {
            out[0] = malloc((own->n + 1) * sizeof(md_rec)), out[1] = malloc((own->n + 1) * sizeof(md_rec));
            if (!out[0] || !out[1]) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: migration");
        }
        const int P = d->P[c], me = d->coord[c];
        size_t keep = 0;
        for (size_t i = 0; !st && i < own->n; i++) {
            int k = md_decomp_owner(d, c, own->x[3 * i + c]);
            if (k == me) {
                /* most stay: moved down only behind a leaver, no record */
                if (keep != i) move(own, keep, i);
                keep++;
                continue;
            }
            md_rec r;
            md_rec_get(own, i, &r);
            int side = k == (me + P - 1) % P ? 0 : k == (me + 1) % P ? 1 : -1;
            if (side < 0) {
                st = cp_error(ctx, CLPHYS_ERR_INPUT,
                              "md mpi: atom ID %lld moved from subdomain %d to %d along %c between two neighbour "
                              "builds, farther than the next subdomain: rebuild more often (neigh_every, "
                              "neigh_check) or take a smaller time step",
                              r.id, me, k, "xyz"[c]);
                break;
            }
            if (nout[side] == INT_MAX) {
                st = cp_error(ctx, CLPHYS_ERR_OVERFLOW, "md mpi: more than %d atoms leaving along %c at once", INT_MAX,
                              "xyz"[c]);
                break;
            }
            out[side][nout[side]++] = r;
        }
        if (!st) own->n = keep;
        /* a failure here or before: nothing sent, nothing kept (the
         * dimensions after see the same calls on every rank) */
        st = swap_atoms(comm, ctx, d, c, out, nout, own, st);
        free(out[0]), free(out[1]);
    }
    return st;
}

static int by_id(const void *a, const void *b)
{
    long long x = ((const md_rec *)a)->id, y = ((const md_rec *)b)->id;
    return (x > y) - (x < y);
}

clphys_status md_gather(MPI_Comm comm, clphys_context *ctx, const md_decomp *d, int root, const md_atoms *own,
                        int ntypes, const double *type_mass, clphys_md_system *all)
{
    clphys_status st = CLPHYS_SUCCESS;
    int mine = (int)own->n, *counts = NULL, *displs = NULL;
    md_rec *out = malloc((own->n ? own->n : 1) * sizeof *out), *in = NULL;
    if (!out) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: gather");
    if (!st && own->n > (size_t)INT_MAX)
        st = cp_error(ctx, CLPHYS_ERR_OVERFLOW, "md mpi: %zu atoms on one rank: more than one gather holds", own->n);
    for (size_t k = 0; !st && k < own->n; k++) md_rec_get(own, k, &out[k]);
    if (d->rank == root) {
        counts = malloc((size_t)d->size * sizeof *counts), displs = malloc((size_t)d->size * sizeof *displs);
        if (!counts || !displs) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: gather");
    }
    CP_TRY(cp_mpi_agree(comm, ctx, st));
    CP_MPI(ctx, MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, root, comm));
    size_t total = 0;
    if (d->rank == root) {
        for (int r = 0; r < d->size; r++) displs[r] = (int)total, total += (size_t)counts[r];
        if (total > (size_t)INT_MAX)
            st = cp_error(ctx, CLPHYS_ERR_OVERFLOW, "md mpi: %zu atoms: more than one gather holds", total);
        in = st ? NULL : malloc((total ? total : 1) * sizeof *in);
        if (!st && !in) st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: gather");
    }
    MPI_Datatype rt = MPI_DATATYPE_NULL;
    if (!st) st = md_rec_type(ctx, &rt);
    st = cp_mpi_agree(comm, ctx, st);
    if (!st) {
        int e = MPI_Gatherv(out, mine, rt, in, counts, displs, rt, root, comm);
        if (e != MPI_SUCCESS) st = cp_mpi_error(ctx, e, "MPI_Gatherv");
    }
    if (rt != MPI_DATATYPE_NULL) MPI_Type_free(&rt);
    if (!st && d->rank == root) {
        size_t n = total;
        qsort(in, n, sizeof *in, by_id);
        clphys_md_system s;
        memset(&s, 0, sizeof s);
        s.n = n, s.ntypes = ntypes;
        for (int c = 0; c < 3; c++) s.lo[c] = d->glo[c], s.hi[c] = d->ghi[c];
        s.type_mass = malloc((size_t)(ntypes + 1) * sizeof *s.type_mass);
        s.id = malloc((n ? n : 1) * sizeof *s.id);
        s.type = malloc((n ? n : 1) * sizeof *s.type);
        s.x = malloc(3 * (n ? n : 1) * sizeof *s.x);
        s.v = malloc(3 * (n ? n : 1) * sizeof *s.v);
        s.image = malloc(3 * (n ? n : 1) * sizeof *s.image);
        if (!s.type_mass || !s.id || !s.type || !s.x || !s.v || !s.image) {
            clphys_md_system_destroy(&s);
            st = cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: gather of %zu atoms", n);
        } else {
            memcpy(s.type_mass, type_mass, (size_t)(ntypes + 1) * sizeof *s.type_mass);
            for (size_t i = 0; i < n; i++) {
                s.id[i] = in[i].id, s.type[i] = in[i].type;
                for (int c = 0; c < 3; c++) {
                    s.x[3 * i + c] = in[i].x[c] + s.lo[c];
                    s.v[3 * i + c] = in[i].v[c];
                    s.image[3 * i + c] = in[i].img[c];
                }
            }
            *all = s;
        }
    }
    free(out), free(in), free(counts), free(displs);
    return cp_mpi_agree(comm, ctx, st);
}
