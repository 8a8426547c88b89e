/* opt.c — see opt.h. */
#include "opt.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *cmd, const char *opt, const char *fmt, const char *s)
{
    fprintf(stderr, "clphys %s: %s: ", cmd, opt);
    fprintf(stderr, fmt, s);
    fputc('\n', stderr);
    return 2;
}

int cli_int(const char *cmd, const char *opt, const char *s, long long lo, long long hi, long long *out)
{
    /* strtoll would skip leading blanks and accept a trailing rest: neither is a number here */
    if (!*s || isspace((unsigned char)s[0])) return fail(cmd, opt, "'%s' is not a whole number", s);
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end) return fail(cmd, opt, "'%s' is not a whole number", s);
    if (errno == ERANGE || v < lo || v > hi) {
        fprintf(stderr, "clphys %s: %s: %s is out of range (%lld .. %lld)\n", cmd, opt, s, lo, hi);
        return 2;
    }
    *out = v;
    return 0;
}

int cli_real(const char *cmd, const char *opt, const char *s, double lo, double hi, int lo_open, double *out)
{
    if (!*s || isspace((unsigned char)s[0])) return fail(cmd, opt, "'%s' is not a number", s);
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end) return fail(cmd, opt, "'%s' is not a number", s);
    if (errno == ERANGE && isfinite(v) && fabs(v) < DBL_MIN)
        return fail(cmd, opt,
                    "'%s' underflows: a magnitude other than 0 below 2.2250738585072014e-308, the smallest "
                    "normal double",
                    s);
    if (!isfinite(v) || errno == ERANGE) return fail(cmd, opt, "'%s' is not a finite number", s);
    /* written so that no comparison lets a NaN through (v is finite here anyway) */
    if (!(lo_open ? v > lo : v >= lo) || !(v <= hi)) {
        if (isinf(hi))
            fprintf(stderr, "clphys %s: %s: %s must be %s %g\n", cmd, opt, s, lo_open ? ">" : ">=", lo);
        else
            fprintf(stderr, "clphys %s: %s: %s is out of range (%s%g .. %g]\n", cmd, opt, s, lo_open ? "(" : "[", lo,
                    hi);
        return 2;
    }
    *out = v;
    return 0;
}

int cli_dims(const char *cmd, const char *opt, const char *s, int ndims, long long lo, long long hi, int *out)
{
    int v[16];
    if (ndims < 1 || ndims > 16) return fail(cmd, opt, "bad option table for '%s'", s);
    const char *p = s;
    for (int d = 0; d < ndims; d++) {
        size_t len = strcspn(p, "x");
        char part[32];
        if (len == 0 || len >= sizeof part || (d < ndims - 1 && p[len] != 'x') || (d == ndims - 1 && p[len])) {
            fprintf(stderr, "clphys %s: %s: '%s' is not %d whole numbers joined by 'x' (e.g. %s)\n", cmd, opt, s, ndims,
                    ndims == 4   ? "1x1x2x2"
                    : ndims == 3 ? "64x64x16"
                                 : "8x8");
            return 2;
        }
        memcpy(part, p, len);
        part[len] = 0;
        long long x;
        if (cli_int(cmd, opt, part, lo, hi, &x)) return 2;
        v[d] = (int)x;
        p += len + 1;
    }
    memcpy(out, v, (size_t)ndims * sizeof *out);
    return 0;
}

int cli_choice(const char *cmd, const char *opt, const char *s, const char *choices, int *out)
{
    int k = 0;
    size_t n = strlen(s);
    for (const char *c = choices; *c; k++) {
        size_t len = strcspn(c, "|");
        if (len == n && !strncmp(c, s, n)) {
            *out = k;
            return 0;
        }
        c += len + (c[len] == '|');
    }
    fprintf(stderr, "clphys %s: %s: '%s' is not one of ", cmd, opt, s);
    for (const char *c = choices; *c;) {
        size_t len = strcspn(c, "|");
        fprintf(stderr, "%.*s%s", (int)len, c, c[len] ? ", " : "\n");
        c += len + (c[len] == '|');
    }
    return 2;
}

/* A table's double bound as a long long: 2^63 and beyond (LLONG_MAX as a
 * double rounds up to 2^63) would overflow the conversion. */
static long long ll_bound(double x) { return x >= 0x1p63 ? LLONG_MAX : x <= -0x1p63 ? LLONG_MIN : (long long)x; }

static int take(const char *cmd, const cli_opt *o, const char *v)
{
    long long i;
    switch (o->kind) {
    case CLI_FLAG:
        *(int *)o->out = 1;
        return 0;
    case CLI_STRING:
        if (!*v) return fail(cmd, o->name, "%sneeds a non-empty value", "");
        *(const char **)o->out = v;
        return 0;
    case CLI_INT:
        if (cli_int(cmd, o->name, v, ll_bound(o->lo), ll_bound(o->hi), &i)) return 2;
        *(long long *)o->out = i;
        return 0;
    case CLI_REAL:
        return cli_real(cmd, o->name, v, o->lo, o->hi, o->lo_open, (double *)o->out);
    case CLI_CHOICE:
        return cli_choice(cmd, o->name, v, o->choices, (int *)o->out);
    case CLI_DIMS:
        return cli_dims(cmd, o->name, v, o->ndims, (long long)o->lo, (long long)o->hi, (int *)o->out);
    }
    return fail(cmd, o->name, "bad option table%s", "");
}

int cli_parse(const char *cmd, int argc, char **argv, const cli_opt *opts, const char **pos, int max_pos, int *npos,
              int *help)
{
    int nopt = 0;
    while (opts[nopt].name) nopt++;
    char seen[256] = {0};
    if (nopt > (int)sizeof seen) return fail(cmd, "options", "too many in the table%s", "");
    if (npos) *npos = 0;
    if (help) *help = 0;
    for (int a = 1; a < argc; a++) {
        const char *w = argv[a];
        if (!strcmp(w, "--help") || !strcmp(w, "-h")) {
            if (help) *help = 1;
            return 0;
        }
        if (strncmp(w, "--", 2) != 0 || !w[2]) {
            if (!pos || !npos || *npos >= max_pos) {
                fprintf(stderr, "clphys %s: unexpected argument '%s' (clphys %s --help lists the options)\n", cmd, w,
                        cmd);
                return 2;
            }
            pos[(*npos)++] = w;
            continue;
        }
        const char *eq = strchr(w, '=');
        size_t len = eq ? (size_t)(eq - w) : strlen(w);
        int k = 0;
        while (k < nopt && !(strlen(opts[k].name) == len && !strncmp(opts[k].name, w, len))) k++;
        if (k == nopt) {
            fprintf(stderr, "clphys %s: unknown option '%.*s' (clphys %s --help lists the options)\n", cmd, (int)len, w,
                    cmd);
            return 2;
        }
        const cli_opt *o = &opts[k];
        if (seen[k]) return fail(cmd, o->name, "given twice%s", "");
        seen[k] = 1;
        const char *v = NULL;
        if (o->kind == CLI_FLAG) {
            if (eq) return fail(cmd, o->name, "takes no value (got '%s')", eq + 1);
        } else if (eq) {
            v = eq + 1;
        } else if (a + 1 < argc && !(argv[a + 1][0] == '-' && argv[a + 1][1] == '-' && argv[a + 1][2])) {
            v = argv[++a]; /* a following "--word" is the next option, not this one's value */
        } else {
            return fail(cmd, o->name, "needs a value%s", "");
        }
        if (take(cmd, o, v)) return 2;
        if (o->given) *o->given = 1;
    }
    return 0;
}
