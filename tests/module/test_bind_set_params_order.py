"""Module.bind creates the parameter dicts (zeros), so set_params(allow_missing=True) then
init_optimizer work in Keras-MXNet's order; values as MXNet 1.9.1 gives them."""
import numpy as np

import sparsym as mx


def test_bind_then_partial_set_params_then_init_optimizer():
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    net = mx.sym.BatchNorm(net, fix_gamma=False, name="bn")
    net = mx.sym.LinearRegressionOutput(net, name="out")
    mod = mx.mod.Module(net, data_names=["data"], label_names=["out_label"])
    mod.bind(data_shapes=[("data", (4, 3))], label_shapes=[("out_label", (4, 2))])
    assert not mod.params_initialized
    assert sorted(mod._arg_params) == ["bn_beta", "bn_gamma", "fc_bias", "fc_weight"]
    assert sorted(mod._aux_params) == ["bn_moving_mean", "bn_moving_var"]
    mod.set_params({"fc_weight": mx.nd.ones((2, 3))}, {}, allow_missing=True)
    assert mod.params_initialized
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    args, auxs = mod.get_params()
    assert args["fc_weight"].asnumpy().tolist() == [[1.0] * 3] * 2
    for name in ("bn_beta", "bn_gamma", "fc_bias"):       # missing ones stay zero
        assert args[name].asnumpy().tolist() == [0.0, 0.0]
    assert auxs["bn_moving_var"].asnumpy().tolist() == [0.0, 0.0]
    batch = mx.io.DataBatch([mx.nd.array(np.arange(12).reshape(4, 3))], [mx.nd.ones((4, 2))])
    mod.forward_backward(batch)
    mod.update()
    args, _ = mod.get_params()
    # MXNet 1.9.1: beta moves by lr * mean(1 - 0) = 0.05; the rest keep their values
    np.testing.assert_allclose(args["bn_beta"].asnumpy(), [0.05, 0.05], rtol=1e-6)
    assert args["fc_weight"].asnumpy().tolist() == [[1.0] * 3] * 2


def test_init_params_after_bind_still_initializes():
    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    mod = mx.mod.Module(net, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (1, 3))], for_training=False)
    mod.init_params(mx.init.Constant(0.5))
    assert mod.get_params()[0]["fc_weight"].asnumpy().tolist() == [[0.5] * 3] * 2
