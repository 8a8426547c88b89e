/* explore.c — time experimental LJ kernels (lj_x.cl) on the seed benchmark
 * and on in.lj x80; verify each against an fp64 host reference. */
#include "host/md/md_internal.h"
#include "host/ref/md_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../md_seed.h"

static const char *outdir = ".";
static clphys_context *ctx;

typedef struct {
    const char *name, *kernel;
    int list; /* 0 csr, 1 transposed, 2 half csr */
    const char *defs;
    int tpi, wg, prec; /* prec: -1 both */
} cfg;

static const cfg cfgs[] = {
    {"t-base", "x_full_t", 1, "", 1, 128, -1},
    {"t-sel-u4", "x_full_t", 1, "-DMI_SELECT -DUNROLL=4", 1, 128, -1},
    {"t-sel-u8", "x_full_t", 1, "-DMI_SELECT -DUNROLL=8", 1, 128, -1},
    {"t-u4", "x_full_t", 1, "-DUNROLL=4", 1, 128, -1},
    {"tb2", "x_full_tb", 1, "-DMI_SELECT -DUNROLL=2", 1, 128, -1},
    {"tb4", "x_full_tb", 1, "-DMI_SELECT -DUNROLL=4", 1, 128, -1},
    {"tb8", "x_full_tb", 1, "-DMI_SELECT -DUNROLL=8", 1, 128, -1},
    {"tb4-rint", "x_full_tb", 1, "-DUNROLL=4", 1, 128, -1},
    {"tb4-rcp", "x_full_tb", 1, "-DMI_SELECT -DFAST_RCP -DUNROLL=4", 1, 128, -1},
    {"tb8-rcp", "x_full_tb", 1, "-DMI_SELECT -DFAST_RCP -DUNROLL=8", 1, 128, -1},
    {"tb4-w64", "x_full_tb", 1, "-DMI_SELECT -DUNROLL=4", 1, 64, -1},
    {"tb4-w256", "x_full_tb", 1, "-DMI_SELECT -DUNROLL=4", 1, 256, -1},
    {"cb4", "x_full_cb", 0, "-DMI_SELECT -DUNROLL=4", 1, 128, -1},
    {"cb8", "x_full_cb", 0, "-DMI_SELECT -DUNROLL=8", 1, 128, -1},
    {"cb4-rcp", "x_full_cb", 0, "-DMI_SELECT -DFAST_RCP -DUNROLL=4", 1, 128, -1},
    {"gb2-u4", "x_full_gb", 0, "-DMI_SELECT -DUNROLL=4", 2, 128, -1},
    {"gb4-u2", "x_full_gb", 0, "-DMI_SELECT -DUNROLL=2", 4, 128, -1},
    {"gb4-u2-w256", "x_full_gb", 0, "-DMI_SELECT -DUNROLL=2", 4, 256, -1},
    {"gb4-u4-w256", "x_full_gb", 0, "-DMI_SELECT -DUNROLL=4", 4, 256, -1},
    {"gb8-u2-w256", "x_full_gb", 0, "-DMI_SELECT -DUNROLL=2", 8, 256, -1},
    {"g4-sel-w256", "x_full_g", 0, "-DMI_SELECT", 4, 256, -1},
    {"h1-pf", "x_half_cas", 2, "-DMI_SELECT -DPREFETCH", 1, 128, -1},
    {"t-u4-nogather", "x_full_t", 1, "-DMI_SELECT -DUNROLL=4 -DNOGATHER", 1, 128, -1},
    {"t-u4-noev", "x_full_t", 1, "-DMI_SELECT -DUNROLL=4 -DNO_EV", 1, 128, -1},
    {"tb4-asmrcp", "x_full_tb", 1, "-DMI_SELECT -DUNROLL=4 -DASM_RCP", 1, 128, 1},
    {"tb8-asmrcp", "x_full_tb", 1, "-DMI_SELECT -DUNROLL=8 -DASM_RCP", 1, 128, 1},
    {"tb8-asmrcp-noev", "x_full_tb", 1, "-DMI_SELECT -DUNROLL=8 -DASM_RCP -DNO_EV", 1, 128, 1},
    {"h1-pf-cnt", "x_half_cas", 2, "-DMI_SELECT -DPREFETCH -DCOUNT_RETRY", 1, 128, -1},
    {"h1-pf-spread", "x_half_cas", 2, "-DMI_SELECT -DPREFETCH -DSPREAD", 1, 128, -1},
    {"h1-pf-spread-cnt", "x_half_cas", 2, "-DMI_SELECT -DPREFETCH -DSPREAD -DCOUNT_RETRY", 1, 128, -1},
    {"hl-w64", "x_half_loc", 2, "-DMI_SELECT -DHS=1024", 1, 64, -1},
    {"hl-w128", "x_half_loc", 2, "-DMI_SELECT -DHS=1024", 1, 128, -1},
    {"hl-w32", "x_half_loc", 2, "-DMI_SELECT -DHS=512", 1, 32, -1},
    {"hl-w128-h2k", "x_half_loc", 2, "-DMI_SELECT -DHS=2048", 1, 128, 0},
    {"hl-w256-h2k", "x_half_loc", 2, "-DMI_SELECT -DHS=2048", 1, 256, 0},
    {"hl-w64-p4", "x_half_loc", 2, "-DMI_SELECT -DHS=1024 -DMAXP=4", 1, 64, -1},
    /* session 8: software pipelining, 2-d lanes per i, cheaper pair */
    {"tp-u4", "x_full_tp", 1, "-DUNROLL=4 -DPIPE=1", 1, 128, -1},
    {"tp-u2", "x_full_tp", 1, "-DUNROLL=2 -DPIPE=1", 1, 128, -1},
    {"tp-u8", "x_full_tp", 1, "-DUNROLL=8 -DPIPE=1", 1, 128, -1},
    {"tp0-u4", "x_full_tp", 1, "-DUNROLL=4 -DPIPE=0", 1, 128, -1},
    {"tp-u4-sel2", "x_full_tp", 1, "-DUNROLL=4 -DPIPE=1 -DIMG_SELECT2", 1, 128, -1},
    {"tp-u4-rcp", "x_full_tp", 1, "-DUNROLL=4 -DPIPE=1 -DRCP_NEWTON", 1, 128, 1},
    {"tp-u4-noev", "x_full_tp", 1, "-DUNROLL=4 -DPIPE=1 -DNO_EV", 1, 128, -1},
    {"tp-u4-w32", "x_full_tp", 1, "-DUNROLL=4 -DPIPE=1", 1, 32, -1},
    {"tp-u4-w64", "x_full_tp", 1, "-DUNROLL=4 -DPIPE=1", 1, 64, -1},
    {"tp-u4-w256", "x_full_tp", 1, "-DUNROLL=4 -DPIPE=1", 1, 256, -1},
    {"t2d-t2-u2", "x_full_t2d", 1, "-DUNROLL=2", 2, 128, -1},
    {"t2d-t2-u4", "x_full_t2d", 1, "-DUNROLL=4", 2, 128, -1},
    {"t2d-t4-u2", "x_full_t2d", 1, "-DUNROLL=2", 4, 128, -1},
    {"t2d-t4-u1", "x_full_t2d", 1, "-DUNROLL=1", 4, 128, -1},
    {"t2d-t2-u2-w64", "x_full_t2d", 1, "-DUNROLL=2", 2, 64, -1},
    {"t2d-t4-u2-w256", "x_full_t2d", 1, "-DUNROLL=2", 4, 256, -1},
    {"t2d-t2-u2-rcp", "x_full_t2d", 1, "-DUNROLL=2 -DRCP_NEWTON", 2, 128, 1},
    {"t2d-t8-u1-w256", "x_full_t2d", 1, "-DUNROLL=1", 8, 256, -1},
    {"tp-u2-w32", "x_full_tp", 1, "-DUNROLL=2 -DPIPE=1", 1, 32, -1},
    {"tp-u2-w64", "x_full_tp", 1, "-DUNROLL=2 -DPIPE=1", 1, 64, -1},
    {"tp-u2-w96", "x_full_tp", 1, "-DUNROLL=2 -DPIPE=1", 1, 96, -1},
    {"tp-u2-w160", "x_full_tp", 1, "-DUNROLL=2 -DPIPE=1", 1, 160, -1},
    {"tp-u2-w192", "x_full_tp", 1, "-DUNROLL=2 -DPIPE=1", 1, 192, -1},
    {"tp-u2-w256", "x_full_tp", 1, "-DUNROLL=2 -DPIPE=1", 1, 256, -1},
    {"tp-u3", "x_full_tp", 1, "-DUNROLL=3 -DPIPE=1", 1, 128, -1},
    {"tp-u1", "x_full_tp", 1, "-DUNROLL=1 -DPIPE=1", 1, 128, -1},
    {"tp-u2-noev", "x_full_tp", 1, "-DUNROLL=2 -DPIPE=1 -DNO_EV", 1, 128, -1},
    {"t2d-t2-u1", "x_full_t2d", 1, "-DUNROLL=1", 2, 128, -1},
};

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void dump_ptx(cl_program prog, const char *tag)
{
    size_t sz = 0;
    clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof sz, &sz, NULL);
    unsigned char *b = malloc(sz + 1);
    unsigned char *bp[1] = {b};
    clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bp, bp, NULL);
    char path[512];
    snprintf(path, sizeof path, "%s/%s.ptx", outdir, tag);
    FILE *f = fopen(path, "wb");
    if (f) fwrite(b, 1, sz, f), fclose(f);
    free(b);
}

