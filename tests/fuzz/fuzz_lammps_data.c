/* fuzz_lammps_data.c — libFuzzer target: the LAMMPS data-file reader
 * (clphys_md_read_lammps_data).  Any input must give a status, never a
 * crash, a leak, a hang or an allocation beyond the input's size. */
#include "clphys.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *f = fuzz_file(data, size);
    if (!f) return 0;
    clphys_md_system s;
    if (clphys_md_read_lammps_data(f, &s) == CLPHYS_SUCCESS) clphys_md_system_destroy(&s);
    return 0;
}
