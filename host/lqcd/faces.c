/* faces.c — what the two exchanges of a split lattice share (halo.c over
 * MPI ranks, multi.c over the devices of one process): the face geometry,
 * the list of sites with a remote neighbour, the backward hops' links in
 * device form, the launches of halo_pack and halo_exterior
 * (cl/lqcd_dslash.cl, whose face numbering and layouts these follow) and
 * a hop's timing split. */
#include "lqcd_internal.h"

#include <stdlib.h>

clphys_status lqcd_faces_init(clphys_lqcd_dslash_plan *pl, lqcd_faces *f)
{
    clphys_context *ctx = pl->ctx;
    f->face_all = 0;
    for (int mu = 0; mu < 4; mu++) {
        f->face_before[mu] = f->face_all;
        f->face_n[mu] = pl->grid[mu] > 1 ? pl->vol / (size_t)pl->dims[mu] / 2 : 0;
        f->face_all += f->face_n[mu];
    }
    uint32_t *list = malloc(pl->vol * sizeof *list);
    if (!list) return cp_error(ctx, CLPHYS_ERR_OUT_OF_MEMORY, "halo: face-site list");
    size_t n = 0;
    for (int p = 0; p < 2; p++) {
        for (size_t cb = 0; cb < pl->vh; cb++) {
            int c[4];
            size_t r = 2 * cb;
            for (int mu = 0; mu < 4; mu++) c[mu] = (int)(r % (size_t)pl->dims[mu]), r /= (size_t)pl->dims[mu];
            c[0] += (c[1] + c[2] + c[3] + c[0] + p) & 1; /* the site of parity p in the pair */
            int face = 0;
            for (int mu = 0; mu < 4; mu++) face |= f->face_n[mu] && (c[mu] == 0 || c[mu] == pl->dims[mu] - 1);
            if (face) list[n++] = (uint32_t)((size_t)p * pl->vh + cb);
        }
        f->nlist[p] = n - (p ? f->nlist[0] : 0);
    }
    clphys_status st = cp_buffer(ctx, CL_MEM_READ_ONLY, (n ? n : 1) * sizeof *list, list, &f->list);
    free(list);
    return st;
}

void lqcd_ghost_store(const clphys_lqcd_dslash_plan *pl, const lqcd_faces *f, int mu, const double *links, void *dev)
{
    const int nc = pl->p.reconstruct == 12 ? 6 : 9;
    const size_t fn = f->face_n[mu], base = (size_t)nc * 2 * f->face_before[mu];
    for (size_t e = 0; e < 2 * fn; e++)
        for (int k = 0; k < nc; k++) {
            const size_t ci = base + (size_t)k * 2 * fn + e;
            lqcd_put_real(dev, pl->real_size, 2 * ci, links[e * 18 + 2 * k]);
            lqcd_put_real(dev, pl->real_size, 2 * ci + 1, links[e * 18 + 2 * k + 1]);
        }
}

size_t lqcd_ghost_bytes(const clphys_lqcd_dslash_plan *pl, const lqcd_faces *f)
{
    const size_t ng = 2 * f->face_all;
    return (ng ? ng : 1) * (size_t)(pl->p.reconstruct == 12 ? 6 : 9) * 2 * pl->real_size;
}

size_t lqcd_face_entry_bytes(const clphys_lqcd_dslash_plan *pl)
{
    return pl->halo_half ? 12 * 2 + 4 : 12 * pl->real_size;
}

size_t lqcd_face_block(const clphys_lqcd_dslash_plan *pl, const lqcd_faces *f, int mu, int side, size_t nq,
                       size_t *bytes)
{
    const size_t eb = lqcd_face_entry_bytes(pl);
    if (bytes) *bytes = nq * f->face_n[mu] * eb;
    return nq * (2 * f->face_before[mu] + (size_t)side * f->face_n[mu]) * eb;
}

