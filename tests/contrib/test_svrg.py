"""SVRGModule: variance-reduced SGD on a linear regression, checked step by step against a
NumPy reference (MXNet 1.9.1 gives the same weights for the first full-gradient period)."""
import logging

import numpy as np
import pytest

import sparsym as mx
from sparsym.contrib.svrg_optimization.svrg_module import SVRGModule

RNG = np.random.RandomState(0)
X = RNG.normal(size=(8, 3)).astype("f4")
Y = (X @ np.array([1., -2., .5]) + 0.1).astype("f4")
W0 = np.array([[0.3, 0.2, -0.1]], "f4")


def _module(update_freq):
    data, lab = mx.sym.var("data"), mx.sym.var("lin_label")
    out = mx.sym.LinearRegressionOutput(
        mx.sym.FullyConnected(data, num_hidden=1, no_bias=True, name="fc"), lab, name="lin")
    return SVRGModule(out, data_names=["data"], label_names=["lin_label"],
                      update_freq=update_freq, logger=logging)


def _reference(epochs, update_freq, lr=0.1, bs=4):
    """Plain NumPy SVRG: per-batch summed gradients, SGD with rescale 1/bs."""
    def grad(w, xb, yb):
        return ((xb @ w.T).ravel() - yb) @ xb
    w = W0.astype(np.float64)
    batches = [(X[i:i + bs], Y[i:i + bs]) for i in range(0, len(X), bs)]
    for epoch in range(epochs):
        if epoch % update_freq == 0:
            snap = w.copy()
            full = np.mean([grad(snap, xb, yb) for xb, yb in batches], axis=0)
        for xb, yb in batches:
            g = grad(w, xb, yb) - grad(snap, xb, yb) + full
            w = w - lr * g / bs
    return w


@pytest.mark.parametrize("epochs,update_freq", [(1, 1), (2, 2), (3, 2)])
def test_svrg_matches_the_reference(epochs, update_freq):
    it = mx.io.NDArrayIter(X, Y, batch_size=4, label_name="lin_label")
    mod = _module(update_freq)
    mod.fit(it, num_epoch=epochs, arg_params={"fc_weight": mx.nd.array(W0)}, optimizer="sgd",
            optimizer_params={"learning_rate": 0.1}, eval_metric="mse")
    np.testing.assert_allclose(mod.get_params()[0]["fc_weight"].asnumpy(),
                               _reference(epochs, update_freq), rtol=1e-4, atol=1e-6)


def test_svrg_refusals():
    with pytest.raises(TypeError, match="update_freq in SVRGModule must be an integer"):
        _module(None)
    with pytest.raises(ValueError, match="positive integer"):
        _module(0)
    mod = _module(1)
    mod.bind(data_shapes=[("data", (4, 3))], label_shapes=[("lin_label", (4,))])
    mod.init_params()
    with pytest.raises(NotImplementedError, match="distributed kvstore"):
        mod.init_optimizer(kvstore="dist_sync")


def test_svrg_optimizer_assigns_full_keys():
    from sparsym.contrib.svrg_optimization.svrg_optimizer import _SVRGOptimizer
    o = _SVRGOptimizer("sgd", learning_rate=0.5, param_idx2name={0: "w", 1: "w_full"})
    w, full = mx.nd.ones(2), mx.nd.zeros(2)
    o.update(0, w, mx.nd.ones(2), o.create_state(0, w))
    o.update(1, full, mx.nd.array([3., 4.]), o.create_state(1, full))
    assert w.asnumpy().tolist() == [0.5, 0.5] and full.asnumpy().tolist() == [3., 4.]
