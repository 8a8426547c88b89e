/* test_tune.c — the tuning cache (platform/tune.c): entries round-trip and
 * replace one another by key; a damaged, truncated, altered, foreign or
 * other-version file is ignored and rewritten by the next store; several
 * processes storing at once leave a valid file with every entry and no
 * temporary files; CLPHYS_NO_CACHE turns it off; the nearest size class is
 * found (no device is needed for these: the device identity is made up).
 * On the test device: the quick tuners write entries, plans asked for AUTO
 * then report that their choice came from the cache (the Poisson plan on
 * the tuned grid too) and still match the fp64 reference, and a damaged
 * file is ignored (plans fall back to the heuristics).  The sequence of a
 * plan's choice itself: test_tune_choose.c. */
#include "util.h"
#include "platform/tune.h"
#include "host/ref/nbody_ref.h"
#include "host/ref/md_ref.h"
#include "host/md/md_internal.h" /* md_lj_tune_case */
#include "nbody_util.h"

#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char dir[4096];
static clphys_device_info devA, devB;

static void make_dev(clphys_device_info *d, const char *name)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    snprintf(d->vendor, sizeof d->vendor, "Test\tVendor"); /* a TAB, stored as a space */
    snprintf(d->platform, sizeof d->platform, "Test Platform");
    snprintf(d->driver_version, sizeof d->driver_version, "1.2.3");
}

static cp_tune_key key(const char *fields) { return (cp_tune_key){"lqcd_dslash", "local_size", "fp32", fields}; }

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
    cp_tune_key k1 = key("reconstruct=12 layout=soa lattice=8x8x8x8"),
                k2 = key("reconstruct=18 layout=soa lattice=8x8x8x8");
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
    cp_tune_key k3 = {"lqcd_dslash", "local_size", "fp64", k1.fields}, k4 = {"md_lj", "local_size", "fp32", k1.fields};
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
        case 0:
            bn = (size_t)snprintf(bad, n + 64, "garbage\n");
            break;
        case 1:
            bn = n - 1;
            break; /* truncated */
        case 2:
            bn = n / 2;
            break; /* truncated in an entry */
        case 3:
            bad[n / 2] ^= 1;
            break; /* one bit changed */
        case 4:
            memcpy(bad, foreign, nB), bn = nB;
            break; /* another device's file under this name */
        case 5:
            bad[strlen("clphys-tune\t")] = '2';
            break; /* another version */
        case 6:
            bn = 0;
            break; /* empty */
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
    tu_setenv("CLPHYS_NO_CACHE", "1");
    assert_int_equal(cp_tune_file(&devA, path, sizeof path), 0);
    assert_int_equal(cp_tune_put(&devA, &k, "local_size=64"), -1);
    assert_int_equal(cp_tune_get(&devA, &k, v, sizeof v), 0);
    tu_setenv("CLPHYS_NO_CACHE", NULL);
    assert_int_equal(cp_tune_get(&devA, &k, v, sizeof v), 0); /* nothing was stored */
}

/* The nearest size class: other fields must match exactly, each axis within
 * its ratio, the smallest summed |ln(v / target)| wins. */
