/* tune.c — the tuning cache of every path; format and guarantees in tune.h. */
#include "tune.h"
#include "platform.h"

#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <time.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC     "clphys-tune\t1\n"
#define MAX_FILE  (1u << 20) /* a larger file is not ours: ignored */
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
    for (; src && src[i] && i + 1 < MAX_FIELD; i++)
        dst[i] = (src[i] == '\t' || src[i] == '\n' || src[i] == '\r') ? ' ' : src[i];
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
    int len =
        snprintf(buf, n, "%s/tune-%016llx.txt", dir, (unsigned long long)fnv1a(id, strlen(id), 0xcbf29ce484222325ULL));
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

/* The last file read and checked, kept while its identity (inode, size,
 * modification time) stays the same: plans look entries up at creation, and
 * a lookup then costs one stat(2).  A store renames a new file over the old
 * one (a new inode).  File times are coarse (a few ms), so a file written
 * in place within that time could keep its identity: a copy is trusted only
 * when the file was at least 2 s old as it was read ("racy" files are read
 * again each time). */
static pthread_mutex_t memo_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char path[4200];
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    int stable; /* the file was >= 2 s old when read */
    char *text;
    int count; /* as check(): -1 damaged or foreign */
    size_t body_off, body_len;
} memo;

/* Under memo_mutex: make memo hold the checked file of dev; the entry count
 * (-1 damaged or foreign, 0 absent), *body / *body_len the entry lines. */
static int memo_load(const clphys_device_info *dev, const char **body, size_t *body_len)
{
    char path[4200];
    struct stat st;
    if (!cp_tune_file(dev, path, sizeof path) || stat(path, &st) != 0) return 0;
    if (!(memo.text && memo.stable && !strcmp(memo.path, path) && memo.dev == st.st_dev && memo.ino == st.st_ino &&
          memo.size == st.st_size && memo.mtime.tv_sec == st.st_mtim.tv_sec &&
          memo.mtime.tv_nsec == st.st_mtim.tv_nsec)) {
        free(memo.text);
        memset(&memo, 0, sizeof memo);
        size_t len = 0;
        char *text = slurp(path, &len);
        if (!text) return 0;
        const char *b = NULL;
        size_t bl = 0;
        int c = check(dev, text, len, &b, &bl);
        /* the identity of what was read: a file replaced between stat and
         * fopen is read again at the next lookup (its new inode differs) */
        snprintf(memo.path, sizeof memo.path, "%s", path);
        memo.dev = st.st_dev, memo.ino = st.st_ino, memo.size = st.st_size, memo.mtime = st.st_mtim;
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        memo.stable = now.tv_sec - st.st_mtim.tv_sec >= 2;
        memo.text = text;
        memo.count = c;
        memo.body_off = c > 0 ? (size_t)(b - text) : 0;
        memo.body_len = c > 0 ? bl : 0;
    }
    *body = memo.text + memo.body_off;
    *body_len = memo.body_len;
    return memo.count;
}

int cp_tune_count(const clphys_device_info *dev)
{
    const char *body;
    size_t bl;
    pthread_mutex_lock(&memo_mutex);
    int c = memo_load(dev, &body, &bl);
    pthread_mutex_unlock(&memo_mutex);
    return c;
}

