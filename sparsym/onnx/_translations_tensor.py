"""ONNX translations of MXNet's tensor operators: arithmetic, reductions, products, shape
and layout operators (opset 17)."""
from __future__ import annotations

import numpy as np

from ._tables import ExportError, register
from ._translations import _I64_MAX, _I64_MIN, _scalar

_BINARY = {"Add": ("elemwise_add", "_plus", "_Plus", "_add", "broadcast_add", "broadcast_plus"),
           "Sub": ("elemwise_sub", "_minus", "_Minus", "_sub", "broadcast_sub",
                   "broadcast_minus"),
           "Mul": ("elemwise_mul", "_mul", "_Mul", "broadcast_mul"),
           "Div": ("elemwise_div", "_div", "_Div", "broadcast_div"),
           "Max": ("_maximum", "_Maximum", "broadcast_maximum", "maximum"),
           "Min": ("_minimum", "_Minimum", "broadcast_minimum", "minimum"),
           "Pow": ("_power", "_Power", "broadcast_power", "power")}
# scalar op -> (ONNX op, scalar on the left)
_SCALAR = {"_plus_scalar": ("Add", False), "_PlusScalar": ("Add", False),
           "_minus_scalar": ("Sub", False), "_MinusScalar": ("Sub", False),
           "_rminus_scalar": ("Sub", True), "_RMinusScalar": ("Sub", True),
           "_mul_scalar": ("Mul", False), "_MulScalar": ("Mul", False),
           "_div_scalar": ("Div", False), "_DivScalar": ("Div", False),
           "_rdiv_scalar": ("Div", True), "_RDivScalar": ("Div", True),
           "_power_scalar": ("Pow", False), "_PowerScalar": ("Pow", False),
           "_rpower_scalar": ("Pow", True), "_RPowerScalar": ("Pow", True),
           "_maximum_scalar": ("Max", False), "_MaximumScalar": ("Max", False),
           "_minimum_scalar": ("Min", False), "_MinimumScalar": ("Min", False)}
_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log",
          "sqrt": "Sqrt", "abs": "Abs", "negative": "Neg", "reciprocal": "Reciprocal",
          "floor": "Floor", "ceil": "Ceil", "erf": "Erf", "sin": "Sin", "cos": "Cos",
          "tan": "Tan", "softsign": "Softsign", "sign": "Sign", "round": "Round"}
_REDUCE = {"sum": "ReduceSum", "sum_axis": "ReduceSum", "mean": "ReduceMean",
           "max": "ReduceMax", "max_axis": "ReduceMax", "min": "ReduceMin",
           "min_axis": "ReduceMin", "prod": "ReduceProd", "_square_sum": "ReduceSumSquare"}


def _binary(onnx_op):
    def fn(c, node, a, ins, outs):
        c.add(onnx_op, [c.name(ins[0]), c.name(ins[1])], outs[:1], name=node["name"])
    return fn


for _op, _names in _BINARY.items():
    register(*_names)(_binary(_op))


@register(*_SCALAR)
def _scalar_op(c, node, a, ins, outs):
    op, left = _SCALAR[node["op"]]
    s = _scalar(c, float(a["scalar"]), ins[0], node["name"] + "_scalar")
    x = c.name(ins[0])
    c.add(op, [s, x] if left else [x, s], outs[:1], name=node["name"])


@register(*_UNARY)
def _unary(c, node, a, ins, outs):
    c.add(_UNARY[node["op"]], [c.name(ins[0])], outs[:1], name=node["name"])


@register("square")
def _square(c, node, a, ins, outs):
    x = c.name(ins[0])
    c.add("Mul", [x, x], outs[:1], name=node["name"])


@register("rsqrt")
def _rsqrt(c, node, a, ins, outs):
    c.add("Reciprocal", [c.add("Sqrt", [c.name(ins[0])])[0]], outs[:1], name=node["name"])


@register("add_n", "ElementWiseSum", "_contrib_add_n")
def _add_n(c, node, a, ins, outs):
    c.add("Sum", [c.name(e) for e in ins], outs[:1], name=node["name"])


@register("clip")
def _clip(c, node, a, ins, outs):
    lo = _scalar(c, float(a["a_min"]), ins[0], node["name"] + "_min")
    hi = _scalar(c, float(a["a_max"]), ins[0], node["name"] + "_max")
    c.add("Clip", [c.name(ins[0]), lo, hi], outs[:1], name=node["name"])


