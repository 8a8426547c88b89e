/* fuzz_netcdf.c — libFuzzer target: the Poisson path's NetCDF readers
 * (clphys_poisson_read_bathymetry, clphys_poisson_read_field) on classic
 * and NetCDF-4 files.  The first input byte chooses the reader: even, the
 * bathymetry variable `depth`; odd, the field `f` of an 8 x 8 x 16 grid;
 * the rest is the file.  Any input must give a status, never a crash, a
 * leak, a hang or an allocation beyond the input's size. */
#include "clphys.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const char *f = fuzz_file(data + 1, size - 1);
    if (!f) return 0;
    if (data[0] % 2 == 0) {
        clphys_poisson_bathymetry b;
        if (clphys_poisson_read_bathymetry(f, "depth", &b) == CLPHYS_SUCCESS) clphys_poisson_bathymetry_destroy(&b);
    } else {
        static double field[8 * 8 * 16];
        (void)clphys_poisson_read_field(f, "f", 8, 8, 16, NULL, field);
    }
    return 0;
}
