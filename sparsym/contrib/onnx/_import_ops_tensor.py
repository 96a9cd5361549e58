"""ONNX tensor operators -> sparsym: arithmetic, reductions, shape and layout operators."""
from __future__ import annotations

import numpy as np

from ... import symbol as S
from ._import_ops import _BIG, _fail, _ins, _ints_input
from ._tables import register

# ONNX op -> (broadcast op, scalar op, reversed scalar op, numpy function)
_BINARY = {"Add": ("broadcast_add", "_plus_scalar", "_plus_scalar", np.add),
           "Sub": ("broadcast_sub", "_minus_scalar", "_rminus_scalar", np.subtract),
           "Mul": ("broadcast_mul", "_mul_scalar", "_mul_scalar", np.multiply),
           "Div": ("broadcast_div", "_div_scalar", "_rdiv_scalar", np.divide),
           "Pow": ("broadcast_power", "_power_scalar", "_rpower_scalar", np.power),
           "Max": ("broadcast_maximum", "_maximum_scalar", "_maximum_scalar", np.maximum),
           "Min": ("broadcast_minimum", "_minimum_scalar", "_minimum_scalar", np.minimum)}
_UNARY = {"Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Abs": "abs", "Neg": "negative",
          "Reciprocal": "reciprocal", "Floor": "floor", "Ceil": "ceil", "Erf": "erf",
          "Sin": "sin", "Cos": "cos", "Tan": "tan", "Sign": "sign", "Round": "round"}
_REDUCE = {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max", "ReduceMin": "min",
           "ReduceProd": "prod", "ReduceSumSquare": "sum"}


def _op(name):
    return getattr(S, name)


@register(*_BINARY)
def _binary(g, node, a):
    bcast, scalar, rscalar, npf = _BINARY[node.op_type]
    l, r = node.input[0], node.input[1]
    lc, rc = g.const(l), g.const(r)
    name = g.node_name(node)
    if lc is not None and rc is not None and l not in g.syms and r not in g.syms:
        return [npf(lc, rc).astype(np.result_type(lc, rc))]
    for const, other, op in ((rc, l, scalar), (lc, r, rscalar)):
        if const is not None and const.size == 1 and (g.rank(other) or 0) >= const.ndim:
            return [_op(op)(g.sym(other), scalar=float(const.reshape(-1)[0]), name=name)]
    return [_op(bcast)(g.sym(l), g.sym(r), name=name)]


@register("Sum")
def _sum(g, node, a):
    ins = _ins(g, node)
    if len(ins) == 1:
        return [S.identity(ins[0], name=g.node_name(node))]
    return [S.add_n(*ins, name=g.node_name(node))]


@register(*_UNARY)
def _unary(g, node, a):
    return [_op(_UNARY[node.op_type])(g.sym(node.input[0]), name=g.node_name(node))]


@register("Clip")
def _clip(g, node, a):
    lo = a.get("min", g.const(node.input[1]) if len(node.input) > 1 else None)
    hi = a.get("max", g.const(node.input[2]) if len(node.input) > 2 else None)
    lo = -3.4e38 if lo is None else float(np.asarray(lo).reshape(-1)[0])
    hi = 3.4e38 if hi is None else float(np.asarray(hi).reshape(-1)[0])
    return [S.clip(g.sym(node.input[0]), a_min=lo, a_max=hi, name=g.node_name(node))]


@register("Concat")
def _concat(g, node, a):
    ins = _ins(g, node)
    return [S.Concat(*ins, dim=int(a["axis"]), num_args=len(ins), name=g.node_name(node))]


@register("Softmax", "LogSoftmax")
def _softmax(g, node, a):
    x, name = g.sym(node.input[0]), g.node_name(node)
    fn = S.softmax if node.op_type == "Softmax" else S.log_softmax
    rank = g.rank(node.input[0])
    if g.opset >= 13:
        return [fn(x, axis=int(a.get("axis", -1)), name=name)]
    axis = int(a.get("axis", 1))          # before opset 13: over the flattened trailing axes
    if rank is not None and axis % rank == rank - 1:
        return [fn(x, axis=-1, name=name)]
    if axis != 1:
        _fail(node, f"axis={axis} with opset {g.opset} is not supported")
    y = fn(S.Flatten(x), axis=-1)
    return [S.reshape_like(y, x, name=name)]


@register("Gather")
def _gather(g, node, a):
    axis = int(a.get("axis", 0))
    data, idx = node.input[0], node.input[1]
    value = g.const(data)
    name = g.node_name(node)
    if value is not None and value.ndim == 2 and axis == 0 and g.const(idx) is None:
        return [S.Embedding(g.sym(idx), g.sym(data), input_dim=value.shape[0],
                            output_dim=value.shape[1], dtype=str(value.dtype), name=name)]
    if value is not None and g.const(idx) is not None and data not in g.syms:
        return [np.take(value, g.const(idx), axis=axis)]
    return [S.take(g.sym(data), g.sym(idx), axis=axis, mode="wrap", name=name)]


@register("Cast")
def _cast(g, node, a):
    dtype = g.onnx.helper.tensor_dtype_to_np_dtype(int(a["to"]))
    src = node.input[0]
    if src in g.consts and src not in g.syms:
        return [g.consts[src].astype(dtype)]
    return [S.Cast(g.sym(src), dtype=np.dtype(dtype).name, name=g.node_name(node))]


