/* gravity.c — the direct-sum gravity plan: kernel choice (tiled on GPUs,
 * vector on CPUs), build options, device buffers for host-array calls, and
 * input checks.  Layouts and formulas: include/clphys_nbody.h. */
#include "nbody_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VEC 16 /* j-chunk of the vector kernel (real16_t) */

struct clphys_nbody_gravity_plan {
    clphys_context *ctx;
    clphys_nbody_gravity_params p;
    int tiled; /* 1: gravity_tiled, 0: gravity_vector */
    size_t wg; /* tiled: work-group size              */
    int ipw;   /* tiled: i per work-item              */
    size_t rs; /* sizeof(real)                        */
    char variant[64], base_variant[64];
    cl_kernel k, k_soa, k_red;
    /* host-array path and the vector kernel's SoA copy, grown on demand */
    cl_mem xi, xj, out, soa[4], part;
    size_t cap_i, cap_j, cap_out, cap_soa, cap_part;
    void *stage;
    size_t cap_stage;
    clphys_tune_source source; /* of the kernel shape (nbody_gravity_choose) */
};

static clphys_status create_plan(clphys_context *ctx, const clphys_nbody_gravity_params *p,
                                 clphys_nbody_gravity_plan **plan)
{
    if (!(p->eps >= 0) || !isfinite(p->eps) || !isfinite(p->G))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "gravity plan: eps = %g must be finite and >= 0, G = %g finite", p->eps, p->G);
    if (p->i_per_item != 0 && p->i_per_item != 1 && p->i_per_item != 2 && p->i_per_item != 4 && p->i_per_item != 8)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "gravity plan: i_per_item %d is not 1, 2, 4 or 8",
                        p->i_per_item);
    if (p->j_split < 0 || p->j_split > 64)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "gravity plan: j_split %d is not in 0..64", p->j_split);
    if (p->fast_rsqrt64 < -1 || p->fast_rsqrt64 > 2 || p->flush_denormals < -1 || p->flush_denormals > 2)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "gravity plan: fast_rsqrt64 %d (-1..2) or flush_denormals %d "
                        "(-1..2) out of range",
                        p->fast_rsqrt64, p->flush_denormals);
    if (p->n_hint > INT_MAX)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "gravity plan: n_hint %zu above 2^31 - 1", p->n_hint);
    const clphys_device_info *dev = clphys_context_device(ctx);
    int tiled = p->variant == CLPHYS_NBODY_GRAVITY_TILED || (p->variant == CLPHYS_NBODY_GRAVITY_AUTO && !dev->is_cpu);
    size_t wg = p->work_group > 0 ? (size_t)p->work_group : 256;
    if (tiled) {
        if (p->work_group <= 0) {
            while (wg > dev->max_work_group_size) wg /= 2;
        }
        size_t lm = wg * 4 * (p->precision == CLPHYS_FP64 ? 8 : 4);
        if (wg < 1 || wg > dev->max_work_group_size || lm > dev->local_mem_bytes)
            return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                            "gravity plan: work group %zu exceeds the device (max %zu, local memory %llu bytes)", wg,
                            dev->max_work_group_size, (unsigned long long)dev->local_mem_bytes);
    }
    /* GPU defaults from the H100 sweep of 2026-11-23 (inline-PTX rsqrt):
     * fp32 i8-w256-u16 1.99 T interactions/s at N = 2^18 and 2.02 T at 2^20
     * (i4: 1.96 / 2.00 T); fp64 series i1-w256-u32 0.91 T at 2^18 */
    /* AMD and Intel GPUs, from the registers their compilers report
     * (docs/gpu-targets.md; not timed, no such GPU is lent here): fp64
     * unroll 32 takes 346 VGPRs on gfx90a (1 wave per SIMD) and spills on
     * gfx1030, unroll 8 takes 106 (4 and 9 waves); fp32 with 8 i per
     * work-item spills on pvc even with 256 registers, 2 do not spill with
     * 128.  A tuning (clphys_nbody_gravity_tune) overrides these as it does the
     * H100's. */
    const int amd = dev->is_gpu && cp_device_matches(dev, "amd"),
              intel = dev->is_gpu && cp_device_matches(dev, "intel");
    int ipw = p->i_per_item ? p->i_per_item : (dev->is_gpu ? (p->precision == CLPHYS_FP32 ? (intel ? 2 : 8) : 1) : 1);

    cp_defines opts = {0};
    CP_TRY(cp_define_precision(ctx, &opts, p->precision));
    if (p->unroll < 0 || (tiled && (size_t)p->unroll > wg))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "gravity plan: unroll %d must be in 0..%zu", p->unroll, wg);
    const int fp32 = p->precision == CLPHYS_FP32;
    const int ugpu = fp32 ? 16 : amd || intel ? 8 : 32;
    const int unroll = p->unroll ? p->unroll : dev->is_gpu ? ((int)wg >= ugpu ? ugpu : (int)wg) : (wg >= 8 ? 8 : 1);
    const int ftz = fp32 && (p->flush_denormals > 0 || (p->flush_denormals == 0 && dev->is_gpu));
    const int fast = fp32 && p->flush_denormals == 2;
    /* inline PTX only in the tiled kernel; NVIDIA's OpenCL compiler accepts asm() */
    const int ptx =
        tiled && (p->inline_ptx > 0 || (p->inline_ptx == 0 && dev->is_gpu && strstr(dev->platform, "NVIDIA")));
    const int r64 = fp32 || !tiled ? -1 : p->fast_rsqrt64 ? p->fast_rsqrt64 : (ptx ? 2 : -1);
    if (p->eps == 0) cp_define_int(&opts, "EPS_ZERO", 1);
    if (p->potential) cp_define_int(&opts, "POTENTIAL", 1);
    if (ftz) cp_define_option(&opts, "-cl-denorms-are-zero");
    if (fast) cp_define_option(&opts, "-cl-fast-relaxed-math");
    if (r64 == 1) cp_define_int(&opts, "RSQRT_NEWTON", 1);
    if (r64 == 2) cp_define_int(&opts, "R3_SERIES", 1);
    if (tiled) {
        cp_define_int(&opts, "WG", wg);
        cp_define_int(&opts, "IPW", ipw);
        cp_define_int(&opts, "UNROLL", unroll);
        if (dev->is_gpu && fp32) cp_define_int(&opts, "NATIVE_RSQRT", 1);
        if (ptx && (fp32 || r64 == 2)) cp_define_int(&opts, "PTX_RSQRT", 1);
    }

    clphys_nbody_gravity_plan *pl = calloc(1, sizeof *pl);
    if (!pl) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "gravity plan");
    pl->ctx = ctx;
    pl->p = *p;
    if (pl->p.G == 0) pl->p.G = 1; /* a zeroed struct means the defaults: N-body units */
    pl->tiled = tiled;
    pl->wg = wg;
    pl->ipw = ipw;
    pl->rs = p->precision == CLPHYS_FP64 ? 8 : 4;
    if (tiled)
        snprintf(pl->variant, sizeof pl->variant, "tiled-local-i%d-w%zu-u%d%s%s%s%s", ipw, wg, unroll,
                 ftz ? "-ftz" : "", fast ? "-fast" : "",
                 r64 == 1   ? "-nr"
                 : r64 == 2 ? "-s2"
                            : "",
                 ptx && (fp32 || r64 == 2) ? "-ptx" : "");
    else
        snprintf(pl->variant, sizeof pl->variant, "vector-%d%s%s", VEC, ftz ? "-ftz" : "", fast ? "-fast" : "");
    cl_program prog;
    clphys_status st = cp_program(ctx, &clsrc_nbody_gravity_cl, &opts, &prog);
    if (!st) st = cp_kernel(ctx, prog, tiled ? "gravity_tiled" : "gravity_vector", &pl->k);
    if (!st && !tiled) st = cp_kernel(ctx, prog, "gravity_soa", &pl->k_soa);
    if (!st && tiled) st = cp_kernel(ctx, prog, "gravity_reduce", &pl->k_red);
    if (!st && tiled) st = cp_check_work_group(ctx, pl->k, "gravity_tiled", wg); /* WG is compiled in */
    snprintf(pl->base_variant, sizeof pl->base_variant, "%s", pl->variant);
    if (st) {
        clphys_nbody_gravity_plan_destroy(pl);
        return st;
    }
    *plan = pl;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_nbody_gravity_plan_create(clphys_context *ctx, const clphys_nbody_gravity_params *p,
                                               clphys_nbody_gravity_plan **plan)
{
    if (!ctx || !p || !plan) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "gravity plan: NULL argument");
    *plan = NULL;
    clphys_nbody_gravity_params pin;
    CP_TRY(CP_PARAMS_IN(ctx, clphys_nbody_gravity_params, p, n_hint, &pin));
    p = &pin;
    /* the kernel shape left to auto comes from the tuning cache when it has
     * one for this device, precision and size class; a cached shape this
     * device cannot build or run falls back to the heuristic */
    clphys_tune_source source;
    clphys_status st = nbody_gravity_choose(ctx, p, create_plan, plan, &source);
    if (!st) (*plan)->source = source;
    return st;
}

