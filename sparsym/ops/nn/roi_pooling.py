"""ROIPooling (Fast R-CNN's max pooling over ROI bins), _contrib_PSROIPooling (R-FCN's
position-sensitive average pooling) and _contrib_DeformablePSROIPooling (its deformable
form): gradients for the data (and the offsets), none for the rois, as MXNet. Kernels in
kernels/roi_pool.py."""
from __future__ import annotations

import numpy as np

from ...kernels import roi_pool as kpool
from ..core import rules
from ..core.grad import bw, kept, multi_bw
from ..core.helpers import DNS, Checked, require
from ..core.params import Attrs, Field
from ..core.registry import Dispatch, OpDef, register


def _rois_shape(rois):
    if rois is not None and (len(rois) != 2 or rois[1] not in (None, 5)):
        raise rules.Conflict("shape", 1, "input", "(R, 5) rois [batch, x1, y1, x2, y2]", rois)


def _data_shape(data):
    if data is not None and len(data) != 4:
        raise rules.Conflict("shape", 0, "input", "4-D data (N, C, H, W)", data)


def _data_grad(bname):
    def grad(node, og):
        return [bw(bname, [og[0]] + list(node.inputs), node, "backward", **kept(node)), None]
    return grad


# ----------------------------------------------------------------------------- ROIPooling
def _roi_check(op, a):
    require(len(a.pooled_size) == 2 and all(p > 0 for p in a.pooled_size), op,
            f"pooled_size must be 2 positive ints (PH, PW), got {a.pooled_size}")
    require(a.spatial_scale > 0, op, f"spatial_scale must be positive, got {a.spatial_scale}")


_ROI = Checked(_roi_check, pooled_size=Field("shape", doc="output bins (PH, PW)"),
               spatial_scale=Field("float", doc="ROI coordinates to feature-map scale"))


def _roi_shape(a, ins, outs):
    data, rois = ins
    _data_shape(data)
    _rois_shape(rois)
    r = None if rois is None else rois[0]
    c = None if data is None else data[1]
    if data is not None or rois is not None:
        rules.set_shape(outs, 0, (r, c) + tuple(a.pooled_size), "output")
    return ins, outs


register(OpDef(
    "ROIPooling", params=_ROI, inputs=("data", "rois"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), lambda a, xs: (
        kpool.roi_pool_forward(xs[0], xs[1], a.pooled_size, a.spatial_scale),)),),
    infer_shape=_roi_shape, infer_type=rules.same_type,
    gradient=_data_grad("_backward_ROIPooling"),
    doc="""Region-of-interest max pooling (Fast R-CNN): each ROI, its corners scaled by
    ``spatial_scale`` and rounded to pixels, is cut into (PH, PW) bins of whole pixels and
    each bin gives its maximum (0 for an empty bin).

    Parameters
    ----------
    data : Symbol or NDArray
        (N, C, H, W) feature map.
    rois : Symbol or NDArray
        (R, 5) rows [batch index, x1, y1, x2, y2] in image coordinates.
    pooled_size : tuple of 2 int, required
    spatial_scale : float, required

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.arange(16).reshape((1, 1, 4, 4))
    >>> rois = mx.nd.array([[0, 0, 0, 3, 3]])
    >>> mx.nd.ROIPooling(x, rois, pooled_size=(2, 2), spatial_scale=1).asnumpy().ravel()
    array([ 5.,  7., 13., 15.], dtype=float32)
    """))
register(OpDef(
    "_backward_ROIPooling", params=_ROI, inputs=("ograd", "data", "rois"),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), lambda a, xs: (
        kpool.roi_pool_backward(xs[0], xs[1], xs[2], a.pooled_size, a.spatial_scale),)),),
    infer_shape=rules.grads_like_inputs(1), infer_type=rules.grads_like_inputs_type(1)))


