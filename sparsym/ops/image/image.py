"""Image operators of ``mx.nd.image`` / ``mx.sym.image`` (``_image_*``) and ``_cvimresize``:
MXNet 1.9.1's names, parameters and values (kernels in sparsym/kernels/image.py).

Images are HWC (``to_tensor`` makes them CHW); ``to_tensor``, ``normalize``, ``crop`` and
``resize`` also take NHWC / NCHW batches, as MXNet does, and so do the flips here (MXNet's
take single images only). Where MXNet 1.9.1 is wrong, these are right (and say so in
docs/migrating_from_mxnet.md): flips of odd sizes keep the middle line, saturation blends
with the full luminance, ``random_color_jitter`` with all factors 0 returns the image, and
the hue of a one-channel image is the image itself.
"""
from __future__ import annotations

import numpy as np

from ... import _rng
from ... import storage as st
from ...base import ShapeError
from ...kernels import image as kimg
from ..core import rules
from ..core.grad import bw, kept
from ..core.helpers import DNS, Checked, require
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register


def _dense(fn):
    """One dense row running ``fn(attrs, x)`` on the first input."""
    return (Dispatch((DNS,), (DNS,), lambda a, xs: (fn(a, st.todense(xs[0])),)),)


def _ndim_check(shape, ndims, msg):
    if len(shape) not in ndims:
        raise ShapeError(msg + f" but got {list(shape)}")


_HWC_MSG = ("Input image must have shape (height, width, channels), or (N, height, width, "
            "channels)")
_ONE_MSG = "Input image must have shape (height, width, channels),"


def _image_shape(ndims=(3, 4), channels=None, msg=_HWC_MSG):
    """Same-shape rule over HWC images (``ndims``), optionally of 1 or 3 channels."""
    def rule(attrs, ins, outs):
        rules.same_shape(attrs, ins, outs)
        if rules.known(ins[0]):
            _ndim_check(ins[0], ndims, msg)
            if channels and ins[0][-1] not in channels:
                raise ShapeError("The last dimension of input image must be the channel "
                                 "dimension with either 1 or 3 elements, but got input with "
                                 f"shape {list(ins[0])}")
        return ins, outs
    return rule


# ----------------------------------------------------------------------------- to_tensor
def _to_tensor_shape(attrs, ins, outs):
    if rules.known(ins[0]):
        s = tuple(ins[0])
        _ndim_check(s, (3, 4), _HWC_MSG)
        rules.set_shape(outs, 0, s[:-3] + (s[-1],) + s[-3:-1], "output")
    return ins, outs


def _float32_out(attrs, ins, outs):
    rules.set_type(outs, 0, np.dtype(np.float32), "output")
    return ins, outs


register(OpDef(
    "_image_to_tensor", dispatch=_dense(lambda a, x: kimg.to_tensor(x)),
    infer_shape=_to_tensor_shape, infer_type=_float32_out,
    doc="""Convert an image (H, W, C) or batch (N, H, W, C) in [0, 255] to a float32 tensor
    (C, H, W) / (N, C, H, W) in [0, 1].

    Parameters
    ----------
    data : NDArray or Symbol
    """))


# ----------------------------------------------------------------------------- normalize
def _normalize_shape(attrs, ins, outs):
    rules.same_shape(attrs, ins, outs)
    if rules.known(ins[0]):
        s = tuple(ins[0])
        _ndim_check(s, (3, 4), "Input tensor must have shape (channels, height, width), or "
                               "(N, channels, height, width),")
        c = s[-3]
        for name in ("mean", "std"):
            v = tuple(attrs[name])
            if len(v) not in (1, c) and len(set(v)) > 1:
                raise ShapeError(f"Invalid {name} for input with shape {list(s)}. {name} must "
                                 f"have either 1 or {c} elements, but got {list(v)}")
    return ins, outs


def _norm_vec(v, c):
    if len(v) not in (1, c) and len(set(v)) == 1:  # repeated one value (the shape rule's
        return v[:1]                               # exception): it applies to every channel
    return v[:c] if len(v) > c else v


