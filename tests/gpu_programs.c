/* gpu_programs.c — the programs clphys would build on a described AMD or
 * Intel GPU (tests/gpu_targets.h), for scripts/gpu_targets.py.
 *
 *   gpu_programs --targets          one line per target, tab-separated: id,
 *                                   compiler, fp64, int64 atomics (0/1 as the
 *                                   host's capability logic derives them),
 *                                   local memory, work-group limit, wave or
 *                                   SIMD width, device name
 *   gpu_programs TARGET OUTDIR      every plan of every path made on the test
 *                                   device ($CLPHYS_DEVICE, else auto: PoCL in
 *                                   CI) described as TARGET, then the plans
 *                                   over several devices (ep_make_multi_plans,
 *                                   each device that description), then each
 *                                   program built there written to
 *                                   OUTDIR/pNNN.cl (its includes inlined),
 *                                   listed in OUTDIR/programs.tsv: name,
 *                                   kernel file, precision (fp32, fp64, or -
 *                                   when the options name none), the
 *                                   extensions the host checked, the complete
 *                                   build options (cp_build_options: what the
 *                                   driver's compiler is given), and which
 *                                   plans first built it (single, multi); the
 *                                   plans refused with CLPHYS_ERR_UNSUPPORTED
 *                                   go to OUTDIR/refused.tsv (plan, message).
 *   mpiexec -n P gpu_programs --mpi TARGET OUTDIR
 *                                   the plans over MPI ranks
 *                                   (ep_make_mpi_plans; MPI builds only), each
 *                                   rank R writing its programs as
 *                                   OUTDIR/mR_NNN.cl, listed in
 *                                   OUTDIR/mpi-rR.tsv (plans column: mpi), its
 *                                   refusals in OUTDIR/mpi-refused-rR.tsv.
 * Exit status 1 when a plan fails otherwise (or is refused for a reason
 * other than an extension the target lacks), 2 on bad usage, 3 for --mpi in
 * a build without MPI. */
#include "every_plan.h"
#include "gpu_targets.h"
#include "platform/platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const gt_target *t;
    FILE *refused;
    int failed, made;
} run;

static void check(void *user, clphys_context *ctx, clphys_status st, const char *what)
{
    run *r = user;
    if (st == CLPHYS_SUCCESS) {
        r->made++;
        return;
    }
    const clphys_device_info *d = clphys_context_device(ctx);
    const char *msg = clphys_last_error(ctx);
    int named =
        (!d->fp64 && strstr(msg, "cl_khr_fp64")) || (!d->int64_atomics && strstr(msg, "cl_khr_int64_base_atomics"));
    if (st == CLPHYS_ERR_UNSUPPORTED && named) {
        size_t len = strcspn(msg, "\n");
        fprintf(r->refused, "%s\t%.*s\n", what, (int)len, msg);
        return;
    }
    r->failed++;
    fprintf(stderr, "gpu_programs: %s on %s: %s: %s\n", what, r->t->id, clphys_status_string(st), msg);
}

static int count_programs(const clphys_context *ctx)
{
    int n = 0;
    const cp_kernel_file *f;
    for (const char *o; cp_program_at(ctx, n, &f, &o);) n++;
    return n;
}

/* ctx's programs to OUTDIR/LIST and OUTDIR/PREFIXNNN.cl, the last `single`
 * built (cp_program_at lists the newest first) by single-device plans, the
 * others by the plans named `later`. */
