#!/usr/bin/env python3
"""The README's quick start, run as printed: every fenced block of README.md
whose first line is `$ ./build/clphys ...` is a command and the last line it
prints (stdout).  Each command runs in a scratch folder that holds
`tests/data` (the source tree's) and `build/clphys` (the command under
test), so relative paths work as in the README and outputs land there.  The
last line must match the README's with every number replaced (numbers move
with the device and its timings; the words, columns and the number of
fields must not).

Usage: readme_quickstart.py CLPHYS SOURCE_ROOT"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

clphys, root = os.path.abspath(sys.argv[1]), sys.argv[2]
readme = open(os.path.join(root, "README.md")).read()
blocks = re.findall(r"^```\n(\$ \./build/clphys [^\n]*)\n(.*?)^```$", readme, re.S | re.M)
NUM = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def shape(line):
    return NUM.sub("#", line).split()


tmp = tempfile.mkdtemp(prefix="clphys-readme-")
os.makedirs(os.path.join(tmp, "build"))
os.makedirs(os.path.join(tmp, "tests"))
os.symlink(clphys, os.path.join(tmp, "build", "clphys"))
os.symlink(os.path.join(os.path.abspath(root), "tests", "data"), os.path.join(tmp, "tests", "data"))
env = dict(os.environ, CLPHYS_CACHE_DIR=os.environ.get("CLPHYS_CACHE_DIR", os.path.join(tmp, "cache")))
failures = 0
if len(blocks) < 6:
    print("README.md: %d quick-start commands found, expected at least 6" % len(blocks))
    sys.exit(1)
for cmd, body in blocks:
    want = [l for l in body.splitlines() if l.strip()]
    want = want[-1] if want else ""
    p = subprocess.run(shlex.split(cmd[2:]), cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=600)
    got = [l for l in p.stdout.decode(errors="replace").splitlines() if l.strip()]
    got = got[-1] if got else ""
    ok = p.returncode == 0 and shape(got) == shape(want)
    print("%s %s\n  README: %s\n  got:    %s" % ("ok    " if ok else "FAILED", cmd, want.strip(), got.strip()))
    if not ok:
        failures += 1
        print("  exit %d; stderr:\n%s" % (p.returncode, p.stderr.decode(errors="replace")[-2000:]))
print("%d of %d README commands as printed" % (len(blocks) - failures, len(blocks)))
sys.exit(1 if failures else 0)
