/* paths.c — the compute paths `clphys bench` runs, in this order: the list
 * bench_paths.h that meson writes from the path list. */
#include "bench.h"

#define BENCH_PATH(name) int bench_##name(bench_run *run);
#include "bench_paths.h"
#undef BENCH_PATH

const bench_path bench_paths[] = {
#define BENCH_PATH(name) {#name, bench_##name},
#include "bench_paths.h"
#undef BENCH_PATH
    {NULL, NULL},
};
