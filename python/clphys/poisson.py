"""The ocean Poisson/Helmholtz solver: CG preconditioned by a multigrid
V-cycle with vertical line relaxation (clphys_poisson.h).

Sources: Matsumura & Hasumi, Ocean Modelling 20 (2008) (kinaco's scalable
multigrid Poisson solver); Yamagishi & Matsumura, Procedia Comput. Sci. 80,
1658 (2016) (its GPU port).  Grid: nx x ny x nz cells, i east, j north, k
down (k = 0 the surface layer); NumPy arrays over cells are shaped
(nz, ny, nx) (C order, so the C index c = i + nx (j + ny k)).  Assembled
operator: the finite-volume form of div(grad p) - lambda p = f with
homogeneous Neumann (no flux) at coasts, the sea floor, the rigid lid and
the domain edges (unless periodic in x); lengths in metres.  A pure Neumann
problem is solved for the zero-mean (volume-weighted) solution after the
volume-weighted mean of f is removed.
"""
import numpy as np

from ._ffi import ffi, lib, new_params
from .arrays import as_f64, ptr, vec3
from .context import Plan
from .errors import InvalidArgumentError, check

_PREC = {"mixed": "CLPHYS_POISSON_MIXED", "fp64": "CLPHYS_POISSON_FP64", "fp32": "CLPHYS_POISSON_FP32"}


def _params(precision, tol, max_iter):
    if precision not in _PREC:
        raise InvalidArgumentError(f"precision {precision!r}: expected one of {sorted(_PREC)}")
    p = new_params("clphys_poisson_params")
    p.precision = getattr(lib, _PREC[precision])
    p.tol = float(tol)
    p.max_iter = int(max_iter)
    return p


def _result(r):
    return {"iterations": r.iterations, "restarts": r.restarts, "residual": r.rel_residual,
            "singular_regions": r.singular_regions, "removed_mean": r.removed_mean, "seconds": r.seconds,
            "transfer_s": r.transfer_s, "vcycle_s": r.vcycle_s, "stencil_s": r.stencil_s,
            "other_s": r.other_s, "vcycles": r.vcycles}


def _spacings(c):
    """Cell widths from cell-centre coordinates (faces half way between)."""
    c = np.asarray(c, dtype=np.float64)
    faces = np.concatenate(([c[0] - (c[1] - c[0]) / 2], (c[1:] + c[:-1]) / 2, [c[-1] + (c[-1] - c[-2]) / 2]))
    return np.diff(faces)


