/* cli.h — subcommands of the clphys command; each lives in cli/<name>.c and
 * uses only the public API.  A subcommand returns the process exit status:
 * 0 success, 1 failure (message already printed to stderr), 2 usage error. */
#ifndef CLPHYS_CLI_H
#define CLPHYS_CLI_H

int cmd_devices(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* @@CLI_DECLS@@ — paths add their cmd_<name> declaration here */
int cmd_md(int argc, char **argv);
int cmd_lqcd(int argc, char **argv);
int cmd_nbody(int argc, char **argv);

/* Print "clphys <cmd>: <status text>: <details>" to stderr and return 1. */
#include "clphys.h"
int cli_fail(const char *cmd, clphys_status st, const clphys_context *ctx);
/* Destroy ctx (NULL-safe); first, when CLPHYS_PROFILE names a file, write the
 * per-kernel profile there (clphys_context_profile_write).  Returns rc, or 1
 * when the profile could not be written (message printed). */
int cli_context_done(clphys_context *ctx, int rc);

#endif
