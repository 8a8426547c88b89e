#!/bin/bash
# final H100 run: clphys bench lj / md / neighbor (JSON), then explorer extras
source .device/env.sh
export CLPHYS_CACHE_DIR=/tmp/clc
B=build-rel-md/clphys
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $OUT/smi.txt 2>&1
( time timeout 170 $B bench --device nvidia --path lj --repeat 3 --json $OUT/lj.json ) > $OUT/lj.txt 2>&1; echo "lj rc $?" >> $OUT/lj.txt
( time timeout 60 $B bench --device nvidia --path md --json $OUT/md.json ) > $OUT/md.txt 2>&1; echo "md rc $?" >> $OUT/md.txt
( time timeout 25 $B bench --device nvidia --path neighbor --json $OUT/nb.json ) > $OUT/nb.txt 2>&1; echo "nb rc $?" >> $OUT/nb.txt
CLPHYS_DEVICE=nvidia CLPHYS_KERNEL_DIR=build-rel-md/x/cl timeout 25 build-rel-md/x/explore seed05 /tmp t-u4-nogather,t-u4-noev,tb4-asmrcp,tb8-asmrcp,tb8-asmrcp-noev > $OUT/x.txt 2>&1; echo "x rc $?" >> $OUT/x.txt
grep -h "rc \|real\|verified\|FAIL\|fail" $OUT/lj.txt $OUT/md.txt $OUT/nb.txt | head -20
grep -h "^lj .*fp64  *62500\|^md \|^neighbor.*62500" $OUT/lj.txt $OUT/md.txt $OUT/nb.txt | cut -c1-150
grep -v "build-\|lib-" $OUT/x.txt | sed 's/tpi .* 100calls/ /' | cut -c1-110
