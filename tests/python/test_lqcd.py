"""Gauge files and Wilson solves through Python: the MILC sample's
documented plaquette, a NumPy plaquette and a NumPy Wilson-Dirac operator."""
import numpy as np
import pytest

import clphys
from conftest import DATA

MILC_SAMPLE_PLAQ = (1.794675 + 1.774426) / 6  # tests/data/gauge/README.md
GAUGE = DATA / "gauge"


def numpy_plaquette(u):
    # u[t, z, y, x, mu, a, b]; direction mu moves along array axis 3 - mu
    tot = 0.0
    for mu in range(4):
        for nu in range(mu + 1, 4):
            umu, unu = u[..., mu, :, :], u[..., nu, :, :]
            unu_xmu = np.roll(unu, -1, axis=3 - mu)
            umu_xnu = np.roll(umu, -1, axis=3 - nu)
            p = umu @ unu_xmu @ np.conj(np.swapaxes(umu_xnu, -1, -2)) @ np.conj(np.swapaxes(unu, -1, -2))
            tot += np.trace(p, axis1=-2, axis2=-1).real.mean() / 3
    return tot / 6


def test_milc_sample_plaquette():
    for name in ("lat.sample.l4444", "lat.sample.l4444.ildg"):
        assert abs(clphys.plaquette(GAUGE / name) - MILC_SAMPLE_PLAQ) < 3e-7
    g = clphys.GaugeField.read(GAUGE / "lat.sample.l4444")
    assert g.file_info["format"] == "milc" and g.file_info["checksum_verified"]
    assert g.dims == (4, 4, 4, 4) and g.links.shape == (4, 4, 4, 4, 4, 3, 3)
    assert abs(numpy_plaquette(g.links) - g.plaquette()) < 1e-12


def test_unverifiable_file_needs_verify_false(tmp_path):
    nersc = GAUGE / "lat.sample.l4444.nersc"  # CHECKSUM = 0: cannot be verified
    with pytest.raises(clphys.FormatError) as e:
        clphys.plaquette(nersc)
    assert "CHECKSUM" in str(e.value) or "checksum" in str(e.value)
    assert abs(clphys.plaquette(nersc, verify=False) - MILC_SAMPLE_PLAQ) < 3e-7
    with pytest.raises(clphys.FileIOError):
        clphys.plaquette(tmp_path / "missing")


def test_convert_round_trip(tmp_path):
    out = tmp_path / "conf.nersc"
    clphys.convert_gauge(GAUGE / "lat.sample.l4444", out, to="nersc")  # fp32, as the file
    a, b = clphys.GaugeField.read(GAUGE / "lat.sample.l4444"), clphys.GaugeField.read(out)
    assert b.file_info["format"] == "nersc" and b.file_info["checksum_verified"]
    assert b.file_info["precision"] == "fp32" and np.array_equal(a.links, b.links)
    hot = clphys.GaugeField.hot((4, 4, 2, 6), seed=11)
    for fmt in ("nersc", "ildg"):
        hot.write(tmp_path / ("hot." + fmt), format=fmt, precision="fp64")
        back = clphys.GaugeField.read(tmp_path / ("hot." + fmt))
        assert back.dims == (4, 4, 2, 6) and np.array_equal(back.links, hot.links)
        assert abs(numpy_plaquette(hot.links) - hot.plaquette()) < 1e-12


GAMMA = {  # DeGrand-Rossi basis of clphys_lqcd.h: row -> (column, phase)
    0: [(3, 1j), (2, 1j), (1, -1j), (0, -1j)],
    1: [(3, -1), (2, 1), (1, 1), (0, -1)],
    2: [(2, 1j), (3, -1j), (0, -1j), (1, 1j)],
    3: [(2, 1), (3, 1), (0, 1), (1, 1)],
}


def gamma(mu):
    g = np.zeros((4, 4), dtype=complex)
    for r, (c, ph) in enumerate(GAMMA[mu]):
        g[r, c] = ph
    return g


def numpy_wilson(u, psi, kappa, antiperiodic_t=True):
    out = psi.copy()
    one = np.eye(4)
    for mu in range(4):
        ax = 3 - mu
        n = psi.shape[ax]
        fwd = np.roll(psi, -1, axis=ax)
        bwd_u = np.roll(u[..., mu, :, :], 1, axis=ax)
        bwd = np.roll(psi, 1, axis=ax)
        if mu == 3 and antiperiodic_t:
            sl_last = [slice(None)] * 6
            sl_last[ax] = n - 1
            fwd[tuple(sl_last)] *= -1
            sl_first = [slice(None)] * 6
            sl_first[ax] = 0
            bwd[tuple(sl_first)] *= -1
        uf = np.einsum("...ab,...sb->...sa", u[..., mu, :, :], fwd)
        ub = np.einsum("...ba,...sb->...sa", np.conj(bwd_u), bwd)
        h = np.einsum("rs,...sa->...ra", one - gamma(mu), uf) + np.einsum("rs,...sa->...ra", one + gamma(mu), ub)
        out -= kappa * h
    return out


@pytest.mark.parametrize("precision", ["fp64", "mixed"])
def test_wilson_solve_against_numpy_operator(ctx, fp64, rng, precision):
    g = clphys.GaugeField.hot((4, 4, 4, 4), seed=7)
    kappa = 0.11
    b = rng.normal(size=(4, 4, 4, 4, 4, 3)) + 1j * rng.normal(size=(4, 4, 4, 4, 4, 3))
    with clphys.WilsonSolver(ctx, g, kappa, precision=precision, tol=1e-10) as sol:
        d_dev = sol.apply(b)
        d_np = numpy_wilson(g.links, b, kappa)
        assert np.abs(d_dev - d_np).max() < 1e-12 * np.abs(d_np).max()
        x, info = sol.solve(b)
        assert info["residual"] <= 1e-10 and info["iterations"] > 0
        r = np.linalg.norm(b - numpy_wilson(g.links, x, kappa)) / np.linalg.norm(b)
        assert r <= 1.1e-10
        corr, _ = sol.pion_correlator()
    assert corr.shape == (4,) and (corr > 0).all() and corr.argmax() == 0


def test_solver_outlives_nothing(ctx, fp64):
    g = clphys.GaugeField.cold((4, 4, 4, 6))
    sol = clphys.WilsonSolver(ctx, g, 0.1, precision="fp64")
    g.close()  # the field was copied to the device
    x, info = sol.solve(np.ones((6, 4, 4, 4, 4, 3)))
    assert info["residual"] <= 1e-10
    sol.close()
    with pytest.raises(clphys.ClosedError):
        sol.solve(np.ones((6, 4, 4, 4, 4, 3)))
    with pytest.raises(clphys.InvalidArgumentError):
        clphys.GaugeField.cold((4, 4, 4, 5))
