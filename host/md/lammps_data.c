/* lammps_data.c — LAMMPS data files (atom_style atomic) in and out, and the
 * fcc + Maxwell-Boltzmann generator.  Errors name the file and line. */
#include "md_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void clphys_md_system_destroy(clphys_md_system *s)
{
    if (!s) return;
    free(s->type_mass), free(s->id), free(s->type), free(s->x), free(s->v), free(s->image);
    memset(s, 0, sizeof *s);
}

static int alloc_system(clphys_md_system *s, size_t n, int ntypes)
{
    s->n = n;
    s->ntypes = ntypes;
    s->type_mass = calloc((size_t)ntypes + 1, sizeof *s->type_mass);
    s->id = calloc(n ? n : 1, sizeof *s->id);
    s->type = calloc(n ? n : 1, sizeof *s->type);
    s->x = calloc(3 * n + 1, sizeof *s->x);
    s->v = calloc(3 * n + 1, sizeof *s->v);
    s->image = calloc(3 * n + 1, sizeof *s->image);
    return s->type_mass && s->id && s->type && s->x && s->v && s->image;
}

/* Strip a comment and trailing blanks; returns the first non-blank char. */
static char *clean(char *line, char *comment, size_t clen)
{
    char *h = strchr(line, '#');
    if (comment) comment[0] = 0;
    if (h) {
        if (comment) {
            const char *c = h + 1;
            while (*c == ' ' || *c == '\t')
                c++;
            snprintf(comment, clen, "%s", c);
            size_t m = strlen(comment);
            while (m && isspace((unsigned char)comment[m - 1]))
                comment[--m] = 0;
        }
        *h = 0;
    }
    size_t m = strlen(line);
    while (m && isspace((unsigned char)line[m - 1]))
        line[--m] = 0;
    while (*line && isspace((unsigned char)*line))
        line++;
    return line;
}

#define FAIL(st, ...)                                                                              \
    do {                                                                                           \
        status = cp_error(NULL, st, __VA_ARGS__);                                                  \
        goto done;                                                                                 \
    } while (0)

