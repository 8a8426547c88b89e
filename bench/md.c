/* md.c — benchmarks of the md path: `neighbor` (cell list + Verlet list,
 * particles/s), `lj` (LJ force variants, pair-evaluations/s; the seed
 * benchmark: fcc, 4 atoms per cell, density 0.5 and 1.0, box edge 50,
 * jitter [0, 0.1), r_cut 3.0, search 3.3, shuffled neighbour order, 100
 * calls; CPU devices' default run 20) and `md` (velocity-Verlet steps/s on
 * LAMMPS in.lj, checked against LAMMPS own thermo log, with the peers
 * LAMMPS, its GPU package and OpenMM timed beside it (md_peers.c); on GPUs with --full also
 * in.lj scaled to 2,048,000 atoms).  md rows'
 * rate is wall-clock steps/s, params.kernel_steps_per_s the kernels' own. */
#include "bench.h"
#include "host/ref/md_ref.h"
#include "host/ref/ref_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "md_peers.h"
#include "datadir.h"

#include <zlib.h>

#define CALLS 100

/* The seed's input (clphys_md_lj_seed_input: the generator of the experiments
 * in bench/md-notes.md, so their tables and the bench rows time the same
 * particles); malloc'd, NULL when it cannot be made. */
static double *md_seed_system(double rho, double edge, size_t *n, double box[3])
{
    if (clphys_md_lj_seed_input(rho, edge, n, box, NULL)) return NULL;
    double *pos = malloc(3 * *n * sizeof *pos);
    if (pos && clphys_md_lj_seed_input(rho, edge, n, box, pos)) free(pos), pos = NULL;
    return pos;
}
static const double RCUT = 3.0, RSEARCH = 3.3;

/* The seed input's box edge (sigma) at density rho: --size N asks for N
 * particles, the nearest cube of whole fcc cells (bench_fcc_cells; half a
 * cell more, since clphys_md_lj_seed_input takes the floor); else 14 or 50
 * sigma. */
static double edge_for(const bench_run *run, double rho)
{
    if (run->size > 0) return (bench_fcc_cells(run->size) + 0.5) * cbrt(4.0 / rho);
    return run->quick ? 14.0 : 50.0;
}

static void fill_common(bench_row *r, const char *path, const char *variant, const char *prec, size_t n, int rep)
{
    memset(r, 0, sizeof *r);
    snprintf(r->path, sizeof r->path, "%s", path);
    snprintf(r->variant, sizeof r->variant, "%s", variant);
    snprintf(r->precision, sizeof r->precision, "%s", prec);
    r->n = (long long)n;
    r->repeat = rep;
}

