/*
 * clphys.h — the public API of clphys, portable OpenCL kernels for particle
 * and lattice simulation.  This is the only header an embedding application
 * includes; clphys_core.h (the library-wide declarations) and the per-path
 * headers it pulls in below are part of it.
 *
 * Conventions (all calls):
 *  - Every call that can fail returns a clphys_status; nothing prints, aborts
 *    or exits.  On failure clphys_last_error(ctx) gives the cause in one or
 *    more lines (the OpenCL call and error code, the build log, the file and
 *    line ...).  Calls that cannot fail (versions, getters, *_destroy)
 *    return their value or nothing.
 *  - Plans follow plan-then-execute (FFTW): a plan owns its device buffers and
 *    the chosen kernel variant; execute it as often as needed, then destroy it.
 *  - Host arrays passed in are copied; cl_mem objects passed in stay owned by
 *    the caller and are used in place (no copy).
 *  - Precision is a plan parameter (CLPHYS_FP32 or CLPHYS_FP64).  A device
 *    without cl_khr_fp64 gives CLPHYS_ERR_UNSUPPORTED for CLPHYS_FP64.
 *  - Kernel time: a call with a `double *kernel_s` argument, when it is
 *    non-NULL, waits for the kernels it launched and SETS *kernel_s to their
 *    summed profiled time (END - START of each launch, seconds; host wall
 *    time when the queue has no profiling).  When it is NULL the call waits
 *    for no more than its own work needs (kernels may still be queued when
 *    it returns; time loops of such calls with clphys_context_span_begin/
 *    _end).  Never accumulated across calls.
 *  - Sizes and counts of elements (particles, sites, cells, list entries)
 *    are size_t on every path; int is kept for small things (dimensions of a
 *    lattice or grid, iteration and step counts, indices of devices).
 *  - Parameter structs (clphys_*_params): a zeroed struct asks for the
 *    defaults; in particular every variant enum has its *_AUTO as the zero
 *    value.  Each begins with size_t struct_size, so that it can gain fields
 *    without breaking a compiled application: see CLPHYS_PARAMS_INIT in
 *    clphys_core.h.
 *  - Whatever a call allocates is released by the matching *_destroy call,
 *    which accepts NULL.
 *  - Every public function documents the errors it returns; besides those
 *    listed, any call that touches the device may give CLPHYS_ERR_OPENCL or
 *    CLPHYS_ERR_OUT_OF_MEMORY.
 *  - Linking: pkg-config --cflags --libs clphys.  libclphys.so exports the
 *    clphys_* symbols of these headers and nothing else.
 */
#ifndef CLPHYS_H
#define CLPHYS_H

/* The library-wide declarations: statuses, contexts, devices, limits,
 * tuning, outputs. */
#include "clphys_core.h"

/* Per-path APIs: the header of each compute path built into the library
 * (clphys_nbody.h, clphys_md.h, clphys_lqcd.h ...), listed in
 * clphys_paths.h, which the build writes from its list of paths.  Each
 * compiles on its own (the test headers_standalone). */
#include "clphys_paths.h"

#ifndef CLPHYS_NO_DEPRECATED
#include "clphys_deprecated.h" /* the old names, one release (docs/naming.md) */
#endif
#endif /* CLPHYS_H */
