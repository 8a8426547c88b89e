/* test_md.c — the MD driver: LAMMPS data files (round trip, malformed input
 * naming file and line, unsupported styles, atoms outside the box; hostile
 * files of issue 17: huge atom IDs, header counts the data does not back,
 * repeated sections, non-finite velocities), NVE
 * energy conservation, rebuild policies agreeing, variants agreeing, kernel
 * time set per call, and plans bound to the application's device buffers
 * (the same trajectory as the host-array path, forces with no particle left
 * out of the comparison, refresh, bad input). */
#include "host/ref/md_ref.h"
#include "md_util.h"
#include "util.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

static clphys_context *ctx;
static char dir[256];

static const char *write_file(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_data_round_trip(void **state)
{
    (void)state;
    clphys_md_system a, b;
    uint64_t seed = tu_seed();
    assert_int_equal(clphys_md_fcc(0.8442, 3, 1.44, seed, &a), CLPHYS_SUCCESS);
    assert_int_equal(a.n, 108);
    char path[512];
    snprintf(path, sizeof path, "%s/rt.data", dir);
    assert_int_equal(clphys_md_write_lammps_data(path, &a), CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_read_lammps_data(path, &b), CLPHYS_SUCCESS);
    assert_int_equal(b.n, a.n);
    for (size_t i = 0; i < 3 * a.n; i++) {
        assert_true(a.x[i] == b.x[i]);
        assert_true(a.v[i] == b.v[i]);
    }
    /* temperature exactly as asked, zero momentum */
    double ke2 = 0, p[3] = {0};
    for (size_t i = 0; i < a.n; i++)
        for (int c = 0; c < 3; c++) ke2 += a.v[3 * i + c] * a.v[3 * i + c], p[c] += a.v[3 * i + c];
    assert_true(fabs(ke2 / (3.0 * a.n - 3) - 1.44) < 1e-12);
    for (int c = 0; c < 3; c++) assert_true(fabs(p[c]) < 1e-12);
    clphys_md_system_destroy(&a);
    clphys_md_system_destroy(&b);
}

static const char *HEAD = "test\n\n2 atoms\n1 atom types\n\n0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n\n"
                          "Masses\n\n1 1.0\n\n";

static void expect_error(const char *name, const char *body, clphys_status want, const char *needle)
{
    char text[2048];
    snprintf(text, sizeof text, "%s%s", HEAD, body);
    const char *path = write_file(name, text);
    clphys_md_system s;
    clphys_status st = clphys_md_read_lammps_data(path, &s);
    const char *msg = clphys_last_error(NULL);
    if (st != want || !strstr(msg, needle)) {
        fprintf(stderr, "%s: status %d, message '%s' (wanted %d with '%s')\n", name, st, msg, want, needle);
        fail();
    }
}

static void test_data_errors(void **state)
{
    (void)state;
    expect_error("bad_atom.data", "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n2 1 1.0 oops 3.0\n", CLPHYS_ERR_FORMAT,
                 "bad_atom.data:17");
    expect_error("charge.data", "Atoms # charge\n\n1 1 0.5 1.0 2.0 3.0\n2 1 0.5 1.0 2.0 3.0\n", CLPHYS_ERR_FORMAT,
                 "atom style 'charge'");
    expect_error("short.data", "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n", CLPHYS_ERR_FORMAT, "short.data:16");
    expect_error("far.data", "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n2 1 1.0 2.0 35.0\n", CLPHYS_ERR_INPUT, "far.data:17");
    expect_error("type.data", "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n2 3 1.0 2.0 3.0\n", CLPHYS_ERR_INPUT, "type.data:17");
    expect_error("vel.data", "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n2 1 1.0 2.0 3.0\n\nVelocities\n\n1 0 0 0\n9 0 0 0\n",
                 CLPHYS_ERR_FORMAT, "vel.data:22");
    /* an atom just outside the box is wrapped with its image flag */
    char text[1024];
    snprintf(text, sizeof text, "%sAtoms # atomic\n\n1 1 -1.0 2.0 3.0 0 0 0\n2 1 1.0 2.0 13.0\n", HEAD);
    clphys_md_system s;
    assert_int_equal(clphys_md_read_lammps_data(write_file("wrap.data", text), &s), CLPHYS_SUCCESS);
    assert_true(fabs(s.x[0] - 9.0) < 1e-12 && s.image[0] == -1);
    assert_true(fabs(s.x[5] - 3.0) < 1e-12 && s.image[5] == 1);
    clphys_md_system_destroy(&s);
    assert_int_equal(clphys_md_read_lammps_data("/nonexistent/x.data", &s), CLPHYS_ERR_IO);
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

/* Issue 17, defect 1: atom IDs are looked up by sorting, not by an array
 * as large as the largest ID: IDs of 2^31 - 1, 2^60, 2^61 and 2^63 - 1 are
 * legal and read at once, in memory proportional to the atom count. */
static void test_data_huge_ids(void **state)
{
    (void)state;
    const char *big[] = {"2147483647", "1152921504606846976", "2305843009213693952", "9223372036854775807"};
    for (int k = 0; k < 4; k++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "%sAtoms # atomic\n\n%s 1 1.0 2.0 3.0\n5 1 4.0 2.0 3.0\n\nVelocities\n\n5 0 0 0\n%s 0.5 "
                 "0 0\n",
                 HEAD, big[k], big[k]);
        clphys_md_system s;
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        clphys_status st = clphys_md_read_lammps_data(write_file("bigid.data", text), &s);
        double sec = seconds_since(&t0);
        print_message("# atom ID %s: %s in %.4f s\n", big[k], st ? clphys_last_error(NULL) : "read", sec);
        assert_int_equal(st, CLPHYS_SUCCESS);
        assert_true(sec < 0.5);
        assert_int_equal(s.id[0], strtoll(big[k], NULL, 10));
        assert_true(s.v[0] == 0.5 && s.v[3] == 0); /* velocities found by ID */
        clphys_md_system_destroy(&s);
    }
    expect_error("id_overflow.data", "Atoms # atomic\n\n9223372036854775808 1 1.0 2.0 3.0\n2 1 1.0 2.0 3.0\n",
                 CLPHYS_ERR_FORMAT, "id_overflow.data:16");
    expect_error("id_twice.data", "Atoms # atomic\n\n7 1 1.0 2.0 3.0\n7 1 4.0 2.0 3.0\n", CLPHYS_ERR_FORMAT,
                 "id_twice.data:17: atom ID 7 appears twice (also at line 16)");
}

/* Issue 17, defects 2 and 5: the header's counts are not trusted before the
 * data; a count that disagrees with a section names the section and the
 * header line; a second section, 2^32 + 1 types, non-finite velocities and
 * triclinic boxes are clear errors of the file, not of the device. */
static void test_data_counts_and_messages(void **state)
{
    (void)state;
    /* 10^12 atoms claimed, 2 given: refused at the end of the section, nothing of 10^12 allocated */
    char text[2048];
    snprintf(text, sizeof text,
             "test\n\n1000000000000 atoms\n1 atom types\n\n0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n\n"
             "Masses\n\n1 1.0\n\nAtoms # atomic\n\n1 1 1.0 2.0 3.0\n2 1 1.0 2.0 3.0\n");
    clphys_md_system s;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(clphys_md_read_lammps_data(write_file("huge_count.data", text), &s), CLPHYS_ERR_FORMAT);
    print_message("# %s (%.4f s)\n", clphys_last_error(NULL), seconds_since(&t0));
    assert_non_null(strstr(clphys_last_error(NULL),
                           "section Atoms (line 14) has 2 atom lines; the header (line 3) gives 1000000000000"));
    assert_true(seconds_since(&t0) < 0.5);
    /* fewer atoms than the header says, then Velocities: the Atoms section is named, not 'Velocities' */
    snprintf(text, sizeof text,
             "test\n\n3 atoms\n1 atom types\n\n0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n\n"
             "Masses\n\n1 1.0\n\nAtoms # atomic\n\n1 1 1.0 2.0 3.0\n2 1 1.0 2.0 3.0\n\nVelocities\n\n1 0 0 0\n");
    assert_int_equal(clphys_md_read_lammps_data(write_file("fewer.data", text), &s), CLPHYS_ERR_FORMAT);
    assert_non_null(
        strstr(clphys_last_error(NULL), "section Atoms (line 14) has 2 atom lines; the header (line 3) gives 3"));
    expect_error("more.data", "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n2 1 1.0 2.0 3.0\n3 1 1.0 2.0 3.0\n",
                 CLPHYS_ERR_FORMAT, "more.data:18: section Atoms (line 14) has more than the 2 atom lines");
    expect_error("second.data",
                 "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n2 1 1.0 2.0 3.0\n\nAtoms # atomic\n\n3 1 1.0 2.0 3.0\n"
                 "4 1 1.0 2.0 3.0\n",
                 CLPHYS_ERR_FORMAT, "second.data:19: second Atoms section (the first at line 14)");
    expect_error("vel_nan.data",
                 "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n2 1 1.0 2.0 3.0\n\nVelocities\n\n1 0 0 0\n2 0 nan 0\n",
                 CLPHYS_ERR_INPUT, "vel_nan.data:22: atom ID 2: velocity vy = nan is not finite");
    expect_error("vel_inf.data",
                 "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n2 1 1.0 2.0 3.0\n\nVelocities\n\n1 inf 0 0\n2 0 0 0\n",
                 CLPHYS_ERR_INPUT, "atom ID 1: velocity vx = inf");
    expect_error("trailing.data", "Atoms # atomic\n\n1 1 1.0 2.0 3.0 0 0 0 9\n2 1 1.0 2.0 3.0\n", CLPHYS_ERR_FORMAT,
                 "trailing.data:16");
    expect_error("10abc.data", "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n2abc 1 1.0 2.0 3.0\n", CLPHYS_ERR_FORMAT,
                 "10abc.data:17");
    const char *types = "test\n\n2 atoms\n4294967297 atom types\n\n0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n\n";
    assert_int_equal(clphys_md_read_lammps_data(write_file("types.data", types), &s), CLPHYS_ERR_FORMAT);
    assert_non_null(strstr(clphys_last_error(NULL), "types.data:4: 4294967297 atom types: at most"));
    const char *tri = "test\n\n2 atoms\n1 atom types\n\n0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n0 0 0 xy xz yz\n";
    assert_int_equal(clphys_md_read_lammps_data(write_file("tri.data", tri), &s), CLPHYS_ERR_FORMAT);
    assert_non_null(strstr(clphys_last_error(NULL), "tri.data:9: a triclinic box"));
    /* a million atom types claimed, one Masses line: refused without a table of 10^6 */
    const char *masses =
        "test\n\n1 atoms\n1000000 atom types\n\n0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n\nMasses\n\n1 1\n\n"
        "Atoms\n\n1 1 1 1 1\n";
    assert_int_equal(clphys_md_read_lammps_data(write_file("masses.data", masses), &s), CLPHYS_ERR_FORMAT);
    assert_non_null(strstr(clphys_last_error(NULL),
                           "section Masses (line 10) has 1 type lines; the header (line 4) gives 1000000"));
    /* a line longer than the reader's buffer */
    char *longl = malloc(10000);
    snprintf(longl, 10000, "%sAtoms # atomic\n\n1 1 1.0 2.0 3.0", HEAD);
    size_t l = strlen(longl);
    memset(longl + l, ' ', 5000);
    snprintf(longl + l + 5000, 100, "\n2 1 1.0 2.0 3.0\n");
    assert_int_equal(clphys_md_read_lammps_data(write_file("long.data", longl), &s), CLPHYS_ERR_FORMAT);
    assert_non_null(strstr(clphys_last_error(NULL), "long.data:16: line longer than"));
    free(longl);
}

static double run_md(clphys_md_system *sys, clphys_precision prec, clphys_md_lj_variant v, int shifted, int every,
                     int check, int steps, clphys_md_thermo *t0, clphys_md_thermo *t1)
{
    clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .shifted = shifted, .precision = prec, .variant = v},
                          .dt = 0.005,
                          .neigh_every = every,
                          .neigh_check = check};
    clphys_md_plan *pl;
    clphys_status st = clphys_md_plan_create(ctx, &p, sys, &pl);
    if (st) fprintf(stderr, "%s\n", clphys_last_error(ctx));
    assert_int_equal(st, CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_thermo_now(pl, t0), CLPHYS_SUCCESS);
    double emax = 0;
    for (int s = 0; s < steps; s += 10) {
        assert_int_equal(clphys_md_run(pl, 10, NULL), CLPHYS_SUCCESS);
        assert_int_equal(clphys_md_thermo_now(pl, t1), CLPHYS_SUCCESS);
        emax = fmax(emax, fabs(t1->etotal - t0->etotal) / fabs(t0->etotal));
    }
    assert_true(clphys_md_rebuilds(pl) > 1);
    clphys_md_plan_destroy(pl);
    return emax;
}