/* ---- neighbor ------------------------------------------------------------ */
int bench_md_neighbor(bench_run *run)
{
    static const double rhos[2] = {0.5, 1.0};
    int rep = run->repeat > 0 ? run->repeat : 5;
    /* GPUs' default run: the seed's density 0.5; 1.0 with --full (and in clphys tune) */
    const int nd = run->dev->is_gpu && !run->full ? 1 : 2;
    for (int d = 0; d < nd; d++) {
        size_t n;
        double box[3];
        double *pos = md_seed_system(rhos[d], edge_for(run, rhos[d]), &n, box);
        if (!pos) return 1;
        size_t ref_pairs = 0;
        int have_ref = 0;
        if (run->verify && n <= 130000) {
            ref_pairs = md_ref_pair_count(n, pos, box, RSEARCH);
            have_ref = 1;
        }
        for (int prec = 0; prec < 2; prec++) {
            const char *pn = prec ? "fp64" : "fp32";
            if (!bench_wants_precision(run, pn)) continue;
            for (int kind = 0; kind < 2; kind++)
                for (int lay = 0; lay < 2; lay++) {
                    char name[48];
                    snprintf(name, sizeof name, "%s-%s", kind ? "half" : "full", lay ? "transposed" : "csr");
                    clphys_md_neighbor_params p = {.n = n,
                                                   .box = {box[0], box[1], box[2]},
                                                   .r_search = RSEARCH,
                                                   .kind = kind,
                                                   .layout = lay,
                                                   .precision = prec};
                    clphys_md_neighbor_plan *pl;
                    clphys_status st = clphys_md_neighbor_plan_create(run->ctx, &p, &pl);
                    if (st) {
                        bench_fail(run, "md_neighbor", name, clphys_last_error(run->ctx));
                        continue;
                    }
                    double *ks = malloc(rep * sizeof *ks), *ts = malloc(rep * sizeof *ts);
                    for (int r = 0; r < rep && !st; r++) {
                        double t0 = bench_now();
                        st = clphys_md_neighbor_build(pl, pos);
                        ts[r] = bench_now() - t0;
                        ks[r] = clphys_md_neighbor_build_seconds(pl);
                    }
                    size_t pairs = 0;
                    size_t cap = 0;
                    int growths = 0;
                    clphys_md_neighbor_stats(pl, &pairs, &cap, &growths);
                    if (st) {
                        bench_fail(run, "md_neighbor", name, clphys_last_error(run->ctx));
                    } else {
                        bench_row r;
                        fill_common(&r, "md_neighbor", name, pn, n, rep);
                        r.kernel_s_median = ref_median(ks, rep);
                        r.kernel_s_min = ref_min(ks, rep);
                        r.total_s_median = ref_median(ts, rep);
                        r.rate = n / r.kernel_s_median;
                        snprintf(r.rate_unit, sizeof r.rate_unit, "particles/s");
                        snprintf(r.flops_convention, sizeof r.flops_convention, "none");
                        /* compulsory bytes only, against DRAM's copy rate: a row
                         * reads the positions of the 27 cells around its own, but
                         * the rows of those cells share them through the cache */
                        double rs = prec ? 8 : 4;
                        r.bytes_per_s = (n * 4 * rs + 4.0 * pairs + 4.0 * n) / r.kernel_s_median;
                        snprintf(r.byte_model, sizeof r.byte_model,
                                 "compulsory: positions read once, list entries and row counts written once");
                        bench_set_fraction(run, &r, "copy_bytes_per_s", r.bytes_per_s);
                        size_t expect = kind ? ref_pairs : 2 * ref_pairs;
                        r.max_rel_error = have_ref ? fabs((double)pairs - expect) / (expect ? expect : 1) : 0;
                        /* fp32 may differ for pairs at r_search within rounding */
                        r.verified = have_ref && r.max_rel_error <= (prec ? 0 : 1e-6);
                        snprintf(r.params, sizeof r.params,
                                 "{\"density\":%g,\"box\":%.6g,\"r_search\":%g,\"pairs\":%zu,"
                                 "\"capacity\":%zu,\"growths\":%d,\"verified_by\":\"pair count vs "
                                 "O(N^2) search\"}",
                                 rhos[d], box[0], RSEARCH, pairs, cap, growths);
                        bench_add_row(run, &r);
                    }
                    free(ks), free(ts);
                    clphys_md_neighbor_plan_destroy(pl);
                }
        }
        free(pos);
    }
    return 0;
}

/* ---- lj ------------------------------------------------------------------ */
/* fp64 references on the seed system: a full list in caller order, forces
 * from the exact positions and from the positions rounded to float (what an
 * fp32 device computes with). */
typedef struct {
    size_t *off;
    int *list;
    double *pos32, box32[3];
    double *ref[2], pe[2]; /* [0]: from rounded input (fp32 rows), [1]: exact */
    /* the error's scales, made once for all rows (md_ref_force_scale): fp32
     * rows against the rounded and the exact input, fp64 rows */
    md_ref_scale sc32, sc32_exact, sc64;
} lj_ref;

static void lj_ref_free(lj_ref *R)
{
    free(R->off), free(R->list), free(R->pos32), free(R->ref[0]), free(R->ref[1]);
    md_ref_scale_free(&R->sc32), md_ref_scale_free(&R->sc32_exact), md_ref_scale_free(&R->sc64);
}

/* One variant of an lj case: its options and its plan. */
typedef struct {
    clphys_md_lj_variant v;
    int tpi, wg;
    char name[48];
    clphys_md_lj_plan *pl;
} lj_item;

typedef struct {
    lj_item *it;
    int calls;
} lj_rounds;

/* One round of variant k: `calls` calls, each waited for and timed by its
 * profiling events; kernel seconds per call. */
static double lj_round(int k, void *user)
{
    const lj_rounds *u = user;
    double sum = 0;
    for (int c = 0; c < u->calls; c++) {
        double t = 0;
        if (clphys_md_lj_evaluate(u->it[k].pl, &t)) return -1;
        sum += t;
    }
    return sum / u->calls;
}

/* The variant's plan on the case's input; 0 when it was made, else the
 * variant is left out (reported as skipped or failed). */