# ----------------------------------------------------------------------------- PSROIPooling
def _ps_check(op, a):
    require(a.spatial_scale > 0, op, f"spatial_scale must be positive, got {a.spatial_scale}")
    require(a.output_dim > 0, op, f"output_dim must be positive, got {a.output_dim}")
    require(a.pooled_size > 0, op, f"pooled_size must be positive, got {a.pooled_size}")
    require(a.group_size >= 0, op, f"group_size must be non-negative, got {a.group_size}")


_PS = Checked(_ps_check,
              spatial_scale=Field("float", doc="ROI coordinates to feature-map scale"),
              output_dim=Field("int", doc="output channels"),
              pooled_size=Field("int", doc="bins per side"),
              group_size=Field("int", 0, doc="position-sensitive grid per side "
                                             "(0: pooled_size)"))


def _group(a):
    return a.group_size if a.group_size > 0 else a.pooled_size


def _ps_shape(a, ins, outs):
    data, rois = ins
    _data_shape(data)
    _rois_shape(rois)
    g = _group(a)
    if data is not None and data[1] is not None and data[1] != a.output_dim * g * g:
        raise rules.Conflict("shape", 0, "input", f"output_dim * group_size**2 = "
                             f"{a.output_dim * g * g} channels", data)
    r = None if rois is None else rois[0]
    rules.set_shape(outs, 0, (r, a.output_dim, a.pooled_size, a.pooled_size), "output")
    return ins, outs


def _ps_args(a):
    return a.spatial_scale, a.output_dim, a.pooled_size, _group(a)


register(OpDef(
    "_contrib_PSROIPooling", params=_PS, inputs=("data", "rois"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), lambda a, xs: (
        kpool.psroi_pool_forward(xs[0], xs[1], *_ps_args(a)),)),),
    infer_shape=_ps_shape, infer_type=rules.same_type,
    gradient=_data_grad("_backward_PSROIPooling"),
    doc="""Position-sensitive ROI average pooling (R-FCN): bin (i, j) of output channel k
    averages input channel (k*G + gi)*G + gj over the bin's whole pixels, (gi, gj) being the
    bin's cell on the G x G grid (G = group_size, default pooled_size).

    Parameters
    ----------
    data : Symbol or NDArray
        (N, output_dim * G * G, H, W) score maps.
    rois : Symbol or NDArray
        (R, 5) rows [batch index, x1, y1, x2, y2] in image coordinates.
    spatial_scale : float, required
    output_dim : int, required
    pooled_size : int, required
    group_size : int, default 0

    Examples
    --------
    >>> import sparsym as mx
    >>> x = mx.nd.ones((1, 8, 4, 4))
    >>> rois = mx.nd.array([[0, 0, 0, 3, 3]])
    >>> mx.nd.contrib.PSROIPooling(x, rois, spatial_scale=1, output_dim=2, pooled_size=2).shape
    (1, 2, 2, 2)
    """))
register(OpDef(
    "_backward_PSROIPooling", params=_PS, inputs=("ograd", "data", "rois"),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), lambda a, xs: (
        kpool.psroi_pool_backward(xs[0], xs[1], xs[2], *_ps_args(a)),)),),
    infer_shape=rules.grads_like_inputs(1), infer_type=rules.grads_like_inputs_type(1)))


# ----------------------------------------------------------------------------- Deformable
def _dps_check(op, a):
    _ps_check(op, a)
    require(a.group_size > 0, op, f"group_size must be positive, got {a.group_size}")
    require(a.part_size >= 0 and a.sample_per_part > 0, op,
            f"part_size must be >= 0 and sample_per_part > 0, got {a.part_size}, "
            f"{a.sample_per_part}")


