#!/usr/bin/env python3
"""The table of bad inputs (README, "Bad input"): each row runs the clphys
command on one hostile or mistaken input and checks its exit status and
that its message says what the table says.  Run by meson (test
cli_bad_inputs); `cli_bad_inputs.py CLPHYS DATA --table` prints the table
as Markdown from the same rows, with the message each row really got.

Usage: cli_bad_inputs.py CLPHYS TESTS_DATA_DIR [--table]"""
import os
import struct
import subprocess
import sys
import tempfile

clphys, data = sys.argv[1], sys.argv[2]
table = "--table" in sys.argv
tmp = tempfile.mkdtemp(prefix="clphys-bad-")
env = dict(os.environ, CLPHYS_CACHE_DIR=os.path.join(tmp, "cache"))


def path(name):
    return os.path.join(tmp, name)


def write(name, text):
    with open(path(name), "wb") as f:
        f.write(text if isinstance(text, bytes) else text.encode())
    return path(name)


MD = ["--rcut", "2.5", "--skin", "0.3", "--dt", "0.005"]
FCC = ["md", "--fcc", "0.8442", "--cells", "4", "--temp", "1.44", "--seed", "1"] + MD
HEAD = ("test\n\n2 atoms\n1 atom types\n\n0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n\n"
        "Masses\n\n1 1.0\n\n")
ATOMS = "Atoms # atomic\n\n1 1 1.0 2.0 3.0\n2 1 4.0 2.0 3.0\n"

# inputs ---------------------------------------------------------------------
good = write("good.data", HEAD + ATOMS)
write("existing.data", "x")
write("bigid.data", HEAD + "Atoms # atomic\n\n2305843009213693952 1 1 2 3\n1 1 4 2 3\n")
write("count.data", HEAD.replace("2 atoms", "1000000000000 atoms") + ATOMS)
write("second.data", HEAD + ATOMS + "\n" + ATOMS)
write("types.data", HEAD.replace("1 atom types", "4294967297 atom types"))
write("nanvel.data", HEAD + ATOMS + "\nVelocities\n\n1 0 0 0\n2 0 nan 0\n")
write("overlap.data", HEAD.replace("2 atoms", "3 atoms") +
      "Atoms # atomic\n\n10 1 1.0 2.0 3.0\n20 1 5.0 5.0 5.0\n30 1 1.0 2.0 3.0\n")
write("charge.data", HEAD + "Atoms # charge\n\n1 1 0.5 1.0 2.0 3.0\n2 1 0.5 4.0 2.0 3.0\n")
write("tri.data", HEAD.replace("0 10 zlo zhi\n", "0 10 zlo zhi\n0 0 0 xy xz yz\n") + ATOMS)

hdr = ("BEGIN_HEADER\nDATATYPE = 4D_SU3_GAUGE_3x3\n" + "".join("DIMENSION_%d = 64\n" % i for i in range(1, 5)) +
       "CHECKSUM = 1\nPLAQUETTE = 1\nLINK_TRACE = 1\nFLOATING_POINT = IEEE64BIG\nEND_HEADER\n").encode()
write("huge.nersc", hdr + bytes(range(256)) * 37 + bytes(128))