static int lj_open(bench_run *run, const double *pos, size_t n, const double box[3], int prec, lj_item *it)
{
    if (it->v == CLPHYS_MD_LJ_AUTO)
        snprintf(it->name, sizeof it->name, "auto");
    else if (it->v == CLPHYS_MD_LJ_FULL_GROUP)
        snprintf(it->name, sizeof it->name, "full-group-t%d-w%d", it->tpi, it->wg);
    else if (it->wg)
        snprintf(it->name, sizeof it->name, "%s-w%d", clphys_md_lj_variant_name(it->v), it->wg);
    else
        snprintf(it->name, sizeof it->name, "%s", clphys_md_lj_variant_name(it->v));
    clphys_md_lj_params p = {.n = n,
                             .box = {box[0], box[1], box[2]},
                             .epsilon = 1,
                             .sigma = 1,
                             .r_cut = RCUT,
                             .skin = RSEARCH - RCUT,
                             .precision = prec,
                             .variant = it->v,
                             .group_size = it->tpi,
                             .work_group_size = it->wg};
    it->pl = NULL;
    clphys_status st = clphys_md_lj_plan_create(run->ctx, &p, &it->pl);
    if (st == CLPHYS_ERR_UNSUPPORTED) {
        fprintf(stderr, "  lj        %-22s %s skipped: %s\n", it->name, prec ? "fp64" : "fp32",
                clphys_last_error(run->ctx));
        return -1;
    }
    if (!st) st = clphys_md_lj_set_positions(it->pl, pos);
    if (!st) st = clphys_md_neighbor_shuffle(clphys_md_lj_neighbor(it->pl), 12345);
    if (st) {
        bench_fail(run, "md_lj", it->name, clphys_last_error(run->ctx));
        clphys_md_lj_plan_destroy(it->pl);
        it->pl = NULL;
        return -1;
    }
    return 0;
}

/* The row of a variant whose kernel rounds are timed: the loops with
 * transfers and back to back, the check against the reference. */
