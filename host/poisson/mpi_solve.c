/* mpi_solve.c — a distributed Poisson plan at work (include/clphys_poisson_mpi.h):
 * the halo exchange of a level's field (faces staged through the host,
 * MPI_Sendrecv with the four neighbours), the V-cycle over the ranks with
 * the gathered levels on rank 0, CG with global sums, the projection of
 * singular regions over all ranks. */
#include "poisson_mpi_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The failure d->fail asks for at this call of `where`, else success. */
static clphys_status poisson_mpi_injected(clphys_poisson_mpi_plan *d, int where)
{
    return cp_test_failure_due(d->ctx, &d->fail, where, d->rank, "poisson mpi");
}

static clphys_precision io_prec(const clphys_poisson_mpi_plan *d)
{
    return d->prm.precision == CLPHYS_POISSON_FP32 ? CLPHYS_FP32 : CLPHYS_FP64;
}

clphys_status poisson_mpi_rect(clphys_poisson_mpi_plan *d, int l, cl_mem m, size_t es, int write, int i0, int j0, int w,
                               int h, void *host)
{
    const poisson_mpi_box *b = &d->box[l];
    if (w <= 0 || h <= 0) return CLPHYS_SUCCESS;
    const size_t origin[3] = {(size_t)i0 * es, (size_t)j0, 0}, zero[3] = {0, 0, 0};
    const size_t region[3] = {(size_t)w * es, (size_t)h, (size_t)d->nz};
    const size_t rp = (size_t)b->nx * es, sp = rp * (size_t)b->ny, hr = (size_t)w * es, hs = hr * (size_t)h;
    cl_command_queue q = d->ctx->queue;
    if (write)
        CP_CL(d->ctx,
              clEnqueueWriteBufferRect(q, m, CL_TRUE, origin, zero, region, rp, sp, hr, hs, host, 0, NULL, NULL));
    else
        CP_CL(d->ctx,
              clEnqueueReadBufferRect(q, m, CL_TRUE, origin, zero, region, rp, sp, hr, hs, host, 0, NULL, NULL));
    return CLPHYS_SUCCESS;
}

/* the four faces of field m (level l, precision of es) into d->face, or
 * (unpack) its four rings from d->face at element off */
static clphys_status faces_kernel(clphys_poisson_mpi_plan *d, int l, cl_mem m, size_t es, int unpack, int off)
{
    const poisson_mpi_box *b = &d->box[l];
    cl_kernel k = (unpack ? d->k_unpack : d->k_pack)[es == 8];
    const int a[7] = {b->nx, b->ny, d->nz, b->h, b->bx, b->by, off};
    cl_mem dst = unpack ? m : d->face, src = unpack ? d->face : m;
    if (unpack)
        CP_TRY(CP_ARGS(d->ctx, k, dst, src, a[0], a[1], a[2], a[3], a[4], a[5], a[6]));
    else
        CP_TRY(CP_ARGS(d->ctx, k, dst, src, a[0], a[1], a[2], a[3], a[4], a[5]));
    const size_t global = cp_round_up((size_t)2 * (b->bx + b->by) * d->nz, 64);
    return cp_launch(d->ctx, k, 1, &global, NULL, NULL);
}

/* the ring of field m (level l, elements of es bytes) from the neighbours:
 * the block's four outer faces packed by one kernel into d->face (west,
 * east, south, north), read in one transfer into page-locked memory, sent to
 * the four neighbours (cp_mpi_post; the 7-point stencil needs no corners),
 * written back in one transfer and unpacked into the ring.  Tags name the
 * direction of travel, so that one rank that is both the west and the east
 * neighbour (2 ranks across x) gets each face right.  Every face is sent
 * and received even after a local failure (st, on entry, or here), and
 * every request is complete before this returns (cp_mpi_wait_exposed): the
 * neighbours are not left waiting in this exchange, nor MPI writing into
 * the staging.  Returns the first failure. */
