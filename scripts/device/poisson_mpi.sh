#!/usr/bin/env bash
# poisson_mpi.sh — the Poisson solver over MPI ranks on a machine with
# several GPUs (issue 29): one rank per GPU (CUDA_VISIBLE_DEVICES set per
# rank from OMPI_COMM_WORLD_LOCAL_RANK), `clphys bench --path poisson_mpi`,
# whose one run gives both scaling rows with their one-GPU baselines,
# measured by rank 0 alone in the same run (bench/poisson_mpi.c):
#   weak    a share of SHARE cells per GPU (default 1024x1024x64) against
#           one share on one GPU  (goal: efficiency >= 0.85 on 2 GPUs)
#   strong  the NP shares together (2048x1024x64 on 2 GPUs) against that
#           whole grid on one GPU  (goal: speedup >= 1.6 on 2 GPUs)
#
# Usage, from the project root (where .device/ is, if staged):
#   scripts/device/poisson_mpi.sh BUILD_DIR [OUT_DIR]
# BUILD_DIR: a release build of clphys (BUILD_DIR/clphys); OUT_DIR: where
# the results go (default $OUT, else the current folder).  Environment:
#   NP (2) ranks, SHARE (1024x1024x64) cells per rank, DEVICE (nvidia) the
#   --device of every rank, REPEAT (5) solves per case, GPU_SPLIT (1: one
#   GPU per rank; 0: leave CUDA_VISIBLE_DEVICES alone, e.g. on PoCL),
#   GATHER (64,256): the gather_columns values compared (the level below
#   which the V-cycle is gathered onto rank 0; one distributed plan each),
#   LIMIT (480) seconds before the run is stopped (its log kept).
# Writes OUT_DIR/poisson_mpi_npNP.json (the bench JSON: rows
# solve-basin-weak-PXxPY-gG and solve-basin-strong-PXxPY-gG per GATHER
# value G in the scaling schema), OUT_DIR/poisson_mpi_npNP.log (the run's output) and
# OUT_DIR/poisson_mpi_devices.txt (clphys devices as rank 0 saw them) and
# OUT_DIR/poisson_mpi_summary.txt (per row: baseline_s, step_s, speedup,
# efficiency, iterations, against the goals).
# Exit status: the run's.  Checked on PoCL at tiny sizes:
#   NP=2 SHARE=32x32x8 DEVICE=0:0 GPU_SPLIT=0 scripts/device/poisson_mpi.sh build /tmp/out
set -uo pipefail
BUILD=${1:?usage: scripts/device/poisson_mpi.sh BUILD_DIR [OUT_DIR]}
OUTDIR=${2:-${OUT:-.}}
NP=${NP:-2}
SHARE=${SHARE:-1024x1024x64}
DEVICE=${DEVICE:-nvidia}
REPEAT=${REPEAT:-5}
GPU_SPLIT=${GPU_SPLIT:-1}
GATHER=${GATHER:-64,256}
LIMIT=${LIMIT:-480}
CLPHYS=$(cd "$BUILD" && pwd)/clphys
[ -x "$CLPHYS" ] || { echo "poisson_mpi.sh: no $CLPHYS" >&2; exit 2; }
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
if [ -f .device/env.sh ]; then
  # NVIDIA's platform for every rank (mpirun's children otherwise get PoCL only)
  source .device/env.sh
  # the host gives every process OCL_ICD_FILENAMES=libpocl.so.2 (DEVICE.md): name NVIDIA's first
  export OCL_ICD_FILENAMES=libnvidia-opencl.so.1:libpocl.so.2
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CLPHYS_BENCH_POISSON_SHARE=$SHARE CLPHYS_BENCH_POISSON_GATHER=$GATHER POISSON_MPI_GPU_SPLIT=$GPU_SPLIT
wrap=$(mktemp /tmp/poisson_mpi_wrap.XXXXXX)
trap 'rm -f "$wrap"' EXIT
cat > "$wrap" <<'WRAP'
#!/bin/sh
# one GPU per rank of this node
if [ "${POISSON_MPI_GPU_SPLIT:-1}" = 1 ] && [ -n "${OMPI_COMM_WORLD_LOCAL_RANK:-}" ]; then
  export CUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_LOCAL_RANK
fi
exec "$@"
WRAP
chmod +x "$wrap"
xs=()
for v in CLPHYS_BENCH_POISSON_SHARE CLPHYS_BENCH_POISSON_GATHER POISSON_MPI_GPU_SPLIT LD_LIBRARY_PATH OCL_ICD_VENDORS OCL_ICD_FILENAMES \
         CLPHYS_CACHE_DIR POCL_MAX_PTHREAD_COUNT; do
  [ -n "${!v+x}" ] && xs+=(-x "$v")
done
"$CLPHYS" devices > "$OUTDIR/poisson_mpi_devices.txt" 2>&1
json=$OUTDIR/poisson_mpi_np$NP.json
log=$OUTDIR/poisson_mpi_np$NP.log
echo "poisson_mpi.sh: $NP ranks, share $SHARE, gather $GATHER, device $DEVICE, repeat $REPEAT -> $json" | tee "$log"
timeout -k 10 "$LIMIT" mpirun --oversubscribe -np "$NP" "${xs[@]}" "$wrap" "$CLPHYS" bench --path poisson_mpi \
  --device "$DEVICE" --repeat "$REPEAT" --json "$json" --force >> "$log" 2>&1
rc=$?
[ $rc = 124 ] && echo "poisson_mpi.sh: stopped after $LIMIT s" | tee -a "$log"
tail -n 20 "$log"
if [ -f "$json" ] && command -v python3 > /dev/null; then
  python3 - "$json" > "$OUTDIR/poisson_mpi_summary.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print('device: %s' % d.get('device', {}).get('name', '?'))
for r in d.get('results', []):
    p = r.get('params', {})
    goal = 'efficiency >= 0.85' if p.get('scaling') == 'weak' else 'speedup >= 1.6'
    print('%-36s gpus %s ranks %s %s: baseline %.4g s, step %.4g s, speedup %s, efficiency %.3f, iterations %s '
          '(baseline %s), levels on the ranks %s, floor %.4g s; goal %s' %
          (r.get('variant'), p.get('gpus'), p.get('ranks'), p.get('scaling'), p.get('baseline_s') or 0,
           p.get('step_s') or 0, p.get('speedup'), p.get('efficiency') or 0, p.get('iterations'),
           p.get('baseline_iterations'), p.get('levels_distributed'), p.get('floor_s') or 0, goal))
PY
  cat "$OUTDIR/poisson_mpi_summary.txt"
fi
exit $rc
