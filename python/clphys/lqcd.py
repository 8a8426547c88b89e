"""Lattice QCD: SU(3) gauge fields and files, Wilson solves (clphys_lqcd.h).

Conventions (H. Matsufuru's KEK 2008 notes; Chroma/QDP++ DeGrand-Rossi
basis): lattice Lx x Ly x Lz x Lt, every extent even and >= 2.  NumPy
layouts (the C host layouts viewed as complex128):
    links  U[t, z, y, x, mu, a, b]   shape (Lt, Lz, Ly, Lx, 4, 3, 3)
    spinor psi[t, z, y, x, s, c]     shape (Lt, Lz, Ly, Lx, 4, 3)
with mu = 0..3 for x, y, z, t.  Wilson-Dirac operator D = 1 - kappa H,
H psi(x) = sum_mu [(1 - gamma_mu) U_mu(x) psi(x+mu)
                   + (1 + gamma_mu) U_mu(x-mu)^+ psi(x-mu)],
fermion boundary per direction "p" (periodic) or "a" (antiperiodic).
Gauge files: NERSC, ILDG, MILC (read), NERSC and ILDG (written).
"""
import numpy as np

from ._ffi import cstr, ffi, lib, new_params
from .arrays import as_c128, ptr
from .context import Plan
from .errors import InvalidArgumentError, check

_FORMATS = {"auto": lib.CLPHYS_LQCD_GAUGE_FILE_AUTO, "nersc": lib.CLPHYS_LQCD_GAUGE_FILE_NERSC,
            "ildg": lib.CLPHYS_LQCD_GAUGE_FILE_ILDG, "milc": lib.CLPHYS_LQCD_GAUGE_FILE_MILC}
_BC = {"p": lib.CLPHYS_LQCD_BC_PERIODIC, "a": lib.CLPHYS_LQCD_BC_ANTIPERIODIC}


def _format(name):
    if name not in _FORMATS:
        raise InvalidArgumentError(f"format {name!r}: expected one of {sorted(_FORMATS)}")
    return _FORMATS[name]