def _normalize(a, x):
    c = x.shape[-3]
    return kimg.normalize(x, _norm_vec(a.mean, c), _norm_vec(a.std, c))


def _normalize_bwd(a, xs):
    g = st.todense(xs[0])
    c = g.shape[-3]
    std = np.broadcast_to(np.asarray(_norm_vec(a.std, c), np.float32), (c,)).reshape(c, 1, 1)
    return ((g / std).astype(g.dtype),)


_NORM = Params(mean=Field("floats", (0.0, 0.0, 0.0, 0.0), doc="per-channel means"),
               std=Field("floats", (1.0, 1.0, 1.0, 1.0), doc="per-channel deviations"))
register(OpDef(
    "_backward_image_normalize", inputs=("ograd",), params=_NORM,
    dispatch=(Dispatch((DNS,), (DNS,), _normalize_bwd),),
    doc="Gradient of normalize: the output gradient divided by each channel's std."))
register(OpDef(
    "_image_normalize", params=_NORM, dispatch=_dense(_normalize),
    infer_shape=_normalize_shape,
    gradient=lambda node, og: [bw("_backward_image_normalize", [og[0]], node, "backward",
                                  **kept(node))],
    doc="""Normalize a tensor (C, H, W) or (N, C, H, W): ``(x - mean[c]) / std[c]``.

    Parameters
    ----------
    data : NDArray or Symbol
    mean, std : tuple of float (one value, or one per channel)
    """))


# ----------------------------------------------------------------------------- crop
def _crop_shape(attrs, ins, outs):
    if rules.known(ins[0]):
        s = tuple(ins[0])
        if len(s) not in (3, 4):
            raise ShapeError("Image Crop expects inputs of 3D (h, w, c) or 4D (n, h, w, c). "
                             f"But got {len(s)}")
        h, w = s[-3], s[-2]
        if attrs.x + attrs.width > w:
            raise ShapeError(f"x + width should not be greater than input width: x {attrs.x} "
                             f"+ width {attrs.width} > {w}")
        if attrs.y + attrs.height > h:
            raise ShapeError(f"y + height should not be greater than input height: y "
                             f"{attrs.y} + height {attrs.height} > {h}")
        rules.set_shape(outs, 0, s[:-3] + (attrs.height, attrs.width, s[-1]), "output")
    return ins, outs


def _crop_check(op, a):
    require(a.x >= 0 and a.y >= 0, op, f"x and y must be >= 0, got x={a.x}, y={a.y}")
    require(a.width > 0 and a.height > 0, op,
            f"width and height must be > 0, got width={a.width}, height={a.height}")


def _crop_bwd(a, xs):
    g, x = st.todense(xs[0]), xs[1]
    out = np.zeros(x.shape, dtype=g.dtype)
    out[..., a.y:a.y + a.height, a.x:a.x + a.width, :] = g
    return (out,)


_CROP = Checked(_crop_check, x=Field("int"), y=Field("int"), width=Field("int"),
                height=Field("int"))
register(OpDef(
    "_backward_image_crop", inputs=("ograd", "data"), params=_CROP,
    dispatch=(Dispatch((DNS, "*"), (DNS,), _crop_bwd),),
    infer_shape=rules.shape_of_input(1), infer_type=rules.type_of_input(0),
    doc="Gradient of crop: the output gradient placed in a zero image of the input's shape."))
register(OpDef(
    "_image_crop", params=_CROP,
    dispatch=_dense(lambda a, x: kimg.crop(x, a.x, a.y, a.width, a.height)),
    infer_shape=_crop_shape,
    gradient=lambda node, og: [bw("_backward_image_crop", [og[0], node.inputs[0]], node,
                                  "backward", **kept(node))],
    doc="""Crop an image (H, W, C) or batch (N, H, W, C) to the window of ``height`` rows
    from ``y`` and ``width`` columns from ``x``.

    Parameters
    ----------
    data : NDArray or Symbol
    x, y, width, height : int
    """))


