/* gauge_ildg.c — ILDG gauge files: LIME records ildg-format and
 * ildg-binary-data (ILDG file format 1.1), with the SciDAC records of QIO
 * around them on writing, and the scidac-checksum record verified when
 * present (format: include/clphys_lqcd.h; records: lime.c). */
#include "lqcd_gauge_file.h"
#include "lqcd_lime.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#define XML_MAX     65536
#define CHUNK_SITES 1024

/* The text of element <tag> of the XML record rec (blanks trimmed) into
 * out: 1, or 0 when there is none.  Comments, processing instructions,
 * CDATA sections and declarations are skipped; the element must hold text
 * only and close with </tag>, and appear once: otherwise *st is set
 * (CLPHYS_ERR_FORMAT) and -1 returned. */
static int xml_get(const char *file, const char *rec, const char *xml, const char *tag, char *out, size_t n,
                   clphys_status *st)
{
    static const struct {
        const char *open, *close;
    } skip[] = {{"<!--", "-->"}, {"<?", "?>"}, {"<![CDATA[", "]]>"}, {"<!", ">"}};
    const size_t tl = strlen(tag);
    int found = 0;
    for (const char *p = strchr(xml, '<'); p; p = strchr(p, '<')) {
        size_t k = 0;
        while (k < sizeof skip / sizeof *skip && strncmp(p, skip[k].open, strlen(skip[k].open))) k++;
        if (k < sizeof skip / sizeof *skip) {
            const char *e = strstr(p + strlen(skip[k].open), skip[k].close);
            if (!e) {
                *st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: %s: '%s' without its '%s'", file, rec, skip[k].open,
                               skip[k].close);
                return -1;
            }
            p = e + strlen(skip[k].close);
            continue;
        }
        p++;
        if (strncmp(p, tag, tl) || !strchr(" \t\r\n/>", p[tl]) || !p[tl]) continue;
        const char *b = strchr(p, '>');
        if (!b) break;
        if (found++) {
            *st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: %s: two <%s> elements", file, rec, tag);
            return -1;
        }
        const char *e = b; /* <tag/>: empty */
        if (b[-1] != '/') {
            b++;
            e = strchr(b, '<');
            if (!e || strncmp(e, "</", 2) || strncmp(e + 2, tag, tl) ||
                e[2 + tl + strspn(e + 2 + tl, " \t\r\n")] != '>') {
                char got[32] = "the end of the record";
                if (e) snprintf(got, sizeof got, "'%.*s'", (int)strcspn(e, ">") + (e[strcspn(e, ">")] == '>'), e);
                *st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: %s: <%s> is followed by %s, not </%s>", file, rec, tag,
                               got, tag);
                return -1;
            }
        }
        const char *v = b, *w = e;
        while (v < w && strchr(" \t\r\n", *v)) v++;
        while (w > v && strchr(" \t\r\n", w[-1])) w--;
        size_t m = (size_t)(w - v) < n ? (size_t)(w - v) : n - 1;
        memcpy(out, v, m);
        out[m] = 0;
        p = e;
    }
    return found;
}

static clphys_status xml_int(const char *file, const char *xml, const char *tag, long lo, long hi, long *out)
{
    char v[64], *end;
    clphys_status st = CLPHYS_SUCCESS;
    int r = xml_get(file, "ildg-format", xml, tag, v, sizeof v, &st);
    if (r < 0) return st;
    if (!r) return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: ildg-format has no <%s>", file, tag);
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: ildg-format <%s>%s</%s> is not a whole number in %ld .. %ld",
                        file, tag, v, tag, lo, hi);
    *out = x;
    return CLPHYS_SUCCESS;
}

static clphys_status xml_hex(const char *file, const char *xml, const char *tag, uint32_t *out)
{
    char v[64], *end;
    clphys_status st = CLPHYS_SUCCESS;
    int r = xml_get(file, "scidac-checksum", xml, tag, v, sizeof v, &st);
    if (r < 0) return st;
    if (!r) return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: scidac-checksum has no <%s>", file, tag);
    errno = 0;
    unsigned long long x = strtoull(v, &end, 16);
    if (end == v || *end || errno || x > 0xffffffffULL || v[0] == '-')
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: scidac-checksum <%s>%s</%s> is not a 32-bit hexadecimal number",
                        file, tag, v, tag);
    *out = (uint32_t)x;
    return CLPHYS_SUCCESS;
}

static uint32_t rotl(uint32_t x, unsigned r) { return r ? x << r | x >> (32 - r) : x; }

/* SciDAC checksum of n sites' bytes (site_bytes each) starting at rank r0. */
static void scidac_sum(const unsigned char *raw, size_t n, size_t site_bytes, uint64_t r0, uint32_t *a, uint32_t *b)
{
    for (size_t s = 0; s < n; s++) {
        uint32_t crc = (uint32_t)crc32(0L, raw + s * site_bytes, (uInt)site_bytes);
        uint64_t rank = r0 + s;
        *a ^= rotl(crc, (unsigned)(rank % 29));
        *b ^= rotl(crc, (unsigned)(rank % 31));
    }
}

