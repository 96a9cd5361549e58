"""Faster R-CNN's region proposal ops: _contrib_Proposal (one image) and
_contrib_MultiProposal (a batch), MXNet 1.9.1's semantics (kernels/proposal.py). Dense-only;
their gradients are zero, as in MXNet."""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...kernels import proposal as kprop
from ..core import rules
from ..core.grad import no_grad
from ..core.helpers import DNS, Checked, require
from ..core.params import Field
from ..core.registry import Dispatch, OpDef, register


def _check(op, a):
    require(a.feature_stride > 0, op, f"feature_stride must be positive, got "
                                      f"{a.feature_stride}")
    require(a.rpn_post_nms_top_n > 0, op, "rpn_post_nms_top_n must be positive, got "
                                          f"{a.rpn_post_nms_top_n}")
    require(len(a.scales) > 0 and len(a.ratios) > 0, op, "scales and ratios must not be empty")


_PARAMS = Checked(
    _check,
    rpn_pre_nms_top_n=Field("int", 6000, doc="boxes kept before NMS (<= 0: all)"),
    rpn_post_nms_top_n=Field("int", 300, doc="boxes output after NMS"),
    threshold=Field("float", 0.7, doc="NMS IoU threshold"),
    rpn_min_size=Field("int", 16, doc="smaller boxes (times the image scale) are demoted"),
    scales=Field("floats", (4.0, 8.0, 16.0, 32.0), doc="anchor scales"),
    ratios=Field("floats", (0.5, 1.0, 2.0), doc="anchor aspect ratios"),
    feature_stride=Field("int", 16, doc="image pixels per feature-map cell"),
    output_score=Field("bool", False, doc="also output the scores (a visible 2nd output)"),
    iou_loss=Field("bool", False, doc="deltas are plain corner offsets"))


def _shape(multi):
    def rule(a, ins, outs):
        cls, bbox, info = ins
        na = len(a.scales) * len(a.ratios)
        if cls is not None:
            if len(cls) != 4 or cls[1] not in (None, 2 * na):
                raise rules.Conflict("shape", 0, "input", f"(N, {2 * na}, H, W) (2 per anchor)",
                                     cls)
            n, _, h, w = cls
            if not multi and n not in (None, 1):
                raise rules.Conflict("shape", 0, "input", "batch size 1 (use MultiProposal)",
                                     cls)
            rules.set_shape(ins, 1, (n, 4 * na, h, w))
            rules.set_shape(ins, 2, (n, 3))
            rows = a.rpn_post_nms_top_n * (n if multi else 1) if n is not None else None
            rules.set_shape(outs, 0, (rows, 5), "output")
            rules.set_shape(outs, 1, (rows, 1), "output")
        return ins, outs
    return rule


def _forward(a, xs):
    cls, bbox, info = (st.todense(x) for x in xs)
    na = len(a.scales) * len(a.ratios)
    anchors = kprop.base_anchors(a.feature_stride, a.ratios, a.scales)
    rois, scores = [], []
    for b in range(cls.shape[0]):
        boxes, sc = kprop.propose(cls[b, na:], bbox[b], info[b], anchors, a.feature_stride,
                                  a.rpn_pre_nms_top_n, a.rpn_post_nms_top_n, a.threshold,
                                  a.rpn_min_size, a.iou_loss)
        rois.append(np.concatenate([np.full((len(boxes), 1), float(b)), boxes], axis=1))
        scores.append(sc.reshape(-1, 1))
    return (np.concatenate(rois).astype(cls.dtype), np.concatenate(scores).astype(cls.dtype))


for _name, _multi in (("_contrib_Proposal", False), ("_contrib_MultiProposal", True)):
    register(OpDef(
        _name, params=_PARAMS, inputs=("cls_prob", "bbox_pred", "im_info"), num_outputs=2,
        output_names=("output", "score"),
        num_visible_outputs=lambda a: 2 if a.output_score else 1,
        dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _forward),), infer_shape=_shape(_multi),
        infer_type=rules.first_input_type, gradient=no_grad,
        doc=f"""Region proposals from RPN class probabilities (N, 2A, H, W), box deltas
    (N, 4A, H, W) and image info (N, 3: height, width, scale), A = len(scales) *
    len(ratios): rois ({'N*' if _multi else ''}rpn_post_nms_top_n, 5) rows [batch index,
    x1, y1, x2, y2], and with ``output_score`` their scores.{'' if _multi else '''
    One image only (MultiProposal takes a batch).'''}

    Parameters
    ----------
    cls_prob, bbox_pred, im_info : NDArray or Symbol
    rpn_pre_nms_top_n, rpn_post_nms_top_n, rpn_min_size, feature_stride : int
    threshold : float
    scales, ratios : tuple of float
    output_score, iou_loss : bool
    """))
