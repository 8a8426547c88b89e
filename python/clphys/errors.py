"""Exceptions: one class per clphys_status (clphys.h), all under clphys.Error.

The message of an exception raised after a failed C call is
clphys_last_error() of the context the call ran on (or of the calling thread
for calls without a context: file readers, device listing): the OpenCL call
and code, the build log, the file and line, the particle or cell named.
"""
from typing import Dict, Optional, Type

from ._ffi import cstr, ffi, lib


class Error(Exception):
    """A clphys call failed.  status: the clphys_status value (int, None for
    errors of the Python layer such as a closed plan); status_name: e.g.
    "CLPHYS_ERR_INPUT"; message: clphys_last_error's text."""

    status: Optional[int] = None
    status_name = ""

    def __init__(self, message, result=None):
        super().__init__(message)
        self.message = message
        #: what the call filled before failing (e.g. the info dict of a solve
        #: that did not converge), else None
        self.result = result


class InvalidArgumentError(Error, ValueError):
    """CLPHYS_ERR_INVALID_ARGUMENT, and arrays of a wrong shape."""


class DeviceNotFoundError(Error, LookupError):
    """CLPHYS_ERR_DEVICE_NOT_FOUND: no device matches; the message lists them."""


class OpenCLError(Error):
    """CLPHYS_ERR_OPENCL: an OpenCL call failed; the message names it and its code."""


class BuildError(Error):
    """CLPHYS_ERR_BUILD: a kernel did not compile; the message holds the log."""


class OutOfMemoryError(Error, MemoryError):
    """CLPHYS_ERR_OUT_OF_MEMORY: a host or device allocation failed."""


class UnsupportedError(Error):
    """CLPHYS_ERR_UNSUPPORTED: the device lacks a capability (fp64, int64 atomics...)."""


class FileIOError(Error, OSError):
    """CLPHYS_ERR_IO: a file could not be opened, read or written."""


class FormatError(Error):
    """CLPHYS_ERR_FORMAT: a malformed input file; the message names file and line."""


class InputError(Error, ValueError):
    """CLPHYS_ERR_INPUT: physically invalid input (NaN, overlapping atoms, ...)."""


class NotConvergedError(Error):
    """CLPHYS_ERR_NOT_CONVERGED: the iteration cap was reached; .result holds
    the info of the solve (iterations, residual reached)."""


class CapacityError(Error, OverflowError):
    """CLPHYS_ERR_OVERFLOW: a capacity was exceeded and could not be grown."""


class VerifyError(Error):
    """CLPHYS_ERR_VERIFY: a result disagreed with its reference."""


class ClosedError(Error, ValueError):
    """A plan or context used after close() (or after its context was closed)."""


_BY_STATUS: Dict[int, Type[Error]] = {}
for _name, _cls in [("CLPHYS_ERR_INVALID_ARGUMENT", InvalidArgumentError),
                    ("CLPHYS_ERR_DEVICE_NOT_FOUND", DeviceNotFoundError),
                    ("CLPHYS_ERR_OPENCL", OpenCLError),
                    ("CLPHYS_ERR_BUILD", BuildError),
                    ("CLPHYS_ERR_OUT_OF_MEMORY", OutOfMemoryError),
                    ("CLPHYS_ERR_UNSUPPORTED", UnsupportedError),
                    ("CLPHYS_ERR_IO", FileIOError),
                    ("CLPHYS_ERR_FORMAT", FormatError),
                    ("CLPHYS_ERR_INPUT", InputError),
                    ("CLPHYS_ERR_NOT_CONVERGED", NotConvergedError),
                    ("CLPHYS_ERR_OVERFLOW", CapacityError),
                    ("CLPHYS_ERR_VERIFY", VerifyError)]:
    _cls.status = int(getattr(lib, _name))
    _cls.status_name = _name
    _BY_STATUS[_cls.status] = _cls


def error_class(status):
    """The exception class of a clphys_status value (Error for an unknown one)."""
    return _BY_STATUS.get(int(status), Error)


def check(status, ctx_ptr=None, result=None):
    """Raise the exception of a failed status with clphys_last_error(ctx_ptr)."""
    if status == lib.CLPHYS_SUCCESS:
        return
    cls = error_class(status)
    detail = cstr(lib.clphys_last_error(ctx_ptr if ctx_ptr is not None else ffi.NULL)).strip()
    head = cstr(lib.clphys_status_string(status))
    raise cls(f"{head}: {detail}" if detail else head, result)
