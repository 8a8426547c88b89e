# lmpcpu_env.sh — source me: Debian's CPU `lmp` (the CPU peer that
# bench/peers/lammps_lj.py runs under mpirun) on a host without Debian's
# lammps package.  Staged as .stage/lmpcpu/env.sh beside lmpcpu.tar.xz (lmp
# and the libraries it links, less glibc, libstdc++ and Open MPI's, from
# scripts/device/stage_lammps.sh); unpacks it into a temporary folder and
# puts a wrapper `lmp` first on PATH that adds, of those libraries, only the
# ones this host lacks (by soname, from ldconfig -p), so that nothing else
# run here sees them.  Sets LMPCPU_DIR (remove it when done).
lmpcpu_tar="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lmpcpu.tar.xz"
if [ -f "$lmpcpu_tar" ]; then
  LMPCPU_DIR=$(mktemp -d)
  tar xJf "$lmpcpu_tar" -C "$LMPCPU_DIR"
  mkdir -p "$LMPCPU_DIR/use" "$LMPCPU_DIR/bin"
  for f in "$LMPCPU_DIR"/lib/*; do
    n=$(basename "$f")
    ldconfig -p | grep -q "^[[:space:]]*$n " || ln -s "$f" "$LMPCPU_DIR/use/$n"
  done
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' \
    "$LMPCPU_DIR/use" "$LMPCPU_DIR/lmp" >"$LMPCPU_DIR/bin/lmp"
  chmod +x "$LMPCPU_DIR/bin/lmp"
  export PATH="$LMPCPU_DIR/bin:$PATH" LMPCPU_DIR
else
  echo "lmpcpu_env.sh: $lmpcpu_tar not found" >&2
fi
