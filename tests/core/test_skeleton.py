"""The walking skeleton through the public API: arrays, registry, fallback policy, symbols,
executor, Module training with lazy sparse SGD."""
import logging

import numpy as np
import pytest
import scipy.sparse as sp

import sparsym as mx
from sparsym.base import MXNetError, NotImplementedForStype, ShapeError


# ---------------------------------------------------------------------- arrays
def test_dense_constructors_and_properties():
    a = mx.nd.array([[1, 2], [3, 4]])
    assert a.shape == (2, 2) and a.dtype == np.float32 and a.stype == "default"
    assert a.size == 4 and a.context == mx.cpu(0)
    assert mx.nd.zeros((2, 3), stype="csr").stype == "csr"
    assert mx.nd.zeros((2, 3), stype="row_sparse").stype == "row_sparse"
    assert mx.nd.ones((2,)).asnumpy().tolist() == [1, 1]
    assert mx.nd.empty((1, 2)).shape == (1, 2)
    assert mx.nd.arange(1, 4).asnumpy().tolist() == [1, 2, 3]
    assert mx.nd.arange(0, 6).reshape((2, 3)).shape == (2, 3)


def test_csr_constructors_and_zero_copy_scipy():
    m = sp.random(5, 7, density=0.3, format="csr", dtype=np.float32, random_state=1)
    a = mx.nd.sparse.csr_matrix(m)
    assert a.stype == "csr" and a.shape == (5, 7)
    np.testing.assert_array_equal(a.asnumpy(), m.toarray())
    s = a.asscipy()
    assert np.shares_memory(s.data, a.data.asnumpy()) is False  # asnumpy copies
    assert s.data is a._raw.data  # asscipy shares the buffers
    b = mx.nd.sparse.csr_matrix((m.data, m.indices, m.indptr), shape=m.shape)
    np.testing.assert_array_equal(b.asnumpy(), m.toarray())
    c = mx.nd.sparse.csr_matrix(m.toarray())
    np.testing.assert_array_equal(c.asnumpy(), m.toarray())
    assert a.indices.dtype == np.int64 and a.indptr.dtype == np.int64


def test_row_sparse_constructor_and_tostype_every_direction():
    r = mx.nd.sparse.row_sparse_array(([[1.0, 2.0], [3.0, 4.0]], [0, 2]), shape=(4, 2))
    dense = r.asnumpy()
    assert dense.tolist() == [[1, 2], [0, 0], [3, 4], [0, 0]]
    for src in ("default", "csr", "row_sparse"):
        x = r.tostype(src)
        for dst in ("default", "csr", "row_sparse"):
            y = x.tostype(dst)
            assert y.stype == dst
            np.testing.assert_array_equal(y.asnumpy(), dense)


def test_setitem_across_stypes_and_csr_slicing():
    x = mx.nd.zeros((2, 2), stype="csr")
    x[:] = mx.nd.ones((2, 2))
    assert x.stype == "csr" and x.asnumpy().tolist() == [[1, 1], [1, 1]]
    d = mx.nd.zeros((2, 2))
    d[:] = mx.nd.sparse.row_sparse_array(([[5.0, 6.0]], [1]), shape=(2, 2))
    assert d.asnumpy().tolist() == [[0, 0], [5, 6]]
    big = mx.test_utils.rand_ndarray((10, 6), "csr", 0.5)
    part = big[2:5]
    assert part.stype == "csr" and part.shape == (3, 6)
    np.testing.assert_array_equal(part.asnumpy(), big.asnumpy()[2:5])


def test_nd_ops_follow_storage_rows():
    c = mx.test_utils.rand_ndarray((4, 5), "csr", 0.4)
    w = mx.test_utils.rand_ndarray((5, 3), "row_sparse", 0.6)
    d = mx.nd.ones((5, 3))
    assert mx.nd.sparse.dot(c, d).stype == "default"
    assert mx.nd.sparse.dot(c, w).stype == "default"
    np.testing.assert_allclose(mx.nd.dot(c, w).asnumpy(), c.asnumpy() @ w.asnumpy(), rtol=1e-5)
    g = mx.nd.dot(c, mx.nd.ones((4, 3)), transpose_a=True)
    assert g.stype == "row_sparse"
    np.testing.assert_allclose(g.asnumpy(), c.asnumpy().T @ np.ones((4, 3)), rtol=1e-5)
    assert mx.nd.negative(c).stype == "csr"
    assert mx.nd.elemwise_add(w, w).stype == "row_sparse"
    assert mx.nd.log(mx.nd.ones((2, 2))).asnumpy().sum() == 0


# ---------------------------------------------------------------------- fallback policy
def _fallback_graph():
    b = mx.sym.Variable("b", stype="csr")
    c = mx.sym.Variable("c", stype="row_sparse")
    return mx.sym._power(b, c)  # csr ** row_sparse has no sparse kernel (dense fallback)


