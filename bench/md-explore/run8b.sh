#!/bin/bash
# Next H100 run for issue 5 (prepared in session 8, not yet run: the device stopped lending).
# 1) explorer: per-launch OpenCL events vs back-to-back span vs host wall; WG/unroll sweep of tp-u2
# 2) the library's lj rows (new pipelined full-transposed, new full-staged) with JSON, fp64 and fp32
# 3) md path (2,048,000 atoms incl. full-staged)
# Build first here: ninja -C build-rel, and the explorer as in bench/md-notes.md (build-rel/x/).
source .device/env.sh
export CLPHYS_DEVICE=nvidia CLPHYS_KERNEL_DIR=build-rel/x/cl CLPHYS_CACHE_DIR=/tmp/clc
X=build-rel/x
mkdir -p /tmp/ptx
timeout 150 $X/explore seed05 /tmp/ptx t-u4,tp-u2,tp-u4,tp-u2-w32,tp-u2-w64,tp-u2-w96,tp-u2-w160,tp-u2-w256,tp-u3,tp-u1,t2d-t4-u2 > $OUT/x.txt 2>&1; echo "x rc $?" >> $OUT/x.txt
unset CLPHYS_KERNEL_DIR
( time timeout 200 ./build-rel/clphys bench --device nvidia --path lj --repeat 3 --json $OUT/lj.json ) > $OUT/lj.txt 2>&1; echo "lj rc $?" >> $OUT/lj.txt
( time timeout 90 ./build-rel/clphys bench --device nvidia --path md --json $OUT/md.json ) > $OUT/md.txt 2>&1; echo "md rc $?" >> $OUT/md.txt
grep -v "build-\|^d1" $OUT/x.txt | sed 's/tpi .* 100calls/ /;s/Gpair.*err_exact/ e/;s/virial.*//' | cut -c1-130
grep -h "^lj .*62500\|^md \|rc \|verified" $OUT/lj.txt $OUT/md.txt | cut -c1-150
