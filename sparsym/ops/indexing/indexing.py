"""Indexing operators: slice, slice_axis, take, pick, one_hot and where (with sparse rows)."""
from __future__ import annotations

import math

import numpy as np

from ... import storage as st
from ...base import IndexOutOfRange, MXNetError, dtype_of
from ...kernels import csr as kcsr
from ...kernels import rsp as krsp
from ..core import rules
from ..core.grad import kept, multi_bw
from ..core.helpers import CSR, DNS, Checked, norm_axis, require
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register
from ..shape.shape import unary_shape_op


# ----------------------------------------------------------------------------- slice
def _slice_check(op, a):
    require(len(a.begin) == len(a.end), op,
            f"begin {a.begin} and end {a.end} must have the same length")
    require(not a.step or len(a.step) == len(a.begin), op,
            f"step {a.step} must have as many entries as begin {a.begin}")
    require(all(s is None or s != 0 for s in a.step), op, f"step must not be 0, got {a.step}")


_SLICE = Checked(_slice_check, begin=Field("shape", doc="start per axis (None = default)"),
                 end=Field("shape", doc="stop per axis (None = default)"),
                 step=Field("shape", (), doc="step per axis (default 1)"))


def _slices(a, shape):
    if len(a.begin) > len(shape):
        raise rules.Conflict("shape", 0, "input", f">= {len(a.begin)} dims", shape)
    out = []
    for i in range(len(a.begin)):
        step = a.step[i] if a.step and a.step[i] is not None else 1
        out.append(slice(a.begin[i], a.end[i], step))
    return tuple(out)


def _slice_out(a, s):
    sl = _slices(a, s)
    # an unknown dim stays unknown (MXNet's partial inference)
    out = tuple(None if d is None else len(range(*k.indices(d))) for k, d in zip(sl, s)) \
        + tuple(s[len(sl):])
    if any(d == 0 for d in out):
        raise rules.Conflict("shape", 0, "input", f"a non-empty slice {a.begin}:{a.end}", s)
    return out


def _slice_bwd(a, g, x):
    dx = np.zeros(x.shape, dtype=g.dtype)
    dx[_slices(a, x.shape)] = g
    return dx


def _unit_step(a, s):
    return all(v in (None, 1) for v in a.step)


def _slice_csr(a, xs):
    x = xs[0]
    begin = tuple(a.begin) + (None,) * (2 - len(a.begin))
    end = tuple(a.end) + (None,) * (2 - len(a.end))
    return (kcsr.slice_csr(x, begin, end),)


unary_shape_op(
    "slice", _SLICE, lambda a, x: np.ascontiguousarray(x[_slices(a, x.shape)]), _slice_out,
    _slice_bwd, aliases=("crop", "_sparse_slice"), partial=True,
    extra_rows=(Dispatch((CSR,), (CSR,), _slice_csr, when=_unit_step),),
    doc="""Slice with per-axis begin/end/step (None entries take the default).

    Storage: csr with unit step -> csr (MXNet's sparse row).

    Parameters
    ----------
    data : Symbol or NDArray
    begin, end : tuple of int or None
    step : tuple of int or None, default ()

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.slice(mx.nd.zeros((4, 5)), begin=(1, None), end=(3, None), step=(1, 2)).shape
    (2, 3)
    """)

_SLICE_AXIS = Params(axis=Field("int"), begin=Field("int"), end=Field("int_or_none"))


def _axis_slices(a, shape):
    ax = norm_axis(a.axis, len(shape), "slice_axis")
    sl = [slice(None)] * len(shape)
    sl[ax] = slice(a.begin, a.end)
    return tuple(sl), ax


def _slice_axis_out(a, s):
    sl, ax = _axis_slices(a, s)
    if s[ax] is None:  # unknown stays unknown (MXNet's partial inference)
        return tuple(s)
    # MXNet checks the bounds rather than clipping them as slice does
    size, b, e = s[ax], a.begin, a.end
    if (b + size if b < 0 else b) < 0:
        raise rules.Conflict("shape", 0, "input",
                             f"begin {b} within axis {a.axis} (Invalid begin for begin={b})", s)
    if e is not None and e > size:
        raise rules.Conflict("shape", 0, "input", f"end {e} within axis {a.axis} (Invalid end "
                             f"for end={e} as axis_size is {size})", s)
    n = len(range(*sl[ax].indices(s[ax])))
    if n <= 0:
        raise rules.Conflict("shape", 0, "input", f"a non-empty range {a.begin}:{a.end}", s)
    return s[:ax] + (n,) + s[ax + 1:]


def _slice_axis_bwd(a, g, x):
    dx = np.zeros(x.shape, dtype=g.dtype)
    dx[_axis_slices(a, x.shape)[0]] = g
    return dx


