"""A Gluon RNN layer's fused parameters: one recorded ``_rnn_param_flat`` call imperatively,
MXNet's reshape + ``_rnn_param_concat`` graph when hybridized; both give the same values and
gradients."""
import numpy as np
import pytest

import sparsym as mx


def test_flat_joins_the_flattened_arrays_and_splits_the_gradient():
    rng = np.random.RandomState(0)
    shapes = [(6, 4), (6, 3), (6,), (2, 3, 2)]
    xs = [mx.nd.array(rng.rand(*s)) for s in shapes]
    for x in xs:
        x.attach_grad()
    head = rng.rand(sum(int(np.prod(s)) for s in shapes)).astype(np.float32)
    with mx.autograd.record():
        y = mx.nd._internal._rnn_param_flat(*xs)
        loss = (y * mx.nd.array(head)).sum()
    loss.backward()
    np.testing.assert_array_equal(
        y.asnumpy(), np.concatenate([x.asnumpy().reshape(-1) for x in xs]))
    at = 0
    for x, s in zip(xs, shapes):
        n = int(np.prod(s))
        np.testing.assert_array_equal(x.grad.asnumpy(), head[at:at + n].reshape(s))
        at += n


@pytest.mark.parametrize("layer", ["LSTM", "GRU", "RNN"])
def test_imperative_and_hybridized_layers_agree(layer):
    rng = np.random.RandomState(1)
    x = mx.nd.array(rng.rand(5, 3, 4))
    outs, grads = [], []
    for hybrid in (False, True):
        net = getattr(mx.gluon.rnn, layer)(6, num_layers=2, bidirectional=True)
        mx.random.seed(3)  # the same initial parameters for both
        net.initialize(mx.init.Xavier())
        if hybrid:
            net.hybridize()
        with mx.autograd.record():
            y = net(x)
            (y * y).sum().backward()
        outs.append(y.asnumpy())
        grads.append({k.split("_", 1)[1]: p.grad().asnumpy()
                      for k, p in net.collect_params().items()})
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)
    assert grads[0].keys() == grads[1].keys()
    for k in grads[0]:
        np.testing.assert_allclose(grads[0][k], grads[1][k], rtol=1e-4, atol=1e-6, err_msg=k)


def test_exported_graphs_keep_mxnets_concat(tmp_path):
    net = mx.gluon.rnn.GRU(4, num_layers=1)
    net.initialize()
    net.hybridize()
    net(mx.nd.ones((3, 2, 5)))
    net.export(str(tmp_path / "gru"))
    js = (tmp_path / "gru-symbol.json").read_text()
    assert "_rnn_param_concat" in js and "_rnn_param_flat" not in js
