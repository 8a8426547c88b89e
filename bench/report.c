/* report.c — the benchmark table and the JSON file (keys: docs/design.md, bench/results/README.md). */
#include "bench.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void print_auto(const bench_run *run, FILE *out);

/* The share of the host's CPU time since the start that a hypervisor took
 * (steal / (busy + steal)); -1 where the host does not say. */
static double steal_fraction(const bench_run *run)
{
    double busy, steal;
    if (run->cpu_busy0 < 0 || bench_host_cpu(&busy, &steal)) return -1;
    const double db = busy - run->cpu_busy0, ds = steal - run->cpu_steal0;
    return db + ds > 0 ? ds / (db + ds) : 0;
}

/* "%9.1f" of v, or "-" where the column does not apply to the row (0: the
 * path has no flop or byte model, e.g. md's steps/s rows). */
static const char *cell(char *buf, size_t n, const char *fmt, double v)
{
    if (v > 0)
        snprintf(buf, n, fmt, v);
    else
        snprintf(buf, n, "-");
    return buf;
}

/* What says the CPU figures of this run are disturbed, into why[] ("" when
 * nothing does): hypervisor steal over 5% of the CPU time, or a host that
 * was already busy when the run began (a 1-minute load average above half
 * its CPUs: other work then shares the cores the run measures), or more
 * runnable threads at the end than CPUs beyond the run's own (the load
 * average above CPUs + 1). */
static void disturbed(const bench_run *run, char *why, size_t n)
{
    why[0] = 0;
    const double st = steal_fraction(run);
    double load[3];
    int cpus;
    const int have = !bench_host_load(load, &cpus);
    size_t at = 0;
    if (st > 0.05) at += snprintf(why + at, n - at, "the hypervisor took %.0f%% of the CPU time (steal)", 100 * st);
    if (have && run->load0[0] > 0.5 * cpus && at < n)
        at += snprintf(why + at, n - at, "%sthe load average was %.2f on %d CPUs as the run began", at ? "; " : "",
                       run->load0[0], cpus);
    if (have && load[0] > cpus + 1 && at < n)
        snprintf(why + at, n - at, "%sthe load average is %.2f on %d CPUs at the end", at ? "; " : "", load[0], cpus);
}

void bench_print_table(const bench_run *run, FILE *out)
{
    char g[32], b[32], l[32];
    fprintf(out, "\n%-9s %-24s %-4s %10s %11s %11s %12s %-18s %9s %9s %7s %9s %s\n", "path", "variant", "prec", "n",
            "kernel_ms", "total_ms", "rate", "unit", "GFLOP/s", "GB/s", "%limit", "max_rel", "ok");
    for (int i = 0; i < run->nrows; i++) {
        const bench_row *r = &run->rows[i];
        fprintf(out, "%-9s %-24s %-4s %10lld %11.4f %11.4f %12.4g %-18s %9s %9s %7s %9.2e %s\n", r->path, r->variant,
                r->precision, r->n, 1e3 * r->kernel_s_median, 1e3 * r->total_s_median, r->rate, r->rate_unit,
                cell(g, sizeof g, "%.1f", r->gflops), cell(b, sizeof b, "%.1f", r->bytes_per_s / 1e9),
                cell(l, sizeof l, "%.1f%%", 100.0 * r->fraction_of_limit), r->max_rel_error,
                r->verified ? "yes" : "NO");
    }
    print_auto(run, out);
    /* CPU timings on a VM are only as good as the CPU time it got */
    char why[512];
    disturbed(run, why, sizeof why);
    if (why[0])
        fprintf(out, "\nwarning: %s; the timings of CPU devices (and the host's share of GPU rows) are disturbed\n",
                why);
    /* each distinct note once, after the rows it concerns */
    for (int i = 0; i < run->nrows; i++) {
        const char *note = run->rows[i].note;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = !strcmp(run->rows[j].note, note);
        if (!note[0] || seen) continue;
        fprintf(out, "  note (%s %s", run->rows[i].path, run->rows[i].variant);
        int more = 0;
        for (int j = i + 1; j < run->nrows; j++)
            if (!strcmp(run->rows[j].note, note)) more++;
        if (more) fprintf(out, " and %d more row%s", more, more > 1 ? "s" : "");
        fprintf(out, "): %s\n", note);
    }
}

/* The fastest verified row of r's case (r itself when none is faster). */
static const bench_row *best_of_case(const bench_run *run, const bench_row *r)
{
    const bench_row *b = r;
    for (int i = 0; i < run->nrows; i++) {
        const bench_row *o = &run->rows[i];
        if (!strcmp(o->path, r->path) && !strcmp(o->precision, r->precision) && o->n == r->n &&
            !strcmp(o->case_key, r->case_key) && (o->verified || !run->verify) && o->kernel_s_median > 0 &&
            o->kernel_s_median < b->kernel_s_median && strcmp(o->variant, "c-openmp") &&
            strcmp(o->variant, "c-reference"))
            b = o;
    }
    return b;
}

