/* gauge_file.c — gauge files of every format: detection from the first
 * bytes, the checks every reader runs (finite, unitary, plaquette, link
 * trace, verifiable), byte order, and the atomic write.  The formats
 * themselves: gauge_nersc.c, gauge_ildg.c (with lime.c), gauge_milc.c. */
#include "lqcd_gauge_file.h"
#include "lqcd_lime.h"
#include "lqcd_su3.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MILC_MAGIC 20103u

uint32_t lqcd_gauge_file_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
uint32_t lqcd_gauge_file_le32(const unsigned char *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}
uint64_t lqcd_gauge_file_be64(const unsigned char *p)
{
    return (uint64_t)lqcd_gauge_file_be32(p) << 32 | lqcd_gauge_file_be32(p + 4);
}
void lqcd_gauge_file_put_be32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (24 - 8 * i));
}
void lqcd_gauge_file_put_be64(unsigned char *p, uint64_t v)
{
    lqcd_gauge_file_put_be32(p, (uint32_t)(v >> 32));
    lqcd_gauge_file_put_be32(p + 4, (uint32_t)v);
}

void lqcd_gauge_file_decode(const unsigned char *raw, size_t n, int wsize, int little, double *out)
{
    for (size_t k = 0; k < n; k++) {
        const unsigned char *p = raw + k * (size_t)wsize;
        if (wsize == 4) {
            union {
                uint32_t u;
                float f;
            } c = {little ? lqcd_gauge_file_le32(p) : lqcd_gauge_file_be32(p)};
            out[k] = c.f;
        } else {
            union {
                uint64_t u;
                double d;
            } c = {little ? (uint64_t)lqcd_gauge_file_le32(p + 4) << 32 | lqcd_gauge_file_le32(p)
                          : lqcd_gauge_file_be64(p)};
            out[k] = c.d;
        }
    }
}

void lqcd_gauge_file_encode_be(const double *in, size_t n, int wsize, unsigned char *raw)
{
    for (size_t k = 0; k < n; k++) {
        if (wsize == 4) {
            union {
                float f;
                uint32_t u;
            } c = {(float)in[k]};
            lqcd_gauge_file_put_be32(raw + 4 * k, c.u);
        } else {
            union {
                double d;
                uint64_t u;
            } c = {in[k]};
            lqcd_gauge_file_put_be64(raw + 8 * k, c.u);
        }
    }
}

clphys_status lqcd_gauge_file_check_dims(const char *file, const int dims[4], int reals_per_link, int wsize,
                                         uint64_t *data_bytes)
{
    uint64_t V = 1;
    for (int mu = 0; mu < 4; mu++) {
        if (dims[mu] < 2 || dims[mu] % 2)
            return cp_error(NULL, CLPHYS_ERR_INPUT,
                            "%s: lattice %dx%dx%dx%d: clphys takes extents that are even and >= 2", file, dims[0],
                            dims[1], dims[2], dims[3]);
        V *= (uint64_t)dims[mu];
        if (V > ((uint64_t)1 << 31))
            return cp_error(NULL, CLPHYS_ERR_INPUT, "%s: lattice %dx%dx%dx%d: volume above 2^31 sites", file, dims[0],
                            dims[1], dims[2], dims[3]);
    }
    *data_bytes = V * 4 * (uint64_t)reals_per_link * (uint64_t)wsize; /* < 2^31 * 576: no overflow */
    return CLPHYS_SUCCESS;
}

clphys_status lqcd_gauge_file_read(const lqcd_gauge_file_input *in, void *buf, size_t n, const char *what)
{
    if (fread(buf, 1, n, in->f) != n) {
        if (ferror(in->f))
            return cp_error(NULL, CLPHYS_ERR_IO, "%s: read error in %s: %s", in->name, what, strerror(errno));
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: the file ends inside %s", in->name, what);
    }
    return CLPHYS_SUCCESS;
}

void lqcd_gauge_file_unverified(clphys_lqcd_gauge_file_info *info, const char *what)
{
    size_t l = strlen(info->unverified);
    snprintf(info->unverified + l, sizeof info->unverified - l, "%s%s", l ? ", " : "", what);
}

