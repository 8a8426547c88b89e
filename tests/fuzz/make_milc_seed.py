#!/usr/bin/env python3
"""MILC v5 seed of the milc fuzz target from an fp32 ILDG file of clphys
(`clphys lqcd generate --dims 2x2x2x2 --hot 9 --format ildg --fp32 --out X`):
the links of its ildg-binary-data record (big-endian) written little-endian
after a MILC header (magic 20103, dims, time stamp, order 0, the 29/31-bit
checksums of MILC's io_lat4.c), with the leading byte of the fuzz target.
Usage: make_milc_seed.py IN.ildg OUT"""
import struct, sys

d = open(sys.argv[1], "rb").read()
o = 0
while o < len(d):
    magic, ver, flags, n = struct.unpack(">IHHQ", d[o:o + 16])
    kind = d[o + 16:o + 144].split(b"\0")[0]
    if kind == b"ildg-binary-data":
        data = d[o + 144:o + 144 + n]
    o += 144 + (n + 7) // 8 * 8
words = struct.unpack(">%dI" % (len(data) // 4), data)
vol = len(words) // 72
dims = (2, 2, 2, 2)
assert vol == 16
s29 = s31 = 0
for site in range(vol):
    for k in range(72):
        w = words[site * 72 + k]
        r29, r31 = (72 * site + k) % 29, (72 * site + k) % 31
        s29 ^= ((w << r29) | (w >> (32 - r29))) & 0xffffffff
        s31 ^= ((w << r31) | (w >> (32 - r31))) & 0xffffffff
head = struct.pack("<5i", 20103, *dims) + b"fuzz seed".ljust(64, b"\0") + struct.pack("<iII", 0, s29, s31)
open(sys.argv[2], "wb").write(b"\x01" + head + struct.pack("<%dI" % len(words), *words))
