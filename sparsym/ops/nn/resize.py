"""_contrib_BilinearResize2D: bilinear resizing of NCHW data to a size, a scale, another
array's size or the nearest even/odd size, with its gradient (MXNet 1.9.1's modes and
output sizes). Kernels in kernels/resize.py."""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from ...kernels import resize as kresize
from ..core import rules
from ..core.grad import kept, multi_bw
from ..core.helpers import DNS, Checked, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register

_MODES = ("like", "odd_scale", "size", "to_even_down", "to_even_up", "to_odd_down",
          "to_odd_up")


def _check(op, a):
    require(a.height >= 1 and a.width >= 1, op,
            f"height and width must be >= 1, got {a.height}, {a.width}")
    scales = (a.scale_height, a.scale_width)
    if a.mode == "odd_scale" or (a.mode == "size" and any(s is not None for s in scales)):
        require(all(s is not None for s in scales), op,
                f"mode '{a.mode}' with a scale needs both scale_height and scale_width, "
                f"got {scales}")
        require(all(s > 0 for s in scales), op, f"scales must be positive, got {scales}")


_PARAMS = Checked(
    _check,
    height=Field("int", 1, doc="output height (mode 'size' without scales)"),
    width=Field("int", 1, doc="output width (mode 'size' without scales)"),
    scale_height=Field("float_or_none", None, doc="height factor (modes 'size', 'odd_scale')"),
    scale_width=Field("float_or_none", None, doc="width factor (modes 'size', 'odd_scale')"),
    mode=Field("str", "size", choices=_MODES),
    align_corners=Field("bool", True, doc="map corner pixels onto corner pixels"))


def _inputs(a):
    return ("data", "like") if a.mode == "like" else ("data",)


def _one(a, n, which):
    """Output extent of one axis of extent ``n`` (MXNet truncates scaled sizes)."""
    scale = a.scale_height if which == 0 else a.scale_width
    mode = a.mode
    if mode == "size":
        return int(n * scale) if scale is not None else (a.height, a.width)[which]
    if mode == "odd_scale":
        return int(n * scale) if n % 2 == 0 else int((n - 1) * scale) + 1
    even = n % 2 == 0
    return {"to_even_down": n if even else n - 1, "to_even_up": n if even else n + 1,
            "to_odd_down": n - 1 if even else n, "to_odd_up": n + 1 if even else n}[mode]


def _out_hw(a, data, like):
    if a.mode == "like":
        return (None, None) if like is None else (like[2], like[3])
    return tuple(None if data[2 + i] is None else _one(a, data[2 + i], i) for i in (0, 1))


def _shape(a, ins, outs):
    data = ins[0]
    like = ins[1] if a.mode == "like" else None
    for i, s in enumerate((data, like)):
        if s is not None and len(s) != 4:
            raise rules.Conflict("shape", i, "input", "4-D NCHW data", s)
    if data is None:
        return ins, outs
    hw = _out_hw(a, data, like)
    if any(v is not None and v < 1 for v in hw):
        raise ShapeError(f"operator _contrib_BilinearResize2D: output size {hw} of input "
                         f"{tuple(data)} in mode '{a.mode}' is empty")
    rules.set_shape(outs, 0, tuple(data[:2]) + tuple(hw), "output")
    return ins, outs


def _fwd(a, xs):
    x = xs[0]
    oh, ow = _out_hw(a, x.shape, xs[1].shape if a.mode == "like" else None)
    return (kresize.resize_forward(x, oh, ow, a.align_corners),)


def _bwd(a, xs):
    g, x = xs[0], xs[1]
    dx = kresize.resize_backward(g, x.shape[2], x.shape[3], a.align_corners, x.dtype)
    return (dx,) + ((np.zeros_like(xs[2]),) if a.mode == "like" else ())


register(OpDef(
    "_contrib_BilinearResize2D", params=_PARAMS, inputs=_inputs,
    dispatch=(Dispatch((DNS, "..."), (DNS,), _fwd),), infer_shape=_shape,
    infer_type=rules.first_input_type,
    gradient=lambda node, og: multi_bw("_backward_contrib_BilinearResize2D",
                                       [og[0]] + list(node.inputs), node, "backward",
                                       len(node.inputs), **kept(node)),
    doc="""Resize NCHW data by bilinear interpolation.

    Output size by ``mode``: 'size' gives (height, width), or (int(H*scale_height),
    int(W*scale_width)) when the scales are given; 'odd_scale' scales an even extent n to
    int(n*scale) and an odd one to int((n-1)*scale) + 1; 'like' takes the second input's
    (H, W); 'to_even_down', 'to_even_up', 'to_odd_down', 'to_odd_up' move each odd (even)
    extent by one. ``align_corners`` maps corner pixels onto each other (default), else
    pixel centres (src = (dst + 0.5) * in/out - 0.5).

    Parameters
    ----------
    data : Symbol or NDArray
    like : Symbol or NDArray (mode 'like' only)
    height, width : int, default 1
    scale_height, scale_width : float, optional
    mode : {'size', 'odd_scale', 'like', 'to_even_down', 'to_even_up', 'to_odd_down',
        'to_odd_up'}, default 'size'
    align_corners : bool, default True

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.array([[[[0., 2.]]]])
    >>> mx.nd.contrib.BilinearResize2D(x, height=1, width=3).asnumpy().ravel().tolist()
    [0.0, 1.0, 2.0]
    """))
register(OpDef(
    "_backward_contrib_BilinearResize2D", params=_PARAMS,
    inputs=lambda a: ("ograd",) + _inputs(a), num_outputs=lambda a: len(_inputs(a)),
    dispatch=(Dispatch((DNS, "..."), (DNS,), _bwd),), infer_shape=rules.grads_like_inputs(1),
    infer_type=rules.grads_like_inputs_type(1)))
