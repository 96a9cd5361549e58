"""Shared fixtures: a fresh fallback log and a fixed seed for every test."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.kernels import _twins

# the compiled kernels from the first call, whatever ran before (tests/kernels/
# test_numpy_twins.py checks the NumPy twins that a fresh process runs first)
_twins.NUMBA_AFTER_WORK = 0


@pytest.fixture(autouse=True)
def _fresh_state():
    mx.ops.registry.reset_fallback_log()
    mx.random.seed(0)
    np.random.seed(0)
    yield


@pytest.fixture(params=["onednn", "numba"])
def dnn_path(request):
    """Run the test on oneDNN's primitives and on the Numba kernels (modules opt in with
    ``pytestmark = pytest.mark.usefixtures("dnn_path")``)."""
    from sparsym.kernels import onednn
    if request.param == "onednn" and not onednn.available():
        pytest.skip("oneDNN wheel not installed")
    with onednn.use(request.param == "onednn"):
        yield request.param
