"""Gluon Parameters, Blocks, hybridization, export and SymbolBlock import."""
import os

import numpy as np
import pytest

import sparsym as mx
from sparsym import autograd, gluon
from sparsym.gluon import nn

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "gluon")


def _mlp():
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Dense(6, activation="relu"), nn.BatchNorm(), nn.Dropout(0.5), nn.Dense(3))
    return net


def test_parameter_deferred_init_and_errors():
    p = gluon.Parameter("w", shape=(0, 3), allow_deferred_init=True)
    p.initialize(init="ones")
    with pytest.raises(gluon.DeferredInitializationError):
        p.data()
    p.shape = (2, 3)
    p._finish_deferred_init()
    assert p.data().asnumpy().tolist() == [[1.0] * 3] * 2
    with pytest.raises(AssertionError):
        gluon.Parameter("w", stype="invalid")
    q = gluon.Parameter("q", shape=(2,), grad_req="null")
    q.initialize()
    with pytest.raises(RuntimeError, match="grad_req='null'"):
        q.grad()
    sparse = gluon.Parameter("s", shape=(4, 2), stype="row_sparse")
    sparse.initialize()
    with pytest.raises(RuntimeError, match="row_sparse_data"):
        sparse.data()


def test_parameter_dict_sharing_and_save_load(tmp_path):
    net = _mlp()
    net.initialize()
    x = mx.nd.random.uniform(shape=(4, 5))
    net(x)
    shared = nn.Dense(6, in_units=5, params=net[0].params)
    assert shared.weight is net[0].weight
    fname = str(tmp_path / "net.params")
    net.save_parameters(fname)
    other = _mlp()
    other.load_parameters(fname)
    np.testing.assert_allclose(other(x).asnumpy(), net(x).asnumpy(), rtol=1e-6)
    wrong = nn.Dense(7, in_units=5, prefix="d_", use_bias=False)
    with pytest.raises(AssertionError, match="shape incompatible"):
        wrong.collect_params().load_dict({"d_weight": mx.nd.zeros((6, 5))})


@pytest.mark.parametrize("with_grad", [False, True])
def test_hybridize_matches_imperative(with_grad):
    x = mx.nd.random.uniform(-1, 1, shape=(4, 5))
    results = []
    for hybrid in (False, True):
        mx.random.seed(1)
        net = _mlp()
        net.initialize(mx.init.Xavier())
        if hybrid:
            net.hybridize(static_alloc=True, static_shape=True)
        if with_grad:
            with autograd.record(train_mode=False):
                out = net(x)
                loss = (out * out).sum()
            loss.backward()
            results.append((out.asnumpy(), net[0].weight.grad().asnumpy()))
        else:
            results.append((net(x).asnumpy(), None))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5, atol=1e-6)
    if with_grad:
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5, atol=1e-6)


def test_hybridized_block_called_twice_in_one_record():
    emb = nn.Embedding(20, 3, sparse_grad=True)
    emb.initialize()
    emb.hybridize()
    with autograd.record():
        loss = emb(mx.nd.arange(10)).sum() + emb(mx.nd.arange(10)).sum()
    loss.backward()
    grad = emb.weight.grad()
    assert grad.stype == "row_sparse"
    g = grad.asnumpy()
    assert (g[:10] == 2).all() and (g[10:] == 0).all()


