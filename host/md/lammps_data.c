/* lammps_data.c — LAMMPS data files (atom_style atomic) in and out, the
 * fcc + Maxwell-Boltzmann generator and the LJ seed benchmark's input.  Errors name the file and line. */
#include "md_internal.h"
#include "platform/textfile.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ---- reading -------------------------------------------------------------
 * Nothing the header says is trusted before the data is there: the atom
 * arrays grow as atom lines arrive (never beyond the header's count), atom
 * IDs are looked up through a sorted (ID, index) table (memory in
 * proportion to the atoms, whatever the IDs), masses are kept as they come
 * and the per-type table is made only once the Masses section has shown
 * one line per type. */

#define LINE_MAX_CHARS 4096
#define MAX_TOKENS     16

typedef struct {
    long long id;
    size_t i;
} id_index;

static int by_id(const void *a, const void *b)
{
    long long x = ((const id_index *)a)->id, y = ((const id_index *)b)->id;
    return (x > y) - (x < y);
}

/* Strip a comment (kept in comment[], when given) and blanks around the line. */
static char *clean(char *line, char *comment, size_t clen)
{
    char *h = strchr(line, '#');
    if (comment) comment[0] = 0;
    if (h) {
        if (comment) {
            const char *c = h + 1;
            while (*c == ' ' || *c == '\t') c++;
            snprintf(comment, clen, "%s", c);
            size_t m = strlen(comment);
            while (m && isspace((unsigned char)comment[m - 1])) comment[--m] = 0;
        }
        *h = 0;
    }
    size_t m = strlen(line);
    while (m && isspace((unsigned char)line[m - 1])) line[--m] = 0;
    while (*line && isspace((unsigned char)*line)) line++;
    return line;
}

/* Split in place at blanks; returns the number of tokens (MAX_TOKENS + 1: too many). */
static int split(char *s, char **tok)
{
    int n = 0;
    for (char *p = strtok(s, " \t\r\n"); p; p = strtok(NULL, " \t\r\n")) {
        if (n == MAX_TOKENS) return MAX_TOKENS + 1;
        tok[n++] = p;
    }
    return n;
}

/* Whole-token numbers: "10abc", "", "1e3" (for an integer) are not numbers;
 * integers out of range of long long are refused (ERANGE). */
static int whole_ll(const char *t, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(t, &end, 10);
    return end != t && !*end && errno == 0;
}
static int whole_d(const char *t, double *v)
{
    char *end;
    *v = strtod(t, &end);
    return end != t && !*end;
}
static int whole_int(const char *t, int *v)
{
    long long x;
    if (!whole_ll(t, &x) || x < INT_MIN || x > INT_MAX) return 0;
    *v = (int)x;
    return 1;
}

/* A section keyword line starts with a letter (numbers start data lines). */
static int is_keyword(const char *s) { return isalpha((unsigned char)s[0]); }

typedef struct {
    const char *file;
    cp_textfile *f;
    long line;
    char buf[LINE_MAX_CHARS];
} reader;

/* The next raw line into r->buf: 1, or 0 at the end of the file.  A line
 * longer than the buffer, binary data (a NUL byte: /dev/zero would
 * otherwise read as endless blank lines) or a read error set *st.  A
 * gzip-compressed file reads as its text (platform/textfile.h). */
static int raw_line(reader *r, clphys_status *st)
{
    size_t l;
    if (!cp_text_line(r->f, r->buf, sizeof r->buf, &l, r->line + 1, st)) return 0;
    r->line++;
    return 1;
}

/* Next line, cleaned (comment in comment[] when given); NULL at the end or
 * on an error (*st). */
static char *next_line(reader *r, char *comment, size_t clen, clphys_status *st)
{
    if (!raw_line(r, st)) return NULL;
    return clean(r->buf, comment, clen);
}

/* Grow the atom arrays to hold cap atoms (cap <= the header's count). */
static int grow_atoms(clphys_md_system *s, long **aline, size_t cap)
{
    if (cap > SIZE_MAX / (3 * sizeof(double))) return 0;
    long long *id = realloc(s->id, cap * sizeof *id);
    if (id) s->id = id;
    int *type = id ? realloc(s->type, cap * sizeof *type) : NULL;
    if (type) s->type = type;
    double *x = type ? realloc(s->x, 3 * cap * sizeof *x) : NULL;
    if (x) s->x = x;
    int *image = x ? realloc(s->image, 3 * cap * sizeof *image) : NULL;
    if (image) s->image = image;
    long *al = image ? realloc(*aline, cap * sizeof *al) : NULL;
    if (al) *aline = al;
    return al != NULL;
}

#define FAIL(st_, ...)                                                                                                 \
    do {                                                                                                               \
        status = cp_error(NULL, st_, __VA_ARGS__);                                                                     \
        goto done;                                                                                                     \
    } while (0)

clphys_status clphys_md_read_lammps_data(const char *file, clphys_md_system *sys)
{
    if (!file || !sys) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "md data: NULL argument");
    memset(sys, 0, sizeof *sys);
    reader R = {.file = file};
    clphys_status ost = cp_text_open(NULL, file, "LAMMPS data", &R.f);
    if (ost) return ost;
    clphys_status status = CLPHYS_SUCCESS;
    char comment[128], *tok[MAX_TOKENS];
    long long natoms = -1, ntypes = -1;
    long natoms_line = 0, ntypes_line = 0, atoms_at = 0, vel_at = 0, mass_at = 0;
    int have_box[3] = {0};
    double lo[3] = {0}, hi[3] = {0};
    size_t n = 0, cap = 0, nmass = 0, mcap = 0;
    long *aline = NULL;          /* line of each atom, for messages   */
    id_index *ids = NULL;        /* sorted by ID once Atoms is read   */
    unsigned char *vseen = NULL; /* atoms given a velocity            */
    struct {
        long long type;
        double m;
        long line;
    } *mass = NULL;
    char *s;
    /* header: the first line is a title */
    if (!raw_line(&R, &status)) {
        if (status) goto done;
        FAIL(CLPHYS_ERR_FORMAT, "%s:1: empty file", file);
    }
    for (;;) {
        s = next_line(&R, comment, sizeof comment, &status);
        if (status) goto done;
        if (!s) FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: the file ends in the header (no Atoms section)", file, R.line);
        if (!*s) continue;
        if (is_keyword(s)) break; /* the first section */
        char copy[LINE_MAX_CHARS];
        snprintf(copy, sizeof copy, "%s", s);
        int nt = split(copy, tok);
        double a, b;
        long long v;
        if (nt == 4 && strlen(tok[2]) == 3 && !strcmp(tok[2] + 1, "lo") && tok[3][0] == tok[2][0] &&
            !strcmp(tok[3] + 1, "hi") && tok[2][0] >= 'x' && tok[2][0] <= 'z') {
            int d = tok[2][0] - 'x';
            if (!whole_d(tok[0], &a) || !whole_d(tok[1], &b) || !isfinite(a) || !isfinite(b))
                FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: box bounds '%s': two finite numbers expected", file, R.line, s);
            if (!(b > a)) FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: %s %g >= %s %g", file, R.line, tok[2], a, tok[3], b);
            if (have_box[d]) FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: second '%s %s' line", file, R.line, tok[2], tok[3]);
            lo[d] = a, hi[d] = b, have_box[d] = 1;
        } else if (nt == 6 && !strcmp(tok[3], "xy") && !strcmp(tok[4], "xz") && !strcmp(tok[5], "yz")) {
            FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: a triclinic box (xy xz yz): clphys reads orthorhombic boxes only", file,
                 R.line);
        } else if (nt >= 2 && isdigit((unsigned char)tok[0][0])) {
            if (!whole_ll(tok[0], &v) || v < 0)
                FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: '%s': the count '%s' is not a whole number >= 0 (or is too large)",
                     file, R.line, s, tok[0]);
            if (nt == 2 && !strcmp(tok[1], "atoms")) {
                if (natoms >= 0)
                    FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: second 'atoms' line (the first at line %ld)", file, R.line,
                         natoms_line);
                natoms = v, natoms_line = R.line;
            } else if (nt == 3 && !strcmp(tok[1], "atom") && !strcmp(tok[2], "types")) {
                if (ntypes >= 0)
                    FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: second 'atom types' line (the first at line %ld)", file, R.line,
                         ntypes_line);
                if (v > INT_MAX)
                    FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: %lld atom types: at most %d", file, R.line, v, INT_MAX);
                ntypes = v, ntypes_line = R.line;
            } else if (v != 0 &&
                       (!strcmp(tok[1], "bonds") || !strcmp(tok[1], "angles") || !strcmp(tok[1], "dihedrals") ||
                        !strcmp(tok[1], "impropers") || !strcmp(tok[1], "ellipsoids") || !strcmp(tok[1], "lines") ||
                        !strcmp(tok[1], "triangles") || !strcmp(tok[1], "bodies") || !strcmp(tok[1], "extra"))) {
                FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: '%s': clphys reads atom_style atomic only", file, R.line, s);
            }
        } else {
            FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: '%s' is not a header line of a LAMMPS data file", file, R.line, s);
        }
    }
    if (natoms < 1) FAIL(CLPHYS_ERR_FORMAT, "%s: header has no 'N atoms' line with N >= 1", file);
    if (ntypes < 1) FAIL(CLPHYS_ERR_FORMAT, "%s: header has no 'N atom types' line with N >= 1", file);
    for (int d = 0; d < 3; d++)
        if (!have_box[d]) FAIL(CLPHYS_ERR_FORMAT, "%s: header lacks '%clo %chi'", file, "xyz"[d], "xyz"[d]);
    memcpy(sys->lo, lo, sizeof lo);
    memcpy(sys->hi, hi, sizeof hi);
    /* sections: s is the keyword line (cleaned; its comment in comment[]) */
    while (s) {
        char key[64];
        snprintf(key, sizeof key, "%s", s);
        const long keyline = R.line;
        int is_atoms = !strcmp(key, "Atoms"), is_vel = !strcmp(key, "Velocities"), is_mass = !strcmp(key, "Masses"),
            is_pcij = !strcmp(key, "PairIJ Coeffs"), is_pc = !strcmp(key, "Pair Coeffs") || is_pcij;
        if (is_atoms && comment[0] && strcmp(comment, "atomic"))
            FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: atom style '%s': clphys reads atom_style atomic only", file, R.line,
                 comment);
        if (!is_atoms && !is_vel && !is_mass && !is_pc)
            FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: section '%s': clphys reads Masses, Atoms, Velocities and Pair Coeffs",
                 file, R.line, key);
        long *first = is_atoms ? &atoms_at : is_vel ? &vel_at : is_mass ? &mass_at : NULL;
        if (first && *first)
            FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: second %s section (the first at line %ld)", file, R.line, key, *first);
        if (first) *first = keyline;
        if (is_vel && !atoms_at) FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: Velocities before Atoms", file, R.line);
        const long long want = is_pcij ? ntypes * (ntypes + 1) / 2 : is_mass || is_pc ? ntypes : natoms;
        const char *unit = is_atoms || is_vel ? "atom" : is_mass ? "type" : "coefficient";
        const long hline = is_atoms || is_vel ? natoms_line : ntypes_line;
        long long got = 0;
        for (;;) {
            /* after the section's lines, the next non-blank line is the next keyword */
            s = next_line(&R, comment, sizeof comment, &status);
            if (status) goto done;
            if (!s) break;
            if (!*s) continue;
            if (is_keyword(s)) break;
            if (got == want)
                FAIL(CLPHYS_ERR_FORMAT,
                     "%s:%ld: section %s (line %ld) has more than the %lld %s lines the header "
                     "(line %ld) gives",
                     file, R.line, key, keyline, want, unit, hline);
            got++;
            if (is_pc) continue;
            char line_copy[LINE_MAX_CHARS];
            snprintf(line_copy, sizeof line_copy, "%s", s);
            int nt = split(s, tok);
            if (is_mass) {
                long long ty;
                double m;
                if (nt != 2 || !whole_ll(tok[0], &ty) || !whole_d(tok[1], &m) || ty < 1 || ty > ntypes || !(m > 0) ||
                    !isfinite(m))
                    FAIL(CLPHYS_ERR_FORMAT,
                         "%s:%ld: expected 'type mass' with 1 <= type <= %lld and a finite mass > 0, "
                         "got '%s'",
                         file, R.line, ntypes, line_copy);
                if (nmass == mcap) {
                    size_t c = mcap ? 2 * mcap : 16;
                    void *p = realloc(mass, c * sizeof *mass);
                    if (!p) FAIL(CLPHYS_ERR_OUT_OF_MEMORY, "%s: masses", file);
                    mass = p, mcap = c;
                }
                mass[nmass].type = ty, mass[nmass].m = m, mass[nmass].line = R.line;
                nmass++;
            } else if (is_atoms) {
                long long id;
                int ty = 0, im[3] = {0, 0, 0};
                double x[3];
                int ok = (nt == 5 || nt == 8) && whole_ll(tok[0], &id) && whole_int(tok[1], &ty);
                for (int c = 0; ok && c < 3; c++) ok = whole_d(tok[2 + c], &x[c]);
                for (int c = 0; ok && nt == 8 && c < 3; c++) ok = whole_int(tok[5 + c], &im[c]);
                if (!ok)
                    FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: expected 'id type x y z [ix iy iz]' (atom_style atomic), got '%s'",
                         file, R.line, line_copy);
                if (id < 1) FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: atom ID %lld < 1", file, R.line, id);
                if (ty < 1 || ty > ntypes)
                    FAIL(CLPHYS_ERR_INPUT, "%s:%ld: atom ID %lld: type %d outside 1..%lld", file, R.line, id, ty,
                         ntypes);
                if (n == cap) {
                    size_t c = cap ? 2 * cap : 1024;
                    if ((long long)c > natoms || c < cap) c = (size_t)natoms;
                    if (!grow_atoms(sys, &aline, c)) FAIL(CLPHYS_ERR_OUT_OF_MEMORY, "%s: %zu atoms", file, c);
                    cap = c;
                }
                sys->id[n] = id, sys->type[n] = ty, aline[n] = R.line;
                for (int c = 0; c < 3; c++) {
                    double L = hi[c] - lo[c];
                    if (!isfinite(x[c]) || !(x[c] >= lo[c] - L && x[c] < hi[c] + L))
                        FAIL(CLPHYS_ERR_INPUT, "%s:%ld: atom ID %lld: %c = %g is not within one box length of [%g, %g)",
                             file, R.line, id, "xyz"[c], x[c], lo[c], hi[c]);
                    const int step = x[c] < lo[c] ? -1 : x[c] >= hi[c] ? 1 : 0;
                    if ((step < 0 && im[c] == INT_MIN) || (step > 0 && im[c] == INT_MAX))
                        FAIL(CLPHYS_ERR_INPUT,
                             "%s:%ld: atom ID %lld: image flag i%c = %d cannot count the wrap of "
                             "%c = %g into the box (%d .. %d)",
                             file, R.line, id, "xyz"[c], im[c], "xyz"[c], x[c], INT_MIN, INT_MAX);
                    x[c] -= step * L, im[c] += step;
                    sys->x[3 * n + c] = x[c];
                    sys->image[3 * n + c] = im[c];
                }
                n++;
            } else { /* Velocities: id vx vy vz */
                long long id;
                double v[3];
                int ok = nt == 4 && whole_ll(tok[0], &id);
                for (int c = 0; ok && c < 3; c++) ok = whole_d(tok[1 + c], &v[c]);
                if (!ok) FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: expected 'id vx vy vz', got '%s'", file, R.line, line_copy);
                id_index key_id = {id, 0}, *hit = bsearch(&key_id, ids, n, sizeof *ids, by_id);
                if (!hit)
                    FAIL(CLPHYS_ERR_FORMAT,
                         "%s:%ld: velocity of atom ID %lld, which the Atoms section (line %ld) "
                         "does not have",
                         file, R.line, id, atoms_at);
                if (vseen[hit->i]) FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: second velocity of atom ID %lld", file, R.line, id);
                for (int c = 0; c < 3; c++)
                    if (!isfinite(v[c]))
                        FAIL(CLPHYS_ERR_INPUT, "%s:%ld: atom ID %lld: velocity v%c = %g is not finite", file, R.line,
                             id, "xyz"[c], v[c]);
                vseen[hit->i] = 1;
                memcpy(&sys->v[3 * hit->i], v, sizeof v);
            }
        }
        if (got < want)
            FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: section %s (line %ld) has %lld %s lines; the header (line %ld) gives %lld",
                 file, R.line, key, keyline, got, unit, hline, want);
        if (is_atoms) {
            /* IDs through a sorted table: memory in proportion to the atoms */
            sys->n = n;
            ids = malloc(n * sizeof *ids);
            vseen = calloc(n, 1);
            sys->v = calloc(3 * n, sizeof *sys->v);
            if (!ids || !vseen || !sys->v) FAIL(CLPHYS_ERR_OUT_OF_MEMORY, "%s: %zu atoms", file, n);
            for (size_t i = 0; i < n; i++) ids[i].id = sys->id[i], ids[i].i = i;
            qsort(ids, n, sizeof *ids, by_id);
            for (size_t k = 1; k < n; k++)
                if (ids[k].id == ids[k - 1].id)
                    FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: atom ID %lld appears twice (also at line %ld)", file,
                         aline[ids[k].i > ids[k - 1].i ? ids[k].i : ids[k - 1].i], ids[k].id,
                         aline[ids[k].i > ids[k - 1].i ? ids[k - 1].i : ids[k].i]);
        }
    }
    if (!atoms_at) FAIL(CLPHYS_ERR_FORMAT, "%s: no Atoms section", file);
    if (!mass_at) FAIL(CLPHYS_ERR_FORMAT, "%s: no Masses section", file);
    /* the Masses section has shown ntypes lines: the table is as large as the data */
    sys->ntypes = (int)ntypes;
    sys->type_mass = calloc((size_t)ntypes + 1, sizeof *sys->type_mass);
    if (!sys->type_mass) FAIL(CLPHYS_ERR_OUT_OF_MEMORY, "%s: %lld atom types", file, ntypes);
    for (size_t k = 0; k < nmass; k++) {
        if (sys->type_mass[mass[k].type] > 0)
            FAIL(CLPHYS_ERR_FORMAT, "%s:%ld: second mass for atom type %lld", file, mass[k].line, mass[k].type);
        sys->type_mass[mass[k].type] = mass[k].m;
    }
