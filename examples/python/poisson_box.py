"""A pressure-like Poisson solve in a flat box with no-flux walls, then the
same on a random basin read from memory.

    python poisson_box.py"""
import numpy as np

import clphys

nz, ny, nx = 8, 16, 24
extent = (240e3, 160e3, 4000.0)          # Lx, Ly, Lz in metres
z = (np.arange(nz) + 0.5)[:, None, None]
x = (np.arange(nx) + 0.5)[None, None, :]
rhs = np.cos(np.pi * x / nx) * np.exp(-z / 4) * 1e-9   # (nz, ny, nx), z index 0 at the surface
rhs = np.broadcast_to(rhs, (nz, ny, nx))
with clphys.Context() as ctx:
    p, info = clphys.poisson_solve_box(ctx, rhs, extent, tol=1e-10)
    print(f"box {nx}x{ny}x{nz}: {info['iterations']} iterations, residual {info['residual']:.2e}, "
          f"mean p {p.mean():.2e}, p range {p.min():.4g} .. {p.max():.4g}")
    # the same operator from the plan, reused for several right-hand sides
    with clphys.PoissonPlan.box(ctx, rhs.shape, extent, tol=1e-8) as plan:
        for k in range(3):
            p, info = plan.solve(rhs * (k + 1))
            print(f"  rhs x {k + 1}: {info['iterations']} iterations, V-cycles {info['vcycle_s']:.3g} s")