class PoissonPlan(Plan):
    """A Poisson plan (clphys_poisson_plan): made by PoissonPlan.box,
    .from_geometry, .from_bathymetry or .from_coefficients; solve(rhs) ->
    (p, info) as often as needed.  Options of every constructor:
    precision "mixed" (fp64 CG, fp32 V-cycle), "fp64" or "fp32"; tol, the
    target true fp64 |b - A x| / |b|; max_iter, CG iterations in all."""

    def _create(self, ctx, geometry=None, op=None, precision="mixed", tol=1e-10, max_iter=1000):
        p = _params(precision, tol, max_iter)
        pp = ffi.new("clphys_poisson_plan **")
        with ctx._lock:
            if geometry is not None:
                ctx.check(lib.clphys_poisson_plan_create(ctx.ptr, geometry, p, pp))
            else:
                ctx.check(lib.clphys_poisson_plan_create_operator(ctx.ptr, op, p, pp))
            self._own(pp[0], lib.clphys_poisson_plan_destroy)
            info = ffi.new("clphys_poisson_info *")
            lib.clphys_poisson_plan_info(pp[0], info)
        self.shape = (info.nz, info.ny, info.nx)
        self.levels, self.wet = int(info.levels), int(info.wet)
        self.singular_regions = int(info.singular_regions)

    @classmethod
    def from_geometry(cls, ctx, depth, dz, dx=None, dy=None, lonlat=None, helmholtz=0.0, periodic_x=False,
                      **options):
        """Assemble A from a bathymetry in memory: depth (ny, nx) sea-floor
        depths (m, positive down; <= 0 land), dz (nz,) layer thicknesses (m,
        dz[0] at the surface), and either dx (nx,), dy (ny,) spacings (m) or
        lonlat = (lon0, lon1, lat0, lat1) edges in degrees (spherical, radius
        6371 km).  helmholtz: lambda >= 0 (1/m^2).  Raises InputError (a
        spacing not > 0, no wet cell), InvalidArgumentError."""
        self = cls(ctx)
        d = as_f64("depth", depth, (None, None))
        ny, nx = d.shape
        z = as_f64("dz", dz, (None,))
        keep = [d, z]
        g = ffi.new("clphys_poisson_geometry *")
        g.nx, g.ny, g.nz = nx, ny, z.shape[0]
        g.depth, g.dz = ptr(d), ptr(z)
        if lonlat is not None:
            if dx is not None or dy is not None:
                raise InvalidArgumentError("give dx and dy or lonlat, not both")
            g.lonlat = 1
            g.lon0, g.lon1, g.lat0, g.lat1 = (float(v) for v in lonlat)
        else:
            if dx is None or dy is None:
                raise InvalidArgumentError("dx (nx,) and dy (ny,) are required without lonlat")
            ax, ay = as_f64("dx", dx, (nx,)), as_f64("dy", dy, (ny,))
            keep += [ax, ay]
            g.dx, g.dy = ptr(ax), ptr(ay)
        g.helmholtz = float(helmholtz)
        g.periodic_x = 1 if periodic_x else 0
        self._create(ctx, geometry=g, **options)
        return self

    @classmethod
    def box(cls, ctx, shape, extent, **options):
        """A flat box of shape (nz, ny, nx) cells (nx, ny >= 2), extent
        (Lx, Ly, Lz) in metres, uniform spacing, every cell wet."""
        nz, ny, nx = (int(v) for v in shape)
        lx, ly, lz = vec3("extent", extent)
        return cls.from_geometry(ctx, np.full((ny, nx), lz), np.full(nz, lz / nz), dx=np.full(nx, lx / nx),
                                 dy=np.full(ny, ly / ny), **options)

    @classmethod
    def from_bathymetry(cls, ctx, path, var, nz=32, stretch=1.0, helmholtz=0.0, periodic_x=False, **options):
        """Assemble A from a NetCDF bathymetry (`clphys poisson --bathymetry`):
        variable `var` (y, x) of depths (m, positive down; missing values
        land) with coordinate variables x, y (m) or lon, lat (degrees,
        uniformly spaced), over nz layers to the deepest column, each
        `stretch` times the one above.  Raises FileIOError, FormatError,
        InputError (naming the file, variable and index)."""
        b = ffi.new("clphys_poisson_bathymetry *")
        check(lib.clphys_poisson_read_bathymetry(str(path).encode(), str(var).encode(), b))
        try:
            nx, ny = int(b.nx), int(b.ny)
            depth = np.frombuffer(ffi.buffer(b.depth, 8 * nx * ny), dtype=np.float64).reshape(ny, nx).copy()
            xc = np.frombuffer(ffi.buffer(b.x, 8 * nx), dtype=np.float64).copy()
            yc = np.frombuffer(ffi.buffer(b.y, 8 * ny), dtype=np.float64).copy()
            lonlat = bool(b.lonlat)
        finally:
            lib.clphys_poisson_bathymetry_destroy(b)
        lz = float(depth.max())
        if not lz > 0:
            raise InvalidArgumentError(f"{path}: variable '{var}' has no depth > 0 (no sea)")
        dz = np.empty(int(nz))
        check(lib.clphys_poisson_levels(int(nz), lz, float(stretch), ptr(dz)))
        kw = dict(helmholtz=helmholtz, periodic_x=periodic_x, **options)
        if lonlat:
            hx, hy = (xc[-1] - xc[0]) / (nx - 1), (yc[-1] - yc[0]) / (ny - 1)
            plan = cls.from_geometry(ctx, depth, dz, lonlat=(xc[0] - hx / 2, xc[-1] + hx / 2, yc[0] - hy / 2,
                                                             yc[-1] + hy / 2), **kw)
        else:
            plan = cls.from_geometry(ctx, depth, dz, dx=_spacings(xc), dy=_spacings(yc), **kw)
        plan.x, plan.y = xc, yc
        return plan

    @classmethod
    def from_coefficients(cls, ctx, a, **options):
        """A caller's operator: a (7, nz, ny, nx) float64, a[d + 3] the
        coupling to neighbour d = -3..3 (-3 up (k-1), -2 south (j-1), -1 west
        (i-1), 0 the cell, +1 east, +2 north, +3 down), i and j wrapping
        around; symmetric, off-diagonals <= 0, a[3] >= the sum of their
        magnitudes; a cell with all 7 zero is land.  solve() then takes b
        itself (no -V f).  Raises InputError naming the cell."""
        self = cls(ctx)
        arr = as_f64("a", a, (7, None, None, None))
        op = ffi.new("clphys_poisson_operator *")
        op.nz, op.ny, op.nx = arr.shape[1:]
        op.a = ptr(arr)
        op.a_mem = ffi.NULL
        self._create(ctx, op=op, **options)
        return self

    def solve(self, rhs):
        """Solve: rhs (nz, ny, nx) float64 (f of div(grad p) - lambda p = f
        for an assembled plan, b for a caller's operator; ignored on land).
        Returns (p (nz, ny, nx), info) with info a dict: iterations,
        restarts, residual (true fp64 |b - A x| / |b|), singular_regions,
        removed_mean, seconds, transfer_s, vcycle_s, stencil_s, other_s,
        vcycles.  Raises InputError (a non-finite rhs in a wet cell),
        NotConvergedError (its .result is the info)."""
        f = as_f64("rhs", rhs, self.shape)
        x = np.empty(self.shape)
        r = ffi.new("clphys_poisson_result *")
        with self.ctx._lock:
            st = lib.clphys_poisson_solve(self.ptr, ptr(f), ptr(x), r)
            self.ctx.check(st, _result(r))
        return x, _result(r)

    def solve_device(self, rhs, x=None):
        """Solve on device buffers (clphys_poisson_solve_mem, no transfer):
        rhs (what solve() takes: f, or b for a caller's operator) and x
        DeviceArray or PyOpenCL arrays (nz, ny, nx) float64 of this plan's context (x None:
        made).  Returns (x, info) as solve(); x stays on the device.
        A non-finite rhs is not checked here: it shows as NotConvergedError."""
        from .device import DeviceArray, as_device_array
        rhs = as_device_array(self.ctx, rhs, "rhs")
        x = None if x is None else as_device_array(self.ctx, x, "x")
        pr = rhs._check(self.ctx, self.shape, np.float64, "rhs")
        if x is None:
            x = DeviceArray(self.ctx, self.shape, np.float64)
        px = x._check(self.ctx, self.shape, np.float64, "x")
        r = ffi.new("clphys_poisson_result *")
        with self.ctx._lock:
            st = lib.clphys_poisson_solve_mem(self.ptr, pr, px, r)
            self.ctx.check(st, _result(r))
        return x, _result(r)

    def operator(self):
        """The plan's fine operator (7, nz, ny, nx) (land all 0), its mask
        (nz, ny, nx) bool and the projection weights w (nz, ny, nx): cell
        volumes of an assembled operator, 1 of a caller's, 0 on land."""
        a = np.empty((7,) + self.shape)
        m = np.empty(self.shape, dtype=np.uint8)
        w = np.empty(self.shape)
        with self.ctx._lock:
            self.ctx.check(lib.clphys_poisson_plan_operator(self.ptr, ptr(a), ffi.from_buffer("unsigned char[]", m),
                                                            ptr(w)))
        return a, m.astype(bool), w


