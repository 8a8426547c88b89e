/* md_peers.h — the md path's peers (LAMMPS, OpenMM), run by bench_md: see md_peers.c. */
#ifndef CLPHYS_BENCH_MD_PEERS_H
#define CLPHYS_BENCH_MD_PEERS_H

#include "bench.h"
#include <stddef.h>

/* Run the peers installed for run's device type on one system, adding one
 * md row per result (rate: wall-clock steps/s; verified: step-0 potential
 * energy per atom within 1e-4 (fp32) or 1e-9 (fp64) of pe0_ref): OpenMM on
 * data_file (a LAMMPS data file, may be .gz), and on CPU devices LAMMPS on
 * lammps_input (an input script; NULL: none).  status receives "" or why a
 * peer did not run. */
void md_peers(bench_run *run, const char *data_file, const char *lammps_input, double pe0_ref, char *status,
              size_t len);

/* LAMMPS alone on lammps_input with `threads` threads (or MPI ranks: its
 * fastest installed configuration, bench/peers/lammps_lj.py), its rows
 * under `path` (md_mpi: against the distributed run on the same cores). */
void md_peer_lammps(bench_run *run, const char *path, const char *lammps_input, int threads, double pe0_ref,
                    char *status, size_t len);

/* LAMMPS's GPU package (OpenCL, GPU_PREC mixed and double, where
 * scripts/peers-lammps-gpu.sh built them or $CLPHYS_LAMMPS_GPU points) on
 * lammps_input at `-var x/y/z scale` (32,000 scale^3 atoms), on run's
 * OpenCL platform, with 1 MPI rank and with one rank per host core sharing
 * the device: md rows lammps-gpu and lammps-gpu-mpi, verified as
 * md_peers'.  Not built: no row and nothing added to status (which
 * receives why a built one did not run, after what it holds). */
void md_peer_lammps_gpu(bench_run *run, const char *lammps_input, int scale, double pe0_ref, char *status, size_t len);

#endif