/* "U_mu(x=..,y=..,z=..,t=..)" of link l (= site * 4 + mu). */
static void link_name(const clphys_lqcd_gauge_field *g, size_t l, char *buf, size_t n)
{
    size_t s = l / 4;
    int c[4];
    for (int d = 0; d < 4; d++) {
        c[d] = (int)(s % (size_t)g->dims[d]);
        s /= (size_t)g->dims[d];
    }
    snprintf(buf, n, "U_%d(x=%d,y=%d,z=%d,t=%d)", (int)(l % 4), c[0], c[1], c[2], c[3]);
}

/* Largest |U U^+ - 1| entry and |det U - 1| of one link; NaN stays NaN. */
static double link_violation(const double complex *m)
{
    double complex p[9];
    lqcd_su3_mul_dag(p, m, m);
    double worst = 0;
    for (int i = 0; i < 9; i++) {
        double e = cabs(p[i] - (i % 4 == 0));
        if (!(e <= worst) && !isnan(worst)) worst = e;
    }
    double complex det =
        m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
    double e = cabs(det - 1);
    return e <= worst || isnan(worst) ? worst : e;
}

/* A header value against the data: written so that NaN fails. */
static int agrees(double data, double header) { return fabs(data - header) <= 1e-6 * fmax(fabs(header), 1.0); }

clphys_status lqcd_gauge_file_verify(const char *file, const clphys_lqcd_gauge_read_params *p,
                                     const clphys_lqcd_gauge_field *g, const double *plaquette,
                                     const double *link_trace, clphys_lqcd_gauge_file_info *info)
{
    const size_t nlinks = g->volume * 4;
    char name[96];
    for (size_t l = 0; l < nlinks; l++)
        for (int k = 0; k < 18; k++)
            if (!isfinite(g->u[l * 18 + k])) {
                link_name(g, l, name, sizeof name);
                return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: link %s has a non-finite entry (%g)", file, name,
                                g->u[l * 18 + k]);
            }
    const double tol =
        info->precision == CLPHYS_FP32 ? CLPHYS_LQCD_GAUGE_UNITARITY_TOL_FP32 : CLPHYS_LQCD_GAUGE_UNITARITY_TOL_FP64;
    double worst = 0;
    for (size_t l = 0; l < nlinks; l++) {
        double v = link_violation((const double complex *)(g->u + l * 18));
        if (!(v <= tol)) {
            link_name(g, l, name, sizeof name);
            return cp_error(NULL, CLPHYS_ERR_FORMAT,
                            "%s: link %s is not in SU(3): |U U^+ - 1| or |det U - 1| = %.3g, above the tolerance "
                            "%g of %s data",
                            file, name, v, tol, info->precision == CLPHYS_FP32 ? "fp32" : "fp64");
        }
        if (v > worst) worst = v;
    }
    info->unitarity = worst;
    const int allow = p && p->allow_unverified;
    for (int k = 0; k < 2; k++) {
        const double *claim = k ? link_trace : plaquette;
        if (!claim) continue;
        const char *key = k ? "LINK_TRACE" : "PLAQUETTE";
        double d = k ? clphys_lqcd_gauge_link_trace(g) : clphys_lqcd_gauge_plaquette(g);
        if (agrees(d, *claim)) {
            *(k ? &info->link_trace_verified : &info->plaquette_verified) = 1;
        } else if (allow) { /* not verifying what the header claims covers every claim */
            char what[96];
            snprintf(what, sizeof what, "%s = %.12g skipped (the data's is %.12g)", key, *claim, d);
            lqcd_gauge_file_unverified(info, what);
        } else {
            return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: %s mismatch: header %.12g, data %.12g", file, key, *claim, d);
        }
    }
    if (info->unverified[0] && !allow)
        return cp_error(NULL, CLPHYS_ERR_FORMAT,
                        "%s: cannot be verified (%s); to read it anyway, with the unitarity%s checks, allow "
                        "unverified files (clphys: --no-checksum)",
                        file, info->unverified, plaquette || link_trace ? " and header" : "");
    return CLPHYS_SUCCESS;
}

clphys_status lqcd_gauge_file_stored_observables(const clphys_lqcd_gauge_field *g, int wsize, int rows, double *plaq,
                                                 double *trace)
{
    size_t nlinks = g->volume * 4;
    clphys_lqcd_gauge_field r = *g;
    r.u = malloc(nlinks * 18 * sizeof(double));
    if (!r.u) return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "gauge write: %zu links", nlinks);
    for (size_t l = 0; l < nlinks; l++) {
        double complex c[9];
        for (int k = 0; k < 18; k++) {
            double x = g->u[l * 18 + k];
            ((double *)c)[k] = wsize == 4 ? (double)(float)x : x;
        }
        if (rows == 2) lqcd_su3_third_row(c);
        memcpy(r.u + l * 18, c, sizeof c);
    }
    *plaq = clphys_lqcd_gauge_plaquette(&r);
    *trace = clphys_lqcd_gauge_link_trace(&r);
    free(r.u);
    return CLPHYS_SUCCESS;
}

