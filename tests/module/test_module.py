"""Module API through mx.mod: bind, params, optimizer, forward/backward/update, outputs,
states, reshape, multi-device, checkpoints (also MXNet 1.9.1's), monitor."""
from __future__ import annotations

import logging
import os

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import MXNetError

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mxnet")


def mlp(nh=8, nout=3):
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=nh, name="fc1")
    act = mx.sym.Activation(fc1, act_type="relu", name="relu1")
    fc2 = mx.sym.FullyConnected(act, num_hidden=nout, name="fc2")
    return mx.sym.SoftmaxOutput(fc2, name="softmax")


def toy(n=64, d=5, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.rand(n, d).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 1).astype(np.float32) + (x[:, 2] > 0.7)
    return x, y


def bound(ctx=None, bs=8, **kw):
    mod = mx.mod.Module(mlp(), context=ctx or mx.cpu(), **kw)
    mod.bind(data_shapes=[("data", (bs, 5))], label_shapes=[("softmax_label", (bs,))])
    mod.init_params(mx.init.Xavier())
    return mod


def batch(x, y):
    return mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])


# --------------------------------------------------------------------------- mxnet ckpt
def test_mxnet_checkpoint_loads_and_predicts_the_same():
    z = np.load(os.path.join(FIX, "mlp_ckpt_predict.npz"))
    mod = mx.mod.Module.load(os.path.join(FIX, "mlp_ckpt"), 1)
    mod.bind(data_shapes=[("data", (4, 5))], for_training=False)
    out = mod.predict(mx.io.NDArrayIter(z["data"], batch_size=4))
    np.testing.assert_allclose(out.asnumpy(), z["softmax_output"], rtol=1e-5, atol=1e-6)
    arg, aux = mod.get_params()
    assert sorted(arg) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"] and aux == {}


def test_mxnet_checkpoint_continues_training(tmp_path):
    z = np.load(os.path.join(FIX, "mlp_ckpt_predict.npz"))
    mod = mx.mod.Module.load(os.path.join(FIX, "mlp_ckpt"), 1)
    it = mx.io.NDArrayIter(z["train_x"], z["train_y"], batch_size=8)
    mod.fit(it, num_epoch=3, begin_epoch=1, optimizer_params={"learning_rate": 0.1})
    acc = dict(mod.score(it, "acc"))["accuracy"]
    assert 0.0 <= acc <= 1.0


# --------------------------------------------------------------------------- basics
def test_bind_init_forward_backward_update():
    x, y = toy(8)
    mod = bound()
    assert mod.data_names == ["data"] and mod.label_names == ["softmax_label"]
    assert mod.output_names == ["softmax_output"]
    assert mod.output_shapes == [("softmax_output", (8, 3))]
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 1.0})
    before = mod.get_params()[0]["fc2_weight"].asnumpy().copy()
    mod.forward_backward(batch(x, y))
    out = mod.get_outputs()[0].asnumpy()
    np.testing.assert_allclose(out.sum(1), 1, rtol=1e-5)
    mod.update()
    after = mod.get_params()[0]["fc2_weight"].asnumpy()
    assert not np.allclose(before, after)
    with pytest.raises(MXNetError, match="inputs_need_grad"):
        mod.get_input_grads()


def test_init_params_missing_extra_force():
    mod = bound()
    arg, _ = mod.get_params()
    partial = {k: v for k, v in arg.items() if k != "fc1_bias"}
    with pytest.raises(RuntimeError, match="fc1_bias is not presented"):
        mod.set_params(partial, {})
    mod.set_params(partial, {}, allow_missing=True)
    extra = dict(arg, junk=mx.nd.zeros((1,)))
    mod.set_params(extra, {})  # MXNet: init_params ignores names the module does not have
    with pytest.raises(ValueError, match="junk"):  # copied into the executors: refused
        mod.set_params(extra, {}, allow_missing=True)
    mod.set_params(extra, {}, allow_missing=True, allow_extra=True)
    with pytest.warns(UserWarning, match="already initialized"):
        mod.init_params()
    new = {k: mx.nd.ones(v.shape) for k, v in arg.items()}
    mod.init_params(arg_params=new, force_init=True)
    np.testing.assert_array_equal(mod.get_params()[0]["fc1_weight"].asnumpy(), 1)
    with pytest.raises(MXNetError, match="bind"):
        mx.mod.Module(mlp()).init_params()


