#!/usr/bin/env python3
"""md and nbody show a progress line on a terminal, and only there: with
stderr a pseudo-terminal the line ("clphys md: step N of M (P%), ...") is
written and erased ("\\r\\033[K") before the next row; with stderr a pipe
nothing but the rows and the one summary line.  Each run lasts about a
second on two CPU cores (the line appears after a fifth of a second).

Usage: cli_progress.py CLPHYS"""
import os
import pty
import subprocess
import sys
import tempfile

clphys = sys.argv[1]
env = dict(os.environ, CLPHYS_CACHE_DIR=os.environ.get("CLPHYS_CACHE_DIR", tempfile.mkdtemp(prefix="clphys-prog-")))
runs = [
    ("md", ["md", "--fcc", "0.8442", "--cells", "6", "--temp", "1.44", "--seed", "1", "--rcut", "2.5", "--skin", "0.3",
            "--dt", "0.005", "--steps", "3000"], "clphys md: step "),
    ("nbody", ["nbody", "--plummer", "2048", "--seed", "1", "--dt", "0.01", "--t-end", "8", "--eps", "0.01"],
     "clphys nbody: step "),
]
failures = 0


def run(argv, tty):
    if not tty:
        p = subprocess.run([clphys] + argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        return p.returncode, p.stderr.decode(errors="replace")
    master, slave = pty.openpty()
    p = subprocess.Popen([clphys] + argv, env=env, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(timeout=300), out.decode(errors="replace")


for name, argv, line in runs:
    rc, err = run(argv, True)
    summary = [l for l in err.replace("\r\033[K", "\n").splitlines() if l.startswith("clphys %s: " % name)]
    ok = rc == 0 and line in err and "\r\033[K" in err and summary and " steps " in summary[-1]
    print("%s %s on a terminal: progress line %s" % ("ok    " if ok else "FAILED", name, "shown" if line in err else
                                                     "missing"))
    failures += not ok
    rc, err = run(argv, False)
    lines = [l for l in err.splitlines() if l.strip()]
    ok = rc == 0 and line not in err and "\033" not in err and len(lines) == 1
    print("%s %s with stderr a pipe: %d line(s): %s" % ("ok    " if ok else "FAILED", name, len(lines), lines))
    failures += not ok
sys.exit(1 if failures else 0)
