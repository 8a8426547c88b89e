/* devices.c — `clphys devices`: every OpenCL device and its capabilities. */
#include "cli.h"
#include "opt.h"

#include <stdio.h>
#include <string.h>

int cmd_devices(int argc, char **argv)
{
    int help = 0;
    const cli_opt opts[] = {CLI_OPT_END};
    if (cli_parse("devices", argc, argv, opts, NULL, 0, NULL, &help)) return 2;
    if (help) {
        printf("usage: clphys devices\n  Lists every OpenCL platform and device; the P:D column is a --device spec;\n"
               "  tuned: whether `clphys tune` has tuned it (yes, quick, no; bad: a damaged cache file, ignored).\n");
        return 0;
    }
    clphys_device_info *list;
    int n;
    clphys_status st = clphys_devices_list(&list, &n);
    if (st) return cli_fail("devices", st, NULL);
    printf("%-5s %-4s %-34s %-28s %5s %6s %9s %8s %6s %4s %4s %5s %5s %4s %-6s  %s\n", "P:D", "type", "name",
           "platform", "CUs", "MHz", "global", "local", "maxWG", "WGx", "fp64", "at32", "at64", "subg", "tuned",
           "driver / OpenCL C");
    for (int i = 0; i < n; i++) {
        const clphys_device_info *d = &list[i];
        char pd[16];
        snprintf(pd, sizeof pd, "%d:%d", d->platform_index, d->device_index);
        clphys_tune_status ts;
        const char *tuned = clphys_tune_status_get(d, &ts) ? "?"
                            : ts.entries < 0               ? "bad"
                            : !ts.tuned_paths              ? "no"
                            : ts.quick                     ? "quick"
                                                           : "yes";
        printf("%-5s %-4s %-34.34s %-28.28s %5u %6u %7.1fGi %6lluKi %6zu %4zu %4s %5s %5s %4s %-6s  %s / %s\n", pd,
               d->is_gpu   ? "GPU"
               : d->is_cpu ? "CPU"
                           : "other",
               d->name, d->platform, d->compute_units, d->clock_mhz, (double)d->global_mem_bytes / (1 << 30),
               (unsigned long long)(d->local_mem_bytes >> 10), d->max_work_group_size, d->preferred_wg_multiple,
               d->fp64 ? "yes" : "no", d->int32_atomics ? "yes" : "no", d->int64_atomics ? "yes" : "no",
               d->subgroups ? "yes" : "no", tuned, d->driver_version, d->opencl_c_version);
    }
    /* what `clphys tune` left per device, where it did */
    for (int i = 0; i < n; i++) {
        clphys_tune_status ts;
        if (clphys_tune_status_get(&list[i], &ts) || !ts.tuned_paths) continue;
        printf("%d:%d tuned: %s on %s%s (%s)\n", list[i].platform_index, list[i].device_index, ts.paths, ts.last_tuned,
               ts.quick ? ", quick" : "", ts.file);
    }
    clphys_devices_destroy(list);
    return 0;
}
