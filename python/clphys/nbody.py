"""Direct-sum gravity and the N-body driver (clphys_nbody.h).

Physics (Miki, Takahashi & Mori, Procedia Comput. Sci. 9, 96 (2012), eq. 1;
Nyland, Harris & Prins, GPU Gems 3, ch. 31):
    a_i   =  sum_j G m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2)
    phi_i = -sum_{j != i} G m_j / sqrt(|x_j - x_i|^2 + eps^2)
Plummer softening eps; any consistent units (N-body units: G = M = 1).
"""
import numpy as np

from ._ffi import cstr, ffi, lib, new_params
from .arrays import as_f64, ptr
from .context import Plan, precision_of
from .errors import InvalidArgumentError, check

_VARIANTS = {"auto": "CLPHYS_NBODY_GRAVITY_AUTO", "tiled": "CLPHYS_NBODY_GRAVITY_TILED", "vector": "CLPHYS_NBODY_GRAVITY_VECTOR"}


def _xm(positions, masses, name="positions"):
    pos = as_f64(name, positions, (None, 3))
    m = as_f64("masses", masses, (pos.shape[0],))
    x = np.empty((pos.shape[0], 4))
    x[:, :3] = pos
    x[:, 3] = m
    return x


def _real(precision):
    return np.float64 if precision == "fp64" else np.float32


class GravityPlan(Plan):
    """A gravity plan (clphys_nbody_gravity_plan): GravityPlan(ctx, eps=0.0,
    precision="fp64", G=1.0, potential=True, variant="auto").

    eps >= 0: Plummer softening length; precision "fp32" or "fp64" of the
    kernel (host arrays are float64 either way); variant "auto", "tiled" (GPU
    shaped) or "vector" (CPU shaped).  Raises InvalidArgumentError (eps < 0,
    ...), UnsupportedError (fp64 on a device without it), BuildError."""

    def __init__(self, ctx, eps=0.0, precision="fp64", G=1.0, potential=True, variant="auto"):
        super().__init__(ctx)
        if variant not in _VARIANTS:
            raise InvalidArgumentError(f"variant {variant!r}: expected one of {sorted(_VARIANTS)}")
        p = new_params("clphys_nbody_gravity_params")
        p.precision = precision_of(precision)
        p.variant = getattr(lib, _VARIANTS[variant])
        p.G = float(G)
        p.eps = float(eps)
        p.potential = 1 if potential else 0
        self.eps, self.G, self.precision, self.potential = float(eps), float(G), precision, bool(potential)
        pp = ffi.new("clphys_nbody_gravity_plan **")
        with ctx._lock:
            st = lib.clphys_nbody_gravity_plan_create(ctx.ptr, p, pp)
            ctx.check(st)
            self._own(pp[0], lib.clphys_nbody_gravity_plan_destroy)

    @property
    def variant(self):
        """The kernel variant in use, e.g. "vector-16" (clphys_nbody_gravity_plan_variant)."""
        with self.ctx._lock:
            return cstr(lib.clphys_nbody_gravity_plan_variant(self.ptr))

    def compute(self, positions, masses, targets=None):
        """Accelerations and potentials.

        positions (N, 3) and masses (N,) float64 (length units, mass units;
        masses >= 0): the j-set, the sources.  targets (M, 3) or None: the
        points where the field is wanted; None means the particles themselves
        (self term removed).  Returns (acc (M, 3), phi (M,)); phi is None for
        a plan made with potential=False.  Raises InputError (NaN/inf, a
        negative mass, two particles at one point with eps = 0; the message
        names them)."""
        xj = _xm(positions, masses)
        xi = None
        if targets is not None:
            t = as_f64("targets", targets, (None, 3))
            xi = np.zeros((t.shape[0], 4))
            xi[:, :3] = t
        ni = xj.shape[0] if xi is None else xi.shape[0]
        acc = np.empty((ni, 3))
        pot = np.empty(ni) if self.potential else None
        with self.ctx._lock:
            st = lib.clphys_nbody_gravity_compute(self.ptr, ni, ffi.NULL if xi is None else ptr(xi), xj.shape[0],
                                            ptr(xj), ptr(acc), ffi.NULL if pot is None else ptr(pot), 0,
                                            1 if self.eps == 0 else 0, ffi.NULL)
            self.ctx.check(st)
        return acc, pot

    def compute_device(self, xj, out=None, xi=None):
        """Accelerations on device buffers, nothing copied to the host
        (clphys_nbody_gravity_compute_cl).  Each buffer a DeviceArray or a PyOpenCL
        array of this context.  xj: (N, 4) of the plan's real
        type (float64 for "fp64", float32 for "fp32") holding (x, y, z, m) per
        particle; xi: the same (M, 4) for other target points, or None (the
        particles themselves, self term removed); out: DeviceArray (M, 4) of
        that type, or None (made).  Returns out = (ax, ay, az, phi) per target
        (phi only with potential=True).  The kernels are queued; out.to_numpy()
        waits for them.  No input checking on the device path (as in C)."""
        from .device import DeviceArray, as_device_array
        xj = as_device_array(self.ctx, xj, "xj")
        xi = None if xi is None else as_device_array(self.ctx, xi, "xi")
        out = None if out is None else as_device_array(self.ctx, out, "out")
        real = _real(self.precision)
        nj = xj.shape[0] if len(xj.shape) == 2 else -1
        pj = xj._check(self.ctx, (nj, 4), real, "xj")
        ni = nj if xi is None else (xi.shape[0] if len(xi.shape) == 2 else -1)
        pi = pj if xi is None else xi._check(self.ctx, (ni, 4), real, "xi")
        if out is None:
            out = DeviceArray(self.ctx, (ni, 4), real)
        po = out._check(self.ctx, (ni, 4), real, "out")
        with self.ctx._lock:
            self.ctx.check(lib.clphys_nbody_gravity_compute_cl(self.ptr, pi, ni, pj, nj, 1 if xi is None else 0, po, 0,
                                                         ffi.NULL))
        return out