@register("Cast", "cast", "amp_cast")
def _cast(c, node, a, ins, outs):
    c.add("Cast", [c.name(ins[0])], outs[:1], name=node["name"],
          to=c.tensor_type(np.dtype(a["dtype"])))


@register("Concat", "concat", "_rnn_param_concat")
def _concat(c, node, a, ins, outs):
    c.add("Concat", [c.name(e) for e in ins], outs[:1], name=node["name"],
          axis=int(a.get("dim", 1)))


# ---------------------------------------------------------------------- products
def _swap_last(c, x, nd):
    perm = list(range(nd))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return c.add("Transpose", [x], perm=perm)[0]


@register("dot", "_sparse_dot")
def _dot(c, node, a, ins, outs):
    sa, sb = c.shape(ins[0]), c.shape(ins[1])
    x, y = c.name(ins[0]), c.name(ins[1])
    if a.get("transpose_a", False):
        if len(sa) != 2:
            raise ExportError(f"dot '{node['name']}': transpose_a of a {len(sa)}-D operand "
                              "cannot be exported")
        x = c.add("Transpose", [x], perm=[1, 0])[0]
    if len(sb) > 2 or (a.get("transpose_b", False) and len(sb) != 2):
        raise ExportError(f"dot '{node['name']}': a {len(sb)}-D right operand cannot be "
                          "exported (ONNX MatMul contracts it batch-wise)")
    if a.get("transpose_b", False):
        y = c.add("Transpose", [y], perm=[1, 0])[0]
    c.add("MatMul", [x, y], outs[:1], name=node["name"])


@register("batch_dot")
def _batch_dot(c, node, a, ins, outs):
    x, y = c.name(ins[0]), c.name(ins[1])
    if a.get("transpose_a", False):
        x = _swap_last(c, x, len(c.shape(ins[0])))
    if a.get("transpose_b", False):
        y = _swap_last(c, y, len(c.shape(ins[1])))
    c.add("MatMul", [x, y], outs[:1], name=node["name"])


# ---------------------------------------------------------------------- reductions
@register(*_REDUCE)
def _reduce(c, node, a, ins, outs):
    nd = len(c.shape(ins[0]))
    axis = a.get("axis")
    axes = None if axis in (None, ()) else [int(x) % nd for x in
                                            (axis if isinstance(axis, tuple) else (axis,))]
    if a.get("exclude", False):
        axes = [i for i in range(nd) if i not in (axes or [])]
    op, keep = _REDUCE[node["op"]], int(bool(a.get("keepdims", False)))
    x = c.name(ins[0])
    if axes is not None and not axes:          # exclude of every axis: nothing reduced
        c.add("Identity", [x], outs[:1], name=node["name"])
        return
    if op == "ReduceSum":                      # axes an input from opset 13
        inputs = [x] + ([c.ints(axes, node["name"] + "_axes")] if axes is not None else [])
        c.add(op, inputs, outs[:1], name=node["name"], keepdims=keep)
    else:
        c.add(op, [x], outs[:1], name=node["name"], keepdims=keep, axes=axes)


# ---------------------------------------------------------------------- shapes
@register("Reshape", "reshape")
def _reshape(c, node, a, ins, outs):
    shape = a.get("shape")
    if shape in (None, ()):
        shape = a.get("target_shape")
    x = c.name(ins[0])
    simple = (shape is not None and not a.get("reverse", False)
              and all(d >= -1 for d in shape) and list(shape).count(-1) <= 1)
    if not simple:                              # MXNet's -2/-3/-4 codes: the inferred shape
        out = c.shapes[(c.nid, 0)]
        if out is None:
            raise ExportError(f"Reshape '{node['name']}': the output shape is unknown")
        shape = list(out)
        src = c.shape(ins[0])
        if c.dynamic and src and shape and shape[0] == src[0]:
            shape[0] = 0                        # keep the (dynamic) batch dimension
    c.add("Reshape", [x, c.ints(list(shape), node["name"] + "_shape")], outs[:1],
          name=node["name"])


