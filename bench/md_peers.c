/* md_peers.c — the programs a user would run instead of clphys md, timed in
 * the same bench run on the same input (LAMMPS in.lj) as md rows of their
 * own: LAMMPS on CPUs (its fastest installed CPU configuration on the
 * device's cores), OpenMM on GPUs (CUDA and OpenCL platforms, single and
 * double) and CPUs (its CPU platform), and LAMMPS's GPU package on OpenCL
 * (built by scripts/peers-lammps-gpu.sh) on the device's platform.  Each is a Python program in
 * bench/peers/ ($CLPHYS_PEERS), run with python3 ($CLPHYS_PYTHON), that
 * prints one JSON object per result; the modules come from the Python's own
 * path or PYTHONPATH (scripts/peers.sh installs both).  Their rate is wall
 * clock, like clphys's md rate. */
#include "md_peers.h"

#include "datadir.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void add_status(char *status, size_t len, const char *who, const char *why)
{
    size_t used = strlen(status);
    snprintf(status + used, len - used, "%s%s: %.300s", used ? "; " : "", who, why);
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* One peer result as an md row; the peer's JSON, less what the row has, as params. */
static void peer_row(bench_run *run, const char *path, cJSON *o, double pe0_ref)
{
    const int gpu = !strcmp(str(o, "peer"), "lammps-gpu"), lammps = gpu || !strcmp(str(o, "peer"), "lammps");
    bench_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.path, sizeof r.path, "%s", path);
    if (gpu) { /* GPU_PREC mixed (single-precision forces, double sums) beside fp32, double beside fp64 */
        snprintf(r.variant, sizeof r.variant, "lammps-gpu%s", num(o, "ranks") > 1 ? "-mpi" : "");
        snprintf(r.precision, sizeof r.precision, "%s", !strcmp(str(o, "gpu_prec"), "double") ? "fp64" : "fp32");
    } else if (lammps) {
        snprintf(r.variant, sizeof r.variant, "lammps-%s", strstr(str(o, "config"), "mpirun") ? "mpi" : "omp");
        snprintf(r.precision, sizeof r.precision, "fp64");
    } else {
        char plat[24];
        snprintf(plat, sizeof plat, "%s", str(o, "platform"));
        for (char *c = plat; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
        snprintf(r.variant, sizeof r.variant, "openmm-%s", plat);
        snprintf(r.precision, sizeof r.precision, "%s", !strcmp(str(o, "precision"), "double") ? "fp64" : "fp32");
    }
    r.n = (long long)num(o, "n");
    r.repeat = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, lammps ? "loop_s" : "runs_s"));
    r.rate = num(o, "steps_per_s");
    r.total_s_median = r.rate > 0 ? 1 / r.rate : 0;
    snprintf(r.rate_unit, sizeof r.rate_unit, "steps/s");
    snprintf(r.flops_convention, sizeof r.flops_convention, "none");
    /* verified: its step-0 potential energy per atom is the reference's
     * (LAMMPS's, or clphys's fp64 where LAMMPS has no log): the same system
     * (another cutoff, box or a missing atom is off by far more); double
     * to 1e-9, single to 1e-4 (OpenMM's OpenCL platform sums the energy of
     * 32,000 atoms in float: 6.6e-6 off on PoCL) */
    double pe0 = num(o, "pe0_per_atom");
    r.max_rel_error = fabs(pe0 - pe0_ref) / fabs(pe0_ref);
    r.verified = r.max_rel_error <= (strcmp(r.precision, "fp64") ? 1e-4 : 1e-9);
    cJSON *p = cJSON_Duplicate(o, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(p, "n");
    cJSON_DeleteItemFromObjectCaseSensitive(p, "verified");
    cJSON_DeleteItemFromObjectCaseSensitive(p, "steps_per_s");
    cJSON_AddStringToObject(p, "rate_is",
                            lammps ? "wall clock: steps / median LAMMPS Loop time (the run, setup excluded)"
                                   : "wall clock: steps / median run (after a warm-up; ends reading the state back)");
    cJSON_AddNumberToObject(p, "pe0_reference", pe0_ref);
    cJSON_AddStringToObject(p, "verified_by", "step-0 potential energy per atom against pe0_reference");
    char *text = cJSON_PrintUnformatted(p);
    if (text && strlen(text) < sizeof r.params) snprintf(r.params, sizeof r.params, "%s", text);
    free(text);
    cJSON_Delete(p);
    bench_add_row(run, &r);
}

/* OCL_ICD_FILENAMES as the process began (NULL: unset), taken before main
 * and so before any OpenCL call: the Khronos ICD loader splits that
 * variable in place (its ':' become NULs), after which the environment a
 * peer inherits names only the first library, and a GPU peer would see only
 * that library's platform. */
static char *icd_filenames;
__attribute__((constructor)) static void keep_icd_filenames(void)
{
    const char *v = getenv("OCL_ICD_FILENAMES");
    if (v) icd_filenames = strdup(v);
}