static clphys_status exchange(clphys_poisson_mpi_plan *d, int l, cl_mem m, size_t es, clphys_status st)
{
    const poisson_mpi_box *b = &d->box[l];
    const int fx = b->by * d->nz, fy = b->bx * d->nz;
    const int off[4] = {0, fx, 2 * fx, 2 * fx + fy}, cnt[4] = {fx, fx, fy, fy}, half = 2 * fx + 2 * fy;
    if (!st) st = poisson_mpi_injected(d, POISSON_MPI_FAIL_EXCHANGE);
    if (!st) st = faces_kernel(d, l, m, es, 0, 0);
    char *stg = (char *)d->stage;
    if (!st) st = cp_read(d->ctx, d->face, 0, (size_t)half * es, stg);
    /* face f travels towards neighbour f with tag f; the same tag brings
     * the ring of side f ^ 1 from neighbour f ^ 1, whose face f it is */
    MPI_Request rq[8];
    int nrq = 0;
    clphys_status ms = CLPHYS_SUCCESS;
    const double t0 = cp_now();
    for (int f = 0; f < 4 && !ms; f++) {
        cp_mpi_slice out = {stg + (size_t)off[f] * es, cnt[f] * (int)es, MPI_BYTE};
        cp_mpi_slice in = {stg + (size_t)(half + off[f ^ 1]) * es, cnt[f ^ 1] * (int)es, MPI_BYTE};
        ms = cp_mpi_post(d->ctx, d->comm, d->nbr[f], &out, 1, d->nbr[f ^ 1], &in, 1, f, rq, &nrq);
    }
    cp_mpi_overlap none = {0, 0, 0};
    clphys_status w = cp_mpi_wait_exposed(d->ctx, nrq, rq, t0, &none);
    if (!ms) ms = w;
    CP_TRY(st ? st : ms);
    CP_TRY(cp_write(d->ctx, d->face, (size_t)half * es, (size_t)half * es, stg + (size_t)half * es));
    return faces_kernel(d, l, m, es, 1, half);
}

/* v = 0 outside the block (level 0, precision p) */
static clphys_status halo_zero(clphys_poisson_mpi_plan *d, clphys_precision p, cl_mem v)
{
    const poisson_mpi_box *b = &d->box[0];
    cl_kernel k = d->k_zero[p == CLPHYS_FP64];
    const int a[7] = {b->nx, b->ny, d->nz, b->h, b->h + b->bx, b->h, b->h + b->by};
    CP_TRY(CP_ARGS(d->ctx, k, v, a[0], a[1], a[2], a[3], a[4], a[5], a[6]));
    const size_t global[2] = {(size_t)b->nx, (size_t)b->ny};
    return cp_launch(d->ctx, k, 2, global, NULL, NULL);
}

/* x += P e on level l */
static clphys_status prolong(clphys_poisson_mpi_plan *d, int l, cl_mem x, cl_mem e)
{
    const poisson_mpi_box *b = &d->box[l], *c = &d->box[l + 1];
    cl_kernel k = d->k_prolong;
    const int a[5] = {b->nx, b->ny, d->nz, c->nx, c->ny};
    CP_TRY(CP_ARGS(d->ctx, k, x, e, d->pl->lev[l].mask, a[0], a[1], a[2], a[3], a[4]));
    const size_t global[2] = {(size_t)b->nx, (size_t)b->ny};
    return cp_launch(d->ctx, k, 2, global, NULL, NULL);
}

static void to_double(const void *src, int fp64, size_t n, double *dst)
{
    if (fp64)
        memmove(dst, src, n * sizeof(double));
    else
        for (size_t i = n; i-- > 0;) dst[i] = ((const float *)src)[i];
}

static void from_double(const double *src, int fp64, size_t n, void *dst)
{
    if (fp64)
        memmove(dst, src, n * sizeof(double));
    else
        for (size_t i = 0; i < n; i++) ((float *)dst)[i] = (float)src[i];
}

