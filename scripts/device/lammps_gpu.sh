#!/usr/bin/env bash
# lammps_gpu.sh — clphys's md rows on a GPU with LAMMPS's GPU package
# (OpenCL, GPU_PREC mixed and double) beside them, as its users run it: 1
# MPI rank, and one rank per host core sharing the GPU (bench/peers/
# lammps_gpu.py); in.lj at 32,000 and (--full) 2,048,000 atoms.
#
# usage, from the project root (where .device/ is, if staged):
#   bash scripts/device/lammps_gpu.sh BUILD_DIR [OUT_DIR]
#   BUILD_DIR  a release build of clphys (BUILD_DIR/clphys, libclphys.so.1)
#   OUT_DIR    where the JSON and logs go (default: $OUT, the device tool's)
# Staged as .stage/lmpgpu/run.sh (scripts/device/stage_lammps.sh) it finds
# the builds beside itself (<dir>/mixed/bin/lmp, <dir>/double/bin/lmp);
# elsewhere $CLPHYS_LAMMPS_GPU or scripts/peers-lammps-gpu.sh's prefix.
# Debian's CPU lmp (the CPU peer of md_mpi), where staged as <dir>/../lmpcpu
# (sourcing its env.sh: scripts/device/lmpcpu_env.sh), is put on PATH
# (used by the md rows of a CPU device: DEVICE=pocl).
# Environment: DEVICE (nvidia) clphys's --device; FULL (1) adds the
# 2,048,000-atom rows (--full).
# Writes OUT_DIR/md-lammps-gpu.json (the bench JSON), OUT_DIR/md-lammps-gpu.log
# (its messages and table), OUT_DIR/lammps-gpu-env.txt (devices, lmp
# libraries).  Exit status: the bench's.
set -u
BUILD=${1:?usage: lammps_gpu.sh BUILD_DIR [OUT_DIR]}
OUTDIR=${2:-${OUT:?give OUT_DIR or set OUT}}
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$OUTDIR"
BUILD=$(cd "$BUILD" && pwd)
[ -x "$BUILD/clphys" ] || { echo "lammps_gpu.sh: $BUILD/clphys not found" >&2; exit 2; }
# (.device/env.sh sets its own $here: this script keeps its folder in $script_dir)
[ -f .device/env.sh ] && source .device/env.sh
export OCL_ICD_FILENAMES=libnvidia-opencl.so.1:libpocl.so.2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH="$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -x "$script_dir/mixed/bin/lmp" ] || [ -x "$script_dir/double/bin/lmp" ] && export CLPHYS_LAMMPS_GPU=$script_dir
# the peer programs: this tree's, else a copy staged beside this script
[ -f bench/peers/lammps_gpu.py ] || { [ -f "$script_dir/peers/lammps_gpu.py" ] && export CLPHYS_PEERS=$script_dir/peers; }

# Debian's CPU lmp, where staged (scripts/device/lmpcpu_env.sh)
[ -f "$script_dir/../lmpcpu/env.sh" ] && source "$script_dir/../lmpcpu/env.sh"

{
  date -u
  "$BUILD/clphys" devices
  nvidia-smi --query-gpu=name,driver_version --format=csv 2>/dev/null
  echo "host cores: $(nproc)"
  mpirun --version 2>/dev/null | head -1
  for p in mixed double; do
    [ -x "${CLPHYS_LAMMPS_GPU:-/none}/$p/bin/lmp" ] && ldd "$CLPHYS_LAMMPS_GPU/$p/bin/lmp"
  done
  if [ -n "${LMPCPU_DIR:-}" ]; then
    echo "Debian's lmp, with the libraries this host lacks: $(ls "$LMPCPU_DIR/use" | tr '\n' ' ')"
    lmp -h 2>&1 | grep -A4 'Installed packages'
  fi
} >"$OUTDIR/lammps-gpu-env.txt" 2>&1

full=()
[ "${FULL:-1}" = 1 ] && full=(--full)
"$BUILD/clphys" bench --path md --device "${DEVICE:-nvidia}" "${full[@]}" \
  --json "$OUTDIR/md-lammps-gpu.json" >"$OUTDIR/md-lammps-gpu.log" 2>&1
rc=$?
tail -40 "$OUTDIR/md-lammps-gpu.log"
[ -n "${LMPCPU_DIR:-}" ] && rm -rf "$LMPCPU_DIR"
exit $rc
