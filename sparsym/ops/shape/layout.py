"""Layout operators: depth_to_space, space_to_depth, diag, _split_v2, Pad (pad),
_ravel_multi_index and _unravel_index (MXNet 1.9.1's semantics, probed; dense rows only).

- depth_to_space / space_to_depth: MXNet's DCR order on NCHW data.
- diag: numpy.diag for 1-D input, numpy.diagonal(k, axis1, axis2) otherwise.
- _split_v2: ``indices`` are the section starts (the Python split_v2 prepends 0), or
  ``sections`` equal parts.
- Pad: 4-D or 5-D input, no padding on the first two axes (MXNet's limits); the gradient of
  edge/reflect modes adds every copy back to its source element.
- _ravel_multi_index does not check bounds (as MXNet: row-major strides applied as given).
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...base import ShapeError
from ..core import rules
from ..core.grad import bw, kept
from ..core.helpers import DNS, Checked, norm_axis, require
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register
from .shape import unary_shape_op


def _bad(expected, got):
    return rules.Conflict("shape", 0, "input", expected, got)


# ----------------------------------------------------------------------------- depth/space
def _block_check(op, a):
    require(a.block_size > 0, op, f"block_size must be positive, got {a.block_size}")


_BLOCK = Checked(_block_check, block_size=Field("int", doc="spatial block size"))


def _no_empty_dims(s):
    """MXNet's depth_to_space/space_to_depth reject 0-size dims (even with NumPy shapes)."""
    for i, d in enumerate(s):
        if d == 0:
            what = "Depth dimension:1" if i == 1 else f"Size of dimension:{i}"
            raise ShapeError(f"Operation requires a 4D tensor. {what} cannot be 0")


