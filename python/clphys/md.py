"""Neighbour lists, Lennard-Jones forces and velocity-Verlet MD (clphys_md.h).

Geometry: a periodic orthorhombic box [0, Lx) x [0, Ly) x [0, Lz) (corner at
the origin; MD systems: [lo, hi)), positions outside are wrapped; each edge
at least 2 (r_cut + skin) (minimum image).  Lennard-Jones (LAMMPS lj/cut):
U(r) = 4 eps [(sigma/r)^12 - (sigma/r)^6] (- U(r_cut) when shifted) for
r < r_cut.  Cell list: Watanabe, Suzuki & Ito, Prog. Theor. Phys. 126, 203
(2011); Verlet list: Verlet, Phys. Rev. 159, 98 (1967).  MD: LAMMPS `units
lj`, velocity Verlet NVE.
"""
from dataclasses import dataclass

import numpy as np

from ._ffi import cstr, ffi, lib, new_params
from .arrays import as_f64, ptr, vec3
from .context import Plan, precision_of
from .errors import InvalidArgumentError, check


def _variant(name):
    v = ffi.new("clphys_md_lj_variant *")
    check(lib.clphys_md_lj_variant_from_name(str(name).encode(), v))
    return v[0]


class NeighborList(Plan):
    """A Verlet list (clphys_md_neighbor_plan): NeighborList(ctx, n, box,
    r_search, half=False, precision="fp64").

    n particles in the box (3,) edge lengths; pairs within r_search.  Full
    list: every i lists every j; half: each pair once.  build(positions)
    then pairs()."""

    def __init__(self, ctx, n, box, r_search, half=False, precision="fp64"):
        super().__init__(ctx)
        p = new_params("clphys_md_neighbor_params")
        p.n = int(n)
        p.box = vec3("box", box)
        p.r_search = float(r_search)
        p.kind = lib.CLPHYS_MD_NEIGHBOR_HALF if half else lib.CLPHYS_MD_NEIGHBOR_FULL
        p.layout = lib.CLPHYS_MD_NEIGHBOR_CSR
        p.precision = precision_of(precision)
        self.n = int(n)
        pp = ffi.new("clphys_md_neighbor_plan **")
        with ctx._lock:
            ctx.check(lib.clphys_md_neighbor_plan_create(ctx.ptr, p, pp))
            self._own(pp[0], lib.clphys_md_neighbor_plan_destroy)

    def build(self, positions):
        """Build the list of positions (n, 3) float64 (wrapped into the box).
        Raises InputError (a non-finite coordinate), CapacityError."""
        pos = as_f64("positions", positions, (self.n, 3))
        with self.ctx._lock:
            self.ctx.check(lib.clphys_md_neighbor_build(self.ptr, ptr(pos)))

    def pairs(self):
        """The list in CSR form in the caller's order: (offsets (n + 1,)
        int64, neighbours (pairs,) int32); i's neighbours are
        neighbours[offsets[i]:offsets[i + 1]]."""
        npairs = ffi.new("size_t *")
        with self.ctx._lock:
            self.ctx.check(lib.clphys_md_neighbor_stats(self.ptr, npairs, ffi.NULL, ffi.NULL))
            off = np.empty(self.n + 1, dtype=np.uint64)
            lst = np.empty(max(int(npairs[0]), 1), dtype=np.int32)
            self.ctx.check(lib.clphys_md_neighbor_get(self.ptr, ffi.from_buffer("size_t[]", off),
                                                   ffi.from_buffer("int[]", lst)))
        return off.astype(np.int64), lst[:int(npairs[0])]