/* LAMMPS `neigh_modify every E delay D check no`: a build when the steps since
 * the last one reach D and are a multiple of E.  20 steps, E = 2: D = 0 builds
 * at 2, 4, ..., 20 (10); D = 5 at 6, 12, 18 (3); plus the build at creation. */
static int rebuilds_after(clphys_md_system *sys, int every, int delay, int check, int steps)
{
    clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = CLPHYS_FP64},
                          .dt = 0.005,
                          .neigh_every = every,
                          .neigh_check = check,
                          .neigh_delay = delay};
    clphys_md_plan *pl;
    assert_int_equal(clphys_md_plan_create(ctx, &p, sys, &pl), CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_run(pl, steps, NULL), CLPHYS_SUCCESS);
    int r = clphys_md_rebuilds(pl);
    clphys_md_plan_destroy(pl);
    return r;
}

static void test_neigh_delay(void **state)
{
    (void)state;
    clphys_md_system s;
    assert_int_equal(clphys_md_fcc(0.8442, 4, 1.44, tu_seed(), &s), CLPHYS_SUCCESS);
    assert_int_equal(rebuilds_after(&s, 2, 0, 0, 20), 11);
    assert_int_equal(rebuilds_after(&s, 2, 5, 0, 20), 4);
    assert_int_equal(rebuilds_after(&s, 1, 7, 0, 20), 3);
    /* a delay longer than the run: never rebuilt, whatever the displacement */
    assert_int_equal(rebuilds_after(&s, 1, 1000, 1, 20), 1);
    clphys_md_params bad = {.lj = {.r_cut = 2.5, .skin = 0.3}, .dt = 0.005, .neigh_every = 1, .neigh_delay = -1};
    clphys_md_plan *pl = NULL;
    assert_int_equal(clphys_md_plan_create(ctx, &bad, &s, &pl), CLPHYS_ERR_INVALID_ARGUMENT);
    clphys_md_system_destroy(&s);
}