/* auto's time over the best's: the median of the round-by-round ratios
 * when both were timed in the same interleaved rounds (*paired = 1: the
 * drift of the machine's speed cancels), else the ratio of their medians. */
static double auto_ratio(const bench_row *r, const bench_row *b, int *paired)
{
    *paired = 0;
    if (r == b) return 1;
    if (r->nrounds > 0 && r->nrounds == b->nrounds) {
        double q[BENCH_MAX_ROUNDS];
        int n = 0;
        for (int k = 0; k < r->nrounds; k++)
            if (r->round_s[k] > 0 && b->round_s[k] > 0) q[n++] = r->round_s[k] / b->round_s[k];
        if (n == r->nrounds) {
            *paired = 1;
            return ref_median(q, n);
        }
    }
    return r->kernel_s_median / b->kernel_s_median;
}

/* Per case, what auto chose and how far it is from the fastest variant the
 * same run measured. */
static void print_auto(const bench_run *run, FILE *out)
{
    int any = 0;
    for (int i = 0; i < run->nrows; i++) {
        const bench_row *r = &run->rows[i];
        if (!r->auto_choice[0]) continue;
        const bench_row *b = best_of_case(run, r);
        if (!any++)
            fprintf(out,
                    "\nauto: what a plan left to auto chose, against the fastest variant of the same case\n"
                    "%-9s %-4s %10s %-12s %-56s %11s %-24s %11s %8s\n",
                    "path", "prec", "n", "case", "auto_choice", "kernel_ms", "best", "best_ms", "vs_best");
        int paired;
        const double q = auto_ratio(r, b, &paired);
        fprintf(out, "%-9s %-4s %10lld %-12s %-56.56s %11.4f %-24s %11.4f %7.3fx%s\n", r->path, r->precision, r->n,
                r->case_key, r->auto_choice, 1e3 * r->kernel_s_median, b->variant, 1e3 * b->kernel_s_median, q,
                paired ? " (paired)" : "");
    }
}

static cJSON *row_json(const bench_run *run, const bench_row *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", r->path);
    cJSON_AddStringToObject(o, "variant", r->variant);
    cJSON_AddStringToObject(o, "precision", r->precision);
    cJSON_AddNumberToObject(o, "n", (double)r->n);
    cJSON *params = r->params[0] ? cJSON_Parse(r->params) : NULL;
    cJSON_AddItemToObject(o, "params", params ? params : cJSON_CreateObject());
    cJSON_AddNumberToObject(o, "repeat", r->repeat);
    cJSON_AddNumberToObject(o, "kernel_s_median", r->kernel_s_median);
    cJSON_AddNumberToObject(o, "kernel_s_min", r->kernel_s_min);
    cJSON_AddNumberToObject(o, "total_s_median", r->total_s_median);
    cJSON_AddNumberToObject(o, "rate", r->rate);
    cJSON_AddStringToObject(o, "rate_unit", r->rate_unit);
    cJSON_AddNumberToObject(o, "gflops", r->gflops);
    cJSON_AddStringToObject(o, "flops_convention", r->flops_convention);
    cJSON_AddNumberToObject(o, "bytes_per_s", r->bytes_per_s);
    cJSON_AddStringToObject(o, "byte_model", r->byte_model);
    cJSON_AddNumberToObject(o, "fraction_of_limit", r->fraction_of_limit);
    cJSON_AddStringToObject(o, "limit", r->limit);
    cJSON_AddNumberToObject(o, "max_rel_error", r->max_rel_error);
    cJSON_AddBoolToObject(o, "verified", r->verified);
    if (r->nrounds > 0) {
        cJSON *rs = cJSON_AddArrayToObject(o, "kernel_s_rounds");
        for (int k = 0; k < r->nrounds; k++) cJSON_AddItemToArray(rs, cJSON_CreateNumber(r->round_s[k]));
    }
    if (r->note[0]) cJSON_AddStringToObject(o, "note", r->note);
    if (r->auto_choice[0]) {
        const bench_row *b = best_of_case(run, r);
        cJSON_AddStringToObject(o, "auto_choice", r->auto_choice);
        int paired;
        cJSON_AddNumberToObject(o, "auto_vs_best", auto_ratio(r, b, &paired));
        cJSON_AddStringToObject(o, "best_variant", b->variant);
        cJSON_AddStringToObject(o, "auto_vs_best_method",
                                paired ? "median of round-by-round ratios (interleaved rounds)" : "ratio of medians");
    }
    return o;
}

