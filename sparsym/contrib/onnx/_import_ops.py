"""One translation per ONNX operator: ``fn(g, node, attrs) -> [outputs]`` where each output
is a Symbol (or a NumPy array for a value computed from constants)."""
from __future__ import annotations

import numpy as np

from ... import symbol as S
from ...kernels.rnn import GATES, layout
from ._tables import ImportError_, register

_BIG = 2 ** 62


def _fail(node, what):
    raise ImportError_(f"ONNX {node.op_type} '{node.name or node.output[0]}': {what}")


def _ins(g, node):
    return [g.sym(n) for n in node.input if n]


def _pads(node, a, n):
    pads = list(a.get("pads", [0] * 2 * n))
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET", b"VALID", "VALID"):
        _fail(node, f"auto_pad {a['auto_pad']!r} is not supported (give explicit pads)")
    if pads[:n] != pads[n:]:
        _fail(node, f"asymmetric pads {pads} are not supported")
    return tuple(pads[:n])


def _ints_input(g, node, i, attr_name, a):
    """An integer list given as attribute (older opsets) or as constant input ``i``."""
    if attr_name in a:
        return [int(v) for v in a[attr_name]]
    if len(node.input) > i and node.input[i]:
        v = g.const(node.input[i])
        if v is None:
            _fail(node, f"input {i} ({attr_name}) must be a constant")
        return [int(x) for x in np.asarray(v).reshape(-1)]
    return None


# ---------------------------------------------------------------------- constants
@register("Constant")
def _constant(g, node, a):
    if "value" in a:
        return [g.numpy_helper.to_array(a["value"])]
    for k, dt in (("value_float", np.float32), ("value_int", np.int64),
                  ("value_floats", np.float32), ("value_ints", np.int64)):
        if k in a:
            return [np.asarray(a[k], dtype=dt)]
    _fail(node, "only tensor and numeric constants are supported")


@register("ConstantOfShape")
def _constant_of_shape(g, node, a):
    shape = g.const(node.input[0])
    if shape is None:
        _fail(node, "the shape must be a constant")
    value = g.numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
    return [np.full(tuple(int(s) for s in shape), value.reshape(-1)[0], dtype=value.dtype)]


# ---------------------------------------------------------------------- nn layers
@register("Conv", "ConvTranspose")
def _conv(g, node, a):
    w = g.const(node.input[1])
    wshape = w.shape if w is not None else g.shape(node.input[1])
    if wshape is None:
        _fail(node, "the weight's shape must be known")
    k = tuple(a.get("kernel_shape", wshape[2:]))
    n = len(k)
    group = int(a.get("group", 1))
    kw = dict(kernel=k, stride=tuple(a.get("strides", [1] * n)),
              dilate=tuple(a.get("dilations", [1] * n)), pad=_pads(node, a, n),
              num_group=group, no_bias=len(node.input) < 3 or not node.input[2],
              name=g.node_name(node))
    ins = _ins(g, node)
    if node.op_type == "Conv":
        return [S.Convolution(*ins, num_filter=wshape[0], **kw)]
    if "output_shape" in a:
        _fail(node, "output_shape is not supported (give pads)")
    return [S.Deconvolution(*ins, num_filter=wshape[1] * group,
                            adj=tuple(a.get("output_padding", [0] * n)), **kw)]


@register("Gemm")
def _gemm(g, node, a):
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    x, w = g.sym(node.input[0]), g.sym(node.input[1])
    if a.get("transA", 0):
        x = S.transpose(x)
    wshape = g.shape(node.input[1])
    if wshape is None:
        _fail(node, "the shape of B must be known")
    trans_b = bool(a.get("transB", 0))
    if not trans_b:
        w = S.transpose(w)
    hidden = wshape[0] if trans_b else wshape[1]
    bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
    bshape = g.shape(bias) if bias else None
    fused = bias is not None and beta == 1.0 and bshape is not None and tuple(bshape) == (
        hidden,)
    if alpha != 1.0:
        x = x * alpha
    name = g.node_name(node)
    if fused:
        return [S.FullyConnected(x, w, g.sym(bias), num_hidden=hidden, name=name)]
    y = S.FullyConnected(x, w, num_hidden=hidden, no_bias=True,
                         name=name if bias is None else name + "_gemm")
    if bias is not None:
        c = g.sym(bias) * beta if beta != 1.0 else g.sym(bias)
        y = S.broadcast_add(y, c, name=name)
    return [y]


