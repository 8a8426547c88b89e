/* cli.h — subcommands of the clphys command; each lives in cli/<name>.c and
 * uses only the public API (cli/bench.c also the bench suite, bench_suite.h).
 * A subcommand returns the process exit status: 0 success, 1 failure
 * (message already printed to stderr), 2 usage error. */
#ifndef CLPHYS_CLI_H
#define CLPHYS_CLI_H

#include "clphys.h"

int cmd_devices(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_tune(int argc, char **argv);
/* The compute paths' commands: cli_commands.h, which meson writes from the
 * path list (each host/<path>/meson.build adds its [name, help] to
 * cli_commands), as CLI_COMMAND(name, help) lines. */
#define CLI_COMMAND(name, help) int cmd_##name(int argc, char **argv);
#include "cli_commands.h"
#undef CLI_COMMAND

/* Print "clphys <cmd>: <status text>: <details>" to stderr and return 1. */
int cli_fail(const char *cmd, clphys_status st, const clphys_context *ctx);
/* Destroy ctx (NULL-safe); first print its notes (clphys_context_notes: e.g.
 * a kernel cache folder that cannot be written) and, when CLPHYS_PROFILE names a file, write the
 * per-kernel profile there (clphys_context_profile_write).  Returns rc, or 1
 * when the profile could not be written (message printed). */
int cli_context_done(clphys_context *ctx, int rc);

#endif
