/* lqcd_blas_probe.c — diagnostic, not part of the suite: where the solver's
 * level-1 time goes on a device.  Times, on one half field of a 32^4 lattice
 * (12,582,912 reals), clBLAST's dot/nrm2/axpy/scal/copy (host wall time of
 * call + clFinish, as the solver sees them), the cl/blas1.cl kernels
 * (profiling events), the host round trip of a reduction read, and the gap
 * per launch of back-to-back tiny kernels.  Medians of 20.
 * Build (from the repository root, after ninja -C build-rel-lqcd):
 *   gcc -O2 -std=gnu11 -Iinclude -I. bench/lqcd_blas_probe.c -Lbuild-rel-lqcd -lclphys -lclblast -lOpenCL \
 *       -Wl,-rpath,'$ORIGIN' -o build-rel-lqcd/lqcd_blas_probe
 * Run: lqcd_blas_probe [DEVICE_SPEC] [N_REALS] */
#include "platform/platform.h"

#include <clblast_c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 20

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *t)
{
    qsort(t, REPS, sizeof *t, cmp);
    return t[REPS / 2];
}
static void row(const char *prec, const char *what, double s, double bytes)
{
    printf("%-5s %-44s %10.1f us %9.1f GB/s\n", prec, what, s * 1e6, bytes > 0 ? bytes / s * 1e-9 : 0);
}

