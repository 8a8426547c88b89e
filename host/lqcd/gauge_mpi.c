/* gauge_mpi.c — host fields over a process grid (include/clphys_lqcd_mpi.h):
 * gauge fields and spinors scattered from and gathered to one rank, a file
 * read once on rank 0, the plaquette and link trace of the whole lattice
 * from the ranks' sublattices. */
#include "lqcd_mpi_internal.h"
#include "lqcd_su3.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

clphys_status lqcd_grid_check(MPI_Comm comm, const int grid[4], const int ldims[4], int coord[4])
{
    int rank, size;
    CP_MPI(NULL, MPI_Comm_rank(comm, &rank));
    CP_MPI(NULL, MPI_Comm_size(comm, &size));
    if (!grid) return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "process grid: NULL");
    long long n = 1;
    for (int mu = 0; mu < 4; mu++) n *= grid[mu] > 0 ? grid[mu] : 0;
    if (n != size)
        return cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                        "process grid %dx%dx%dx%d has %lld ranks, the communicator %d", grid[0], grid[1], grid[2],
                        grid[3], n, size);
    int dims[4];
    for (int mu = 0; mu < 4; mu++) dims[mu] = ldims[mu] * grid[mu];
    return clphys_lqcd_grid_local(dims, grid, rank, NULL, coord);
}

#define PIECE ((size_t)1 << 28)

int lqcd_sendrecv_doubles(MPI_Comm comm, const double *send, int to, double *recv, int from, size_t n, int tag)
{
    int e = MPI_SUCCESS;
    for (size_t off = 0; off < n && e == MPI_SUCCESS; off += PIECE) {
        const int k = (int)(n - off < PIECE ? n - off : PIECE);
        e = MPI_Sendrecv(send + off, k, MPI_DOUBLE, to, tag, recv + off, k, MPI_DOUBLE, from, tag, comm,
                         MPI_STATUS_IGNORE);
    }
    return e;
}

static int send_doubles(MPI_Comm comm, const double *buf, size_t n, int to, int tag)
{
    int e = MPI_SUCCESS;
    for (size_t off = 0; off < n && e == MPI_SUCCESS; off += PIECE)
        e = MPI_Send(buf + off, (int)(n - off < PIECE ? n - off : PIECE), MPI_DOUBLE, to, tag, comm);
    return e;
}

static int recv_doubles(MPI_Comm comm, double *buf, size_t n, int from, int tag)
{
    int e = MPI_SUCCESS;
    for (size_t off = 0; off < n && e == MPI_SUCCESS; off += PIECE)
        e = MPI_Recv(buf + off, (int)(n - off < PIECE ? n - off : PIECE), MPI_DOUBLE, from, tag, comm,
                     MPI_STATUS_IGNORE);
    return e;
}

/* Copy the per-site values (per doubles each) of the sublattice at coord
 * between the whole lattice and the sublattice's own array. */
static void copy_block(const int gdims[4], const int ldims[4], const int coord[4], size_t per, double *whole,
                       double *part, int to_part)
{
    const size_t lv = (size_t)ldims[0] * ldims[1] * ldims[2] * ldims[3];
#pragma omp parallel for schedule(static)
    for (size_t l = 0; l < lv; l++) {
        size_t r = l, g = 0, stride = 1;
        for (int mu = 0; mu < 4; mu++) {
            g += ((size_t)coord[mu] * (size_t)ldims[mu] + r % (size_t)ldims[mu]) * stride;
            r /= (size_t)ldims[mu];
            stride *= (size_t)gdims[mu];
        }
        if (to_part)
            memcpy(part + l * per, whole + g * per, per * sizeof(double));
        else
            memcpy(whole + g * per, part + l * per, per * sizeof(double));
    }
}

/* Scatter (to_part) or gather per-site arrays of the lattice gdims between
 * root's whole array and every rank's part, one message per rank. */
static clphys_status move_blocks(MPI_Comm c, const int grid[4], const int gdims[4], int root, size_t per, double *whole,
                                 double *part, int to_part)
{
    int rank, size, ldims[4], coord[4];
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    CP_TRY(clphys_lqcd_grid_local(gdims, grid, 0, ldims, NULL));
    const size_t n = (size_t)ldims[0] * ldims[1] * ldims[2] * ldims[3] * per;
    int e = MPI_SUCCESS;
    if (rank != root) {
        e = to_part ? recv_doubles(c, part, n, root, 11) : send_doubles(c, part, n, root, 11);
    } else {
        double *tmp = size > 1 ? malloc(n * sizeof(double)) : NULL;
        if (size > 1 && !tmp) return cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "scatter: %zu doubles", n);
        for (int r = 0; r < size && e == MPI_SUCCESS; r++) {
            clphys_lqcd_grid_local(gdims, grid, r, NULL, coord);
            if (r == root) {
                copy_block(gdims, ldims, coord, per, whole, part, to_part);
            } else if (to_part) {
                copy_block(gdims, ldims, coord, per, whole, tmp, 1);
                e = send_doubles(c, tmp, n, r, 11);
            } else if ((e = recv_doubles(c, tmp, n, r, 11)) == MPI_SUCCESS) {
                copy_block(gdims, ldims, coord, per, whole, tmp, 0);
            }
        }
        free(tmp);
    }
    return e == MPI_SUCCESS ? CLPHYS_SUCCESS : cp_mpi_error(NULL, e, to_part ? "scatter" : "gather");
}