/* NVE with the shifted potential: total energy conserved (velocity Verlet,
 * dt 0.005, 200 steps of a melting fcc lattice). */
static void test_energy_drift(void **state)
{
    (void)state;
    clphys_md_system s;
    assert_int_equal(clphys_md_fcc(0.8442, 4, 1.44, tu_seed(), &s), CLPHYS_SUCCESS);
    clphys_md_thermo t0, t1;
    double e64 = run_md(&s, CLPHYS_FP64, CLPHYS_MD_LJ_FULL_CSR, 1, 1, 1, 200, &t0, &t1);
    fprintf(stderr, "  fp64 max |dE/E| = %.2e over 200 steps (T %.3f -> %.3f)\n", e64, t0.temp, t1.temp);
    assert_true(e64 < 5e-4);    /* dt^2 fluctuation; the force still jumps at r_cut */
    assert_true(t1.temp < 1.2); /* the lattice melted: the run did something */
    double e32 = run_md(&s, CLPHYS_FP32, CLPHYS_MD_LJ_AUTO, 1, 1, 1, 200, &t0, &t1);
    fprintf(stderr, "  fp32 max |dE/E| = %.2e\n", e32);
    assert_true(e32 < 1e-3);
    clphys_md_system_destroy(&s);
}

/* Rebuilding every step, or only when needed (skin/2 check on the device),
 * or every 5 steps, gives the same trajectory; so do the force variants. */
