/* program.c — kernel sources (embedded at build time, or from $CLPHYS_KERNEL_DIR),
 * program builds with the build log on error, an in-context cache of built
 * programs, and an on-disk cache of program binaries.
 *
 * Disk cache: one file per (device name, platform, driver version, options,
 * source hash) under $CLPHYS_CACHE_DIR, else $XDG_CACHE_HOME/clphys, else
 * ~/.cache/clphys; CLPHYS_NO_CACHE=1 disables it.  A file (the envelope)
 * holds a magic, the full key, the driver binary's length and a 128-bit
 * digest of the binary, then the binary.  Anything that does not check out
 * (truncated, corrupted, another key) is ignored and rebuilt from source;
 * writes go to a temporary file renamed into place.
 * What the digest cannot catch: a binary that is intact as stored but that
 * the driver cannot take (a driver fault when it was made, or a file made
 * to look valid).  PoCL crashes inside clCreateProgramWithBinary on some of
 * those, and would on every run.  So a load is bracketed by a marker file
 * (FILE.loading, holding the loader's PID): a marker whose process is gone
 * means a load that never returned, and that entry is dropped and rebuilt
 * (clphys_context_notes says so) instead of being handed over again.
 * A cache folder that cannot be written is said once per context (the
 * notes) and not tried again: every run then pays the compile. */
#include "platform.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct cp_program_entry {
    const cp_kernel_file *file;
    char *options;
    cl_program prog;
    struct cp_program_entry *next;
};

/* B2: the digest became 128 bits (two FNV-1a streams) when the marker
   files came; B1 files are ignored and rebuilt */
static const char MAGIC[8] = {'C', 'L', 'P', 'H', 'Y', 'S', 'B', '2'};

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
    for (const cp_kernel_file *const *f = cp_kernel_files; *f; f++)
        if (!strcmp((*f)->name, name)) return strdup((*f)->text);
    return NULL;
}

typedef struct {
    char *s;
    size_t len, cap;
} sbuf;

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

char *cp_kernel_source(const cp_kernel_file *file)
{
    sbuf b = {0};
    if (!file || expand(&b, file->name, 0) != 0) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* ---- notes ---------------------------------------------------------------- */

const char *clphys_context_notes(const clphys_context *ctx) { return ctx ? ctx->notes : ""; }

static void note(clphys_context *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(clphys_context *ctx, const char *fmt, ...)
{
    size_t l = strlen(ctx->notes);
    if (l + 2 >= sizeof ctx->notes) return;
    if (l) ctx->notes[l++] = '\n';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->notes + l, sizeof ctx->notes - l, fmt, ap);
    va_end(ap);
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
    if (d && *d)
        snprintf(buf, n, "%s", d);
    else if ((d = getenv("XDG_CACHE_HOME")) && *d)
        snprintf(buf, n, "%s/clphys", d);
    else if ((d = getenv("HOME")) && *d)
        snprintf(buf, n, "%s/.cache/clphys", d);
    else
        return 0;
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
        snprintf(key, len, "device=%s\nplatform=%s\ndriver=%s\noptions=%s\nsource=%016llx%016llx/%zu\n", ctx->info.name,
                 ctx->info.platform, ctx->info.driver_version, options, (unsigned long long)h1, (unsigned long long)h2,
                 n);
    return key;
}

/* The envelope's digest of the driver binary: two FNV-1a streams. */
static void digest(const void *p, size_t n, uint64_t d[2])
{
    d[0] = fnv1a(p, n, 0xcbf29ce484222325ULL);
    d[1] = fnv1a(p, n, 0x84222325cbf29ce4ULL ^ n);
}

static void cache_path(char *buf, size_t n, const char *dir, const char *key)
{
    snprintf(buf, n, "%s/%016llx.bin", dir, (unsigned long long)fnv1a(key, strlen(key), 0xcbf29ce484222325ULL));
}

/* The largest driver binary a cache file is taken to hold: a damaged or
 * planted file larger than this is not read (drivers' binaries of our
 * programs are a few MB). */
#define CACHE_BINARY_MAX ((uint64_t)1 << 30)

/* Returns the binary when the file exists and every check passes, else
 * NULL.  The envelope's header (magic, key, length) is read and checked
 * against the file's size first: memory is the binary's, and only for a
 * file whose header is ours and whose size agrees with it. */
static unsigned char *cache_load(const char *path, const char *key, size_t *bin_len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    struct stat sb;
    const size_t klen = strlen(key);
    char magic[sizeof MAGIC];
    uint32_t fk;
    uint64_t blen = 0, sum[2];
    unsigned char *buf = NULL;
    char *fkey = malloc(klen + 1);
    int ok = fkey && fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) &&
             fread(magic, 1, sizeof magic, f) == sizeof magic && !memcmp(magic, MAGIC, sizeof MAGIC) &&
             fread(&fk, 4, 1, f) == 1 && fk == klen && fread(fkey, 1, klen, f) == klen && !memcmp(fkey, key, klen) &&
             fread(&blen, 8, 1, f) == 1 && fread(sum, 8, 2, f) == 2 && blen > 0 && blen <= CACHE_BINARY_MAX &&
             (uint64_t)sb.st_size == sizeof MAGIC + 4 + klen + 24 + blen;
    free(fkey);
    if (ok) ok = (buf = malloc((size_t)blen)) && fread(buf, 1, (size_t)blen, f) == blen;
    fclose(f);
    if (ok) {
        uint64_t d[2];
        digest(buf, (size_t)blen, d);
        ok = d[0] == sum[0] && d[1] == sum[1];
    }
    if (!ok) {
        free(buf);
        return NULL;
    }
    *bin_len = (size_t)blen;
    return buf;
}