clphys_tune_source clphys_nbody_gravity_plan_tune_source(const clphys_nbody_gravity_plan *pl)
{
    return pl ? pl->source : CLPHYS_TUNE_HEURISTIC;
}

int clphys_nbody_gravity_plan_tuned(const clphys_nbody_gravity_plan *pl)
{
    return pl && pl->source == CLPHYS_TUNE_CACHE;
}

void clphys_nbody_gravity_plan_destroy(clphys_nbody_gravity_plan *pl)
{
    if (!pl) return;
    cp_release_kernel(&pl->k);
    cp_release_kernel(&pl->k_soa);
    cp_release_kernel(&pl->k_red);
    cp_release_mem(&pl->part);
    cp_release_mem(&pl->xi);
    cp_release_mem(&pl->xj);
    cp_release_mem(&pl->out);
    for (int c = 0; c < 4; c++) cp_release_mem(&pl->soa[c]);
    free(pl->stage);
    free(pl);
}

const char *clphys_nbody_gravity_plan_variant(const clphys_nbody_gravity_plan *pl) { return pl ? pl->variant : ""; }

/* Make *m hold at least bytes (contents not kept). */
static clphys_status ensure(clphys_context *ctx, cl_mem *m, size_t *cap, size_t bytes)
{
    if (*m && *cap >= bytes) return CLPHYS_SUCCESS;
    cp_release_mem(m);
    *cap = 0;
    CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, m));
    *cap = bytes;
    return CLPHYS_SUCCESS;
}

