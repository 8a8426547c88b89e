/* paths.c — the compute paths `clphys bench` runs, in this order. */
#include "bench.h"

/* @@BENCH_DECLS@@ — paths add: int bench_<name>(bench_run *run); */
int bench_neighbor(bench_run *run);
int bench_lj(bench_run *run);
int bench_md(bench_run *run);
int bench_gravity(bench_run *run);
int bench_dslash(bench_run *run);
int bench_solver(bench_run *run);

const bench_path bench_paths[] = {
    /* @@BENCH_PATHS@@ — paths add: {"<name>", bench_<name>}, */
    {"neighbor", bench_neighbor},
    {"lj", bench_lj},
    {"md", bench_md},
    {"gravity", bench_gravity},
    {"dslash", bench_dslash},
    {"solver", bench_solver},
    {NULL, NULL},
};
