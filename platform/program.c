/* program.c — kernel sources (embedded at build time, or from $CLPHYS_KERNEL_DIR),
 * program builds with the build log on error, an in-context cache of built
 * programs, and an on-disk cache of program binaries.
 *
 * Disk cache: one file per (device name, platform, driver version, options,
 * source hash) under $CLPHYS_CACHE_DIR, else $XDG_CACHE_HOME/clphys, else
 * ~/.cache/clphys; CLPHYS_NO_CACHE=1 disables it.  A file holds a magic, the
 * full key, the binary's length and checksum, then the binary.  Anything that
 * does not check out (truncated, corrupted, another key) is ignored and rebuilt
 * from source; writes go to a temporary file renamed into place. */
#include "platform.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cp_embedded_file { const char *name; const char *text; };
extern const struct cp_embedded_file cp_embedded_files[];

struct cp_program_entry {
    char *file, *options;
    cl_program prog;
    struct cp_program_entry *next;
};

static const char MAGIC[8] = {'C', 'L', 'P', 'H', 'Y', 'S', 'B', '1'};

/* ---- sources ------------------------------------------------------------- */

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
            if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
                free(buf);
                buf = NULL;
            } else {
                buf[n] = 0;
                if (len) *len = (size_t)n;
            }
        }
    }
    fclose(f);
    return buf;
}

/* Raw text of one file: from the kernel folder when set, else embedded. */
static char *raw_source(const char *name)
{
    const char *dir = getenv("CLPHYS_KERNEL_DIR");
    if (dir && *dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        return read_file(path, NULL);
    }
    for (const struct cp_embedded_file *f = cp_embedded_files; f->name; f++)
        if (!strcmp(f->name, name)) return strdup(f->text);
    return NULL;
}

typedef struct { char *s; size_t len, cap; } sbuf;

static int sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->cap + n + 1) * 2;
        char *p = realloc(b->s, cap);
        if (!p) return -1;
        b->s = p, b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
    return 0;
}

/* Inline #include "x" lines from the same source set, so the device compiler
 * needs no include path (the library carries its kernels, no files needed). */
static int expand(sbuf *out, const char *name, int depth)
{
    if (depth > 16) return -1;
    char *text = raw_source(name);
    if (!text) return -1;
    int rc = 0;
    for (char *line = text; *line && rc == 0;) {
        char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) + 1 : strlen(line);
        const char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        char inc[256];
        if (sscanf(p, "#include \"%255[^\"]\"", inc) == 1 || sscanf(p, "# include \"%255[^\"]\"", inc) == 1) {
            rc = expand(out, inc, depth + 1);
            if (rc == 0) rc = sb_add(out, "\n", 1);
        } else {
            rc = sb_add(out, line, n);
        }
        line += n;
    }
    free(text);
    return rc;
}

char *cp_kernel_source(const char *file)
{
    sbuf b = {0};
    if (expand(&b, file, 0) != 0) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* ---- hashing ------------------------------------------------------------- */

static uint64_t fnv1a(const void *data, size_t n, uint64_t h)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* ---- disk cache ---------------------------------------------------------- */

int cp_cache_dir(char *buf, size_t n)
{
    const char *off = getenv("CLPHYS_NO_CACHE");
    if (off && *off && strcmp(off, "0")) return 0;
    const char *d = getenv("CLPHYS_CACHE_DIR");
    if (d && *d) snprintf(buf, n, "%s", d);
    else if ((d = getenv("XDG_CACHE_HOME")) && *d) snprintf(buf, n, "%s/clphys", d);
    else if ((d = getenv("HOME")) && *d) snprintf(buf, n, "%s/.cache/clphys", d);
    else return 0;
    return 1;
}

void cp_mkdirs(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(tmp, 0755);
            *p = '/';
        }
    mkdir(tmp, 0755);
}

static char *cache_key(const clphys_context *ctx, const char *source, const char *options)
{
    size_t n = strlen(source);
    uint64_t h1 = fnv1a(source, n, 0xcbf29ce484222325ULL), h2 = fnv1a(source, n, 0x84222325cbf29ce4ULL);
    size_t len = strlen(options) + 1024;
    char *key = malloc(len);
    if (key)
        snprintf(key, len, "device=%s\nplatform=%s\ndriver=%s\noptions=%s\nsource=%016llx%016llx/%zu\n",
                 ctx->info.name, ctx->info.platform, ctx->info.driver_version, options, (unsigned long long)h1,
                 (unsigned long long)h2, n);
    return key;
}

