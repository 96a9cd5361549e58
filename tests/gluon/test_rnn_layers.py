"""gluon.rnn fused layers against their unfused cell stacks."""
import numpy as np
import pytest

import sparsym as mx
from sparsym import gluon


@pytest.mark.parametrize("layer", [
    lambda: gluon.rnn.LSTM(3, num_layers=2, bidirectional=True),
    lambda: gluon.rnn.GRU(3, num_layers=2),
    lambda: gluon.rnn.RNN(3, activation="tanh"),
])
def test_unfused_cells_share_parameters_and_agree(layer):
    net = layer()
    cells = net._unfuse()
    net.initialize(mx.init.Uniform(0.5))
    x = mx.nd.array(np.random.default_rng(0).uniform(-1, 1, size=(4, 2, 5)))
    fused = net(x).asnumpy()
    unfused = cells.unroll(4, x, layout="TNC", merge_outputs=True)[0].asnumpy()
    np.testing.assert_allclose(fused, unfused, rtol=1e-5, atol=1e-6)
    assert set(cells.collect_params().keys()) <= set(net.collect_params().keys())


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_projection_matches_lstmp_cells_with_gradients(bidirectional):
    # the fused LSTMP (projection_size) against a stack of LSTMPCells on the same weights:
    # outputs, final states and every gradient
    hidden, proj, layers, (t, n, c) = 5, 3, 2, (4, 2, 6)
    fused = gluon.rnn.LSTM(hidden, num_layers=layers, projection_size=proj, layout="TNC",
                           bidirectional=bidirectional, prefix="lstm0_")
    stack = gluon.rnn.HybridSequentialRNNCell(prefix="lstm0_")
    with stack.name_scope():
        for i in range(layers):
            def cell(side, i=i):
                return gluon.contrib.rnn.LSTMPCell(hidden, proj, prefix=f"{side}{i}_")
            stack.add(gluon.rnn.BidirectionalCell(cell("l"), cell("r")) if bidirectional
                      else cell("l"))
    fused.initialize()
    stack.initialize()
    x = mx.nd.array(np.random.default_rng(1).uniform(-1, 1, size=(t, n, c)))
    fused.infer_shape(x, fused.begin_state(n))
    fp, sp = fused.collect_params(), stack.collect_params()
    rng = np.random.default_rng(2)
    for name, p in fp.items():
        w = mx.nd.array(rng.uniform(-0.5, 0.5, size=p.shape))
        p.set_data(w)
        sp[name].set_data(w.copy())
    assert fp["lstm0_l0_h2r_weight"].shape == (proj, hidden)
    assert fp["lstm0_l1_i2h_weight"].shape == (4 * hidden, proj * (2 if bidirectional else 1))

    def run(net, fn):
        xi = x.copy()
        xi.attach_grad()
        with mx.autograd.record():
            out, states = fn(net, xi)
            loss = (out * out).sum() + sum((s * s).sum() for s in states)
        loss.backward()
        grads = {k: v.grad().asnumpy() for k, v in net.collect_params().items()}
        return out.asnumpy(), [s.asnumpy() for s in states], xi.grad.asnumpy(), grads

    fo, fs, fdx, fg = run(fused, lambda net, xi: net(xi, net.begin_state(n)))
    so, ss, sdx, sg = run(stack, lambda net, xi: net.unroll(
        t, xi, begin_state=net.begin_state(batch_size=n), layout="TNC", merge_outputs=True))
    d = 2 if bidirectional else 1
    assert fo.shape == (t, n, d * proj) and fs[0].shape == (layers * d, n, proj)
    assert fs[1].shape == (layers * d, n, hidden)
    np.testing.assert_allclose(fo, so, rtol=1e-5, atol=1e-6)
    # the stack's states come per cell as [h, c]; the fused layer's per kind, layer-major
    np.testing.assert_allclose(fs[0], np.stack(ss[0::2]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fs[1], np.stack(ss[1::2]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fdx, sdx, rtol=1e-4, atol=1e-5)
    for name, g in fg.items():
        np.testing.assert_allclose(g, sg[name], rtol=1e-4, atol=1e-5, err_msg=name)


def test_projection_needs_lstm_mode():
    x = mx.nd.ones((2, 1, 3))
    with pytest.raises(mx.base.ParamError, match="projection_size"):
        mx.nd.RNN(x, mx.nd.ones((30,)), mx.nd.zeros((1, 1, 2)), state_size=2, num_layers=1,
                  mode="gru", projection_size=1)


@pytest.mark.parametrize("layout", ["TNC", "NTC"])
@pytest.mark.parametrize("hybridize", [False, True])
def test_dynamic_unroll_matches_unroll_with_valid_length(layout, hybridize):
    class Layer(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.cell = gluon.rnn.LSTMCell(4, prefix="rnn_")

        def hybrid_forward(self, F, x, states, valid_length):
            return gluon.contrib.rnn.dynamic_unroll(self.cell, x, states, layout=layout,
                                                    valid_length=valid_length)

    rng = np.random.default_rng(0)
    t, n = 5, 3
    shape = (t, n, 2) if layout == "TNC" else (n, t, 2)
    x = mx.nd.array(rng.normal(size=shape))
    states = [mx.nd.array(rng.normal(size=(n, 4))) for _ in range(2)]
    valid = mx.nd.array([2, 5, 1])
    net = Layer()
    net.initialize(mx.init.Uniform(0.5))
    if hybridize:
        net.hybridize()
    x.attach_grad()
    with mx.autograd.record():
        out, st = net(x, states, valid)
        (out.sum() + st[0].sum()).backward()
    gx = x.grad.asnumpy()
    ref_x = x.copy()
    ref_x.attach_grad()
    with mx.autograd.record():
        ref, ref_st = net.cell.unroll(t, ref_x, states, layout=layout, merge_outputs=True,
                                      valid_length=valid)
        (ref.sum() + ref_st[0].sum()).backward()
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-6)
    for a, b in zip(st, ref_st):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gx, ref_x.grad.asnumpy(), rtol=1e-4, atol=1e-5)
    # padded steps read 0 (sequence 2 is valid for one step only)
    third = out.asnumpy()[1:, 2] if layout == "TNC" else out.asnumpy()[2, 1:]
    assert not third.any()


def test_training_forward_keeps_activations_for_backward(monkeypatch):
    # the backward reuses the training forward's activations (no second forward), and the
    # gradients equal those of a backward that recomputes them
    from sparsym.ops.nn import rnn_op
    reruns = []
    orig = rnn_op._rerun
    monkeypatch.setattr(rnn_op, "_rerun", lambda *a: reruns.append(1) or orig(*a))
    net = gluon.rnn.LSTM(4, num_layers=2)
    net.initialize(mx.init.Uniform(0.3))
    x = mx.nd.array(np.random.default_rng(3).uniform(size=(5, 2, 3)))

    def grads():
        with mx.autograd.record():
            y = net(x)
        y.backward()
        return {k: p.grad().asnumpy().copy() for k, p in net.collect_params().items()}
    kept = grads()
    assert not reruns
    monkeypatch.setattr(rnn_op._KEPT, "get", lambda seed: None)
    rerun = grads()
    assert reruns
    for k, g in kept.items():
        np.testing.assert_allclose(g, rerun[k], rtol=1e-6, err_msg=k)
