"""Contrib bounding-box operators: box_nms, box_iou, bipartite_matching, box_encode,
box_decode (MXNet 1.9.1's semantics, probed on the oracle).

All are dense-only. As in MXNet, box_nms routes its gradient back to the rows it kept, and
the other four have zero gradients (they compute targets and indices, not losses).
"""
from __future__ import annotations

import numpy as np

from ... import storage as st
from ...base import ShapeError
from ...kernels import detection as kdet
from ..core import rules
from ..core.grad import bw, no_grad
from ..core.helpers import DNS
from ..core.params import Field, Params
from ..core.registry import Dispatch, OpDef, register

_FMT = ("center", "corner")


def _dense(xs):
    return [st.todense(x) for x in xs]


def _check(cond, op, msg):
    if not cond:
        raise ShapeError(f"operator {op}: {msg}")


# ----------------------------------------------------------------------------- box_nms
_NMS = Params(
    overlap_thresh=Field("float", 0.5, doc="overlap (IoU) above which a box is suppressed"),
    valid_thresh=Field("float", 0.0, doc="boxes with score <= valid_thresh are dropped"),
    topk=Field("int", -1, doc="run NMS over the topk boxes by score only (-1: all)"),
    coord_start=Field("int", 2, doc="column of the first of the 4 coordinates"),
    score_index=Field("int", 1, doc="column of the score"),
    id_index=Field("int", -1, doc="column of the class id (-1: no class ids)"),
    background_id=Field("int", -1, doc="class id of boxes to drop"),
    force_suppress=Field("bool", False, doc="suppress across classes too"),
    in_format=Field("str", "corner", _FMT), out_format=Field("str", "corner", _FMT))


def _nms_shape(attrs, ins, outs):
    s = ins[0]
    if s is None:
        return ins, outs
    op = "box_nms"
    _check(len(s) >= 2, op, f"data must have at least 2 dimensions, got {rules.fmt_shape(s)}")
    k = s[-1]
    _check(k >= 5, op, f"data's last axis holds score and 4 coordinates: at least 5 "
                       f"columns expected, got {k}")
    _check(0 <= attrs.coord_start <= k - 4, op,
           f"coord_start {attrs.coord_start} out of range for {k} columns")
    _check(0 <= attrs.score_index < k, op, f"score_index {attrs.score_index} out of range")
    _check(attrs.id_index < k, op, f"id_index {attrs.id_index} out of range")
    rules.set_shape(outs, 0, tuple(s), "output")
    rules.set_shape(outs, 1, tuple(s[:-1]), "output")
    return ins, outs


def _nms_kernel(a, xs):
    x = st.todense(xs[0])
    return kdet.nms(x, a.overlap_thresh, a.valid_thresh, a.topk, a.coord_start, a.score_index,
                    a.id_index, a.background_id, a.force_suppress, a.in_format, a.out_format)


def _nms_grad(node, og):
    return [bw("_backward_contrib_box_nms", [og[0], (node, 1)], node, "backward",
               **dict(node.params))]


register(OpDef(
    "_contrib_box_nms", params=_NMS, aliases=("_contrib_box_non_maximum_suppression",),
    dispatch=(Dispatch((DNS,), (DNS,), _nms_kernel),), num_outputs=2, num_visible_outputs=1,
    output_names=("output", "temp"), infer_shape=_nms_shape,
    infer_type=rules.type_of_input(0, 2, {1: np.int64}), gradient=_nms_grad,
    doc="""Non-maximum suppression of boxes, per batch item.

    ``data`` (..., N, K) holds one box per row: a score, 4 coordinates from
    ``coord_start`` and optionally a class id. Boxes with score <= ``valid_thresh`` or with
    class ``background_id`` are dropped; the rest, by decreasing score (the first ``topk``
    only when ``topk`` > 0), suppress later boxes of the same class (any class with
    ``force_suppress``) whose IoU exceeds ``overlap_thresh``. The output has the kept rows
    first, then rows of -1.

    Parameters
    ----------
    data : NDArray or Symbol
    overlap_thresh, valid_thresh : float
    topk, coord_start, score_index, id_index, background_id : int
    force_suppress : bool
    in_format, out_format : {'corner', 'center'}
    """))


def _nms_bwd(a, xs):
    g, idx = _dense(xs)
    return (kdet.nms_backward(g, idx),)


