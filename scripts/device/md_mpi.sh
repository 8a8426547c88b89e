#!/bin/bash
# md_mpi.sh — distributed MD (bench path md_mpi) on the GPUs of one host,
# one MPI rank per GPU, the one-GPU baseline measured in the same runs.
#
# usage: scripts/device/md_mpi.sh BUILD_DIR [OUT_DIR]
#   BUILD_DIR  a release build of clphys with MPI (BUILD_DIR/clphys)
#   OUT_DIR    where the JSON and logs go (default: $OUT, the device tool's)
# Environment:
#   NP         ranks = GPUs to use (default: the GPUs nvidia-smi lists, else 2)
#   DEVICE     clphys --device of every rank (default: nvidia)
#   CLPHYS_MD_ONE_QUEUE=1  the ghost exchange's copies on the compute queue
#              (the path of a device without a second queue), to time both
#   CLPHYS_MD_HOST_GHOSTS=1  rebuilds make the ghost lists on the host (the
#              path before the device made them), to time both
#   CLPHYS_MD_NODE_STAGING=0  the ghost positions in MPI's messages instead
#              of shared memory between the ranks (node staging), to time both;
#              CLPHYS_MD_STAGING_THREADS=T its copies by T threads;
#              CLPHYS_MD_NODE_DIRECT=0 those copies instead of the devices'
#              own straight to and from the shared memory
#   CLPHYS_MD_GHOST_ROUNDS=1  a rebuild's ghost lists in rounds after the
#              migration instead of in the migrants' messages, to time both
#   CLPHYS_MD_PREPACK=0  the first cut dimension's ghost positions packed by
#              a kernel of their own after the kick-drift instead of by the
#              kick-drift, to time both
#   RANKS      the rank counts to run (default: "1 NP"; the NP run's rows carry
#              their own one-GPU baseline, so "NP" alone suffices for a comparison)
#   TINY=1     a local check on PoCL: DEVICE=pocl, 4,000 atoms (--quick --size
#              4000), no GPU wrapper, 2 repeats
# Writes, for P in 1 and NP: OUT_DIR/md-mpi-npP.json (rows in the scaling
# schema: strong scaling at 32,000, 256,000 and 2,048,000 atoms, weak
# scaling at 1,048,576 atoms per GPU, fp32 and fp64; each row's baseline_s
# is rank 0's GPU alone on the same work in the same run) and
# OUT_DIR/md-mpi-npP.log (the bench's messages and table), and
# OUT_DIR/md-mpi-env.txt (GPUs, topology, MPI).  Exit status: the last
# failing run's, else 0.
set -u
BUILD=${1:?usage: md_mpi.sh BUILD_DIR [OUT_DIR]}
OUTDIR=${2:-${OUT:?give OUT_DIR or set OUT}}
mkdir -p "$OUTDIR"
[ -x "$BUILD/clphys" ] || { echo "md_mpi.sh: $BUILD/clphys not found" >&2; exit 2; }
[ -f .device/env.sh ] && source .device/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CLPHYS_CACHE_DIR=${CLPHYS_CACHE_DIR:-$(mktemp -d)/kcache}
TINY=${TINY:-0}
if [ "$TINY" = 1 ]; then
    DEVICE=${DEVICE:-pocl}
    NP=${NP:-2}
    EXTRA=(--quick --size 4000 --repeat 2)
    export POCL_MAX_PTHREAD_COUNT=${POCL_MAX_PTHREAD_COUNT:-1}
else
    DEVICE=${DEVICE:-nvidia}
    NP=${NP:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)}
    [ "${NP:-0}" -ge 1 ] 2>/dev/null || NP=2
    EXTRA=(--repeat 5)
fi
# one GPU per rank: the node-local rank picks it
WRAP=$(mktemp)
cat > "$WRAP" <<'W'
#!/bin/sh
[ "${TINY:-0}" = 1 ] || export CUDA_VISIBLE_DEVICES=${OMPI_COMM_WORLD_LOCAL_RANK:-0}
exec "$@"
W
chmod +x "$WRAP"
export TINY
MPI=(mpirun --allow-run-as-root --oversubscribe)
# a GPU's rank and its copy threads float; a CPU device's ranks keep Open
# MPI's default binding (a core each at two ranks): unbound, the two ranks'
# PoCL threads shared one core of the 2-core VM in 2 of 6 runs (172-179
# against 264-291 steps/s, bench/md-mpi-notes.md round 7)
case "$DEVICE" in pocl | intel | cpu) ;; *) MPI+=(--bind-to none) ;; esac
for v in TINY LD_LIBRARY_PATH CLPHYS_CACHE_DIR POCL_MAX_PTHREAD_COUNT OCL_ICD_VENDORS CLPHYS_MD_ONE_QUEUE CLPHYS_MD_HOST_GHOSTS CLPHYS_MD_NODE_STAGING CLPHYS_MD_STAGING_THREADS CLPHYS_MD_NODE_DIRECT CLPHYS_MD_GHOST_ROUNDS CLPHYS_MD_PREPACK; do
    [ -n "${!v+x}" ] && MPI+=(-x "$v")
done
# mpirun's ranks on that machine get OCL_ICD_FILENAMES=libpocl.so.2 (DEVICE.md): name NVIDIA's first
[ "$TINY" = 1 ] || MPI+=(-x OCL_ICD_FILENAMES=libnvidia-opencl.so.1:libpocl.so.2)
{
    date -u; hostname; nvidia-smi -L 2>&1; nvidia-smi topo -m 2>&1; mpirun --version 2>&1 | head -1
    echo "BUILD=$BUILD DEVICE=$DEVICE NP=$NP TINY=$TINY"; git log -1 --format='%H %s' 2>/dev/null
} > "$OUTDIR/md-mpi-env.txt"
rc=0
for P in ${RANKS:-1 $NP}; do
    echo "md_mpi.sh: $P rank(s) on $DEVICE" >&2
    "${MPI[@]}" -np "$P" "$WRAP" "$BUILD/clphys" bench --path md_mpi --device "$DEVICE" "${EXTRA[@]}" \
        --json "$OUTDIR/md-mpi-np$P.json" --force > "$OUTDIR/md-mpi-np$P.log" 2>&1 || rc=$?
    tail -n 20 "$OUTDIR/md-mpi-np$P.log" >&2
done
rm -f "$WRAP"
exit $rc