# ----------------------------------------------------------------------------- resize
def _interp_check(op, a):
    require(a.interp in kimg.INTERP_NAMES, op,
            f"interp must be one of {sorted(kimg.INTERP_NAMES)} (OpenCV's nearest, bilinear, "
            f"bicubic, area, Lanczos-4), got {a.interp}")


def _resize_check(op, a):
    require(len(a.size) in (1, 2), op, f"size must be (width, height) or (size), got "
                                       f"{a.size}")
    require(a.size[0] > 0, op, f"Input width should be greater than 0, but got {a.size[0]}")
    if len(a.size) == 2:
        require(a.size[1] > 0, op, f"Input height should be greater than 0, but got "
                                   f"{a.size[1]}")
    _interp_check(op, a)


def _resize_shape(attrs, ins, outs):
    if rules.known(ins[0]):
        s = tuple(ins[0])
        if len(s) not in (3, 4):
            raise ShapeError(f"Input image dimension should be 3 or 4 but got {len(s)}")
        h, w = kimg.resize_shape(s[-3], s[-2], tuple(attrs.size), attrs.keep_ratio)
        rules.set_shape(outs, 0, s[:-3] + (h, w, s[-1]), "output")
    return ins, outs


def _resize(a, x):
    h, w = kimg.resize_shape(x.shape[-3], x.shape[-2], tuple(a.size), a.keep_ratio)
    return kimg.resize(x, w, h, a.interp)


_RESIZE = Checked(_resize_check, size=Field("shape", (), doc="(width, height) or (size)"),
                  keep_ratio=Field("bool", False), interp=Field("int", 1))
register(OpDef(
    "_image_resize", params=_RESIZE, dispatch=_dense(_resize), infer_shape=_resize_shape,
    doc="""Resize an image (H, W, C) or batch (N, H, W, C) as OpenCV does.

    Parameters
    ----------
    data : NDArray or Symbol
    size : tuple of int
        (width, height), or one int: both sides, or the short side with ``keep_ratio``.
    keep_ratio : bool, default False
    interp : int, default 1
        0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos-4 (OpenCV's codes).
    """))


def _cv_shape(op_name, out_hw):
    """Shape rule of the OpenCV-style ops on (H, W[, C]) images: ``out_hw(attrs, h, w)``."""
    def rule(attrs, ins, outs):
        if rules.known(ins[0]):
            s = tuple(ins[0])
            if len(s) not in (2, 3):
                raise ShapeError(f"{op_name}: expected an image (H, W) or (H, W, C), got "
                                 f"shape {list(s)}")
            rules.set_shape(outs, 0, out_hw(attrs, s[0], s[1]) + s[2:], "output")
        return ins, outs
    return rule


def _cv_resize(a, x):
    img = x[:, :, None] if x.ndim == 2 else x
    out = kimg.resize(img, a.w, a.h, a.interp)
    return out[:, :, 0] if x.ndim == 2 else out


def _cv_check(op, a):
    require(a.w > 0 and a.h > 0, op, f"w and h must be > 0, got w={a.w}, h={a.h}")
    _interp_check(op, a)


register(OpDef(
    "_cvimresize", inputs=("src",),
    params=Checked(_cv_check, w=Field("int"), h=Field("int"), interp=Field("int", 1)),
    dispatch=_dense(_cv_resize),
    infer_shape=_cv_shape("_cvimresize", lambda a, h, w: (a.h, a.w)),
    doc="""Resize an image (H, W[, C]) to (h, w) with OpenCV's rules (``mx.image.imresize``).

    Parameters
    ----------
    src : NDArray
    w, h : int
    interp : int, default 1
    """))


