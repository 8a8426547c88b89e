"""LAMMPS's GPU package on OpenCL, run as its users run it: `lmp -sf gpu -pk
gpu 1` with 1 MPI rank, and under `mpirun -np CORES` with one rank per host
core, all ranks sharing the one device (the package integrates on the host,
so positions and forces cross the bus every step and several ranks keep the
device busy).  `lammps_lj.py --gpu` calls main() here.

The builds: <prefix>/<prec>/bin/lmp for GPU_PREC mixed and double
(scripts/peers-lammps-gpu.sh), the prefix from --prefix, $CLPHYS_LAMMPS_GPU,
or scripts/peers-lammps-gpu.sh's default.  None there: one line
{"peer": "lammps-gpu", "absent": why} and no rows.

in.lj (--input, its write_data line dropped) at --scale S (LAMMPS's own
`-var x S -var y S -var z S`: 32,000 S^3 atoms; the perfect fcc lattice's
step-0 energy per atom does not depend on S).  One JSON object per
precision and rank count: peer, gpu_prec, ranks, device (LAMMPS's own
report of the OpenCL device it used), config, command, version, n, steps,
pe0_per_atom, loop_s (each run's "Loop time"), steps_per_s (steps / median
loop time); a run that fails gives {"peer": "lammps-gpu", "platform":
"<prec> <ranks> rank(s)", "error": why} instead.
"""
import argparse
import ctypes
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile

import lammps_lj


def default_prefix():
    if os.environ.get("CLPHYS_LAMMPS_GPU"):
        return os.environ["CLPHYS_LAMMPS_GPU"]
    root = os.environ.get("CLPHYS_PEERS_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "clphys-peers")
    return os.path.join(root, "lammps-gpu")


def opencl_platforms():
    """The OpenCL platforms' names in the ICD loader's order, which is the
    order of LAMMPS's `platform` ids; [] without a loader."""
    try:
        cl = ctypes.CDLL("libOpenCL.so.1")
    except OSError:
        return []
    cl.clGetPlatformIDs.argtypes = [ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_uint)]
    cl.clGetPlatformInfo.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p,
                                     ctypes.POINTER(ctypes.c_size_t)]
    n = ctypes.c_uint(0)
    if cl.clGetPlatformIDs(0, None, ctypes.byref(n)) != 0 or n.value == 0:
        return []
    ids = (ctypes.c_void_p * n.value)()
    if cl.clGetPlatformIDs(n.value, ids, None) != 0:
        return []
    names = []
    for pid in ids:
        buf = ctypes.create_string_buffer(512)
        cl.clGetPlatformInfo(pid, 0x0902, len(buf), buf, None)  # CL_PLATFORM_NAME
        names.append(buf.value.decode(errors="replace"))
    return names


def device_line(text):
    """LAMMPS's GPU package names the device it initialised: 'Device 0: ...'
    under its 'Using acceleration' banner (the name is the next line's)."""
    m = re.search(r"^\s*Device\s+\d+:\s*(.*)$", text, re.M)
    return m.group(1).strip() if m else "?"


