"""Broadcasting and shape-taking operators: broadcast_to, broadcast_axis (broadcast_axes),
broadcast_like, reshape_like, slice_like, shape_array, size_array (MXNet 1.9.1, probed).

Gradients of the broadcasts sum the output gradient back to the input's shape; the ``like``
operand of the *_like ops gets none (MXNet gives it a zero gradient). shape_array and
size_array read only the shape, so they take any storage without densifying (MXNet falls
back to dense); the rest have dense rows only, as in MXNet.
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ..core import rules
from ..core.grad import bw
from ..core.helpers import DNS, Checked, require
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register
from ..elemwise.broadcast import reduce_to_shape


def _bad(i, expected, got):
    return rules.Conflict("shape", i, "input", expected, got)


def _norm(ax, nd):
    k = ax + nd if ax < 0 else ax
    return k if 0 <= k < nd else None


# ----------------------------------------------------------------------------- backward
def _bcast_bwd(a, xs):
    g, x = st.todense(xs[0]), xs[1]
    return (np.ascontiguousarray(reduce_to_shape(g, x.shape), dtype=g.dtype),)


def _like_data(attrs, ins, outs):
    if ins[1] is not None:
        rules.set_shape(outs, 0, ins[1], "output")
    return ins, outs


register(OpDef(
    "_backward_broadcast_to", inputs=("ograd", "data"),
    dispatch=(Dispatch((DNS, "*"), (DNS,), _bcast_bwd),), infer_shape=_like_data,
    infer_type=rules.first_input_type,
    doc="Gradient of the broadcasts: ograd summed back to data's shape."))


def _bcast_grad(node, og):
    return [bw("_backward_broadcast_to", [og[0], node.inputs[0]], node, "backward")] + \
        [None] * (len(node.inputs) - 1)


def _bcast_kernel(out_shape):
    def k(a, xs):
        x = st.todense(xs[0])
        shape = out_shape(a, x.shape, *[tuple(v.shape) for v in xs[1:]])
        return (np.ascontiguousarray(np.broadcast_to(x, shape)),)
    return k


def _bcast_op(name, params, out_shape, inputs=("data",), aliases=(), doc=""):
    """Register a broadcast whose output shape is ``out_shape(attrs, data shape, *others)``."""
    def shape(attrs, ins, outs):
        if all(rules.known(s) for s in ins):
            rules.set_shape(outs, 0, out_shape(attrs, *[tuple(s) for s in ins]), "output")
        return ins, outs

    register(OpDef(name, params=params, inputs=inputs,
                   dispatch=(Dispatch((DNS,) * len(inputs), (DNS,), _bcast_kernel(out_shape)),),
                   infer_shape=shape, infer_type=rules.first_input_type,
                   gradient=_bcast_grad, aliases=aliases, doc=doc))


def _can_grow(shape, k, dst, i, where):
    """Axis ``k`` of input ``i``'s ``shape`` can be broadcast to ``dst`` (else a Conflict
    showing the whole shape, as MXNet's "cannot be broadcasted from [3,4] to [3,5]")."""
    if shape[k] != dst and shape[k] != 1:
        raise _bad(i, f"size 1 or {dst} at {where}", shape)


def _to_shape(a, s):
    target = tuple(a.shape)
    if len(target) != len(s):
        raise _bad(0, f"a {len(target)}-D operand to broadcast to {target}", s)
    out = []
    for i, (d, t) in enumerate(zip(s, target)):
        t = d if t == 0 else t
        _can_grow(s, i, t, 0, f"axis {i} (to broadcast to {target})")
        out.append(t)
    return tuple(out)


_bcast_op("broadcast_to", Params(shape=Field("shape", (), doc="target shape; 0 keeps a dim")),
          _to_shape, doc="""Broadcast size-1 axes to ``shape`` (0 in ``shape`` keeps the dim).

    Parameters
    ----------
    data : NDArray or Symbol
    shape : tuple of int

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.broadcast_to(mx.nd.ones((1, 3)), shape=(2, 0)).shape
    (2, 3)
    """)


def _axis_check(op, a):
    require(len(a.axis) == len(a.size), op,
            f"axis {a.axis} and size {a.size} must have the same length")