clphys_status lqcd_pack_launch(clphys_lqcd_dslash_plan *pl, cl_mem send, cl_mem in, int parity, int g5, size_t nent,
                               cl_event *ev)
{
    clphys_context *ctx = pl->ctx;
    const int in_parity = parity < 0 ? -1 : 1 - parity, g5in = g5 == 1;
    CP_TRY(CP_ARGS(ctx, pl->pack, send, in, in_parity, g5in));
    return cp_launch_ev(ctx, pl->pack, 1, &nent, NULL, ev);
}

clphys_status lqcd_exterior_launch(clphys_lqcd_dslash_plan *pl, const lqcd_faces *f, cl_mem out, cl_mem recv,
                                   cl_mem ghost, cl_mem x, double a, int parity, int g5, size_t *nsites, cl_event *ev)
{
    clphys_context *ctx = pl->ctx;
    const int p0 = parity < 0 ? 0 : parity;
    const cl_uint first = (cl_uint)(p0 == 1 ? f->nlist[0] : 0),
                  n = (cl_uint)(parity < 0 ? f->nlist[0] + f->nlist[1] : f->nlist[p0]);
    cl_kernel ke = pl->ext[g5 == 2];
    const int xpay = x != NULL;
    *nsites = n;
    const float af = (float)a;
    lqcd_phases ph;
    cp_karg phase[2];
    lqcd_phase_args(pl, &ph, phase);
    CP_TRY(CP_ARGS(ctx, ke, out, recv, pl->gauge, ghost, f->list, first, n, CP_EITHER(pl->real_size == 8, a, af), xpay,
                   parity, phase[0], phase[1]));
    const size_t gext = n;
    return cp_launch_ev(ctx, ke, 1, &gext, NULL, ev);
}

static double seconds_of(cl_event ev)
{
    const double s = ev ? cp_event_seconds(ev) : 0;
    return s > 0 ? s : 0;
}

/* The copies' span on the device clock: the first download starting to
 * the last upload ending (0 where a time is missing). */
static double copies_span(const lqcd_hop_events *ev)
{
    double first = 0, last = 0, s, e;
    for (int b = 0; b < ev->ncopies; b++) {
        if (ev->d2h[b] && !cp_event_times(ev->d2h[b], &s, &e) && (first == 0 || s < first)) first = s;
        if (ev->h2d[b] && !cp_event_times(ev->h2d[b], &s, &e) && e > last) last = e;
    }
    return first > 0 && last > first ? last - first : 0;
}

clphys_status lqcd_hop_times(const clphys_lqcd_dslash_plan *pl, int parity, const lqcd_hop_events *ev, double *kernel_s,
                             clphys_lqcd_dslash_split *split)
{
    if (!kernel_s && !split) return CLPHYS_SUCCESS;
    CP_TRY(cp_wait_all(pl->ctx, 1, &ev->exterior));
    const double ti = seconds_of(ev->interior), tp = seconds_of(ev->pack), te = seconds_of(ev->exterior);
    if (kernel_s) *kernel_s += ti + tp + te;
    if (!split) return CLPHYS_SUCCESS;
    double s0, e_int, s_ext, e1;
    split->interior_s += ti, split->pack_s += tp, split->exterior_s += te;
    for (int b = 0; b < ev->ncopies; b++)
        split->d2h_s += seconds_of(ev->d2h[b]), split->h2d_s += seconds_of(ev->h2d[b]);
    split->mpi_s += ev->exchange_s < 0 ? copies_span(ev) : ev->exchange_s;
    if (ev->interior && ev->exterior && !cp_event_times(ev->interior, &s0, &e_int) &&
        !cp_event_times(ev->exterior, &s_ext, &e1) && s_ext > e_int)
        split->exposed_s += s_ext - e_int;
    split->halo_bytes += ev->bytes;
    split->messages += ev->messages;
    split->hops++;
    split->sites += parity < 0 ? pl->vol : pl->vh;
    split->face_sites += ev->face_sites;
    return CLPHYS_SUCCESS;
}
