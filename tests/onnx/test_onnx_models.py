"""Models exported to ONNX run in onnxruntime as in sparsym (1e-4 relative), and import
back (import_model, import_to_gluon) to the same outputs: the model zoo, LeNet, MLPs,
embeddings, the fused RNN op (LSTM/GRU/RNN language models) and the sparse models'
inference graphs (csr inputs exported as dense inputs)."""
import os
import sys

import numpy as np
import pytest

import sparsym as mx
from sparsym.gluon import nn, rnn
from sparsym.gluon.model_zoo import vision

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RTOL = 1e-4


def _rel(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / (np.abs(b).max() + 1e-12))


def _run_ort(path, feeds):
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return sess.run(None, {k: np.asarray(v) for k, v in feeds.items()})


def check_round_trip(path, feeds, expected):
    """onnxruntime, import_model + bind and import_to_gluon all give ``expected``."""
    got = _run_ort(path, feeds)
    for g, e in zip(got, expected):
        assert _rel(g, e) < RTOL, _rel(g, e)
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    args = dict(arg, **{k: mx.nd.array(v) for k, v in feeds.items()})
    outs = sym.bind(mx.cpu(), args, aux_states=aux).forward()
    for g, e in zip(outs, expected):
        assert _rel(g.asnumpy(), e) < RTOL
    block = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
    res = block(*[mx.nd.array(v) for v in feeds.values()])
    res = res if isinstance(res, (list, tuple)) else [res]
    for g, e in zip(res, expected):
        assert _rel(g.asnumpy(), e) < RTOL


def export_block(net, x, tmp_path, name="model", dtype=np.float32, **kw):
    """Hybridize, run, HybridBlock.export and mx.onnx.export_model from the files."""
    net.hybridize()
    y = net(x)
    prefix = str(tmp_path / name)
    net.export(prefix)
    path = mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params",
                                [x.shape], dtype, prefix + ".onnx", **kw)
    ys = y if isinstance(y, (list, tuple)) else [y]
    return path, [v.asnumpy() for v in ys]


def _image(shape, seed=0):
    return mx.nd.array(np.random.RandomState(seed).uniform(-1, 1, shape).astype("float32"))


def _zoo_short(name):
    """Small stand-ins with the same operators, for the default run."""
    if name == "densenet":
        return vision.DenseNet(8, 4, [2, 2], classes=10), 56
    if name == "vgg_bn":                 # VGG's layers with 64 units for its two 4096s
        net = nn.HybridSequential()
        for channels in (8, 16):
            net.add(nn.Conv2D(channels, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
                    nn.MaxPool2D(2, 2))
        net.add(nn.Dense(64, activation="relu"), nn.Dropout(0.5),
                nn.Dense(64, activation="relu"), nn.Dropout(0.5), nn.Dense(10))
        return net, 32
    if name == "inception":
        from sparsym.gluon.model_zoo.vision import inception as inc
        net = nn.HybridSequential()
        net.add(inc._block_a(8, "A_"), inc._block_b("B_"), inc._block_c(16, "C_"),
                inc._block_d("D_"), inc._block_e("E_"), nn.GlobalAvgPool2D(), nn.Dense(10))
        return net, 9
    raise KeyError(name)


ZOO = [("resnet18_v1", 32), ("resnet18_v2", 32), ("mobilenet0.25", 32),
       ("mobilenetv2_0.25", 32), ("vgg_bn", None), ("squeezenet1.1", 224),
       ("densenet", None), ("inception", None)]
ZOO_FULL = [("resnet50_v1", 64), ("resnet50_v2", 64), ("mobilenet1.0", 64),
            ("mobilenetv2_1.0", 64), ("vgg11", 32), ("vgg11_bn", 32), ("vgg16", 32),
            ("squeezenet1.0", 224),
            ("densenet121", 224), ("inceptionv3", 299), ("alexnet", 224)]


@pytest.mark.parametrize("name,size", ZOO)
def test_model_zoo_exports_runs_and_imports(name, size, tmp_path):
    if size is None:
        net, size = _zoo_short(name)
        channels = 8 if name == "inception" else 3
    else:
        net, channels = vision.get_model(name, classes=10), 3
    net.initialize(mx.init.Xavier())
    x = _image((1, channels, size, size))
    path, expected = export_block(net, x, tmp_path, name)
    check_round_trip(path, {"data": x.asnumpy()}, expected)


@pytest.mark.slow
@pytest.mark.parametrize("name,size", ZOO_FULL)
def test_model_zoo_full_size(name, size, tmp_path):
    net = vision.get_model(name, classes=10)
    net.initialize(mx.init.Xavier())
    x = _image((1, 3, size, size))
    path, expected = export_block(net, x, tmp_path, name)
    check_round_trip(path, {"data": x.asnumpy()}, expected)


def test_lenet(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(6, 5, activation="tanh"), nn.MaxPool2D(2, 2),
            nn.Conv2D(16, 5, activation="tanh"), nn.AvgPool2D(2, 2), nn.Flatten(),
            nn.Dense(120, activation="tanh"), nn.Dense(84, activation="tanh"), nn.Dense(10))
    net.initialize(mx.init.Xavier())
    x = _image((2, 1, 28, 28))
    path, expected = export_block(net, x, tmp_path, "lenet")
    check_round_trip(path, {"data": x.asnumpy()}, expected)


def test_mlp_symbol_with_softmax_output(tmp_path):
    data = mx.sym.var("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=32, name="fc1"), "relu")
    h = mx.sym.LeakyReLU(mx.sym.FullyConnected(h, num_hidden=16, name="fc2"), slope=0.1)
    out = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10, name="fc3"),
                               name="softmax")
    mod = mx.mod.Module(out)
    mod.bind([("data", (4, 20))], [("softmax_label", (4,))], for_training=False)
    mod.init_params(mx.init.Xavier())
    x = _image((4, 20))
    mod.forward(mx.io.DataBatch([x], None), is_train=False)
    expected = [mod.get_outputs()[0].asnumpy()]
    arg, aux = mod.get_params()
    prefix = str(tmp_path / "mlp")
    mod.save_checkpoint(prefix, 0)
    for sym, params in ((out, [arg, aux]), (prefix + "-symbol.json", prefix + "-0000.params"),
                        (out, dict(arg, **aux))):
        path = mx.onnx.export_model(sym, params, [(4, 20)], np.float32, prefix + ".onnx")
        check_round_trip(path, {"data": x.asnumpy()}, expected)
    assert np.allclose(expected[0].sum(axis=1), 1, atol=1e-5)   # the softmax, not the label


