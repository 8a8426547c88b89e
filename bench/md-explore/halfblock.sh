#!/bin/bash
# Build the half-cas explorer against a release build of the library:
#   meson setup build-rel --buildtype=release && ninja -C build-rel && bash bench/md-explore/halfblock.sh
# Run: CLPHYS_DEVICE=nvidia build-rel/x/halfblock [all|d05|d1] [config,names|-] [edge] [calls]
set -e
cd "$(dirname "$0")/../.."
mkdir -p build-rel/x
gcc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -DCL_TARGET_OPENCL_VERSION=120 -I. -Iinclude \
    bench/md-explore/halfblock.c -o build-rel/x/halfblock -Lbuild-rel -lclphys -lOpenCL -lm \
    -Wl,-rpath,'$ORIGIN/..'