static void lj_finish(bench_run *run, const double *pos, size_t n, const double box[3], double rho, int prec,
                      const lj_item *it, const double *rounds_s, int rounds, int calls, int tcalls, int nts,
                      const lj_ref *R)
{
    const char *pn = prec ? "fp64" : "fp32";
    clphys_md_lj_plan *pl = it->pl;
    clphys_status st = CLPHYS_SUCCESS;
    double *ts = malloc(nts * sizeof *ts), *bs = malloc(nts * sizeof *bs), *sp = malloc(nts * sizeof *sp);
    double *f = malloc(3 * n * sizeof *f);
    clphys_md_lj_result res = {0};
    if (!ts || !bs || !sp || !f) st = CLPHYS_ERR_OUT_OF_MEMORY;
    /* with transfers: positions up, forces and energies down, each call */
    for (int r = 0; r < nts && !st; r++) {
        double t0 = bench_now();
        for (int c = 0; c < tcalls && !st; c++) {
            st = clphys_md_lj_update_positions(pl, pos);
            if (!st) st = clphys_md_lj_evaluate(pl, NULL);
            if (!st) st = clphys_md_lj_get(pl, f, &res);
        }
        ts[r] = bench_now() - t0;
    }
    /* back to back, as an MD loop runs them (no wait per call): the span of
     * the launches' profiling events (first START to last END, gaps
     * included) and the host clock; the kernel time of the rounds waits for
     * each launch and sums its events (bench/md-notes.md, "Timing method") */
    for (int r = 0; r < nts && !st; r++) {
        clFinish(clphys_context_queue(run->ctx));
        double t0 = bench_now();
        clphys_context_span_begin(run->ctx);
        for (int c = 0; c < calls && !st; c++) st = clphys_md_lj_evaluate(pl, NULL);
        clphys_status se = clphys_context_span_end(run->ctx, &sp[r]);
        if (!st) st = se;
        bs[r] = bench_now() - t0;
    }
    double b2b = st ? 0 : ref_median(bs, nts), span = st ? 0 : ref_median(sp, nts);
    size_t pairs = 0, overflow = 0; /* half-cas: particles without a local slot, all calls */
    if (!st) st = clphys_md_neighbor_stats(clphys_md_lj_neighbor(pl), &pairs, NULL, NULL);
    if (!st) st = clphys_md_lj_overflow(pl, &overflow);
    if (st) {
        bench_fail(run, "md_lj", it->name,
                   st == CLPHYS_ERR_OUT_OF_MEMORY ? "out of memory" : clphys_last_error(run->ctx));
    } else {
        /* half-cas derives its half list from the plan's full list
         * (half-space), which the stats count */
        int derived = it->v == CLPHYS_MD_LJ_HALF_CAS;
        int half = it->v == CLPHYS_MD_LJ_HALF_FIXEDPOINT;
        size_t unique = half ? pairs : pairs / 2;
        if (derived) pairs /= 2; /* entries the kernel reads */
        bench_row r;
        fill_common(&r, "md_lj", it->name, pn, n, rounds);
        snprintf(r.case_key, sizeof r.case_key, "density=%g", rho);
        if (it->v == CLPHYS_MD_LJ_AUTO)
            snprintf(r.auto_choice, sizeof r.auto_choice, "%s", clphys_md_lj_plan_choice(pl));
        bench_set_rounds(&r, rounds_s, rounds);
        r.total_s_median = ref_median(ts, nts) / tcalls;
        r.rate = unique / r.kernel_s_median;
        snprintf(r.rate_unit, sizeof r.rate_unit, "pair-evaluations/s");
        /* list entries within r_search, each: 3 sub + min image 3 + r2 5 + LJ ~12 */
        r.gflops = 23.0 * pairs / r.kernel_s_median * 1e-9;
        snprintf(r.flops_convention, sizeof r.flops_convention, "23 per list entry");
        double rs = prec ? 8 : 4;
        /* compulsory bytes only: the gathers of j hit L1/L2 (the profile in
         * bench/md-notes.md: the full list is bound by L1 gather requests, half-cas by
         * its local exchanges), so neither kernel nears DRAM bandwidth */
        r.bytes_per_s = (pairs * (derived ? 6.0 : 4.0) + n * rs * (4 + 4 + 1)) / r.kernel_s_median;
        snprintf(r.byte_model, sizeof r.byte_model,
                 "compulsory: list once (index, +2-byte slot half-cas), positions in, forces+virial out");
        bench_set_fraction(run, &r, "copy_bytes_per_s", r.bytes_per_s);
        /* force error: md_ref_force_error (||F - F_ref|| / ||sum_j |f_ij|||, particles
         * with a pair at the cutoff within rounding left out), against the
         * fp64 reference from the input the device holds (rounded to float
         * for fp32); plus |PE - PE_ref| / |PE_ref|.  Tolerance 1e-5 fp32,
         * 1e-12 fp64.  fp32 also reports the error against the unrounded
         * input (positions up to 50 rounded to float move by up to 2e-6). */
        size_t excl = 0;
        double exact = 0;
        if (R) {
            int k = prec ? 1 : 0;
            double ef = md_ref_force_error_scaled(prec ? &R->sc64 : &R->sc32, f, R->ref[k], &excl);
            if (!prec) exact = md_ref_force_error_scaled(&R->sc32_exact, f, R->ref[1], NULL);
            r.max_rel_error = fmax(ef, fabs(res.potential_energy - R->pe[k]) / fabs(R->pe[k]));
            r.verified = r.max_rel_error <= (prec ? 1e-12 : 1e-5);
        }
        snprintf(r.params, sizeof r.params,
                 "{\"density\":%g,\"box\":%.6g,\"r_cut\":%g,\"r_search\":%g,\"calls\":%d,\"rounds\":%d,"
                 "\"calls_with_transfers\":%d,"
                 "\"timing\":\"interleaved rounds of the case's variants\","
                 "\"kernel_s_100_calls\":%.6g,\"total_s_100_calls\":%.6g,"
                 "\"back_to_back_wall_s_100_calls\":%.6g,\"kernel_span_s_100_calls\":%.6g,\"pairs\":%zu,"
                 "\"neighbour_order\":\"shuffled\",\"group_size\":%d,\"work_group_size\":%d,"
                 "\"error\":\"max(||F-F_ref||_2/||sum_j|f_ij|||_2, |PE-PE_ref|/|PE_ref|), F_ref "
                 "fp64 from the %s input\",\"excluded_at_cutoff\":%zu,"
                 "\"force_error_vs_unrounded_input\":%.3g,\"slot_overflow_per_call\":%.6g}",
                 rho, box[0], RCUT, RSEARCH, calls, rounds, tcalls, r.kernel_s_median * CALLS, r.total_s_median * CALLS,
                 b2b * CALLS / calls, span * CALLS / calls, unique, it->tpi, it->wg, prec ? "exact" : "float-rounded",
                 excl, exact, (double)overflow / ((double)(1 + rounds + nts) * calls + (double)nts * tcalls));
        bench_add_row(run, &r);
    }
    free(ts), free(bs), free(sp), free(f);
}

/* Every variant of one (density, precision) case: auto first, then each
 * variant (GPUs: each variant's options swept in the full sweep, at its
 * defaults in the default run), timed in interleaved rounds. */