/* run one config; lists[3] plans (csr, transposed, half) */
static void run_cfg(const cfg *c, int prec, clphys_lj_plan **pl, const double *ref, const double *ref_exact,
                    size_t n, const double box[3], const char *tag, int calls, int reps)
{
    clphys_lj_plan *p = pl[c->list];
    clphys_neighbor_plan *nb = p->nb;
    char opt[512];
    cp_precision_options(ctx, prec, opt, sizeof opt);
    size_t o = strlen(opt);
    snprintf(opt + o, sizeof opt - o, " -DTPI=%d -DWG=%d %s", c->tpi, c->wg, c->defs);
    cl_program prog;
    cl_kernel k;
    if (cp_program(ctx, "lj_x.cl", opt, &prog) || cp_kernel(ctx, prog, c->kernel, &k)) {
        printf("%-18s build failed: %s\n", c->name, clphys_last_error(ctx));
        return;
    }
    char ptag[128];
    snprintf(ptag, sizeof ptag, "%s-%s", c->name, prec ? "fp64" : "fp32");
    if (!strcmp(tag, "d0.5")) dump_ptx(prog, ptag);
    int dbl = prec == CLPHYS_FP64;
    cl_uint nn = (cl_uint)n;
    double d[4] = {box[0], box[1], box[2], 0}, id[4] = {1 / box[0], 1 / box[1], 1 / box[2], 0};
    double cc[5] = {9.0, 4.0, 24.0, 1.0, 0.0};
    float df[4], idf[4], cf[5];
    for (int q = 0; q < 4; q++) df[q] = (float)d[q], idf[q] = (float)id[q];
    for (int q = 0; q < 5; q++) cf[q] = (float)cc[q];
    if (p->p.r_cut != 3.0) cc[0] = p->p.r_cut * p->p.r_cut, cf[0] = (float)cc[0];
    cl_uint a = 0;
    CP_ARG(ctx, k, a++, nb->pos);
    CP_ARG(ctx, k, a++, nn);
    if (c->list == 1) CP_ARG(ctx, k, a++, nb->ncount); else CP_ARG(ctx, k, a++, nb->offset);
    CP_ARG(ctx, k, a++, nb->list);
    if (dbl) CP_ARG(ctx, k, a++, d); else CP_ARG(ctx, k, a++, df);
    if (dbl) CP_ARG(ctx, k, a++, id); else CP_ARG(ctx, k, a++, idf);
    for (int q = 0; q < 5; q++, a++) {
        if (dbl) CP_ARG(ctx, k, a, cc[q]); else CP_ARG(ctx, k, a, cf[q]);
    }
    CP_ARG(ctx, k, a++, p->f);
    CP_ARG(ctx, k, a++, p->vir);
    size_t g = cp_round_up(n * c->tpi, c->wg), l = c->wg;
    int half = c->list == 2;
    size_t rs = dbl ? 8 : 4;
    double zero = 0;
    double *ts = malloc(reps * sizeof *ts);
    clphys_status st = 0;
    for (int r = -1; r < reps && !st; r++) {
        double t = 0;
        for (int q = 0; q < calls && !st; q++) {
            if (half) cp_fill(ctx, p->f, &zero, rs, 4 * rs * n);
            st = cp_launch(ctx, k, 1, &g, &l, &t);
        }
        if (r >= 0) ts[r] = t;
    }
    if (st) {
        printf("%-18s launch failed: %s\n", c->name, clphys_last_error(ctx));
        return;
    }
    /* back to back, as a simulation loop runs them: span from the first
     * kernel's START to the last one's END, and the host clock (session 8) */
    double span = -1, wall = -1;
    if (!half && calls > 1) {
        double sp[5], wl[5];
        for (int r = 0; r < 5; r++) {
            cl_event e0 = NULL, e1 = NULL;
            clFinish(ctx->queue);
            double h0 = cp_now();
            for (int q = 0; q < calls; q++)
                clEnqueueNDRangeKernel(ctx->queue, k, 1, NULL, &g, &l, 0, NULL,
                                       q == 0 ? &e0 : q == calls - 1 ? &e1 : NULL);
            clFinish(ctx->queue);
            wl[r] = cp_now() - h0;
            cl_ulong t0 = 0, t1 = 0;
            clGetEventProfilingInfo(e0, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
            clGetEventProfilingInfo(e1, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
            sp[r] = 1e-9 * (double)(t1 - t0);
            clReleaseEvent(e0), clReleaseEvent(e1);
        }
        qsort(sp, 5, sizeof *sp, cmpd), qsort(wl, 5, sizeof *wl, cmpd);
        span = sp[2] / calls * 100, wall = wl[2] / calls * 100;
    }
    /* one poisoned run for verification */
    double nanv = NAN;
    float nanf = NAN;
    if (dbl) cp_fill(ctx, p->f, &nanv, 8, 32 * n); else cp_fill(ctx, p->f, &nanf, 4, 16 * n);
    if (half) cp_fill(ctx, p->f, &zero, rs, 4 * rs * n);
    cp_launch(ctx, k, 1, &g, &l, NULL);
    double *f = malloc(3 * n * sizeof *f);
    clphys_lj_result res;
    st = clphys_lj_get(p, f, &res);
    double e = 0, s = 0, e2 = 0;
    for (size_t q = 0; q < 3 * n; q++) {
        double v = st ? NAN : f[q];
        e = isfinite(v) ? fmax(e, fabs(v - ref[q])) : INFINITY;
        e2 = isfinite(v) ? fmax(e2, fabs(v - ref_exact[q])) : INFINITY;
        s = fmax(s, fabs(ref[q]));
    }
    qsort(ts, reps, sizeof *ts, cmpd);
    size_t pairs;
    clphys_neighbor_stats(nb, &pairs, NULL, NULL);
    size_t uniq = half ? pairs : pairs / 2;
    printf("%-5s %-18s %s tpi %2d wg %3d  100calls %7.3f ms (min %7.3f) b2b span %7.3f wall %7.3f  %6.1f Gpair/s  "
           "err %.2e  err_exact %.2e  virial %.6g\n",
           tag, c->name, prec ? "fp64" : "fp32", c->tpi, c->wg, ts[reps / 2] / calls * 100 * 1e3,
           ts[0] / calls * 100 * 1e3, span * 1e3, wall * 1e3, uniq / (ts[reps / 2] / calls) * 1e-9, e / s, e2 / s,
           res.virial);
    fflush(stdout);
    free(ts), free(f);
    clReleaseKernel(k);
}

static void run_system(const char *tag, const double *pos, size_t n, const double box[3], double rc,
                       double skin, int shuffle, int precs, int calls, int reps, const char *only)
{
    /* reference list: fp64 full csr, caller order */
    clphys_lj_params lp = {.n = n, .box = {box[0], box[1], box[2]}, .r_cut = rc, .skin = skin,
                           .precision = CLPHYS_FP64, .variant = CLPHYS_LJ_FULL_CSR};
    clphys_lj_plan *rp;
    if (clphys_lj_plan_create(ctx, &lp, &rp) || clphys_lj_set_positions(rp, pos)) {
        printf("ref plan: %s\n", clphys_last_error(ctx));
        return;
    }
    size_t pairs, *off = malloc((n + 1) * sizeof *off);
    clphys_neighbor_stats(rp->nb, &pairs, NULL, NULL);
    int *list = malloc(pairs * sizeof *list);
    clphys_neighbor_get(rp->nb, off, list);
    clphys_lj_plan_destroy(rp);
    double *ref64 = malloc(3 * n * sizeof *ref64), *ref32 = malloc(3 * n * sizeof *ref32);
    double *pos32 = malloc(3 * n * sizeof *pos32), pe, w, box32[3];
    for (size_t q = 0; q < 3 * n; q++) pos32[q] = (float)pos[q];
    for (int c = 0; c < 3; c++) box32[c] = (float)box[c];
    md_ref_lj_list(n, pos, box, 1, 1, rc, 0, off, list, ref64, &pe, &w);
    md_ref_lj_list(n, pos32, box32, 1, 1, rc, 0, off, list, ref32, &pe, &w);
    double e = 0, s = 0;
    for (size_t q = 0; q < 3 * n; q++) e = fmax(e, fabs(ref32[q] - ref64[q])), s = fmax(s, fabs(ref64[q]));
    printf("%s: n %zu box %.4f pairs(full) %zu; fp32-rounded input changes F by %.2e (max-norm rel)\n", tag, n,
           box[0], pairs, e / s);
    free(off), free(list);
    for (int prec = 0; prec < 2; prec++) {
        if (!(precs & (1 << prec))) continue;
        clphys_lj_plan *pl[3];
        clphys_lj_variant vs[3] = {CLPHYS_LJ_FULL_CSR, CLPHYS_LJ_FULL_TRANSPOSED, CLPHYS_LJ_HALF_CAS};
        for (int q = 0; q < 3; q++) {
            lp.precision = prec;
            lp.variant = vs[q];
            if (clphys_lj_plan_create(ctx, &lp, &pl[q]) || clphys_lj_set_positions(pl[q], pos) ||
                (shuffle && clphys_neighbor_shuffle(pl[q]->nb, 12345))) {
                printf("plan: %s\n", clphys_last_error(ctx));
                return;
            }
        }
        for (int q = 0; q < 3; q++) {
            clphys_neighbor_build(pl[q]->nb, pos);
            if (shuffle) clphys_neighbor_shuffle(pl[q]->nb, 12345);
            size_t np;
            int cap;
            clphys_neighbor_stats(pl[q]->nb, &np, &cap, NULL);
            printf("%-5s build-%-13s %s %8.3f ms  pairs %zu cap %d\n", tag, clphys_lj_variant_name(vs[q]),
                   prec ? "fp64" : "fp32", clphys_neighbor_build_seconds(pl[q]->nb) * 1e3, np, cap);
        }
        /* the library's own variants, for reference */
        for (int q = 0; q < 3; q++) {
            double ts[5];
            for (int r = 0; r < 5; r++) {
                ts[r] = 0;
                for (int c = 0; c < calls; c++) clphys_lj_evaluate(pl[q], &ts[r]);
            }
            qsort(ts, 5, sizeof *ts, cmpd);
            double wl[5];
            for (int r = 0; r < 5; r++) {
                clFinish(ctx->queue);
                double h0 = cp_now();
                for (int c = 0; c < calls; c++) clphys_lj_evaluate(pl[q], NULL);
                clFinish(ctx->queue);
                wl[r] = cp_now() - h0;
            }
            qsort(wl, 5, sizeof *wl, cmpd);
            printf("%-5s lib-%-14s %s 100calls %7.3f ms  b2b wall %7.3f ms\n", tag, clphys_lj_variant_name(vs[q]),
                   prec ? "fp64" : "fp32", ts[2] / calls * 100 * 1e3, wl[2] / calls * 100 * 1e3);
        }
        for (size_t c = 0; c < sizeof cfgs / sizeof *cfgs; c++) {
            if (cfgs[c].prec >= 0 && cfgs[c].prec != prec) continue;
            if (only && !strstr(only, cfgs[c].name)) continue;
            run_cfg(&cfgs[c], prec, pl, prec ? ref64 : ref32, ref64, n, box, tag, calls, reps);
        }
        for (int q = 0; q < 3; q++) clphys_lj_plan_destroy(pl[q]);
    }
    free(ref64), free(ref32), free(pos32);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "seed";
    if (argc > 2) outdir = argv[2];
    const char *only = argc > 3 ? argv[3] : NULL;
    if (clphys_context_create(getenv("CLPHYS_DEVICE") ? getenv("CLPHYS_DEVICE") : "auto", &ctx)) {
        fprintf(stderr, "%s\n", clphys_last_error(NULL));
        return 1;
    }
    printf("device %s\n", clphys_context_device(ctx)->name);
    if (!strcmp(mode, "seed05")) {
        size_t n;
        double box[3];
        double *pos = md_seed_system(0.5, 50, &n, box);
        run_system("d0.5", pos, n, box, 3.0, 0.3, 1, 2, 100, 5, only);
        free(pos);
    } else if (!strcmp(mode, "seedns")) {
        size_t n;
        double box[3];
        double *pos = md_seed_system(0.5, 50, &n, box);
        run_system("ns0.5", pos, n, box, 3.0, 0.3, 0, 2, 100, 5, only);
        free(pos);
    } else if (!strcmp(mode, "seed") || !strcmp(mode, "small")) {
        double edge = !strcmp(mode, "small") ? 12 : 50;
        double rhos[2] = {0.5, 1.0};
        for (int d = 0; d < 2; d++) {
            size_t n;
            double box[3];
            double *pos = md_seed_system(rhos[d], edge, &n, box);
            char tag[16];
            snprintf(tag, sizeof tag, "d%g", rhos[d]);
            run_system(tag, pos, n, box, 3.0, 0.3, 1, 3, 100, 5, only);
            free(pos);
        }
    } else {
        clphys_md_system sys;
        int cells = argc > 4 ? atoi(argv[4]) : 80;
        clphys_md_fcc(0.8442, cells, 1.44, 87287, &sys);
        double box[3];
        for (int c = 0; c < 3; c++) box[c] = sys.hi[c] - sys.lo[c];
        double *x = malloc(3 * sys.n * sizeof *x);
        for (size_t q = 0; q < 3 * sys.n; q++) x[q] = sys.x[q] - sys.lo[q % 3];
        run_system("md2m", x, sys.n, box, 2.5, 0.3, 0, 1, 20, 5, only);
        free(x);
        clphys_md_system_free(&sys);
    }
    clphys_context_destroy(ctx);
    return 0;
}
