"""pytest fixtures of the Python package's tests.

The device is CLPHYS_DEVICE's, as for the C tests (Context("") reads it;
unset: "auto").  Kernels are cached in a folder of the session unless
CLPHYS_CACHE_DIR is set.
"""
import os
import pathlib
import tempfile

import numpy as np
import pytest

if not os.environ.get("CLPHYS_CACHE_DIR"):
    os.environ["CLPHYS_CACHE_DIR"] = tempfile.mkdtemp(prefix="clphys-pytest-cache-")

import clphys  # noqa: E402

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def ctx():
    with clphys.Context("") as c:
        yield c


@pytest.fixture(scope="session")
def fp64(ctx):
    if not ctx.device.fp64:
        pytest.skip("the device has no fp64")
    return True


@pytest.fixture
def rng(request):
    # a fresh stream per test, fixed by the test's name: reproducible input
    return np.random.default_rng(abs(hash(request.node.name)) % (2**32))


def poison(shape):
    """An output array filled with NaN, for results that must be written."""
    return np.full(shape, np.nan)