static void lj_case(bench_run *run, const double *pos, size_t n, const double box[3], double rho, int prec,
                    const lj_ref *R)
{
    const int gpu = run->dev->is_gpu;
    lj_item it[BENCH_MAX_VARIANTS];
    int ni = 0;
#define ADD(V, T, W) (it[ni++] = (lj_item){.v = (V), .tpi = (T), .wg = (W)})
    ADD(CLPHYS_MD_LJ_AUTO, 0, 0);
    for (int v = 1; v < CLPHYS_MD_LJ_NVARIANTS; v++) {
        if (gpu && !run->full) {
            ADD(v, 0, 0);
        } else if (v == CLPHYS_MD_LJ_FULL_GROUP) {
            static const int tpis[] = {2, 4, 8, 16};
            for (int t = 0; t < (gpu ? 4 : 1); t++) ADD(v, gpu ? tpis[t] : 4, gpu ? 256 : 16);
        } else if (gpu && v == CLPHYS_MD_LJ_HALF_CAS) {
            ADD(v, 0, 0); /* work-group size from the block */
        } else if (gpu && v != CLPHYS_MD_LJ_CPU) {
            /* 160 for full-transposed only: bench/md-notes.md */
            static const int wgs[] = {64, 128, 160, 256};
            for (int w = 0; w < 4; w++)
                if (wgs[w] != 160 || v == CLPHYS_MD_LJ_FULL_TRANSPOSED) ADD(v, 0, wgs[w]);
        } else {
            ADD(v, 0, 0);
        }
    }
#undef ADD
    /* the plans that could be made, kept in order */
    int no = 0;
    for (int k = 0; k < ni; k++)
        if (!lj_open(run, pos, n, box, prec, &it[k])) it[no++] = it[k];
    /* GPUs: rounds of 100 calls (the seed's), 3 in the default run (their
     * spread is small), --repeat with --full; CPUs: 31 short rounds of 5
     * calls, since a VM's stolen time makes single loops differ by 20%
     * (bench/md-notes.md); one loop with transfers and one back to back in
     * the default run, --repeat of each with --full */
    const int calls = gpu ? CALLS : 5;
    const int rounds = bench_rounds(run, run->full ? run->repeat : 3, 31);
    const int nts = run->full ? run->repeat : 1;
    /* the loop with transfers: 20 calls in the GPU default run (each moves
     * the positions and forces over PCIe: 1.6 ms a call at 62,500 fp64) */
    const int tcalls = gpu && !run->full ? CALLS / 5 : calls;
    double *s = malloc((size_t)(no ? no : 1) * (size_t)rounds * sizeof *s);
    lj_rounds u = {it, calls};
    if (!s) {
        bench_fail(run, "md_lj", "timing", "out of memory");
    } else {
        bench_interleave(no, rounds, lj_round, &u, s);
        for (int k = 0; k < no; k++) {
            if (s[k * rounds] < 0)
                bench_fail(run, "md_lj", it[k].name, clphys_last_error(run->ctx));
            else
                lj_finish(run, pos, n, box, rho, prec, &it[k], s + k * rounds, rounds, calls, tcalls, nts, R);
        }
    }
    free(s);
    for (int k = 0; k < no; k++) clphys_md_lj_plan_destroy(it[k].pl);
}

int bench_md_lj(bench_run *run)
{
    static const double rhos[2] = {0.5, 1.0};
    int gpu = run->dev->is_gpu;
    /* GPUs' default run: the seed's density 0.5; 1.0 with --full (and in clphys tune) */
    const int nd = gpu && !run->full ? 1 : 2;
    for (int d = 0; d < nd; d++) {
        size_t n;
        double box[3];
        double *pos = md_seed_system(rhos[d], edge_for(run, rhos[d]), &n, box);
        if (!pos) return 1;
        lj_ref ref = {0}, *R = NULL;
        if (run->verify) {
            /* reference: fp64 over the full list (itself tested against the
             * O(N^2) search in tests/test_md_neighbor.c) */
            clphys_md_neighbor_params np = {
                .n = n, .box = {box[0], box[1], box[2]}, .r_search = RSEARCH, .precision = run->dev->fp64};
            clphys_md_neighbor_plan *nb = NULL;
            size_t pairs;
            ref.off = malloc((n + 1) * sizeof *ref.off);
            ref.pos32 = malloc(3 * n * sizeof *ref.pos32);
            ref.ref[0] = malloc(3 * n * sizeof *ref.ref[0]);
            ref.ref[1] = malloc(3 * n * sizeof *ref.ref[1]);
            if (ref.off && ref.pos32 && ref.ref[0] && ref.ref[1] &&
                !clphys_md_neighbor_plan_create(run->ctx, &np, &nb) && !clphys_md_neighbor_build(nb, pos) &&
                !clphys_md_neighbor_stats(nb, &pairs, NULL, NULL) && (ref.list = malloc(pairs * sizeof *ref.list)) &&
                clphys_md_neighbor_get(nb, ref.off, ref.list) == CLPHYS_SUCCESS) {
                double w;
                for (size_t k = 0; k < 3 * n; k++) ref.pos32[k] = (float)pos[k];
                for (int c = 0; c < 3; c++) ref.box32[c] = (float)box[c];
                md_ref_lj_list(n, ref.pos32, ref.box32, 1, 1, RCUT, 0, ref.off, ref.list, ref.ref[0], &ref.pe[0], &w);
                md_ref_lj_list(n, pos, box, 1, 1, RCUT, 0, ref.off, ref.list, ref.ref[1], &ref.pe[1], &w);
                if (!md_ref_force_scale(n, ref.pos32, ref.box32, 1, 1, RCUT, ref.off, ref.list, 1e-5, &ref.sc32) &&
                    !md_ref_force_scale(n, pos, box, 1, 1, RCUT, ref.off, ref.list, 1e-5, &ref.sc32_exact) &&
                    !md_ref_force_scale(n, pos, box, 1, 1, RCUT, ref.off, ref.list, 1e-13, &ref.sc64))
                    R = &ref;
            }
            clphys_md_neighbor_plan_destroy(nb);
        }
        for (int prec = 0; prec < 2; prec++)
            if (bench_wants_precision(run, prec ? "fp64" : "fp32")) lj_case(run, pos, n, box, rhos[d], prec, R);
        lj_ref_free(&ref);
        free(pos);
    }
    return 0;
}

