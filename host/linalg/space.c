/* space.c — the vector space of the linear-algebra layer: its kernels,
 * workspace, partial-sum buffers, the page-locked memory reductions are
 * read into, and the reduction points (with the optional global sum). */
#include "linalg_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t la_partial_reals(const la_space *s) { return 4 * s->ngroups + 4; }
cl_uint la_sum_groups(const la_space *s) { return s->gsum ? 1 : (cl_uint)s->ngroups; }
cl_mem la_space_vec(const la_space *s, int which) { return which >= 0 && which < LA_NVEC ? s->v[which] : NULL; }
size_t la_space_n(const la_space *s) { return s->p.n; }
clphys_precision la_space_precision(const la_space *s) { return s->p.precision; }
la_blas la_space_blas(const la_space *s) { return s->p.blas; }
clphys_context *la_space_context(const la_space *s) { return s->ctx; }

void la_space_set_global_sum(la_space *s, la_global_sum_fn fn, void *user)
{
    s->gsum = fn;
    s->gsum_user = user;
}

void la_space_destroy(la_space *s)
{
    if (!s) return;
    cp_pinned_release(s->ctx, &s->hbuf, (void **)&s->hp);
    for (int i = 0; i < K_COUNT; i++) cp_release_kernel(&s->k[i]);
    for (int i = 0; i < LA_NVEC; i++) cp_release_mem(&s->v[i]);
    for (int i = 0; i < LA_NSLOT; i++) cp_release_mem(&s->part[i]);
    cp_release_mem(&s->state);
    cp_release_mem(&s->scratch);
    if (s->own_reads) cp_queue_release(&s->reads);
    free(s);
}

/* The kernels, for work-groups of LA_WG or, where the device or a compiled
 * kernel (registers, local memory) allows fewer, the largest power of two
 * it allows.  Without fp64 on the device the scalars are float (linalg_blas1.cl). */
static clphys_status build(la_space *s)
{
    const clphys_device_info *d = clphys_context_device(s->ctx);
    const int nk = d->fp64 ? K_COUNT : K_TO_SINGLE; /* the conversions are fp64's */
    size_t wg = LA_WG;
    /* the largest static local arrays: an acc4 and a real4 per work-item */
    while (wg > 1 && (wg > d->max_work_group_size || 64 * wg > d->local_mem_bytes)) wg /= 2;
    for (;;) {
        /* CPUs: one contiguous run of elements per work-item (linalg_blas1.cl) */
        cp_defines opts = {0};
        CP_TRY(cp_define_precision(s->ctx, &opts, s->p.precision));
        if (d->fp64) cp_define_flag(&opts, "NEED_FP64");
        cp_define_int(&opts, "BLAS_WG", wg);
        if (!d->is_gpu) cp_define_flag(&opts, "BLAS_CONTIGUOUS");
        cl_program prog;
        CP_TRY(cp_program(s->ctx, &clsrc_linalg_blas1_cl, &opts, &prog));
        size_t fit = wg;
        for (int i = 0; i < nk; i++) {
            size_t kwg;
            cl_ulong lm;
            CP_TRY(cp_kernel(s->ctx, prog, la_kernel_names[i], &s->k[i]));
            CP_TRY(cp_kernel_limits(s->ctx, s->k[i], &kwg, &lm));
            if (lm > d->local_mem_bytes) kwg = wg / 2;
            while (fit > kwg && fit > 1) fit /= 2;
        }
        if (fit == wg) break;
        for (int i = 0; i < nk; i++) cp_release_kernel(&s->k[i]);
        wg = fit;
    }
    s->wg = wg;
    s->acc_size = d->fp64 ? 8 : 4;
    return CLPHYS_SUCCESS;
}

