/* outputs.c — see outputs.h. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "outputs.h"
#include "clphys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The folder part of path ("." when none) into dir, the name into *name. */
static void split_path(const char *path, char *dir, size_t n, const char **name)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, n, ".");
        *name = path;
    } else {
        snprintf(dir, n, "%.*s", slash == path ? 1 : (int)(slash - path), path);
        *name = slash + 1;
    }
}

/* 1 when a and b name the same file. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea != eb) return 0;
    /* neither exists yet: the same resolved folder and name */
    char da[PATH_MAX], db[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
    const char *na, *nb;
    split_path(a, da, sizeof da, &na);
    split_path(b, db, sizeof db, &nb);
    if (!realpath(da, ra) || !realpath(db, rb)) return !strcmp(a, b);
    return !strcmp(ra, rb) && !strcmp(na, nb);
}

static int refuse(const char *cmd, const cli_file *o, const char *why, const char *more)
{
    fprintf(stderr, "clphys %s: %s %s: %s%s\n", cmd, o->option, o->path, why, more ? more : "");
    return 2;
}

int cli_check_outputs(const char *cmd, const cli_file *inputs, int nin, const cli_file *outputs, int nout, int force)
{
    for (int k = 0; k < nout; k++) {
        const cli_file *o = &outputs[k];
        if (!o->path) continue;
        for (int i = 0; i < nin; i++)
            if (inputs[i].path && same_file(o->path, inputs[i].path)) {
                char why[4200];
                snprintf(why, sizeof why, "is the input %s %s of this run; an output never replaces an input",
                         inputs[i].option, inputs[i].path);
                return refuse(cmd, o, why, NULL);
            }
        for (int j = 0; j < k; j++)
            if (outputs[j].path && same_file(o->path, outputs[j].path)) {
                char why[4200];
                snprintf(why, sizeof why, "is also the output %s", outputs[j].option);
                return refuse(cmd, o, why, NULL);
            }
        struct stat st;
        if (stat(o->path, &st) == 0) {
            if (S_ISDIR(st.st_mode)) return refuse(cmd, o, "is a folder", NULL);
            if (!S_ISREG(st.st_mode))
                return refuse(cmd, o, "exists and is not a regular file (a device, FIFO or socket)",
                              "; clphys replaces regular files only, with --force");
            if (!force) return refuse(cmd, o, "exists", " (--force replaces it)");
        }
        /* the folder takes a new file: the writers' temporary file, made and removed */
        FILE *f;
        char tmp[PATH_MAX + 64];
        if (clphys_output_open(o->path, &f, tmp, sizeof tmp)) {
            char dir[PATH_MAX], why[PATH_MAX + 256];
            const char *name;
            split_path(o->path, dir, sizeof dir, &name);
            if (errno == ENAMETOOLONG) return refuse(cmd, o, "the name is too long", NULL);
            snprintf(why, sizeof why, "cannot create a file in '%s': %s", dir, strerror(errno));
            return refuse(cmd, o, why, NULL);
        }
        clphys_output_close(f, tmp, o->path, 0);
    }
    return 0;
}