/* Run one peer program; its results become rows, its failures status text. */
static void run_peer(bench_run *run, const char *path, const char *cmd, const char *who, double pe0_ref, char *status,
                     size_t len)
{
    fprintf(stderr, "  md        peer %s: %s\n", who, cmd);
    if (icd_filenames)
        setenv("OCL_ICD_FILENAMES", icd_filenames, 1); /* the peers see every platform this process saw */
    FILE *p = popen(cmd, "r");
    if (!p) {
        add_status(status, len, who, "could not start python3");
        return;
    }
    char line[16384];
    int results = 0;
    while (fgets(line, sizeof line, p)) {
        cJSON *o = cJSON_Parse(line);
        if (!o) continue;
        if (cJSON_GetObjectItemCaseSensitive(o, "absent")) { /* not installed: no row, no error */
            fprintf(stderr, "  md        peer %s not installed: %s\n", who, str(o, "absent"));
        } else if (cJSON_GetObjectItemCaseSensitive(o, "error")) {
            char what[64];
            snprintf(what, sizeof what, "%s%s%s", who, *str(o, "platform") ? " " : "", str(o, "platform"));
            fprintf(stderr, "  md        peer %s not run: %s\n", what, str(o, "error"));
            add_status(status, len, what, str(o, "error"));
        } else {
            peer_row(run, path, o, pe0_ref);
        }
        results++;
        cJSON_Delete(o);
    }
    int rc = pclose(p);
    if (!results) add_status(status, len, who, rc ? "the program failed (its messages are above)" : "no result");
}

/* 1 where dir holds the peer's program `name`, else 0 with that in status:
 * added for who, or (who NULL) in place of what it held. */
static int peer_program(const char *dir, const char *name, const char *who, char *status, size_t len)
{
    char script[1024], why[1200];
    snprintf(script, sizeof script, "%s/%s", dir, name);
    if (access(script, R_OK) == 0) return 1;
    snprintf(why, sizeof why, "%s not found (set CLPHYS_PEERS to the folder of the peers' programs)", script);
    if (who)
        add_status(status, len, who, why);
    else
        snprintf(status, len, "%s", why);
    return 0;
}

void md_peers(bench_run *run, const char *data_file, const char *lammps_input, double pe0_ref, char *status, size_t len)
{
    status[0] = 0;
    const char *dir = bench_peers_dir();
    const char *py = getenv("CLPHYS_PYTHON") ? getenv("CLPHYS_PYTHON") : "python3";
    char script[1024], cmd[4096];
    snprintf(script, sizeof script, "%s/openmm_lj.py", dir);
    if (!peer_program(dir, "openmm_lj.py", NULL, status, len)) {
        fprintf(stderr, "  md        peers not run: %s\n", status);
        return;
    }
    const unsigned cores = run->dev->compute_units ? run->dev->compute_units : 1;
    if (run->dev->is_gpu) {
        snprintf(cmd, sizeof cmd,
                 "%s %s --data %s --pe0 %.15g --platforms CUDA,OpenCL --precisions single,double "
                 "--opencl-platform '%s'",
                 py, script, data_file, pe0_ref, strchr(run->dev->platform, '\'') ? "" : run->dev->platform);
        run_peer(run, "md", cmd, "openmm", pe0_ref, status, len);
        return;
    }
    /* a CPU device: the peers on its cores */
    if (lammps_input) {
        snprintf(cmd, sizeof cmd, "%s %s/lammps_lj.py --input %s --threads %u", py, dir, lammps_input, cores);
        run_peer(run, "md", cmd, "lammps", pe0_ref, status, len);
    }
    snprintf(cmd, sizeof cmd, "%s %s --data %s --pe0 %.15g --platforms CPU --threads %u", py, script, data_file,
             pe0_ref, cores);
    run_peer(run, "md", cmd, "openmm", pe0_ref, status, len);
}

void md_peer_lammps(bench_run *run, const char *path, const char *lammps_input, int threads, double pe0_ref,
                    char *status, size_t len)
{
    status[0] = 0;
    const char *dir = bench_peers_dir();
    if (!peer_program(dir, "lammps_lj.py", "lammps", status, len)) return;
    const char *py = getenv("CLPHYS_PYTHON") ? getenv("CLPHYS_PYTHON") : "python3";
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s/lammps_lj.py --input %s --threads %d", py, dir, lammps_input, threads);
    run_peer(run, path, cmd, "lammps", pe0_ref, status, len);
}

void md_peer_lammps_gpu(bench_run *run, const char *lammps_input, int scale, double pe0_ref, char *status, size_t len)
{
    const char *dir = bench_peers_dir();
    if (!peer_program(dir, "lammps_lj.py", "lammps-gpu", status, len)) return;
    const char *py = getenv("CLPHYS_PYTHON") ? getenv("CLPHYS_PYTHON") : "python3";
    const char *plat = strchr(run->dev->platform, '\'') ? "" : run->dev->platform;
    const char *precs =
        bench_wants_precision(run, "fp32") ? (bench_wants_precision(run, "fp64") ? "mixed,double" : "mixed") : "double";
    if (!bench_wants_precision(run, "fp32") && !bench_wants_precision(run, "fp64")) return;
    char cmd[4096];
    /* a CPU device (PoCL): the neighbour list on the host (`neigh no`: with
     * the list built on the device, LAMMPS 29Sep2021's force kernel
     * segfaults under PoCL, which reports a preferred vector width of 16),
     * and the ranks of the multi-rank run share the device's cores; on
     * GPUs the neighbour list on the device (the package's default) and
     * the ranks one per host core (the python's count) */
    int at =
        snprintf(cmd, sizeof cmd, "%s %s/lammps_lj.py --input %s --gpu --scale %d --platform-name '%s' --precisions %s",
                 py, dir, lammps_input, scale, plat, precs);
    if (at < 0 || (size_t)at >= sizeof cmd) return;
    if (!run->dev->is_gpu)
        snprintf(cmd + at, sizeof cmd - at, " --neigh no --cpu-device --cores %u",
                 run->dev->compute_units ? run->dev->compute_units : 1);
    run_peer(run, "md", cmd, "lammps-gpu", pe0_ref, status, len);
}