def run_one(lmp, inp, prec, ranks, args, platform, tmp):
    pk = ["-pk", "gpu", "1"] + (["neigh", "no"] if args.neigh == "no" else [])
    if platform is not None:
        pk += ["platform", str(platform)]
    s = str(args.scale)
    cmd = [lmp, "-in", inp, "-log", "none", "-sf", "gpu"] + pk + ["-var", "x", s, "-var", "y", s, "-var", "z", s]
    env = lammps_lj.launcher_free_env()
    if ranks > 1:
        mpirun = shutil.which("mpirun")
        if not mpirun:
            raise RuntimeError("no mpirun for the multi-rank run")
        if args.cpu_device:  # the OpenCL device is the host's cores: each rank gets its share
            env["POCL_MAX_PTHREAD_COUNT"] = str(max(1, args.cores // ranks))
        fwd = []
        for k in ("OCL_ICD_FILENAMES", "OCL_ICD_VENDORS", "LD_LIBRARY_PATH", "POCL_MAX_PTHREAD_COUNT"):
            if k in env:
                fwd += ["-x", k]
        cmd = ([mpirun] + (["--allow-run-as-root"] if os.geteuid() == 0 else []) +
               ["--oversubscribe", "-np", str(ranks)] + fwd + cmd)
    loops, info = [], None
    for _ in range(args.runs):
        out = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=args.timeout, env=env)
        if out.returncode != 0:
            # the first line that says why (LAMMPS's ERROR, geryon's OpenCL error, a signal), its paths shortened
            said = [re.sub(r"'[^']*/([^'/]+)'", r"'\1'", ln.strip()) for ln in (out.stdout + out.stderr).splitlines()
                    if re.search(r"ERROR|OpenCL error|Segmentation|Signal:", ln)]
            raise RuntimeError(f"exit {out.returncode}: " + (said[0] if said else (out.stderr or out.stdout)[-300:]))
        loop, steps, n, version, pe0 = lammps_lj.parse_log(out.stdout)
        loops.append(loop)
        info = (steps, n, version, pe0, device_line(out.stdout))
    steps, n, version, pe0, device = info
    how = f"{ranks} MPI ranks sharing 1 device" if ranks > 1 else "1 MPI rank, 1 device"
    if ranks > 1 and args.cpu_device:
        how += f", POCL_MAX_PTHREAD_COUNT={env['POCL_MAX_PTHREAD_COUNT']}"
    return {"peer": "lammps-gpu", "gpu_prec": prec, "ranks": ranks, "device": device,
            "config": f"LAMMPS GPU package (OpenCL, GPU_PREC={prec}), -sf gpu {' '.join(pk)}: {how}",
            "command": " ".join(os.path.basename(c) if c == lmp else c for c in cmd),
            "version": version, "n": n, "steps": steps, "pe0_per_atom": pe0, "loop_s": loops,
            "steps_per_s": steps / statistics.median(loops)}


def main(common, rest):
    ap = argparse.ArgumentParser(prog="lammps_lj.py --gpu")
    ap.add_argument("--prefix", default=default_prefix(), help="scripts/peers-lammps-gpu.sh's prefix")
    ap.add_argument("--precisions", default="mixed,double")
    ap.add_argument("--scale", type=int, default=1, help="in.lj's x, y, z: 32,000 scale^3 atoms")
    ap.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)) or 1,
                    help="host cores (default: those this process may run on): the multi-rank run's ranks")
    ap.add_argument("--platform-name", default="", help="the OpenCL platform to use (default: LAMMPS's choice)")
    ap.add_argument("--neigh", choices=("yes", "no"), default="yes",
                    help="-pk gpu 1 neigh: where the neighbour list is built (no: on the host)")
    ap.add_argument("--cpu-device", action="store_true",
                    help="the OpenCL device is the host's CPU (PoCL): ranks share its cores")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per LAMMPS run")
    args = ap.parse_args(rest)
    args.runs = common.runs
    precs = [p for p in args.precisions.split(",") if p]
    have = {p: os.path.join(args.prefix, p, "bin", "lmp") for p in precs}
    have = {p: b for p, b in have.items() if os.access(b, os.X_OK)}
    if not have:
        print(json.dumps({"peer": "lammps-gpu", "absent": f"no {'/'.join(precs)} build under {args.prefix} "
                                                          "(bash scripts/peers-lammps-gpu.sh)"}))
        return 0
    platform = None
    if args.platform_name:
        names = opencl_platforms()
        if args.platform_name in names:
            platform = names.index(args.platform_name)
    with tempfile.TemporaryDirectory(prefix="clphys_lmpgpu_") as tmp:
        inp = os.path.join(tmp, "in.lj")
        with open(common.input) as f, open(inp, "w") as g:
            g.writelines(line for line in f if not line.startswith("write_data"))
        for prec, lmp in have.items():
            for ranks in sorted({1, max(1, args.cores)}):
                try:
                    row = run_one(lmp, inp, prec, ranks, args, platform, tmp)
                except Exception as e:  # one configuration's failure leaves the others
                    row = {"peer": "lammps-gpu", "platform": f"{prec} {ranks} rank{'s' if ranks > 1 else ''}", "error": str(e)}
                print(json.dumps(row), flush=True)
    return 0
