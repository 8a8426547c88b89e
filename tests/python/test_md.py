"""Neighbour lists, Lennard-Jones forces and MD through Python, against a
NumPy sum over all pairs with the minimum image (the C test's tolerances:
force error per particle over the sum of its pair-force magnitudes below
1e-12 in fp64, 1e-5 in fp32; energy relative 1e-12 / 1e-5)."""
import numpy as np
import pytest

import clphys

TOL = {"fp64": 1e-12, "fp32": 1e-5}


def lattice(rng, cells=6, a=1.2, jitter=0.15):
    g = np.stack(np.meshgrid(*[np.arange(cells)] * 3, indexing="ij"), -1).reshape(-1, 3) * a
    x = g + rng.uniform(-jitter, jitter, g.shape)
    box = np.full(3, cells * a)
    return np.mod(x, box), box


def lj_all_pairs(x, box, rc):
    d = x[:, None, :] - x[None, :, :]
    d -= box * np.round(d / box)
    r2 = (d ** 2).sum(-1)
    np.fill_diagonal(r2, np.inf)
    inside = r2 < rc * rc
    with np.errstate(divide="ignore", over="ignore"):
        ir6 = np.where(inside, 1 / r2 ** 3, 0.0)
        fr = np.where(inside, 24 * (2 * ir6 * ir6 - ir6) / r2, 0.0)
    pair_f = fr[:, :, None] * d
    f = pair_f.sum(1)
    scale = np.linalg.norm(pair_f, axis=2).sum(1)
    pe = 0.5 * np.where(inside, 4 * (ir6 * ir6 - ir6), 0.0).sum()
    return f, pe, scale, inside


@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_lj_forces_against_all_pairs(ctx, rng, precision):
    if precision == "fp64" and not ctx.device.fp64:
        pytest.skip("no fp64")
    x, box = lattice(rng)
    if precision == "fp32":
        x = x.astype(np.float32).astype(np.float64)
    f, pe = clphys.lj_forces(ctx, x, box, 2.5, precision=precision)
    rf, rpe, scale, _ = lj_all_pairs(x, box, 2.5)
    assert f.shape == x.shape and np.isfinite(f).all()
    assert (np.linalg.norm(f - rf, axis=1) / scale).max() <= TOL[precision]
    assert abs(pe - rpe) <= TOL[precision] * abs(rpe)


def test_lj_plan_wraps_and_repeats(ctx, fp64, rng):
    x, box = lattice(rng)
    rf, rpe, scale, _ = lj_all_pairs(x, box, 2.5)
    with clphys.LJPlan(ctx, len(x), box, 2.5, skin=0.3, precision="fp64") as plan:
        assert plan.choice
        for shift in (0.0, 1.0, -2.0):  # whole boxes away: wrapped back
            f, pe, vir = plan.compute(x + shift * box)
            assert (np.linalg.norm(f - rf, axis=1) / scale).max() <= 1e-12
            assert abs(pe - rpe) <= 1e-12 * abs(rpe)


def test_neighbor_list_against_numpy(ctx, fp64, rng):
    x, box = lattice(rng, cells=5)
    with clphys.NeighborList(ctx, len(x), box, 2.0) as nl:
        nl.build(x)
        off, lst = nl.pairs()
    *_, inside = lj_all_pairs(x, box, 2.0)
    assert off.shape == (len(x) + 1,) and off[-1] == len(lst)
    for i in range(len(x)):
        assert sorted(lst[off[i]:off[i + 1]]) == list(np.flatnonzero(inside[i]))


def test_lj_errors(ctx, fp64, rng):
    x, box = lattice(rng, cells=3)  # edge 3.6 < 2 r_cut: refused with the C message
    with pytest.raises(clphys.Error) as e:
        clphys.lj_forces(ctx, x, box, 2.5)
    assert "box" in str(e.value) or "2 r_search" in str(e.value)
    x, box = lattice(rng)
    x[1] = x[0]  # overlapping atoms: a clear error, not a NaN
    with pytest.raises(clphys.InputError):
        clphys.lj_forces(ctx, x, box, 2.5)
    with pytest.raises(clphys.InvalidArgumentError):
        clphys.lj_forces(ctx, x, box[:2], 2.5)


def test_md_run_thermo_rows(ctx, fp64):
    sys = clphys.MDSystem.fcc(0.8442, 4, 1.44, seed=5)  # LAMMPS bench/in.lj's state, 256 atoms
    assert sys.n == 256
    with clphys.MDPlan(ctx, sys, dt=0.005, rcut=2.5, skin=0.3) as md:
        rows = md.run(100, thermo_every=25)
        assert list(rows["step"]) == [0, 25, 50, 75, 100]
        assert set(rows) == set(clphys.THERMO_KEYS)
        assert abs(rows["temp"][0] - 1.44) < 1e-9
        _, pe0, _, _ = lj_all_pairs(sys.positions, sys.hi - sys.lo, 2.5)
        assert abs(rows["pe"][0] - pe0 / sys.n) <= 1e-12 * abs(pe0 / sys.n)
        ke0 = 0.5 * (sys.type_mass[sys.types][:, None] * sys.velocities ** 2).sum() / sys.n
        assert abs(rows["ke"][0] - ke0) <= 1e-12 * ke0
        e = rows["etotal"]
        # NVE with the unshifted cutoff: etotal jumps as pairs cross r_cut
        # (LAMMPS's in.lj log moves in the third digit as well)
        assert np.abs(e - e[0]).max() < 5e-3 * abs(e[0])
        assert md.rebuilds >= 1
        now = md.system()
    assert now.positions.shape == (256, 3) and not np.array_equal(now.positions, sys.positions)
    assert ((now.positions >= now.lo) & (now.positions < now.hi)).all()


def write_lammps_data(path, s):
    g = "{:.17g}".format
    lines = ["LAMMPS data file written by a test", "", f"{s.n} atoms", f"{len(s.type_mass) - 1} atom types", ""]
    for a, name in enumerate("xyz"):
        lines.append(f"{g(s.lo[a])} {g(s.hi[a])} {name}lo {name}hi")
    lines += ["", "Masses", ""] + [f"{t} {g(s.type_mass[t])}" for t in range(1, len(s.type_mass))]
    lines += ["", "Atoms # atomic", ""]
    lines += [f"{s.ids[k]} {s.types[k]} {g(x)} {g(y)} {g(z)}" for k, (x, y, z) in enumerate(s.positions)]
    lines += ["", "Velocities", ""]
    lines += [f"{s.ids[k]} {g(a)} {g(b)} {g(c)}" for k, (a, b, c) in enumerate(s.velocities)]
    path.write_text("\n".join(lines) + "\n")


def test_lammps_data_file(tmp_path):
    s = clphys.MDSystem.fcc(0.8442, 2, 1.0, seed=9)
    write_lammps_data(tmp_path / "in.data", s)
    r = clphys.MDSystem.read_lammps_data(tmp_path / "in.data")
    assert r.n == 32 and np.array_equal(r.positions, s.positions) and np.array_equal(r.velocities, s.velocities)
    assert np.array_equal(r.lo, s.lo) and np.array_equal(r.hi, s.hi) and list(r.types) == list(s.types)
    bad = (tmp_path / "in.data").read_text().replace("32 atoms", "33 atoms")
    (tmp_path / "bad.data").write_text(bad)
    with pytest.raises(clphys.FormatError) as e:  # the header's count disagrees: named with the file
        clphys.MDSystem.read_lammps_data(tmp_path / "bad.data")
    assert "bad.data" in str(e.value)
