/* gauge_io.c — NERSC gauge-configuration files (format: include/clphys_lqcd.h).
 * Reading checks the data size against the file size and the CHECKSUM,
 * PLAQUETTE and LINK_TRACE of the header; writing goes to a temporary file
 * renamed into place. */
#include "platform/platform.h"
#include "su3.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HDR_MAX 65536

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* Value of "KEY = value" in the header text, or NULL. */
static const char *hdr_get(const char *hdr, const char *key, char *val, size_t n)
{
    size_t kl = strlen(key);
    for (const char *line = hdr; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        const char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (strncmp(p, key, kl)) continue;
        p += kl;
        while (*p == ' ' || *p == '\t') p++;
        if (*p != '=') continue;
        p++;
        while (*p == ' ' || *p == '\t') p++;
        size_t m = strcspn(p, "\r\n");
        while (m > 0 && (p[m - 1] == ' ' || p[m - 1] == '\t')) m--;
        if (m >= n) m = n - 1;
        memcpy(val, p, m);
        val[m] = 0;
        return val;
    }
    return NULL;
}

clphys_status clphys_gauge_read_nersc(const char *file, clphys_gauge_field *g)
{
    if (!file || !g) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_gauge_read_nersc: NULL argument");
    memset(g, 0, sizeof *g);
    FILE *f = fopen(file, "rb");
    if (!f) return cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot open: %s", file, strerror(errno));
    char *hdr = calloc(1, HDR_MAX + 1);
    unsigned char *raw = NULL;
    clphys_status st = CLPHYS_SUCCESS;
    size_t hlen = 0;
    int line = 0;
    /* header: lines up to END_HEADER */
    char buf[1024];
    int begun = 0, ended = 0;
    while (fgets(buf, sizeof buf, f)) {
        line++;
        if (!begun) {
            if (strncmp(buf, "BEGIN_HEADER", 12)) {
                st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s:%d: not a NERSC file (no BEGIN_HEADER)", file, line);
                goto out;
            }
            begun = 1;
            continue;
        }
        if (!strncmp(buf, "END_HEADER", 10)) {
            ended = 1;
            break;
        }
        size_t l = strlen(buf);
        if (hlen + l > HDR_MAX) {
            st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s:%d: header longer than %d bytes", file, line, HDR_MAX);
            goto out;
        }
        memcpy(hdr + hlen, buf, l);
        hlen += l;
    }
    if (!ended) {
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: no END_HEADER line (truncated header?)", file);
        goto out;
    }
    long data_off = ftell(f);
    char v[256];
    int dims[4];
    for (int mu = 0; mu < 4; mu++) {
        char key[32];
        snprintf(key, sizeof key, "DIMENSION_%d", mu + 1);
        char *end;
        if (!hdr_get(hdr, key, v, sizeof v) || (dims[mu] = (int)strtol(v, &end, 10)) <= 0 || *end) {
            st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: header: %s missing or not a positive integer", file, key);
            goto out;
        }
    }
    int rows;
    if (!hdr_get(hdr, "DATATYPE", v, sizeof v)) {
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: header: DATATYPE missing", file);
        goto out;
    }
    if (!strcmp(v, "4D_SU3_GAUGE_3x3")) rows = 3;
    else if (!strcmp(v, "4D_SU3_GAUGE")) rows = 2;
    else {
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: header: DATATYPE '%s' is not 4D_SU3_GAUGE or 4D_SU3_GAUGE_3x3", file, v);
        goto out;
    }
    int wsize, little = 0;
    if (!hdr_get(hdr, "FLOATING_POINT", v, sizeof v)) {
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: header: FLOATING_POINT missing", file);
        goto out;
    }
    if (!strcmp(v, "IEEE32BIG") || !strcmp(v, "IEEE32")) wsize = 4;
    else if (!strcmp(v, "IEEE64BIG") || !strcmp(v, "IEEE64")) wsize = 8;
    else if (!strcmp(v, "IEEE32LITTLE")) wsize = 4, little = 1;
    else if (!strcmp(v, "IEEE64LITTLE")) wsize = 8, little = 1;
    else {
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: header: FLOATING_POINT '%s' not supported", file, v);
        goto out;
    }
    char cks[64], plq[64], ltr[64];
    if (!hdr_get(hdr, "CHECKSUM", cks, sizeof cks) || !hdr_get(hdr, "PLAQUETTE", plq, sizeof plq) ||
        !hdr_get(hdr, "LINK_TRACE", ltr, sizeof ltr)) {
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: header: CHECKSUM, PLAQUETTE and LINK_TRACE are all required", file);
        goto out;
    }
    st = clphys_gauge_create(dims, g);
    if (st) {
        cp_error_append(NULL, "(file %s)", file);
        goto out;
    }
    size_t per_link = (size_t)rows * 3 * 2, nlinks = g->volume * 4;
    size_t expect = nlinks * per_link * (size_t)wsize;
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || (size_t)sb.st_size != (size_t)data_off + expect) {
        st = cp_error(NULL, CLPHYS_ERR_FORMAT,
                      "%s: file size %lld bytes disagrees with the header: %ld header bytes + %zu data bytes "
                      "(%dx%dx%dx%d, %s, %d-byte reals)",
                      file, (long long)sb.st_size, data_off, expect, dims[0], dims[1], dims[2], dims[3],
                      rows == 3 ? "3x3" : "two rows", wsize);
        goto out;
    }
    raw = malloc(expect);
    if (!raw) {
        st = cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "%s: %zu bytes", file, expect);
        goto out;
    }
    if (fseek(f, data_off, SEEK_SET) || fread(raw, 1, expect, f) != expect) {
        st = cp_error(NULL, CLPHYS_ERR_IO, "%s: short read of the link data", file);
        goto out;
    }
    uint32_t sum = 0;
    for (size_t l = 0; l < nlinks; l++) {
        double m[18];
        for (size_t k = 0; k < per_link; k++) {
            const unsigned char *p = raw + (l * per_link + k) * (size_t)wsize;
            if (wsize == 4) {
                union { uint32_t u; float f; } c = {little ? le32(p) : be32(p)};
                m[k] = c.f;
            } else {
                uint64_t hi = little ? le32(p + 4) : be32(p), lo = little ? le32(p) : be32(p + 4);
                union { uint64_t u; double d; } c = {hi << 32 | lo};
                m[k] = c.d;
            }
        }
        if (rows == 2) su3_third_row((double complex *)m);
        memcpy(g->u + l * 18, m, sizeof m);
        /* checksum over the words as stored (host order, file precision) */
        for (size_t k = 0; k < per_link * (size_t)wsize / 4; k++) {
            const unsigned char *p = raw + l * per_link * (size_t)wsize + 4 * k;
            sum += little ? le32(p) : be32(p);
        }
    }
    uint32_t want = (uint32_t)strtoul(cks, NULL, 16);
    if (sum != want) {
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: CHECKSUM mismatch: header %x, data %x", file, want, sum);
        goto out;
    }
    /* headers print about 10 significant digits; fp32 data rounds at ~1e-7 */
    const double tol = 1e-6;
    double p = clphys_gauge_plaquette(g), t = clphys_gauge_link_trace(g);
    if (fabs(p - atof(plq)) > tol * fmax(fabs(atof(plq)), 1.0)) {
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: PLAQUETTE mismatch: header %s, data %.12g", file, plq, p);
        goto out;
    }
    if (fabs(t - atof(ltr)) > tol * fmax(fabs(atof(ltr)), 1.0)) {
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: LINK_TRACE mismatch: header %s, data %.12g", file, ltr, t);
        goto out;
    }