static void cache_path(char *buf, size_t n, const char *dir, const char *key)
{
    snprintf(buf, n, "%s/%016llx.bin", dir, (unsigned long long)fnv1a(key, strlen(key), 0xcbf29ce484222325ULL));
}

/* Returns the binary when the file exists and every check passes, else NULL. */
static unsigned char *cache_load(const char *path, const char *key, size_t *bin_len)
{
    size_t len;
    unsigned char *buf = (unsigned char *)read_file(path, &len);
    if (!buf) return NULL;
    size_t klen = strlen(key), off = 0;
    uint32_t fk;
    uint64_t blen, sum;
    int ok = len >= sizeof MAGIC + 4 && !memcmp(buf, MAGIC, sizeof MAGIC);
    if (ok) {
        off = sizeof MAGIC;
        memcpy(&fk, buf + off, 4);
        off += 4;
        ok = fk == klen && len >= off + klen + 16 && !memcmp(buf + off, key, klen);
    }
    if (ok) {
        off += klen;
        memcpy(&blen, buf + off, 8);
        memcpy(&sum, buf + off + 8, 8);
        off += 16;
        ok = blen > 0 && len - off == blen && fnv1a(buf + off, blen, 0xcbf29ce484222325ULL) == sum;
    }
    if (!ok) {
        free(buf);
        return NULL;
    }
    memmove(buf, buf + off, blen);
    *bin_len = blen;
    return buf;
}

static void cache_store(const char *dir, const char *path, const char *key, cl_program prog)
{
    size_t blen = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof blen, &blen, NULL) != CL_SUCCESS || blen == 0)
        return;
    unsigned char *bin = malloc(blen);
    if (!bin) return;
    unsigned char *bins[1] = {bin};
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) == CL_SUCCESS) {
        cp_mkdirs(dir);
        char tmp[4400];
        snprintf(tmp, sizeof tmp, "%.4200s.tmp.%ld", path, (long)getpid());
        FILE *f = fopen(tmp, "wb");
        if (f) {
            uint32_t klen = (uint32_t)strlen(key);
            uint64_t b64 = blen, sum = fnv1a(bin, blen, 0xcbf29ce484222325ULL);
            int ok = fwrite(MAGIC, 1, sizeof MAGIC, f) == sizeof MAGIC && fwrite(&klen, 4, 1, f) == 1 &&
                     fwrite(key, 1, klen, f) == klen && fwrite(&b64, 8, 1, f) == 1 && fwrite(&sum, 8, 1, f) == 1 &&
                     fwrite(bin, 1, blen, f) == blen;
            ok = (fclose(f) == 0) && ok;
            if (!ok || rename(tmp, path) != 0) remove(tmp);
        }
    }
    free(bin);
}

/* ---- building ------------------------------------------------------------ */

static clphys_status build_failed(clphys_context *ctx, cl_program prog, const char *name, const char *options,
                                  cl_int e)
{
    size_t n = 0;
    clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
    char *log = malloc(n + 1);
    if (log) {
        log[0] = 0;
        clGetProgramBuildInfo(prog, ctx->device, CL_PROGRAM_BUILD_LOG, n, log, NULL);
        log[n] = 0;
    }
    cp_error(ctx, CLPHYS_ERR_BUILD, "building %s for %s with options \"%s\" failed (%s); build log:\n%s", name,
             ctx->info.name, options, cp_cl_error_name(e), log ? log : "(unavailable)");
    free(log);
    return CLPHYS_ERR_BUILD;
}

void cp_build_options(const clphys_context *ctx, const char *options, char *buf, size_t n)
{
    snprintf(buf, n, "-cl-std=CL1.2 %s %s", ctx->info.is_gpu ? "-DCLPHYS_GPU=1" : "-DCLPHYS_CPU=1",
             options ? options : "");
}

