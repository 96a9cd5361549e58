"""Region proposals (Faster R-CNN's RPN), per image: anchors over the feature map, box
deltas applied and clipped, small boxes demoted, the best ``pre_nms`` kept, greedy NMS,
and the first ``post_nms`` survivors (repeated cyclically when fewer survive).

Boxes use the "+1" pixel convention of py-faster-rcnn, as MXNet's Proposal does.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["base_anchors", "propose"]


def base_anchors(stride, ratios, scales):
    """(A, 4) anchors of one cell, ratios outer and scales inner (MXNet's order)."""
    size = float(stride * stride)
    ctr = 0.5 * (stride - 1)
    out = []
    for r in ratios:
        ws = np.floor(np.sqrt(size / r) + 0.5)
        hs = np.floor(ws * r + 0.5)
        for s in scales:
            w, h = ws * s, hs * s
            out.append([ctr - 0.5 * (w - 1), ctr - 0.5 * (h - 1), ctr + 0.5 * (w - 1),
                        ctr + 0.5 * (h - 1)])
    return np.array(out, np.float64)


@njit(cache=True)
def _nms(boxes, thresh, limit):
    """Indices kept by greedy NMS over score-sorted boxes (IoU > thresh suppresses)."""
    n = boxes.shape[0]
    area = (boxes[:, 2] - boxes[:, 0] + 1.0) * (boxes[:, 3] - boxes[:, 1] + 1.0)
    dead = np.zeros(n, np.bool_)
    keep = np.empty(n, np.int64)
    k = 0
    for i in range(n):
        if dead[i]:
            continue
        keep[k] = i
        k += 1
        if k >= limit:
            break
        for j in range(i + 1, n):
            if dead[j]:
                continue
            w = min(boxes[i, 2], boxes[j, 2]) - max(boxes[i, 0], boxes[j, 0]) + 1.0
            h = min(boxes[i, 3], boxes[j, 3]) - max(boxes[i, 1], boxes[j, 1]) + 1.0
            if w <= 0 or h <= 0:
                continue
            inter = w * h
            if inter / (area[i] + area[j] - inter) > thresh:
                dead[j] = True
    return keep[:k]


def propose(scores, deltas, im_info, anchors, stride, pre_nms, post_nms, thresh, min_size,
            iou_loss):
    """(rois (post_nms, 4), scores (post_nms,)) of one image.

    scores: (A, H, W) foreground probabilities; deltas: (4A, H, W); im_info: (height, width,
    scale); anchors: (A, 4) of one cell.
    """
    a, h, w = scores.shape
    sy, sx = np.meshgrid(np.arange(h) * stride, np.arange(w) * stride, indexing="ij")
    shift = np.stack([sx, sy, sx, sy], axis=-1).astype(np.float64)        # (H, W, 4)
    boxes = (shift[:, :, None, :] + anchors[None, None]).reshape(-1, 4)   # (H*W*A, 4)
    d = deltas.astype(np.float64).reshape(a, 4, h, w).transpose(2, 3, 0, 1).reshape(-1, 4)
    sc = scores.astype(np.float64).transpose(1, 2, 0).reshape(-1).copy()
    if iou_loss:
        pred = boxes + d
    else:
        bw = boxes[:, 2] - boxes[:, 0] + 1.0
        bh = boxes[:, 3] - boxes[:, 1] + 1.0
        cx = boxes[:, 0] + 0.5 * (bw - 1.0) + d[:, 0] * bw
        cy = boxes[:, 1] + 0.5 * (bh - 1.0) + d[:, 1] * bh
        pw, ph = np.exp(d[:, 2]) * bw, np.exp(d[:, 3]) * bh
        pred = np.stack([cx - 0.5 * (pw - 1.0), cy - 0.5 * (ph - 1.0), cx + 0.5 * (pw - 1.0),
                         cy + 0.5 * (ph - 1.0)], axis=1)
    im_h, im_w, scale = (float(v) for v in im_info[:3])
    pred[:, 0::2] = np.clip(pred[:, 0::2], 0.0, im_w - 1.0)
    pred[:, 1::2] = np.clip(pred[:, 1::2], 0.0, im_h - 1.0)
    # cells beyond the real image (padding of the batch) never win
    real_h, real_w = int(im_h / stride), int(im_w / stride)
    cell_y = np.repeat(np.arange(h), w * a)
    cell_x = np.tile(np.repeat(np.arange(w), a), h)
    sc[(cell_y >= real_h) | (cell_x >= real_w)] = -1.0
    ms = min_size * scale
    small = ((pred[:, 2] - pred[:, 0] + 1.0) < ms) | ((pred[:, 3] - pred[:, 1] + 1.0) < ms)
    pred[small, :2] -= ms / 2
    pred[small, 2:] += ms / 2
    sc[small] = -1.0
    order = np.argsort(-sc, kind="stable")
    if 0 < pre_nms < len(order):
        order = order[:pre_nms]
    keep = order[_nms(np.ascontiguousarray(pred[order]), thresh, post_nms)]
    pick = keep[np.arange(post_nms) % len(keep)]
    return pred[pick], sc[pick]
