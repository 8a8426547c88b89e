"""Results that stay on the device: DeviceArray buffers through the plans'
cl_mem entry points give what the host-array calls give."""
import numpy as np
import pytest

import clphys


def test_device_array_round_trip(ctx):
    a = np.arange(24, dtype=np.float32).reshape(6, 4)
    with clphys.DeviceArray.from_numpy(ctx, a) as d:
        assert d.shape == (6, 4) and d.dtype == np.float32 and d.cl_mem != 0
        assert np.array_equal(d.to_numpy(), a)
        d.write(a[::-1])
        assert np.array_equal(d.to_numpy(), a[::-1])
        with pytest.raises(clphys.InvalidArgumentError):
            d.write(a[:3])
    with pytest.raises(clphys.ClosedError):
        d.to_numpy()


@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_gravity_on_device(ctx, rng, precision):
    if precision == "fp64" and not ctx.device.fp64:
        pytest.skip("no fp64")
    real = np.float64 if precision == "fp64" else np.float32
    x = rng.uniform(-1, 1, (500, 3)).astype(real).astype(np.float64)
    m = rng.uniform(0.1, 1, 500).astype(real).astype(np.float64)
    with clphys.GravityPlan(ctx, eps=0.02, precision=precision) as plan:
        acc, pot = plan.compute(x, m)
        xj = clphys.DeviceArray.from_numpy(ctx, np.column_stack([x, m]), real)
        out = plan.compute_device(xj)
        res = out.to_numpy()
        with pytest.raises(clphys.InvalidArgumentError):  # the other real type: refused
            plan.compute_device(clphys.DeviceArray(ctx, (500, 4), np.float32 if real is np.float64 else np.float64))
    tol = 1e-13 if precision == "fp64" else 1e-6
    scale = np.abs(acc).max()
    assert np.abs(res[:, :3] - acc).max() <= tol * scale
    assert np.abs(res[:, 3] - pot).max() <= tol * np.abs(pot).max()


def test_poisson_on_device(ctx, fp64, rng):
    f = rng.normal(size=(3, 4, 6))
    with clphys.PoissonPlan.box(ctx, f.shape, (6e3, 4e3, 30.0), tol=1e-10, precision="fp64") as plan:
        p, info = plan.solve(f)
        x, dinfo = plan.solve_device(clphys.DeviceArray.from_numpy(ctx, f))
        pd = x.to_numpy()
    assert dinfo["residual"] <= 1e-10
    assert np.abs(pd - p).max() <= 1e-8 * np.abs(p).max()


def test_device_array_freed_with_context():
    with clphys.Context("") as c:
        d = clphys.DeviceArray(c, (16,))
    with pytest.raises(clphys.ClosedError):
        d.to_numpy()


def test_md_on_device_buffers(ctx, fp64):
    sys = clphys.MDSystem.fcc(0.8442, 4, 1.44, seed=4)  # 256 atoms
    n = sys.n
    m = sys.type_mass[sys.types]
    x = clphys.DeviceArray.from_numpy(ctx, np.column_stack([sys.positions, np.zeros(n)]))
    v = clphys.DeviceArray.from_numpy(ctx, np.column_stack([sys.velocities, m]))
    f = clphys.DeviceArray(ctx, (n, 4))
    img = clphys.DeviceArray.from_numpy(ctx, np.zeros((n, 4), dtype=np.int32))
    with clphys.MDPlan(ctx, sys, rcut=2.5, skin=0.3) as host, \
            clphys.MDPlan.on_device(ctx, x, v, f, sys.lo, sys.hi, image=img, rcut=2.5, skin=0.3) as dev:
        rh, rd = host.run(40, thermo_every=20), dev.run(40, thermo_every=20)
        for key in clphys.THERMO_KEYS:
            assert np.allclose(rh[key], rd[key], rtol=1e-12, atol=1e-12)
        now = host.system()
        xd = x.to_numpy()
        assert np.abs(xd[:, :3] - now.positions).max() <= 1e-10
        assert np.array_equal(img.to_numpy()[:, :3], now.images)
        fd = f.to_numpy()
        assert abs(fd[:, 3].sum() / n - rd["pe"][-1]) <= 1e-12 * abs(rd["pe"][-1])
        with pytest.raises(clphys.InvalidArgumentError):
            dev.system()
        # the application changes the state on the device: refresh, then run on
        vv = v.to_numpy()
        vv[:, :3] *= 0.5
        v.write(vv)
        dev.refresh()
        assert dev.thermo()["ke"] == pytest.approx(rd["ke"][-1] * 0.25, rel=1e-12)


def test_pyopencl_arrays_without_copy(ctx, fp64, rng):
    cl = pytest.importorskip("pyopencl")
    cla = pytest.importorskip("pyopencl.array")
    q = ctx.pyopencl_queue()
    x = rng.uniform(-1, 1, (300, 3))
    m = rng.uniform(0.1, 1, 300)
    with clphys.GravityPlan(ctx, eps=0.02, precision="fp64") as plan:
        acc, pot = plan.compute(x, m)
        xj = cla.to_device(q, np.column_stack([x, m]))
        out = plan.compute_device(xj)  # a PyOpenCL array in
        res = out.to_pyopencl()        # and out, on the same buffer
        assert res.base_data.int_ptr == out.cl_mem
        got = res.get()
        out.write(np.zeros((300, 4)))  # the same memory: seen through both
        assert not res.get().any()
    assert np.abs(got[:, :3] - acc).max() <= 1e-13 * np.abs(acc).max()
    with clphys.Context("") as other:  # an array of another OpenCL context: refused
        with pytest.raises(clphys.InvalidArgumentError):
            clphys.DeviceArray.from_pyopencl(other, xj)
    assert isinstance(cl.Buffer.from_int_ptr(out.cl_mem, retain=True), cl.Buffer)
