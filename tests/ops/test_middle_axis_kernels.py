"""Sums over a middle block of axes, their gradients, and products with a weight per row
run compiled (kernels/reduce.py); the results are NumPy's, bit for bit."""
import numpy as np
import pytest

import sparsym as mx
from sparsym import autograd, nd


def _arr(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [((64, 15, 16), 1), ((3, 4, 5, 6), (1, 2)),
                                        ((7, 9, 2), 0), ((2, 1, 3), 1), ((5, 0, 4), 1),
                                        ((4, 6, 3), (0, 2)), ((4, 6, 3), 2)])
def test_sum_and_mean_over_a_block_are_numpys(shape, axis, dtype):
    x = _arr(shape, dtype)
    for keepdims in (False, True):
        got = nd.sum(nd.array(x, dtype=dtype), axis=axis, keepdims=keepdims).asnumpy()
        ref = np.sum(x, axis=axis, keepdims=keepdims)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, ref.reshape(got.shape))
        if x.size:
            got = nd.mean(nd.array(x, dtype=dtype), axis=axis, keepdims=keepdims).asnumpy()
            np.testing.assert_allclose(got, np.mean(x, axis=axis, keepdims=keepdims)
                                       .reshape(got.shape), rtol=1e-6)


def test_sum_exclude_and_gradients_broadcast_back():
    x = _arr((6, 5, 4), np.float32)
    np.testing.assert_array_equal(nd.sum(nd.array(x), axis=(0, 2), exclude=True).asnumpy(),
                                  x.sum(axis=1))
    for op, scale in ((nd.sum, 1.0), (nd.mean, 1.0 / 5)):
        a = nd.array(x)
        a.attach_grad()
        g = _arr((6, 4), np.float32, seed=1)
        with autograd.record():
            y = op(a, axis=1)
        y.backward(nd.array(g))
        np.testing.assert_array_equal(a.grad.asnumpy(),
                                      np.broadcast_to(g[:, None, :] * np.float32(scale),
                                                      x.shape))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_broadcast_mul_by_a_weight_per_row(dtype):
    # an embedding batch (rows x fields x dim) weighted by the feature values
    e = _arr((32, 15, 8), dtype)
    v = _arr((32, 15, 1), dtype, seed=2)
    ref = e * v
    for lhs, rhs in ((e, v), (v, e)):
        got = nd.broadcast_mul(nd.array(lhs, dtype=dtype), nd.array(rhs, dtype=dtype))
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.asnumpy(), ref)
    a, b = nd.array(e, dtype=dtype), nd.array(v, dtype=dtype)
    a.attach_grad()
    b.attach_grad()
    g = _arr(e.shape, dtype, seed=3)
    with autograd.record():
        y = nd.broadcast_mul(a, b)
    y.backward(nd.array(g, dtype=dtype))
    np.testing.assert_array_equal(a.grad.asnumpy(), g * v)
    np.testing.assert_allclose(b.grad.asnumpy(), (g * e).sum(axis=2, keepdims=True),
                               rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_other_broadcasts_keep_their_rules():
    e = _arr((4, 3, 2), np.float32)
    with pytest.raises(mx.base.MXNetError, match="expected float32, got float64"):
        nd.broadcast_mul(nd.array(e), nd.array(_arr((4, 3, 1), np.float64), dtype=np.float64))
    w = _arr((1, 3, 2), np.float32)
    np.testing.assert_array_equal(nd.broadcast_mul(nd.array(e), nd.array(w)).asnumpy(), e * w)
    with pytest.raises(mx.base.MXNetError):
        nd.broadcast_mul(nd.array(e), nd.array(_arr((4, 2, 1), np.float32))).asnumpy()