static void test_policies_and_variants_agree(void **state)
{
    (void)state;
    clphys_md_system s;
    assert_int_equal(clphys_md_fcc(0.8442, 4, 1.44, tu_seed(), &s), CLPHYS_SUCCESS);
    clphys_md_thermo t0, a, b;
    run_md(&s, CLPHYS_FP64, CLPHYS_MD_LJ_FULL_CSR, 0, 1, 0, 50, &t0, &a);
    run_md(&s, CLPHYS_FP64, CLPHYS_MD_LJ_FULL_CSR, 0, 1, 1, 50, &t0, &b);
    assert_true(fabs(a.etotal - b.etotal) < 1e-9 && fabs(a.press - b.press) < 1e-8);
    run_md(&s, CLPHYS_FP64, CLPHYS_MD_LJ_FULL_TRANSPOSED, 0, 5, 0, 50, &t0, &b);
    assert_true(fabs(a.etotal - b.etotal) < 1e-9 && fabs(a.press - b.press) < 1e-8);
    run_md(&s, CLPHYS_FP64, CLPHYS_MD_LJ_HALF_CAS, 0, 1, 1, 50, &t0, &b);
    assert_true(fabs(a.etotal - b.etotal) < 1e-9 && fabs(a.press - b.press) < 1e-8);
    run_md(&s, CLPHYS_FP64, CLPHYS_MD_LJ_FULL_STAGED, 0, 5, 0, 50, &t0, &b);
    assert_true(fabs(a.etotal - b.etotal) < 1e-9 && fabs(a.press - b.press) < 1e-8);
    /* download + write_data + read back */
    char path[512];
    snprintf(path, sizeof path, "%s/final.data", dir);
    clphys_md_params p = {
        .lj = {.r_cut = 2.5, .skin = 0.3, .precision = CLPHYS_FP64}, .dt = 0.005, .neigh_every = 1, .neigh_check = 1};
    clphys_md_plan *pl;
    assert_int_equal(clphys_md_plan_create(ctx, &p, &s, &pl), CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_run(pl, 20, NULL), CLPHYS_SUCCESS);
    tu_poison_f64(s.x, 3 * s.n);
    assert_int_equal(clphys_md_download(pl, &s), CLPHYS_SUCCESS);
    for (size_t i = 0; i < 3 * s.n; i++) assert_true(s.x[i] >= s.lo[i % 3] && s.x[i] < s.hi[i % 3]);
    assert_int_equal(clphys_md_write_lammps_data(path, &s), CLPHYS_SUCCESS);
    clphys_md_system r;
    assert_int_equal(clphys_md_read_lammps_data(path, &r), CLPHYS_SUCCESS);
    assert_int_equal(r.n, s.n);
    clphys_md_system_destroy(&r);
    clphys_md_plan_destroy(pl);
    clphys_md_system_destroy(&s);
}

/* A run in pieces ends where one run of as many steps ends: a step's
 * second half kick goes into the next step's kick-drift (md_kick_drift's
 * kick_first) but a run's last, so a piece that ends between two builds
 * or on one must neither drop nor repeat a half kick (either moves v by
 * dt/2 f/m, about 1e-2 here, against summation-order noise near 1e-13). */
static void test_run_in_pieces(void **state)
{
    (void)state;
    const unsigned long long seed = tu_seed();
    clphys_md_system a, b;
    assert_int_equal(clphys_md_fcc(0.8442, 4, 1.44, seed, &a), CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_fcc(0.8442, 4, 1.44, seed, &b), CLPHYS_SUCCESS);
    clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = CLPHYS_FP64}, .dt = 0.005, .neigh_every = 5};
    clphys_md_plan *pa, *pb;
    assert_int_equal(clphys_md_plan_create(ctx, &p, &a, &pa), CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_plan_create(ctx, &p, &b, &pb), CLPHYS_SUCCESS);
    const cl_command_queue own = clphys_context_queue(ctx);
    assert_int_equal(clphys_md_run(pa, 30, NULL), CLPHYS_SUCCESS);
    /* untimed pieces and timed ones (kernel_s: the context's own queue,
     * which profiles; the others a queue without profiling, cp_untimed_begin) */
    const int piece[] = {7, 1, 2, 0, 20}; /* ends at steps 7, 8, 10 (a build), 10, 30 */
    for (size_t k = 0; k < sizeof piece / sizeof piece[0]; k++) {
        double ks = -1;
        assert_int_equal(clphys_md_run(pb, piece[k], k & 1 ? &ks : NULL), CLPHYS_SUCCESS);
        assert_true(clphys_context_queue(ctx) == own);
        if (k & 1) assert_true(ks >= 0);
    }
    tu_poison_f64(a.x, 3 * a.n), tu_poison_f64(a.v, 3 * a.n);
    tu_poison_f64(b.x, 3 * b.n), tu_poison_f64(b.v, 3 * b.n);
    assert_int_equal(clphys_md_download(pa, &a), CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_download(pb, &b), CLPHYS_SUCCESS);
    double dx = 0, dv = 0, vmax = 0;
    for (size_t i = 0; i < 3 * a.n; i++) {
        assert_int_equal(a.image[i], b.image[i]);
        dx = fmax(dx, fabs(a.x[i] - b.x[i]));
        dv = fmax(dv, fabs(a.v[i] - b.v[i]));
        vmax = fmax(vmax, fabs(a.v[i]));
    }
    assert_true(dx <= 1e-9 && dv <= 1e-9 * vmax);
    clphys_md_plan_destroy(pa), clphys_md_plan_destroy(pb);
    clphys_md_system_destroy(&a), clphys_md_system_destroy(&b);
}

static void test_box_too_small(void **state)
{
    (void)state;
    clphys_md_system s;
    assert_int_equal(clphys_md_fcc(0.8442, 3, 1.0, 1, &s), CLPHYS_SUCCESS); /* edge 5.04 < 5.6 */
    clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3}, .dt = 0.005, .neigh_every = 1};
    clphys_md_plan *pl;
    assert_int_equal(clphys_md_plan_create(ctx, &p, &s, &pl), CLPHYS_ERR_INPUT);
    assert_non_null(strstr(clphys_last_error(ctx), "shorter than 2 r_search"));
    clphys_md_system_destroy(&s);
}

/* ---- plans bound to the application's device buffers -------------------- */