# ----------------------------------------------------------------------------- flips
def _flip_op(name, axis, what):
    register(OpDef(
        f"_backward_image_{name}", inputs=("ograd",),
        dispatch=_dense(lambda a, x: kimg.flip(x, axis)),
        doc=f"Gradient of {name}: the output gradient flipped back."))
    register(OpDef(
        f"_image_{name}", dispatch=_dense(lambda a, x: kimg.flip(x, axis)),
        infer_shape=_image_shape(),
        gradient=lambda node, og: [bw(f"_backward_image_{name}", [og[0]], node, "backward")],
        doc=f"""Flip an image (H, W, C) or batch (N, H, W, C) {what}.

    Parameters
    ----------
    data : NDArray or Symbol
    """))


_flip_op("flip_left_right", -2, "left to right")
_flip_op("flip_top_bottom", -3, "top to bottom")


def _random_flip(axis):
    def kernel(a, x):
        return kimg.flip(x, axis) if _rng.rng().random() < 0.5 else x.copy()
    return kernel


for _name, _axis, _what in (("random_flip_left_right", -2, "left to right"),
                            ("random_flip_top_bottom", -3, "top to bottom")):
    register(OpDef(
        f"_image_{_name}", dispatch=_dense(_random_flip(_axis)), infer_shape=_image_shape(),
        random=True,
        doc=f"""Flip an image (H, W, C) or batch {_what} with probability 0.5.

    Parameters
    ----------
    data : NDArray or Symbol
    """))


# ----------------------------------------------------------------------------- colour
def _factor_check(op, a):
    require(a.min_factor <= a.max_factor, op,
            f"min_factor {a.min_factor} must not exceed max_factor {a.max_factor}")


_FACTORS = Checked(_factor_check, min_factor=Field("float", doc="minimum factor"),
                   max_factor=Field("float", doc="maximum factor"))
_COLOUR_SHAPE = _image_shape((3,), (1, 3), _ONE_MSG)


def _draw(a):
    return float(_rng.rng().uniform(a.min_factor, a.max_factor))


for _name, _fn, _what in (
        ("random_brightness", kimg.brightness, "multiply by a factor"),
        ("random_contrast", kimg.contrast, "blend with the mean luminance by a factor"),
        ("random_saturation", kimg.saturation, "blend with each pixel's luminance by a factor"),
        ("random_hue", kimg.hue, "rotate the hue by factor * 360 degrees")):
    register(OpDef(
        f"_image_{_name}", params=_FACTORS, random=True, infer_shape=_COLOUR_SHAPE,
        dispatch=_dense(lambda a, x, _fn=_fn: _fn(x, _draw(a))),
        doc=f"""Randomly jitter an image (H, W, C): {_what} drawn uniformly from
    [min_factor, max_factor] (integer images are clipped and truncated, as in MXNet).

    Parameters
    ----------
    data : NDArray or Symbol
    min_factor, max_factor : float
    """))


def _jitter(a, x):
    """MXNet's order: factors drawn (1 +/- for brightness, contrast, saturation; +/- for
    hue), then the non-zero adjustments applied in a random order, each storing its result."""
    rng = _rng.rng()
    amounts = [a.brightness, a.contrast, a.saturation, a.hue]
    draws = [float(rng.uniform(-v, v)) if v > 0 else 0.0 for v in amounts]
    fns = [kimg.brightness, kimg.contrast, kimg.saturation, kimg.hue]
    out = x.copy()
    for i in rng.permutation(4):
        if draws[i] != 0:
            out = fns[i](out, draws[i] + (1.0 if i < 3 else 0.0))
    return out


def _jitter_check(op, a):
    for k in ("brightness", "contrast", "saturation", "hue"):
        require(a[k] >= 0, op, f"{k} must be >= 0, got {a[k]}")


register(OpDef(
    "_image_random_color_jitter", random=True, infer_shape=_COLOUR_SHAPE,
    params=Checked(_jitter_check, brightness=Field("float"), contrast=Field("float"),
                   saturation=Field("float"), hue=Field("float")),
    dispatch=_dense(_jitter),
    doc="""Randomly jitter brightness, contrast, saturation and hue of an image (H, W, C), in
    a random order.

    Parameters
    ----------
    data : NDArray or Symbol
    brightness, contrast, saturation, hue : float
    """))


