"""The compiled cffi module (python/cdef.h over clphys.h): ffi and lib.

Every call through lib releases the GIL for its duration (cffi does so for
every C call), so device work runs while other Python threads do.
"""
from ._clphys_cffi import ffi, lib  # type: ignore[import-not-found]  # noqa: F401


def cstr(p):
    """A C string (const char *) as str; "" for NULL."""
    return "" if p == ffi.NULL else ffi.string(p).decode("utf-8", "replace")


def new_params(type_name):
    """A zeroed parameter struct (the defaults) with struct_size set, as
    CLPHYS_PARAMS_INIT does in C (clphys_core.h)."""
    p = ffi.new(type_name + " *")
    p.struct_size = ffi.sizeof(type_name)
    return p
