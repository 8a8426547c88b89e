/* cdef.h — the part of the public C API (include/clphys*.h) that the Python
 * package calls, in cffi's cdef syntax.  cffi's API mode compiles it against
 * clphys.h itself: "..." leaves a struct's layout, an enum's values or an
 * integer type's size to the compiler, so a field or value named here that
 * clphys.h lacks, or a signature that differs, fails the build instead of
 * misreading memory.  Only fields the package uses are listed. */

typedef int... cl_ulong;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_device_id *cl_device_id;

/* ---- OpenCL (CL/cl.h, through clphys.h): the buffers of clphys.DeviceArray ---- */
typedef int... cl_int;
typedef int... cl_uint;
typedef int... cl_mem_flags;
typedef struct _cl_event *cl_event;
#define CL_SUCCESS ...
#define CL_MEM_READ_WRITE ...
#define CL_TRUE ...
cl_mem clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void *host_ptr, cl_int *errcode_ret);
cl_int clReleaseMemObject(cl_mem memobj);
cl_int clRetainMemObject(cl_mem memobj);
cl_int clEnqueueWriteBuffer(cl_command_queue queue, cl_mem buffer, cl_uint blocking_write, size_t offset,
                            size_t size, const void *ptr, cl_uint num_events_in_wait_list,
                            const cl_event *event_wait_list, cl_event *event);
cl_int clEnqueueReadBuffer(cl_command_queue queue, cl_mem buffer, cl_uint blocking_read, size_t offset,
                           size_t size, void *ptr, cl_uint num_events_in_wait_list,
                           const cl_event *event_wait_list, cl_event *event);

/* ---- clphys.h ---- */
typedef enum {
    CLPHYS_SUCCESS, CLPHYS_ERR_INVALID_ARGUMENT, CLPHYS_ERR_DEVICE_NOT_FOUND, CLPHYS_ERR_OPENCL,
    CLPHYS_ERR_BUILD, CLPHYS_ERR_OUT_OF_MEMORY, CLPHYS_ERR_UNSUPPORTED, CLPHYS_ERR_IO, CLPHYS_ERR_FORMAT,
    CLPHYS_ERR_INPUT, CLPHYS_ERR_NOT_CONVERGED, CLPHYS_ERR_OVERFLOW, CLPHYS_ERR_VERIFY, ...
} clphys_status;
typedef enum { CLPHYS_FP32, CLPHYS_FP64, ... } clphys_precision;
typedef struct clphys_context clphys_context;
typedef struct {
    char name[...]; char vendor[...]; char platform[...]; char driver_version[...];
    char device_version[...]; char opencl_c_version[...];
    int platform_index, device_index, is_gpu, is_cpu;
    unsigned compute_units, clock_mhz;
    cl_ulong global_mem_bytes, local_mem_bytes, max_alloc_bytes;
    size_t max_work_group_size;
    int fp64, int32_atomics, int64_atomics, subgroups;
    ...;
} clphys_device_info;

const char *clphys_version(void);
const char *clphys_status_string(clphys_status status);
const char *clphys_last_error(const clphys_context *ctx);
clphys_status clphys_devices_list(clphys_device_info **list, int *count);
void clphys_devices_destroy(clphys_device_info *list);
clphys_status clphys_context_create(const char *spec, clphys_context **ctx);
void clphys_context_destroy(clphys_context *ctx);
const clphys_device_info *clphys_context_device(const clphys_context *ctx);
cl_context clphys_context_cl_context(const clphys_context *ctx);
cl_command_queue clphys_context_queue(const clphys_context *ctx);
const char *clphys_context_notes(const clphys_context *ctx);

/* ---- clphys_nbody.h ---- */
typedef enum { CLPHYS_NBODY_GRAVITY_AUTO, CLPHYS_NBODY_GRAVITY_TILED, CLPHYS_NBODY_GRAVITY_VECTOR, ... } clphys_nbody_gravity_variant;
typedef struct {
    size_t struct_size;
    clphys_precision precision;
    clphys_nbody_gravity_variant variant;
    double G, eps;
    int potential;
    size_t n_hint;
    ...;
} clphys_nbody_gravity_params;
typedef struct clphys_nbody_gravity_plan clphys_nbody_gravity_plan;
clphys_status clphys_nbody_gravity_plan_create(clphys_context *ctx, const clphys_nbody_gravity_params *p,
                                         clphys_nbody_gravity_plan **plan);
