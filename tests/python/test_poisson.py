"""The Poisson solver through Python against a dense NumPy solve of the
same finite-volume problem (and SciPy's sparse one where installed); the C
tests' tolerance: true relative residual 1e-10 in every precision mode."""
import numpy as np
import pytest

import clphys


def fv_matrix(nx, ny, nz, dx, dy, dz, helmholtz=0.0):
    """A of the assembled operator (clphys_poisson.h) of a flat box:
    (A p)_c = sum_faces T_f (p_c - p_nb) + lambda V p_c, T_f = area / distance."""
    n = nx * ny * nz
    a = np.zeros((n, n))
    idx = lambda i, j, k: i + nx * (j + ny * k)  # noqa: E731
    for k in range(nz):
        for j in range(ny):
            for i in range(nx):
                c = idx(i, j, k)
                a[c, c] += helmholtz * dx * dy * dz
                for (di, dj, dk, t) in ((1, 0, 0, dy * dz / dx), (0, 1, 0, dx * dz / dy), (0, 0, 1, dx * dy / dz)):
                    ii, jj, kk = i + di, j + dj, k + dk
                    if ii < nx and jj < ny and kk < nz:
                        nb = idx(ii, jj, kk)
                        a[c, c] += t
                        a[nb, nb] += t
                        a[c, nb] -= t
                        a[nb, c] -= t
    return a


@pytest.mark.parametrize("precision", ["mixed", "fp64", "fp32"])
def test_box_against_dense_numpy(ctx, fp64, rng, precision):
    nz, ny, nx = 3, 4, 6
    lx, ly, lz = 6e3, 2e3, 30.0
    dx, dy, dz = lx / nx, ly / ny, lz / nz
    f = rng.normal(size=(nz, ny, nx))
    p, info = clphys.poisson_solve_box(ctx, f, (lx, ly, lz), tol=1e-10, precision=precision)
    assert p.shape == f.shape and info["iterations"] > 0 and info["residual"] <= 1e-10
    a = fv_matrix(nx, ny, nz, dx, dy, dz)
    b = -(f - f.mean()).ravel() * dx * dy * dz  # b = -V f, its mean removed (singular problem)
    ref = np.linalg.lstsq(a, b, rcond=None)[0]
    ref -= ref.mean()
    assert abs(p.mean()) <= 1e-10 * np.abs(p).max()
    assert np.linalg.norm(b - a @ p.ravel()) <= 1.01e-10 * np.linalg.norm(b) + 1e-14
    assert np.abs(p.ravel() - ref).max() <= 1e-7 * np.abs(ref).max()


def test_coefficients_against_sparse_solver(ctx, fp64, rng):
    nz, ny, nx = 4, 4, 8
    a = fv_matrix(nx, ny, nz, 100.0, 150.0, 10.0, helmholtz=1e-5)
    seven = np.zeros((7, nz, ny, nx))
    shifts = {-3: (0, 0, -1), -2: (0, -1, 0), -1: (-1, 0, 0), 1: (1, 0, 0), 2: (0, 1, 0), 3: (0, 0, 1)}
    for k in range(nz):
        for j in range(ny):
            for i in range(nx):
                c = i + nx * (j + ny * k)
                seven[3, k, j, i] = a[c, c]
                for d, (di, dj, dk) in shifts.items():
                    ii, jj, kk = (i + di) % nx, (j + dj) % ny, k + dk
                    if 0 <= kk < nz:
                        seven[d + 3, k, j, i] = a[c, ii + nx * (jj + ny * kk)]
    b = rng.normal(size=(nz, ny, nx))
    with clphys.PoissonPlan.from_coefficients(ctx, seven, tol=1e-10, precision="fp64") as plan:
        x, info = plan.solve(b)
        back, mask, w = plan.operator()
    # stored as the diagonal excess and forward couplings: the same up to rounding
    assert mask.all() and np.allclose(back, seven, rtol=1e-12, atol=0) and (w == 1).all()
    try:
        import scipy.sparse
        import scipy.sparse.linalg
        ref = scipy.sparse.linalg.spsolve(scipy.sparse.csr_matrix(a), b.ravel())
    except ImportError:
        ref = np.linalg.solve(a, b.ravel())
    assert info["residual"] <= 1e-10
    assert np.abs(x.ravel() - ref).max() <= 1e-7 * np.abs(ref).max()


def test_bathymetry_from_netcdf(ctx, fp64, tmp_path):
    netcdf = pytest.importorskip("scipy.io").netcdf_file
    nx, ny = 16, 12
    x = (np.arange(nx) + 0.5) * 1e4
    y = (np.arange(ny) + 0.5) * 1e4
    depth = np.full((ny, nx), 200.0)
    depth[:, :3] = -1.0  # a coast along the west
    depth[5, 7] = -9999.0  # an island given as the fill value
    path = tmp_path / "bathy.nc"
    with netcdf(path, "w") as nc:
        nc.createDimension("x", nx)
        nc.createDimension("y", ny)
        vx = nc.createVariable("x", "d", ("x",))
        vy = nc.createVariable("y", "d", ("y",))
        vd = nc.createVariable("depth", "d", ("y", "x"))
        vx.units = vy.units = "m"  # clphys refuses coordinates without CF units
        vd._FillValue = -9999.0
        vx[:], vy[:], vd[:] = x, y, depth
    with clphys.PoissonPlan.from_bathymetry(ctx, path, "depth", nz=4, tol=1e-10, precision="fp64") as plan:
        assert plan.shape == (4, ny, nx)
        f = np.random.default_rng(3).normal(size=plan.shape)
        p, info = plan.solve(f)
        a, mask, w = plan.operator()
    assert info["residual"] <= 1e-10 and info["singular_regions"] == 1
    assert not mask[:, :, :3].any() and not mask[:, 5, 7].any() and mask.sum() == 4 * (ny * (nx - 3) - 1)
    assert (p[~mask] == 0).all()
    assert abs((w * p).sum()) <= 1e-10 * (w * np.abs(p)).sum()  # zero volume-weighted mean


def test_poisson_errors(ctx, fp64):
    with pytest.raises(clphys.InvalidArgumentError):
        clphys.poisson_solve_box(ctx, np.zeros((3, 1, 4)), (1.0, 1.0, 1.0))  # ny < 2
    with pytest.raises(clphys.InputError) as e:
        clphys.poisson_solve_box(ctx, np.full((2, 2, 2), np.nan), (1.0, 1.0, 1.0))
    assert "rhs" in str(e.value) or "cell" in str(e.value)
    with pytest.raises(clphys.InvalidArgumentError):
        clphys.poisson_solve_box(ctx, np.zeros((2, 2, 2)), (1.0, 1.0, 1.0), precision="fp16")
