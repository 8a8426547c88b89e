#!/bin/bash
# lqcd-h100.sh — the LQCD path's device runs (run tool, H100), from the
# repository root with .device/ and build-rel-lqcd/ carried:
#   bash bench/lqcd-h100.sh probe   solver variants, tuning cache round trip, BLAS probe
# (build bench/lqcd_blas_probe.c first, see its header)
#   bash bench/lqcd-h100.sh final   clphys bench --path dslash and --path solver
# Results under $OUT; a short table at the end of the output.
set -u
source .device/env.sh
B=./build-rel-lqcd
export CLPHYS_CACHE_DIR=/tmp/clphys-cache   # fresh machine: the first plan of each kind tunes
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>&1 | tail -2
case "${1:-probe}" in
probe)
    $B/lqcd_blas_probe nvidia > $OUT/blas_probe.txt 2>&1
    $B/clphys bench --device nvidia --path solver --json $OUT/solver.json > $OUT/solver.txt 2>&1
    $B/clphys bench --device nvidia --path dslash --size 1048576 --repeat 5 --json $OUT/dslash32.json \
        > $OUT/dslash32.txt 2>&1
    # the same again: the tuning now comes from the cache
    $B/clphys bench --device nvidia --path dslash --size 1048576 --repeat 5 --json $OUT/dslash32-cached.json \
        > $OUT/dslash32-cached.txt 2>&1
    cat $CLPHYS_CACHE_DIR/dslash-tune-*.txt > $OUT/tune-files.txt
    cat $OUT/blas_probe.txt
    grep -E "^(solver|dslash) |best fixed" $OUT/solver.txt $OUT/dslash32.txt $OUT/dslash32-cached.txt \
        | sed 's/^[^:]*\///' | cut -c1-150
    python3 - <<'PY'
import json, os
for f in ("solver.json",):
    p = os.path.join(os.environ["OUT"], f)
    if not os.path.exists(p): continue
    for r in json.load(open(p))["results"]:
        q = r["params"]
        print(f[:-5], r["variant"], "it", q["iterations"], "iter_s %.4f total_s %.4f up %.4f down %.4f speedup %.2f wg %s/%s" % (
            r["kernel_s_median"], r["total_s_median"], q["upload_s_median"], q["download_s_median"],
            q["speedup_time_to_solution"], q["local_size_fp64"], q["local_size_fp32"]))
PY
    ;;
final)
    $B/lqcd_blas_probe nvidia > $OUT/blas_probe.txt 2>&1
    $B/clphys bench --device nvidia --path solver --json $OUT/solver.json > $OUT/solver.txt 2>&1
    echo "solver rc $?"
    $B/clphys bench --device nvidia --path dslash --json $OUT/dslash.json > $OUT/dslash.txt 2>&1
    echo "dslash rc $?"
    cat $CLPHYS_CACHE_DIR/dslash-tune-*.txt > $OUT/tune-files.txt
    cat $OUT/blas_probe.txt
    grep -E "^(solver|dslash) |best fixed|cannot launch|FAIL" $OUT/solver.txt $OUT/dslash.txt | sed 's/^[^:]*://' | cut -c1-140
    python3 - <<'PY'
import json, os
O = os.environ["OUT"]
r = json.load(open(os.path.join(O, "solver.json")))
for q in r["results"]:
    p = q["params"]
    print(q["variant"], "it", p["iterations"], "iter_s %.4f total_s %.4f up %.4f down %.4f one_shot %.4f speedup %.2f" % (
        q["kernel_s_median"], q["total_s_median"], p["upload_s_median"], p["download_s_median"], p["one_shot_s"],
        p["speedup_time_to_solution"]))
PY
    ;;
esac
