/* fuzz_file.c — see fuzz_file.h. */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz_file.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("clphys-fuzz", 0);
        if (fd < 0) return NULL;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0) return NULL;
    for (size_t off = 0; off < size;) {
        ssize_t w = pwrite(fd, data + off, size - off, (off_t)off);
        if (w <= 0) return NULL;
        off += (size_t)w;
    }
    return path;
}
