"""mx.nd.contrib.foreach / while_loop / cond: the imperative loops (MXNet 1.9.1's output
formats, probed), recorded by autograd like any Python code."""
from __future__ import annotations

import numpy as np
import pytest

import sparsym as mx


def test_foreach_formats_and_gradient():
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    h = mx.nd.array([1.0, 1.0])
    x.attach_grad()
    h.attach_grad()
    with mx.autograd.record():
        outs, states = mx.nd.contrib.foreach(lambda d, s: ([d * s[0]], [s[0] + d]), x, [h])
        loss = outs[0].sum()
    assert isinstance(outs, list) and isinstance(states, list)
    np.testing.assert_allclose(outs[0].asnumpy(), [[1, 2], [6, 12], [25, 42]])
    loss.backward()
    # out_t = x_t * (h + sum_{k<t} x_k): d/dh = sum_t x_t
    np.testing.assert_allclose(h.grad.asnumpy(), [9.0, 12.0])
    out, state = mx.nd.contrib.foreach(lambda d, s: (d, s + d), x, h)
    assert isinstance(out, mx.nd.NDArray) and isinstance(state, mx.nd.NDArray)
    np.testing.assert_allclose(state.asnumpy(), [10.0, 13.0])


def test_while_loop_stacks_to_max_iterations():
    outs, (i, s) = mx.nd.contrib.while_loop(
        lambda i, s: i <= 5, lambda i, s: ([i + s], [i + 1, s + i]),
        [mx.nd.array([0], dtype="int64"), mx.nd.array([1], dtype="int64")], max_iterations=10)
    assert outs[0].shape == (10, 1) and outs[0].dtype == np.int64
    np.testing.assert_array_equal(outs[0].asnumpy()[:6, 0], [1, 2, 4, 7, 11, 16])
    assert int(i.asscalar()) == 6 and int(s.asscalar()) == 16
    outs, last = mx.nd.contrib.while_loop(lambda v: v < 0, lambda v: (v, v + 1),
                                          mx.nd.array([1.0]), max_iterations=3)
    assert outs == [] and isinstance(last, mx.nd.NDArray)
    with pytest.raises(ValueError, match="max_iterations"):
        mx.nd.contrib.while_loop(lambda v: v, lambda v: (v, v), mx.nd.array([1.0]))
    with pytest.raises(ValueError, match="consistent"):
        mx.nd.contrib.while_loop(lambda v, w: v < 3, lambda v, w: (None, [v + 1]),
                                 [mx.nd.array([1.0]), mx.nd.array([1.0])], max_iterations=3)


def test_cond_picks_a_branch():
    a, b = mx.nd.array([1.0]), mx.nd.array([2.0])
    assert mx.nd.contrib.cond(a * b < 5, lambda: (a + 5) * (b + 5),
                              lambda: (a - 5) * (b - 5)).asscalar() == 42.0
    assert mx.nd.contrib.cond(a * b > 5, lambda: a, lambda: [a, b])[1].asscalar() == 2.0
    with pytest.raises(ValueError, match="not a scalar"):
        mx.nd.contrib.cond(mx.nd.array([1.0, 0.0]), lambda: a, lambda: b)
