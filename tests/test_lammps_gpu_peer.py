#!/usr/bin/env python3
"""bench/peers/lammps_lj.py --gpu (lammps_gpu.py), the runner of LAMMPS's
GPU package beside clphys's md rows:
  - no build under the prefix: one {"absent": ...} line, exit 0, no row;
  - a stand-in lmp that prints LAMMPS's log lines: one row per precision,
    its options (-sf gpu -pk gpu 1 neigh no, -var x/y/z scale) passed on,
    steps_per_s = steps / median Loop time, the device line read;
  - a stand-in that fails: an error line naming the precision, the
    other precision's row still there;
  - --cores 2: a second row with 2 ranks, run under mpirun -np 2;
  - scripts/peers-lammps-gpu.sh's build where there is one
    ($CLPHYS_LAMMPS_GPU or its default prefix; CI has none: skipped): on
    PoCL, 1 rank, mixed, in.lj's step-0 energy per atom within 1e-6 of
    LAMMPS's own log (-6.773368053), ~5 s.
argv: lammps_lj.py tests/data/md/in.lj."""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

runner, in_lj = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(runner))
import lammps_gpu  # noqa: E402  (the runner's own prefix default)

fails = 0


def check(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    fails += not ok


def run(env_prefix, *extra):
    env = dict(os.environ, CLPHYS_LAMMPS_GPU=env_prefix)
    p = subprocess.run([sys.executable, runner, "--input", in_lj, "--gpu", "--runs", "3", "--cores", "1", *extra],
                       capture_output=True, text=True, env=env, timeout=300)
    return p.returncode, [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")], p.stderr


FAKE = r"""#!/bin/sh
echo "$@" >> "$(dirname "$0")/args"
[ -f "$(dirname "$0")/fail" ] && { echo "ERROR: stand-in failure"; exit 1; }
n=$(cat "$(dirname "$0")/count" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$(dirname "$0")/count"
cat <<EOF
LAMMPS (29 Sep 2021 - Update 2)
Device 0: Stand-in Device, 2 CUs (Mixed Precision)
Step Temp PotEng KinEng TotEng Press
       0 1.44 -6.77336805 2.1599 -4.6134 -5.0197
     100 0.757 -5.7585 1.1361 -4.6224 0.2073
Loop time of 0.$n on 1 procs for 100 steps with 32000 atoms
EOF
"""

with tempfile.TemporaryDirectory() as d:
    rc, rows, _ = run(d)
    check(rc == 0 and len(rows) == 1 and "absent" in rows[0], "no build: one 'absent' line, exit 0")

    for prec in ("mixed", "double"):
        os.makedirs(os.path.join(d, prec, "bin"))
        lmp = os.path.join(d, prec, "bin", "lmp")
        with open(lmp, "w") as f:
            f.write(FAKE)
        os.chmod(lmp, os.stat(lmp).st_mode | stat.S_IEXEC)
    open(os.path.join(d, "double", "bin", "fail"), "w").close()
    rc, rows, err = run(d, "--neigh", "no", "--scale", "2")
    good = [r for r in rows if "error" not in r]
    bad = [r for r in rows if "error" in r]
    check(rc == 0 and len(good) == 1 and len(bad) == 1, "one row for mixed, one error for double: %s" % rows)
    if good:
        r = good[0]
        check(r["peer"] == "lammps-gpu" and r["gpu_prec"] == "mixed" and r["ranks"] == 1, "row fields")
        check(r["loop_s"] == [0.1, 0.2, 0.3] and abs(r["steps_per_s"] - 100 / 0.2) < 1e-9,
              "steps_per_s from the median Loop time: %s" % r.get("steps_per_s"))
        check(r["pe0_per_atom"] == -6.77336805 and r["n"] == 32000, "step-0 energy and atoms read")
        check(r["device"].startswith("Stand-in Device"), "device line read: %s" % r["device"])
    if bad:
        check(bad[0]["platform"].startswith("double") and "stand-in failure" in bad[0]["error"],
              "the error names the precision and says why: %s" % bad[0])
    with open(os.path.join(d, "mixed", "bin", "args")) as f:
        args = f.readline().split()
    check(args[args.index("-sf") + 1] == "gpu" and args[args.index("-pk"):args.index("-pk") + 5] ==
          ["-pk", "gpu", "1", "neigh", "no"], "options passed on: %s" % args)
    check(args.count("-var") == 3 and args[args.index("-var") + 2] == "2", "in.lj scaled by -var x/y/z")

    # one rank per core: the same lmp under mpirun (the stand-in prints its log once per rank)
    if shutil.which("mpirun"):
        env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        os.environ.update(env)
        rc, rows, err = run(d, "--precisions", "mixed", "--cores", "2", "--runs", "1")
        ranks = sorted(r.get("ranks", 0) for r in rows)
        check(rc == 0 and ranks == [1, 2], "1 rank and 2 ranks: %s %s" % (rows, err[-300:]))
        two = [r for r in rows if r.get("ranks") == 2]
        check(bool(two) and os.path.basename(two[0]["command"].split()[0]) == "mpirun" and "-np 2" in two[0]["command"],
              "the 2-rank row runs under mpirun -np 2: %s" % (two[0]["command"] if two else None))

prefix = os.environ.get("CLPHYS_LAMMPS_GPU") or lammps_gpu.default_prefix()
if os.access(os.path.join(prefix, "mixed", "bin", "lmp"), os.X_OK) and \
        "pocl" in os.environ.get("CLPHYS_DEVICE", "pocl").lower():
    rc, rows, err = run(prefix, "--runs", "1", "--precisions", "mixed", "--neigh", "no", "--cpu-device",
                        "--platform-name", "Portable Computing Language")
    check(rc == 0 and len(rows) == 1 and "error" not in rows[0], "the real build runs on PoCL: %s" % rows)
    if rows and "pe0_per_atom" in rows[0]:
        pe0 = rows[0]["pe0_per_atom"]
        check(abs(pe0 + 6.773368053) / 6.773368053 < 1e-6 and rows[0]["steps_per_s"] > 0,
              "its step-0 energy per atom %.12g is LAMMPS's -6.773368053" % pe0)
else:
    print("skip the real build: none under %s (bash scripts/peers-lammps-gpu.sh), or not PoCL" % prefix)

print("%d failed" % fails)
sys.exit(1 if fails else 0)