/* Number of j ranges S for a tiled call of `groups` i-work-groups: 1 unless
 * asked (p.j_split > 1) or, on GPUs with j_split = 0, when there are fewer
 * than 4 work-groups per compute unit or the last wave of work-groups would
 * leave compute units idle; then the S in 2..64 with the fewest idle slots
 * (e.g. 128 groups on 132 CUs: S = 33, 4224 = 32 x 132), keeping >= 4 tiles
 * per range and the scratch within max_alloc / 2. */
static int choose_split(const clphys_nbody_gravity_plan *pl, size_t groups, size_t ntiles, size_t ni)
{
    const clphys_device_info *dev = clphys_context_device(pl->ctx);
    const size_t cu = dev->compute_units ? dev->compute_units : 1;
    if (pl->p.j_split == 1 || (pl->p.j_split == 0 && !dev->is_gpu) || groups == 0) return 1;
    int best = 1;
    double best_loss = 1e300;
    for (int s = 1; s <= 64; s++) {
        if (pl->p.j_split > 1 && s != pl->p.j_split) continue;
        if (s > 1 && (ntiles < 4 * (size_t)s || (size_t)s * ni * 4 * pl->rs > dev->max_alloc_bytes / 2)) break;
        size_t total = groups * (size_t)s, waves = (total + cu - 1) / cu;
        double loss = 1 - (double)total / (double)(waves * cu); /* idle fraction of the last wave's slots */
        if (total < 4 * cu) loss += 1; /* first of all, several work-groups per CU to hide latency */
        if (pl->p.j_split > 1 || loss < best_loss - 1e-9) best = s, best_loss = loss;
        if (loss < 0.005 && pl->p.j_split == 0) break;
    }
    return best;
}

