"""Lennard-Jones MD as LAMMPS's bench/in.lj sets it up (fcc at density
0.8442, T = 1.44, r_cut 2.5, skin 0.3, dt 0.005), its thermo rows as
arrays, and the energy drift plotted with matplotlib.

    python md_lj_energy_plot.py [OUT.png] [STEPS]"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import clphys  # noqa: E402

out = sys.argv[1] if len(sys.argv) > 1 else "lj_energy.png"
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 500
system = clphys.MDSystem.fcc(rho=0.8442, cells=4, temp=1.44, seed=87287)  # 256 atoms
with clphys.Context() as ctx:
    with clphys.MDPlan(ctx, system, dt=0.005, rcut=2.5, skin=0.3) as md:
        rows = md.run(steps, thermo_every=10)   # dict of arrays: step temp pe ke etotal press
    forces, pe = clphys.lj_forces(ctx, system.positions, system.hi - system.lo, 2.5)
    print(f"{system.n} atoms on {ctx.device_name}: initial pe/atom {pe / system.n:.6f}")
e0 = rows["etotal"][0]
print(f"etotal {e0:.6f} -> {rows['etotal'][-1]:.6f} after {steps} steps, T {rows['temp'][-1]:.4f}")
fig, ax = plt.subplots(2, 1, sharex=True, figsize=(6, 5))
ax[0].plot(rows["step"], rows["etotal"] - e0)
ax[0].set_ylabel("etotal - etotal(0) per atom")
ax[1].plot(rows["step"], rows["temp"])
ax[1].set_ylabel("T")
ax[1].set_xlabel("step")
fig.suptitle("LJ fcc rho 0.8442, NVE (clphys)")
fig.savefig(out, dpi=80)
print("wrote", out)
