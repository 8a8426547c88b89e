#!/usr/bin/env python3
"""Outputs a run leaves behind (issue 32, D1 D3 U4): a run ended by SIGINT,
SIGTERM or SIGHUP leaves no temporary file; a SIGKILL's leftover
(FILE.tmp.PID) is removed by the next run into FILE; a user's FILE.tmp is
never touched by a write of FILE; a full disk says "No space left on device"
(a 16 KiB tmpfs in a private mount namespace: skipped, saying so, where
`unshare -m` or mount is not permitted).  About 3 s on PoCL.

Usage: cli_outputs.py CLPHYS"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

clphys = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="clphys-out-")
env = dict(os.environ, CLPHYS_CACHE_DIR=os.path.join(tmp, "cache"))
failures = 0


def check(ok, what):
    global failures
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        failures += 1


def leftovers(stem):
    return sorted(n for n in os.listdir(tmp) if n.startswith(stem + ".tmp."))


def md(xyz, steps, *extra):
    return [clphys, "md", "--fcc", "0.8442", "--cells", "4", "--temp", "1.44", "--seed", "1", "--rcut", "2.5",
            "--skin", "0.3", "--dt", "0.005", "--steps", str(steps), "--thermo", "50", "--xyz", xyz] + list(extra)


def writing(stem):
    """The temporary files of stem that hold data (the empty one that the
    output check makes and removes at once is not the trajectory's)."""
    def size(n):
        try:
            return os.path.getsize(os.path.join(tmp, n))
        except OSError:
            return 0
    return [n for n in leftovers(stem) if size(n) > 0]


def start_writing(xyz):
    """An md run with its trajectory's temporary file open, once frames are in it."""
    # a run started under nohup (or a CI runner that ignores SIGHUP) would
    # inherit the ignored signal, which clphys rightly leaves ignored: the
    # child gets the default dispositions a terminal's shell gives
    def default_signals():
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_DFL)
    p = subprocess.Popen(md(xyz, 2000000000), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         preexec_fn=default_signals)
    t0 = time.time()
    while not writing(os.path.basename(xyz)) and time.time() - t0 < 120 and p.poll() is None:
        time.sleep(0.02)
    return p


# D3: the handled signals remove the temporary file, and the run still dies of the signal
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    xyz = os.path.join(tmp, "sig%d.xyz" % sig)
    p = start_writing(xyz)
    had = writing(os.path.basename(xyz))
    p.send_signal(sig)
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:  # the signal did not end it: fail, and leave no run behind
        p.kill()
        p.wait()
        rc = None
    check(had and rc == -sig and not leftovers(os.path.basename(xyz)) and not os.path.exists(xyz),
          "%s: temporary %s removed, exit by the signal (rc %s)" % (signal.Signals(sig).name, had, rc))

# D3: SIGKILL cannot be caught: its leftover keeps the pattern and the next run into the file removes it
xyz = os.path.join(tmp, "killed.xyz")
p = start_writing(xyz)
p.kill()
p.wait(timeout=60)
left = leftovers("killed.xyz")
keep = os.path.join(tmp, "killed.xyz.tmp.1")  # pid 1 is alive: not a leftover of ours
open(keep, "w").close()
r = subprocess.run(md(xyz, 2), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
check(left == ["killed.xyz.tmp.%d" % p.pid] and r.returncode == 0 and leftovers("killed.xyz") == ["killed.xyz.tmp.1"],
      "SIGKILL leftover %s removed by the next run (now %s)" % (left, leftovers("killed.xyz")))

# D1: nbody's snapshot goes through a name of its own; a user's snap.txt.tmp stays
snap = os.path.join(tmp, "snap.txt")
with open(snap + ".tmp", "w") as f:
    f.write("the user's file\n")
r = subprocess.run([clphys, "nbody", "--plummer", "16", "--seed", "1", "--dt", "0.01", "--t-end", "0.02", "--eps",
                    "0.01", "--output", snap], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
kept = os.path.exists(snap + ".tmp") and open(snap + ".tmp").read() == "the user's file\n"
check(r.returncode == 0 and kept and os.path.getsize(snap) > 0 and leftovers("snap.txt") == [],
      "nbody --output snap.txt leaves the user's snap.txt.tmp alone")

# U4: a full disk is named as such (md --write-data, lqcd generate, nbody --output)
mnt = os.path.join(tmp, "mnt")
os.mkdir(mnt)
probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=16k tmpfs '%s'" % mnt],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if probe.returncode != 0:
    print("skip full-disk checks: no private tmpfs here (unshare -m / mount not permitted)")
else:
    full = [("md --write-data", md(os.path.join(tmp, "x.xyz"), 1)[:-2] + ["--write-data", mnt + "/o.data"]),
            ("lqcd generate", [clphys, "lqcd", "generate", "--dims", "8x8x8x8", "--hot", "1", "--out",
                               mnt + "/h.nersc"]),
            ("nbody --output", [clphys, "nbody", "--plummer", "512", "--seed", "1", "--dt", "0.01", "--t-end", "0.01",
                                "--eps", "0.01", "--output", mnt + "/s.txt"])]
    for name, argv in full:
        cmd = "mount -t tmpfs -o size=16k tmpfs '%s' && \"$@\"; rc=$?; ls -A '%s'; exit $rc" % (mnt, mnt)
        r = subprocess.run(["unshare", "-m", "sh", "-c", cmd, "sh"] + argv, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        err = r.stderr.decode(errors="replace")
        left = [l for l in r.stdout.decode(errors="replace").splitlines() if ".tmp." in l]
        check(r.returncode == 1 and "No space left on device" in err and not left,
              "%s on a full disk: exit %d, '%s', left %s" % (name, r.returncode, err.strip().splitlines()[-1:], left))

print("%d failures" % failures)
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failures else 0)
