"""logical_not, the logical and hypot scalar ops, the legacy CamelCase aliases, erfinv,
hard_sigmoid and smooth_l1: values against NumPy/SciPy, numeric gradients."""
import numpy as np
import pytest
from scipy.special import erfinv

import sparsym as mx
from sparsym.ops.core.registry import get_op
from sparsym.test_utils import check_numeric_gradient, check_symbolic_forward

X = np.array([[-1.5, 0, 2.0], [0.3, 0, -0.2]], dtype=np.float32)


def test_logic_and_hypot_scalar_values():
    x = mx.nd.array(X)
    assert mx.nd.logical_not(x).asnumpy().tolist() == [[0, 1, 0], [0, 1, 0]]
    assert mx.nd.logical_not(x.astype("int32")).dtype == np.int32
    nd = mx.nd._internal
    assert np.array_equal(nd._logical_and_scalar(x, scalar=2).asnumpy(), X != 0)
    assert np.array_equal(nd._logical_or_scalar(x, scalar=0).asnumpy(), X != 0)
    assert np.array_equal(nd._LogicalXorScalar(x, scalar=1).asnumpy(), X == 0)
    np.testing.assert_allclose(nd._hypot_scalar(x, scalar=2).asnumpy(), np.hypot(X, 2),
                               rtol=1e-6)


def test_camelcase_aliases_name_the_same_records():
    for alias, name in (("_Equal", "_equal"), ("_Logical_Xor", "_logical_xor"),
                        ("_Hypot", "_hypot"), ("_PlusScalar", "_plus_scalar"),
                        ("_RPowerScalar", "_rpower_scalar"), ("_HypotScalar", "_hypot_scalar"),
                        ("_GreaterEqualScalar", "_greater_equal_scalar")):
        assert get_op(alias) is get_op(name)
    x = mx.nd.array(X)
    assert np.allclose(mx.nd._internal._MinusScalar(x, scalar=1).asnumpy(), X - 1)


@pytest.mark.parametrize("make,ref,lo,hi", [
    (lambda x: mx.sym.erfinv(x), erfinv, -0.9, 0.9),
    (lambda x: mx.sym.hard_sigmoid(x, alpha=0.3, beta=0.4),
     lambda a: np.clip(0.3 * a + 0.4, 0, 1), -4, 4),
    (lambda x: mx.sym.smooth_l1(x, scalar=2.0),
     lambda a: np.where(np.abs(a) < 0.25, 2 * a * a, np.abs(a) - 0.125), -1, 1),
    (lambda x: mx.sym.smooth_l1(x), lambda a: np.where(np.abs(a) < 1, 0.5 * a * a,
                                                        np.abs(a) - 0.5), -3, 3),
    (lambda x: mx.sym._internal._hypot_scalar(x, scalar=1.5), lambda a: np.hypot(a, 1.5), -2, 2),
])
def test_forward_and_gradient(make, ref, lo, hi):
    x = np.random.RandomState(2).uniform(lo, hi, size=(3, 7))
    # keep clear of the kinks (the finite differences straddle them otherwise)
    x = np.where(np.abs(np.abs(x) - 0.25) < 0.02, x + 0.05, x)
    x = np.where(np.abs(np.abs(x) - 1.0) < 0.02, x + 0.05, x)
    x = np.where(np.abs(np.abs(x) - 1.0 / 3) < 0.02, x + 0.05, x)
    s = make(mx.sym.var("x"))
    check_symbolic_forward(s, {"x": x}, [ref(x)], rtol=1e-5)
    check_numeric_gradient(s, {"x": x}, numeric_eps=1e-5, rtol=1e-4, atol=1e-6,
                           dtype=np.float64)


def test_erfinv_domain():
    r = mx.nd.erfinv(mx.nd.array([-1, 0, 1, 1.5])).asnumpy()
    assert r[0] == -np.inf and r[1] == 0 and r[2] == np.inf and np.isnan(r[3])
