"""Module behaviours probed on MXNet 1.9.1: layouts over devices, kvstore choice, state
saving over devices, set_params leniency, unbound errors."""
import numpy as np
import pytest

import sparsym as mx


def test_tnc_layout_splits_the_batch_axis_over_devices():
    sym = mx.sym.Activation(mx.sym.Variable("data"), act_type="relu", __layout__="TNC")
    for dtype in ("float16", "float64"):
        mod = mx.mod.Module(sym, ("data",), None, context=[mx.cpu(0), mx.cpu(1)])
        mod.bind(data_shapes=[mx.io.DataDesc("data", (5, 20, 10), dtype, "TNC")])
        mod.init_params()
        x = mx.nd.array(np.random.RandomState(0).randn(5, 20, 10), dtype=dtype)
        mod.forward(mx.io.DataBatch(data=[x], label=None))
        mod.backward([mx.nd.ones((5, 20, 10), dtype=dtype)])
        out = mod.get_outputs()[0]
        assert out.dtype == np.dtype(dtype) and out.shape == (5, 20, 10)
        np.testing.assert_array_equal(out.asnumpy(), np.maximum(x.asnumpy(), 0))
        parts = mod.get_outputs(merge_multi_context=False)[0]
        assert [p.shape for p in parts] == [(5, 10, 10), (5, 10, 10)]
        assert mod.output_shapes[0][1] == (5, 20, 10)  # the batch axis is T's neighbour N


def test_input_grads_over_devices():
    sym = mx.sym.Variable("a") + mx.sym.Variable("b") * 2 + mx.sym.Variable("c") * 3
    mod = mx.mod.Module(sym, ("b", "c", "a"), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[["b", (5, 5)], ["c", (5, 5)], ["a", (5, 5)]], inputs_need_grad=True)
    mod.init_params()
    mod.forward(mx.io.DataBatch(data=[mx.nd.ones((5, 5))] * 3, label=None))
    mod.backward([mx.nd.ones((5, 5))])
    grads = mod.get_input_grads()
    assert [g.shape for g in grads] == [(5, 5)] * 3
    assert [float(g.asnumpy()[0, 0]) for g in grads] == [2.0, 3.0, 1.0]


def _bn_net():
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=8, name="fc")
    return mx.sym.BatchNorm(fc, name="bn")


def test_several_devices_update_on_a_local_kvstore(tmp_path):
    mod = mx.mod.Module(_bn_net(), ("data",), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[("data", (10, 10))])
    mod.init_params()
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    # MXNet: 'local' with several devices runs the optimizer in the kvstore
    assert mod._kvstore is not None and mod._update_on_kvstore and mod._updater is None
    assert mod._optimizer.idx2name == {0: "fc_weight", 1: "fc_bias", 2: "bn_gamma",
                                       3: "bn_beta"}
    mod.forward(mx.io.DataBatch([mx.nd.ones((10, 10))]), is_train=True)
    mod.backward([mx.nd.ones((10, 8))])
    mod.update()
    prefix = str(tmp_path / "m")
    mod.save_checkpoint(prefix, 0, save_optimizer_states=True)
    mod2 = mx.mod.Module.load(prefix, 0, load_optimizer_states=True, data_names=("data",),
                              label_names=None)
    mod2.bind(data_shapes=[("data", (10, 10))])
    mod2.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    states = mod._kvstore._updater.states
    assert set(states) == set(mod2._updater.states) and states
    for k in states:
        np.testing.assert_array_equal(states[k].asnumpy(), mod2._updater.states[k].asnumpy())
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(v.asnumpy(), mod2.get_params()[0][k].asnumpy())


def test_one_device_needs_no_kvstore():
    mod = mx.mod.Module(_bn_net(), ("data",), None)
    mod.bind(data_shapes=[("data", (4, 10))])
    mod.init_params()
    mod.init_optimizer()
    assert mod._kvstore is None and not mod._update_on_kvstore
    assert mod.label_shapes is None


