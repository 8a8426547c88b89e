/* paths.c — the compute paths `clphys bench` runs, in this order. */
#include "bench.h"

/* @@BENCH_DECLS@@ — paths add: int bench_<name>(bench_run *run); */

const bench_path bench_paths[] = {
    /* @@BENCH_PATHS@@ — paths add: {"<name>", bench_<name>}, */
    {NULL, NULL},
};
