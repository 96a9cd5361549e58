"""Region-of-interest pooling kernels (dense): ROIAlign and its gradient.

ROIAlign averages bilinear samples on a regular grid in each output bin. Sampling is
separable, so per ROI the output is ``Ay @ data[c] @ Ax.T`` with ``Ay`` (PH, H) and ``Ax``
(PW, W) the bin-averaged interpolation weights; the gradient is ``Ay.T @ dy @ Ax``.
rois are (R, 5) rows [batch index, x1, y1, x2, y2] in image coordinates; RROIAlign's are
(R, 6) rows [batch index, center x, center y, width, height, angle in degrees], whose
rotated sampling grid is not separable: its samples are gathered point by point.
"""
from __future__ import annotations

import math

import numpy as np

from .roi_pool import _batch

__all__ = ["roi_align_forward", "roi_align_backward", "rroi_align_forward"]


def _axis_weights(start, size, bins, grid, length):
    """(bins, length) weights: bin ``p`` averages ``grid`` bilinear samples along one axis
    (samples beyond (-1, length) read 0; the last pixel is clamped, as MXNet)."""
    out = np.zeros((bins, length))
    step = size / bins
    for p in range(bins):
        for i in range(grid):
            v = start + p * step + (i + 0.5) * step / grid
            if v < -1.0 or v > length:
                continue
            v = max(v, 0.0)
            lo = int(v)
            if lo >= length - 1:
                out[p, length - 1] += 1.0
                continue
            frac = v - lo
            out[p, lo] += 1.0 - frac
            out[p, lo + 1] += frac
    return out / grid


def _roi_weights(roi, a, n, h, w):
    """(batch index, Ay, Ax) of one ROI (its batch index checked against the n images)."""
    ph, pw = a.pooled_size
    offset = 0.5 if a.aligned else 0.0
    x1, y1, x2, y2 = (float(v) * a.spatial_scale - offset for v in roi[1:5])
    rw, rh = x2 - x1, y2 - y1
    if not a.aligned:  # MXNet: malformed ROIs become 1x1
        rw, rh = max(rw, 1.0), max(rh, 1.0)
    gh = a.sample_ratio if a.sample_ratio > 0 else int(math.ceil(rh / ph))
    gw = a.sample_ratio if a.sample_ratio > 0 else int(math.ceil(rw / pw))
    return (_batch(roi, n), _axis_weights(y1, rh, ph, max(gh, 1), h),
            _axis_weights(x1, rw, pw, max(gw, 1), w))


def roi_align_forward(a, data, rois):
    """(R, C_out, PH, PW); position-sensitive: bin (ph, pw) of channel c reads input
    channel c*PH*PW + ph*PW + pw."""
    n, c, h, w = data.shape
    ph, pw = a.pooled_size
    c_out = c // (ph * pw) if a.position_sensitive else c
    out = np.zeros((rois.shape[0], c_out, ph, pw))
    x = data.astype(np.float64)
    for r, roi in enumerate(rois):
        b, ay, ax = _roi_weights(roi, a, n, h, w)
        if a.position_sensitive:
            d = x[b, :c_out * ph * pw].reshape(c_out, ph, pw, h, w)
            out[r] = np.einsum("ph,cpqhw,qw->cpq", ay, d, ax, optimize=True)
        else:
            out[r] = ay @ x[b] @ ax.T
    return out.astype(data.dtype)


def roi_align_backward(a, dy, data_shape, rois, dtype):
    """Gradient for the data (the ROI coordinates get none, as in MXNet)."""
    n, c, h, w = data_shape
    ph, pw = a.pooled_size
    g = np.zeros(data_shape)
    dy = dy.astype(np.float64)
    for r, roi in enumerate(rois):
        b, ay, ax = _roi_weights(roi, a, n, h, w)
        if a.position_sensitive:
            c_out = dy.shape[1]
            part = np.einsum("ph,cpq,qw->cpqhw", ay, dy[r], ax, optimize=True)
            g[b, :c_out * ph * pw] += part.reshape(c_out * ph * pw, h, w)
        else:
            g[b] += ay.T @ dy[r] @ ax
    return g.astype(dtype)


def _bilinear_points(plane, y, x, h, w):
    """Bilinear samples of (C, H*W) planes at points (y, x) (1-D arrays): (C, points);
    points beyond (-1, H) x (-1, W) read 0, the last row/column is clamped (ROIAlign's)."""
    out_of = (y < -1.0) | (y > h) | (x < -1.0) | (x > w)
    y, x = np.maximum(y, 0.0), np.maximum(x, 0.0)
    y0, x0 = np.floor(y).astype(np.int64), np.floor(x).astype(np.int64)
    cy, cx = y0 >= h - 1, x0 >= w - 1
    y0, x0 = np.where(cy, h - 1, y0), np.where(cx, w - 1, x0)
    ly, lx = np.where(cy, 0.0, y - y0), np.where(cx, 0.0, x - x0)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    val = (plane[:, y0 * w + x0] * ((1 - ly) * (1 - lx)) + plane[:, y0 * w + x1] * ((1 - ly) * lx)
           + plane[:, y1 * w + x0] * (ly * (1 - lx)) + plane[:, y1 * w + x1] * (ly * lx))
    return np.where(out_of, 0.0, val)


def rroi_align_forward(data, rois, pooled_size, spatial_scale, sampling_ratio):
    """(R, C, PH, PW): ROIAlign over rotated boxes (no gradient, as in MXNet)."""
    n, c, h, w = data.shape
    ph, pw = pooled_size
    out = np.zeros((rois.shape[0], c, ph, pw))
    planes = data.astype(np.float64).reshape(n, c, h * w)
    for r, roi in enumerate(rois.astype(np.float64)):
        cx, cy, rw, rh = roi[1:5] * spatial_scale
        theta = roi[5] * math.pi / 180.0
        rw, rh = max(rw, 1.0), max(rh, 1.0)
        gh = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rh / ph))
        gw = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rw / pw))
        gh, gw = max(gh, 1), max(gw, 1)
        yy = -rh / 2 + (np.arange(ph * gh) + 0.5) * (rh / ph) / gh   # bins' sample rows
        xx = -rw / 2 + (np.arange(pw * gw) + 0.5) * (rw / pw) / gw
        gy, gx = np.meshgrid(yy, xx, indexing="ij")
        cos, sin = math.cos(theta), math.sin(theta)
        x = gx * cos + gy * sin + cx
        y = gy * cos - gx * sin + cy
        v = _bilinear_points(planes[_batch(roi, n)], y.ravel(), x.ravel(), h, w)
        out[r] = v.reshape(c, ph, gh, pw, gw).mean(axis=(2, 4))
    return out.astype(data.dtype)
