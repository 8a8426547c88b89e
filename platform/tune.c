/* tune.c — the tuning cache of every path; format and guarantees in tune.h. */
#include "tune.h"
#include "platform.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC "clphys-tune\t1\n"
#define MAX_FILE (1u << 20) /* a larger file is not ours: ignored */
#define MAX_FIELD 1024

static uint64_t fnv1a(const char *s, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return h;
}

/* A field as stored: TAB and line breaks become spaces, at most MAX_FIELD - 1 characters. */
static void clean(char *dst, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < MAX_FIELD; i++) dst[i] = (src[i] == '\t' || src[i] == '\n' || src[i] == '\r') ? ' ' : src[i];
    dst[i] = 0;
}

/* fmt (four %s) with the four fields, each as stored */
static void format4(char *buf, size_t n, const char *fmt, const char *const v[4])
{
    char f[4][MAX_FIELD];
    for (int i = 0; i < 4; i++) clean(f[i], v[i]);
    snprintf(buf, n, fmt, f[0], f[1], f[2], f[3]);
}

/* The four identity lines of dev. */
static void identity(const clphys_device_info *dev, char *buf, size_t n)
{
    const char *const v[4] = {dev->name, dev->vendor, dev->platform, dev->driver_version};
    format4(buf, n, "device\t%s\nvendor\t%s\nplatform\t%s\ndriver\t%s\n", v);
}

int cp_tune_file(const clphys_device_info *dev, char *buf, size_t n)
{
    char dir[4096], id[4 * MAX_FIELD + 64];
    if (!dev || !cp_cache_dir(dir, sizeof dir)) return 0;
    identity(dev, id, sizeof id);
    int len = snprintf(buf, n, "%s/tune-%016llx.txt", dir, (unsigned long long)fnv1a(id, strlen(id), 0xcbf29ce484222325ULL));
    return len > 0 && (size_t)len < n;
}

/* The key part of an entry line: "entry\tPATH\tWHAT\tPRECISION\tFIELDS\t". */
static void key_prefix(const cp_tune_key *k, char *buf, size_t n)
{
    const char *const v[4] = {k->path, k->what, k->precision, k->fields};
    format4(buf, n, "entry\t%s\t%s\t%s\t%s\t", v);
}

/* The whole file, NUL-terminated, or NULL (absent, unreadable, too large). */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc(MAX_FILE + 1);
    size_t n = buf ? fread(buf, 1, MAX_FILE + 1, f) : 0;
    fclose(f);
    if (!buf || n > MAX_FILE) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* Check a file's text for dev: the number of entries, or -1 when it is
 * damaged, of another version or foreign.  *body / *body_len: the entry
 * lines (each ending in '\n'). */
static int check(const clphys_device_info *dev, const char *text, size_t len, const char **body, size_t *body_len)
{
    char id[4 * MAX_FIELD + 64];
    identity(dev, id, sizeof id);
    const size_t lm = strlen(MAGIC), li = strlen(id);
    if (len < lm + li || memcmp(text, MAGIC, lm) || memcmp(text + lm, id, li) || strlen(text) != len) return -1;
    const char *b = text + lm + li, *end = text + len;
    int count = 0;
    const char *p = b;
    while (p < end && !strncmp(p, "entry\t", 6)) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return -1;
        int tabs = 0;
        for (const char *q = p; q < nl; q++) tabs += *q == '\t';
        if (tabs != 5) return -1;
        p = nl + 1;
        count++;
    }
    /* the end line, exactly as a store writes it, and nothing after it */
    char want[64];
    snprintf(want, sizeof want, "end\t%d\t%016llx\n", count,
             (unsigned long long)fnv1a(text, (size_t)(p - text), 0xcbf29ce484222325ULL));
    if (strcmp(p, want)) return -1;
    *body = b;
    *body_len = (size_t)(p - b);
    return count;
}

int cp_tune_count(const clphys_device_info *dev)
{
    char path[4200];
    size_t len = 0, bl;
    const char *body;
    if (!cp_tune_file(dev, path, sizeof path)) return 0;
    char *text = slurp(path, &len);
    if (!text) return 0;
    int c = check(dev, text, len, &body, &bl);
    free(text);
    return c;
}

