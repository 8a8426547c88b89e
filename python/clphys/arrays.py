"""How NumPy arguments are taken.

Every array argument is converted, never refused for its memory layout or
for a real dtype: a C-contiguous float64 array is passed to C as it is (no
copy); any other real array (float32, integers, a non-contiguous view, a
list) is copied into a contiguous float64 array first.  Refused: complex,
boolean, object and string dtypes (TypeError) and a shape other than the
documented one (clphys.InvalidArgumentError, a ValueError).  Results are
new float64 arrays owned by the caller.
"""
import numpy as np

from ._ffi import ffi
from .errors import InvalidArgumentError


def as_f64(name, a, shape):
    """a as a C-contiguous float64 array of `shape` (None: any extent)."""
    arr = np.asarray(a)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name}: dtype {arr.dtype} is not real (float64 expected)")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, arr.shape)):
        want = "(" + ", ".join("n" if s is None else str(s) for s in shape) + ")"
        raise InvalidArgumentError(f"{name}: shape {arr.shape}, expected {want}")
    return arr


def as_c128(name, a, shape):
    """a as a C-contiguous complex128 array of `shape` (None: any extent)."""
    arr = np.asarray(a)
    if arr.dtype.kind not in "fiuc":
        raise TypeError(f"{name}: dtype {arr.dtype} is not numeric (complex128 expected)")
    arr = np.ascontiguousarray(arr, dtype=np.complex128)
    if arr.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, arr.shape)):
        want = "(" + ", ".join("n" if s is None else str(s) for s in shape) + ")"
        raise InvalidArgumentError(f"{name}: shape {arr.shape}, expected {want}")
    return arr


def ptr(arr, ctype="double[]"):
    """A C pointer into arr's buffer (arr must stay referenced during the call)."""
    return ffi.from_buffer(ctype, arr)


def vec3(name, v):
    """Three floats from a sequence of 3 (box edges, extents); values are checked by C."""
    arr = as_f64(name, v, (3,))
    return [float(x) for x in arr]