def gravity_accelerations(ctx, positions, masses, eps, precision="fp64"):
    """Accelerations (N, 3) float64 of N particles on each other, G = 1.

    positions (N, 3), masses (N,) float64; eps: Plummer softening length
    (>= 0; with eps = 0 coincident particles are an InputError).  The self
    term is excluded.  One plan made and closed per call; for repeated calls
    keep a GravityPlan."""
    with GravityPlan(ctx, eps=eps, precision=precision, potential=False) as plan:
        return plan.compute(positions, masses)[0]


def gravity_potentials(ctx, positions, masses, eps, precision="fp64"):
    """Potentials phi (N,) float64 (G = 1, self term excluded); see gravity_accelerations."""
    with GravityPlan(ctx, eps=eps, precision=precision, potential=True) as plan:
        return plan.compute(positions, masses)[1]


def plummer(n, seed=1):
    """A Plummer sphere (Aarseth, Henon & Wielen, A&A 37, 183 (1974)) of n
    equal masses in N-body units (G = M = 1, E = -1/4), centre-of-mass
    frame, deterministic for a seed: (positions (n, 3), velocities (n, 3),
    masses (n,))."""
    s = ffi.new("clphys_nbody_system *")
    check(lib.clphys_nbody_plummer(ffi.NULL, int(n), int(seed), s))
    return _system_arrays(s)


def _system_arrays(s):
    try:
        x = np.frombuffer(ffi.buffer(s.x, 32 * s.n), dtype=np.float64).reshape(-1, 4).copy()
        v = np.frombuffer(ffi.buffer(s.v, 24 * s.n), dtype=np.float64).reshape(-1, 3).copy()
    finally:
        lib.clphys_nbody_system_destroy(s)
    return x[:, :3].copy(), v, x[:, 3].copy()


def read_nbabel(path):
    """Read an NBabel file (nbabel.org: `id m x y z vx vy vz` per line):
    (positions (n, 3), velocities (n, 3), masses (n,)).  Raises FileIOError,
    FormatError (the message names file and line), InputError (NaN/inf, a
    negative mass)."""
    s = ffi.new("clphys_nbody_system *")
    check(lib.clphys_nbody_read(ffi.NULL, str(path).encode(), s))
    return _system_arrays(s)


def write_nbabel(path, positions, velocities, masses):
    """Write an NBabel file (%.17g: read back bit for bit), atomically."""
    pos = as_f64("positions", positions, (None, 3))
    n = pos.shape[0]
    vel = as_f64("velocities", velocities, (n, 3))
    m = as_f64("masses", masses, (n,))
    x = np.empty((n, 4))
    x[:, :3], x[:, 3] = pos, m
    s = ffi.new("clphys_nbody_system *")
    s.n, s.x, s.v = n, ptr(x), ptr(vel)
    check(lib.clphys_nbody_write(ffi.NULL, str(path).encode(), s))


def energies(positions, velocities, masses, phi):
    """Energies of a system from its potentials phi (G included):
    dict kinetic K = sum m v^2 / 2, potential W = sum m phi / 2, total,
    virial_ratio K / |W|, momentum |sum m v| (clphys_nbody_energy_of)."""
    pos = as_f64("positions", positions, (None, 3))
    n = pos.shape[0]
    vel = as_f64("velocities", velocities, (n, 3))
    m = as_f64("masses", masses, (n,))
    ph = as_f64("phi", phi, (n,))
    x = np.empty((n, 4))
    x[:, :3], x[:, 3] = pos, m
    s = ffi.new("clphys_nbody_system *")
    s.n, s.x, s.v = n, ptr(x), ptr(vel)
    e = ffi.new("clphys_nbody_energy *")
    check(lib.clphys_nbody_energy_of(ffi.NULL, s, ptr(ph), e))
    return {"kinetic": e.kinetic, "potential": e.potential, "total": e.total,
            "virial_ratio": e.virial_ratio, "momentum": e.momentum}


def nbody_run(ctx, positions, velocities, masses, dt, steps, eps=0.0, precision="fp64", every=1):
    """The N-body driver of `clphys nbody`: kick-drift-kick leapfrog (G = 1)
    with one GravityPlan for all steps.

    Returns (positions (N, 3), velocities (N, 3), energies) where energies
    is a dict of arrays over the sampled steps (every `every` steps, step 0
    and the last included): step, kinetic, potential, total."""
    if steps < 0 or not dt > 0 or every < 1:
        raise InvalidArgumentError("steps >= 0, dt > 0 and every >= 1 are required")
    x = as_f64("positions", positions, (None, 3)).copy()
    n = x.shape[0]
    v = as_f64("velocities", velocities, (n, 3)).copy()
    m = as_f64("masses", masses, (n,))
    rows = {"step": [], "kinetic": [], "potential": [], "total": []}
    with GravityPlan(ctx, eps=eps, precision=precision, potential=True) as plan:
        a, phi = plan.compute(x, m)

        def sample(k):
            e = energies(x, v, m, phi)
            rows["step"].append(k)
            for key in ("kinetic", "potential", "total"):
                rows[key].append(e[key])

        sample(0)
        for k in range(1, steps + 1):
            v += 0.5 * dt * a
            x += dt * v
            a, phi = plan.compute(x, m)
            v += 0.5 * dt * a
            if k % every == 0 or k == steps:
                sample(k)
    return x, v, {k: np.asarray(val) for k, val in rows.items()}