unary_shape_op(
    "slice_axis", _SLICE_AXIS,
    lambda a, x: np.ascontiguousarray(x[_axis_slices(a, x.shape)[0]]), _slice_axis_out,
    _slice_axis_bwd, partial=True,
    doc="Slice [begin, end) along one axis (end None = to the end; negatives count back).\n\n"
        "    Parameters\n    ----------\n    data : Symbol or NDArray\n    axis, begin : int\n"
        "    end : int or None\n")


# ----------------------------------------------------------------------------- take
_TAKE = Params(axis=Field("int", 0), mode=Field("str", "clip", choices=("clip", "raise", "wrap")))


def take_shape(attrs, ins, outs):
    a, idx = ins
    if a is not None and idx is not None:
        ax = norm_axis(attrs.axis, len(a), "take")
        rules.set_shape(outs, 0, tuple(a[:ax]) + tuple(idx) + tuple(a[ax + 1:]), "output")
    return ins, outs


def _take_ids(attrs, idx, n):
    ids = np.asarray(idx)
    if n == 0 and ids.size:
        raise MXNetError(f"take: cannot take {ids.size} indices from an axis of size 0 "
                         f"(mode={attrs.mode!r})")
    ids = np.floor(ids).astype(np.int64) if ids.dtype.kind == "f" else ids.astype(np.int64)
    if attrs.mode == "clip":
        return krsp.clip_ids(ids, n)
    if attrs.mode == "wrap":
        return np.mod(ids, n)
    if ids.size and (ids.min() < -n or ids.max() >= n):
        raise MXNetError(f"take: index out of range for axis of size {n} with mode='raise' "
                         f"(got min {ids.min()}, max {ids.max()})")
    return np.where(ids < 0, ids + n, ids)


def _take_fwd(attrs, xs):
    a = xs[0]
    ax = norm_axis(attrs.axis, a.ndim, "take")
    return (np.take(a, _take_ids(attrs, xs[1], a.shape[ax]), axis=ax),)


def _take_csr(attrs, xs):
    a = xs[0]
    ids = _take_ids(attrs, xs[1], a.shape[0]).reshape(-1)
    return (kcsr.take_rows_csr(a, ids),)


def _take_bwd(attrs, xs):
    g, idx, a = xs
    idx = st.todense(idx)  # the '*' row: indices stored sparse (forward fell back) still work
    a_shape = a.shape
    ax = norm_axis(attrs.axis, len(a_shape), "take")
    ids = _take_ids(attrs, idx, a_shape[ax]).reshape(-1)
    gm = np.moveaxis(st.todense(g).reshape(a_shape[:ax] + (ids.size,) + a_shape[ax + 1:]), ax, 0)
    out = np.zeros((a_shape[ax],) + gm.shape[1:], dtype=g.dtype)
    krsp.add_rows_at(out, ids, gm)
    return np.ascontiguousarray(np.moveaxis(out, 0, ax)), np.zeros(idx.shape, dtype=idx.dtype)


register(OpDef(
    "take", params=_TAKE, inputs=("a", "indices"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _take_fwd),
              Dispatch((CSR, DNS), (CSR,), _take_csr,
                       when=lambda a, s: a.axis == 0 and a.mode != "raise")),
    infer_shape=take_shape, infer_type=rules.first_input_type,
    gradient=lambda node, og: multi_bw("_backward_take", [og[0], node.inputs[1], node.inputs[0]],
                                       node, "backward", 2, **kept(node)),
    aliases=("_sparse_take",),
    doc="""Take elements along ``axis`` at ``indices``; output a.shape[:axis] + indices.shape +
    a.shape[axis+1:].

    mode 'clip' clips indices into range, 'wrap' wraps them, 'raise' raises on out-of-range.
    Storage: take(csr, indices, axis=0) -> csr.

    Parameters
    ----------
    a : Symbol or NDArray
    indices : Symbol or NDArray
    axis : int, default 0
    mode : {'clip', 'wrap', 'raise'}, default 'clip'

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.take(mx.nd.array([[1., 2.], [3., 4.]]), mx.nd.array([1, 5])).asnumpy().tolist()
    [[3.0, 4.0], [3.0, 4.0]]
    """))
register(OpDef(
    "_backward_take", params=_TAKE, inputs=("ograd", "indices", "a"), num_outputs=2,
    dispatch=(Dispatch(("*", "*", "*"), (DNS,), _take_bwd),),
    infer_shape=lambda a, i, o: (i, [i[2], i[1]]),
    infer_type=lambda a, i, o: (i, [i[2] if i[2] is not None else i[0], i[1]])))


