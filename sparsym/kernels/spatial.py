"""Bilinear sampling and sampling grids (BilinearSampler, GridGenerator, SpatialTransformer).

Grids hold normalised source coordinates in [-1, 1] (channel 0: x along the width, channel
1: y along the height), -1 and 1 being the centres of the first and last pixels. Samples
outside the source read as zero (MXNet's zero padding). Dense C-ordered float inputs; every
result is a new array.
"""
from __future__ import annotations

import numpy as np


def affine_grid(theta, height, width):
    """(N, 6) affine matrices -> (N, 2, height, width) normalised source grid."""
    n = theta.shape[0]
    ys = np.linspace(-1.0, 1.0, height) if height > 1 else np.array([-1.0])
    xs = np.linspace(-1.0, 1.0, width) if width > 1 else np.array([-1.0])
    gy, gx = np.meshgrid(ys, xs, indexing="ij")
    base = np.stack([gx.ravel(), gy.ravel(), np.ones(gx.size)]).astype(theta.dtype)
    return (theta.reshape(n, 2, 3) @ base).reshape(n, 2, height, width)


def affine_grid_backward(dgrid, height, width):
    """Gradient of affine_grid with respect to theta (N, 6)."""
    n = dgrid.shape[0]
    ys = np.linspace(-1.0, 1.0, height) if height > 1 else np.array([-1.0])
    xs = np.linspace(-1.0, 1.0, width) if width > 1 else np.array([-1.0])
    gy, gx = np.meshgrid(ys, xs, indexing="ij")
    base = np.stack([gx.ravel(), gy.ravel(), np.ones(gx.size)]).astype(dgrid.dtype)
    return (dgrid.reshape(n, 2, -1) @ base.T).reshape(n, 6)


def _corners(data, grid):
    """Pixel coordinates, corner indices, weights and zero-padded corner values."""
    n, c, h, w = data.shape
    x = (grid[:, 0].astype(np.float64) + 1) * (w - 1) / 2
    y = (grid[:, 1].astype(np.float64) + 1) * (h - 1) / 2
    x0, y0 = np.floor(x).astype(np.int64), np.floor(y).astype(np.int64)
    a, b = x - x0, y - y0
    nidx = np.arange(n).reshape(n, 1, 1)
    vals = []
    for dy in (0, 1):
        for dx in (0, 1):
            xi, yi = x0 + dx, y0 + dy
            ok = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
            v = data[nidx, :, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]  # (N, Ho, Wo, C)
            vals.append(np.moveaxis(v, -1, 1) * ok[:, None])
    return x0, y0, a, b, vals


def bilinear_sample(data, grid):
    """Sample data (N, C, H, W) at grid (N, 2, Ho, Wo) -> (N, C, Ho, Wo)."""
    _, _, a, b, (tl, tr, bl, br) = _corners(data, grid)
    a, b = a[:, None], b[:, None]
    out = (1 - a) * (1 - b) * tl + a * (1 - b) * tr + (1 - a) * b * bl + a * b * br
    return out.astype(data.dtype, copy=False)


def bilinear_sample_backward(dout, data, grid):
    """Gradients (ddata, dgrid) of bilinear_sample for the output gradient dout."""
    n, c, h, w = data.shape
    x0, y0, a, b, (tl, tr, bl, br) = _corners(data, grid)
    g = dout.astype(np.float64)
    a4, b4 = a[:, None], b[:, None]
    weights = ((1 - a4) * (1 - b4), a4 * (1 - b4), (1 - a4) * b4, a4 * b4)
    flat = np.zeros(n * c * h * w)
    base = (np.arange(n).reshape(n, 1, 1, 1) * c + np.arange(c).reshape(1, c, 1, 1)) * (h * w)
    for k, (dy, dx) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
        xi, yi = x0 + dx, y0 + dy
        ok = ((xi >= 0) & (xi < w) & (yi >= 0) & (yi < h))[:, None]
        idx = base + (np.clip(yi, 0, h - 1) * w + np.clip(xi, 0, w - 1))[:, None]
        wt = np.broadcast_to(g * weights[k] * ok, idx.shape)
        flat += np.bincount(idx.ravel(), weights=wt.ravel(), minlength=flat.size)
    ddata = flat.reshape(data.shape).astype(data.dtype, copy=False)
    dx_ = (g * ((1 - b4) * (tr - tl) + b4 * (br - bl))).sum(axis=1) * ((w - 1) / 2)
    dy_ = (g * ((1 - a4) * (bl - tl) + a4 * (br - tr))).sum(axis=1) * ((h - 1) / 2)
    return ddata, np.stack([dx_, dy_], axis=1).astype(grid.dtype, copy=False)
