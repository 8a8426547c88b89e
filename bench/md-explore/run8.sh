#!/bin/bash
# session 8, run 1: pipelined / 2-d full-list LJ kernels (explore, OpenCL), then the same
# PTX through the CUDA driver API (ptxlab) under Nsight Compute for stall reasons.
source .device/env.sh
export CLPHYS_DEVICE=nvidia CLPHYS_KERNEL_DIR=build-rel/x/cl CLPHYS_CACHE_DIR=/tmp/clc
X=build-rel/x
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $OUT/smi.txt 2>&1
mkdir -p /tmp/ptx
timeout 200 $X/explore seed05 /tmp/ptx t-u4,tp-u4,tp-u2,tp-u8,tp0-u4,tp-u4-sel2,tp-u4-rcp,tp-u4-noev,tp-u4-w32,tp-u4-w64,tp-u4-w256,t2d-t2-u2,t2d-t2-u4,t2d-t4-u2,t2d-t4-u1,t2d-t2-u2-w64,t2d-t4-u2-w256,t2d-t2-u2-rcp,t2d-t8-u1-w256 > $OUT/x.txt 2>&1; echo "x rc $?" >> $OUT/x.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU" > $OUT/lab.txt
for c in "t-u4 x_full_t fp64 1 128" "tp-u4 x_full_tp fp64 1 128" "t2d-t2-u2 x_full_t2d fp64 2 128" "t-u4 x_full_t fp32 1 128" "tp-u4 x_full_tp fp32 1 128"; do
  set -- $c
  timeout 30 $X/ptxlab /tmp/ptx/$1-$3.ptx $2 $3 $4 $5 >> $OUT/lab.txt 2>&1
done
for c in "t-u4 x_full_t fp64 1 128" "tp-u4 x_full_tp fp64 1 128" "t2d-t2-u2 x_full_t2d fp64 2 128"; do
  set -- $c
  timeout 100 $NCU --clock-control none --set full --launch-skip 20 --launch-count 1 $X/ptxlab /tmp/ptx/$1-$3.ptx $2 $3 $4 $5 30 > $OUT/ncu-$1-$3.txt 2>&1
done
set -- t-u4 x_full_t fp64 1 128
timeout 100 $NCU --clock-control none --set full --import-source no --launch-skip 20 --launch-count 1 --page source --csv --print-source sass $X/ptxlab /tmp/ptx/$1-$3.ptx $2 $3 $4 $5 30 > $OUT/sass-$1-$3.csv 2>&1
cd /tmp && tar czf $OUT/ptx.tgz ptx
grep -v "build-\|^d1" $OUT/x.txt | sed 's/tpi .* 100calls/ /' | cut -c1-120
grep -h "registers\|calls" $OUT/lab.txt | cut -c1-200
for f in $OUT/ncu-*.txt; do echo "== $f"; grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Executed Ipc A|L1/TEX Hit|L2 Hit|Memory Throughput|Compute \(SM\) Th|Warp Cycles Per Issued|No Eligible" $f | head -16; done
