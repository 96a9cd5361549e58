"""Integer-bin ROI pooling kernels (dense): ROIPooling (Fast R-CNN's max pooling) and
PSROIPooling (R-FCN's position-sensitive average pooling), forward and data gradient, and
DeformablePSROIPooling (its bilinear-sampled form with learned per-part offsets).

Both cut a ROI into (PH, PW) bins on whole pixels, as MXNet: the bin ``p`` of an extent of
``size`` pixels starting at ``start`` covers [floor(p*size/P + start), ceil((p+1)*size/P
+ start)) clipped to the map; an empty bin gives 0 and no gradient. rois are (R, 5) rows
[batch index, x1, y1, x2, y2] in image coordinates. The loops run over ROIs and bins (few);
each bin is one vectorised reduction over the channels.
"""
from __future__ import annotations

import math

import numpy as np

from ..base import IndexOutOfRange

__all__ = ["roi_pool_forward", "roi_pool_backward", "psroi_pool_forward",
           "psroi_pool_backward", "deformable_psroi_forward", "deformable_psroi_backward"]


def _round(v):
    """C's round(): halves away from zero (MXNet rounds ROI corners so)."""
    return math.copysign(math.floor(abs(v) + 0.5), v)


def _bins(start, size, bins, length, integer_start):
    """[(lo, hi)] pixel ranges of each bin along one axis, clipped to [0, length]."""
    step = size / bins
    out = []
    for p in range(bins):
        if integer_start:   # ROIPooling offsets whole-pixel bins by the integer start
            lo, hi = math.floor(p * step) + start, math.ceil((p + 1) * step) + start
        else:
            lo, hi = math.floor(p * step + start), math.ceil((p + 1) * step + start)
        out.append((min(max(lo, 0), length), min(max(hi, 0), length)))
    return out


def _batch(roi, n):
    b = int(roi[0])
    if not 0 <= b < n:
        raise IndexOutOfRange(f"ROI batch index {roi[0]} is outside the "
                              f"{n} images of data")
    return b


def _roi_pool_bins(roi, pooled, scale, h, w):
    x1, y1, x2, y2 = (int(_round(float(v) * scale)) for v in roi[1:5])
    rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
    return (_bins(y1, rh, pooled[0], h, True), _bins(x1, rw, pooled[1], w, True))


def _argmax_bins(data, rois, pooled, scale):
    """Yield (r, batch, ph, pw, flat argmax per channel within the bin window, window)."""
    n, c, h, w = data.shape
    for r, roi in enumerate(rois):
        b = _batch(roi, n)
        ys, xs = _roi_pool_bins(roi, pooled, scale, h, w)
        for i, (hs, he) in enumerate(ys):
            for j, (ws, we) in enumerate(xs):
                if he <= hs or we <= ws:
                    continue
                win = data[b, :, hs:he, ws:we].reshape(c, -1)
                yield r, b, i, j, np.argmax(win, axis=1), (hs, he, ws, we)


def roi_pool_forward(data, rois, pooled_size, spatial_scale):
    """(R, C, PH, PW): the max of each bin (first maximum in row-major order)."""
    n, c, h, w = data.shape
    out = np.zeros((rois.shape[0], c) + tuple(pooled_size), data.dtype)
    for r, b, i, j, am, (hs, he, ws, we) in _argmax_bins(data, rois, pooled_size,
                                                         spatial_scale):
        out[r, :, i, j] = data[b, :, hs:he, ws:we].reshape(c, -1)[np.arange(c), am]
    return out