clphys_status la_space_create(clphys_context *ctx, const la_space_params *p, la_space **out)
{
    if (!ctx || !p || !out) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "la_space_create: NULL argument");
    *out = NULL;
    if (p->n == 0 || p->n > 0xffffffffu || (p->complex_values && p->n % 2))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "linear algebra: vector length %zu (reals) out of range",
                        p->n);
    const clphys_device_info *d = clphys_context_device(ctx);
    la_space *s = calloc(1, sizeof *s);
    if (!s) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "la_space");
    s->ctx = ctx;
    s->p = *p;
    s->real_size = p->precision == CLPHYS_FP64 ? 8 : 4;
    /* enough groups to fill a GPU, one per core on a CPU (each work-item
     * loops over the vector with the grid's stride) */
    s->ngroups = d->is_gpu ? (size_t)d->compute_units * 8 : (size_t)(d->compute_units ? d->compute_units : 1);
    if (s->ngroups > LA_MAX_GROUPS) s->ngroups = LA_MAX_GROUPS;
    const size_t pbytes = la_partial_reals(s) * s->real_size;
    s->hslot = cp_round_up(pbytes, 64);
    s->hstate = LA_NSLOT * s->hslot;
    s->hwrite = s->hstate + 8 * sizeof(double);
    clphys_status st = build(s);
    for (int i = 0; i < LA_NVEC && !st; i++)
        st = cp_buffer(ctx, CL_MEM_READ_WRITE, p->n * s->real_size, NULL, &s->v[i]);
    for (int i = 0; i < LA_NSLOT && !st; i++) st = cp_buffer(ctx, CL_MEM_READ_WRITE, pbytes, NULL, &s->part[i]);
    if (!st) st = cp_buffer(ctx, CL_MEM_READ_WRITE, 8 * sizeof(double), NULL, &s->state);
    if (!st) st = cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * sizeof(double), NULL, &s->scratch);
    /* page-locked, so that an asynchronous read does not hold the host */
    const size_t hbytes = s->hwrite + LA_NSLOT * 4 * sizeof(double);
    if (!st) st = cp_pinned(ctx, hbytes, &s->hbuf, (void **)&s->hp);
    if (!st && p->reads)
        s->reads = p->reads;
    else if (!st && !(st = cp_queue_create(ctx, 0, &s->reads)))
        s->own_reads = 1;
    if (st) {
        la_space_destroy(s);
        return st;
    }
    *out = s;
    return CLPHYS_SUCCESS;
}

/* ---- reductions ----------------------------------------------------------- */

static double real_at(const la_space *s, const void *buf, size_t i)
{
    return s->real_size == 8 ? ((const double *)buf)[i] : (double)((const float *)buf)[i];
}

/* out[0..nout-1] = sums over g groups of buf (m reals per group) */
static void add_groups(const la_space *s, const void *buf, int m, size_t g, double *out)
{
    const int nout = m == 4 ? 3 : m;
    for (int j = 0; j < 3; j++) out[j] = 0;
    for (size_t i = 0; i < g; i++)
        for (int j = 0; j < nout; j++) out[j] += real_at(s, buf, (size_t)m * i + (size_t)j);
}

clphys_status la_injected(la_space *s, int where)
{
    return cp_test_failure_due(s->ctx, &s->fail, where, s->fail.rank, "linear algebra");
}

double la_real(const la_space *s, double v) { return s->real_size == 8 ? v : (double)(float)v; }

/* The global sum of n values, NaN in all of them where this process failed
 * (st): the others are not left waiting in it, and see sums that are not
 * finite.  Returns la_keep(st, the hook's status); the error text stays
 * st's, this process's own cause, not the hook's. */
static clphys_status join(la_space *s, clphys_status st, double *v, int n)
{
    if (!st) return s->gsum(s->gsum_user, v, n);
    char why[CP_ERR_LEN];
    snprintf(why, sizeof why, "%s", s->ctx->err);
    for (int i = 0; i < n; i++) v[i] = NAN;
    s->gsum(s->gsum_user, v, n);
    snprintf(s->ctx->err, sizeof s->ctx->err, "%s", why);
    return st;
}

clphys_status la_reduce_value(la_space *s, clphys_status st, double *v, int n)
{
    return s->gsum ? join(s, st, v, n) : st;
}

clphys_status la_reduce_write(la_space *s, clphys_status st, int k, const cl_mem *part, int m)
{
    if (!s->gsum || st) return st;
    st = la_injected(s, LA_FAIL_WRITE);
    const char *w = s->hp + s->hwrite;
    for (int i = 0; i < k && !st; i++)
        st = cp_write_async(s->ctx, NULL, part[i], 0, (size_t)m * s->real_size, w + (size_t)i * 4 * sizeof(double), 0,
                            NULL, NULL);
    return st ? st : cp_flush(s->ctx, NULL);
}

