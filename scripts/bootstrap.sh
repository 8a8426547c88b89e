#!/usr/bin/env bash
# Install what clphys needs on Debian (only the packages that are missing),
# then configure and build into ./build (or $BUILD_DIR).  Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
# libnetcdf-dev: the Poisson path's NetCDF files (required); libhypre-dev: the
# Poisson bench's peer on CPUs (optional: the bench says when it is missing).
pkgs=(gcc meson ninja-build pkg-config python3 ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo
      libclblast-dev libcmocka-dev libcjson-dev libopenmpi-dev openmpi-bin libnetcdf-dev libhypre-dev zlib1g-dev
      # clang: tests/test_capability.c; pip: scripts/intel-opencl.sh; the checks of .ci/run:
      # libFuzzer (clang and its runtime), the sanitizers, a checking OpenCL device (oclgrind)
      clang libclang-rt-dev oclgrind python3-pip
      # the test `format` (scripts/check_format.py: clang-format 14)
      clang-format
      # the Python package (pip install .; .ci/run): headers for the extension, venv for the test environment
      python3-dev python3-venv)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
builddir=${BUILD_DIR:-build}
[ -f "$builddir/build.ninja" ] || meson setup "$builddir" --buildtype=release >&2
ninja -C "$builddir" >&2