clphys_status lqcd_gauge_file_read_ildg(const lqcd_gauge_file_input *in, const clphys_lqcd_gauge_read_params *p,
                                        clphys_lqcd_gauge_field *g, clphys_lqcd_gauge_file_info *info)
{
    const char *file = in->name;
    if (!in->size) return cp_error(NULL, CLPHYS_ERR_IO, "%s: ILDG files are read from regular files only", file);
    clphys_status st = CLPHYS_SUCCESS;
    char *fmt = NULL, *cks = NULL;
    unsigned char *raw = NULL;
    lqcd_lime_record r, data = {.length = 0};
    int have_data = 0, end = 0;
    uint64_t pos = 0;
    while (!(st = lqcd_lime_next(in->f, file, in->size, &pos, &r, &end)) && !end) {
        char **slot = !strcmp(r.type, "ildg-format") ? &fmt : !strcmp(r.type, "scidac-checksum") ? &cks : NULL;
        if (slot) {
            if (*slot) {
                st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: two '%s' records", file, r.type);
                break;
            }
            if ((st = lqcd_lime_read_small(in->f, file, &r, XML_MAX, slot))) break;
        } else if (!strcmp(r.type, "ildg-binary-data")) {
            if (have_data) {
                st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: two 'ildg-binary-data' records (one configuration is read)",
                              file);
                break;
            }
            data = r, have_data = 1;
        }
    }
#define FAIL(s, ...)                                                                                                   \
    do {                                                                                                               \
        st = cp_error(NULL, s, __VA_ARGS__);                                                                           \
        goto out;                                                                                                      \
    } while (0)
    if (st) goto out;
    if (!fmt) FAIL(CLPHYS_ERR_FORMAT, "%s: LIME file without an 'ildg-format' record", file);
    if (!have_data) FAIL(CLPHYS_ERR_FORMAT, "%s: LIME file without an 'ildg-binary-data' record", file);
    char field[64];
    int has_field = xml_get(file, "ildg-format", fmt, "field", field, sizeof field, &st);
    if (has_field < 0) goto out;
    if (!has_field || strcmp(field, "su3gauge"))
        FAIL(CLPHYS_ERR_FORMAT, "%s: ildg-format <field> is '%s', not su3gauge", file, has_field ? field : "(missing)");
    long prec, d[4];
    if ((st = xml_int(file, fmt, "precision", 32, 64, &prec))) goto out;
    if (prec != 32 && prec != 64)
        FAIL(CLPHYS_ERR_FORMAT, "%s: ildg-format <precision>%ld</precision>: 32 or 64", file, prec);
    static const char *const ext[4] = {"lx", "ly", "lz", "lt"};
    for (int mu = 0; mu < 4; mu++)
        if ((st = xml_int(file, fmt, ext[mu], 1, 1L << 30, &d[mu]))) goto out;
    const int wsize = (int)prec / 8, dims[4] = {(int)d[0], (int)d[1], (int)d[2], (int)d[3]};
    info->precision = wsize == 8 ? CLPHYS_FP64 : CLPHYS_FP32;
    info->rows = 3;
    uint64_t expect;
    if ((st = lqcd_gauge_file_check_dims(file, dims, 18, wsize, &expect))) goto out;
    if (data.length != expect)
        FAIL(CLPHYS_ERR_FORMAT, "%s: ildg-binary-data has %llu bytes; ildg-format (%dx%dx%dx%d, %ld-bit) needs %llu",
             file, (unsigned long long)data.length, dims[0], dims[1], dims[2], dims[3], prec,
             (unsigned long long)expect);
    uint32_t want_a = 0, want_b = 0;
    if (cks) {
        if ((st = xml_hex(file, cks, "suma", &want_a)) || (st = xml_hex(file, cks, "sumb", &want_b))) goto out;
    } else {
        lqcd_gauge_file_unverified(info, "no scidac-checksum record");
    }
    if ((st = clphys_lqcd_gauge_create(dims, g))) {
        cp_error_append(NULL, "(file %s)", file);
        goto out;
    }
    const size_t site_bytes = 72 * (size_t)wsize;
    raw = malloc(CHUNK_SITES * site_bytes);
    if (!raw) FAIL(CLPHYS_ERR_OUT_OF_MEMORY, "%s: read buffer", file);
    if (fseeko(in->f, (off_t)data.offset, SEEK_SET) != 0) FAIL(CLPHYS_ERR_IO, "%s: cannot seek to the link data", file);
    uint32_t a = 0, b = 0;
    for (size_t s0 = 0; s0 < g->volume; s0 += CHUNK_SITES) {
        size_t ns = g->volume - s0 < CHUNK_SITES ? g->volume - s0 : CHUNK_SITES;
        if ((st = lqcd_gauge_file_read(in, raw, ns * site_bytes, "ildg-binary-data"))) goto out;
        scidac_sum(raw, ns, site_bytes, s0, &a, &b);
        lqcd_gauge_file_decode(raw, ns * 72, wsize, 0, g->u + s0 * 72);
    }
    if (cks && (a != want_a || b != want_b)) {
        if (!(p && p->allow_unverified))
            FAIL(CLPHYS_ERR_FORMAT, "%s: scidac-checksum mismatch: record suma %x sumb %x, data %x %x", file, want_a,
                 want_b, a, b);
        char what[96];
        snprintf(what, sizeof what, "scidac-checksum %x %x skipped (the data's is %x %x)", want_a, want_b, a, b);
        lqcd_gauge_file_unverified(info, what);
    }
    info->checksum_verified = cks && a == want_a && b == want_b;
    st = lqcd_gauge_file_verify(file, p, g, NULL, NULL, info);