@register(*_REDUCE)
def _reduce(g, node, a):
    axes = _ints_input(g, node, 1, "axes", a)
    keep = bool(a.get("keepdims", 1))
    x, name = g.sym(node.input[0]), g.node_name(node)
    if node.op_type == "ReduceSumSquare":
        x = S.square(x)
    if not axes:
        if a.get("noop_with_empty_axes", 0):
            return [S.identity(x, name=name)]
        return [_op(_REDUCE[node.op_type])(x, keepdims=keep, name=name)]
    return [_op(_REDUCE[node.op_type])(x, axis=tuple(axes), keepdims=keep, name=name)]


# ---------------------------------------------------------------------- shapes
@register("Reshape")
def _reshape(g, node, a):
    shape = _ints_input(g, node, 1, "shape", a)
    if shape is None:
        _fail(node, "the target shape must be a constant")
    if a.get("allowzero", 0) and 0 in shape:
        _fail(node, "allowzero=1 with a zero dimension is not supported")
    src = node.input[0]
    if src in g.consts and src not in g.syms:
        v = g.consts[src]
        return [v.reshape([v.shape[i] if d == 0 else d for i, d in enumerate(shape)])]
    return [S.reshape(g.sym(src), shape=tuple(shape), name=g.node_name(node))]


@register("Transpose")
def _transpose(g, node, a):
    src = node.input[0]
    perm = a.get("perm")
    if src in g.consts and src not in g.syms:
        return [np.transpose(g.consts[src], perm)]
    kw = {} if perm is None else {"axes": tuple(perm)}
    return [S.transpose(g.sym(src), name=g.node_name(node), **kw)]


@register("Unsqueeze")
def _unsqueeze(g, node, a):
    axes = _ints_input(g, node, 1, "axes", a)
    rank = g.rank(node.input[0])
    if any(x < 0 for x in axes):
        if rank is None:
            _fail(node, "negative axes need the input's rank")
        axes = [x % (rank + len(axes)) for x in axes]
    src = node.input[0]
    if src in g.consts and src not in g.syms:
        return [np.expand_dims(g.consts[src], tuple(axes))]
    y = g.sym(src)
    for i, ax in enumerate(sorted(axes)):
        y = S.expand_dims(y, axis=ax, name=g.node_name(node) if i == len(axes) - 1 else None)
    return [y]


@register("Squeeze")
def _squeeze(g, node, a):
    axes = _ints_input(g, node, 1, "axes", a)
    src = node.input[0]
    if src in g.consts and src not in g.syms:
        return [np.squeeze(g.consts[src], None if axes is None else tuple(axes))]
    kw = {} if not axes else {"axis": tuple(axes)}
    return [S.squeeze(g.sym(src), name=g.node_name(node), **kw)]


@register("Slice")
def _slice(g, node, a):
    starts = _ints_input(g, node, 1, "starts", a)
    ends = _ints_input(g, node, 2, "ends", a)
    axes = _ints_input(g, node, 3, "axes", a) or list(range(len(starts)))
    steps = _ints_input(g, node, 4, "steps", {}) or [1] * len(starts)
    rank = g.rank(node.input[0])
    if any(x < 0 for x in axes):
        if rank is None:
            _fail(node, "negative axes need the input's rank")
        axes = [x % rank for x in axes]
    n = max(axes) + 1
    begin, end, step = [None] * n, [None] * n, [None] * n
    for ax, b, e, s in zip(axes, starts, ends, steps):
        begin[ax] = None if (s > 0 and b <= -_BIG) or (s < 0 and b >= _BIG) else b
        end[ax] = None if abs(e) >= _BIG else e
        step[ax] = s
    return [S.slice(g.sym(node.input[0]), begin=tuple(begin), end=tuple(end),
                    step=tuple(step), name=g.node_name(node))]


@register("Split")
def _split(g, node, a):
    shape = g.shape(node.input[0])
    rank = None if shape is None else len(shape)
    axis = int(a.get("axis", 0))
    if axis < 0:
        if rank is None:
            _fail(node, "a negative axis needs the input's rank")
        axis %= rank
    sizes = _ints_input(g, node, 1, "split", a)
    n = len(node.output)
    x, name = g.sym(node.input[0]), g.node_name(node)
    if sizes is None or len(set(sizes)) == 1:
        out = S.split(x, num_outputs=n, axis=axis, name=name)
        return [out[i] for i in range(n)] if n > 1 else [out]
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    return [S.slice_axis(x, axis=axis, begin=int(bounds[i]), end=int(bounds[i + 1]),
                         name=node.output[i]) for i in range(n)]


@register("Pad")
def _pad(g, node, a):
    pads = _ints_input(g, node, 1, "pads", a)
    mode = a.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    value = a.get("value", g.const(node.input[2]) if len(node.input) > 2 else None)
    value = 0.0 if value is None else float(np.asarray(value).reshape(-1)[0])
    n = len(pads) // 2
    width = tuple(v for i in range(n) for v in (pads[i], pads[n + i]))
    return [S.pad(g.sym(node.input[0]), mode=mode, pad_width=width, constant_value=value,
                  name=g.node_name(node))]


@register("Expand")
def _expand(g, node, a):
    shape = _ints_input(g, node, 1, "shape", a)
    src = g.shape(node.input[0])
    if src is None or any(d is None for d in src) or len(src) != len(shape):
        _fail(node, "Expand needs the input's static shape and a shape of the same rank")
    target = tuple(max(int(s), int(t)) for s, t in zip(src, shape))
    return [S.broadcast_to(g.sym(node.input[0]), shape=target, name=g.node_name(node))]


@register("Shape")
def _shape(g, node, a):
    shape = g.shape(node.input[0])
    if shape is None or any(d is None for d in shape):
        _fail(node, "Shape of a tensor with dynamic dimensions is not supported")
    return [np.asarray(shape, dtype=np.int64)]