def _nms_bwd_shape(attrs, ins, outs):
    if ins[0] is not None:
        rules.set_shape(outs, 0, tuple(ins[0]), "output")
    return ins, outs


register(OpDef(
    "_backward_contrib_box_nms", params=_NMS, inputs=("ograd", "index"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _nms_bwd),), infer_shape=_nms_bwd_shape,
    infer_type=rules.type_of_input(0), doc="box_nms's gradient: each kept row's gradient goes back "
                                "to its source row; suppressed rows get 0."))


# ----------------------------------------------------------------------------- box_iou
def _iou_shape(attrs, ins, outs):
    a, b = ins
    for i, s in enumerate((a, b)):
        if s is not None:
            _check(len(s) >= 1 and s[-1] == 4, "box_iou",
                   f"input {i} must end with 4 coordinates, got {rules.fmt_shape(s)}")
    if a is not None and b is not None:
        rules.set_shape(outs, 0, tuple(a[:-1]) + tuple(b[:-1]), "output")
    return ins, outs


def _iou_kernel(a, xs):
    lhs, rhs = _dense(xs)
    out = kdet.iou(lhs.reshape(-1, 4), rhs.reshape(-1, 4), a.format)
    return (out.reshape(lhs.shape[:-1] + rhs.shape[:-1]).astype(lhs.dtype),)


register(OpDef(
    "_contrib_box_iou", params=Params(format=Field("str", "corner", _FMT)),
    inputs=("lhs", "rhs"), dispatch=(Dispatch((DNS, DNS), (DNS,), _iou_kernel),),
    infer_shape=_iou_shape, infer_type=rules.type_of_input(0), gradient=no_grad,
    doc="""Intersection over union of every box of ``lhs`` (..., 4) with every box of
    ``rhs`` (..., 4); the output has shape ``lhs.shape[:-1] + rhs.shape[:-1]``.

    Parameters
    ----------
    lhs, rhs : NDArray or Symbol
    format : {'corner', 'center'}
        (xmin, ymin, xmax, ymax) or (x, y, width, height).
    """))


# ----------------------------------------------------------------------------- bipartite
_BIP = Params(is_ascend=Field("bool", False, doc="match low scores first"),
              threshold=Field("float", doc="scores must exceed it (be below it if ascending)"),
              topk=Field("int", -1, doc="stop after topk matches (-1: no limit)"))


def _bip_shape(attrs, ins, outs):
    s = ins[0]
    if s is not None:
        _check(len(s) >= 2, "bipartite_matching",
               f"data must have at least 2 dimensions, got {rules.fmt_shape(s)}")
        rules.set_shape(outs, 0, tuple(s[:-1]), "output")
        rules.set_shape(outs, 1, tuple(s[:-2]) + (s[-1],), "output")
    return ins, outs


def _bip_kernel(a, xs):
    x = st.todense(xs[0])
    rows, cols = kdet.bipartite(x, a.is_ascend, a.threshold, a.topk)
    return rows.astype(x.dtype), cols.astype(x.dtype)


register(OpDef(
    "_contrib_bipartite_matching", params=_BIP, num_outputs=2,
    dispatch=(Dispatch((DNS,), (DNS,), _bip_kernel),), infer_shape=_bip_shape,
    infer_type=rules.type_of_input(0, 2), gradient=no_grad,
    doc="""Greedy bipartite matching of a score matrix (..., N, M), best score first.

    Returns the matched column of every row (..., N) and the matched row of every column
    (..., M), -1 where unmatched.

    Parameters
    ----------
    data : NDArray or Symbol
    is_ascend : bool
    threshold : float
    topk : int
    """))


# ----------------------------------------------------------------------------- box_encode
def _enc_shape(attrs, ins, outs):
    samples, matches, anchors, refs, means, stds = ins
    if samples is not None and anchors is not None:
        _check(tuple(anchors[:2]) == tuple(samples) and anchors[-1] == 4, "box_encode",
               f"anchors must have shape {rules.fmt_shape(tuple(samples) + (4,))}, got "
               f"{rules.fmt_shape(anchors)}")
    if anchors is not None:
        rules.set_shape(outs, 0, tuple(anchors), "output")
        rules.set_shape(outs, 1, tuple(anchors), "output")
        rules.set_shape(ins, 0, tuple(anchors[:2]))
        rules.set_shape(ins, 1, tuple(anchors[:2]))
    for i in (4, 5):
        rules.set_shape(ins, i, (4,))
    return ins, outs