/* The partial sums of a reduction point, read into slots 0..k-1 of the
 * page-locked memory (*ev: the last read), added, summed over the processes
 * by the hook and put in the page-locked write area (group 0 of each
 * buffer), from which la_reduce_write writes them back without waiting:
 * the kernels that consume them follow on the same in-order queue, and the
 * area is written again only at the next point, whose read comes after
 * this write on the main queue. */
static int reduce_finish(la_space *s, clphys_status *st, int k, const cl_mem *part, int m, int write, cl_event *ev,
                         double *out)
{
    const clphys_status waited = cp_wait(s->ctx, ev);
    if (!*st) *st = la_keep(la_injected(s, LA_FAIL_WAIT), waited);
    double all[LA_NSLOT * 4];
    for (int i = 0; i < k; i++) {
        double t[3];
        add_groups(s, s->hp + (size_t)i * s->hslot, m, s->ngroups, t);
        memcpy(all + m * i, t, sizeof(double) * (size_t)(m == 4 ? 3 : m));
        if (m == 4) all[m * i + 3] = 0;
    }
    if ((*st = join(s, *st, all, k * m))) return 1;
    if (out) memcpy(out, all, sizeof(double) * (size_t)(k * m));
    char *w = s->hp + s->hwrite;
    for (int i = 0; i < k; i++) { /* group 0 holds the global sums; consumers read one group */
        char *wi = w + (size_t)i * 4 * sizeof(double);
        for (int j = 0; j < m; j++) {
            if (s->real_size == 8)
                ((double *)wi)[j] = all[m * i + j];
            else
                ((float *)wi)[j] = (float)all[m * i + j];
        }
    }
    if (write) *st = la_reduce_write(s, *st, k, part, m);
    return 0;
}

static clphys_status check_k(la_space *s, int k)
{
    return k < 1 || k > LA_NSLOT ? cp_error(s->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "la_reduce_point: %d buffers", k)
                                 : CLPHYS_SUCCESS;
}

int la_reduce(la_space *s, clphys_status *st, int k, const cl_mem *part, int m, int write, double *out)
{
    if (!s->gsum) return *st != CLPHYS_SUCCESS;
    if (!*st) *st = check_k(s, k);
    if (*st) k = k < 1 ? 1 : k > LA_NSLOT ? LA_NSLOT : k;
    /* one wait, on the last read's event, for all of them (in-order queue) */
    cl_event ev = NULL;
    for (int i = 0; i < k && !*st; i++)
        *st = cp_read_async(s->ctx, NULL, part[i], 0, (size_t)m * s->ngroups * s->real_size,
                            s->hp + (size_t)i * s->hslot, 0, NULL, i == k - 1 ? &ev : NULL);
    if (!*st) *st = cp_flush(s->ctx, NULL);
    return reduce_finish(s, st, k, part, m, write, &ev, out);
}

clphys_status la_reduce_point(la_space *s, int k, const cl_mem *part, int m)
{
    clphys_status st = CLPHYS_SUCCESS;
    la_reduce(s, &st, k, part, m, 1, NULL);
    return st;
}

clphys_status la_reduce_start(la_space *s, int k, const cl_mem *part, int m, cl_event *ev)
{
    *ev = NULL;
    if (!s->gsum) return CLPHYS_SUCCESS;
    CP_TRY(check_k(s, k));
    cl_event mark = NULL;
    CP_TRY(cp_marker(s->ctx, NULL, &mark));
    clphys_status st = cp_flush(s->ctx, NULL);
    for (int i = 0; i < k && !st; i++)
        st = cp_read_async(s->ctx, s->reads, part[i], 0, (size_t)m * s->ngroups * s->real_size,
                           s->hp + (size_t)i * s->hslot, 1, &mark, i == k - 1 ? ev : NULL);
    cp_release_event(&mark);
    if (!st) st = cp_flush(s->ctx, s->reads);
    if (st) cp_release_event(ev);
    return st;
}

int la_reduce_end(la_space *s, clphys_status *st, int k, const cl_mem *part, int m, int write, cl_event *ev,
                  double *out)
{
    if (!s->gsum) return *st != CLPHYS_SUCCESS;
    if (*st) k = k < 1 ? 1 : k > LA_NSLOT ? LA_NSLOT : k;
    return reduce_finish(s, st, k, part, m, write, ev, out);
}

