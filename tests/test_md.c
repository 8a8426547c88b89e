/* test_md.c — the MD driver: LAMMPS data files (round trip, malformed input
 * naming file and line, unsupported styles, atoms outside the box), NVE
 * energy conservation, rebuild policies agreeing, variants agreeing. */
#include "util.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
        for (int c = 0; c < 3; c++)
            ke2 += a.v[3 * i + c] * a.v[3 * i + c], p[c] += a.v[3 * i + c];
    assert_true(fabs(ke2 / (3.0 * a.n - 3) - 1.44) < 1e-12);
    for (int c = 0; c < 3; c++)
        assert_true(fabs(p[c]) < 1e-12);
    clphys_md_system_free(&a);
    clphys_md_system_free(&b);
}

static const char *HEAD =
    "test\n\n2 atoms\n1 atom types\n\n0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n\n"
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
        fprintf(stderr, "%s: status %d, message '%s' (wanted %d with '%s')\n", name, st, msg, want,
                needle);
        fail();
    }
}

static void test_data_errors(void **state)
{
    (void)state;
    expect_error("bad_atom.data", "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n2 1 1.0 oops 3.0\n",
                 CLPHYS_ERR_FORMAT, "bad_atom.data:17");
    expect_error("charge.data", "Atoms # charge\n\n1 1 0.5 1.0 2.0 3.0\n2 1 0.5 1.0 2.0 3.0\n",
                 CLPHYS_ERR_UNSUPPORTED, "charge");
    expect_error("short.data", "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n", CLPHYS_ERR_FORMAT,
                 "short.data:16");
    expect_error("far.data", "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n2 1 1.0 2.0 35.0\n",
                 CLPHYS_ERR_INPUT, "far.data:17");
    expect_error("type.data", "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n2 3 1.0 2.0 3.0\n",
                 CLPHYS_ERR_INPUT, "type.data:17");
    expect_error(
        "vel.data",
        "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n2 1 1.0 2.0 3.0\n\nVelocities\n\n1 0 0 0\n9 0 0 0\n",
        CLPHYS_ERR_FORMAT, "vel.data:22");
    /* an atom just outside the box is wrapped with its image flag */
    char text[1024];
    snprintf(text, sizeof text, "%sAtoms # atomic\n\n1 1 -1.0 2.0 3.0 0 0 0\n2 1 1.0 2.0 13.0\n",
             HEAD);
    clphys_md_system s;
    assert_int_equal(clphys_md_read_lammps_data(write_file("wrap.data", text), &s), CLPHYS_SUCCESS);
    assert_true(fabs(s.x[0] - 9.0) < 1e-12 && s.image[0] == -1);
    assert_true(fabs(s.x[5] - 3.0) < 1e-12 && s.image[5] == 1);
    clphys_md_system_free(&s);
    assert_int_equal(clphys_md_read_lammps_data("/nonexistent/x.data", &s), CLPHYS_ERR_IO);
}

static double run_md(clphys_md_system *sys, clphys_precision prec, clphys_lj_variant v, int shifted,
                     int every, int check, int steps, clphys_md_thermo *t0, clphys_md_thermo *t1)
{
    clphys_md_params p = {
        .lj = {.r_cut = 2.5, .skin = 0.3, .shifted = shifted, .precision = prec, .variant = v},
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
                          .dt = 0.005, .neigh_every = every, .neigh_check = check, .neigh_delay = delay};
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
    clphys_md_system_free(&s);
}

/* NVE with the shifted potential: total energy conserved (velocity Verlet,
 * dt 0.005, 200 steps of a melting fcc lattice). */
static void test_energy_drift(void **state)
{
    (void)state;
    clphys_md_system s;
    assert_int_equal(clphys_md_fcc(0.8442, 4, 1.44, tu_seed(), &s), CLPHYS_SUCCESS);
    clphys_md_thermo t0, t1;
    double e64 = run_md(&s, CLPHYS_FP64, CLPHYS_LJ_FULL_CSR, 1, 1, 1, 200, &t0, &t1);
    fprintf(stderr, "  fp64 max |dE/E| = %.2e over 200 steps (T %.3f -> %.3f)\n", e64, t0.temp,
            t1.temp);
    assert_true(e64 < 5e-4);    /* dt^2 fluctuation; the force still jumps at r_cut */
    assert_true(t1.temp < 1.2); /* the lattice melted: the run did something */
    double e32 = run_md(&s, CLPHYS_FP32, CLPHYS_LJ_AUTO, 1, 1, 1, 200, &t0, &t1);
    fprintf(stderr, "  fp32 max |dE/E| = %.2e\n", e32);
    assert_true(e32 < 1e-3);
    clphys_md_system_free(&s);
}

/* Rebuilding every step, or only when needed (skin/2 check on the device),
 * or every 5 steps, gives the same trajectory; so do the force variants. */
