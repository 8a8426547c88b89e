/* linalg_test_op.h — the test operator of tests/test_linalg.c and
 * tests/test_linalg_mpi.c: a 7-point stencil with a diagonal shift c and a
 * first-order term beta along x (nonsymmetric where beta != 0), nc reals
 * per grid point, z planes in blocks of zb with no coupling across (zb = nz:
 * one block); and its Jacobi preconditioner.  OpenCL C source. */
#ifndef CLPHYS_LINALG_TEST_OP_H
#define CLPHYS_LINALG_TEST_OP_H

static const char *const LA_TEST_OP_SRC =
    "#ifdef REAL_IS_DOUBLE\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\ntypedef double real_t;\n"
    "#else\ntypedef float real_t;\n#endif\n"
    /* y = A x, nc reals per grid point; z planes in blocks of zb (no coupling across) */
    "__kernel void op_apply(__global real_t *y, __global const real_t *x, __global const real_t *c, uint nx,\n"
    "                       uint ny, uint nz, uint zb, uint nc, real_t beta)\n"
    "{\n"
    "    const uint i = get_global_id(0), plane = nx * ny;\n"
    "    if (i >= plane * nz) return;\n"
    "    const uint ix = i % nx, iy = i / nx % ny, iz = i / plane;\n"
    "    for (uint k = 0; k < nc; k++) {\n"
    "        real_t s = (6 + c[i]) * x[i * nc + k];\n"
    "        if (ix > 0) s += (-1 - beta) * x[(i - 1) * nc + k];\n"
    "        if (ix + 1 < nx) s += (-1 + beta) * x[(i + 1) * nc + k];\n"
    "        if (iy > 0) s -= x[(i - nx) * nc + k];\n"
    "        if (iy + 1 < ny) s -= x[(i + nx) * nc + k];\n"
    "        if (iz % zb) s -= x[(i - plane) * nc + k];\n"
    "        if ((iz + 1) % zb) s -= x[(i + plane) * nc + k];\n"
    "        y[i * nc + k] = s;\n"
    "    }\n"
    "}\n"
    "__kernel void jacobi(__global real_t *z, __global const real_t *r, __global const real_t *c, uint n, uint nc)\n"
    "{\n"
    "    const uint i = get_global_id(0);\n"
    "    if (i < n) for (uint k = 0; k < nc; k++) z[i * nc + k] = r[i * nc + k] / (6 + c[i]);\n"
    "}\n";

#endif