def roi_pool_backward(dy, data, rois, pooled_size, spatial_scale):
    """Gradient for the data: each bin's gradient goes to its maximum's position."""
    n, c, h, w = data.shape
    g = np.zeros(data.shape, np.float64)
    ch = np.arange(c)
    for r, b, i, j, am, (hs, _he, ws, we) in _argmax_bins(data, rois, pooled_size,
                                                         spatial_scale):
        bw = we - ws
        np.add.at(g[b], (ch, hs + am // bw, ws + am % bw), dy[r, :, i, j])
    return g.astype(data.dtype)


def _psroi_bins(roi, pooled, scale, h, w):
    x1, y1 = _round(float(roi[1])) * scale, _round(float(roi[2])) * scale
    x2, y2 = (_round(float(roi[3])) + 1.0) * scale, (_round(float(roi[4])) + 1.0) * scale
    rh, rw = max(y2 - y1, 0.1), max(x2 - x1, 0.1)
    return _bins(y1, rh, pooled, h, False), _bins(x1, rw, pooled, w, False)


def _ps_channels(output_dim, group, pooled, i, j):
    """Input channels read by bin (i, j) of output channels 0..output_dim-1."""
    gh = min(max(i * group // pooled, 0), group - 1)
    gw = min(max(j * group // pooled, 0), group - 1)
    return (np.arange(output_dim) * group + gh) * group + gw


def _ps_bins(data, rois, spatial_scale, output_dim, pooled, group):
    n, c, h, w = data.shape
    for r, roi in enumerate(rois):
        b = _batch(roi, n)
        ys, xs = _psroi_bins(roi, pooled, spatial_scale, h, w)
        for i, (hs, he) in enumerate(ys):
            for j, (ws, we) in enumerate(xs):
                if he > hs and we > ws:
                    yield (r, b, i, j, _ps_channels(output_dim, group, pooled, i, j),
                           (hs, he, ws, we))


def psroi_pool_forward(data, rois, spatial_scale, output_dim, pooled, group):
    """(R, output_dim, P, P): bin (i, j) of channel k averages input channel
    (k*G + gi)*G + gj, with (gi, gj) the bin's cell on the G x G group grid."""
    out = np.zeros((rois.shape[0], output_dim, pooled, pooled), np.float64)
    for r, b, i, j, chans, (hs, he, ws, we) in _ps_bins(data, rois, spatial_scale,
                                                        output_dim, pooled, group):
        win = data[b, chans, hs:he, ws:we].astype(np.float64)
        out[r, :, i, j] = win.sum(axis=(1, 2)) / ((he - hs) * (we - ws))
    return out.astype(data.dtype)


def psroi_pool_backward(dy, data, rois, spatial_scale, output_dim, pooled, group):
    """Gradient for the data: each bin's gradient spread evenly over its pixels."""
    g = np.zeros(data.shape, np.float64)
    for r, b, i, j, chans, (hs, he, ws, we) in _ps_bins(data, rois, spatial_scale,
                                                        output_dim, pooled, group):
        share = dy[r, :, i, j].astype(np.float64) / ((he - hs) * (we - ws))
        g[b, chans, hs:he, ws:we] += share[:, None, None]
    return g.astype(data.dtype)


def _deform_samples(roi, trans_r, a, h, w, pooled, i, j, chans_class):
    """Sample points of bin (i, j) of every output channel: (y, x) each (K, S*S) clipped to
    the map, the valid mask, the bin's trans cell (part row, part col) and the ROI size."""
    s = a["sample_per_part"]
    x1 = _round(float(roi[1])) * a["spatial_scale"] - 0.5
    y1 = _round(float(roi[2])) * a["spatial_scale"] - 0.5
    x2 = (_round(float(roi[3])) + 1.0) * a["spatial_scale"] - 0.5
    y2 = (_round(float(roi[4])) + 1.0) * a["spatial_scale"] - 0.5
    rw, rh = max(x2 - x1, 0.1), max(y2 - y1, 0.1)
    bh, bw = rh / pooled, rw / pooled
    part = a["part_size"]
    pi, pj = int(math.floor(i / pooled * part)), int(math.floor(j / pooled * part))
    if trans_r is None:
        tx = ty = np.zeros(len(chans_class))
    else:   # per output channel, its class's offsets
        tx = trans_r[2 * chans_class, pi, pj] * a["trans_std"]
        ty = trans_r[2 * chans_class + 1, pi, pj] * a["trans_std"]
    grid = np.arange(s)
    xs = (j * bw + x1 + tx * rw)[:, None, None] + (grid * (bw / s))[None, None, :]
    ys = (i * bh + y1 + ty * rh)[:, None, None] + (grid * (bh / s))[None, :, None]
    xs, ys = np.broadcast_arrays(xs, ys)
    xs, ys = xs.reshape(len(tx), -1), ys.reshape(len(tx), -1)
    valid = (xs >= -0.5) & (xs <= w - 0.5) & (ys >= -0.5) & (ys <= h - 0.5)
    return (np.clip(ys, 0.0, h - 1.0), np.clip(xs, 0.0, w - 1.0), valid, (pi, pj), rw, rh)


def _deform_bins(data, rois, trans, a):
    """Yield (r, batch, i, j, input channels, classes, samples) of every bin."""
    n, c, h, w = data.shape
    od, pooled, group = a["output_dim"], a["pooled_size"], a["group_size"]
    n_cls = 1 if trans is None else trans.shape[1] // 2
    cls = np.arange(od) // (od // n_cls)
    for r, roi in enumerate(rois):
        b = _batch(roi, n)
        for i in range(pooled):
            for j in range(pooled):
                chans = _ps_channels(od, group, pooled, i, j)
                yield r, b, i, j, chans, cls, _deform_samples(
                    roi, None if trans is None else trans[r], a, h, w, pooled, i, j, cls)


def _corners(ys, xs):
    y0, x0 = np.floor(ys).astype(np.int64), np.floor(xs).astype(np.int64)
    y1, x1 = np.ceil(ys).astype(np.int64), np.ceil(xs).astype(np.int64)
    return y0, x0, y1, x1, ys - y0, xs - x0


def deformable_psroi_forward(data, rois, trans, a):
    """(R, output_dim, P, P): each bin averages the bilinear samples of its position-
    sensitive channel on a sample_per_part grid shifted by the ROI's learned offsets."""
    od, p = a["output_dim"], a["pooled_size"]
    out = np.zeros((rois.shape[0], od, p, p))
    x = data.astype(np.float64)
    for r, b, i, j, chans, _, (ys, xs, valid, _, _, _) in _deform_bins(data, rois, trans, a):
        y0, x0, y1, x1, dy, dx = _corners(ys, xs)
        plane = x[b][chans[:, None], :, :]   # (K, 1, H, W)
        k = np.arange(od)[:, None]
        v = ((1 - dx) * (1 - dy) * plane[k, 0, y0, x0] + (1 - dx) * dy * plane[k, 0, y1, x0]
             + dx * (1 - dy) * plane[k, 0, y0, x1] + dx * dy * plane[k, 0, y1, x1])
        cnt = valid.sum(axis=1)
        out[r, :, i, j] = np.where(cnt > 0, (v * valid).sum(axis=1) / np.maximum(cnt, 1), 0)
    return out.astype(data.dtype)


def deformable_psroi_backward(dy_out, data, rois, trans, a):
    """(d data, d trans or None): bilinear weights back to the data; the offsets' gradient
    through the samples' slopes, scaled by trans_std and the ROI size (as MXNet)."""
    x = data.astype(np.float64)
    g = np.zeros(data.shape)
    gt = None if trans is None else np.zeros(trans.shape)
    od = a["output_dim"]
    k = np.arange(od)[:, None]
    for r, b, i, j, chans, cls, (ys, xs, valid, (pi, pj), rw, rh) in _deform_bins(
            data, rois, trans, a):
        cnt = valid.sum(axis=1)
        share = np.where(cnt > 0, dy_out[r, :, i, j] / np.maximum(cnt, 1), 0)[:, None] * valid
        y0, x0, y1, x1, dy, dx = _corners(ys, xs)
        cc = np.broadcast_to(chans[:, None], ys.shape)
        for yy, xx, wt in ((y0, x0, (1 - dx) * (1 - dy)), (y1, x0, (1 - dx) * dy),
                           (y0, x1, dx * (1 - dy)), (y1, x1, dx * dy)):
            np.add.at(g[b], (cc, yy, xx), share * wt)
        if gt is not None:
            pl = x[b][chans[:, None], :, :]
            u00, u01 = pl[k, 0, y0, x0], pl[k, 0, y1, x0]
            u10, u11 = pl[k, 0, y0, x1], pl[k, 0, y1, x1]
            gx = ((u11 - u01) * dy + (u10 - u00) * (1 - dy)) * share
            gy = ((u11 - u10) * dx + (u01 - u00) * (1 - dx)) * share
            std = a["trans_std"]
            np.add.at(gt[r], (2 * cls, pi, pj), gx.sum(axis=1) * std * rw)
            np.add.at(gt[r], (2 * cls + 1, pi, pj), gy.sum(axis=1) * std * rh)
    return g.astype(data.dtype), None if gt is None else gt.astype(trans.dtype)
