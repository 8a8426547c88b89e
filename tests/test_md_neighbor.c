/* test_md_neighbor.c — cell list + Verlet lists (full/half, CSR/transposed,
 * fp32/fp64) equal as sets to the O(N^2) fp64 search of host/ref, on random
 * and lattice input with particles exactly on cell and box boundaries;
 * capacity growth on overflow; bad input. */
#include "host/md/md_internal.h"
#include "host/ref/md_ref.h"
#include "util.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static clphys_context *ctx;

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

static double dist2(const double *pos, const double *box, int i, int j)
{
    double r2 = 0;
    for (int c = 0; c < 3; c++) {
        double d = pos[3 * j + c] - pos[3 * i + c];
        d -= box[c] * nearbyint(d / box[c]);
        r2 += d * d;
    }
    return r2;
}

static int block_cells;                       /* staged layout: cells per block (0 = the plan's choice) */
static clphys_md_neighbor_build_kernel build; /* the build kernel checked */
static int rows_in_local = -1;                /* item kernel: rows in local memory (1), not (0), as planned (-1) */

/* Build on the device, compare the pair set with the reference.  Pairs found
 * by only one side are allowed only when |r^2 - rs^2| <= tol * rs^2 (fp32
 * rounding at the search radius; tol = 0 for fp64 means exact sets). */
static void check(size_t n, const double *pos, const double box[3], double rs, clphys_md_neighbor_kind kind,
                  clphys_md_neighbor_layout layout, clphys_precision prec, size_t capacity, double tol,
                  int expect_growth)
{
    clphys_md_neighbor_params p = {.n = n,
                                   .box = {box[0], box[1], box[2]},
                                   .r_search = rs,
                                   .kind = kind,
                                   .layout = layout,
                                   .precision = prec,
                                   .capacity = capacity,
                                   .block_cells = block_cells,
                                   .build = build};
    clphys_md_neighbor_plan *pl;
    clphys_status st = clphys_md_neighbor_plan_create(ctx, &p, &pl);
    if (st) fprintf(stderr, "%s\n", clphys_last_error(ctx));
    assert_int_equal(st, CLPHYS_SUCCESS);
    if (rows_in_local >= 0) pl->rows_above = rows_in_local ? 0 : SIZE_MAX;
    assert_int_equal(clphys_md_neighbor_build(pl, pos), CLPHYS_SUCCESS);
    size_t pairs, cap;
    int growths;
    assert_int_equal(clphys_md_neighbor_stats(pl, &pairs, &cap, &growths), CLPHYS_SUCCESS);
    if (expect_growth) assert_true(growths > 0);
    size_t *off = malloc((n + 1) * sizeof *off);
    int *list = malloc((pairs + 1) * sizeof *list);
    for (size_t i = 0; i <= n; i++) off[i] = (size_t)-1;
    for (size_t k = 0; k < pairs; k++) list[k] = -7;
    assert_int_equal(clphys_md_neighbor_get(pl, off, list), CLPHYS_SUCCESS);
    assert_int_equal(off[n], pairs);
    /* device entries as (min, max) pairs, sorted */
    int *dev = malloc(2 * (pairs + 1) * sizeof *dev);
    for (size_t i = 0; i < n; i++)
        for (size_t k = off[i]; k < off[i + 1]; k++) {
            int j = list[k];
            assert_true(j >= 0 && (size_t)j < n && (size_t)j != i);
            dev[2 * k] = (int)i < j ? (int)i : j;
            dev[2 * k + 1] = (int)i < j ? j : (int)i;
        }
    qsort(dev, pairs, 2 * sizeof *dev, cmp_pair);
    int mult = kind == CLPHYS_MD_NEIGHBOR_FULL ? 2 : 1;
    /* full lists hold each pair twice (i->j and j->i), half lists once */
    size_t m = 0;
    for (size_t k = 0; k < pairs; k += mult) {
        if (mult == 2) assert_memory_equal(&dev[2 * k], &dev[2 * k + 2], 2 * sizeof(int));
        if (k + mult < pairs) assert_true(cmp_pair(&dev[2 * k], &dev[2 * (k + mult)]) < 0);
        dev[2 * m] = dev[2 * k], dev[2 * m + 1] = dev[2 * k + 1], m++;
    }
    int *ref;
    size_t nref;
    assert_int_equal(md_ref_pairs(n, pos, box, rs, &ref, &nref), 0);
    size_t a = 0, b = 0, odd = 0;
    while (a < m || b < nref) {
        int c = a == m ? 1 : b == nref ? -1 : cmp_pair(&dev[2 * a], &ref[2 * b]);
        if (c == 0) {
            a++, b++;
            continue;
        }
        const int *pr = c < 0 ? &dev[2 * a++] : &ref[2 * b++];
        double r2 = dist2(pos, box, pr[0], pr[1]);
        if (!(fabs(r2 - rs * rs) <= tol * rs * rs)) {
            fprintf(stderr, "pair (%d,%d) r=%.17g only in the %s list\n", pr[0], pr[1], sqrt(r2),
                    c < 0 ? "device" : "reference");
            fail();
        }
        odd++;
    }
    assert_true(nref > 0);
    if (tol == 0) assert_int_equal(odd, 0);
    free(ref), free(dev), free(off), free(list);
    clphys_md_neighbor_plan_destroy(pl);
}