/* The launches of one call, ni >= 1 (see nbody_gravity_launch). */
static clphys_status launch_all(clphys_nbody_gravity_plan *pl, cl_mem xi, int ni, cl_mem xj, int nj, int i_in_j,
                                cl_mem out, int accumulate, cl_event *ev)
{
    clphys_context *ctx = pl->ctx;
    const double eps = pl->p.eps;
    const int self = i_in_j && eps > 0 && pl->p.potential;
    union {
        float f;
        double d;
    } G, eps2, selfc;
    const size_t rs = pl->rs;
    if (rs == 4)
        G.f = (float)pl->p.G, eps2.f = (float)(eps * eps), selfc.f = self ? (float)(pl->p.G / eps) : 0.0f;
    else
        G.d = pl->p.G, eps2.d = eps * eps, selfc.d = self ? pl->p.G / eps : 0.0;
    cl_kernel k = pl->k;
    if (pl->tiled) {
        size_t per = pl->wg * (size_t)pl->ipw;
        size_t groups = ((size_t)ni + per - 1) / per, ntiles = ((size_t)nj + pl->wg - 1) / pl->wg;
        int ns = choose_split(pl, groups, ntiles, (size_t)ni);
        size_t global[2] = {groups * pl->wg, (size_t)ns}, local[2] = {pl->wg, 1};
        if (ns > 1) CP_TRY(ensure(ctx, &pl->part, &pl->cap_part, (size_t)ns * ni * 4 * rs));
        snprintf(pl->variant, sizeof pl->variant, "%s", pl->base_variant);
        if (ns > 1) {
            size_t l = strlen(pl->variant);
            snprintf(pl->variant + l, sizeof pl->variant - l, "-j%d", ns);
        }
        cl_mem part = ns > 1 ? pl->part : out; /* unused when ns = 1 */
        CP_TRY(CP_ARGS(ctx, k, xi, ni, xj, nj, out, CP_SIZED(rs, &G), CP_SIZED(rs, &eps2), CP_SIZED(rs, &selfc),
                       accumulate, part));
        if (ns == 1) return cp_launch_ev(ctx, k, 2, global, local, &ev[0]);
        CP_TRY(cp_launch_ev(ctx, k, 2, global, local, &ev[0]));
        cl_kernel r = pl->k_red;
        size_t gr = cp_round_up((size_t)ni, 64);
        CP_TRY(CP_ARGS(ctx, r, pl->part, ni, ns, xi, out, CP_SIZED(rs, &G), CP_SIZED(rs, &selfc), accumulate));
        return cp_launch_ev(ctx, r, 1, &gr, NULL, &ev[1]);
    }
    /* vector kernel: SoA copy of j padded to a multiple of VEC */
    size_t npad = cp_round_up((size_t)(nj > 0 ? nj : 1), VEC);
    if (pl->cap_soa < npad * rs) {
        pl->cap_soa = 0;
        for (int c = 0; c < 4; c++) {
            cp_release_mem(&pl->soa[c]);
            CP_TRY(cp_buffer(ctx, CL_MEM_READ_WRITE, npad * rs, NULL, &pl->soa[c]));
        }
        pl->cap_soa = npad * rs;
    }
    CP_TRY(CP_ARGS(ctx, pl->k_soa, xj, nj, pl->soa[0], pl->soa[1], pl->soa[2], pl->soa[3]));
    CP_TRY(cp_launch_ev(ctx, pl->k_soa, 1, &npad, NULL, &ev[0]));
    int nchunks = (int)(npad / VEC);
    size_t global = (size_t)ni;
    CP_TRY(CP_ARGS(ctx, k, xi, ni, pl->soa[0], pl->soa[1], pl->soa[2], pl->soa[3], nchunks, out, CP_SIZED(rs, &G),
                   CP_SIZED(rs, &eps2), CP_SIZED(rs, &selfc), accumulate));
    return cp_launch_ev(ctx, k, 1, &global, NULL, &ev[1]);
}

/* Launch the kernel(s) of one call (tiled: + gravity_reduce when the j range
 * is split; vector: gravity_soa first); ev[0] and ev[1] get the first and the
 * last launch's events (ev[1] NULL when there was one), or ev is NULL. */
