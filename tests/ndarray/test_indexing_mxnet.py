"""NDArray indexing result shapes, values and errors against MXNet 1.9.1 over a grid of keys
(indexing_cases.py; MXNet's results in mxnet_indexing.json, written by
make_mxnet_indexing_fixtures.py on the oracle), plus the NumPy interop that reads NDArrays.

MXNet's legacy shapes have no 0-d arrays: ``x[i]`` of a 1-D array is shape (1,) (MXNet's
lstm_crf example relies on it)."""
import json
import os

import numpy as np
import pytest
from indexing_cases import SHAPES, _conv, keys_for

import sparsym as mx
from sparsym.base import MXNetError

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "mxnet_indexing.json")) as f:
    REC = json.load(f)

# Where sparsym deliberately differs (docs/migrating_from_mxnet.md):
# - a NumPy or list boolean mask: MXNet reads it as the indices 0 and 1, sparsym refuses it
#   as MXNet refuses an NDArray mask;
# - an empty slice on an inner axis of a tuple key: MXNet fails an internal check
#   ("src_idx < dshape_len"), sparsym returns the empty array NumPy gives.
DIFFERENT = {"(3, 4)|(slice(None, None, None), slice(3, 1, None))",
             "(2, 3, 4)|(slice(None, None, None), slice(3, 1, None))",
             "(4, 1)|(slice(None, None, None), slice(3, 1, None))",
             "(4, 1)|(1, slice(1, 3, None))"}
CASES = [(shape, k) for shape in SHAPES for k in keys_for(shape)]


@pytest.mark.parametrize("shape,key", CASES, ids=["%s|%r" % c for c in CASES])
def test_indexing_matches_mxnet(shape, key):
    name = "%s|%r" % (shape, key)
    want = REC[name]
    x = mx.nd.array(np.arange(int(np.prod(shape))).reshape(shape))
    if name in DIFFERENT:
        assert "err" in want
        assert x[_conv(mx, key)].size == 0
        return
    if "err" in want:
        with pytest.raises(Exception) as info:
            x[_conv(mx, key)]
        mxnet_type = {"MXNetError": MXNetError, "IndexError": IndexError,
                      "ValueError": ValueError}[want["err"]]
        assert isinstance(info.value, mxnet_type), info.value
        return
    # recorded indexing runs operators (slice, take), which refuse empty results
    for recording in (False, True) if np.prod(want["shape"]) else (False,):
        y = x.copy()
        if recording:
            y.attach_grad()
            with mx.autograd.record():
                got = y[_conv(mx, key)]
        else:
            got = y[_conv(mx, key)]
        assert list(got.shape) == want["shape"], (recording, got.shape)
        assert got.asnumpy().ravel().tolist() == want["vals"]


@pytest.mark.parametrize("mask", [[True, False, True, False, True],
                                  np.array([True, False, True, False, True])])
def test_boolean_masks_are_refused(mask):
    x = mx.nd.arange(5)
    with pytest.raises(ValueError, match="boolean indexing"):
        x[mask]
    with pytest.raises(ValueError, match="boolean indexing"):
        x[mx.nd.array([1, 0, 1, 0, 1], dtype="bool")]


def test_integer_of_a_1d_array_is_shape_1_and_numpy_reads_ndarrays():
    x = mx.nd.arange(4)
    assert x[1].shape == (1,) and x[-1].asscalar() == 3
    assert x[np.int64(2)].shape == (1,)
    with mx.util.np_shape(True):
        assert mx.nd.arange(4)[1].shape == ()
    # NumPy 2 reads an NDArray through __array__, not as a sequence of (1,) items
    np.testing.assert_array_equal(np.asarray(x), [0, 1, 2, 3])
    assert np.asarray(x).dtype == np.float32
    assert np.array([x[0], x[1]]).shape == (2, 1)
    assert [float(v) for v in x] == [0.0, 1.0, 2.0, 3.0]
    # MXNet's test_large_int_rounding
    big = 50000001
    for a in (mx.nd.array([big], dtype="int32"), mx.nd.array([big], dtype="int32").floor()):
        assert np.all(a == big)
    assert not np.all(mx.nd.array([1, 2]) == 1)