void clphys_nbody_gravity_plan_destroy(clphys_nbody_gravity_plan *plan);
const char *clphys_nbody_gravity_plan_variant(const clphys_nbody_gravity_plan *plan);
clphys_status clphys_nbody_gravity_compute(clphys_nbody_gravity_plan *plan, size_t ni, const double *xi, size_t nj,
                                     const double *xj, double *acc, double *pot, int accumulate,
                                     int check_coincident, double *kernel_s);
clphys_status clphys_nbody_gravity_compute_cl(clphys_nbody_gravity_plan *plan, cl_mem xi, size_t ni, cl_mem xj, size_t nj,
                                        int i_in_j, cl_mem out, int accumulate, double *kernel_s);
typedef struct { size_t n; double *x; double *v; ...; } clphys_nbody_system;
void clphys_nbody_system_destroy(clphys_nbody_system *s);
clphys_status clphys_nbody_read(clphys_context *ctx, const char *file, clphys_nbody_system *s);
clphys_status clphys_nbody_write(clphys_context *ctx, const char *file, const clphys_nbody_system *s);
clphys_status clphys_nbody_plummer(clphys_context *ctx, size_t n, uint64_t seed, clphys_nbody_system *s);
typedef struct { double kinetic, potential, total, virial_ratio, momentum; ...; } clphys_nbody_energy;
clphys_status clphys_nbody_energy_of(clphys_context *ctx, const clphys_nbody_system *s, const double *pot,
                                     clphys_nbody_energy *e);

/* ---- clphys_md.h ---- */
typedef enum { CLPHYS_MD_NEIGHBOR_FULL, CLPHYS_MD_NEIGHBOR_HALF, ... } clphys_md_neighbor_kind;
typedef enum { CLPHYS_MD_NEIGHBOR_CSR, CLPHYS_MD_NEIGHBOR_TRANSPOSED, CLPHYS_MD_NEIGHBOR_STAGED, ... } clphys_md_neighbor_layout;
typedef struct {
    size_t struct_size;
    size_t n; double box[3]; double r_search;
    clphys_md_neighbor_kind kind; clphys_md_neighbor_layout layout; clphys_precision precision;
    ...;
} clphys_md_neighbor_params;
typedef struct clphys_md_neighbor_plan clphys_md_neighbor_plan;
clphys_status clphys_md_neighbor_plan_create(clphys_context *ctx, const clphys_md_neighbor_params *p,
                                          clphys_md_neighbor_plan **plan);
void clphys_md_neighbor_plan_destroy(clphys_md_neighbor_plan *plan);
clphys_status clphys_md_neighbor_build(clphys_md_neighbor_plan *plan, const double *pos);
clphys_status clphys_md_neighbor_stats(const clphys_md_neighbor_plan *plan, size_t *pairs, size_t *capacity,
                                    int *growths);
clphys_status clphys_md_neighbor_get(clphys_md_neighbor_plan *plan, size_t *offsets, int *list);

typedef enum { CLPHYS_MD_LJ_AUTO, ... } clphys_md_lj_variant;
typedef struct {
    size_t struct_size;
    size_t n; double box[3]; double epsilon, sigma; double r_cut, skin; int shifted;
    clphys_precision precision; clphys_md_lj_variant variant;
    ...;
} clphys_md_lj_params;
typedef struct { double potential_energy; double virial; ...; } clphys_md_lj_result;
typedef struct clphys_md_lj_plan clphys_md_lj_plan;
clphys_status clphys_md_lj_plan_create(clphys_context *ctx, const clphys_md_lj_params *p, clphys_md_lj_plan **plan);
void clphys_md_lj_plan_destroy(clphys_md_lj_plan *plan);
clphys_status clphys_md_lj_compute(clphys_md_lj_plan *plan, const double *pos, double *forces, clphys_md_lj_result *res);
const char *clphys_md_lj_plan_choice(const clphys_md_lj_plan *plan);
const char *clphys_md_lj_variant_name(clphys_md_lj_variant v);
clphys_status clphys_md_lj_variant_from_name(const char *name, clphys_md_lj_variant *v);

