"""Sparse training plumbing: prepare() pulling a batch's rows from a kvstore, lazy row_sparse
updates through Module, CSR batches, and DataParallelExecutorGroup used directly."""
from __future__ import annotations

import numpy as np
import pytest

import sparsym as mx
from sparsym.module.executor_group import DataParallelExecutorGroup

NF = 50


def linear(nf=NF):
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", stype="row_sparse", shape=(nf, 1))
    b = mx.sym.Variable("bias", shape=(1,))
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(x, w), b)
    return mx.sym.LinearRegressionOutput(pred, mx.sym.Variable("label"), name="lro")


def data(n=64, seed=0):
    rng = np.random.RandomState(seed)
    dense = (rng.rand(n, NF) < 0.08) * rng.rand(n, NF)
    y = dense @ np.arange(NF) / NF
    return mx.nd.array(dense.astype(np.float32)).tostype("csr"), y.reshape(-1, 1)


def row_ids(batch):
    return {"weight": batch.data[0].indices}


def train(kvstore, optimizer, steps=3, ctx=None):
    x, y = data()
    it = mx.io.NDArrayIter(x, {"label": y}, batch_size=16, last_batch_handle="discard")
    mod = mx.mod.Module(linear(), label_names=["label"], context=ctx or mx.cpu())
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(mx.init.Constant(0.1))
    mod.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                       optimizer_params={"learning_rate": 0.1})
    for _ in range(steps):
        it.reset()
        for batch in it:
            mod.prepare(batch, sparse_row_id_fn=row_ids)
            mod.forward_backward(batch)
            mod.update()
    return mod


@pytest.mark.parametrize("optimizer", ["sgd", "adam", "ftrl", "adagrad"])
def test_prepare_with_kvstore_matches_local_updates(optimizer):
    with pytest.warns(UserWarning, match="No need to call sparse_row_id_fn"):
        local = train(None, optimizer)
    kv = train(mx.kv.create("local"), optimizer)
    assert kv._update_on_kvstore and kv._kvstore is not None
    a, b = local.get_params()[0], kv.get_params()[0]
    for k in a:
        assert b[k].stype == a[k].stype
        np.testing.assert_allclose(b[k].asnumpy(), a[k].asnumpy(), rtol=1e-5, atol=1e-6)


def test_prepare_pulls_only_the_batch_rows():
    x, y = data()
    mod = mx.mod.Module(linear(), label_names=["label"])
    mod.bind(data_shapes=[mx.io.DataDesc("data", (16, NF))],
             label_shapes=[mx.io.DataDesc("label", (16, 1))])
    mod.init_params(mx.init.Constant(0.1))
    mod.init_optimizer(kvstore=mx.kv.create("local"), optimizer="sgd")
    batch = mx.io.DataBatch([x[0:16]], [mx.nd.array(y[:16])])
    mod.prepare(batch, sparse_row_id_fn=row_ids)
    w = mod._exec_group.param_arrays[0][0]
    assert w.stype == "row_sparse"
    assert w.indices.asnumpy().tolist() == np.unique(x[0:16].indices.asnumpy()).tolist()
    mod.forward_backward(batch)
    mod.update()
    # checkpoints see every row (pulled from the store)
    full = mod.get_params()[0]["weight"]
    assert len(full.indices.asnumpy()) == NF


def test_lazy_update_leaves_other_rows_untouched():
    x, y = data()
    mod = mx.mod.Module(linear(), label_names=["label"])
    mod.bind(data_shapes=[mx.io.DataDesc("data", (16, NF))],
             label_shapes=[mx.io.DataDesc("label", (16, 1))])
    mod.init_params(mx.init.Constant(0.1))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5, "wd": 0.1,
                                                          "momentum": 0.9})
    batch = mx.io.DataBatch([x[0:16]], [mx.nd.array(y[:16])])
    mod.forward_backward(batch)
    g = mod._exec_group.grad_arrays[0][0]
    assert g.stype == "row_sparse"
    mod.update()
    w = mod.get_params()[0]["weight"].asnumpy().ravel()
    touched = set(g.indices.asnumpy().tolist())
    for r in range(NF):
        assert (w[r] != np.float32(0.1)) == (r in touched)


