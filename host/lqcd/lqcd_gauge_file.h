/* lqcd_gauge_file.h — what the gauge-file readers and writers share (not public):
 * byte order, the checks every reader runs, the atomic write.  Formats and
 * checks: include/clphys_lqcd.h. */
#ifndef CLPHYS_LQCD_GAUGE_FILE_H
#define CLPHYS_LQCD_GAUGE_FILE_H

#include "clphys_lqcd.h"
#include "platform/platform.h"

#include <stdint.h>
#include <stdio.h>

/* An open input file (always a regular file) and its size in bytes. */
typedef struct {
    const char *name;
    FILE *f;
    uint64_t size;
} lqcd_gauge_file_input;

uint32_t lqcd_gauge_file_be32(const unsigned char *p);
uint32_t lqcd_gauge_file_le32(const unsigned char *p);
uint64_t lqcd_gauge_file_be64(const unsigned char *p);
void lqcd_gauge_file_put_be32(unsigned char *p, uint32_t v);
void lqcd_gauge_file_put_be64(unsigned char *p, uint64_t v);
/* n reals of wsize bytes (4 or 8), big- or little-endian, to doubles. */
void lqcd_gauge_file_decode(const unsigned char *raw, size_t n, int wsize, int little, double *out);
/* n doubles to big-endian reals of wsize bytes (fp32 rounds). */
void lqcd_gauge_file_encode_be(const double *in, size_t n, int wsize, unsigned char *raw);

/* Dimensions read from a file: each extent even and >= 2 and the volume
 * <= 2^31 (CLPHYS_ERR_INPUT otherwise); *data_bytes = volume * 4 links *
 * reals_per_link * wsize, computed without overflow. */
clphys_status lqcd_gauge_file_check_dims(const char *file, const int dims[4], int reals_per_link, int wsize,
                                         uint64_t *data_bytes);
/* Read exactly n bytes at the current position: CLPHYS_ERR_FORMAT naming
 * what when the file ends first. */
clphys_status lqcd_gauge_file_read(const lqcd_gauge_file_input *in, void *buf, size_t n, const char *what);

/* Record in info that `what` could not be verified. */
void lqcd_gauge_file_unverified(clphys_lqcd_gauge_file_info *info, const char *what);
/* The checks after the links are in g: every entry finite, every link in
 * SU(3) to the tolerance of the file's precision, then the header's
 * plaquette and link trace where given (NULL: absent), then the refusal of
 * an unverifiable file unless p->allow_unverified.  Messages name the file,
 * the link (site coordinates and direction) or the value. */
clphys_status lqcd_gauge_file_verify(const char *file, const clphys_lqcd_gauge_read_params *p,
                                     const clphys_lqcd_gauge_field *g, const double *plaquette,
                                     const double *link_trace, clphys_lqcd_gauge_file_info *info);
/* Plaquette and link trace of g as stored in wsize-byte reals (rows 2: row
 * 2 rebuilt from the rounded rows 0 and 1): what a reader will compute. */
clphys_status lqcd_gauge_file_stored_observables(const clphys_lqcd_gauge_field *g, int wsize, int rows, double *plaq,
                                                 double *trace);

/* Atomic write: lqcd_gauge_file_create opens FILE.tmp.PID (its name in tmp);
 * lqcd_gauge_file_commit flushes, syncs, closes and renames it to file, or removes it. */
FILE *lqcd_gauge_file_create(const char *file, char *tmp, size_t n, clphys_status *st);
clphys_status lqcd_gauge_file_commit(FILE *f, const char *tmp, const char *file, int ok);

/* The readers and writers of each format (file positioned at 0). */
clphys_status lqcd_gauge_file_read_nersc(const lqcd_gauge_file_input *in, const clphys_lqcd_gauge_read_params *p,
                                         clphys_lqcd_gauge_field *g, clphys_lqcd_gauge_file_info *info);
clphys_status lqcd_gauge_file_read_ildg(const lqcd_gauge_file_input *in, const clphys_lqcd_gauge_read_params *p,
                                        clphys_lqcd_gauge_field *g, clphys_lqcd_gauge_file_info *info);
clphys_status lqcd_gauge_file_read_milc(const lqcd_gauge_file_input *in, const clphys_lqcd_gauge_read_params *p,
                                        clphys_lqcd_gauge_field *g, clphys_lqcd_gauge_file_info *info);
clphys_status lqcd_gauge_file_write_nersc(const char *file, const clphys_lqcd_gauge_field *g, int wsize, int rows);
clphys_status lqcd_gauge_file_write_ildg(const char *file, const clphys_lqcd_gauge_field *g, int wsize);

#endif
