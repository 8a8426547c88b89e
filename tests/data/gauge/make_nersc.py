#!/usr/bin/env python3
"""Write lat.sample.l4444.nersc from MILC's lat.sample.l4444: a NERSC file made
by a writer independent of clphys's own (this script), shaped like the files
other programs leave: 4D_SU3_GAUGE (two rows), IEEE32BIG, CHECKSUM = 0 (no
checksum computed), one newline after the data.

Format (NERSC archive format, as documented with the MILC and QCDUtils codes):
a text header BEGIN_HEADER ... END_HEADER of KEY = value lines, then for each
site (x fastest, then y, z, t) and direction mu = x, y, z, t the first two rows
of U_mu(x), each of 3 complex numbers (re, im), as big-endian IEEE floats.
PLAQUETTE is (1/3) Re tr of the 1x1 loop averaged over sites and the 6 planes
and LINK_TRACE (1/3) Re tr U averaged over links, both of the stored data with
row 2 = conj(row 0 x row 1).  MILC v5 input: 96-byte header (magic 20103 in the
file's byte order, dims, time stamp, order, two checksums), then the sites in
the same order, 4 directions of 3x3 complex fp32 each.

Run: python3 make_nersc.py  (in this folder; writes lat.sample.l4444.nersc)."""
import struct

src = open("lat.sample.l4444", "rb").read()
magic, nx, ny, nz, nt = struct.unpack("<5i", src[:20])
assert magic == 20103, "expected a little-endian MILC v5 file"
dims = (nx, ny, nz, nt)
vol = nx * ny * nz * nt
vals = struct.unpack("<%df" % (vol * 72), src[96:96 + vol * 288])


def link(site, mu):
    """3x3 complex of U_mu(site): the stored rows 0, 1 and the rebuilt row 2."""
    base = (site * 4 + mu) * 18
    r = [[complex(vals[base + 6 * a + 2 * b], vals[base + 6 * a + 2 * b + 1]) for b in range(3)] for a in range(2)]
    f32 = [[complex(struct.unpack(">f", struct.pack(">f", z.real))[0], struct.unpack(">f", struct.pack(">f", z.imag))[0])
            for z in row] for row in r]
    a, b = f32
    third = [(a[1] * b[2] - a[2] * b[1]).conjugate(), (a[2] * b[0] - a[0] * b[2]).conjugate(),
             (a[0] * b[1] - a[1] * b[0]).conjugate()]
    return [a, b, third]


def mul(x, y):
    return [[sum(x[i][k] * y[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def dag(x):
    return [[x[j][i].conjugate() for j in range(3)] for i in range(3)]


def coords(s):
    c = []
    for d in dims:
        c.append(s % d)
        s //= d
    return c


def index(c):
    return c[0] + nx * (c[1] + ny * (c[2] + nz * c[3]))


def step(s, mu):
    c = coords(s)
    c[mu] = (c[mu] + 1) % dims[mu]
    return index(c)


U = [[link(s, mu) for mu in range(4)] for s in range(vol)]
plaq = 0.0
for s in range(vol):
    for mu in range(4):
        for nu in range(mu + 1, 4):
            m = mul(mul(U[s][mu], U[step(s, mu)][nu]), dag(mul(U[s][nu], U[step(s, nu)][mu])))
            plaq += (m[0][0] + m[1][1] + m[2][2]).real
plaq /= 18.0 * vol
trace = sum((U[s][mu][0][0] + U[s][mu][1][1] + U[s][mu][2][2]).real for s in range(vol) for mu in range(4)) / (12.0 * vol)

header = ("BEGIN_HEADER\nHDR_VERSION = 1.0\nDATATYPE = 4D_SU3_GAUGE\nSTORAGE_FORMAT = 1.0\n"
          + "".join("DIMENSION_%d = %d\n" % (i + 1, d) for i, d in enumerate(dims))
          + "LINK_TRACE = %.10f\nPLAQUETTE = %.10f\nCHECKSUM = 0\n" % (trace, plaq)
          + "CREATOR = tests/data/gauge/make_nersc.py (from MILC lat.sample.l4444)\n"
          + "FLOATING_POINT = IEEE32BIG\nEND_HEADER\n")
data = bytearray()
for s in range(vol):
    for mu in range(4):
        base = (s * 4 + mu) * 18
        data += struct.pack(">12f", *vals[base:base + 12])
with open("lat.sample.l4444.nersc", "wb") as f:
    f.write(header.encode() + bytes(data) + b"\n")
print("plaquette %.10f link trace %.10f" % (plaq, trace))
