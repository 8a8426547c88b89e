/* solve.c — one solve (include/clphys_poisson.h): b from the caller's
 * right-hand side (cl/poisson_vec.cl), the projection of singular regions,
 * CG preconditioned by the V-cycle inside defect correction on the true
 * fp64 residual (host/linalg: la_solve_refined, la_cg), and the time split
 * from the events of the V-cycles and stencils. */
#include "poisson_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- the time split ---------------------------------------------------------- */

void poisson_events_clear(clphys_poisson_plan *pl)
{
    for (int i = 0; i < 2 * pl->nev; i++) cp_release_event(&pl->ev[i]);
    pl->nev = 0;
}

void poisson_events_add(clphys_poisson_plan *pl, int kind, cl_event first, cl_event last)
{
    if (!first || !last) return;
    if (pl->nev == pl->cap_ev) {
        const int cap = pl->cap_ev ? 2 * pl->cap_ev : 256;
        cl_event *e = realloc(pl->ev, sizeof(cl_event) * 2 * (size_t)cap);
        if (e) pl->ev = e;
        int *k = e ? realloc(pl->ev_kind, sizeof(int) * (size_t)cap) : NULL;
        if (k) pl->ev_kind = k;
        if (!e || !k) return; /* the split then misses a part; the solve goes on */
        pl->cap_ev = cap;
    }
    clRetainEvent(first);
    clRetainEvent(last);
    pl->ev[2 * pl->nev] = first, pl->ev[2 * pl->nev + 1] = last;
    pl->ev_kind[pl->nev++] = kind;
}

void poisson_events_sum(clphys_poisson_plan *pl, double *vcycle_s, double *stencil_s)
{
    double sum[2] = {0, 0};
    for (int i = 0; i < pl->nev; i++) {
        double s0, e0, s1, e1;
        if (!cp_event_times(pl->ev[2 * i], &s0, &e0) && !cp_event_times(pl->ev[2 * i + 1], &s1, &e1))
            sum[pl->ev_kind[i]] += e1 - s0;
    }
    *vcycle_s = sum[0], *stencil_s = sum[1];
}

/* ---- right-hand side and projection -------------------------------------------- */

static clphys_status vec_launch(clphys_poisson_plan *pl, cl_kernel k)
{
    const size_t global = pl->n;
    return cp_launch(pl->ctx, k, 1, &global, NULL, NULL);
}

/* bint = (-1 for a geometry's f) 2^-scale w rhs on wet cells, 0 on land:
 * 2^-scale = 2^-kw 2^-kr, each factor representable */
clphys_status poisson_make_rhs(clphys_poisson_plan *pl, cl_mem rhs, int kw, int kr)
{
    const double sw = ldexp(pl->from_geometry ? -1.0 : 1.0, -kw), sr = ldexp(1.0, -kr);
    const cl_uint n = (cl_uint)pl->n;
    cl_kernel k = pl->k_rhs;
    CP_TRY(CP_ARGS(pl->ctx, k, pl->bint, rhs, pl->w_mem, sw, sr, n));
    return vec_launch(pl, k);
}

/* partial sums of v (or w v) over region r into pl->partial */
clphys_status poisson_region_partials(clphys_poisson_plan *pl, cl_mem v, int r, int weighted)
{
    clphys_context *ctx = pl->ctx;
    const cl_uint n = (cl_uint)pl->n;
    const size_t global = pl->vec_groups * POISSON_VEC_WG, local = POISSON_VEC_WG;
    cl_kernel k = pl->k_rsum;
    CP_TRY(CP_ARGS(ctx, k, pl->partial, v, pl->w_mem, pl->label_mem, r, weighted, n));
    return cp_launch(ctx, k, 1, &global, &local, NULL);
}

/* v -= shift[label] (or w shift[label]) on labelled cells */
clphys_status poisson_region_apply_shift(clphys_poisson_plan *pl, cl_mem v, int weighted)
{
    clphys_context *ctx = pl->ctx;
    const cl_uint n = (cl_uint)pl->n;
    cl_kernel k = pl->k_rshift;
    CP_TRY(CP_ARGS(ctx, k, v, pl->w_mem, pl->label_mem, pl->shift, weighted, n));
    return vec_launch(pl, k);
}