FILE *lqcd_gauge_file_create(const char *file, char *tmp, size_t n, clphys_status *st)
{
    FILE *f;
    *st = clphys_output_open(file, &f, tmp, n);
    return *st ? NULL : f;
}

clphys_status lqcd_gauge_file_commit(FILE *f, const char *tmp, const char *file, int ok)
{
    return clphys_output_close(f, tmp, file, ok);
}

/* ---- the public calls ------------------------------------------------------ */

const char *clphys_lqcd_gauge_file_format_name(clphys_lqcd_gauge_file_format f)
{
    switch (f) {
    case CLPHYS_LQCD_GAUGE_FILE_AUTO:
        return "auto";
    case CLPHYS_LQCD_GAUGE_FILE_NERSC:
        return "nersc";
    case CLPHYS_LQCD_GAUGE_FILE_ILDG:
        return "ildg";
    case CLPHYS_LQCD_GAUGE_FILE_MILC:
        return "milc";
    }
    return "unknown";
}

static clphys_lqcd_gauge_file_format detect(const unsigned char *b, size_t n)
{
    if (n >= 12 && !memcmp(b, "BEGIN_HEADER", 12)) return CLPHYS_LQCD_GAUGE_FILE_NERSC;
    if (n >= 4 && lqcd_gauge_file_be32(b) == LQCD_LIME_MAGIC) return CLPHYS_LQCD_GAUGE_FILE_ILDG;
    if (n >= 4 && (lqcd_gauge_file_be32(b) == MILC_MAGIC || lqcd_gauge_file_le32(b) == MILC_MAGIC))
        return CLPHYS_LQCD_GAUGE_FILE_MILC;
    return CLPHYS_LQCD_GAUGE_FILE_AUTO;
}

static clphys_status open_input(const char *file, lqcd_gauge_file_input *in, unsigned char *first, size_t *nfirst)
{
    in->name = file;
    in->f = NULL;
    *nfirst = 0;
    struct stat sb;
    if (stat(file, &sb) != 0) return cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot open: %s", file, strerror(errno));
    if (S_ISDIR(sb.st_mode)) return cp_error(NULL, CLPHYS_ERR_IO, "%s: is a directory", file);
    /* a pipe cannot be rewound after the format is detected, nor its size
       checked against the header before the field is allocated (and opening
       a FIFO would wait for a writer) */
    if (!S_ISREG(sb.st_mode))
        return cp_error(NULL, CLPHYS_ERR_IO,
                        "%s: not a regular file (a pipe, FIFO or device): gauge files are read from regular files "
                        "only, whose size is checked against the header before anything is allocated; save it to a "
                        "file first",
                        file);
    in->f = fopen(file, "rb");
    if (!in->f) return cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot open: %s", file, strerror(errno));
    if (fstat(fileno(in->f), &sb) != 0 || !S_ISREG(sb.st_mode)) { /* replaced since the stat */
        fclose(in->f);
        in->f = NULL;
        return cp_error(NULL, CLPHYS_ERR_IO, "%s: not a regular file", file);
    }
    in->size = (uint64_t)sb.st_size;
    *nfirst = fread(first, 1, 16, in->f);
    rewind(in->f);
    return CLPHYS_SUCCESS;
}

clphys_status clphys_lqcd_gauge_file_detect(const char *file, clphys_lqcd_gauge_file_format *format)
{
    if (!file || !format)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_lqcd_gauge_file_detect: NULL argument");
    lqcd_gauge_file_input in;
    unsigned char b[16];
    size_t n;
    CP_TRY(open_input(file, &in, b, &n));
    fclose(in.f);
    *format = detect(b, n);
    return CLPHYS_SUCCESS;
}