static void random_positions(double *pos, size_t n, const double box[3], uint64_t stream)
{
    uint64_t s = tu_rng_init(stream);
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) pos[3 * i + c] = box[c] * tu_uniform(&s);
}

/* Every precision, kind and layout, each with both build kernels, the item
 * kernel with and without rows in local memory (the device's default and the
 * list's size would leave some of them untested on it). */
static void all_kinds(size_t n, const double *pos, const double box[3], double rs, size_t cap, int expect_growth)
{
    for (int b = 0; b < 3; b++)
        for (int prec = 0; prec < 2; prec++)
            for (int kind = 0; kind < 2; kind++)
                for (int lay = 0; lay < 3; lay++)
                    if (kind == CLPHYS_MD_NEIGHBOR_FULL || lay != CLPHYS_MD_NEIGHBOR_STAGED) {
                        build = b == 2 ? CLPHYS_MD_NEIGHBOR_BUILD_CPU : CLPHYS_MD_NEIGHBOR_BUILD_ITEM;
                        rows_in_local = b == 2 ? -1 : b;
                        check(n, pos, box, rs, kind, lay, prec, cap, prec ? 0 : 1e-5, expect_growth);
                    }
    build = CLPHYS_MD_NEIGHBOR_BUILD_AUTO;
    rows_in_local = -1;
}

/* Row i of the list as a sorted array of caller indices (off, list from
 * clphys_md_neighbor_get). */
static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* A full list's row of a particle whose w is negative (a distributed
 * plan's ghost atom, MD_GHOST_W) is empty, while it stays a neighbour in
 * the other rows; every other row, and every row of a half list, as with
 * w = 0.  Random ghosts (a fifth), both precisions, CSR and transposed. */
static void test_ghost_rows(void **state)
{
    (void)state;
    const size_t n = 3000;
    const double box[3] = {14, 15, 16}, rs = 2.8;
    double *pos = malloc(3 * n * sizeof *pos);
    random_positions(pos, n, box, 41);
    uint64_t rng = tu_rng_init(43);
    char *ghost = malloc(n);
    size_t nghost = 0;
    for (size_t i = 0; i < n; i++) nghost += ghost[i] = tu_uniform(&rng) < 0.2;
    assert_true(nghost > 0 && nghost < n);
    for (int prec = 0; prec < 2; prec++)
        for (int kind = 0; kind < 2; kind++)
            for (int lay = 0; lay < 2; lay++) {
                clphys_md_neighbor_params p = {.n = n,
                                               .box = {box[0], box[1], box[2]},
                                               .r_search = rs,
                                               .kind = kind,
                                               .layout = lay,
                                               .precision = prec};
                clphys_md_neighbor_plan *pl;
                assert_int_equal(clphys_md_neighbor_plan_create(ctx, &p, &pl), CLPHYS_SUCCESS);
                size_t *off[2];
                int *list[2];
                for (int pass = 0; pass < 2; pass++) {
                    assert_int_equal(md_neighbor_upload(pl, pos), CLPHYS_SUCCESS);
                    const size_t r = prec ? 8 : 4;
                    const double w64 = MD_GHOST_W;
                    const float w32 = (float)MD_GHOST_W;
                    for (size_t i = 0; pass && i < n; i++)
                        if (ghost[i])
                            assert_int_equal(cp_write(ctx, pl->pos_in, (4 * i + 3) * r, r,
                                                      prec ? (const void *)&w64 : (const void *)&w32),
                                             CLPHYS_SUCCESS);
                    assert_int_equal(md_neighbor_rebuild(pl, NULL, NULL, 0, NULL, NULL), CLPHYS_SUCCESS);
                    size_t pairs, cap;
                    int growths;
                    assert_int_equal(clphys_md_neighbor_stats(pl, &pairs, &cap, &growths), CLPHYS_SUCCESS);
                    off[pass] = malloc((n + 1) * sizeof **off), list[pass] = malloc((pairs + 1) * sizeof **list);
                    assert_int_equal(clphys_md_neighbor_get(pl, off[pass], list[pass]), CLPHYS_SUCCESS);
                    for (size_t i = 0; i < n; i++)
                        qsort(list[pass] + off[pass][i], off[pass][i + 1] - off[pass][i], sizeof **list, cmp_int);
                }
                size_t wrong = 0, ghost_entries = 0;
                for (size_t i = 0; i < n; i++) {
                    const size_t m0 = off[0][i + 1] - off[0][i], m1 = off[1][i + 1] - off[1][i];
                    if (ghost[i] && kind == CLPHYS_MD_NEIGHBOR_FULL) {
                        wrong += m1 != 0;
                        continue;
                    }
                    wrong += m0 != m1 || memcmp(list[0] + off[0][i], list[1] + off[1][i], m0 * sizeof **list) != 0;
                    for (size_t k = off[1][i]; k < off[1][i + 1]; k++) ghost_entries += ghost[list[1][k]];
                }
                assert_int_equal(wrong, 0);
                assert_true(ghost_entries > 0);
                for (int pass = 0; pass < 2; pass++) free(off[pass]), free(list[pass]);
                clphys_md_neighbor_plan_destroy(pl);
            }
    free(pos), free(ghost);
}

