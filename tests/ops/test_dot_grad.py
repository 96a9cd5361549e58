"""dot's gradients on operands of any rank (MXNet contracts lhs's last axis with rhs's first,
after transposes that reverse every axis) and their own (second-order) gradients."""
import itertools

import numpy as np
import pytest

import sparsym as mx
from sparsym.test_utils import check_numeric_gradient

rng = np.random.RandomState(3)


@pytest.mark.parametrize("ashape,bshape,ta,tb", [
    (a, b, ta, tb) for (a, b), ta, tb in itertools.product(
        [((3, 4), (4, 5)), ((2, 3, 4), (4, 5, 6)), ((4,), (4, 2, 3)), ((2, 3, 4), (4,)),
         ((4,), (4,))], (False, True), (False, True))])
def test_dot_gradient_any_rank(ashape, bshape, ta, tb):
    a = rng.uniform(-1, 1, ashape[::-1] if ta else ashape)
    b = rng.uniform(-1, 1, bshape[::-1] if tb else bshape)
    s = mx.sym.dot(mx.sym.var("a"), mx.sym.var("b"), transpose_a=ta, transpose_b=tb)
    check_numeric_gradient(s, {"a": a, "b": b}, numeric_eps=1e-5, rtol=1e-5, atol=1e-7,
                           dtype=np.float64)


def test_dot_second_order_gradient():
    a = mx.nd.array(rng.uniform(-1, 1, (2, 3, 4)), dtype=np.float64)
    b = mx.nd.array(rng.uniform(-1, 1, (4, 5)), dtype=np.float64)
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = mx.nd.dot(a, b)
        ga = mx.autograd.grad(mx.nd.sum(y * y), [a], create_graph=True)[0]
        z = mx.nd.sum(ga * ga)
    z.backward()
    # ga = 2 (a.b) . b^T, so z = 4 |a.b.b^T|^2: dz/da = 8 (a.b.b^T) . (b.b^T)
    an, bn = a.asnumpy(), b.asnumpy()
    bbt = bn @ bn.T
    np.testing.assert_allclose(a.grad.asnumpy(), 8 * an @ bbt @ bbt, rtol=1e-10)


def test_dot_csr_weight_gradient_is_row_sparse():
    x = mx.nd.array([[0, 1, 0], [0, 0, 0], [2, 0, 0]]).tostype("csr")
    w = mx.nd.array(rng.uniform(-1, 1, (3, 2)))
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.dot(x, w)
    y.backward(mx.nd.ones((3, 2)))
    assert w.grad.stype == "row_sparse"
    np.testing.assert_allclose(w.grad.asnumpy(), x.asnumpy().T @ np.ones((3, 2)))
    assert sorted(w.grad.indices.asnumpy().tolist()) == [0, 1]