@register("MatMul")
def _matmul(g, node, a):
    ra, rb = g.rank(node.input[0]), g.rank(node.input[1])
    name = g.node_name(node)
    x, y = g.sym(node.input[0]), g.sym(node.input[1])
    if rb == 2:
        if ra == 2:
            return [S.dot(x, y, name=name)]
        shape = g.shape(node.input[1])
        return [S.FullyConnected(x, S.transpose(y), num_hidden=shape[1], no_bias=True,
                                 flatten=False, name=name)]
    if ra == rb == 3:
        return [S.batch_dot(x, y, name=name)]
    _fail(node, f"MatMul of ranks {ra} and {rb} is not supported")


@register("BatchNormalization")
def _batch_norm(g, node, a):
    if a.get("training_mode", 0):
        _fail(node, "training_mode=1 is not supported")
    return [S.BatchNorm(*_ins(g, node)[:5], eps=float(a.get("epsilon", 1e-5)),
                        momentum=float(a.get("momentum", 0.9)), fix_gamma=False,
                        name=g.node_name(node))]


@register("InstanceNormalization")
def _instance_norm(g, node, a):
    return [S.InstanceNorm(*_ins(g, node), eps=float(a.get("epsilon", 1e-5)),
                           name=g.node_name(node))]


@register("LayerNormalization")
def _layer_norm(g, node, a):
    ins = _ins(g, node)
    if len(ins) < 3:
        _fail(node, "a bias input is required")
    return [S.LayerNorm(*ins[:3], axis=int(a.get("axis", -1)),
                        eps=float(a.get("epsilon", 1e-5)), name=g.node_name(node))]


@register("LRN")
def _lrn(g, node, a):
    return [S.LRN(g.sym(node.input[0]), nsize=int(a["size"]), alpha=float(a.get("alpha", 1e-4)),
                  beta=float(a.get("beta", 0.75)), knorm=float(a.get("bias", 1.0)),
                  name=g.node_name(node))]


_ACT = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Softplus": "softrelu",
        "Softsign": "softsign"}


@register(*_ACT)
def _activation(g, node, a):
    return [S.Activation(g.sym(node.input[0]), act_type=_ACT[node.op_type],
                         name=g.node_name(node))]


@register("LeakyRelu", "Elu", "Selu")
def _leaky(g, node, a):
    x, name = g.sym(node.input[0]), g.node_name(node)
    if node.op_type == "LeakyRelu":
        return [S.LeakyReLU(x, act_type="leaky", slope=float(a.get("alpha", 0.01)), name=name)]
    if node.op_type == "Elu":
        return [S.LeakyReLU(x, act_type="elu", slope=float(a.get("alpha", 1.0)), name=name)]
    if abs(float(a.get("alpha", 1.67326319)) - 1.67326319) > 1e-6 or abs(
            float(a.get("gamma", 1.05070102)) - 1.05070102) > 1e-6:
        _fail(node, "only the standard alpha and gamma are supported")
    return [S.LeakyReLU(x, act_type="selu", name=name)]


@register("PRelu")
def _prelu(g, node, a):
    slope = g.const(node.input[1])
    if slope is None:
        _fail(node, "the slope must be a constant")
    gamma = g.param(slope.reshape(-1), node.input[1] + "_gamma")
    return [S.LeakyReLU(g.sym(node.input[0]), gamma, act_type="prelu", name=g.node_name(node))]


@register("MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool")
def _pool(g, node, a):
    x, name, op = g.sym(node.input[0]), g.node_name(node), node.op_type
    kind = "max" if "Max" in op else "avg"
    if op.startswith("Global"):
        return [S.Pooling(x, kernel=(1, 1), global_pool=True, pool_type=kind, name=name)]
    if a.get("storage_order", 0) or len(node.output) > 1 and node.output[1]:
        _fail(node, "indices output / storage_order are not supported")
    k = tuple(a["kernel_shape"])
    n = len(k)
    if any(d != 1 for d in a.get("dilations", [1] * n)):
        _fail(node, "dilated pooling is not supported")
    kw = dict(kernel=k, stride=tuple(a.get("strides", [1] * n)), pad=_pads(node, a, n),
              pool_type=kind, pooling_convention="full" if a.get("ceil_mode", 0) else "valid",
              name=name)
    if kind == "avg":
        kw["count_include_pad"] = bool(a.get("count_include_pad", 0))
    return [S.Pooling(x, **kw)]