clphys_status clphys_lqcd_gauge_read(const char *file, const clphys_lqcd_gauge_read_params *p,
                                     clphys_lqcd_gauge_field *g, clphys_lqcd_gauge_file_info *info)
{
    if (!file || !g) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_lqcd_gauge_read: NULL argument");
    memset(g, 0, sizeof *g);
    clphys_lqcd_gauge_read_params pin;
    CP_TRY(CP_PARAMS_IN(NULL, clphys_lqcd_gauge_read_params, p, allow_unverified, &pin));
    p = &pin;
    clphys_lqcd_gauge_file_info local;
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    lqcd_gauge_file_input in;
    unsigned char b[16];
    size_t n;
    CP_TRY(open_input(file, &in, b, &n));
    clphys_lqcd_gauge_file_format want = p ? p->format : CLPHYS_LQCD_GAUGE_FILE_AUTO, got = detect(b, n);
    clphys_status st;
    if (got == CLPHYS_LQCD_GAUGE_FILE_AUTO)
        st = cp_error(NULL, CLPHYS_ERR_FORMAT,
                      "%s: not a gauge file clphys reads (no NERSC BEGIN_HEADER, ILDG/LIME magic 456789ab or MILC "
                      "magic 20103 at the start)",
                      file);
    else if (want != CLPHYS_LQCD_GAUGE_FILE_AUTO && want != got)
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: a %s file, not %s", file, clphys_lqcd_gauge_file_format_name(got),
                      clphys_lqcd_gauge_file_format_name(want));
    else {
        info->format = got;
        st = got == CLPHYS_LQCD_GAUGE_FILE_NERSC  ? lqcd_gauge_file_read_nersc(&in, p, g, info)
             : got == CLPHYS_LQCD_GAUGE_FILE_ILDG ? lqcd_gauge_file_read_ildg(&in, p, g, info)
                                                  : lqcd_gauge_file_read_milc(&in, p, g, info);
    }
    fclose(in.f);
    if (st) clphys_lqcd_gauge_destroy(g);
    return st;
}

clphys_status clphys_lqcd_gauge_write(const char *file, const clphys_lqcd_gauge_field *g,
                                      clphys_lqcd_gauge_file_format format, clphys_precision precision, int rows)
{
    if (!file || !g || !g->u || (rows != 2 && rows != 3) || (precision != CLPHYS_FP32 && precision != CLPHYS_FP64))
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "clphys_lqcd_gauge_write: NULL argument, rows not 2 or 3, or an unknown precision");
    int wsize = precision == CLPHYS_FP64 ? 8 : 4;
    /* what the readers would refuse is not written: links promoted from fp32
     * keep fp32's unitarity error, far above fp64's tolerance */
    const double tol =
        precision == CLPHYS_FP32 ? CLPHYS_LQCD_GAUGE_UNITARITY_TOL_FP32 : CLPHYS_LQCD_GAUGE_UNITARITY_TOL_FP64;
    const double v = clphys_lqcd_gauge_unitarity_violation(g);
    if (!(v <= tol))
        return cp_error(
            NULL, CLPHYS_ERR_INVALID_ARGUMENT,
            "clphys_lqcd_gauge_write: %s: the links' unitarity violation %.3g is above the tolerance %g of %s "
            "data, so no reader would take the file (reunitarize first: clphys_lqcd_gauge_reunitarize)",
            file, v, tol, precision == CLPHYS_FP32 ? "fp32" : "fp64");
    if (format == CLPHYS_LQCD_GAUGE_FILE_NERSC) return lqcd_gauge_file_write_nersc(file, g, wsize, rows);
    if (format == CLPHYS_LQCD_GAUGE_FILE_ILDG && rows == 3) return lqcd_gauge_file_write_ildg(file, g, wsize);
    return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_lqcd_gauge_write: %s%s cannot be written",
                    clphys_lqcd_gauge_file_format_name(format),
                    format == CLPHYS_LQCD_GAUGE_FILE_ILDG ? " with two rows" : "");
}

clphys_status clphys_lqcd_gauge_read_nersc(const char *file, clphys_lqcd_gauge_field *g)
{
    clphys_lqcd_gauge_read_params p = {.format = CLPHYS_LQCD_GAUGE_FILE_NERSC};
    return clphys_lqcd_gauge_read(file, &p, g, NULL);
}

clphys_status clphys_lqcd_gauge_write_nersc(const char *file, const clphys_lqcd_gauge_field *g,
                                            clphys_precision precision, int rows)
{
    return clphys_lqcd_gauge_write(file, g, CLPHYS_LQCD_GAUGE_FILE_NERSC, precision, rows);
}
