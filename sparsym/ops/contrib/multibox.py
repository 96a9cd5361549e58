"""SSD's contrib operators: MultiBoxPrior (anchors), MultiBoxTarget (training targets) and
MultiBoxDetection (decoded, suppressed detections), MXNet 1.9.1's semantics (probed).

Dense-only; as in MXNet their gradients are zero.
"""
from __future__ import annotations

from ... import storage as st
from ...base import ShapeError
from ...kernels import detection as kdet
from ..core import rules
from ..core.grad import no_grad
from ..core.helpers import DNS
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register


def _check(cond, op, msg):
    if not cond:
        raise ShapeError(f"operator {op}: {msg}")


_VAR = Field("floats", (0.1, 0.1, 0.2, 0.2), doc="variances of the box regression targets")

# ----------------------------------------------------------------------------- prior
_PRIOR = Params(sizes=Field("floats", (1.0,), doc="anchor sizes, fractions of the image"),
                ratios=Field("floats", (1.0,), doc="anchor width/height ratios"),
                clip=Field("bool", False, doc="clip the boxes to [0, 1]"),
                steps=Field("floats", (-1.0, -1.0), doc="(y, x) step; -1: 1 / size"),
                offsets=Field("floats", (0.5, 0.5), doc="(y, x) offset of the centers"))


def _n_anchors(a):
    return len(a.sizes) + len(a.ratios) - 1


def _prior_shape(attrs, ins, outs):
    s = ins[0]
    if s is not None:
        _check(len(s) == 4, "MultiBoxPrior", f"data must be 4-D (N, C, H, W), got "
                                             f"{rules.fmt_shape(s)}")
        rules.set_shape(outs, 0, (1, s[2] * s[3] * _n_anchors(attrs), 4), "output")
    return ins, outs


def _prior_kernel(a, xs):
    x = xs[0]
    _check(len(a.steps) == 2 and len(a.offsets) == 2, "MultiBoxPrior",
           "steps and offsets take 2 values (y, x)")
    out = kdet.multibox_prior(x.shape[2], x.shape[3], a.sizes, a.ratios, a.clip, a.steps,
                              a.offsets, dtype=x.dtype)
    return (out,)


register(OpDef(
    "_contrib_MultiBoxPrior", params=_PRIOR, dispatch=(Dispatch(("*",), (DNS,), _prior_kernel),),
    infer_shape=_prior_shape, infer_type=rules.type_of_input(0, 1), gradient=no_grad,
    doc="""Anchor boxes for every pixel of a feature map (N, C, H, W): the output
    (1, H*W*A, 4) holds corner boxes, A = len(sizes) + len(ratios) - 1 per pixel (every
    size at the first ratio, then the first size at the other ratios).

    Parameters
    ----------
    data : NDArray or Symbol
    sizes, ratios : tuple of float
    clip : bool
    steps, offsets : tuple of 2 floats
    """))


# ----------------------------------------------------------------------------- target
_TARGET = Params(
    overlap_threshold=Field("float", 0.5, doc="IoU above which an anchor is positive"),
    ignore_label=Field("float", -1.0, doc="class target of anchors left out"),
    negative_mining_ratio=Field("float", -1.0, doc="negatives per positive (-1: off)"),
    negative_mining_thresh=Field("float", 0.5, doc="IoU below which anchors may be negatives"),
    minimum_negative_samples=Field("int", 0, doc="at least this many negatives"),
    variances=_VAR)


def _target_shape(attrs, ins, outs):
    anchor, label, cls = ins
    if anchor is not None:
        _check(len(anchor) == 3 and anchor[-1] == 4, "MultiBoxTarget",
               f"anchor must have shape (1, N, 4), got {rules.fmt_shape(anchor)}")
    if label is not None:
        _check(len(label) == 3 and label[-1] >= 5, "MultiBoxTarget",
               f"label must have shape (B, M, 5+), got {rules.fmt_shape(label)}")
    if anchor is not None and label is not None:
        n, b = anchor[1], label[0]
        if cls is not None:
            _check(len(cls) == 3 and cls[0] == b and cls[2] == n, "MultiBoxTarget",
                   f"cls_pred must have shape ({b}, classes, {n}), got {rules.fmt_shape(cls)}")
        rules.set_shape(outs, 0, (b, n * 4), "output")
        rules.set_shape(outs, 1, (b, n * 4), "output")
        rules.set_shape(outs, 2, (b, n), "output")
    return ins, outs


