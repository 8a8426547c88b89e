#!/bin/bash
# session 8, run 2: isolated vs back-to-back timing; WG/unroll sweep of the pipelined kernel; new lib kernel
source .device/env.sh
export CLPHYS_DEVICE=nvidia CLPHYS_KERNEL_DIR=build-rel/x/cl CLPHYS_CACHE_DIR=/tmp/clc
X=build-rel/x
mkdir -p /tmp/ptx
timeout 200 $X/explore seed05 /tmp/ptx t-u4,tp-u2,tp-u4,tp-u2-w32,tp-u2-w64,tp-u2-w96,tp-u2-w160,tp-u2-w192,tp-u2-w256,tp-u3,tp-u1,tp-u2-noev,t2d-t2-u1,t2d-t4-u2,t2d-t4-u1,tp-u4-w256 > $OUT/x.txt 2>&1; echo "x rc $?" >> $OUT/x.txt
timeout 120 $X/explore md2m /tmp/ptx tp-u2,tp-u4 80 > $OUT/md2m.txt 2>&1; echo "md2m rc $?" >> $OUT/md2m.txt
grep -v "build-\|^d1" $OUT/x.txt | sed 's/tpi .* 100calls/ /;s/Gpair.*err_exact/ e/;s/virial.*//' | cut -c1-130
grep -v "build-" $OUT/md2m.txt | sed 's/tpi .* 100calls/ /;s/Gpair.*err_exact/ e/;s/virial.*//' | cut -c1-130