int main(int argc, char **argv)
{
    clphys_context *ctx;
    if (clphys_context_create(argc > 1 ? argv[1] : NULL, &ctx)) {
        fprintf(stderr, "%s\n", clphys_last_error(NULL));
        return 1;
    }
    size_t n = argc > 2 ? (size_t)atoll(argv[2]) : 12582912;
    cl_command_queue q = ctx->queue;
    const clphys_device_info *d = clphys_context_device(ctx);
    printf("# %s, %s; n = %zu reals\n", d->name, d->driver_version, n);
    for (int prec = 0; prec < 2; prec++) {
        const char *pn = prec ? "fp64" : "fp32";
        size_t rs = prec ? 8 : 4, ng = (size_t)d->compute_units * 8, wg = 256;
        char popt[128], opts[256];
        if (cp_precision_options(ctx, prec ? CLPHYS_FP64 : CLPHYS_FP32, popt, sizeof popt)) return 1;
        snprintf(opts, sizeof opts, "%s -DNEED_FP64 -DBLAS_WG=256", popt);
        cl_program prog;
        cl_kernel kn, ku, kx, kt;
        cl_mem x, y, z, w, part, res;
        if (cp_program(ctx, "blas1.cl", opts, &prog) || cp_kernel(ctx, prog, "blas_norm2_partial", &kn) ||
            cp_kernel(ctx, prog, "blas_cg_update", &ku) || cp_kernel(ctx, prog, "blas_xpay", &kx) ||
            cp_kernel(ctx, prog, "blas_norm2_partial", &kt) || cp_buffer(ctx, CL_MEM_READ_WRITE, n * rs, NULL, &x) ||
            cp_buffer(ctx, CL_MEM_READ_WRITE, n * rs, NULL, &y) || cp_buffer(ctx, CL_MEM_READ_WRITE, n * rs, NULL, &z) ||
            cp_buffer(ctx, CL_MEM_READ_WRITE, n * rs, NULL, &w) ||
            cp_buffer(ctx, CL_MEM_READ_WRITE, ng * 2 * rs, NULL, &part) ||
            cp_buffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &res)) {
            fprintf(stderr, "%s\n", clphys_last_error(ctx));
            return 1;
        }
        const double pd = 0.371;
        const float pf = 0.371f;
        cl_mem bufs[4] = {x, y, z, w};
        for (int i = 0; i < 4; i++) clEnqueueFillBuffer(q, bufs[i], prec ? (void *)&pd : (void *)&pf, rs, 0, n * rs, 0, NULL, NULL);
        clFinish(q);
        double t[REPS], hostbuf[2 * 4096];
        double a = 1e-3;
        float af = 1e-3f;
        /* clBLAST, as the solver calls it: enqueue, then wait */
        for (int op = 0; op < 5; op++) {
            static const char *const names[5] = {"clBLAST dot (call + read result)", "clBLAST nrm2 (call + read result)",
                                                 "clBLAST axpy (call + finish)", "clBLAST scal (call + finish)",
                                                 "clBLAST copy (call + finish)"};
            static const double passes[5] = {2, 1, 3, 2, 2};
            for (int r = -2; r < REPS; r++) {
                double t0 = cp_now();
                CLBlastStatusCode s = CLBlastSuccess;
                if (op == 0) s = prec ? CLBlastDdot(n, res, 0, x, 0, 1, y, 0, 1, &q, NULL) : CLBlastSdot(n, res, 0, x, 0, 1, y, 0, 1, &q, NULL);
                if (op == 1) s = prec ? CLBlastDnrm2(n, res, 0, x, 0, 1, &q, NULL) : CLBlastSnrm2(n, res, 0, x, 0, 1, &q, NULL);
                if (op == 2) s = prec ? CLBlastDaxpy(n, a, x, 0, 1, y, 0, 1, &q, NULL) : CLBlastSaxpy(n, af, x, 0, 1, y, 0, 1, &q, NULL);
                if (op == 3) s = prec ? CLBlastDscal(n, 1.0, y, 0, 1, &q, NULL) : CLBlastSscal(n, 1.0f, y, 0, 1, &q, NULL);
                if (op == 4) s = prec ? CLBlastDcopy(n, x, 0, 1, z, 0, 1, &q, NULL) : CLBlastScopy(n, x, 0, 1, z, 0, 1, &q, NULL);
                if (s != CLBlastSuccess) {
                    fprintf(stderr, "clBLAST op %d: %d\n", op, (int)s);
                    return 1;
                }
                if (op < 2) clEnqueueReadBuffer(q, res, CL_TRUE, 0, rs, hostbuf, 0, NULL, NULL);
                else clFinish(q);
                if (r >= 0) t[r] = cp_now() - t0;
            }
            row(pn, names[op], median(t), passes[op] * n * rs);
        }
        /* own kernels: profiled kernel time, and wall time with the read */
        cl_uint nn = (cl_uint)n;
        size_t global = ng * wg, local = wg;
        CP_ARG(ctx, kn, 0, part);
        CP_ARG(ctx, kn, 1, x);
        CP_ARG(ctx, kn, 2, nn);
        for (int r = -2; r < REPS; r++) {
            double k = 0;
            cp_launch(ctx, kn, 1, &global, &local, &k);
            if (r >= 0) t[r] = k;
        }
        row(pn, "blas1.cl norm2 partials (kernel)", median(t), 1.0 * n * rs);
        for (int r = -2; r < REPS; r++) {
            double t0 = cp_now();
            cp_launch(ctx, kn, 1, &global, &local, NULL);
            clEnqueueReadBuffer(q, part, CL_TRUE, 0, ng * 2 * rs, hostbuf, 0, NULL, NULL);
            if (r >= 0) t[r] = cp_now() - t0;
        }
        row(pn, "blas1.cl norm2 (launch + read partials)", median(t), 1.0 * n * rs);
        CP_ARG(ctx, ku, 0, part);
        CP_ARG(ctx, ku, 1, x);
        CP_ARG(ctx, ku, 2, y);
        CP_ARG(ctx, ku, 3, z);
        CP_ARG(ctx, ku, 4, w);
        if (prec) CP_ARG(ctx, ku, 5, a);
        else CP_ARG(ctx, ku, 5, af);
        CP_ARG(ctx, ku, 6, nn);
        for (int r = -2; r < REPS; r++) {
            double k = 0;
            cp_launch(ctx, ku, 1, &global, &local, &k);
            if (r >= 0) t[r] = k;
        }
        row(pn, "blas1.cl fused CG update (kernel)", median(t), 6.0 * n * rs);
        CP_ARG(ctx, kx, 0, y);
        CP_ARG(ctx, kx, 1, x);
        if (prec) CP_ARG(ctx, kx, 2, a);
        else CP_ARG(ctx, kx, 2, af);
        CP_ARG(ctx, kx, 3, nn);
        for (int r = -2; r < REPS; r++) {
            double k = 0;
            cp_launch(ctx, kx, 1, &global, &local, &k);
            if (r >= 0) t[r] = k;
        }
        row(pn, "blas1.cl xpay (kernel)", median(t), 3.0 * n * rs);
        for (int r = -2; r < REPS; r++) {
            cl_event ev;
            clEnqueueCopyBuffer(q, x, z, 0, 0, n * rs, 0, NULL, &ev);
            clWaitForEvents(1, &ev);
            if (r >= 0) t[r] = cp_event_seconds(ev);
            clReleaseEvent(ev);
        }
        row(pn, "clEnqueueCopyBuffer (event)", median(t), 2.0 * n * rs);
        /* latency: a tiny reduction and its read; 200 tiny launches queued */
        cl_uint tiny = 1024;
        size_t tg = wg;
        CP_ARG(ctx, kt, 0, part);
        CP_ARG(ctx, kt, 1, x);
        CP_ARG(ctx, kt, 2, tiny);
        for (int r = -2; r < REPS; r++) {
            double t0 = cp_now();
            cp_launch(ctx, kt, 1, &tg, &tg, NULL);
            clEnqueueReadBuffer(q, part, CL_TRUE, 0, 2 * rs, hostbuf, 0, NULL, NULL);
            if (r >= 0) t[r] = cp_now() - t0;
        }
        row(pn, "round trip: tiny kernel + blocking read", median(t), 0);
        for (int r = -2; r < REPS; r++) {
            clFinish(q);
            double t0 = cp_now();
            for (int i = 0; i < 200; i++) cp_launch(ctx, kt, 1, &tg, &tg, NULL);
            clFinish(q);
            if (r >= 0) t[r] = (cp_now() - t0) / 200;
        }
        row(pn, "per launch, 200 tiny kernels queued", median(t), 0);
        for (int i = 0; i < 4; i++) clReleaseMemObject(bufs[i]);
        clReleaseMemObject(part);
        clReleaseMemObject(res);
        clReleaseKernel(kn), clReleaseKernel(ku), clReleaseKernel(kx), clReleaseKernel(kt);
    }
    clphys_context_destroy(ctx);
    return 0;
}