# ----------------------------------------------------------------------------- pick
_PICK = Params(axis=Field("int_or_none", -1), keepdims=Field("bool", False),
               mode=Field("str", "clip", choices=("clip", "wrap")))


def pick_shape(attrs, ins, outs):
    d = ins[0]
    if d is not None:
        if attrs.axis is None:
            out = (1,) * len(d) if attrs.keepdims else ()
        else:
            ax = norm_axis(attrs.axis, len(d), "pick")
            out = tuple(d[:ax]) + ((1,) if attrs.keepdims else ()) + tuple(d[ax + 1:])
        idx = ins[1]
        # MXNet takes the index with or without the picked axis (same number of entries)
        if idx is None or None in idx or math.prod(idx) != math.prod(out):
            rules.set_shape(ins, 1, out if out else (1,))
        rules.set_shape(outs, 0, out if out else (1,), "output")
    return ins, outs


def _pick_pos(attrs, x, idx):
    if attrs.axis is None:
        flat = x.reshape(-1)
        ax, x = 0, flat
    else:
        ax = norm_axis(attrs.axis, x.ndim, "pick")
    n = x.shape[ax]
    ids = np.asarray(idx).astype(np.int64)  # a copy: clipped in place below
    if n == 0 and ids.size:  # MXNet reads out of bounds (segfault)
        raise IndexOutOfRange(f"pick: axis {ax} of the data {tuple(x.shape)} is empty; there is "
                              "no element to pick")
    if attrs.mode == "clip":  # two ufuncs: np.clip's wrapper costs more than the work here
        np.minimum(ids, n - 1, out=ids)
        np.maximum(ids, 0, out=ids)
    else:
        np.mod(ids, n, out=ids)
    ids = ids.reshape(x.shape[:ax] + (1,) + x.shape[ax + 1:])
    return x, ax, ids


def _last_axis_rows(x, ax, ids):
    """Row numbers for picking along the last axis of a contiguous array with one fancy
    index (a loss's class axis), or None: take_along_axis builds an index grid per axis,
    several times the cost of the pick itself on a small batch."""
    if ax != x.ndim - 1 or x.size == 0 or not x.flags.c_contiguous:
        return None
    return np.arange(ids.size)


def _pick_fwd(attrs, xs):
    x, ax, ids = _pick_pos(attrs, xs[0], xs[1])
    rows = _last_axis_rows(x, ax, ids)
    if rows is not None:
        out = x.reshape(-1, x.shape[-1])[rows, ids.reshape(-1)].reshape(ids.shape)
    else:
        out = np.take_along_axis(x, ids, axis=ax)
    out = out if attrs.keepdims else np.squeeze(out, axis=ax)
    return (out.reshape(out.shape or (1,)) if not attrs.keepdims or attrs.axis is not None
            else out.reshape((1,) * xs[0].ndim),)


def _pick_bwd(attrs, xs):
    g, idx, x0 = xs
    x, ax, ids = _pick_pos(attrs, np.zeros(x0.shape, dtype=g.dtype), idx)
    rows = _last_axis_rows(x, ax, ids)
    if rows is not None:
        x.reshape(-1, x.shape[-1])[rows, ids.reshape(-1)] = g.reshape(-1)
    else:
        np.put_along_axis(x, ids, g.reshape(ids.shape), axis=ax)
    return x.reshape(x0.shape), np.zeros(idx.shape, dtype=idx.dtype)


register(OpDef(
    "pick", params=_PICK, inputs=("data", "index"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _pick_fwd),), infer_shape=pick_shape,
    infer_type=rules.first_input_type,
    gradient=lambda node, og: multi_bw("_backward_pick", [og[0], node.inputs[1], node.inputs[0]],
                                       node, "backward", 2, **kept(node)),
    doc="""Pick one element per position along ``axis`` given by ``index``.

    Parameters
    ----------
    data : Symbol or NDArray
    index : Symbol or NDArray (data's shape without ``axis``)
    axis : int or None, default -1
    keepdims : bool, default False
    mode : {'clip', 'wrap'}, default 'clip'

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.array([[1., 2.], [3., 4.]])
    >>> mx.nd.pick(x, mx.nd.array([1, 0]), axis=1).asnumpy().tolist()
    [2.0, 3.0]
    """))
register(OpDef(
    "_backward_pick", params=_PICK, inputs=("ograd", "index", "data"), num_outputs=2,
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _pick_bwd),),
    infer_shape=lambda a, i, o: (i, [i[2], i[1]]),
    infer_type=lambda a, i, o: (i, [i[2] if i[2] is not None else i[0], i[1]])))


# ----------------------------------------------------------------------------- one_hot
def _oh_check(op, a):
    require(a.depth >= 0, op, f"depth must be >= 0, got {a.depth}")  # MXNet: 0 gives (..., 0)