clphys_status nbody_gravity_launch(clphys_nbody_gravity_plan *pl, cl_mem xi, size_t n_i, cl_mem xj, size_t n_j,
                                   int i_in_j, cl_mem out, int accumulate, cl_event *ev)
{
    if (!pl) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "gravity compute: NULL plan");
    clphys_context *ctx = pl->ctx;
    cl_event scratch[2];
    if (!ev) ev = scratch;
    ev[0] = ev[1] = NULL;
    if (!xi || !xj || !out) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "gravity compute: NULL buffer");
    if (n_i > INT_MAX || n_j > INT_MAX)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "gravity compute: ni %zu or nj %zu above 2^31 - 1", n_i, n_j);
    const int ni = (int)n_i, nj = (int)n_j; /* the kernels' argument type */
    if (ni == 0) return CLPHYS_SUCCESS;
    clphys_status st = launch_all(pl, xi, ni, xj, nj, i_in_j, out, accumulate, ev);
    if (ev == scratch) cp_release_event(&ev[0]), cp_release_event(&ev[1]);
    return st;
}

clphys_status clphys_nbody_gravity_compute_cl(clphys_nbody_gravity_plan *pl, cl_mem xi, size_t n_i, cl_mem xj,
                                              size_t n_j, int i_in_j, cl_mem out, int accumulate, double *kernel_s)
{
    if (kernel_s) *kernel_s = 0;
    cl_event ev[2] = {NULL, NULL};
    const double t0 = cp_now();
    clphys_status st = nbody_gravity_launch(pl, xi, n_i, xj, n_j, i_in_j, out, accumulate, kernel_s ? ev : NULL);
    if (!st && kernel_s && ev[0]) {
        st = cp_wait_all(pl->ctx, 2, ev);
        double s = 0;
        for (int k = 0; k < 2 && !st; k++) {
            double t = ev[k] ? cp_event_seconds(ev[k]) : 0;
            if (t < 0) { /* no profiling (an adopted queue): host wall time */
                s = cp_now() - t0;
                break;
            }
            s += t;
        }
        *kernel_s = s;
    }
    cp_release_event(&ev[0]);
    cp_release_event(&ev[1]);
    return st;
}

/* Coincident-point check by sorting indices on (x, y, z). */
static const double *g_sort_x;
static int cmp_pos(const void *a, const void *b)
{
    const double *p = g_sort_x + 4 * (size_t) * (const int *)a, *q = g_sort_x + 4 * (size_t) * (const int *)b;
    for (int c = 0; c < 3; c++)
        if (p[c] != q[c]) return p[c] < q[c] ? -1 : 1;
    return 0;
}

/* Finite coordinates and masses, no negative mass; with coincident != 0 also
 * no two particles of x at one point and, when xi is given, no i-particle at
 * the point of a j-particle (sorted j indices + binary search). */
clphys_status nbody_gravity_check_positions(clphys_context *ctx, const char *set, int n, const double *x,
                                            int coincident, int ni, const double *xi)
{
    for (int i = 0; i < n; i++) {
        const double *q = x + 4 * (size_t)i;
        if (!isfinite(q[0]) || !isfinite(q[1]) || !isfinite(q[2]) || !isfinite(q[3]))
            return cp_error(ctx, CLPHYS_ERR_INPUT,
                            "gravity: %s particle %d has a non-finite coordinate or mass "
                            "(%g %g %g m %g)",
                            set, i, q[0], q[1], q[2], q[3]);
        if (q[3] < 0)
            return cp_error(ctx, CLPHYS_ERR_INPUT, "gravity: %s particle %d has negative mass %g", set, i, q[3]);
    }
    if (!coincident || n < 1) return CLPHYS_SUCCESS;
    int *idx = malloc((size_t)n * sizeof *idx);
    if (!idx) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "gravity: coincidence check");
    for (int i = 0; i < n; i++) idx[i] = i;
    g_sort_x = x;
    qsort(idx, (size_t)n, sizeof *idx, cmp_pos);
    clphys_status st = CLPHYS_SUCCESS;
    for (int i = 1; i < n && !st; i++)
        if (!cmp_pos(&idx[i - 1], &idx[i])) {
            int a = idx[i - 1] < idx[i] ? idx[i - 1] : idx[i], b = idx[i - 1] ^ idx[i] ^ a;
            st = cp_error(ctx, CLPHYS_ERR_INPUT,
                          "gravity: eps = 0 and %s particles %d and %d are at the same point: the force is infinite",
                          set, a, b);
        }
    for (int i = 0; i < ni && !st; i++) {
        const double *q = xi + 4 * (size_t)i;
        int lo = 0, hi = n - 1;
        while (lo <= hi) {
            int mid = (lo + hi) / 2, c = 0;
            const double *r = x + 4 * (size_t)idx[mid];
            for (int k = 0; k < 3 && !c; k++) c = q[k] < r[k] ? -1 : q[k] > r[k];
            if (!c) {
                st = cp_error(ctx, CLPHYS_ERR_INPUT,
                              "gravity: eps = 0 and i-particle %d is at the same point as j-particle %d", i, idx[mid]);
                break;
            }
            if (c < 0)
                hi = mid - 1;
            else
                lo = mid + 1;
        }
    }
    free(idx);
    return st;
}

