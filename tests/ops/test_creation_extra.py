"""eye, linspace, arange_like and _zeros_without_dtype: values against NumPy (MXNet 1.9.1's
recorded for arange_like)."""
import numpy as np

import sparsym as mx


def test_eye_linspace():
    assert np.array_equal(mx.nd.eye(3, 4, 1).asnumpy(), np.eye(3, 4, 1))
    assert mx.nd.eye(2, dtype="int32").dtype == np.int32
    assert np.allclose(mx.nd.linspace(0, 1, 5).asnumpy(), np.linspace(0, 1, 5))
    assert np.allclose(mx.nd.linspace(0, 1, 5, endpoint=False).asnumpy(),
                       np.linspace(0, 1, 5, endpoint=False))
    s = mx.sym.eye(3, k=-1)
    assert s.infer_shape()[1] == [(3, 3)]
    assert mx.sym.linspace(0, 2, 4).infer_shape()[1] == [(4,)]


def test_arange_like_and_zeros_without_dtype():
    x = mx.nd.ones((2, 3))
    assert mx.nd.contrib.arange_like(x).asnumpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert mx.nd.contrib.arange_like(x, start=1, step=2, axis=-1).asnumpy().tolist() == [1, 3, 5]
    assert mx.nd.contrib.arange_like(x, repeat=2, axis=1).asnumpy().tolist() == [0, 0, 1]
    z = mx.nd._internal._zeros_without_dtype(shape=(2, 2))
    assert z.dtype == np.float32 and z.asnumpy().sum() == 0