class GaugeField:
    """An SU(3) gauge field in host memory (clphys_lqcd_gauge_field).

    Made by GaugeField.read(path), GaugeField.cold(dims) or
    GaugeField.hot(dims, seed); dims = (Lx, Ly, Lz, Lt).  links: a copy as
    complex128 (Lt, Lz, Ly, Lx, 4, 3, 3).  file_info: what read() verified
    (dict), else None."""

    def __init__(self, _g, file_info=None):
        self._g = _g
        self.file_info = file_info

    @classmethod
    def cold(cls, dims):
        """All links 1 (plaquette 1).  Raises InvalidArgumentError (an
        extent odd or < 2)."""
        g = ffi.new("clphys_lqcd_gauge_field *")
        check(lib.clphys_lqcd_gauge_create([int(d) for d in dims], g))
        return cls(g)

    @classmethod
    def hot(cls, dims, seed):
        """Independent random SU(3) links from a seed."""
        f = cls.cold(dims)
        lib.clphys_lqcd_gauge_hot(f._g, int(seed))
        return f

    @classmethod
    def read(cls, path, verify=True, format="auto"):
        """Read a NERSC, ILDG or MILC file (format "auto": from its first
        bytes).  verify=False reads a file that carries no checksum (the
        command's --no-checksum); a checksum, plaquette or link trace that is
        present and wrong is an error either way.  Raises FileIOError,
        FormatError (naming the file and the failed check), InputError."""
        p = new_params("clphys_lqcd_gauge_read_params")
        p.format = _format(format)
        p.allow_unverified = 0 if verify else 1
        g = ffi.new("clphys_lqcd_gauge_field *")
        info = ffi.new("clphys_lqcd_gauge_file_info *")
        check(lib.clphys_lqcd_gauge_read(str(path).encode(), p, g, info))
        fi = {"format": cstr(lib.clphys_lqcd_gauge_file_format_name(info.format)),
              "precision": "fp64" if info.precision == lib.CLPHYS_FP64 else "fp32", "rows": info.rows,
              "checksum_verified": bool(info.checksum_verified),
              "plaquette_verified": bool(info.plaquette_verified),
              "link_trace_verified": bool(info.link_trace_verified), "unitarity": info.unitarity,
              "unverified": cstr(info.unverified)}
        return cls(g, fi)

    @property
    def dims(self):
        """(Lx, Ly, Lz, Lt)."""
        return tuple(int(d) for d in self._g.dims)

    @property
    def links(self):
        """A copy of the links, complex128 (Lt, Lz, Ly, Lx, 4, 3, 3)."""
        lx, ly, lz, lt = self.dims
        n = int(self._g.volume) * 4 * 9
        a = np.frombuffer(ffi.buffer(self._g.u, 16 * n), dtype=np.complex128)
        return a.reshape(lt, lz, ly, lx, 4, 3, 3).copy()

    @links.setter
    def links(self, u):
        lx, ly, lz, lt = self.dims
        arr = as_c128("links", u, (lt, lz, ly, lx, 4, 3, 3))
        ffi.memmove(self._g.u, ffi.from_buffer(arr), arr.nbytes)

    def plaquette(self):
        """Average plaquette (1/3) Re tr U_mu U_nu U_mu^+ U_nu^+ over sites
        and the 6 planes; 1 on a cold field."""
        return float(lib.clphys_lqcd_gauge_plaquette(self._g))

    def link_trace(self):
        """Average link trace (1/3) Re tr U_mu(x)."""
        return float(lib.clphys_lqcd_gauge_link_trace(self._g))

    def unitarity_violation(self):
        """Largest |U U^+ - 1| entry and |det U - 1| over all links."""
        return float(lib.clphys_lqcd_gauge_unitarity_violation(self._g))

    def write(self, path, format="nersc", precision="fp64", rows=3):
        """Write as NERSC (rows 2 or 3) or ILDG (rows 3) in precision "fp32"
        or "fp64", with checksum, plaquette and link trace; never a half
        written file.  Raises InvalidArgumentError, FileIOError."""
        if format not in ("nersc", "ildg"):
            raise InvalidArgumentError(f"format {format!r}: clphys writes 'nersc' or 'ildg'")
        prec = {"fp32": lib.CLPHYS_FP32, "fp64": lib.CLPHYS_FP64}.get(precision)
        if prec is None:
            raise InvalidArgumentError(f"precision {precision!r}: expected 'fp32' or 'fp64'")
        check(lib.clphys_lqcd_gauge_write(str(path).encode(), self._g, _FORMATS[format], prec, int(rows)))

    def close(self):
        if getattr(self, "_g", None) is not None:
            lib.clphys_lqcd_gauge_destroy(self._g)
            self._g = None

    def __del__(self):
        self.close()


def plaquette(path, verify=True):
    """The average plaquette of a gauge file in any format clphys reads
    (NERSC, ILDG, MILC); verify=False is the command's --no-checksum."""
    g = GaugeField.read(path, verify=verify)
    try:
        return g.plaquette()
    finally:
        g.close()


def convert_gauge(src, dst, to="nersc", precision=None, rows=3, verify=True):
    """Read src (any format) and write dst (`clphys lqcd convert`): to
    "nersc" or "ildg", precision "fp32", "fp64" or None (the file's own).
    fp32 links written as fp64 keep their fp32 unitarity error (~1e-7),
    which the reader's fp64 check (1e-10) refuses."""
    g = GaugeField.read(src, verify=verify)
    try:
        g.write(dst, format=to, precision=precision or g.file_info["precision"], rows=rows)
    finally:
        g.close()


def _dslash_params(precision, kappa, bc):
    p = new_params("clphys_lqcd_dslash_params")
    p.precision = precision
    p.reconstruct = 18 if precision == lib.CLPHYS_FP64 else 12
    p.kappa = float(kappa)
    if len(bc) != 4 or any(b not in _BC for b in bc):
        raise InvalidArgumentError(f"bc {bc!r}: four of 'p' (periodic) or 'a' (antiperiodic)")
    p.bc = [_BC[b] for b in bc]
    p.no_tune = 1
    return p


