"""CTCLoss and its aliases through the public API."""
from __future__ import annotations

import numpy as np
import pytest

import sparsym as mx


def _acts():
    return np.random.RandomState(0).uniform(-2, 2, (6, 3, 5)).astype(np.float32)


def test_aliases_agree_and_gradient_scales_with_the_head():
    acts, lab = _acts(), mx.nd.array([[1, 2, 2], [3, 0, 0], [4, 1, 3]])
    losses = [f(mx.nd.array(acts), lab).asnumpy()
              for f in (mx.nd.CTCLoss, mx.nd.ctc_loss, mx.nd.contrib.CTCLoss,
                        mx.nd.contrib.ctc_loss)]
    for got in losses[1:]:
        np.testing.assert_array_equal(got, losses[0])
    # MXNet 1.9.1's values for these inputs
    np.testing.assert_allclose(losses[0], [5.919396, 7.0090585, 6.6142807], rtol=1e-5)
    d = mx.nd.array(acts)
    d.attach_grad()
    with mx.autograd.record():
        loss = mx.nd.ctc_loss(d, lab)
    loss.backward(mx.nd.array([1.0, 2.0, 0.0]))
    g = d.grad.asnumpy()
    assert np.abs(g[:, 2]).max() == 0
    # each frame's gradient sums to zero (softmax minus occupancies of a distribution)
    np.testing.assert_allclose(g.sum(axis=2), 0, atol=1e-5)


def test_lengths_and_blank_last():
    acts = _acts()
    sym = mx.sym.CTCLoss(mx.sym.var("d"), mx.sym.var("l"), mx.sym.var("dl"), mx.sym.var("ll"),
                         use_data_lengths=True, use_label_lengths=True, name="c")
    assert sym.list_arguments() == ["d", "l", "dl", "ll"]
    assert sym.list_outputs() == ["c_output0"]
    exe = sym.bind(mx.cpu(), {"d": mx.nd.array(acts), "l": mx.nd.array([[1, 2, 2]] * 3),
                              "dl": mx.nd.array([6, 4, 5]), "ll": mx.nd.array([3, 1, 2])})
    got = exe.forward()[0].asnumpy()
    ref = [mx.nd.ctc_loss(mx.nd.array(acts[:t, i:i + 1]), mx.nd.array([lab])).asscalar()
           for i, (t, lab) in enumerate([(6, [1, 2, 2]), (4, [1, 0, 0]), (5, [1, 2, 0])])]
    np.testing.assert_allclose(got, ref, rtol=1e-5)
    # blank last: the same problem with every class shifted down by one
    last = mx.nd.ctc_loss(mx.nd.array(np.roll(acts, -1, axis=2)),
                          mx.nd.array([[0, 1, 1], [2, -1, -1], [3, 0, 2]]), blank_label="last")
    first = mx.nd.ctc_loss(mx.nd.array(acts), mx.nd.array([[1, 2, 2], [3, 0, 0], [4, 1, 3]]))
    np.testing.assert_allclose(last.asnumpy(), first.asnumpy(), rtol=1e-5)


def test_impossible_and_invalid_labels():
    # two equal labels need a blank between them: 3 frames cannot hold "1 1 1"
    loss = mx.nd.ctc_loss(mx.nd.zeros((3, 1, 4)), mx.nd.array([[1, 1, 1]]))
    assert np.isinf(loss.asscalar())
    with pytest.raises(mx.base.ShapeError, match="cannot exceed"):
        mx.nd.ctc_loss(mx.nd.zeros((2, 1, 4)), mx.nd.array([[1, 2, 3]]))
    with pytest.raises(mx.base.ShapeError, match=r"classes in \[0, 3\]"):
        mx.nd.ctc_loss(mx.nd.zeros((3, 1, 4)), mx.nd.array([[1, 4]]))


def test_a_label_equal_to_the_blank_is_a_lattice_position():
    """MXNet 1.9.1 (warp-ctc) takes a label value equal to the blank's index without
    complaint; its values for these inputs (probed on MXNet)."""
    p = mx.nd.array(np.random.RandomState(0).uniform(size=(20, 2, 4)))
    last = mx.nd.CTCLoss(p, mx.nd.array([[3, 3, 2, 2], [3, 2, 3, 2]]), mx.nd.array([2, 3]),
                         use_label_lengths=True, blank_label="last")
    np.testing.assert_allclose(last.asnumpy(), [19.818033, 16.761946], rtol=1e-5)
    first = mx.nd.CTCLoss(p, mx.nd.array([[1, 3, 0, 0], [2, 0, 2, 0]]), blank_label="first")
    np.testing.assert_allclose(first.asnumpy(), [19.442595, 21.819008], rtol=1e-5)


def test_gluon_ctc_loss_passes_its_optional_lengths_by_position():
    """gluon.loss.CTCLoss calls the op as MXNet's does, with None for absent lengths: both
    front ends take a None in an input's place as an input not given."""
    loss = mx.gluon.loss.CTCLoss()
    got = loss(mx.nd.ones((2, 20, 4)), mx.nd.array([[2, 1, 2, 2], [3, 2, 2, 2]]), None,
               mx.nd.array([2, 3]))
    np.testing.assert_allclose(got.asnumpy(), [18.82820702, 16.50581741], rtol=1e-5)
    out = loss(mx.sym.var("pred"), mx.sym.var("label"))
    assert out.list_arguments() == ["pred", "label"]
    got = out.eval(pred=mx.nd.ones((2, 20, 4)), label=mx.nd.array([[1, 0, -1, -1],
                                                                    [2, 1, 1, -1]]))[0]
    np.testing.assert_allclose(got.asnumpy(), [18.82820702, 16.50581741], rtol=1e-5)
