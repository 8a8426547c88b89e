#!/usr/bin/env bash
# poisson_mpi_cpu.sh — the Poisson solver over MPI ranks on a host's CPU
# cores (PoCL) beside hypre's PFMG-CG over the same number of ranks
# (issue 29's CPU goal): `clphys bench --path poisson_mpi` under mpirun, one
# core per rank for both (POCL_MAX_PTHREAD_COUNT=1, ranks bound to cores,
# hypre's ranks started by the bench with the same binding while clphys's
# ranks sleep), on one fixed grid at every rank count.
#
# Usage, from the project root:
#   scripts/device/poisson_mpi_cpu.sh BUILD_DIR [OUT_DIR]
# BUILD_DIR holds clphys, libclphys.so.1 and poisson_hypre (a release
# build); libraries the host lacks (libHYPRE and its dependencies, NetCDF's)
# in LIB_DIR (default BUILD_DIR/lib).  Environment:
#   GRID (256x256x32) the whole grid, divisible by every process grid;
#   NPS ("8 4 2") rank counts; PRECISIONS ("mixed") clphys's precisions,
#   hypre runs with the first only (it is fp64; the same system);
#   GATHER (64,8) gather_columns values (one distributed plan each);
#   REPEAT (5) solves per case (medians); BASELINE (0): 1 adds the whole
#   grid on one core (at the first rank count and precision only);
#   OLD_BUILD: a second build run after, same grid and ranks, without hypre,
#   gather_columns OLD_GATHER (64) (a before/after pair on the same
#   machine); DEADLINE (280) seconds: a run
#   that would start later is skipped and said so.
# Writes OUT_DIR/poisson_mpi_cpu_json.tar.gz (json/cpu_<build>_<precision>_np<P>.json:
# the bench JSONs), one log of everything (poisson_mpi_cpu.log) and the host's identity
# (poisson_mpi_cpu_host.txt: CPU model, cores, PoCL and Open MPI versions).
set -uo pipefail
BUILD=${1:?usage: scripts/device/poisson_mpi_cpu.sh BUILD_DIR [OUT_DIR]}
OUTDIR=${2:-${OUT:-.}}
GRID=${GRID:-256x256x32}
NPS=${NPS:-8 4 2}
PRECISIONS=${PRECISIONS:-mixed}
GATHER=${GATHER:-64,8}
REPEAT=${REPEAT:-5}
BASELINE=${BASELINE:-0}
DEADLINE=${DEADLINE:-280}
OLD_BUILD=${OLD_BUILD:-}
OLD_GATHER=${OLD_GATHER:-64}
t0=$(date +%s)
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
log=$OUTDIR/poisson_mpi_cpu.log
jdir=$(mktemp -d /tmp/poisson_mpi_cpu.XXXXXX)/json
mkdir -p "$jdir"
abs() { (cd "$1" && pwd); }
BUILD=$(abs "$BUILD")
[ -x "$BUILD/clphys" ] || { echo "poisson_mpi_cpu.sh: no $BUILD/clphys" | tee -a "$log" >&2; exit 2; }
# PoCL alone: the host's ICD default; libraries the builds need
unset OCL_ICD_VENDORS
export OCL_ICD_FILENAMES=libpocl.so.2
LIB_DIR=${LIB_DIR:-$BUILD/lib}
[ -d "$LIB_DIR" ] && LIB_DIR=$(abs "$LIB_DIR")
extra=$LIB_DIR
[ -d .device/lib ] && extra=$extra:$(abs .device/lib)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export POCL_MAX_PTHREAD_COUNT=1 OMPI_MCA_hwloc_base_binding_policy=core
export CLPHYS_CACHE_DIR=${CLPHYS_CACHE_DIR:-/tmp/clphys-cpu-cache}
export CLPHYS_BENCH_POISSON_GRID=$GRID
host=$OUTDIR/poisson_mpi_cpu_host.txt
{
  date -u
  grep -m1 'model name' /proc/cpuinfo
  nproc
  lscpu 2>/dev/null | grep -E 'Socket|Core|Thread|NUMA node\(s\)|MHz'
  mpirun --version 2>&1 | head -1
  LD_LIBRARY_PATH=$BUILD:$extra "$BUILD/clphys" devices 2>&1
  cat /proc/loadavg
} > "$host" 2>&1
cat "$host"
# one bench run: build, precision, ranks, hypre (1/0), baseline (1/0), gather values
run() {
  local b=$1 prec=$2 np=$3 hy=$4 base=$5 g=$6 name
  name=$(basename "$b")
  local json=$OUTDIR/cpu_${name}_${prec}_np$np.json left=$((DEADLINE - ($(date +%s) - t0)))
  if [ "$left" -lt 20 ]; then
    echo "poisson_mpi_cpu.sh: skipped $name $prec np $np ($left s left)" | tee -a "$log"
    return
  fi
  echo "== $name $prec np $np hypre $hy baseline $base ($left s left) $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"
  local hp=none
  [ "$hy" = 1 ] && hp=$b/poisson_hypre
  LD_LIBRARY_PATH=$b:$extra CLPHYS_BENCH_POISSON_PRECISION=$prec CLPHYS_BENCH_POISSON_GATHER=$g \
    CLPHYS_BENCH_POISSON_HYPRE=$hp CLPHYS_BENCH_POISSON_BASELINE=$base \
    timeout -k 5 "$left" mpirun --oversubscribe --bind-to core -np "$np" \
    -x LD_LIBRARY_PATH -x OCL_ICD_FILENAMES -x POCL_MAX_PTHREAD_COUNT -x CLPHYS_CACHE_DIR \
    -x CLPHYS_BENCH_POISSON_GRID -x CLPHYS_BENCH_POISSON_GATHER -x CLPHYS_BENCH_POISSON_PRECISION \
    -x CLPHYS_BENCH_POISSON_HYPRE -x CLPHYS_BENCH_POISSON_BASELINE -x OMPI_MCA_hwloc_base_binding_policy \
    "$b/clphys" bench --path poisson_mpi --device 0:0 --repeat "$REPEAT" --json "$json" --force >> "$log" 2>&1
  echo "rc $? after $(($(date +%s) - t0)) s" | tee -a "$log"
  # the JSONs as one file (the device tool returns few files)
  [ -f "$json" ] && mv "$json" "$jdir/" && tar -C "$(dirname "$jdir")" -czf "$OUTDIR/poisson_mpi_cpu_json.tar.gz" json
  grep -E 'note \(poisson-mpi|hypre' "$log" | tail -n 4
}
first=1
for prec in $PRECISIONS; do
  for np in $NPS; do
    hy=0
    [ "$prec" = "$(echo $PRECISIONS | cut -d' ' -f1)" ] && hy=1
    base=0
    [ "$BASELINE" = 1 ] && [ $first = 1 ] && base=1
    first=0
    run "$BUILD" "$prec" "$np" "$hy" "$base" "$GATHER"
  done
  if [ -n "$OLD_BUILD" ] && [ "$prec" = "$(echo $PRECISIONS | cut -d' ' -f1)" ]; then
    for np in $NPS; do run "$(abs "$OLD_BUILD")" "$prec" "$np" 0 0 "$OLD_GATHER"; done
  fi
done
echo "poisson_mpi_cpu.sh: done after $(($(date +%s) - t0)) s" | tee -a "$log"
