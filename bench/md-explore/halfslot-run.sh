#!/bin/bash
# On the device machine (carry .device and build-rel; built by halfslot.sh):
#   source .device/env.sh && bash bench/md-explore/halfslot-run.sh [d05|d1|all] [names|-]
cd "$(dirname "$0")/../.."
export CLPHYS_CACHE_DIR=/tmp/clc CLPHYS_KERNEL_DIR=build-rel/x/cl
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1
date -u
CLPHYS_DEVICE=${CLPHYS_DEVICE:-nvidia} timeout 400 build-rel/x/halfslot run "${1:-all}" "${2:--}"
echo "rc $?"
