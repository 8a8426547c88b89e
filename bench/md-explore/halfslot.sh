#!/bin/bash
# Build the slot-coded half-cas explorer against a release build of the library:
#   meson setup build-rel --buildtype=release && ninja -C build-rel && bash bench/md-explore/halfslot.sh
# Run: CLPHYS_KERNEL_DIR=build-rel/x/cl build-rel/x/halfslot [run|count] [d05|d1|all] [names|-] [edge] [calls]
set -e
cd "$(dirname "$0")/../.."
mkdir -p build-rel/x/cl
cp cl/*.h cl/*.cl bench/md-explore/*.cl build-rel/x/cl/
gcc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -DCL_TARGET_OPENCL_VERSION=120 -I. -Iinclude \
    bench/md-explore/halfslot.c -o build-rel/x/halfslot -Lbuild-rel -lclphys -lOpenCL -lm \
    -Wl,-rpath,'$ORIGIN/..'
