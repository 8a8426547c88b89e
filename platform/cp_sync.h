/* cp_sync.h — the synchronisation probe (platform/sync.c) with the hooks
 * that let platform/mpi.c add a barrier of the ranks without MPI here. */
#ifndef CLPHYS_CP_SYNC_H
#define CLPHYS_CP_SYNC_H

#include "platform.h"

#include <math.h>

typedef struct {
    clphys_status (*barrier)(void *arg);                    /* ends every timed wait          */
    clphys_status (*agree)(void *arg, clphys_status local); /* one status on every process    */
    clphys_status (*max)(void *arg, double *v, int n);      /* v = elementwise max over all   */
    void *arg;
} cp_sync_hooks;

/* clphys_measure_sync with hooks (NULL: one process). */
clphys_status cp_sync_measure(clphys_context *const *ctxs, int n, int max_launches, int repeat,
                              const cp_sync_hooks *hooks, clphys_sync_cost *c);
/* Least-squares line t_tot = t_sync + n_sub t_launch through c's points. */
void cp_sync_fit(clphys_sync_cost *c);

#endif