/* The gathered levels: level l's right-hand side b (precision p) onto rank
 * 0, its V-cycle of the global operator there, the correction back into
 * out's block.  A failure before (st) or in the gathering is agreed, so
 * that every rank returns it from here. */
static clphys_status gathered(clphys_poisson_mpi_plan *d, int l, cl_mem b, cl_mem out, clphys_precision p,
                              clphys_status st)
{
    const poisson_mpi_box *bx = &d->box[l];
    const size_t nb = (size_t)bx->bx * bx->by * d->nz, es = poisson_real_size(p);
    const int fp64 = p == CLPHYS_FP64;
    if (!st) st = poisson_mpi_buf(d, nb * sizeof(double));
    if (!st) st = poisson_mpi_rect(d, l, b, es, 0, bx->h, bx->h, bx->bx, bx->by, d->buf);
    if (!st) to_double(d->buf, fp64, nb, d->buf);
    const size_t ng = (size_t)(d->rank == 0 ? d->coarse->n : 0);
    if (!st && ng * sizeof(double) > d->gcap) {
        double *g = realloc(d->gbuf, ng * sizeof(double));
        if (g)
            d->gbuf = g, d->gcap = ng * sizeof(double);
        else
            st = cp_error(d->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi: the gathered level");
    }
    CP_TRY(cp_mpi_agree(d->comm, d->ctx, st));
    CP_TRY(poisson_mpi_gather_level(d, l, d->buf, d->gbuf));
    if (d->rank == 0) {
        const clphys_precision io = io_prec(d);
        st = clphys_poisson_field_write(d->coarse, io, d->cr, d->gbuf);
        if (!st) st = poisson_vcycle_run(d->coarse, d->cz, d->cr, NULL);
        if (!st) st = clphys_poisson_field_read(d->coarse, io, d->cz, d->gbuf);
    }
    CP_TRY(cp_mpi_agree(d->comm, d->ctx, st));
    CP_TRY(poisson_mpi_scatter_level(d, l, d->gbuf, d->buf));
    from_double(d->buf, fp64, nb, d->buf);
    return poisson_mpi_rect(d, l, out, es, 1, bx->h, bx->h, bx->bx, bx->by, d->buf);
}

/* One smoothing step of level l from `from` into `to` (which: POISSON_LJ
 * or POISSON_LJ_ZERO; fin: the V-cycle's last, with the last kernels; e:
 * the correction the column kernels add), unless st already failed. */
static clphys_status smooth(clphys_poisson_mpi_plan *d, int l, int which, int fin, cl_mem to, cl_mem from, cl_mem e,
                            cl_mem b, clphys_status st)
{
    if (st) return st;
    clphys_poisson_plan *pl = d->pl;
    const cl_kernel *ks = fin ? pl->k_last : l == 0 ? pl->k_fine : pl->k_coarse;
    const cl_kernel *vs = fin ? pl->v_last : l == 0 ? pl->v_fine : pl->v_coarse;
    return pl->lev[l].vec ? poisson_line_vec(pl, vs[which], l, to, from, b, d->prm.omega, NULL)
                          : poisson_line(pl, ks[which], l, to, from, e, b, d->prm.omega, NULL);
}

/* The V-cycle of host/poisson/vcycle.c (column, column-vec's smoothing
 * steps on levels whose padded width is a multiple of its lanes, or staged
 * kernels) from level l with right-hand side b; the ring exchanged before every kernel
 * that reads neighbours; the prolongation as a pass of its own, so that
 * the ring of the corrected x is exchanged too (staged: the restriction
 * makes the coarse level's first step, which reads no neighbour; on the
 * gathered level its result is overwritten).  *out: the result (z on
 * level 0).  After a failure (st, on entry, or here) the rank skips its
 * kernels but still takes part in every exchange down to the gathered
 * level, which agrees the failure, and in every exchange back up; one
 * after the gathered level is returned by this rank alone, for the caller
 * to agree. */
static clphys_status dcycle(clphys_poisson_mpi_plan *d, int l, cl_mem b, cl_mem z, cl_mem *out, clphys_status st)
{
    clphys_poisson_plan *pl = d->pl;
    poisson_level *L = &pl->lev[l];
    const clphys_precision lp = pl->lev_prec;
    const size_t es = poisson_real_size(lp);
    if (l == d->dlev) {
        *out = l == 0 ? z : L->x[0];
        return gathered(d, l, b, *out, l == 0 ? io_prec(d) : lp, st);
    }
    int cur = 0;
    /* staged: the restriction from level l - 1 made the first step here */
    if (L->vec || l == 0 || pl->line != CLPHYS_POISSON_LINE_STAGED)
        st = smooth(d, l, POISSON_LJ_ZERO, 0, L->x[0], L->x[1], L->x[1], b, st);
    for (int s = 1; s < d->prm.smooth; s++, cur ^= 1) {
        st = exchange(d, l, L->x[cur], es, st);
        st = smooth(d, l, POISSON_LJ, 0, L->x[1 - cur], L->x[cur], L->x[cur], b, st);
    }
    st = exchange(d, l, L->x[cur], es, st);
    if (!st) st = poisson_restrict_residual(pl, l, L->x[cur], b);
    cl_mem e = NULL;
    /* a failure below was agreed at the gathered level, or (on the way back
     * up) is this rank's alone: either way this level's exchanges follow on
     * every rank, so that none is left waiting in them */
    st = dcycle(d, l + 1, pl->lev[l + 1].b, NULL, &e, st);
    if (!st) st = prolong(d, l, L->x[cur], e);
    for (int s = 0; s < d->prm.smooth; s++, cur ^= 1) {
        const int fin = l == 0 && s == d->prm.smooth - 1;
        st = exchange(d, l, L->x[cur], es, st);
        st = smooth(d, l, POISSON_LJ, fin, fin ? z : L->x[1 - cur], L->x[cur], e, b, st);
    }
    *out = l == 0 ? z : L->x[cur];
    return st;
}

/* ---- the solver's pieces ---------------------------------------------------------- */

/* A reduction point's sums over the ranks (cp_mpi_global_sum: the same
 * error on every rank where a rank brought NaN, as the injection here does). */
static clphys_status global_sum(void *u, double *sums, int n)
{
    clphys_poisson_mpi_plan *d = u;
    if (poisson_mpi_injected(d, POISSON_MPI_FAIL_SUM))
        for (int i = 0; i < n; i++) sums[i] = NAN;
    return cp_mpi_global_sum(d->comm, d->ctx, sums, n, "poisson mpi");
}

/* The operator's and preconditioner's hooks agree their status, so that
 * the solver (host/linalg) stops on every rank at once, never leaving the
 * others in the next exchange or reduction. */
static clphys_status apply_p(clphys_poisson_mpi_plan *d, clphys_precision p, cl_mem out, cl_mem in, clphys_status st)
{
    if (!st) st = poisson_mpi_injected(d, POISSON_MPI_FAIL_APPLY);
    st = exchange(d, 0, in, poisson_real_size(p), st);
    if (!st) st = poisson_stencil(d->pl, p, out, in, NULL);
    if (!st) st = halo_zero(d, p, out);
    if (!st) st = halo_zero(d, p, in);
    return cp_mpi_agree(d->comm, d->ctx, st);
}
static clphys_status apply64(void *u, cl_mem out, cl_mem in) { return apply_p(u, CLPHYS_FP64, out, in, 0); }
static clphys_status apply32(void *u, cl_mem out, cl_mem in) { return apply_p(u, CLPHYS_FP32, out, in, 0); }

/* every singular region's shift from the sums of v (weighted: of w v) over
 * all ranks, divided by the region's w (by_w) or cell count; v -= shift
 * (or w shift).  Collective, also after a failure (st), which it agrees
 * before the sums; one after them is this rank's alone. */
static clphys_status project(clphys_poisson_mpi_plan *d, cl_mem v, int weighted_sum, int by_w, int weighted_shift,
                             double *shift0, clphys_status st)
{
    clphys_poisson_plan *pl = d->pl;
    const int nr = pl->nregions;
    double *sum = calloc((size_t)nr, sizeof(double)), *part = malloc(sizeof(double) * pl->vec_groups);
    if (!st && !(sum && part)) st = cp_error(d->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi projection");
    for (int r = 0; r < nr && !st; r++) {
        if ((st = poisson_region_partials(pl, v, r, weighted_sum)) ||
            (st = cp_read(d->ctx, pl->partial, 0, sizeof(double) * pl->vec_groups, part)))
            break;
        for (size_t g = 0; g < pl->vec_groups; g++) sum[r] += part[g];
    }
    /* every rank reaches the sum, or none */
    st = cp_mpi_agree(d->comm, d->ctx, st);
    if (!st) st = global_sum(d, sum, nr);
    for (int r = 0; r < nr && !st; r++) {
        const double den = by_w ? pl->region_w[r] : pl->region_n[r];
        sum[r] = den > 0 ? sum[r] / den : 0;
    }
    if (!st) st = cp_write(d->ctx, pl->shift, 0, sizeof(double) * (size_t)nr, sum);
    if (!st) st = poisson_region_apply_shift(pl, v, weighted_shift);
    if (!st && shift0) *shift0 = sum[0];
    free(sum), free(part);
    return st;
}

static clphys_status precond(void *u, cl_mem z, cl_mem r)
{
    clphys_poisson_mpi_plan *d = u;
    cl_mem out;
    clphys_status st = dcycle(d, 0, r, z, &out, CLPHYS_SUCCESS);
    if (!st) st = halo_zero(d, io_prec(d), z);
    if (d->pl->nregions && io_prec(d) == CLPHYS_FP64) st = project(d, z, 0, 0, 0, NULL, st);
    return cp_mpi_agree(d->comm, d->ctx, st);
}

clphys_status poisson_mpi_solver_setup(clphys_poisson_mpi_plan *d)
{
    clphys_poisson_plan *pl = d->pl;
    for (int p = 0; p < 2; p++) {
        cp_defines opts = {0};
        cl_program prog;
        const clphys_precision prec = p ? CLPHYS_FP64 : CLPHYS_FP32;
        CP_TRY(cp_define_precision(d->ctx, &opts, prec));
        CP_TRY(cp_program(d->ctx, &clsrc_poisson_halo_cl, &opts, &prog));
        CP_TRY(cp_kernel(d->ctx, prog, "halo_zero", &d->k_zero[p]));
        CP_TRY(cp_kernel(d->ctx, prog, "faces_pack", &d->k_pack[p]));
        CP_TRY(cp_kernel(d->ctx, prog, "faces_unpack", &d->k_unpack[p]));
        if (prec == pl->lev_prec) CP_TRY(cp_kernel(d->ctx, prog, "prolong_cols", &d->k_prolong));
    }
    /* the exchange's faces: the fine level's are the largest */
    const poisson_mpi_box *b0 = &d->box[0];
    const size_t fbytes = 4 * (size_t)(b0->bx + b0->by) * d->nz * sizeof(double);
    CP_TRY(cp_buffer(d->ctx, CL_MEM_READ_WRITE, fbytes, NULL, &d->face));
    if (cp_pinned(d->ctx, fbytes, &d->stage_mem, &d->stage) && !(d->stage = malloc(fbytes)))
        return cp_error(d->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson mpi: %zu bytes of staging", fbytes);
    const double zero = 0;
    for (int l = 0; l < pl->nlev; l++) {
        cl_mem m[3] = {pl->lev[l].x[0], pl->lev[l].x[1], pl->lev[l].b};
        for (int i = 0; i < 3; i++)
            if (m[i]) {
                size_t bytes;
                CP_TRY(cp_mem_bytes(d->ctx, m[i], &bytes));
                CP_TRY(cp_fill(d->ctx, m[i], &zero, poisson_real_size(pl->lev_prec), bytes));
            }
    }
    la_space *sp[2] = {pl->s64, pl->s32};
    for (int i = 0; i < 2; i++)
        if (sp[i]) la_space_set_global_sum(sp[i], global_sum, d);
    d->op64 = (la_operator){.space = pl->s64, .user = d, .apply = apply64};
    if (pl->s32) d->op32 = (la_operator){.space = pl->s32, .user = d, .apply = apply32};
    d->M = (la_precond){.space = pl->s32 ? pl->s32 : pl->s64, .user = d, .apply = precond};
    return cp_finish(d->ctx);
}

/* ---- the calls -------------------------------------------------------------------- */

/* a block of doubles into the interior of a level-0 field of precision p
 * (zero outside), or out of it */
static clphys_status block_in(clphys_poisson_mpi_plan *d, clphys_precision p, cl_mem m, const double *block)
{
    const poisson_mpi_box *b = &d->box[0];
    const size_t nb = (size_t)b->bx * b->by * d->nz, es = poisson_real_size(p),
                 bytes = (size_t)b->nx * b->ny * d->nz * es;
    const double zero = 0;
    CP_TRY(cp_fill(d->ctx, m, &zero, es, bytes));
    CP_TRY(poisson_mpi_buf(d, nb * sizeof(double)));
    from_double(block, p == CLPHYS_FP64, nb, d->buf);
    return poisson_mpi_rect(d, 0, m, es, 1, b->h, b->h, b->bx, b->by, d->buf);
}

static clphys_status block_out(clphys_poisson_mpi_plan *d, clphys_precision p, cl_mem m, double *block)
{
    const poisson_mpi_box *b = &d->box[0];
    const size_t nb = (size_t)b->bx * b->by * d->nz;
    CP_TRY(poisson_mpi_buf(d, nb * sizeof(double)));
    CP_TRY(poisson_mpi_rect(d, 0, m, poisson_real_size(p), 0, b->h, b->h, b->bx, b->by, d->buf));
    to_double(d->buf, p == CLPHYS_FP64, nb, block);
    return CLPHYS_SUCCESS;
}

clphys_status clphys_poisson_mpi_apply(clphys_poisson_mpi_plan *d, const double *x, double *y)
{
    if (!d) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_mpi_apply: NULL plan");
    clphys_status st =
        x && y ? CLPHYS_SUCCESS : cp_error(d->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_mpi_apply: NULL array");
    CP_TRY(cp_mpi_agree(d->comm, d->ctx, st));
    cl_mem in = la_space_vec(d->pl->s64, LA_B), out = la_space_vec(d->pl->s64, LA_X);
    st = apply_p(d, CLPHYS_FP64, out, in, block_in(d, CLPHYS_FP64, in, x));
    if (!st) st = block_out(d, CLPHYS_FP64, out, y);
    return cp_mpi_agree(d->comm, d->ctx, st);
}

clphys_status clphys_poisson_mpi_vcycle(clphys_poisson_mpi_plan *d, const double *r, double *z)
{
    if (!d) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_mpi_vcycle: NULL plan");
    clphys_status st = r && z ? CLPHYS_SUCCESS
                              : cp_error(d->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_mpi_vcycle: NULL array");
    CP_TRY(cp_mpi_agree(d->comm, d->ctx, st));
    const clphys_precision io = io_prec(d);
    la_space *s = io == CLPHYS_FP32 ? d->pl->s32 : d->pl->s64;
    cl_mem rb = la_space_vec(s, LA_B), zb = la_space_vec(s, LA_X), out;
    st = dcycle(d, 0, rb, zb, &out, block_in(d, io, rb, r));
    if (!st) st = halo_zero(d, io, zb);
    if (!st) st = block_out(d, io, zb, z);
    return cp_mpi_agree(d->comm, d->ctx, st);
}

clphys_status clphys_poisson_mpi_solve(clphys_poisson_mpi_plan *d, const double *rhs, double *x,
                                       clphys_poisson_result *res)
{
    if (!d) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_mpi_solve: NULL plan");
    clphys_status st = rhs && x && res
                           ? CLPHYS_SUCCESS
                           : cp_error(d->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_mpi_solve: NULL argument");
    CP_TRY(cp_mpi_agree(d->comm, d->ctx, st));
    memset(res, 0, sizeof *res);
    const double t0 = cp_now();
    clphys_poisson_plan *pl = d->pl;
    const poisson_mpi_box *b = &d->box[0];
    /* the first wet cell of the block whose rhs is not finite, by threads
     * beside a GPU (clphys_poisson_solve's check) */
    size_t bad = SIZE_MAX;
    const unsigned char *mask = pl->fine.mask;
    const int threads = cp_copy_threads_for(d->ctx, 1, NULL);
#pragma omp parallel for num_threads(threads) collapse(2) schedule(static) reduction(min : bad)
    for (int k = 0; k < d->nz; k++)
        for (int j = 0; j < b->by; j++) {
            const size_t q0 = (size_t)b->bx * ((size_t)j + (size_t)b->by * k),
                         c0 = (size_t)b->h + (size_t)b->nx * ((size_t)(b->h + j) + (size_t)b->ny * k);
            for (size_t i = 0; i < (size_t)b->bx; i++)
                if ((mask[c0 + i] & POISSON_WET) && !isfinite(rhs[q0 + i])) bad = q0 + i < bad ? q0 + i : bad;
        }
    if (bad != SIZE_MAX) {
        const size_t i = bad % (size_t)b->bx, j = bad / (size_t)b->bx % (size_t)b->by,
                     k = bad / ((size_t)b->bx * b->by);
        st = cp_error(d->ctx, CLPHYS_ERR_INPUT, "poisson solve: right-hand side at wet cell (i %d, j %d, k %d) is %g",
                      b->ox + (int)i, b->oy + (int)j, (int)k, rhs[bad]);
    }
    CP_TRY(cp_mpi_agree(d->comm, d->ctx, st));
    double shift0 = 0;
    st = block_in(d, CLPHYS_FP64, pl->rhs_mem, rhs);
    if (!st) st = poisson_make_rhs(pl, pl->rhs_mem, 0, 0); /* the distributed solve is not rescaled */
    if (pl->nregions) st = project(d, pl->bint, 0, 1, 1, &shift0, st);
    CP_TRY(cp_mpi_agree(d->comm, d->ctx, st));
    res->singular_regions = pl->nregions;
    res->removed_mean = d->from_geometry ? -shift0 : shift0;
    la_refine_result rr = {0};
    const la_operator *inner = d->prm.precision == CLPHYS_POISSON_FP32 ? &d->op32 : &d->op64;
    st = la_solve_refined_monitored(&d->op64, inner, &d->M, LA_CG, pl->bint, pl->x_mem, d->prm.tol, d->prm.max_iter, 0,
                                    d->prm.progress, d->prm.user, &rr);
    if (pl->nregions) st = project(d, pl->x_mem, 1, 1, 0, &shift0, st);
    if (!st) st = block_out(d, CLPHYS_FP64, pl->x_mem, x);
    st = cp_mpi_agree(d->comm, d->ctx, st);
    res->iterations = rr.iterations;
    res->restarts = rr.restarts > 1 ? rr.restarts - 1 : 0;
    res->rel_residual = rr.rel_residual;
    res->vcycles = rr.iterations + rr.restarts;
    res->seconds = cp_now() - t0;
    if (st) return st;
    if (!(rr.rel_residual <= d->prm.tol))
        return cp_error(d->ctx, CLPHYS_ERR_NOT_CONVERGED,
                        "poisson solve: true residual |b - A x|/|b| = %.3e above tol %.3e after %d iterations "
                        "(%d restarts)",
                        rr.rel_residual, d->prm.tol, rr.iterations, res->restarts);
    return CLPHYS_SUCCESS;
}
