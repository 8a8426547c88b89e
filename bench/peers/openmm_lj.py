#!/usr/bin/env python3
"""OpenMM on LAMMPS's in.lj: the peer of clphys's md rows (`clphys bench`).

The system of tests/data/md/in.lj.data.gz (LAMMPS write_data at step 0:
32,000 atoms, fcc 0.8442, velocities of `velocity all create 1.44 87287`) as
an OpenMM System equal to LAMMPS's `pair_style lj/cut 2.5` NVE run: a
NonbondedForce with CutoffPeriodic at 2.5, no charges, no switching, no
dispersion correction, and a VerletIntegrator of dt 0.005.  Reduced units are
mapped to sigma = 1 nm, epsilon = 1 kJ/mol, mass = 1 amu, so that tau = 1 ps,
energies per atom in kJ/mol are the reduced ones and velocities in nm/ps are
LAMMPS's.

For each platform named (--platforms, e.g. CUDA,OpenCL or CPU) and precision
it supports, prints one JSON object per line:
  peer, version, platform, precision, device, n, pe0_per_atom (step 0),
  pe0_rel_error (against --pe0, LAMMPS's step-0 value), verified
  (pe0_rel_error within 1e-4 single / 1e-9 double), steps, runs_s (wall
  seconds of each timed run of `steps` steps, after a warm-up, ending with a
  state read back), steps_per_s (steps / median run: wall clock, what a
  user gets), threads (CPU platform)
or {"peer": "openmm", "platform": ..., "error": why} when it cannot run.
"""
import argparse
import gzip
import json
import statistics
import sys
import time