done:
    free(aline), free(ids), free(vseen), free(mass);
    cp_text_close(R.f);
    if (status) clphys_md_system_destroy(sys);
    return status;
}

clphys_status clphys_md_write_lammps_data(const char *file, const clphys_md_system *s)
{
    if (!file || !s) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "md data: NULL argument");
    char tmp[4200];
    FILE *f;
    CP_TRY(clphys_output_open(file, &f, tmp, sizeof tmp));
    fprintf(f, "LAMMPS data file via clphys %s, units = lj\n\n%zu atoms\n%d atom types\n\n", clphys_version(), s->n,
            s->ntypes);
    for (int d = 0; d < 3; d++) fprintf(f, "%.17g %.17g %clo %chi\n", s->lo[d], s->hi[d], "xyz"[d], "xyz"[d]);
    fprintf(f, "\nMasses\n\n");
    for (int t = 1; t <= s->ntypes; t++) fprintf(f, "%d %.16g\n", t, s->type_mass[t]);
    fprintf(f, "\nAtoms # atomic\n\n");
    for (size_t i = 0; i < s->n; i++)
        fprintf(f, "%lld %d %.17g %.17g %.17g %d %d %d\n", s->id[i], s->type[i], s->x[3 * i], s->x[3 * i + 1],
                s->x[3 * i + 2], s->image[3 * i], s->image[3 * i + 1], s->image[3 * i + 2]);
    fprintf(f, "\nVelocities\n\n");
    for (size_t i = 0; i < s->n; i++)
        fprintf(f, "%lld %.17g %.17g %.17g\n", s->id[i], s->v[3 * i], s->v[3 * i + 1], s->v[3 * i + 2]);
    return clphys_output_close(f, tmp, file, !ferror(f));
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
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "md fcc: rho = %g (> 0), cells = %d (1..400), T = %g (>= 0)",
                        rho, cells, temp);
    memset(s, 0, sizeof *s);
    size_t n = 4 * (size_t)cells * cells * cells;
    if (!alloc_system(s, n, 1)) return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "md fcc: %zu atoms", n);
    double a = pow(4.0 / rho, 1.0 / 3.0);
    static const double basis[4][3] = {{0, 0, 0}, {.5, .5, 0}, {.5, 0, .5}, {0, .5, .5}};
    s->type_mass[1] = 1;
    for (int d = 0; d < 3; d++) s->lo[d] = 0, s->hi[d] = cells * a;
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
    for (i = 0; i < 3 * n; i++) s->v[i] *= scale;
    return CLPHYS_SUCCESS;
}

