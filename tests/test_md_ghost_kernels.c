/* test_md_ghost_kernels.c — the device side of the distributed MD plan
 * (cl/md_ghost.cl, cl/md_rebuild.cl: host/md/ghost.c, host/md/rebuild.c)
 * against the host, kernel by kernel, on one device: no MPI (the plan's
 * runs over ranks are test_md_mpi.c's). */
#include "host/md/md_internal.h"
#include "util.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static clphys_context *ctx;

/* The kernels of cl/md_ghost.cl and cl/md_rebuild.cl against the host on
 * fresh random input, outputs poisoned (NaN, 0xff bytes) first: pack (a
 * gather plus a shift: exact in the precision), unpack (a scatter),
 * classify (each owned atom once, interior ones at the front, the rest at
 * the back, ghosts dropped; the near list only when asked; the first
 * migrants' records), arrive (records to the arrays), iota, bind, map,
 * ghost_fill and places; borders (borders_in). */
static void kernels_in(clphys_precision prec)
{
    const size_t n = 1000, rs = prec == CLPHYS_FP64 ? 8 : 4;
    cp_defines opt = {0};
    assert_int_equal(cp_define_precision(ctx, &opt, prec), CLPHYS_SUCCESS);
    cl_program pg, pr;
    assert_int_equal(cp_program(ctx, &clsrc_md_ghost_cl, &opt, &pg), CLPHYS_SUCCESS);
    assert_int_equal(cp_program(ctx, &clsrc_md_rebuild_cl, &opt, &pr), CLPHYS_SUCCESS);
    cl_kernel kp, ku, kc, ki, kv, km, ksel;
    assert_int_equal(cp_kernel(ctx, pg, "md_ghost_pack", &kp), CLPHYS_SUCCESS);
    assert_int_equal(cp_kernel(ctx, pg, "md_ghost_unpack", &ku), CLPHYS_SUCCESS);
    assert_int_equal(cp_kernel(ctx, pg, "md_ghost_select", &ksel), CLPHYS_SUCCESS);
    assert_int_equal(cp_kernel(ctx, pr, "md_classify", &kc), CLPHYS_SUCCESS);
    assert_int_equal(cp_kernel(ctx, pr, "md_iota", &ki), CLPHYS_SUCCESS);
    assert_int_equal(cp_kernel(ctx, pr, "md_bind", &kv), CLPHYS_SUCCESS);
    assert_int_equal(cp_kernel(ctx, pr, "md_map", &km), CLPHYS_SUCCESS);
    uint64_t rng = tu_rng_init(31 + (uint64_t)prec);
    /* positions in [0, 10)^3 (w = k), velocities, images and tags by atom */
    double *x = malloc(4 * n * sizeof *x);
    cl_uint *perm = malloc(4 * n), *idx = malloc(4 * n);
    cl_int *im = malloc(16 * n);
    for (size_t i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) x[4 * i + c] = 10 * tu_uniform(&rng);
        x[4 * i + 3] = (double)i;
        perm[i] = (cl_uint)i;
        for (int c = 0; c < 4; c++) im[4 * i + c] = (cl_int)(4 * i + (size_t)c);
    }
    for (size_t i = n - 1; i > 0; i--) { /* a random permutation */
        size_t j = (size_t)(tu_uniform(&rng) * (double)(i + 1)) % (i + 1);
        cl_uint t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    void *xr = malloc(4 * rs * n), *out = malloc(4 * rs * n);
    for (size_t k = 0; k < 4 * n; k++)
        if (rs == 8)
            ((double *)xr)[k] = x[k];
        else
            ((float *)xr)[k] = (float)x[k];
    cl_mem pos, vel, img, tag, pm, ix, buf, pos_o, vel_o, img_o, tag_o, cnt;
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4 * rs * n, xr, &pos), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4 * rs * n, xr, &vel), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 16 * n, im, &img), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 16 * n, im, &tag), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4 * n, perm, &pm), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &ix), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * rs * n, NULL, &buf), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * rs * n, NULL, &pos_o), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * rs * n, NULL, &vel_o), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 16 * n, NULL, &img_o), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 16 * n, NULL, &tag_o), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 16, NULL, &cnt), 0);
    size_t g = 1024;
    /* pack: atoms perm[off + k] (k < m), the first na shifted by dd along
     * y, the others by db along z (two swaps in one launch) */
    const cl_uint off = 100, m = 500, na = 173;
    double dd[4] = {0, -7.25, 0, 0}, db[4] = {0, 0, 3.5, 0};
    float df[4] = {0, -7.25f, 0, 0}, fb[4] = {0, 0, 3.5f, 0};
    assert_int_equal(cp_write(ctx, ix, 0, 4 * n, perm), 0);
    memset(out, 0xff, 4 * rs * n); /* NaN */
    assert_int_equal(cp_write(ctx, buf, 0, 3 * rs * n, out), 0);
    assert_int_equal(CP_ARGS(ctx, kp, pos, ix, off, m, na, CP_EITHER(rs == 8, dd, df), CP_EITHER(rs == 8, db, fb), buf),
                     0);
    assert_int_equal(cp_launch(ctx, kp, 1, &g, NULL, NULL), 0);
    assert_int_equal(cp_read(ctx, buf, 0, 3 * rs * n, out), 0);
    /* three reals per atom: x, y, z (w does not travel) */
    for (size_t k = 0; k < n; k++)
        for (int c = 0; c < 3; c++) {
            double got = rs == 8 ? ((double *)out)[3 * k + c] : ((float *)out)[3 * k + c];
            if (k < off || k >= off + m) {
                assert_true(isnan(got)); /* untouched */
                continue;
            }
            size_t j = perm[k];
            const int first = k - off < na;
            double want =
                rs == 8 ? x[4 * j + c] + (first ? dd : db)[c] : (double)((float)x[4 * j + c] + (first ? df : fb)[c]);
            assert_true(got == want);
        }
    /* unpack the packed atoms into slots idx = perm (k in [off, off + m))
     * of an array whose x, y, z are poisoned and whose w is the slot's
     * number: x, y, z from the packed buffer, w kept */
    for (size_t k = 0; k < n; k++)
        for (int c = 0; c < 4; c++) {
            double v = c == 3 ? (double)(k + 5000) : NAN;
            if (rs == 8)
                ((double *)out)[4 * k + c] = v;
            else
                ((float *)out)[4 * k + c] = (float)v;
        }
    assert_int_equal(cp_write(ctx, pos_o, 0, 4 * rs * n, out), 0);
    assert_int_equal(CP_ARGS(ctx, ku, pos_o, ix, off, m, buf) | cp_launch(ctx, ku, 1, &g, NULL, NULL), 0);
    void *back = malloc(4 * rs * n), *packed = malloc(3 * rs * n);
    assert_int_equal(cp_read(ctx, pos_o, 0, 4 * rs * n, back), 0);
    assert_int_equal(cp_read(ctx, buf, 0, 3 * rs * n, packed), 0);
    size_t written = 0;
    for (size_t k = off; k < off + m; k++) {
        assert_memory_equal((char *)back + 4 * rs * perm[k], (char *)packed + 3 * rs * k, 3 * rs);
        written++;
    }
    for (size_t s2 = 0, nan = 0; s2 < n; s2++) {
        double x0 = rs == 8 ? ((double *)back)[4 * s2] : ((float *)back)[4 * s2];
        double w = rs == 8 ? ((double *)back)[4 * s2 + 3] : ((float *)back)[4 * s2 + 3];
        assert_true(w == (double)(s2 + 5000));
        nan += isnan(x0) != 0;
        if (s2 == n - 1) assert_int_equal(nan, n - written);
    }
    /* select, both sides back to back as a rebuild launches them: the
     * atoms below y = 3.7 (side 0, counter 0), then those at or above
     * y = 6.2 (side 1, counter 1, listed behind side 0's), from index 5 of
     * a poisoned list, with room for all, for side 0 and 10 of side 1, and
     * for 10 of side 0 only: each such atom once in its side's part, the
     * counts complete, nothing written outside the room */
    const double face[2] = {3.7, 6.2};
    size_t want[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        double y = rs == 8 ? x[4 * i + 1] : (double)(float)x[4 * i + 1];
        want[0] += y < face[0], want[1] += y >= face[1];
    }
    assert_true(want[0] > 10 && want[1] > 10 && want[0] + want[1] < n - 10);
    const cl_uint soff = 5, rooms[3] = {(cl_uint)(n - soff), (cl_uint)want[0] + 10, 10};
    for (int r = 0; r < 3; r++) {
        const cl_uint room = rooms[r], nn0 = (cl_uint)n;
        const cl_int dim = 1;
        cl_uint zero2[2] = {0, 0}, got[2] = {0, 0};
        memset(idx, 0xff, 4 * n);
        assert_int_equal(cp_write(ctx, ix, 0, 4 * n, idx) | cp_write(ctx, cnt, 0, 8, zero2), 0);
        for (cl_int sd = 0; sd < 2; sd++) {
            const float facef = (float)face[sd];
            assert_int_equal(
                CP_ARGS(ctx, ksel, pos, nn0, dim, sd, CP_EITHER(rs == 8, face[sd], facef), soff, room, ix, cnt) |
                    cp_launch(ctx, ksel, 1, &g, NULL, NULL),
                0);
        }
        assert_int_equal(cp_read(ctx, cnt, 0, 8, got) | cp_read(ctx, ix, 0, 4 * n, idx), 0);
        assert_int_equal(got[0], want[0]);
        assert_int_equal(got[1], want[1]);
        const size_t written = want[0] + want[1] < room ? want[0] + want[1] : room;
        char *once = calloc(n, 1);
        for (size_t k = 0; k < n; k++) {
            if (k < soff || k >= soff + written) {
                assert_int_equal(idx[k], 0xffffffffu); /* untouched */
                continue;
            }
            cl_uint i = idx[k];
            assert_true(i < n && !once[i]);
            once[i] = 1;
            double y = rs == 8 ? x[4 * i + 1] : (double)(float)x[4 * i + 1];
            assert_true(k < soff + want[0] ? y < face[0] : y >= face[1]);
        }
        free(once);
    }
    /* classify: atoms whose perm entry is < nown are owned; staying when
     * inside [2, 8) along x and z (cut), at the front; migrants behind;
     * the staying ones within shell of those faces listed (near_pos,
     * near_idx: their place at the front) */
    const cl_uint nown = 700, cap = (cl_uint)n, nn = (cl_uint)n;
    double lo[4] = {2, 0, 2, 0}, hi[4] = {8, 10, 8, 0}, shell = 1.5;
    float lof[4] = {2, 0, 2, 0}, hif[4] = {8, 10, 8, 0}, shellf = 1.5f;
    cl_int cut[4] = {1, 0, 1, 0};
    cl_uint zero[4] = {0, 0, 0, 0}, counts[4];
    cl_mem npos, nidx, mig;
    /* the migrants' records (MD_REC_* of cl/md_rebuild.cl): room for the
     * first mcap of them, a poisoned stretch behind */
    const size_t rb = 8 * rs + 32;
    const cl_uint mcap = 100, no_mig = 0;
    unsigned char *recs = malloc(rb * (mcap + 8));
    memset(recs, 0xff, rb * (mcap + 8));
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, rb * (mcap + 8), NULL, &mig), 0);
    assert_int_equal(cp_write(ctx, mig, 0, rb * (mcap + 8), recs), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * rs * n, NULL, &npos), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &nidx), 0);
    memset(out, 0xff, 4 * rs * n);
    assert_int_equal(cp_write(ctx, pos_o, 0, 4 * rs * n, out) | cp_write(ctx, npos, 0, 4 * rs * n, out) |
                         cp_write(ctx, nidx, 0, 4 * n, out) | cp_write(ctx, cnt, 0, 16, zero),
                     0);
    const int dbl = rs == 8;
    const cl_int list_near = 1;
    assert_int_equal(CP_ARGS(ctx, kc, pos, vel, img, tag, pm, nn, nown, CP_EITHER(dbl, lo, lof),
                             CP_EITHER(dbl, hi, hif), cut, CP_EITHER(dbl, shell, shellf), list_near, cap, pos_o, vel_o,
                             img_o, tag_o, cnt, npos, nidx, mig, mig, mcap),
                     0);
    assert_int_equal(cp_launch(ctx, kc, 1, &g, NULL, NULL), 0);
    assert_int_equal(cp_read(ctx, cnt, 0, 16, counts) | cp_read(ctx, pos_o, 0, 4 * rs * n, back), 0);
    cl_int *tg = malloc(16 * n);
    assert_int_equal(cp_read(ctx, tag_o, 0, 16 * n, tg), 0);
    size_t want_in = 0, want_rest = 0, want_near = 0;
    int *seen = calloc(n, sizeof *seen);
    for (size_t s2 = 0; s2 < n; s2++) {
        if (perm[s2] >= nown) continue;
        const double *p = x + 4 * s2;
        double q[3];
        for (int c = 0; c < 3; c++) q[c] = rs == 8 ? p[c] : (double)(float)p[c];
        int stays = q[0] >= 2 && q[0] < 8 && q[2] >= 2 && q[2] < 8;
        int inner = q[0] >= 2 + shell && q[0] < 8 - shell && q[2] >= 2 + shell && q[2] < 8 - shell;
        want_in += stays, want_rest += !stays, want_near += stays && !inner;
    }
    assert_int_equal(counts[0], want_in);
    assert_int_equal(counts[1], want_rest);
    assert_int_equal(counts[2], want_near);
    assert_true(want_rest > 2 * mcap && want_near > 0 && want_in > want_near);
    /* record q: the migrant at the back's place n - 1 - q, position,
     * velocity, image and tag bit for bit; none past mcap */
    {
        unsigned char *vo = malloc(4 * rs * n), *io = malloc(16 * n), *to = malloc(16 * n);
        assert_int_equal(cp_read(ctx, mig, 0, rb * (mcap + 8), recs) | cp_read(ctx, vel_o, 0, 4 * rs * n, vo) |
                             cp_read(ctx, img_o, 0, 16 * n, io) | cp_read(ctx, tag_o, 0, 16 * n, to),
                         0);
        for (size_t q = 0; q < mcap + 8; q++) {
            const unsigned char *r = recs + rb * q;
            if (q >= mcap) {
                for (size_t b = 0; b < rb; b++) assert_int_equal(r[b], 0xff);
                continue;
            }
            const size_t k = n - 1 - q;
            assert_memory_equal(r, (char *)back + 4 * rs * k, 4 * rs);
            assert_memory_equal(r + 4 * rs, vo + 4 * rs * k, 4 * rs);
            assert_memory_equal(r + 8 * rs, io + 16 * k, 16);
            assert_memory_equal(r + 8 * rs + 16, to + 16 * k, 16);
        }
        free(vo), free(io), free(to);
    }
    for (size_t k = 0; k < n; k++) {
        int front = k < counts[0], behind = k >= n - counts[1];
        double w = rs == 8 ? ((double *)back)[4 * k + 3] : ((float *)back)[4 * k + 3];
        if (!front && !behind) {
            assert_true(isnan(w));
            continue;
        }
        size_t s2 = (size_t)w; /* the atom (w = its sorted index) */
        assert_true(s2 < n && perm[s2] < nown && !seen[s2]);
        seen[s2] = 1;
        assert_int_equal(tg[4 * k], (cl_int)(4 * s2)); /* its tag came along */
        const double *p = x + 4 * s2;
        double q0 = rs == 8 ? p[0] : (double)(float)p[0], q2 = rs == 8 ? p[2] : (double)(float)p[2];
        assert_int_equal(q0 >= 2 && q0 < 8 && q2 >= 2 && q2 < 8, front);
    }
    /* the near list: each a staying atom within shell of a face, once, its
     * position as at its place */
    {
        void *np = malloc(4 * rs * n);
        cl_uint *ni = malloc(4 * n);
        int *listed = calloc(n, sizeof *listed);
        assert_int_equal(cp_read(ctx, npos, 0, 4 * rs * n, np) | cp_read(ctx, nidx, 0, 4 * n, ni), 0);
        for (size_t q = 0; q < counts[2]; q++) {
            assert_true(ni[q] < counts[0] && !listed[ni[q]]);
            listed[ni[q]] = 1;
            assert_memory_equal((char *)np + 4 * rs * q, (char *)back + 4 * rs * ni[q], 4 * rs);
            double q0 = rs == 8 ? ((double *)np)[4 * q] : ((float *)np)[4 * q];
            double q2 = rs == 8 ? ((double *)np)[4 * q + 2] : ((float *)np)[4 * q + 2];
            assert_false(q0 >= 2 + shell && q0 < 8 - shell && q2 >= 2 + shell && q2 < 8 - shell);
        }
        free(np), free(ni), free(listed);
    }
    /* without list_near (the ghost lists made on the device): the same
     * atoms at the front and back, no near list written, counts[2] 0 */
    {
        void *np = malloc(4 * rs * n), *back2 = malloc(4 * rs * n);
        cl_uint *ni = malloc(4 * n), counts2[4];
        memset(out, 0xff, 4 * rs * n);
        assert_int_equal(cp_write(ctx, pos_o, 0, 4 * rs * n, out) | cp_write(ctx, npos, 0, 4 * rs * n, out) |
                             cp_write(ctx, nidx, 0, 4 * n, out) | cp_write(ctx, cnt, 0, 16, zero),
                         0);
        const cl_int no_list = 0;
        assert_int_equal(CP_ARGS(ctx, kc, pos, vel, img, tag, pm, nn, nown, CP_EITHER(dbl, lo, lof),
                                 CP_EITHER(dbl, hi, hif), cut, CP_EITHER(dbl, shell, shellf), no_list, cap, pos_o,
                                 vel_o, img_o, tag_o, cnt, npos, nidx, mig, mig, no_mig),
                         0);
        assert_int_equal(cp_launch(ctx, kc, 1, &g, NULL, NULL), 0);
        assert_int_equal(cp_read(ctx, cnt, 0, 16, counts2) | cp_read(ctx, pos_o, 0, 4 * rs * n, back2) |
                             cp_read(ctx, npos, 0, 4 * rs * n, np) | cp_read(ctx, nidx, 0, 4 * n, ni),
                         0);
        assert_int_equal(counts2[0], counts[0]);
        assert_int_equal(counts2[1], counts[1]);
        assert_int_equal(counts2[2], 0);
        assert_memory_equal(np, out, 4 * rs * n); /* still the poison */
        assert_memory_equal(ni, out, 4 * n);
        /* each atom on the same side (the order within a side is the atomics') */
        for (size_t k = 0; k < n; k++) {
            const int front = k < counts[0], behind = k >= n - counts[1];
            double w = rs == 8 ? ((double *)back2)[4 * k + 3] : ((float *)back2)[4 * k + 3];
            if (!front && !behind) {
                assert_true(isnan(w));
                continue;
            }
            size_t s2 = (size_t)w;
            assert_true(s2 < n && seen[s2] == 1);
            seen[s2] = 2;
            const double *p = x + 4 * s2;
            double q0 = rs == 8 ? p[0] : (double)(float)p[0], q2 = rs == 8 ? p[2] : (double)(float)p[2];
            assert_int_equal(q0 >= 2 && q0 < 8 && q2 >= 2 && q2 < 8, front);
        }
        free(np), free(ni), free(back2);
    }
    cp_release_mem(&npos), cp_release_mem(&nidx);
    /* arrive: na random records to the four arrays from `at` on, nothing
     * else written */
    {
        cl_kernel ka;
        assert_int_equal(cp_kernel(ctx, pr, "md_arrive", &ka), CLPHYS_SUCCESS);
        const cl_uint na = 77, at = 123;
        for (size_t b = 0; b < rb * na; b++) recs[b] = (unsigned char)(tu_uniform(&rng) * 256);
        for (size_t q = 0; q < na; q++) /* finite reals: compared bit for bit anyway */
            for (int c = 0; c < 8; c++) {
                unsigned char *e = recs + rb * q + (size_t)c * rs;
                if (rs == 8) {
                    double d = tu_uniform(&rng);
                    memcpy(e, &d, 8);
                } else {
                    float f = (float)tu_uniform(&rng);
                    memcpy(e, &f, 4);
                }
            }
        assert_int_equal(cp_write(ctx, mig, 0, rb * na, recs), 0);
        memset(out, 0xff, 4 * rs * n);
        cl_mem dst[4] = {pos_o, vel_o, img_o, tag_o};
        const size_t esz[4] = {4 * rs, 4 * rs, 16, 16}, eoff[4] = {0, 4 * rs, 8 * rs, 8 * rs + 16};
        for (int a = 0; a < 4; a++) assert_int_equal(cp_write(ctx, dst[a], 0, esz[a] * 300, out), 0);
        assert_int_equal(
            CP_ARGS(ctx, ka, mig, mig, na, at, pos_o, vel_o, img_o, tag_o) | cp_launch(ctx, ka, 1, &g, NULL, NULL), 0);
        unsigned char *got = malloc(4 * rs * 300);
        for (int a = 0; a < 4; a++) {
            assert_int_equal(cp_read(ctx, dst[a], 0, esz[a] * 300, got), 0);
            for (size_t k = 0; k < 300; k++) {
                if (k >= at && k < at + na)
                    assert_memory_equal(got + esz[a] * k, recs + rb * (k - at) + eoff[a], esz[a]);
                else
                    for (size_t b = 0; b < esz[a]; b++) assert_int_equal(got[esz[a] * k + b], 0xff);
            }
        }
        free(got);
        cp_release_kernel(&ka);
    }
    cp_release_mem(&mig);
    free(recs);
    /* iota; bind (inv[perm[s]] = s, tag[s] = tag_in[perm[s]], the four
     * counters zeroed); map (both lists: idx[k] = inv[idx[k]]) */
    cl_uint *u = malloc(4 * n);
    memset(u, 0xff, 4 * n);
    assert_int_equal(cp_write(ctx, ix, 0, 4 * n, u), 0);
    assert_int_equal(CP_ARGS(ctx, ki, ix, nn) | cp_launch(ctx, ki, 1, &g, NULL, NULL), 0);
    assert_int_equal(cp_read(ctx, ix, 0, 4 * n, u), 0);
    for (size_t k = 0; k < n; k++) assert_int_equal(u[k], k);
    cl_mem inv, ix2;
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &inv), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &ix2), 0);
    memset(u, 0xff, 4 * n);
    assert_int_equal(
        cp_write(ctx, inv, 0, 4 * n, u) | cp_write(ctx, tag_o, 0, 16 * n, out) | cp_write(ctx, cnt, 0, 16, u), 0);
    assert_int_equal(CP_ARGS(ctx, kv, pm, nn, inv, tag, tag_o, cnt) | cp_launch(ctx, kv, 1, &g, NULL, NULL), 0);
    {
        cl_int *tb = malloc(16 * n);
        cl_uint c4[4];
        assert_int_equal(cp_read(ctx, tag_o, 0, 16 * n, tb) | cp_read(ctx, cnt, 0, 16, c4), 0);
        for (size_t s2 = 0; s2 < n; s2++) assert_memory_equal(tb + 4 * s2, im + 4 * perm[s2], 16);
        for (int c = 0; c < 4; c++) assert_int_equal(c4[c], 0);
        free(tb);
    }
    const cl_uint ns2 = 611, nb2 = 300; /* the send list's length, the receive list's */
    for (size_t k = 0; k < n; k++) idx[k] = (cl_uint)((k * 7919) % n);
    assert_int_equal(cp_write(ctx, ix, 0, 4 * n, idx) | cp_write(ctx, ix2, 0, 4 * n, idx), 0);
    assert_int_equal(CP_ARGS(ctx, km, inv, ix, ns2, ix2, nb2) | cp_launch(ctx, km, 1, &g, NULL, NULL), 0);
    assert_int_equal(cp_read(ctx, ix, 0, 4 * n, u), 0);
    for (size_t k = 0; k < n; k++) assert_int_equal(k < ns2 ? perm[u[k]] : u[k], idx[k]);
    assert_int_equal(cp_read(ctx, ix2, 0, 4 * n, u), 0);
    for (size_t k = 0; k < n; k++) assert_int_equal(k < nb2 ? perm[u[k]] : u[k], idx[k]);
    cp_release_mem(&ix2);
    /* ghost_fill: velocity (0, 0, 0, 1), image and tag 0 for a stretch of
     * poisoned arrays, nothing written outside it */
    {
        cl_kernel kf;
        assert_int_equal(cp_kernel(ctx, pr, "md_ghost_fill", &kf), CLPHYS_SUCCESS);
        const cl_uint ffirst = 17 + (cl_uint)(tu_uniform(&rng) * 100), fn = 1 + (cl_uint)(tu_uniform(&rng) * 500);
        memset(out, 0xff, 4 * rs * n);
        assert_int_equal(cp_write(ctx, vel_o, 0, 4 * rs * n, out) | cp_write(ctx, img_o, 0, 16 * n, out) |
                             cp_write(ctx, tag_o, 0, 16 * n, out),
                         0);
        assert_int_equal(CP_ARGS(ctx, kf, vel_o, img_o, tag_o, ffirst, fn) | cp_launch(ctx, kf, 1, &g, NULL, NULL), 0);
        unsigned char *vb = malloc(4 * rs * n), *ib = malloc(16 * n), *tb = malloc(16 * n);
        assert_int_equal(cp_read(ctx, vel_o, 0, 4 * rs * n, vb) | cp_read(ctx, img_o, 0, 16 * n, ib) |
                             cp_read(ctx, tag_o, 0, 16 * n, tb),
                         0);
        const double one = 1;
        const float onef = 1;
        for (size_t k = 0; k < n; k++) {
            const int in = k >= ffirst && k < ffirst + fn;
            for (size_t b = 0; b < 16; b++) {
                assert_int_equal(ib[16 * k + b], in ? 0 : 0xff);
                assert_int_equal(tb[16 * k + b], in ? 0 : 0xff);
            }
            for (size_t b = 0; b < 4 * rs; b++) {
                unsigned char want = 0xff;
                if (in) {
                    const unsigned char *w = rs == 8 ? (const unsigned char *)&one : (const unsigned char *)&onef;
                    want = b < 3 * rs ? 0 : w[b - 3 * rs];
                }
                assert_int_equal(vb[4 * rs * k + b], want);
            }
        }
        free(vb), free(ib), free(tb);
        cp_release_kernel(&kf);
    }
    /* places: slot[off + k] = first + k for a random stretch of a poisoned
     * list, nothing written outside it */
    cl_kernel kpl;
    assert_int_equal(cp_kernel(ctx, pg, "md_ghost_places", &kpl), CLPHYS_SUCCESS);
    const cl_uint poff = 1 + (cl_uint)(tu_uniform(&rng) * 100), pn = 1 + (cl_uint)(tu_uniform(&rng) * 800);
    const cl_uint pfirst = 5000 + (cl_uint)(tu_uniform(&rng) * 1000);
    memset(u, 0xff, 4 * n);
    assert_int_equal(cp_write(ctx, ix, 0, 4 * n, u), 0);
    assert_int_equal(CP_ARGS(ctx, kpl, ix, poff, pfirst, pn) | cp_launch(ctx, kpl, 1, &g, NULL, NULL), 0);
    assert_int_equal(cp_read(ctx, ix, 0, 4 * n, u), 0);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(u[k], k >= poff && k < poff + pn ? pfirst + (k - poff) : 0xffffffffu);
    cp_release_kernel(&kpl);
    cl_mem ms[] = {pos, vel, img, tag, pm, ix, buf, pos_o, vel_o, img_o, tag_o, cnt, inv};
    for (size_t k = 0; k < sizeof ms / sizeof *ms; k++) cp_release_mem(&ms[k]);
    cl_kernel ks[] = {kp, ku, kc, ki, kv, km, ksel};
    for (size_t k = 0; k < sizeof ks / sizeof *ks; k++) cp_release_kernel(&ks[k]);
    free(x), free(perm), free(idx), free(im), free(xr), free(out), free(back), free(packed), free(tg), free(seen),
        free(u);
}