/* Device buffers holding sys in the layout of clphys_md_buffers (real4 of
 * the precision; positions' w = 7, carried along), f poisoned. */
typedef struct {
    cl_mem x, v, f, image;
    size_t n, rs;
} dev_state;

static cl_mem make_buffer(size_t bytes, const void *host)
{
    cl_int e;
    cl_mem m = clCreateBuffer(clphys_context_cl_context(ctx), CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0),
                              bytes, (void *)host, &e);
    assert_int_equal(e, CL_SUCCESS);
    return m;
}

/* n*4 doubles <-> the device's real4 */
static void put4(cl_mem m, size_t rs, const double *a, size_t n)
{
    float *f = malloc(16 * n);
    for (size_t k = 0; k < 4 * n; k++) f[k] = (float)a[k];
    assert_int_equal(clEnqueueWriteBuffer(clphys_context_queue(ctx), m, CL_TRUE, 0, 4 * rs * n,
                                          rs == 8 ? (const void *)a : (const void *)f, 0, NULL, NULL),
                     CL_SUCCESS);
    free(f);
}

static void get4(cl_mem m, size_t rs, double *a, size_t n)
{
    float *f = malloc(16 * n);
    tu_poison_f64(a, 4 * n);
    tu_poison_f32(f, 4 * n);
    assert_int_equal(clEnqueueReadBuffer(clphys_context_queue(ctx), m, CL_TRUE, 0, 4 * rs * n,
                                         rs == 8 ? (void *)a : (void *)f, 0, NULL, NULL),
                     CL_SUCCESS);
    if (rs == 4)
        for (size_t k = 0; k < 4 * n; k++) a[k] = f[k];
    free(f);
}

static dev_state make_state(const clphys_md_system *s, clphys_precision prec)
{
    dev_state d = {.n = s->n, .rs = prec == CLPHYS_FP64 ? 8 : 4};
    double *x = malloc(32 * s->n), *v = malloc(32 * s->n), *nan = malloc(32 * s->n);
    cl_int *im = malloc(16 * s->n);
    for (size_t i = 0; i < s->n; i++) {
        for (int c = 0; c < 3; c++) {
            x[4 * i + c] = s->x[3 * i + c];
            v[4 * i + c] = s->v[3 * i + c];
            im[4 * i + c] = s->image[3 * i + c];
        }
        x[4 * i + 3] = 7;
        v[4 * i + 3] = s->type_mass[s->type[i]];
        im[4 * i + 3] = 0;
    }
    tu_poison_f64(nan, 4 * s->n);
    d.x = make_buffer(4 * d.rs * s->n, NULL);
    d.v = make_buffer(4 * d.rs * s->n, NULL);
    d.f = make_buffer(4 * d.rs * s->n, NULL);
    d.image = make_buffer(16 * s->n, im);
    put4(d.x, d.rs, x, s->n);
    put4(d.v, d.rs, v, s->n);
    put4(d.f, d.rs, nan, s->n);
    free(x), free(v), free(nan), free(im);
    return d;
}

static void free_state(dev_state *d)
{
    clReleaseMemObject(d->x);
    clReleaseMemObject(d->v);
    clReleaseMemObject(d->f);
    clReleaseMemObject(d->image);
}

static clphys_md_buffers buffers_of(const dev_state *d, const clphys_md_system *s)
{
    clphys_md_buffers b = {.n = d->n, .x = d->x, .v = d->v, .f = d->f, .image = d->image};
    memcpy(b.lo, s->lo, sizeof b.lo);
    memcpy(b.hi, s->hi, sizeof b.hi);
    return b;
}

/* The device state against a host plan's download (positions compared
 * unwrapped, x + image L, so that an atom at a face may sit on either side),
 * f against the fp64 reference at the device's positions, every particle
 * compared (md_ref_settle_cut_pairs); returns the largest position
 * difference over the box edge. */
static double compare_state(const dev_state *d, const clphys_md_system *h, const clphys_md_params *p, double tol_v)
{
    size_t n = d->n;
    double *x = malloc(32 * n), *v = malloc(32 * n), *f = malloc(32 * n);
    cl_int *im = malloc(16 * n);
    get4(d->x, d->rs, x, n);
    get4(d->v, d->rs, v, n);
    get4(d->f, d->rs, f, n);
    assert_int_equal(clEnqueueReadBuffer(clphys_context_queue(ctx), d->image, CL_TRUE, 0, 16 * n, im, 0, NULL, NULL),
                     CL_SUCCESS);
    double worst = 0, L[3], *x3 = malloc(24 * n), *ref = malloc(24 * n), pe, vir, u = 0;
    for (int c = 0; c < 3; c++) L[c] = h->hi[c] - h->lo[c];
    for (size_t i = 0; i < n; i++) {
        assert_true(x[4 * i + 3] == 7); /* w carried along */
        for (int c = 0; c < 3; c++) {
            double a = x[4 * i + c] + im[4 * i + c] * L[c], b = h->x[3 * i + c] + h->image[3 * i + c] * L[c];
            worst = fmax(worst, fabs(a - b) / L[c]);
            assert_true(fabs(v[4 * i + c] - h->v[3 * i + c]) <= tol_v);
            x3[3 * i + c] = x[4 * i + c] - h->lo[c];
        }
        assert_true(v[4 * i + 3] == 1); /* mass */
        u += f[4 * i + 3];
    }
    /* f: the forces of the device's positions (in its precision) */
    double *f3 = malloc(24 * n), bx[3] = {L[0], L[1], L[2]};
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) f3[3 * i + c] = f[4 * i + c];
    md_ref_lj(n, x3, bx, 1, 1, p->lj.r_cut, p->lj.shifted, ref, &pe, &vir);
    double tol = d->rs == 8 ? 1e-12 : 1e-5;
    /* the trajectory chose these positions, so they cannot be kept off the
     * cutoff: a pair within rounding of it (fp32: in 38 of 300 checks over
     * 100 seeds) is settled, not its particles left out */
    md_ref_settle_cut_pairs(n, x3, bx, 1, 1, p->lj.r_cut, f3, ref, d->rs == 8 ? 1e-13 : 1e-5);
    size_t excl = 1;
    assert_true(md_ref_force_error(n, x3, bx, 1, 1, p->lj.r_cut, NULL, NULL, f3, ref, 0, &excl) <= tol);
    assert_int_equal(excl, 0);
    assert_true(fabs(u - pe) <= (d->rs == 8 ? 1e-12 : 1e-5) * fabs(pe));
    free(x), free(v), free(f), free(im), free(x3), free(ref), free(f3);
    return worst;
}

