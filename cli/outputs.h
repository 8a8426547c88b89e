/* outputs.h — the files a command will write, checked before it runs, so
 * that a run never ends by destroying its input or by failing to write a
 * result after the work is done:
 *  - an output may not be an input of the same run, nor another output
 *    (the same file however it is named: device and inode when both exist,
 *    the resolved folder and name otherwise);
 *  - an existing output is replaced only with --force, and only when it is
 *    a regular file (never a folder, device node, FIFO or socket);
 *  - each output's folder must take a new file: the temporary name the
 *    writers use (clphys_output_open) is created there and removed.
 * Every refusal names the option, the file and the reason. */
#ifndef CLPHYS_CLI_OUTPUTS_H
#define CLPHYS_CLI_OUTPUTS_H

typedef struct {
    const char *option; /* "--write-data", or "IN" for a positional      */
    const char *path;   /* NULL: not given (skipped)                       */
} cli_file;

/* Returns 0, or 2 after printing "clphys CMD: OPTION PATH: reason". */
int cli_check_outputs(const char *cmd, const cli_file *inputs, int nin, const cli_file *outputs, int nout, int force);

#endif