def _target_kernel(a, xs):
    anchor, label, cls = (st.todense(x) for x in xs)
    outs = kdet.multibox_target(anchor, label, cls, a.overlap_threshold, a.ignore_label,
                                a.negative_mining_ratio, a.negative_mining_thresh,
                                a.minimum_negative_samples, a.variances)
    return tuple(o.astype(anchor.dtype) for o in outs)


register(OpDef(
    "_contrib_MultiBoxTarget", params=_TARGET, inputs=("anchor", "label", "cls_pred"),
    num_outputs=3, output_names=("loc_target", "loc_mask", "cls_target"),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _target_kernel),), infer_shape=_target_shape,
    infer_type=rules.type_of_input(0, 3), gradient=no_grad,
    doc="""SSD training targets from anchors (1, N, 4), labels (B, M, 5: class, corner
    box; class -1 ends the list) and class predictions (B, classes, N).

    Returns loc_target and loc_mask (B, N*4) and cls_target (B, N): the matched class + 1,
    0 for negatives and ``ignore_label`` for anchors left out by negative mining.

    Parameters
    ----------
    anchor, label, cls_pred : NDArray or Symbol
    overlap_threshold, ignore_label, negative_mining_ratio, negative_mining_thresh : float
    minimum_negative_samples : int
    variances : tuple of 4 floats
    """))


# ----------------------------------------------------------------------------- detection
_DET = Params(clip=Field("bool", True, doc="clip the boxes to [0, 1]"),
              threshold=Field("float", 0.01, doc="lowest score kept"),
              background_id=Field("int", 0, doc="class index of the background"),
              nms_threshold=Field("float", 0.5, doc="IoU from which boxes are suppressed"),
              force_suppress=Field("bool", False, doc="suppress across classes too"),
              variances=_VAR,
              nms_topk=Field("int", -1, doc="keep the nms_topk best boxes (-1: all)"))


def _det_shape(attrs, ins, outs):
    cls, loc, anchor = ins
    if cls is not None:
        _check(len(cls) == 3, "MultiBoxDetection",
               f"cls_prob must have shape (B, classes, N), got {rules.fmt_shape(cls)}")
        if loc is not None:
            _check(tuple(loc) == (cls[0], cls[2] * 4), "MultiBoxDetection",
                   f"loc_pred must have shape ({cls[0]}, {cls[2] * 4}), got "
                   f"{rules.fmt_shape(loc)}")
        if anchor is not None:
            _check(len(anchor) == 3 and anchor[1] == cls[2] and anchor[2] == 4,
                   "MultiBoxDetection", f"anchor must have shape (1, {cls[2]}, 4), got "
                                        f"{rules.fmt_shape(anchor)}")
        rules.set_shape(outs, 0, (cls[0], cls[2], 6), "output")
    return ins, outs


def _det_kernel(a, xs):
    cls, loc, anchor = (st.todense(x) for x in xs)
    out = kdet.multibox_detection(cls, loc, anchor, a.clip, a.threshold, a.background_id,
                                  a.nms_threshold, a.force_suppress, a.variances, a.nms_topk)
    return (out.astype(cls.dtype),)


register(OpDef(
    "_contrib_MultiBoxDetection", params=_DET, inputs=("cls_prob", "loc_pred", "anchor"),
    dispatch=(Dispatch((DNS, DNS, DNS), (DNS,), _det_kernel),), infer_shape=_det_shape,
    infer_type=rules.type_of_input(0, 1), gradient=no_grad,
    doc="""SSD detections: per anchor the best foreground class, its score and the decoded
    box, sorted by score and suppressed by NMS. The output (B, N, 6) holds rows
    [class, score, xmin, ymin, xmax, ymax]; suppressed rows have class -1 and the rest of
    the rows are -1.

    Parameters
    ----------
    cls_prob, loc_pred, anchor : NDArray or Symbol
    clip, force_suppress : bool
    threshold, nms_threshold : float
    background_id, nms_topk : int
    variances : tuple of 4 floats
    """))