clphys_status clphys_md_lj_seed_input(double rho, double edge, size_t *n, double box[3], double *pos)
{
    const double a = rho > 0 ? pow(4.0 / rho, 1.0 / 3.0) : 0;
    const double m = a > 0 ? floor(edge / a) : 0;
    if (!n || !box || !(rho > 0) || !(edge > 0) || !(m >= 1) || 4 * m * m * m > 2147483647.0)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "lj seed input: rho = %g, edge = %g (both > 0, at least one fcc cell, at most 2^31 - 1 atoms)",
                        rho, edge);
    const int mi = (int)m;
    static const double basis[4][3] = {{0, 0, 0}, {.5, .5, 0}, {.5, 0, .5}, {0, .5, .5}};
    *n = 4 * (size_t)mi * mi * mi;
    box[0] = box[1] = box[2] = mi * a;
    if (!pos) return CLPHYS_SUCCESS;
    uint64_t s = 0x5eed + (uint64_t)(rho * 1000);
    size_t i = 0;
    for (int z = 0; z < mi; z++)
        for (int y = 0; y < mi; y++)
            for (int x = 0; x < mi; x++)
                for (int b = 0; b < 4; b++, i++) {
                    const int c3[3] = {x, y, z};
                    for (int c = 0; c < 3; c++) {
                        s = s * 6364136223846793005ull + 1442695040888963407ull;
                        const double u = (double)(s >> 11) / 9007199254740992.0;
                        pos[3 * i + c] = (c3[c] + basis[b][c]) * a + 0.1 * u;
                    }
                }
    return CLPHYS_SUCCESS;
}