@pytest.mark.filterwarnings("ignore:Parameters are not updated")
def test_two_devices_sparse_matches_one():
    a = train(None, "sgd", ctx=[mx.cpu(0)])
    b = train(None, "sgd", ctx=[mx.cpu(0), mx.cpu(1)])
    for k, v in a.get_params()[0].items():
        np.testing.assert_allclose(b.get_params()[0][k].asnumpy(), v.asnumpy(), rtol=1e-5,
                                   atol=1e-6)


def test_executor_group_directly():
    d = mx.sym.Variable("data")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(d, num_hidden=3, name="fc"),
                               name="softmax")
    params = ["fc_weight", "fc_bias"]
    group = DataParallelExecutorGroup(net, [mx.cpu(0), mx.cpu(1)], [1, 1],
                                      [("data", (6, 4))], [("softmax_label", (6,))], params,
                                      for_training=True, inputs_need_grad=False)
    assert [(s.start, s.stop) for s in group.slices] == [(0, 3), (3, 6)]
    rng = np.random.RandomState(0)
    arg = {"fc_weight": mx.nd.array(rng.randn(3, 4)), "fc_bias": mx.nd.zeros((3,))}
    group.set_params(arg, {})
    x = rng.randn(6, 4).astype(np.float32)
    group.forward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array([0, 1, 2, 0, 1, 2])]))
    out = group.get_outputs()[0].asnumpy()
    logits = x @ arg["fc_weight"].asnumpy().T
    e = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5)
    assert len(group.get_outputs(merge_multi_context=False)[0]) == 2
    group.backward()
    assert group.grad_arrays[0][0].shape == (3, 4)
    # a group for another shape that shares parameters and memory
    other = DataParallelExecutorGroup(net, [mx.cpu(0), mx.cpu(1)], [1, 1],
                                      [("data", (4, 4))], [("softmax_label", (4,))], params,
                                      for_training=True, inputs_need_grad=False,
                                      shared_group=group)
    assert other.param_arrays[0][1] is group.param_arrays[0][1]
    assert other.shared_data_arrays is group.shared_data_arrays


def test_fit_with_kvstore_and_sparse_row_id_fn():
    x, y = data()
    results = []
    for kv in (None, mx.kv.create("local")):
        it = mx.io.NDArrayIter(x, {"label": y}, batch_size=16, last_batch_handle="discard")
        mod = mx.mod.Module(linear(), label_names=["label"])
        mod.fit(it, num_epoch=2, kvstore=kv, optimizer="adam", eval_metric="mse",
                initializer=mx.init.Constant(0.1),
                sparse_row_id_fn=row_ids if kv is not None else None)
        results.append(mod.get_params()[0])
    for k, v in results[0].items():
        np.testing.assert_allclose(results[1][k].asnumpy(), v.asnumpy(), rtol=1e-5, atol=1e-6)


def test_sparse_checkpoint_round_trip(tmp_path):
    mod = train(mx.kv.create("local"), "adam", steps=1)
    prefix = str(tmp_path / "lin")
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    sym, arg, aux = mx.model.load_checkpoint(prefix, 1)
    assert arg["weight"].stype == "row_sparse"
    np.testing.assert_array_equal(arg["weight"].asnumpy(),
                                  mod.get_params()[0]["weight"].asnumpy())
    x, y = data()
    loaded = mx.mod.Module.load(prefix, 1, label_names=["label"])
    loaded.bind(data_shapes=[mx.io.DataDesc("data", (16, NF))],
                label_shapes=[mx.io.DataDesc("label", (16, 1))], for_training=False)
    b = mx.io.DataBatch([x[0:16]], [mx.nd.array(y[:16])])
    mod.prepare(b, sparse_row_id_fn=row_ids)  # the executor holds only pulled rows
    mod.forward(b, is_train=False)
    loaded.forward(b, is_train=False)
    np.testing.assert_allclose(loaded.get_outputs()[0].asnumpy(),
                               mod.get_outputs()[0].asnumpy(), rtol=1e-6)