/* The first checks of a scatter or gather, agreed: arguments on every
 * rank, root's data, the lattice's extents broadcast from root. */
static clphys_status begin(MPI_Comm c, const int grid[4], int root, int ok_here, int ok_root, const int *root_dims,
                           int gdims[4], const char *what)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    clphys_status st = CLPHYS_SUCCESS;
    if (!ok_here || !grid || root < 0 || root >= size)
        st = cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "%s: NULL argument or root %d outside 0..%d", what, root,
                      size - 1);
    else if (rank == root && !ok_root)
        st = cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "%s: no data on the root rank %d", what, root);
    CP_TRY(cp_mpi_agree(c, NULL, st));
    if (rank == root) memcpy(gdims, root_dims, 4 * sizeof(int));
    CP_MPI(NULL, MPI_Bcast(gdims, 4, MPI_INT, root, c));
    long long n = 1;
    for (int mu = 0; mu < 4; mu++) n *= grid[mu] > 0 ? grid[mu] : 0;
    if (n != size)
        st = cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT,
                      "%s: process grid %dx%dx%dx%d has %lld ranks, the communicator %d", what, grid[0], grid[1],
                      grid[2], grid[3], n, size);
    else
        st = clphys_lqcd_grid_local(gdims, grid, rank, NULL, NULL);
    return cp_mpi_agree(c, NULL, st);
}

clphys_status clphys_lqcd_gauge_scatter(MPI_Comm comm, const int grid[4], int root,
                                        const clphys_lqcd_gauge_field *global, clphys_lqcd_gauge_field *local)
{
    MPI_Comm c;
    CP_TRY(cp_mpi_dup(comm, NULL, &c));
    if (local) memset(local, 0, sizeof *local);
    int gdims[4] = {0}, ldims[4];
    clphys_status st =
        begin(c, grid, root, local != NULL, global && global->u, global ? global->dims : gdims, gdims, "gauge scatter");
    if (!st) {
        clphys_lqcd_grid_local(gdims, grid, 0, ldims, NULL);
        st = cp_mpi_agree(c, NULL, clphys_lqcd_gauge_create(ldims, local));
    }
    if (!st) st = cp_mpi_agree(c, NULL, move_blocks(c, grid, gdims, root, 72, global ? global->u : NULL, local->u, 1));
    if (st && local) clphys_lqcd_gauge_destroy(local);
    MPI_Comm_free(&c);
    return st;
}

static clphys_status spinors(MPI_Comm comm, const int grid[4], const int dims[4], int root, double *global,
                             double *local, int to_part)
{
    MPI_Comm c;
    CP_TRY(cp_mpi_dup(comm, NULL, &c));
    int gdims[4] = {0};
    const char *what = to_part ? "spinor scatter" : "spinor gather";
    clphys_status st = begin(c, grid, root, local && dims, global && dims, dims, gdims, what);
    if (!st) st = cp_mpi_agree(c, NULL, move_blocks(c, grid, gdims, root, 24, global, local, to_part));
    MPI_Comm_free(&c);
    return st;
}

clphys_status clphys_lqcd_spinor_scatter(MPI_Comm comm, const int grid[4], const int dims[4], int root,
                                         const double *global, double *local)
{
    return spinors(comm, grid, dims, root, (double *)global, local, 1);
}

clphys_status clphys_lqcd_spinor_gather(MPI_Comm comm, const int grid[4], const int dims[4], int root,
                                        const double *local, double *global)
{
    return spinors(comm, grid, dims, root, global, (double *)local, 0);
}

clphys_status clphys_lqcd_gauge_read_mpi(MPI_Comm comm, const int grid[4], const char *file,
                                         clphys_lqcd_gauge_reader reader, clphys_lqcd_gauge_field *local, int dims[4])
{
    MPI_Comm c;
    CP_TRY(cp_mpi_dup(comm, NULL, &c));
    int rank;
    MPI_Comm_rank(c, &rank);
    clphys_lqcd_gauge_field g = {{0}, 0, NULL};
    clphys_status st = CLPHYS_SUCCESS;
    if (local) memset(local, 0, sizeof *local);
    if (!file || !local)
        st = cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "clphys_lqcd_gauge_read_mpi: NULL argument");
    else if (rank == 0)
        st = (reader ? reader : clphys_lqcd_gauge_read_nersc)(file, &g);
    st = cp_mpi_agree(c, NULL, st);
    if (!st) st = clphys_lqcd_gauge_scatter(c, grid, 0, &g, local);
    clphys_lqcd_gauge_destroy(&g);
    if (!st && dims)
        for (int mu = 0; mu < 4; mu++) dims[mu] = local->dims[mu] * grid[mu];
    MPI_Comm_free(&c);
    return st;
}

/* ---- plaquette -------------------------------------------------------------- */

