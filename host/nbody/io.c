/* io.c — N-body systems: the NBabel text format (read with errors
 * naming file and line, written atomically via temp + rename) and energies. */
#include "clphys_nbody.h"
#include "platform/platform.h"
#include "platform/textfile.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void clphys_nbody_system_destroy(clphys_nbody_system *s)
{
    if (!s) return;
    free(s->x);
    free(s->v);
    s->x = s->v = NULL;
    s->n = 0;
}

#define NBODY_VALUE_MAX    1e100
#define NBODY_POSITION_MIN 1e-100

static clphys_status grow(clphys_context *ctx, clphys_nbody_system *s, size_t *cap)
{
    size_t c = *cap ? 2 * *cap : 1024;
    double *x = c <= SIZE_MAX / (4 * sizeof *x) ? realloc(s->x, c * 4 * sizeof *x) : NULL;
    if (x) s->x = x;
    double *v = x ? realloc(s->v, c * 3 * sizeof *v) : NULL;
    if (!x || !v) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "nbody: %zu particles", c);
    s->v = v;
    *cap = c;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_nbody_read(clphys_context *ctx, const char *file, clphys_nbody_system *out)
{
    if (!file || !out) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "nbody read: NULL argument");
    memset(out, 0, sizeof *out);
    cp_textfile *f;
    clphys_status ost = cp_text_open(ctx, file, "NBabel", &f);
    if (ost) return ost;
    clphys_nbody_system s = {0, NULL, NULL};
    size_t cap = 0;
    char line[4096];
    long lineno = 0;
    clphys_status st = CLPHYS_SUCCESS;
    double mtot = 0;
    for (;;) {
        /* a line; binary data (a NUL: /dev/zero would otherwise read as
           endless blank lines) is an error; gzip-compressed files read as
           their text (platform/textfile.h) */
        size_t len;
        if (!cp_text_line(f, line, sizeof line, &len, lineno + 1, &st)) break;
        lineno++;
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '\n' || *p == '\r' || *p == 0 || *p == '#') continue;
        double val[8];
        int k = 0;
        for (;;) {
            while (*p == ' ' || *p == '\t') p++;
            if (*p == '\n' || *p == '\r' || *p == 0) break;
            char *end;
            errno = 0;
            double d = strtod(p, &end);
            if (end == p || (*end && *end != ' ' && *end != '\t' && *end != '\n' && *end != '\r')) {
                st = cp_error(ctx, CLPHYS_ERR_FORMAT, "%s:%ld: field %d is not a number", file, lineno, k + 1);
                break;
            }
            if (k < 8) val[k] = d;
            k++;
            p = end;
        }
        if (st) break;
        if (k != 8) {
            st = cp_error(ctx, CLPHYS_ERR_FORMAT, "%s:%ld: %d fields, expected 8 (id m x y z vx vy vz)", file, lineno,
                          k);
            break;
        }
        for (int c = 1; c < 8; c++)
            if (!isfinite(val[c])) {
                st =
                    cp_error(ctx, CLPHYS_ERR_INPUT, "%s:%ld: field %d is not finite (%g)", file, lineno, c + 1, val[c]);
                break;
            }
        if (st) break;
        if (val[1] < 0) {
            st = cp_error(ctx, CLPHYS_ERR_INPUT, "%s:%ld: negative mass %g", file, lineno, val[1]);
            break;
        }
        /* bounds that keep m v^2, G m m / r and r^2 finite and nonzero in
           double precision (clphys_nbody_read says them) */
        for (int c = 1; c < 8; c++) {
            const double a = fabs(val[c]);
            if (a > NBODY_VALUE_MAX)
                st =
                    cp_error(ctx, CLPHYS_ERR_INPUT, "%s:%ld: field %d = %g: |%s| above %g", file, lineno, c + 1, val[c],
                             c == 1  ? "mass"
                             : c < 5 ? "coordinate"
                                     : "velocity",
                             NBODY_VALUE_MAX);
            else if (c >= 2 && c < 5 && a > 0 && a < NBODY_POSITION_MIN)
                st = cp_error(ctx, CLPHYS_ERR_INPUT,
                              "%s:%ld: field %d = %g: a coordinate other than 0 below %g in magnitude (distances "
                              "this small square to below what double precision holds)",
                              file, lineno, c + 1, val[c], NBODY_POSITION_MIN);
            if (st) break;
        }
        if (st) break;
        if (s.n == cap && (st = grow(ctx, &s, &cap))) break;
        for (int c = 0; c < 4; c++) s.x[4 * s.n + c] = c < 3 ? val[2 + c] : val[1];
        for (int c = 0; c < 3; c++) s.v[3 * s.n + c] = val[5 + c];
        mtot += val[1];
        s.n++;
    }
    cp_text_close(f);
    if (!st && s.n == 0) st = cp_error(ctx, CLPHYS_ERR_INPUT, "%s: no particles", file);
    if (!st && !(mtot > 0)) st = cp_error(ctx, CLPHYS_ERR_INPUT, "%s: total mass %g is not positive", file, mtot);
    if (st) {
        clphys_nbody_system_destroy(&s);
        return st;
    }
    *out = s;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_nbody_write(clphys_context *ctx, const char *file, const clphys_nbody_system *s)
{
    if (!file || !s || (s->n > 0 && (!s->x || !s->v)))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "nbody write: NULL argument");
    char tmp[4200];
    FILE *f;
    clphys_status st = clphys_output_open(file, &f, tmp, sizeof tmp);
    if (st) return ctx ? cp_error(ctx, st, "%s", clphys_last_error(NULL)) : st;
    int bad = 0;
    for (size_t i = 0; i < s->n && !bad; i++) {
        const double *x = s->x + 4 * i, *v = s->v + 3 * i;
        bad = fprintf(f, "%zu %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", i, x[3], x[0], x[1], x[2], v[0], v[1],
                      v[2]) < 0;
    }
    st = clphys_output_close(f, tmp, file, !bad);
    return st && ctx ? cp_error(ctx, st, "%s", clphys_last_error(NULL)) : st;
}

clphys_status clphys_nbody_energy_of(clphys_context *ctx, const clphys_nbody_system *s, const double *pot,
                                     clphys_nbody_energy *e)
{
    if (!s || !pot || !e || (s->n > 0 && (!s->x || !s->v)))
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "nbody energy: NULL argument");
    double K = 0, W = 0, p[3] = {0, 0, 0};
    for (size_t i = 0; i < s->n; i++) {
        const double m = s->x[4 * i + 3], *v = s->v + 3 * i;
        K += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        W += 0.5 * m * pot[i];
        for (int c = 0; c < 3; c++) p[c] += m * v[c];
    }
    e->kinetic = K;
    e->potential = W;
    e->total = K + W;
    e->virial_ratio = W != 0 ? K / fabs(W) : 0;
    e->momentum = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    return CLPHYS_SUCCESS;
}