out:
    fclose(f);
    free(hdr);
    free(raw);
    if (st) clphys_gauge_destroy(g);
    return st;
}

static void put_be(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
}

clphys_status clphys_gauge_write_nersc(const char *file, const clphys_gauge_field *g, clphys_precision precision,
                                       int rows)
{
    if (!file || !g || !g->u || (rows != 2 && rows != 3))
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_gauge_write_nersc: NULL argument or rows not 2/3");
    int wsize = precision == CLPHYS_FP64 ? 8 : 4;
    size_t nlinks = g->volume * 4, per_link = (size_t)rows * 6;
    unsigned char *raw = malloc(nlinks * per_link * (size_t)wsize);
    if (!raw) return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "%s: write buffer", file);
    uint32_t sum = 0;
    for (size_t l = 0; l < nlinks; l++) {
        double m[18];
        memcpy(m, g->u + l * 18, sizeof m);
        for (int k = 0; k < 18; k++) {
            uint64_t bits;
            if ((size_t)k >= per_link) break;
            if (wsize == 4) {
                union { float f; uint32_t u; } c = {(float)m[k]};
                bits = c.u;
                sum += c.u;
            } else {
                union { double d; uint64_t u; } c = {m[k]};
                bits = c.u;
                sum += (uint32_t)c.u + (uint32_t)(c.u >> 32);
            }
            put_be(raw + (l * per_link + (size_t)k) * (size_t)wsize, bits, wsize);
        }
    }
    /* plaquette and trace of the data as a reader will see it */
    clphys_gauge_field r = *g;
    double plaq, trace;
    {
        double *copy = malloc(nlinks * 18 * sizeof(double));
        if (!copy) {
            free(raw);
            return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "%s: write buffer", file);
        }
        for (size_t l = 0; l < nlinks; l++) {
            double complex c[9];
            for (int k = 0; k < 18; k++) {
                double x = g->u[l * 18 + k];
                ((double *)c)[k] = wsize == 4 ? (double)(float)x : x;
            }
            if (rows == 2) su3_third_row(c);
            memcpy(copy + l * 18, c, sizeof c);
        }
        r.u = copy;
        plaq = clphys_gauge_plaquette(&r);
        trace = clphys_gauge_link_trace(&r);
        free(copy);
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", file, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        free(raw);
        return cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
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
    size_t n = nlinks * per_link * (size_t)wsize;
    int ok = fwrite(raw, 1, n, f) == n;
    ok = (fflush(f) == 0) && ok;
    ok = (fsync(fileno(f)) == 0) && ok;
    ok = (fclose(f) == 0) && ok;
    free(raw);
    if (!ok) {
        unlink(tmp);
        return cp_error(NULL, CLPHYS_ERR_IO, "%s: write failed: %s", tmp, strerror(errno));
    }
    if (rename(tmp, file) != 0) {
        int e = errno;
        unlink(tmp);
        return cp_error(NULL, CLPHYS_ERR_IO, "%s: rename from %s failed: %s", file, tmp, strerror(e));
    }
    return CLPHYS_SUCCESS;
}
