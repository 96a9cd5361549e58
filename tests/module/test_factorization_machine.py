"""A factorization machine (csr input, row_sparse factors, _square_sum) trained with Module:
the log loss falls with each of sgd, adam, adagrad and ftrl (MXNet's test_module FM model,
with a logistic head)."""
from __future__ import annotations

import numpy as np
import pytest

import sparsym as mx

NF, K, N, BS = 500, 4, 768, 64


def fm_symbol(init):
    x = mx.sym.Variable("data", stype="csr")
    v = mx.sym.Variable("v", shape=(NF, K), init=init, stype="row_sparse")
    w1_weight = mx.sym.var("w1_weight", shape=(NF, 1), init=init, stype="row_sparse")
    w1_bias = mx.sym.var("w1_bias", shape=(1,))
    w1 = mx.sym.broadcast_add(mx.sym.dot(x, w1_weight), w1_bias)
    # MXNet spells it mx.sym._internal._square_sum
    internal = getattr(mx.sym, "_internal", mx.sym)
    v_s = internal._square_sum(data=v, axis=1, keepdims=True)
    x_s = mx.sym.square(data=x)
    bd_sum = mx.sym.dot(x_s, v_s)
    w2 = mx.sym.dot(x, v)
    w2_squared = 0.5 * mx.sym.square(data=w2)
    w_all = mx.sym.Concat(w1, w2_squared, dim=1)
    sum1 = mx.sym.sum(data=w_all, axis=1, keepdims=True)
    sum2 = 0.5 * mx.sym.negative(bd_sum)
    model = mx.sym.elemwise_add(sum1, sum2)
    return mx.sym.LogisticRegressionOutput(data=model, label=mx.sym.Variable("label"))


def fm_data():
    """Binary labels from a hidden FM over sparse one-hot-ish rows (6 active features)."""
    rng = np.random.RandomState(0)
    rows = np.repeat(np.arange(N), 6)
    cols = np.concatenate([np.sort(rng.choice(NF, 6, replace=False)) for _ in range(N)])
    import scipy.sparse as sp
    x = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)), shape=(N, NF))
    w = rng.normal(0, 1.0, NF)
    v = rng.normal(0, 0.5, (NF, K))
    xv = x @ v
    score = x @ w + 0.5 * ((xv ** 2).sum(1) - (x.multiply(x) @ (v ** 2)).sum(1)) - 0.3
    y = (rng.rand(N) < 1 / (1 + np.exp(-score))).astype(np.float32)
    return mx.nd.sparse.csr_matrix(x), y.reshape(-1, 1)


OPTIMIZERS = {
    "sgd": dict(momentum=0.1, clip_gradient=5.0, learning_rate=0.5),
    "adam": dict(clip_gradient=5.0, learning_rate=0.02),
    "adagrad": dict(clip_gradient=5.0, learning_rate=0.05),
    "ftrl": dict(learning_rate=3.0, lamda1=0.001),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_factorization_machine_log_loss_falls(name):
    x, y = fm_data()
    it = mx.io.NDArrayIter(data=x, label={"label": y}, batch_size=BS,
                           last_batch_handle="discard")
    mod = mx.mod.Module(fm_symbol(mx.init.Normal(sigma=0.01)), data_names=["data"],
                        label_names=["label"])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(initializer=mx.init.Normal(sigma=0.01))
    arg = mod.get_params()[0]
    assert arg["v"].stype == "row_sparse" and arg["w1_weight"].stype == "row_sparse"
    opt = mx.optimizer.create(name, rescale_grad=1.0 / BS, **OPTIMIZERS[name])
    mod.init_optimizer(optimizer=opt)
    metric = mx.metric.create("log_loss")
    losses = []
    for _ in range(8):
        it.reset()
        metric.reset()
        for batch in it:
            assert batch.data[0].stype == "csr"
            mod.forward(batch, is_train=True)
            mod.update_metric(metric, batch.label)
            mod.backward()
            assert mod._exec_group.grad_arrays[0][0].stype == "row_sparse" or \
                mod._exec_group.param_names[0] not in ("v", "w1_weight")
            mod.update()
        losses.append(metric.get()[1])
    assert losses[-1] < 0.85 * losses[0], losses
    assert all(b <= a + 0.02 for a, b in zip(losses, losses[1:])), losses
    assert mod.get_params()[0]["v"].stype == "row_sparse"
