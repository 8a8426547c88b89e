/* main.c — the clphys command: dispatch to one subcommand per file. */
#include "cli.h"
#include "cli_mpi.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} command;

static const command commands[] = {
    {"devices", cmd_devices, "list every OpenCL device with its capabilities"},
    {"bench", cmd_bench, "benchmark and verify every compute path on one device"},
    {"tune", cmd_tune, "time every kernel variant on one device and keep the fastest for auto"},
#define CLI_COMMAND(name, help) {#name, cmd_##name, help},
#include "cli_commands.h" /* the compute paths' commands (see cli.h) */
#undef CLI_COMMAND
    {NULL, NULL, NULL},
};

int cli_fail(const char *cmd, clphys_status st, const clphys_context *ctx)
{
    if (cli_mpi_rank() > 0) return 1; /* under MPI failures are agreed: rank 0 says it for all */
    const char *detail = clphys_last_error(ctx);
    fprintf(stderr, "clphys %s: %s%s%s\n", cmd, clphys_status_string(st), *detail ? ": " : "", detail);
    return 1;
}

int cli_context_done(clphys_context *ctx, int rc)
{
    if (!ctx) return rc;
    const char *notes = clphys_context_notes(ctx);
    for (const char *l = notes; *l;) { /* one "clphys: note:" per line */
        size_t n = strcspn(l, "\n");
        fprintf(stderr, "clphys: note: %.*s\n", (int)n, l);
        l += n + (l[n] == '\n');
    }
    const char *path = getenv("CLPHYS_PROFILE");
    if (path && *path) {
        clphys_status st = clphys_context_profile_write(ctx, path);
        if (st)
            rc = cli_fail("profile", st, ctx);
        else
            fprintf(stderr, "kernel profile written to %s\n", path);
    }
    clphys_context_destroy(ctx);
    return rc;
}

/* SIGINT, SIGTERM, SIGHUP: remove the temporary files of the outputs being
 * written (async-signal-safe), then die of the signal as without us. */
static void on_signal(int sig)
{
    clphys_outputs_remove_pending();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void catch_signals(void)
{
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (int k = 0; k < 3; k++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        for (int j = 0; j < 3; j++) sigaddset(&sa.sa_mask, sigs[j]);
        /* a signal ignored by whoever started us (nohup) stays ignored */
        if (sigaction(sigs[k], NULL, &old) == 0 && old.sa_handler != SIG_IGN) sigaction(sigs[k], &sa, NULL);
    }
}

static void usage(FILE *out)
{
    fprintf(out,
            "clphys %s — portable OpenCL kernels for particle and lattice simulation\n\n"
            "usage: clphys <command> [options]   (clphys <command> --help for its options)\n\n",
            clphys_version());
    for (const command *c = commands; c->name; c++) fprintf(out, "  %-10s %s\n", c->name, c->help);
    fprintf(out, "\nThe device is chosen by --device SPEC or $CLPHYS_DEVICE: auto (first GPU, else CPU), "
                 "gpu, cpu, nvidia, amd, intel, pocl, or P:D.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("clphys %s\n", clphys_version());
        return 0;
    }
    for (const command *c = commands; c->name; c++)
        if (!strcmp(argv[1], c->name)) {
            int rc = cli_mpi_start(&argc, &argv);
            catch_signals();
            if (rc) return rc;
            return cli_mpi_end(c->fn(argc - 1, argv + 1));
        }
    fprintf(stderr, "clphys: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