static void test_nearest(void **state)
{
    (void)state;
    const cp_tune_key k1 = {"md_lj", "variant", "fp64", "tuner=1 n=1000 neighbours=75"},
                      k2 = {"md_lj", "variant", "fp64", "tuner=1 n=100000 neighbours=75"},
                      k3 = {"md_lj", "variant", "fp64", "tuner=1 n=1000 neighbours=150"},
                      k4 = {"md_lj", "variant", "fp64", "tuner=2 n=1000 neighbours=75"};
    assert_int_equal(cp_tune_put(&devA, &k1, "variant=cpu s=1"), 0);
    assert_int_equal(cp_tune_put(&devA, &k2, "variant=half-cas s=2"), 0);
    assert_int_equal(cp_tune_put(&devA, &k3, "variant=full-csr s=3"), 0);
    assert_int_equal(cp_tune_put(&devA, &k4, "variant=full-group s=4"), 0);
    const cp_tune_key q = {"md_lj", "variant", "fp64", "tuner=1"};
    char v[CP_TUNE_VALUE_MAX], w[32];
    cp_tune_axis ax[2] = {{"n", 2000, 32}, {"neighbours", 80, 1.5}};
    assert_int_equal(cp_tune_nearest(&devA, &q, ax, 2, NULL, v, sizeof v, NULL), 1);
    assert_true(cp_tune_value_word(v, "variant", w, sizeof w) && !strcmp(w, "cpu"));
    ax[0].target = 60000;
    assert_int_equal(cp_tune_nearest(&devA, &q, ax, 2, NULL, v, sizeof v, NULL), 1);
    assert_true(cp_tune_value_word(v, "variant", w, sizeof w) && !strcmp(w, "half-cas"));
    ax[0].target = 1000, ax[1].target = 140;
    assert_int_equal(cp_tune_nearest(&devA, &q, ax, 2, NULL, v, sizeof v, NULL), 1);
    assert_true(cp_tune_value_word(v, "variant", w, sizeof w) && !strcmp(w, "full-csr"));
    ax[1].target = 400; /* beyond every density class measured: none */
    assert_int_equal(cp_tune_nearest(&devA, &q, ax, 2, NULL, v, sizeof v, NULL), 0);
    ax[1].target = 75, ax[0].target = 1e8; /* beyond 32x of every size: none */
    assert_int_equal(cp_tune_nearest(&devA, &q, ax, 2, NULL, v, sizeof v, NULL), 0);
}

/* ---- on the test device ---------------------------------------------------- */

static char dev_dir[4096];
static clphys_context *ctx;
static int chosen_count;

static void count_chosen(void *user, const clphys_tune_choice *c)
{
    (void)user;
    assert_true(c->best_s > 0 && c->candidates >= 1 && *c->choice);
    chosen_count++;
}

static const clphys_tune_options quick = {.quick = 1, .repeat = 1, .chosen = count_chosen};

/* The gravity plan of n particles with AUTO; its accelerations against the
 * fp64 reference; returns 1 when its shape came from the tuning cache. */
static int gravity_check(clphys_precision prec)
{
    const int n = 300;
    double *x = tg_random_particles(n, 31), *acc = malloc(3 * n * sizeof *acc), *ref = malloc(3 * n * sizeof *ref);
    /* fp32: the reference of the positions the kernel holds */
    for (int i = 0; prec == CLPHYS_FP32 && i < 4 * n; i++) x[i] = (float)x[i];
    nbody_ref_gravity(n, x, n, x, 1.0, 0.01, ref, NULL);
    clphys_nbody_gravity_params p = {.precision = prec, .G = 1, .eps = 0.01, .n_hint = 2048};
    clphys_nbody_gravity_plan *pl = NULL;
    assert_int_equal(clphys_nbody_gravity_plan_create(ctx, &p, &pl), CLPHYS_SUCCESS);
    tu_poison_f64(acc, 3 * n);
    assert_int_equal(clphys_nbody_gravity_compute(pl, n, NULL, n, x, acc, NULL, 0, 0, NULL), CLPHYS_SUCCESS);
    /* the gravity tests' measure and bounds (tests/nbody_util.h): a close
     * pair's large terms carry rounding that a sum's small result does not
     * bound */
    double ea, ep;
    tg_errors(n, x, n, x, 0.01, acc, NULL, ref, NULL, &ea, &ep);
    assert_true(ea <= (prec == CLPHYS_FP64 ? 1e-12 : 1e-5));
    const int tuned = clphys_nbody_gravity_plan_tune_source(pl) == CLPHYS_TUNE_CACHE;
    assert_int_equal(clphys_nbody_gravity_plan_tuned(pl), tuned); /* the deprecated name says the same */
    assert_int_equal(clphys_nbody_gravity_plan_tune_source(pl), tuned ? CLPHYS_TUNE_CACHE : CLPHYS_TUNE_HEURISTIC);
    clphys_nbody_gravity_plan_destroy(pl);
    free(x), free(acc), free(ref);
    return tuned;
}