def _enc_kernel(a, xs):
    samples, matches, anchors, refs, means, stds = _dense(xs)
    nb, n = samples.shape
    tgt = np.zeros((nb, n, 4))
    mask = np.zeros((nb, n, 4))
    for b in range(nb):
        pos = np.flatnonzero(samples[b] > 0.5)
        if not len(pos):
            continue
        ref = kdet.to_center(refs[b, matches[b, pos].astype(np.int64)])
        anc = kdet.to_center(anchors[b, pos])
        raw = np.stack([(ref[:, 0] - anc[:, 0]) / anc[:, 2], (ref[:, 1] - anc[:, 1]) / anc[:, 3],
                        np.log(ref[:, 2] / anc[:, 2]), np.log(ref[:, 3] / anc[:, 3])], axis=1)
        tgt[b, pos] = (raw - means.astype(np.float64)) / stds.astype(np.float64)
        mask[b, pos] = 1
    return tgt.astype(anchors.dtype), mask.astype(anchors.dtype)


register(OpDef(
    "_contrib_box_encode", inputs=("samples", "matches", "anchors", "refs", "means", "stds"),
    num_outputs=2, dispatch=(Dispatch((DNS,) * 6, (DNS,), _enc_kernel),),
    infer_shape=_enc_shape, infer_type=rules.type_of_input(2, 2), gradient=no_grad,
    doc="""Regression targets of matched reference boxes relative to their anchors.

    For every positive sample (``samples`` > 0.5) the target is
    ((dx / wa, dy / ha, log(wr / wa), log(hr / ha)) - means) / stds, with the reference
    box ``refs[b, matches[b, i]]`` and the anchor in corner format; the mask marks them.

    Parameters
    ----------
    samples : (B, N) 1 positive, 0 or -1 otherwise
    matches : (B, N) index into refs
    anchors : (B, N, 4) corner boxes
    refs : (B, M, 4) corner boxes
    means, stds : (4,)
    """))


# ----------------------------------------------------------------------------- box_decode
_DEC = Params(std0=Field("float", 1.0), std1=Field("float", 1.0), std2=Field("float", 1.0),
              std3=Field("float", 1.0),
              clip=Field("float", -1.0, doc="clip the width/height log-deltas (-1: no clip)"),
              format=Field("str", "center", _FMT, doc="format of the anchors"))


def _dec_shape(attrs, ins, outs):
    data, anchors = ins
    if data is not None:
        _check(len(data) == 3 and data[-1] == 4, "box_decode",
               f"data must have shape (B, N, 4), got {rules.fmt_shape(data)}")
        rules.set_shape(outs, 0, tuple(data), "output")
    if anchors is not None:
        _check(len(anchors) == 3 and anchors[0] == 1 and anchors[-1] == 4, "box_decode",
               f"anchors must have shape (1, N, 4), got {rules.fmt_shape(anchors)}")
        if data is not None:
            _check(anchors[1] == data[1], "box_decode",
                   f"{anchors[1]} anchors for {data[1]} boxes")
    return ins, outs


def _dec_kernel(a, xs):
    data, anchors = _dense(xs)
    anc = anchors.reshape(-1, 4).astype(np.float64)
    if a.format == "corner":
        anc = kdet.to_center(anc)
    clip = a.clip if a.clip > 0 else None
    stds = (a.std0, a.std1, a.std2, a.std3)
    out = np.stack([kdet.decode_center(anc, d.astype(np.float64), stds, clip) for d in data])
    return (out.reshape(data.shape).astype(data.dtype),)


register(OpDef(
    "_contrib_box_decode", params=_DEC, inputs=("data", "anchors"),
    dispatch=(Dispatch((DNS, DNS), (DNS,), _dec_kernel),), infer_shape=_dec_shape,
    infer_type=rules.type_of_input(0), gradient=no_grad,
    doc="""Corner boxes from regression deltas ``data`` (B, N, 4) and ``anchors`` (1, N, 4).

    x = d0 * std0 * wa + xa, y = d1 * std1 * ha + ya, w = exp(d2 * std2) * wa,
    h = exp(d3 * std3) * ha (the log-deltas clipped at ``clip`` when it is positive).

    Parameters
    ----------
    data, anchors : NDArray or Symbol
    std0, std1, std2, std3, clip : float
    format : {'center', 'corner'}
        Format of the anchors.
    """))
