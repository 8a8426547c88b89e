#!/usr/bin/env python3
"""The table of bad inputs (docs/bad-input.md): each row runs the clphys
command on one hostile or mistaken input and checks its exit status and
that its message says what the table says.  Run by meson (test
cli_bad_inputs); `cli_bad_inputs.py CLPHYS DATA --table` prints the table
as Markdown from the same rows, with the message each row really got.

`--check DOC`: also fail when the table committed in DOC (docs/bad-input.md)
lists other rows (input and exit status) than these; regenerate it with
--table.

Usage: cli_bad_inputs.py CLPHYS TESTS_DATA_DIR [--table] [--check DOC]"""
import os
import random
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


def nersc(name, vals, checksum=None, plaq="1", trace="1", trail=b"", dims=(2, 2, 2, 2), extra="", end=True):
    raw = struct.pack(">%dd" % len(vals), *vals)
    s = sum(struct.unpack(">%dI" % (len(raw) // 4), raw)) & 0xffffffff
    h = ("BEGIN_HEADER\nDATATYPE = 4D_SU3_GAUGE_3x3\n" + "".join("DIMENSION_%d = %d\n" % (i + 1, d) for i, d in
                                                                 enumerate(dims)) +
         "CHECKSUM = %s\nPLAQUETTE = %s\nLINK_TRACE = %s\nFLOATING_POINT = IEEE64BIG\n%s%s" %
         ("%x" % s if checksum is None else checksum, plaq, trace, extra, "END_HEADER\n" if end else "")).encode()
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
ildg = bytes(open(os.path.join(data, "gauge", "lat.sample.l4444.ildg"), "rb").read())
flipped = bytearray(ildg)
flipped[len(flipped) - 380] ^= 1
write("flipped.ildg", bytes(flipped))
write("hello.txt", "hello\n")
write("existing.nersc", "x")
write("nbabel.txt", "0 1 0 0 0 0 0 0\n1 1 0 0 nan 0 0 0\n")
# compressed and binary inputs (issue 31): gzip is read through zlib whatever the name; other binary data is
# named as such, never echoed
import gzip
write("good.data.gz", gzip.compress((HEAD + ATOMS).encode()))
write("gz-renamed.data", gzip.compress((HEAD + ATOMS).encode()))
write("cut.data.gz", gzip.compress((HEAD + ATOMS * 40).encode())[:60])
write("ctrl.txt", b"\x1b[2J\x01\x02 binary\n")
write("nbabel.txt.gz", gzip.compress(b"0 1 0 0 0 0 0 0\n1 1 0 0 nan 0 0 0\n"))
write("bomb.txt.gz", gzip.compress(b"# a comment line of a decompression bomb\n" * 50000))  # 2 MB from ~6 KB



# NetCDF classic files (the format is documented and small: written here,
# byte for byte as libnetcdf writes them)
def cdf_name(s):
    b = s.encode()
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)


def cdf(dims, variables):
    """dims [(name, length)]; variables [(name, [dims], 'f' or 'd', {text attributes}, values)]"""
    ids, size = {d: i for i, (d, _) in enumerate(dims)}, dict(dims)

    def header(begins):
        h = b"CDF\x01" + struct.pack(">III", 0, 0x0A, len(dims))
        h += b"".join(cdf_name(d) + struct.pack(">I", n) for d, n in dims)
        h += bytes(8) + struct.pack(">II", 0x0B, len(variables))
        for (name, ds, t, atts, vals), begin in zip(variables, begins):
            h += cdf_name(name) + struct.pack(">I", len(ds)) + b"".join(struct.pack(">I", ids[d]) for d in ds)
            if atts:
                h += struct.pack(">II", 0x0C, len(atts))
                for k, v in atts.items():
                    h += cdf_name(k) + struct.pack(">II", 2, len(v)) + v.encode() + b"\0" * (-len(v) % 4)
            else:
                h += bytes(8)
            h += struct.pack(">III", 5 if t == "f" else 6, len(vals) * (4 if t == "f" else 8), begin)
        return h

    data, begins, at = b"", [], len(header([0] * len(variables)))
    for name, ds, t, atts, vals in variables:
        begins.append(at + len(data))
        data += struct.pack(">%d%s" % (len(vals), t), *vals)
    return header(begins) + data


def bathy(name, depth, nx=8, ny=8, units=("m", "m"), names=("y", "x"), transpose=False, t="f"):
    """depth[j][i] of a basin; coordinates 5 km apart (or 1 degree)"""
    step = 1.0 if units[0].startswith("degree") else 5.0 if units[0] == "km" else 5000.0
    cy, cx = [step * j for j in range(ny)], [step * i for i in range(nx)]
    if transpose:  # depth(x, y)
        dims = [(names[1], nx), (names[0], ny)]
        vals = [depth(i, j) for i in range(nx) for j in range(ny)]
        ds = [names[1], names[0]]
    else:
        dims = [(names[0], ny), (names[1], nx)]
        vals = [depth(i, j) for j in range(ny) for i in range(nx)]
        ds = [names[0], names[1]]
    coords = [(names[0], [names[0]], "d", {"units": units[0]}, cy), (names[1], [names[1]], "d", {"units": units[1]}, cx)]
    if transpose:
        coords.reverse()
    return write(name, cdf(dims, coords + [("depth", ds, t, {}, vals)]))


def basin(i, j, nx=8, ny=8):
    return 1000.0 if 0 < i < nx - 1 and 0 < j < ny - 1 else -5.0


b604 = bytearray(open(bathy("b604.nc", basin), "rb").read())
assert len(b604) == 604
c1 = bytearray(b604)
c1[0x34] = 0xBC  # 0xbc000003 variables
write("c1.nc", bytes(c1))
m2 = bytearray(b604)
m2[0x88] = 0x56  # 0x56000001 attributes of x
write("m2.nc", bytes(m2))
write("cut.nc", bytes(b604[:500]))
# a basin 12 wide, 8 high: its land border tells x from y
bathy("yx.nc", lambda i, j: basin(i, j, 12, 8), 12, 8, ("degrees_north", "degrees_east"), ("lat", "lon"))
bathy("xy.nc", lambda i, j: basin(i, j, 12, 8), 12, 8, ("degrees_north", "degrees_east"), ("lat", "lon"), True)
bathy("km.nc", basin, units=("km", "km"))
bathy("furlongs.nc", basin, units=("furlongs", "furlongs"))
bathy("radians.nc", basin, units=("radians", "radians"))
bathy("deep.nc", lambda i, j: 1e300 if (i, j) == (3, 4) else basin(i, j), t="d")
random.seed(32)
rhs = [random.gauss(0, 1) for _ in range(16 * 8 * 8)]
write("rhs.nc", cdf([("z", 16), ("y", 8), ("x", 8)], [("f", ["z", "y", "x"], "d", {}, rhs)]))
assert os.path.getsize(path("rhs.nc")) == 8304
write("rhs-cut.nc", open(path("rhs.nc"), "rb").read()[:3000])
write("rhs-1e305.nc", cdf([("z", 16), ("y", 8), ("x", 8)], [("f", ["z", "y", "x"], "d", {}, [v * 1e305 for v in rhs])]))
write("rhs-1e200.nc", cdf([("z", 16), ("y", 8), ("x", 8)], [("f", ["z", "y", "x"], "d", {}, [v * 1e200 for v in rhs])]))
POISSON = ["poisson", "--levels", "4", "--bathymetry"]
BOX_RHS = ["poisson", "--box", "8x8x16", "--rhs-var", "f", "--rhs-file"]


# issue 32: a cold field whose checksum is 0 mod 2^32 (4x4x8x8: 1024 sites x 12 words 0x3ff00000), header
# placeholders, duplicate keys, no END_HEADER, pipes, ILDG XML read as XML
nersc("cold0.nersc", unit * 64, checksum="0", dims=(4, 4, 8, 8))
nersc("placeholders.nersc", unit, checksum="0", trace="0")
nersc("dim1twice.nersc", unit, extra="DIMENSION_1 = 4\n")
nersc("noend.nersc", unit, end=False)
os.mkfifo(path("fifo.nersc"))
os.mkfifo(path("fifo.xyz"))


def ildg_format(name, old, new):
    """The sample ILDG file with its ildg-format XML edited (record length to match)."""
    b, out, pos = bytearray(ildg), bytearray(), 0
    while pos < len(b):
        length = struct.unpack(">Q", bytes(b[pos + 8:pos + 16]))[0]
        kind = bytes(b[pos + 16:pos + 144]).split(b"\0")[0]
        body = bytes(b[pos + 144:pos + 144 + length])
        if kind == b"ildg-format":
            body = body.replace(old.encode(), new.encode())
        out += b[pos:pos + 8] + struct.pack(">Q", len(body)) + b[pos + 16:pos + 144] + body + bytes(-len(body) % 8)
        pos += 144 + length + (-length % 8)
    return write(name, bytes(out))


# rows: (input as the table shows it, argv, exit status, what the message must contain[, environment])
G = os.path.join(data, "gauge")
rows = [
    ("`md --steps 4294967297`", FCC + ["--steps", "4294967297"], 2, "--steps: 4294967297 is out of range (0 .. 2147483647)"),
    ("`md --steps 1e19`", FCC + ["--steps", "1e19"], 2, "--steps: '1e19' is not a whole number"),
    ("`md --steps 10abc`", FCC + ["--steps", "10abc"], 2, "--steps: '10abc' is not a whole number"),
    ("`md --dt nan`", ["md", "--data", good, "--rcut", "2.5", "--skin", "0.3", "--dt", "nan", "--steps", "1"], 2,
     "--dt: 'nan' is not a finite number"),
    ("`md --stepz 5`", FCC + ["--stepz", "5"], 2, "unknown option '--stepz'"),
    ("`md --grid 2x1x1` (one process, no launcher)", FCC + ["--steps", "1", "--grid", "2x1x1"], 2,
     "--grid 2x1x1: one process has one subdomain"),
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
    ("`lqcd solve --source random --output C.txt`", ["lqcd", "solve", os.path.join(data, "gauge", "lat.sample.l4444"),
     "--kappa", "0.12", "--source", "random", "--tol", "1e-8", "--output", path("c.txt")], 2,
     "--output writes the pion correlator of --source point"),
    ("`lqcd solve F --output F` (the input)", ["lqcd", "solve", os.path.join(data, "gauge", "lat.sample.l4444"),
     "--kappa", "0.12", "--source", "point", "--tol", "1e-8", "--output", os.path.join(data, "gauge", "lat.sample.l4444")],
     2, "an output never replaces an input"),
    ("`bench --path ljj` (a typo)", ["bench", "--path", "ljj"], 2, "unknown path 'ljj' (the paths: md_neighbor md_lj md"),
    ("`bench --path md --size 99` (too few atoms for in.lj)", ["bench", "--path", "md", "--size", "99", "--repeat", "1"],
     1, "--size 99: in.lj needs 256 to 2^31 - 1 atoms (4 to 812 fcc cells per edge)"),
    ("`bench --path md --size 256 --precision fp64` (legal: in.lj on 4^3 cells)",
     ["bench", "--path", "md", "--size", "256", "--repeat", "1", "--precision", "fp64"], 0,
     "all 3 case(s) verified"),
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
    ("NetCDF classic bathymetry, variable count 0xbc000003 (byte 0x34)", POISSON + [path("c1.nc"), "--depth-var", "depth"],
     1, "corrupt NetCDF classic header at byte 56: more variables than the file can hold (3154116611)"),
    ("NetCDF classic bathymetry, attribute count 0x56000001 (byte 0x88)", POISSON + [path("m2.nc"), "--depth-var", "depth"],
     1, "corrupt NetCDF classic header at byte 140: more attributes than the file can hold (1442840577)"),
    ("NetCDF classic bathymetry cut from 604 to 500 bytes", POISSON + [path("cut.nc"), "--depth-var", "depth"], 1,
     "the file is cut short or corrupt: the data of variable 'depth' end at byte 604, the file has 500 bytes"),
    ("NetCDF right-hand side cut from 8304 to 3000 bytes", BOX_RHS + [path("rhs-cut.nc")], 1,
     "the data of variable 'f' end at byte 8304, the file has 3000 bytes"),
    ("bathymetry: `--depth-var elevation`, a name the file lacks", POISSON + [path("yx.nc"), "--depth-var", "elevation"],
     1, "no variable 'elevation' (the file's variables: lat (1D), lon (1D), depth (2D))"),
    ("bathymetry `depth(lat, lon)`, 12 x 8 columns", POISSON + [path("yx.nc"), "--depth-var", "depth"], 0,
     "grid 12x8x4 (lonlat), 240 wet cells"),
    ("bathymetry `depth(lon, lat)`, the same columns (read by the coordinates' units)",
     POISSON + [path("xy.nc"), "--depth-var", "depth"], 0, "grid 12x8x4 (lonlat), 240 wet cells"),
    ("bathymetry coordinates in `km` (converted to m)", POISSON + [path("km.nc"), "--depth-var", "depth"], 0,
     "grid 8x8x4 (Cartesian), 144 wet cells"),
    ("bathymetry coordinates in `furlongs`", POISSON + [path("furlongs.nc"), "--depth-var", "depth"], 1,
     "coordinate 'y' has units 'furlongs': clphys reads metres (m), kilometres (km) or degrees"),
    ("bathymetry coordinates in `radians`", POISSON + [path("radians.nc"), "--depth-var", "depth"], 1,
     "coordinate 'y' has units 'radians'"),
    ("bathymetry: a depth of 1e300 m", POISSON + [path("deep.nc"), "--depth-var", "depth"], 1,
     "variable 'depth' at (y 4, x 3) is 1e+300 (not a missing value, and not a depth within +-12000 m)"),
    ("right-hand side randn x 1e305", BOX_RHS + [path("rhs-1e305.nc")], 1,
     "exceeds the range of doubles: the right-hand side, up to"),
    ("right-hand side randn x 1e200 (solved: scaled by a power of two)", BOX_RHS + [path("rhs-1e200.nc")], 0,
     "removed), p has zero mean"),
    ("`poisson --extent 1e-300x1e-300x1e-300`", ["poisson", "--box", "8x8x4", "--extent", "1e-300x1e-300x1e-300"], 2,
     "--extent: cells of 1.25e-301 x 1.25e-301 m over 1e-300 m of depth: clphys takes cells at least 0.001 m wide"),
    ("`poisson --extent 1e300x1e300x1e300`", ["poisson", "--box", "8x8x4", "--extent", "1e300x1e300x1e300"], 2,
     "LX and LY at most 4.1e+07 m, LZ at most 12000 m"),
    ("`poisson --helmholtz 1e308`", ["poisson", "--box", "8x8x4", "--helmholtz", "1e308"], 2,
     "--helmholtz: 1e308 is out of range"),
    ("`poisson --stretch 1e100`", ["poisson", "--box", "8x8x4", "--stretch", "1e100"], 2,
     "--stretch 1e+100 and 4 levels over 4000 m make a layer 4e-297 m thick"),
]

write("image.data", HEAD + "Atoms # atomic\n\n1 1 11.0 2.0 3.0 2147483647 0 0\n2 1 4.0 2.0 3.0 0 0 0\n")
write("imagemin.data", HEAD + "Atoms # atomic\n\n1 1 1.0 -2.0 3.0 0 -2147483648 0\n2 1 4.0 2.0 3.0 0 0 0\n")
write("v1e20.data", HEAD + ATOMS + "\nVelocities\n\n1 1e20 0 0\n2 0 0 0\n")
write("v1e308.data", HEAD + ATOMS + "\nVelocities\n\n1 0 1e308 0\n2 0 0 0\n")
write("dilute.data", HEAD.replace("0 10 ", "0 1500 ") + ATOMS)
write("apart170.txt", "0 1 0 0 0 0 0 0\n1 1 1e-170 0 0 0 0 0\n")
write("apart100.txt", "0 1 0 0 0 0 0 0\n1 1 1e-100 0 0 0 0 0\n")
write("m1e308.txt", "0 1e308 0 0 0 0 0 0\n1 1 1 0 0 0 0 0\n")
write("v1e308.txt", "0 1 0 0 0 0 0 0\n1 1 1 0 0 1e308 0 0\n")
NB = ["--dt", "0.01", "--t-end", "0.02", "--eps", "0"]
ildg_format("lxly.ildg", "<lx>4</lx>", "<lx>4</ly>")
ildg_format("comment.ildg", "<lx>4</lx>", "<!-- <lx>8</lx> --><lx>4</lx>")
rows += [
    ("NERSC: cold 4x4x8x8 as clphys writes it (`CHECKSUM = 0`, the data's sum 0 mod 2^32)",
     ["lqcd", "plaquette", path("cold0.nersc")], 0, "checksum verified"),
    ("NERSC: `CHECKSUM = 0`, `LINK_TRACE = 0` placeholders with `--no-checksum`",
     ["lqcd", "plaquette", path("placeholders.nersc"), "--no-checksum"], 0,
     "not verified (CHECKSUM = 0, LINK_TRACE = 0 skipped (the data's is 1))"),
    ("NERSC: `DIMENSION_1` twice", ["lqcd", "plaquette", path("dim1twice.nersc")], 1,
     "header: DIMENSION_1 given twice (lines 3 and 11)"),
    ("NERSC: no `END_HEADER`", ["lqcd", "plaquette", path("noend.nersc")], 1, "END_HEADER is missing"),
    ("a gauge file through a FIFO (or `/dev/stdin`, `<(...)`)", ["lqcd", "plaquette", path("fifo.nersc")], 1,
     "not a regular file (a pipe, FIFO or device): gauge files are read from regular files only"),
    ("ILDG: `<lx>4</ly>`", ["lqcd", "plaquette", path("lxly.ildg")], 1, "ildg-format: <lx> is followed by '</ly>', not </lx>"),
    ("ILDG: `<!-- <lx>8</lx> -->` before `<lx>4</lx>` (legal)", ["lqcd", "plaquette", path("comment.ildg")], 0,
     "lattice 4x4x4x4"),
    ("LAMMPS data: image flag 2147483647, then wrapped", ["md", "--data", path("image.data")] + MD + ["--steps", "1"], 1,
     "atom ID 1: image flag ix = 2147483647 cannot count the wrap of x = 11 into the box"),
    ("LAMMPS data: image flag -2147483648, then wrapped", ["md", "--data", path("imagemin.data")] + MD + ["--steps", "1"],
     1, "atom ID 1: image flag iy = -2147483648 cannot count the wrap of y = -2 into the box"),
    ("`md --data /dev/zero`", ["md", "--data", "/dev/zero"] + MD + ["--steps", "1"], 1,
     "/dev/zero:1: a NUL byte: binary data, not a text file (LAMMPS data)"),
    ("`nbody --input /dev/zero`", ["nbody", "--input", "/dev/zero"] + NB, 1,
     "/dev/zero:1: a NUL byte: binary data, not a text file (NBabel)"),
    ("LAMMPS data, gzip-compressed (`X.data.gz`)", ["md", "--data", path("good.data.gz")] + MD + ["--steps", "1"], 0,
     "1 steps of 2 atoms"),
    ("LAMMPS data, gzip-compressed, named without `.gz`", ["md", "--data", path("gz-renamed.data")] + MD +
     ["--steps", "1"], 0, "1 steps of 2 atoms"),
    ("LAMMPS data: a truncated `.gz`", ["md", "--data", path("cut.data.gz")] + MD + ["--steps", "1"], 1,
     "the gzip stream ends early (truncated file)"),
    ("LAMMPS data: escape and control bytes", ["md", "--data", path("ctrl.txt")] + MD + ["--steps", "1"], 1,
     "ctrl.txt:1: a control byte 0x1b: binary data, not a text file (LAMMPS data)"),
    ("NBabel: escape and control bytes", ["nbody", "--input", path("ctrl.txt")] + NB, 1,
     "ctrl.txt:1: a control byte 0x1b: binary data, not a text file (NBabel)"),
    ("NBabel: a `.gz` that expands 340-fold (a decompression bomb)", ["nbody", "--input", path("bomb.txt.gz")] + NB, 1,
     "the gzip stream expands more than 256-fold"),
    ("NBabel, gzip-compressed: a field `nan`", ["nbody", "--input", path("nbabel.txt.gz")] + NB, 1,
     "nbabel.txt.gz:2: field 5 is not finite"),
    ("LAMMPS data: velocity `1e20`", ["md", "--data", path("v1e20.data")] + MD + ["--steps", "1"], 1,
     "atom ID 1 has velocity (1e+20, 0, 0): it would move |v| dt = 5e+17 per step, more than half the box (5)"),
    ("LAMMPS data: velocity `1e308`", ["md", "--data", path("v1e308.data")] + MD + ["--steps", "1"], 1,
     "atom ID 1 has velocity (0, 1e+308, 0): it would move |v| dt = inf per step"),
    ("`md --dt 1e300`", FCC[:-1] + ["1e300", "--steps", "1"], 1, "per step, more than half the box (3.35919)"),
    ("`md --epsilon 1e308`", FCC + ["--steps", "1", "--epsilon", "1e308"], 1,
     "not overlapping: the force overflowed the fp64 range"),
    ("`md --dt 0.5` (diverges)", FCC[:-1] + ["0.5", "--steps", "100", "--thermo", "100"], 1,
     "md: step 100: atom ID"),
    ("`md --dt 1e-320`", FCC[:-1] + ["1e-320", "--steps", "1"], 2,
     "--dt: '1e-320' underflows: a magnitude other than 0 below 2.2250738585072014e-308, the smallest normal double"),
    ("LAMMPS data: 2 atoms in a 1500^3 box (legal; cells bounded by the atoms)",
     ["md", "--data", path("dilute.data")] + MD + ["--steps", "10", "--variant", "half-cas"], 0, "10 steps of 2 atoms"),
    ("NBabel: two particles 1e-170 apart", ["nbody", "--input", path("apart170.txt")] + NB, 1,
     "apart170.txt:2: field 3 = 1e-170: a coordinate other than 0 below 1e-100 in magnitude"),
    ("NBabel: two particles 1e-100 apart, `--eps 0`", ["nbody", "--input", path("apart100.txt")] + NB, 1,
     "particle 0 has a non-finite"),
    ("NBabel: two particles 1e-100 apart, `--precision fp32`",
     ["nbody", "--input", path("apart100.txt"), "--precision", "fp32"] + NB, 1,
     "particle 1: a coordinate = 1e-100 is out of the fp32 range of clphys nbody"),
    ("NBabel: mass `1e308`", ["nbody", "--input", path("m1e308.txt")] + NB, 1,
     "m1e308.txt:1: field 2 = 1e+308: |mass| above 1e+100"),
    ("NBabel: velocity `1e308`", ["nbody", "--input", path("v1e308.txt")] + NB, 1,
     "v1e308.txt:2: field 6 = 1e+308: |velocity| above 1e+100"),
    ("`tune` with `CLPHYS_CACHE_DIR` a regular file", ["tune", "--quick", "--path", "nbody_gravity"], 1,
     "clphys tune: the tuning cache cannot be written, so no choice would be kept",
     {"CLPHYS_CACHE_DIR": path("hello.txt")}),
    ("`md --xyz FIFO --force`", FCC + ["--steps", "1", "--xyz", path("fifo.xyz"), "--force"], 2,
     "exists and is not a regular file (a device, FIFO or socket)"),
    ("`md --xyz` of a 250-character name (legal)", FCC + ["--steps", "1", "--xyz", path("a" * 250)], 0,
     "1 steps of 256 atoms"),
]

failures = 0
out_rows = []
for row in rows:
    shown, argv, want_rc, needle = row[:4]
    run_env = dict(env, **row[4]) if len(row) > 4 else env  # a row's own environment, when it has one
    p = subprocess.run([clphys] + argv, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
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
if "--check" in sys.argv:
    doc = sys.argv[sys.argv.index("--check") + 1]
    mine = ["| %s | %d |" % (shown, rc) for shown, rc, _ in out_rows]
    committed = []
    for l in open(doc).read().splitlines():
        cells = l.split(" | ")
        if l.startswith("| ") and len(cells) >= 3 and cells[1].isdigit():
            committed.append("%s | %s |" % (cells[0], cells[1]))
    if committed != mine:
        failures += 1
        print("FAILED: %s lists other rows than tests/cli_bad_inputs.py (regenerate it with --table):" % doc,
              file=sys.stderr)
        for r in sorted(set(mine) - set(committed)):
            print("  missing there: " + r, file=sys.stderr)
        for r in sorted(set(committed) - set(mine)):
            print("  only there:    " + r, file=sys.stderr)
# with --table on stderr, so that the table's output can replace the doc's
print("%d of %d bad-input rows as the table says" % (len(rows) - failures, len(rows)),
      file=sys.stderr if table else sys.stdout)
sys.exit(1 if failures else 0)