/* The LJ plan with AUTO on the seed input at density 1.0 (the tuned case);
 * its forces against the fp64 reference; 1 when its choice came from the
 * cache. */
static int lj_check(void)
{
    size_t n;
    double box[3];
    assert_int_equal(clphys_md_lj_seed_input(1.0, 10, &n, box, NULL), CLPHYS_SUCCESS);
    double *pos = malloc(3 * n * sizeof *pos), *f = malloc(3 * n * sizeof *f), *ref = malloc(3 * n * sizeof *ref);
    assert_int_equal(clphys_md_lj_seed_input(1.0, 10, &n, box, pos), CLPHYS_SUCCESS);
    double pe, vir;
    md_ref_lj(n, pos, box, 1.0, 1.0, 3.0, 0, ref, &pe, &vir);
    clphys_md_lj_params p = {
        .n = n, .box = {box[0], box[1], box[2]}, .r_cut = 3.0, .skin = 0.3, .precision = CLPHYS_FP64};
    clphys_md_lj_plan *pl = NULL;
    assert_int_equal(clphys_md_lj_plan_create(ctx, &p, &pl), CLPHYS_SUCCESS);
    tu_poison_f64(f, 3 * n);
    clphys_md_lj_result r;
    assert_int_equal(clphys_md_lj_compute(pl, pos, f, &r), CLPHYS_SUCCESS);
    size_t excl = 1;
    assert_true(md_ref_force_error(n, pos, box, 1.0, 1.0, 3.0, NULL, NULL, f, ref, 1e-13, &excl) <= 1e-12);
    assert_int_equal(excl, 0); /* the seed input is fixed: no pair within 1e-13 r_cut^2 of the cutoff */
    assert_true(fabs(r.potential_energy - pe) <= 1e-10 * fabs(pe));
    const int cached = strstr(clphys_md_lj_plan_choice(pl), "(tuning cache)") != NULL;
    assert_int_equal(clphys_md_lj_plan_tune_source(pl), cached ? CLPHYS_TUNE_CACHE : CLPHYS_TUNE_HEURISTIC);
    printf("lj plan: %s\n", clphys_md_lj_plan_choice(pl));
    clphys_md_lj_plan_destroy(pl);
    free(pos), free(f), free(ref);
    return cached;
}

static int neighbor_cached(void)
{
    size_t n;
    double box[3];
    assert_int_equal(clphys_md_lj_seed_input(0.5, 14, &n, box, NULL), CLPHYS_SUCCESS);
    clphys_md_neighbor_params p = {.n = n, .box = {box[0], box[1], box[2]}, .r_search = 3.3, .precision = CLPHYS_FP64};
    clphys_md_neighbor_plan *pl = NULL;
    assert_int_equal(clphys_md_neighbor_plan_create(ctx, &p, &pl), CLPHYS_SUCCESS);
    const int cached = strstr(clphys_md_neighbor_plan_choice(pl), "(tuning cache)") != NULL;
    assert_int_equal(clphys_md_neighbor_plan_tune_source(pl), cached ? CLPHYS_TUNE_CACHE : CLPHYS_TUNE_HEURISTIC);
    clphys_md_neighbor_plan_destroy(pl);
    return cached;
}

/* Where the stencil of a Poisson plan on the grid of clphys_poisson_tune's
 * quick run (a flat box of 64 x 64 x 16 cells) came from. */