def test_set_params_extra_and_missing():
    mod = mx.mod.Module(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4,
                                              name="fc"), label_names=None)
    mod.bind(data_shapes=[("data", (2, 3))])
    arg = {"fc_weight": mx.nd.ones((4, 3)), "fc_bias": mx.nd.ones((4,))}
    mod.set_params(dict(arg, extra=mx.nd.ones((1,))), {})  # ignored, as in MXNet
    assert sorted(mod.get_params()[0]) == ["fc_bias", "fc_weight"]
    with pytest.raises(RuntimeError, match="fc_bias is not presented"):
        mod.set_params({"fc_weight": arg["fc_weight"]}, {})
    with pytest.raises(ValueError, match="extra"):
        mod.set_params({"extra": mx.nd.ones((1,))}, {}, allow_missing=True)


def test_unbound_module_errors():
    mod = mx.mod.Module(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4),
                        label_names=None)
    batch = mx.io.DataBatch([mx.nd.ones((2, 3))])
    for call in (lambda: mod.forward(batch), mod.backward, mod.get_outputs, mod.update,
                 mod.get_input_grads):
        with pytest.raises(mx.MXNetError, match="bind"):
            call()
    mod.bind(data_shapes=[("data", (2, 3))])
    mod.init_params()
    with pytest.raises(mx.MXNetError, match="init_optimizer"):
        mod.update()


def test_missing_label_name_warns():
    with pytest.warns(UserWarning, match="label_names=\\['softmax_label'\\]"):
        mx.mod.Module(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=4))


def test_group2ctxs_dict_expands_per_device():
    """MXNet accepts group2ctxs as a dict of a context, or of one or n contexts per group."""
    with mx.AttrScope(ctx_group="dev1"):
        a = mx.sym.Variable("a") * 2
    with mx.AttrScope(ctx_group="dev2"):
        c = a + mx.sym.Variable("b")
    ones = [mx.nd.ones((2, 5)), mx.nd.ones((2, 5))]
    for ctxs, g2c in [([mx.cpu(0)], {"dev1": mx.cpu(1), "dev2": mx.cpu(2)}),
                      ([mx.cpu(0), mx.cpu(1)], {"dev1": mx.cpu(2), "dev2": [mx.cpu(3)]}),
                      ([mx.cpu(0), mx.cpu(1)], {"dev1": [mx.cpu(2), mx.cpu(4)], "dev2": mx.cpu(3)}),
                      ([mx.cpu(0), mx.cpu(1)], [{"dev1": mx.cpu(2)}, {"dev1": mx.cpu(4)}])]:
        mod = mx.mod.Module(c, context=ctxs, data_names=["a", "b"], label_names=None,
                            group2ctxs=g2c)
        mod.bind(data_shapes=[("a", (2, 5)), ("b", (2, 5))], inputs_need_grad=True)
        mod.init_params()
        mod.forward(mx.io.DataBatch(data=ones), is_train=True)
        mod.backward([mx.nd.ones((2, 5))])
        np.testing.assert_array_equal(mod.get_input_grads()[0].asnumpy(), np.full((2, 5), 2.0))
    mod = mx.mod.Module(c, context=[mx.cpu(0), mx.cpu(1)], data_names=["a", "b"],
                        label_names=None, group2ctxs={"dev1": [mx.cpu(1)] * 3})
    with pytest.raises(ValueError, match="group2ctxs"):
        mod.bind(data_shapes=[("a", (2, 5)), ("b", (2, 5))])


def test_forward_takes_a_batch_without_label_attribute():
    """A namedtuple with only ``data`` (MXNet's predict idiom), also with a new shape."""
    from collections import namedtuple
    batch = namedtuple("Batch", ["data"])
    mod = mx.mod.Module(mx.sym.Variable("data") * 2, label_names=None)
    mod.bind(data_shapes=[("data", (1, 10))])
    mod.init_params()
    mod.forward(batch([mx.nd.ones((1, 10))]))
    assert mod.get_outputs()[0].shape == (1, 10)
    mod.forward(batch([mx.nd.ones((3, 5))]))
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.full((3, 5), 2.0))
