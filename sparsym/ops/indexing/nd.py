"""N-d and assignment indexing operators: gather_nd, scatter_nd, _scatter_set_nd, batch_take,
fill_element_0index, _contrib_boolean_mask, _contrib_index_copy, _contrib_index_array,
_slice_assign (_crop_assign), _slice_assign_scalar (_crop_assign_scalar), and pick's legacy
name choose_element_0index (MXNet 1.9.1's semantics, probed).

- gather_nd/scatter_nd: ``indices`` (M, Y...) address the first M axes; negative indices
  count from the end; others out of range raise IndexError (as MXNet's gather_nd).
- The assignment ops return a new array (MXNet writes into ``lhs``'s buffer).
- MXNet has no sparse rows for these: sparse inputs fall back to dense.
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...base import IndexOutOfRange, ShapeError
from ...kernels import gather_scatter as kgs
from ..core import rules
from ..core.grad import bw, kept, multi_bw
from ..core.helpers import DNS, norm_axis
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register, register_alias
from .indexing import _SLICE, _slices

register_alias("pick", "choose_element_0index")


def _bad(i, expected, got):
    return rules.Conflict("shape", i, "input", expected, got)


def _dense(xs):
    return [st.todense(x) for x in xs]


# ----------------------------------------------------------------------------- gather/scatter
def _gather_shape(attrs, ins, outs):
    d, idx = ins
    if rules.known(d) and rules.known(idx):
        if len(idx) < 2 or idx[0] > len(d):  # MXNet: "requires index tensor to have at
            # least 2 dimensions" (a 1-D index would read one element silently)
            raise _bad(1, f"(M, ...) indices with at least 2 dimensions and M <= {len(d)}", idx)
        rules.set_shape(outs, 0, tuple(idx[1:]) + tuple(d[idx[0]:]), "output")
    return ins, outs


def _gather_bwd(a, xs):
    g, idx = _dense(xs)
    return (kgs.scatter_nd(g, idx, tuple(a.shape), accumulate=True),)


def _scatter_shape(attrs, ins, outs):
    idx = ins[1]
    shape = tuple(attrs.shape)
    rules.set_shape(outs, 0, shape, "output")
    if rules.known(idx) and idx and idx[0] <= len(shape):
        rules.set_shape(ins, 0, tuple(idx[1:]) + shape[idx[0]:])
    elif rules.known(idx):
        raise _bad(1, f"(M, ...) indices with M <= {len(shape)}", idx)
    return ins, outs


register(OpDef(
    "_backward_gather_nd", inputs=("ograd", "indices"), params=Params(shape=Field("shape")),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _gather_bwd),),
    infer_shape=lambda a, i, o: (i, [tuple(a.shape)]), infer_type=rules.type_of_input(0),
    doc="Gradient of gather_nd: ograd added at the gathered positions (duplicates sum)."))
register(OpDef(
    "gather_nd", inputs=("data", "indices"), dispatch=(Dispatch((DNS, DNS), (DNS,), lambda a, xs: (
        kgs.gather_nd(xs[0], xs[1]),)),),
    infer_shape=_gather_shape, infer_type=rules.type_of_input(0),
    gradient=lambda node, og: _gather_grad(node, og),
    doc="""Gather slices of ``data`` at the N-d positions ``indices`` (shape (M, Y...)):
    ``out[y...] = data[indices[0][y...], ..., indices[M-1][y...], ...]``.

    Parameters
    ----------
    data, indices : NDArray or Symbol

    Examples
    --------
    >>> import sparsym as mx
    >>> d = mx.nd.array([[0., 1.], [2., 3.]])
    >>> mx.nd.gather_nd(d, mx.nd.array([[1, 0], [0, -1]])).asnumpy().tolist()
    [2.0, 1.0]
    """))


def _gather_grad(node, og):
    """ograd added back at the gathered positions (data supplies the shape)."""
    return [bw("_backward_gather_nd_like", [og[0], node.inputs[1], node.inputs[0]], node,
               "backward"), None]


def _gather_bwd_like(a, xs):
    g, idx, d = _dense(xs)
    return (kgs.scatter_nd(g.astype(d.dtype, copy=False), idx, d.shape, accumulate=True),)


register(OpDef(
    "_backward_gather_nd_like", inputs=("ograd", "indices", "data"),
    dispatch=(Dispatch((DNS, DNS, "*"), (DNS,), _gather_bwd_like),),
    infer_shape=rules.shape_of_input(2), infer_type=rules.type_of_input(2),
    doc="Gradient of gather_nd, shaped like data."))

register(OpDef(
    "scatter_nd", inputs=("data", "indices"), params=Params(shape=Field("shape")),
    dispatch=(Dispatch((DNS, DNS), (DNS,), lambda a, xs: (
        kgs.scatter_nd(xs[0], xs[1], tuple(a.shape)),)),),
    infer_shape=_scatter_shape, infer_type=rules.type_of_input(0),
    gradient=lambda node, og: [bw("gather_nd", [og[0], node.inputs[1]], node, "backward"),
                               None],
    doc="""Scatter ``data`` into zeros of ``shape`` at the N-d positions ``indices`` (the
    inverse of gather_nd; on duplicate positions the last write wins, as in MXNet).

    Parameters
    ----------
    data, indices : NDArray or Symbol
    shape : tuple of int

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.scatter_nd(mx.nd.array([1., 2.]), mx.nd.array([[0, 1], [1, 0]]),
    ...                  shape=(2, 2)).asnumpy().tolist()
    [[0.0, 1.0], [2.0, 0.0]]
    """))


def _scatter_set_shape(attrs, ins, outs):
    rules.set_shape(ins, 0, tuple(attrs.shape))
    rules.set_shape(outs, 0, tuple(attrs.shape), "output")
    return ins, outs


register(OpDef(
    "_scatter_set_nd", inputs=("lhs", "rhs", "indices"), params=Params(shape=Field("shape")),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), lambda a, xs: (
        kgs.scatter_nd(xs[1].astype(xs[0].dtype, copy=False), xs[2], xs[0].shape,
                       base=xs[0]),)),),
    infer_shape=_scatter_set_shape, infer_type=rules.type_of_input(0), inplace=((0, 0),),
    doc="lhs with ``rhs`` written at the N-d positions ``indices`` (``x[idx] = v``)."))


# ----------------------------------------------------------------------------- legacy
def _batch_take(a, xs):
    x, idx = xs
    if x.ndim != 2 or idx.shape[:1] != x.shape[:1]:
        raise ShapeError(f"batch_take: expected a (N, K) array and N indices, got {x.shape} "
                         f"and {idx.shape}")
    ids = np.clip(np.asarray(idx).astype(np.int64).reshape(-1), 0, x.shape[1] - 1)
    return (x[np.arange(x.shape[0]), ids],)


def _batch_take_shape(attrs, ins, outs):
    if ins[0] is not None:
        rules.set_shape(ins, 1, tuple(ins[0][:1]))
        rules.set_shape(outs, 0, tuple(ins[0][:1]), "output")
    return ins, outs


register(OpDef(
    "batch_take", inputs=("a", "indices"), dispatch=(Dispatch((DNS, DNS), (DNS,), _batch_take),),
    infer_shape=_batch_take_shape, infer_type=rules.type_of_input(0),
    gradient=lambda n, og: [None, None],
    doc="""``out[i] = a[i, indices[i]]`` for a (N, K) ``a`` (indices clipped to [0, K)).
    Deprecated in MXNet: use pick.

    Parameters
    ----------
    a, indices : NDArray or Symbol
    """))


def _fill_element(a, xs):
    lhs, mhs, rhs = _dense(xs)
    out = np.array(lhs, copy=True)
    ids = np.asarray(rhs).astype(np.int64).reshape(-1)
    if lhs.ndim != 2 or ids.size != lhs.shape[0]:
        raise ShapeError(f"fill_element_0index: expected a 2-D lhs and one index per row, got "
                         f"lhs {tuple(lhs.shape)} and rhs {tuple(np.shape(rhs))}")
    bad = np.flatnonzero((ids < 0) | (ids >= lhs.shape[1]))
    if bad.size:  # MXNet writes outside the row (into the next one or past the array)
        i = int(bad[0])
        raise IndexOutOfRange(f"fill_element_0index: index {int(ids[i])} of row {i} is out of "
                              f"bounds for axis 1 with size {lhs.shape[1]}")
    out[np.arange(lhs.shape[0]), ids] = mhs
    return (out,)


register(OpDef(
    "fill_element_0index", inputs=("lhs", "mhs", "rhs"),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _fill_element),),
    infer_shape=rules.first_input_shape, infer_type=rules.type_of_input(0),
    gradient=lambda n, og: [None] * 3,
    doc="""``lhs`` with ``out[i, rhs[i]] = mhs[i]`` (MXNet's legacy NDArray function).

    Parameters
    ----------
    lhs, mhs, rhs : NDArray
    """))


# ----------------------------------------------------------------------------- boolean_mask
def _mask_rows(a, x, index):
    ax = norm_axis(a.axis, x.ndim, "boolean_mask")
    keep = np.asarray(index).reshape(-1) != 0
    if keep.shape[0] != x.shape[ax]:
        raise ShapeError(f"boolean_mask: index of length {keep.shape[0]} does not match "
                         f"axis {a.axis} of size {x.shape[ax]}")
    return ax, np.flatnonzero(keep)


def _boolean_mask(a, xs):
    x, index = _dense(xs)
    ax, rows = _mask_rows(a, x, index)
    return (np.take(x, rows, axis=ax),)


def _boolean_mask_bwd(a, xs):
    g, x, index = _dense(xs)
    ax, rows = _mask_rows(a, x, index)
    out = np.zeros(x.shape, dtype=g.dtype)
    sl = [slice(None)] * x.ndim
    sl[ax] = rows
    out[tuple(sl)] = g
    return (out,)


def _boolean_mask_shape(attrs, ins, outs):
    d = ins[0]
    if d is not None:  # the kept length depends on the values: unknown until run
        ax = norm_axis(attrs.axis, len(d), "boolean_mask")
        rules.set_shape(outs, 0, tuple(d[:ax]) + (None,) + tuple(d[ax + 1:]), "output")
    return ins, outs


_MASK = Params(axis=Field("int", 0))
register(OpDef(
    "_backward_contrib_boolean_mask", inputs=("ograd", "data", "index"), params=_MASK,
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _boolean_mask_bwd),),
    infer_shape=rules.shape_of_input(1), infer_type=rules.type_of_input(1),
    doc="Gradient of boolean_mask: ograd back at the kept positions, zeros elsewhere."))
register(OpDef(
    "_contrib_boolean_mask", inputs=("data", "index"), params=_MASK,
    dispatch=(Dispatch((DNS, DNS), (DNS,), _boolean_mask),),
    infer_shape=_boolean_mask_shape, infer_type=rules.type_of_input(0), value_dependent_shape=True,
    gradient=lambda node, og: [bw("_backward_contrib_boolean_mask",
                                  [og[0], node.inputs[0], node.inputs[1]], node, "backward",
                                  **kept(node)), None],
    doc="""The slices of ``data`` along ``axis`` where ``index`` is non-zero (the output's
    length is known only when it runs). MXNet 1.9.1 supports axis 0 only; any axis works here.

    Parameters
    ----------
    data, index : NDArray or Symbol
    axis : int, default 0

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.array([[1., 2.], [3., 4.], [5., 6.]])
    >>> mx.nd.contrib.boolean_mask(x, mx.nd.array([0, 1, 1])).asnumpy().tolist()
    [[3.0, 4.0], [5.0, 6.0]]
    """))


# ----------------------------------------------------------------------------- index_copy
def _copy_rows(old, idx):
    ids = np.asarray(idx).astype(np.int64).reshape(-1)
    bad = ids[(ids < 0) | (ids >= old.shape[0])]
    if bad.size:
        raise IndexOutOfRange(f"index_copy: index {int(bad[0])} is out of bounds for axis 0 "
                              f"with size {old.shape[0]}")
    return ids


def _index_copy(a, xs):
    old, idx, new = _dense(xs)
    out = np.array(old, copy=True)
    out[_copy_rows(old, idx)] = new
    return (out,)


def _index_copy_bwd(a, xs):
    g, idx, new = _dense(xs)
    ids = _copy_rows(g, idx)
    g_old = np.array(g, copy=True)
    g_old[ids] = 0
    return (g_old, np.ascontiguousarray(g[ids]).reshape(new.shape))


def _index_copy_shape(attrs, ins, outs):
    old, idx, new = ins
    if old is not None:
        rules.set_shape(outs, 0, old, "output")
        if idx is not None:
            rules.set_shape(ins, 2, tuple(idx[:1]) + tuple(old[1:]))
    return ins, outs


register(OpDef(
    "_contrib_backward_index_copy", inputs=("ograd", "index_vector", "new_tensor"),
    num_outputs=2, output_names=("old_grad", "new_grad"),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS, DNS), _index_copy_bwd),),
    infer_shape=lambda a, i, o: (i, [i[0], i[2]]),
    infer_type=lambda a, i, o: (i, [i[0], i[0]]),
    doc="Gradients of index_copy: ograd with the copied rows zeroed, and those rows."))


def _index_copy_grad(node, og):
    g = multi_bw("_contrib_backward_index_copy", [og[0], node.inputs[1], node.inputs[2]], node,
                 "backward", 2)
    return [g[0], None, g[1]]


register(OpDef(
    "_contrib_index_copy", inputs=("old_tensor", "index_vector", "new_tensor"),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _index_copy),),
    infer_shape=_index_copy_shape, infer_type=rules.type_of_input(0), gradient=_index_copy_grad,
    doc="""``old_tensor`` with its rows ``index_vector`` replaced by ``new_tensor``'s rows.

    Parameters
    ----------
    old_tensor, index_vector, new_tensor : NDArray or Symbol
    """))


# ----------------------------------------------------------------------------- index_array
def _index_axes(a, ndim):
    if a.axes is None:
        return tuple(range(ndim))
    return tuple(norm_axis(ax, ndim, "index_array") for ax in a.axes)


def _index_array(a, xs):
    shape = xs[0].shape
    axes = _index_axes(a, len(shape))
    out = np.empty(tuple(shape) + (len(axes),), dtype=np.int64)
    for j, ax in enumerate(axes):  # no grids stacked: a 0-d input gives shape (0,)
        view = [1] * len(shape)
        view[ax] = shape[ax]
        out[..., j] = np.arange(shape[ax], dtype=np.int64).reshape(view)
    return (out,)


def _index_array_shape(attrs, ins, outs):
    if ins[0] is not None:
        rules.set_shape(outs, 0, tuple(ins[0]) + (len(_index_axes(attrs, len(ins[0]))),),
                        "output")
    return ins, outs


register(OpDef(
    "_contrib_index_array", params=Params(axes=Field("shape_or_none", None)),
    dispatch=(Dispatch(("*",), (DNS,), _index_array),),
    infer_shape=_index_array_shape,
    infer_type=lambda a, i, o: (i, [np.dtype(np.int64)]), gradient=lambda n, og: [None],
    doc="""For every element, its index (along ``axes``; all by default) as an int64 vector:
    the output has shape ``data.shape + (len(axes),)``.

    Parameters
    ----------
    data : NDArray or Symbol
    axes : tuple of int or None
    """))


# ----------------------------------------------------------------------------- slice assign
def _slice_assign(a, xs):
    lhs, rhs = _dense(xs)
    out = np.array(lhs, copy=True)
    out[_slices(a, lhs.shape)] = rhs
    return (out,)


def _slice_assign_bwd(a, xs):
    g = st.todense(xs[0])
    sl = _slices(a, g.shape)
    g_lhs = np.array(g, copy=True)
    g_lhs[sl] = 0
    return (g_lhs, np.ascontiguousarray(g[sl]))


def _slice_assign_shape(attrs, ins, outs):
    if rules.known(ins[0]):
        s = tuple(ins[0])
        rules.set_shape(outs, 0, s, "output")
        sl = _slices(attrs, s)
        rules.set_shape(ins, 1, tuple(len(range(*k.indices(d))) for k, d in zip(sl, s))
                        + s[len(sl):])
    return ins, outs


register(OpDef(
    "_backward_slice_assign", inputs=("ograd",), params=_SLICE, num_outputs=2,
    output_names=("lhs_grad", "rhs_grad"),
    dispatch=(Dispatch((DNS,), (DNS, DNS), _slice_assign_bwd),),
    infer_shape=lambda a, i, o: (i, [i[0], _slice_assign_shape(a, [i[0], None], [None])[0][1]]),
    infer_type=lambda a, i, o: (i, [i[0], i[0]]),
    doc="Gradients of _slice_assign: ograd outside the slice, and the slice."))
register(OpDef(
    "_slice_assign", inputs=("lhs", "rhs"), params=_SLICE,
    dispatch=(Dispatch((DNS, DNS), (DNS,), _slice_assign),),
    infer_shape=_slice_assign_shape, infer_type=rules.same_type, inplace=((0, 0),),
    gradient=lambda node, og: multi_bw("_backward_slice_assign", [og[0]], node, "backward", 2,
                                       **kept(node)),
    aliases=("_crop_assign",),
    doc="""``lhs`` with ``lhs[begin:end:step] = rhs`` (a new array).

    Parameters
    ----------
    lhs, rhs : NDArray or Symbol
    begin, end : tuple of int or None
    step : tuple of int or None, default ()
    """))


def _slice_assign_scalar(a, xs):
    x = st.todense(xs[0])
    out = np.array(x, copy=True)
    out[_slices(a, x.shape)] = a.scalar
    return (out,)


def _slice_zero_bwd(a, xs):
    g = np.array(st.todense(xs[0]), copy=True)
    g[_slices(a, g.shape)] = 0
    return (g,)


_SLICE_SCALAR = type(_SLICE)(_SLICE.check, scalar=Field("float", 0.0), **_SLICE.fields)
register(OpDef(
    "_backward_slice_assign_scalar", inputs=("ograd",), params=_SLICE_SCALAR,
    dispatch=(Dispatch((DNS,), (DNS,), _slice_zero_bwd),),
    doc="Gradient of _slice_assign_scalar: ograd with the slice zeroed."))
register(OpDef(
    "_slice_assign_scalar", params=_SLICE_SCALAR,
    dispatch=(Dispatch((DNS,), (DNS,), _slice_assign_scalar),), inplace=((0, 0),),
    gradient=lambda node, og: [bw("_backward_slice_assign_scalar", [og[0]], node, "backward",
                                  **kept(node))],
    aliases=("_crop_assign_scalar",),
    doc="""``data`` with ``data[begin:end:step] = scalar`` (a new array).

    Parameters
    ----------
    data : NDArray or Symbol
    scalar : float, default 0
    begin, end : tuple of int or None
    step : tuple of int or None, default ()
    """))
