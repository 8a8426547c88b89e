/* md_util.c — see md_util.h. */
#include "md_util.h"
#include "util.h"

#include <stdio.h>
#include <string.h>
#include <zlib.h>

/* tests/data/NAME, gzip-compressed, decompressed into DIR/OUT; its path in
 * path. */
static void gunzip(const char *name, const char *dir, const char *out, char *path, size_t n)
{
    char gz[512];
    tu_data_path(gz, sizeof gz, name);
    snprintf(path, n, "%s/%s", dir, out);
    gzFile in = gzopen(gz, "rb");
    FILE *f = in ? fopen(path, "wb") : NULL;
    if (!f) {
        if (in) gzclose(in);
        fail_msg("cannot decompress %s into %s", gz, path);
    }
    char buf[65536];
    int k;
    while ((k = gzread(in, buf, sizeof buf)) > 0) assert_int_equal(fwrite(buf, 1, (size_t)k, f), (size_t)k);
    const int bad = k < 0;
    gzclose(in);
    assert_int_equal(fclose(f), 0);
    if (bad) fail_msg("%s: damaged gzip data", gz);
}

void tm_lammps_in_lj(const char *dir, clphys_md_system *s, double ref[3][TM_THERMO_COLS])
{
    char data[600], logf[600];
    gunzip("md/in.lj.data.gz", dir, "in.lj.data", data, sizeof data);
    gunzip("md/log.lammps.gz", dir, "log.lammps", logf, sizeof logf);
    int rows = 0, in_thermo = 0;
    FILE *f = fopen(logf, "r");
    assert_non_null(f);
    char line[1024];
    while (rows < 3 && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "Step Temp PotEng KinEng TotEng Press", 36)) {
            in_thermo = 1;
            continue;
        }
        double *r = ref[rows];
        if (in_thermo && sscanf(line, "%lf %lf %lf %lf %lf %lf", &r[0], &r[1], &r[2], &r[3], &r[4], &r[5]) == 6) rows++;
    }
    fclose(f);
    assert_int_equal(rows, 3);
    assert_int_equal(clphys_md_read_lammps_data(data, s), CLPHYS_SUCCESS);
    assert_int_equal(s->n, 32000);
    remove(data), remove(logf);
}
