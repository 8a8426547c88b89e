#!/bin/bash
# Final device call for half-cas: `clphys bench --path lj` (JSON) on the H100, then the
# explorer's main shapes again.  From the root of a tree holding .device/ and the worktree
# copy in $1 (built: build-rel/clphys, build-rel/x/halfblock):
#   bash $1/bench/md-explore/halfblock-final.sh $1
source .device/env.sh
cd "$1"
export CLPHYS_DEVICE=nvidia CLPHYS_CACHE_DIR=/tmp/clc
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $OUT/smi.txt 2>&1
( time timeout 200 build-rel/clphys bench --device nvidia --path lj --repeat 3 --json $OUT/lj.json ) > $OUT/lj.txt 2>&1
echo "lj rc $?" >> $OUT/lj.txt
( timeout 60 build-rel/x/halfblock d05 per-i,b222,b222-t2,b221,b222-count-g ) > $OUT/hb.txt 2>&1
cat $OUT/smi.txt
grep -h "rc \|real\|verified\|FAIL\|fail" $OUT/lj.txt | head
grep -h "^lj .*half-cas\|^lj .*full-transposed " $OUT/lj.txt | cut -c1-130
grep -v ptxas $OUT/hb.txt | sed 's/  build.*//; s/(min *[0-9.]*) //; s/100calls //'