_ONE_HOT = Checked(_oh_check, depth=Field("int"), on_value=Field("float", 1.0),
                   off_value=Field("float", 0.0),
                   dtype=Field("str", "float32", choices=("float16", "float32", "float64",
                                                          "int32", "int64", "int8", "uint8")))


def _one_hot(a, xs):
    ids = np.asarray(xs[0]).astype(np.int64)
    out = np.full(ids.shape + (a.depth,), a.off_value, dtype=dtype_of(a.dtype))
    if a.depth == 0:
        return (out,)
    valid = (ids >= 0) & (ids < a.depth)
    sel = np.where(valid, ids, 0)[..., None]
    np.put_along_axis(out, sel, np.where(valid, a.on_value, a.off_value)[..., None].astype(
        out.dtype), axis=-1)
    return (out,)


register(OpDef(
    "one_hot", params=_ONE_HOT, inputs=("indices",),
    dispatch=(Dispatch((DNS,), (DNS,), _one_hot),),
    infer_shape=lambda a, i, o: (i, [None if i[0] is None else tuple(i[0]) + (a.depth,)]),
    infer_type=lambda a, i, o: (i, [dtype_of(a.dtype)]),
    gradient=lambda node, og: [None],
    doc="""One-hot encode ``indices`` into a new last axis of size ``depth``.

    Out-of-range indices give a row of off_value.

    Parameters
    ----------
    indices : Symbol or NDArray
    depth : int
    on_value, off_value : float, default 1, 0
    dtype : str, default 'float32'

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.one_hot(mx.nd.array([1, 0]), depth=3).asnumpy().tolist()
    [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    """))


# ----------------------------------------------------------------------------- where
def where_shape(attrs, ins, outs):
    c, x, y = ins
    if not rules.known(c):  # MXNet infers nothing until the condition's shape is known
        return ins, outs
    cur = rules.merged_shape(outs[:1], "output", rules.merged_shape((x, y), first=1))
    if cur is None:
        return ins, outs
    for i in (1, 2):
        rules.set_shape(ins, i, cur)
    rules.set_shape(outs, 0, cur, "output")
    if rules.known(c) and rules.known(cur) and tuple(c) != tuple(cur) \
            and tuple(c) != (cur[0],):
        raise rules.Conflict("shape", 0, "input", f"{tuple(cur)} or ({cur[0]},)", c)
    return ins, outs


def _cond(c, x):
    c = st.todense(c)
    return c.reshape((-1,) + (1,) * (x.ndim - 1)) if c.ndim == 1 and x.ndim > 1 else c


def _where_fwd(a, xs):
    c, x, y = xs
    return (np.where(_cond(c, x) != 0, x, y),)


def _where_bwd(a, xs):
    g, c = st.todense(xs[0]), _cond(xs[1], xs[0])
    z = np.zeros_like(g)
    return np.where(c != 0, g, z), np.where(c != 0, z, g)


def _where_type(attrs, ins, outs):
    ins2, outs2 = rules.same_type(attrs, [ins[1], ins[2]], outs)
    ins[1], ins[2] = ins2
    if ins[0] is None and ins[1] is not None:
        ins[0] = ins[1]
    return ins, outs2


register(OpDef(
    "where", inputs=("condition", "x", "y"),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _where_fwd),
              Dispatch((CSR, DNS, DNS), (DNS,), lambda a, xs: (
                  kcsr.where_csr_dns_dns(xs[0], xs[1], xs[2]),),
                  when=lambda a, s: True)),
    infer_shape=where_shape, infer_type=_where_type,
    gradient=lambda node, og: [None] + multi_bw("_backward_where", [og[0], node.inputs[0]],
                                                node, "backward", 2),
    aliases=("_sparse_where",),
    doc="""Elements of x where condition is nonzero, else of y.

    ``condition`` has x's shape, or (x.shape[0],) to select whole rows.
    Storage: where(csr, dense, dense) -> dense (MXNet's sparse row).

    Parameters
    ----------
    condition, x, y : Symbol or NDArray

    Examples
    --------
    >>> import sparsym as mx
    >>> c = mx.nd.array([1., 0.]); x = mx.nd.array([1., 2.]); y = mx.nd.array([5., 6.])
    >>> mx.nd.where(c, x, y).asnumpy().tolist()
    [1.0, 6.0]
    """))
register(OpDef(
    "_backward_where", inputs=("ograd", "condition"), num_outputs=2,
    dispatch=(Dispatch(("*", "*"), (DNS,), _where_bwd),),
    infer_shape=lambda a, i, o: (i, [i[0], i[0]]),
    infer_type=lambda a, i, o: (i, [i[0], i[0]])))

