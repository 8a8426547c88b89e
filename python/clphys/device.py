"""Arrays that stay on the device: DeviceArray, one OpenCL buffer (cl_mem)
of a context, with a NumPy shape and dtype.

Plans take and fill them without a host round trip
(GravityPlan.compute_device: clphys_gravity_compute_cl;
PoissonPlan.solve_device: clphys_poisson_solve_mem); to_numpy() reads one
back.  The buffer is made on the context's OpenCL context and every
transfer goes through its in-order queue, so a read sees every result
enqueued before it.  Like a plan, a DeviceArray keeps its context alive and
is released by close(), by the garbage collector or by closing the context.
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
