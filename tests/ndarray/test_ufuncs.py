"""mx.nd.add/maximum/... and mx.sym.maximum/pow/...: arrays or scalars on either side, as
MXNet's module-level functions (results probed on MXNet 1.9.1)."""
import numpy as np
import pytest

import sparsym as mx

X = np.array([[1., 2.], [3., 4.]], dtype=np.float32)


@pytest.mark.parametrize("name,ref", [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
    ("divide", np.divide), ("true_divide", np.divide), ("modulo", np.mod),
    ("power", np.power), ("maximum", np.maximum), ("minimum", np.minimum),
    ("hypot", np.hypot), ("equal", np.equal), ("not_equal", np.not_equal),
    ("greater", np.greater), ("greater_equal", np.greater_equal), ("lesser", np.less),
    ("lesser_equal", np.less_equal), ("logical_and", np.logical_and),
    ("logical_or", np.logical_or), ("logical_xor", np.logical_xor)])
def test_nd_ufunc_array_scalar_mixes(name, ref):
    fn = getattr(mx.nd, name)
    x, y = mx.nd.array(X), mx.nd.array(X[::-1] + 0.5)
    for lhs, rhs, a, b in ((x, y, X, X[::-1] + 0.5), (x, 2.0, X, 2.0), (3.0, x, 3.0, X)):
        np.testing.assert_allclose(fn(lhs, rhs).asnumpy(), ref(a, b).astype(np.float32),
                                   rtol=1e-6)
    assert fn(2, 3) == pytest.approx(float(ref(2, 3)))


def test_onehot_encode_fills_out():
    out = mx.nd.zeros((2, 3))
    assert mx.nd.onehot_encode(mx.nd.array([0, 2]), out) is out
    np.testing.assert_array_equal(out.asnumpy(), [[1, 0, 0], [0, 0, 1]])


def test_sym_binary_functions():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    assert mx.sym.maximum(a, 2).name.startswith("_maximumscalar")
    assert mx.sym.pow(2, a).name.startswith("_rpowerscalar")
    assert mx.sym.maximum(3, 2) == 3 and mx.sym.power(2, 3) == 8
    ex = mx.sym.minimum(a, b).bind(mx.cpu(), {"a": mx.nd.array(X), "b": mx.nd.array(X.T)})
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), np.minimum(X, X.T))
    ex = mx.sym.hypot(a, b).bind(mx.cpu(), {"a": mx.nd.array(X), "b": mx.nd.array(X)})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), np.hypot(X, X), rtol=1e-6)
