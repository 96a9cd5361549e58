"""Dense 3-D Convolution (MXNet 1.x semantics) as a sum of 2-D convolutions over depth taps.

Output depth plane od of kernel tap kd reads input plane od*sd - pd + kd*dd (zero outside
the volume), so Conv3D(x, w) = sum over kd of Conv2D(planes read by tap kd, w[:, :, kd])
with the (N * OD) plane images batched into one 2-D call on kernels/conv.py's GEMM kernels.
Layouts: data NCDHW, weight (F, C/G, kd, kh, kw); ``layout='NDHWC'`` takes channel-last
data and (F, kd, kh, kw, C/G) weights. Pure functions: inputs are never modified.
"""
from __future__ import annotations

import numpy as np

from ..base import ShapeError
from .conv import conv_backward, conv_forward, conv_out_size

__all__ = ["conv3d_forward", "conv3d_backward"]


def _channel_first(x, w, layout):
    """NCDHW data and (F, C/G, kd, kh, kw) weights from either layout."""
    if layout == "NDHWC":
        return x.transpose(0, 4, 1, 2, 3), w.transpose(0, 4, 1, 2, 3)
    if layout not in (None, "NCDHW"):
        raise ShapeError(f"unsupported 3-D layout {layout!r}")
    return x, w


def _depth_geometry(x, w, stride, pad, dilate):
    if x.ndim != 5 or w.ndim != 5:
        raise ShapeError(f"3-D convolution needs 5-D data and weight, got {x.shape} and "
                         f"{w.shape}")
    sd, pd, dd = stride[0], pad[0], dilate[0]
    od = conv_out_size(x.shape[2], w.shape[2], sd, pd, dd)
    if od <= 0:
        raise ShapeError(f"convolution output would be empty: data {x.shape}, kernel "
                         f"{w.shape}")
    return od, sd, pd, dd


def _tap(x, k, od, sd, pd, dd):
    """(input planes, output planes) read by depth tap k: valid pairs only."""
    src = np.arange(od) * sd - pd + k * dd
    ok = (src >= 0) & (src < x.shape[2])
    return src[ok], np.nonzero(ok)[0]


def _planes(x, src, dst, od):
    """(N * OD, C, H, W) plane images of one tap: x's planes ``src`` at ``dst``, zeros
    elsewhere."""
    n, c, _, h, w = x.shape
    out = np.zeros((n, od, c, h, w), dtype=x.dtype)
    out[:, dst] = x[:, :, src].transpose(0, 2, 1, 3, 4)
    return out.reshape(n * od, c, h, w)


def conv3d_forward(x, w, b, stride, pad, dilate, num_group=1, layout=None):
    """y = Convolution(x, w, b) for 5-D data; stride/pad/dilate are 3-tuples."""
    x, w = _channel_first(x, w, layout)
    od, sd, pd, dd = _depth_geometry(x, w, stride, pad, dilate)
    n, f = x.shape[0], w.shape[0]
    y = None
    for k in range(w.shape[2]):
        src, dst = _tap(x, k, od, sd, pd, dd)
        if len(src) == 0:
            continue
        part = conv_forward(_planes(x, src, dst, od), w[:, :, k], None, stride[1:], pad[1:],
                            dilate[1:], num_group)
        y = part if y is None else np.add(y, part, out=y)
    if y is None:  # every tap reads padding only
        oh = conv_out_size(x.shape[3], w.shape[3], stride[1], pad[1], dilate[1])
        ow = conv_out_size(x.shape[4], w.shape[4], stride[2], pad[2], dilate[2])
        y = np.zeros((n * od, f, oh, ow), dtype=np.result_type(x, w))
    y = y.reshape((n, od) + y.shape[1:]).transpose(0, 2, 1, 3, 4)
    if b is not None:
        y = y + np.asarray(b, dtype=y.dtype).reshape(1, f, 1, 1, 1)
    if layout == "NDHWC":
        y = y.transpose(0, 2, 3, 4, 1)
    return np.ascontiguousarray(y)


def conv3d_backward(x, w, dy, stride, pad, dilate, num_group=1, need_bias=True, layout=None):
    """Gradients of conv3d_forward: (dx like x, dw like w, db (F,) or None)."""
    if layout == "NDHWC":
        dy = dy.transpose(0, 4, 1, 2, 3)
    x, w = _channel_first(x, w, layout)
    od, sd, pd, dd = _depth_geometry(x, w, stride, pad, dilate)
    n, f = x.shape[0], w.shape[0]
    if dy.shape[:3] != (n, f, od):
        raise ShapeError(f"dy shape {dy.shape} does not match the convolution output")
    dy2 = np.ascontiguousarray(dy.transpose(0, 2, 1, 3, 4)).reshape((n * od, f) + dy.shape[3:])
    dt = np.result_type(x, w, dy)
    dx = np.zeros(x.shape, dtype=dt)
    dw = np.zeros(w.shape, dtype=dt)
    for k in range(w.shape[2]):
        src, dst = _tap(x, k, od, sd, pd, dd)
        if len(src) == 0:
            continue
        dxk, dwk, _ = conv_backward(_planes(x, src, dst, od), w[:, :, k], dy2, stride[1:],
                                    pad[1:], dilate[1:], num_group, need_bias=False)
        dw[:, :, k] = dwk
        # one tap reads each input plane at most once, so the fancy-index add is exact
        dx[:, :, src] += dxk.reshape((n, od) + dxk.shape[1:])[:, dst].transpose(0, 2, 1, 3, 4)
    db = dy.sum(axis=(0, 2, 3, 4)) if need_bias else None
    if layout == "NDHWC":
        dx, dw = dx.transpose(0, 2, 3, 4, 1), dw.transpose(0, 2, 3, 4, 1)
    return np.ascontiguousarray(dx), np.ascontiguousarray(dw), db
