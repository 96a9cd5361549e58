"""gamma's and gammaln's gradients at the poles 0, -1, -2... are +inf, as MXNet 1.9.1 gives
(values probed); in between, negative arguments follow the reflection formula."""
import numpy as np

import sparsym as mx


def _grad(op, values):
    x = mx.nd.array(values)
    x.attach_grad()
    with mx.autograd.record():
        y = op(x)
    y.backward()
    return x.grad.asnumpy()


def test_gammaln_gradient_at_poles_and_negatives():
    g = _grad(mx.nd.gammaln, [0., -1., -2.5, 1.5])
    assert np.isposinf(g[:2]).all()
    np.testing.assert_allclose(g[2:], [1.1031568, 0.0364899], rtol=1e-5)


def test_gamma_gradient_at_zero_without_negatives():
    assert np.isposinf(_grad(mx.nd.gamma, np.zeros((2, 2)))).all()
