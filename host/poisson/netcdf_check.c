/* netcdf_check.c — what a NetCDF file must be before libnetcdf opens it
 * (host/poisson/netcdf_io.c): a regular file, of a format clphys reads
 * (classic CDF-1, 64-bit offset CDF-2, 64-bit data CDF-5, or NetCDF-4/HDF5),
 * and for the classic formats a header whose every count and size the file
 * can hold and whose variables' data lie within the file.
 *
 * Why: libnetcdf allocates from the counts of a classic header before it
 * has read the entries they count (4.9.0 crashes on a failed allocation
 * there, or takes gigabytes for a 604-byte file), and it reads the data of
 * a file cut short as fill values (land, zero) without a word.  The
 * classic format is small and documented: "The NetCDF Classic Format
 * Specification" and "The CDF-5 format" (the NetCDF User's Guide,
 * docs.unidata.ucar.edu/netcdf-c, file_format_specifications).  The HDF5
 * container is not parsed here: its variables' sizes are bounded in
 * netcdf_io.c before any value is read. */
#include "poisson_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netcdf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { TAG_DIMENSION = 0x0A, TAG_VARIABLE = 0x0B, TAG_ATTRIBUTE = 0x0C };

/* A classic header read through stdio, every count checked against the
 * bytes left in the file before anything is done with it. */
typedef struct {
    FILE *f;
    const char *file;
    uint64_t pos, size;
    int version; /* 1, 2 or 5 */
    clphys_status st;
} hdr;

static int fail(hdr *h, const char *what, uint64_t value)
{
    if (!h->st)
        h->st = cp_error(NULL, CLPHYS_ERR_FORMAT,
                         "%s: corrupt NetCDF classic header at byte %llu: %s (%llu); the file has %llu bytes", h->file,
                         (unsigned long long)h->pos, what, (unsigned long long)value, (unsigned long long)h->size);
    return 0;
}

static uint64_t left(const hdr *h) { return h->size - h->pos; }

/* big-endian unsigned of 4 or 8 bytes; 0 on failure (h->st set) */
static uint64_t get(hdr *h, int bytes)
{
    unsigned char b[8];
    if (h->st) return 0;
    if (left(h) < (uint64_t)bytes || fread(b, 1, (size_t)bytes, h->f) != (size_t)bytes)
        return fail(h, "the header ends inside a field of bytes", (uint64_t)bytes);
    h->pos += (uint64_t)bytes;
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v = v << 8 | b[i];
    return v;
}

/* NON_NEG (counts, lengths): 64 bits in CDF-5, else 32 */
static uint64_t non_neg(hdr *h) { return get(h, h->version == 5 ? 8 : 4); }
/* OFFSET (a variable's begin): 32 bits in CDF-1, else 64 */
static uint64_t offset(hdr *h) { return get(h, h->version == 1 ? 4 : 8); }

static void skip(hdr *h, uint64_t n, const char *what)
{
    if (h->st) return;
    if (n > left(h)) {
        fail(h, what, n);
        return;
    }
    if (fseeko(h->f, (off_t)(h->pos + n), SEEK_SET) != 0) {
        fail(h, "cannot seek past", n);
        return;
    }
    h->pos += n;
}

static uint64_t pad4(uint64_t n) { return (n + 3) & ~(uint64_t)3; }

/* a name: its length (1 .. NC_MAX_NAME) and its bytes, padded to 4; kept
 * in out (NC_MAX_NAME + 1 bytes) when out is not NULL */
static void name(hdr *h, char *out)
{
    const uint64_t n = non_neg(h);
    if (!h->st && (n == 0 || n > NC_MAX_NAME)) fail(h, "a name length outside 1 .. 256", n);
    if (out && !h->st && n <= left(h)) {
        if (fread(out, 1, (size_t)n, h->f) != (size_t)n) fail(h, "cannot read a name", n);
        out[h->st ? 0 : n] = 0;
        for (uint64_t i = 0; i < n; i++) out[i] = out[i] >= 32 && out[i] < 127 ? out[i] : '?';
        if (!h->st) h->pos += n;
        skip(h, pad4(n) - n, "a name longer than the file");
        return;
    }
    skip(h, pad4(n), "a name longer than the file");
}