static int write_programs(clphys_context *ctx, const char *dir, const char *list_name, const char *prefix, int single,
                          const char *later)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, list_name);
    FILE *list = fopen(path, "w");
    if (!list) {
        perror(path);
        return -1;
    }
    const cp_kernel_file *file;
    const char *options;
    const int total = count_programs(ctx);
    int i = 0;
    for (; cp_program_at(ctx, i, &file, &options); i++) {
        char *src = cp_kernel_source(file);
        snprintf(path, sizeof path, "%s/%s%03d.cl", dir, prefix, i);
        FILE *f = src ? fopen(path, "w") : NULL;
        if (!f || fputs(src, f) < 0 || fclose(f) != 0) {
            fprintf(stderr, "gpu_programs: cannot write %s (%s)\n", path, file->name);
            free(src);
            fclose(list);
            return -1;
        }
        free(src);
        char opts[4096], req[256];
        cp_build_options(ctx, options, opts, sizeof opts);
        cp_required_extensions(options, req, sizeof req);
        const char *prec = strstr(options, "REAL_T=double") ? "fp64" : strstr(options, "REAL_T=float") ? "fp32" : "-";
        fprintf(list, "%s%03d\t%s\t%s\t%s\t%s\t%s\n", prefix, i, file->name, prec, *req ? req : "-", opts,
                i >= total - single ? "single" : later);
    }
    return fclose(list) == 0 ? i : -1;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--targets")) {
        for (int i = 0; i < gt_ntargets; i++) {
            clphys_device_info d = {0};
            gt_describe(&d, &gt_targets[i]);
            printf("%s\t%s\t%d\t%d\t%llu\t%zu\t%zu\t%s\n", gt_targets[i].id, gt_targets[i].compiler, d.fp64,
                   d.int64_atomics, (unsigned long long)d.local_mem_bytes, d.max_work_group_size,
                   d.preferred_wg_multiple, d.name);
        }
        return 0;
    }
    const int mpi = argc == 4 && !strcmp(argv[1], "--mpi");
    const gt_target *t = argc == 3 + mpi ? gt_find(argv[1 + mpi]) : NULL;
    if (!t) {
        fprintf(stderr, "usage: gpu_programs --targets | gpu_programs [--mpi] TARGET OUTDIR (TARGET: %s",
                gt_targets[0].id);
        for (int i = 1; i < gt_ntargets; i++) fprintf(stderr, ", %s", gt_targets[i].id);
        fprintf(stderr, ")\n");
        return 2;
    }
    const char *dir = argv[2 + mpi];
#ifdef CLPHYS_HAVE_MPI
    int rank = 0;
    if (mpi) {
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
#else
    if (mpi) {
        fprintf(stderr, "gpu_programs: built without MPI: no plan over ranks to make\n");
        return 3;
    }
#endif
    clphys_context *ctx = NULL;
    clphys_status cs = clphys_context_create(NULL, &ctx);
    if (cs != CLPHYS_SUCCESS) fprintf(stderr, "gpu_programs: no context: %s\n", clphys_last_error(NULL));
    char path[4096], list[64], prefix[32];
    if (mpi) {
        snprintf(path, sizeof path, "%s/mpi-refused-r%d.tsv", dir, rank);
        snprintf(list, sizeof list, "mpi-r%d.tsv", rank);
        snprintf(prefix, sizeof prefix, "m%d_", rank);
    } else {
        snprintf(path, sizeof path, "%s/refused.tsv", dir);
        snprintf(list, sizeof list, "programs.tsv");
        snprintf(prefix, sizeof prefix, "p");
    }
    run r = {t, cs ? NULL : fopen(path, "w"), 0, 0};
    if (!cs && !r.refused) perror(path);
    int n = -1;
    if (!cs && r.refused) {
        gt_describe((clphys_device_info *)clphys_context_device(ctx), t);
        int single = 0;
        if (!mpi) {
            /* a fixed seed: the programs do not depend on it, and reruns stay
             * alike; GPU_PROGRAMS_RUN=1 also runs each plan (the same list,
             * slower) */
            const char *rv = getenv("GPU_PROGRAMS_RUN");
            ep_make_every_plan(ctx, 33, rv && *rv == '1', check, &r);
            single = count_programs(ctx);
            ep_make_multi_plans(ctx, 33, check, &r);
        }
#ifdef CLPHYS_HAVE_MPI
        else
            ep_make_mpi_plans(MPI_COMM_WORLD, ctx, 33, check, &r);
#endif
        fclose(r.refused);
        n = write_programs(ctx, dir, list, prefix, single, mpi ? "mpi" : "multi");
    }
    clphys_context_destroy(ctx);
    fprintf(stderr, "gpu_programs: %s%s: %d plans made, %d failed, %d programs\n", t->id, mpi ? " (mpi)" : "", r.made,
            r.failed, n);
    const int bad = cs || r.failed || n <= 0;
#ifdef CLPHYS_HAVE_MPI
    if (mpi) MPI_Finalize();
#endif
    return bad ? 1 : 0;
}