clphys_status poisson_project_z(clphys_poisson_plan *pl, cl_mem z)
{
    const cl_uint ng = (cl_uint)pl->vec_groups;
    const size_t one = POISSON_VEC_WG;
    cl_kernel k = pl->k_rmean;
    for (int r = 0; r < pl->nregions; r++) {
        const double scale = 1.0 / pl->region_n[r];
        CP_TRY(poisson_region_partials(pl, z, r, 0));
        CP_TRY(CP_ARGS(pl->ctx, k, pl->shift, pl->partial, ng, r, scale));
        CP_TRY(cp_launch(pl->ctx, k, 1, &one, &one, NULL));
    }
    return poisson_region_apply_shift(pl, z, 0);
}

/* The projection of every singular region: a right-hand side loses w times
 * its sum over sum w (is_rhs), a solution its w-weighted mean.  *shift0:
 * the shift of region 0 (the largest). */
static clphys_status project(clphys_poisson_plan *pl, cl_mem v, int is_rhs, double *shift0)
{
    double *shift = malloc(sizeof(double) * (size_t)pl->nregions), *part = malloc(sizeof(double) * pl->vec_groups);
    clphys_status st =
        shift && part ? CLPHYS_SUCCESS : cp_error(pl->ctx, CLPHYS_ERR_OUT_OF_MEMORY, "poisson projection");
    for (int r = 0; r < pl->nregions && !st; r++) {
        if ((st = poisson_region_partials(pl, v, r, !is_rhs)) ||
            (st = cp_read(pl->ctx, pl->partial, 0, sizeof(double) * pl->vec_groups, part)))
            break;
        double sum = 0;
        for (size_t g = 0; g < pl->vec_groups; g++) sum += part[g];
        shift[r] = pl->region_w[r] > 0 ? sum / pl->region_w[r] : 0;
    }
    if (!st) st = cp_write(pl->ctx, pl->shift, 0, sizeof(double) * (size_t)pl->nregions, shift);
    if (!st) st = poisson_region_apply_shift(pl, v, is_rhs);
    if (!st) *shift0 = shift[0];
    free(shift), free(part);
    return st;
}

/* ---- the solve ---------------------------------------------------------------- */

/* The system solved is A (2^-(kw + kr) x) = 2^-(kw + kr) b: the solution
 * comes back scaled by 2^-(kw + kr) (clphys_poisson_solve undoes it). */
static clphys_status solve_device(clphys_poisson_plan *pl, cl_mem rhs, cl_mem x, int kw, int kr,
                                  clphys_poisson_result *res)
{
    const clphys_poisson_params *p = &pl->prm;
    poisson_events_clear(pl);
    double shift0 = 0;
    clphys_status st = poisson_make_rhs(pl, rhs, kw, kr);
    if (!st && pl->nregions) st = project(pl, pl->bint, 1, &shift0);
    if (st) return st;
    res->singular_regions = pl->nregions;
    /* of f = -b / V, or of b */
    res->removed_mean = ldexp(pl->from_geometry ? -shift0 : shift0, kw + kr);
    pl->timing = !p->no_time_split;
    const double t0 = cp_now();
    la_refine_result rr = {0};
    const la_operator *inner = p->precision == CLPHYS_POISSON_FP32 ? &pl->op32 : &pl->op64;
    st = la_solve_refined_monitored(&pl->op64, inner, &pl->M, LA_CG, pl->bint, x, p->tol, p->max_iter, 0, p->progress,
                                    p->user, &rr);
    if (!st && pl->nregions) st = project(pl, x, 0, &shift0);
    if (!st) st = cp_finish(pl->ctx);
    const double wall = cp_now() - t0;
    pl->timing = 0;
    if (!st) poisson_events_sum(pl, &res->vcycle_s, &res->stencil_s);
    poisson_events_clear(pl);
    if (!p->no_time_split) res->other_s = fmax(wall - res->vcycle_s - res->stencil_s, 0);
    res->iterations = rr.iterations;
    res->restarts = rr.restarts > 1 ? rr.restarts - 1 : 0;
    res->rel_residual = rr.rel_residual;
    res->vcycles = rr.iterations + rr.restarts;
    if (st) return st;
    if (!(rr.rel_residual <= p->tol))
        return cp_error(pl->ctx, CLPHYS_ERR_NOT_CONVERGED,
                        "poisson solve: true residual |b - A x|/|b| = %.3e above tol %.3e after %d iterations "
                        "(%d restarts)",
                        rr.rel_residual, p->tol, rr.iterations, res->restarts);
    return CLPHYS_SUCCESS;
}