static void test_random(void **state)
{
    (void)state;
    const double box[3] = {10.0, 11.0, 12.5};
    size_t n = 700;
    double *pos = malloc(3 * n * sizeof *pos);
    random_positions(pos, n, box, 1);
    /* a few particles outside the box: wrapped by minimum image */
    pos[0] += box[0];
    pos[4] -= box[1];
    pos[8] = -1e-300;
    all_kinds(n, pos, box, 2.8, 0, 0);
    /* staged entries decoded back to j, for every block width: 1 and 2 cells
     * (blocks whose stage repeats no cell), 3 = the whole row (3 cells: the
     * stage's x range wraps onto itself) */
    for (block_cells = 1; block_cells <= 3; block_cells++)
        check(n, pos, box, 2.8, CLPHYS_MD_NEIGHBOR_FULL, CLPHYS_MD_NEIGHBOR_STAGED, CLPHYS_FP64, 0, 0, 0);
    block_cells = 0;
    free(pos);
}

/* Simple cubic lattice, spacing 1: cell edges (4) and the box edge fall on
 * lattice planes, and pairs sit at exactly r_search = 3 (excluded: r < rs). */
static void test_lattice_boundaries(void **state)
{
    (void)state;
    const double box[3] = {12.0, 12.0, 12.0};
    size_t n = 12 * 12 * 12, i = 0;
    double *pos = malloc(3 * n * sizeof *pos);
    for (int z = 0; z < 12; z++)
        for (int y = 0; y < 12; y++)
            for (int x = 0; x < 12; x++, i++) {
                pos[3 * i] = x, pos[3 * i + 1] = y, pos[3 * i + 2] = z;
                if (x == 0 && y % 3 == 0) pos[3 * i] = 12.0; /* exactly on the box edge */
                if (y == 1 && z % 2 == 0) pos[3 * i + 1] = 1.0 - 12.0;
            }
    all_kinds(n, pos, box, 3.0, 0, 0);
    free(pos);
}

/* Capacity 1: the overflow counter must grow the list (never truncate). */
static void test_overflow_growth(void **state)
{
    (void)state;
    const double box[3] = {9.0, 9.0, 9.0};
    size_t n = 400;
    double *pos = malloc(3 * n * sizeof *pos);
    random_positions(pos, n, box, 2);
    check(n, pos, box, 2.5, CLPHYS_MD_NEIGHBOR_FULL, CLPHYS_MD_NEIGHBOR_TRANSPOSED, CLPHYS_FP64, 1, 0, 1);
    check(n, pos, box, 2.5, CLPHYS_MD_NEIGHBOR_HALF, CLPHYS_MD_NEIGHBOR_CSR, CLPHYS_FP64, 1, 0, 1);
    check(n, pos, box, 2.5, CLPHYS_MD_NEIGHBOR_FULL, CLPHYS_MD_NEIGHBOR_STAGED, CLPHYS_FP32, 1, 1e-5, 1);
    free(pos);
}

/* Few particles in a vast box (issue 32 M4): the cell grid is bounded by
 * the particle count, not the box (1500^3 / 2.8^3 would be 1.5e8 cells),
 * and the lists are still the reference's, in every kind and layout. */