typedef struct {
    size_t n; double lo[3]; double hi[3]; int ntypes; double *type_mass; long long *id; int *type;
    double *x; double *v; int *image;
    ...;
} clphys_md_system;
void clphys_md_system_destroy(clphys_md_system *sys);
clphys_status clphys_md_read_lammps_data(const char *file, clphys_md_system *sys);
clphys_status clphys_md_fcc(double rho, int cells, double temp, uint64_t seed, clphys_md_system *sys);
typedef struct {
    size_t struct_size;
    clphys_md_lj_params lj; double dt; int neigh_every; int neigh_check; int neigh_delay;
    ...;
} clphys_md_params;
typedef struct { long long step; double temp, pe, ke, etotal, press; ...; } clphys_md_thermo;
typedef struct clphys_md_plan clphys_md_plan;
clphys_status clphys_md_plan_create(clphys_context *ctx, const clphys_md_params *p, const clphys_md_system *sys,
                                    clphys_md_plan **plan);
typedef struct { size_t n; double lo[3]; double hi[3]; cl_mem x; cl_mem v; cl_mem f; cl_mem image; ...; } clphys_md_buffers;
clphys_status clphys_md_plan_create_cl(clphys_context *ctx, const clphys_md_params *p, const clphys_md_buffers *b,
                                       clphys_md_plan **plan);
clphys_status clphys_md_refresh(clphys_md_plan *plan);
void clphys_md_plan_destroy(clphys_md_plan *plan);
clphys_status clphys_md_run(clphys_md_plan *plan, int steps, double *kernel_s);
clphys_status clphys_md_thermo_now(clphys_md_plan *plan, clphys_md_thermo *t);
clphys_status clphys_md_download(clphys_md_plan *plan, clphys_md_system *sys);
int clphys_md_rebuilds(const clphys_md_plan *plan);

/* ---- clphys_lqcd.h ---- */
typedef struct { int dims[4]; size_t volume; double *u; ...; } clphys_lqcd_gauge_field;
clphys_status clphys_lqcd_gauge_create(const int dims[4], clphys_lqcd_gauge_field *g);
void clphys_lqcd_gauge_destroy(clphys_lqcd_gauge_field *g);
void clphys_lqcd_gauge_hot(clphys_lqcd_gauge_field *g, uint64_t seed);
double clphys_lqcd_gauge_plaquette(const clphys_lqcd_gauge_field *g);
double clphys_lqcd_gauge_link_trace(const clphys_lqcd_gauge_field *g);
double clphys_lqcd_gauge_unitarity_violation(const clphys_lqcd_gauge_field *g);
typedef enum { CLPHYS_LQCD_GAUGE_FILE_AUTO, CLPHYS_LQCD_GAUGE_FILE_NERSC, CLPHYS_LQCD_GAUGE_FILE_ILDG, CLPHYS_LQCD_GAUGE_FILE_MILC,
               ... } clphys_lqcd_gauge_file_format;
typedef struct { size_t struct_size; clphys_lqcd_gauge_file_format format; int allow_unverified; ...; } clphys_lqcd_gauge_read_params;
typedef struct {
    clphys_lqcd_gauge_file_format format; clphys_precision precision; int rows;
    int checksum_verified, plaquette_verified, link_trace_verified;
    double unitarity; char unverified[...];
    ...;
} clphys_lqcd_gauge_file_info;
clphys_status clphys_lqcd_gauge_read(const char *file, const clphys_lqcd_gauge_read_params *p, clphys_lqcd_gauge_field *g,
                                clphys_lqcd_gauge_file_info *info);
clphys_status clphys_lqcd_gauge_write(const char *file, const clphys_lqcd_gauge_field *g, clphys_lqcd_gauge_file_format format,
                                 clphys_precision precision, int rows);
const char *clphys_lqcd_gauge_file_format_name(clphys_lqcd_gauge_file_format format);

typedef enum { CLPHYS_LQCD_BC_AUTO, CLPHYS_LQCD_BC_PERIODIC, CLPHYS_LQCD_BC_ANTIPERIODIC, CLPHYS_LQCD_BC_PHASE, ... } clphys_lqcd_bc;
typedef struct {
    size_t struct_size;
    clphys_precision precision; int reconstruct; double kappa; clphys_lqcd_bc bc[4]; double bc_phase_by_pi[4];
    int no_tune;
    ...;
} clphys_lqcd_dslash_params;
typedef struct clphys_lqcd_dslash_plan clphys_lqcd_dslash_plan;
typedef enum { CLPHYS_LQCD_DSLASH_HOPPING, CLPHYS_LQCD_DSLASH_WILSON, ... } clphys_lqcd_dslash_op;
clphys_status clphys_lqcd_dslash_plan_create(clphys_context *ctx, const clphys_lqcd_gauge_field *g,
                                        const clphys_lqcd_dslash_params *p, clphys_lqcd_dslash_plan **plan);
