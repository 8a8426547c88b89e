"""Direct-sum gravity through Python against a NumPy direct sum (the C
test's measure and tolerances: |a - a_ref| / sum_j m_j r / (r^2 + eps^2)^1.5
below 1e-12 in fp64, 1e-5 in fp32)."""
import numpy as np
import pytest

import clphys

TOL = {"fp64": 1e-12, "fp32": 1e-5}


def direct_sum(x, m, eps, targets=None):
    t = x if targets is None else targets
    d = x[None, :, :] - t[:, None, :]
    r2 = (d ** 2).sum(-1)
    s2 = r2 + eps * eps
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(s2 > 0, 1 / np.sqrt(s2), 0.0)
        if targets is None:
            np.fill_diagonal(inv, 0.0)
    w = m[None, :] * inv ** 3
    acc = (w[:, :, None] * d).sum(1)
    pot = -(m[None, :] * inv).sum(1)
    scale_a = (m[None, :] * np.sqrt(r2) * inv ** 3).sum(1)
    scale_p = (m[None, :] * inv).sum(1)
    return acc, pot, scale_a, scale_p


@pytest.mark.parametrize("precision", ["fp64", "fp32"])
@pytest.mark.parametrize("n", [1, 257, 1000])
def test_accelerations_against_numpy(ctx, rng, precision, n):
    if precision == "fp64" and not ctx.device.fp64:
        pytest.skip("no fp64")
    x = rng.uniform(-1, 1, (n, 3))
    m = rng.uniform(0.1, 1, n)
    eps = 0.01
    if precision == "fp32":  # the kernel sees fp32 input: so does the reference
        x, m = x.astype(np.float32).astype(np.float64), m.astype(np.float32).astype(np.float64)
    acc = clphys.gravity_accelerations(ctx, x, m, eps, precision=precision)
    ra, rp, sa, sp = direct_sum(x, m, eps)
    assert acc.shape == (n, 3) and acc.dtype == np.float64
    err = np.linalg.norm(acc - ra, axis=1) / np.where(sa > 0, sa, 1)
    assert err.max() < TOL[precision]
    pot = clphys.gravity_potentials(ctx, x, m, eps, precision=precision)
    assert (np.abs(pot - rp) / np.where(sp > 0, sp, 1)).max() < TOL[precision]


def test_plan_targets_and_repeated_use(ctx, fp64, rng):
    x = rng.uniform(-1, 1, (300, 3))
    m = rng.uniform(0.1, 1, 300)
    t = rng.uniform(-1, 1, (77, 3))
    with clphys.GravityPlan(ctx, eps=0.05, precision="fp64") as plan:
        assert plan.variant
        for _ in range(3):
            acc, pot = plan.compute(x, m, targets=t)
            ra, rp, sa, sp = direct_sum(x, m, 0.05, targets=t)
            assert (np.linalg.norm(acc - ra, axis=1) / sa).max() < 1e-12
            assert (np.abs(pot - rp) / sp).max() < 1e-12


def test_conversions_documented(ctx, fp64, rng):
    x = rng.uniform(-1, 1, (64, 3))
    m = rng.uniform(0.1, 1, 64)
    ref = clphys.gravity_accelerations(ctx, x, m, 0.1)
    # non-contiguous, Fortran order, lists, float32-exact input: converted
    big = np.zeros((64, 6))
    big[:, ::2] = x
    assert np.array_equal(clphys.gravity_accelerations(ctx, big[:, ::2], m, 0.1), ref)
    assert np.array_equal(clphys.gravity_accelerations(ctx, np.asfortranarray(x), list(m), 0.1), ref)
    xi = np.round(x * 8).astype(np.int64)
    assert np.allclose(clphys.gravity_accelerations(ctx, xi, m, 0.1),
                       clphys.gravity_accelerations(ctx, xi.astype(float), m, 0.1), rtol=0, atol=0)
    # wrong shapes and dtypes: refused
    with pytest.raises(clphys.InvalidArgumentError):
        clphys.gravity_accelerations(ctx, x[:, :2], m, 0.1)
    with pytest.raises(clphys.InvalidArgumentError):
        clphys.gravity_accelerations(ctx, x, m[:-1], 0.1)
    with pytest.raises(TypeError):
        clphys.gravity_accelerations(ctx, x.astype(complex), m, 0.1)
    with pytest.raises(clphys.InvalidArgumentError):
        clphys.gravity_accelerations(ctx, x, m, 0.1, precision="fp16")


def test_bad_input_raises_with_c_message(ctx, fp64):
    x = np.zeros((3, 3))
    x[1] = [1, 0, 0]
    m = np.ones(3)
    with pytest.raises(clphys.InputError) as e:  # particles 0 and 2 coincide, eps = 0
        clphys.gravity_accelerations(ctx, x, m, 0.0)
    assert "particle" in str(e.value)
    x[2] = [np.nan, 0, 0]
    with pytest.raises(clphys.InputError):
        clphys.gravity_accelerations(ctx, x, m, 0.1)


def test_nbody_driver_conserves_energy(ctx, fp64):
    x, v, m = clphys.plummer(128, seed=3)
    e = clphys.energies(x, v, m, clphys.gravity_potentials(ctx, x, m, 0.0))
    assert abs(e["total"] + 0.25) < 0.05 and abs(m.sum() - 1) < 1e-12
    x1, v1, rows = clphys.nbody_run(ctx, x, v, m, dt=1e-3, steps=20, eps=0.01, every=5)
    assert list(rows["step"]) == [0, 5, 10, 15, 20]
    drift = abs(rows["total"][-1] - rows["total"][0]) / abs(rows["total"][0])
    assert drift < 1e-4 and not np.array_equal(x1, x)


def test_nbabel_files(tmp_path):
    x, v, m = clphys.plummer(50, seed=2)
    clphys.write_nbabel(tmp_path / "p.txt", x, v, m)
    x2, v2, m2 = clphys.read_nbabel(tmp_path / "p.txt")
    assert np.array_equal(x, x2) and np.array_equal(v, v2) and np.array_equal(m, m2)
    (tmp_path / "bad.txt").write_text("0 1 0 0 0 0 0\n")  # 7 fields
    with pytest.raises(clphys.FormatError) as e:
        clphys.read_nbabel(tmp_path / "bad.txt")
    assert "bad.txt" in str(e.value)
