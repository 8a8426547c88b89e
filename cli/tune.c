/* tune.c — `clphys tune`: run each path's tuner on one device and print
 * what it chose (the library writes the tuning cache; clphys.h, "Tuning").
 * The tuners are those the paths register (cli_tuners.h, from meson's
 * tuners list). */
#include "cli.h"
#include "old_names.h"
#include "opt.h"

#include <stdio.h>
#include <sys/stat.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const char *name;
    clphys_status (*fn)(clphys_context *, const clphys_tune_options *);
} tuner;

/* In the order of the path list (meson.build: paths). */
static const tuner tuners[] = {
#define CLI_TUNER(name, function) {#name, function},
#include "cli_tuners.h"
#undef CLI_TUNER
};
enum { NTUNERS = sizeof tuners / sizeof tuners[0] };

static void usage(FILE *out)
{
    fprintf(out, "usage: clphys tune [--device SPEC] [--path NAME[,NAME...]] [--quick]\n"
                 "  Times the kernel variants and their options of each path at a few representative sizes,\n"
                 "  both precisions, and writes the fastest per device, path, precision and size class into the\n"
                 "  tuning cache, which plans asked for AUTO then read (clphys devices: whether a device is tuned).\n"
                 "  --path   paths to tune (default: all):");
    for (int i = 0; i < NTUNERS; i++) fprintf(out, " %s", tuners[i].name);
    fprintf(out, "\n"
                 "           (the lattice solvers have no tuner: their dslash is tuned; docs/usage.md)\n"
                 "  --quick  one small size per path and fewer candidates (tests, CI)\n"
                 "Prints per choice: the case, the choice, its time, the untuned (heuristic) choice's time and\n"
                 "the candidates timed.\n");
}

typedef struct {
    int tty;
    double t0;
    int choices;
} report;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void on_progress(void *user, const char *path, int k, int n, const char *what)
{
    report *r = user;
    const double el = now() - r->t0;
    /* a terminal gets one line rewritten in place; a log gets every line */
    if (r->tty)
        fprintf(stderr, "\r\033[K%s: case %d of %d (%s), %.0f s", path, k, n, what, el);
    else
        fprintf(stderr, "clphys tune: %s: case %d of %d (%s), %.0f s\n", path, k, n, what, el);
    fflush(stderr);
}

/* The words of src less those that are bookkeeping (the tuner's version or
 * candidate set, the stored times, which the time column shows). */
static void shown(char *dst, size_t n, const char *src)
{
    size_t o = 0;
    dst[0] = 0;
    for (const char *p = src; *p && o + 1 < n;) {
        p += strspn(p, " ");
        const size_t w = strcspn(p, " ");
        if (w && strncmp(p, "tuner=", 6) && strncmp(p, "candidates=", 11) && strncmp(p, "s=", 2) &&
            strncmp(p, "half_hop_s=", 11) && strncmp(p, "stencil_s=", 10))
            o += (size_t)snprintf(dst + o, n - o, "%s%.*s", o ? " " : "", (int)w, p);
        p += w;
    }
}

static void on_chosen(void *user, const clphys_tune_choice *c)
{
    report *r = user;
    if (r->tty) fprintf(stderr, "\r\033[K");
    char fields[256], choice[256];
    shown(fields, sizeof fields, c->fields);
    shown(choice, sizeof choice, c->choice);
    char untuned[48] = "-";
    if (c->untuned_s > 0)
        snprintf(untuned, sizeof untuned, "%.4g ms (x%.2f)", 1e3 * c->untuned_s, c->untuned_s / c->best_s);
    printf("%-13s %-4s %-10s %-40s %-58s %10.4g ms  %-20s %3d\n", c->path, c->precision, c->what, fields, choice,
           1e3 * c->best_s, untuned, c->candidates);
    fflush(stdout);
    r->choices++;
}

/* The tuners named in list (comma-separated); NULL or "": all. 0, or 2
 * after naming the unknown one. */
