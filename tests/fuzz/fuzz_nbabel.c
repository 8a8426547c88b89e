/* fuzz_nbabel.c — libFuzzer target: the NBabel reader (clphys_nbody_read). */
#include "clphys.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *f = fuzz_file(data, size);
    if (!f) return 0;
    clphys_nbody_system s;
    if (clphys_nbody_read(NULL, f, &s) == CLPHYS_SUCCESS) clphys_nbody_system_destroy(&s);
    return 0;
}
