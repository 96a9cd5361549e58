"""Crop (MXNet's deprecated spatial crop of NCHW data to ``h_w`` or to a second input's
height and width, at ``offset`` or centred), with its gradient."""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from ..core import rules
from ..core.grad import kept, multi_bw
from ..core.helpers import DNS, Checked, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register


def _check(op, a):
    require(a.num_args in (1, 2), op, f"num_args must be 1 or 2, got {a.num_args}")
    require(len(a.offset) == 2 and min(a.offset) >= 0, op,
            f"offset must be 2 non-negative ints (y, x), got {a.offset}")
    require(len(a.h_w) == 2 and min(a.h_w) >= 0, op,
            f"h_w must be 2 non-negative ints (h, w), got {a.h_w}")
    if a.num_args == 1:
        require(min(a.h_w) > 0, op, f"with one input, h_w must be positive, got {a.h_w}")


_PARAMS = Checked(
    _check, num_args=Field("int", doc="1 (crop to h_w) or 2 (crop to the second input)"),
    offset=Field("shape", (0, 0), doc="top-left corner (y, x) of the crop"),
    h_w=Field("shape", (0, 0), doc="crop height and width (one input)"),
    center_crop=Field("bool", False, doc="centre the crop (offset ignored)"))


def _inputs(a):
    return tuple(f"arg{i}" for i in range(a.num_args))


def _window(a, data, like):
    """(top, left, h, w) of the crop of a (N, C, H, W) shape."""
    h, w = (like[2], like[3]) if a.num_args == 2 else tuple(a.h_w)
    H, W = data[2], data[3]
    if h > H or w > W:
        raise ShapeError(f"operator Crop: crop size ({h}, {w}) exceeds the input's ({H}, {W})")
    if a.center_crop:
        return (H - h) // 2, (W - w) // 2, h, w
    top, left = a.offset
    if top > H - h or left > W - w:
        raise ShapeError(f"operator Crop: offset {tuple(a.offset)} leaves no room for a "
                         f"({h}, {w}) crop of ({H}, {W}) (offset[0] should be less than the "
                         "residual space of height, offset[1] of width)")
    return top, left, h, w


def _shape(a, ins, outs):
    for i, s in enumerate(ins):
        if s is not None and len(s) != 4:
            raise rules.Conflict("shape", i, "input", "4-D NCHW data", s)
    data = ins[0]
    like = ins[1] if a.num_args == 2 else None
    if data is None or None in data[2:] or (a.num_args == 2 and (like is None
                                                                  or None in like[2:])):
        return ins, outs
    _, _, h, w = _window(a, data, like)
    rules.set_shape(outs, 0, tuple(data[:2]) + (h, w), "output")
    return ins, outs


def _fwd(a, xs):
    top, left, h, w = _window(a, xs[0].shape, xs[1].shape if a.num_args == 2 else None)
    return (np.ascontiguousarray(xs[0][:, :, top:top + h, left:left + w]),)


def _bwd(a, xs):
    g, data = xs[0], xs[1]
    top, left, h, w = _window(a, data.shape, xs[2].shape if a.num_args == 2 else None)
    dx = np.zeros(data.shape, g.dtype)
    dx[:, :, top:top + h, left:left + w] = g
    return (dx,) + ((np.zeros_like(xs[2]),) if a.num_args == 2 else ())


register(OpDef(
    "Crop", params=_PARAMS, inputs=_inputs, key_var_num_args="num_args",
    dispatch=(Dispatch((DNS, "..."), (DNS,), _fwd),), infer_shape=_shape,
    infer_type=rules.first_input_type,
    gradient=lambda node, og: multi_bw("_backward_Crop", [og[0]] + list(node.inputs), node,
                                       "backward", len(node.inputs), **kept(node)),
    doc="""Crop the height and width of NCHW data (MXNet's deprecated ``Crop``; prefer
    ``slice``): to ``h_w`` with one input, or to the second input's (H, W) with two; at
    ``offset`` (y, x), or centred with ``center_crop`` (the top-left corner at
    ((H - h) // 2, (W - w) // 2)). The second input gets a zero gradient.

    Parameters
    ----------
    data : Symbols or NDArrays (one or two)
    num_args : int
    offset : tuple of 2 int, default (0, 0)
    h_w : tuple of 2 int, default (0, 0)
    center_crop : bool, default False

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.arange(16).reshape((1, 1, 4, 4))
    >>> mx.nd.Crop(x, h_w=(2, 2), center_crop=True, num_args=1).asnumpy().ravel().tolist()
    [5.0, 6.0, 9.0, 10.0]
    """))
register(OpDef(
    "_backward_Crop", params=_PARAMS, inputs=lambda a: ("ograd",) + _inputs(a),
    num_outputs=lambda a: a.num_args, dispatch=(Dispatch((DNS, "..."), (DNS,), _bwd),),
    infer_shape=rules.grads_like_inputs(1), infer_type=rules.grads_like_inputs_type(1)))