/* ---- md ------------------------------------------------------------------ */
/* LAMMPS's thermo rows (step temp pe ke etotal press) from its log, or 0. */
static int lammps_rows(const char *log, double rows[][6], int max)
{
    gzFile f = gzopen(log, "rb"); /* log.lammps.gz, or a plain log */
    if (!f) return 0;
    char line[1024];
    int n = 0, in = 0;
    while (n < max && gzgets(f, line, sizeof line)) {
        if (!strncmp(line, "Step Temp PotEng KinEng TotEng Press", 36))
            in = 1;
        else if (in && sscanf(line, "%lf %lf %lf %lf %lf %lf", &rows[n][0], &rows[n][1], &rows[n][2], &rows[n][3],
                              &rows[n][4], &rows[n][5]) == 6)
            n++;
        else if (in && !strncmp(line, "Loop time", 9))
            break;
    }
    gzclose(f);
    return n;
}

/* Run steps in chunks of `every` thermo steps; fills thermo rows. */
static clphys_status md_case(bench_run *run, clphys_md_system *sys, clphys_precision prec, clphys_md_lj_variant v,
                             int steps, int every, double *kernel_s, double *wall_s, clphys_md_thermo *rows, int *nrows,
                             int *rebuilds)
{
    clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = prec, .variant = v},
                          .dt = 0.005,
                          .neigh_every = 20,
                          .neigh_check = 0};
    clphys_md_plan *pl;
    clphys_status st = clphys_md_plan_create(run->ctx, &p, sys, &pl);
    if (st) return st;
    *nrows = 0;
    st = clphys_md_thermo_now(pl, &rows[(*nrows)++]);
    *kernel_s = 0;
    *wall_s = 0;
    for (int s = 0; !st && s < steps; s += every) {
        double t0 = bench_now(), ks = 0;
        st = clphys_md_run(pl, every, &ks);
        *wall_s += bench_now() - t0;
        *kernel_s += ks;
        if (!st) st = clphys_md_thermo_now(pl, &rows[(*nrows)++]);
    }
    *rebuilds = clphys_md_rebuilds(pl);
    clphys_md_plan_destroy(pl);
    return st;
}

/* An md row from the kernel and wall time of 100 steps: rate is wall-clock
 * steps/s (what a user gets, as the peers' rows), the kernels' own
 * steps/s is params.kernel_steps_per_s. */
static void md_row(bench_row *r, const char *name, const char *prec, size_t n, double ks, double ws)
{
    fill_common(r, "md", name, prec, n, 1);
    r->kernel_s_median = r->kernel_s_min = ks / 100;
    r->total_s_median = ws / 100;
    r->rate = 100 / ws;
    snprintf(r->rate_unit, sizeof r->rate_unit, "steps/s");
    snprintf(r->flops_convention, sizeof r->flops_convention, "none");
}