@register("transpose")
def _transpose(c, node, a, ins, outs):
    axes = a.get("axes")
    nd = len(c.shape(ins[0]))
    perm = list(range(nd))[::-1] if axes in (None, ()) else [int(x) % nd for x in axes]
    c.add("Transpose", [c.name(ins[0])], outs[:1], name=node["name"], perm=perm)


@register("SwapAxis", "swapaxes")
def _swapaxis(c, node, a, ins, outs):
    nd = len(c.shape(ins[0]))
    perm = list(range(nd))
    i, j = int(a.get("dim1", 0)) % nd, int(a.get("dim2", 0)) % nd
    perm[i], perm[j] = perm[j], perm[i]
    c.add("Transpose", [c.name(ins[0])], outs[:1], name=node["name"], perm=perm)


@register("expand_dims")
def _expand_dims(c, node, a, ins, outs):
    nd = len(c.shape(ins[0])) + 1
    axis = int(a["axis"]) % nd
    c.add("Unsqueeze", [c.name(ins[0]), c.ints([axis], node["name"] + "_axes")], outs[:1],
          name=node["name"])


@register("squeeze")
def _squeeze(c, node, a, ins, outs):
    shape = c.shape(ins[0])
    axis = a.get("axis")
    axes = ([i for i, d in enumerate(shape) if d == 1] if axis in (None, ()) else
            [int(x) % len(shape) for x in (axis if isinstance(axis, tuple) else (axis,))])
    c.add("Squeeze", [c.name(ins[0]), c.ints(axes, node["name"] + "_axes")], outs[:1],
          name=node["name"])


def _slice(c, node, x, starts, ends, axes, steps, out):
    c.add("Slice", [x, c.ints(starts, node["name"] + "_starts"),
                    c.ints(ends, node["name"] + "_ends"), c.ints(axes, node["name"] + "_axes"),
                    c.ints(steps, node["name"] + "_steps")], out, name=node["name"])


@register("slice", "crop")
def _slice_op(c, node, a, ins, outs):
    begin, end = a["begin"], a["end"]
    step = a.get("step") or (None,) * len(begin)
    starts, ends, steps = [], [], []
    for b, e, s in zip(begin, end, step):
        s = 1 if s is None else int(s)
        starts.append((0 if s > 0 else -1) if b is None else int(b))
        ends.append((_I64_MAX if s > 0 else _I64_MIN) if e is None else int(e))
        steps.append(s)
    _slice(c, node, c.name(ins[0]), starts, ends, list(range(len(begin))), steps, outs[:1])


@register("slice_axis")
def _slice_axis(c, node, a, ins, outs):
    end = a.get("end")
    _slice(c, node, c.name(ins[0]), [int(a["begin"])],
           [_I64_MAX if end is None else int(end)], [int(a["axis"])], [1], outs[:1])


@register("split", "SliceChannel")
def _split(c, node, a, ins, outs):
    shape = c.shape(ins[0])
    axis = int(a.get("axis", 1)) % len(shape)
    n = int(a["num_outputs"])
    sizes = c.ints([shape[axis] // n] * n, node["name"] + "_split")
    if not a.get("squeeze_axis", False):
        c.add("Split", [c.name(ins[0]), sizes], outs, name=node["name"], axis=axis)
        return
    parts = c.add("Split", [c.name(ins[0]), sizes], [c.unique(o + "_unsqueezed")
                                                      for o in outs], name=node["name"],
                  axis=axis)
    axes = c.ints([axis], node["name"] + "_axes")
    for p, o in zip(parts, outs):
        c.add("Squeeze", [p, axes], [o])


@register("Pad", "pad")
def _pad(c, node, a, ins, outs):
    width = list(a["pad_width"])
    mode = a.get("mode", "constant")
    pads = width[0::2] + width[1::2]
    value = _scalar(c, float(a.get("constant_value", 0.0)), ins[0], node["name"] + "_value")
    c.add("Pad", [c.name(ins[0]), c.ints(pads, node["name"] + "_pads"), value], outs[:1],
          name=node["name"], mode={"constant": "constant", "edge": "edge",
                                   "reflect": "reflect"}[mode])


@register("broadcast_to")
def _broadcast_to(c, node, a, ins, outs):
    src = c.shape(ins[0])
    shape = [s if t == 0 else t for s, t in zip(src, a["shape"])]
    c.add("Expand", [c.name(ins[0]), c.ints(shape, node["name"] + "_shape")], outs[:1],
          name=node["name"])