def _axis_shape(a, s):
    out = list(s)
    for ax, n in zip(a.axis, a.size):
        k = _norm(ax, len(s))
        if k is None:
            raise _bad(0, f"an axis in [-{len(s)}, {len(s)}) (axis={ax})", s)
        if s[k] != 1:
            raise _bad(0, f"size 1 at broadcasting axis {ax}", s)
        out[k] = n
    return tuple(out)


_bcast_op("broadcast_axis", Checked(_axis_check, axis=Field("shape", ()),
                                    size=Field("shape", ())), _axis_shape,
          aliases=("broadcast_axes",),
          doc="""Broadcast the size-1 axes ``axis`` to the sizes ``size``.

    Negative axes count from the end (MXNet 1.9.1 rejects them).

    Parameters
    ----------
    data : NDArray or Symbol
    axis : tuple of int
    size : tuple of int

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.broadcast_axis(mx.nd.ones((1, 2, 1)), axis=(0, 2), size=(3, 4)).shape
    (3, 2, 4)
    """)


def _like_shape(a, s, r):
    if a.lhs_axes is None and a.rhs_axes is None:
        try:
            out = rules.broadcast_shapes(s, r)
        except ValueError:
            raise _bad(0, f"a shape broadcastable to {r}", s) from None
        if len(s) > len(r) or out != tuple(r):
            raise _bad(0, f"a shape broadcastable to {r}", s)
        return out
    la, ra = tuple(a.lhs_axes or ()), tuple(a.rhs_axes or ())
    if len(la) != len(ra) or not la:
        raise _bad(0, f"lhs_axes {la} and rhs_axes {ra} of one non-zero length", s)
    out = list(s)
    for x, y in zip(la, ra):
        i, j = _norm(x, len(s)), _norm(y, len(r))
        if i is None or j is None:
            raise _bad(0, f"axes {la} / {ra} within the operands' dims", s)
        _can_grow(s, i, r[j], 0, f"lhs axis {x}")
        out[i] = r[j]
    return tuple(out)


_bcast_op("broadcast_like", Params(lhs_axes=Field("shape_or_none", None),
                                   rhs_axes=Field("shape_or_none", None)),
          _like_shape, inputs=("lhs", "rhs"),
          doc="""Broadcast ``lhs`` to the shape of ``rhs`` (or only ``lhs_axes`` to the sizes
    of ``rhs_axes``).

    Parameters
    ----------
    lhs, rhs : NDArray or Symbol
    lhs_axes, rhs_axes : tuple of int or None

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.broadcast_like(mx.nd.ones((1, 3)), mx.nd.ones((5, 7, 2)), lhs_axes=(0,),
    ...                      rhs_axes=(1,)).shape
    (7, 3)
    """)


# ----------------------------------------------------------------------------- reshape_like
def _span(begin, end, nd):
    b = 0 if begin is None else (begin + nd if begin < 0 else begin)
    e = nd if end is None else (end + nd if end < 0 else end)
    return b, e


def _reshape_like_shape(a, s, r):
    lb, le = _span(a.lhs_begin, a.lhs_end, len(s))
    rb, re = _span(a.rhs_begin, a.rhs_end, len(r))
    if not (0 <= lb <= le <= len(s) and 0 <= rb <= re <= len(r)):
        raise _bad(0, f"lhs range [{a.lhs_begin}, {a.lhs_end}) and rhs range "
                      f"[{a.rhs_begin}, {a.rhs_end}) within the operands' dims", s)
    out = tuple(s[:lb]) + tuple(r[rb:re]) + tuple(s[le:])
    if int(np.prod(out, dtype=np.int64)) != int(np.prod(s, dtype=np.int64)):
        raise _bad(0, f"a size equal to that of the target shape {out}", s)
    return out


def _reshape_like_infer(attrs, ins, outs):
    if rules.known(ins[0]) and rules.known(ins[1]):
        rules.set_shape(outs, 0, _reshape_like_shape(attrs, tuple(ins[0]), tuple(ins[1])),
                        "output")
    return ins, outs


def _reshape_like(a, xs):
    x = st.todense(xs[0])
    return (x.reshape(_reshape_like_shape(a, x.shape, tuple(xs[1].shape))).copy(),)


