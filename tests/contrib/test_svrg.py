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


def _bound(context=None):
    mod = _module(2) if context is None else SVRGModule(
        _module(2).symbol, data_names=["data"], label_names=["lin_label"], update_freq=2,
        context=context)
    mod.bind(data_shapes=[("data", (4, 3))], label_shapes=[("lin_label", (4,))])
    mod.init_params(initializer=mx.init.Constant(0.5))
    return mod


def test_full_gradients_per_device_as_mxnet_param_dict():
    """MXNet's layout: ``_param_dict[device][name]`` holds the averaged full gradient, and
    the module's optimizer is the _SVRGOptimizer wrapping the one asked for."""
    mod = _bound()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    assert type(mod._optimizer).__name__ == "_SVRGOptimizer"
    assert type(mod._optimizer.default_opt).__name__ == "SGD"
    assert mod._ctx_len == 1 and not mod._param_dict[0]["fc_weight"].asnumpy().any()
    it = mx.io.NDArrayIter(X, Y, batch_size=4, label_name="lin_label")
    mod.update_full_grads(it)
    w = np.full((1, 3), 0.5)
    expect = np.mean([((X[i:i + 4] @ w.T).ravel() - Y[i:i + 4]) @ X[i:i + 4]
                      for i in (0, 4)], axis=0)
    np.testing.assert_allclose(mod._param_dict[0]["fc_weight"].asnumpy(), expect[None],
                               rtol=1e-5)
    mod.update_full_grads(it)  # a new snapshot starts from zero (MXNet adds onto the last)
    np.testing.assert_allclose(mod._param_dict[0]["fc_weight"].asnumpy(), expect[None],
                               rtol=1e-5)


def test_full_gradients_through_a_kvstore():
    kv = mx.kv.create("local")
    mod = _bound(context=[mx.cpu(0), mx.cpu(1)])
    mod.init_optimizer(kvstore=kv, optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    ones = [mx.nd.ones((1, 3)) for _ in range(2)]
    mod._accumulate_kvstore("fc_weight", ones)  # <name>_full: the devices' sum, assigned
    assert len(mod._param_dict) == mod._ctx_len == 2
    np.testing.assert_array_equal(ones[0].asnumpy(), 2.0)
    np.testing.assert_array_equal(mod._param_dict[1]["fc_weight"].asnumpy(), 1.0)


def test_checkpoint_reloads_into_a_plain_module(tmp_path):
    """Module.load (also as SVRGModule.load) builds a Module whose SGD takes the states an
    SVRGModule saved, as MXNet's."""
    mod = _bound()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    prefix = str(tmp_path / "svrg")
    mod.save_checkpoint(prefix, 0, save_optimizer_states=True)
    mod2 = SVRGModule.load(prefix, 0, load_optimizer_states=True, data_names=("data",),
                           label_names=("lin_label",))
    mod2.bind(data_shapes=[("data", (4, 3))], label_shapes=[("lin_label", (4,))])
    mod2.init_optimizer(optimizer_params={"learning_rate": 0.1})
    assert mod2._symbol.tojson() == mod._symbol.tojson()
