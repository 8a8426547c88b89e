#!/usr/bin/env bash
# Final H100 run: every bench path separately (each writes its JSON), then NBabel input16k.
source .device/env.sh
B=./build-rel/clphys
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > $OUT/smi.csv 2>&1
$B devices > $OUT/devices.txt 2>&1
for p in gravity lj md dslash solver; do
  s=$(date +%s)
  timeout 160 $B bench --device nvidia --path $p --json $OUT/$p.json > $OUT/$p.txt 2>&1
  echo "$p rc=$? $(( $(date +%s) - s ))s $(tail -1 $OUT/$p.txt)"
done
s=$(date +%s)
timeout 60 $B nbody --input build-rel/input16k --dt 1e-3 --t-end 10 --eps 0 --precision fp64 --device nvidia --energy-every 1 > $OUT/nbabel16k.txt 2>&1
echo "nbody rc=$? $(( $(date +%s) - s ))s"; tail -2 $OUT/nbabel16k.txt
timeout 90 $B bench --device nvidia --path neighbor --json $OUT/neighbor.json > $OUT/neighbor.txt 2>&1
echo "neighbor rc=$? $(tail -1 $OUT/neighbor.txt)"
