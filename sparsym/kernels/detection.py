"""Bounding-box kernels of the contrib detection operators (dense numpy arrays).

Boxes are rows of 4 coordinates, either ``corner`` (xmin, ymin, xmax, ymax) or ``center``
(x, y, width, height). Every kernel takes and returns dense arrays and never aliases its
inputs; loops run over one batch item at a time with the box-to-box work vectorised.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["to_corner", "to_center", "iou", "nms", "bipartite", "multibox_prior",
           "multibox_target", "multibox_detection", "decode_center"]


def to_corner(b):
    """Center-format boxes (..., 4) as corner boxes (float64)."""
    b = np.asarray(b, np.float64)
    half = b[..., 2:4] / 2
    return np.concatenate([b[..., 0:2] - half, b[..., 0:2] + half], axis=-1)


def to_center(b):
    """Corner-format boxes (..., 4) as center boxes (float64)."""
    b = np.asarray(b, np.float64)
    wh = b[..., 2:4] - b[..., 0:2]
    return np.concatenate([b[..., 0:2] + wh / 2, wh], axis=-1)


def iou(a, b, fmt="corner"):
    """Intersection over union of every box of ``a`` (n, 4) with every box of ``b`` (m, 4):
    an (n, m) float64 matrix; boxes that do not intersect give 0 (never a 0/0)."""
    if fmt == "center":
        a, b = to_corner(a), to_corner(b)
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    w = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    h = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    inter = np.maximum(w, 0) * np.maximum(h, 0)
    area_a = np.maximum(a[:, 2] - a[:, 0], 0) * np.maximum(a[:, 3] - a[:, 1], 0)
    area_b = np.maximum(b[:, 2] - b[:, 0], 0) * np.maximum(b[:, 3] - b[:, 1], 0)
    union = area_a[:, None] + area_b[None, :] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(inter > 0, inter / np.where(union > 0, union, 1), 0.0)
    return out


@njit(cache=True, nogil=True)
def _suppress(ious, ids, by_id, thresh, alive):
    """Greedy suppression over candidates sorted by score: each survivor removes the later
    ones overlapping it by more than ``thresh`` (of its own id when ``by_id``)."""
    n = alive.shape[0]
    for i in range(n):
        if not alive[i]:
            continue
        for j in range(i + 1, n):
            if alive[j] and ious[i, j] > thresh and (not by_id or ids[j] == ids[i]):
                alive[j] = False


def nms(data, overlap_thresh, valid_thresh, topk, coord_start, score_index, id_index,
        background_id, force_suppress, in_format, out_format):
    """Non-maximum suppression over the last two axes of ``data`` (..., N, K).

    Returns ``(out, index)``: ``out`` holds, per batch item, the kept rows by decreasing
    score (coordinates converted to ``out_format``) and then rows of -1; ``index`` (same
    leading shape, int64 (..., N)) is the source row of each output row, -1 for padding.
    """
    shape = data.shape
    n, k = shape[-2], shape[-1]
    flat = data.reshape(-1, n, k)
    out = np.full(flat.shape, -1, dtype=data.dtype)
    index = np.full(flat.shape[:2], -1, dtype=np.int64)
    cs = slice(coord_start, coord_start + 4)
    for b in range(flat.shape[0]):
        rows = flat[b].astype(np.float64)
        score = rows[:, score_index]
        valid = score > valid_thresh
        if id_index >= 0:
            valid &= rows[:, id_index] != background_id
        cand = np.flatnonzero(valid)
        cand = cand[np.argsort(-score[cand], kind="stable")]
        if topk > 0:
            cand = cand[:topk]
        boxes = rows[cand, cs]
        if in_format == "center":
            boxes = to_corner(boxes)
        ious = iou(boxes, boxes)
        by_id = id_index >= 0 and not force_suppress
        ids = rows[cand, id_index] if by_id else np.zeros(len(cand))
        alive = np.ones(len(cand), dtype=bool)
        _suppress(np.ascontiguousarray(ious, dtype=np.float64), ids, by_id,
                  float(overlap_thresh), alive)
        kept = cand[alive]
        res = rows[kept]
        if in_format != out_format:
            res[:, cs] = to_corner(res[:, cs]) if out_format == "corner" else \
                to_center(res[:, cs])
        out[b, :len(kept)] = res
        index[b, :len(kept)] = kept
    return out.reshape(shape), index.reshape(shape[:-1])


def nms_backward(ograd, index):
    """Route each output row's gradient back to the input row it came from."""
    n, k = ograd.shape[-2], ograd.shape[-1]
    g = ograd.reshape(-1, n, k)
    idx = index.reshape(-1, n)
    out = np.zeros_like(g)
    for b in range(g.shape[0]):
        keep = idx[b] >= 0
        out[b, idx[b, keep]] = g[b, keep]
    return out.reshape(ograd.shape)


