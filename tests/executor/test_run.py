"""Executor behaviour: forward/backward, gradients, dicts, copy_params_from, reshape,
monitor callbacks, debug_str, the storage report and kernel errors."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import MXNetError, ShapeError
from sparsym.ops.core.registry import Dispatch, OpDef, has_op, register


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


def _mlp():
    fc = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=4, name="fc")
    act = mx.sym.Activation(fc, act_type="tanh", name="act")
    return mx.sym.FullyConnected(act, num_hidden=3, name="fc2")


def _ref_mlp(v):
    h = np.tanh(v["x"] @ v["fc_weight"].T + v["fc_bias"])
    return h, h @ v["fc2_weight"].T + v["fc2_bias"]


def _randomize(exe, seed=0):
    rng = np.random.RandomState(seed)
    vals = {}
    for n, a in exe.arg_dict.items():
        vals[n] = rng.uniform(-1, 1, a.shape).astype(np.float32)
        a[:] = vals[n]
    return vals


# ---------------------------------------------------------------------- forward/backward
def test_forward_backward_against_numpy():
    exe = _mlp().simple_bind(mx.cpu(), x=(5, 6))
    v = _randomize(exe)
    h, out = _ref_mlp(v)
    got = exe.forward(is_train=True)
    assert got is exe.outputs
    np.testing.assert_allclose(got[0].asnumpy(), out, rtol=1e-5, atol=1e-6)
    og = np.random.RandomState(1).rand(5, 3).astype(np.float32)
    exe.backward(mx.nd.array(og))
    np.testing.assert_allclose(exe.grad_dict["fc2_weight"].asnumpy(), og.T @ h, rtol=1e-4,
                               atol=1e-6)
    dh = (og @ v["fc2_weight"]) * (1 - h * h)
    np.testing.assert_allclose(exe.grad_dict["fc_weight"].asnumpy(), dh.T @ v["x"], rtol=1e-4,
                               atol=1e-6)
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), dh @ v["fc_weight"], rtol=1e-4,
                               atol=1e-6)
    assert list(exe.output_dict) == ["fc2_output"]
    assert exe.output_dict["fc2_output"] is exe.outputs[0]


def test_head_gradient_forms_and_errors():
    x = mx.sym.var("x")
    g = mx.sym.Group([x * 2, x * 3])
    exe = g.simple_bind(mx.cpu(), x=(2,))
    exe.forward(is_train=True, x=mx.nd.array([1.0, 1.0]))
    with pytest.raises(MXNetError, match="head_gradient is required when calling backward"):
        exe.backward()
    with pytest.raises(MXNetError, match="make_loss"):
        exe.backward([mx.nd.ones(2)])
    exe.backward([mx.nd.ones(2), mx.nd.ones(2)])
    assert exe.grad_dict["x"].asnumpy().tolist() == [5.0, 5.0]
    names = exe._plan.output_names
    exe.backward({names[0]: mx.nd.ones(2), names[1]: mx.nd.zeros(2)})
    assert exe.grad_dict["x"].asnumpy().tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match="inputs must be NDArray"):
        exe.backward([np.ones(2), np.ones(2)])
    with pytest.raises(ShapeError, match="head gradient 0"):
        exe.backward([mx.nd.ones(3), mx.nd.ones(2)])
    single = (x * 2).simple_bind(mx.cpu(), x=(2,))
    single.forward(is_train=True)
    single.backward(mx.nd.ones(2))
    assert single.grad_dict["x"].asnumpy().tolist() == [2.0, 2.0]


def test_loss_heads_need_no_head_gradient():
    data = mx.sym.var("data")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), name="sm")
    exe = net.simple_bind(mx.cpu(), data=(4, 5))
    _randomize(exe)
    exe.arg_dict["sm_label"][:] = np.array([0, 1, 2, 1], np.float32)
    exe.forward(is_train=True)
    exe.backward()
    p = exe.outputs[0].asnumpy()
    onehot = np.eye(3, dtype=np.float32)[[0, 1, 2, 1]]
    np.testing.assert_allclose(exe.grad_dict["fc_bias"].asnumpy(), (p - onehot).sum(0),
                               rtol=1e-5, atol=1e-6)


def test_grad_req_add_write_null_and_unreached():
    x, y, z = mx.sym.var("x"), mx.sym.var("y"), mx.sym.var("z")
    g = mx.sym.Group([x * y, z])
    exe = g.simple_bind(mx.cpu(), grad_req={"x": "add", "y": "write", "z": "write"},
                        x=(2,), y=(2,), z=(2,))
    exe.arg_dict["x"][:] = np.array([1.0, 2.0])
    exe.arg_dict["y"][:] = np.array([3.0, 4.0])
    exe.grad_dict["z"][:] = np.array([9.0, 9.0])
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward([mx.nd.ones(2), mx.nd.ones(2)])
    assert exe.grad_dict["x"].asnumpy().tolist() == [6.0, 8.0]     # accumulated twice
    assert exe.grad_dict["y"].asnumpy().tolist() == [1.0, 2.0]     # overwritten
    assert exe.grad_dict["z"].asnumpy().tolist() == [1.0, 1.0]
    only = (x * 2).simple_bind(mx.cpu(), grad_req="write", x=(2,))
    only.forward(is_train=True)
    only.backward(mx.nd.ones(2))
    only.backward(mx.nd.ones(2))   # a second backward recomputes what it needs
    assert only.grad_dict["x"].asnumpy().tolist() == [2.0, 2.0]


def test_backward_after_inference_forward_and_before_forward():
    exe = _mlp().simple_bind(mx.cpu(), x=(3, 6))
    v = _randomize(exe)
    exe.backward(mx.nd.ones((3, 3)))  # no forward yet: the training forward runs first
    h, _ = _ref_mlp(v)
    np.testing.assert_allclose(exe.grad_dict["fc2_bias"].asnumpy(), [3.0, 3.0, 3.0])
    exe.forward()   # inference schedule: intermediates are dropped as soon as possible
    exe.backward(mx.nd.ones((3, 3)))
    h, _ = _ref_mlp(v)
    np.testing.assert_allclose(exe.grad_dict["fc2_bias"].asnumpy(), [3.0, 3.0, 3.0])
    np.testing.assert_allclose(exe.grad_dict["fc2_weight"].asnumpy(),
                               np.ones((3, 3), np.float32).T @ h, rtol=1e-4)


def test_forward_kwargs_errors_and_numpy_inputs():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    e = (x + y).simple_bind(mx.cpu(), x=(2, 3), y=(2, 3))
    with pytest.raises(TypeError, match="Unknown argument z"):
        e.forward(z=mx.nd.ones((2, 3)))
    with pytest.raises(ValueError, match=r"Shape not match! Argument x, need: \(2, 3\), "
                       r"received: \(3, 3\)"):
        e.forward(x=mx.nd.ones((3, 3)))
    with pytest.raises(ValueError, match="only accept keyword argument of NDArrays and "
                       "numpy.ndarray"):
        e.forward(x=[1, 2])
    out = e.forward(x=np.ones((2, 3)), y=mx.nd.ones((2, 3)))
    assert out[0].asnumpy().tolist() == [[2.0] * 3] * 2


def test_outputs_stay_valid_objects_across_forwards():
    x = mx.sym.var("x")
    e = (x * 2).simple_bind(mx.cpu(), x=(2,))
    out = e.outputs[0]
    e.forward(x=mx.nd.array([1.0, 2.0]))
    first = out.asnumpy().copy()
    e.forward(x=mx.nd.array([5.0, 6.0]))
    assert first.tolist() == [2.0, 4.0] and out.asnumpy().tolist() == [10.0, 12.0]


# ---------------------------------------------------------------------- params & reshape
def test_copy_params_from():
    bn = mx.sym.BatchNorm(mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=3, name="fc"),
                          name="bn")
    e = bn.simple_bind(mx.cpu(), x=(2, 4))
    w = np.arange(12, dtype=np.float64).reshape(3, 4)
    e.copy_params_from({"fc_weight": mx.nd.array(w)}, {"bn_moving_var": mx.nd.full(3, 2.0)})
    assert e.arg_dict["fc_weight"].dtype == np.float32
    np.testing.assert_allclose(e.arg_dict["fc_weight"].asnumpy(), w)
    assert e.aux_dict["bn_moving_var"].asnumpy().tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(ValueError, match='Find name "foo" that is not in the arguments'):
        e.copy_params_from({"foo": mx.nd.ones(1)})
    with pytest.raises(ValueError, match="Find name foo that is not in the auxiliary states"):
        e.copy_params_from({}, {"foo": mx.nd.ones(1)})
    e.copy_params_from({"foo": mx.nd.ones(1)}, {"bar": mx.nd.ones(1)}, allow_extra_params=True)
    with pytest.raises(ShapeError, match=r"fc_weight has shape \(4, 4\)"):
        e.copy_params_from({"fc_weight": mx.nd.ones((4, 4))})


def test_reshape_shares_memory_and_checks_like_mxnet():
    net = _mlp()
    e = net.simple_bind(mx.cpu(), x=(5, 6))
    v = _randomize(e)
    small = e.reshape(x=(2, 6))
    for n in ("fc_weight", "fc_bias", "fc2_weight", "fc2_bias"):
        assert small.arg_dict[n] is e.arg_dict[n] and small.grad_dict[n] is e.grad_dict[n]
    assert small.arg_dict["x"].shape == (2, 6)
    assert np.shares_memory(small.arg_dict["x"]._raw, e.arg_dict["x"]._raw)
    assert small.pool is e.pool
    _, out = _ref_mlp({**v, "x": v["x"].reshape(-1)[:12].reshape(2, 6)})
    np.testing.assert_allclose(small.forward()[0].asnumpy(), out, rtol=1e-5, atol=1e-6)
    # outputs share memory too (MXNet): the small executor writes into e's output rows
    np.testing.assert_allclose(e.outputs[0].asnumpy()[:2], out, rtol=1e-5, atol=1e-6)
    e.forward()
    _, full = _ref_mlp(v)
    np.testing.assert_allclose(e.outputs[0].asnumpy(), full, rtol=1e-5, atol=1e-6)
    with pytest.raises(MXNetError, match="New shape of arg: x is larger than original"):
        e.reshape(x=(9, 6))
    big = e.reshape(allow_up_sizing=True, x=(9, 6))
    assert big.arg_dict["x"].shape == (9, 6) and big.arg_dict["fc_weight"] is e.arg_dict[
        "fc_weight"]
    with pytest.raises(MXNetError, match="Shape of unspecifie arg: fc_weight changed"):
        e.reshape(x=(5, 2))
    part = e.reshape(partial_shaping=True, x=(5, 2))
    assert part.arg_dict["fc_weight"].shape == (4, 2)
    assert np.shares_memory(part.arg_dict["fc_weight"]._raw, e.arg_dict["fc_weight"]._raw)
    x, y = mx.sym.var("x"), mx.sym.var("y")
    ex = (x + y).simple_bind(mx.cpu(), x=(2, 3), y=(2, 3))
    with pytest.raises(MXNetError, match="Shape of unspecifie arg: y changed"):
        ex.reshape(x=(1, 3))
    assert ex.reshape(x=(1, 3), y=(1, 3)).arg_dict["y"].shape == (1, 3)
    seen = []
    ex.set_monitor_callback(lambda n, a: seen.append(n))
    ex.reshape(x=(1, 3), y=(1, 3)).forward()
    assert seen


# ---------------------------------------------------------------------- monitor & views
def test_monitor_callback_outputs_and_inputs():
    exe = _mlp().simple_bind(mx.cpu(), grad_req="null", x=(2, 6))
    v = _randomize(exe)
    seen = {}
    exe.set_monitor_callback(lambda name, arr: seen.__setitem__(name, arr.asnumpy()))
    exe.forward()
    assert list(seen) == ["fc_output", "act_output", "fc2_output"]
    h, out = _ref_mlp(v)
    np.testing.assert_allclose(seen["act_output"], h, rtol=1e-5)
    seen.clear()
    exe.set_monitor_callback(lambda name, arr: seen.__setitem__(name, arr.asnumpy()), True)
    exe.forward()
    # MXNet's order: a variable an op reads, then the op's input (dict keys: first sight)
    assert list(seen) == ["x", "fc_data", "fc_weight", "fc_bias", "fc_output", "act_input0",
                          "act_output", "fc2_data", "fc2_weight", "fc2_bias", "fc2_output"]
    np.testing.assert_allclose(seen["fc2_data"], h, rtol=1e-5)
    train = _mlp().simple_bind(mx.cpu(), x=(2, 6))
    names = []
    train.set_monitor_callback(lambda name, arr: names.append(name))
    train.forward(is_train=True)
    train.backward(mx.nd.ones((2, 3)))
    assert any("backward" in n for n in names)


def test_debug_str_has_plan_and_memory_totals():
    exe = _mlp().simple_bind(mx.cpu(), x=(2, 6))
    text = exe.debug_str()
    assert text.startswith("Symbol Outputs:\n\toutput[0]=fc2(0)\n")
    assert "Op:FullyConnected, Name=fc\nInputs:\n\targ[0]=x(0) version=0" in text
    assert "Attrs:\n\tnum_hidden=4" in text and "Dispatch:fcompute" in text
    assert "Total 0 MB allocated" in text
    m = exe.memory_report()
    assert f"Total {m['total']} bytes allocated: arguments {m['arguments']}" in text
    assert m["arguments"] == sum(a.asnumpy().nbytes for a in exe.arg_arrays)
    assert "Intermediate plan:" in text


def test_storage_report_table_and_fallback_bytes():
    a = mx.sym.var("a", stype="csr")
    b = mx.sym.var("b", stype="row_sparse")
    w = mx.sym.var("w")
    net = mx.sym.Group([mx.sym.dot(a, w), mx.sym.exp(b)])
    exe = net.simple_bind(mx.cpu(), grad_req="null", a=(4, 5), w=(5, 2), b=(6, 3))
    rep = exe.storage_report()
    rows = {r.op: r for r in rep.rows}
    assert rows["dot"].in_stypes == ("csr", "default") and rows["dot"].mode == "sparse"
    assert rows["exp"].mode == "fallback" and rows["exp"].densified_bytes == 6 * 3 * 4
    assert rep.densified_bytes == 72 and [r.op for r in rep.fallbacks] == ["exp"]
    text = str(rep)
    lines = text.splitlines()
    assert lines[0].split() == ["node", "op", "inputs", "outputs", "dispatch",
                                "densified_bytes"]
    assert any(ln.split()[:2] == ["dot0", "dot"] and "csr,default" in ln for ln in lines)
    assert lines[-1] == "1 fallback node(s), 72 bytes densified per run"
    assert rep.as_dicts()[0]["node"] == "dot0"


# ---------------------------------------------------------------------- kernel errors
def _register_failing_op():
    if has_op("_test_fails"):
        return

    def kernel(attrs, xs):
        raise ZeroDivisionError("boom")
    register(OpDef("_test_fails", dispatch=(Dispatch(("default",), ("default",), kernel),)))


def test_kernel_errors_keep_type_and_name_the_node():
    from sparsym.ops.core import registry
    from sparsym.symbol.op import call
    _register_failing_op()
    try:
        x = mx.sym.var("x")
        s = call("_test_fails", [x * 2], {}, name="bad")
        exe = s.simple_bind(mx.cpu(), grad_req="null", x=(2,))
        with pytest.raises(ZeroDivisionError) as err:
            exe.forward()
        assert str(err.value) == "boom\n  while executing node bad (_test_fails)"
        with pytest.raises(ZeroDivisionError) as err:
            exe.forward()
        assert str(err.value).count("while executing") == 1
    finally:
        registry._OPS.pop("_test_fails", None)


def test_second_backward_recomputes_or_refuses_for_stateful_graphs():
    x = mx.sym.var("x")
    drop = mx.sym.Dropout(x, p=0.5).simple_bind(mx.cpu(), x=(50,))
    drop.forward(is_train=True, x=np.ones(50, np.float32))
    drop.backward(mx.nd.ones(50))
    first = drop.grad_dict["x"].asnumpy().copy()
    np.testing.assert_allclose(first, drop.outputs[0].asnumpy())   # mask / (1 - p)
    with pytest.raises(MXNetError, match="backward called again without a new forward"):
        drop.backward(mx.nd.ones(50))
    drop.forward(is_train=False)
    drop.backward(mx.nd.ones(50))      # inference forward: deterministic, recomputed
    np.testing.assert_allclose(drop.grad_dict["x"].asnumpy(), np.ones(50))