def _lighting_shape(attrs, ins, outs):
    rules.same_shape(attrs, ins, outs)
    if rules.known(ins[0]):
        _ndim_check(ins[0], (3,), _ONE_MSG)
        if ins[0][-1] != 3:
            raise ShapeError(f"lighting: PCA lighting needs RGB images (3 channels), got "
                             f"shape {list(ins[0])}")
    return ins, outs


def _adjust_lighting_check(op, a):
    require(len(a.alpha) == 3, op, f"alpha must hold 3 values (R, G, B), got {a.alpha}")


register(OpDef(
    "_image_adjust_lighting", infer_shape=_lighting_shape,
    params=Checked(_adjust_lighting_check, alpha=Field("floats")),
    dispatch=_dense(lambda a, x: kimg.lighting(x, a.alpha)),
    doc="""Add AlexNet's PCA lighting noise with the given alphas to an RGB image (H, W, 3).

    Parameters
    ----------
    data : NDArray or Symbol
    alpha : tuple of 3 float
    """))
register(OpDef(
    "_image_random_lighting", infer_shape=_lighting_shape, random=True,
    params=Params(alpha_std=Field("float", 0.05)),
    dispatch=_dense(lambda a, x: kimg.lighting(
        x, _rng.rng().normal(0, a.alpha_std, size=3) if a.alpha_std else (0.0, 0.0, 0.0))),
    doc="""Add AlexNet's PCA lighting noise, alphas drawn from N(0, alpha_std), to an RGB
    image (H, W, 3).

    Parameters
    ----------
    data : NDArray or Symbol
    alpha_std : float, default 0.05
    """))


# ----------------------------------------------------------------------------- borders
def _border(a, x):
    out = kimg.pad(x, a.top, a.bot, a.left, a.right, a.type, a.value)
    values = a["values"]  # not a.values: Attrs is a dict
    if a.type == 0 and values:
        inside = np.zeros(out.shape[:2], bool)
        inside[a.top:a.top + x.shape[0], a.left:a.left + x.shape[1]] = True
        chans = out.shape[2] if out.ndim == 3 else 1
        fill = np.broadcast_to(np.asarray(values[:chans], np.float64), (chans,))
        fill = kimg.saturate(fill, out.dtype)
        out[~inside] = fill if out.ndim == 3 else fill[0]
    return out


def _border_check(op, a):
    require(min(a.top, a.bot, a.left, a.right) >= 0, op,
            f"border sizes must be >= 0, got top={a.top} bot={a.bot} left={a.left} "
            f"right={a.right}")
    require(a.type in (0, 1, 2, 3, 4), op,
            f"type must be an OpenCV border type: 0 constant, 1 replicate, 2 reflect, 3 wrap, "
            f"4 reflect-101; got {a.type}")


register(OpDef(
    "_cvcopyMakeBorder", inputs=("src",),
    infer_shape=_cv_shape("_cvcopyMakeBorder",
                          lambda a, h, w: (h + a.top + a.bot, w + a.left + a.right)),
    params=Checked(_border_check, top=Field("int"), bot=Field("int"), left=Field("int"),
                   right=Field("int"), type=Field("int", 0), value=Field("float", 0.0),
                   values=Field("floats", ())),
    dispatch=_dense(_border),
    doc="""Pad an image (H, W[, C]) with a border as OpenCV's copyMakeBorder
    (``mx.image.copyMakeBorder``).

    Parameters
    ----------
    src : NDArray
    top, bot, left, right : int
    type : int, default 0
        0 constant, 1 replicate, 2 reflect, 3 wrap, 4 reflect-101.
    value : float, default 0
        The constant of type 0.
    values : tuple of float, optional
        Per-channel constants of type 0 (they take precedence over ``value``).
    """))