/* md_ghost_borders, _pack and _lists (cl/md_ghost.cl) against the host on
 * fresh random positions, outputs poisoned: of the atoms before the
 * staying count (counts[0], read on the device; the launch covers more),
 * those below the lower face along dim listed once in idx0, those at or
 * above the upper one in idx1 (both where they overlap), counted in
 * counts[2] and counts[3]; past room1 counted, not written; their
 * positions packed as the step's pack does; the send lists, places and
 * ghosts' positions after the messages. */
static void borders_in(clphys_precision prec)
{
    const size_t n = 1000, rs = prec == CLPHYS_FP64 ? 8 : 4;
    const cl_uint nstay = 700, room0 = (cl_uint)n, room1 = 40;
    cp_defines opt = {0};
    assert_int_equal(cp_define_precision(ctx, &opt, prec), CLPHYS_SUCCESS);
    cl_program pg;
    assert_int_equal(cp_program(ctx, &clsrc_md_ghost_cl, &opt, &pg), CLPHYS_SUCCESS);
    cl_kernel kb;
    assert_int_equal(cp_kernel(ctx, pg, "md_ghost_borders", &kb), CLPHYS_SUCCESS);
    uint64_t rng = tu_rng_init(47 + (uint64_t)prec);
    double *x = malloc(4 * n * sizeof *x);
    void *xr = malloc(4 * rs * n);
    for (size_t k = 0; k < 4 * n; k++) {
        x[k] = 10 * tu_uniform(&rng);
        if (rs == 8)
            ((double *)xr)[k] = x[k];
        else
            ((float *)xr)[k] = (float)x[k], x[k] = (double)(float)x[k];
    }
    /* faces 5.5 and 4.5: an atom between them lies near both */
    const double flo = 5.5, fhi = 4.5;
    const float flof = (float)flo, fhif = (float)fhi;
    const cl_int dim = 1;
    cl_uint *idx = malloc(4 * n), counts[4] = {nstay, 12345, 0, 0};
    memset(idx, 0xff, 4 * n);
    cl_mem pos, i0, i1, cnt;
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * rs * n, NULL, &pos), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &i0), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &i1), 0);
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 16, NULL, &cnt), 0);
    assert_int_equal(cp_write(ctx, pos, 0, 4 * rs * n, xr) | cp_write(ctx, i0, 0, 4 * n, idx) |
                         cp_write(ctx, i1, 0, 4 * n, idx) | cp_write(ctx, cnt, 0, 16, counts),
                     0);
    const cl_uint nn = (cl_uint)n;
    const int dbl = rs == 8;
    assert_int_equal(
        CP_ARGS(ctx, kb, pos, nn, cnt, dim, CP_EITHER(dbl, flo, flof), CP_EITHER(dbl, fhi, fhif), i0, room0, i1, room1),
        0);
    size_t g = md_global(n, 64);
    assert_int_equal(cp_launch(ctx, kb, 1, &g, NULL, NULL), 0);
    cl_uint *l0 = malloc(4 * n), *l1 = malloc(4 * n);
    assert_int_equal(cp_read(ctx, cnt, 0, 16, counts) | cp_read(ctx, i0, 0, 4 * n, l0) | cp_read(ctx, i1, 0, 4 * n, l1),
                     0);
    size_t want[2] = {0, 0};
    for (size_t i = 0; i < nstay; i++) want[0] += x[4 * i + 1] < flo, want[1] += x[4 * i + 1] >= fhi;
    assert_int_equal(counts[0], nstay);
    assert_int_equal(counts[1], 12345);
    assert_int_equal(counts[2], want[0]);
    assert_int_equal(counts[3], want[1]);
    assert_true(want[0] > 0 && want[1] > room1);
    char *once = calloc(n, 1);
    for (size_t k = 0; k < n; k++) {
        if (k >= want[0]) {
            assert_int_equal(l0[k], 0xffffffffu);
            continue;
        }
        assert_true(l0[k] < nstay && !once[l0[k]] && x[4 * l0[k] + 1] < flo);
        once[l0[k]] = 1;
    }
    memset(once, 0, n);
    for (size_t k = 0; k < n; k++) {
        if (k >= room1) {
            assert_int_equal(l1[k], 0xffffffffu);
            continue;
        }
        assert_true(l1[k] < nstay && !once[l1[k]] && x[4 * l1[k] + 1] >= fhi);
        once[l1[k]] = 1;
    }
    /* borders_pack: with room for both lists (room1 raised, the counts
     * left as they are) the positions of l0's atoms, then l1's, shifted
     * (exact in the precision); nothing past them; nothing at all where a
     * list overflowed (room1 as above) or both exceed room0 */
    cl_kernel kbp, kbl;
    assert_int_equal(cp_kernel(ctx, pg, "md_ghost_borders_pack", &kbp), CLPHYS_SUCCESS);
    assert_int_equal(cp_kernel(ctx, pg, "md_ghost_borders_lists", &kbl), CLPHYS_SUCCESS);
    const double d0[4] = {0, 1.5, 0, 0}, d1[4] = {0, -2.25, 0, 0};
    const float f0[4] = {0, 1.5f, 0, 0}, f1[4] = {0, -2.25f, 0, 0};
    const size_t a0 = counts[2], a1 = counts[3], na = a0 + a1;
    cl_mem buf;
    assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 3 * rs * n, NULL, &buf), 0);
    void *packed = malloc(3 * rs * n);
    /* the full list of the upper face for the pack's source */
    cl_uint room1b = (cl_uint)n, zero4[4] = {nstay, 0, 0, 0};
    assert_int_equal(cp_write(ctx, cnt, 0, 16, zero4), 0);
    assert_int_equal(CP_ARGS(ctx, kb, pos, nn, cnt, dim, CP_EITHER(dbl, flo, flof), CP_EITHER(dbl, fhi, fhif), i0,
                             room0, i1, room1b),
                     0);
    assert_int_equal(cp_launch(ctx, kb, 1, &g, NULL, NULL), 0);
    assert_int_equal(cp_read(ctx, i1, 0, 4 * n, l1) | cp_read(ctx, i0, 0, 4 * n, l0), 0);
    for (int trial = 0; trial < 3; trial++) {
        /* room0 n: all packed; room1 a1 - 1: a list short; room0 na - 1:
         * the buffer short */
        const cl_uint r0 = trial == 2 ? (cl_uint)na - 1 : (cl_uint)n, r1 = trial == 1 ? (cl_uint)a1 - 1 : (cl_uint)n;
        memset(packed, 0xff, 3 * rs * n);
        assert_int_equal(cp_write(ctx, buf, 0, 3 * rs * n, packed), 0);
        assert_int_equal(
            CP_ARGS(ctx, kbp, pos, i0, i1, cnt, r0, r1, CP_EITHER(dbl, d0, f0), CP_EITHER(dbl, d1, f1), buf), 0);
        assert_int_equal(cp_launch(ctx, kbp, 1, &g, NULL, NULL), 0);
        assert_int_equal(cp_read(ctx, buf, 0, 3 * rs * n, packed), 0);
        for (size_t k = 0; k < n; k++)
            for (int c = 0; c < 3; c++) {
                const unsigned char *b = (const unsigned char *)packed + rs * (3 * k + (size_t)c);
                if (trial || k >= na) {
                    for (size_t q = 0; q < rs; q++) assert_int_equal(b[q], 0xff);
                    continue;
                }
                const cl_uint i = k < a0 ? l0[k] : l1[k - a0];
                const double sh = c == 1 ? (k < a0 ? 1.5 : -2.25) : 0;
                const double want = rs == 8 ? x[4 * i + c] + sh : (double)((float)x[4 * i + c] + (float)sh);
                const double got = rs == 8 ? *(const double *)(const void *)b : *(const float *)(const void *)b;
                assert_true(got == want);
            }
    }
    /* borders_lists: idx [a0 in place][nb0 from first0][a1 from idx1][nb1
     * from first1], slot[k] = nown + k and pos[nown + k] = (buf[k], w) for
     * the ng ghosts; nothing else written */
    {
        const cl_uint nb0 = 7, nb1 = 11, first0 = 900, first1 = 950, nown2 = 600, ng = 250;
        const double gw = -2;
        const float gwf = -2;
        cl_uint *want = malloc(4 * n), *got = malloc(4 * n), *slot = malloc(4 * n);
        memset(want, 0xff, 4 * n);
        for (size_t k = 0; k < a0; k++) want[k] = l0[k];
        for (cl_uint k = 0; k < nb0; k++) want[a0 + k] = first0 + k;
        for (size_t k = 0; k < a1; k++) want[a0 + nb0 + k] = l1[k];
        for (cl_uint k = 0; k < nb1; k++) want[a0 + nb0 + a1 + k] = first1 + k;
        memset(got, 0xff, 4 * n);
        memcpy(got, l0, 4 * a0);
        memset(slot, 0xff, 4 * n);
        cl_mem sl;
        assert_int_equal(cp_buffer(ctx, CL_MEM_READ_WRITE, 4 * n, NULL, &sl), 0);
        assert_int_equal(cp_write(ctx, i0, 0, 4 * n, got) | cp_write(ctx, sl, 0, 4 * n, slot), 0);
        /* positions: buf the packed ones above (trial 0's layout, re-made) */
        for (size_t k = 0; k < 3 * n; k++) {
            if (rs == 8)
                ((double *)packed)[k] = 100 + (double)k;
            else
                ((float *)packed)[k] = 100 + (float)k;
        }
        void *pp = malloc(4 * rs * n);
        memset(pp, 0xff, 4 * rs * n);
        assert_int_equal(cp_write(ctx, buf, 0, 3 * rs * n, packed) | cp_write(ctx, pos, 0, 4 * rs * n, pp), 0);
        const cl_uint ua0 = (cl_uint)a0, ua1 = (cl_uint)a1;
        assert_int_equal(CP_ARGS(ctx, kbl, i0, i1, ua0, ua1, nb0, first0, nb1, first1, sl, pos, nown2, ng, buf,
                                 CP_EITHER(dbl, gw, gwf)),
                         0);
        size_t m = md_global(a1 > ng ? a1 : ng, 64);
        assert_int_equal(cp_launch(ctx, kbl, 1, &m, NULL, NULL), 0);
        assert_int_equal(cp_read(ctx, i0, 0, 4 * n, got) | cp_read(ctx, sl, 0, 4 * n, slot) |
                             cp_read(ctx, pos, 0, 4 * rs * n, pp),
                         0);
        assert_memory_equal(got, want, 4 * n);
        for (size_t k = 0; k < n; k++) {
            assert_int_equal(slot[k], k < ng ? nown2 + (cl_uint)k : 0xffffffffu);
            const int ghost = k >= nown2 && k < nown2 + ng;
            for (int c = 0; c < 4; c++) {
                const unsigned char *b = (const unsigned char *)pp + rs * (4 * k + (size_t)c);
                if (!ghost) {
                    for (size_t q = 0; q < rs; q++) assert_int_equal(b[q], 0xff);
                    continue;
                }
                const double v = rs == 8 ? *(const double *)(const void *)b : *(const float *)(const void *)b;
                assert_true(v == (c == 3 ? -2 : 100 + (double)(3 * (k - nown2) + (size_t)c)));
            }
        }
        cp_release_mem(&sl);
        free(want), free(got), free(slot), free(pp);
    }
    cl_mem ms[] = {pos, i0, i1, cnt, buf};
    for (size_t k = 0; k < 5; k++) cp_release_mem(&ms[k]);
    cp_release_kernel(&kb), cp_release_kernel(&kbp), cp_release_kernel(&kbl);
    free(x), free(xr), free(idx), free(l0), free(l1), free(once), free(packed);
}

static void test_kernels(void **state)
{
    (void)state;
    kernels_in(CLPHYS_FP32);
    borders_in(CLPHYS_FP32);
    if (clphys_context_device(ctx)->fp64) kernels_in(CLPHYS_FP64), borders_in(CLPHYS_FP64);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_kernels)};
    return tu_run_group(tests, .ctx = &ctx, .nctx = 1);
}
