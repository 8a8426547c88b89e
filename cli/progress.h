/* progress.h — a progress line on a terminal for the long-running commands
 * (md, nbody): written to stderr only when stderr is a terminal, rewritten
 * in place at most five times a second, and erased before anything else is
 * printed, so that redirected output and logs never contain it. */
#ifndef CLPHYS_CLI_PROGRESS_H
#define CLPHYS_CLI_PROGRESS_H

typedef struct {
    int on;           /* stderr is a terminal (and this process prints) */
    const char *name; /* the command, e.g. "md" */
    const char *unit; /* what is counted, e.g. "step" */
    double t0, last;
    int shown;
} cli_progress;

/* Start; prints is 0 on the ranks that do not print (under MPI). */
void cli_progress_start(cli_progress *p, const char *name, const char *unit, int prints);
/* done of total units finished: the line "clphys md: step 1200 of 10000
 * (12%), 85.3 step/s, 1m43s left" when a fifth of a second has passed. */
void cli_progress_show(cli_progress *p, long long done, long long total);
/* Erase the line (before a row or the summary is printed). */
void cli_progress_clear(cli_progress *p);

#endif
