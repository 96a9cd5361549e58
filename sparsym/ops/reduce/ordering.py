"""Ordering operators: topk, sort, argsort (MXNet 1.9.1's semantics, probed).

- Sorting is stable in both directions: ties keep their index order (MXNet's CPU sort).
- ``axis=None`` works on the flattened input; ``k <= 0`` means the whole axis.
- topk's ``ret_typ='value'`` and sort have a hidden second output, the int64 positions of
  the values, which their gradient scatters the output gradient to (as MXNet's hidden
  outputs); indices and masks have no gradient.
- MXNet has no sparse rows for these: sparse inputs fall back to dense.
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...base import ShapeError, dtype_of
from ...kernels import ordering as kord
from ..core import rules
from ..core.grad import bw
from ..core.helpers import DNS
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register

_IDX_TYPES = ("float16", "float32", "float64", "int32", "int64", "uint8")


def _axis(a, ndim, op):
    """The normalised axis (None: the flattened input)."""
    if a.axis is None:
        return None
    ax = a.axis + ndim if a.axis < 0 else a.axis
    if not 0 <= ax < ndim:
        raise ShapeError(f"operator {op}: Invalid axis! axis should be between 0 and {ndim}, "
                         f"found axis={a.axis}")
    return ax


def _k(a, shape, ax, op):
    n = int(np.prod(shape, dtype=np.int64)) if ax is None else shape[ax]
    k = a.get("k", 0)
    if k > n:
        raise ShapeError(f"operator {op}: k must be smaller than {n}, get k = {k}")
    return n if k <= 0 else k


def _out_shape(a, shape, op):
    ax = _axis(a, len(shape), op)
    k = _k(a, shape, ax, op)
    if ax is None:
        return (k,)
    return shape[:ax] + (k,) + shape[ax + 1:]


def _flat(a, x):
    return (x.reshape(-1), 0) if a.axis is None else (x, _axis(a, x.ndim, "topk"))


def _topk_n_out(a):
    return 2 if a.ret_typ in ("value", "both") else 1


def _topk_shape(attrs, ins, outs):
    if not rules.known(ins[0]):
        return ins, outs
    s = tuple(ins[0])
    if attrs.ret_typ == "mask":
        rules.set_shape(outs, 0, s, "output")
        return ins, outs
    o = _out_shape(attrs, s, "topk")
    for i in range(len(outs)):
        rules.set_shape(outs, i, o, "output")
    return ins, outs


def _topk_type(attrs, ins, outs):
    t = ins[0]
    if attrs.ret_typ == "indices":
        rules.set_type(outs, 0, dtype_of(attrs.dtype), "output")
        return ins, outs
    if t is None:
        return ins, outs
    rules.set_type(outs, 0, t, "output")
    if attrs.ret_typ == "both":
        rules.set_type(outs, 1, dtype_of(attrs.dtype), "output")
    elif attrs.ret_typ == "value":
        rules.set_type(outs, 1, np.dtype(np.int64), "output")
    return ins, outs


def _topk(a, xs):
    x = xs[0]
    flat, ax = _flat(a, x)
    k = _k(a, flat.shape, ax, "topk")
    idx, vals = kord.topk_positions(flat, ax, k, a.is_ascend)
    if a.ret_typ == "mask":
        return (kord.topk_mask(flat, idx, ax).reshape(x.shape),)
    if a.ret_typ == "indices":
        return (idx.astype(dtype_of(a.dtype)),)
    if a.ret_typ == "both":
        return (vals, idx.astype(dtype_of(a.dtype)))
    return (vals, idx)


def _topk_bwd(a, xs):
    g, idx, x = st.todense(xs[0]), st.todense(xs[1]), st.todense(xs[2])
    if a.axis is None:
        return (kord.scatter_along(g, idx, (x.size,), 0, x.dtype).reshape(x.shape),)
    ax = _axis(a, x.ndim, "topk")
    return (kord.scatter_along(g, idx, x.shape, ax, x.dtype),)


def _bwd_shape(attrs, ins, outs):
    if ins[2] is not None:
        rules.set_shape(outs, 0, ins[2], "output")
    return ins, outs


def _bwd_type(attrs, ins, outs):
    if ins[2] is not None:
        rules.set_type(outs, 0, ins[2], "output")
    return ins, outs


register(OpDef(
    "_backward_topk", inputs=("ograd", "indices", "data"),
    params=Params(axis=Field("int_or_none", -1)),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _topk_bwd),
              Dispatch(("*", "*", "*"), (DNS,), _topk_bwd)),
    infer_shape=_bwd_shape, infer_type=_bwd_type,
    doc="Gradient of topk/sort: ograd scattered to the selected positions of data."))


def _value_grad(node, og):
    if node.params.get("ret_typ", "value") not in ("value", "both"):
        return [None]
    return [bw("_backward_topk", [og[0], (node, 1), node.inputs[0]], node, "backward",
               axis=node.params.axis)]


_AXIS = Field("int_or_none", -1, doc="the axis to sort along; None: the flattened input")

register(OpDef(
    "topk", params=Params(
        axis=_AXIS, k=Field("int", 1, doc="how many elements; <= 0: all"),
        ret_typ=Field("str", "indices", choices=("both", "indices", "mask", "value")),
        is_ascend=Field("bool", False, doc="the k smallest instead of the k largest"),
        dtype=Field("str", "float32", choices=_IDX_TYPES, doc="dtype of the indices")),
    dispatch=(Dispatch((DNS,), (DNS,), _topk),),
    num_outputs=_topk_n_out, num_visible_outputs=lambda a: 2 if a.ret_typ == "both" else 1,
    infer_shape=_topk_shape, infer_type=_topk_type, gradient=_value_grad,
    doc="""The top k elements along an axis: their indices, values, both, or a 0/1 mask.

    Ties keep their index order (a stable sort, as MXNet's).

    Parameters
    ----------
    data : NDArray or Symbol
    axis : int or None, default -1
    k : int, default 1
    ret_typ : {'indices', 'value', 'both', 'mask'}, default 'indices'
    is_ascend : bool, default False
    dtype : str, default 'float32'
        dtype of the returned indices.

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.array([[3., 1., 2.], [0., 4., 4.]])
    >>> mx.nd.topk(x, k=2).asnumpy().tolist()
    [[0.0, 2.0], [1.0, 2.0]]
    >>> mx.nd.topk(x, k=1, ret_typ='value', axis=0).asnumpy().tolist()
    [[3.0, 4.0, 4.0]]
    """))


def _sort(a, xs):
    x = xs[0]
    flat, ax = _flat(a, x)
    idx = kord.stable_order(flat, ax, a.is_ascend)
    return (np.take_along_axis(flat, idx, axis=ax), idx)


def _sort_shape(attrs, ins, outs):
    if rules.known(ins[0]):
        s = (int(np.prod(ins[0], dtype=np.int64)),) if attrs.axis is None else tuple(ins[0])
        _axis(attrs, len(ins[0]), "sort")
        for i in range(len(outs)):
            rules.set_shape(outs, i, s, "output")
    return ins, outs


def _sort_type(attrs, ins, outs):
    if ins[0] is not None:
        rules.set_type(outs, 0, ins[0], "output")
    if len(outs) > 1:
        rules.set_type(outs, 1, np.dtype(np.int64), "output")
    return ins, outs


register(OpDef(
    "sort", params=Params(axis=_AXIS, is_ascend=Field("bool", True)),
    dispatch=(Dispatch((DNS,), (DNS,), _sort),), num_outputs=2, num_visible_outputs=1,
    infer_shape=_sort_shape, infer_type=_sort_type, gradient=_value_grad,
    doc="""Sorted values along an axis (stable; descending with ``is_ascend=False``).

    Parameters
    ----------
    data : NDArray or Symbol
    axis : int or None, default -1
    is_ascend : bool, default True

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.sort(mx.nd.array([3., 1., 2.])).asnumpy().tolist()
    [1.0, 2.0, 3.0]
    """))


def _argsort(a, xs):
    x = xs[0]
    flat, ax = _flat(a, x)
    return (kord.stable_order(flat, ax, a.is_ascend).astype(dtype_of(a.dtype)),)


def _argsort_type(attrs, ins, outs):
    rules.set_type(outs, 0, dtype_of(attrs.dtype), "output")
    return ins, outs


register(OpDef(
    "argsort", params=Params(axis=_AXIS, is_ascend=Field("bool", True),
                             dtype=Field("str", "float32", choices=_IDX_TYPES)),
    dispatch=(Dispatch((DNS,), (DNS,), _argsort),),
    infer_shape=lambda a, i, o: _sort_shape(a, i, o), infer_type=_argsort_type,
    gradient=lambda node, og: [None],
    doc="""Indices that sort the input along an axis (stable), in ``dtype``.

    Parameters
    ----------
    data : NDArray or Symbol
    axis : int or None, default -1
    is_ascend : bool, default True
    dtype : str, default 'float32'

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.argsort(mx.nd.array([3., 1., 2.])).asnumpy().tolist()
    [1.0, 2.0, 0.0]
    """))
