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
 * Keys by size class.  A choice measured at one size serves the sizes
 * around it: FIELDS may hold numeric "axes" (n=62500, neighbours=75,
 * sites=1048576, cells=2097152), and cp_tune_nearest finds the entry whose
 * other fields equal the key's and whose axes are nearest to the asked
 * values (sum of |ln(entry / asked)|, each within a ratio the caller
 * bounds).  `clphys tune` measures a few representative sizes per path and
 * precision; a plan of any size then takes the nearest of them.
 *
 * The entries of each path (the code that writes and reads them is named;
 * the measuring lives with the path):
 *   PATH      WHAT        PRECISION  FIELDS (axes)                        VALUE
 *   neighbor  build       fp32|fp64  kind=full|half layout=csr|transposed  build=item|cpu s=
 *                                    tuner=2 (n, neighbours)             (host/md/tune.c)
 *   lj        variant     fp32|fp64  tuner=2 (n, neighbours)             variant=NAME s=
 *   lj        options     fp32|fp64  variant=NAME tuner=2                work_group_size= group_size=
 *                                    (n, neighbours)                     slot_order= defer_exchanges=
 *                                                                        entries_ahead= s=
 *   gravity   shape       fp32|fp64  tuner=2 (n)                         variant=tiled|vector
 *                                                                        i_per_item= work_group= unroll=
 *                                                                        j_split= s= (host/nbody/tune.c)
 *   dslash    local_size  fp32|fp64  reconstruct= layout= [split=]        local_size= half_hop_s=
 *                                    lattice=LxLxLxL (exact)             (host/lqcd/tune.c)
 *   poisson   stencil     fp64       candidates= variant= local=         variant= lx= ly= stencil_s=
 *                                    grid=NXxNYxNZ (exact)               (host/poisson/tune.c)
 *   PATH      tuned       -          (none)                              date= quick= seconds=: the
 *                                    last `clphys tune` of the path (clphys_tune_status_get)
 * The neighbours axis of neighbor and lj is the density class: the mean
 * number of particles within r_search of a particle, density x 4/3 pi
 * r_search^3 (the seed's densities 0.5 and 1.0 at r_search 3.3: 75 and 150;
 * LAMMPS in.lj: 78).  s= is the measured time of the choice (seconds per
 * call), kept for reports only.  A VALUE that does not parse, names an
 * unknown variant or a size the device or kernel cannot run is ignored (the
 * heuristic is used), so a cache can never make a plan fail.
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

#include "clphys_core.h"

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
/* The same as a signed integer, a finite real, or a word (at most n - 1
 * characters): 1 when present and well formed. */
int cp_tune_value_int(const char *value, const char *name, long *out);
int cp_tune_value_real(const char *value, const char *name, double *out);
int cp_tune_value_word(const char *value, const char *name, char *out, size_t n);

/* One numeric axis of a size class (see "Keys by size class" above):
 * entries qualify when their value v of field `name` has |ln(v / target)|
 * <= ln(max_ratio) (max_ratio <= 0: any). */
typedef struct {
    const char *name;
    double target;
    double max_ratio;
} cp_tune_axis;

/* The entry of (key->path, key->what, key->precision) whose FIELDS, less
 * the naxes axes and the fields named in `ignore` (space-separated names,
 * may be NULL), equal key->fields, with every axis present and nearest to
 * the targets: 1 and its VALUE in value (and the distance, the sum of
 * |ln(v / target)|, in *distance when non-NULL), 0 when none qualifies or
 * the file is absent, damaged or foreign. */
int cp_tune_nearest(const clphys_device_info *dev, const cp_tune_key *key, const cp_tune_axis *axes, int naxes,
                    const char *ignore, char *value, size_t n, double *distance);

/* Call fn(user, {PATH, WHAT, PRECISION, FIELDS, VALUE}) for each entry of
 * dev's file in file order, until fn returns non-zero.  Returns the number
 * of entries visited, 0 when there is no file, -1 when it is damaged or
 * foreign (fn not called). */
int cp_tune_each(const clphys_device_info *dev, int (*fn)(void *user, const char *const f[5]), void *user);