/* the size in bytes of an external type; 0 for an unknown one */
static uint64_t type_size(const hdr *h, uint64_t t)
{
    static const unsigned char size[12] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
    if (t < 1 || t > (h->version == 5 ? 11u : 6u)) return 0;
    return size[t];
}

/* "a list of n entries of at least `min` bytes each": absent (0, 0) or the
 * tag and a count that the file can hold */
static uint64_t list(hdr *h, uint32_t tag, uint64_t min, const char *what)
{
    const uint64_t t = get(h, 4), n = non_neg(h);
    if (h->st) return 0;
    if (t == 0 && n == 0) return 0;
    if (t != tag) return fail(h, "a list tag that is not the expected one", t);
    if (n > left(h) / min) return fail(h, what, n);
    return n;
}

static void attributes(hdr *h)
{
    /* an attribute is at least a name (8), a type (4) and a count (4) */
    const uint64_t n = list(h, TAG_ATTRIBUTE, 16, "more attributes than the file can hold");
    for (uint64_t a = 0; a < n && !h->st; a++) {
        name(h, NULL);
        const uint64_t t = get(h, 4), s = type_size(h, t), len = non_neg(h);
        if (h->st) return;
        if (!s) {
            fail(h, "an attribute of an unknown type", t);
            return;
        }
        if (len > left(h) / s) {
            fail(h, "an attribute with more values than the file can hold", len);
            return;
        }
        skip(h, pad4(len * s), "attribute values");
    }
}

/* a * b, or fail on overflow */
static uint64_t mul(hdr *h, uint64_t a, uint64_t b)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return fail(h, "a variable larger than 2^64 bytes", a);
    return r;
}

static clphys_status check_classic(FILE *f, const char *file, uint64_t size, int version)
{
    hdr h = {.f = f, .file = file, .pos = 4, .size = size, .version = version};
    if (fseeko(f, 4, SEEK_SET) != 0) return cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot seek: %s", file, strerror(errno));
    const uint64_t numrecs = non_neg(&h);
    const int streaming = version != 5 && numrecs == 0xFFFFFFFFu; /* numrecs from the file's size */
    /* dimensions: a name (8) and a length (4) at least */
    const uint64_t ndims = list(&h, TAG_DIMENSION, 12, "more dimensions than the file can hold");
    uint64_t *dim = h.st ? NULL : malloc(sizeof(uint64_t) * (ndims ? ndims : 1));
    if (!h.st && !dim)
        return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "%s: %llu dimensions", file, (unsigned long long)ndims);
    int64_t record_dim = -1;
    for (uint64_t d = 0; d < ndims && !h.st; d++) {
        name(&h, NULL);
        dim[d] = non_neg(&h);
        if (!h.st && dim[d] == 0) {
            if (record_dim >= 0) fail(&h, "a second unlimited dimension", d);
            record_dim = (int64_t)d;
        }
    }
    attributes(&h); /* global */
    /* variables: name (8), ndims (4), attributes (8), type, vsize, begin (4 each) at least */
    const uint64_t nvars = list(&h, TAG_VARIABLE, 32, "more variables than the file can hold");
    uint64_t *begin = h.st ? NULL : malloc(sizeof(uint64_t) * 3 * (nvars ? nvars : 1));
    if (!h.st && !begin) {
        free(dim);
        return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "%s: %llu variables", file, (unsigned long long)nvars);
    }
    uint64_t *bytes = begin ? begin + nvars : NULL, *is_rec = bytes ? bytes + nvars : NULL;
    uint64_t nrec_vars = 0, recsize = 0;
    char vname[NC_MAX_NAME + 1] = "";
    for (uint64_t v = 0; v < nvars && !h.st; v++) {
        name(&h, vname);
        const uint64_t nd = non_neg(&h);
        if (!h.st && (nd > NC_MAX_VAR_DIMS || nd > left(&h) / 4)) fail(&h, "a variable with too many dimensions", nd);
        uint64_t count = 1;
        is_rec[v] = 0;
        for (uint64_t k = 0; k < nd && !h.st; k++) {
            const uint64_t id = non_neg(&h);
            if (h.st) break;
            if (id >= ndims) {
                fail(&h, "a dimension id that is not defined", id);
                break;
            }
            if ((int64_t)id == record_dim) {
                if (k) fail(&h, "the unlimited dimension after the first of a variable", k);
                is_rec[v] = 1;
            } else {
                count = mul(&h, count, dim[id]);
            }
        }
        attributes(&h);
        const uint64_t t = get(&h, 4), s = type_size(&h, t);
        if (!h.st && !s) fail(&h, "a variable of an unknown type", t);
        (void)non_neg(&h); /* vsize: redundant, and clipped for large variables */
        begin[v] = offset(&h);
        bytes[v] = mul(&h, count, s);
        if (is_rec[v]) nrec_vars++, recsize += pad4(bytes[v]);
        uint64_t end = 0;
        if (!h.st && !is_rec[v] && (__builtin_add_overflow(begin[v], bytes[v], &end) || end > size))
            h.st = cp_error(
                NULL, CLPHYS_ERR_FORMAT,
                "%s: the file is cut short or corrupt: the data of variable '%s' end at byte %llu, the file "
                "has %llu bytes",
                file, vname, end ? (unsigned long long)end : (unsigned long long)UINT64_MAX, (unsigned long long)size);
    }
    /* every variable's data after the header; records within the file */
    if (nrec_vars == 1 && !h.st)
        for (uint64_t v = 0; v < nvars; v++)
            if (is_rec[v]) recsize = bytes[v]; /* one record variable: records are not padded */
    for (uint64_t v = 0; v < nvars && !h.st; v++) {
        uint64_t end = 0, extent = bytes[v];
        if (begin[v] < h.pos) {
            h.pos = begin[v];
            fail(&h, "the data of a variable begin inside the header; variable number", v);
            break;
        }
        if (!is_rec[v] || streaming || numrecs == 0) continue;
        extent = numrecs - 1 > UINT64_MAX / (recsize ? recsize : 1) ? UINT64_MAX : (numrecs - 1) * recsize;
        if (__builtin_add_overflow(extent, bytes[v], &extent) || __builtin_add_overflow(begin[v], extent, &end) ||
            end > size)
            h.st = cp_error(NULL, CLPHYS_ERR_FORMAT,
                            "%s: the file is cut short or corrupt: %llu records of record variable number %llu end at "
                            "byte %llu, the file has %llu bytes",
                            file, (unsigned long long)numrecs, (unsigned long long)v,
                            end ? (unsigned long long)end : (unsigned long long)UINT64_MAX, (unsigned long long)size);
    }
    free(dim), free(begin);
    return h.st;
}

