#!/usr/bin/env python3
"""scripts/bench_compare.py on small made-up bench files: a file against
itself passes, a row 20% slower is flagged, an unverified row fails, files
from two devices are refused, a renamed tuned variant is still matched."""
import copy
import json
import os
import subprocess
import sys
import tempfile

script = sys.argv[1]
base = {"device": {"name": "dev"}, "results": [
    {"path": "md_lj", "variant": "full-csr", "precision": "fp32", "n": 1000, "rate": 100.0, "verified": True},
    {"path": "nbody_gravity", "variant": "tiled-i8", "precision": "fp32", "n": 4096, "rate": 50.0, "verified": True},
]}


def run(old, new, *extra):
    with tempfile.TemporaryDirectory() as d:
        a, b = os.path.join(d, "a.json"), os.path.join(d, "b.json")
        json.dump(old, open(a, "w"))
        json.dump(new, open(b, "w"))
        p = subprocess.run([sys.executable, script, a, b, *extra], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr


fails = 0


def check(what, ok, out):
    global fails
    if not ok:
        fails += 1
        print(f"FAIL: {what}\n{out}")


rc, out = run(base, base)
check("same file passes", rc == 0 and "2 rows matched" in out, out)
slow = copy.deepcopy(base)
slow["results"][0]["rate"] = 80.0
rc, out = run(base, slow)
check("20% slower is flagged", rc == 1 and "slower" in out, out)
unv = copy.deepcopy(base)
unv["results"][1]["verified"] = False
rc, out = run(base, unv)
check("unverified row fails", rc == 1 and "NOT VERIFIED" in out, out)
other = copy.deepcopy(base)
other["device"]["name"] = "other"
rc, out = run(base, other)
check("two devices refused", rc == 2 and "devices differ" in out, out)
tuned = copy.deepcopy(base)
tuned["results"][1]["variant"] = "tiled-i4"
rc, out = run(base, tuned)
check("tuned variant matched loosely", rc == 0 and "was tiled-i8" in out, out)
renamed = copy.deepcopy(base)
renamed["results"][1]["path"] = "nbody_gravity"
rc, out = run(base, renamed)
check("a row under its old path name is matched", rc == 0 and "2 rows matched" in out, out)
rc, out = run(base, {"results": 3})
check("bad file refused", rc == 2 and "not a list" in out, out)
sys.exit(1 if fails else 0)