clphys_status clphys_md_read_lammps_data(const char *file, clphys_md_system *sys)
{
    if (!file || !sys) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "md data: NULL argument");
    memset(sys, 0, sizeof *sys);
    FILE *f = fopen(file, "r");
    if (!f) return cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot open: %s", file, strerror(errno));
    clphys_status status = CLPHYS_SUCCESS;
    char buf[4096], comment[128];
    long line = 0;
    long long natoms = -1;
    int ntypes = -1, have_box[3] = {0}, have_atoms = 0, have_masses = 0;
    double lo[3] = {0}, hi[3] = {0};
    long long *index_of = NULL; /* id -> index */
    long long maxid = 0;
    /* header: first line is a title */
    if (!fgets(buf, sizeof buf, f)) FAIL(CLPHYS_ERR_FORMAT, "%s:1: empty file", file);
    line = 1;
    char *s = NULL;
    while (fgets(buf, sizeof buf, f)) {
        line++;
        s = clean(buf, comment, sizeof comment);
        if (!*s) continue;
        if (!strncmp(s, "Atoms", 5) && comment[0] && strcmp(comment, "atomic"))
            FAIL(CLPHYS_ERR_UNSUPPORTED, "%s:%ld: atom style '%s' (only atomic is supported)", file,
                 line, comment);
        long long v;
        double a, b;
        char w1[64], w2[64];
        if (sscanf(s, "%lf %lf %63s %63s", &a, &b, w1, w2) == 4 && w1[1] == 'l' && w1[2] == 'o') {
            int d = w1[0] - 'x';
            if (d < 0 || d > 2 || strcmp(w1 + 1, "lo") || w2[0] != w1[0] || strcmp(w2 + 1, "hi"))
                FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: bad box bounds line '%s'", file, line, s);
            if (!(b > a))
                FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: %s %g >= %s %g", file, line, w1, a, w2, b);
            lo[d] = a, hi[d] = b, have_box[d] = 1;
        } else if (sscanf(s, "%lf %lf %lf %63s", &a, &b, &a, w1) == 4 && !strcmp(w1, "xy")) {
            FAIL(CLPHYS_ERR_UNSUPPORTED, "%s:%ld: triclinic boxes are not supported", file, line);
        } else if (sscanf(s, "%lld %63s %63s", &v, w1, w2) >= 2 && isdigit((unsigned char)s[0])) {
            int two = sscanf(s, "%lld %63s %63s", &v, w1, w2) == 3;
            if (!strcmp(w1, "atoms") && !two)
                natoms = v;
            else if (!strcmp(w1, "atom") && two && !strcmp(w2, "types"))
                ntypes = (int)v;
            else if (v != 0 &&
                     (!strcmp(w1, "bonds") || !strcmp(w1, "angles") || !strcmp(w1, "dihedrals") ||
                      !strcmp(w1, "impropers") || !strcmp(w1, "ellipsoids") ||
                      !strcmp(w1, "lines") || !strcmp(w1, "triangles") || !strcmp(w1, "bodies")))
                FAIL(CLPHYS_ERR_UNSUPPORTED, "%s:%ld: '%s' (only atom_style atomic is supported)",
                     file, line, s);
            else if (v != 0 && !strcmp(w1, "extra"))
                FAIL(CLPHYS_ERR_UNSUPPORTED, "%s:%ld: '%s' (only atom_style atomic is supported)",
                     file, line, s);
        } else {
            break; /* a section keyword */
        }
        s = NULL;
    }
    if (natoms < 1) FAIL(CLPHYS_ERR_FORMAT, "%s: header has no 'N atoms' line with N >= 1", file);
    if (ntypes < 1)
        FAIL(CLPHYS_ERR_FORMAT, "%s: header has no 'N atom types' line with N >= 1", file);
    for (int d = 0; d < 3; d++)
        if (!have_box[d])
            FAIL(CLPHYS_ERR_FORMAT, "%s: header lacks '%clo %chi'", file, "xyz"[d], "xyz"[d]);
    if (!alloc_system(sys, (size_t)natoms, ntypes))
        FAIL(CLPHYS_ERR_OUT_OF_MEMORY, "%s: %lld atoms", file, natoms);
    memcpy(sys->lo, lo, sizeof lo);
    memcpy(sys->hi, hi, sizeof hi);
    /* sections: s holds the current keyword line (already cleaned) */
    while (s) {
        char key[64];
        snprintf(key, sizeof key, "%s", s);
        long keyline = line;
        int is_atoms = !strncmp(key, "Atoms", 5), is_vel = !strcmp(key, "Velocities"),
            is_mass = !strcmp(key, "Masses"),
            is_pc = !strcmp(key, "Pair Coeffs") || !strcmp(key, "PairIJ Coeffs");
        if (!is_atoms && !is_vel && !is_mass && !is_pc)
            FAIL(CLPHYS_ERR_UNSUPPORTED,
                 "%s:%ld: section '%s' is not supported (atom_style atomic)", file, line, key);
        long long want = is_mass || is_pc ? ntypes : natoms, got = 0;
        if (!strcmp(key, "PairIJ Coeffs")) want = (long long)ntypes * (ntypes + 1) / 2;
        s = NULL;
        while (got < want && fgets(buf, sizeof buf, f)) {
            line++;
            char *t = clean(buf, NULL, 0);
            if (!*t) continue;
            got++;
            if (is_pc) continue;
            if (is_mass) {
                int ty;
                double m;
                if (sscanf(t, "%d %lf", &ty, &m) != 2 || ty < 1 || ty > ntypes || !(m > 0))
                    FAIL(CLPHYS_ERR_FORMAT,
                         "%s:%ld: expected 'type mass' with 1 <= type <= %d and mass > 0, got '%s'",
                         file, line, ntypes, t);
                sys->type_mass[ty] = m;
                continue;
            }
            if (is_atoms) {
                long long id;
                int ty, im[3] = {0, 0, 0};
                double x[3];
                int k = sscanf(t, "%lld %d %lf %lf %lf %d %d %d", &id, &ty, &x[0], &x[1], &x[2],
                               &im[0], &im[1], &im[2]);
                if (k != 5 && k != 8)
                    FAIL(CLPHYS_ERR_FORMAT,
                         "%s:%ld: expected 'id type x y z [ix iy iz]' (atomic), got '%s'", file,
                         line, t);
                if (ty < 1 || ty > ntypes)
                    FAIL(CLPHYS_ERR_INPUT, "%s:%ld: atom type %d outside 1..%d", file, line, ty,
                         ntypes);
                if (id < 1) FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: atom id %lld < 1", file, line, id);
                size_t i = (size_t)(got - 1);
                sys->id[i] = id, sys->type[i] = ty;
                if (id > maxid) maxid = id;
                for (int c = 0; c < 3; c++) {
                    double L = hi[c] - lo[c];
                    if (!isfinite(x[c]) || x[c] < lo[c] - L || x[c] >= hi[c] + L)
                        FAIL(CLPHYS_ERR_INPUT,
                             "%s:%ld: atom %lld %c = %g is far outside the box [%g, %g)", file,
                             line, id, "xyz"[c], x[c], lo[c], hi[c]);
                    if (x[c] < lo[c])
                        x[c] += L, im[c]--;
                    else if (x[c] >= hi[c])
                        x[c] -= L, im[c]++;
                    sys->x[3 * i + c] = x[c];
                    sys->image[3 * i + c] = im[c];
                }
                continue;
            }
            /* Velocities: id vx vy vz (atoms come first in LAMMPS files) */
            long long id;
            double v[3];
            if (sscanf(t, "%lld %lf %lf %lf", &id, &v[0], &v[1], &v[2]) != 4)
                FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: expected 'id vx vy vz', got '%s'", file, line, t);
            if (!have_atoms) FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: Velocities before Atoms", file, line);
            if (id < 1 || id > maxid || index_of[id] < 0)
                FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: velocity of unknown atom id %lld", file, line, id);
            memcpy(&sys->v[3 * index_of[id]], v, sizeof v);
        }
        if (got < want)
            FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: section '%s' (line %ld) ends after %lld of %lld lines",
                 file, line, key, keyline, got, want);
        if (is_mass) have_masses = 1;
        if (is_atoms) {
            have_atoms = 1;
            index_of = malloc((size_t)(maxid + 1) * sizeof *index_of);
            if (!index_of) FAIL(CLPHYS_ERR_OUT_OF_MEMORY, "%s: id map", file);
            for (long long k = 0; k <= maxid; k++)
                index_of[k] = -1;
            for (size_t i = 0; i < sys->n; i++) {
                if (index_of[sys->id[i]] >= 0)
                    FAIL(CLPHYS_ERR_FORMAT, "%s: atom id %lld appears twice", file, sys->id[i]);
                index_of[sys->id[i]] = (long long)i;
            }
        }
        /* next keyword */
        while (fgets(buf, sizeof buf, f)) {
            line++;
            char *t = clean(buf, comment, sizeof comment);
            if (!*t) continue;
            if (!strncmp(t, "Atoms", 5) && comment[0] && strcmp(comment, "atomic"))
                FAIL(CLPHYS_ERR_UNSUPPORTED, "%s:%ld: atom style '%s' (only atomic is supported)",
                     file, line, comment);
            s = t;
            break;
        }
    }
    if (!have_atoms) FAIL(CLPHYS_ERR_FORMAT, "%s: no Atoms section", file);
    if (!have_masses) FAIL(CLPHYS_ERR_FORMAT, "%s: no Masses section", file);
    for (int t = 1; t <= ntypes; t++)
        if (!(sys->type_mass[t] > 0))
            FAIL(CLPHYS_ERR_FORMAT, "%s: no mass for atom type %d", file, t);
