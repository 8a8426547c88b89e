/* rebuild.c — a distributed MD plan's neighbour-list rebuild.  The
 * atoms still inside the subdomain stay on the device, compacted to the
 * front of the next sort's input (cl/md_rebuild.cl); only the migrants
 * (outside it along a cut dimension) cross to the host whole, where they
 * go to their owners (migrate.c), and the arrived atoms come back behind
 * the staying ones.  The ghost lists are made on the device
 * (md_ghosts_build_dev), the ghosts appended behind the owned atoms; on the
 * host path (the first rebuild, CLPHYS_MD_HOST_GHOSTS) the staying atoms
 * near a cut face send their positions and places instead, the lists are
 * made there with the arrived atoms (md_ghosts_build) and the ghosts
 * uploaded.  Where one dimension is cut the migrants and the new ghosts
 * travel together instead (borders.c), unless some rank needs the lists in
 * rounds.  Then the rank's set is sorted by cell and listed on the device. */
#include "md_mpi_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* md_classify lists the staying atoms within this many r_search of a cut
 * face for the host path's ghost lists (md_ghosts_build: the first rebuild,
 * CLPHYS_MD_HOST_GHOSTS); above 1, so that rounding between the device's
 * local frame and the host's never leaves out an atom the host would list
 * as a ghost */
#define SHELL_MARGIN 1.1
/* md_edge_rows' work-group */
#define MD_EDGE_WG 64
/* records in mig at first: more than a million atoms per rank see about
 * a thousand migrants per rebuild of in.lj; mig grows to twice the most
 * seen */
#define MIG_FIRST 2048

/* pl->tail: interior_rows' reads, then the list's overflow count and the
 * rows sent both ways (sort_and_bind) */
#define ROWS_READ  32
#define TAIL_BYTES (ROWS_READ + 8)

/* Word k of pl->tail behind interior_rows' reads: 0 the overflow count, 1
 * the rows sent both ways. */
static cl_uint *tail_word(const clphys_md_mpi *pl, int k) { return (cl_uint *)pl->tail + ROWS_READ / 4 + k; }

size_t md_mpi_record_bytes(size_t rs) { return 8 * rs + 32; }

/* Room for n records in mig (md_classify's migrants, then md_arrive's
 * arrivals). */
static clphys_status mig_room(clphys_md_mpi *pl, size_t n)
{
    if (n <= pl->mig_cap && pl->mig) return CLPHYS_SUCCESS;
    CP_TRY(cp_finish(pl->ctx)); /* an arrivals' launch may still read it */
    cp_release_mem(&pl->mig);
    pl->mig_cap = 0;
    CP_TRY(cp_buffer(pl->ctx, CL_MEM_READ_WRITE, md_mpi_record_bytes(pl->rs) * n, NULL, &pl->mig));
    pl->mig_cap = n;
    return CLPHYS_SUCCESS;
}

clphys_status md_mpi_rebuild_kernels(clphys_md_mpi *pl)
{
    clphys_context *ctx = pl->ctx;
    cp_defines opt = {0};
    CP_TRY(cp_define_precision(ctx, &opt, pl->p.lj.precision));
    cp_define_int(&opt, "MD_EDGE_WG", MD_EDGE_WG);
    cl_program prog;
    CP_TRY(cp_program(ctx, &clsrc_md_rebuild_cl, &opt, &prog));
    CP_TRY(cp_kernel(ctx, prog, "md_classify", &pl->k_classify));
    CP_TRY(cp_kernel(ctx, prog, "md_iota", &pl->k_iota));
    CP_TRY(cp_kernel(ctx, prog, "md_bind", &pl->k_bind));
    CP_TRY(cp_kernel(ctx, prog, "md_ghost_fill", &pl->k_fill));
    CP_TRY(cp_kernel(ctx, prog, "md_map", &pl->k_map));
    CP_TRY(cp_kernel(ctx, prog, "md_edge_rows", &pl->k_edge));
    CP_TRY(cp_kernel(ctx, prog, "md_arrive", &pl->k_arrive));
    CP_TRY(mig_room(pl, MIG_FIRST));
    if (cp_pinned(ctx, TAIL_BYTES, &pl->tail_m, &pl->tail)) pl->tail = malloc(TAIL_BYTES);
    if (!pl->tail) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: %d bytes of host memory", TAIL_BYTES);
    CP_TRY(cp_check_work_group(ctx, pl->k_edge, "md_edge_rows", MD_EDGE_WG));
    return cp_buffer(ctx, CL_MEM_READ_WRITE, 16, NULL, &pl->counts);
}

/* Host staging of at least `bytes` for the rebuild's copies: page-locked
 * (the copies run at the bus's speed), else pageable. */
