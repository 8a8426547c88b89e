/* opt.h — the one option parser of every clphys command.
 *
 * A command describes its options in a table and hands argv to cli_parse.
 * Every value is checked whole and against its range before the command
 * runs: "10abc", "abc", "", "1e19" for an integer, "nan" or "inf" for a real,
 * a value outside its range, an unknown option, a missing value and an
 * option given twice are errors that name the option and the value.  Both
 * "--name value" and "--name=value" are accepted. */
#ifndef CLPHYS_CLI_OPT_H
#define CLPHYS_CLI_OPT_H

#include <math.h>
#include <stddef.h>

typedef enum {
    CLI_FLAG,   /* no value; *(int *)out = 1                                   */
    CLI_STRING, /* *(const char **)out = the value (non-empty)                 */
    CLI_INT,    /* *(long long *)out, decimal, lo <= v <= hi                   */
    CLI_REAL,   /* *(double *)out, finite, lo <= v <= hi (lo < v with lo_open)  */
    CLI_CHOICE, /* *(int *)out = index of the value in choices "a|b|c"         */
    CLI_DIMS    /* *(int *)out[ndims] from "AxBxC..."; each lo <= v <= hi      */
} cli_kind;

typedef struct {
    const char *name; /* "--steps"                                         */
    cli_kind kind;
    void *out;           /* written only when the option is given             */
    double lo, hi;       /* CLI_INT, CLI_REAL, CLI_DIMS: the inclusive range  */
    int lo_open;         /* CLI_REAL: lo itself is excluded (v > lo)          */
    const char *choices; /* CLI_CHOICE: "fp32|fp64"                           */
    int ndims;           /* CLI_DIMS: components                              */
    int *given;          /* optional: set to 1 when the option appears        */
} cli_opt;

/* Table entries (designated initializers: unnamed fields are zero). */
#define CLI_OPT_FLAG(nm, p)                                                                                            \
    {                                                                                                                  \
        .name = (nm), .kind = CLI_FLAG, .out = (p)                                                                     \
    }
#define CLI_OPT_STRING(nm, p)                                                                                          \
    {                                                                                                                  \
        .name = (nm), .kind = CLI_STRING, .out = (p)                                                                   \
    }
#define CLI_OPT_INT(nm, p, l, h)                                                                                       \
    {                                                                                                                  \
        .name = (nm), .kind = CLI_INT, .out = (p), .lo = (l), .hi = (h)                                                \
    }
#define CLI_OPT_REAL(nm, p, l, h)                                                                                      \
    {                                                                                                                  \
        .name = (nm), .kind = CLI_REAL, .out = (p), .lo = (l), .hi = (h)                                               \
    }
#define CLI_OPT_POSITIVE(nm, p)                                                                                        \
    {                                                                                                                  \
        .name = (nm), .kind = CLI_REAL, .out = (p), .lo = 0, .hi = INFINITY, .lo_open = 1                              \
    }
#define CLI_OPT_CHOICE(nm, p, c)                                                                                       \
    {                                                                                                                  \
        .name = (nm), .kind = CLI_CHOICE, .out = (p), .choices = (c)                                                   \
    }
#define CLI_OPT_DIMS(nm, p, n, l, h)                                                                                   \
    {                                                                                                                  \
        .name = (nm), .kind = CLI_DIMS, .out = (p), .lo = (l), .hi = (h), .ndims = (n)                                 \
    }
#define CLI_OPT_END                                                                                                    \
    {                                                                                                                  \
        .name = NULL                                                                                                   \
    }

/* Parse argv[1 .. argc) against opts (terminated by an entry with name NULL).
 * Words that do not start with "--" are positional: up to max_pos of them go
 * to pos[] (*npos counts them; pos may be NULL when none are allowed).
 * "--help" or "-h" sets *help = 1 and stops.  Returns 0, or 2 after printing
 * "clphys CMD: ..." with the cause to stderr. */
int cli_parse(const char *cmd, int argc, char **argv, const cli_opt *opts, const char **pos, int max_pos, int *npos,
              int *help);

/* The value checks on their own, for values a command splits itself.  Each
 * returns 0, or 2 after printing "clphys CMD: OPT: ..." to stderr. */
int cli_int(const char *cmd, const char *opt, const char *s, long long lo, long long hi, long long *out);
int cli_real(const char *cmd, const char *opt, const char *s, double lo, double hi, int lo_open, double *out);
int cli_dims(const char *cmd, const char *opt, const char *s, int ndims, long long lo, long long hi, int *out);
int cli_choice(const char *cmd, const char *opt, const char *s, const char *choices, int *out);

#endif