done:
    free(index_of);
    fclose(f);
    if (status) clphys_md_system_destroy(sys);
    return status;
}

clphys_status clphys_md_write_lammps_data(const char *file, const clphys_md_system *s)
{
    if (!file || !s) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "md data: NULL argument");
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", file);
    FILE *f = fopen(tmp, "w");
    if (!f) return cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
    fprintf(f, "LAMMPS data file via clphys %s, units = lj\n\n%zu atoms\n%d atom types\n\n",
            clphys_version(), s->n, s->ntypes);
    for (int d = 0; d < 3; d++)
        fprintf(f, "%.17g %.17g %clo %chi\n", s->lo[d], s->hi[d], "xyz"[d], "xyz"[d]);
    fprintf(f, "\nMasses\n\n");
    for (int t = 1; t <= s->ntypes; t++)
        fprintf(f, "%d %.16g\n", t, s->type_mass[t]);
    fprintf(f, "\nAtoms # atomic\n\n");
    for (size_t i = 0; i < s->n; i++)
        fprintf(f, "%lld %d %.17g %.17g %.17g %d %d %d\n", s->id[i], s->type[i], s->x[3 * i],
                s->x[3 * i + 1], s->x[3 * i + 2], s->image[3 * i], s->image[3 * i + 1],
                s->image[3 * i + 2]);
    fprintf(f, "\nVelocities\n\n");
    for (size_t i = 0; i < s->n; i++)
        fprintf(f, "%lld %.17g %.17g %.17g\n", s->id[i], s->v[3 * i], s->v[3 * i + 1],
                s->v[3 * i + 2]);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, file)) {
        remove(tmp);
        return cp_error(NULL, CLPHYS_ERR_IO, "%s: write failed: %s", file, strerror(errno));
    }
    return CLPHYS_SUCCESS;
}