clphys_status cp_program_from_source(clphys_context *ctx, const char *name, const char *source,
                                     const char *options, cl_program *out, int *from_cache)
{
    if (!ctx || !source || !out) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "cp_program_from_source: NULL");
    char opts[4096];
    cp_build_options(ctx, options, opts, sizeof opts);
    if (from_cache) *from_cache = 0;
    *out = NULL;
    CP_TRY(cp_build_check(ctx, name ? name : "a program", options ? options : ""));
    char dir[4096], path[4200];
    char *key = NULL;
    int use_cache = cp_cache_dir(dir, sizeof dir);
    cl_int e;
    if (use_cache && (key = cache_key(ctx, source, opts))) {
        cache_path(path, sizeof path, dir, key);
        size_t blen;
        unsigned char *bin = cache_load(path, key, &blen);
        if (bin) {
            const unsigned char *bins[1] = {bin};
            cl_int bstat;
            cl_program p = clCreateProgramWithBinary(ctx->context, 1, &ctx->device, &blen, bins, &bstat, &e);
            free(bin);
            if (e == CL_SUCCESS && bstat == CL_SUCCESS &&
                clBuildProgram(p, 1, &ctx->device, opts, NULL, NULL) == CL_SUCCESS) {
                *out = p;
                if (from_cache) *from_cache = 1;
                free(key);
                return CLPHYS_SUCCESS;
            }
            if (p) clReleaseProgram(p); /* foreign or stale binary: rebuild from source */
        }
    }
    cl_program p = clCreateProgramWithSource(ctx->context, 1, &source, NULL, &e);
    if (e != CL_SUCCESS) {
        free(key);
        return cp_cl_error(ctx, e, "clCreateProgramWithSource");
    }
    e = clBuildProgram(p, 1, &ctx->device, opts, NULL, NULL);
    if (e != CL_SUCCESS) {
        clphys_status st = build_failed(ctx, p, name, opts, e);
        clReleaseProgram(p);
        free(key);
        return st;
    }
    if (key) cache_store(dir, path, key, p);
    free(key);
    *out = p;
    return CLPHYS_SUCCESS;
}

clphys_status cp_program(clphys_context *ctx, const char *file, const char *options, cl_program *prog)
{
    if (!ctx || !file || !prog) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "cp_program: NULL argument");
    if (!options) options = "";
    CP_TRY(cp_build_check(ctx, file, options)); /* also for a program built before a capability was masked */
    for (struct cp_program_entry *p = ctx->programs; p; p = p->next)
        if (!strcmp(p->file, file) && !strcmp(p->options, options)) {
            *prog = p->prog;
            return CLPHYS_SUCCESS;
        }
    char *src = cp_kernel_source(file);
    if (!src)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "kernel source '%s' (or a header it includes) not found%s%s",
                        file, getenv("CLPHYS_KERNEL_DIR") ? " in CLPHYS_KERNEL_DIR=" : " among embedded sources",
                        getenv("CLPHYS_KERNEL_DIR") ? getenv("CLPHYS_KERNEL_DIR") : "");
    struct cp_program_entry *ent = calloc(1, sizeof *ent);
    if (!ent) {
        free(src);
        return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    clphys_status st = cp_program_from_source(ctx, file, src, options, &ent->prog, NULL);
    free(src);
    if (st != CLPHYS_SUCCESS) {
        free(ent);
        return st;
    }
    ent->file = strdup(file);
    ent->options = strdup(options);
    ent->next = ctx->programs;
    ctx->programs = ent;
    *prog = ent->prog;
    return CLPHYS_SUCCESS;
}

int cp_program_at(const clphys_context *ctx, int i, const char **file, const char **options)
{
    const struct cp_program_entry *p = ctx->programs;
    for (; p && i > 0; i--) p = p->next;
    if (!p || i < 0) return 0;
    *file = p->file;
    *options = p->options;
    return 1;
}

void cp_programs_release(clphys_context *ctx)
{
    for (struct cp_program_entry *p = ctx->programs, *n; p; p = n) {
        n = p->next;
        clReleaseProgram(p->prog);
        free(p->file);
        free(p->options);
        free(p);
    }
    ctx->programs = NULL;
}

clphys_status cp_kernel(clphys_context *ctx, cl_program prog, const char *name, cl_kernel *k)
{
    cl_int e;
    *k = clCreateKernel(prog, name, &e);
    if (e != CL_SUCCESS) return cp_error(ctx, cp_cl_error(ctx, e, "clCreateKernel"), "clCreateKernel(%s) failed: %s", name, cp_cl_error_name(e));
    return CLPHYS_SUCCESS;
}

clphys_status cp_precision_options(clphys_context *ctx, clphys_precision p, char *buf, size_t n)
{
    if (p == CLPHYS_FP64) {
        if (!ctx->info.fp64)
            return cp_error(ctx, CLPHYS_ERR_UNSUPPORTED, "device %s has no cl_khr_fp64: fp64 is unavailable",
                            ctx->info.name);
        snprintf(buf, n, "-DREAL_T=double -DREAL_IS_DOUBLE=1");
    } else if (p == CLPHYS_FP32) {
        snprintf(buf, n, "-DREAL_T=float");
    } else {
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "unknown precision %d", (int)p);
    }
    return CLPHYS_SUCCESS;
}