class LJPlan(Plan):
    """Lennard-Jones forces (clphys_md_lj_plan): LJPlan(ctx, n, box, rcut,
    skin=0.3, precision="fp64", epsilon=1.0, sigma=1.0, shifted=False,
    variant="auto").

    compute(positions) -> (forces (n, 3), potential_energy, virial): forces
    in energy / length units on each particle, the energy the total over
    pairs, virial W = sum over pairs r_ij . F_ij.  variant: "auto",
    "full-csr", "full-transposed", "full-group", "half-cas",
    "half-fixedpoint", "cpu", "full-staged"."""

    def __init__(self, ctx, n, box, rcut, skin=0.3, precision="fp64", epsilon=1.0, sigma=1.0,
                 shifted=False, variant="auto"):
        super().__init__(ctx)
        p = new_params("clphys_md_lj_params")
        p.n = int(n)
        p.box = vec3("box", box)
        p.epsilon, p.sigma = float(epsilon), float(sigma)
        p.r_cut, p.skin = float(rcut), float(skin)
        p.shifted = 1 if shifted else 0
        p.precision = precision_of(precision)
        p.variant = _variant(variant)
        self.n = int(n)
        pp = ffi.new("clphys_md_lj_plan **")
        with ctx._lock:
            ctx.check(lib.clphys_md_lj_plan_create(ctx.ptr, p, pp))
            self._own(pp[0], lib.clphys_md_lj_plan_destroy)

    @property
    def choice(self):
        """The variant and options in use and where they came from."""
        with self.ctx._lock:
            return cstr(lib.clphys_md_lj_plan_choice(self.ptr))

    def compute(self, positions):
        """Forces, energy and virial of positions (n, 3) float64; the list
        is rebuilt every call.  Raises InputError (a non-finite coordinate,
        overlapping atoms)."""
        pos = as_f64("positions", positions, (self.n, 3))
        f = np.empty((self.n, 3))
        r = ffi.new("clphys_md_lj_result *")
        with self.ctx._lock:
            self.ctx.check(lib.clphys_md_lj_compute(self.ptr, ptr(pos), ptr(f), r))
        return f, r.potential_energy, r.virial


def lj_forces(ctx, positions, box, rcut, precision="fp64"):
    """Lennard-Jones forces and energy, epsilon = sigma = 1, unshifted.

    positions (N, 3) float64 in the periodic box [0, box[0]) x [0, box[1])
    x [0, box[2]) (outside: wrapped), box (3,) edge lengths, each >= 2 rcut.
    Returns (forces (N, 3), potential_energy), the energy the total over
    pairs.  One plan per call; keep an LJPlan for repeated calls."""
    pos = as_f64("positions", positions, (None, 3))
    with LJPlan(ctx, pos.shape[0], box, rcut, skin=0.0, precision=precision) as plan:
        f, pe, _ = plan.compute(pos)
    return f, pe


@dataclass
class MDSystem:
    """An MD system in host memory (clphys_md_system): positions (n, 3)
    inside [lo, hi), velocities (n, 3), types (n,) 1-based, type_mass
    (ntypes + 1,) (entry 0 unused), ids (n,), images (n, 3), lo, hi (3,)."""
    positions: np.ndarray
    velocities: np.ndarray
    types: np.ndarray
    type_mass: np.ndarray
    ids: np.ndarray
    images: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    @property
    def n(self):
        return self.positions.shape[0]

    @classmethod
    def _from_c(cls, s):
        n = int(s.n)
        try:
            def arr(p, dtype, count):
                return np.frombuffer(ffi.buffer(p, count * np.dtype(dtype).itemsize), dtype=dtype).copy()
            return cls(arr(s.x, np.float64, 3 * n).reshape(n, 3), arr(s.v, np.float64, 3 * n).reshape(n, 3),
                       arr(s.type, np.intc, n), arr(s.type_mass, np.float64, s.ntypes + 1),
                       arr(s.id, np.int64, n), arr(s.image, np.intc, 3 * n).reshape(n, 3),
                       np.array(list(s.lo)), np.array(list(s.hi)))
        finally:
            lib.clphys_md_system_destroy(s)

    @classmethod
    def read_lammps_data(cls, path):
        """Read a LAMMPS data file (atom_style atomic).  Raises FileIOError,
        FormatError (the message names file and line), InputError."""
        s = ffi.new("clphys_md_system *")
        check(lib.clphys_md_read_lammps_data(str(path).encode(), s))
        return cls._from_c(s)

    @classmethod
    def fcc(cls, rho, cells, temp, seed=1):
        """fcc lattice at number density rho (LAMMPS `lattice fcc rho`),
        cells^3 unit cells (4 cells^3 atoms), mass 1, velocities at temp."""
        s = ffi.new("clphys_md_system *")
        check(lib.clphys_md_fcc(float(rho), int(cells), float(temp), int(seed), s))
        return cls._from_c(s)

    def _to_c(self, keep):
        n = self.n
        x = as_f64("positions", self.positions, (n, 3))
        v = as_f64("velocities", self.velocities, (n, 3))
        tm = as_f64("type_mass", self.type_mass, (None,))
        ty = np.ascontiguousarray(self.types, dtype=np.intc)
        ids = np.ascontiguousarray(self.ids, dtype=np.int64)
        im = np.ascontiguousarray(self.images, dtype=np.intc)
        if ty.shape != (n,) or ids.shape != (n,) or im.shape != (n, 3):
            raise InvalidArgumentError("types (n,), ids (n,) and images (n, 3) expected")
        keep += [x, v, tm, ty, ids, im]
        s = ffi.new("clphys_md_system *")
        s.n, s.ntypes = n, tm.shape[0] - 1
        s.lo, s.hi = vec3("lo", self.lo), vec3("hi", self.hi)
        s.x, s.v, s.type_mass = ptr(x), ptr(v), ptr(tm)
        s.type, s.id, s.image = ffi.from_buffer("int[]", ty), ffi.from_buffer("long long[]", ids), \
            ffi.from_buffer("int[]", im)
        return s


