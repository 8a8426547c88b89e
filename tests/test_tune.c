/* test_tune.c — the tuning cache (platform/tune.c): entries round-trip and
 * replace one another by key; a damaged, truncated, altered, foreign or
 * other-version file is ignored and rewritten by the next store; several
 * processes storing at once leave a valid file with every entry and no
 * temporary files; CLPHYS_NO_CACHE turns it off.  No device is needed: the
 * device identity is made up. */
#include "util.h"
#include "platform/tune.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char dir[64];
static clphys_device_info devA, devB;

static void make_dev(clphys_device_info *d, const char *name)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    snprintf(d->vendor, sizeof d->vendor, "Test\tVendor"); /* a TAB, stored as a space */
    snprintf(d->platform, sizeof d->platform, "Test Platform");
    snprintf(d->driver_version, sizeof d->driver_version, "1.2.3");
}

static cp_tune_key key(const char *fields) { return (cp_tune_key){"dslash", "local_size", "fp32", fields}; }

static void write_file(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
}

static char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *b = calloc(1, 1 << 20);
    *n = fread(b, 1, (1 << 20) - 1, f);
    fclose(f);
    return b;
}

static int temp_files(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, ".tmp.") != NULL;
    if (d) closedir(d);
    return n;
}

static void test_round_trip(void **state)
{
    (void)state;
    char v[CP_TUNE_VALUE_MAX], path[4200];
    assert_int_equal(cp_tune_file(&devA, path, sizeof path), 1);
    remove(path);
    cp_tune_key k1 = key("reconstruct=12 layout=soa lattice=8x8x8x8"), k2 = key("reconstruct=18 layout=soa lattice=8x8x8x8");
    assert_int_equal(cp_tune_get(&devA, &k1, v, sizeof v), 0);
    assert_int_equal(cp_tune_count(&devA), 0);
    assert_int_equal(cp_tune_put(&devA, &k1, "local_size=64 half_hop_s=1.5e-05"), 0);
    assert_int_equal(cp_tune_put(&devA, &k2, "local_size=128"), 0);
    assert_int_equal(cp_tune_get(&devA, &k1, v, sizeof v), 1);
    assert_string_equal(v, "local_size=64 half_hop_s=1.5e-05");
    size_t wg = 0;
    assert_int_equal(cp_tune_value_size(v, "local_size", &wg), 1);
    assert_int_equal(wg, 64);
    assert_int_equal(cp_tune_value_size(v, "half_hop_s", &wg), 0); /* not a plain integer */
    assert_int_equal(cp_tune_value_size(v, "size", &wg), 0);
    assert_int_equal(cp_tune_count(&devA), 2);
    /* replace by key; the other entry stays */
    assert_int_equal(cp_tune_put(&devA, &k1, "local_size=32"), 0);
    assert_int_equal(cp_tune_count(&devA), 2);
    assert_int_equal(cp_tune_get(&devA, &k1, v, sizeof v), 1);
    assert_string_equal(v, "local_size=32");
    assert_int_equal(cp_tune_get(&devA, &k2, v, sizeof v), 1);
    assert_string_equal(v, "local_size=128");
    /* every key field counts; line breaks in a field are stored as spaces */
    cp_tune_key k3 = {"dslash", "local_size", "fp64", k1.fields}, k4 = {"lj", "local_size", "fp32", k1.fields};
    assert_int_equal(cp_tune_get(&devA, &k3, v, sizeof v), 0);
    assert_int_equal(cp_tune_get(&devA, &k4, v, sizeof v), 0);
    cp_tune_key k5 = key("a\nb"), k6 = key("a b");
    assert_int_equal(cp_tune_put(&devA, &k5, "x=1"), 0);
    assert_int_equal(cp_tune_get(&devA, &k6, v, sizeof v), 1);
    assert_int_equal(cp_tune_count(&devA), 3);
    /* a value buffer too small: not found rather than cut */
    assert_int_equal(cp_tune_get(&devA, &k2, v, 5), 0);
    /* another device has its own file */
    assert_int_equal(cp_tune_get(&devB, &k1, v, sizeof v), 0);
    assert_int_equal(temp_files(), 0);
}

