/* gauge_nersc.c — NERSC gauge files (format and checks:
 * include/clphys_lqcd.h).  The header is read first and its sizes checked
 * against the file's size before the field is allocated; the data is read
 * in pieces, so memory is the field's own. */
#include "lqcd_gauge_file.h"
#include "lqcd_su3.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HDR_MAX     65536
#define TRAIL_MAX   4096 /* whitespace after the data that other writers leave */
#define CHUNK_LINKS 4096

/* The key of a header line "KEY = value" (blanks trimmed) into key; 0 when
 * the line has no '='. */
static int line_key(const char *line, char *key, size_t n)
{
    while (*line == ' ' || *line == '\t') line++;
    size_t m = strcspn(line, "=\n");
    if (line[m] != '=') return 0;
    while (m > 0 && (line[m - 1] == ' ' || line[m - 1] == '\t')) m--;
    if (m >= n) m = n - 1;
    memcpy(key, line, m);
    key[m] = 0;
    return 1;
}

/* Value of "KEY = value" in the header text, or NULL; *count is how many
 * lines give KEY and *lines their header line numbers (the first two). */
static const char *hdr_get(const char *hdr, const char *key, char *val, size_t n, int *count, int lines[2])
{
    const char *found = NULL;
    int no = 1; /* the header text starts after BEGIN_HEADER, line 1 */
    *count = 0;
    for (const char *line = hdr; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        char k[64];
        no++;
        if (!line_key(line, k, sizeof k) || strcmp(k, key)) continue;
        if (*count < 2) lines[*count] = no;
        if ((*count)++) continue;
        const char *p = strchr(line, '=') + 1;
        while (*p == ' ' || *p == '\t') p++;
        size_t m = strcspn(p, "\r\n");
        while (m > 0 && (p[m - 1] == ' ' || p[m - 1] == '\t')) m--;
        if (m >= n) m = n - 1;
        memcpy(val, p, m);
        val[m] = 0;
        found = val;
    }
    return found;
}

/* A header real: the whole value, finite. */
static clphys_status hdr_real(const char *file, const char *key, const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *end || !isfinite(d))
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: header: %s = %s is not a finite number", file, key, v);
    *out = d;
    return CLPHYS_SUCCESS;
}

clphys_status lqcd_gauge_file_read_nersc(const lqcd_gauge_file_input *in, const clphys_lqcd_gauge_read_params *p,
                                         clphys_lqcd_gauge_field *g, clphys_lqcd_gauge_file_info *info)
{
    const char *file = in->name;
    FILE *f = in->f;
    char *hdr = calloc(1, HDR_MAX + 1);
    unsigned char *raw = NULL;
    double *m = NULL;
    if (!hdr) return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "%s: header", file);
    clphys_status st = CLPHYS_SUCCESS;
    size_t hlen = 0;
    int line = 0, begun = 0, ended = 0;
    char buf[1024];