static int select_paths(const char *list, int on[NTUNERS])
{
    for (int i = 0; i < NTUNERS; i++) on[i] = !list || !*list;
    for (const char *p = list; p && *p;) {
        const size_t n = strcspn(p, ",");
        int found = 0;
        for (int i = 0; i < NTUNERS; i++)
            if (strlen(tuners[i].name) == n && !strncmp(p, tuners[i].name, n)) on[i] = found = 1;
        if (!found) {
            fprintf(stderr, "clphys tune: --path: unknown path '%.*s' (", (int)n, p);
            for (int i = 0; i < NTUNERS; i++) fprintf(stderr, "%s%s", i ? ", " : "", tuners[i].name);
            fprintf(stderr, ")\n");
            return 2;
        }
        p += n + (p[n] == ',');
    }
    return 0;
}

/* 0 when the tuning cache file can be written (its folder made, a
 * temporary file created there and removed); else 1, having said why. */
static int cache_unwritable(const char *file)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        for (char *p = dir + 1; *p; p++)
            if (*p == '/') *p = 0, mkdir(dir, 0755), *p = '/';
        mkdir(dir, 0755);
    }
    FILE *f;
    char tmp[4200];
    if (clphys_output_open(file, &f, tmp, sizeof tmp) == CLPHYS_SUCCESS) {
        clphys_output_close(f, tmp, file, 0);
        return 0;
    }
    fprintf(stderr,
            "clphys tune: the tuning cache cannot be written, so no choice would be kept: %s; set CLPHYS_CACHE_DIR "
            "to a writable folder\n",
            clphys_last_error(NULL));
    return 1;
}

int cmd_tune(int argc, char **argv)
{
    const char *device = NULL, *paths = NULL;
    int quick = 0, help = 0, on[NTUNERS];
    const cli_opt opts[] = {
        CLI_OPT_STRING("--device", &device),
        CLI_OPT_STRING("--path", &paths),
        CLI_OPT_FLAG("--quick", &quick),
        CLI_OPT_END,
    };
    if (cli_parse("tune", argc, argv, opts, NULL, 0, NULL, &help)) return 2;
    if (help) {
        usage(stdout);
        return 0;
    }
    if (cli_new_path_names("tune", &paths)) return 2; /* the names before docs/naming.md, one release */
    if (select_paths(paths, on)) return 2;
    clphys_context *ctx = NULL;
    clphys_status st = clphys_context_create(device, &ctx);
    if (st) return cli_fail("tune", st, NULL);
    const clphys_device_info *d = clphys_context_device(ctx);
    clphys_tune_status s;
    if (clphys_tune_status_get(d, &s) == CLPHYS_SUCCESS) {
        if (!*s.file)
            fprintf(stderr, "clphys tune: the cache is disabled (CLPHYS_NO_CACHE): the choices are shown, not kept\n");
        else if (cache_unwritable(s.file))
            return cli_context_done(ctx, 1);
    }
    report r = {.tty = isatty(STDERR_FILENO), .t0 = now()};
    const clphys_tune_options o = {
        .struct_size = sizeof o, .quick = quick, .progress = on_progress, .chosen = on_chosen, .user = &r};
    printf("# clphys tune%s on %s (%s, %s)\n", quick ? " --quick" : "", d->name, d->platform, d->driver_version);
    printf("%-13s %-4s %-10s %-40s %-58s %13s  %-20s %3s\n", "path", "prec", "what", "case", "choice", "time",
           "untuned", "candidates");
    int rc = 0;
    for (int i = 0; i < NTUNERS; i++) {
        if (!on[i]) continue;
        const double t = now();
        st = tuners[i].fn(ctx, &o);
        if (r.tty) fprintf(stderr, "\r\033[K");
        if (st) {
            rc = cli_fail("tune", st, ctx); /* the other paths still run */
            continue;
        }
        fprintf(stderr, "clphys tune: %s tuned in %.1f s\n", tuners[i].name, now() - t);
    }
    if (clphys_tune_status_get(d, &s) == CLPHYS_SUCCESS) {
        if (!rc && r.choices > 0 && *s.file && s.entries <= 0) {
            fprintf(stderr, "clphys tune: %d choices made, but the tuning cache %s holds none\n", r.choices, s.file);
            rc = 1;
        }
        printf("# %d choices; tuning cache %s: %d entries, tuned paths: %s\n", r.choices,
               *s.file ? s.file : "(disabled)", s.entries, *s.paths ? s.paths : "none");
    }
    return cli_context_done(ctx, rc);
}
