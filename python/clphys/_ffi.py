"""The compiled cffi module (python/cdef.h over clphys.h): ffi and lib.

Every call through lib releases the GIL for its duration (cffi does so for
every C call), so device work runs while other Python threads do.
"""
from ._clphys_cffi import ffi, lib  # type: ignore[import-not-found]  # noqa: F401


def cstr(p):
    """A C string (const char *) as str; "" for NULL."""
    return "" if p == ffi.NULL else ffi.string(p).decode("utf-8", "replace")