class _LM(mx.gluon.HybridBlock):
    def __init__(self, mode, bidirectional, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.embed = nn.Embedding(50, 8)
            layer = {"lstm": rnn.LSTM, "gru": rnn.GRU, "rnn_tanh": rnn.RNN}[mode]
            self.rnn = layer(16, num_layers=2, layout="NTC", input_size=8,
                             bidirectional=bidirectional)
            self.decoder = nn.Dense(50, flatten=False)

    def hybrid_forward(self, F, x):
        return self.decoder(self.rnn(self.embed(x)))


@pytest.mark.parametrize("mode,bidirectional", [("lstm", False), ("lstm", True),
                                                ("gru", False), ("rnn_tanh", True)])
def test_rnn_language_model(mode, bidirectional, tmp_path):
    net = _LM(mode, bidirectional)
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(0).randint(0, 50, (3, 6)))
    path, expected = export_block(net, x, tmp_path, "lm")
    check_round_trip(path, {"data": x.asnumpy()}, expected)


def test_rnn_symbol_with_states_and_state_outputs(tmp_path):
    data, params = mx.sym.var("data"), mx.sym.var("rnn_parameters")
    h0, c0 = mx.sym.var("h0"), mx.sym.var("c0")
    out = mx.sym.RNN(data, params, h0, c0, state_size=5, num_layers=2, mode="lstm",
                     state_outputs=True, name="rnn")
    size = 4 * 5 * (3 + 5 + 2) + 4 * 5 * (5 + 5 + 2)
    rs = np.random.RandomState(3)
    values = {"rnn_parameters": mx.nd.array(rs.normal(0, 0.3, size)),
              "h0": mx.nd.array(rs.normal(0, 0.5, (2, 2, 5))),
              "c0": mx.nd.array(rs.normal(0, 0.5, (2, 2, 5)))}
    x = _image((4, 2, 3))
    expected = [o.asnumpy() for o in out.bind(mx.cpu(), dict(values, data=x)).forward()]
    path = mx.onnx.export_model(out, values, [(4, 2, 3)], np.float32,
                                str(tmp_path / "rnn.onnx"))
    got = _run_ort(path, {"data": x.asnumpy()})
    assert len(got) == 3 and all(_rel(g, e) < RTOL for g, e in zip(got, expected))