static void cache_store(clphys_context *ctx, const char *dir, const char *path, const char *key, cl_program prog)
{
    if (ctx->cache_readonly) return;
    size_t blen = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof blen, &blen, NULL) != CL_SUCCESS || blen == 0) return;
    unsigned char *bin = malloc(blen);
    if (!bin) return;
    unsigned char *bins[1] = {bin};
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) == CL_SUCCESS) {
        cp_mkdirs(dir);
        char tmp[4400];
        snprintf(tmp, sizeof tmp, "%.4200s.tmp.%ld", path, (long)getpid());
        FILE *f = fopen(tmp, "wb");
        if (!f) {
            /* said once; every later build of this context would fail alike */
            ctx->cache_readonly = 1;
            note(ctx,
                 "kernel cache: cannot write in %s (%s): kernels are compiled again on every run; set "
                 "CLPHYS_CACHE_DIR to a writable folder (or CLPHYS_NO_CACHE=1 to go without)",
                 dir, strerror(errno));
        } else {
            uint32_t klen = (uint32_t)strlen(key);
            uint64_t b64 = blen, sum[2];
            digest(bin, blen, sum);
            int ok = fwrite(MAGIC, 1, sizeof MAGIC, f) == sizeof MAGIC && fwrite(&klen, 4, 1, f) == 1 &&
                     fwrite(key, 1, klen, f) == klen && fwrite(&b64, 8, 1, f) == 1 && fwrite(sum, 8, 2, f) == 2 &&
                     fwrite(bin, 1, blen, f) == blen;
            ok = (fclose(f) == 0) && ok;
            if (!ok || rename(tmp, path) != 0) remove(tmp);
        }
    }
    free(bin);
}

/* The marker of a load in progress: path.loading with the loader's PID.
 * Returns 1 when this process made it (remove it after the load), 0 when
 * another live process is loading the same entry, -1 when a marker was left
 * by a process that died during the load: the entry is dropped. */
static int load_begin(clphys_context *ctx, const char *path, char *marker, size_t n)
{
    snprintf(marker, n, "%s.loading", path);
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(marker, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0) {
            char pid[32];
            int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
            int ok = write(fd, pid, (size_t)len) == len;
            close(fd);
            if (!ok) {
                unlink(marker);
                return 0;
            }
            return 1;
        }
        if (errno != EEXIST) return 0; /* a read-only folder: load without a marker */
        FILE *f = fopen(marker, "r");
        long pid = 0;
        int got = f && fscanf(f, "%ld", &pid) == 1;
        if (f) fclose(f);
        if (got && pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM)) return 0; /* alive: its load */
        if (!got) return 0;                                                           /* being written right now */
        /* the loader died inside the load: never hand this binary over again */
        unlink(path);
        unlink(marker);
        note(ctx,
             "kernel cache: %s was being loaded by process %ld, which never finished (a driver crash?): "
             "dropped and rebuilt from source",
             path, pid);
        return -1;
    }
    return 0;
}

/* ---- building ------------------------------------------------------------ */

/* p's build log for ctx's device, allocated ("" when the runtime gives
 * none); NULL when out of memory. */
