"""Graphs with random operators: backward keeps the forward's draws, shape () is inferred
from the consumers and seeds may be negative (MXNet 1.9.1's behaviour)."""
import numpy as np

import sparsym as mx


def _bound(shape=(3, 3)):
    x = mx.sym.Variable("X")
    y = mx.sym.random.uniform(low=-1.5, high=3.0, shape=shape) + x
    xgrad = mx.nd.zeros(shape)
    return y.bind(mx.cpu(), {"X": mx.nd.zeros(shape)}, {"X": xgrad}), xgrad


def test_backward_of_a_stepless_gradient_keeps_the_forward_draws():
    exe, xgrad = _bound()          # d(rand + X)/dX needs no backward step
    mx.random.seed(128)
    out = exe.forward(is_train=True)[0].asnumpy()
    exe.backward(exe.outputs[0])
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), out)
    np.testing.assert_array_equal(xgrad.asnumpy(), out)
    mx.random.seed(128)
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), out)


def test_random_shape_unknown_until_inferred_and_symbol_keywords_ignored():
    # MXNet: shape () is unknown (legacy shapes) and a Symbol keyword of an op without
    # inputs (randn's data=) is dropped
    s = mx.sym.random.randn(loc=10.0, scale=0.5, data=mx.sym.ones((2, 2)))
    assert s.list_arguments() == []
    y = s + mx.sym.var("X")
    _, outs, _ = y.infer_shape(X=(2, 2))
    assert outs == [(2, 2)]
    v = y.bind(mx.cpu(), {"X": mx.nd.zeros((2, 2))}).forward()[0].asnumpy()
    assert v.shape == (2, 2) and abs(v.mean() - 10.0) < 2.0


def test_negative_seeds_repeat_and_differ_from_positive_ones():
    mx.random.seed(-5)
    a = mx.nd.random.uniform(shape=(4,)).asnumpy()
    mx.random.seed(-5)
    b = mx.nd.random.uniform(shape=(4,)).asnumpy()
    mx.random.seed(5)
    c = mx.nd.random.uniform(shape=(4,)).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
