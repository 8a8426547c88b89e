/* clphys_gravity_mpi.h — deprecated: the header is clphys_nbody_mpi.h since the one-stem naming rule
 * (docs/naming.md); this one stays for one release and includes it, with the
 * old names as aliases (clphys_deprecated.h).  rename-keep-file */
#ifndef CLPHYS_GRAVITY_MPI_H
#define CLPHYS_GRAVITY_MPI_H
#include "clphys_nbody_mpi.h"
#ifndef CLPHYS_NO_DEPRECATED
#include "clphys_deprecated.h" /* the old names, one release (docs/naming.md) */
#endif
#endif