def read_lammps_data(path):
    """Box, positions and velocities of an atomic-style LAMMPS data file (ids in order)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        lines = f.read().splitlines()
    n, box, section, pos, vel = 0, [0.0, 0.0, 0.0], None, {}, {}
    for line in lines:
        words = line.split("#")[0].split()
        if not words:
            continue
        if len(words) == 2 and words[1] == "atoms":
            n = int(words[0])
        elif len(words) == 4 and words[2] in ("xlo", "ylo", "zlo"):
            box["xyz".index(words[2][0])] = float(words[1]) - float(words[0])
        elif words[0] in ("Atoms", "Velocities", "Masses"):
            section = words[0]
        elif section == "Atoms" and len(words) >= 5:
            pos[int(words[0])] = [float(w) for w in words[2:5]]
        elif section == "Velocities" and len(words) >= 4:
            vel[int(words[0])] = [float(w) for w in words[1:4]]
    ids = sorted(pos)
    if n == 0 or len(ids) != n or len(vel) != n:
        raise ValueError(f"{path}: {n} atoms declared, {len(ids)} positions, {len(vel)} velocities")
    return box, [pos[i] for i in ids], [vel[i] for i in ids]


def make_system(mm, unit, box, n):
    system = mm.System()
    system.setDefaultPeriodicBoxVectors(mm.Vec3(box[0], 0, 0) * unit.nanometer, mm.Vec3(0, box[1], 0) * unit.nanometer,
                                        mm.Vec3(0, 0, box[2]) * unit.nanometer)
    nb = mm.NonbondedForce()
    nb.setNonbondedMethod(mm.NonbondedForce.CutoffPeriodic)
    nb.setCutoffDistance(2.5 * unit.nanometer)
    nb.setUseSwitchingFunction(False)
    nb.setUseDispersionCorrection(False)
    for _ in range(n):
        system.addParticle(1.0 * unit.amu)
        nb.addParticle(0.0, 1.0 * unit.nanometer, 1.0 * unit.kilojoule_per_mole)
    system.addForce(nb)
    return system


def make_context(mm, unit, system, platform, props, args):
    """A Context on the platform; for OpenCL with --opencl-platform, on the
    OpenCL platform of that name (the bench's own device: by itself OpenMM
    took PoCL's CPU device on the H100 host), tried by index in OpenMM's
    order, which need not be the bench's."""
    plat = mm.Platform.getPlatformByName(platform)
    if platform != "OpenCL" or not args.opencl_platform:
        integ = mm.VerletIntegrator(0.005 * unit.picosecond)
        return integ, mm.Context(system, integ, plat, props)
    seen = []
    for index in range(16):
        p = dict(props, OpenCLPlatformIndex=str(index))
        integ = mm.VerletIntegrator(0.005 * unit.picosecond)
        try:
            ctx = mm.Context(system, integ, plat, p)
        except Exception as e:
            if "Illegal value for OpenCLPlatformIndex" in str(e):
                break
            seen.append("%d: %s" % (index, str(e).splitlines()[0]))
            continue
        name = plat.getPropertyValue(ctx, "OpenCLPlatformName")
        if args.opencl_platform.lower() in name.lower():
            return integ, ctx
        seen.append("%d: %s" % (index, name))
        del ctx
    raise RuntimeError("OpenMM sees no OpenCL platform named '%s' (it sees: %s)" %
                       (args.opencl_platform, "; ".join(seen) or "none"))


def run_one(mm, unit, system, box, x, v, platform, precision, args):
    props = {}
    if precision:
        props["Precision"] = precision
    if platform == "CPU" and args.threads > 0:
        props["Threads"] = str(args.threads)
    integ, ctx = make_context(mm, unit, system, platform, props, args)
    ctx.setPositions(x * unit.nanometer)
    ctx.setVelocities(v * unit.nanometer / unit.picosecond)
    n = len(x)
    pe0 = ctx.getState(getEnergy=True).getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole) / n
    integ.step(10)  # warm-up: kernels compiled, lists built
    ctx.getState(getEnergy=True)
    steps = args.steps
    while True:  # enough steps for a run of min_seconds
        t0 = time.perf_counter()
        integ.step(steps)
        ctx.getState(getEnergy=True)
        dt = time.perf_counter() - t0
        if dt >= args.min_seconds or steps >= 1000000:
            break
        steps = int(steps * min(10.0, 1.2 * args.min_seconds / max(dt, 1e-6))) + 1
    runs = [dt]
    for _ in range(args.runs - 1):
        t0 = time.perf_counter()
        integ.step(steps)
        ctx.getState(getEnergy=True)
        runs.append(time.perf_counter() - t0)
    names = ctx.getPlatform().getPropertyNames()
    device = ""
    for key in ("DeviceName", "OpenCLPlatformName"):
        if key in names:
            device += (" / " if device else "") + ctx.getPlatform().getPropertyValue(ctx, key)
    threads = ctx.getPlatform().getPropertyValue(ctx, "Threads") if "Threads" in names else ""
    rel = abs(pe0 - args.pe0) / abs(args.pe0)
    prec = precision or ("double" if platform == "Reference" else "single")
    return {"peer": "openmm", "version": mm.__version__, "platform": platform, "precision": prec,
            "device": device, "threads": threads, "n": n, "pe0_per_atom": pe0, "pe0_rel_error": rel,
            "verified": rel <= (1e-9 if prec == "double" else 1e-4), "steps": steps, "runs_s": runs,
            "steps_per_s": steps / statistics.median(runs)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="LAMMPS data file (may be .gz)")
    ap.add_argument("--pe0", type=float, required=True, help="LAMMPS's step-0 potential energy per atom")
    ap.add_argument("--platforms", default="CUDA,OpenCL,CPU")
    ap.add_argument("--precisions", default="single,double", help="for CUDA and OpenCL")
    ap.add_argument("--threads", type=int, default=0, help="CPU platform threads (0: OpenMM's choice)")
    ap.add_argument("--opencl-platform", default="", help="OpenCL platform name (part of it) of the device")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--min-seconds", type=float, default=1.0)
    args = ap.parse_args()
    try:
        import openmm as mm
        import openmm.unit as unit
    except Exception as e:  # not installed: say so, the bench goes on
        print(json.dumps({"peer": "openmm", "error": f"cannot import openmm ({e}); pip install openmm "
                          "(openmm-cuda-13 for CUDA 13), or PYTHONPATH=$(bash scripts/peers.sh)"}))
        return 0
    box, x, v = read_lammps_data(args.data)
    system = make_system(mm, unit, box, len(x))
    have = [mm.Platform.getPlatform(i).getName() for i in range(mm.Platform.getNumPlatforms())]
    for platform in args.platforms.split(","):
        if platform not in have:
            why = "; ".join(mm.Platform.getPluginLoadFailures()) or "not built into this OpenMM"
            print(json.dumps({"peer": "openmm", "version": mm.__version__, "platform": platform,
                              "error": f"platform {platform} not available (have {', '.join(have)}): {why}"}))
            continue
        for precision in (args.precisions.split(",") if platform in ("CUDA", "OpenCL") else [""]):
            try:
                row = run_one(mm, unit, system, box, x, v, platform, precision, args)
            except Exception as e:
                row = {"peer": "openmm", "version": mm.__version__, "platform": platform, "precision": precision,
                       "error": str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