static void test_damaged(void **state)
{
    (void)state;
    char v[CP_TUNE_VALUE_MAX], path[4200], pathB[4200];
    assert_int_equal(cp_tune_file(&devA, path, sizeof path), 1);
    assert_int_equal(cp_tune_file(&devB, pathB, sizeof pathB), 1);
    assert_string_not_equal(path, pathB);
    cp_tune_key k = key("lattice=4x4x4x4");
    assert_int_equal(cp_tune_put(&devA, &k, "local_size=64"), 0);
    size_t n;
    char *good = read_all(path, &n);
    assert_int_equal(cp_tune_put(&devB, &k, "local_size=32"), 0);
    size_t nB;
    char *foreign = read_all(pathB, &nB);
    char *bad = malloc(n + 64);
    for (int c = 0; c < 7; c++) {
        size_t bn = n;
        memcpy(bad, good, n);
        switch (c) {
        case 0: bn = (size_t)snprintf(bad, n + 64, "garbage\n"); break;
        case 1: bn = n - 1; break;                            /* truncated */
        case 2: bn = n / 2; break;                            /* truncated in an entry */
        case 3: bad[n / 2] ^= 1; break;                       /* one bit changed */
        case 4: memcpy(bad, foreign, nB), bn = nB; break;     /* another device's file under this name */
        case 5: bad[strlen("clphys-tune\t")] = '2'; break;    /* another version */
        case 6: bn = 0; break;                                /* empty */
        }
        write_file(path, bad, bn);
        print_message("# damaged file %d: ignored\n", c);
        assert_int_equal(cp_tune_get(&devA, &k, v, sizeof v), 0);
        assert_int_equal(cp_tune_count(&devA), -1);
        /* the next store rewrites it with its own entry only */
        assert_int_equal(cp_tune_put(&devA, &k, "local_size=128"), 0);
        assert_int_equal(cp_tune_count(&devA), 1);
        assert_int_equal(cp_tune_get(&devA, &k, v, sizeof v), 1);
        assert_string_equal(v, "local_size=128");
    }
    free(good), free(foreign), free(bad);
}

/* Several processes store at once while this one reads: every read sees a
 * valid file, and at the end all entries are there. */
static void test_concurrent(void **state)
{
    (void)state;
    enum { NPROC = 4, NPUT = 30 };
    char path[4200];
    assert_int_equal(cp_tune_file(&devA, path, sizeof path), 1);
    remove(path);
    pid_t pid[NPROC];
    for (int p = 0; p < NPROC; p++) {
        pid[p] = fork();
        assert_true(pid[p] >= 0);
        if (pid[p] == 0) {
            int failed = 0;
            for (int i = 0; i < NPUT; i++) {
                char f[64], val[64];
                snprintf(f, sizeof f, "writer=%d item=%d", p, i);
                snprintf(val, sizeof val, "local_size=%d", p * 1000 + i);
                cp_tune_key k = key(f);
                failed |= cp_tune_put(&devA, &k, val) != 0;
            }
            _exit(failed);
        }
    }
    int reads = 0, bad = 0, running = NPROC;
    while (running) {
        int c = cp_tune_count(&devA);
        bad += c < 0;
        reads++;
        int status;
        pid_t w = waitpid(-1, &status, WNOHANG);
        if (w > 0) {
            assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
            running--;
        }
    }
    print_message("# %d reads during %d x %d concurrent stores, %d saw a damaged file\n", reads, NPROC, NPUT, bad);
    assert_int_equal(bad, 0);
    assert_int_equal(cp_tune_count(&devA), NPROC * NPUT);
    char v[CP_TUNE_VALUE_MAX];
    for (int p = 0; p < NPROC; p++)
        for (int i = 0; i < NPUT; i++) {
            char f[64], want[64];
            snprintf(f, sizeof f, "writer=%d item=%d", p, i);
            snprintf(want, sizeof want, "local_size=%d", p * 1000 + i);
            cp_tune_key k = key(f);
            assert_int_equal(cp_tune_get(&devA, &k, v, sizeof v), 1);
            assert_string_equal(v, want);
        }
    assert_int_equal(temp_files(), 0);
}

static void test_disabled(void **state)
{
    (void)state;
    char v[CP_TUNE_VALUE_MAX], path[4200];
    cp_tune_key k = key("lattice=2x2x2x2");
    setenv("CLPHYS_NO_CACHE", "1", 1);
    assert_int_equal(cp_tune_file(&devA, path, sizeof path), 0);
    assert_int_equal(cp_tune_put(&devA, &k, "local_size=64"), -1);
    assert_int_equal(cp_tune_get(&devA, &k, v, sizeof v), 0);
    unsetenv("CLPHYS_NO_CACHE");
    assert_int_equal(cp_tune_get(&devA, &k, v, sizeof v), 0); /* nothing was stored */
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/clphys-tune-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    setenv("CLPHYS_CACHE_DIR", dir, 1);
    unsetenv("CLPHYS_NO_CACHE");
    make_dev(&devA, "Device A");
    make_dev(&devB, "Device B");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(dir);
    char p[4200];
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            remove(p);
        }
    if (d) closedir(d);
    rmdir(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_round_trip), cmocka_unit_test(test_damaged),
                                       cmocka_unit_test(test_concurrent), cmocka_unit_test(test_disabled)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