def test_variable_init_attribute_wins():
    data = mx.sym.Variable("data")
    w = mx.sym.Variable("fc_weight", init=mx.init.Constant(0.5))
    net = mx.sym.FullyConnected(data, weight=w, num_hidden=2, name="fc")
    mod = mx.mod.Module(net, label_names=None)
    mod.bind(data_shapes=[("data", (2, 3))])
    mod.init_params(mx.init.Uniform(0.1))
    arg = mod.get_params()[0]
    np.testing.assert_array_equal(arg["fc_weight"].asnumpy(), 0.5)
    np.testing.assert_array_equal(arg["fc_bias"].asnumpy(), 0)


def test_forward_new_shape_reshapes():
    x, y = toy(12)
    mod = bound(bs=8)
    mod.forward(batch(x, y), is_train=False)
    assert mod.get_outputs()[0].shape == (12, 3)
    mod.forward(batch(x[:3], y[:3]), is_train=False)
    assert mod.get_outputs()[0].shape == (3, 3)
    mod.reshape([("data", (5, 5))], [("softmax_label", (5,))])
    assert mod.data_shapes[0].shape == (5, 5)


def test_inputs_need_grad_and_fixed_params():
    x, y = toy(8)
    mod = mx.mod.Module(mlp(), fixed_param_names=["fc1_weight"])
    mod.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))],
             inputs_need_grad=True)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    fixed = mod.get_params()[0]["fc1_weight"].asnumpy().copy()
    mod.forward_backward(batch(x, y))
    mod.update()
    (g,) = mod.get_input_grads()
    assert g.shape == (8, 5) and np.abs(g.asnumpy()).sum() > 0
    np.testing.assert_array_equal(mod.get_params()[0]["fc1_weight"].asnumpy(), fixed)


def test_grad_req_add_accumulates():
    x, y = toy(8)
    mod = mx.mod.Module(mlp())
    mod.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))],
             grad_req="add")
    mod.init_params(mx.init.Xavier())
    mod.forward_backward(batch(x, y))
    g1 = mod._exec_group.grad_arrays[0][0].asnumpy().copy()
    mod.forward_backward(batch(x, y))
    np.testing.assert_allclose(mod._exec_group.grad_arrays[0][0].asnumpy(), 2 * g1, rtol=1e-5)


def test_states():
    data = mx.sym.Variable("data")
    state = mx.sym.Variable("state")
    net = mx.sym.elemwise_add(data, state, name="out")
    mod = mx.mod.Module(net, label_names=None, state_names=["state"],
                        context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[("data", (4, 2))])
    mod.init_params()
    mod.set_states(value=1.0)
    mod.forward(mx.io.DataBatch([mx.nd.zeros((4, 2))], None), is_train=False)
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), 1)
    mod.set_states(states=[mx.nd.array(np.arange(8).reshape(4, 2))])
    (merged,) = mod.get_states()
    np.testing.assert_array_equal(merged.asnumpy(), np.arange(8).reshape(4, 2))
    per_dev = mod.get_states(merge_multi_context=False)
    assert len(per_dev[0]) == 2 and per_dev[0][1].shape == (2, 2)


def test_optimizer_instance_gets_names_and_multipliers():
    mod = bound()
    opt = mx.optimizer.SGD(learning_rate=0.1, wd=0.1, rescale_grad=1.0 / 8)
    mod.init_optimizer(optimizer=opt)
    assert opt.idx2name[0] == "fc1_weight"
    idx_bias = mod._exec_group.param_names.index("fc1_bias")
    assert opt._get_wd(idx_bias) == 0.0 and opt._get_wd(0) == pytest.approx(0.1)
    mod2 = bound()
    with pytest.warns(UserWarning, match="rescale_grad is not normalized"):
        mod2.init_optimizer(optimizer=mx.optimizer.SGD(learning_rate=0.1))