def bipartite(scores, is_ascend, threshold, topk):
    """Greedy bipartite matching of an (..., N, M) score array: pairs are taken best score
    first while both row and column are free and the score passes ``threshold``.

    Returns (row -> column (..., N), column -> row (..., M)) as float64, -1 for unmatched.
    """
    n, m = scores.shape[-2], scores.shape[-1]
    flat = scores.reshape(-1, n * m).astype(np.float64)
    rows = np.full((flat.shape[0], n), -1.0)
    cols = np.full((flat.shape[0], m), -1.0)
    for b in range(flat.shape[0]):
        s = flat[b]
        order = np.argsort(s if is_ascend else -s, kind="stable")
        count = 0
        for pos in order:
            v = s[pos]
            if (v >= threshold) if is_ascend else (v <= threshold):
                break
            r, c = divmod(int(pos), m)
            if rows[b, r] >= 0 or cols[b, c] >= 0:
                continue
            rows[b, r] = c
            cols[b, c] = r
            count += 1
            if 0 < topk <= count:
                break
    return rows.reshape(scores.shape[:-1]), cols.reshape(scores.shape[:-2] + (m,))


def multibox_prior(height, width, sizes, ratios, clip, steps, offsets, dtype=np.float64):
    """Anchor boxes (1, height*width*A, 4), A = len(sizes) + len(ratios) - 1: per pixel,
    every size at the first ratio, then the first size at every other ratio."""
    step_y = steps[0] if steps[0] > 0 else 1.0 / height
    step_x = steps[1] if steps[1] > 0 else 1.0 / width
    cy = (np.arange(height) + offsets[0]) * step_y
    cx = (np.arange(width) + offsets[1]) * step_x
    half = []
    r0 = np.sqrt(ratios[0])
    for s in sizes:
        half.append((s * height / width * r0 / 2, s / r0 / 2))
    for r in ratios[1:]:
        rr = np.sqrt(r)
        half.append((sizes[0] * height / width * rr / 2, sizes[0] / rr / 2))
    hw = np.array(half)                                     # (A, 2): half width, height
    # x depends on (column, anchor) and y on (row, anchor) only: compute those small planes
    # and broadcast them into the output (one strided write each, no (H, W, A) temporaries)
    xs = (cx[:, None] - hw[:, 0], cx[:, None] + hw[:, 0])  # (W, A)
    ys = (cy[:, None] - hw[:, 1], cy[:, None] + hw[:, 1])  # (H, A)
    if clip:
        xs, ys = [np.clip(v, 0.0, 1.0) for v in xs], [np.clip(v, 0.0, 1.0) for v in ys]
    out = np.empty((height, width, len(half), 4), dtype=dtype)
    out[..., 0], out[..., 2] = xs[0][None], xs[1][None]
    out[..., 1], out[..., 3] = ys[0][:, None], ys[1][:, None]
    return out.reshape(1, -1, 4)


def _encode(anchor, gt, variances):
    """Regression targets of corner gt boxes relative to corner anchors (both (n, 4))."""
    a, g = to_center(anchor), to_center(gt)
    return np.stack([(g[:, 0] - a[:, 0]) / a[:, 2] / variances[0],
                     (g[:, 1] - a[:, 1]) / a[:, 3] / variances[1],
                     np.log(g[:, 2] / a[:, 2]) / variances[2],
                     np.log(g[:, 3] / a[:, 3]) / variances[3]], axis=1)