@register("Flatten")
def _flatten(g, node, a):
    axis = int(a.get("axis", 1))
    x, name = g.sym(node.input[0]), g.node_name(node)
    if axis == 1:
        return [S.Flatten(x, name=name)]
    if axis == 0:
        return [S.reshape(x, shape=(1, -1), name=name)]
    shape = g.shape(node.input[0])
    if shape is None or any(d is None for d in shape):
        _fail(node, f"Flatten(axis={axis}) needs the input's static shape")
    axis %= len(shape)
    return [S.reshape(x, shape=(int(np.prod(shape[:axis])), -1), name=name)]


@register("Dropout", "Identity")
def _identity(g, node, a):
    src = node.input[0]
    if src in g.consts and src not in g.syms:
        return [g.consts[src]]
    return [S.identity(g.sym(src), name=g.node_name(node))]


# ---------------------------------------------------------------------- recurrent
_ORDER_BACK = {"LSTM": [0, 2, 3, 1], "GRU": [1, 0, 2], "RNN": [0]}


def _back(w, op, gates):
    blocks = np.split(w, gates, axis=0)
    return np.concatenate([blocks[i] for i in _ORDER_BACK[op]], axis=0)


@register("LSTM", "GRU", "RNN")
def _rnn(g, node, a):
    op, name = node.op_type, g.node_name(node)
    if a.get("layout", 0) or a.get("clip") is not None or a.get("input_forget", 0):
        _fail(node, "layout=1, clip and input_forget are not supported")
    if len(node.input) > 4 and node.input[4]:
        _fail(node, "sequence_lens is not supported")
    direction = a.get("direction", b"forward")
    direction = direction.decode() if isinstance(direction, bytes) else direction
    if direction == "reverse":
        _fail(node, "direction=reverse is not supported")
    D = 2 if direction == "bidirectional" else 1
    H = int(a["hidden_size"])
    if op == "LSTM":
        mode = "lstm"
    elif op == "GRU":
        if not a.get("linear_before_reset", 0):
            _fail(node, "linear_before_reset=0 is not supported (MXNet's GRU applies the "
                        "reset gate after the recurrent product)")
        mode = "gru"
    else:
        acts = [s.decode() if isinstance(s, bytes) else s for s in a.get("activations",
                                                                          ["Tanh"] * D)]
        if len(set(acts)) != 1 or acts[0] not in ("Tanh", "Relu"):
            _fail(node, f"activations {acts} are not supported")
        mode = "rnn_tanh" if acts[0] == "Tanh" else "rnn_relu"
    W, R = g.const(node.input[1]), g.const(node.input[2])
    B = g.const(node.input[3]) if len(node.input) > 3 and node.input[3] else None
    if W is None or R is None:
        _fail(node, "W and R must be constants")
    G = GATES[mode]
    C = W.shape[2]
    if B is None:
        B = np.zeros((D, 2 * G * H), dtype=W.dtype)
    table, total = layout(mode, H, 1, D == 2, C)
    flat = np.zeros(total, dtype=W.dtype)
    for d in range(D):
        for key, value in (("i2h_weight", W[d]), ("h2h_weight", R[d]),
                           ("i2h_bias", B[d][:G * H]), ("h2h_bias", B[d][G * H:])):
            off, shape = table[(0, d, key)]
            flat[off:off + value.size] = _back(value, op, G).reshape(-1)
    params = g.param(flat, name + "_parameters")
    states = []
    for i in (5, 6)[:2 if mode == "lstm" else 1]:
        if len(node.input) > i and node.input[i]:
            states.append(g.sym(node.input[i]))
        else:
            states.append(S.zeros(shape=(D, 0, H), dtype=W.dtype))
    out = S.RNN(g.sym(node.input[0]), params, *states, state_size=H, num_layers=1,
                bidirectional=D == 2, mode=mode, state_outputs=True, name=name)
    y = S.transpose(S.reshape(out[0], shape=(0, 0, D, H)), axes=(0, 2, 1, 3))
    return [y, out[1]] + ([out[2]] if mode == "lstm" else [])