void clphys_lqcd_dslash_plan_destroy(clphys_lqcd_dslash_plan *plan);
clphys_status clphys_lqcd_dslash_apply_host(clphys_lqcd_dslash_plan *plan, clphys_lqcd_dslash_op op, double *out,
                                       const double *in);
typedef enum { CLPHYS_LQCD_SOLVER_AUTO, CLPHYS_LQCD_SOLVER_CGNR, CLPHYS_LQCD_SOLVER_BICGSTAB, ... } clphys_lqcd_solver_kind;
typedef struct {
    size_t struct_size;
    clphys_lqcd_solver_kind kind; double tol; int max_iter; int mixed; double inner_tol;
    ...;
} clphys_lqcd_solver_params;
typedef struct {
    int iterations, restarts; double rel_residual, seconds, iterate_s, upload_s, download_s, gflops;
    ...;
} clphys_lqcd_solver_result;
typedef struct clphys_lqcd_solver_plan clphys_lqcd_solver_plan;
clphys_status clphys_lqcd_solver_plan_create(clphys_lqcd_dslash_plan *plan64, clphys_lqcd_dslash_plan *plan32,
                                        const clphys_lqcd_solver_params *params, clphys_lqcd_solver_plan **plan);
clphys_status clphys_lqcd_solver_solve(clphys_lqcd_solver_plan *plan, const double *b, double *x, clphys_lqcd_solver_result *res);
void clphys_lqcd_solver_plan_destroy(clphys_lqcd_solver_plan *plan);

/* ---- clphys_poisson.h ---- */
typedef struct {
    int nx, ny, nz; const double *dx; const double *dy; int lonlat; double lon0, lon1, lat0, lat1;
    const double *dz; const double *depth; double helmholtz; int periodic_x;
    ...;
} clphys_poisson_geometry;
typedef struct { int nx, ny, nz; const double *a; cl_mem a_mem; ...; } clphys_poisson_operator;
typedef enum { CLPHYS_POISSON_MIXED, CLPHYS_POISSON_FP64, CLPHYS_POISSON_FP32, ... } clphys_poisson_precision;
typedef struct {
    size_t struct_size;
    clphys_poisson_precision precision; double tol; int max_iter; int smooth; double omega; int no_time_split;
    ...;
} clphys_poisson_params;
typedef struct clphys_poisson_plan clphys_poisson_plan;
clphys_status clphys_poisson_plan_create(clphys_context *ctx, const clphys_poisson_geometry *geometry,
                                         const clphys_poisson_params *params, clphys_poisson_plan **plan);
clphys_status clphys_poisson_plan_create_operator(clphys_context *ctx, const clphys_poisson_operator *op,
                                                  const clphys_poisson_params *params, clphys_poisson_plan **plan);
void clphys_poisson_plan_destroy(clphys_poisson_plan *plan);
typedef struct {
    int nx, ny, nz; size_t n; size_t wet; int levels; int singular_regions;
    ...;
} clphys_poisson_info;
void clphys_poisson_plan_info(const clphys_poisson_plan *plan, clphys_poisson_info *info);
typedef struct {
    int iterations, restarts; double rel_residual; int singular_regions; double removed_mean;
    double seconds, transfer_s, vcycle_s, stencil_s, other_s; int vcycles;
    ...;
} clphys_poisson_result;
clphys_status clphys_poisson_solve(clphys_poisson_plan *plan, const double *rhs, double *x,
                                   clphys_poisson_result *result);
clphys_status clphys_poisson_solve_mem(clphys_poisson_plan *plan, cl_mem rhs, cl_mem x,
                                       clphys_poisson_result *result);
clphys_status clphys_poisson_plan_operator(const clphys_poisson_plan *plan, double *a, unsigned char *mask,
                                           double *w);
clphys_status clphys_poisson_levels(int nz, double lz, double stretch, double *dz);
clphys_status clphys_poisson_basin(int nx, int ny, uint64_t seed, double max_depth, int periodic_x, double *depth);
typedef struct { int nx, ny; double *depth; double *x; double *y; int lonlat; size_t missing; ...; } clphys_poisson_bathymetry;
clphys_status clphys_poisson_read_bathymetry(const char *file, const char *var, clphys_poisson_bathymetry *b);
void clphys_poisson_bathymetry_destroy(clphys_poisson_bathymetry *b);
clphys_status clphys_poisson_write_netcdf(const char *file, int nx, int ny, int nz, const double *xc,
                                          const double *yc, const double *zc, int lonlat, const double *p,
                                          const unsigned char *mask, const char *units, const char *title);