def poisson_solve_box(ctx, rhs, extent, tol=1e-10, precision="mixed"):
    """Solve div(grad p) = rhs in a flat box with homogeneous Neumann
    conditions on every face.

    rhs (nz, ny, nx) float64 (z index 0 at the surface; nx, ny >= 2),
    extent (Lx, Ly, Lz) in metres.  The mean of rhs is removed (the problem
    is singular) and the zero-mean p of the same shape is returned with
    info, a dict (iterations, residual, ... as PoissonPlan.solve)."""
    f = as_f64("rhs", rhs, (None, None, None))
    with PoissonPlan.box(ctx, f.shape, extent, tol=tol, precision=precision) as plan:
        return plan.solve(f)


def write_netcdf(path, p, x, y, z, mask=None, lonlat=False, units=None, title="clphys poisson"):
    """Write a solution p (nz, ny, nx) with cell-centre coordinates x (nx,),
    y (ny,) (m, or degrees with lonlat) and z (nz,) (depth, m) as CF-1.8
    NetCDF (atomically).  mask (nz, ny, nx) bool, None: all wet."""
    arr = as_f64("p", p, (None, None, None))
    nz, ny, nx = arr.shape
    xs, ys, zs = as_f64("x", x, (nx,)), as_f64("y", y, (ny,)), as_f64("z", z, (nz,))
    m = np.ones(arr.shape, dtype=np.uint8) if mask is None else np.ascontiguousarray(mask, dtype=np.uint8)
    if m.shape != arr.shape:
        raise InvalidArgumentError(f"mask: shape {m.shape}, expected {arr.shape}")
    check(lib.clphys_poisson_write_netcdf(str(path).encode(), nx, ny, nz, ptr(xs), ptr(ys), ptr(zs),
                                          1 if lonlat else 0, ptr(arr), ffi.from_buffer("unsigned char[]", m),
                                          ffi.NULL if units is None else units.encode(), title.encode()))