/* Copy (x, y, z, m) doubles into the plan's precision. */
static clphys_status upload(clphys_nbody_gravity_plan *pl, cl_mem *m, size_t *cap, int n, const double *x)
{
    size_t bytes = (size_t)(n > 0 ? n : 1) * 4 * pl->rs;
    CP_TRY(ensure(pl->ctx, m, cap, bytes));
    if (n == 0) return CLPHYS_SUCCESS;
    if (pl->rs == 8) return cp_write(pl->ctx, *m, 0, bytes, x);
    float *f = pl->stage;
    for (size_t c = 0; c < (size_t)n * 4; c++) f[c] = (float)x[c];
    return cp_write(pl->ctx, *m, 0, bytes, f);
}

clphys_status clphys_nbody_gravity_compute(clphys_nbody_gravity_plan *pl, size_t n_i, const double *xi, size_t n_j,
                                           const double *xj, double *acc, double *pot, int accumulate,
                                           int check_coincident, double *kernel_s)
{
    if (!pl) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "gravity compute: NULL plan");
    clphys_context *ctx = pl->ctx;
    if (!xi) n_i = n_j;
    if (!xj || !acc || n_i > INT_MAX || n_j > INT_MAX || (!xi && n_j == 0))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT,
                        "gravity compute: NULL array or bad count (ni %zu, nj %zu; at most 2^31 - 1)", n_i, n_j);
    const int ni = (int)n_i, nj = (int)n_j;
    if (pot && !pl->p.potential)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "gravity compute: potentials asked of a plan without them");
    const int coinc = check_coincident && pl->p.eps == 0;
    if (xi) CP_TRY(nbody_gravity_check_positions(ctx, "i", ni, xi, 0, 0, NULL));
    CP_TRY(nbody_gravity_check_positions(ctx, "j", nj, xj, coinc, xi ? ni : 0, xi));
    if (kernel_s) *kernel_s = 0;
    if (ni == 0) return CLPHYS_SUCCESS;
    size_t need = (size_t)(ni > nj ? ni : nj) * 4 * sizeof(double);
    if (pl->cap_stage < need) {
        void *s = realloc(pl->stage, need);
        if (!s) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "gravity: staging buffer");
        pl->stage = s, pl->cap_stage = need;
    }
    CP_TRY(upload(pl, &pl->xj, &pl->cap_j, nj, xj));
    if (xi) CP_TRY(upload(pl, &pl->xi, &pl->cap_i, ni, xi));
    CP_TRY(ensure(ctx, &pl->out, &pl->cap_out, (size_t)ni * 4 * pl->rs));
    CP_TRY(clphys_nbody_gravity_compute_cl(pl, xi ? pl->xi : pl->xj, n_i, pl->xj, n_j, !xi, pl->out, 0, kernel_s));
    CP_TRY(cp_read(ctx, pl->out, 0, (size_t)ni * 4 * pl->rs, pl->stage));
    for (size_t i = 0; i < (size_t)ni; i++) {
        double r[4];
        for (int c = 0; c < 4; c++)
            r[c] = pl->rs == 8 ? ((double *)pl->stage)[4 * i + c] : (double)((float *)pl->stage)[4 * i + c];
        for (int c = 0; c < 3; c++) acc[3 * i + c] = accumulate ? acc[3 * i + c] + r[c] : r[c];
        if (pot) pot[i] = accumulate ? pot[i] + r[3] : r[3];
    }
    return CLPHYS_SUCCESS;
}
