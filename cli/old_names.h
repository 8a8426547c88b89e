/* old_names.h — the bench paths and tuners renamed by the one-stem rule
 * (docs/naming.md: gravity -> nbody_gravity, lj -> md_lj, dslash ->
 * lqcd_dslash ...) are accepted under their old names for one release, by
 * `clphys bench --path` and `clphys tune --path`.  rename-keep-file */
#ifndef CLPHYS_CLI_OLD_NAMES_H
#define CLPHYS_CLI_OLD_NAMES_H

/* The new name of an old path name of n characters, or NULL when it is not one. */
const char *cli_new_path_name(const char *name, unsigned long n);

/* *list: a --path value (NAME[,NAME...]) or NULL.  When it names old paths,
 * *list becomes the same list in the new names (static storage, valid until
 * the next call) and stderr gets one note per old name: "clphys CMD: --path
 * gravity is now nbody_gravity (the old name goes in the next release)".
 * Returns 0, or 2 (the commands' usage status) when the new list would be
 * longer than 4095 characters, said on stderr. */
int cli_new_path_names(const char *cmd, const char **list);

#endif
