"""Region-of-interest pooling kernels (dense): ROIAlign and its gradient.

ROIAlign averages bilinear samples on a regular grid in each output bin. Sampling is
separable, so per ROI the output is ``Ay @ data[c] @ Ax.T`` with ``Ay`` (PH, H) and ``Ax``
(PW, W) the bin-averaged interpolation weights; the gradient is ``Ay.T @ dy @ Ax``.
rois are (R, 5) rows [batch index, x1, y1, x2, y2] in image coordinates.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["roi_align_forward", "roi_align_backward"]


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


def _roi_weights(roi, a, h, w):
    """(batch index, Ay, Ax) of one ROI."""
    ph, pw = a.pooled_size
    offset = 0.5 if a.aligned else 0.0
    x1, y1, x2, y2 = (float(v) * a.spatial_scale - offset for v in roi[1:5])
    rw, rh = x2 - x1, y2 - y1
    if not a.aligned:  # MXNet: malformed ROIs become 1x1
        rw, rh = max(rw, 1.0), max(rh, 1.0)
    gh = a.sample_ratio if a.sample_ratio > 0 else int(math.ceil(rh / ph))
    gw = a.sample_ratio if a.sample_ratio > 0 else int(math.ceil(rw / pw))
    return (int(roi[0]), _axis_weights(y1, rh, ph, max(gh, 1), h),
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
        b, ay, ax = _roi_weights(roi, a, h, w)
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
        b, ay, ax = _roi_weights(roi, a, h, w)
        if a.position_sensitive:
            c_out = dy.shape[1]
            part = np.einsum("ph,cpq,qw->cpqhw", ay, dy[r], ax, optimize=True)
            g[b, :c_out * ph * pw] += part.reshape(c_out * ph * pw, h, w)
        else:
            g[b] += ay.T @ dy[r] @ ax
    return g.astype(dtype)