static clphys_tune_source poisson_source(void)
{
    enum { NX = 64, NY = 64, NZ = 16 };
    double dx[NX], dy[NY], dz[NZ], *depth = malloc(sizeof(double) * NX * NY);
    for (int i = 0; i < NX; i++) dx[i] = 1e6 / NX;
    for (int j = 0; j < NY; j++) dy[j] = 1e6 / NY;
    for (int k = 0; k < NZ; k++) dz[k] = 4000.0 / NZ;
    assert_int_equal(clphys_poisson_box(NX, NY, 4000, depth), CLPHYS_SUCCESS);
    const clphys_poisson_geometry g = {.nx = NX, .ny = NY, .nz = NZ, .dx = dx, .dy = dy, .dz = dz, .depth = depth};
    const clphys_poisson_params p = {0};
    clphys_poisson_plan *pl = NULL;
    assert_int_equal(clphys_poisson_plan_create(ctx, &g, &p, &pl), CLPHYS_SUCCESS);
    clphys_poisson_info info;
    clphys_poisson_plan_info(pl, &info);
    clphys_poisson_plan_destroy(pl);
    free(depth);
    return info.tune_source;
}

static void test_tuned_plans(void **state)
{
    (void)state;
    const clphys_device_info *d = clphys_context_device(ctx);
    clphys_tune_status s;
    assert_int_equal(clphys_tune_status_get(d, &s), CLPHYS_SUCCESS);
    assert_int_equal(s.tuned_paths, 0);
    /* untuned: the heuristics */
    assert_int_equal(gravity_check(CLPHYS_FP32), 0);
    assert_int_equal(lj_check(), 0);
    assert_int_equal(neighbor_cached(), 0);

    chosen_count = 0;
    assert_int_equal(clphys_nbody_gravity_tune(ctx, &quick), CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_neighbor_tune(ctx, &quick), CLPHYS_SUCCESS);
    if (d->fp64) { /* the LJ case of the test: two variants, half-cas's options */
        const clphys_md_lj_variant vs[] = {CLPHYS_MD_LJ_FULL_CSR, CLPHYS_MD_LJ_HALF_CAS};
        assert_int_equal(md_lj_tune_case(ctx, &quick, CLPHYS_FP64, 1.0, 10, vs, d->int64_atomics ? 2 : 1),
                         CLPHYS_SUCCESS);
    }
    assert_int_equal(clphys_lqcd_dslash_tune(ctx, &quick), CLPHYS_SUCCESS);
    assert_true(chosen_count >= 4);
    if (d->fp64) { /* the Poisson CG is fp64 */
        const int before = chosen_count;
        assert_int_equal(clphys_poisson_tune(ctx, &quick), CLPHYS_SUCCESS);
        assert_int_equal(chosen_count, before + 1);
    }
    assert_int_equal(clphys_tune_status_get(d, &s), CLPHYS_SUCCESS);
    assert_true(s.entries >= chosen_count);
    /* gravity, neighbor, dslash, poisson (md_lj_tune_case marks nothing) */
    assert_int_equal(s.tuned_paths, d->fp64 ? 4 : 3);
    assert_int_equal(s.quick, 1);
    assert_non_null(strstr(s.paths, "nbody_gravity"));

    /* AUTO takes the cache; results still match the reference */
    assert_int_equal(gravity_check(CLPHYS_FP32), 1);
    if (d->fp64) assert_int_equal(gravity_check(CLPHYS_FP64), 1);
    if (d->fp64) assert_int_equal(lj_check(), 1);
    assert_int_equal(neighbor_cached(), 1);
    if (d->fp64) assert_int_equal(poisson_source(), CLPHYS_TUNE_CACHE); /* the tuner's entry, not timed again */

    /* a damaged file (one byte changed) is ignored: the heuristics again */
    size_t len;
    char *text = read_all(s.file, &len);
    text[len / 2] = text[len / 2] == 'x' ? 'y' : 'x';
    write_file(s.file, text, len);
    free(text);
    assert_int_equal(clphys_tune_status_get(d, &s), CLPHYS_SUCCESS);
    assert_int_equal(s.entries, -1);
    assert_int_equal(gravity_check(CLPHYS_FP32), 0);
    if (d->fp64) assert_int_equal(lj_check(), 0);
    assert_int_equal(neighbor_cached(), 0);

    /* clphys_tune_options of other layouts (an fp32 LJ case, one variant):
     * an older application's struct ends before `chosen`, which is then
     * not read (NULL: not called); a newer one's, with its fields beyond
     * ours unset, is read whole */
    const clphys_md_lj_variant csr = CLPHYS_MD_LJ_FULL_CSR;
    clphys_tune_options older = {
        .struct_size = offsetof(clphys_tune_options, chosen), .quick = 1, .repeat = 1, .chosen = count_chosen};
    chosen_count = 0;
    assert_int_equal(md_lj_tune_case(ctx, &older, CLPHYS_FP32, 0.8, 8, &csr, 1), CLPHYS_SUCCESS);
    assert_int_equal(chosen_count, 0);
    _Alignas(clphys_tune_options) unsigned char newer[sizeof older + 16];
    memset(newer, 0, sizeof newer);
    older.struct_size = sizeof newer;
    memcpy(newer, &older, sizeof older);
    assert_int_equal(
        md_lj_tune_case(ctx, (const clphys_tune_options *)(const void *)newer, CLPHYS_FP32, 0.8, 8, &csr, 1),
        CLPHYS_SUCCESS);
    assert_true(chosen_count > 0);
}