int cp_tune_get(const clphys_device_info *dev, const cp_tune_key *key, char *value, size_t n)
{
    char pre[4 * MAX_FIELD + 64];
    const char *body;
    size_t bl;
    if (!key || !value || !n || !dev) return 0;
    key_prefix(key, pre, sizeof pre);
    const size_t lp = strlen(pre);
    int found = 0;
    pthread_mutex_lock(&memo_mutex);
    if (memo_load(dev, &body, &bl) > 0) {
        for (const char *p = body; p < body + bl;) {
            const char *nl = memchr(p, '\n', (size_t)(body + bl - p));
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
    pthread_mutex_unlock(&memo_mutex);
    return found;
}

/* The TAB-separated fields of the entry line at p (up to nl): PATH, WHAT,
 * PRECISION, FIELDS, VALUE, each NUL-terminated in buf (at most n bytes);
 * 0 when the line does not have them. */
static int split_entry(const char *p, const char *nl, char *buf, size_t n, char *f[5])
{
    size_t len = (size_t)(nl - p);
    if (len < 6 || len - 6 >= n) return 0;
    memcpy(buf, p + 6, len - 6); /* after "entry\t" */
    buf[len - 6] = 0;
    char *q = buf;
    for (int i = 0; i < 5; i++) {
        f[i] = q;
        char *t = strchr(q, '\t');
        if (i < 4) {
            if (!t) return 0;
            *t = 0;
            q = t + 1;
        }
    }
    return 1;
}

int cp_tune_each(const clphys_device_info *dev, int (*fn)(void *user, const char *const f[5]), void *user)
{
    const char *body;
    size_t bl;
    int count = 0;
    pthread_mutex_lock(&memo_mutex);
    int c = memo_load(dev, &body, &bl);
    char *buf = c > 0 ? malloc(bl + 1) : NULL;
    if (buf) memcpy(buf, body, bl), buf[bl] = 0; /* fn runs without the lock */
    pthread_mutex_unlock(&memo_mutex);
    if (c <= 0) return c;
    if (!buf) return -1;
    char line[5 * MAX_FIELD];
    for (const char *p = buf; *p;) {
        const char *nl = strchr(p, '\n');
        char *f[5];
        if (split_entry(p, nl, line, sizeof line, f)) {
            count++;
            if (fn && fn(user, (const char *const *)f)) break;
        }
        p = nl + 1;
    }
    free(buf);
    return count;
}

/* 1 when name (length ln) is one of the space-separated words of list. */
static int in_list(const char *list, const char *name, size_t ln)
{
    for (const char *p = list; p && *p;) {
        while (*p == ' ') p++;
        size_t w = strcspn(p, " ");
        if (w == ln && !strncmp(p, name, ln)) return 1;
        p += w;
    }
    return 0;
}

typedef struct {
    const cp_tune_key *key;
    const cp_tune_axis *axes;
    int naxes;
    const char *ignore;
    char *value;
    size_t n;
    double best;
    int found;
} nearest_ctx;

static int nearest_fn(void *user, const char *const f[5])
{
    nearest_ctx *c = user;
    const cp_tune_key *k = c->key;
    if (strcmp(f[0], k->path) || strcmp(f[1], k->what) || strcmp(f[2], k->precision)) return 0;
    /* FIELDS less the axes and the ignored names must be the key's fields */
    char rest[MAX_FIELD] = "", want[MAX_FIELD];
    size_t o = 0;
    double dist = 0;
    int seen = 0;
    for (const char *p = f[3]; *p;) {
        while (*p == ' ') p++;
        if (!*p) break;
        size_t w = strcspn(p, " "), ln = strcspn(p, "= ");
        if (ln > w) ln = w;
        int axis = -1;
        for (int a = 0; a < c->naxes; a++)
            if (strlen(c->axes[a].name) == ln && !strncmp(p, c->axes[a].name, ln)) axis = a;
        if (axis >= 0) {
            char num[64];
            size_t vl = w - ln - 1 < sizeof num - 1 ? w - ln - 1 : sizeof num - 1;
            if (p[ln] != '=') return 0;
            memcpy(num, p + ln + 1, vl);
            num[vl] = 0;
            char *e;
            double v = strtod(num, &e);
            const double t = c->axes[axis].target, lim = c->axes[axis].max_ratio;
            if (*e || !(v > 0) || !(t > 0)) return 0;
            double d = fabs(log(v / t));
            if (lim > 0 && d > log(lim) + 1e-12) return 0;
            dist += d;
            seen |= 1 << axis;
        } else if (!in_list(c->ignore, p, ln)) {
            if (o + w + 2 >= sizeof rest) return 0;
            if (o) rest[o++] = ' ';
            memcpy(rest + o, p, w);
            o += w;
            rest[o] = 0;
        }
        p += w;
    }
    if (seen != (1 << c->naxes) - 1) return 0;
    clean(want, k->fields);
    if (strcmp(rest, want)) return 0;
    if (c->found && !(dist < c->best)) return 0; /* the first of equals: the file's order */
    if (strlen(f[4]) >= c->n) return 0;
    snprintf(c->value, c->n, "%s", f[4]);
    c->best = dist, c->found = 1;
    return 0;
}

int cp_tune_nearest(const clphys_device_info *dev, const cp_tune_key *key, const cp_tune_axis *axes, int naxes,
                    const char *ignore, char *value, size_t n, double *distance)
{
    if (!dev || !key || !value || !n || naxes < 0 || naxes > 8) return 0;
    nearest_ctx c = {key, axes, naxes, ignore, value, n, 0, 0};
    if (cp_tune_each(dev, nearest_fn, &c) <= 0 || !c.found) return 0;
    if (distance) *distance = c.best;
    return 1;
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
            if (ok && rename(tmp, path) == 0)
                rc = 0;
            else
                remove(tmp);
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

/* The text of field `name` of a VALUE: its start and length, or NULL. */
static const char *value_field(const char *value, const char *name, size_t *len)
{
    const size_t ln = strlen(name);
    for (const char *p = value; p && *p;) {
        while (*p == ' ') p++;
        size_t w = strcspn(p, " ");
        if (w > ln && !strncmp(p, name, ln) && p[ln] == '=') {
            *len = w - ln - 1;
            return p + ln + 1;
        }
        p += w;
    }
    return NULL;
}

/* The field NAME of VALUE as a string in buf[size]; 0 when absent, empty or
 * too long. */
static int value_copy(const char *value, const char *name, char *buf, size_t size)
{
    size_t len;
    const char *v = value_field(value, name, &len);
    if (!v || !len || len >= size) return 0;
    memcpy(buf, v, len);
    buf[len] = 0;
    return 1;
}

int cp_tune_value_int(const char *value, const char *name, long *out)
{
    char buf[32];
    if (!value_copy(value, name, buf, sizeof buf)) return 0;
    char *e;
    long x = strtol(buf, &e, 10);
    if (*e || e == buf) return 0;
    *out = x;
    return 1;
}

int cp_tune_value_real(const char *value, const char *name, double *out)
{
    char buf[64];
    if (!value_copy(value, name, buf, sizeof buf)) return 0;
    char *e;
    double x = strtod(buf, &e);
    if (*e || e == buf || !isfinite(x)) return 0;
    *out = x;
    return 1;
}

int cp_tune_value_word(const char *value, const char *name, char *out, size_t n)
{
    size_t len;
    const char *v = value_field(value, name, &len);
    if (!v || !len || len >= n) return 0;
    memcpy(out, v, len);
    out[len] = 0;
    return 1;
}

int cp_tune_mark(const clphys_device_info *dev, const char *path, int quick, double seconds)
{
    char value[128], date[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    snprintf(value, sizeof value, "date=%s quick=%d seconds=%.1f", date, quick, seconds);
    const cp_tune_key key = {path, "tuned", "-", ""};
    return cp_tune_put(dev, &key, value);
}

int cp_tune_disabled(void)
{
    const char *off = getenv("CLPHYS_NO_TUNE");
    return off && *off && strcmp(off, "0");
}

clphys_status cp_tune_choose(const clphys_device_info *dev, const cp_tune_plan *t, clphys_tune_source *source)
{
    clphys_tune_source src = t->given ? CLPHYS_TUNE_GIVEN : CLPHYS_TUNE_HEURISTIC;
    if (!t->given && !t->no_tune && !cp_tune_disabled()) {
        char value[CP_TUNE_VALUE_MAX];
        const int found = t->naxes > 0
                              ? cp_tune_nearest(dev, &t->key, t->axes, t->naxes, t->ignore, value, sizeof value, NULL)
                              : cp_tune_get(dev, &t->key, value, sizeof value);
        if (found && t->take(t->user, value)) {
            if (source) *source = CLPHYS_TUNE_CACHE;
            return CLPHYS_SUCCESS;
        }
        if (t->measure) {
            value[0] = 0;
            clphys_status st = t->measure(t->user, value, sizeof value);
            if (st) {
                if (source) *source = CLPHYS_TUNE_HEURISTIC;
                return st;
            }
            if (*value && t->take(t->user, value)) {
                cp_tune_put(dev, &t->key, value); /* a cache that cannot be written only costs the next measurement */
                if (source) *source = CLPHYS_TUNE_MEASURED;
                return CLPHYS_SUCCESS;
            }
        }
    }
    if (source) *source = src;
    return t->defaults(t->user);
}

const char *clphys_tune_source_name(clphys_tune_source s)
{
    static const char *const names[] = {"given", "heuristic", "measured", "tuning cache"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}

typedef struct {
    clphys_tune_status *s;
} status_ctx;

static int status_fn(void *user, const char *const f[5])
{
    clphys_tune_status *s = ((status_ctx *)user)->s;
    if (strcmp(f[1], "tuned")) return 0;
    char date[32];
    if (!cp_tune_value_word(f[4], "date", date, sizeof date)) return 0;
    size_t o = strlen(s->paths);
    if (o + strlen(f[0]) + 2 < sizeof s->paths) snprintf(s->paths + o, sizeof s->paths - o, "%s%s", o ? "," : "", f[0]);
    s->tuned_paths++;
    if (strcmp(date, s->last_tuned) > 0) snprintf(s->last_tuned, sizeof s->last_tuned, "%s", date);
    long q;
    if (cp_tune_value_int(f[4], "quick", &q) && q) s->quick = 1;
    return 0;
}

clphys_status clphys_tune_status_get(const clphys_device_info *dev, clphys_tune_status *s)
{
    if (!dev || !s) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_tune_status_get: NULL argument");
    memset(s, 0, sizeof *s);
    if (!cp_tune_file(dev, s->file, sizeof s->file)) s->file[0] = 0;
    status_ctx c = {s};
    s->entries = cp_tune_each(dev, status_fn, &c);
    return CLPHYS_SUCCESS;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cp_tune_beats(const clphys_device_info *d, double s, double heuristic_s)
{
    const double margin = d && d->is_cpu ? 0.2 : 0;
    return heuristic_s <= 0 || s < heuristic_s * (1 - margin);
}

double cp_median(double *v, int n)
{
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int cp_tune_store(const clphys_tune_options *o, const clphys_device_info *dev, const cp_tune_key *key,
                  const char *value, double best_s, double untuned_s, int candidates)
{
    int rc = cp_tune_put(dev, key, value);
    if (o && o->chosen) {
        const clphys_tune_choice c = {key->path, key->what, key->precision, key->fields,
                                      value,     best_s,    untuned_s,      candidates};
        o->chosen(o->user, &c);
    }
    return rc;
}

void cp_tune_step(const clphys_tune_options *o, const char *path, int k, int n, const char *what)
{
    if (o && o->progress) o->progress(o->user, path, k, n, what);
}