class WilsonSolver(Plan):
    """Solves D x = b for the Wilson-Dirac operator on a gauge field
    (clphys_lqcd_solver_plan over clphys_lqcd_dslash_plans): WilsonSolver(ctx, gauge,
    kappa, precision="mixed", tol=1e-10, solver="cgnr", bc="pppa",
    max_iter=10000).

    precision "fp64" or "mixed" (fp32 inner solves in fp64 defect
    correction, Matsufuru 2008); the residual |b - D x| / |b| is fp64 in
    both.  The field is copied to the device at creation."""

    def __init__(self, ctx, gauge, kappa, precision="mixed", tol=1e-10, solver="cgnr", bc="pppa",
                 max_iter=10000):
        super().__init__(ctx)
        if precision not in ("fp64", "mixed"):
            raise InvalidArgumentError(f"precision {precision!r}: expected 'fp64' or 'mixed'")
        kinds = {"cgnr": lib.CLPHYS_LQCD_SOLVER_CGNR, "bicgstab": lib.CLPHYS_LQCD_SOLVER_BICGSTAB}
        if solver not in kinds:
            raise InvalidArgumentError(f"solver {solver!r}: expected 'cgnr' or 'bicgstab'")
        self.dims = gauge.dims
        self.kappa = float(kappa)
        pp = ffi.new("clphys_lqcd_dslash_plan **")
        with ctx._lock:
            ctx.check(lib.clphys_lqcd_dslash_plan_create(ctx.ptr, gauge._g, _dslash_params(lib.CLPHYS_FP64, kappa, bc),
                                                    pp))
            self._h64 = self._own(pp[0], lib.clphys_lqcd_dslash_plan_destroy)
            p32 = ffi.NULL
            if precision == "mixed":
                ctx.check(lib.clphys_lqcd_dslash_plan_create(ctx.ptr, gauge._g,
                                                        _dslash_params(lib.CLPHYS_FP32, kappa, bc), pp))
                p32 = self._own(pp[0], lib.clphys_lqcd_dslash_plan_destroy).ptr
            sp = new_params("clphys_lqcd_solver_params")
            sp.kind = kinds[solver]
            sp.tol = float(tol)
            sp.max_iter = int(max_iter)
            sp.mixed = 1 if precision == "mixed" else 0
            sv = ffi.new("clphys_lqcd_solver_plan **")
            ctx.check(lib.clphys_lqcd_solver_plan_create(self._h64.ptr, p32, sp, sv))
            self._hs_solver = self._own(sv[0], lib.clphys_lqcd_solver_plan_destroy)

    def _shape(self):
        lx, ly, lz, lt = self.dims
        return (lt, lz, ly, lx, 4, 3)

    def apply(self, psi):
        """D psi on the device (fp64): complex128 (Lt, Lz, Ly, Lx, 4, 3)."""
        src = as_c128("psi", psi, self._shape())
        out = np.empty_like(src)
        with self.ctx._lock:
            self.ctx.check(lib.clphys_lqcd_dslash_apply_host(self._ptr(self._h64), lib.CLPHYS_LQCD_DSLASH_WILSON,
                                                        ptr(out), ptr(src)))
        return out

    def solve(self, b):
        """x with D x = b: b complex128 (Lt, Lz, Ly, Lx, 4, 3).  Returns (x,
        info), info a dict: iterations, restarts, residual (true fp64
        |b - D x| / |b|), seconds, gflops.  Raises NotConvergedError (its
        .result holds info) when max_iter is reached."""
        src = as_c128("b", b, self._shape())
        x = np.empty_like(src)
        r = ffi.new("clphys_lqcd_solver_result *")
        with self.ctx._lock:
            st = lib.clphys_lqcd_solver_solve(self._ptr(self._hs_solver), ptr(src), ptr(x), r)
            info = {"iterations": r.iterations, "restarts": r.restarts, "residual": r.rel_residual,
                    "seconds": r.seconds, "iterate_s": r.iterate_s, "gflops": r.gflops}
            self.ctx.check(st, info)
        return x, info

    def pion_correlator(self, source=(0, 0, 0, 0)):
        """The pion correlator C(t) = sum_x |S(x, t)|^2 of a point source at
        (x, y, z, t) = source: 12 solves (one per source spin and colour), as
        `clphys lqcd solve --source point`.  Returns (C (Lt,) float64, info
        of the last solve); t counted from the source's time slice."""
        shape = self._shape()
        corr = np.zeros(shape[0])
        sx, sy, sz, st = (int(v) for v in source)
        info = None
        for s in range(4):
            for c in range(3):
                b = np.zeros(shape, dtype=np.complex128)
                b[st, sz, sy, sx, s, c] = 1.0
                x, info = self.solve(b)
                corr += np.sum(np.abs(x) ** 2, axis=(1, 2, 3, 4, 5))
        return np.roll(corr, -st), info
