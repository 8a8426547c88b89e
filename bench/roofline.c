/* roofline.c — print the device's measured limits next to each other. */
#include "bench.h"

void bench_print_limits(const clphys_limits *lim, const clphys_device_info *dev, FILE *out)
{
    fprintf(out, "Measured limits of %s (%s, driver %s), medians of %d runs:\n", dev->name, dev->platform,
            dev->driver_version, lim->repeat);
    fprintf(out, "  copy bandwidth   %9.1f GB/s   (bytes read + written, %zu MiB buffers)\n",
            lim->copy_bytes_per_s / 1e9, lim->buffer_bytes >> 20);
    fprintf(out, "  triad bandwidth  %9.1f GB/s\n", lim->triad_bytes_per_s / 1e9);
    fprintf(out, "  fp32 FMA         %9.1f GFLOP/s (2 flops per multiply-add)\n", lim->fma_fp32_flops / 1e9);
    if (lim->fma_fp64_flops > 0)
        fprintf(out, "  fp64 FMA         %9.1f GFLOP/s\n", lim->fma_fp64_flops / 1e9);
    else
        fprintf(out, "  fp64 FMA         (no fp64 on this device)\n");
}

void bench_print_transfers(const clphys_transfer_limits *t, FILE *out)
{
    fprintf(out, "  host -> device   %9.1f GB/s   (page-locked, %zu MiB transfers)\n", t->h2d_bytes_per_s / 1e9,
            t->bytes >> 20);
    fprintf(out, "  device -> host   %9.1f GB/s\n", t->d2h_bytes_per_s / 1e9);
    fprintf(out, "  both at once     %9.1f GB/s   (each way)\n", t->duplex_bytes_per_s / 1e9);
    fprintf(out, "  host memcpy      %9.1f GB/s   (one thread, bytes copied)\n", t->host_copy_bytes_per_s / 1e9);
}
