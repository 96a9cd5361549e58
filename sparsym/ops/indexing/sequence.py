"""Sequence operators over a time axis with per-sequence lengths: SequenceMask,
SequenceLast and SequenceReverse (MXNet 1.9.1 semantics)."""
from __future__ import annotations

import numpy as np

from ..core import rules
from ..core.grad import bw, kept
from ..core.helpers import DNS, norm_axis, require
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register


def _inputs(a):
    return ("data", "sequence_length") if a.use_sequence_length else ("data",)


def _lengths(a, xs, x, ax, op):
    """Per-batch valid lengths (the full time axis without ``use_sequence_length``)."""
    t, n = x.shape[ax], x.shape[1 - ax]
    if not a.use_sequence_length:
        return np.full(n, t, dtype=np.int64)
    lens = np.asarray(xs[1]).reshape(-1).astype(np.int64)
    require(lens.shape == (n,), op, f"sequence_length must have shape ({n},), got "
            f"{np.asarray(xs[1]).shape}")
    require(((lens >= 0) & (lens <= t)).all(), op,
            f"sequence_length entries must lie in [0, {t}], got {lens.tolist()}")
    return lens


def _axis(a, x, op, allowed=(0, 1)):
    ax = norm_axis(a.axis, x.ndim, op)
    require(ax in allowed and x.ndim >= 2, op,
            f"axis must be one of {allowed} on data of 2 or more dims, got axis={a.axis} "
            f"for shape {x.shape}")
    return ax


def _valid(lens, t, ax, ndim):
    """Boolean mask broadcastable to the data: True at steps within each length."""
    steps = np.arange(t)
    m = steps[:, None] < lens[None, :] if ax == 0 else steps[None, :] < lens[:, None]
    return m.reshape(m.shape + (1,) * (ndim - 2))


def _len_shape(attrs, ins, outs, out_shape):
    if ins[0] is not None:
        x = tuple(ins[0])
        ax = attrs.axis if attrs.axis >= 0 else attrs.axis + len(x)
        if attrs.use_sequence_length and len(x) >= 2:
            rules.set_shape(ins, 1, (x[1 - ax],))
        rules.set_shape(outs, 0, out_shape(x, ax), "output")
    return ins, outs


def _grad(name):
    def grad(node, og):
        inputs = [og[0]] + list(node.inputs)
        g = [bw(name, inputs, node, "backward", **kept(node))]
        return g + [None] * (len(node.inputs) - 1)
    return grad


def _bwd_inputs(a):
    return ("ograd",) + _inputs(a)


def _bwd_shape(attrs, ins, outs):
    if ins[1] is not None:
        rules.set_shape(outs, 0, ins[1], "output")
    return ins, outs


def _register(name, params, fwd, bwd, out_shape, doc):
    """Register ``name(data[, sequence_length])`` and its single-gradient backward op."""
    register(OpDef(
        name, params=params, inputs=_inputs, dispatch=(Dispatch((DNS, "..."), (DNS,), fwd),),
        infer_shape=lambda a, i, o: _len_shape(a, i, o, out_shape),
        infer_type=rules.first_input_type, gradient=_grad("_backward_" + name), doc=doc))
    register(OpDef(
        "_backward_" + name, params=params, inputs=_bwd_inputs,
        dispatch=(Dispatch((DNS, DNS, "..."), (DNS,), bwd),), infer_shape=_bwd_shape,
        infer_type=rules.first_input_type))


# ----------------------------------------------------------------------------- SequenceMask
_MASK = Params(use_sequence_length=Field("bool", False, doc="use the lengths input"),
               value=Field("float", 0.0, doc="value of the masked steps"),
               axis=Field("int", 0, doc="time axis (0 or 1)"))


def _mask_fwd(a, xs):
    x = np.asarray(xs[0])
    ax = _axis(a, x, "SequenceMask")
    lens = _lengths(a, xs, x, ax, "SequenceMask")
    return (np.where(_valid(lens, x.shape[ax], ax, x.ndim), x,
                     np.asarray(a.value, dtype=x.dtype)),)


def _mask_bwd(a, xs):
    g, x = np.asarray(xs[0]), np.asarray(xs[1])
    ax = _axis(a, x, "SequenceMask")
    lens = _lengths(a, xs[1:], x, ax, "SequenceMask")
    return (np.where(_valid(lens, x.shape[ax], ax, x.ndim), g, 0).astype(g.dtype),)


