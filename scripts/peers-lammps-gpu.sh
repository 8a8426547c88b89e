#!/usr/bin/env bash
# LAMMPS with its GPU package on the OpenCL backend, built from Debian's
# source of the installed `lammps` package: the GPU peer of clphys's md rows
# (bench/peers/lammps_lj.py runs it beside them, with 1 MPI rank and with
# one rank per host core sharing the GPU, as the package's users do).
#
#   bash scripts/peers-lammps-gpu.sh         # prints the prefix, e.g. ~/.cache/clphys-peers/lammps-gpu
#   PRECS=mixed bash scripts/peers-lammps-gpu.sh
#   export CLPHYS_LAMMPS_GPU=$(bash scripts/peers-lammps-gpu.sh)   # where the bench looks first
#
# One build per GPU_PREC in $PRECS (default "mixed double"): <prefix>/<prec>/bin/lmp,
# stripped.  cmake with PKG_GPU on and every other package off (in.lj needs
# only lj/cut and fix nve, which are in the core), GPU_API=opencl against
# the system's ICD loader (USE_STATIC_OPENCL_LOADER=off: no download), Open
# MPI (BUILD_MPI=on), no OpenMP, JPEG, PNG, gzip or FFmpeg, so that the
# binary needs only libmpi.so.40, libOpenCL.so.1 and the C/C++ runtime.
# About 6 minutes per precision on 2 cores (niced: `nice -n 10`).
#
# Where: $CLPHYS_PEERS_DIR (as scripts/peers.sh), else
# ${XDG_CACHE_HOME:-~/.cache}/clphys-peers; the source and build folders
# under <prefix>/src and <prefix>/build-<prec> (the unpacked tree and the
# build folders removed after the builds unless KEEP_BUILD=1), the build logs as <prefix>/build-<prec>.log.
# Rerunnable: a stamp per version and precision skips what is built.
#
# Needs: Debian (or a derivative) with a deb-src entry for the archive that
# has the installed lammps version, e.g. /etc/apt/sources.list.d/deb-src.sources:
#   Types: deb-src
#   URIs: http://deb.debian.org/debian
#   Suites: bookworm bookworm-updates
#   Components: main
#   Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
# then `apt-get update`; and the packages dpkg-dev, cmake, make, g++,
# libopenmpi-dev, ocl-icd-opencl-dev (OpenCL headers and loader).  Exits 2
# when the source cannot be fetched, 3 when a tool is missing, 4 when the
# build fails (the log's tail is printed).
set -euo pipefail
root=${CLPHYS_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/clphys-peers}
prefix=$root/lammps-gpu
precs=${PRECS:-mixed double}
say() { echo "peers-lammps-gpu.sh: $*" >&2; }

for p in $precs; do
  case $p in mixed | double | single) ;; *) say "PRECS: '$p' is not one of mixed, double, single"; exit 3 ;; esac
done

# the source version of the installed package (its binary version may carry
# a binNMU suffix +bN); without an installed lammps, the newest source known
version=$(dpkg-query -W -f='${source:Version}' lammps 2>/dev/null || true)
if [ -z "$version" ]; then
  version=$(apt-cache showsrc lammps 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -1)
fi
if [ -z "$version" ]; then
  say "cannot tell which LAMMPS source to fetch: no lammps package installed and apt knows no lammps source"
  say "add a deb-src entry (see this script's header) and run apt-get update"
  exit 2
fi

todo=()
for p in $precs; do
  [ -f "$prefix/$p/.stamp-$version" ] && [ -x "$prefix/$p/bin/lmp" ] || todo+=("$p")
done
if [ ${#todo[@]} -eq 0 ]; then
  echo "$prefix"
  exit 0
fi

missing=()
for t in dpkg-source cmake make g++ mpicxx strip; do
  command -v "$t" >/dev/null || missing+=("$t")
done
[ -f /usr/include/CL/cl.h ] || missing+=("CL/cl.h")
if [ ${#missing[@]} -gt 0 ]; then
  say "missing: ${missing[*]} (apt-get install dpkg-dev cmake make g++ libopenmpi-dev ocl-icd-opencl-dev)"
  exit 3
fi

# 1. the source: apt-get source, once (it keeps the .orig tarball and skips
#    the download when it is there and matches)
src=$prefix/src
tree=$src/lammps-$version
if [ ! -f "$tree/cmake/CMakeLists.txt" ]; then
  mkdir -p "$src"
  say "fetching Debian's LAMMPS source $version into $src"
  if ! (cd "$src" && apt-get source --download-only -q "lammps=$version" >&2); then
    say "could not fetch the source of lammps=$version: apt-get source needs a deb-src entry"
    say "for the archive that has it (see this script's header) and apt-get update"
    exit 2
  fi
  rm -rf "$tree.tmp"
  dsc=$(ls "$src"/lammps_"${version#*:}".dsc)
  dpkg-source -x -q "$dsc" "$tree.tmp" >/dev/null
  mv "$tree.tmp" "$tree"
fi

# 2. one build per precision
for p in "${todo[@]}"; do
  b=$prefix/build-$p
  log=$prefix/build-$p.log
  say "building GPU_PREC=$p into $prefix/$p (log: $log)"
  start=$(date +%s)
  rm -rf "$b"
  if ! {
    nice -n 10 cmake -S "$tree/cmake" -B "$b" -D CMAKE_BUILD_TYPE=Release \
      -D PKG_GPU=on -D GPU_API=opencl -D GPU_PREC="$p" -D USE_STATIC_OPENCL_LOADER=off \
      -D BUILD_MPI=on -D BUILD_OMP=off -D BUILD_SHARED_LIBS=off -D LAMMPS_EXCEPTIONS=off \
      -D WITH_JPEG=off -D WITH_PNG=off -D WITH_GZIP=off -D WITH_FFMPEG=off \
      -D BUILD_TOOLS=off -D BUILD_DOC=off -D ENABLE_TESTING=off &&
      nice -n 10 cmake --build "$b" --target lmp -j "$(nproc)"
  } >"$log" 2>&1; then
    tail -30 "$log" >&2
    say "the build of GPU_PREC=$p failed (log: $log)"
    exit 4
  fi
  mkdir -p "$prefix/$p/bin"
  strip -o "$prefix/$p/bin/lmp" "$b/lmp"
  rm -f "$prefix/$p"/.stamp-*
  touch "$prefix/$p/.stamp-$version"
  [ "${KEEP_BUILD:-0}" = 1 ] || rm -rf "$b"
  say "GPU_PREC=$p built in $(($(date +%s) - start)) s: $prefix/$p/bin/lmp"
done
# the unpacked tree (~420 MB) goes; the source packages stay for a rebuild
[ "${KEEP_BUILD:-0}" = 1 ] || rm -rf "$tree"
echo "$prefix"