clphys_status clphys_poisson_solve(clphys_poisson_plan *pl, const double *rhs, double *x, clphys_poisson_result *res)
{
    if (!pl || !rhs || !x || !res)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_poisson_solve: NULL argument");
    memset(res, 0, sizeof *res);
    const double t0 = cp_now();
    const size_t plane = (size_t)pl->nx * pl->ny;
#define CELL(c) (int)((c) % (size_t)pl->nx), (int)((c) / (size_t)pl->nx % (size_t)pl->ny), (int)((c) / plane)
    /* b = -V f is formed scaled by powers of two, 2^-kw 2^-kr, when its
     * size, about 2^(kw + kr) (the binary exponents of the largest w and
     * |rhs| over wet cells), lies beyond 2^+-48: then neither w rhs nor the
     * sums of squares of the CG (fp32 in its inner solves) overflow or lose
     * digits to underflow, and x is scaled back (a power of two changes no
     * rounding).  Inside that band nothing is scaled: no pass over x. */
    double big = 0, wmax = 0;
    size_t bad = SIZE_MAX; /* the first wet cell whose rhs is not finite */
    const unsigned char *mask = pl->fine.mask;
    const double *w = pl->w;
    /* by threads beside a GPU: this pass over 17 bytes a cell and the
     * copies through page-locked chunks took 0.086 s at 1024 x 1024 x 64,
     * against 0.42 s by one thread and the driver's pageable copies
     * (bench/poisson-notes.md, section 13) */
    const int threads = cp_copy_threads_for(pl->ctx, 1, NULL);
#pragma omp parallel for num_threads(threads) schedule(static) reduction(max : big, wmax) reduction(min : bad)
    for (size_t c = 0; c < pl->n; c++) {
        if (!(mask[c] & POISSON_WET)) continue;
        if (!isfinite(rhs[c])) {
            bad = c < bad ? c : bad;
            continue;
        }
        big = fmax(big, fabs(rhs[c])), wmax = fmax(wmax, w[c]);
    }
    if (bad != SIZE_MAX)
        return cp_error(pl->ctx, CLPHYS_ERR_INPUT,
                        "poisson solve: right-hand side at wet cell (i %d, j %d, k %d) is %g", CELL(bad), rhs[bad]);
    int kw = wmax > 0 ? ilogb(wmax) : 0, kr = big > 0 ? ilogb(big) : 0;
    kw = kw < -1000 ? -1000 : kw > 1000 ? 1000 : kw;
    kr = kr < -1000 ? -1000 : kr > 1000 ? 1000 : kr;
    if (abs(kw + kr) <= 48) kw = kr = 0;
    clphys_status st = cp_write(pl->ctx, pl->rhs_mem, 0, pl->n * sizeof(double), rhs);
    res->transfer_s = cp_now() - t0;
    if (!st) st = solve_device(pl, pl->rhs_mem, pl->x_mem, kw, kr, res);
    if (!st || st == CLPHYS_ERR_NOT_CONVERGED) {
        const double t1 = cp_now();
        clphys_status rs = cp_read(pl->ctx, pl->x_mem, 0, pl->n * sizeof(double), x);
        res->transfer_s += cp_now() - t1;
        if (rs) st = rs;
    }
    for (size_t c = 0; (kw || kr) && (!st || st == CLPHYS_ERR_NOT_CONVERGED) && c < pl->n; c++) {
        x[c] = ldexp(x[c], kw + kr);
        if (!isfinite(x[c]) && (pl->fine.mask[c] & POISSON_WET))
            st = cp_error(pl->ctx, CLPHYS_ERR_INPUT,
                          "poisson solve: the solution at wet cell (i %d, j %d, k %d) exceeds the range of doubles: "
                          "the right-hand side, up to %g, is too large for this geometry",
                          CELL(c), big);
    }
#undef CELL
    res->seconds = cp_now() - t0;
    return st;
}

clphys_status clphys_poisson_solve_mem(clphys_poisson_plan *pl, cl_mem rhs, cl_mem x, clphys_poisson_result *res)
{
    if (!pl || !rhs || !x || !res || rhs == x)
        return cp_error(pl ? pl->ctx : NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_poisson_solve_mem: NULL argument or rhs == x");
    memset(res, 0, sizeof *res);
    const double t0 = cp_now();
    size_t b1 = 0, b2 = 0;
    CP_TRY(cp_mem_bytes(pl->ctx, rhs, &b1));
    CP_TRY(cp_mem_bytes(pl->ctx, x, &b2));
    if (b1 < pl->n * sizeof(double) || b2 < pl->n * sizeof(double))
        return cp_error(pl->ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_poisson_solve_mem: rhs (%zu bytes) or x (%zu bytes) smaller than n = %zu doubles", b1,
                        b2, pl->n);
    clphys_status st = solve_device(pl, rhs, x, 0, 0, res);
    res->seconds = cp_now() - t0;
    return st;
}
