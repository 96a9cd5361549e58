"""cumsum, histogram, moments and the mx.nd / mx.sym Python functions over operators
(maximum, minimum, hypot, power, comparisons): values against NumPy or recorded from
MXNet 1.9.1, numeric gradients in float64."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ParamError
from sparsym.test_utils import check_numeric_gradient, check_symbolic_forward

rng = np.random.RandomState(9)


def test_cumsum():
    x = np.array([[1, 2], [3, 4]], np.float32)
    assert mx.nd.cumsum(mx.nd.array(x)).asnumpy().tolist() == [1, 3, 6, 10]
    assert mx.nd.cumsum(mx.nd.array(x), axis=0).asnumpy().tolist() == [[1, 2], [4, 6]]
    assert mx.nd.cumsum(mx.nd.array(x), axis=-1).asnumpy().tolist() == [[1, 3], [3, 7]]
    assert mx.nd.cumsum(mx.nd.array([1, 2], dtype="int32")).dtype == np.int32
    assert mx.nd.cumsum(mx.nd.array([1, 2]), dtype="float64").dtype == np.float64
    for axis in (None, 1):
        s = mx.sym.cumsum(mx.sym.var("x"), axis=axis)
        a = rng.randn(3, 4)
        check_symbolic_forward(s, {"x": a}, [np.cumsum(a, axis=axis)])
        check_numeric_gradient(s, {"x": a}, rtol=1e-6, atol=1e-8, dtype=np.float64)


def test_histogram():
    data = mx.nd.array([0, 1, 1, 2, 3, 4, 10])
    c, e = mx.nd.histogram(data, bins=4, range=(0, 4))
    assert c.dtype == np.int64 and c.asnumpy().tolist() == [1, 2, 1, 2]
    assert e.asnumpy().tolist() == [0, 1, 2, 3, 4]
    c, e = mx.nd.histogram(data, bins=mx.nd.array([0, 2, 5, 9]))
    assert c.asnumpy().tolist() == [3, 3, 0] and e.asnumpy().tolist() == [0, 2, 5, 9]
    c, e = mx.nd.histogram(data, bins=3)      # no range: NumPy's result, as MXNet's
    assert c.asnumpy().tolist() == [5, 1, 1]
    s = mx.sym.histogram(mx.sym.var("x"), bins=4, range=(0, 4))
    assert s.infer_shape(x=(7,))[1] == [(4,), (5,)]
    assert s.infer_type(x="float32")[1] == [np.int64, np.float32]
    with pytest.raises(ValueError, match="null range"):
        mx.sym.histogram(mx.sym.var("x"), bins=4)


def test_moments():
    m, v = mx.nd.moments(mx.nd.array([[1, 2], [3, 5]]), axes=(0,))
    assert m.asnumpy().tolist() == [2, 3.5] and v.asnumpy().tolist() == [1, 2.25]
    assert [a.shape for a in mx.nd.moments(mx.nd.ones((2, 2)), axes=(1,), keepdims=True)] == \
        [(2, 1), (2, 1)]
    with pytest.raises(ParamError, match="Empty axes is not supported"):
        mx.nd.moments(mx.nd.ones((2, 2)))
    x = rng.randn(2, 3, 4)
    s = mx.sym.moments(mx.sym.var("x"), axes=(0, 2))
    check_symbolic_forward(s, {"x": x}, [x.mean(axis=(0, 2)), x.var(axis=(0, 2))])
    for i in range(2):
        check_numeric_gradient(s[i], {"x": x}, rtol=1e-5, atol=1e-8, dtype=np.float64)


def test_nd_functions_with_numbers():
    a = mx.nd.array([[1, 5], [3, 2]])
    assert mx.nd.maximum(a, 2).asnumpy().tolist() == [[2, 5], [3, 2]]
    assert mx.nd.maximum(3, a).asnumpy().tolist() == [[3, 5], [3, 3]]
    assert mx.nd.minimum(a, mx.nd.array([2, 2])).asnumpy().tolist() == [[1, 2], [2, 2]]
    assert mx.nd.maximum(1, 2) == 2
    assert mx.nd.greater(2, a).asnumpy().tolist() == [[1, 0], [0, 0]]
    assert mx.nd.subtract(10, a).asnumpy().tolist() == [[9, 5], [7, 8]]
    assert mx.nd.power(2, a).asnumpy().tolist() == [[2, 32], [8, 4]]
    assert mx.nd.logical_xor(a, 0).asnumpy().tolist() == [[1, 1], [1, 1]]
    with pytest.raises(TypeError):
        mx.nd.maximum(a, "x")


def test_sym_functions():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    a, b = rng.randn(2, 3), rng.randn(2, 3)
    for s, want in ((mx.sym.maximum(x, y), np.maximum(a, b)), (mx.sym.minimum(x, 0.1),
                                                                np.minimum(a, 0.1)),
                    (mx.sym.hypot(x, y), np.hypot(a, b)), (mx.sym.pow(2.0, x), 2.0 ** a),
                    (mx.sym.power(x, 2), a ** 2)):
        args = {k: v for k, v in (("x", a), ("y", b)) if k in s.list_arguments()}
        check_symbolic_forward(s, args, [want], rtol=1e-5)
    assert mx.sym.hypot(3, 4) == 5.0 and mx.sym.maximum(1, 2) == 2
