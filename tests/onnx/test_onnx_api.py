"""mx.onnx.export_model / mx.contrib.onnx's API: MXNet 1.9.1's signature and errors, the
dynamic batch dimension, metadata, a file MXNet 1.9.1 exported, and ONNX files written by
another exporter (built here with onnx.helper, checked against onnxruntime)."""
import inspect
import os

import numpy as np
import pytest

import sparsym as mx
from sparsym.base import UnsupportedFeatureError

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(os.path.dirname(HERE), "fixtures", "onnx")


def _rel(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / (np.abs(b).max() + 1e-12))


def _ort(path_or_model, feeds):
    src = path_or_model if isinstance(path_or_model, str) else \
        path_or_model.SerializeToString()
    return ort.InferenceSession(src, providers=["CPUExecutionProvider"]).run(None, feeds)


def _mlp():
    x = mx.sym.var("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=8, name="fc1"), "relu")
    out = mx.sym.softmax(mx.sym.FullyConnected(h, num_hidden=3, name="fc2"), name="prob")
    rs = np.random.RandomState(0)
    params = {"fc1_weight": rs.normal(0, 0.5, (8, 5)), "fc1_bias": rs.normal(0, 0.1, 8),
              "fc2_weight": rs.normal(0, 0.5, (3, 8)), "fc2_bias": rs.normal(0, 0.1, 3)}
    return out, {k: mx.nd.array(v) for k, v in params.items()}


def test_signature_is_mxnets():
    params = list(inspect.signature(mx.onnx.export_model).parameters)
    assert params == ["sym", "params", "in_shapes", "in_types", "onnx_file_path", "verbose",
                      "dynamic", "dynamic_input_shapes", "run_shape_inference", "input_type",
                      "input_shape"]
    ops = mx.onnx.get_operator_support()
    assert {"Convolution", "RNN", "Embedding", "SoftmaxOutput", "dot"} <= set(ops)
    assert mx.contrib.onnx.export_model is not mx.onnx.export_model   # MXNet's older path


def test_dynamic_batch_dimension(tmp_path):
    sym, params = _mlp()
    path = mx.onnx.export_model(sym, params, [(2, 5)], np.float32, str(tmp_path / "d.onnx"),
                                dynamic=True, dynamic_input_shapes=[(None, 5)],
                                run_shape_inference=True)
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert meta["input_tensor_data"] == [("data", (0, 5), TensorProto.FLOAT)]
    assert meta["output_tensor_data"] == [("prob", (0, 3))]     # ONNX's shape inference
    for batch in (1, 2, 7):
        x = np.random.RandomState(batch).uniform(-1, 1, (batch, 5)).astype("float32")
        ref = sym.bind(mx.cpu(), dict(params, data=mx.nd.array(x))).forward()[0].asnumpy()
        assert _rel(_ort(path, {"data": x})[0], ref) < 1e-5
    # all dimensions symbolic by default; a static export keeps them
    path = mx.onnx.export_model(sym, params, [(2, 5)], np.float32, str(tmp_path / "a.onnx"),
                                dynamic=True)
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert meta["input_tensor_data"][0][1] == (0, 0)
    assert meta["output_tensor_data"] == [("prob", (0, 0))]       # as MXNet's
    path = mx.onnx.export_model(sym, params, [(2, 5)], onnx_file_path=str(tmp_path / "s.onnx"))
    assert mx.contrib.onnx.get_model_metadata(path)["output_tensor_data"] == [("prob", (2, 3))]
    with pytest.raises(ValueError, match="dynamic=True"):
        mx.onnx.export_model(sym, params, [(2, 5)], np.float32, str(tmp_path / "x.onnx"),
                             dynamic_input_shapes=[(None, 5)])


def test_old_argument_names_and_errors(tmp_path):
    sym, params = _mlp()
    path = mx.onnx.export_model(sym, params, input_shape=[(2, 5)], input_type=np.float32,
                                onnx_file_path=str(tmp_path / "o.onnx"))
    assert os.path.exists(path)
    with pytest.raises(ValueError, match=r"1 input\(s\) \['data'\]"):
        mx.onnx.export_model(sym, params, [(2, 5), (3,)], onnx_file_path=str(tmp_path / "e"))
    with pytest.raises(ValueError, match="files or objects"):
        mx.onnx.export_model(sym, 3, [(2, 5)], onnx_file_path=str(tmp_path / "e"))
    bad = mx.sym.topk(mx.sym.var("data"), k=2, name="top")
    with pytest.raises(UnsupportedFeatureError, match="operator topk .*'top'"):
        mx.onnx.export_model(bad, {}, [(2, 5)], onnx_file_path=str(tmp_path / "e"))
    nhwc = mx.sym.Convolution(mx.sym.var("data"), kernel=(3, 3), num_filter=2, layout="NHWC",
                              no_bias=True, name="c")
    with pytest.raises(mx.onnx.ExportError, match="layout NHWC"):
        mx.onnx.export_model(nhwc, {"c_weight": mx.nd.ones((2, 3, 3, 1))}, [(1, 5, 5, 1)],
                             onnx_file_path=str(tmp_path / "e"))
    with pytest.raises(mx.base.MissingFileError):
        mx.contrib.onnx.import_model(str(tmp_path / "missing.onnx"))


def test_unknown_onnx_operator_names_itself(tmp_path):
    graph = helper.make_graph([helper.make_node("Hardmax", ["x"], ["y"], name="hm")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    path = str(tmp_path / "h.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    with pytest.raises(UnsupportedFeatureError, match="ONNX operator Hardmax .*'hm'"):
        mx.contrib.onnx.import_model(path)


def test_file_exported_by_mxnet_1_9_1_imports_and_matches():
    path = os.path.join(FIXTURES, "mxnet191_lenet_bn.onnx")
    expected = np.load(os.path.join(FIXTURES, "mxnet191_lenet_bn_expected.npz"))
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert meta["input_tensor_data"] == [("data", (0, 1, 12, 12), TensorProto.FLOAT)]
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    assert len(aux) == 2 and all("running" in k or "moving" in k for k in aux)
    block = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
    for k in ("2", "5"):                       # its batch dimension is dynamic
        x = mx.nd.array(expected["x" + k])
        assert _rel(block(x).asnumpy(), expected["y" + k]) < 1e-5
        out = sym.bind(mx.cpu(), dict(arg, data=x), aux_states=aux).forward()[0]
        assert _rel(out.asnumpy(), expected["y" + k]) < 1e-5


def _init(name, value):
    return numpy_helper.from_array(np.asarray(value, dtype=np.float32), name)


def _ints(name, value):
    return numpy_helper.from_array(np.asarray(value, dtype=np.int64), name)


def _compare_with_ort(model, feeds, tmp_path):
    onnx.checker.check_model(model)
    path = str(tmp_path / "foreign.onnx")
    onnx.save(model, path)
    expected = _ort(path, feeds)
    sym, arg, aux = mx.contrib.onnx.import_model(path)
    args = dict(arg, **{k: mx.nd.array(v) for k, v in feeds.items()})
    outs = sym.bind(mx.cpu(), args, aux_states=aux).forward()
    assert len(outs) == len(expected)
    for o, e in zip(outs, expected):
        assert o.shape == e.shape and _rel(o.asnumpy(), e) < 1e-4


def test_foreign_cnn_opset11(tmp_path):
    """An opset-11 graph as other exporters write it: Gemm with transB=0, Softmax over
    coerced 2-D input, attribute axes, Pad, PRelu, Clip with inputs, asymmetric layouts."""
    rs = np.random.RandomState(0)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("PRelu", ["c1", "slope"], ["p1"]),
        helper.make_node("AveragePool", ["p1"], ["a1"], kernel_shape=[2, 2], strides=[1, 1],
                         pads=[1, 1, 1, 1], count_include_pad=0),
        helper.make_node("Clip", ["a1", "lo", "hi"], ["k1"]),
        helper.make_node("Pad", ["k1", "pads"], ["pd"], mode="constant"),
        helper.make_node("Unsqueeze", ["pd"], ["u"], axes=[0]),
        helper.make_node("Squeeze", ["u"], ["s"], axes=[0]),
        helper.make_node("Flatten", ["s"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "w2", "b2"], ["g"], transB=0, alpha=0.5, beta=2.0),
        helper.make_node("Softmax", ["g"], ["y"], axis=1),
    ]
    inits = [_init("w1", rs.normal(0, 0.5, (4, 3, 3, 3))), _init("b1", rs.normal(0, 0.1, 4)),
             _init("slope", rs.uniform(0, 0.3, (4, 1, 1))), _init("lo", -0.5),
             _init("hi", 0.6), _ints("pads", [0, 0, 1, 1, 0, 0, 1, 1]),
             _init("w2", rs.normal(0, 0.3, (4 * 8 * 8, 6))), _init("b2", rs.normal(0, 0.1, 6))]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [2, 3, 10, 10])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [2, 6])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    x = rs.uniform(-1, 1, (2, 3, 10, 10)).astype("float32")
    _compare_with_ort(model, {"x": x}, tmp_path)


def test_foreign_tensor_graph_opset13(tmp_path):
    """MatMul, broadcasting arithmetic with scalars, reductions, Slice, Split, Concat,
    Transpose, Gather (an embedding table), Cast, activations."""
    rs = np.random.RandomState(1)
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["emb"], axis=0),
        helper.make_node("MatMul", ["emb", "proj"], ["m"]),
        helper.make_node("Add", ["m", "bias"], ["a"]),
        helper.make_node("Mul", ["a", "two"], ["b"]),
        helper.make_node("LeakyRelu", ["b"], ["lr"], alpha=0.2),
        helper.make_node("Transpose", ["lr"], ["t"], perm=[0, 2, 1]),
        helper.make_node("Slice", ["t", "st", "en", "ax", "sp"], ["sl"]),
        helper.make_node("Split", ["sl", "sizes"], ["p0", "p1"], axis=1),
        helper.make_node("Sigmoid", ["p0"], ["q0"]),
        helper.make_node("Concat", ["q0", "p1"], ["cc"], axis=1),
        helper.make_node("ReduceMean", ["cc"], ["rm"], axes=[2], keepdims=0),
        helper.make_node("ReduceSum", ["cc", "rax"], ["rs"], keepdims=1),
        helper.make_node("Sub", ["one", "rm"], ["y0"]),
        helper.make_node("Cast", ["rs"], ["y1"], to=TensorProto.DOUBLE),
    ]
    inits = [_init("table", rs.normal(0, 1, (20, 6))), _init("proj", rs.normal(0, 1, (6, 8))),
             _init("bias", rs.normal(0, 1, 8)), _init("two", 2.0), _init("one", 1.0),
             _ints("st", [1, 0]), _ints("en", [7, 2 ** 62]), _ints("ax", [1, 2]),
             _ints("sp", [2, 1]), _ints("sizes", [1, 2]), _ints("rax", [1])]
    graph = helper.make_graph(nodes, "tensor", [helper.make_tensor_value_info(
        "ids", TensorProto.INT64, [3, 4])], [
            helper.make_tensor_value_info("y0", TensorProto.FLOAT, [3, 3]),
            helper.make_tensor_value_info("y1", TensorProto.DOUBLE, [3, 1, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    _compare_with_ort(model, {"ids": rs.randint(0, 20, (3, 4)).astype(np.int64)}, tmp_path)


@pytest.mark.parametrize("op,direction", [("LSTM", "forward"), ("LSTM", "bidirectional"),
                                          ("GRU", "forward"), ("RNN", "bidirectional")])
def test_foreign_recurrent_nodes_with_initial_states(op, direction, tmp_path):
    rs = np.random.RandomState(2)
    D, H, C, T, N = (2 if direction == "bidirectional" else 1), 5, 3, 4, 2
    G = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    inputs = ["x", "W", "R", "B", "", "h0"] + (["c0"] if op == "LSTM" else [])
    outs = ["y", "yh"] + (["yc"] if op == "LSTM" else [])
    kw = {"linear_before_reset": 1} if op == "GRU" else {}
    nodes = [helper.make_node(op, inputs, outs, hidden_size=H, direction=direction, **kw)]
    inits = [_init("W", rs.normal(0, 0.4, (D, G * H, C))),
             _init("R", rs.normal(0, 0.4, (D, G * H, H))),
             _init("B", rs.normal(0, 0.2, (D, 2 * G * H)))]
    vin = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [T, N, C]),
           helper.make_tensor_value_info("h0", TensorProto.FLOAT, [D, N, H])]
    if op == "LSTM":
        vin.append(helper.make_tensor_value_info("c0", TensorProto.FLOAT, [D, N, H]))
    vout = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [T, D, N, H]),
            helper.make_tensor_value_info("yh", TensorProto.FLOAT, [D, N, H])]
    if op == "LSTM":
        vout.append(helper.make_tensor_value_info("yc", TensorProto.FLOAT, [D, N, H]))
    model = helper.make_model(helper.make_graph(nodes, "rnn", vin, vout, inits),
                              opset_imports=[helper.make_opsetid("", 14)])
    feeds = {"x": rs.uniform(-1, 1, (T, N, C)).astype("float32"),
             "h0": rs.uniform(-1, 1, (D, N, H)).astype("float32")}
    if op == "LSTM":
        feeds["c0"] = rs.uniform(-1, 1, (D, N, H)).astype("float32")
    _compare_with_ort(model, feeds, tmp_path)


