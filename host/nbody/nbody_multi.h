/* nbody_multi.h — the multi-device engine behind clphys_nbody_gravity_multi and
 * the MPI exchanges (mpi.c): one i-set split over the devices, j
 * blocks streamed to every device on alternating lanes, results summed on
 * the host.  The calls of one force calculation:
 *   nbody_multi_begin(i-set)  nbody_multi_block(j block)...  nbody_multi_end(results)
 * with nbody_multi_busy polled in between (is a kernel still running?).  Host arrays
 * handed to nbody_multi_begin and nbody_multi_block are read by asynchronous uploads and must
 * stay unchanged until nbody_multi_end returns. */
#ifndef CLPHYS_NBODY_GRAVITY_MULTI_H
#define CLPHYS_NBODY_GRAVITY_MULTI_H

#include "nbody_internal.h"

/* Bytes of one real (4 or 8): host arrays given to nbody_multi_* hold real4 per
 * particle in the plan's precision. */
size_t nbody_multi_real_size(const clphys_nbody_gravity_multi *m);
clphys_context *nbody_multi_context(const clphys_nbody_gravity_multi *m); /* device 0's, for messages */
int nbody_multi_potential(const clphys_nbody_gravity_multi *m);
/* *host: at least `bytes` of page-locked host memory (a mapped
 * CL_MEM_ALLOC_HOST_PTR buffer of device 0), kept by the plan and reused by
 * the next call (contents not kept when it grows): uploads from it are real
 * DMA that overlaps the kernels. */
clphys_status nbody_multi_staging(clphys_nbody_gravity_multi *m, size_t bytes, void **host);

/* Start a calculation for the ni i-particles xi (real4, plan precision),
 * split between the devices by the weights; uploads them. */
clphys_status nbody_multi_begin(clphys_nbody_gravity_multi *m, size_t ni, const void *xi);
/* Add the force of one j block, given as nparts (1..4) consecutive pieces
 * xj[k] of nj[k] particles (real4, plan precision): uploaded after one
 * another to the next lane's j buffer of every device, then one kernel per
 * device.  i_in_j: the i-set lies in this block (the self term of phi is
 * removed in this call; say it for exactly one block).  Empty blocks launch
 * nothing. */
clphys_status nbody_multi_block(clphys_nbody_gravity_multi *m, int nparts, const void *const *xj, const size_t *nj,
                                int i_in_j);
/* *running = 1 while a kernel launched since nbody_multi_begin has not finished. */
clphys_status nbody_multi_busy(clphys_nbody_gravity_multi *m, int *running);
/* Wait, read every lane's results and sum them (lane 0 + lane 1, in double)
 * into acc[3*ni] and pot[ni] (may be NULL); t->kernel_s, kernel_span_s and kernels are
 * set (t may be NULL). */
clphys_status nbody_multi_end(clphys_nbody_gravity_multi *m, double *acc, double *pot, clphys_nbody_gravity_timing *t);
/* After a failure between nbody_multi_begin and nbody_multi_end: wait for the queues and drop
 * the call's events; no errors. */
void nbody_multi_abort(clphys_nbody_gravity_multi *m);

#endif
