"""Correlation kernels (FlowNet's correlation layer), dense, forward and gradient.

Output channel ``p * G + o`` (G = 2 * (max_displacement // stride2) + 1) at (i, j) compares
the k x k patch of padded data1 whose top-left corner is (i*stride1 + max_displacement,
j*stride1 + max_displacement) with the patch of padded data2 displaced by
((p - R) * stride2, (o - R) * stride2): the channel-summed product (``is_multiply``) or
absolute difference, divided by k*k*C. Per displacement the channel sum is one
elementwise pass over the whole map and the patch sum a strided box filter, so the cost
is G*G full-map passes rather than a loop per output point.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["correlation_geometry", "correlation_forward", "correlation_backward"]


def correlation_geometry(h, w, kernel_size, max_displacement, stride1, stride2, pad_size):
    """(top height, top width, grid radius, grid width) as MXNet sizes them (ceil)."""
    border = max_displacement + (kernel_size - 1) // 2
    th = -(-(h + 2 * pad_size - 2 * border) // stride1)
    tw = -(-(w + 2 * pad_size - 2 * border) // stride1)
    radius = max_displacement // stride2
    return th, tw, radius, 2 * radius + 1


def _work_dtype(dtype):
    return np.float64 if dtype == np.float64 else np.float32


def _setup(a, x1, x2):
    n, c, h, w = x1.shape
    th, tw, radius, grid = correlation_geometry(h, w, a.kernel_size, a.max_displacement,
                                                a.stride1, a.stride2, a.pad_size)
    p = a.pad_size
    wd = _work_dtype(x1.dtype)
    pads = ((0, 0), (0, 0), (p, p), (p, p))
    return (np.pad(x1.astype(wd), pads), np.pad(x2.astype(wd), pads), th, tw, radius, grid)


def _windows(a, th, tw, radius, grid):
    """Per displacement channel: (channel, slices of the data1 region, of the data2 region)."""
    md, k, s1 = a.max_displacement, a.kernel_size, a.stride1
    lh, lw = (th - 1) * s1 + k, (tw - 1) * s1 + k
    for ch in range(grid * grid):
        dy = (ch // grid - radius) * a.stride2
        dx = (ch % grid - radius) * a.stride2
        yield (ch, (slice(None), slice(None), slice(md, md + lh), slice(md, md + lw)),
               (slice(None), slice(None), slice(md + dy, md + dy + lh),
                slice(md + dx, md + dx + lw)))


def correlation_forward(a, x1, x2):
    """(N, G*G, top height, top width) in the inputs' dtype."""
    p1, p2, th, tw, radius, grid = _setup(a, x1, x2)
    n, c = x1.shape[:2]
    k, s1 = a.kernel_size, a.stride1
    out = np.empty((n, grid * grid, th, tw), p1.dtype)
    for ch, r1, r2 in _windows(a, th, tw, radius, grid):
        u, v = p1[r1], p2[r2]
        m = (u * v).sum(1) if a.is_multiply else np.abs(u - v).sum(1)
        box = sliding_window_view(m, (k, k), axis=(1, 2))[:, ::s1, ::s1]
        out[:, ch] = box.sum(axis=(-2, -1))
    out /= k * k * c
    return out.astype(x1.dtype)


def correlation_backward(a, dy, x1, x2):
    """(d data1, d data2); the absolute difference's slope is +1 where data1 >= data2."""
    p1, p2, th, tw, radius, grid = _setup(a, x1, x2)
    n, c, h, w = x1.shape
    k, s1, pad = a.kernel_size, a.stride1, a.pad_size
    g1, g2 = np.zeros_like(p1), np.zeros_like(p2)
    dy = dy.astype(p1.dtype) / (k * k * c)
    lh, lw = (th - 1) * s1 + k, (tw - 1) * s1 + k
    spread = np.empty((n, lh, lw), p1.dtype)
    for ch, r1, r2 in _windows(a, th, tw, radius, grid):
        spread[:] = 0   # each output's gradient reaches every point of its k x k patch
        for i in range(k):
            for j in range(k):
                spread[:, i:i + (th - 1) * s1 + 1:s1, j:j + (tw - 1) * s1 + 1:s1] += dy[:, ch]
        u, v = p1[r1], p2[r2]
        s = spread[:, None]
        if a.is_multiply:
            g1[r1] += s * v
            g2[r2] += s * u
        else:
            sgn = np.where(u >= v, s, -s)
            g1[r1] += sgn
            g2[r2] -= sgn
    crop = (slice(None), slice(None), slice(pad, pad + h), slice(pad, pad + w))
    return g1[crop].astype(x1.dtype), g2[crop].astype(x2.dtype)