_DPS = Checked(_dps_check,
               spatial_scale=Field("float", doc="ROI coordinates to feature-map scale"),
               output_dim=Field("int", doc="output channels"),
               group_size=Field("int", doc="position-sensitive grid per side"),
               pooled_size=Field("int", doc="bins per side"),
               part_size=Field("int", 0, doc="offset grid per side (0: pooled_size)"),
               sample_per_part=Field("int", 1, doc="bilinear samples per bin and axis"),
               trans_std=Field("float", 0.0, doc="scale of the offsets"),
               no_trans=Field("bool", False, doc="no offsets input (plain bilinear pooling)"))


def _dps_inputs(a):
    return ("data", "rois") if a.no_trans else ("data", "rois", "trans")


def _dps_attrs(a):
    return Attrs(a, part_size=a.part_size or a.pooled_size)


def _dps_shape(a, ins, outs):
    data, rois = ins[0], ins[1]
    _data_shape(data)
    _rois_shape(rois)
    g = a.group_size
    if data is not None and data[1] is not None and data[1] != a.output_dim * g * g:
        raise rules.Conflict("shape", 0, "input", f"output_dim * group_size**2 = "
                             f"{a.output_dim * g * g} channels", data)
    r = None if rois is None else rois[0]
    if not a.no_trans and ins[2] is not None and ins[2][1] is not None:
        n_cls = ins[2][1] // 2
        if ins[2][1] % 2 or not n_cls or a.output_dim % n_cls:
            raise rules.Conflict("shape", 2, "input", "trans of 2 * classes channels, "
                                 f"output_dim={a.output_dim} a multiple of the classes",
                                 ins[2])
    rules.set_shape(outs, 0, (r, a.output_dim, a.pooled_size, a.pooled_size), "output")
    return ins, outs


def _dps_fwd(a, xs):
    trans = None if a.no_trans else xs[2]
    return (kpool.deformable_psroi_forward(xs[0], xs[1], trans, _dps_attrs(a)),)


def _dps_bwd(a, xs):
    trans = None if a.no_trans else xs[3]
    dd, dt = kpool.deformable_psroi_backward(xs[0], xs[1], xs[2], trans, _dps_attrs(a))
    return (dd, np.zeros_like(xs[2])) + (() if a.no_trans else (dt,))


def _dps_grad(node, og):
    n = len(node.inputs)
    g = multi_bw("_backward__contrib_DeformablePSROIPooling", [og[0]] + list(node.inputs),
                 node, "backward", n, **kept(node))
    return [g[0], None] + list(g[2:])


register(OpDef(
    "_contrib_DeformablePSROIPooling", params=_DPS, inputs=_dps_inputs,
    dispatch=(Dispatch((DNS, DNS, "..."), (DNS,), _dps_fwd),), infer_shape=_dps_shape,
    infer_type=rules.same_type, gradient=_dps_grad,
    doc="""Deformable position-sensitive ROI pooling (Deformable ConvNets): as PSROIPooling,
    but each bin averages ``sample_per_part``**2 bilinear samples, the bin shifted by the
    learned offsets ``trans`` (R, 2 * classes, part_size, part_size) times ``trans_std`` and
    the ROI's size. Gradients for the data and the offsets (rois get none).

    Parameters
    ----------
    data : Symbol or NDArray
        (N, output_dim * group_size**2, H, W) score maps.
    rois : Symbol or NDArray
        (R, 5) rows [batch index, x1, y1, x2, y2] in image coordinates.
    trans : Symbol or NDArray (absent with ``no_trans``)
    spatial_scale : float, required
    output_dim, group_size, pooled_size : int, required
    part_size : int, default 0 (pooled_size)
    sample_per_part : int, default 1
    trans_std : float, default 0
    no_trans : bool, default False
    """))
register(OpDef(
    "_backward__contrib_DeformablePSROIPooling", params=_DPS,
    inputs=lambda a: ("ograd",) + _dps_inputs(a), num_outputs=lambda a: len(_dps_inputs(a)),
    dispatch=(Dispatch((DNS, "..."), (DNS,), _dps_bwd),), infer_shape=rules.grads_like_inputs(1),
    infer_type=rules.grads_like_inputs_type(1)))