THERMO_KEYS = ("step", "temp", "pe", "ke", "etotal", "press")


class MDPlan(Plan):
    """Velocity-Verlet NVE MD of a Lennard-Jones system on the device
    (clphys_md_plan): MDPlan(ctx, system, dt=0.005, rcut=2.5, skin=0.3,
    precision="fp64", neigh_every=1, neigh_delay=0, neigh_check=True,
    variant="auto", epsilon=1.0, sigma=1.0, shifted=False).  LAMMPS `units
    lj` (k_B = 1); the system is copied."""

    def __init__(self, ctx, system, dt=0.005, rcut=2.5, skin=0.3, precision="fp64", neigh_every=1,
                 neigh_delay=0, neigh_check=True, variant="auto", epsilon=1.0, sigma=1.0, shifted=False):
        super().__init__(ctx)
        p = self._params(dt, rcut, skin, precision, neigh_every, neigh_delay, neigh_check, variant, epsilon, sigma,
                         shifted)
        keep = []
        s = system._to_c(keep)
        self.n = system.n
        self._template = system
        self.buffers = None
        pp = ffi.new("clphys_md_plan **")
        with ctx._lock:
            ctx.check(lib.clphys_md_plan_create(ctx.ptr, p, s, pp))
            self._own(pp[0], lib.clphys_md_plan_destroy)

    @classmethod
    def on_device(cls, ctx, x, v, f, lo, hi, image=None, dt=0.005, rcut=2.5, skin=0.3, precision="fp64",
                  neigh_every=1, neigh_delay=0, neigh_check=True, variant="auto", epsilon=1.0, sigma=1.0,
                  shifted=False):
        """A plan bound to the application's device buffers
        (clphys_md_plan_create_cl): the state stays on the device across
        steps.  x, v, f: DeviceArray (n, 4) of the plan's real type (float64
        for "fp64", float32 for "fp32"): x = (x, y, z, w) positions (read
        within one box length of [lo, hi)), v = (vx, vy, vz, mass), f written
        (fx, fy, fz, u: the atom's share of the potential energy); image
        DeviceArray (n, 4) int32 image flags or None.  The plan writes x, v,
        f and image after every run(); after changing them call refresh().
        The buffers are kept referenced by the plan."""
        self = cls.__new__(cls)
        Plan.__init__(self, ctx)
        p = self._params(dt, rcut, skin, precision, neigh_every, neigh_delay, neigh_check, variant, epsilon, sigma,
                         shifted)
        real = np.float64 if precision == "fp64" else np.float32
        n = x.shape[0] if len(x.shape) == 2 else -1
        b = ffi.new("clphys_md_buffers *")
        b.n = n
        b.lo, b.hi = vec3("lo", lo), vec3("hi", hi)
        b.x = x._check(ctx, (n, 4), real, "x")
        b.v = v._check(ctx, (n, 4), real, "v")
        b.f = f._check(ctx, (n, 4), real, "f")
        b.image = ffi.NULL if image is None else image._check(ctx, (n, 4), np.int32, "image")
        self.n = n
        self._template = None
        self.buffers = (x, v, f, image)
        pp = ffi.new("clphys_md_plan **")
        with ctx._lock:
            ctx.check(lib.clphys_md_plan_create_cl(ctx.ptr, p, b, pp))
            self._own(pp[0], lib.clphys_md_plan_destroy)
        return self

    def refresh(self):
        """Bound plans (on_device): re-read x, v and image after the
        application changed them, rebuild the list, write the forces."""
        with self.ctx._lock:
            self.ctx.check(lib.clphys_md_refresh(self.ptr))

    @staticmethod
    def _params(dt, rcut, skin, precision, neigh_every, neigh_delay, neigh_check, variant, epsilon, sigma,
                shifted):
        p = new_params("clphys_md_params")
        p.lj.struct_size = ffi.sizeof("clphys_md_lj_params")
        p.lj.epsilon, p.lj.sigma = float(epsilon), float(sigma)
        p.lj.r_cut, p.lj.skin = float(rcut), float(skin)
        p.lj.shifted = 1 if shifted else 0
        p.lj.precision = precision_of(precision)
        p.lj.variant = _variant(variant)
        p.dt = float(dt)
        p.neigh_every, p.neigh_delay, p.neigh_check = int(neigh_every), int(neigh_delay), 1 if neigh_check else 0
        return p

    def thermo(self):
        """LAMMPS `thermo_style custom step temp pe ke etotal press` (norm
        yes: energies per atom) of the current state, as a dict."""
        t = ffi.new("clphys_md_thermo *")
        with self.ctx._lock:
            self.ctx.check(lib.clphys_md_thermo_now(self.ptr, t))
        return {"step": int(t.step), "temp": t.temp, "pe": t.pe, "ke": t.ke, "etotal": t.etotal,
                "press": t.press}

    def run(self, steps, thermo_every=0):
        """Advance `steps` time steps; returns the thermo rows as a dict of
        arrays (keys THERMO_KEYS, step int64, the rest float64): the state
        before the run, every thermo_every steps and the last (thermo_every
        0: before and after only)."""
        steps = int(steps)
        if steps < 0 or thermo_every < 0:
            raise InvalidArgumentError("steps and thermo_every must be >= 0")
        rows = [self.thermo()]
        every = thermo_every if thermo_every > 0 else max(steps, 1)
        done = 0
        while done < steps:
            k = min(every, steps - done)
            with self.ctx._lock:
                self.ctx.check(lib.clphys_md_run(self.ptr, k, ffi.NULL))
            done += k
            rows.append(self.thermo())
        out = {key: np.array([r[key] for r in rows]) for key in THERMO_KEYS}
        out["step"] = out["step"].astype(np.int64)
        return out

    @property
    def rebuilds(self):
        """Neighbour-list builds so far."""
        with self.ctx._lock:
            return int(lib.clphys_md_rebuilds(self.ptr))

    def system(self):
        """The current state as a new MDSystem (positions, velocities,
        images) of a plan made from a host system."""
        if self._template is None:
            raise InvalidArgumentError("a plan on device buffers: read them (DeviceArray.to_numpy)")
        keep = []
        t = self._template
        cur = MDSystem(np.empty((self.n, 3)), np.empty((self.n, 3)), t.types.copy(), t.type_mass.copy(),
                       t.ids.copy(), np.empty((self.n, 3), dtype=np.intc), np.array(t.lo), np.array(t.hi))
        s = cur._to_c(keep)
        with self.ctx._lock:
            self.ctx.check(lib.clphys_md_download(self.ptr, s))
        cur.positions, cur.velocities, cur.images = keep[0], keep[1], keep[5]
        return cur
