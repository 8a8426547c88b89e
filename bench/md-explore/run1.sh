#!/bin/bash
# explorer run 1: experimental LJ kernels on the H100
source .device/env.sh
export CLPHYS_DEVICE=nvidia CLPHYS_KERNEL_DIR=build-rel-md/x/cl CLPHYS_CACHE_DIR=/tmp/clc
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > $OUT/smi.txt 2>&1
X=build-rel-md/x/explore
mkdir -p $OUT/ptx
timeout 150 $X seed $OUT/ptx > $OUT/seed.txt 2>&1; echo "seed rc $?" >> $OUT/seed.txt
timeout 40 $X seedns $OUT/ptx t-sel-u8,tb4,tb8,gb4-u2-w256,h1-pf,hl-w64 > $OUT/seedns.txt 2>&1; echo "ns rc $?" >> $OUT/seedns.txt
timeout 100 $X md2m $OUT/ptx t-base,t-sel-u4,t-sel-u8,tb4,tb8,cb4,cb8,gb4-u2-w256,gb4-u4-w256,gb8-u2-w256,h1-pf,hl-w64,hl-w128-h2k 80 > $OUT/md2m.txt 2>&1; echo "md2m rc $?" >> $OUT/md2m.txt
cd $OUT && tar czf ptx.tgz ptx && rm -rf ptx
grep -h "100calls\|build-\|rc \|changes" seed.txt seedns.txt md2m.txt | sed 's/tpi .* 100calls/ /' | awk '{$NF=$NF; print}' | cut -c1-100 | grep -v "^d1\|build-\|lib-"