/* md_ref_settle_cut_pairs, which compare_state relies on: a pair within
 * the window whose force a device left out is taken out of the reference
 * (nothing left to show), one just outside it is not (the whole error
 * shows), and a device that counted the pair keeps the reference as it is. */
static void test_settle_cut_pairs(void **state)
{
    (void)state;
    const double box[3] = {10, 10, 10}, rc = 2.5;
    for (int k = 0; k < 3; k++) {
        const double rel = k == 1 ? 1e-3 : 1e-6; /* r^2 below rc^2 by rel rc^2 */
        double pos[6] = {1, 1, 1, 1 + rc * sqrt(1 - rel), 1, 1}, ref[6], pe, vir, dev[6] = {0, 0, 0, 0, 0, 0};
        md_ref_lj(2, pos, box, 1, 1, rc, 0, ref, &pe, &vir);
        assert_true(fabs(ref[0]) > 1e-3);         /* the pair is in the reference */
        if (k == 2) memcpy(dev, ref, sizeof dev); /* a device that counted it */
        const size_t settled = md_ref_settle_cut_pairs(2, pos, box, 1, 1, rc, dev, ref, 1e-5);
        assert_int_equal(settled, k == 1 ? 0 : 1);
        size_t excl = 1;
        const double e = md_ref_force_error(2, pos, box, 1, 1, rc, NULL, NULL, dev, ref, 0, &excl);
        assert_int_equal(excl, 0);
        if (k == 1)
            assert_true(e > 0.5);
        else
            assert_true(e == 0);
    }
}

/* Bound to device buffers, the trajectory is the host-array path's (same
 * kernels, same sort), in fp64 with the box away from the origin and in fp32;
 * every output buffer is poisoned before it is written. */
static void test_device_buffers_trajectory(void **state)
{
    (void)state;
    const clphys_device_info *dev = clphys_context_device(ctx);
    for (int prec = 0; prec < 2; prec++) {
        if (prec == CLPHYS_FP64 && !dev->fp64) continue;
        clphys_md_system s;
        assert_int_equal(clphys_md_fcc(0.8442, 4, 1.44, tu_seed(), &s), CLPHYS_SUCCESS);
        if (prec == CLPHYS_FP64) { /* the same atoms in the box [-3, L - 3) */
            for (int c = 0; c < 3; c++) s.lo[c] -= 3, s.hi[c] -= 3;
            for (size_t k = 0; k < 3 * s.n; k++) s.x[k] -= 3;
        }
        clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = prec, .variant = CLPHYS_MD_LJ_FULL_CSR},
                              .dt = 0.005,
                              .neigh_every = 1,
                              .neigh_check = 1};
        clphys_md_plan *a, *b;
        assert_int_equal(clphys_md_plan_create(ctx, &p, &s, &a), CLPHYS_SUCCESS);
        dev_state d = make_state(&s, prec);
        clphys_md_buffers buf = buffers_of(&d, &s);
        clphys_status st = clphys_md_plan_create_cl(ctx, &p, &buf, &b);
        if (st) fprintf(stderr, "%s\n", clphys_last_error(ctx));
        assert_int_equal(st, CLPHYS_SUCCESS);
        double worst = 0;
        for (int k = 0; k < 3; k++) {
            double nan = NAN;
            float nanf = NAN;
            assert_int_equal(clEnqueueFillBuffer(clphys_context_queue(ctx), d.f, prec ? (void *)&nan : (void *)&nanf,
                                                 d.rs, 0, 4 * d.rs * s.n, 0, NULL, NULL),
                             CL_SUCCESS);
            assert_int_equal(clphys_md_run(a, 10, NULL), CLPHYS_SUCCESS);
            double ks = 1e6;
            assert_int_equal(clphys_md_run(b, 10, &ks), CLPHYS_SUCCESS);
            assert_true(ks > 0 && ks < 100); /* set, not added */
            tu_poison_f64(s.x, 3 * s.n);
            tu_poison_f64(s.v, 3 * s.n);
            assert_int_equal(clphys_md_download(a, &s), CLPHYS_SUCCESS);
            worst = fmax(worst, compare_state(&d, &s, &p, prec ? 1e-12 : 1e-5));
            clphys_md_thermo ta, tb;
            assert_int_equal(clphys_md_thermo_now(a, &ta), CLPHYS_SUCCESS);
            assert_int_equal(clphys_md_thermo_now(b, &tb), CLPHYS_SUCCESS);
            assert_true(ta.step == tb.step && fabs(ta.etotal - tb.etotal) <= (prec ? 1e-12 : 1e-5) * fabs(ta.etotal));
        }
        fprintf(stderr, "  device buffers %s: positions within %.1e box lengths of the host path after 30 steps\n",
                prec ? "fp64" : "fp32", worst);
        assert_true(worst <= (prec ? 1e-13 : 1e-6));
        assert_int_equal(clphys_md_rebuilds(b), clphys_md_rebuilds(a));
        clphys_md_plan_destroy(a);
        clphys_md_plan_destroy(b);
        free_state(&d);
        clphys_md_system_destroy(&s);
    }
}

