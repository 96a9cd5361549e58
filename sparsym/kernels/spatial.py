"""Bilinear sampling and sampling grids (BilinearSampler, GridGenerator, SpatialTransformer).

Grids hold normalised source coordinates in [-1, 1] (channel 0: x along the width, channel
1: y along the height), -1 and 1 being the centres of the first and last pixels. Samples
outside the source read as zero (MXNet's zero padding). Dense C-ordered float inputs; every
result is a new array.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit


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


@njit(cache=True, nogil=True)
def _corner(grid, i, p, q, h, w):
    """Top-left pixel (x0, y0) and fractions (a, b) of grid point (p, q) of image i, the
    grid's [-1, 1] coordinates mapped onto the (h, w) pixel centres."""
    x = (np.float64(grid[i, 0, p, q]) + 1.0) * (w - 1) / 2.0
    y = (np.float64(grid[i, 1, p, q]) + 1.0) * (h - 1) / 2.0
    fx, fy = math.floor(x), math.floor(y)
    return int(fx), int(fy), x - fx, y - fy


@njit(cache=True, nogil=True)
def _sample_kernel(data, grid, out):
    """out[i, :, p, q] = bilinear read of data[i] at grid[i, :, p, q] (zero outside)."""
    n, c, h, w = data.shape
    for i in range(n):
        for p in range(grid.shape[2]):
            for q in range(grid.shape[3]):
                x0, y0, a, b = _corner(grid, i, p, q, h, w)
                wts = ((1 - a) * (1 - b), a * (1 - b), (1 - a) * b, a * b)
                for k in range(4):
                    yi, xi = y0 + k // 2, x0 + k % 2
                    if 0 <= yi < h and 0 <= xi < w:
                        wk = wts[k]
                        for ch in range(c):
                            out[i, ch, p, q] += wk * data[i, ch, yi, xi]


@njit(cache=True, nogil=True)
def _sample_bwd_kernel(dout, data, grid, ddata, dgrid):
    """ddata (float64, zeroed) and dgrid of _sample_kernel for the output gradient dout."""
    n, c, h, w = data.shape
    for i in range(n):
        for p in range(grid.shape[2]):
            for q in range(grid.shape[3]):
                x0, y0, a, b = _corner(grid, i, p, q, h, w)
                in_tl = 0 <= y0 < h and 0 <= x0 < w
                in_tr = 0 <= y0 < h and 0 <= x0 + 1 < w
                in_bl = 0 <= y0 + 1 < h and 0 <= x0 < w
                in_br = 0 <= y0 + 1 < h and 0 <= x0 + 1 < w
                gx = 0.0
                gy = 0.0
                for ch in range(c):
                    g = np.float64(dout[i, ch, p, q])
                    tl = np.float64(data[i, ch, y0, x0]) if in_tl else 0.0
                    tr = np.float64(data[i, ch, y0, x0 + 1]) if in_tr else 0.0
                    bl = np.float64(data[i, ch, y0 + 1, x0]) if in_bl else 0.0
                    br = np.float64(data[i, ch, y0 + 1, x0 + 1]) if in_br else 0.0
                    if in_tl:
                        ddata[i, ch, y0, x0] += g * (1 - a) * (1 - b)
                    if in_tr:
                        ddata[i, ch, y0, x0 + 1] += g * a * (1 - b)
                    if in_bl:
                        ddata[i, ch, y0 + 1, x0] += g * (1 - a) * b
                    if in_br:
                        ddata[i, ch, y0 + 1, x0 + 1] += g * a * b
                    gx += g * ((1 - b) * (tr - tl) + b * (br - bl))
                    gy += g * ((1 - a) * (bl - tl) + a * (br - tr))
                dgrid[i, 0, p, q] = gx * ((w - 1) / 2.0)
                dgrid[i, 1, p, q] = gy * ((h - 1) / 2.0)


def _c(x):
    """C-ordered, float16 read as float32 (Numba has no half arithmetic)."""
    return np.ascontiguousarray(x, dtype=np.float32 if x.dtype == np.float16 else None)


def bilinear_sample(data, grid):
    """Sample data (N, C, H, W) at grid (N, 2, Ho, Wo) -> (N, C, Ho, Wo) (compiled: the
    NumPy gathers of four corners over every channel were ~5x MXNet's time)."""
    n, c = data.shape[:2]
    out = np.zeros((n, c) + grid.shape[2:], dtype=np.float64)
    _sample_kernel(_c(data), _c(grid), out)
    return out.astype(data.dtype, copy=False)


def bilinear_sample_backward(dout, data, grid):
    """Gradients (ddata, dgrid) of bilinear_sample for the output gradient dout."""
    ddata = np.zeros(data.shape, dtype=np.float64)
    dgrid = np.empty(grid.shape, dtype=np.float64)
    _sample_bwd_kernel(_c(dout), _c(data), _c(grid), ddata, dgrid)
    return ddata.astype(data.dtype, copy=False), dgrid.astype(grid.dtype, copy=False)
