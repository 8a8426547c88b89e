/* output.c — atomic output files (clphys_output_open/close, include/clphys.h):
 * the temporary name, the removal of what a killed run left there, the
 * registry of the temporary files now open that a signal handler removes
 * (clphys_outputs_remove_pending), and errors that keep errno's word (a
 * full disk says ENOSPC, not EIO). */
#define _GNU_SOURCE /* kill, dirent, O_CLOEXEC */
#include "platform.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef NAME_MAX
#define NAME_MAX 255
#endif

/* The temporary files open now.  A slot's path is written before its flag
 * is raised and the flag lowered before the path is reused, so the signal
 * handler, which reads only raised slots, never sees half a path. */
#define PENDING_SLOTS 32
static char pending[PENDING_SLOTS][PATH_MAX];
static volatile sig_atomic_t pending_used[PENDING_SLOTS];
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

static void pending_add(const char *tmp)
{
    if (strlen(tmp) >= PATH_MAX) return;
    pthread_mutex_lock(&pending_lock);
    for (int k = 0; k < PENDING_SLOTS; k++)
        if (!pending_used[k]) {
            memcpy(pending[k], tmp, strlen(tmp) + 1);
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            pending_used[k] = 1;
            break;
        }
    pthread_mutex_unlock(&pending_lock);
}

static void pending_remove(const char *tmp)
{
    pthread_mutex_lock(&pending_lock);
    for (int k = 0; k < PENDING_SLOTS; k++)
        if (pending_used[k] && !strcmp(pending[k], tmp)) {
            pending_used[k] = 0;
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            break;
        }
    pthread_mutex_unlock(&pending_lock);
}

void clphys_outputs_remove_pending(void)
{
    /* async-signal-safe: unlink only, on the slots raised now */
    for (int k = 0; k < PENDING_SLOTS; k++)
        if (pending_used[k]) unlink(pending[k]);
}

/* FNV-1a: the short temporary name of a long file name. */
static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The folder part of file into dir ("." when none) and the name part. */
static const char *split(const char *file, char *dir, size_t n)
{
    const char *slash = strrchr(file, '/');
    if (!slash) {
        snprintf(dir, n, ".");
        return file;
    }
    snprintf(dir, n, "%.*s", slash == file ? 1 : (int)(slash - file), file);
    return slash + 1;
}

static int tmp_prefix(const char *file, char *prefix, size_t n)
{
    char dir[PATH_MAX];
    const char *name = split(file, dir, sizeof dir);
    /* ".tmp." and up to 10 digits of a pid must fit in one name */
    int k = strlen(name) + 15 <= NAME_MAX
                ? snprintf(prefix, n, "%s.tmp.", name)
                : snprintf(prefix, n, ".clphys-%016llx.tmp.", (unsigned long long)name_hash(name));
    return k < 0 || (size_t)k >= n ? ENAMETOOLONG : 0;
}

/* Remove what a run killed while writing file left: names of the pattern
 * (prefix then a process ID) whose process is gone. */
static void remove_leftovers(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d) return;
    const size_t pl = strlen(prefix);
    for (struct dirent *e; (e = readdir(d));) {
        const char *p = e->d_name;
        if (strncmp(p, prefix, pl) || p[pl] < '1' || p[pl] > '9') continue;
        char *end;
        errno = 0;
        long pid = strtol(p + pl, &end, 10);
        if (*end || errno || pid <= 0 || pid > INT_MAX || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to judge */
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, p) < (int)sizeof path) unlink(path);
    }
    closedir(d);
}

int cp_output_tmp_name(const char *file, char *tmp, size_t n)
{
    char dir[PATH_MAX], prefix[NAME_MAX + 1];
    split(file, dir, sizeof dir);
    int k = tmp_prefix(file, prefix, sizeof prefix) ? -1 : snprintf(tmp, n, "%s/%s%ld", dir, prefix, (long)getpid());
    if (k < 0 || (size_t)k >= n) {
        if (n) tmp[0] = 0;
        return ENAMETOOLONG;
    }
    remove_leftovers(dir, prefix);
    return 0;
}

clphys_status clphys_output_open(const char *file, FILE **f, char *tmp, size_t tmp_size)
{
    if (!file || !f || !tmp || !tmp_size)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_output_open: NULL argument");
    *f = NULL;
    if (cp_output_tmp_name(file, tmp, tmp_size)) {
        clphys_status st = cp_error(NULL, CLPHYS_ERR_IO, "%s: the name is too long", file);
        errno = ENAMETOOLONG;
        return st;
    }
    struct stat sb;
    if (stat(file, &sb) == 0 && !S_ISREG(sb.st_mode))
        return cp_error(NULL, CLPHYS_ERR_IO, "%s: exists and is not a regular file; clphys replaces regular files only",
                        file);
    /* a name of this pattern with our pid is a leftover of an earlier
       process; registered before it is made, so that a signal between the
       two leaves nothing behind */
    unlink(tmp);
    pending_add(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666); /* the umask decides, as for fopen */
    if (fd < 0) {
        int e = errno;
        pending_remove(tmp);
        return cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot create %s: %s", file, tmp, strerror(e));
    }
    *f = fdopen(fd, "wb");
    if (!*f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        pending_remove(tmp);
        return cp_error(NULL, CLPHYS_ERR_IO, "%s: cannot create %s: %s", file, tmp, strerror(e));
    }
    return CLPHYS_SUCCESS;
}

void cp_output_pending(const char *tmp, int pending)
{
    if (pending)
        pending_add(tmp);
    else
        pending_remove(tmp);
}

clphys_status clphys_output_close(FILE *f, const char *tmp, const char *file, int ok)
{
    int e = ok ? 0 : errno; /* the write that failed set it */
    if (!f || !tmp || !file) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_output_close: NULL argument");
    if (ok && fflush(f) != 0) ok = 0, e = errno;
    if (ok && ferror(f)) ok = 0, e = EIO;
    if (ok && fsync(fileno(f)) != 0 && errno != EINVAL && errno != EROFS) ok = 0, e = errno;
    if (fclose(f) != 0 && ok) ok = 0, e = errno;
    if (ok && rename(tmp, file) != 0) {
        e = errno;
        unlink(tmp);
        pending_remove(tmp);
        return cp_error(NULL, CLPHYS_ERR_IO, "%s: rename from %s failed: %s", file, tmp, strerror(e));
    }
    if (!ok) unlink(tmp);
    pending_remove(tmp);
    if (!ok) return cp_error(NULL, CLPHYS_ERR_IO, "%s: write failed: %s", file, strerror(e ? e : EIO));
    return CLPHYS_SUCCESS;
}
