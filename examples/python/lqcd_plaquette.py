"""The plaquette of a gauge file, then a Wilson solve and the pion
correlator of a point source on it.

    python lqcd_plaquette.py [FILE] [KAPPA]
Default FILE: MILC's sample tests/data/gauge/lat.sample.l4444 (documented
plaquette (1.794675 + 1.774426) / 6 = 0.5948502)."""
import pathlib
import sys

import clphys

here = pathlib.Path(__file__).resolve().parent
path = sys.argv[1] if len(sys.argv) > 1 else here.parents[1] / "tests" / "data" / "gauge" / "lat.sample.l4444"
kappa = float(sys.argv[2]) if len(sys.argv) > 2 else 0.12
print(f"plaquette {clphys.plaquette(path):.9f}")
gauge = clphys.GaugeField.read(path)
with clphys.Context() as ctx:
    with clphys.WilsonSolver(ctx, gauge, kappa, precision="mixed", tol=1e-10) as solver:
        corr, info = solver.pion_correlator(source=(0, 0, 0, 0))
print(f"last solve: {info['iterations']} iterations, |b - D x|/|b| = {info['residual']:.2e}")
for t, c in enumerate(corr):
    print(f"C({t}) = {c:.10e}")
