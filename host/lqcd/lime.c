/* lime.c — LIME records: see lqcd_lime.h. */
#include "lqcd_lime.h"
#include "lqcd_gauge_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

clphys_status lqcd_lime_next(FILE *f, const char *file, uint64_t size, uint64_t *pos, lqcd_lime_record *r, int *end)
{
    *end = 0;
    if (*pos >= size) {
        *end = 1;
        return CLPHYS_SUCCESS;
    }
    unsigned char h[LQCD_LIME_HEADER_BYTES];
    if (size - *pos < LQCD_LIME_HEADER_BYTES)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: %llu bytes at offset %llu: too short for a LIME record header",
                        file, (unsigned long long)(size - *pos), (unsigned long long)*pos);
    if (fseeko(f, (off_t)*pos, SEEK_SET) != 0 || fread(h, 1, sizeof h, f) != sizeof h)
        return cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot read the LIME record header at offset %llu", file,
                        (unsigned long long)*pos);
    if (lqcd_gauge_file_be32(h) != LQCD_LIME_MAGIC)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: offset %llu: no LIME record (magic %08x, not 456789ab)", file,
                        (unsigned long long)*pos, lqcd_gauge_file_be32(h));
    unsigned version = (unsigned)h[4] << 8 | h[5], flags = (unsigned)h[6] << 8 | h[7];
    if (version != 1)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: offset %llu: LIME version %u (1 is read)", file,
                        (unsigned long long)*pos, version);
    r->mb = (flags >> 15) & 1;
    r->me = (flags >> 14) & 1;
    r->length = lqcd_gauge_file_be64(h + 8);
    const char *type = (const char *)h + 16;
    size_t tl = strnlen(type, 128);
    if (tl == 128)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: offset %llu: LIME record type has no terminating NUL", file,
                        (unsigned long long)*pos);
    memcpy(r->type, type, tl);
    r->type[tl] = 0;
    r->offset = *pos + LQCD_LIME_HEADER_BYTES;
    uint64_t left = size - r->offset;
    if (r->length > left)
        return cp_error(NULL, CLPHYS_ERR_FORMAT,
                        "%s: offset %llu: LIME record '%s' claims %llu bytes, the file has %llu left", file,
                        (unsigned long long)*pos, r->type, (unsigned long long)r->length, (unsigned long long)left);
    uint64_t padded = r->length + (8 - r->length % 8) % 8;
    /* the last record's padding may be missing (some writers stop at the data) */
    *pos = padded > left ? size : r->offset + padded;
    return CLPHYS_SUCCESS;
}

clphys_status lqcd_lime_read_small(FILE *f, const char *file, const lqcd_lime_record *r, size_t max, char **data)
{
    *data = NULL;
    if (r->length > max)
        return cp_error(NULL, CLPHYS_ERR_FORMAT, "%s: LIME record '%s' of %llu bytes (at most %zu expected)", file,
                        r->type, (unsigned long long)r->length, max);
    char *b = malloc((size_t)r->length + 1);
    if (!b) return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "%s: record '%s'", file, r->type);
    if (fseeko(f, (off_t)r->offset, SEEK_SET) != 0 || fread(b, 1, (size_t)r->length, f) != (size_t)r->length) {
        free(b);
        return cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot read LIME record '%s'", file, r->type);
    }
    b[r->length] = 0;
    *data = b;
    return CLPHYS_SUCCESS;
}

int lqcd_lime_write_header(FILE *f, const char *type, uint64_t length, int mb, int me)
{
    unsigned char h[LQCD_LIME_HEADER_BYTES] = {0};
    size_t tl = strlen(type);
    if (tl > 127) {
        errno = EINVAL;
        return -1;
    }
    lqcd_gauge_file_put_be32(h, LQCD_LIME_MAGIC);
    h[5] = 1;
    h[6] = (unsigned char)((mb ? 0x80 : 0) | (me ? 0x40 : 0));
    lqcd_gauge_file_put_be64(h + 8, length);
    memcpy(h + 16, type, tl);
    return fwrite(h, 1, sizeof h, f) == sizeof h ? 0 : -1;
}

int lqcd_lime_pad(FILE *f, uint64_t length)
{
    static const unsigned char zero[8] = {0};
    size_t pad = (size_t)((8 - length % 8) % 8);
    return fwrite(zero, 1, pad, f) == pad ? 0 : -1;
}

int lqcd_lime_write(FILE *f, const char *type, const void *data, uint64_t length, int mb, int me)
{
    if (lqcd_lime_write_header(f, type, length, mb, me)) return -1;
    if (length && fwrite(data, 1, (size_t)length, f) != (size_t)length) return -1;
    return lqcd_lime_pad(f, length);
}
