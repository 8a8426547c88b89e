/* fuzz_gauge.c — libFuzzer targets of the gauge-file readers: built once
 * per format (fuzz_nersc, fuzz_ildg, fuzz_milc) with GAUGE_FORMAT set to
 * CLPHYS_LQCD_GAUGE_FILE_NERSC, _ILDG or _MILC (tests/fuzz/meson.build).  The
 * first input byte chooses strict or lenient reading (allow_unverified),
 * the rest is the file. */
#include "clphys.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const char *f = fuzz_file(data + 1, size - 1);
    if (!f) return 0;
    clphys_lqcd_gauge_read_params p = {.format = GAUGE_FORMAT, .allow_unverified = data[0] & 1};
    clphys_lqcd_gauge_field g;
    clphys_lqcd_gauge_file_info info;
    if (clphys_lqcd_gauge_read(f, &p, &g, &info) == CLPHYS_SUCCESS) clphys_lqcd_gauge_destroy(&g);
    return 0;
}
