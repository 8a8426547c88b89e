/* clphys_gravity.h — deprecated: the header is clphys_nbody.h since the one-stem naming rule
 * (docs/naming.md); this one stays for one release and includes it, with the
 * old names as aliases (clphys_deprecated.h).  rename-keep-file */
#ifndef CLPHYS_GRAVITY_H
#define CLPHYS_GRAVITY_H
#include "clphys_nbody.h"
#ifndef CLPHYS_NO_DEPRECATED
#include "clphys_deprecated.h" /* the old names, one release (docs/naming.md) */
#endif
#endif
