#!/usr/bin/env bash
# Intel's CPU OpenCL runtime from PyPI, beside Debian's ICD loader, without root.
#
#   bash scripts/intel-opencl.sh            install (or reuse) and print the folder
#   export OCL_ICD_VENDORS=$(bash scripts/intel-opencl.sh)
#   clinfo -l                                 -> "Intel(R) OpenCL" / your CPU
#   CLPHYS_DEVICE=intel meson test -C build
#
# The runtime is Intel's, for x86-64 CPUs of any maker (it also runs on AMD).
# pip's `--target` install leaves the libraries outside the target, so the
# wheels are downloaded and unpacked here instead: their lib/ folders into one
# folder, without the wheel's own libOpenCL.so (Debian's ICD loader stays the
# one in use), and an .icd file naming libintelocl.so by absolute path in a
# folder of its own, which OCL_ICD_VENDORS points at.  OCL_ICD_VENDORS set to a
# folder replaces /etc/OpenCL/vendors: only Intel's runtime is then visible.
#
# Where: $CLPHYS_INTEL_OCL_DIR, else ${XDG_CACHE_HOME:-~/.cache}/clphys-ci/
# intel-opencl-<version>.  A finished install (its .icd file written last)
# is reused without network access; the downloaded wheels are kept there too.
# Needs python3 with pip (`pip download` only) and network access to PyPI
# on the first run.  Prints the vendors folder on stdout, progress on stderr;
# exits 2 when the wheels cannot be downloaded (PyPI unreachable).
set -euo pipefail

version=${INTEL_OCL_VERSION:-2026.2.0}
# The wheels that make a working CPU runtime (intel-opencl-rt requires tbb and
# intel-cmplr-lic-rt; tbb requires tcmlib; libintelocl.so links the compiler
# runtime of intel-cmplr-lib-rt: libimf, libsvml, libirng, libintlc).
wheels=("intel-opencl-rt==$version" "intel-cmplr-lib-rt==$version" "intel-cmplr-lic-rt==$version"
        "tbb==2023.*" "tcmlib==1.*")
root=${CLPHYS_INTEL_OCL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/clphys-ci/intel-opencl-$version}
icd=$root/vendors/intel-cpu.icd

if [ -f "$icd" ] && [ -f "$root/lib/libintelocl.so" ]; then
  echo "$root/vendors"
  exit 0
fi

mkdir -p "$root/wheels"
if ! python3 -m pip --version >/dev/null 2>&1; then
  echo "intel-opencl.sh: python3 has no pip (Debian: apt-get install python3-pip)" >&2
  exit 2
fi
echo "intel-opencl.sh: downloading ${wheels[*]} into $root/wheels" >&2
if ! python3 -m pip download --quiet --disable-pip-version-check --only-binary=:all: --no-deps \
     --platform manylinux_2_28_x86_64 --python-version 3 --implementation py -d "$root/wheels" "${wheels[@]}" >&2; then
  echo "intel-opencl.sh: could not download the wheels from PyPI" >&2
  exit 2
fi

# Unpack every wheel's <name>.data/data/lib/ into one folder.  Wheels store a
# library's symlinks (libx.so -> libx.so.1 -> libx.so.1.2) as copies: an
# entry equal (size and CRC) to one already unpacked becomes a symlink to it,
# which saves about 300 MB.
rm -rf "$root/lib.tmp"
mkdir -p "$root/lib.tmp"
python3 - "$root/lib.tmp" "$root"/wheels/*.whl <<'PY'
import os, re, sys, zipfile
dest = sys.argv[1]
for whl in sys.argv[2:]:
    seen = {}
    with zipfile.ZipFile(whl) as z:
        for info in z.infolist():
            m = re.match(r"[^/]+\.data/data/lib/([^/]+)$", info.filename)
            if not m:
                continue
            name = m.group(1)
            if name.startswith("libOpenCL.so"):
                continue  # the ICD loader stays Debian's
            path = os.path.join(dest, name)
            key = (info.file_size, info.CRC)
            if key in seen and info.file_size > 4096:
                os.symlink(seen[key], path)
                continue
            with z.open(info) as src, open(path, "wb") as out:
                while True:
                    block = src.read(1 << 20)
                    if not block:
                        break
                    out.write(block)
            os.chmod(path, 0o755 if ".so" in name else 0o644)
            seen[key] = name
PY
rm -rf "$root/lib"
mv "$root/lib.tmp" "$root/lib"
mkdir -p "$root/vendors"
echo "$root/lib/libintelocl.so" > "$icd.tmp"
mv "$icd.tmp" "$icd"
echo "intel-opencl.sh: installed in $root/lib; use OCL_ICD_VENDORS=$root/vendors" >&2
echo "$root/vendors"
