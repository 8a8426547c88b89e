/* old_names.c — the old names of bench paths and tuners, one release
 * (old_names.h).  rename-keep-file: these are the old names. */
#include "old_names.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *old, *new_name;
} renamed[] = {
    {"neighbor", "md_neighbor"},
    {"lj", "md_lj"},
    {"gravity", "nbody_gravity"},
    {"gravity_multi", "nbody_gravity_multi"},
    {"gravity_mpi", "nbody_gravity_mpi"},
    {"dslash", "lqcd_dslash"},
    {"solver", "lqcd_solver"},
    {"dslash_multi", "lqcd_dslash_multi"},
    {"solver_multi", "lqcd_solver_multi"},
    {"dslash_mpi", "lqcd_dslash_mpi"},
    {"solver_mpi", "lqcd_solver_mpi"},
};

const char *cli_new_path_name(const char *name, unsigned long n)
{
    for (size_t i = 0; i < sizeof renamed / sizeof renamed[0]; i++)
        if (strlen(renamed[i].old) == n && !strncmp(name, renamed[i].old, n)) return renamed[i].new_name;
    return NULL;
}

int cli_new_path_names(const char *cmd, const char **list)
{
    static char buf[4096];
    if (!*list) return 0;
    size_t o = 0;
    int changed = 0;
    for (const char *p = *list;;) {
        const size_t n = strcspn(p, ",");
        const char *nw = cli_new_path_name(p, n);
        if (nw) {
            fprintf(stderr, "clphys %s: --path %.*s is now %s (the old name goes in the next release)\n", cmd, (int)n,
                    p, nw);
            changed = 1;
        }
        const int w = nw ? snprintf(buf + o, sizeof buf - o, "%s%s", o ? "," : "", nw)
                         : snprintf(buf + o, sizeof buf - o, "%s%.*s", o ? "," : "", (int)n, p);
        if (w < 0 || (size_t)w >= sizeof buf - o) {
            fprintf(stderr, "clphys %s: --path: the list is longer than %zu characters\n", cmd, sizeof buf - 1);
            return 2;
        }
        o += (size_t)w;
        if (!p[n]) break;
        p += n + 1;
    }
    if (changed) *list = buf;
    return 0;
}
