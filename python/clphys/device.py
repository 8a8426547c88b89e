"""Arrays that stay on the device: DeviceArray, one OpenCL buffer (cl_mem)
of a context, with a NumPy shape and dtype.

Plans take and fill them without a host round trip
(GravityPlan.compute_device: clphys_nbody_gravity_compute_cl;
PoissonPlan.solve_device: clphys_poisson_solve_mem); to_numpy() reads one
back.  The buffer is made on the context's OpenCL context and every
transfer goes through its in-order queue, so a read sees every result
enqueued before it.  Like a plan, a DeviceArray keeps its context alive and
is released by close(), by the garbage collector or by closing the context.

PyOpenCL (optional): DeviceArray.to_pyopencl() gives a pyopencl.array.Array
on the same buffer (no copy), on clphys's OpenCL context and queue
(Context.pyopencl_queue()); DeviceArray.from_pyopencl(ctx, array) wraps a
PyOpenCL array of that context without a copy, and the plans' device entry
points take PyOpenCL arrays directly.
"""
import numpy as np

from ._ffi import ffi, lib
from .context import Plan
from .errors import InvalidArgumentError, OpenCLError, OutOfMemoryError


def _cl_check(err, what):
    if err != lib.CL_SUCCESS:
        raise OpenCLError(f"{what} failed: OpenCL error {int(err)}")


class DeviceArray(Plan):
    """DeviceArray(ctx, shape, dtype=float64): an uninitialised device
    buffer of that many elements (clCreateBuffer on ctx's OpenCL context).
    DeviceArray.from_numpy(ctx, array, dtype=None) uploads a copy."""

    def __init__(self, ctx, shape, dtype=np.float64):
        super().__init__(ctx)
        self.shape = tuple(int(s) for s in np.atleast_1d(np.asarray(shape, dtype=np.int64)))
        self.dtype = np.dtype(dtype)
        if self.dtype.kind not in "fiuc" or any(s < 0 for s in self.shape):
            raise InvalidArgumentError(f"DeviceArray: shape {self.shape} and dtype {self.dtype}")
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        err = ffi.new("cl_int *")
        with ctx._lock:
            mem = lib.clCreateBuffer(lib.clphys_context_cl_context(ctx.ptr), lib.CL_MEM_READ_WRITE,
                                     max(self.nbytes, 1), ffi.NULL, err)
            if mem == ffi.NULL or err[0] != lib.CL_SUCCESS:
                raise OutOfMemoryError(f"clCreateBuffer of {self.nbytes} bytes failed: OpenCL error {int(err[0])}")
            self._own(mem, lib.clReleaseMemObject)

    @classmethod
    def from_numpy(cls, ctx, array, dtype=None):
        """A device copy of array (converted to dtype when given)."""
        a = np.ascontiguousarray(array, dtype=dtype)
        d = cls(ctx, a.shape, a.dtype)
        d.write(a)
        return d

    @classmethod
    def from_pyopencl(cls, ctx, array):
        """Wrap a pyopencl.array.Array made on ctx's OpenCL context (e.g.
        with ctx.pyopencl_queue()), C-contiguous and at offset 0, without a
        copy; the buffer is retained until this object is closed."""
        if not array.flags.c_contiguous or array.offset != 0:
            raise InvalidArgumentError("from_pyopencl: a C-contiguous array at offset 0 is required")
        mem = ffi.cast("cl_mem", array.base_data.int_ptr)
        own = int(ffi.cast("uintptr_t", lib.clphys_context_cl_context(ctx.ptr)))
        if array.context.int_ptr != own:
            raise InvalidArgumentError("from_pyopencl: the array belongs to another OpenCL context")
        self = cls.__new__(cls)
        Plan.__init__(self, ctx)
        self.shape, self.dtype = tuple(array.shape), np.dtype(array.dtype)
        self.nbytes = int(array.nbytes)
        _cl_check(lib.clRetainMemObject(mem), "clRetainMemObject")
        with ctx._lock:
            self._own(mem, lib.clReleaseMemObject)
        self._pyopencl = array
        return self

    def to_pyopencl(self):
        """A pyopencl.array.Array over this buffer (no copy) on the
        context's queue; it keeps its own reference to the buffer."""
        import pyopencl
        import pyopencl.array
        buf = pyopencl.Buffer.from_int_ptr(self.cl_mem, retain=True)
        return pyopencl.array.Array(self.ctx.pyopencl_queue(), self.shape, self.dtype, data=buf)

    @property
    def cl_mem(self):
        """The cl_mem handle as an integer (e.g. for
        pyopencl.MemoryObject.from_int_ptr(..., retain=True)); it stays
        owned by this object."""
        return int(ffi.cast("uintptr_t", self.ptr))

    def write(self, array):
        """Upload array (same shape; converted to this dtype); waits."""
        a = np.ascontiguousarray(array, dtype=self.dtype)
        if a.shape != self.shape:
            raise InvalidArgumentError(f"DeviceArray.write: shape {a.shape}, expected {self.shape}")
        with self.ctx._lock:
            _cl_check(lib.clEnqueueWriteBuffer(lib.clphys_context_queue(self.ctx.ptr), self.ptr, lib.CL_TRUE, 0,
                                               self.nbytes, ffi.from_buffer(a), 0, ffi.NULL, ffi.NULL),
                      "clEnqueueWriteBuffer")

    def to_numpy(self):
        """A host copy (waits for the work queued before it)."""
        out = np.empty(self.shape, dtype=self.dtype)
        with self.ctx._lock:
            _cl_check(lib.clEnqueueReadBuffer(lib.clphys_context_queue(self.ctx.ptr), self.ptr, lib.CL_TRUE, 0,
                                              self.nbytes, ffi.from_buffer(out), 0, ffi.NULL, ffi.NULL),
                      "clEnqueueReadBuffer")
        return out

    def _check(self, ctx, shape, dtype, name):
        if self.ctx is not ctx:
            raise InvalidArgumentError(f"{name}: a DeviceArray of another context")
        if self.shape != tuple(shape) or self.dtype != np.dtype(dtype):
            raise InvalidArgumentError(f"{name}: DeviceArray {self.shape} {self.dtype}, expected "
                                       f"{tuple(shape)} {np.dtype(dtype)}")
        return self.ptr

    def __repr__(self):
        return f"<clphys.DeviceArray {self.shape} {self.dtype}{' closed' if self.closed else ''}>"


def as_device_array(ctx, a, name):
    """a DeviceArray as it is; a PyOpenCL array wrapped (no copy)."""
    if isinstance(a, DeviceArray):
        return a
    if type(a).__module__.startswith("pyopencl"):
        return DeviceArray.from_pyopencl(ctx, a)
    raise TypeError(f"{name}: a clphys.DeviceArray or a pyopencl.array.Array is required")