static void test_policies_and_variants_agree(void **state)
{
    (void)state;
    clphys_md_system s;
    assert_int_equal(clphys_md_fcc(0.8442, 4, 1.44, tu_seed(), &s), CLPHYS_SUCCESS);
    clphys_md_thermo t0, a, b;
    run_md(&s, CLPHYS_FP64, CLPHYS_LJ_FULL_CSR, 0, 1, 0, 50, &t0, &a);
    run_md(&s, CLPHYS_FP64, CLPHYS_LJ_FULL_CSR, 0, 1, 1, 50, &t0, &b);
    assert_true(fabs(a.etotal - b.etotal) < 1e-9 && fabs(a.press - b.press) < 1e-8);
    run_md(&s, CLPHYS_FP64, CLPHYS_LJ_FULL_TRANSPOSED, 0, 5, 0, 50, &t0, &b);
    assert_true(fabs(a.etotal - b.etotal) < 1e-9 && fabs(a.press - b.press) < 1e-8);
    run_md(&s, CLPHYS_FP64, CLPHYS_LJ_HALF_CAS, 0, 1, 1, 50, &t0, &b);
    assert_true(fabs(a.etotal - b.etotal) < 1e-9 && fabs(a.press - b.press) < 1e-8);
    run_md(&s, CLPHYS_FP64, CLPHYS_LJ_FULL_STAGED, 0, 5, 0, 50, &t0, &b);
    assert_true(fabs(a.etotal - b.etotal) < 1e-9 && fabs(a.press - b.press) < 1e-8);
    /* download + write_data + read back */
    char path[512];
    snprintf(path, sizeof path, "%s/final.data", dir);
    clphys_md_params p = {.lj = {.r_cut = 2.5, .skin = 0.3, .precision = CLPHYS_FP64},
                          .dt = 0.005,
                          .neigh_every = 1,
                          .neigh_check = 1};
    clphys_md_plan *pl;
    assert_int_equal(clphys_md_plan_create(ctx, &p, &s, &pl), CLPHYS_SUCCESS);
    assert_int_equal(clphys_md_run(pl, 20, NULL), CLPHYS_SUCCESS);
    tu_poison_f64(s.x, 3 * s.n);
    assert_int_equal(clphys_md_download(pl, &s), CLPHYS_SUCCESS);
    for (size_t i = 0; i < 3 * s.n; i++)
        assert_true(s.x[i] >= s.lo[i % 3] && s.x[i] < s.hi[i % 3]);
    assert_int_equal(clphys_md_write_lammps_data(path, &s), CLPHYS_SUCCESS);
    clphys_md_system r;
    assert_int_equal(clphys_md_read_lammps_data(path, &r), CLPHYS_SUCCESS);
    assert_int_equal(r.n, s.n);
    clphys_md_system_free(&r);
    clphys_md_plan_destroy(pl);
    clphys_md_system_free(&s);
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
    clphys_md_system_free(&s);
}

/* tests/data/ next to this source (meson runs tests from the build folder). */
static void data_path(char *buf, size_t n, const char *name)
{
    const char *d = getenv("CLPHYS_TEST_DATA");
    if (d) {
        snprintf(buf, n, "%s/%s", d, name);
        return;
    }
    const char *f = __FILE__, *slash = strrchr(f, '/');
    snprintf(buf, n, "%.*sdata/%s", slash ? (int)(slash - f + 1) : 0, f, name);
}

/* LAMMPS bench/in.lj from LAMMPS's own write_data file: the step-0 potential
 * energy is -6.773368053 per atom, and the thermo rows of LAMMPS's log (steps
 * 0, 10, 20; fp64, rebuild every 20 steps as in.lj) agree to 1e-6 relative. */
static void test_lammps_in_lj(void **state)
{
    (void)state;
    char gz[512], data[512], logf[512], cmd[2048];
    data_path(gz, sizeof gz, "md/in.lj.data.gz");
    snprintf(data, sizeof data, "%s/in.lj.data", dir);
    snprintf(cmd, sizeof cmd, "gzip -dc '%s' > '%s'", gz, data);
    assert_int_equal(system(cmd), 0);
    data_path(gz, sizeof gz, "md/log.lammps.gz");
    snprintf(logf, sizeof logf, "%s/log.lammps", dir);
    snprintf(cmd, sizeof cmd, "gzip -dc '%s' > '%s'", gz, logf);
    assert_int_equal(system(cmd), 0);
    /* LAMMPS rows: step temp pe ke etotal press */
    double ref[3][6];
    int rows = 0;
    FILE *f = fopen(logf, "r");
    assert_non_null(f);
    char line[1024];
    int in_thermo = 0;
    while (rows < 3 && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "Step Temp PotEng KinEng TotEng Press", 36)) {
            in_thermo = 1;
            continue;
        }
        double *r = ref[rows];
        if (in_thermo &&
            sscanf(line, "%lf %lf %lf %lf %lf %lf", &r[0], &r[1], &r[2], &r[3], &r[4], &r[5]) == 6)
            rows++;
    }
    fclose(f);
    assert_int_equal(rows, 3);
    clphys_md_system s;
    assert_int_equal(clphys_md_read_lammps_data(data, &s), CLPHYS_SUCCESS);
    assert_int_equal(s.n, 32000);
    clphys_md_params p = {
        .lj = {.r_cut = 2.5, .skin = 0.3, .precision = CLPHYS_FP64, .variant = CLPHYS_LJ_AUTO},
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
                fprintf(stderr, "step %g column %d: %.15g vs LAMMPS %.15g\n", ref[k][0], c, got[c],
                        ref[k][c]);
                fail();
            }
        }
    }
    fprintf(stderr, "  in.lj steps 0-20 vs LAMMPS: max relative difference %.2e\n", worst);
    clphys_md_plan_destroy(pl);
    clphys_md_system_free(&s);
    remove(data);
    remove(logf);
}

int main(void)
{
    ctx = tu_context();
    snprintf(dir, sizeof dir, "/tmp/clphys_test_md_%d", (int)getpid());
    if (mkdir(dir, 0700)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_data_round_trip), cmocka_unit_test(test_data_errors),
        cmocka_unit_test(test_energy_drift),    cmocka_unit_test(test_neigh_delay),    cmocka_unit_test(test_policies_and_variants_agree),
        cmocka_unit_test(test_box_too_small),   cmocka_unit_test(test_lammps_in_lj),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    clphys_context_destroy(ctx);
    return r;
}
