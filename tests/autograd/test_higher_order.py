"""Higher-order gradients: autograd.grad(create_graph=True) differentiates the recorded
backward ops again (their second-order rules live with the ops)."""
import numpy as np
import pytest

from sparsym import autograd as ag
from sparsym import nd

V = np.array([0.3, 0.7, 1.6], dtype=np.float32)


def _second(fn, v=V):
    x = nd.array(v)
    x.attach_grad()
    with ag.record():
        y = fn(x)
        g = ag.grad(y, x, create_graph=True)[0]
    g.backward()
    return g.asnumpy(), x.grad.asnumpy()


@pytest.mark.parametrize("name, d2", [
    ("tan", lambda v: 2 * np.tan(v) / np.cos(v) ** 2),
    ("arcsin", lambda v: v / (1 - v * v) ** 1.5),
    ("arcsinh", lambda v: -v / (v * v + 1) ** 1.5),  # MXNet 1.9.1 has the sign wrong
    ("arctan", lambda v: -2 * v / (1 + v * v) ** 2),
    ("log1p", lambda v: -1 / (1 + v) ** 2),
    ("sqrt", lambda v: -0.25 * v ** -1.5),
    ("rsqrt", lambda v: 0.75 * v ** -2.5),
    ("cbrt", lambda v: -2 / 9 * v ** (-5 / 3)),
    ("reciprocal", lambda v: 2 / v ** 3),
    ("cosh", np.cosh),
    ("abs", lambda v: 0 * v),
    ("square", lambda v: 0 * v + 2),
])
def test_unary_second_order(name, d2):
    v = V / 2  # inside every domain (arcsin)
    _, got = _second(getattr(nd, name), v)
    np.testing.assert_allclose(got, d2(v), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("fn, d1, d2", [
    (lambda x: x ** 3, lambda v: 3 * v * v, lambda v: 6 * v),
    (lambda x: 2 / x, lambda v: -2 / v ** 2, lambda v: 4 / v ** 3),
    (lambda x: 3 ** x, lambda v: np.log(3) * 3 ** v, lambda v: np.log(3) ** 2 * 3 ** v),
    (lambda x: x * x * x, lambda v: 3 * v * v, lambda v: 6 * v),
    (lambda x: nd.elemwise_mul(x, nd.elemwise_mul(x, x)), lambda v: 3 * v * v, lambda v: 6 * v),
    (lambda x: nd.clip(x, 0.5, 1.0) * 2, lambda v: 2.0 * ((v >= 0.5) & (v <= 1)),
     lambda v: 0 * v),
])
def test_scalar_and_binary_second_order(fn, d1, d2):
    g, gg = _second(fn)
    np.testing.assert_allclose(g, d1(V), rtol=1e-5)
    np.testing.assert_allclose(gg, d2(V), rtol=1e-4)


def test_third_order_through_reshape_and_sum():
    x = nd.array(V)
    x.attach_grad()
    with ag.record():
        y = (x.reshape((3, 1)) ** 3).sum()
        g1 = ag.grad(y, x, create_graph=True)[0]
        g2 = ag.grad(g1.sum(), x, create_graph=True)[0]
        s = g2.sum()
    s.backward()
    np.testing.assert_allclose(g1.asnumpy(), 3 * V * V, rtol=1e-5)
    np.testing.assert_allclose(g2.asnumpy(), 6 * V, rtol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), [6, 6, 6])


@pytest.mark.parametrize("xshape, flatten", [((3, 4), True), ((2, 3, 4), True),
                                              ((2, 3, 4), False)])
def test_fully_connected_second_order(xshape, flatten):
    rng = np.random.default_rng(1)
    h = 2
    k = int(np.prod(xshape[1:])) if flatten else xshape[-1]
    x, w, b = (nd.array(rng.random(s)) for s in (xshape, (h, k), (h,)))
    for a in (x, w, b):
        a.attach_grad()
    with ag.record():
        y = nd.FullyConnected(x, w, b, num_hidden=h, flatten=flatten)
        oy = nd.array(rng.random(y.shape))
        xg = ag.grad(y, x, head_grads=oy, create_graph=True, retain_graph=True)[0]
        oxg = nd.array(rng.random(xg.shape))
        wgg = ag.grad(xg, w, head_grads=oxg)[0]
        wg = ag.grad(y, w, head_grads=oy, create_graph=True, retain_graph=True)[0]
        owg = nd.array(rng.random(wg.shape))
        xgg = ag.grad(wg, x, head_grads=owg)[0]
    o = oy.asnumpy().reshape(-1, h)
    n = o.shape[0]
    np.testing.assert_allclose(wg.asnumpy(), o.T @ x.asnumpy().reshape(n, -1), rtol=1e-5)
    np.testing.assert_allclose(wgg.asnumpy(), o.T @ oxg.asnumpy().reshape(n, -1), rtol=1e-5)
    np.testing.assert_allclose(xg.asnumpy().reshape(n, -1), o @ w.asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(xgg.asnumpy().reshape(n, -1), o @ owg.asnumpy(), rtol=1e-5)
    assert xgg.shape == xshape and wgg.shape == w.shape
