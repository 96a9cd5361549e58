"""BucketingModule (switch_bucket shares parameters and memory) and SequentialModule."""
from __future__ import annotations

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import MXNetError


def sym_gen(seq_len):
    """Sum-pool an embedded sequence, then classify: parameters independent of seq_len."""
    data = mx.sym.Variable("data")
    label = mx.sym.Variable("softmax_label")
    emb = mx.sym.Embedding(data, input_dim=10, output_dim=4, name="embed")
    pooled = mx.sym.sum(emb, axis=1)
    fc = mx.sym.FullyConnected(pooled, num_hidden=2, name="fc")
    return mx.sym.SoftmaxOutput(fc, label, name="softmax"), ("data",), ("softmax_label",)


def bucket_batch(key, bs=4, seed=0):
    rng = np.random.RandomState(seed + key)
    x = rng.randint(0, 10, (bs, key)).astype(np.float32)
    y = (x.sum(1) > 4.5 * key).astype(np.float32)
    return mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)], bucket_key=key,
                           provide_data=[mx.io.DataDesc("data", (bs, key))],
                           provide_label=[mx.io.DataDesc("softmax_label", (bs,))])


def make(default=5):
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=default)
    mod.bind(data_shapes=[("data", (4, default))], label_shapes=[("softmax_label", (4,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    return mod


def test_switch_bucket_shares_parameters_and_memory():
    mod = make()
    mod.forward(bucket_batch(3))
    b5, b3 = mod._buckets[5], mod._buckets[3]
    assert mod._curr_bucket_key == 3 and set(mod._buckets) == {3, 5}
    g5, g3 = b5._exec_group, b3._exec_group
    for a, b in zip(g5.param_arrays, g3.param_arrays):
        assert a[0] is b[0]  # the same parameter arrays
    for a, b in zip(g5.grad_arrays, g3.grad_arrays):
        assert a[0] is b[0]
    assert g3.shared_data_arrays is g5.shared_data_arrays  # one memory pool
    assert b3._optimizer is b5._optimizer and b3._updater is b5._updater
    mod.backward()
    mod.update()
    w = mod.get_params()[0]["fc_weight"].asnumpy()
    idx = g5.param_names.index("fc_weight")
    np.testing.assert_array_equal(g5.param_arrays[idx][0].asnumpy(), w)  # bucket 3 updated it


def test_bucketing_trains_like_separate_updates():
    mod = make()
    ref = mx.mod.Module(sym_gen(5)[0])
    ref.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    ref.init_params(arg_params=mod.get_params()[0])
    ref.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    for key in (5, 3, 5, 2):
        b = bucket_batch(key)
        mod.forward_backward(b)
        mod.update()
        ref.forward_backward(b)  # a plain Module reshapes for the same batches
        ref.update()
    for k, v in ref.get_params()[0].items():
        np.testing.assert_allclose(mod.get_params()[0][k].asnumpy(), v.asnumpy(), rtol=1e-5,
                                   atol=1e-6)
    assert sorted(mod._buckets) == [2, 3, 5]
    assert mod.get_outputs()[0].shape == (4, 2)


def test_bucketing_fit_score_and_checkpoint(tmp_path):
    class BucketIter(mx.io.DataIter):
        def __init__(self):
            super().__init__(4)
            self.keys = [5, 3, 2, 5]
            self.i = 0
            self.provide_data = [mx.io.DataDesc("data", (4, 5))]
            self.provide_label = [mx.io.DataDesc("softmax_label", (4,))]
            self.default_bucket_key = 5

        def reset(self):
            self.i = 0

        def next(self):
            if self.i == len(self.keys):
                raise StopIteration
            self.i += 1
            return bucket_batch(self.keys[self.i - 1], seed=self.i)

    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=5)
    it = BucketIter()
    mod.fit(it, num_epoch=2, eval_data=it, optimizer_params={"learning_rate": 0.1})
    score = dict(mod.score(it, "acc"))
    prefix = str(tmp_path / "bk")
    mod.save_checkpoint(prefix, 2)
    loaded = mx.mod.BucketingModule.load(prefix, 2, sym_gen=sym_gen, default_bucket_key=5)
    loaded.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))],
                for_training=False)
    assert dict(loaded.score(it, "acc")) == score
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(loaded.get_params()[0][k].asnumpy(), v.asnumpy())


