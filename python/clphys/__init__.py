"""clphys: portable OpenCL kernels for particle and lattice simulation.

Python bindings over the public C API (libclphys.so, clphys.h) through a
cffi extension; arrays are NumPy arrays (see clphys.arrays for how they are
taken), the GIL is released while the C calls run, every failed call raises
a subclass of clphys.Error carrying clphys_last_error's message.

    import clphys
    with clphys.Context("auto") as ctx:
        acc = clphys.gravity_accelerations(ctx, positions, masses, eps=1e-3)
"""
from ._ffi import cstr as _cstr, lib as _lib
from .context import Context, DeviceInfo, Plan, devices
from .device import DeviceArray
from .errors import (BuildError, CapacityError, ClosedError, DeviceNotFoundError, Error, FileIOError,
                     FormatError, InputError, InvalidArgumentError, NotConvergedError, OpenCLError,
                     OutOfMemoryError, UnsupportedError, VerifyError, error_class)
from .nbody import (GravityPlan, energies, gravity_accelerations, gravity_potentials, nbody_run, plummer, read_nbabel,
                      write_nbabel)
from .lqcd import GaugeField, WilsonSolver, convert_gauge, plaquette
from .md import THERMO_KEYS, LJPlan, MDPlan, MDSystem, NeighborList, lj_forces
from .poisson import PoissonPlan, poisson_solve_box, write_netcdf

__version__ = _cstr(_lib.clphys_version())

__all__ = [
    "Context", "DeviceInfo", "Plan", "devices", "DeviceArray",
    "Error", "InvalidArgumentError", "DeviceNotFoundError", "OpenCLError", "BuildError", "OutOfMemoryError",
    "UnsupportedError", "FileIOError", "FormatError", "InputError", "NotConvergedError", "CapacityError",
    "VerifyError", "ClosedError", "error_class",
    "GravityPlan", "gravity_accelerations", "gravity_potentials", "plummer", "energies", "nbody_run",
    "read_nbabel", "write_nbabel",
    "NeighborList", "LJPlan", "lj_forces", "MDSystem", "MDPlan", "THERMO_KEYS",
    "GaugeField", "WilsonSolver", "plaquette", "convert_gauge",
    "PoissonPlan", "poisson_solve_box", "write_netcdf",
]
