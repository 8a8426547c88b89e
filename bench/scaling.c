/* scaling.c — the scaling schema's arithmetic and JSON (scaling.h). */
#include "scaling.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

double bench_scaling_speedup(const bench_scaling *s)
{
    if (s->weak || !(s->baseline_s > 0) || !(s->step_s > 0)) return 0;
    return s->baseline_s / s->step_s;
}

double bench_scaling_efficiency(const bench_scaling *s)
{
    if (!(s->baseline_s > 0) || !(s->step_s > 0) || s->gpus < 1) return 0;
    return s->weak ? s->baseline_s / s->step_s : s->baseline_s / s->step_s / s->gpus;
}

/* a JSON number, or null for a figure that was not measured */
static int num(char *buf, size_t len, const char *key, double v)
{
    return v < 0 ? snprintf(buf, len, ",\"%s\":null", key) : snprintf(buf, len, ",\"%s\":%.6g", key, v);
}

int bench_scaling_json(const bench_scaling *s, char *buf, size_t len)
{
    int c = snprintf(buf, len, "\"gpus\":%d,\"ranks\":%d,\"scaling\":\"%s\",\"n_per_device\":%lld", s->gpus, s->ranks,
                     s->weak ? "weak" : "strong", s->n_per_device);
    c += num(buf + (c < (int)len ? c : (int)len), c < (int)len ? len - c : 0, "baseline_s", s->baseline_s);
    c += snprintf(buf + (c < (int)len ? c : (int)len), c < (int)len ? len - c : 0, ",\"step_s\":%.6g", s->step_s);
    const double sp = s->baseline_s < 0 ? -1 : bench_scaling_speedup(s);
    if (s->weak)
        c += snprintf(buf + (c < (int)len ? c : (int)len), c < (int)len ? len - c : 0, ",\"speedup\":null");
    else
        c += num(buf + (c < (int)len ? c : (int)len), c < (int)len ? len - c : 0, "speedup", sp);
    c += num(buf + (c < (int)len ? c : (int)len), c < (int)len ? len - c : 0, "efficiency",
             s->baseline_s < 0 ? -1 : bench_scaling_efficiency(s));
    c += num(buf + (c < (int)len ? c : (int)len), c < (int)len ? len - c : 0, "exchange_s", s->exchange_s);
    c += num(buf + (c < (int)len ? c : (int)len), c < (int)len ? len - c : 0, "exchange_floor_s", s->exchange_floor_s);
    return c;
}

int bench_scaling_row(bench_row *r, const bench_scaling *s, const char *path, const char *precision, long long n,
                      int repeat, const char *variant, ...)
{
    memset(r, 0, sizeof *r);
    snprintf(r->path, sizeof r->path, "%s", path);
    snprintf(r->precision, sizeof r->precision, "%s", precision);
    r->n = n;
    r->repeat = repeat;
    va_list ap;
    va_start(ap, variant);
    vsnprintf(r->variant, sizeof r->variant, variant, ap);
    va_end(ap);
    r->params[0] = '{';
    const int c = 1 + bench_scaling_json(s, r->params + 1, sizeof r->params - 1);
    return c < (int)sizeof r->params ? c : (int)sizeof r->params - 1;
}
