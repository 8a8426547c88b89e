/* old_names_off.c — with CLPHYS_NO_DEPRECATED defined, the public headers (the
 * old header name included) declare the new names only: an old name left in
 * an application is then a compile error, which is how one checks a port to
 * the names of docs/naming.md.  Part of test_old_names.  rename-keep-file */
#define CLPHYS_NO_DEPRECATED
#include <clphys.h>
#include <clphys_gravity.h>

#if defined(clphys_gravity_plan_create) || defined(CLPHYS_LJ_AUTO) || defined(clphys_dslash_plan) ||                   \
    defined(clphys_bc) || defined(CLPHYS_DEPRECATED_H)
#error "CLPHYS_NO_DEPRECATED did not hide the old names"
#endif

int old_names_off(void);
int old_names_off(void) { return CLPHYS_MD_LJ_AUTO; }