def _d2s_shape(a, s):
    b = a.block_size
    _no_empty_dims(s)
    if len(s) != 4 or s[1] % (b * b):
        raise _bad(f"4-D NCHW data with channels divisible by {b * b}", s)
    return (s[0], s[1] // (b * b), s[2] * b, s[3] * b)


def _d2s(a, x):
    n, c, h, w = x.shape
    b = a.block_size
    y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return np.ascontiguousarray(y).reshape(_d2s_shape(a, x.shape))


def _s2d_shape(a, s):
    b = a.block_size
    _no_empty_dims(s)
    if len(s) != 4 or s[2] % b or s[3] % b:
        raise _bad(f"4-D NCHW data with height and width divisible by {b}", s)
    return (s[0], s[1] * b * b, s[2] // b, s[3] // b)


def _s2d(a, x):
    n, c, h, w = x.shape
    b = a.block_size
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return np.ascontiguousarray(y).reshape(_s2d_shape(a, x.shape))


unary_shape_op(
    "depth_to_space", _BLOCK, _d2s, _d2s_shape, lambda a, g, x: _s2d(a, g),
    doc="""Move depth blocks into spatial blocks: (N, C, H, W) -> (N, C/b^2, H*b, W*b).

    Parameters
    ----------
    data : NDArray or Symbol
    block_size : int
    """)
unary_shape_op(
    "space_to_depth", _BLOCK, _s2d, _s2d_shape, lambda a, g, x: _d2s(a, g),
    doc="""Move spatial blocks into depth: (N, C, H, W) -> (N, C*b^2, H/b, W/b).

    Parameters
    ----------
    data : NDArray or Symbol
    block_size : int
    """)


# ----------------------------------------------------------------------------- diag
def _diag_axes(a, nd):
    i, j = norm_axis(a.axis1, nd, "diag"), norm_axis(a.axis2, nd, "diag")
    if i == j:
        raise _bad(f"axis1 != axis2 (both {a.axis1})", nd)
    return i, j


def _diag(a, x):
    if x.ndim == 1:
        return np.diag(x, a.k)
    i, j = _diag_axes(a, x.ndim)
    return np.ascontiguousarray(np.diagonal(x, a.k, i, j))


def _diag_shape(a, s):
    if len(s) == 0:
        raise _bad("at least 1-D data", s)
    if len(s) == 1:
        n = s[0] + abs(a.k)
        return (n, n)
    i, j = _diag_axes(a, len(s))
    size = min(s[i], s[j] - a.k) if a.k >= 0 else min(s[i] + a.k, s[j])
    if size < 0:  # MXNet: an offset past the edge is an error (at the edge: empty)
        raise ShapeError(f"diag: Diagonal does not exist: k={a.k} is out of range for axes of "
                         f"sizes {s[i]} and {s[j]}")
    return tuple(d for t, d in enumerate(s) if t not in (i, j)) + (size,)


def _diag_bwd(a, g, x):
    if x.ndim == 1:
        return np.ascontiguousarray(np.diagonal(g, a.k))
    i, j = _diag_axes(a, x.ndim)
    out = np.zeros(x.shape, dtype=g.dtype)
    view = np.diagonal(out, a.k, i, j)
    view.setflags(write=True)
    view[...] = g
    return out


unary_shape_op(
    "diag", Params(k=Field("int", 0), axis1=Field("int", 0), axis2=Field("int", 1)),
    _diag, _diag_shape, _diag_bwd,
    doc="""The k-th diagonal (of axes axis1, axis2) of N-d data, or a matrix with a 1-D
    input on its k-th diagonal.

    Parameters
    ----------
    data : NDArray or Symbol
    k : int, default 0
    axis1, axis2 : int, default 0, 1

    Examples
    --------
    >>> import sparsym as mx
    >>> mx.nd.diag(mx.nd.array([1., 2.]), k=1).asnumpy().tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
    """)


# ----------------------------------------------------------------------------- split_v2
def _split_check(op, a):
    require(a.sections > 0 or len(a.indices) > 0, op, "give indices or sections > 0")


def _n_split(a):
    return a.sections if a.sections > 0 else len(a.indices)


def _bounds(a, n):
    if a.sections > 0:
        if n % a.sections:
            raise _bad(f"an axis divisible by sections={a.sections}", n)
        step = n // a.sections
        starts = [i * step for i in range(a.sections)]
    else:
        starts = list(a.indices)
    ends = starts[1:] + [n]
    for b, e in zip(starts, ends):
        if not 0 <= b <= e <= n:
            raise _bad(f"increasing split indices within the axis size {n}", tuple(a.indices))
    return list(zip(starts, ends))


def _split_shapes(a, s):
    ax = norm_axis(a.axis, len(s), "split_v2")
    out = []
    for b, e in _bounds(a, s[ax]):
        if a.squeeze_axis and e - b != 1:
            raise _bad("sections of size 1 along the axis with squeeze_axis", s)
        piece = s[:ax] + (e - b,) + s[ax + 1:]
        out.append(piece[:ax] + piece[ax + 1:] if a.squeeze_axis else piece)
    return out


def _split_v2_shape(attrs, ins, outs):
    if rules.known(ins[0]):
        for i, s in enumerate(_split_shapes(attrs, tuple(ins[0]))):
            rules.set_shape(outs, i, s, "output")
    return ins, outs


def _split_v2(a, xs):
    x = xs[0]
    ax = norm_axis(a.axis, x.ndim, "split_v2")
    outs = []
    for b, e in _bounds(a, x.shape[ax]):
        piece = np.take(x, np.arange(b, e), axis=ax)
        outs.append(np.squeeze(piece, axis=ax) if a.squeeze_axis else piece)
    return tuple(outs)


def _split_v2_bwd(a, xs):
    x = xs[-1]
    ax = norm_axis(a.axis, x.ndim, "split_v2")
    parts = [np.expand_dims(st.todense(g), ax) if a.squeeze_axis else st.todense(g)
             for g in xs[:-1]]
    return (np.ascontiguousarray(np.concatenate(parts, axis=ax), dtype=x.dtype),)


def split_v2_params(indices_or_sections):
    """The Python split_v2's argument as _split_v2's (indices with a leading 0, sections)."""
    if isinstance(indices_or_sections, int):
        return (), indices_or_sections
    if isinstance(indices_or_sections, (tuple, list)):
        return (0,) + tuple(indices_or_sections), 0
    raise ValueError("indices_or_sections must be either int or tuple of ints")


_SPLIT = Checked(_split_check, indices=Field("shape", doc="section starts (0 first)"),
                 axis=Field("int", 1), squeeze_axis=Field("bool", False),
                 sections=Field("int", 0))
register(OpDef(
    "_split_v2_backward", params=_SPLIT,
    inputs=lambda a: tuple(f"ograd{i}" for i in range(_n_split(a))) + ("data",),
    dispatch=(Dispatch((DNS, "..."), (DNS,), _split_v2_bwd),),
    infer_shape=rules.shape_of_input(-1), infer_type=rules.type_of_input(-1),
    doc="Gradient of _split_v2: the output gradients joined along the axis."))
register(OpDef(
    "_split_v2", params=_SPLIT, dispatch=(Dispatch((DNS,), (DNS,), _split_v2),),
    num_outputs=_n_split, infer_shape=_split_v2_shape, infer_type=rules.same_type,
    gradient=lambda node, og: [bw("_split_v2_backward", list(og) + [node.inputs[0]], node,
                                  "backward", **kept(node))],
    doc="""Split along ``axis`` at the section starts ``indices`` (or into ``sections``
    equal parts); the Python ``split_v2`` builds ``indices`` from its arguments.

    Parameters
    ----------
    data : NDArray or Symbol
    indices : tuple of int
    axis : int, default 1
    squeeze_axis : bool, default False
    sections : int, default 0
    """))


# ----------------------------------------------------------------------------- Pad
def _pad_check(op, a):
    require(len(a.pad_width) % 2 == 0, op, f"pad_width needs (before, after) pairs, got "
            f"{a.pad_width}")
    require(all(p >= 0 for p in a.pad_width), op, f"pad_width must be >= 0, got {a.pad_width}")


def _pairs(a, nd):
    pw = tuple(a.pad_width)
    if nd not in (4, 5):
        raise _bad("4-D or 5-D input (Current implementation only supports 4-D or 5-D "
                   "input.)", f"{nd}-D input")
    if len(pw) != 2 * nd:
        raise _bad(f"pad_width of length {2 * nd}", pw)
    if any(pw[:4]):
        raise _bad("zero padding on the first two axes (Current implementation expects "
                   "padding on the first two axes to be zero.)", pw)
    return [(pw[2 * i], pw[2 * i + 1]) for i in range(nd)]


def _pad_shape(a, s):
    return tuple(d + b + e for d, (b, e) in zip(s, _pairs(a, len(s))))


def _np_mode(a):
    return {"constant": "constant", "edge": "edge", "reflect": "reflect"}[a.mode]


def _pad(a, x):
    pairs = _pairs(a, x.ndim)
    if a.mode == "constant":
        return np.pad(x, pairs, mode="constant", constant_values=a.constant_value)
    return np.pad(x, pairs, mode=_np_mode(a))


def _pad_bwd(a, g, x):
    """Each output position adds its gradient to the input element it copies."""
    pairs = _pairs(a, x.ndim)
    if a.mode == "constant":  # the interior, as it lies
        return np.ascontiguousarray(g[tuple(slice(b, b + n) for (b, _), n in
                                            zip(pairs, x.shape))])
    src = np.arange(x.size, dtype=np.int64).reshape(x.shape)
    src = np.pad(src, pairs, mode=_np_mode(a))
    keep = src.reshape(-1) >= 0
    flat = np.bincount(src.reshape(-1)[keep], weights=g.reshape(-1)[keep], minlength=x.size)
    return flat.reshape(x.shape)


unary_shape_op(
    "Pad", Checked(_pad_check, mode=Field("str", choices=("constant", "edge", "reflect")),
                   pad_width=Field("shape"), constant_value=Field("float", 0.0)),
    _pad, _pad_shape, _pad_bwd, aliases=("pad",),
    doc="""Pad the spatial axes of 4-D or 5-D data.

    Parameters
    ----------
    data : NDArray or Symbol
    mode : {'constant', 'edge', 'reflect'}
    pad_width : tuple of int
        (before, after) per axis, zero for the first two axes.
    constant_value : float, default 0

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.ones((1, 1, 2, 2))
    >>> mx.nd.pad(x, mode='constant', pad_width=(0, 0, 0, 0, 1, 1, 1, 1)).shape
    (1, 1, 4, 4)
    """)


# ----------------------------------------------------------------------------- ravel
def _strides(shape):
    out = np.ones(len(shape), dtype=np.int64)
    for i in range(len(shape) - 2, -1, -1):
        out[i] = out[i + 1] * shape[i + 1]
    return out


def _ravel(a, xs):
    x = st.todense(xs[0])
    idx = x.astype(np.int64).reshape(len(a.shape), -1)
    flat = (idx * _strides(a.shape)[:, None]).sum(axis=0)
    return (flat.reshape(x.shape[1:]).astype(x.dtype),)


def _unravel(a, xs):
    x = st.todense(xs[0])
    flat = x.astype(np.int64).reshape(-1)
    # MXNet: the leading coordinate is not wrapped (so it may be -1 = unknown, and indices
    # past the end give a leading coordinate past the end)
    out = np.stack([flat // s if i == 0 else (flat // s) % d
                    for i, (s, d) in enumerate(zip(_strides(a.shape), a.shape))])
    return (out.reshape((len(a.shape),) + x.shape).astype(x.dtype),)


def _ravel_shape(attrs, ins, outs):
    if ins[0] is not None:
        if len(ins[0]) < 1 or ins[0][0] not in (None, len(attrs.shape)):
            raise _bad(f"({len(attrs.shape)}, ...) indices for shape {attrs.shape}", ins[0])
        rules.set_shape(outs, 0, tuple(ins[0][1:]), "output")
    return ins, outs


def _unravel_shape(attrs, ins, outs):
    if ins[0] is not None:
        rules.set_shape(outs, 0, (len(attrs.shape),) + tuple(ins[0]), "output")
    return ins, outs


_RAVEL = Params(shape=Field("shape", doc="the shape the indices address"))
for _name, _kernel, _shape, _alias, _what in (
        ("_ravel_multi_index", _ravel, _ravel_shape, "ravel_multi_index",
         "Flat (row-major) indices of the columns of (M, N) multi-indices into ``shape``."),
        ("_unravel_index", _unravel, _unravel_shape, "unravel_index",
         "(M, N) multi-indices into ``shape`` of N flat (row-major) indices.")):
    register(OpDef(_name, params=_RAVEL, dispatch=(Dispatch((DNS,), (DNS,), _kernel),),
                   infer_shape=_shape, infer_type=rules.same_type,
                   gradient=lambda n, og: [None], aliases=(_alias,),
                   doc=f"""{_what}

    Parameters
    ----------
    data : NDArray or Symbol
    shape : tuple of int
    """))