def test_onnx_missing_says_how_to_install(monkeypatch, tmp_path):
    import sys
    monkeypatch.setitem(sys.modules, "onnx", None)
    sym, params = _mlp()
    with pytest.raises(ImportError, match="pip install onnx"):
        mx.onnx.export_model(sym, params, [(2, 5)], onnx_file_path=str(tmp_path / "m.onnx"))
    with pytest.raises(ImportError, match="pip install onnx"):
        mx.contrib.onnx.import_model(str(tmp_path / "m.onnx"))


def test_node_names_that_prefix_each_other(tmp_path):
    """A node named like the next one's prefix ('relu', 'relu_pool') keeps its own outputs."""
    x = mx.sym.var("data")
    r = mx.sym.relu(x, name="relu")
    p = mx.sym.Pooling(r, kernel=(2, 2), stride=(2, 2), pool_type="max", name="relu_pool")
    out = mx.sym.FullyConnected(mx.sym.Flatten(p, name="relu_pool_flat"), num_hidden=3,
                                name="relu_pool_fc")
    params = {"relu_pool_fc_weight": mx.nd.ones((3, 4)), "relu_pool_fc_bias": mx.nd.ones(3)}
    data = np.random.RandomState(3).uniform(-1, 1, (2, 1, 4, 4)).astype("float32")
    ref = out.bind(mx.cpu(), dict(params, data=mx.nd.array(data))).forward()[0].asnumpy()
    path = mx.onnx.export_model(out, params, [(2, 1, 4, 4)], onnx_file_path=str(
        tmp_path / "p.onnx"))
    assert _rel(_ort(path, {"data": data})[0], ref) < 1e-6
