#!/usr/bin/env python3
"""The poisson bench's hypre peer (bench/poisson_hypre.c) on a flat box with
closed walls, floor and lid (pure Neumann, no land), as the bench hands it
over: the symmetric finite-volume matrix of 5 km x 5 km cells over 16
layers stretched 22x (each row's diagonal the sum of its couplings in the
order of the library's assembly, whose rounding gives the singular matrix a
tiny eigenvalue along the constants) and a white-noise right-hand side projected to zero sum.
hypre's PFMG-CG must reach the tolerance 1e-8 in true residual (before the
peer removed the null space it stalled at 2.2e-3 on the bench's box).

Usage: test_hypre_box.py POISSON_HYPRE MPIEXEC"""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

peer, mpiexec = sys.argv[1], sys.argv[2]
nx, ny, nz = 64, 64, 16
n = nx * ny * nz
r = 22.0 ** (1 / (nz - 1))
dz = [4000 * (r - 1) / (r ** nz - 1) * r ** k for k in range(nz)]
dx = dy = 1e6 / nx  # the bench's box: 1000 km wide, 4 km deep
a = [[0.0] * n for _ in range(7)]
for k in range(nz):
    for j in range(ny):
        for i in range(nx):
            c, s = i + nx * (j + ny * k), 0.0
            for d, (di, dj, dk) in {-1: (-1, 0, 0), 1: (1, 0, 0), -2: (0, -1, 0), 2: (0, 1, 0), -3: (0, 0, -1),
                                    3: (0, 0, 1)}.items():
                ii, jj, kk = i + di, j + dj, k + dk
                if 0 <= ii < nx and 0 <= jj < ny and 0 <= kk < nz:
                    v = -(dy * dz[k]) / dx if dk == 0 else -(dx * dy) / ((dz[k] + dz[kk]) / 2)
                    a[d + 3][c] = v
                    s -= v
            # the diagonal summed as the library's assembly sums it (poisson_offdiag_sum: east, west, north,
            # south, below, above): its rounding is what leaves the matrix a tiny eigenvalue along the constants
            a[3][c] = ((((abs(a[4][c]) + abs(a[2][c])) + abs(a[5][c])) + abs(a[1][c])) + abs(a[6][c])) + abs(a[0][c])
random.seed(31)
w = [dx * dy * dz[c // (nx * ny)] for c in range(n)]
b = [-w[c] * random.uniform(-1, 1) for c in range(n)]
sb, sw = sum(b), sum(w)
b = [b[c] - w[c] * sb / sw for c in range(n)]
fd, path = tempfile.mkstemp(prefix="clphys-hypre-")
with os.fdopen(fd, "wb") as f:
    f.write(b"CPPOIS1\0" + struct.pack("4i", nx, ny, nz, 1) + struct.pack("d", 1e-8))
    for d in range(7):
        f.write(struct.pack("%dd" % n, *a[d]))
    f.write(struct.pack("%dd" % n, *b))
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
p = subprocess.run([mpiexec, "-np", "2", peer, path, "1"], capture_output=True, text=True, env=env, timeout=300)
os.remove(path)
print(p.stdout.strip(), p.stderr.strip()[-500:])
res = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 and p.stdout.strip() else {}
ok = res.get("true_rel_residual", 1) <= 1.05e-8 and res.get("iterations", 0) > 0 and "pure Neumann" in res.get(
    "null_space", "")
print("%s hypre on the pure-Neumann box: true residual %s after %s iterations" %
      ("ok    " if ok else "FAILED", res.get("true_rel_residual"), res.get("iterations")))
sys.exit(0 if ok else 1)
