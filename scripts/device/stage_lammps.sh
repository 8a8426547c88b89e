#!/usr/bin/env bash
# stage_lammps.sh — the LAMMPS peers for a GPU host that has neither them
# nor a registry: into DEST (e.g. .stage, which the device tool carries)
#   DEST/lmpgpu/{mixed,double}/bin/lmp  scripts/peers-lammps-gpu.sh's builds
#                                       (they link only libmpi.so.40,
#                                       libOpenCL.so.1 and the C/C++ runtime)
#   DEST/lmpgpu/run.sh                  scripts/device/lammps_gpu.sh
#   DEST/lmpgpu/peers/                  bench/peers/*.py
#   DEST/lmpcpu/lmpcpu.tar.xz, env.sh   Debian's /usr/bin/lmp and the
#                                       libraries it links, less glibc,
#                                       libstdc++, libgcc_s, zlib and Open
#                                       MPI's (scripts/device/lmpcpu_env.sh)
# usage: bash scripts/device/stage_lammps.sh DEST   (from the project root)
set -euo pipefail
DEST=${1:?usage: stage_lammps.sh DEST}
prefix=$(bash scripts/peers-lammps-gpu.sh)
g=$DEST/lmpgpu
rm -rf "$g" && mkdir -p "$g/peers"
for p in mixed double; do
  install -D -m 755 "$prefix/$p/bin/lmp" "$g/$p/bin/lmp"
done
install -m 755 scripts/device/lammps_gpu.sh "$g/run.sh"
cp bench/peers/lammps_lj.py bench/peers/lammps_gpu.py bench/peers/openmm_lj.py "$g/peers/"
if [ -x /usr/bin/lmp ]; then
  c=$DEST/lmpcpu
  t=$(mktemp -d)
  mkdir -p "$t/lib"
  cp /usr/bin/lmp "$t/lmp"
  skip='^(libc|libm|libstdc\+\+|libgcc_s|libresolv|libz|libmpi|libopen-rte|libopen-pal|libhwloc|libevent_core-2\.1|libevent_pthreads-2\.1|libudev|ld-linux-x86-64|linux-vdso)\.so'
  ldd /usr/bin/lmp | awk '$3 ~ /^\// {print $1, $3}' | while read -r n f; do
    echo "$n" | grep -qE "$skip" || cp -L "$f" "$t/lib/$n"
  done
  strip --strip-unneeded "$t"/lib/* 2>/dev/null || true
  rm -rf "$c" && mkdir -p "$c"
  tar cJf "$c/lmpcpu.tar.xz" -C "$t" lmp lib
  install -m 644 scripts/device/lmpcpu_env.sh "$c/env.sh"
  rm -rf "$t"
fi
du -sh "$g" ${c:+"$c"} >&2
