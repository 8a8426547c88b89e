#!/bin/bash
# h100-next.sh — the H100 runs of issues 4 and 5 (session 10, 2026-11-23: `md` and `final` have run
# at 9cbd6ea..4ad4944, results in bench/results/; `final` re-measures lj, md and solver).  Here, first:
#   bash bench/h100-next.sh build          # build-rel + explorers + probe; stage .device/
# then with the device tool, carry [".device", "build-rel"], one call each (each ends within 600 s):
#   source .device/env.sh && bash bench/h100-next.sh md      # half-cas explorer (s9) + clphys bench lj (JSON)
#   source .device/env.sh && bash bench/h100-next.sh lqcd    # solver switches + clphys bench solver
# After choosing defaults from those (bench/md-notes.md, bench/lqcd-notes.md say how):
#   source .device/env.sh && bash bench/h100-next.sh final   # lj, md, solver JSON for bench/results/
set -u
cd "$(dirname "$0")/.."
what=${1:-}
if [ "$what" = build ]; then
    set -e
    [ -f build-rel/build.ninja ] || meson setup build-rel --buildtype=release
    ninja -C build-rel
    mkdir -p build-rel/x/cl
    cp cl/*.h cl/*.cl bench/md-explore/lj_x.cl build-rel/x/cl/
    cc="gcc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -DCL_TARGET_OPENCL_VERSION=120 -I. -Iinclude -Iplatform"
    $cc bench/md-explore/explore.c host/ref/md_ref.c -o build-rel/x/explore -Lbuild-rel -lclphys -lOpenCL -lm \
        -Wl,-rpath,'$ORIGIN/..'
    $cc bench/md-explore/ptxlab.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda -lm \
        -o build-rel/x/ptxlab
    bash bench/md-explore/halfblock.sh
    gcc -O2 -std=gnu11 -fopenmp -Iinclude -I. bench/lqcd_solver_probe.c -Lbuild-rel -lclphys -lOpenCL -lm \
        -Wl,-rpath,'$ORIGIN' -o build-rel/lqcd_solver_probe
    ../shared/device/stage.sh build-rel
    # the device machine has no cJSON (clphys writes the bench JSON with it)
    cp -L "$(ldconfig -p | awk '/libcjson\.so\.1 /{print $NF; exit}')" .device/lib/
    exit 0
fi
export CLPHYS_CACHE_DIR=/tmp/clc
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv \
    > $OUT/smi.txt 2>&1
case "$what" in
md)
    # half-cas: the per-i kernel with exchanges in flight / spread, blocked at unroll 1-2 (md-notes s9)
    HB_TIMEOUT=200 bash bench/md-explore/halfblock-run.sh . s9 - > $OUT/hb-summary.txt 2>&1
    ( time timeout 300 build-rel/clphys bench --device nvidia --path lj --repeat 3 --json $OUT/lj.json ) \
        > $OUT/lj.txt 2>&1
    echo "lj rc $?" >> $OUT/lj.txt
    tail -30 $OUT/hb-summary.txt
    grep -h "^lj .*62500\|rc \|verified" $OUT/lj.txt | cut -c1-150
    ;;
lqcd)
    bash bench/lqcd-h100-solver.sh probe
    ;;
final)
    ( time timeout 240 build-rel/clphys bench --device nvidia --path lj --repeat 3 --json $OUT/lj.json ) \
        > $OUT/lj.txt 2>&1
    ( time timeout 100 build-rel/clphys bench --device nvidia --path md --json $OUT/md.json ) > $OUT/md.txt 2>&1
    ( time timeout 200 build-rel/clphys bench --device nvidia --path solver --json $OUT/solver.json ) \
        > $OUT/solver.txt 2>&1
    grep -h "^lj .*62500\|^md \|^solver \|verified\|real" $OUT/lj.txt $OUT/md.txt $OUT/solver.txt | cut -c1-150
    ;;
*)
    echo "usage: bash bench/h100-next.sh build|md|lqcd|final" >&2
    exit 2
    ;;
esac
