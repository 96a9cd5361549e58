"""The issue's done-when: a sparse linear classifier (row_sparse weight, csr input,
Trainer on kvstore 'local') trained with autograd, hybridized and not, matches Module."""
import numpy as np
import pytest

import sparsym as mx
from sparsym import autograd, gluon

NF, N, BATCH, STEPS, LR = 40, 64, 16, 3, 0.5


def _data():
    rng = np.random.RandomState(0)
    dense = ((rng.rand(N, NF) < 0.1) * rng.rand(N, NF)).astype(np.float32)
    y = (dense @ (np.arange(NF) - NF / 2) > 0).astype(np.float32).reshape(-1, 1)
    return mx.nd.array(dense).tostype("csr"), y


class HybridLinear(gluon.HybridBlock):
    """Hybridized: the row_sparse weight is bound as it is (sparsym runs it with inferred
    storage types; MXNet refuses sparse Parameters in a HybridBlock)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(NF, 1), stype="row_sparse",
                                          grad_stype="row_sparse")
            self.bias = self.params.get("bias", shape=(1,), init="zeros")

    def hybrid_forward(self, F, x, weight, bias):
        return F.broadcast_add(F.sparse.dot(x, weight), bias)


class BlockLinear(gluon.Block):
    """Imperative: pull the rows the batch needs through the Trainer (MXNet's tutorial)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(NF, 1), stype="row_sparse",
                                          grad_stype="row_sparse")
            self.bias = self.params.get("bias", shape=(1,), init="zeros")

    def forward(self, x):
        w = self.weight.row_sparse_data(x.indices)
        return mx.nd.broadcast_add(mx.nd.sparse.dot(x, w), self.bias.data())


def _bce(pred, y):
    z = pred.asnumpy()
    return float(np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))))


def _train_gluon(net, hybridize):
    x, y = _data()
    net.initialize(mx.init.Constant(0.1))
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR},
                            kvstore="local")
    loss_fn = gluon.loss.SigmoidBinaryCrossEntropyLoss()
    losses = []
    for _ in range(STEPS):
        for i in range(0, N, BATCH):
            xb, yb = x[i:i + BATCH], mx.nd.array(y[i:i + BATCH])
            if hybridize:  # the whole weight is bound; pull every row once per step
                net.weight.row_sparse_data(mx.nd.arange(NF))
            with autograd.record():
                loss = loss_fn(net(xb), yb)
            loss.backward()
            trainer.step(BATCH)
            losses.append(float(loss.mean().asscalar()))
    return losses, net


def _train_module():
    x, y = _data()
    data = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", stype="row_sparse", shape=(NF, 1))
    b = mx.sym.Variable("bias", shape=(1,))
    pred = mx.sym.broadcast_add(mx.sym.sparse.dot(data, w), b)
    out = mx.sym.LogisticRegressionOutput(pred, mx.sym.Variable("label"), name="lro")
    it = mx.io.NDArrayIter(x, {"label": y}, batch_size=BATCH)
    mod = mx.mod.Module(out, label_names=["label"])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(mx.init.Constant(0.1), force_init=True)
    mod.set_params({"weight": mx.nd.ones((NF, 1)).tostype("row_sparse") * 0.1,
                    "bias": mx.nd.zeros((1,))}, {})
    mod.init_optimizer(kvstore=mx.kv.create("local"), optimizer="sgd",
                       optimizer_params={"learning_rate": LR, "rescale_grad": 1.0 / BATCH})
    losses = []
    for _ in range(STEPS):
        it.reset()
        for batch in it:
            mod.prepare(batch, sparse_row_id_fn=lambda b: {"weight": mx.nd.arange(NF)})
            # the loss of the weights this step starts from, as Gluon's loss is
            z = mx.nd.sparse.dot(batch.data[0], mod._exec_group.param_arrays[0][0]) + \
                mod._exec_group.param_arrays[1][0]
            losses.append(_bce(z, batch.label[0].asnumpy()))
            mod.forward_backward(batch)
            mod.update()
    return losses


@pytest.mark.parametrize("hybridize", [False, True])
def test_sparse_classifier_matches_module(hybridize):
    net = HybridLinear() if hybridize else BlockLinear()
    losses, net = _train_gluon(net, hybridize)
    expected = _train_module()
    np.testing.assert_allclose(losses, expected, rtol=1e-5, atol=1e-6)
    assert losses[-1] < losses[0]
    if hybridize:
        report = net.storage_report()
        assert "row_sparse" in str(report) and not report.fallbacks