clphys_status poisson_nc_check(const char *file, poisson_nc_file *info)
{
    memset(info, 0, sizeof *info);
    /* O_NONBLOCK: a FIFO is refused below, not waited on for a writer */
    const int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot open: %s", file, strerror(errno));
    struct stat s;
    FILE *f = fstat(fd, &s) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        const int e = errno;
        close(fd);
        return cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot open: %s", file, strerror(e));
    }
    clphys_status st = CLPHYS_SUCCESS;
    unsigned char m[8] = {0};
    static const unsigned char hdf5[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    info->size = (uint64_t)s.st_size;
    if (!S_ISREG(s.st_mode)) {
        st = cp_error(NULL, CLPHYS_ERR_IO, "%s: not a regular file (a NetCDF file is read with seeks)", file);
    } else if (s.st_size < 8 || fread(m, 1, 8, f) != 8) {
        st = cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: not a NetCDF file (%lld bytes)", file, (long long)s.st_size);
    } else if (!memcmp(m, "CDF", 3) && (m[3] == 1 || m[3] == 2 || m[3] == 5)) {
        info->format = m[3];
        st = check_classic(f, file, info->size, m[3]);
    } else {
        /* HDF5's signature: at 0, or after a user block of 512, 1024, 2048 ... bytes */
        for (uint64_t at = 0; at + 8 <= info->size && !info->format; at = at ? 2 * at : 512) {
            if (at && (fseeko(f, (off_t)at, SEEK_SET) != 0 || fread(m, 1, 8, f) != 8)) break;
            if (!memcmp(m, hdf5, 8)) info->format = 4;
        }
        if (!info->format)
            st = cp_error(NULL, CLPHYS_ERR_FORMAT,
                          "%s: not a NetCDF file clphys reads (classic CDF-1, CDF-2, CDF-5 or NetCDF-4/HDF5)", file);
    }
    fclose(f);
    return st;
}