static clphys_status staging(clphys_md_mpi *pl, size_t bytes, void **p)
{
    if (bytes > pl->stage_bytes) {
        CP_TRY(cp_finish(pl->ctx)); /* an upload from the old staging may be queued */
        if (pl->stage_m)
            cp_pinned_release(pl->ctx, &pl->stage_m, &pl->stage);
        else
            free(pl->stage);
        pl->stage = NULL, pl->stage_bytes = 0;
        size_t want = bytes + bytes / 4 + 4096;
        if (cp_pinned(pl->ctx, want, &pl->stage_m, &pl->stage)) pl->stage = malloc(want);
        if (!pl->stage) return cp_error(pl->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: staging of %zu bytes", want);
        pl->stage_bytes = want;
    }
    *p = pl->stage;
    return CLPHYS_SUCCESS;
}

/* Element k of a real array read back in the plan's precision. */
static double real_at(const void *b, size_t rs, size_t k)
{
    return rs == 8 ? ((const double *)b)[k] : ((const float *)b)[k];
}

/* One atom from its device values (x, v: real4 of the plan's precision;
 * image and tag int4): position relative to the box's lo corner, wrapped.
 * Nonzero where the integration diverged: 1 a position not finite or far
 * outside the box (md_wrap), 2 a velocity that moves the atom more than
 * half the box a step (clphys_md_thermo_now's bound). */
static int device_to_rec(const clphys_md_mpi *pl, const void *x, const void *v, const cl_int *im, const cl_int *tg,
                         md_rec *r)
{
    const size_t rs = pl->rs;
    for (int c = 0; c < 3; c++) {
        r->x[c] = real_at(x, rs, (size_t)c) + pl->d.llo[c];
        r->v[c] = real_at(v, rs, (size_t)c);
        r->img[c] = im[c];
    }
    r->id = (long long)(((unsigned long long)(cl_uint)tg[1] << 32) | (cl_uint)tg[0]);
    r->type = tg[2];
    const double half = md_half_box(pl->d.L), dt = pl->p.dt;
    const double v2 = r->v[0] * r->v[0] + r->v[1] * r->v[1] + r->v[2] * r->v[2];
    return md_wrap(&pl->d, r->x, r->img) ? 1 : !(v2 * dt * dt <= half * half) ? 2 : 0;
}

int md_mpi_record_rec(const clphys_md_mpi *pl, const void *rec, md_rec *r)
{
    const char *b = rec;
    const cl_int *iv = (const cl_int *)(const void *)(b + 8 * pl->rs);
    return device_to_rec(pl, b, b + 4 * pl->rs, iv, iv + 4, r);
}

clphys_status md_mpi_diverged(const clphys_md_mpi *pl, const md_rec *r, int why)
{
    const double half = md_half_box(pl->d.L);
    char what[96];
    if (why == 1)
        snprintf(what, sizeof what, "a position not finite or more than %d box lengths out", MD_WRAP_MAX);
    else
        snprintf(what, sizeof what, "|v| dt = %g per step, more than half the box (%g)",
                 pl->p.dt * sqrt(r->v[0] * r->v[0] + r->v[1] * r->v[1] + r->v[2] * r->v[2]), half);
    return cp_error(pl->ctx, CLPHYS_ERR_INPUT,
                    "md mpi: step %lld: atom ID %lld at (%g, %g, %g) with velocity (%g, %g, %g): %s: the integration "
                    "diverged (dt too large for the forces)",
                    pl->step, r->id, r->x[0], r->x[1], r->x[2], r->v[0], r->v[1], r->v[2], what);
}

static clphys_status take(clphys_md_mpi *pl, md_atoms *out, const void *x, const void *v, const cl_int *im,
                          const cl_int *tg)
{
    md_rec r;
    const int why = device_to_rec(pl, x, v, im, tg, &r);
    if (why) return md_mpi_diverged(pl, &r, why);
    md_rec_put(out, out->n++, &r);
    return CLPHYS_SUCCESS;
}

/* count atoms from `first` of the device arrays (pos, vel real4; img, tag
 * int4), appended to out (positions relative to the box's lo corner,
 * wrapped); with perm non-NULL only those whose perm entry is below nown.
 * The four (five) arrays come into the page-locked staging side by side,
 * with one wait, and go straight into out: no temporaries to fault in at
 * every rebuild. */
static clphys_status download(clphys_md_mpi *pl, cl_mem pos, cl_mem vel, cl_mem img, cl_mem tag, cl_mem perm,
                              size_t first, size_t count, md_atoms *out)
{
    if (!count) return CLPHYS_SUCCESS;
    clphys_context *ctx = pl->ctx;
    const size_t rs = pl->rs, r4 = 4 * rs;
    void *raw = NULL;
    CP_TRY(md_atoms_reserve(ctx, out, out->n + count));
    CP_TRY(staging(pl, (2 * r4 + 32 + (perm ? 4 : 0)) * count, &raw));
    char *xb = raw, *vb = xb + r4 * count, *ib = vb + r4 * count, *tb = ib + 16 * count, *pb = tb + 16 * count;
    CP_TRY(cp_read_async(ctx, NULL, pos, r4 * first, r4 * count, xb, 0, NULL, NULL));
    CP_TRY(cp_read_async(ctx, NULL, vel, r4 * first, r4 * count, vb, 0, NULL, NULL));
    CP_TRY(cp_read_async(ctx, NULL, img, 16 * first, 16 * count, ib, 0, NULL, NULL));
    CP_TRY(cp_read_async(ctx, NULL, tag, 16 * first, 16 * count, tb, 0, NULL, NULL));
    if (perm) CP_TRY(cp_read_async(ctx, NULL, perm, 4 * first, 4 * count, pb, 0, NULL, NULL));
    CP_TRY(cp_finish(ctx));
    const cl_int *im = (const cl_int *)(void *)ib, *tg = (const cl_int *)(void *)tb;
    const cl_uint *pm = (const cl_uint *)(void *)pb;
    for (size_t k = 0; k < count; k++)
        if (!perm || pm[k] < pl->nown) CP_TRY(take(pl, out, xb + r4 * k, vb + r4 * k, im + 4 * k, tg + 4 * k));
    return CLPHYS_SUCCESS;
}

/* count records (md_classify's migrants, as it wrote them into mig) at
 * raw, appended to out as download appends atoms. */
static clphys_status take_records(clphys_md_mpi *pl, const char *raw, size_t count, md_atoms *out)
{
    const size_t rb = md_mpi_record_bytes(pl->rs);
    CP_TRY(md_atoms_reserve(pl->ctx, out, out->n + count));
    for (size_t k = 0; k < count; k++) {
        md_rec r;
        const int why = md_mpi_record_rec(pl, raw + rb * k, &r);
        if (why) return md_mpi_diverged(pl, &r, why);
        md_rec_put(out, out->n++, &r);
    }
    return CLPHYS_SUCCESS;
}

/* Where the migrants' records come to in the staging (classify reads the
 * counters in front of them). */
#define RECS_AT 64

/* The count migrants md_classify left as records in mig into the staging
 * at RECS_AT: one copy, one wait. */
static clphys_status download_rec(clphys_md_mpi *pl, size_t count)
{
    if (!count) return CLPHYS_SUCCESS;
    const size_t rb = md_mpi_record_bytes(pl->rs);
    char *raw = NULL;
    CP_TRY(staging(pl, RECS_AT + rb * count, (void **)&raw));
    CP_TRY(cp_read_async(pl->ctx, NULL, pl->mig, 0, rb * count, raw + RECS_AT, 0, NULL, NULL));
    return cp_finish(pl->ctx);
}

clphys_status md_mpi_download_owned(clphys_md_mpi *pl, md_atoms *out)
{
    out->n = 0;
    if (!pl->nlocal) return CLPHYS_SUCCESS;
    clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
    return download(pl, nb->pos, pl->vel, pl->img, pl->tag, nb->perm, 0, pl->nlocal, out);
}

/* The owned atoms, sorted, into the front (staying: *nstay) and back
 * (migrants: *nmig) of the unsorted arrays; with list_near (the host path's
 * ghost lists read them) the staying atoms near a cut face (*nnear) listed
 * in xref (positions) and inv (places), which are free until the sort;
 * without it *nnear is 0 and neither is written.  With borders the staying
 * atoms within r_cut + skin of the faces listed for md_mpi_borders and
 * their positions packed (md_ghost_borders_select, a[0] and a[1] of them,
 * the upper face's list in inv).  The counters and the
 * first *got migrants' records (as many as the last rebuild's twice, room
 * in mig allowing) come back in one wait, the records at RECS_AT in the
 * staging. */
static clphys_status classify(clphys_md_mpi *pl, int list_near, int borders, size_t *nstay, size_t *nmig, size_t *nnear,
                              size_t a[2], size_t *got)
{
    clphys_context *ctx = pl->ctx;
    clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
    cl_kernel k = pl->k_classify;
    /* not touched again: the counters' zeros go without a wait (the read
     * below waits for them) */
    static const cl_uint zero[4] = {0, 0, 0, 0};
    cl_uint n = (cl_uint)pl->nlocal, nown = (cl_uint)pl->nown, cap = (cl_uint)pl->cap, mig_cap = (cl_uint)pl->mig_cap;
    double lo[3], hi[3], shell = SHELL_MARGIN * pl->d.rs;
    cl_int cut[4] = {pl->d.cut[0], pl->d.cut[1], pl->d.cut[2], 0}, ln = list_near;
    for (int c = 0; c < 3; c++) lo[c] = pl->d.lo[c] - pl->d.llo[c], hi[c] = pl->d.hi[c] - pl->d.llo[c];
    float shellf = (float)shell;
    size_t g = md_global(n, 64);
    const size_t guess = pl->mig_guess < pl->mig_cap ? pl->mig_guess : pl->mig_cap, rb = md_mpi_record_bytes(pl->rs);
    char *raw;
    CP_TRY(staging(pl, RECS_AT + rb * guess, (void **)&raw));
    CP_TRY(cp_write_async(ctx, NULL, pl->counts, 0, sizeof zero, zero, 0, NULL, NULL));
    CP_TRY(CP_ARGS(ctx, k, nb->pos, pl->vel, pl->img, pl->tag, nb->perm, n, nown, MD_REAL4_ARG(pl->rs, lo),
                   MD_REAL4_ARG(pl->rs, hi), cut, CP_EITHER(pl->rs == 8, shell, shellf), ln, cap, nb->pos_in,
                   pl->vel_tmp, pl->img_tmp, pl->tag_tmp, pl->counts, pl->xref, pl->inv, pl->mig, pl->mig, mig_cap));
    CP_TRY(cp_launch(ctx, k, 1, &g, NULL, NULL));
    if (borders) CP_TRY(md_ghost_borders_select(&pl->gd, &pl->d, nb->pos_in, pl->nlocal, pl->counts, pl->inv, pl->cap));
    CP_TRY(cp_read_async(ctx, NULL, pl->counts, 0, 16, raw, 0, NULL, NULL));
    if (guess) CP_TRY(cp_read_async(ctx, NULL, pl->mig, 0, rb * guess, raw + RECS_AT, 0, NULL, NULL));
    CP_TRY(cp_finish(ctx));
    const cl_uint *c = (const cl_uint *)(const void *)raw;
    *nstay = c[0], *nmig = c[1], *nnear = borders ? 0 : c[2];
    a[0] = borders ? c[2] : 0, a[1] = borders ? c[3] : 0;
    *got = guess;
    pl->mig_guess = 2 * *nmig + 64;
    return CLPHYS_SUCCESS;
}

/* Room for n positions in near_x (kept) and n places in near_at. */
static clphys_status near_room(clphys_md_mpi *pl, size_t n)
{
    if (n <= pl->near_cap) return CLPHYS_SUCCESS;
    size_t cap = n + n / 2 + 64;
    double *x = realloc(pl->near_x, 3 * cap * sizeof *x);
    if (x) pl->near_x = x;
    cl_uint *a = realloc(pl->near_at, cap * sizeof *a);
    if (a) pl->near_at = a;
    if (!x || !a) return cp_error(pl->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: atoms near the faces (%zu)", cap);
    pl->near_cap = cap;
    return CLPHYS_SUCCESS;
}

/* The nnear staying atoms near a cut face (classify's list): positions in
 * the global frame into near_x, places into near_at; one wait. */
static clphys_status download_near(clphys_md_mpi *pl, size_t nnear)
{
    pl->nnear = 0;
    if (!nnear) return CLPHYS_SUCCESS;
    clphys_context *ctx = pl->ctx;
    const size_t rs = pl->rs, r4 = 4 * rs;
    void *raw = NULL;
    CP_TRY(near_room(pl, nnear));
    CP_TRY(staging(pl, (r4 + 4) * nnear, &raw));
    char *xb = raw, *ab = xb + r4 * nnear;
    CP_TRY(cp_read_async(ctx, NULL, pl->xref, 0, r4 * nnear, xb, 0, NULL, NULL));
    CP_TRY(cp_read_async(ctx, NULL, pl->inv, 0, 4 * nnear, ab, 0, NULL, NULL));
    CP_TRY(cp_finish(ctx));
    memcpy(pl->near_at, ab, 4 * nnear);
    for (size_t k = 0; k < nnear; k++)
        for (int c = 0; c < 3; c++) pl->near_x[3 * k + c] = real_at(xb, rs, 4 * k + c) + pl->d.llo[c];
    pl->nnear = nnear;
    return CLPHYS_SUCCESS;
}

/* The atoms the ghost lists are made from: the staying ones near a face,
 * then own (arrived, or all at the first rebuild); positions only. */
static clphys_status ghost_sources(clphys_md_mpi *pl, md_atoms *view)
{
    const size_t m = pl->nnear + pl->own.n;
    CP_TRY(near_room(pl, m));
    if (pl->own.n) memcpy(pl->near_x + 3 * pl->nnear, pl->own.x, 3 * pl->own.n * sizeof *pl->near_x);
    memset(view, 0, sizeof *view);
    view->x = pl->near_x, view->n = m;
    return CLPHYS_SUCCESS;
}

static clphys_status launch1(clphys_md_mpi *pl, cl_kernel k, size_t n)
{
    size_t g = md_global(n, 64);
    return cp_launch(pl->ctx, k, 1, &g, NULL, NULL);
}

/* The ng ghosts from local index ga on: velocity 0 with mass 1 (the
 * integrator's kick stays finite; the exchange overwrites their positions
 * before use), images and tags 0 (md_ghost_fill, one launch). */
static clphys_status fill_ghosts(clphys_md_mpi *pl, size_t ga, size_t ng)
{
    if (!ng) return CLPHYS_SUCCESS;
    cl_uint first = (cl_uint)ga, n = (cl_uint)ng;
    CP_TRY(CP_ARGS(pl->ctx, pl->k_fill, pl->vel_tmp, pl->img_tmp, pl->tag_tmp, first, n));
    return launch1(pl, pl->k_fill, ng);
}

/* v[0 .. 3] as element k of a real4 array of precision rs. */
static void store4(size_t rs, void *dst, size_t k, const double v[4])
{
    for (int c = 0; c < 4; c++) {
        if (rs == 8)
            ((double *)dst)[4 * k + c] = v[c];
        else
            ((float *)dst)[4 * k + c] = (float)v[c];
    }
}

/* Atom i of own as the device holds it: position in the local frame
 * (wrapped into the device's box, w 0), velocity with the type's mass in
 * w, image and tag (id's low and high words, type). */
static void rec_values(const clphys_md_mpi *pl, const md_rec *r, double x[4], double v[4], cl_int im[4], cl_int tg[4])
{
    for (int c = 0; c < 3; c++) {
        x[c] = md_wrap_into(r->x[c] - pl->d.llo[c], pl->d.lbox[c]);
        v[c] = r->v[c];
        im[c] = r->img[c];
    }
    x[3] = 0, v[3] = pl->type_mass[r->type], im[3] = 0;
    unsigned long long id = (unsigned long long)r->id;
    tg[0] = (cl_int)(cl_uint)(id & 0xffffffffu), tg[1] = (cl_int)(cl_uint)(id >> 32), tg[2] = r->type, tg[3] = 0;
}

static void atom_values(const clphys_md_mpi *pl, const md_atoms *own, size_t i, double x[4], double v[4], cl_int im[4],
                        cl_int tg[4])
{
    md_rec r;
    md_rec_get(own, i, &r);
    rec_values(pl, &r, x, v, im, tg);
}

/* Record k (MD_REC_*) at base from its device values. */
static void record_out(size_t rs, char *base, size_t k, const double x[4], const double v[4], const cl_int im[4],
                       const cl_int tg[4])
{
    char *b = base + md_mpi_record_bytes(rs) * k;
    store4(rs, b, 0, x), store4(rs, b + 4 * rs, 0, v);
    memcpy(b + 8 * rs, im, 16), memcpy(b + 8 * rs + 16, tg, 16);
}

/* The n records at base (the staging) to mig in one copy, scattered to
 * the unsorted arrays from local index at by one md_arrive launch; the
 * staging written without waiting (the next rebuild's download waits). */
static clphys_status arrive(clphys_md_mpi *pl, size_t at, size_t n, const char *base)
{
    clphys_context *ctx = pl->ctx;
    clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
    CP_TRY(cp_write_async(ctx, NULL, pl->mig, 0, md_mpi_record_bytes(pl->rs) * n, base, 0, NULL, NULL));
    cl_uint nn = (cl_uint)n, a = (cl_uint)at;
    CP_TRY(CP_ARGS(ctx, pl->k_arrive, pl->mig, pl->mig, nn, a, nb->pos_in, pl->vel_tmp, pl->img_tmp, pl->tag_tmp));
    return launch1(pl, pl->k_arrive, n);
}

clphys_status md_mpi_upload_recs(clphys_md_mpi *pl, size_t at, const md_rec *r, size_t n)
{
    if (!n) return CLPHYS_SUCCESS;
    char *base;
    double x[4], v[4];
    cl_int im[4], tg[4];
    CP_TRY(mig_room(pl, n));
    CP_TRY(staging(pl, md_mpi_record_bytes(pl->rs) * n, (void **)&base));
    for (size_t i = 0; i < n; i++) {
        rec_values(pl, &r[i], x, v, im, tg);
        record_out(pl->rs, base, i, x, v, im, tg);
    }
    return arrive(pl, at, n, base);
}

/* The atoms of own and then the ghosts of g (may be NULL) into the
 * unsorted arrays from local index `at` on (atom_values); for the ghosts
 * only their positions cross the bus (w MD_GHOST_W): their velocity is
 * filled with 0 and mass 1 (the integrator's kick stays finite; the
 * exchange overwrites their positions before use), their images and tags
 * with 0.  Without ghosts and with room in mig (the arrivals at a rebuild)
 * as records: one copy and one md_arrive launch instead of four copies. */
static clphys_status upload(clphys_md_mpi *pl, size_t at, const md_atoms *own, const md_ghosts *g)
{
    clphys_context *ctx = pl->ctx;
    clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
    const size_t no = own->n, ng = g ? g->nghost : 0, m = no + ng, rs = pl->rs, r4 = 4 * rs;
    if (!m) return CLPHYS_SUCCESS;
    /* written without waiting: the staging is not touched again before
     * the next rebuild's download waits */
    char *base;
    double x[4], v[4];
    cl_int im[4], tg[4];
    if (!ng && no <= pl->mig_cap) {
        CP_TRY(staging(pl, md_mpi_record_bytes(rs) * no, (void **)&base));
        for (size_t i = 0; i < no; i++) {
            atom_values(pl, own, i, x, v, im, tg);
            record_out(rs, base, i, x, v, im, tg);
        }
        return arrive(pl, at, no, base);
    }
    /* positions of all, then velocities, images and tags of the owned,
     * side by side in the staging */
    CP_TRY(staging(pl, r4 * m + (r4 + 32) * no, (void **)&base));
    char *xb = base, *vb = xb + r4 * m;
    cl_int *ib = (cl_int *)(void *)(vb + r4 * no), *tb = ib + 4 * no;
    for (size_t i = 0; i < no; i++) {
        atom_values(pl, own, i, x, v, ib + 4 * i, tb + 4 * i);
        store4(rs, xb, i, x), store4(rs, vb, i, v);
    }
    for (size_t i = 0; i < ng; i++) {
        for (int c = 0; c < 3; c++) x[c] = md_wrap_into(g->gx[3 * i + c] - pl->d.llo[c], pl->d.lbox[c]);
        x[3] = MD_GHOST_W;
        store4(rs, xb, no + i, x);
    }
    CP_TRY(cp_write_async(ctx, NULL, nb->pos_in, r4 * at, r4 * m, xb, 0, NULL, NULL));
    if (no) {
        CP_TRY(cp_write_async(ctx, NULL, pl->vel_tmp, r4 * at, r4 * no, vb, 0, NULL, NULL));
        CP_TRY(cp_write_async(ctx, NULL, pl->img_tmp, 16 * at, 16 * no, ib, 0, NULL, NULL));
        CP_TRY(cp_write_async(ctx, NULL, pl->tag_tmp, 16 * at, 16 * no, tb, 0, NULL, NULL));
    }
    return fill_ghosts(pl, at + no, ng);
}

/* Sort the n unsorted atoms by cell, build the list, and put the ghost
 * lists into sorted places on the device.  The lists' indices count the
 * ghost sources (ghost_sources) and then the ghosts: the staying atoms
 * near a face are at near_at, the others from `offset` on. */
static clphys_status sort_and_bind(clphys_md_mpi *pl, size_t offset, int dev_lists, double *nb_s)
{
    clphys_context *ctx = pl->ctx;
    const size_t n = pl->nlocal;
    if (!n) return CLPHYS_SUCCESS;
    CP_TRY(md_lj_set_count(pl->lj, n));
    clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
    cl_uint nn = (cl_uint)n;
    CP_TRY(CP_ARGS(ctx, pl->k_iota, nb->perm_in, nn));
    CP_TRY(launch1(pl, pl->k_iota, n));
    nb->untimed = !nb_s; /* no wait per launch where no time is asked for */
    /* untimed, the list's overflow count is read behind it and checked
     * after the rebuild's last wait (last_wait) */
    nb->overflow_at = nb_s ? NULL : tail_word(pl, 0);
    CP_TRY(md_neighbor_rebuild(nb, &pl->vel_tmp, &pl->vel, 1, pl->img_tmp, pl->img));
    if (nb_s) *nb_s += nb->kernel_s;
    if (pl->p.neigh_check) CP_TRY(cp_copy(ctx, nb->pos, 0, pl->xref, 0, 4 * pl->rs * n));
    /* the sorted places, the tags in sorted order, md_edge_rows' counters */
    CP_TRY(CP_ARGS(ctx, pl->k_bind, nb->perm, nn, pl->inv, pl->tag_tmp, pl->tag, pl->counts));
    CP_TRY(launch1(pl, pl->k_bind, n));
    /* the ghost lists in local indices, then both mapped to sorted places
     * in one launch */
    md_ghosts *g = &pl->g;
    if (!dev_lists) CP_TRY(md_ghost_dev_reserve(&pl->gd, g));
    size_t m = dev_lists ? 0 : g->nsend > g->nghost ? g->nsend : g->nghost;
    cl_uint *t = malloc((m ? m : 1) * sizeof *t);
    if (!t) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "md mpi: ghost indices");
    clphys_status st = CLPHYS_SUCCESS;
    cl_mem idx[2] = {pl->gd.send_idx, pl->gd.recv_idx};
    size_t cnt[2] = {g->nsend, g->nghost};
    for (int a = 0; !st && !dev_lists && a < 2; a++) {
        if (!cnt[a]) continue;
        for (size_t k = 0; k < cnt[a]; k++) {
            const size_t i = a == 0 ? g->send[k] : pl->nnear + pl->own.n + k;
            t[k] = i < pl->nnear ? pl->near_at[i] : (cl_uint)(offset + i - pl->nnear);
        }
        st = cp_write(ctx, idx[a], 0, 4 * cnt[a], t);
    }
    free(t);
    cl_uint ns = (cl_uint)cnt[0], nr = (cl_uint)cnt[1];
    if (!st && ns + nr) st = CP_ARGS(ctx, pl->k_map, pl->inv, idx[0], ns, idx[1], nr);
    if (!st && ns + nr) st = launch1(pl, pl->k_map, cnt[0] + cnt[1]);
    /* the kick-drift packs the first dimension's positions from here on */
    if (!st) st = md_ghost_prepack_map(&pl->gd, g, n, tail_word(pl, 1));
    return st;
}

/* The rebuild's last wait, for the list (its overflow count) and the
 * interior's bounds: where `ahead`, with the step's forces launched behind
 * them, so that the device computes them while the host waits and the
 * ranks agree (pl->forces_ahead; clphys_md_mpi_run then launches none). */
static clphys_status last_wait(clphys_md_mpi *pl, int ahead)
{
    if (!ahead || !pl->nlocal) return cp_finish(pl->ctx);
    cl_event ev = NULL;
    clphys_status st = cp_marker(pl->ctx, NULL, &ev);
    if (st) { /* the reads still land before the caller returns */
        cp_finish(pl->ctx);
        return st;
    }
    st = clphys_md_lj_evaluate(pl->lj, NULL);
    if (!st) pl->forces_ahead = 1;
    clphys_status w = cp_wait(pl->ctx, &ev);
    return st ? st : w;
}

/* The far rows' cells f[0] .. f[1] of an interior of cells c_lo .. c_hi
 * (interior_rows): m = ceil(r_s / h) cells in from each end, since a
 * list holds atoms less than r_s apart at the build; one more at the top
 * for the rows the cut to work-groups moved out of cell c_hi, and at the
 * bottom where the rows below the interior are one launch rounded up to
 * whole work-groups (full-csr: its last work-group computes rows of cell
 * c_lo, after the far rows moved).  Cells f[2] and f[3] hold the rows that
 * must lie outside the far ones for this to hold. */
static void far_cells(const clphys_md_mpi *pl, double h, int c_lo, int c_hi, int f[4])
{
    const int m = (int)ceil(pl->d.rs / h + 1e-3), over = pl->edge == NULL;
    f[0] = c_lo + m + over, f[1] = c_hi - m - 1, f[2] = c_lo + over, f[3] = c_hi;
}

/* The sorted rows whose lists hold no ghost, for a grid cut along z only
 * (row_lo .. row_hi - 1; empty otherwise): the cells farther than one cell
 * from those holding ghosts (local z below r_s and from r_s + thickness
 * on), a margin of 1e-3 cell against rounding.  With lanes also the rows
 * outside them that hold owned atoms (md_edge_rows into edge, nedge of
 * them; the ghosts' rows need no forces), the interior then cut to whole
 * work-groups of the LJ kernel: its launch writes no row of the list's,
 * which may be computed beside it.  Within them the far rows (far_lo ..
 * far_hi - 1, far_cells), where every row outside the interior, and every
 * row a launch for them computes, lies in the cells outside those
 * (else none).  Its reads go to the page-locked pl->tail (a small read
 * into pageable memory costs tens of microseconds more) and are waited for
 * by last_wait (*waited 1), the step's forces launched behind them where
 * `ahead`. */
static clphys_status interior_rows(clphys_md_mpi *pl, int ahead, int *waited)
{
    pl->row_lo = pl->row_hi = pl->nedge = pl->far_lo = pl->far_hi = 0;
    if (!pl->nlocal || pl->d.cut[0] || pl->d.cut[1] || !pl->d.cut[2] || !md_lj_rows_supported(pl->lj))
        return CLPHYS_SUCCESS;
    clphys_context *ctx = pl->ctx;
    clphys_md_neighbor_plan *nb = clphys_md_lj_neighbor(pl->lj);
    const size_t layer = (size_t)nb->nc[0] * nb->nc[1];
    const double h = pl->d.lbox[2] / nb->nc[2], top = pl->d.hi[2] - pl->d.llo[2];
    const int c_lo = (int)floor(pl->d.rs / h + 1e-3) + 2, c_hi = (int)ceil(top / h - 1e-3) - 3;
    if (c_hi < c_lo || c_hi >= nb->nc[2]) return CLPHYS_SUCCESS;
    int f[4];
    far_cells(pl, h, c_lo, c_hi, f);
    /* ab[1 + k]: the first row of cell at[k] (ab[0 .. 2] the edge kernel's
     * counts with lanes: the rows beside the ghosts, the interior's ends) */
    cl_uint *ab = pl->tail;
    memset(ab, 0, ROWS_READ);
    const int at[6] = {c_lo, c_hi + 1, f[0], f[1] + 1, f[2] + 1, f[3]};
    clphys_status st = CLPHYS_SUCCESS;
    if (pl->edge) { /* made for a lanes variant (md_mpi_capacity); md_bind zeroed the counters */
        cl_uint a = (cl_uint)(layer * (size_t)c_lo), b = (cl_uint)(layer * (size_t)(c_hi + 1));
        cl_uint nown = (cl_uint)pl->nown, n = (cl_uint)pl->nlocal, wg = (cl_uint)pl->lj->wg;
        size_t g = md_global(pl->nlocal, MD_EDGE_WG), l = MD_EDGE_WG;
        CP_TRY(CP_ARGS(ctx, pl->k_edge, nb->start, a, b, wg, nb->perm, nown, n, pl->edge, pl->counts));
        CP_TRY(cp_launch(ctx, pl->k_edge, 1, &g, &l, NULL));
        st = cp_read_async(ctx, NULL, pl->counts, 0, 12, ab, 0, NULL, NULL);
    }
    for (int k = pl->edge ? 2 : 0, end = f[1] >= f[0] ? 6 : 2; k < end && !st; k++)
        st = cp_read_async(ctx, NULL, nb->start, 4 * layer * (size_t)at[k], 4, &ab[1 + k], 0, NULL, NULL);
    clphys_status w = st ? cp_finish(ctx) : last_wait(pl, ahead); /* ab is read into, even after a failure */
    *waited = 1;
    CP_TRY(st ? st : w);
    if (ab[2] > ab[1]) pl->row_lo = ab[1], pl->row_hi = ab[2], pl->nedge = ab[0];
    if (pl->nedge > pl->row_lo + (pl->nlocal - pl->row_hi))
        return cp_error(ctx, CLPHYS_ERR_OVERFLOW, "md mpi: %zu rows beside the ghosts of %zu outside the interior",
                        pl->nedge, pl->row_lo + (pl->nlocal - pl->row_hi));
    /* the rows below the interior, up to a whole work-group past it where
     * one launch computes them, end within cell f[2]; those from row_hi
     * start in cell f[3] or above */
    const size_t reach = pl->row_lo + (pl->edge ? 0 : pl->lj->wg);
    if (pl->row_hi > pl->row_lo && ab[4] > ab[3] && ab[5] >= reach && ab[6] <= pl->row_hi)
        pl->far_lo = ab[3], pl->far_hi = ab[4];
    return CLPHYS_SUCCESS;
}

/* A plan for `want` atoms: the nint staying atoms through the host (the
 * data on the device is lost), back at the front. */
static clphys_status grow_plan(clphys_md_mpi *pl, size_t nint, size_t want)
{
    md_atoms in;
    memset(&in, 0, sizeof in);
    clphys_md_neighbor_plan *nb = pl->lj ? clphys_md_lj_neighbor(pl->lj) : NULL;
    clphys_status st = CLPHYS_SUCCESS;
    if (nint) st = download(pl, nb->pos_in, pl->vel_tmp, pl->img_tmp, pl->tag_tmp, NULL, 0, nint, &in);
    if (!st) st = md_mpi_capacity(pl, want);
    if (!st) st = upload(pl, 0, &in, NULL);
    if (!st) st = cp_finish(pl->ctx); /* the next upload fills the same staging */
    md_atoms_free(&in);
    return st;
}

/* The arrived atoms (own) uploaded behind the nint staying ones, and the
 * ghost lists made on the device (md_ghosts_build_dev); where a rank lacks
 * room, it grows (the plan, the exchange's buffers) and every rank makes
 * them again.  The ghosts' velocities, images and tags are left to the
 * caller (fill_ghosts).  before: this rank's status so far (a failure skips
 * the work; agreed with the ghost lists' first room check, as the growth's
 * with the next round's).  Collective; statuses agreed. */
static clphys_status ghosts_on_device(clphys_md_mpi *pl, size_t nint, clphys_status before)
{
    const size_t nown = nint + pl->own.n;
    md_ghosts *g = &pl->g;
    size_t want = nown + g->nghost + g->nghost / 4 + 64; /* the last rebuild's ghosts, and some */
    for (int round = 0; round < 8; round++) {
        clphys_status st = before;
        before = CLPHYS_SUCCESS;
        if (!st && want > pl->cap) st = grow_plan(pl, nint, want);
        if (!st) st = upload(pl, nint, &pl->own, NULL);
        /* st agreed by md_ghosts_build_dev (a failed grow may leave no plan) */
        cl_mem pos = st ? NULL : clphys_md_lj_neighbor(pl->lj)->pos_in;
        int again = 0;
        size_t need = 0;
        CP_TRY(md_ghosts_build_dev(pl->comm, &pl->gd, &pl->d, pos, nown, pl->cap, g, &again, &need, st));
        if (!again) return CLPHYS_SUCCESS;
        /* twice what was reached, for the lists still to come */
        g->nsend = 2 * g->nsend + 64, g->nghost = 2 * g->nghost + 64;
        before = md_ghost_dev_reserve(&pl->gd, g); /* agreed by the next round's lists */
        if (need + (need - nown) + 64 > want) want = need + (need - nown) + 64;
    }
    return cp_mpi_agree(
        pl->comm, pl->ctx,
        before ? before
               : cp_error(pl->ctx, CLPHYS_ERR_OVERFLOW, "md mpi: ghost lists still without room after 8 tries"));
}

/* A grid cut along one dimension: the migrants and the new ghosts in one
 * message per neighbour (md_mpi_borders), the arrivals uploaded; where some
 * rank needs it the ghost lists in rounds instead.  st: this rank's status
 * so far (agreed there).  Collective; statuses agreed, but a failure of the
 * device work enqueued at the end, left in *late for the sort's
 * agreement. */
static clphys_status borders(clphys_md_mpi *pl, size_t nint, const char *recs, size_t nmig, const size_t a[2],
                             int packed, clphys_status st, clphys_status *late, size_t *narr)
{
    int rounds = 0;
    *late = CLPHYS_SUCCESS;
    CP_TRY(md_mpi_borders(pl, nint, recs, nmig, a, packed, st, &rounds, late, narr));
    if (rounds) {
        pl->round_builds++;
        CP_TRY(ghosts_on_device(pl, nint, CLPHYS_SUCCESS));
        *narr = pl->own.n;
    } else {
        pl->merged_builds++;
        if (!*late) *late = md_mpi_upload_recs(pl, nint, pl->brin, *narr);
    }
    if (!*late) *late = fill_ghosts(pl, nint + *narr, pl->g.nghost);
    return CLPHYS_SUCCESS;
}

clphys_status md_mpi_rebuild(clphys_md_mpi *pl, int first, clphys_md_mpi_timing *tm)
{
    clphys_context *ctx = pl->ctx;
    double t0 = cp_now(), nb_s = 0;
    size_t nint = 0, nmig = 0, nnear = 0, a[2] = {0, 0}, got = 0;
    const char *recs = NULL; /* the migrants' records, in the staging */
    size_t narr = 0;         /* the atoms arrived (own's, but on the merged path) */
    clphys_status st = CLPHYS_SUCCESS;
    /* the ghost lists on the device, but at the first rebuild (every atom
     * comes from the host) and where CLPHYS_MD_HOST_GHOSTS asks for the
     * host; sent with the migrants where one dimension is cut, unless
     * CLPHYS_MD_GHOST_ROUNDS asks for the rounds */
    const int dev_lists = !first && !pl->gd.host_lists;
    const int merged = dev_lists && !pl->gd.rounds_only && pl->d.cut[0] + pl->d.cut[1] + pl->d.cut[2] == 1;
    int packed = 0;
    pl->nnear = 0;
    /* the lists change: the kick-drift packs again once they are mapped */
    pl->gd.prepack_n = 0, pl->gd.prepacked = 0;
    cp_release_event(&pl->gd.prepack_ev);
    if (!first) {
        pl->own.n = 0;
        if (pl->nlocal) st = classify(pl, !dev_lists, merged, &nint, &nmig, &nnear, a, &got);
        clphys_md_neighbor_plan *nb = pl->lj ? clphys_md_lj_neighbor(pl->lj) : NULL;
        /* the ghosts' positions packed and on their way to the host while
         * the host takes the migrants */
        packed = merged && a[0] + a[1] <= pl->gd.send_cap && a[1] <= pl->cap;
        if (!st && packed) st = md_ghost_borders_read(&pl->gd, a);
        /* the migrants as records: read with the counts where there were
         * no more than guessed, else in one more copy where mig held them
         * all, else from the back of the arrays (mig grown for the next
         * time); md_mpi_borders takes the records as they are */
        if (!st && nmig > got && nmig <= pl->mig_cap) st = download_rec(pl, nmig);
        recs = !st && nmig && nmig <= pl->mig_cap ? (const char *)pl->stage + RECS_AT : NULL;
        if (!st && nmig && recs && !merged) st = take_records(pl, recs, nmig, &pl->own);
        if (!st && nmig > pl->mig_cap)
            st = download(pl, nb->pos_in, pl->vel_tmp, pl->img_tmp, pl->tag_tmp, NULL, pl->cap - nmig, nmig, &pl->own);
        if (!st && nmig > pl->mig_cap) st = mig_room(pl, 2 * nmig);
        if (!st && !dev_lists) st = download_near(pl, nnear);
    }
    const double t_down = cp_now();
    if (merged) {
        clphys_status late;
        CP_TRY(borders(pl, nint, recs, nmig, a, packed, st, &late, &narr));
        st = late;
    } else {
        /* st (the download's and the migration's) agreed by the ghost
         * lists' first room check (md_ghosts_build_dev), or on the host
         * path by the agreement after ghost_sources */
        st = md_migrate(pl->comm, ctx, &pl->d, &pl->own, st);
        if (dev_lists) {
            CP_TRY(ghosts_on_device(pl, nint, st));
            /* enqueued only: its status agreed with the sort's below
             * (nothing collective in between) */
            st = fill_ghosts(pl, nint + pl->own.n, pl->g.nghost);
        } else {
            md_atoms src;
            if (!st) st = ghost_sources(pl, &src);
            CP_TRY(cp_mpi_agree(pl->comm, ctx, st));
            CP_TRY(md_ghosts_build(pl->comm, ctx, &pl->d, &src, &pl->g));
        }
    }
    double t1 = cp_now(), t_up = t1;
    if (!merged) narr = pl->own.n;
    const size_t n = nint + narr + pl->g.nghost;
    if (!st && !dev_lists && n > pl->cap) st = grow_plan(pl, nint, n); /* a larger plan */
    if (!st && !dev_lists) st = upload(pl, nint, &pl->own, &pl->g);
    if (!st && tm) st = cp_finish(ctx);
    t_up = cp_now();
    pl->forces_ahead = 0;
    if (!st) {
        pl->nint = nint;
        pl->nown = nint + narr;
        pl->nlocal = n;
        /* the step's forces behind the list where no time is asked for */
        const int ahead = !first && !tm;
        int waited = 0, rebuilt = 0;
        clphys_md_neighbor_plan *nb = pl->lj ? clphys_md_lj_neighbor(pl->lj) : NULL;
        st = sort_and_bind(pl, nint, dev_lists, tm ? &nb_s : NULL);
        if (!st) st = interior_rows(pl, ahead, &waited);
        if (!st && !waited) st = last_wait(pl, ahead);
        /* a row sent both ways has two places: md_ghost_pack packs it */
        if (!st && *tail_word(pl, 1)) pl->gd.prepack_n = 0;
        /* a list that overflowed was built again: the forces behind it too */
        if (!st && nb) st = md_neighbor_overflow_check(nb, &rebuilt);
        if (rebuilt) pl->forces_ahead = 0;
        if (nb) nb->overflow_at = NULL, nb->overflow_pending = 0;
    }
    if (st) pl->gd.prepack_n = 0;
    CP_TRY(cp_mpi_agree(pl->comm, ctx, st));
    CP_TRY(md_node_stage_reserve(pl->comm, &pl->gd, &pl->d));
    pl->last_build = pl->step;
    pl->rebuilds++;
    if (tm) {
        double t2 = cp_now();
        tm->download_s += t_down - t0;
        tm->migrate_s += t1 - t_down;
        tm->upload_s += t_up - t1;
        tm->neighbor_s += t2 - t_up;
        tm->neighbor_kernel_s += nb_s;
        tm->rebuilds++;
    }
    return CLPHYS_SUCCESS;
}