_register(
    "SequenceMask", _MASK, _mask_fwd, _mask_bwd, lambda x, ax: x,
    doc="""Set the steps past each sequence's length to ``value``.

    Parameters
    ----------
    data : Symbol or NDArray
        (T, N, ...) with ``axis=0`` or (N, T, ...) with ``axis=1``.
    sequence_length : Symbol or NDArray, optional
        (N,) lengths, read when ``use_sequence_length`` is true.
    use_sequence_length : bool, default False
    value : float, default 0
    axis : int, default 0

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.ones((3, 2))
    >>> mx.nd.SequenceMask(x, mx.nd.array([1, 3]), use_sequence_length=True).asnumpy().tolist()
    [[1.0, 1.0], [0.0, 1.0], [0.0, 1.0]]
    """)


# ----------------------------------------------------------------------------- SequenceLast
_LAST = Params(use_sequence_length=Field("bool", False, doc="use the lengths input"),
               axis=Field("int", 0, doc="time axis (0 or 1)"))


def _last_pos(a, xs, x, op):
    ax = _axis(a, x, op)
    lens = _lengths(a, xs, x, ax, op)
    require((lens >= 1).all() or x.shape[1 - ax] == 0, op,
            f"sequence_length entries must be at least 1, got {lens.tolist()}")
    return ax, lens - 1


def _last_fwd(a, xs):
    x = np.asarray(xs[0])
    ax, pos = _last_pos(a, xs, x, "SequenceLast")
    batch = np.arange(x.shape[1 - ax])
    return (np.ascontiguousarray(x[pos, batch] if ax == 0 else x[batch, pos]),)


def _last_bwd(a, xs):
    g, x = np.asarray(xs[0]), np.asarray(xs[1])
    ax, pos = _last_pos(a, xs[1:], x, "SequenceLast")
    dx = np.zeros(x.shape, dtype=g.dtype)
    batch = np.arange(x.shape[1 - ax])
    if ax == 0:
        dx[pos, batch] = g
    else:
        dx[batch, pos] = g
    return (dx,)


_register(
    "SequenceLast", _LAST, _last_fwd, _last_bwd, lambda x, ax: x[:ax] + x[ax + 1:],
    doc="""The last valid step of each sequence.

    Parameters
    ----------
    data : Symbol or NDArray
        (T, N, ...) with ``axis=0`` or (N, T, ...) with ``axis=1``.
    sequence_length : Symbol or NDArray, optional
    use_sequence_length : bool, default False
    axis : int, default 0

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.array([[1, 2], [3, 4], [5, 6]])
    >>> mx.nd.SequenceLast(x, mx.nd.array([1, 3]), use_sequence_length=True).asnumpy().tolist()
    [1.0, 6.0]
    """)


# ----------------------------------------------------------------------------- SequenceReverse
_REV = Params(use_sequence_length=Field("bool", False, doc="use the lengths input"),
              axis=Field("int", 0, doc="time axis (only 0)"))


def _rev_index(a, xs, x, op):
    _axis(a, x, op, allowed=(0,))
    lens = _lengths(a, xs, x, 0, op)
    t = x.shape[0]
    steps = np.arange(t)[:, None]
    # within a length l, step s reads step l-1-s; steps past it stay where they are
    return np.where(steps < lens[None, :], lens[None, :] - 1 - steps, steps)


def _rev_apply(x, idx):
    batch = np.arange(x.shape[1])[None, :]
    return np.ascontiguousarray(x[idx, batch])


def _rev_fwd(a, xs):
    x = np.asarray(xs[0])
    return (_rev_apply(x, _rev_index(a, xs, x, "SequenceReverse")),)


def _rev_bwd(a, xs):
    g, x = np.asarray(xs[0]), np.asarray(xs[1])
    # the permutation is its own inverse
    return (_rev_apply(g, _rev_index(a, xs[1:], x, "SequenceReverse")),)


_register(
    "SequenceReverse", _REV, _rev_fwd, _rev_bwd, lambda x, ax: x,
    doc="""Reverse each sequence within its length along axis 0.

    Parameters
    ----------
    data : Symbol or NDArray
        (T, N, ...).
    sequence_length : Symbol or NDArray, optional
    use_sequence_length : bool, default False
    axis : int, default 0

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.array([[1, 2], [3, 4], [5, 6]])
    >>> y = mx.nd.SequenceReverse(x, mx.nd.array([2, 3]), use_sequence_length=True)
    >>> y.asnumpy().tolist()
    [[3.0, 6.0], [1.0, 4.0], [5.0, 2.0]]
    """)
