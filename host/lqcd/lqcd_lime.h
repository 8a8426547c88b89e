/* lqcd_lime.h — LIME record files (the container of ILDG and SciDAC files), the
 * small layer clphys needs: read record headers one after another, write a
 * record.  A record is a 144-byte header (big-endian uint32 magic 0x456789ab,
 * uint16 version 1, uint16 flags with bit 15 = message begin and bit 14 =
 * message end, uint64 data length, a 128-byte NUL-terminated type), then the
 * data, zero-padded to a multiple of 8 bytes (USQCD's LIME 1.3 document).
 * Debian packages no LIME library (c-lime is not in the archive), hence this
 * file; tests/test_lqcd_lime.c tests it on its own. */
#ifndef CLPHYS_LQCD_LIME_H
#define CLPHYS_LQCD_LIME_H

#include "clphys_lqcd.h"
#include "platform/platform.h"

#include <stdint.h>
#include <stdio.h>

#define LQCD_LIME_MAGIC        0x456789abu
#define LQCD_LIME_HEADER_BYTES 144

typedef struct {
    char type[129];  /* NUL-terminated                                   */
    uint64_t offset; /* of the data in the file                          */
    uint64_t length; /* of the data, without padding                     */
    int mb, me;      /* message begin / end flags                        */
} lqcd_lime_record;

/* Read the record header at byte *pos of f (a regular file of size bytes)
 * into r and move *pos past the record (data and padding).  Returns
 * CLPHYS_SUCCESS with *end = 1 at the end of the file, or with *end = 0 and
 * r filled; CLPHYS_ERR_FORMAT naming file and offset for a bad magic or
 * version, a type without its NUL, a length beyond the end of the file or a
 * file that ends inside a header.  The data itself is not read. */
clphys_status lqcd_lime_next(FILE *f, const char *file, uint64_t size, uint64_t *pos, lqcd_lime_record *r, int *end);
/* Read a record's data (at most max bytes: CLPHYS_ERR_FORMAT above that),
 * NUL-terminated, into a buffer the caller frees. */
clphys_status lqcd_lime_read_small(FILE *f, const char *file, const lqcd_lime_record *r, size_t max, char **data);
/* Append a record (header, data, padding) at the current position of f.
 * Returns 0, or -1 on a write error (errno set). */
int lqcd_lime_write(FILE *f, const char *type, const void *data, uint64_t length, int mb, int me);
/* Append only the header of a record whose data the caller then writes
 * (length bytes), followed by lqcd_lime_pad(f, length). */
int lqcd_lime_write_header(FILE *f, const char *type, uint64_t length, int mb, int me);
int lqcd_lime_pad(FILE *f, uint64_t length);

#endif
