/* poisson_column_vec.h — VW neighbouring columns of one row as the lanes of a
 * vector (the column-vec kernels of cl/poisson_line_relax_vec.cl and
 * cl/poisson_stencil.cl): the vector type, loads and stores, and the
 * neighbours one column west and east with the row's wrap-around, whose
 * first / last lane comes from a shuffle with the wrapped-around column.
 * Needs -DVW (4 or 8) and -DREAL_T; include after platform_common.h. */
#ifndef CLPHYS_CL_COLUMN_VEC_H
#define CLPHYS_CL_COLUMN_VEC_H

#define CAT_(a, b) a##b
#define CAT(a, b)  CAT_(a, b)
typedef CAT(REAL_T, VW) vreal;
#define VLOAD        CAT(vload, VW)
#define VSTORE       CAT(vstore, VW)
#define CONVERT_REAL CAT(convert_, CAT(REAL_T, VW))
/* shuffle masks: integers of the element's size */
#ifdef REAL_IS_DOUBLE
#define MASK_T ulong
#else
#define MASK_T uint
#endif
#define MASK(n) CAT(MASK_T, n)
#if VW == 8
#define MASK_W      (MASK(8))(0, 8, 9, 10, 11, 12, 13, 14)
#define MASK_E      (MASK(8))(1, 2, 3, 4, 5, 6, 7, 8)
#define EVEN        (MASK(4))(0, 2, 4, 6)
#define ODD         (MASK(4))(1, 3, 5, 7)
#define DUP         (MASK(8))(0, 0, 1, 1, 2, 2, 3, 3)
#define VSTORE_HALF vstore4
#define VLOAD_HALF  vload4
#elif VW == 4
#define MASK_W      (MASK(4))(0, 4, 5, 6)
#define MASK_E      (MASK(4))(1, 2, 3, 4)
#define EVEN        (MASK(2))(0, 2)
#define ODD         (MASK(2))(1, 3)
#define DUP         (MASK(4))(0, 0, 1, 1)
#define VSTORE_HALF vstore2
#define VLOAD_HALF  vload2
#endif

/* the VW values of p at c .. c + VW - 1, shifted one column west / east with
 * the row's wrap-around (row = the index of the row's first column) */
static inline vreal vload_at(__global const real_t *p, int c) { return VLOAD(0, p + c); }
static inline vreal west_of(__global const real_t *p, int c, int i0, int row, int nx)
{
    return i0 > 0 ? VLOAD(0, p + c - 1) : shuffle2((vreal)(p[row + nx - 1]), VLOAD(0, p + c), MASK_W);
}
static inline vreal east_of(__global const real_t *p, int c, int i0, int row, int nx)
{
    return i0 + VW < nx ? VLOAD(0, p + c + 1) : shuffle2(VLOAD(0, p + c), (vreal)(p[row]), MASK_E);
}

#endif