class _WeightedEmbedding(gluon.HybridBlock):
    """Feature values weighting their embeddings, summed per row, and a dense head."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.emb = nn.Embedding(1000, 4, sparse_grad=True)
            self.head = nn.Dense(1, in_units=4)

    def hybrid_forward(self, F, ids, vals):
        e = F.broadcast_mul(self.emb(ids), F.expand_dims(vals, axis=2))
        return self.head(F.sum(e, axis=1))


def test_hybridized_sparse_grad_embedding_keeps_the_gradient_row_sparse(monkeypatch):
    # the hybridized graph's row_sparse gradient reaches the parameter as is: a dense
    # (input_dim, dim) array cast back to row_sparse cost a pass over the table per step
    # and dropped the looked-up rows whose gradient is zero (MXNet keeps them)
    from sparsym import storage
    seen = []
    real = storage.dense_to_rsp
    monkeypatch.setattr(storage, "dense_to_rsp", lambda x: seen.append(x.shape) or real(x))
    grads = []
    for hybrid in (False, True):
        net = _WeightedEmbedding()
        net.initialize(mx.init.One())
        if hybrid:
            net.hybridize()
        with autograd.record():
            loss = net(mx.nd.array([[1, 4], [7, 4]]), mx.nd.array([[1, 0], [0, 3]])).sum()
        loss.backward()
        g = net.emb.weight.grad()
        assert g.stype == "row_sparse"
        grads.append((g.indices.asnumpy().tolist(), g.data.asnumpy()[:, 0].tolist()))
    assert grads[0] == grads[1] == ([1, 4, 7], [1.0, 3.0, 0.0])  # MXNet 1.9.1's values
    assert (1000, 4) not in seen


def test_export_loads_in_symbol_block(tmp_path):
    net = _mlp()
    net.initialize()
    net.hybridize()
    x = mx.nd.random.uniform(shape=(2, 5))
    y = net(x)
    sym_file, params_file = net.export(str(tmp_path / "mlp"), epoch=3)
    assert params_file.endswith("mlp-0003.params")
    keys = set(mx.nd.load(params_file))
    assert "aux:net_batchnorm0_running_mean" in keys and "arg:net_dense0_weight" in keys
    back = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_allclose(back(x).asnumpy(), y.asnumpy(), rtol=1e-6)


def test_mxnet_export_fixture_predicts_the_same():
    """A HybridSequential exported by MXNet 1.9.1 (tests/fixtures/gluon/make_gluon_export.py)."""
    net = gluon.SymbolBlock.imports(os.path.join(FIXTURES, "mlp-symbol.json"), ["data"],
                                    os.path.join(FIXTURES, "mlp-0000.params"))
    io = mx.nd.load(os.path.join(FIXTURES, "mlp-io.nd"))
    np.testing.assert_allclose(net(io["x"]).asnumpy(), io["y"].asnumpy(), rtol=1e-5,
                               atol=1e-6)
    net.hybridize()
    np.testing.assert_allclose(net(io["x"]).asnumpy(), io["y"].asnumpy(), rtol=1e-5,
                               atol=1e-6)


def test_hybridized_sparse_parameter_storage_report():
    """Beyond MXNet: a row_sparse Parameter in a hybridized graph keeps its storage."""

    class Linear(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.weight = self.params.get("weight", shape=(6, 2), stype="row_sparse")

        def hybrid_forward(self, F, x, weight):
            return F.sparse.dot(x, weight)

    net = Linear()
    net.initialize(mx.init.One())
    x = mx.nd.array(np.eye(3, 6)).tostype("csr")
    with pytest.raises(RuntimeError):  # MXNet's rule for non-hybridized sparse parameters
        net(x)
    net.hybridize()
    assert net(x).asnumpy().tolist() == [[1.0, 1.0]] * 3
    report = net.storage_report()
    assert "csr" in str(report) and "row_sparse" in str(report)
    assert not report.fallbacks


def test_block_save_load_structure(tmp_path):
    net = _mlp()
    net.initialize()
    net.hybridize()
    x = mx.nd.ones((2, 5))
    y = net(x)
    net.save(str(tmp_path / "model"))
    other = _mlp()
    other.load(str(tmp_path / "model"))
    np.testing.assert_allclose(other(x).asnumpy(), y.asnumpy(), rtol=1e-6)


@pytest.mark.parametrize("layer,shape", [
    (lambda: nn.Conv2D(4, 3, padding=1), (2, 3, 6, 6)),
    (lambda: nn.Conv1DTranspose(4, 3), (2, 3, 6)),
    (lambda: nn.MaxPool2D(), (2, 3, 6, 6)),
    (lambda: nn.GlobalAvgPool2D(), (2, 3, 6, 6)),
    (lambda: nn.LeakyReLU(0.1), (2, 3)),
    (lambda: nn.PReLU(), (2, 3)),
    (lambda: nn.ELU(), (2, 3)),
    (lambda: nn.Swish(), (2, 3)),
    (lambda: nn.Flatten(), (2, 3, 4)),
    (lambda: gluon.rnn.LSTM(5, layout="NTC"), (2, 4, 3)),
    (lambda: gluon.rnn.GRU(5, bidirectional=True), (4, 2, 3)),
])
def test_layers_hybridize_consistently(layer, shape):
    x = mx.nd.random.uniform(-1, 1, shape=shape)
    mx.random.seed(3)
    a = layer()
    a.initialize()
    ya = a(x)
    a.hybridize()
    np.testing.assert_allclose(a(x).asnumpy(), ya.asnumpy(), rtol=1e-5, atol=1e-6)


def test_rnn_cells_unroll():
    cell = gluon.rnn.SequentialRNNCell()
    with cell.name_scope():
        cell.add(gluon.rnn.LSTMCell(4))
        cell.add(gluon.rnn.ResidualCell(gluon.rnn.GRUCell(4)))
    cell.initialize()
    x = mx.nd.random.uniform(shape=(2, 3, 5))
    outs, states = cell.unroll(3, x, merge_outputs=True)
    assert outs.shape == (2, 3, 4) and len(states) == 3
    outputs = cell(x[:, 0, :], cell.begin_state(batch_size=2))[0]
    assert outputs.shape == (2, 4)


def test_losses_forward():
    pred = mx.nd.array([[0.2, 0.8], [0.9, 0.1]])
    label = mx.nd.array([1, 0])
    ce = gluon.loss.SoftmaxCrossEntropyLoss()(pred, label).asnumpy()
    logp = pred.asnumpy() - np.log(np.exp(pred.asnumpy()).sum(1, keepdims=True))
    np.testing.assert_allclose(ce, -logp[[0, 1], [1, 0]], rtol=1e-6)
    l2 = gluon.loss.L2Loss()(pred, mx.nd.zeros((2, 2))).asnumpy()
    np.testing.assert_allclose(l2, (pred.asnumpy() ** 2 / 2).mean(1), rtol=1e-6)
    hinge = gluon.loss.HingeLoss()(pred, mx.nd.array([[1, -1], [-1, 1]])).asnumpy()
    np.testing.assert_allclose(hinge, [(0.8 + 1.8) / 2, (1.9 + 0.9) / 2], rtol=1e-6)


def test_deferred_parameter_under_numpy_shapes():
    # MXNet: under np_shape a Parameter's not-yet-inferred dims read as -1
    p = gluon.Parameter("w", shape=(16, 0))
    assert p.shape == (16, 0)
    with mx.np_shape(True):
        assert p.shape == (16, -1)
        dense = nn.Dense(16)
        dense.initialize()
        assert dense(mx.nd.zeros((2, 20))).shape == (2, 16)
        assert dense.weight.shape == (16, 20)


def test_sync_batchnorm_on_one_device_is_batchnorm():
    from sparsym.gluon.contrib.nn import SyncBatchNorm
    x = mx.nd.array(np.random.default_rng(0).uniform(size=(6, 3, 4)))
    bn, sbn = nn.BatchNorm(in_channels=3), SyncBatchNorm(in_channels=3)
    bn.initialize()
    sbn.initialize()
    grads = []
    for layer in (bn, sbn):
        xi = x.copy()
        xi.attach_grad()
        with autograd.record():
            loss = (layer(xi) ** 2).sum()
        loss.backward()
        grads.append(xi.grad.asnumpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.running_mean.data().asnumpy(),
                               sbn.running_mean.data().asnumpy(), rtol=1e-6)
    sbn.hybridize()
    np.testing.assert_allclose(sbn(x).asnumpy(), bn(x).asnumpy(), rtol=1e-5, atol=1e-6)
    two = SyncBatchNorm(in_channels=3, num_devices=2)
    two.initialize()
    with pytest.raises(NotImplementedError, match="ndev=2"):
        two(x)


def test_batchnorm_relu_is_batchnorm_then_relu():
    x = mx.nd.array(np.random.RandomState(0).normal(size=(4, 3, 2)).astype("float32"))
    fused, plain = mx.gluon.nn.BatchNormReLU(in_channels=3), mx.gluon.nn.BatchNorm(in_channels=3)
    assert fused.prefix.startswith("batchnormrelu")
    for net in (fused, plain):
        net.initialize()
    for hybrid in (False, True):
        if hybrid:
            fused.hybridize()
        with mx.autograd.record():
            y = fused(x)
            ref = mx.nd.relu(plain(x))
        np.testing.assert_allclose(y.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-6)


def test_kldiv_loss_sums_over_features():
    # MXNet 1.9's KLDivLoss sums label * (log label - pred) over the non-batch axes
    pred = mx.nd.array([[0.2, 0.8], [0.6, 0.4]])
    label = mx.nd.array([[0, 1], [1, 0]])
    np.testing.assert_allclose(gluon.loss.KLDivLoss()(pred, label).asnumpy(), [-0.8, -0.6],
                               rtol=1e-6)


def test_norm_layer_reprs_match_mxnet():
    assert repr(nn.LayerNorm()).endswith("scale=True, in_channels=0)")
    assert repr(nn.InstanceNorm()).endswith("scale=False, in_channels=0)")
    assert repr(nn.GroupNorm()) == "GroupNorm(eps=1e-05, num_groups=1, center=True, scale=True)"
    ln = nn.LayerNorm()
    ln.initialize()
    ln(mx.nd.ones((2, 3)))
    assert repr(ln).endswith("in_channels=3)")


def test_rnn_cell_and_batchnorm_reprs_match_mxnet():
    # MXNet shows the i2h weight's rows (gates * hidden) and BatchNorm's unknown width as None
    assert repr(gluon.rnn.LSTMCell(4)) == "LSTMCell(None -> 16)"
    assert repr(gluon.rnn.GRUCell(3, input_size=2)) == "GRUCell(2 -> 9)"
    assert repr(gluon.rnn.RNNCell(3)) == "RNNCell(None -> 3, tanh)"
    assert repr(nn.BatchNorm(center=False)).endswith("in_channels=None)")
    assert repr(mx.init.Xavier()).startswith("<sparsym.initializer.Xavier object at")
