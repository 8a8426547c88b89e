/* textfile.h — the text readers' input: a file read byte by byte through
 * zlib, so that a gzip-compressed file (in.lj.data.gz, a .gz NBabel file, a
 * LAMMPS log) reads as its text and any other file as itself (gzopen's
 * transparent mode).  Bytes that no text file holds (a NUL, control
 * characters other than tab, newline, carriage return, form feed and
 * vertical tab, DEL) make the read fail with a message naming the file as
 * binary data, so that a reader never echoes such bytes in its own messages. */
#ifndef CLPHYS_TEXTFILE_H
#define CLPHYS_TEXTFILE_H

#include "clphys_core.h"

#include <stddef.h>

typedef struct cp_textfile cp_textfile;

/* Open file for reading; format names the expected format in messages
 * ("LAMMPS data").  CLPHYS_ERR_IO (cannot open, or a directory) with the
 * message set in ctx (NULL: the thread's last error). */
clphys_status cp_text_open(clphys_context *ctx, const char *file, const char *format, cp_textfile **out);

/* The next line (its '\n' kept) into buf[0 .. size), NUL-terminated; *len
 * its length.  Returns 1 for a line, 0 at the end of the file or on an
 * error (*st set: CLPHYS_ERR_FORMAT for binary data, a line longer than
 * size - 2 characters, a damaged or truncated gzip stream, or one that
 * expands more than 256-fold (a decompression bomb); CLPHYS_ERR_IO for a
 * read error).  lineno is the number of the line being read (messages). */
int cp_text_line(cp_textfile *t, char *buf, size_t size, size_t *len, long lineno, clphys_status *st);

void cp_text_close(cp_textfile *t);

#endif
