"""_contrib_ROIAlign: bilinear region-of-interest pooling (Mask R-CNN), with the
position-sensitive and ``aligned`` (half-pixel) variants; gradient for the data only, as
MXNet (rois get none). _contrib_RROIAlign: the same over rotated boxes, forward only (MXNet
registers no gradient for it). Kernels in kernels/roi.py."""
from __future__ import annotations

from ... import storage as st
from ...kernels import roi as kroi
from ..core import rules
from ..core.grad import bw
from ..core.helpers import DNS, Checked, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register


def _check(op, a):
    require(len(a.pooled_size) == 2 and all(p > 0 for p in a.pooled_size), op,
            f"pooled_size must be 2 positive ints (PH, PW), got {a.pooled_size}")
    require(a.spatial_scale > 0, op, f"spatial_scale must be positive, got {a.spatial_scale}")


_PARAMS = Checked(
    _check, pooled_size=Field("shape", doc="output bins (PH, PW)"),
    spatial_scale=Field("float", doc="ROI coordinates to feature-map scale"),
    sample_ratio=Field("int", -1, doc="samples per bin and axis (<= 0: ceil(roi / bins))"),
    position_sensitive=Field("bool", False, doc="bin (ph, pw) of channel c reads channel "
                                                "c*PH*PW + ph*PW + pw"),
    aligned=Field("bool", False, doc="shift the ROI by half a pixel (Detectron2's ROIAlignV2)"))


def _shape(a, ins, outs):
    data, rois = ins
    if rois is not None and (len(rois) != 2 or rois[1] not in (None, 5)):
        raise rules.Conflict("shape", 1, "input", "(R, 5) rois [batch, x1, y1, x2, y2]", rois)
    if data is None:
        return ins, outs
    if len(data) != 4:
        raise rules.Conflict("shape", 0, "input", "4-D data (N, C, H, W)", data)
    ph, pw = a.pooled_size
    c = data[1]
    if a.position_sensitive and c is not None:
        if c % (ph * pw):
            raise rules.Conflict("shape", 0, "input", f"channels divisible by PH*PW={ph * pw} "
                                 "(position_sensitive)", data)
        c = c // (ph * pw)
    r = rois[0] if rois is not None else None
    rules.set_shape(outs, 0, (r, c, ph, pw), "output")
    return ins, outs


def _forward(a, xs):
    data, rois = (st.todense(x) for x in xs)
    return (kroi.roi_align_forward(a, data, rois),)


def _backward(a, xs):
    dy, data, rois = (st.todense(x) for x in xs)
    return (kroi.roi_align_backward(a, dy, data.shape, rois, data.dtype),)


def _gradient(node, og):
    return [bw("_backward_ROIAlign", [og[0]] + list(node.inputs), node, "backward",
               **dict(node.params)), None]




register(OpDef(
    "_contrib_ROIAlign", params=_PARAMS, inputs=("data", "rois"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _forward),), infer_shape=_shape,
    infer_type=rules.first_input_type, gradient=_gradient,
    doc="""Bilinear ROI pooling: each of the (PH, PW) bins of a ROI averages bilinear
    samples of ``data`` on a regular grid.

    Parameters
    ----------
    data : NDArray or Symbol
        (N, C, H, W) feature map.
    rois : NDArray or Symbol
        (R, 5) rows [batch index, x1, y1, x2, y2] in image coordinates.
    pooled_size : tuple of 2 ints
    spatial_scale : float
    sample_ratio : int
    position_sensitive, aligned : bool
    """))
register(OpDef(
    "_backward_ROIAlign", params=_PARAMS, inputs=("ograd", "data", "rois"),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _backward),),
    infer_shape=rules.grads_like_inputs(1),
    infer_type=rules.grads_like_inputs_type(1)))


_RPARAMS = Checked(
    _check, pooled_size=Field("shape", doc="output bins (PH, PW)"),
    spatial_scale=Field("float", doc="ROI coordinates to feature-map scale"),
    sampling_ratio=Field("int", -1, doc="samples per bin and axis (<= 0: ceil(roi / bins))"))


def _rshape(a, ins, outs):
    data, rois = ins
    if rois is not None and (len(rois) != 2 or rois[1] not in (None, 6)):
        raise rules.Conflict("shape", 1, "input", "(R, 6) rois [batch, cx, cy, w, h, angle]",
                             rois)
    if data is not None:
        if len(data) != 4:
            raise rules.Conflict("shape", 0, "input", "4-D data (N, C, H, W)", data)
        r = rois[0] if rois is not None else None
        rules.set_shape(outs, 0, (r, data[1]) + tuple(a.pooled_size), "output")
    return ins, outs


def _rforward(a, xs):
    data, rois = (st.todense(x) for x in xs)
    return (kroi.rroi_align_forward(data, rois, a.pooled_size, a.spatial_scale,
                                    a.sampling_ratio),)


register(OpDef(
    "_contrib_RROIAlign", params=_RPARAMS, inputs=("data", "rois"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _rforward),), infer_shape=_rshape,
    infer_type=rules.first_input_type,
    doc="""Rotated ROIAlign: each bin of a rotated box averages bilinear samples of
    ``data`` on a grid turned by the box's angle (degrees, counter-clockwise).

    Parameters
    ----------
    data : NDArray or Symbol
        (N, C, H, W) feature map.
    rois : NDArray or Symbol
        (R, 6) rows [batch index, center x, center y, width, height, angle].
    pooled_size : tuple of 2 ints
    spatial_scale : float
    sampling_ratio : int
    """))
