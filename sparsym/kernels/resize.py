"""Bilinear resizing kernels (dense, NCHW), forward and gradient.

Bilinear interpolation is separable: the output is ``Ay @ x @ Ax.T`` per plane with
``Ay`` (out_h, in_h) and ``Ax`` (out_w, in_w) holding at most two non-zero weights per row;
the gradient is ``Ay.T @ dy @ Ax``. Source coordinates follow MXNet's BilinearResize2D:
with ``align_corners`` the corners map onto each other (src = dst * (in-1)/(out-1)),
without it pixel centres do (src = (dst + 0.5) * in/out - 0.5, clamped at 0); a
one-pixel output reads the first pixel either way.
"""
from __future__ import annotations

import numpy as np

__all__ = ["interp_matrix", "resize_forward", "resize_backward"]


def interp_matrix(n_in, n_out, align_corners, dtype=np.float64):
    """(n_out, n_in) linear interpolation weights along one axis."""
    m = np.zeros((n_out, n_in), dtype)
    dst = np.arange(n_out, dtype=np.float64)
    if n_out == 1:   # MXNet reads the first pixel, aligned or not
        src = dst
    elif align_corners:
        src = dst * ((n_in - 1) / (n_out - 1))
    else:
        src = np.maximum((dst + 0.5) * (n_in / n_out) - 0.5, 0.0)
    lo = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    frac = src - lo
    hi = np.minimum(lo + 1, n_in - 1)   # the last pixel repeats (MXNet's h1p = 0)
    rows = np.arange(n_out)
    np.add.at(m, (rows, lo), 1.0 - frac)
    np.add.at(m, (rows, hi), frac)
    return m


def _work(dtype):
    return np.float64 if dtype == np.float64 else np.float32


def resize_forward(x, out_h, out_w, align_corners):
    """(N, C, out_h, out_w) in x's dtype."""
    wd = _work(x.dtype)
    ay = interp_matrix(x.shape[2], out_h, align_corners, wd)
    ax = interp_matrix(x.shape[3], out_w, align_corners, wd)
    y = np.matmul(np.matmul(ay, x.astype(wd, copy=False)), ax.T)
    return y.astype(x.dtype, copy=False)


def resize_backward(dy, in_h, in_w, align_corners, dtype):
    """Gradient for the (N, C, in_h, in_w) input."""
    wd = _work(np.dtype(dtype))
    ay = interp_matrix(in_h, dy.shape[2], align_corners, wd)
    ax = interp_matrix(in_w, dy.shape[3], align_corners, wd)
    g = np.matmul(np.matmul(ay.T, dy.astype(wd, copy=False)), ax)
    return g.astype(dtype, copy=False)
