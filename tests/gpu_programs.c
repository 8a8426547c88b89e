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
 *                                   CI) described as TARGET, then each program
 *                                   built there written to OUTDIR/pNNN.cl (its
 *                                   includes inlined), listed in
 *                                   OUTDIR/programs.tsv: name, kernel file,
 *                                   precision (fp32, fp64, or - when the
 *                                   options name none), the extensions the
 *                                   host checked, and the complete build
 *                                   options (cp_build_options: what the
 *                                   driver's compiler is given); the plans
 *                                   refused with CLPHYS_ERR_UNSUPPORTED go to
 *                                   OUTDIR/refused.tsv (plan, message).
 * Exit status 1 when a plan fails otherwise (or is refused for a reason
 * other than an extension the target lacks), 2 on bad usage. */
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

static int write_programs(clphys_context *ctx, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/programs.tsv", dir);
    FILE *list = fopen(path, "w");
    if (!list) {
        perror(path);
        return -1;
    }
    const cp_kernel_file *file;
    const char *options;
    int i = 0;
    for (; cp_program_at(ctx, i, &file, &options); i++) {
        char *src = cp_kernel_source(file);
        snprintf(path, sizeof path, "%s/p%03d.cl", dir, i);
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
        fprintf(list, "p%03d\t%s\t%s\t%s\t%s\n", i, file->name, prec, *req ? req : "-", opts);
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
    const gt_target *t = argc == 3 ? gt_find(argv[1]) : NULL;
    if (!t) {
        fprintf(stderr, "usage: gpu_programs --targets | gpu_programs TARGET OUTDIR (TARGET: %s", gt_targets[0].id);
        for (int i = 1; i < gt_ntargets; i++) fprintf(stderr, ", %s", gt_targets[i].id);
        fprintf(stderr, ")\n");
        return 2;
    }
    clphys_context *ctx = NULL;
    if (clphys_context_create(NULL, &ctx) != CLPHYS_SUCCESS) {
        fprintf(stderr, "gpu_programs: no context: %s\n", clphys_last_error(NULL));
        return 1;
    }
    gt_describe((clphys_device_info *)clphys_context_device(ctx), t);
    char path[4096];
    snprintf(path, sizeof path, "%s/refused.tsv", argv[2]);
    run r = {t, fopen(path, "w"), 0, 0};
    if (!r.refused) {
        perror(path);
        clphys_context_destroy(ctx);
        return 1;
    }
    /* a fixed seed: the programs do not depend on it, and reruns stay alike;
     * GPU_PROGRAMS_RUN=1 also runs each plan (the same list, slower) */
    const char *rv = getenv("GPU_PROGRAMS_RUN");
    int run_plans = rv && *rv == '1';
    ep_make_every_plan(ctx, 33, run_plans, check, &r);
    fclose(r.refused);
    int n = write_programs(ctx, argv[2]);
    clphys_context_destroy(ctx);
    fprintf(stderr, "gpu_programs: %s: %d plans made, %d failed, %d programs\n", t->id, r.made, r.failed, n);
    return r.failed || n <= 0 ? 1 : 0;
}
