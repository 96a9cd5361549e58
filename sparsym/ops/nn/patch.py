"""Patch and resampling operators: im2col, col2im, _contrib_AdaptiveAvgPooling2D and
UpSampling's nearest mode (MXNet 1.9.1's semantics; dense rows only).

- im2col / col2im: 1-D or 2-D spatial data, MXNet's column layout (N, C*prod(kernel),
  prod(output spatial)), row (c*kh + i)*kw + j; each is the other's gradient.
- AdaptiveAvgPooling2D: output cell (i, j) averages rows [floor(i*H/oh), ceil((i+1)*H/oh))
  and the same for columns.
- UpSampling ``sample_type='bilinear'`` is MXNet's learned upsampling: a depthwise
  Deconvolution (kernel 2s - s % 2, stride s, pad ceil((s - 1) / 2), one group per channel)
  of (data, weight), the weight (C, 1, k, k) usually initialised by ``init.Bilinear``.
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...base import ShapeError
from ...kernels import conv as kconv
from ..core import rules
from ..core.grad import bw, kept, multi_bw
from ..core.helpers import DNS, Checked, require
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register


# ----------------------------------------------------------------------------- im2col
def _geom(a, nsp):
    if nsp not in (1, 2):
        raise ShapeError(f"im2col/col2im: 1-D or 2-D spatial data supported here, got {nsp}-D "
                         "(3-D patches are not supported)")
    k = tuple(a.kernel)
    if len(k) != nsp:
        raise ShapeError(f"im2col/col2im: kernel {k} must have {nsp} entries")
    s = kconv._tup(a.stride, nsp, "stride", 1)
    p = kconv._tup(a.pad, nsp, "pad", 0)
    d = kconv._tup(a.dilate, nsp, "dilate", 1)
    if nsp == 1:
        return (1,) + k, (1,) + s, (0,) + p, (1,) + d
    return k, s, p, d


def _out_hw(a, spatial):
    k, s, p, d = _geom(a, len(spatial))
    sp = (1,) + tuple(spatial) if len(spatial) == 1 else tuple(spatial)
    out = tuple(kconv.conv_out_size(sp[i], k[i], s[i], p[i], d[i]) for i in range(2))
    if min(out) < 1:
        raise ShapeError(f"im2col/col2im: kernel {a.kernel} does not fit spatial shape "
                         f"{tuple(spatial)} with pad {a.pad}")
    return out, (k, s, p, d)


def _as4(x):
    return x[:, :, None, :] if x.ndim == 3 else x


def _im2col(a, xs):
    x = st.todense(xs[0])
    (oh, ow), (k, s, p, d) = _out_hw(a, x.shape[2:])
    return (kconv.im2col(_as4(x), k, s, p, d, (oh, ow)),)


def _col2im(a, xs):
    return (_col2im_raw(a, st.todense(xs[0]), tuple(a.output_size)),)


def _col2im_raw(a, cols, spatial):
    (oh, ow), (k, s, p, d) = _out_hw(a, spatial)
    c = cols.shape[1] // (k[0] * k[1])
    shape4 = (cols.shape[0], c) + ((1,) + spatial if len(spatial) == 1 else spatial)
    out = kconv.col2im(cols, shape4, k, s, p, d, (oh, ow))
    return out.reshape((cols.shape[0], c) + spatial)


def _im2col_shape(attrs, ins, outs):
    if rules.known(ins[0]):
        x = tuple(ins[0])
        (oh, ow), (k, _, _, _) = _out_hw(attrs, x[2:])
        rules.set_shape(outs, 0, (x[0], x[1] * k[0] * k[1], oh * ow), "output")
    return ins, outs


def _col2im_shape(attrs, ins, outs):
    if rules.known(ins[0]):
        x = tuple(ins[0])
        spatial = tuple(attrs.output_size)
        (oh, ow), (k, _, _, _) = _out_hw(attrs, spatial)
        if x[1] % (k[0] * k[1]) or x[2] != oh * ow:
            raise rules.Conflict("shape", 0, "input",
                                 f"(N, C*{k[0] * k[1]}, {oh * ow}) columns", x)
        rules.set_shape(outs, 0, (x[0], x[1] // (k[0] * k[1])) + spatial, "output")
    return ins, outs


_PATCH = dict(kernel=Field("shape"), stride=Field("shape", ()), dilate=Field("shape", ()),
              pad=Field("shape", ()))
_IM2COL = Params(**_PATCH)
_COL2IM = Params(output_size=Field("shape"), **_PATCH)


def _im2col_of_grad(a, xs):
    return _im2col(a, xs[:1])


register(OpDef(
    "_backward_im2col", inputs=("ograd", "data"), params=_IM2COL,
    dispatch=(Dispatch((DNS, "*"), (DNS,), lambda a, xs: (
        _col2im_raw(a, st.todense(xs[0]), tuple(xs[1].shape[2:])),)),),
    infer_shape=rules.shape_of_input(1), infer_type=rules.type_of_input(0),
    doc="Gradient of im2col: col2im of the output gradient."))
register(OpDef(
    "im2col", params=_IM2COL, dispatch=(Dispatch((DNS,), (DNS,), _im2col),),
    infer_shape=_im2col_shape,
    gradient=lambda node, og: [bw("_backward_im2col", [og[0], node.inputs[0]], node,
                                  "backward", **kept(node))],
    doc="""Sliding-window patches as columns: (N, C, *spatial) -> (N, C*prod(kernel), L).

    Parameters
    ----------
    data : NDArray or Symbol
    kernel : tuple of int
    stride, dilate, pad : tuple of int, optional
    """))
register(OpDef(
    "_backward_col2im", inputs=("ograd",), params=_COL2IM,
    dispatch=(Dispatch((DNS,), (DNS,), _im2col_of_grad),),
    infer_shape=lambda a, i, o: _im2col_shape(a, i, o),
    doc="Gradient of col2im: im2col of the output gradient."))
register(OpDef(
    "col2im", params=_COL2IM, dispatch=(Dispatch((DNS,), (DNS,), _col2im),),
    infer_shape=_col2im_shape,
    gradient=lambda node, og: [bw("_backward_col2im", [og[0]], node, "backward",
                                  **kept(node))],
    doc="""Sum columns back into an image (the adjoint of im2col): (N, C*prod(kernel), L) ->
    (N, C, *output_size).

    Parameters
    ----------
    data : NDArray or Symbol
    output_size : tuple of int
    kernel : tuple of int
    stride, dilate, pad : tuple of int, optional
    """))


# ----------------------------------------------------------------------------- adaptive pool
def _target(a, h, w):
    o = tuple(a.output_size)
    if len(o) == 0:
        return 1, 1
    if len(o) == 1:
        return o[0], o[0]
    return o[0], o[1]


def _cells(n_in, n_out):
    i = np.arange(n_out)
    return (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)


def _adaptive(a, xs):
    x = st.todense(xs[0])
    oh, ow = _target(a, *x.shape[2:])
    hs, he = _cells(x.shape[2], oh)
    ws, we = _cells(x.shape[3], ow)
    out = np.empty(x.shape[:2] + (oh, ow), dtype=x.dtype)
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = x[:, :, hs[i]:he[i], ws[j]:we[j]].mean(axis=(2, 3))
    return (out,)


def _adaptive_bwd(a, xs):
    g, x = st.todense(xs[0]), xs[1]
    oh, ow = g.shape[2:]
    hs, he = _cells(x.shape[2], oh)
    ws, we = _cells(x.shape[3], ow)
    dx = np.zeros(x.shape, dtype=g.dtype)
    for i in range(oh):
        for j in range(ow):
            area = (he[i] - hs[i]) * (we[j] - ws[j])
            dx[:, :, hs[i]:he[i], ws[j]:we[j]] += (g[:, :, i, j] / area)[:, :, None, None]
    return (dx,)


def _adaptive_shape(attrs, ins, outs):
    if rules.known(ins[0]):
        x = tuple(ins[0])
        if len(x) != 4:
            raise rules.Conflict("shape", 0, "input", "4-D NCHW data", x)
        rules.set_shape(outs, 0, x[:2] + _target(attrs, *x[2:]), "output")
    return ins, outs


_ADAPTIVE = Params(output_size=Field("shape", ()))
register(OpDef(
    "_backward_contrib_AdaptiveAvgPooling2D", inputs=("ograd", "data"), params=_ADAPTIVE,
    dispatch=(Dispatch((DNS, "*"), (DNS,), _adaptive_bwd),),
    infer_shape=rules.shape_of_input(1), infer_type=rules.type_of_input(0),
    doc="Gradient of AdaptiveAvgPooling2D: each cell's gradient spread over its window."))
register(OpDef(
    "_contrib_AdaptiveAvgPooling2D", params=_ADAPTIVE,
    dispatch=(Dispatch((DNS,), (DNS,), _adaptive),), infer_shape=_adaptive_shape,
    gradient=lambda node, og: [bw("_backward_contrib_AdaptiveAvgPooling2D",
                                  [og[0], node.inputs[0]], node, "backward", **kept(node))],
    doc="""Average pooling to a fixed output size (adaptive windows), NCHW.

    Parameters
    ----------
    data : NDArray or Symbol
    output_size : tuple of int, default () (1 x 1); one int gives a square
    """))


# ----------------------------------------------------------------------------- UpSampling
def _up_check(op, a):
    require(a.scale >= 1, op, f"scale must be >= 1, got {a.scale}")
    require(a.num_args >= 1, op, f"num_args must be >= 1, got {a.num_args}")


def _up_inputs(a):
    if a.sample_type == "bilinear":
        return ("data", "weight")
    return tuple(f"arg{i}" for i in range(a.num_args))


def _up_factors(a, shapes):
    out_h, out_w = shapes[0][2] * a.scale, shapes[0][3] * a.scale
    facs = []
    for s in shapes:
        if out_h % s[2] or out_w % s[3] or out_h // s[2] != out_w // s[3]:
            raise ShapeError(f"UpSampling: input of spatial shape {tuple(s[2:])} cannot be "
                             f"scaled to {(out_h, out_w)} by one integer factor")
        facs.append(out_h // s[2])
    return out_h, out_w, facs


def _bilinear_geom(a):
    """(kernel, stride, pad) of the depthwise deconvolution MXNet runs for 'bilinear'."""
    s = a.scale
    return 2 * s - s % 2, s, s // 2


def _bilinear_args(a, c):
    k, s, p = _bilinear_geom(a)
    return (s, s), (p, p), (1, 1), c, (0, 0), None


def _upsample(a, xs):
    xs = [st.todense(x) for x in xs]
    if a.sample_type == "bilinear":
        x, w = xs
        y = kconv.deconv_forward(x, w, None, *_bilinear_args(a, x.shape[1]))
        return (y.astype(x.dtype, copy=False),)
    _, _, facs = _up_factors(a, [x.shape for x in xs])
    ups = [_repeat2d(x, f) for x, f in zip(xs, facs)]
    if a.multi_input_mode == "sum":
        out = ups[0].copy()
        for u in ups[1:]:
            out += u
        return (out,)
    return (np.concatenate(ups, axis=1),)


def _upsample_bwd(a, xs):
    g, ins = st.todense(xs[0]), xs[1:]
    if a.sample_type == "bilinear":
        x, w = ins
        dx, dw, _ = kconv.deconv_backward(x, w, g, *_bilinear_args(a, x.shape[1]),
                                          need_bias=False)
        return dx.astype(x.dtype, copy=False), dw.astype(w.dtype, copy=False)
    _, _, facs = _up_factors(a, [x.shape for x in ins])
    grads, c0 = [], 0
    for x, f in zip(ins, facs):
        n, c, h, w = x.shape
        part = g if a.multi_input_mode == "sum" else g[:, c0:c0 + c]
        c0 += c
        grads.append(_block_sum(part, f).astype(x.dtype, copy=False))
    return tuple(grads)


def _repeat2d(x, f):
    """Each pixel of NCHW ``x`` as an f x f block: one copy of a broadcast view (two
    np.repeat passes before)."""
    n, c, h, w = x.shape
    return np.broadcast_to(x[:, :, :, None, :, None], (n, c, h, f, w, f)).reshape(
        n, c, h * f, w * f)


def _block_sum(g, f):
    """Sum of each f x f block of NCHW ``g``: f*f strided adds (NumPy's sum over the two
    inner axes of the 6-D view is several times slower)."""
    acc = g[:, :, 0::f, 0::f].copy()
    for i in range(f):
        for j in range(f):
            if i or j:
                acc += g[:, :, i::f, j::f]
    return acc


def _up_shape(attrs, ins, outs):
    if attrs.sample_type == "bilinear":
        x = ins[0]
        if x is not None:
            if len(x) != 4:
                raise rules.Conflict("shape", 0, "input", "4-D NCHW data", x)
            k = _bilinear_geom(attrs)[0]
            rules.set_shape(ins, 1, (x[1], 1, k, k))
            sc = attrs.scale
            rules.set_shape(outs, 0, (x[0], x[1]) + tuple(
                None if d is None else d * sc for d in x[2:]), "output")
        return ins, outs
    if all(rules.known(s) for s in ins):
        if any(len(s) != 4 for s in ins):
            raise rules.Conflict("shape", 0, "input", "4-D NCHW inputs", ins[0])
        oh, ow, _ = _up_factors(attrs, ins)
        c = ins[0][1] if attrs.multi_input_mode == "sum" else sum(s[1] for s in ins)
        rules.set_shape(outs, 0, (ins[0][0], c, oh, ow), "output")
    return ins, outs


def _up_bwd_shape(a, ins, outs):
    return ins, list(ins[1:])


_UP = Checked(_up_check, scale=Field("int"), num_filter=Field("int", 0),
              sample_type=Field("str", choices=("bilinear", "nearest")),
              multi_input_mode=Field("str", "concat", choices=("concat", "sum")),
              num_args=Field("int"), workspace=Field("int", 512))
register(OpDef(
    "_backward_UpSampling", params=_UP,
    inputs=lambda a: ("ograd",) + _up_inputs(a), num_outputs=lambda a: len(_up_inputs(a)),
    dispatch=(Dispatch((DNS, "..."), (DNS,), _upsample_bwd),),
    infer_shape=_up_bwd_shape, infer_type=_up_bwd_shape,
    doc="Gradient of UpSampling: nearest sums each block of the output gradient; bilinear "
        "is the depthwise deconvolution's gradient."))
register(OpDef(
    "UpSampling", params=_UP, inputs=_up_inputs, key_var_num_args="num_args",
    input_init=(("weight", '["bilinear", {}]'),),
    dispatch=(Dispatch((DNS, "..."), (DNS,), _upsample),), infer_shape=_up_shape,
    gradient=lambda node, og: multi_bw("_backward_UpSampling", [og[0]] + list(node.inputs),
                                       node, "backward", len(node.inputs), **kept(node)),
    doc="""Upsampling by an integer ``scale``.

    ``nearest``: each input is repeated to the first input's size times ``scale`` (several
    inputs are concatenated on channels, or summed). ``bilinear``: inputs (data, weight); a
    depthwise Deconvolution with kernel 2*scale - scale % 2, stride ``scale`` and pad
    ceil((scale - 1) / 2), the weight (C, 1, k, k) being learned (initialise it with
    ``init.Bilinear`` for bilinear interpolation).

    Parameters
    ----------
    data : NDArrays or Symbols
    scale : int
    num_filter : int, default 0
    sample_type : {'nearest', 'bilinear'}
    multi_input_mode : {'concat', 'sum'}, default 'concat'
    num_args : int
    workspace : int, default 512
    """))