static char *build_log(clphys_context *ctx, cl_program p)
{
    size_t n = 0;
    if (clGetProgramBuildInfo(p, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS) n = 0;
    char *log = malloc(n + 1);
    if (!log) return NULL;
    log[0] = 0;
    if (n && clGetProgramBuildInfo(p, ctx->device, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS) n = 0;
    log[n] = 0;
    return log;
}

/* Whether p's build log says nothing of an error (empty, or a runtime's
 * one-line summary without the compiler's "error"). */
static int log_names_no_error(clphys_context *ctx, cl_program p)
{
    char *log = build_log(ctx, p);
    if (!log) return 0;
    for (char *c = log; *c; c++) *c = (char)tolower((unsigned char)*c);
    const int silent = !strstr(log, "error");
    free(log);
    return silent;
}

static clphys_status build_failed(clphys_context *ctx, cl_program prog, const char *name, const char *options, cl_int e)
{
    char *log = build_log(ctx, prog);
    cp_error(ctx, CLPHYS_ERR_BUILD, "building %s for %s with options \"%s\" failed (%s); build log:\n%s", name,
             ctx->info.name, options, cp_cl_error_name(e), log ? log : "(unavailable)");
    free(log);
    return CLPHYS_ERR_BUILD;
}

/* What one kind of device adds to every build.
 * Intel GPUs (Intel's compute runtime), measured with Intel's offline
 * compiler (scripts/gpu_targets.py, docs/gpu-targets.md):
 *  - IGC's auto large-GRF mode: a kernel that would spill with 128
 *    registers per hardware thread gets 256 (and half the threads per XVE);
 *    of the 250 kernels built for Xe-HPC (pvc), 83 spilled without it and
 *    38 with it (20 with the sub-groups below and the gravity shapes of
 *    host/nbody/gravity.c, all of them CPU-shaped variants);
 *  - INTEL_SG=16 (cl/platform_common.h): the kernels marked KERNEL_SG (the Wilson
 *    hopping term, the tiled gravity, the line relaxations) in sub-groups
 *    of 16, the XVE's native width on Xe-HPC; in the SIMD32 that IGC picks
 *    by itself there the hopping term spilled 16 KiB (fp32) and 32 KiB
 *    (fp64) per thread, with 256 registers too; in SIMD16 none of them
 *    spills, on Xe-HPG (acm-g10) neither. */
static const char *device_options(const clphys_device_info *d)
{
    /* Intel's GPU runtime calls its platform "Intel(R) OpenCL Graphics" (or
     * "... HD Graphics"); its CPU runtime, "Intel(R) OpenCL", has another compiler */
    if (d->is_gpu && strstr(d->platform, "Intel") && strstr(d->platform, "Graphics"))
        return d->subgroups ? " -cl-intel-enable-auto-large-GRF-mode -DINTEL_SG=16"
                            : " -cl-intel-enable-auto-large-GRF-mode";
    return "";
}

static void build_options(const clphys_context *ctx, const char *options, int extra, char *buf, size_t n)
{
    snprintf(buf, n, "-cl-std=CL1.2 %s%s %s", ctx->info.is_gpu ? "-DCLPHYS_GPU=1" : "-DCLPHYS_CPU=1",
             extra ? device_options(&ctx->info) : "", options ? options : "");
}

void cp_build_options(const clphys_context *ctx, const char *options, char *buf, size_t n)
{
    build_options(ctx, options, 1, buf, n);
}

clphys_status cp_program_from_source(clphys_context *ctx, const char *name, const char *source, const char *options,
                                     cl_program *out, int *from_cache)
{
    if (!ctx || !source || !out) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "cp_program_from_source: NULL");
    char opts[4096];
    cp_build_options(ctx, options, opts, sizeof opts);
    /* PoCL's compiler prints its diagnostics on the process's stderr, not
     * only into the build log: clang's notes that 16-wide vectors change the
     * ABI on CPUs without AVX-512 (cl/platform_vec_cpu.h; PoCL's builtins are built
     * for the same CPU, so nothing differs) would show on every first
     * build.  The kernels themselves compile without a warning: the
     * capability test checks them with clang -Werror. */
    if (cp_device_matches(&ctx->info, "pocl") && strlen(opts) + 4 < sizeof opts) strcat(opts, " -w");
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
        char marker[4300];
        unsigned char *bin = cache_load(path, key, &blen);
        int mark = bin ? load_begin(ctx, path, marker, sizeof marker) : 0;
        if (mark < 0) {
            free(bin);
            bin = NULL;
        }
        if (bin) {
            const unsigned char *bins[1] = {bin};
            cl_int bstat;
            cl_program p = clCreateProgramWithBinary(ctx->context, 1, &ctx->device, &blen, bins, &bstat, &e);
            free(bin);
            int built = e == CL_SUCCESS && bstat == CL_SUCCESS &&
                        clBuildProgram(p, 1, &ctx->device, opts, NULL, NULL) == CL_SUCCESS;
            if (mark > 0) unlink(marker);
            if (built) {
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
    if (e != CL_SUCCESS && *device_options(&ctx->info)) {
        /* a driver older than an option of the device's (IGC answers an
         * unknown one with a build failure): once more without them, in a
         * fresh program object (not every runtime rebuilds a failed one);
         * not cached, since the next run looks it up with them */
        note(ctx, "%s: the build with%s failed; retried without them", name ? name : "a program",
             device_options(&ctx->info));
        clReleaseProgram(p);
        free(key);
        key = NULL;
        build_options(ctx, options, 0, opts, sizeof opts);
        p = clCreateProgramWithSource(ctx->context, 1, &source, NULL, &e);
        if (e != CL_SUCCESS) return cp_cl_error(ctx, e, "clCreateProgramWithSource");
        e = clBuildProgram(p, 1, &ctx->device, opts, NULL, NULL);
    }
    if (e == CL_BUILD_PROGRAM_FAILURE && log_names_no_error(ctx, p)) {
        /* a build that failed without a compiler diagnostic: PoCL's kernel
         * cache, written by several processes compiling the same program at
         * once (MPI ranks starting together), answers so (pocl issue 1480);
         * once more, a moment later, when the other process has finished.
         * A real compile error has a diagnostic and is not retried. */
        note(ctx, "%s: the build failed with no compiler message; retried once", name ? name : "a program");
        clReleaseProgram(p);
        nanosleep(&(struct timespec){0, 50000000L + 10000000L * (getpid() % 16)}, NULL);
        p = clCreateProgramWithSource(ctx->context, 1, &source, NULL, &e);
        if (e != CL_SUCCESS) {
            free(key);
            return cp_cl_error(ctx, e, "clCreateProgramWithSource");
        }
        e = clBuildProgram(p, 1, &ctx->device, opts, NULL, NULL);
    }
    if (e != CL_SUCCESS) {
        clphys_status st = build_failed(ctx, p, name, opts, e);
        clReleaseProgram(p);
        free(key);
        return st;
    }
    if (key) cache_store(ctx, dir, path, key, p);
    free(key);
    *out = p;
    return CLPHYS_SUCCESS;
}

clphys_status cp_program(clphys_context *ctx, const cp_kernel_file *file, const cp_defines *defines, cl_program *prog)
{
    if (!ctx || !file || !prog) return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "cp_program: NULL argument");
    CP_TRY(cp_defines_check(ctx, defines, file->name));
    const char *options = defines ? defines->text : "";
    CP_TRY(cp_build_check(ctx, file->name, options)); /* also for a program built before a capability was masked */
    for (struct cp_program_entry *p = ctx->programs; p; p = p->next)
        if (p->file == file && !strcmp(p->options, options)) {
            *prog = p->prog;
            return CLPHYS_SUCCESS;
        }
    char *src = cp_kernel_source(file);
    if (!src)
        return cp_error(ctx, CLPHYS_ERR_INVALID_ARGUMENT, "kernel source '%s' (or a header it includes) not found%s%s",
                        file->name, getenv("CLPHYS_KERNEL_DIR") ? " in CLPHYS_KERNEL_DIR=" : " among embedded sources",
                        getenv("CLPHYS_KERNEL_DIR") ? getenv("CLPHYS_KERNEL_DIR") : "");
    struct cp_program_entry *ent = calloc(1, sizeof *ent);
    if (!ent || !(ent->options = strdup(options))) {
        free(ent);
        free(src);
        return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    clphys_status st = cp_program_from_source(ctx, file->name, src, options, &ent->prog, NULL);
    free(src);
    if (st != CLPHYS_SUCCESS) {
        free(ent->options);
        free(ent);
        return st;
    }
    ent->file = file;
    ent->next = ctx->programs;
    ctx->programs = ent;
    *prog = ent->prog;
    return CLPHYS_SUCCESS;
}

int cp_program_at(const clphys_context *ctx, int i, const cp_kernel_file **file, const char **options)
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
        free(p->options);
        free(p);
    }
    ctx->programs = NULL;
}

clphys_status cp_kernel(clphys_context *ctx, cl_program prog, const char *name, cl_kernel *k)
{
    cl_int e;
    *k = clCreateKernel(prog, name, &e);
    if (e != CL_SUCCESS)
        return cp_error(ctx, cp_cl_error(ctx, e, "clCreateKernel"), "clCreateKernel(%s) failed: %s", name,
                        cp_cl_error_name(e));
    return CLPHYS_SUCCESS;
}
