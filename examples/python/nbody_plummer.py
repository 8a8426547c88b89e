"""Accelerations and energies of a Plummer sphere, then 50 leapfrog steps.

    python nbody_plummer.py [N]
E should be near -1/4 (N-body units) and stay there."""
import sys

import clphys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
x, v, m = clphys.plummer(n, seed=42)
with clphys.Context() as ctx:          # device "auto", or $CLPHYS_DEVICE with Context("")
    acc = clphys.gravity_accelerations(ctx, x, m, eps=1e-3)  # (n, 3)
    phi = clphys.gravity_potentials(ctx, x, m, eps=1e-3)      # (n,)
    e = clphys.energies(x, v, m, phi)
    print(f"{n} particles on {ctx.device_name}: K {e['kinetic']:.5f} W {e['potential']:.5f} "
          f"E {e['total']:.5f} Q {e['virial_ratio']:.3f}  |a|max {abs(acc).max():.3g}")
    x1, v1, rows = clphys.nbody_run(ctx, x, v, m, dt=1e-3, steps=50, eps=1e-3, every=10)
    for step, tot in zip(rows["step"], rows["total"]):
        print(f"step {step:3d}  E {tot:.8f}")
