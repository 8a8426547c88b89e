/* textfile.c — text input through zlib (see textfile.h). */
#include "textfile.h"
#include "platform.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct cp_textfile {
    clphys_context *ctx;
    const char *file;
    const char *format;
    gzFile gz;
    unsigned long long size, out; /* the file's bytes; the text's bytes read so far */
};

/* A gzip-compressed text file expands about 4-fold (in.lj.data.gz: 4.2 MB
 * from 1.1 MB); beyond 256-fold the stream is not text this library reads
 * but a decompression bomb, refused before it fills memory line by line
 * (as NetCDF-4 variables beyond 256 values per byte, host/poisson). */
#define TEXT_PER_GZIP_BYTE 256

clphys_status cp_text_open(clphys_context *ctx, const char *file, const char *format, cp_textfile **out)
{
    *out = NULL;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return cp_error(ctx, CLPHYS_ERR_IO, "%s: cannot open: %s", file, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) memset(&sb, 0, sizeof sb);
    if (S_ISDIR(sb.st_mode)) {
        close(fd);
        return cp_error(ctx, CLPHYS_ERR_IO, "%s: cannot open: %s", file, strerror(EISDIR));
    }
    cp_textfile *t = calloc(1, sizeof *t);
    gzFile gz = t ? gzdopen(fd, "rb") : NULL;
    if (!gz) {
        close(fd);
        free(t);
        return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "%s: cannot open: out of memory", file);
    }
    t->ctx = ctx, t->file = file, t->format = format, t->gz = gz;
    t->size = S_ISREG(sb.st_mode) ? (unsigned long long)sb.st_size : 0;
    *out = t;
    return CLPHYS_SUCCESS;
}

static int binary_byte(int c)
{
    return (c < 32 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') || c == 127;
}

int cp_text_line(cp_textfile *t, char *buf, size_t size, size_t *len, long lineno, clphys_status *st)
{
    size_t l = 0;
    int c = -1;
    *len = 0;
    buf[0] = 0;
    while (l < size - 1 && (c = gzgetc(t->gz)) != -1) {
        if (binary_byte(c)) {
            buf[l] = 0;
            if (c == 0)
                *st = cp_error(t->ctx, CLPHYS_ERR_FORMAT, "%s:%ld: a NUL byte: binary data, not a text file (%s)",
                               t->file, lineno, t->format);
            else
                *st = cp_error(t->ctx, CLPHYS_ERR_FORMAT,
                               "%s:%ld: a control byte 0x%02x: binary data, not a text file (%s)", t->file, lineno,
                               (unsigned)c, t->format);
            return 0;
        }
        buf[l++] = (char)c;
        if (c == '\n') break;
    }
    buf[l] = 0;
    if (c == -1) {
        int err = 0;
        const char *msg = gzerror(t->gz, &err);
        if (err == Z_ERRNO) {
            *st = cp_error(t->ctx, CLPHYS_ERR_IO, "%s:%ld: read error: %s", t->file, lineno, strerror(errno));
            return 0;
        }
        if (err != Z_OK && err != Z_BUF_ERROR) {
            *st = cp_error(t->ctx, CLPHYS_ERR_FORMAT, "%s:%ld: a damaged gzip stream (%s)", t->file, lineno, msg);
            return 0;
        }
        if (err == Z_BUF_ERROR) {
            *st = cp_error(t->ctx, CLPHYS_ERR_FORMAT, "%s:%ld: the gzip stream ends early (truncated file)", t->file,
                           lineno);
            return 0;
        }
    }
    if (!l) return 0;
    t->out += l;
    if (!gzdirect(t->gz) && t->out > TEXT_PER_GZIP_BYTE * t->size + 65536) {
        *st = cp_error(t->ctx, CLPHYS_ERR_FORMAT,
                       "%s:%ld: the gzip stream expands more than %d-fold (%llu bytes of text from a %llu-byte "
                       "file): refused as a decompression bomb (%s)",
                       t->file, lineno, TEXT_PER_GZIP_BYTE, t->out, t->size, t->format);
        return 0;
    }
    if (l == size - 1 && buf[l - 1] != '\n') {
        int d = gzgetc(t->gz);
        if (d != -1 && d != '\n') {
            *st = cp_error(t->ctx, CLPHYS_ERR_FORMAT, "%s:%ld: line longer than %zu characters", t->file, lineno,
                           size - 2);
            return 0;
        }
    }
    *len = l;
    return 1;
}

void cp_text_close(cp_textfile *t)
{
    if (!t) return;
    gzclose_r(t->gz);
    free(t);
}
