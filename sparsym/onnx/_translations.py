"""One ONNX translation per MXNet operator (opset 17), for inference graphs.

Each translation is ``fn(c, node, a, ins, outs)``: the :class:`~._graph.Converter`, the
JSON node, its parsed attributes, its input entries and the tensor names its visible outputs
must get. Loss heads become their inference behaviour (SoftmaxOutput a softmax,
LinearRegressionOutput the identity...), Dropout the identity.
"""
from __future__ import annotations

import numpy as np

from ._tables import ExportError, register

_I64_MAX = np.iinfo(np.int64).max
_I64_MIN = np.iinfo(np.int64).min


def _tup(v, n, fill):
    """An attribute tuple of length ``n`` (MXNet's empty tuple means the default)."""
    if v is None or v == () or v == "":
        return (fill,) * n
    v = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    return v if len(v) == n else (v[0],) * n


def _check_layout(node, a):
    layout = a.get("layout")
    if layout not in (None, "None", "NCW", "NCHW", "NCDHW"):
        raise ExportError(f"{node['op']} '{node['name']}': layout {layout} cannot be exported "
                          "(ONNX takes channels-first data: NCW, NCHW, NCDHW)")


def _scalar(c, value, like, hint):
    return c.const(np.asarray(value, dtype=c.dtype(like)), hint)


# ---------------------------------------------------------------------- nn layers
def _conv_node(c, node, a, ins, outs, onnx_op, bias_default, **extra):
    """Conv / ConvTranspose: MXNet's kernel, stride, dilate, pad and num_group."""
    _check_layout(node, a)
    k = tuple(a["kernel"])
    n = len(k)
    inputs = [c.name(ins[0]), c.name(ins[1])]
    if not a.get("no_bias", bias_default) and len(ins) > 2:
        inputs.append(c.name(ins[2]))
    pad = _tup(a.get("pad"), n, 0)
    if "adj" in extra:
        extra["output_padding"] = _tup(extra.pop("adj"), n, 0)
    c.add(onnx_op, inputs, outs[:1], name=node["name"], kernel_shape=k,
          strides=_tup(a.get("stride"), n, 1), dilations=_tup(a.get("dilate"), n, 1),
          pads=pad + pad, group=int(a.get("num_group", 1)), **extra)


@register("Convolution")
def _convolution(c, node, a, ins, outs):
    _conv_node(c, node, a, ins, outs, "Conv", False)


@register("Deconvolution")
def _deconvolution(c, node, a, ins, outs):
    if a.get("target_shape") not in (None, ()):
        raise ExportError(f"Deconvolution '{node['name']}': target_shape cannot be exported")
    _conv_node(c, node, a, ins, outs, "ConvTranspose", True, adj=a.get("adj"))


@register("FullyConnected")
def _fully_connected(c, node, a, ins, outs):
    x, w = c.name(ins[0]), c.name(ins[1])
    bias = None if a.get("no_bias", False) or len(ins) < 3 else c.name(ins[2])
    if a.get("flatten", True):
        if len(c.shape(ins[0])) != 2:
            x = c.add("Flatten", [x], axis=1)[0]
        c.add("Gemm", [x, w] + ([bias] if bias else []), outs[:1], name=node["name"], transB=1)
        return
    wt = c.add("Transpose", [w], perm=[1, 0])[0]
    if bias is None:
        c.add("MatMul", [x, wt], outs[:1], name=node["name"])
    else:
        y = c.add("MatMul", [x, wt])[0]
        c.add("Add", [y, bias], outs[:1], name=node["name"])


@register("BatchNorm")
def _batch_norm(c, node, a, ins, outs):
    axis = int(a.get("axis", 1))
    if axis not in (1, 1 - len(c.shape(ins[0]))):
        raise ExportError(f"BatchNorm '{node['name']}': axis={axis} cannot be exported (ONNX "
                          "normalizes axis 1)")
    if a.get("fix_gamma", True):      # MXNet's default: gamma is taken as ones
        gamma = c.const(np.ones(c.shape(ins[1]), dtype=c.dtype(ins[1])),
                        node["name"] + "_fixed_gamma")
    else:
        gamma = c.name(ins[1])
    c.add("BatchNormalization", [c.name(ins[0]), gamma, c.name(ins[2]), c.name(ins[3]),
                                 c.name(ins[4])], outs[:1], name=node["name"],
          epsilon=float(a.get("eps", 1e-3)), momentum=float(a.get("momentum", 0.9)))


@register("LayerNorm")
def _layer_norm(c, node, a, ins, outs):
    c.add("LayerNormalization", [c.name(e) for e in ins[:3]], outs[:1], name=node["name"],
          axis=int(a.get("axis", -1)), epsilon=float(a.get("eps", 1e-5)))


@register("InstanceNorm")
def _instance_norm(c, node, a, ins, outs):
    c.add("InstanceNormalization", [c.name(e) for e in ins[:3]], outs[:1], name=node["name"],
          epsilon=float(a.get("eps", 1e-3)))


@register("LRN")
def _lrn(c, node, a, ins, outs):
    c.add("LRN", [c.name(ins[0])], outs[:1], name=node["name"], size=int(a["nsize"]),
          alpha=float(a.get("alpha", 1e-4)), beta=float(a.get("beta", 0.75)),
          bias=float(a.get("knorm", 2.0)))


_ACT = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus",
        "softsign": "Softsign"}


@register("Activation")
def _activation(c, node, a, ins, outs):
    act = a["act_type"]
    if act not in _ACT:
        raise ExportError(f"Activation '{node['name']}': act_type {act} cannot be exported")
    c.add(_ACT[act], [c.name(ins[0])], outs[:1], name=node["name"])