#define FAIL(s, ...)                                                                                                   \
    do {                                                                                                               \
        st = cp_error(NULL, s, __VA_ARGS__);                                                                           \
        goto out;                                                                                                      \
    } while (0)
    while (fgets(buf, sizeof buf, f)) {
        line++;
        size_t l = strlen(buf);
        if (l < sizeof buf - 1 && (!l || buf[l - 1] != '\n') && !feof(f))
            FAIL(CLPHYS_ERR_FORMAT, "%s:%d: binary data (a NUL byte) before any END_HEADER line: END_HEADER is missing",
                 file, line);
        if (!begun) {
            if (strncmp(buf, "BEGIN_HEADER", 12))
                FAIL(CLPHYS_ERR_FORMAT, "%s:%d: not a NERSC file (no BEGIN_HEADER)", file, line);
            begun = 1;
            continue;
        }
        if (!strncmp(buf, "END_HEADER", 10)) {
            ended = 1;
            break;
        }
        if (hlen + l > HDR_MAX)
            FAIL(CLPHYS_ERR_FORMAT,
                 "%s:%d: no END_HEADER line in the first %d bytes of the header: END_HEADER is missing", file, line,
                 HDR_MAX);
        memcpy(hdr + hlen, buf, l);
        hlen += l;
    }
    if (!ended) FAIL(CLPHYS_ERR_FORMAT, "%s: the file ends before an END_HEADER line: END_HEADER is missing", file);
    const long data_off = ftell(f);
    char v[256];
    int count, at[2];
    /* a key given twice is refused: which line a reader takes is a guess */
    static const char *const keys[] = {"DIMENSION_1",    "DIMENSION_2", "DIMENSION_3", "DIMENSION_4", "DATATYPE",
                                       "FLOATING_POINT", "CHECKSUM",    "PLAQUETTE",   "LINK_TRACE"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        if (hdr_get(hdr, keys[k], v, sizeof v, &count, at) && count > 1)
            FAIL(CLPHYS_ERR_FORMAT, "%s: header: %s given twice (lines %d and %d)", file, keys[k], at[0], at[1]);
#define GET(key) hdr_get(hdr, key, v, sizeof v, &count, at)
    int dims[4];
    for (int mu = 0; mu < 4; mu++) {
        char key[32], *end;
        snprintf(key, sizeof key, "DIMENSION_%d", mu + 1);
        if (!GET(key)) FAIL(CLPHYS_ERR_FORMAT, "%s: header: %s missing", file, key);
        errno = 0;
        long d = strtol(v, &end, 10);
        if (end == v || *end || errno || d < 1 || d > 1 << 30)
            FAIL(CLPHYS_ERR_FORMAT, "%s: header: %s = %s is not a positive whole number", file, key, v);
        dims[mu] = (int)d;
    }
    int rows;
    if (!GET("DATATYPE")) FAIL(CLPHYS_ERR_FORMAT, "%s: header: DATATYPE missing", file);
    if (!strcmp(v, "4D_SU3_GAUGE_3x3"))
        rows = 3;
    else if (!strcmp(v, "4D_SU3_GAUGE"))
        rows = 2;
    else
        FAIL(CLPHYS_ERR_FORMAT, "%s: header: DATATYPE '%s' is not 4D_SU3_GAUGE or 4D_SU3_GAUGE_3x3", file, v);
    int wsize, little = 0;
    if (!GET("FLOATING_POINT")) FAIL(CLPHYS_ERR_FORMAT, "%s: header: FLOATING_POINT missing", file);
    if (!strcmp(v, "IEEE32BIG") || !strcmp(v, "IEEE32"))
        wsize = 4;
    else if (!strcmp(v, "IEEE64BIG") || !strcmp(v, "IEEE64"))
        wsize = 8;
    else if (!strcmp(v, "IEEE32LITTLE"))
        wsize = 4, little = 1;
    else if (!strcmp(v, "IEEE64LITTLE"))
        wsize = 8, little = 1;
    else
        FAIL(CLPHYS_ERR_FORMAT,
             "%s: header: FLOATING_POINT '%s' is not IEEE32BIG, IEEE64BIG, IEEE32LITTLE or IEEE64LITTLE", file, v);
    info->precision = wsize == 8 ? CLPHYS_FP64 : CLPHYS_FP32;
    info->rows = rows;
    /* what the header claims to verify with */
    uint32_t want_sum = 0;
    int have_sum = 0, have_plaq = 0, have_trace = 0;
    double plaq = 0, trace = 0;
    if (GET("CHECKSUM")) {
        char *end;
        errno = 0;
        unsigned long long c = strtoull(v, &end, 16);
        if (end == v || *end || errno || c > 0xffffffffULL || v[0] == '-')
            FAIL(CLPHYS_ERR_FORMAT, "%s: header: CHECKSUM = %s is not a 32-bit hexadecimal number", file, v);
        want_sum = (uint32_t)c;
        have_sum = 1;
    } else {
        lqcd_gauge_file_unverified(info, "no CHECKSUM");
    }
    if (GET("PLAQUETTE")) {
        if ((st = hdr_real(file, "PLAQUETTE", v, &plaq))) goto out;
        have_plaq = 1;
    } else {
        lqcd_gauge_file_unverified(info, "no PLAQUETTE");
    }
    if (GET("LINK_TRACE")) {
        if ((st = hdr_real(file, "LINK_TRACE", v, &trace))) goto out;
        have_trace = 1;
    } else {
        lqcd_gauge_file_unverified(info, "no LINK_TRACE");
    }
    /* sizes against the file before anything the size of the field is made */
    const int per_link = rows * 6;
    uint64_t expect;
    if ((st = lqcd_gauge_file_check_dims(file, dims, per_link, wsize, &expect))) goto out;
    {
        uint64_t have = in->size > (uint64_t)data_off ? in->size - (uint64_t)data_off : 0;
        if (have < expect || have - expect > TRAIL_MAX)
            FAIL(CLPHYS_ERR_FORMAT,
                 "%s: file size %llu bytes disagrees with the header: %ld header bytes + %llu data bytes "
                 "(%dx%dx%dx%d, %s, %d-byte reals)",
                 file, (unsigned long long)in->size, data_off, (unsigned long long)expect, dims[0], dims[1], dims[2],
                 dims[3], rows == 3 ? "3x3" : "two rows", wsize);
    }
    if ((st = clphys_lqcd_gauge_create(dims, g))) {
        cp_error_append(NULL, "(file %s)", file);
        goto out;
    }
    raw = malloc((size_t)CHUNK_LINKS * per_link * wsize);
    m = malloc((size_t)CHUNK_LINKS * per_link * sizeof *m);
    if (!raw || !m) FAIL(CLPHYS_ERR_OUT_OF_MEMORY, "%s: read buffer", file);
    uint32_t sum = 0;
    const size_t nlinks = g->volume * 4;
    for (size_t l0 = 0; l0 < nlinks; l0 += CHUNK_LINKS) {
        size_t nl = nlinks - l0 < CHUNK_LINKS ? nlinks - l0 : CHUNK_LINKS;
        size_t nbytes = nl * (size_t)per_link * (size_t)wsize;
        if ((st = lqcd_gauge_file_read(in, raw, nbytes, "the link data"))) goto out;
        for (size_t k = 0; k < nbytes / 4; k++)
            sum += little ? lqcd_gauge_file_le32(raw + 4 * k) : lqcd_gauge_file_be32(raw + 4 * k);
        lqcd_gauge_file_decode(raw, nl * (size_t)per_link, wsize, little, m);
        for (size_t l = 0; l < nl; l++) {
            double *u = g->u + (l0 + l) * 18;
            memcpy(u, m + l * (size_t)per_link, (size_t)per_link * sizeof *m);
            if (rows == 2) lqcd_su3_third_row((double complex *)u);
        }
    }
    /* after the data: whitespace only (a newline is what other writers leave) */
    int c;
    while ((c = fgetc(f)) != EOF)
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n')
            FAIL(CLPHYS_ERR_FORMAT, "%s: bytes after the link data that are not whitespace (0x%02x)", file, c);
    if (have_sum && sum != want_sum) {
        char what[96];
        snprintf(what, sizeof what, "CHECKSUM = %x skipped (the data's is %x)", want_sum, sum);
        if (!want_sum) /* writers that compute none leave 0; a sum of 0 (e.g. a cold 8^4 field) verifies */
            lqcd_gauge_file_unverified(info, "CHECKSUM = 0");
        else if (p && p->allow_unverified)
            lqcd_gauge_file_unverified(info, what);
        else
            FAIL(CLPHYS_ERR_FORMAT, "%s: CHECKSUM mismatch: header %x, data %x", file, want_sum, sum);
    }
    info->checksum_verified = have_sum && sum == want_sum;
    st = lqcd_gauge_file_verify(file, p, g, have_plaq ? &plaq : NULL, have_trace ? &trace : NULL, info);
#undef FAIL
#undef GET
out:
    free(hdr);
    free(raw);
    free(m);
    return st;
}

