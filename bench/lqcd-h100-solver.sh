#!/bin/bash
# lqcd-h100-solver.sh — the solver's device runs (run tool, H100), from a copy
# of the repository with build-rel/ (clphys, libclphys, lqcd_solver_probe:
# see bench/lqcd_solver_probe.c) and ../.device carried:
#   bash bench/lqcd-h100-solver.sh probe   switches of the solver plan, transfer pieces, then the bench path
#   bash bench/lqcd-h100-solver.sh final   clphys bench --path solver only
# Results under $OUT; a short table at the end of the output.
set -u
B=./build-rel
export CLPHYS_CACHE_DIR=/tmp/clc   # fresh machine: the first plan of each kind tunes
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $OUT/smi.csv 2>&1
tail -1 $OUT/smi.csv; nproc
if [ "${1:-probe}" = probe ]; then
    s=$(date +%s)
    timeout 280 $B/lqcd_solver_probe nvidia 32 7 > $OUT/probe.txt 2>&1
    echo "probe rc $? $(( $(date +%s) - s ))s"
fi
s=$(date +%s)
timeout 250 $B/clphys bench --device nvidia --path solver --json $OUT/solver.json > $OUT/solver.txt 2>&1
echo "bench rc $? $(( $(date +%s) - s ))s"
[ -f $OUT/probe.txt ] && grep -E "^xfer" $OUT/probe.txt && sed -n '/^solver /,$p' $OUT/probe.txt | cut -c1-96
python3 - <<'PY'
import json, os
p = os.path.join(os.environ["OUT"], "solver.json")
if os.path.exists(p):
    for q in json.load(open(p))["results"]:
        r = q["params"]
        print("%-26s it %3d iter %.4f total %.4f up %.4f down %.4f speedup %.3f ok %s" % (q["variant"], r["iterations"],
              q["kernel_s_median"], q["total_s_median"], r["upload_s_median"], r["download_s_median"],
              r["speedup_time_to_solution"], q["verified"]))
PY