int cp_tune_get(const clphys_device_info *dev, const cp_tune_key *key, char *value, size_t n)
{
    char path[4200], pre[4 * MAX_FIELD + 64];
    size_t len = 0, bl;
    const char *body;
    if (!key || !value || !n || !cp_tune_file(dev, path, sizeof path)) return 0;
    char *text = slurp(path, &len);
    if (!text) return 0;
    int found = 0;
    if (check(dev, text, len, &body, &bl) > 0) {
        key_prefix(key, pre, sizeof pre);
        const size_t lp = strlen(pre);
        for (const char *p = body; p < body + bl;) {
            const char *nl = strchr(p, '\n');
            if (!strncmp(p, pre, lp)) {
                size_t vl = (size_t)(nl - p) - lp;
                if (vl < n) {
                    memcpy(value, p + lp, vl);
                    value[vl] = 0;
                    found = 1;
                }
                break;
            }
            p = nl + 1;
        }
    }
    free(text);
    return found;
}

/* Serializes the stores of this process's threads; the fcntl lock, those of processes. */
static pthread_mutex_t put_mutex = PTHREAD_MUTEX_INITIALIZER;

int cp_tune_put(const clphys_device_info *dev, const cp_tune_key *key, const char *value)
{
    char path[4200], dir[4096], lock[4300], tmp[4300], pre[4 * MAX_FIELD + 64], val[MAX_FIELD];
    if (!key || !value || strlen(value) >= CP_TUNE_VALUE_MAX || !cp_tune_file(dev, path, sizeof path) ||
        !cp_cache_dir(dir, sizeof dir))
        return -1;
    cp_mkdirs(dir);
    key_prefix(key, pre, sizeof pre);
    clean(val, value);
    pthread_mutex_lock(&put_mutex);
    snprintf(lock, sizeof lock, "%s.lock", path);
    int lfd = open(lock, O_RDWR | O_CREAT, 0644);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (lfd >= 0 && fcntl(lfd, F_SETLKW, &fl) != 0) { /* no lock here: store without it */
        close(lfd);
        lfd = -1;
    }
    /* the entries kept: those of a valid file, less the one replaced */
    size_t len = 0, bl = 0;
    const char *body = NULL;
    char *old = slurp(path, &len);
    if (old && check(dev, old, len, &body, &bl) < 0) body = NULL, bl = 0;
    char id[4 * MAX_FIELD + 64];
    identity(dev, id, sizeof id);
    const size_t lp = strlen(pre), cap = strlen(MAGIC) + strlen(id) + bl + lp + strlen(val) + 64;
    char *out = malloc(cap);
    int rc = -1;
    if (out) {
        size_t o = (size_t)snprintf(out, cap, "%s%s", MAGIC, id);
        int count = 0;
        for (const char *p = body; p && p < body + bl;) {
            const char *nl = strchr(p, '\n');
            if (strncmp(p, pre, lp)) {
                memcpy(out + o, p, (size_t)(nl + 1 - p));
                o += (size_t)(nl + 1 - p);
                count++;
            }
            p = nl + 1;
        }
        o += (size_t)snprintf(out + o, cap - o, "%s%s\n", pre, val);
        count++;
        const unsigned long long sum = fnv1a(out, o, 0xcbf29ce484222325ULL);
        o += (size_t)snprintf(out + o, cap - o, "end\t%d\t%016llx\n", count, sum);
        static unsigned counter;
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), counter++);
        FILE *f = fopen(tmp, "wb");
        if (f) {
            int ok = fwrite(out, 1, o, f) == o;
            ok = (fclose(f) == 0) && ok;
            if (ok && rename(tmp, path) == 0) rc = 0;
            else remove(tmp);
        }
        free(out);
    }
    free(old);
    if (lfd >= 0) close(lfd); /* releases the lock */
    pthread_mutex_unlock(&put_mutex);
    return rc;
}

int cp_tune_value_size(const char *value, const char *name, size_t *out)
{
    const size_t ln = strlen(name);
    for (const char *p = value; p && *p;) {
        while (*p == ' ') p++;
        if (!strncmp(p, name, ln) && p[ln] == '=') {
            const char *q = p + ln + 1;
            if (*q < '0' || *q > '9') return 0;
            char *e;
            unsigned long long v = strtoull(q, &e, 10);
            if (*e && *e != ' ') return 0;
            *out = (size_t)v;
            return 1;
        }
        p = strchr(p, ' ');
    }
    return 0;
}