clphys_status lqcd_gauge_file_write_nersc(const char *file, const clphys_lqcd_gauge_field *g, int wsize, int rows)
{
    const size_t nlinks = g->volume * 4, per_link = (size_t)rows * 6;
    unsigned char *raw = malloc(nlinks * per_link * (size_t)wsize);
    if (!raw) return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "%s: write buffer", file);
    for (size_t l = 0; l < nlinks; l++)
        lqcd_gauge_file_encode_be(g->u + l * 18, per_link, wsize, raw + l * per_link * (size_t)wsize);
    uint32_t sum = 0;
    const size_t n = nlinks * per_link * (size_t)wsize;
    for (size_t k = 0; k < n / 4; k++) sum += lqcd_gauge_file_be32(raw + 4 * k);
    double plaq, trace;
    clphys_status st = lqcd_gauge_file_stored_observables(g, wsize, rows, &plaq, &trace);
    if (st) {
        free(raw);
        return st;
    }
    char tmp[4200];
    FILE *f = lqcd_gauge_file_create(file, tmp, sizeof tmp, &st);
    if (!f) {
        free(raw);
        return st;
    }
    fprintf(f,
            "BEGIN_HEADER\nHDR_VERSION = 1.0\nDATATYPE = %s\nSTORAGE_FORMAT = 1.0\n"
            "DIMENSION_1 = %d\nDIMENSION_2 = %d\nDIMENSION_3 = %d\nDIMENSION_4 = %d\n"
            "LINK_TRACE = %.15g\nPLAQUETTE = %.15g\n"
            "BOUNDARY_1 = PERIODIC\nBOUNDARY_2 = PERIODIC\nBOUNDARY_3 = PERIODIC\nBOUNDARY_4 = PERIODIC\n"
            "CHECKSUM = %x\nENSEMBLE_ID = clphys\nSEQUENCE_NUMBER = 0\nCREATOR = clphys %s\n"
            "FLOATING_POINT = %s\nEND_HEADER\n",
            rows == 3 ? "4D_SU3_GAUGE_3x3" : "4D_SU3_GAUGE", g->dims[0], g->dims[1], g->dims[2], g->dims[3], trace,
            plaq, sum, clphys_version(), wsize == 4 ? "IEEE32BIG" : "IEEE64BIG");
    int ok = fwrite(raw, 1, n, f) == n;
    free(raw);
    return lqcd_gauge_file_commit(f, tmp, file, ok);
}