/* U_nu at the site one step up in mu from lexicographic site x (coordinates
 * c): from the rank above when x is at the upper end of a split mu. */
static const double complex *link_up(const clphys_lqcd_gauge_field *g, double *const ghost[4], const int grid[4],
                                     size_t x, const int c[4], int mu, int nu)
{
    const double complex *u = (const double complex *)g->u;
    size_t stride = 1;
    for (int k = 0; k < mu; k++) stride *= (size_t)g->dims[k];
    if (c[mu] + 1 < g->dims[mu]) return u + ((x + stride) * 4 + (size_t)nu) * 9;
    if (grid[mu] == 1) return u + ((x - (size_t)c[mu] * stride) * 4 + (size_t)nu) * 9;
    return (const double complex *)(ghost[mu] + (lqcd_face_index(g->dims, c, mu, 0) * 4 + (size_t)nu) * 18);
}

clphys_status clphys_lqcd_gauge_plaquette_mpi(MPI_Comm comm, const int grid[4], const clphys_lqcd_gauge_field *local,
                                              double *plaquette, double *link_trace)
{
    MPI_Comm c;
    CP_TRY(cp_mpi_dup(comm, NULL, &c));
    int coord[4], up[4], down[4];
    double *ghost[4] = {NULL, NULL, NULL, NULL}, *send = NULL;
    clphys_status st = CLPHYS_SUCCESS;
    if (!local || !local->u) st = cp_error(NULL, CLPHYS_ERR_INVALID_ARGUMENT, "distributed plaquette: NULL field");
    st = cp_mpi_agree(c, NULL, st);
    if (!st) st = cp_mpi_agree(c, NULL, lqcd_grid_check(c, grid, local->dims, coord));
    if (!st) st = cp_mpi_same(c, NULL, local->dims, sizeof local->dims, "the local lattice extents");
    if (st) {
        MPI_Comm_free(&c);
        return st;
    }
    lqcd_grid_neighbours(grid, coord, up, down);
    const int *d = local->dims;
    const size_t V = local->volume;
    /* the x_mu = 0 face (all four links) to the rank below, its own from above */
    for (int mu = 0; mu < 4 && !st; mu++) {
        if (grid[mu] == 1) continue;
        const size_t nf = V / (size_t)d[mu];
        ghost[mu] = malloc(nf * 72 * sizeof(double));
        free(send);
        send = malloc(nf * 72 * sizeof(double));
        if (!ghost[mu] || !send) {
            st = cp_error(NULL, CLPHYS_ERR_OUT_OF_MEMORY, "distributed plaquette: faces");
            break;
        }
        for (size_t x = 0; x < V; x++) {
            int cx[4];
            size_t r = x;
            for (int k = 0; k < 4; k++) cx[k] = (int)(r % (size_t)d[k]), r /= (size_t)d[k];
            if (cx[mu] == 0) memcpy(send + lqcd_face_index(d, cx, mu, 0) * 72, local->u + x * 72, 72 * sizeof(double));
        }
        int e = lqcd_sendrecv_doubles(c, send, down[mu], ghost[mu], up[mu], nf * 72, 20 + mu);
        if (e != MPI_SUCCESS) st = cp_mpi_error(NULL, e, "distributed plaquette: link faces");
    }
    st = cp_mpi_agree(c, NULL, st);
    double sums[2] = {0, 0};
    if (!st) {
        const double complex *u = (const double complex *)local->u;
        double plaq = 0, tr = 0;
#pragma omp parallel for schedule(static) reduction(+ : plaq, tr)
        for (size_t x = 0; x < V; x++) {
            int cx[4];
            size_t r = x;
            for (int k = 0; k < 4; k++) cx[k] = (int)(r % (size_t)d[k]), r /= (size_t)d[k];
            for (int mu = 0; mu < 4; mu++) {
                const double complex *um = u + (x * 4 + (size_t)mu) * 9;
                tr += creal(um[0] + um[4] + um[8]);
                for (int nu = mu + 1; nu < 4; nu++) {
                    double complex a[9], b[9], m[9];
                    lqcd_su3_mul(a, um, link_up(local, ghost, grid, x, cx, mu, nu));
                    lqcd_su3_mul_dag(b, a, link_up(local, ghost, grid, x, cx, nu, mu));
                    lqcd_su3_mul_dag(m, b, u + (x * 4 + (size_t)nu) * 9);
                    plaq += creal(m[0] + m[4] + m[8]);
                }
            }
        }
        sums[0] = plaq, sums[1] = tr;
        int e = MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, c);
        st = cp_mpi_agree(c, NULL, e == MPI_SUCCESS ? CLPHYS_SUCCESS : cp_mpi_error(NULL, e, "MPI_Allreduce"));
    }
    const double gv = (double)V * grid[0] * grid[1] * grid[2] * grid[3];
    if (!st && plaquette) *plaquette = sums[0] / (3.0 * 6.0 * gv);
    if (!st && link_trace) *link_trace = sums[1] / (3.0 * 4.0 * gv);
    for (int mu = 0; mu < 4; mu++) free(ghost[mu]);
    free(send);
    MPI_Comm_free(&c);
    return st;
}