def nersc(name, vals, checksum=None, plaq="1", trace="1", trail=b""):
    raw = struct.pack(">%dd" % len(vals), *vals)
    s = sum(struct.unpack(">%dI" % (len(raw) // 4), raw)) & 0xffffffff
    h = ("BEGIN_HEADER\nDATATYPE = 4D_SU3_GAUGE_3x3\n" + "".join("DIMENSION_%d = 2\n" % i for i in range(1, 5)) +
         "CHECKSUM = %s\nPLAQUETTE = %s\nLINK_TRACE = %s\nFLOATING_POINT = IEEE64BIG\nEND_HEADER\n" %
         ("%x" % s if checksum is None else checksum, plaq, trace)).encode()
    return write(name, h + raw + trail)


unit = []
for link in range(16 * 4):
    m = [0.0] * 18
    m[0] = m[8] = m[16] = 1.0
    unit += m
nan = list(unit)
nan[5] = float("nan")
nersc("nan.nersc", nan)
nersc("plaqnan.nersc", unit, plaq="nan")
nersc("times2.nersc", [2 * v for v in unit], plaq="8", trace="2")
nersc("cks0.nersc", unit, checksum="0", trail=b"\n")
nersc("trail.nersc", unit, trail=b"\nx")

milc = bytearray(open(os.path.join(data, "gauge", "lat.sample.l4444"), "rb").read())
milc[96 + 1000] ^= 4
write("flipped.milc", bytes(milc))
ildg = bytearray(open(os.path.join(data, "gauge", "lat.sample.l4444.ildg"), "rb").read())
ildg[len(ildg) - 380] ^= 1
write("flipped.ildg", bytes(ildg))
write("hello.txt", "hello\n")
write("existing.nersc", "x")
write("nbabel.txt", "0 1 0 0 0 0 0 0\n1 1 0 0 nan 0 0 0\n")

# rows: (input as the table shows it, argv, exit status, what the message must contain)
G = os.path.join(data, "gauge")
rows = [
    ("`md --steps 4294967297`", FCC + ["--steps", "4294967297"], 2, "--steps: 4294967297 is out of range (0 .. 2147483647)"),
    ("`md --steps 1e19`", FCC + ["--steps", "1e19"], 2, "--steps: '1e19' is not a whole number"),
    ("`md --steps 10abc`", FCC + ["--steps", "10abc"], 2, "--steps: '10abc' is not a whole number"),
    ("`md --dt nan`", ["md", "--data", good, "--rcut", "2.5", "--skin", "0.3", "--dt", "nan", "--steps", "1"], 2,
     "--dt: 'nan' is not a finite number"),
    ("`md --stepz 5`", FCC + ["--stepz", "5"], 2, "unknown option '--stepz'"),
    ("`md` without `--skin --steps`", ["md", "--data", good, "--rcut", "2.5", "--dt", "0.005"], 2, "missing --skin --steps"),
    ("`lqcd solve F --kappa 0.12 --source point --tol abc`",
     ["lqcd", "solve", os.path.join(G, "lat.sample.l4444"), "--kappa", "0.12", "--source", "point", "--tol", "abc"], 2,
     "--tol: 'abc' is not a number"),
    ("`lqcd solve F ... --device auto,9:9` (a device that cannot be opened)",
     ["lqcd", "solve", os.path.join(G, "lat.sample.l4444"), "--kappa", "0.12", "--source", "random", "--tol", "1e-8",
      "--device", "auto,9:9"], 1, "no device matches '9:9'"),
    ("`lqcd solve F ... --device auto,auto --grid 1x1x3x1`",
     ["lqcd", "solve", os.path.join(G, "lat.sample.l4444"), "--kappa", "0.12", "--source", "random", "--tol", "1e-8",
      "--device", "auto,auto", "--grid", "1x1x3x1"], 1, "grid 1x1x3x1 has 3 parts, not the 2 devices"),
    ("`bench --repeat 0`", ["bench", "--repeat", "0"], 2, "--repeat: 0 is out of range (1 .. 1000000)"),
    ("`devices extra`", ["devices", "extra"], 2, "unexpected argument 'extra'"),
    ("`tune --path foo`", ["tune", "--path", "foo"], 2, "--path: unknown path 'foo'"),
    ("`tune --quick --quick`", ["tune", "--quick", "--quick"], 2, "--quick"),
    ("`md --data X --write-data X`", FCC[:1] + ["--data", good, "--write-data", good] + MD + ["--steps", "1"], 2,
     "--write-data " + good + ": is the input --data " + good + " of this run"),
    ("`md --data X --write-data DIR/./X` (the same file, named otherwise)",
     FCC[:1] + ["--data", good, "--write-data", os.path.join(tmp, ".", "good.data"), "--force"] + MD + ["--steps", "1"], 2,
     "is the input --data " + good + " of this run"),
    ("`md --write-data EXISTING` (no `--force`)", FCC + ["--steps", "1", "--write-data", path("existing.data")], 2,
     "exists (--force replaces it)"),
    ("`md --xyz /nonexistent/t.xyz`", FCC + ["--steps", "1", "--xyz", "/nonexistent/t.xyz"], 2,
     "--xyz /nonexistent/t.xyz: cannot create a file in '/nonexistent': No such file or directory"),
    ("`nbody --output EXISTING` (no `--force`)",
     ["nbody", "--plummer", "8", "--seed", "1", "--dt", "0.01", "--t-end", "0.01", "--eps", "0.01", "--output",
      path("existing.nersc")], 2, "exists (--force replaces it)"),
    ("`nbody --input X --output X`",
     ["nbody", "--input", path("nbabel.txt"), "--dt", "0.01", "--t-end", "0.01", "--eps", "0.01", "--output",
      path("nbabel.txt"), "--force"], 2, "is the input --input " + path("nbabel.txt") + " of this run"),
    ("`lqcd generate --out EXISTING`", ["lqcd", "generate", "--dims", "2x2x2x2", "--cold", "--out", path("existing.nersc")],
     2, "exists (--force replaces it)"),
    ("`lqcd convert A A`", ["lqcd", "convert", path("cks0.nersc"), path("cks0.nersc"), "--to", "nersc", "--force"], 2,
     "is the input IN"),
    ("LAMMPS data: atom ID 2^61 (legal)", FCC[:1] + ["--data", path("bigid.data")] + MD + ["--steps", "0"], 0,
     "0 steps of 2 atoms"),
    ("LAMMPS data: header `1000000000000 atoms`, 2 atom lines", ["md", "--data", path("count.data")] + MD + ["--steps", "1"],
     1, "section Atoms (line 14) has 2 atom lines; the header (line 3) gives 1000000000000"),
    ("LAMMPS data: a second Atoms section", ["md", "--data", path("second.data")] + MD + ["--steps", "1"], 1,
     "second Atoms section (the first at line 14)"),
    ("LAMMPS data: `4294967297 atom types`", ["md", "--data", path("types.data")] + MD + ["--steps", "1"], 1,
     "4294967297 atom types: at most 2147483647"),
    ("LAMMPS data: velocity `nan`", ["md", "--data", path("nanvel.data")] + MD + ["--steps", "1"], 1,
     "atom ID 2: velocity vy = nan is not finite"),
    ("LAMMPS data: two atoms at one place", ["md", "--data", path("overlap.data")] + MD + ["--steps", "1"], 1,
     "atoms ID 10 and ID 30 are 0 apart (overlapping atoms)"),
    ("LAMMPS data: `Atoms # charge`", ["md", "--data", path("charge.data")] + MD + ["--steps", "1"], 1,
     "malformed input: " + path("charge.data") + ":14: atom style 'charge': clphys reads atom_style atomic only"),
    ("LAMMPS data: triclinic box", ["md", "--data", path("tri.data")] + MD + ["--steps", "1"], 1,
     "a triclinic box (xy xz yz): clphys reads orthorhombic boxes only"),
    ("NBabel: a field `nan`", ["nbody", "--input", path("nbabel.txt"), "--dt", "0.01", "--t-end", "0.01", "--eps", "0.01"], 1,
     "nbabel.txt:2: field 5 is not finite (nan)"),
    ("NERSC header 64^4, file of 9.6 KB", ["lqcd", "plaquette", path("huge.nersc")], 1,
     "disagrees with the header"),
    ("NERSC: NaN links, checksum matching them", ["lqcd", "plaquette", path("nan.nersc")], 1,
     "has a non-finite entry (nan)"),
    ("NERSC: `PLAQUETTE = nan`", ["lqcd", "plaquette", path("plaqnan.nersc")], 1, "PLAQUETTE = nan is not a finite number"),
    ("NERSC: links scaled by 2 (header to match)", ["lqcd", "plaquette", path("times2.nersc")], 1, "is not in SU(3)"),
    ("NERSC: `CHECKSUM = 0`", ["lqcd", "plaquette", path("cks0.nersc")], 1,
     "cannot be verified (CHECKSUM = 0); to read it anyway"),
    ("NERSC: `CHECKSUM = 0` with `--no-checksum`", ["lqcd", "plaquette", path("cks0.nersc"), "--no-checksum"], 0,
     "not verified (CHECKSUM = 0); read with --no-checksum, the unitarity and plaquette checks passed"),
    ("NERSC: a byte after the data that is not whitespace", ["lqcd", "plaquette", path("trail.nersc")], 1,
     "bytes after the link data that are not whitespace"),
    ("MILC: one data byte changed", ["lqcd", "plaquette", path("flipped.milc")], 1, "MILC checksum mismatch"),
    ("ILDG: one data byte changed", ["lqcd", "plaquette", path("flipped.ildg")], 1, "scidac-checksum mismatch"),
    ("not a gauge file", ["lqcd", "plaquette", path("hello.txt")], 1, "not a gauge file clphys reads"),
]

failures = 0
out_rows = []
for shown, argv, want_rc, needle in rows:
    p = subprocess.run([clphys] + argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    text = (p.stderr.decode(errors="replace") + p.stdout.decode(errors="replace")).strip()
    ok = p.returncode == want_rc and needle in text
    if not ok:
        failures += 1
        print("FAILED: %s\n  argv: %s\n  exit %d (want %d), wanted '%s' in:\n%s\n" %
              (shown, " ".join(argv), p.returncode, want_rc, needle, text), file=sys.stderr)
    line = next((l for l in text.splitlines() if needle in l), text.splitlines()[0] if text else "")
    out_rows.append((shown, p.returncode, line.replace(tmp + "/", "").replace(data + "/", "tests/data/")))
if table:
    print("| input | exit | what clphys says |")
    print("|---|---|---|")
    for shown, rc, line in out_rows:
        print("| %s | %d | `%s` |" % (shown, rc, line.replace("|", "\\|").replace("`", "'")))
print("%d of %d bad-input rows as the table says" % (len(rows) - failures, len(rows)))
sys.exit(1 if failures else 0)
