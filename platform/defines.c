/* defines.c — a program's build options assembled from named defines
 * (platform.h, "build options"): each addition is checked against the room
 * left, and the first one that does not fit, or that is malformed, is kept
 * for cp_program's error message instead of being cut silently. */
#include "platform.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* The first fault wins: later additions are dropped, so the message names
 * the define that broke the options, not a consequence of it. */
static void fault(cp_defines *d, clphys_status st, const char *what, const char *name)
{
    if (d->status) return;
    d->status = st;
    snprintf(d->bad, sizeof d->bad, "%s %.64s", what, name ? name : "(NULL)");
}

static int identifier(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
    return 1;
}

/* One option word: nothing that the compiler would split or quote. */
static int word(const char *s)
{
    if (!s || !*s) return 0;
    for (; *s; s++)
        if (isspace((unsigned char)*s) || *s == '"' || *s == '\'' || *s == '\\') return 0;
    return 1;
}

/* Append " -Dname=value" (" -Dname" when value is NULL; the space only
 * after the first). */
static void add(cp_defines *d, const char *prefix, const char *name, const char *value)
{
    if (d->status) return;
    size_t room = sizeof d->text - d->len;
    int n = snprintf(d->text + d->len, room, "%s%s%s%s%s", d->len ? " " : "", prefix, name, value ? "=" : "",
                     value ? value : "");
    if (n < 0 || (size_t)n >= room) {
        d->text[d->len] = 0;
        fault(d, CLPHYS_ERR_OVERFLOW, "the options are full at", name);
        return;
    }
    d->len += (size_t)n;
}

void cp_define_flag(cp_defines *d, const char *name)
{
    if (!identifier(name)) fault(d, CLPHYS_ERR_INVALID_ARGUMENT, "a define named", name);
    add(d, "-D", name, NULL);
}

void cp_define_int(cp_defines *d, const char *name, long long value)
{
    char v[32];
    snprintf(v, sizeof v, "%lld", value);
    if (!identifier(name)) fault(d, CLPHYS_ERR_INVALID_ARGUMENT, "a define named", name);
    add(d, "-D", name, v);
}

void cp_define_str(cp_defines *d, const char *name, const char *value)
{
    if (!identifier(name)) fault(d, CLPHYS_ERR_INVALID_ARGUMENT, "a define named", name);
    if (!word(value)) fault(d, CLPHYS_ERR_INVALID_ARGUMENT, "a value with spaces or quotes for", name);
    add(d, "-D", name, value);
}

void cp_define_option(cp_defines *d, const char *option)
{
    if (!word(option) || option[0] != '-') fault(d, CLPHYS_ERR_INVALID_ARGUMENT, "the compiler option", option);
    add(d, "", option, NULL);
}

clphys_status cp_define_precision(clphys_context *ctx, cp_defines *d, clphys_precision p)
{
    if (p == CLPHYS_FP64) {
        if (!ctx->info.fp64)
            return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED, "device %s has no cl_khr_fp64: fp64 is unavailable",
                            ctx->info.name);
        cp_define_str(d, "REAL_T", "double");
        cp_define_int(d, "REAL_IS_DOUBLE", 1);
    } else if (p == CLPHYS_FP32) {
        cp_define_str(d, "REAL_T", "float");
    } else {
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "unknown precision %d", (int)p);
    }
    return CLPHYS_SUCCESS;
}

clphys_status cp_defines_check(clphys_context *ctx, const cp_defines *d, const char *program)
{
    if (!d || !d->status) return CLPHYS_SUCCESS;
    return cp_error(ctx, d->status, "build options of %s: %s (the options so far: \"%s\", at most %zu characters)",
                    program ? program : "a program", d->bad, d->text, sizeof d->text - 1);
}
