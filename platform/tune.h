/*
 * tune.h — the tuning cache of every compute path (platform/tune.c): choices
 * made by measurement on one device (a work-group size, a variant, build
 * options), kept on disk so that the next process does not measure again.
 * The measuring belongs to each path; this file only stores and finds.
 *
 * One text file per device, tune-HASH.txt in the folder of the on-disk caches
 * (cp_cache_dir: $CLPHYS_CACHE_DIR, else $XDG_CACHE_HOME/clphys, else
 * ~/.cache/clphys; CLPHYS_NO_CACHE=1 disables it), HASH = 64-bit FNV-1a of
 * the device identity.  Format, version 1, fields separated by one TAB:
 *
 *   clphys-tune<TAB>1
 *   device<TAB>NAME            the device identity (clphys_device_info):
 *   vendor<TAB>VENDOR          name, vendor, platform name and driver
 *   platform<TAB>PLATFORM      version; a file whose identity differs
 *   driver<TAB>VERSION         from the device's is foreign
 *   entry<TAB>PATH<TAB>WHAT<TAB>PRECISION<TAB>FIELDS<TAB>VALUE    (0 or more)
 *   end<TAB>N<TAB>CHECKSUM     N entries; CHECKSUM = 16 hex digits of the
 *                              FNV-1a-64 of every byte before this line
 *
 * PATH is the compute path ("dslash"), WHAT what was chosen ("local_size"),
 * PRECISION "fp32", "fp64", "mixed" or "-", FIELDS whatever else the choice
 * depends on, as space-separated name=value pairs ("reconstruct=12
 * layout=soa lattice=32x32x32x32"; the size class of a path belongs here);
 * VALUE the choice, also name=value pairs ("local_size=64 half_hop_s=1.2e-4").
 * A TAB or line break inside a field is stored as a space.  (PATH, WHAT,
 * PRECISION, FIELDS) is the key: one entry per key.
 *
 * A file that is damaged (truncated, a line that does not parse, the
 * checksum or count wrong), of another version, or foreign is ignored as if
 * absent, and the next store rewrites it.  A store reads the file, replaces
 * or adds its entry and writes the whole file to a temporary file in the
 * same folder that is then renamed over it, so a reader sees the old file or
 * the new one, never a part; stores of several processes are serialized by
 * an advisory lock (fcntl) on tune-HASH.lock, so none loses another's entry
 * (without the lock, e.g. on a file system that refuses it, a store still
 * replaces the file whole and at worst drops a concurrent store's entry,
 * which is measured again later).
 */
#ifndef CLPHYS_PLATFORM_TUNE_H
#define CLPHYS_PLATFORM_TUNE_H

#include "clphys.h"

typedef struct {
    const char *path;      /* "dslash", "lj", "poisson" ...                      */
    const char *what;      /* "local_size", "variant" ...                        */
    const char *precision; /* "fp32", "fp64", "mixed" or "-"                     */
    const char *fields;    /* "name=value ..." the choice also depends on; may be "" */
} cp_tune_key;

#define CP_TUNE_VALUE_MAX 1024

/* The cache file of dev: 1 and its path in buf, or 0 when the cache is
 * disabled or no folder can be named. */
int cp_tune_file(const clphys_device_info *dev, char *buf, size_t n);

/* Look key up for dev: 1 and the stored VALUE (at most n - 1 characters) in
 * value; 0 when the cache is disabled, the file absent, damaged or foreign,
 * or the key not in it. */
int cp_tune_get(const clphys_device_info *dev, const cp_tune_key *key, char *value, size_t n);

/* Store value under key for dev (replacing an entry with the same key).
 * Returns 0 when stored, -1 when not (cache disabled, folder not writable,
 * value too long): the cache only saves a measurement, so callers go on. */
int cp_tune_put(const clphys_device_info *dev, const cp_tune_key *key, const char *value);

/* Entries in dev's file: their number, 0 when there is no file, -1 when the
 * file is damaged or foreign (for tests and `clphys tune`). */
int cp_tune_count(const clphys_device_info *dev);

/* The field `name` of a VALUE ("local_size=64 half_hop_s=1.2e-4") as an
 * unsigned integer: 1 when present and a plain decimal number. */
int cp_tune_value_size(const char *value, const char *name, size_t *out);

#endif /* CLPHYS_PLATFORM_TUNE_H */
