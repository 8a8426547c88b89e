/* embed_limits.c — the smallest embedding: pick a device, measure its limits.
 * Build: cc embed_limits.c $(pkg-config --cflags --libs clphys) */
#include <clphys.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    clphys_context *ctx;
    clphys_status st = clphys_context_create(argc > 1 ? argv[1] : NULL, &ctx);
    if (st != CLPHYS_SUCCESS) {
        fprintf(stderr, "%s: %s\n", clphys_status_string(st), clphys_last_error(NULL));
        return 1;
    }
    clphys_limits lim;
    st = clphys_measure_limits(ctx, 3, &lim);
    if (st == CLPHYS_SUCCESS)
        printf("%s: copy %.1f GB/s, fp32 %.1f GFLOP/s\n", clphys_context_device(ctx)->name, lim.copy_bytes_per_s / 1e9,
               lim.fma_fp32_flops / 1e9);
    else
        fprintf(stderr, "%s: %s\n", clphys_status_string(st), clphys_last_error(ctx));
    clphys_context_destroy(ctx);
    return st == CLPHYS_SUCCESS ? 0 : 1;
}
