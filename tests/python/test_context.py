"""Devices, contexts, errors (clphys.h)."""
import os

import pytest

import clphys
from clphys._ffi import cstr, ffi, lib


def test_devices_and_context(ctx):
    devs = clphys.devices()
    assert devs, "no device listed"
    assert ctx.device_name in [d.name for d in devs]
    assert ctx.device_name == ctx.device.name != ""
    spec = os.environ.get("CLPHYS_DEVICE", "")
    if spec:  # Context("") takes $CLPHYS_DEVICE, as the C tests do
        with clphys.Context(spec) as c:
            assert (c.device.platform_index, c.device.device_index) == \
                (ctx.device.platform_index, ctx.device.device_index)


def test_context_with_closes():
    with clphys.Context("") as c:
        assert not c.closed
        name = c.device_name
    assert c.closed and name
    with pytest.raises(clphys.ClosedError):
        c.ptr
    c.close()  # twice is fine


def test_unknown_device_raises_with_c_message():
    with pytest.raises(clphys.DeviceNotFoundError) as e:
        clphys.Context("no-such-device-xyz")
    # the C message (clphys_last_error(NULL)) lists the devices found
    assert clphys.devices()[0].name in str(e.value)
    assert e.value.status == lib.CLPHYS_ERR_DEVICE_NOT_FOUND
    assert e.value.message == str(e.value)


def test_one_exception_per_status():
    names = [n for n in dir(lib) if n.startswith("CLPHYS_ERR_")]
    assert len(names) == 12
    classes = {clphys.error_class(getattr(lib, n)) for n in names}
    assert len(classes) == len(names) and clphys.Error not in classes
    for n in names:
        cls = clphys.error_class(getattr(lib, n))
        assert issubclass(cls, clphys.Error) and cls.status_name == n
        assert cstr(lib.clphys_status_string(getattr(lib, n))) != "unknown status"


def test_error_message_is_last_error(ctx):
    with pytest.raises(clphys.InvalidArgumentError) as e:
        clphys.GravityPlan(ctx, eps=-1.0)
    assert e.value.message.endswith(cstr(lib.clphys_last_error(ctx.ptr)).strip())
    assert "eps" in e.value.message
    assert isinstance(e.value, ValueError)


def test_version():
    assert clphys.__version__ == cstr(lib.clphys_version())
    assert ffi is not None
