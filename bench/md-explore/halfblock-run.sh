#!/bin/bash
# One device call: the half-cas explorer on the H100 (see halfblock.sh to build).
# From the root of a tree holding .device/ and this worktree copy in $1:
#   bash $1/bench/md-explore/halfblock-run.sh $1 [mode] [configs]
source .device/env.sh
cd "$1"
export CLPHYS_DEVICE=nvidia CLPHYS_CACHE_DIR=/tmp/clc
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $OUT/smi.txt 2>&1
( time timeout ${HB_TIMEOUT:-280} build-rel/x/halfblock ${2:-all} ${3:--} ) > $OUT/hb.txt 2>&1; echo "rc $?" >> $OUT/hb.txt
cat $OUT/smi.txt
grep "ptxas" $OUT/hb.txt | grep -v "^ *ptxas [^:]*: *$" | sed 's/ptxas info *: *//' | sort -u | head -40
grep -v "ptxas" $OUT/hb.txt | sed 's/  build.*//; s/(min *[0-9.]*) //; s/100calls //'