def test_optimizer_string_rescale_and_borrow():
    mod = bound(bs=8)
    mod.init_optimizer(optimizer="adam")
    assert mod._optimizer.rescale_grad == pytest.approx(1 / 8)
    other = mx.mod.Module(mlp())
    other.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))],
               shared_module=mod)
    assert other.optimizer_initialized and other._optimizer is mod._optimizer
    # shared parameters: one set of arrays
    assert other._exec_group.param_arrays[0][0] is mod._exec_group.param_arrays[0][0]


# --------------------------------------------------------------------------- devices
def test_two_devices_match_one_device():
    x, y = toy(24)
    results = []
    for ctx, wl in (([mx.cpu()], None), ([mx.cpu(0), mx.cpu(1)], [1, 2])):
        mx.random.seed(3)
        mod = mx.mod.Module(mlp(), context=ctx, work_load_list=wl)
        mod.bind(data_shapes=[("data", (12, 5))], label_shapes=[("softmax_label", (12,))])
        mod.init_params(mx.init.Xavier())
        mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5,
                                                              "momentum": 0.9, "wd": 0.01})
        if wl:
            assert [(s.start, s.stop) for s in mod._exec_group.slices] == [(0, 4), (4, 12)]
        for k in range(2):
            mod.forward_backward(batch(x[12 * k:12 * k + 12], y[12 * k:12 * k + 12]))
            mod.update()
        results.append((mod.get_params()[0], mod.get_outputs()[0].asnumpy()))
    for name in results[0][0]:
        np.testing.assert_allclose(results[0][0][name].asnumpy(), results[1][0][name].asnumpy(),
                                   rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-4, atol=1e-6)


def test_too_many_devices_for_batch():
    mod = mx.mod.Module(mlp(), context=[mx.cpu(0), mx.cpu(1), mx.cpu(2)])
    with pytest.raises(MXNetError, match="cannot be split"):
        mod.bind(data_shapes=[("data", (2, 5))], label_shapes=[("softmax_label", (2,))])


# --------------------------------------------------------------------------- checkpoints
def test_checkpoint_round_trip_with_optimizer_states(tmp_path):
    x, y = toy(32)
    it = mx.io.NDArrayIter(x, y, batch_size=8)
    mod = mx.mod.Module(mlp())
    mod.fit(it, num_epoch=2, optimizer="adam", initializer=mx.init.Xavier())
    prefix = str(tmp_path / "m")
    mod.save_checkpoint(prefix, 2, save_optimizer_states=True)
    assert sorted(os.listdir(tmp_path)) == ["m-0002.params", "m-0002.states", "m-symbol.json"]
    mod.fit(it, num_epoch=3, begin_epoch=2, optimizer="adam", force_init=False)
    want = mod.get_params()[0]
    # MXNet restarts Adam's update counts on load (test_optimizer_resume.py); continuing
    # them is the explicit option
    mod2 = mx.mod.Module.load(prefix, 2, load_optimizer_states=True, resume_update_counts=True)
    mod2.fit(it, num_epoch=3, begin_epoch=2, optimizer="adam")
    for k, v in mod2.get_params()[0].items():
        np.testing.assert_allclose(v.asnumpy(), want[k].asnumpy(), rtol=1e-5, atol=1e-6)


def test_interrupted_save_keeps_previous_checkpoint(tmp_path, monkeypatch):
    mod = bound()
    prefix = str(tmp_path / "m")
    mod.save_checkpoint(prefix, 1)
    before = open(prefix + "-0001.params", "rb").read()
    mod.set_params({k: mx.nd.ones(v.shape) for k, v in mod.get_params()[0].items()}, {})

    def boom(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError, match="disk full"):
        mod.save_checkpoint(prefix, 1)
    monkeypatch.undo()
    assert open(prefix + "-0001.params", "rb").read() == before
    assert sorted(os.listdir(tmp_path)) == ["m-0001.params", "m-symbol.json"]


def test_save_load_params(tmp_path):
    mod = bound()
    f = str(tmp_path / "p.params")
    mod.save_params(f)
    mod2 = bound()
    mod2.load_params(f)
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(v.asnumpy(), mod2.get_params()[0][k].asnumpy())