register(OpDef(
    "reshape_like", inputs=("lhs", "rhs"),
    params=Params(lhs_begin=Field("int_or_none", None), lhs_end=Field("int_or_none", None),
                  rhs_begin=Field("int_or_none", None), rhs_end=Field("int_or_none", None)),
    dispatch=(Dispatch((DNS, "*"), (DNS,), _reshape_like),),
    infer_shape=_reshape_like_infer, infer_type=rules.first_input_type,
    gradient=lambda node, og: [bw("_backward_Reshape", [og[0], node.inputs[0]], node,
                                  "backward", shape=(-1,)), None],
    doc="""Reshape ``lhs`` to ``rhs``'s shape, or replace lhs dims [lhs_begin, lhs_end) with
    rhs dims [rhs_begin, rhs_end).

    Parameters
    ----------
    lhs, rhs : NDArray or Symbol
    lhs_begin, lhs_end, rhs_begin, rhs_end : int or None

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.reshape_like(mx.nd.ones((30, 7)), mx.nd.ones((15, 2, 4)), lhs_begin=0,
    ...                    lhs_end=1, rhs_begin=0, rhs_end=2).shape
    (15, 2, 7)
    """))


# ----------------------------------------------------------------------------- slice_like
def _slice_like_shape(a, s, r):
    axes = range(len(s)) if not a.axes else a.axes
    out = list(s)
    for ax in axes:
        i = _norm(ax, len(s))
        if i is None or i >= len(r):
            raise _bad(0, f"axis {ax} within both operands' dims", s)
        if r[i] > s[i]:
            raise _bad(0, f"dim {i} of at least {r[i]} (shape_like's)", s)
        out[i] = r[i]
    return tuple(out)


def _slice_like(a, xs):
    x = st.todense(xs[0])
    shape = _slice_like_shape(a, x.shape, tuple(xs[1].shape))
    return (x[tuple(slice(0, n) for n in shape)].copy(),)


def _slice_like_bwd(a, xs):
    g, x = st.todense(xs[0]), xs[1]
    out = np.zeros(x.shape, dtype=g.dtype)
    out[tuple(slice(0, n) for n in g.shape)] = g
    return (out,)


def _slice_like_infer(attrs, ins, outs):
    if rules.known(ins[0]) and rules.known(ins[1]):
        rules.set_shape(outs, 0, _slice_like_shape(attrs, tuple(ins[0]), tuple(ins[1])),
                        "output")
    return ins, outs


register(OpDef(
    "_backward_slice_like", inputs=("ograd", "data"), dispatch=(
        Dispatch((DNS, "*"), (DNS,), _slice_like_bwd),),
    infer_shape=_like_data, infer_type=rules.first_input_type,
    doc="Gradient of slice_like: ograd in the leading corner, zeros elsewhere."))
register(OpDef(
    "slice_like", inputs=("data", "shape_like"), params=Params(axes=Field("shape", ())),
    dispatch=(Dispatch((DNS, "*"), (DNS,), _slice_like),),
    infer_shape=_slice_like_infer, infer_type=rules.first_input_type,
    gradient=lambda node, og: [bw("_backward_slice_like", [og[0], node.inputs[0]], node,
                                  "backward"), None],
    doc="""Slice ``data`` to the shape of ``shape_like`` (on ``axes``; all when empty),
    keeping the leading elements.

    Parameters
    ----------
    data, shape_like : NDArray or Symbol
    axes : tuple of int, default ()

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.slice_like(mx.nd.ones((3, 4, 5)), mx.nd.ones((2, 3)), axes=(0, 1)).shape
    (2, 3, 5)
    """))


# ----------------------------------------------------------------------------- shape/size
def _int64_out(n_dims):
    def shape(attrs, ins, outs):
        if ins[0] is not None:
            rules.set_shape(outs, 0, (n_dims(ins[0]),), "output")
        return ins, outs
    return shape


def _int64_type(attrs, ins, outs):
    rules.set_type(outs, 0, np.dtype(np.int64), "output")
    return ins, outs


for _name, _fn, _n, _what in (
        ("shape_array", lambda s: np.array(s, dtype=np.int64), len, "shape"),
        ("size_array", lambda s: np.array([int(np.prod(s, dtype=np.int64))], dtype=np.int64),
         lambda s: 1, "number of elements")):
    register(OpDef(
        _name, dispatch=(Dispatch(("*",), (DNS,), lambda a, xs, _f=_fn: (_f(xs[0].shape),)),),
        infer_shape=_int64_out(_n), infer_type=_int64_type, gradient=lambda node, og: [None],
        doc=f"""The input's {_what} as a 1-D int64 array (any storage; no densifying).

    Parameters
    ----------
    data : NDArray or Symbol
    """))