def _sparse_models():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import factorization_machine as fm
    finally:
        sys.path.pop(0)
    data = mx.sym.Variable("data", stype="csr")
    weight = mx.sym.Variable("weight", shape=(100, 2), stype="row_sparse")
    bias = mx.sym.Variable("bias", shape=(2,))
    linear = mx.sym.SoftmaxOutput(mx.sym.broadcast_add(mx.sym.sparse.dot(data, weight), bias),
                                  mx.sym.Variable("softmax_label"), name="softmax")
    return {"factorization_machine": (fm.factorization_machine_model(4, 100),
                                      {"v": (100, 4), "w": (100, 1), "w0": (1,)}),
            "sparse_linear": (linear, {"weight": (100, 2), "bias": (2,)})}


@pytest.mark.parametrize("model", ["factorization_machine", "sparse_linear"])
def test_sparse_models_export_csr_inputs_as_dense(model, tmp_path):
    sym, shapes = _sparse_models()[model]
    rs = np.random.RandomState(1)
    params = {k: mx.nd.array(rs.normal(0, 0.3, s)) for k, s in shapes.items()}
    dense = (rs.rand(6, 100) < 0.1).astype("float32")
    args = dict(params, data=mx.nd.array(dense).tostype("csr"), softmax_label=mx.nd.zeros(6))
    expected = [sym.bind(mx.cpu(), args).forward()[0].asnumpy()]
    path = mx.onnx.export_model(sym, params, [(6, 100)], np.float32,
                                str(tmp_path / f"{model}.onnx"))
    check_round_trip(path, {"data": dense}, expected)


def test_matrix_factorization_embeddings(tmp_path):
    user, item = mx.sym.var("user"), mx.sym.var("item")
    u = mx.sym.Embedding(user, mx.sym.var("user_weight", stype="row_sparse"), input_dim=30,
                         output_dim=6, sparse_grad=True, name="user_embed")
    i = mx.sym.Embedding(item, mx.sym.var("item_weight"), input_dim=20, output_dim=6,
                         name="item_embed")
    u = mx.sym.FullyConnected(mx.sym.Activation(u, act_type="relu"), num_hidden=4,
                              name="user_fc")
    i = mx.sym.FullyConnected(mx.sym.Activation(i, act_type="relu"), num_hidden=4,
                              name="item_fc")
    pred = mx.sym.LinearRegressionOutput(mx.sym.Flatten(mx.sym.sum(u * i, axis=1)),
                                         mx.sym.var("score"), name="lro")
    rs = np.random.RandomState(2)
    shapes = {"user_weight": (30, 6), "item_weight": (20, 6), "user_fc_weight": (4, 6),
              "user_fc_bias": (4,), "item_fc_weight": (4, 6), "item_fc_bias": (4,)}
    params = {k: mx.nd.array(rs.normal(0, 0.5, s)) for k, s in shapes.items()}
    feeds = {"user": rs.randint(0, 30, 5).astype("float32"),
             "item": rs.randint(0, 20, 5).astype("float32")}
    args = dict(params, score=mx.nd.zeros(5), **{k: mx.nd.array(v) for k, v in feeds.items()})
    expected = [pred.bind(mx.cpu(), args).forward()[0].asnumpy()]
    path = mx.onnx.export_model(pred, params, [(5,), (5,)], np.float32,
                                str(tmp_path / "mf.onnx"))
    check_round_trip(path, feeds, expected)


def test_wide_and_deep(tmp_path):
    """examples/wide_deep.py: csr wide part, SparseEmbedding over row_sparse tables fed by
    slices and a squeezing split of the dense input."""
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import wide_deep
    finally:
        sys.path.pop(0)
    sym = wide_deep.wide_deep_model(50, 3, 4, [10, 12, 8], (5, 16, 8))
    shapes, _, _ = sym.infer_shape(csr_data=(6, 50), dns_data=(6, 7), softmax_label=(6,))
    rs = np.random.RandomState(0)
    params = {n: mx.nd.array(rs.normal(0, 0.3, s)) for n, s in zip(sym.list_arguments(), shapes)
              if n not in ("csr_data", "dns_data", "softmax_label")}
    feeds = {"csr_data": (rs.rand(6, 50) < 0.1).astype("float32"),
             "dns_data": np.concatenate([rs.randint(0, 8, (6, 3)), rs.uniform(-1, 1, (6, 4))],
                                        axis=1).astype("float32")}
    args = dict(params, csr_data=mx.nd.array(feeds["csr_data"]).tostype("csr"),
                dns_data=mx.nd.array(feeds["dns_data"]), softmax_label=mx.nd.zeros(6))
    expected = [sym.bind(mx.cpu(), args).forward()[0].asnumpy()]
    path = mx.onnx.export_model(sym, params, [(6, 50), (6, 7)], np.float32,
                                str(tmp_path / "wide_deep.onnx"))
    check_round_trip(path, feeds, expected)
