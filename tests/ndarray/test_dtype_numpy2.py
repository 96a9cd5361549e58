"""What user code does with an NDArray's dtype, on NumPy 2.

MXNet 1.9.1 (checked on the oracle) gives ``type(mx.nd.zeros(1).dtype) is type``: the
scalar type ``numpy.float32``. So ``x.dtype == np.float32`` and ``x.dtype is np.float32``
are True (MXNet's own gluon transforms and mx.image test ``x.dtype is not np.float32``),
``x.dtype == 'float32'`` is False, and dicts keyed by scalar types find it; sparsym keeps
that value. NumPy 2 no longer reads ``np.dtype(x)`` from a ``dtype`` attribute that is a
scalar type: the ``__numpy_dtype__`` protocol (NumPy >= 2.4) answers it.
"""
import numpy as np
import pytest

import sparsym as mx

NUMPY_HAS_PROTOCOL = tuple(int(p) for p in np.__version__.split(".")[:2]) >= (2, 4)

ARRAYS = [
    ("dense", lambda dt: mx.nd.zeros((2, 3), dtype=dt)),
    ("csr", lambda dt: mx.nd.sparse.zeros("csr", (2, 3), dtype=dt)),
    ("row_sparse", lambda dt: mx.nd.sparse.zeros("row_sparse", (2, 3), dtype=dt)),
]


@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "uint8", "int32", "int64"])
@pytest.mark.parametrize("kind,make", ARRAYS, ids=[a[0] for a in ARRAYS])
def test_dtype_is_mxnets_scalar_type(kind, make, dt):
    x = make(dt)
    scalar = np.dtype(dt).type
    assert x.dtype is scalar and isinstance(x.dtype, type)
    assert x.dtype == scalar and x.dtype == np.dtype(dt)
    assert x.dtype != dt  # a scalar type is not equal to its name (MXNet 1.9.1: False)
    assert {scalar: "found"}[x.dtype] == "found"
    assert np.dtype(x.dtype).itemsize == np.dtype(dt).itemsize
    assert np.dtype(x.dtype).name == dt
    assert np.issubdtype(x.dtype, np.floating) == (dt.startswith("float"))
    assert x.asnumpy().astype(x.dtype).dtype == np.dtype(dt)


@pytest.mark.skipif(not NUMPY_HAS_PROTOCOL, reason="__numpy_dtype__ needs NumPy >= 2.4")
@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "int64"])
@pytest.mark.parametrize("kind,make", ARRAYS, ids=[a[0] for a in ARRAYS])
def test_np_dtype_of_an_ndarray(kind, make, dt):
    x = make(dt)
    assert np.dtype(x) == np.dtype(dt)
    # MXNet's sparse tutorial sizes arrays this way
    assert np.dtype(x).itemsize * x.shape[1] == np.dtype(dt).itemsize * 3
    assert np.zeros(2, dtype=x).dtype == np.dtype(dt)
