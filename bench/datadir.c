/* datadir.c — the bench's reference inputs (see datadir.h). */
#include "datadir.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef CLPHYS_DATADIR
#define CLPHYS_DATADIR ""
#endif
#ifndef CLPHYS_SOURCE_DATA
#define CLPHYS_SOURCE_DATA ""
#endif
#ifndef CLPHYS_SOURCE_PEERS
#define CLPHYS_SOURCE_PEERS ""
#endif

/* dir (a compiled-in folder, "" where there is none) holds file */
static int holds(const char *dir, const char *file)
{
    char f[4096];
    return dir[0] && snprintf(f, sizeof f, "%s/%s", dir, file) < (int)sizeof f && access(f, R_OK) == 0;
}

const char *bench_data_dir(void)
{
    const char *e = getenv("CLPHYS_DATA_DIR");
    if (e && e[0]) return e;
    e = getenv("CLPHYS_TEST_DATA");
    if (e && e[0]) return e;
    if (holds(CLPHYS_DATADIR, "md/in.lj")) return CLPHYS_DATADIR;
    if (holds(CLPHYS_SOURCE_DATA, "md/in.lj")) return CLPHYS_SOURCE_DATA;
    return "tests/data";
}

const char *bench_peers_dir(void)
{
    static char installed[4096];
    const char *e = getenv("CLPHYS_PEERS");
    if (e && e[0]) return e;
    if (snprintf(installed, sizeof installed, "%s/peers", CLPHYS_DATADIR) < (int)sizeof installed &&
        CLPHYS_DATADIR[0] && holds(installed, "lammps_lj.py"))
        return installed;
    if (holds(CLPHYS_SOURCE_PEERS, "lammps_lj.py")) return CLPHYS_SOURCE_PEERS;
    return "bench/peers";
}