clphys_status la_sums_now(la_space *s, cl_mem part, int m, double out[3])
{
    double buf[4 * LA_MAX_GROUPS + 4];
    CP_TRY(cp_read(s->ctx, part, 0, (size_t)m * s->ngroups * s->real_size, buf));
    add_groups(s, buf, m, la_sum_groups(s), out);
    return CLPHYS_SUCCESS;
}

clphys_status la_read_async(la_space *s, cl_mem part, size_t nreal, int state, cl_event *ev)
{
    cl_event mark = NULL;
    CP_TRY(cp_marker(s->ctx, NULL, &mark));
    clphys_status st = cp_flush(s->ctx, NULL);
    if (!st) st = cp_read_async(s->ctx, s->reads, part, 0, nreal * s->real_size, s->hp, 1, &mark, state ? NULL : ev);
    if (!st && state)
        st = cp_read_async(s->ctx, s->reads, s->state, 0, 8 * sizeof(double), s->hp + s->hstate, 0, NULL, ev);
    cp_release_event(&mark);
    if (!st) st = cp_flush(s->ctx, s->reads);
    return st;
}

clphys_status la_sums_after(la_space *s, cl_mem part, int m, const double *v, double out[3])
{
    if (!s->gsum) return la_sums_now(s, part, m, out);
    for (int j = 0; j < 3; j++) out[j] = j < m ? la_real(s, v[j]) : 0;
    return CLPHYS_SUCCESS;
}

void la_sum_host(const la_space *s, int m, double out[3]) { add_groups(s, s->hp, m, la_sum_groups(s), out); }
double la_host_real(const la_space *s, size_t i) { return real_at(s, s->hp, i); }
void la_host_state(const la_space *s, double out[8])
{
    for (int i = 0; i < 8; i++)
        out[i] = s->acc_size == 8 ? ((const double *)(s->hp + s->hstate))[i] : ((const float *)(s->hp + s->hstate))[i];
}

/* ---- the two-step norms -------------------------------------------------- */

clphys_status la_norm2_start(la_space *s, cl_mem x, int slot)
{
    if (s->p.blas == LA_BLAS_CLBLAST) return CLPHYS_SUCCESS; /* read at la_norms_finish */
    return la_fused_norm2_into(s, x, s->part[slot]);
}

clphys_status la_sub_start(la_space *s, cl_mem r, cl_mem b, cl_mem t, int slot)
{
    if (s->p.blas == LA_BLAS_CLBLAST) {
        CP_TRY(la_clblast_copy(s, b, r));
        return la_clblast_axpy(s, -1.0, t, r);
    }
    return la_fused_sub_norm(s, r, b, t, s->part[slot]);
}

clphys_status la_norms_finish(la_space *s, clphys_status st, int k, const cl_mem *v, double *out)
{
    if (k < 1 || k > LA_NSLOT) return cp_error(s->ctx, CLPHYS_ERR_INVALID_ARGUMENT, "la_norms_finish: %d norms", k);
    if (s->p.blas == LA_BLAS_CLBLAST) {
        for (int i = 0; i < k; i++) CP_TRY(la_clblast_dot(s, st, v[i], v[i], &out[i]));
        return CLPHYS_SUCCESS;
    }
    /* with a hook the point's values, which no read can fail on one
     * process after the sum; without one, read */
    double sums[LA_NSLOT * 2];
    if (la_reduce(s, &st, k, s->part, 2, 0, sums)) return st;
    if (s->gsum) {
        for (int i = 0; i < k; i++) out[i] = la_real(s, sums[2 * i]);
        return CLPHYS_SUCCESS;
    }
    /* all but the last read without waiting, the last one blocking: the
     * in-order queue has then finished the others too */
    for (int i = 0; i + 1 < k; i++)
        CP_TRY(cp_read_async(s->ctx, NULL, s->part[i], 0, 2 * s->ngroups * s->real_size, s->hp + (size_t)i * s->hslot,
                             0, NULL, NULL));
    double last[3];
    CP_TRY(la_sums_now(s, s->part[k - 1], 2, last));
    for (int i = 0; i + 1 < k; i++) {
        double t[3];
        add_groups(s, s->hp + (size_t)i * s->hslot, 2, la_sum_groups(s), t);
        out[i] = t[0];
    }
    out[k - 1] = last[0];
    return CLPHYS_SUCCESS;
}

clphys_status la_norm2(la_space *s, cl_mem x, double *r2)
{
    return la_norms_finish(s, la_norm2_start(s, x, 0), 1, &x, r2);
}