# --------------------------------------------------------------------------- monitor
def test_install_monitor_collects_stats(caplog):
    x, y = toy(8)
    mod = bound()
    mod.init_optimizer()
    mon = mx.monitor.Monitor(1, pattern="fc1.*", sort=True)
    mod.install_monitor(mon)
    mon.tic()
    mod.forward_backward(batch(x, y))
    res = mon.toc()
    names = [k for _, k, _ in res]
    assert "fc1_output" in names and "fc1_weight" in names and names == sorted(names)
    w = mod._exec_group.param_arrays[0][0].asnumpy()
    stat = float([v for _, k, v in res if k == "fc1_weight"][0])
    assert stat == pytest.approx(np.linalg.norm(w) / np.sqrt(w.size), rel=1e-5)
    mon.tic()  # step 1: interval 1 -> active again
    mod.forward(batch(x, y))
    with caplog.at_level(logging.INFO, logger="sparsym"):
        mon.toc_print()
    assert "fc1_output" in caplog.text


def test_force_rebind_keeps_trained_parameters():
    x, y = toy(8)
    mod = bound()
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    mod.forward_backward(batch(x, y))
    mod.update()
    w = mod._exec_group.param_arrays[0][0].asnumpy().copy()
    mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))],
             force_rebind=True)
    np.testing.assert_array_equal(mod.get_params()[0]["fc1_weight"].asnumpy(), w)
    np.testing.assert_array_equal(mod._exec_group.param_arrays[0][0].asnumpy(), w)


def test_group2ctxs_as_a_dict_of_contexts():
    # MXNet's model-parallel examples pass one dict for every device of the Module
    with mx.AttrScope(ctx_group="dev1"):
        fc1 = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=8, name="f1")
    with mx.AttrScope(ctx_group="dev2"):
        out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(fc1, num_hidden=2, name="f2"),
                                   name="softmax")
    mod = mx.mod.Module(out, group2ctxs={"dev1": mx.cpu(0), "dev2": [mx.cpu(1)]})
    mod.bind(data_shapes=[("data", (3, 4))], label_shapes=[("softmax_label", (3,))])
    mod.init_params(mx.init.Constant(0.1))
    mod.forward(mx.io.DataBatch([mx.nd.ones((3, 4))], [mx.nd.zeros(3)]))
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), np.full((3, 2), 0.5))
    with pytest.raises(ValueError, match="length of group2ctxs"):
        mx.mod.Module(out, group2ctxs=[{}, {}]).bind(data_shapes=[("data", (3, 4))])


def test_score_uses_a_user_metrics_get_name_value():
    class TwoTask(mx.metric.EvalMetric):
        def __init__(self):
            super().__init__("two")

        def update(self, labels, preds):
            self.num_inst += 1

        def get_name_value(self):
            return [("two-task0", 0.25), ("two-task1", 0.75)]

    mod = mx.mod.Module(mx.sym.SoftmaxOutput(mx.sym.FullyConnected(
        mx.sym.Variable("data"), num_hidden=2), name="softmax"))
    it = mx.io.NDArrayIter(np.ones((4, 3)), np.zeros(4), batch_size=2)
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params()
    assert mod.score(it, TwoTask()) == [("two-task0", 0.25), ("two-task1", 0.75)]


def test_bind_warns_when_label_shapes_do_not_match_label_names():
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2),
                               name="softmax")
    mod = mx.mod.Module(net)
    with pytest.warns(UserWarning, match=r"label_shapes don't match names specified by "
                                         r"label_names \(\[\] vs. \['softmax_label'\]\)"):
        mod.bind(data_shapes=[("data", (2, 3))], for_training=False)


def test_save_checkpoint_logs_params_and_optimizer_state(tmp_path, caplog):
    mod = mx.mod.Module(mx.sym.SoftmaxOutput(mx.sym.FullyConnected(
        mx.sym.Variable("data"), num_hidden=2), name="softmax"))
    mod.bind(data_shapes=[("data", (2, 3))], label_shapes=[("softmax_label", (2,))])
    mod.init_params()
    mod.init_optimizer()
    prefix = str(tmp_path / "m")
    with caplog.at_level(logging.INFO):
        mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    assert f'Saved checkpoint to "{prefix}-0001.params"' in caplog.text
    assert f'Saved optimizer state to "{prefix}-0001.states"' in caplog.text