static double normal(uint64_t *st)
{
    double u[2];
    for (int k = 0; k < 2; k++) {
        u[k] = ((cp_splitmix64(st) >> 11) + 0.5) / 9007199254740992.0;
    }
    return sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

clphys_status clphys_md_fcc(double rho, int cells, double temp, uint64_t seed, clphys_md_system *s)
{
    if (!s || !(rho > 0) || cells < 1 || cells > 400 || !(temp >= 0))
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "md fcc: rho = %g (> 0), cells = %d (1..400), T = %g (>= 0)", rho, cells,
                        temp);
    memset(s, 0, sizeof *s);
    size_t n = 4 * (size_t)cells * cells * cells;
    if (!alloc_system(s, n, 1))
        return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "md fcc: %zu atoms", n);
    double a = pow(4.0 / rho, 1.0 / 3.0);
    static const double basis[4][3] = {{0, 0, 0}, {.5, .5, 0}, {.5, 0, .5}, {0, .5, .5}};
    s->type_mass[1] = 1;
    for (int d = 0; d < 3; d++)
        s->lo[d] = 0, s->hi[d] = cells * a;
    size_t i = 0;
    double p[3] = {0};
    for (int z = 0; z < cells; z++)
        for (int y = 0; y < cells; y++)
            for (int x = 0; x < cells; x++)
                for (int b = 0; b < 4; b++, i++) {
                    int c3[3] = {x, y, z};
                    s->id[i] = (long long)i + 1, s->type[i] = 1;
                    for (int c = 0; c < 3; c++) {
                        s->x[3 * i + c] = (c3[c] + basis[b][c]) * a;
                        s->v[3 * i + c] = normal(&seed);
                        p[c] += s->v[3 * i + c];
                    }
                }
    double ke2 = 0;
    for (i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            s->v[3 * i + c] -= p[c] / n;
            ke2 += s->v[3 * i + c] * s->v[3 * i + c];
        }
    double scale = n > 1 && ke2 > 0 ? sqrt(temp * (3.0 * n - 3.0) / ke2) : 0;
    for (i = 0; i < 3 * n; i++)
        s->v[i] *= scale;
    return CLPHYS_SUCCESS;
}