def test_fallback_warns_once_per_signature(caplog):
    caplog.set_level(logging.WARNING, logger="sparsym")
    for _ in range(3):
        _fallback_graph().simple_bind(mx.cpu(), b=(2, 2), c=(2, 2)).forward()
    msgs = [r.getMessage() for r in caplog.records if "Storage type fallback" in r.getMessage()]
    assert len(msgs) == 1
    assert "operator = _power" in msgs[0]
    assert "input storage types = [csr, row_sparse, ]" in msgs[0]


def test_fallback_silenced_by_env(caplog):
    caplog.set_level(logging.WARNING, logger="sparsym")
    with mx.test_utils.environment("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0"):
        _fallback_graph().simple_bind(mx.cpu(), b=(2, 2), c=(2, 2)).forward()
    assert not [r for r in caplog.records if "fallback" in r.getMessage()]


def test_fallback_raise_mode_fails_at_bind():
    with mx.test_utils.environment("SPARSYM_STORAGE_FALLBACK", "raise"):
        with pytest.raises(NotImplementedForStype, match=r"_power.*csr.*row_sparse"):
            _fallback_graph().simple_bind(mx.cpu(), b=(2, 2), c=(2, 2))


def test_verbose_storage_logging(caplog):
    caplog.set_level(logging.INFO, logger="sparsym")
    with mx.test_utils.environment("MXNET_INFER_STORAGE_TYPE_VERBOSE_LOGGING", "1"):
        x = mx.sym.Variable("x", stype="csr")
        mx.sym.dot(x, mx.sym.Variable("w")).simple_bind(mx.cpu(), x=(2, 3), w=(3, 4))
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "dot: fcompute_ex" in text and "input" in text


# ---------------------------------------------------------------------- symbol & executor
def test_variable_attrs_and_naming():
    init = mx.init.Normal(0.5)
    v = mx.sym.Variable("w", shape=(3, 4), dtype="float64", stype="row_sparse", init=init,
                        lr_mult=2.0, wd_mult=0.0, attr={"mood": "calm"})
    assert v.attr("__storage_type__") == "1"  # MXNet stores the stype id
    assert v.attr("__lr_mult__") == "2.0" and v.attr("mood") == "calm"
    fc = mx.sym.FullyConnected if hasattr(mx.sym, "FullyConnected") else None
    y = mx.sym.dot(v, mx.sym.Variable("x"))
    assert y.name.startswith("dot")
    g = mx.sym.Group([y, v])
    assert g.list_outputs() == [f"{y.name}_output", "w"]
    assert y.list_arguments() == ["w", "x"]
    assert fc is None or callable(fc)


def test_simple_bind_allocates_by_stype_and_lists_unknown_shapes():
    b = mx.sym.Variable("b", stype="csr")
    exe = b.simple_bind(mx.cpu(), b=(2, 2))
    assert exe.arg_dict["b"].stype == "csr" and exe.arg_dict["b"].asnumpy().sum() == 0
    x, w, z = mx.sym.Variable("x"), mx.sym.Variable("w"), mx.sym.Variable("z")
    net = mx.sym.dot(mx.sym.dot(x, w), z)
    with pytest.raises(ShapeError) as err:
        net.simple_bind(mx.cpu(), x=(2, 3))
    msg = str(err.value)
    assert "w:" in msg and "z:" in msg and "InferShape" in msg


def test_forward_backward_linear_model_gradients():
    data = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("w", stype="row_sparse")
    bias = mx.sym.Variable("bias")
    out = mx.sym.LinearRegressionOutput(mx.sym.broadcast_add(mx.sym.dot(data, w), bias),
                                        name="lro")
    exe = out.simple_bind(mx.cpu(), grad_req={"w": "write", "bias": "write"},
                          data=(4, 6), w=(6, 1), bias=(1,))
    x = mx.test_utils.rand_ndarray((4, 6), "csr", 0.5)
    wv = np.random.rand(6, 1).astype(np.float32)
    exe.arg_dict["data"][:] = x
    exe.arg_dict["w"][:] = mx.nd.array(wv)
    exe.arg_dict["lro_label"][:] = mx.nd.ones((4, 1))
    exe.forward(is_train=True)
    pred = x.asnumpy() @ wv
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), pred, rtol=1e-5)
    exe.backward()
    assert exe.grad_dict["w"].stype == "row_sparse"
    resid = pred - 1
    np.testing.assert_allclose(exe.grad_dict["w"].asnumpy(), x.asnumpy().T @ resid, rtol=1e-4)
    np.testing.assert_allclose(exe.grad_dict["bias"].asnumpy(), resid.sum(0), rtol=1e-4)


def test_backward_needs_head_grad_for_non_loss():
    x = mx.sym.Variable("x")
    exe = mx.sym.negative(x).simple_bind(mx.cpu(), x=(2,))
    exe.forward(is_train=True)
    with pytest.raises(MXNetError, match="head_gradient is required"):
        exe.backward()
    exe.backward(mx.nd.ones((2,)))
    assert exe.grad_dict["x"].asnumpy().tolist() == [-1, -1]