/* After the application changes the buffers (velocities halved on the
 * device), clphys_md_refresh continues from them: the same trajectory as a
 * host plan made from that state; the image buffer may be NULL. */
static void test_device_buffers_refresh(void **state)
{
    (void)state;
    clphys_precision prec = clphys_context_device(ctx)->fp64 ? CLPHYS_FP64 : CLPHYS_FP32;
    clphys_md_system s;
    assert_int_equal(clphys_md_fcc(0.8442, 4, 1.44, tu_seed(), &s), CLPHYS_SUCCESS);
    clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = prec, .variant = CLPHYS_MD_LJ_FULL_CSR},
                          .dt = 0.005,
                          .neigh_every = 1,
                          .neigh_check = 1};
    dev_state d = make_state(&s, prec);
    clphys_md_buffers buf = buffers_of(&d, &s);
    clphys_md_plan *b, *a;
    assert_int_equal(clphys_md_plan_create_cl(ctx, &p, &buf, &b), CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_run(b, 20, NULL), CLPHYS_SUCCESS);
    size_t n = s.n;
    double *x = malloc(32 * n), *v = malloc(32 * n);
    cl_int *im = malloc(16 * n);
    get4(d.x, d.rs, x, n);
    get4(d.v, d.rs, v, n);
    assert_int_equal(clEnqueueReadBuffer(clphys_context_queue(ctx), d.image, CL_TRUE, 0, 16 * n, im, 0, NULL, NULL),
                     CL_SUCCESS);
    for (size_t i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) {
            v[4 * i + c] *= 0.5;
            s.x[3 * i + c] = x[4 * i + c];
            s.v[3 * i + c] = v[4 * i + c];
            s.image[3 * i + c] = im[4 * i + c];
        }
    }
    put4(d.v, d.rs, v, n);
    clphys_md_thermo t0;
    assert_int_equal(clphys_md_refresh(b), CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_thermo_now(b, &t0), CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_plan_create(ctx, &p, &s, &a), CLPHYS_SUCCESS);
    clphys_md_thermo ta;
    assert_int_equal(clphys_md_thermo_now(a, &ta), CLPHYS_SUCCESS);
    assert_true(fabs(ta.ke - t0.ke) <= 1e-6 * ta.ke && fabs(ta.pe - t0.pe) <= 1e-6 * fabs(ta.pe));
    assert_int_equal(clphys_md_run(a, 20, NULL), CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_run(b, 20, NULL), CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_download(a, &s), CLPHYS_SUCCESS);
    double worst = compare_state(&d, &s, &p, prec ? 1e-12 : 1e-5);
    assert_true(worst <= (prec ? 1e-13 : 1e-6));
    clphys_md_plan_destroy(a);
    clphys_md_plan_destroy(b);
    /* without an image buffer */
    buf.image = NULL;
    assert_int_equal(clphys_md_plan_create_cl(ctx, &p, &buf, &b), CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_run(b, 5, NULL), CLPHYS_SUCCESS);
    clphys_md_plan_destroy(b);
    free(x), free(v), free(im);
    free_state(&d);
    clphys_md_system_destroy(&s);
}

