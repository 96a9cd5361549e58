"""Statistics and encoding operators: cumsum, _histogram, moments and the legacy
_onehot_encode (MXNet 1.9.1's semantics, probed; dense rows only, as in MXNet).

- cumsum: ``axis=None`` works on the flattened input; negative axes count from the end
  (MXNet 1.9.1 rejects them); ``dtype=None`` keeps the input's dtype.
- _histogram: counts (int64) and bin edges; with ``bin_cnt`` the edges split ``range`` evenly
  and the data is the only input, else the edges are the ``bins`` input. Values outside the
  edges are not counted; the last bin includes its right edge (numpy.histogram's rule).
- moments: the mean and the (population) variance over ``axes``.
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...base import IndexOutOfRange, dtype_of
from ..core import rules
from ..core.grad import bw, kept
from ..core.helpers import DNS, Checked, norm_axis, require
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register

# ----------------------------------------------------------------------------- cumsum
_CUM_TYPES = (None, "float16", "float32", "float64", "int32", "int64", "int8")


def _cum_axis(a, x):
    if a.axis is None:
        return x.reshape(-1), 0
    return x, norm_axis(a.axis, x.ndim, "cumsum")


def _cumsum(a, xs):
    x, ax = _cum_axis(a, xs[0])
    dt = x.dtype if a.dtype is None else dtype_of(a.dtype)
    return (np.cumsum(x, axis=ax, dtype=dt),)


def _cumsum_bwd(a, xs):
    g, x = st.todense(xs[0]), st.todense(xs[1])
    g2, ax = _cum_axis(a, g)
    rev = np.flip(np.cumsum(np.flip(g2, ax), axis=ax), ax)
    return (np.ascontiguousarray(rev.reshape(x.shape), dtype=x.dtype),)


def _cumsum_shape(attrs, ins, outs):
    if rules.known(ins[0]):
        s = tuple(ins[0])
        if attrs.axis is None:
            s = (int(np.prod(s, dtype=np.int64)),)
        else:
            norm_axis(attrs.axis, len(s), "cumsum")
        rules.set_shape(outs, 0, s, "output")
    return ins, outs


def _cumsum_type(attrs, ins, outs):
    t = dtype_of(attrs.dtype) if attrs.dtype is not None else ins[0]
    if t is not None:
        rules.set_type(outs, 0, t, "output")
    return ins, outs


_CUMSUM = Params(axis=Field("int_or_none", None), dtype=Field("str_or_none", None,
                                                              choices=_CUM_TYPES))
register(OpDef(
    "_backward_cumsum", inputs=("ograd", "data"), params=_CUMSUM,
    dispatch=(Dispatch((DNS, "*"), (DNS,), _cumsum_bwd),),
    infer_shape=rules.shape_of_input(1), infer_type=rules.type_of_input(1),
    doc="Gradient of cumsum: the reversed cumulative sum of ograd."))
register(OpDef(
    "cumsum", inputs=("a",), params=_CUMSUM, dispatch=(Dispatch((DNS,), (DNS,), _cumsum),),
    infer_shape=_cumsum_shape, infer_type=_cumsum_type,
    gradient=lambda node, og: [bw("_backward_cumsum", [og[0], node.inputs[0]], node,
                                  "backward", **kept(node))],
    doc="""Cumulative sum along ``axis`` (the flattened input when None).

    Parameters
    ----------
    a : NDArray or Symbol
    axis : int or None, default None
    dtype : str or None, default None
        the result's dtype; None keeps the input's.

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.cumsum(mx.nd.array([[1., 2.], [3., 4.]]), axis=0).asnumpy().tolist()
    [[1.0, 2.0], [4.0, 6.0]]
    """))


# ----------------------------------------------------------------------------- histogram
def _hist_check(op, a):
    if a.bin_cnt is not None:
        require(a.bin_cnt > 0, op, f"bin_cnt must be positive, got {a.bin_cnt}")
        require(a.range is not None and len(a.range) == 2 and a.range[0] <= a.range[1], op,
                f"range must be a (min, max) pair when bin_cnt is given, got {a.range}")


def _hist_inputs(a):
    return ("data",) if a.bin_cnt is not None else ("data", "bins")


def _histogram(a, xs):
    x = st.todense(xs[0]).reshape(-1)
    if a.bin_cnt is not None:
        edges = np.linspace(a.range[0], a.range[1], a.bin_cnt + 1).astype(x.dtype)
    else:
        edges = np.asarray(st.todense(xs[1])).reshape(-1)
    counts, _ = np.histogram(x, bins=edges.astype(np.float64))
    return (counts.astype(np.int64), np.array(edges, copy=True))


def _hist_shape(attrs, ins, outs):
    if attrs.bin_cnt is not None:
        n = attrs.bin_cnt
    elif len(ins) > 1 and rules.known(ins[1]):
        n = int(np.prod(ins[1], dtype=np.int64)) - 1
    else:
        return ins, outs
    rules.set_shape(outs, 0, (n,), "output")
    rules.set_shape(outs, 1, (n + 1,), "output")
    return ins, outs


def _hist_type(attrs, ins, outs):
    rules.set_type(outs, 0, np.dtype(np.int64), "output")
    t = ins[1] if len(ins) > 1 and ins[1] is not None else ins[0]
    if t is not None:
        rules.set_type(outs, 1, t, "output")
    return ins, outs


register(OpDef(
    "_histogram", inputs=_hist_inputs,
    params=Checked(_hist_check, bin_cnt=Field("int_or_none", None),
                   range=Field("any", None, doc="(min, max) of the bins with bin_cnt")),
    dispatch=(Dispatch((DNS, "..."), (DNS,), _histogram),), num_outputs=2,
    infer_shape=_hist_shape, infer_type=_hist_type,
    gradient=lambda n, og: [None] * len(n.inputs),
    doc="""Histogram of the (flattened) data: int64 counts and the bin edges.

    Parameters
    ----------
    data : NDArray or Symbol
    bins : NDArray or Symbol, optional
        the bin edges (when ``bin_cnt`` is None).
    bin_cnt : int or None
    range : (float, float) or None
    """))


# ----------------------------------------------------------------------------- moments
def _moments_check(op, a):
    require(a.axes is not None and len(a.axes) > 0, op,
            "Empty axes is not supported, if you would like to do global moments, please "
            "pass all axes to axes argument")


def _m_axes(a, ndim):
    return tuple(sorted({norm_axis(ax, ndim, "moments") for ax in a.axes}))


def _moments(a, xs):
    x = xs[0]
    axes = _m_axes(a, x.ndim)
    mean = np.mean(x, axis=axes, keepdims=True)
    var = np.mean(np.square(x - mean), axis=axes, keepdims=a.keepdims)
    if not a.keepdims:
        mean = np.squeeze(mean, axis=axes)
    return (mean.reshape(mean.shape or (1,)).astype(x.dtype, copy=False),
            var.reshape(var.shape or (1,)).astype(x.dtype, copy=False))


def _moments_bwd(a, xs):
    gm, gv, x, mean = (st.todense(v) for v in xs)
    axes = _m_axes(a, x.ndim)
    n = int(np.prod([x.shape[i] for i in axes], dtype=np.int64))
    keep = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    gm, gv, mean = gm.reshape(keep), gv.reshape(keep), mean.reshape(keep)
    dx = (gm + 2.0 * gv * (x - mean)) / n
    return (dx.astype(x.dtype, copy=False),)


def _moments_shape(attrs, ins, outs):
    if rules.known(ins[0]):
        s = tuple(ins[0])
        axes = _m_axes(attrs, len(s))
        out = tuple(1 if i in axes else d for i, d in enumerate(s)) if attrs.keepdims else \
            tuple(d for i, d in enumerate(s) if i not in axes)
        for i in range(2):
            rules.set_shape(outs, i, out or (1,), "output")
    return ins, outs


_MOMENTS = Checked(_moments_check, axes=Field("shape_or_none", None),
                   keepdims=Field("bool", False))
register(OpDef(
    "_backward_moments", inputs=("mean_grad", "var_grad", "data", "mean"), params=_MOMENTS,
    dispatch=(Dispatch((DNS, DNS, DNS, DNS), (DNS,), _moments_bwd),),
    infer_shape=rules.shape_of_input(2), infer_type=rules.type_of_input(2),
    doc="Gradient of moments: (mean_grad + 2 var_grad (x - mean)) / n."))
register(OpDef(
    "moments", params=_MOMENTS, dispatch=(Dispatch((DNS,), (DNS,), _moments),), num_outputs=2,
    infer_shape=_moments_shape, infer_type=rules.same_type,
    gradient=lambda node, og: [bw("_backward_moments", [og[0], og[1], node.inputs[0],
                                                        (node, 0)], node, "backward",
                                  **kept(node))],
    doc="""Mean and variance over ``axes``.

    Parameters
    ----------
    data : NDArray or Symbol
    axes : tuple of int
    keepdims : bool, default False

    Examples
    --------
    >>> import sparsym as mx
    >>> m, v = mx.nd.moments(mx.nd.array([[1., 2.], [3., 5.]]), axes=(0,))
    >>> m.asnumpy().tolist(), v.asnumpy().tolist()
    ([2.0, 3.5], [1.0, 2.25])
    """))


# ----------------------------------------------------------------------------- onehot
def _onehot(a, xs):
    idx, out = st.todense(xs[0]), st.todense(xs[1])
    res = np.zeros(out.shape, dtype=out.dtype)
    ids = np.asarray(idx).astype(np.int64).reshape(-1)
    bad = (ids < 0) | (ids >= out.shape[1])
    if bad.any():
        raise IndexOutOfRange(f"_onehot_encode: index {int(ids[bad][0])} is out of range for "
                              f"{out.shape[1]} classes (the second input's columns)")
    res[np.arange(len(ids)), ids] = 1
    return (res,)


register(OpDef(
    "_onehot_encode", inputs=("lhs", "rhs"), dispatch=(Dispatch((DNS, DNS), (DNS,), _onehot),),
    infer_shape=rules.shape_of_input(1), infer_type=rules.type_of_input(1),
    gradient=lambda n, og: [None, None],
    doc="""One-hot rows: ``out[i, lhs[i]] = 1`` in an array shaped like ``rhs`` (MXNet's
    legacy onehot_encode; use one_hot).

    Parameters
    ----------
    lhs, rhs : NDArray
    """))