def test_softmax_output_trains_and_infers_label_shape():
    data = mx.sym.var("data", stype="csr", shape=(32, 100))
    weight = mx.sym.var("weight", stype="row_sparse", shape=(100, 2))
    bias = mx.sym.Variable("bias", shape=(2,))
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(data, weight), bias)
    out = mx.sym.SoftmaxOutput(data=pred, label=mx.sym.Variable("label"), name="output")
    exe = out.simple_bind(ctx=mx.cpu())
    assert exe.arg_dict["label"].shape == (32,)
    exe.arg_dict["data"][:] = mx.test_utils.rand_ndarray((32, 100), "csr", 0.1)
    exe.forward(is_train=True)
    p = exe.outputs[0].asnumpy()
    np.testing.assert_allclose(p.sum(1), 1, rtol=1e-5)
    exe.backward()
    assert exe.grad_dict["weight"].stype == "row_sparse"


# ---------------------------------------------------------------------- training stack
def test_lazy_sgd_momentum_touches_only_grad_rows():
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01)
    w = mx.nd.sparse.row_sparse_array(np.ones((5, 2), np.float32), shape=(5, 2))
    w = mx.nd.array(np.ones((5, 2), np.float32)).tostype("row_sparse")
    g = mx.nd.sparse.row_sparse_array(([[1.0, 1.0]], [3]), shape=(5, 2))
    upd = mx.optimizer.get_updater(opt)
    upd(0, g, w)
    after = w.asnumpy()
    assert np.all(after[[0, 1, 2, 4]] == 1)
    # m = -lr*wd*w - lr*g ; w += m
    np.testing.assert_allclose(after[3], 1 - 0.1 * 0.01 - 0.1, rtol=1e-6)


def test_initializer_attr_priority_and_suffix_rules():
    w = mx.sym.Variable("fc_weight", init=mx.init.One(), shape=(3, 1))
    b = mx.sym.Variable("fc_bias", shape=(1,))
    net = mx.sym.LinearRegressionOutput(mx.sym.broadcast_add(mx.sym.dot(mx.sym.Variable("data"),
                                                                        w), b), name="lro")
    mod = mx.mod.Module(net, label_names=["lro_label"])
    mod.bind(data_shapes=[("data", (2, 3))], label_shapes=[("lro_label", (2, 1))])
    mod.init_params(mx.init.Normal(1.0))
    args, _ = mod.get_params()
    assert np.all(args["fc_weight"].asnumpy() == 1)
    assert np.all(args["fc_bias"].asnumpy() == 0)


def test_ndarray_iter_keeps_csr_batches():
    data = mx.test_utils.rand_ndarray((10, 8), "csr", 0.3)
    label = mx.nd.arange(10)
    it = mx.io.NDArrayIter(data, label, 4, last_batch_handle="discard")
    batches = list(it)
    assert len(batches) == 2 and batches[0].data[0].stype == "csr"
    np.testing.assert_array_equal(batches[1].data[0].asnumpy(), data.asnumpy()[4:8])
    assert batches[1].label[0].asnumpy().tolist() == [4, 5, 6, 7]


@pytest.mark.parametrize("name", ["mse", "acc", "ce"])
def test_metric_create(name):
    m = mx.metric.create(name)
    label = mx.nd.array([0, 1])
    pred = mx.nd.array([[0.9, 0.1], [0.2, 0.8]])
    if name == "mse":
        m.update([mx.nd.array([[1.0], [2.0]])], [mx.nd.array([[1.0], [3.0]])])
        assert m.get()[1] == pytest.approx(0.5)
    elif name == "acc":
        m.update([label], [pred])
        assert m.get()[1] == 1.0
    else:
        m.update([label], [pred])
        assert m.get()[1] == pytest.approx(-(np.log(0.9) + np.log(0.8)) / 2, rel=1e-5)


def test_module_trains_sparse_linear_regression():
    mx.random.seed(1)
    n, f = 200, 20
    X = mx.test_utils.rand_ndarray((n, f), "csr", 0.3)
    y = mx.nd.dot(X, mx.nd.arange(1, f + 1).reshape((f, 1)) / f)
    it = mx.io.NDArrayIter(X, y, 10, last_batch_handle="discard", label_name="label")
    w = mx.sym.Variable("weight", stype="row_sparse", shape=(f, 1))
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(mx.sym.Variable("data", stype="csr"), w),
                                mx.sym.Variable("bias", shape=(1,)))
    net = mx.sym.LinearRegressionOutput(pred, mx.sym.Variable("label"), name="lro")
    mod = mx.mod.Module(net, data_names=["data"], label_names=["label"])
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Normal(0.01))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5,
                                                          "momentum": 0.9})
    metric = mx.metric.create("mse")
    first = None
    for _ in range(15):
        it.reset()
        metric.reset()
        for batch in it:
            mod.forward_backward(batch)
            mod.update()
            mod.update_metric(metric, batch.label)
        first = first if first is not None else metric.get()[1]
    assert metric.get()[1] < first / 20
    assert mod.get_params()[0]["weight"].stype == "row_sparse"
    out = mod.get_outputs()[0]
    assert out.shape == (10, 1)
