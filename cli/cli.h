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

#endif