static void test_dilute_box(void **state)
{
    (void)state;
    const double box[3] = {1500.0, 1500.0, 1500.0};
    size_t n = 40;
    double pos[3 * 40];
    uint64_t s = tu_rng_init(7);
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) /* half in a corner that wraps (pairs), half anywhere */
            pos[3 * i + c] = i < n / 2 ? 6 * tu_uniform(&s) - 3 : box[c] * tu_uniform(&s);
    all_kinds(n, pos, box, 2.8, 0, 0);
    clphys_md_neighbor_params p = {.n = n, .box = {box[0], box[1], box[2]}, .r_search = 2.8};
    clphys_md_neighbor_plan *pl;
    assert_int_equal(clphys_md_neighbor_plan_create(ctx, &p, &pl), CLPHYS_SUCCESS);
    print_message("# %zu particles in 1500^3: %d x %d x %d cells\n", n, pl->nc[0], pl->nc[1], pl->nc[2]);
    assert_true(pl->ncells <= 8 * n + 64);
    clphys_md_neighbor_plan_destroy(pl);
}

static void test_bad_input(void **state)
{
    (void)state;
    clphys_md_neighbor_params p = {.n = 10, .box = {5.0, 10.0, 10.0}, .r_search = 3.0};
    clphys_md_neighbor_plan *pl = NULL;
    assert_int_equal(clphys_md_neighbor_plan_create(ctx, &p, &pl), CLPHYS_ERR_INPUT);
    assert_null(pl);
    assert_non_null(strstr(clphys_last_error(ctx), "box edge x"));
    p.box[0] = 10.0;
    assert_int_equal(clphys_md_neighbor_plan_create(ctx, &p, &pl), CLPHYS_SUCCESS);
    double pos[30] = {0};
    pos[3 * 7 + 1] = NAN;
    assert_int_equal(clphys_md_neighbor_build(pl, pos), CLPHYS_ERR_INPUT);
    assert_non_null(strstr(clphys_last_error(ctx), "particle 7"));
    clphys_md_neighbor_plan_destroy(pl);
    /* the staged layout holds full lists only */
    p.layout = CLPHYS_MD_NEIGHBOR_STAGED;
    p.kind = CLPHYS_MD_NEIGHBOR_HALF;
    assert_int_equal(clphys_md_neighbor_plan_create(ctx, &p, &pl), CLPHYS_ERR_INVALID_ARGUMENT);
    assert_null(pl);
}

/* md_neighbor_scan against the sum on the host, on fresh random counts
 * (0 .. 40, as a cell's), the output poisoned: within one block of the
 * one-work-group scan, at its edge, and over several blocks (the block sums
 * grown as the sizes grow, more of them than one work-group's items). */
static void test_scan(void **state)
{
    (void)state;
    clphys_md_neighbor_params p = {.n = 64, .box = {10.0, 10.0, 10.0}, .r_search = 2.8};
    clphys_md_neighbor_plan *pl;
    assert_int_equal(clphys_md_neighbor_plan_create(ctx, &p, &pl), CLPHYS_SUCCESS);
    const size_t block = pl->scan_wg * 8;
    const size_t sizes[] = {1, 2, 255, block - 1, block, block + 1, 2 * block + 7, 300001, 1000 * block + 3};
    uint64_t rng = tu_rng_init(11);
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        const size_t n = sizes[k];
        cl_uint *in = malloc(4 * n), *out = malloc(4 * (n + 1));
        assert_non_null(in), assert_non_null(out);
        for (size_t i = 0; i < n; i++) in[i] = (cl_uint)(41 * tu_uniform(&rng));
        cl_mem din = NULL, dout = NULL;
        assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, in, &din), CLPHYS_SUCCESS);
        for (size_t i = 0; i <= n; i++) out[i] = 0xdeadbeefu;
        assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * (n + 1), out, &dout), CLPHYS_SUCCESS);
        assert_int_equal(md_neighbor_scan(pl, din, dout, (cl_uint)n), CLPHYS_SUCCESS);
        assert_int_equal(cp_read(ctx, dout, 0, 4 * (n + 1), out), CLPHYS_SUCCESS);
        cl_uint run = 0;
        size_t bad = 0;
        for (size_t i = 0; i <= n; i++) {
            if (out[i] != run && !bad++) print_error("n %zu: out[%zu] = %u, want %u\n", n, i, out[i], run);
            if (i < n) run += in[i];
        }
        assert_int_equal(bad, 0);
        cp_release_mem(&din), cp_release_mem(&dout);
        free(in), free(out);
    }
    clphys_md_neighbor_plan_destroy(pl);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_lattice_boundaries),
        cmocka_unit_test(test_overflow_growth),
        cmocka_unit_test(test_dilute_box),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_ghost_rows),
        cmocka_unit_test(test_scan),
    };
    return tu_run_group(tests, .ctx = &ctx, .nctx = 1);
}