def test_bucketing_errors():
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=5)
    with pytest.raises(MXNetError, match="bind before switching"):
        mod.switch_bucket(3, [("data", (4, 3))])
    with pytest.raises(MXNetError, match="default_bucket_key"):
        mx.mod.BucketingModule(sym_gen)
    mod.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    with pytest.raises(MXNetError, match="not supported"):
        mod.bind(data_shapes=[("data", (4, 5))], force_rebind=True, shared_module=mod)


# --------------------------------------------------------------------------- sequential
def test_sequential_matches_single_module():
    rng = np.random.RandomState(0)
    x = rng.rand(8, 5).astype(np.float32)
    y = rng.randint(0, 3, 8).astype(np.float32)
    d = mx.sym.Variable("data")
    net1 = mx.sym.Activation(mx.sym.FullyConnected(d, num_hidden=6, name="fc1"),
                             act_type="relu", name="relu1")
    d2 = mx.sym.Variable("hidden")
    net2 = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(d2, num_hidden=3, name="fc2"),
                                name="softmax")
    seq = mx.mod.SequentialModule()
    seq.add(mx.mod.Module(net1, label_names=None))
    seq.add(mx.mod.Module(net2, data_names=["hidden"]), take_labels=True, auto_wiring=True)
    seq.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))])
    seq.init_params(mx.init.Xavier())
    seq.init_optimizer(optimizer_params={"learning_rate": 0.5})
    # the same network as one module
    whole = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(
        mx.sym.Activation(mx.sym.FullyConnected(d, num_hidden=6, name="fc1"), act_type="relu",
                          name="relu1"), num_hidden=3, name="fc2"), name="softmax")
    one = mx.mod.Module(whole)
    one.bind(data_shapes=[("data", (8, 5))], label_shapes=[("softmax_label", (8,))])
    one.init_params(arg_params=seq.get_params()[0])
    one.init_optimizer(optimizer_params={"learning_rate": 0.5})
    b = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    for _ in range(3):
        for m in (seq, one):
            m.forward_backward(b)
            m.update()
    np.testing.assert_allclose(seq.get_outputs()[0].asnumpy(), one.get_outputs()[0].asnumpy(),
                               rtol=1e-5, atol=1e-6)
    for k, v in one.get_params()[0].items():
        np.testing.assert_allclose(seq.get_params()[0][k].asnumpy(), v.asnumpy(), rtol=1e-5,
                                   atol=1e-6)
    metric = mx.metric.create("acc")
    seq.update_metric(metric, b.label)
    assert metric.num_inst == 8
    assert seq.output_shapes == [("softmax_output", (8, 3))]
    assert seq.label_shapes == [("softmax_label", (8,))]


def test_sequential_errors():
    seq = mx.mod.SequentialModule()
    with pytest.raises(MXNetError, match="Unknown meta"):
        seq.add(mx.mod.Module(mx.sym.relu(mx.sym.Variable("data")), label_names=None),
                take_label=True)
    with pytest.raises(MXNetError, match="empty"):
        seq.bind(data_shapes=[("data", (2, 2))])
    d = mx.sym.Variable("data")
    seq.add(mx.mod.Module(mx.sym.FullyConnected(d, num_hidden=2, name="fc"), label_names=None))
    seq.add(mx.mod.Module(mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=2, name="fc"),
                          data_names=["x"], label_names=None), auto_wiring=True)
    seq.bind(data_shapes=[("data", (2, 3))])
    with pytest.raises(MXNetError, match="Duplicated parameter names"):
        seq.init_params()