/* Bad buffers and bad state: named errors, no plan. */
static void test_device_buffers_errors(void **state)
{
    (void)state;
    clphys_precision prec = clphys_context_device(ctx)->fp64 ? CLPHYS_FP64 : CLPHYS_FP32;
    clphys_md_system s;
    assert_int_equal(clphys_md_fcc(0.8442, 4, 1.44, tu_seed(), &s), CLPHYS_SUCCESS);
    clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = prec}, .dt = 0.005, .neigh_every = 1};
    dev_state d = make_state(&s, prec);
    clphys_md_buffers buf = buffers_of(&d, &s);
    clphys_md_plan *pl = NULL;
    /* atom 17 massless, atom 40 far outside the box */
    double v17[4] = {0, 0, 0, 0}, x40[4] = {1e3, 0, 0, 7};
    float v17f[4] = {0}, x40f[4] = {1e3f, 0, 0, 7};
    cl_command_queue q = clphys_context_queue(ctx);
    assert_int_equal(clEnqueueWriteBuffer(q, d.v, CL_TRUE, 17 * 4 * d.rs, 4 * d.rs, prec ? (void *)v17 : (void *)v17f,
                                          0, NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(clphys_md_plan_create_cl(ctx, &p, &buf, &pl), CLPHYS_ERR_INPUT);
    assert_null(pl);
    assert_non_null(strstr(clphys_last_error(ctx), "atom 17"));
    dev_state e = make_state(&s, prec);
    buf = buffers_of(&e, &s);
    assert_int_equal(clEnqueueWriteBuffer(q, e.x, CL_TRUE, 40 * 4 * e.rs, 4 * e.rs, prec ? (void *)x40 : (void *)x40f,
                                          0, NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(clphys_md_plan_create_cl(ctx, &p, &buf, &pl), CLPHYS_ERR_INPUT);
    assert_non_null(strstr(clphys_last_error(ctx), "atom 40"));
    /* a buffer too small (one atom short), and one missing */
    buf = buffers_of(&d, &s);
    buf.n = s.n + 1;
    assert_int_equal(clphys_md_plan_create_cl(ctx, &p, &buf, &pl), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(clphys_last_error(ctx), "buffer x"));
    buf.n = s.n;
    buf.f = NULL;
    assert_int_equal(clphys_md_plan_create_cl(ctx, &p, &buf, &pl), CLPHYS_ERR_INVALID_ARGUMENT);
    /* refresh needs a bound plan */
    assert_int_equal(clphys_md_plan_create(ctx, &p, &s, &pl), CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_refresh(pl), CLPHYS_ERR_INVALID_ARGUMENT);
    clphys_md_plan_destroy(pl);
    clphys_md_plan_destroy(NULL);
    clphys_md_system_destroy(NULL);
    free_state(&d);
    free_state(&e);
    clphys_md_system_destroy(&s);
}

/* Issue 32 W6: a run that diverges ends with the step and the atom named,
 * by the displacement check of that step (neigh_check) or by the thermo
 * (without it).  A bound plan takes any finite velocity (the host path
 * refuses |v| dt > L / 2 at once): atom 5 at 1e200 crosses the box 1e197
 * times in a step and its m v^2 is not finite. */
static void test_diverged_run(void **state)
{
    (void)state;
    if (!clphys_context_device(ctx)->fp64) skip();
    clphys_md_system s;
    assert_int_equal(clphys_md_fcc(0.8442, 4, 1.44, tu_seed(), &s), CLPHYS_SUCCESS);
    const double v5[4] = {1e200, 0, 0, 1};
    for (int check = 1; check >= 0; check--) {
        clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = CLPHYS_FP64},
                              .dt = 0.005,
                              .neigh_every = 1,
                              .neigh_check = check};
        dev_state d = make_state(&s, CLPHYS_FP64);
        clphys_md_buffers buf = buffers_of(&d, &s);
        assert_int_equal(clEnqueueWriteBuffer(clphys_context_queue(ctx), d.v, CL_TRUE, 5 * 32, 32, v5, 0, NULL, NULL),
                         CL_SUCCESS);
        clphys_md_plan *pl = NULL;
        assert_int_equal(clphys_md_plan_create_cl(ctx, &p, &buf, &pl), CLPHYS_SUCCESS);
        clphys_status st = clphys_md_run(pl, 1, NULL);
        clphys_md_thermo t;
        if (!check) {
            assert_int_equal(st, CLPHYS_SUCCESS); /* no check ran: the thermo finds it */
            st = clphys_md_thermo_now(pl, &t);
        }
        print_message("# neigh_check %d: %s\n", check, clphys_last_error(ctx));
        assert_int_equal(st, CLPHYS_ERR_INPUT);
        assert_non_null(strstr(clphys_last_error(ctx), "md: step 1: atom 5 (0-based index)"));
        clphys_md_plan_destroy(pl);
        free_state(&d);
    }
    clphys_md_system_destroy(&s);
}

/* LAMMPS bench/in.lj from LAMMPS's own write_data file: the step-0 potential
 * energy is -6.773368053 per atom, and the thermo rows of LAMMPS's log (steps
 * 0, 10, 20; fp64, rebuild every 20 steps as in.lj) agree to 1e-6 relative. */
static void test_lammps_in_lj(void **state)
{
    (void)state;
    double ref[3][TM_THERMO_COLS];
    clphys_md_system s;
    tm_lammps_in_lj(dir, &s, ref);
    clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = CLPHYS_FP64, .variant = CLPHYS_MD_LJ_AUTO},
                          .dt = 0.005,
                          .neigh_every = 20,
                          .neigh_check = 0};
    clphys_md_plan *pl;
    assert_int_equal(clphys_md_plan_create(ctx, &p, &s, &pl), CLPHYS_SUCCESS);
    double worst = 0;
    for (int k = 0; k < 3; k++) {
        if (k) assert_int_equal(clphys_md_run(pl, 10, NULL), CLPHYS_SUCCESS);
        clphys_md_thermo t;
        assert_int_equal(clphys_md_thermo_now(pl, &t), CLPHYS_SUCCESS);
        double got[6] = {(double)t.step, t.temp, t.pe, t.ke, t.etotal, t.press};
        if (k == 0) assert_true(fabs(t.pe - -6.773368053) < 5e-10);
        for (int c = 0; c < 6; c++) {
            double e = fabs(got[c] - ref[k][c]) / fmax(fabs(ref[k][c]), 1e-300);
            worst = fmax(worst, e);
            if (c == 0 ? got[c] != ref[k][c] : !(e <= 1e-6)) {
                fprintf(stderr, "step %g column %d: %.15g vs LAMMPS %.15g\n", ref[k][0], c, got[c], ref[k][c]);
                fail();
            }
        }
    }
    fprintf(stderr, "  in.lj steps 0-20 vs LAMMPS: max relative difference %.2e\n", worst);
    clphys_md_plan_destroy(pl);
    clphys_md_system_destroy(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_data_round_trip),
        cmocka_unit_test(test_data_errors),
        cmocka_unit_test(test_data_huge_ids),
        cmocka_unit_test(test_data_counts_and_messages),
        cmocka_unit_test(test_energy_drift),
        cmocka_unit_test(test_neigh_delay),
        cmocka_unit_test(test_policies_and_variants_agree),
        cmocka_unit_test(test_run_in_pieces),
        cmocka_unit_test(test_box_too_small),
        cmocka_unit_test(test_lammps_in_lj),
        cmocka_unit_test(test_settle_cut_pairs),
        cmocka_unit_test(test_device_buffers_trajectory),
        cmocka_unit_test(test_device_buffers_refresh),
        cmocka_unit_test(test_device_buffers_errors),
        cmocka_unit_test(test_diverged_run),
    };
    /* a folder of its own: a fixed name by pid collided with one left by an
     * earlier run that had the same pid */
    return tu_run_group(tests, .ctx = &ctx, .nctx = 1, .tempdir = "md", .dir = dir, .dir_size = sizeof dir);
}
