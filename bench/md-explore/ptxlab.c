/* ptxlab.c — run one LJ kernel from the PTX that NVIDIA's OpenCL produced
 * (explore dumps it) through the CUDA driver API, so Nsight Compute (CUDA
 * only) can profile the very code the OpenCL path runs.  Seed benchmark,
 * density 0.5, box 50, particles sorted by cell (15^3 cells, as the plan),
 * full transposed list within 3.3, rows shuffled.  Kernel signature as
 * lj_x.cl: (pos, n, count, list, box4, ibox4, rc2, eps4, eps24, sig2, shift,
 * f, vir).  Usage: ptxlab FILE.ptx KERNEL fp32|fp64 TPI WG [CALLS] */
#include <cuda.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(x)                                                                  \
    do {                                                                       \
        CUresult r_ = (x);                                                     \
        if (r_ != CUDA_SUCCESS) {                                              \
            const char *s_ = "?";                                              \
            cuGetErrorString(r_, &s_);                                         \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_);     \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct { int cell; int idx; } key_t2;
static int cmpk(const void *a, const void *b)
{
    const key_t2 *x = a, *y = b;
    return x->cell != y->cell ? (x->cell < y->cell ? -1 : 1) : (x->idx < y->idx ? -1 : x->idx > y->idx);
}

static double img(double d, double b) { return d > 0.5 * b ? d - b : (d < -0.5 * b ? d + b : d); }

int main(int argc, char **argv)
{
    if (argc < 6) { fprintf(stderr, "usage: ptxlab FILE.ptx KERNEL fp32|fp64 TPI WG [CALLS]\n"); return 2; }
    int dbl = !strcmp(argv[3], "fp64"), tpi = atoi(argv[4]), wg = atoi(argv[5]);
    int calls = argc > 6 ? atoi(argv[6]) : 100;
    /* the seed system of bench/md_seed.h, written out: the row shuffle below continues its generator */
    double rho = 0.5, a = pow(4.0 / rho, 1.0 / 3.0);
    int m = (int)floor(50.0 / a);
    static const double basis[4][3] = {{0, 0, 0}, {.5, .5, 0}, {.5, 0, .5}, {0, .5, .5}};
    size_t n = 4 * (size_t)m * m * m;
    double box = m * a, rs = 3.3, rc = 3.0;
    double *p0 = malloc(3 * n * sizeof *p0), *p = malloc(3 * n * sizeof *p);
    uint64_t s = 0x5eed + (uint64_t)(rho * 1000);
    size_t i = 0;
    for (int z = 0; z < m; z++)
        for (int y = 0; y < m; y++)
            for (int x = 0; x < m; x++)
                for (int b = 0; b < 4; b++, i++) {
                    int c3[3] = {x, y, z};
                    for (int c = 0; c < 3; c++) {
                        s = s * 6364136223846793005ull + 1442695040888963407ull;
                        double u = (double)(s >> 11) / 9007199254740992.0;
                        p0[3 * i + c] = (c3[c] + basis[b][c]) * a + 0.1 * u;
                    }
                }
    int nc = (int)floor(box / rs);
    key_t2 *k = malloc(n * sizeof *k);
    for (i = 0; i < n; i++) {
        int c[3];
        for (int d = 0; d < 3; d++) {
            double w = p0[3 * i + d] - box * floor(p0[3 * i + d] / box);
            c[d] = (int)(w * nc / box);
            if (c[d] >= nc) c[d] = nc - 1;
        }
        k[i].cell = (c[2] * nc + c[1]) * nc + c[0];
        k[i].idx = (int)i;
    }
    qsort(k, n, sizeof *k, cmpk);
    for (i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) {
            double v = p0[3 * k[i].idx + d];
            p[3 * i + d] = v - box * floor(v / box);
        }
    int *cstart = calloc((size_t)nc * nc * nc + 1, sizeof *cstart);
    for (i = 0; i < n; i++) cstart[k[i].cell + 1]++;
    for (int c = 0; c < nc * nc * nc; c++) cstart[c + 1] += cstart[c];
    /* full list, rows shuffled */
    int cap = 160;
    int *rows = malloc(n * cap * sizeof *rows);
    unsigned *cnt = calloc(n, sizeof *cnt);
    for (i = 0; i < n; i++) {
        int c = k[i].cell, cx = c % nc, cy = c / nc % nc, cz = c / nc / nc;
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int cc = (((cz + dz + nc) % nc) * nc + (cy + dy + nc) % nc) * nc + (cx + dx + nc) % nc;
                    for (int j = cstart[cc]; j < cstart[cc + 1]; j++) {
                        if ((size_t)j == i) continue;
                        double r2 = 0;
                        for (int d = 0; d < 3; d++) {
                            double v = img(p[3 * i + d] - p[3 * j + d], box);
                            r2 += v * v;
                        }
                        if (r2 < rs * rs) rows[i * cap + cnt[i]++] = j;
                    }
                }
        for (unsigned q = cnt[i]; q > 1; q--) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            unsigned r = (unsigned)((s >> 33) % q);
            int t = rows[i * cap + q - 1];
            rows[i * cap + q - 1] = rows[i * cap + r];
            rows[i * cap + r] = t;
        }
    }
    unsigned mx = 0;
    size_t tot = 0;
    for (i = 0; i < n; i++) mx = cnt[i] > mx ? cnt[i] : mx, tot += cnt[i];
    int *lt = malloc((size_t)mx * n * sizeof *lt);
    for (i = 0; i < n; i++)
        for (unsigned q = 0; q < mx; q++) lt[(size_t)q * n + i] = q < cnt[i] ? rows[i * cap + q] : 0;
    /* reference forces */
    double *fr = calloc(3 * n, sizeof *fr), fmaxabs = 0;
    for (i = 0; i < n; i++)
        for (unsigned q = 0; q < cnt[i]; q++) {
            int j = rows[i * cap + q];
            double d[3], r2 = 0;
            for (int c = 0; c < 3; c++) d[c] = img(p[3 * i + c] - p[3 * j + c], box), r2 += d[c] * d[c];
            if (r2 >= rc * rc) continue;
            double ir2 = 1 / r2, ir6 = ir2 * ir2 * ir2, fp = 24 * ir6 * (2 * ir6 - 1) * ir2;
            for (int c = 0; c < 3; c++) fr[3 * i + c] += fp * d[c];
        }
    for (i = 0; i < 3 * n; i++) fmaxabs = fmax(fmaxabs, fabs(fr[i]));
    printf("n %zu box %.4f cells %d^3 entries %zu max %u\n", n, box, nc, tot, mx);

    CK(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CK(cuDeviceGet(&dev, 0));
    CK(cuCtxCreate(&ctx, NULL, 0, dev));
    FILE *fp = fopen(argv[1], "rb");
    if (!fp) { perror(argv[1]); return 1; }
    fseek(fp, 0, SEEK_END);
    long sz = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *ptx = malloc(sz + 1);
    if (fread(ptx, 1, sz, fp) != (size_t)sz) return 1;
    ptx[sz] = 0;
    fclose(fp);
    CUmodule mod;
    CUfunction fn;
    char log[8192] = "";
    CUjit_option jo[3] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
    void *jv[3] = {log, (void *)(uintptr_t)sizeof log, (void *)(uintptr_t)1};
    CK(cuModuleLoadDataEx(&mod, ptx, 3, jo, jv));
    CK(cuModuleGetFunction(&fn, mod, argv[2]));
    int regs = 0, lmem = 0;
    cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn);
    cuFuncGetAttribute(&lmem, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn);
    printf("%s %s: %d registers, %d B local; jit: %s\n", argv[2], argv[3], regs, lmem, log);
    size_t rsz = dbl ? 8 : 4;
    void *hp = malloc(4 * rsz * n);
    for (i = 0; i < n; i++)
        for (int c = 0; c < 4; c++) {
            double v = c < 3 ? p[3 * i + c] : 0;
            if (dbl) ((double *)hp)[4 * i + c] = v; else ((float *)hp)[4 * i + c] = (float)v;
        }
    CUdeviceptr dpos, dcnt, dlist, df, dvir;
    CK(cuMemAlloc(&dpos, 4 * rsz * n));
    CK(cuMemAlloc(&dcnt, 4 * n));
    CK(cuMemAlloc(&dlist, (size_t)mx * n * 4));
    CK(cuMemAlloc(&df, 4 * rsz * n));
    CK(cuMemAlloc(&dvir, rsz * n));
    CK(cuMemcpyHtoD(dpos, hp, 4 * rsz * n));
    CK(cuMemcpyHtoD(dcnt, cnt, 4 * n));
    CK(cuMemcpyHtoD(dlist, lt, (size_t)mx * n * 4));
    unsigned nn = (unsigned)n;
    double bx4[4] = {box, box, box, 0}, ib4[4] = {1 / box, 1 / box, 1 / box, 0}, sc[5] = {rc * rc, 4, 24, 1, 0};
    float bx4f[4], ib4f[4], scf[5];
    for (int c = 0; c < 4; c++) bx4f[c] = (float)bx4[c], ib4f[c] = (float)ib4[c];
    for (int c = 0; c < 5; c++) scf[c] = (float)sc[c];
    void *args[13] = {&dpos, &nn, &dcnt, &dlist, dbl ? (void *)bx4 : (void *)bx4f, dbl ? (void *)ib4 : (void *)ib4f,
                      dbl ? (void *)&sc[0] : (void *)&scf[0], dbl ? (void *)&sc[1] : (void *)&scf[1],
                      dbl ? (void *)&sc[2] : (void *)&scf[2], dbl ? (void *)&sc[3] : (void *)&scf[3],
                      dbl ? (void *)&sc[4] : (void *)&scf[4], &df, &dvir};
    unsigned blocks = (unsigned)((n * tpi + wg - 1) / wg);
    CUevent e0, e1;
    CK(cuEventCreate(&e0, 0));
    CK(cuEventCreate(&e1, 0));
    double ts[7];
    for (int r = 0; r < 7; r++) {
        CK(cuEventRecord(e0, 0));
        for (int c = 0; c < calls; c++) CK(cuLaunchKernel(fn, blocks, 1, 1, wg, 1, 1, 0, 0, args, NULL));
        CK(cuEventRecord(e1, 0));
        CK(cuEventSynchronize(e1));
        float ms;
        CK(cuEventElapsedTime(&ms, e0, e1));
        ts[r] = ms;
    }
    qsort(ts, 7, sizeof *ts, cmpd);
    CK(cuMemsetD8(df, 0xff, 4 * rsz * n)); /* poison: NaN */
    CK(cuLaunchKernel(fn, blocks, 1, 1, wg, 1, 1, 0, 0, args, NULL));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(hp, df, 4 * rsz * n));
    double err = 0;
    for (i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            double v = dbl ? ((double *)hp)[4 * i + c] : ((float *)hp)[4 * i + c];
            err = isfinite(v) ? fmax(err, fabs(v - fr[3 * i + c])) : INFINITY;
        }
    printf("%-14s %s tpi %d wg %d: %d calls %.3f ms (median of 7, min %.3f; events incl. launch gaps), "
           "max |F-Fref|/max|Fref| %.2e\n",
           argv[2], argv[3], tpi, wg, calls, ts[3], ts[0], err / fmaxabs);
    return 0;
}