int bench_write_json(const bench_run *run, const char *file, char *err, size_t errlen)
{
    cJSON *root = cJSON_CreateObject();
    char date[32], host[256] = "unknown";
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    gethostname(host, sizeof host - 1);
    cJSON_AddStringToObject(root, "clphys_version", clphys_version());
    cJSON_AddStringToObject(root, "date", date);
    cJSON_AddStringToObject(root, "host", host);
    const clphys_device_info *d = run->dev;
    cJSON *dev = cJSON_AddObjectToObject(root, "device");
    cJSON_AddStringToObject(dev, "name", d->name);
    cJSON_AddStringToObject(dev, "vendor", d->vendor);
    cJSON_AddStringToObject(dev, "platform", d->platform);
    cJSON_AddStringToObject(dev, "driver_version", d->driver_version);
    cJSON_AddStringToObject(dev, "device_version", d->device_version);
    cJSON_AddStringToObject(dev, "opencl_c_version", d->opencl_c_version);
    cJSON_AddStringToObject(dev, "type", d->is_gpu ? "GPU" : d->is_cpu ? "CPU" : "other");
    cJSON_AddNumberToObject(dev, "compute_units", d->compute_units);
    cJSON_AddNumberToObject(dev, "clock_mhz", d->clock_mhz);
    cJSON_AddNumberToObject(dev, "global_mem_bytes", (double)d->global_mem_bytes);
    cJSON *lim = cJSON_AddObjectToObject(root, "limits");
    cJSON_AddNumberToObject(lim, "copy_bytes_per_s", run->limits.copy_bytes_per_s);
    cJSON_AddNumberToObject(lim, "triad_bytes_per_s", run->limits.triad_bytes_per_s);
    cJSON_AddNumberToObject(lim, "fma_fp32_flops", run->limits.fma_fp32_flops);
    cJSON_AddNumberToObject(lim, "fma_fp64_flops", run->limits.fma_fp64_flops);
    cJSON_AddNumberToObject(lim, "buffer_bytes", (double)run->limits.buffer_bytes);
    cJSON_AddNumberToObject(lim, "repeat", run->limits.repeat);
    if (run->xfer.bytes) {
        cJSON *x = cJSON_AddObjectToObject(lim, "transfers");
        cJSON_AddNumberToObject(x, "h2d_bytes_per_s", run->xfer.h2d_bytes_per_s);
        cJSON_AddNumberToObject(x, "d2h_bytes_per_s", run->xfer.d2h_bytes_per_s);
        cJSON_AddNumberToObject(x, "duplex_bytes_per_s", run->xfer.duplex_bytes_per_s);
        cJSON_AddNumberToObject(x, "host_copy_bytes_per_s", run->xfer.host_copy_bytes_per_s);
        cJSON_AddNumberToObject(x, "bytes", (double)run->xfer.bytes);
        cJSON_AddNumberToObject(x, "repeat", run->xfer.repeat);
    }
    /* the whole run, as the user waited for it, and what was asked */
    cJSON_AddNumberToObject(root, "run_wall_s", bench_now() - run->t_start);
    cJSON *av = cJSON_AddArrayToObject(root, "argv");
    cJSON_AddItemToArray(av, cJSON_CreateString("clphys"));
    for (int i = 0; i < run->argc; i++) cJSON_AddItemToArray(av, cJSON_CreateString(run->argv[i]));
    cJSON_AddBoolToObject(root, "full_sweep", run->full);
    cJSON_AddNumberToObject(root, "host_cpu_steal_fraction", steal_fraction(run));
    /* the load averages (1, 5, 15 min) at the start and the end, beside steal: a busy host disturbs CPU figures */
    double load[3];
    int cpus;
    if (!bench_host_load(load, &cpus) && run->load0[0] >= 0) {
        cJSON_AddItemToObject(root, "host_load_avg_start", cJSON_CreateDoubleArray(run->load0, 3));
        cJSON_AddItemToObject(root, "host_load_avg_end", cJSON_CreateDoubleArray(load, 3));
        cJSON_AddNumberToObject(root, "host_cpus", cpus);
    }
    char why[512];
    disturbed(run, why, sizeof why);
    if (why[0]) cJSON_AddStringToObject(root, "host_disturbed", why);
    cJSON *rows = cJSON_AddArrayToObject(root, "results");
    for (int i = 0; i < run->nrows; i++) cJSON_AddItemToArray(rows, row_json(run, &run->rows[i]));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) {
        snprintf(err, errlen, "out of memory formatting JSON");
        return -1;
    }
    /* Atomic: a reader never sees a half-written file. */
    size_t n = strlen(file) + 32;
    char *tmp = malloc(n);
    int rc = -1;
    if (tmp) {
        snprintf(tmp, n, "%s.tmp.%ld", file, (long)getpid());
        FILE *f = fopen(tmp, "w");
        if (!f) {
            snprintf(err, errlen, "cannot write %s", tmp);
        } else {
            int ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
            ok = fclose(f) == 0 && ok;
            if (ok && rename(tmp, file) == 0)
                rc = 0;
            else {
                snprintf(err, errlen, "writing %s failed", file);
                remove(tmp);
            }
        }
        free(tmp);
    }
    free(text);
    return rc;
}