int bench_md(bench_run *run)
{
    /* 1. in.lj from LAMMPS's write_data file, checked against LAMMPS's log
     * (its 32,000 atoms: not with --size, which asks for another count) */
    const char *dir = bench_data_dir();
    const int sized = run->size > 0;
    char data[4096], log[4096];
    snprintf(data, sizeof data, "%s/md/in.lj.data.gz", dir);
    snprintf(log, sizeof log, "%s/md/log.lammps.gz", dir);
    double ref[11][6];
    clphys_md_system sys;
    int have = !sized && lammps_rows(log, ref, 11) == 11 && clphys_md_read_lammps_data(data, &sys) == CLPHYS_SUCCESS;
    if (!have && !sized) {
        char why[4200];
        snprintf(why, sizeof why,
                 "%s/md/in.lj.data.gz or log.lammps.gz not readable (set CLPHYS_DATA_DIR to the "
                 "folder of md/in.lj: the source tree's tests/data or the installed share/clphys)",
                 dir);
        bench_fail(run, "md", "in.lj", why);
    }
    /* the peers (LAMMPS on CPUs, OpenMM), here, now, as rows of their own */
    char peers[1024] = "", in_lj[512], in_data[512];
    snprintf(in_lj, sizeof in_lj, "%s/md/in.lj", dir);
    snprintf(in_data, sizeof in_data, "%s/md/in.lj.data.gz", dir);
    if (have) md_peers(run, in_data, in_lj, ref[0][2], peers, sizeof peers);
    if (have) md_peer_lammps_gpu(run, in_lj, 1, ref[0][2], peers, sizeof peers);
    for (char *c = peers; *c; c++)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) *c = '\''; /* JSON string text */
    for (int prec = 0; have && prec < 2; prec++) {
        const char *pn = prec ? "fp64" : "fp32";
        if (!bench_wants_precision(run, pn)) continue;
        clphys_md_lj_variant vs[] = {CLPHYS_MD_LJ_AUTO, CLPHYS_MD_LJ_FULL_TRANSPOSED, CLPHYS_MD_LJ_FULL_CSR,
                                     CLPHYS_MD_LJ_HALF_CAS, CLPHYS_MD_LJ_CPU};
        /* CPUs, quick too: auto (= cpu), half-cas, full-csr (~15 s); GPUs:
         * half-cas with --full (at in.lj's size it is two programs more to
         * build than the lj path's) */
        if (!run->dev->is_gpu) vs[1] = CLPHYS_MD_LJ_HALF_CAS;
        int nv = run->dev->is_gpu ? (run->quick ? 1 : run->full ? 4 : 3) : 3;
        for (int k = 0; k < nv; k++) {
            clphys_md_thermo rows[12];
            int nrows = 0, rebuilds = 0;
            double ks, ws;
            clphys_status st = md_case(run, &sys, prec, vs[k], 100, 10, &ks, &ws, rows, &nrows, &rebuilds);
            char name[48];
            snprintf(name, sizeof name, "in.lj-%s", clphys_md_lj_variant_name(vs[k]));
            if (st == CLPHYS_ERR_UNSUPPORTED) continue;
            if (st) {
                bench_fail(run, "md", name, clphys_last_error(run->ctx));
                continue;
            }
            double err = 0;
            for (int r = 0; r < 11; r++) {
                double got[6] = {(double)rows[r].step, rows[r].temp,   rows[r].pe,
                                 rows[r].ke,           rows[r].etotal, rows[r].press};
                for (int c = 1; c < 6; c++) err = fmax(err, fabs(got[c] - ref[r][c]) / fabs(ref[r][c]));
                if (got[0] != ref[r][0]) err = INFINITY;
            }
            bench_row r;
            md_row(&r, name, pn, sys.n, ks, ws);
            /* fp32 trajectories leave fp64 ones in a chaotic melt: compare loosely */
            r.max_rel_error = err;
            r.verified = err <= (prec ? 1e-6 : 1e-2);
            snprintf(r.params, sizeof r.params,
                     "{\"input\":\"LAMMPS bench/in.lj via write_data\",\"steps\":100,\"dt\":0.005,"
                     "\"r_cut\":2.5,\"skin\":0.3,\"neigh_every\":20,\"neigh_check\":\"no\","
                     "\"rebuilds\":%d,"
                     "\"wall_s_100_steps\":%.6g,\"kernel_s_100_steps\":%.6g,"
                     "\"wall_steps_per_s\":%.6g,\"kernel_steps_per_s\":%.6g,\"peers_not_run\":\"%s\","
                     "\"max_rel_error_vs\":\"LAMMPS 29Sep2021 thermo rows 0..100 (tests/data/md)\","
                     "\"pe_step0\":%.10f,\"etotal_step100\":%.10f}",
                     rebuilds, ws, ks, 100 / ws, 100 / ks, peers, rows[0].pe, rows[nrows - 1].etotal);
            bench_add_row(run, &r);
        }
    }
    if (have) clphys_md_system_destroy(&sys);
    /* 2. in.lj scaled to 80^3 cells = 2,048,000 atoms (GPUs, the full
     * sweep), or to the cube nearest --size N atoms (any device) */
    if (!sized && (run->quick || !run->full || !run->dev->is_gpu)) return 0;
    const int cells = sized ? bench_fcc_cells(run->size) : 80;
    /* 4 cells: the box's edge (6.7) above twice r_cut + skin (5.6) */
    if (sized && (cells < 4 || 4.0 * cells * cells * cells > 0x7fffffff)) {
        char why[160];
        snprintf(why, sizeof why, "--size %lld: in.lj needs 256 to 2^31 - 1 atoms (4 to 812 fcc cells per edge)",
                 run->size);
        bench_fail(run, "md", "in.lj-scaled", why);
        return 0;
    }
    if (clphys_md_fcc(0.8442, cells, 1.44, 87287, &sys)) {
        bench_fail(run, "md", "in.lj-scaled", clphys_last_error(NULL));
        return 0;
    }
    double pe0 = 0; /* step-0 PE per atom of the first fp64 case, else fp32's: the peers' check */
    int pe0_prec = -1;
    for (int prec = 0; prec < 2; prec++) {
        const char *pn = prec ? "fp64" : "fp32";
        if (!bench_wants_precision(run, pn)) continue;
        clphys_md_lj_variant vs[] = {CLPHYS_MD_LJ_FULL_TRANSPOSED, CLPHYS_MD_LJ_FULL_CSR,
                                     CLPHYS_MD_LJ_FULL_GROUP,      CLPHYS_MD_LJ_HALF_CAS,
                                     CLPHYS_MD_LJ_HALF_FIXEDPOINT, CLPHYS_MD_LJ_FULL_STAGED};
        /* CPUs (--size): the three of part 1 */
        const int nv = run->dev->is_gpu ? 6 : 3;
        if (!run->dev->is_gpu) vs[0] = CLPHYS_MD_LJ_CPU, vs[2] = CLPHYS_MD_LJ_HALF_CAS;
        for (int k = 0; k < nv; k++) {
            clphys_md_thermo rows[12];
            int nrows = 0, rebuilds = 0;
            double ks, ws;
            char name[48];
            snprintf(name, sizeof name, "in.lj-x%d-%s", cells, clphys_md_lj_variant_name(vs[k]));
            clphys_status st = md_case(run, &sys, prec, vs[k], 100, 100, &ks, &ws, rows, &nrows, &rebuilds);
            if (st == CLPHYS_ERR_UNSUPPORTED) continue;
            if (st) {
                bench_fail(run, "md", name, clphys_last_error(run->ctx));
                continue;
            }
            if (pe0_prec < prec || pe0_prec < 0) pe0 = rows[0].pe, pe0_prec = prec; /* fp64's if any */
            /* no LAMMPS log at this size: the check is energy conservation,
             * |E(100) - E(0)| / |E(0)| below 1e-2 (in.lj drifts ~2e-3 with
             * the unshifted cutoff) and T(100) in the melt range 0.7..0.8 */
            double drift = fabs(rows[1].etotal - rows[0].etotal) / fabs(rows[0].etotal);
            bench_row r;
            md_row(&r, name, pn, sys.n, ks, ws);
            r.max_rel_error = drift;
            r.verified = drift < 1e-2 && rows[1].temp > 0.7 && rows[1].temp < 0.8;
            snprintf(r.params, sizeof r.params,
                     "{\"input\":\"in.lj scaled, fcc 0.8442, %d^3 cells, T 1.44 (clphys velocities)\","
                     "\"steps\":100,\"neigh_every\":20,\"neigh_check\":\"no\",\"rebuilds\":%d,"
                     "\"wall_s_100_steps\":%.6g,\"kernel_s_100_steps\":%.6g,\"ms_per_step_kernel\":%.6g,"
                     "\"ms_per_step_wall\":%.6g,\"wall_steps_per_s\":%.6g,\"kernel_steps_per_s\":%.6g,"
                     "\"max_rel_error_is\":\"energy drift over 100 steps\",\"temp_step100\":%.6f}",
                     cells, rebuilds, ws, ks, ks * 10, ws * 10, 100 / ws, 100 / ks, rows[1].temp);
            bench_add_row(run, &r);
        }
    }
    /* OpenMM on the same atoms and velocities, from a LAMMPS data file */
    char xdata[256], why[1024];
    snprintf(xdata, sizeof xdata, "/tmp/clphys_bench_md_x%d_%d.data", cells, (int)getpid());
    if (pe0_prec >= 0 && clphys_md_write_lammps_data(xdata, &sys) == CLPHYS_SUCCESS)
        md_peers(run, xdata, NULL, pe0, why, sizeof why);
    /* LAMMPS's GPU package on its own in.lj at the same size (x, y, z 4:
     * the same lattice, LAMMPS's velocities; step-0 energy as clphys's) */
    if (pe0_prec >= 0 && cells % 20 == 0) md_peer_lammps_gpu(run, in_lj, cells / 20, pe0, why, sizeof why);
    remove(xdata);
    clphys_md_system_destroy(&sys);
    return 0;
}