def multibox_target(anchors, labels, cls_preds, overlap_threshold, ignore_label,
                    negative_mining_ratio, negative_mining_thresh, minimum_negative_samples,
                    variances):
    """SSD training targets: (loc_target (B, N*4), loc_mask (B, N*4), cls_target (B, N)).

    Anchors are matched to ground truth first greedily one to one (highest IoU first), then
    every remaining anchor whose best IoU exceeds ``overlap_threshold``. With negative
    mining, the unmatched anchors whose best IoU is below ``negative_mining_thresh`` and
    whose background probability is lowest become negatives (class 0); the other
    unmatched anchors get ``ignore_label``. Without it every unmatched anchor is negative.
    """
    anchors = np.asarray(anchors, np.float64).reshape(-1, 4)
    na = anchors.shape[0]
    nb = labels.shape[0]
    loc_t = np.zeros((nb, na, 4))
    loc_m = np.zeros((nb, na, 4))
    cls_t = np.full((nb, na), float(ignore_label) if negative_mining_ratio > 0 else 0.0)
    for b in range(nb):
        lab = np.asarray(labels[b], np.float64)
        nvalid = 0
        while nvalid < lab.shape[0] and lab[nvalid, 0] != -1:
            nvalid += 1
        if (lab[nvalid:, 1] != -1).any():
            raise ValueError(f"MultiBoxTarget: label rows after the first class -1 are "
                             f"padding and must be -1 throughout (batch item {b})")
        lab = lab[:nvalid]
        match = np.full(na, -1, dtype=np.int64)
        if nvalid:
            ov = iou(anchors, lab[:, 1:5])
            work = ov.copy()
            while True:
                pos = int(np.argmax(work))
                i, j = divmod(pos, nvalid)
                if work[i, j] <= 1e-6:
                    break
                match[i] = j
                work[i, :] = -1
                work[:, j] = -1
            best = ov.argmax(axis=1)
            best_ov = ov.max(axis=1)
            extra = (match < 0) & (best_ov > overlap_threshold)
            match[extra] = best[extra]
        else:
            best_ov = np.zeros(na)
        pos = match >= 0
        if negative_mining_ratio > 0:
            n_pos = int(pos.sum())
            n_neg = min(int(n_pos * negative_mining_ratio), na - n_pos)
            n_neg = max(n_neg, minimum_negative_samples)
            cand = np.flatnonzero(~pos & (best_ov < negative_mining_thresh))
            if n_neg > 0 and len(cand):
                p = np.asarray(cls_preds[b], np.float64)[:, cand]
                p = np.exp(p - p.max(axis=0))
                bg = p[0] / p.sum(axis=0)
                chosen = cand[np.argsort(bg, kind="stable")[:n_neg]]
                cls_t[b, chosen] = 0
        if pos.any():
            idx = np.flatnonzero(pos)
            gt = lab[match[idx]]
            cls_t[b, idx] = gt[:, 0] + 1
            loc_t[b, idx] = _encode(anchors[idx], gt[:, 1:5], variances)
            loc_m[b, idx] = 1
    return loc_t.reshape(nb, -1), loc_m.reshape(nb, -1), cls_t


def decode_center(anchor_center, deltas, variances, clip_exp=None):
    """Corner boxes from center anchors (n, 4) and regression deltas (n, 4)."""
    a = anchor_center
    x = deltas[:, 0] * variances[0] * a[:, 2] + a[:, 0]
    y = deltas[:, 1] * variances[1] * a[:, 3] + a[:, 1]
    dw = deltas[:, 2] * variances[2]
    dh = deltas[:, 3] * variances[3]
    if clip_exp is not None:
        dw = np.minimum(dw, clip_exp)
        dh = np.minimum(dh, clip_exp)
    w = np.exp(dw) * a[:, 2] / 2
    h = np.exp(dh) * a[:, 3] / 2
    return np.stack([x - w, y - h, x + w, y + h], axis=1)


def multibox_detection(cls_prob, loc_pred, anchors, clip, threshold, background_id,
                       nms_threshold, force_suppress, variances, nms_topk):
    """SSD detections (B, N, 6) rows [class, score, xmin, ymin, xmax, ymax]: the best
    non-background class per anchor above ``threshold``, sorted by score, suppressed by
    NMS among the ``nms_topk`` best (suppressed rows and rows beyond ``nms_topk`` keep
    their box with class -1), then rows of -1."""
    nb, ncls, na = cls_prob.shape
    anc = to_center(np.asarray(anchors, np.float64).reshape(-1, 4))
    out = np.full((nb, na, 6), -1.0)
    fg = np.array([j for j in range(ncls) if j != background_id], dtype=np.int64)
    for b in range(nb):
        p = np.asarray(cls_prob[b], np.float64)
        if len(fg) == 0:
            continue
        sub = p[fg]
        best = np.argmax(sub, axis=0)
        score = sub[best, np.arange(na)]
        cls = fg[best]
        keep = np.flatnonzero(score >= threshold)
        keep = keep[np.argsort(-score[keep], kind="stable")]
        top = len(keep) if nms_topk <= 0 else min(nms_topk, len(keep))
        boxes = decode_center(anc[keep], np.asarray(loc_pred[b], np.float64).reshape(-1, 4)[
            keep], variances)
        if clip:
            boxes = np.clip(boxes, 0.0, 1.0)
        ids = (cls[keep] - (cls[keep] > background_id)).astype(np.float64)
        ids[top:] = -1  # beyond nms_topk: kept in the output, as suppressed rows
        ious = iou(boxes[:top], boxes[:top])
        for i in range(top):
            if ids[i] < 0:
                continue
            hit = ious[i, i + 1:] >= nms_threshold
            if not force_suppress:
                hit &= ids[i + 1:] == ids[i]
            ids[i + 1:top][hit] = -1
        m = len(keep)
        out[b, :m, 0] = ids
        out[b, :m, 1] = score[keep]
        out[b, :m, 2:] = boxes
    return out