#undef FAIL
out:
    free(fmt);
    free(cks);
    free(raw);
    return st;
}

static int put_xml(FILE *f, const char *type, int mb, int me, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int put_xml(FILE *f, const char *type, int mb, int me, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf) return -1;
    return lqcd_lime_write(f, type, buf, (uint64_t)n + 1, mb, me); /* QIO's XML records end with their NUL */
}

clphys_status lqcd_gauge_file_write_ildg(const char *file, const clphys_lqcd_gauge_field *g, int wsize)
{
    const size_t site_bytes = 72 * (size_t)wsize, n = g->volume * site_bytes;
    unsigned char *raw = malloc(n);
    if (!raw) return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "%s: write buffer", file);
    lqcd_gauge_file_encode_be(g->u, g->volume * 72, wsize, raw);
    uint32_t a = 0, b = 0;
    scidac_sum(raw, g->volume, site_bytes, 0, &a, &b);
    double plaq, trace;
    clphys_status st = lqcd_gauge_file_stored_observables(g, wsize, 3, &plaq, &trace);
    char tmp[4200];
    FILE *f = st ? NULL : lqcd_gauge_file_create(file, tmp, sizeof tmp, &st);
    if (!f) {
        free(raw);
        return st;
    }
    const char *X = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
    const int *L = g->dims;
    char date[64];
    time_t now = time(NULL);
    struct tm tmv;
    strftime(date, sizeof date, "%a %b %d %H:%M:%S %Y UTC", gmtime_r(&now, &tmv));
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    /* the record sequence of QIO (SciDAC) ILDG files: what QIO-based readers
       require around the two ILDG records */
    int ok =
        !put_xml(f, "scidac-private-file-xml", 1, 0,
                 "%s<scidacFile><version>1.1</version><spacetime>4</spacetime><dims>%d %d %d %d </dims>"
                 "<volfmt>0</volfmt></scidacFile>",
                 X, L[0], L[1], L[2], L[3]) &&
        !put_xml(f, "scidac-file-xml", 0, 1, "%s<info>written by clphys %s</info>", X, clphys_version()) &&
        !put_xml(f, "scidac-private-record-xml", 1, 0,
                 "%s<scidacRecord><version>1.1</version><date>%s</date><recordtype>0</recordtype>"
                 "<datatype>QDP_%c3_ColorMatrix</datatype><precision>%c</precision><colors>3</colors>"
                 "<typesize>%d</typesize><datacount>4</datacount></scidacRecord>",
                 X, date, wsize == 8 ? 'D' : 'F', wsize == 8 ? 'D' : 'F', 18 * wsize) &&
        !put_xml(f, "scidac-record-xml", 0, 0,
                 "%s<info><plaquette>%.15g</plaquette><linktrace>%.15g</linktrace></info>", X, plaq, trace) &&
        !put_xml(f, "ildg-format", 0, 0,
                 "%s<ildgFormat xmlns=\"http://www.lqcd.org/ildg\" "
                 "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
                 "xsi:schemaLocation=\"http://www.lqcd.org/ildg http://www.lqcd.org/ildg/filefmt.xsd\">"
                 "<version>1.0</version><field>su3gauge</field><precision>%d</precision>"
                 "<lx>%d</lx><ly>%d</ly><lz>%d</lz><lt>%d</lt></ildgFormat>",
                 X, 8 * wsize, L[0], L[1], L[2], L[3]) &&
        !lqcd_lime_write(f, "ildg-data-lfn", base, strlen(base), 0, 0) &&
        !lqcd_lime_write(f, "ildg-binary-data", raw, n, 0, 0) &&
        !put_xml(f, "scidac-checksum", 0, 1,
                 "%s<scidacChecksum><version>1.0</version><suma>%x</suma><sumb>%x</sumb></scidacChecksum>", X, a, b);
    free(raw);
    return lqcd_gauge_file_commit(f, tmp, file, ok);
}