/* The group's own folder (dev_dir) for the tuning cache, with the kernel
 * binaries of the test cache copied in (they share the folder; compiling every kernel again
 * would cost minutes on PoCL). */
static int device_setup(void **state)
{
    (void)state;
    const char *kc = getenv("CLPHYS_TEST_KCACHE");
    DIR *d = kc ? opendir(kc) : NULL;
    char src[8400], dst[8400];
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.' || !strncmp(e->d_name, "tune-", 5)) continue;
        snprintf(src, sizeof src, "%s/%s", kc, e->d_name);
        snprintf(dst, sizeof dst, "%s/%s", dev_dir, e->d_name);
        FILE *in = fopen(src, "rb"), *out = in ? fopen(dst, "wb") : NULL;
        char buf[65536];
        for (size_t k; in && out && (k = fread(buf, 1, sizeof buf, in)) > 0;) fwrite(buf, 1, k, out);
        if (in) fclose(in);
        if (out) fclose(out);
    }
    if (d) closedir(d);
    tu_setenv("CLPHYS_CACHE_DIR", dev_dir);
    tu_setenv("CLPHYS_NO_CACHE", NULL);
    tu_setenv("CLPHYS_NO_TUNE", NULL);
    ctx = tu_context();
    return 0;
}

static int device_teardown(void **state)
{
    (void)state;
    clphys_context_destroy(ctx);
    tu_env_restore();
    return 0;
}

static int setup(void **state)
{
    (void)state;
    tu_setenv("CLPHYS_CACHE_DIR", dir);
    tu_setenv("CLPHYS_NO_CACHE", NULL);
    make_dev(&devA, "Device A");
    make_dev(&devB, "Device B");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_env_restore();
    return 0;
}

int main(void)
{
    /* the test cache of the kernel binaries, before setup points elsewhere */
    const char *kc = getenv("CLPHYS_CACHE_DIR");
    if (kc) setenv("CLPHYS_TEST_KCACHE", kc, 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_round_trip), cmocka_unit_test(test_damaged),
                                       cmocka_unit_test(test_concurrent), cmocka_unit_test(test_disabled),
                                       cmocka_unit_test(test_nearest)};
    const struct CMUnitTest device[] = {cmocka_unit_test(test_tuned_plans)};
    const int failed = tu_run_group(tests, .tempdir = "tune_cache", .dir = dir, .dir_size = sizeof dir, .setup = setup,
                                    .teardown = teardown);
    return failed + tu_run_group(device, .tempdir = "tune", .dir = dev_dir, .dir_size = sizeof dev_dir,
                                 .setup = device_setup, .teardown = device_teardown);
}
