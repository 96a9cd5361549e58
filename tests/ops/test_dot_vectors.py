"""dot of two vectors: MXNet's (1,) output and its gradients, symbolic and imperative."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ShapeError


def test_vector_dot_gradients_match_numpy():
    rng = np.random.RandomState(0)
    a, b = rng.rand(7), rng.rand(7)
    exe = mx.sym.dot(mx.sym.var("lhs"), mx.sym.var("rhs")).bind(
        mx.cpu(), args=[mx.nd.array(a), mx.nd.array(b)],
        args_grad=[mx.nd.zeros(7), mx.nd.zeros(7)])
    out = exe.forward(is_train=True)[0]
    assert out.shape == (1,)
    np.testing.assert_allclose(out.asnumpy(), [a @ b], rtol=1e-6)
    exe.backward([mx.nd.array([3.0])])
    np.testing.assert_allclose(exe.grad_arrays[0].asnumpy(), 3 * b, rtol=1e-6)
    np.testing.assert_allclose(exe.grad_arrays[1].asnumpy(), 3 * a, rtol=1e-6)
    x = mx.nd.array(a)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.dot(x, mx.nd.array(b))
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), b, rtol=1e-6)


def test_a_transposed_length_one_vector_is_a_row():
    # the products the vector gradients are made of: (1,) . (n,)^T and (n,)^T . (1,)
    v = mx.nd.array([1.0, 2.0, 3.0])
    two = mx.nd.array([2.0])
    assert mx.nd.dot(two, v, transpose_b=True).asnumpy().tolist() == [2.0, 4.0, 6.0]
    assert mx.nd.dot(v, two, transpose_a=True).asnumpy().tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(ShapeError):          # without a transpose: MXNet's mismatch error
        mx.nd.dot(two, v)