@register("LeakyReLU")
def _leaky_relu(c, node, a, ins, outs):
    act, x = a.get("act_type", "leaky"), c.name(ins[0])
    slope = float(a.get("slope", 0.25))
    if act == "leaky":
        c.add("LeakyRelu", [x], outs[:1], name=node["name"], alpha=slope)
    elif act == "rrelu":               # inference: the mean of the random slope's range
        alpha = (float(a.get("lower_bound", 0.125)) + float(a.get("upper_bound", 0.334))) / 2
        c.add("LeakyRelu", [x], outs[:1], name=node["name"], alpha=alpha)
    elif act == "elu":
        c.add("Elu", [x], outs[:1], name=node["name"], alpha=slope)
    elif act == "selu":
        c.add("Selu", [x], outs[:1], name=node["name"])
    elif act == "prelu":               # gamma (C,) applies along axis 1
        nd = len(c.shape(ins[0]))
        gamma = c.name(ins[1])
        if nd > 2:
            gamma = c.add("Reshape", [gamma, c.ints([-1] + [1] * (nd - 2),
                                                    node["name"] + "_gshape")])[0]
        c.add("PRelu", [x, gamma], outs[:1], name=node["name"])
    elif act == "gelu":                # x * (1 + erf(x / sqrt 2)) / 2
        dt = c.dtype(ins[0])
        e = c.add("Erf", [c.add("Div", [x, c.const(np.sqrt(2.0).astype(dt), "sqrt2")])[0]])[0]
        one = c.add("Add", [e, c.const(np.asarray(1, dt), "one")])[0]
        h = c.add("Mul", [x, one])[0]
        c.add("Mul", [h, c.const(np.asarray(0.5, dt), "half")], outs[:1], name=node["name"])
    else:
        raise ExportError(f"LeakyReLU '{node['name']}': act_type {act} cannot be exported")


@register("Pooling")
def _pooling(c, node, a, ins, outs):
    _check_layout(node, a)
    x, kind = c.name(ins[0]), a.get("pool_type", "max")
    if a.get("global_pool", False):
        op = {"max": "GlobalMaxPool", "avg": "GlobalAveragePool"}.get(kind)
        if op is None:
            raise ExportError(f"Pooling '{node['name']}': global {kind} pooling cannot be "
                              "exported")
        c.add(op, [x], outs[:1], name=node["name"])
        return
    k = tuple(a["kernel"])
    n = len(k)
    pad = _tup(a.get("pad"), n, 0)
    kw = dict(kernel_shape=k, strides=_tup(a.get("stride"), n, 1), pads=pad + pad,
              ceil_mode=int(a.get("pooling_convention", "valid") == "full"))
    if kind == "max":
        c.add("MaxPool", [x], outs[:1], name=node["name"], **kw)
    elif kind == "avg":
        c.add("AveragePool", [x], outs[:1], name=node["name"],
              count_include_pad=int(bool(a.get("count_include_pad", True))), **kw)
    elif kind == "sum":
        y = c.add("AveragePool", [x], count_include_pad=1, **kw)[0]
        c.add("Mul", [y, _scalar(c, float(np.prod(k)), ins[0], "window")], outs[:1],
              name=node["name"])
    else:
        raise ExportError(f"Pooling '{node['name']}': pool_type {kind} cannot be exported")


@register("Flatten", "flatten")
def _flatten(c, node, a, ins, outs):
    c.add("Flatten", [c.name(ins[0])], outs[:1], name=node["name"], axis=1)


@register("Dropout", "BlockGrad", "stop_gradient", "_copy", "identity", "MakeLoss",
          "make_loss", "LinearRegressionOutput", "MAERegressionOutput")
def _identity(c, node, a, ins, outs):
    c.add("Identity", [c.name(ins[0])], outs[:1], name=node["name"])


@register("LogisticRegressionOutput")
def _logistic_output(c, node, a, ins, outs):
    c.add("Sigmoid", [c.name(ins[0])], outs[:1], name=node["name"])


@register("softmax", "log_softmax")
def _softmax(c, node, a, ins, outs):
    x = c.name(ins[0])
    t = a.get("temperature")
    if t not in (None, 1, 1.0):
        x = c.add("Div", [x, _scalar(c, t, ins[0], "temperature")])[0]
    op = "Softmax" if node["op"] == "softmax" else "LogSoftmax"
    c.add(op, [x], outs[:1], name=node["name"], axis=int(a.get("axis", -1)))


@register("SoftmaxOutput", "Softmax")
def _softmax_output(c, node, a, ins, outs):
    x, nd = c.name(ins[0]), len(c.shape(ins[0]))
    if a.get("multi_output", False):
        c.add("Softmax", [x], outs[:1], name=node["name"], axis=1)
    elif a.get("preserve_shape", False) or nd <= 2:
        c.add("Softmax", [x], outs[:1], name=node["name"], axis=-1)
    else:                              # MXNet: softmax over all but the first axis
        flat = c.add("Flatten", [x], axis=1)[0]
        y = c.add("Softmax", [flat], axis=-1)[0]
        c.add("Reshape", [y, c.add("Shape", [x])[0]], outs[:1], name=node["name"])


@register("Embedding", "_contrib_SparseEmbedding", "SparseEmbedding")
def _embedding(c, node, a, ins, outs):
    idx = c.add("Cast", [c.name(ins[0])], to=c.tensor_type(np.int64))[0]
    c.add("Gather", [c.name(ins[1]), idx], outs[:1], name=node["name"], axis=0)

