/* progress.c — see progress.h. */
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

void cli_progress_start(cli_progress *p, const char *name, const char *unit, int prints)
{
    *p = (cli_progress){.on = prints && isatty(STDERR_FILENO), .name = name, .unit = unit};
    p->t0 = p->last = now();
}

void cli_progress_show(cli_progress *p, long long done, long long total)
{
    if (!p->on || total <= 0) return;
    const double t = now();
    if (t - p->last < 0.2) return;
    p->last = t;
    const double rate = done > 0 ? done / (t - p->t0) : 0;
    const double left = rate > 0 ? (total - done) / rate : 0;
    fprintf(stderr, "\r\033[Kclphys %s: %s %lld of %lld (%.0f%%), %.4g %s/s", p->name, p->unit, done, total,
            100.0 * done / total, rate, p->unit);
    if (rate > 0) {
        if (left >= 60)
            fprintf(stderr, ", %dm%02ds left", (int)(left / 60), (int)left % 60);
        else
            fprintf(stderr, ", %.0fs left", left);
    }
    fflush(stderr);
    p->shown = 1;
}

void cli_progress_clear(cli_progress *p)
{
    if (!p->on || !p->shown) return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    p->shown = 0;
}
