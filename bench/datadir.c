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

static int holds_inputs(const char *dir)
{
    char f[4096];
    return dir[0] && snprintf(f, sizeof f, "%s/md/in.lj", dir) < (int)sizeof f && access(f, R_OK) == 0;
}

const char *bench_data_dir(void)
{
    const char *e = getenv("CLPHYS_DATA_DIR");
    if (e && e[0]) return e;
    e = getenv("CLPHYS_TEST_DATA");
    if (e && e[0]) return e;
    if (holds_inputs(CLPHYS_DATADIR)) return CLPHYS_DATADIR;
    if (holds_inputs(CLPHYS_SOURCE_DATA)) return CLPHYS_SOURCE_DATA;
    return "tests/data";
}

static int holds_peers(const char *dir)
{
    char f[4096];
    return dir[0] && snprintf(f, sizeof f, "%s/lammps_lj.py", dir) < (int)sizeof f && access(f, R_OK) == 0;
}

const char *bench_peers_dir(void)
{
    static char installed[4096];
    const char *e = getenv("CLPHYS_PEERS");
    if (e && e[0]) return e;
    if (snprintf(installed, sizeof installed, "%s/peers", CLPHYS_DATADIR) < (int)sizeof installed &&
        CLPHYS_DATADIR[0] && holds_peers(installed))
        return installed;
    if (holds_peers(CLPHYS_SOURCE_PEERS)) return CLPHYS_SOURCE_PEERS;
    return "bench/peers";
}