/* Record that `clphys tune` tuned path on dev now (the `tuned` entry:
 * date, quick, seconds); as cp_tune_put. */
int cp_tune_mark(const clphys_device_info *dev, const char *path, int quick, double seconds);

/* The median of v[n] (v is sorted in place); 0 for n <= 0. */
double cp_median(double *v, int n);
/* 1 when a measured choice of s seconds may replace the heuristic's of
 * heuristic_s (also when heuristic_s <= 0: the heuristic did not run): it
 * must be faster by more than a margin of the heuristic's time, 0.2 on CPU
 * devices, where the ranking of near choices changes from one process to
 * the next by up to 18% (buffer placement and thread scheduling on a 2-core
 * VM; bench/md-notes.md, "CPU timing"), so a smaller gain is not one a
 * later process would see; 0 elsewhere (plainly faster). */
int cp_tune_beats(const clphys_device_info *d, double s, double heuristic_s);
/* A tuner's choice: cp_tune_put, then o->chosen (when set) with the same
 * key and value, the choice's time and the heuristic's.  Returns as
 * cp_tune_put (a cache that cannot be written only loses the choice). */
int cp_tune_store(const clphys_tune_options *o, const clphys_device_info *dev, const cp_tune_key *key,
                  const char *value, double best_s, double untuned_s, int candidates);
/* o->progress (when set): case k of n of path starts. */
void cp_tune_step(const clphys_tune_options *o, const char *path, int k, int n, const char *what);

/* 1 when CLPHYS_NO_TUNE is set (not "" or "0"): plans then neither read
 * nor measure, they use the heuristics. */
int cp_tune_disabled(void);

/* ---- the choice a plan makes at creation --------------------------------
 * One sequence for every path's plan (a variant, a work-group size, a
 * kernel shape), cp_tune_choose:
 *   1. given: the params fix the choice: defaults(), CLPHYS_TUNE_GIVEN;
 *   2. tuning off (no_tune, or CLPHYS_NO_TUNE: cp_tune_disabled): defaults(),
 *      CLPHYS_TUNE_HEURISTIC;
 *   3. the cache: the entry of key (exact; or, with naxes > 0, the nearest
 *      size class, cp_tune_nearest) that take() accepts: CLPHYS_TUNE_CACHE;
 *   4. measure (paths that time at plan creation): the fastest candidate's
 *      VALUE, taken and stored under key (an exact key: a measured entry
 *      has no size-class axes of its own): CLPHYS_TUNE_MEASURED.  A cache that cannot
 *      be written costs only the next plan's measurement;
 *   5. else defaults(): CLPHYS_TUNE_HEURISTIC (nothing launched, or the
 *      path measures only in its tuner, clphys_<path>_tune, keeps the
 *      heuristic).
 * A VALUE that take() refuses (does not parse, names an unknown candidate,
 * cannot run here) is as no entry, so a cache never makes a plan fail. */
typedef struct {
    cp_tune_key key;
    const cp_tune_axis *axes; /* naxes > 0: the nearest size class, axes[naxes] */
    int naxes;
    const char *ignore; /* fields the nearest lookup ignores (may be NULL) */
    int given;          /* 1: the params fix the choice                  */
    int no_tune;        /* the params' no_tune                           */
    void *user;
    /* The choice from the params alone: the given values, the heuristic's
     * for what they leave to auto.  Its error is the plan's. */
    clphys_status (*defaults)(void *user);
    /* Make VALUE the plan's choice: 1 when it parses, names a candidate and
     * can run here; 0 leaves the plan to the next step. */
    int (*take)(void *user, const char *value);
    /* Time the candidates; the fastest's VALUE into value[n] ("" when none
     * could be launched).  May leave the plan at any candidate.  NULL: the
     * path does not measure at plan creation. */
    clphys_status (*measure)(void *user, char *value, size_t n);
} cp_tune_plan;

/* Run the sequence above on dev for t; *source (may be NULL) where the
 * choice came from.  Errors: those of defaults() and measure(). */
clphys_status cp_tune_choose(const clphys_device_info *dev, const cp_tune_plan *t, clphys_tune_source *source);

#endif /* CLPHYS_PLATFORM_TUNE_H */
