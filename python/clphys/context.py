"""Devices, contexts and the lifetime rules of plans.

A Context owns one clphys_context (one device, its OpenCL context and
in-order queue).  Every plan made on it keeps a strong reference to it, so a
context stays alive while any of its plans does.  Closing a context (close(),
leaving its `with` block) first destroys the C plans made on it, newest
first, as clphys.h requires; a plan used afterwards raises
clphys.ClosedError, never touches freed memory.  Calls on one context are
serialised by a lock (the C context is not made for concurrent use); the GIL
is released while the C call runs.
"""
import threading
from dataclasses import dataclass

from ._ffi import cstr, ffi, lib
from .errors import ClosedError, check


@dataclass(frozen=True)
class DeviceInfo:
    """What clphys knows of a device (clphys_device_info).  spec "P:D" names
    it for Context(device=...)."""
    name: str
    vendor: str
    platform: str
    driver_version: str
    device_version: str
    opencl_c_version: str
    platform_index: int
    device_index: int
    is_gpu: bool
    is_cpu: bool
    compute_units: int
    clock_mhz: int
    global_mem_bytes: int
    local_mem_bytes: int
    max_alloc_bytes: int
    max_work_group_size: int
    fp64: bool
    int64_atomics: bool

    @property
    def spec(self):
        return f"{self.platform_index}:{self.device_index}"


def _device_info(d):
    return DeviceInfo(cstr(d.name), cstr(d.vendor), cstr(d.platform), cstr(d.driver_version),
                      cstr(d.device_version), cstr(d.opencl_c_version), int(d.platform_index),
                      int(d.device_index), bool(d.is_gpu), bool(d.is_cpu), int(d.compute_units),
                      int(d.clock_mhz), int(d.global_mem_bytes), int(d.local_mem_bytes),
                      int(d.max_alloc_bytes), int(d.max_work_group_size), bool(d.fp64),
                      bool(d.int64_atomics))


def devices():
    """Every OpenCL device of every platform, in platform then device order
    (the order and "P:D" specs of `clphys devices`): a list of DeviceInfo.
    Raises DeviceNotFoundError when no platform or device is installed."""
    lst = ffi.new("clphys_device_info **")
    cnt = ffi.new("int *")
    check(lib.clphys_devices_list(lst, cnt))
    try:
        return [_device_info(lst[0][k]) for k in range(cnt[0])]
    finally:
        lib.clphys_devices_destroy(lst[0])


class _Handle:
    """A C object and its destroy function; destroyed once.  Holds no
    reference to the Python plan or context, so a context can destroy it
    from close() whatever order the garbage collector finalises things in."""
    __slots__ = ("ptr", "destroy")

    def __init__(self, ptr, destroy):
        self.ptr = ptr
        self.destroy = destroy

    def close(self):
        p, self.ptr = self.ptr, None
        if p is not None and p != ffi.NULL:
            self.destroy(p)


class Context:
    """A device: Context(device="auto").

    device: "auto" (first GPU, else first CPU), "gpu", "cpu", "nvidia",
    "amd", "intel", "pocl", or "P:D" (indices of clphys.devices()); "" means
    $CLPHYS_DEVICE, else "auto" (clphys_context_create).  Usable in `with`;
    close() destroys the plans made on it first.  Raises DeviceNotFoundError
    (the message lists the devices found) or OpenCLError."""

    def __init__(self, device="auto"):
        self._ptr = None
        self._handles = {}
        self._lock = threading.RLock()
        pp = ffi.new("clphys_context **")
        check(lib.clphys_context_create(str(device).encode(), pp))
        self._ptr = pp[0]
        self.device = _device_info(lib.clphys_context_device(self._ptr))

    @property
    def device_name(self):
        """The device's name (CL_DEVICE_NAME)."""
        return self.device.name

    @property
    def notes(self):
        """Conditions that cost something but are not errors (clphys_context_notes)."""
        with self._lock:
            return cstr(lib.clphys_context_notes(self.ptr))

    @property
    def closed(self):
        return self._ptr is None

    @property
    def ptr(self):
        """The clphys_context * (raises ClosedError after close())."""
        if self._ptr is None:
            raise ClosedError("the context is closed")
        return self._ptr

    def pyopencl_queue(self):
        """This context's OpenCL context and in-order queue as a
        pyopencl.CommandQueue (PyOpenCL required; no copy, clphys keeps
        owning them: the wrappers hold their own references)."""
        if getattr(self, "_pyopencl_queue", None) is None:
            import pyopencl
            c = pyopencl.Context.from_int_ptr(int(ffi.cast("uintptr_t", lib.clphys_context_cl_context(self.ptr))),
                                              retain=True)
            q = pyopencl.CommandQueue.from_int_ptr(int(ffi.cast("uintptr_t", lib.clphys_context_queue(self.ptr))),
                                                   retain=True)
            assert q.context == c
            self._pyopencl_queue = q
        return self._pyopencl_queue

    def check(self, status, result=None):
        """Raise for a failed status with this context's clphys_last_error."""
        check(status, self._ptr if self._ptr is not None else ffi.NULL, result)

    def _register(self, ptr, destroy):
        h = _Handle(ptr, destroy)
        self._handles[id(h)] = h
        return h

    def _release(self, h):
        with self._lock:
            h.close()
            self._handles.pop(id(h), None)

    def close(self):
        """Destroy the plans made on this context (newest first), then the
        context.  Safe to call twice."""
        with self._lock:
            for h in reversed(list(self._handles.values())):
                h.close()
            self._handles.clear()
            self._pyopencl_queue = None
            if self._ptr is not None:
                lib.clphys_context_destroy(self._ptr)
                self._ptr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        state = "closed" if self._ptr is None else self.device.name
        return f"<clphys.Context {state}>"


class Plan:
    """Base of the plan objects: C plans with the C plan's lifetime
    (created, executed many times, closed or garbage-collected).  Keeps its
    Context alive; usable in `with`.  A plan made of several C plans (a
    solver over two operators) destroys them newest first."""

    def __init__(self, ctx):
        if not isinstance(ctx, Context):
            raise TypeError("ctx must be a clphys.Context")
        self.ctx = ctx
        self._hs = []

    def _own(self, ptr, destroy):
        h = self.ctx._register(ptr, destroy)
        self._hs.append(h)
        return h

    def _ptr(self, h):
        if h is None or h.ptr is None or any(x.ptr is None for x in self._hs):
            raise ClosedError(f"{type(self).__name__} is closed (or its context was closed)")
        return h.ptr

    @property
    def ptr(self):
        """The (first) C plan; raises ClosedError once closed."""
        return self._ptr(self._hs[0] if self._hs else None)

    @property
    def closed(self):
        return not self._hs or any(h.ptr is None for h in self._hs)

    def close(self):
        """Destroy the C plan(s) now (also done when the object is collected)."""
        for h in reversed(getattr(self, "_hs", [])):
            self.ctx._release(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def precision_of(precision):
    """CLPHYS_FP32 or CLPHYS_FP64 from "fp32" / "fp64"."""
    if precision == "fp64":
        return lib.CLPHYS_FP64
    if precision == "fp32":
        return lib.CLPHYS_FP32
    from .errors import InvalidArgumentError
    raise InvalidArgumentError(f"precision {precision!r}: expected 'fp32' or 'fp64'")
