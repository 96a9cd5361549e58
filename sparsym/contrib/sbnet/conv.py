"""Fused block-sparse convolution: tile im2col -> GEMM -> masked scatter, and its gradient.

Semantics (independent of the tile size and of the sparse/dense choice):

    y = (conv(x, w) + b) * m_out

where ``m_out[n, oy, ox]`` is 1 when any mask pixel in the receptive field of output
(oy, ox) exceeds ``tol`` and 0 otherwise.  With ``tol = 0`` and a mask that is nonzero
wherever ``x`` is, every output that can differ from the bias is computed exactly.

Layouts: 'NHWC' (weights (F, kh, kw, C)) and 'NCHW' (weights (F, C, kh, kw)), as
MXNet's Convolution.  Arrays are float32 or float64; inputs are cast to the data dtype.
"""
from __future__ import annotations

import threading

import numpy as np

from ...base import ShapeError
from ...kernels.conv import conv_backward, conv_forward
from . import _kernels as K
from .geometry import ConvGeom, tiles_of

# Tiles are processed in chunks whose im2col operand stays in L2 (2 MB per core here).
CHUNK_BYTES = 1 << 21
_tls = threading.local()


def workspace(shape, dtype, slot):
    """Per-thread scratch buffer reused across calls (never returned to callers)."""
    dtype = np.dtype(dtype)
    need = int(np.prod(shape)) * dtype.itemsize
    bufs = getattr(_tls, "bufs", None)
    if bufs is None:
        bufs = _tls.bufs = {}
    buf = bufs.get(slot)
    if buf is None or buf.nbytes < need:
        buf = np.empty(max(need, 64), dtype=np.uint8)
        bufs[slot] = buf
    off = (-buf.ctypes.data) % dtype.itemsize
    return buf[off:off + need].view(dtype).reshape(shape)


def _chunk(tile, row_len, itemsize):
    return max(1, CHUNK_BYTES // max(1, tile[0] * tile[1] * row_len * itemsize))


def _no_bias(dtype):
    return np.empty(0, dtype=dtype)


def check_inputs(x, w, b, layout):
    """Validate ranks/channels and cast weight and bias to the data dtype."""
    if x.ndim != 4:
        raise ShapeError(f"block-sparse convolution expects 4-D data, got shape {x.shape}")
    dt = x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float32)
    x = np.ascontiguousarray(x, dtype=dt)
    w = np.ascontiguousarray(w, dtype=dt)
    c = x.shape[3] if layout == "NHWC" else x.shape[1]
    wc = w.shape[3] if layout == "NHWC" else w.shape[1]
    if w.ndim != 4 or wc != c:
        raise ShapeError(f"weight shape {w.shape} does not match data {x.shape} "
                         f"(layout {layout})")
    if b is not None:
        b = np.ascontiguousarray(b, dtype=dt).reshape(-1)
        if b.shape[0] != w.shape[0]:
            raise ShapeError(f"bias shape {b.shape} does not match {w.shape[0]} filters")
    return x, w, b


def out_shape(x_shape, n_filter, geom: ConvGeom, layout):
    n = x_shape[0]
    return (n,) + geom.out + (n_filter,) if layout == "NHWC" else (n, n_filter) + geom.out


# --------------------------------------------------------------------------- sparse path
def sparse_forward(x, w, b, mo, geom: ConvGeom, tile, layout, idx=None, y=None, add=False):
    """Masked conv computed tile by tile; y (zeros unless given) receives the outputs.

    ``add=True`` accumulates into a given ``y`` (the residual form y = base + conv).
    """
    if idx is None:
        idx, _ = tiles_of(mo, tile)
    f = w.shape[0]
    if y is None:
        y = np.zeros(out_shape(x.shape, f, geom, layout), dtype=x.dtype)
    m = idx.shape[0]
    if m == 0:
        return y
    (kh, kw), (sh, sw), (ph, pw) = geom.kernel, geom.stride, geom.pad
    boh, bow = tile
    bias = b if b is not None else _no_bias(x.dtype)
    wm = w.reshape(f, -1)
    row_len = wm.shape[1]
    per = _chunk(tile, row_len, x.itemsize)
    cl = layout == "NHWC"
    for t0 in range(0, m, per):
        t1 = min(m, t0 + per)
        p = (t1 - t0) * boh * bow
        if cl:
            cols = workspace((p, row_len), x.dtype, 0)
            K.im2col_cl(x, idx, t0, t1, cols, boh, bow, kh, kw, sh, sw, ph, pw)
            out = np.matmul(cols, wm.T, out=workspace((p, f), x.dtype, 1))
            K.scatter_out_cl(out, idx, t0, t1, y, boh, bow, bias, mo, add)
        else:
            cols = workspace((row_len, p), x.dtype, 0)
            K.im2col_cf(x, idx, t0, t1, cols, boh, bow, kh, kw, sh, sw, ph, pw)
            out = np.matmul(wm, cols, out=workspace((f, p), x.dtype, 1))
            K.scatter_out_cf(out, idx, t0, t1, y, boh, bow, bias, mo, add)
    return y


def sparse_backward(x, w, dy, mo, geom: ConvGeom, tile, layout, need_bias=True, idx=None):
    """(dx, dw, db) of sparse_forward; only outputs with m_out != 0 carry gradient."""
    if idx is None:
        idx, _ = tiles_of(mo, tile)
    dy = np.ascontiguousarray(dy, dtype=x.dtype)
    f = w.shape[0]
    wm = w.reshape(f, -1)
    row_len = wm.shape[1]
    dx = np.zeros_like(x)
    dwm = np.zeros((f, row_len), dtype=x.dtype)
    db = np.zeros(f, dtype=x.dtype) if need_bias else None
    m = idx.shape[0]
    (kh, kw), (sh, sw), (ph, pw), (oh, ow) = geom.kernel, geom.stride, geom.pad, geom.out
    boh, bow = tile
    per = _chunk(tile, row_len, x.itemsize)
    cl = layout == "NHWC"
    for t0 in range(0, m, per):
        t1 = min(m, t0 + per)
        p = (t1 - t0) * boh * bow
        if cl:
            g = workspace((p, f), x.dtype, 1)
            K.gather_out_cl(dy, idx, t0, t1, g, boh, bow, mo)
            cols = workspace((p, row_len), x.dtype, 0)
            K.im2col_cl(x, idx, t0, t1, cols, boh, bow, kh, kw, sh, sw, ph, pw)
            dwm += g.T @ cols
            if need_bias:
                db += g.sum(axis=0)
            np.matmul(g, wm, out=cols)
            K.col2im_add_cl(cols, idx, t0, t1, dx, boh, bow, kh, kw, sh, sw, ph, pw, oh, ow)
        else:
            g = workspace((f, p), x.dtype, 1)
            K.gather_out_cf(dy, idx, t0, t1, g, boh, bow, mo)
            cols = workspace((row_len, p), x.dtype, 0)
            K.im2col_cf(x, idx, t0, t1, cols, boh, bow, kh, kw, sh, sw, ph, pw)
            dwm += g @ cols.T
            if need_bias:
                db += g.sum(axis=1)
            np.matmul(wm.T, g, out=cols)
            K.col2im_add_cf(cols, idx, t0, t1, dx, boh, bow, kh, kw, sh, sw, ph, pw, oh, ow)
    return dx, dwm.reshape(w.shape), db


# --------------------------------------------------------------------------- dense path
def _dense_setup(x, geom: ConvGeom, layout):
    """(x padded if the padding is asymmetric, symmetric pad for conv_forward, crop)."""
    sym = all((geom.size[a] + 2 * geom.pad[a] - geom.kernel[a]) // geom.stride[a] + 1
              == geom.out[a] for a in range(2))
    if sym:
        return x, geom.pad, None
    ends = [(geom.out[a] - 1) * geom.stride[a] + geom.kernel[a] - geom.size[a] - geom.pad[a]
            for a in range(2)]
    sp = ((geom.pad[0], max(ends[0], 0)), (geom.pad[1], max(ends[1], 0)))
    widths = ((0, 0),) + sp + ((0, 0),) if layout == "NHWC" else ((0, 0), (0, 0)) + sp
    return np.pad(x, widths), (0, 0), sp


def dense_forward(x, w, b, mo, geom: ConvGeom, layout):
    """Dense conv (sparsym's conv kernels), then outputs with m_out == 0 set to zero."""
    xp, pad, _ = _dense_setup(x, geom, layout)
    y = conv_forward(xp, w, b, geom.stride, pad, (1, 1), 1,
                     layout="NHWC" if layout == "NHWC" else None)
    if y.shape[1:3] != geom.out and y.shape[2:] != geom.out:
        raise ShapeError(f"dense conv produced {y.shape}, expected outputs {geom.out}")
    if mo is not None:
        (K.zero_inactive_cl if layout == "NHWC" else K.zero_inactive_cf)(y, mo)
    return y


def dense_backward(x, w, dy, mo, geom: ConvGeom, layout, need_bias=True):
    """(dx, dw, db) of dense_forward."""
    xp, pad, crop = _dense_setup(x, geom, layout)
    dy = np.ascontiguousarray(dy, dtype=x.dtype)
    if mo is not None:
        dy = dy * (mo[..., None] if layout == "NHWC" else mo[:, None]).astype(x.dtype)
    dx, dw, db = conv_backward(xp, w, dy, geom.stride, pad, (1, 1), 1, need_bias,
                               layout="NHWC" if layout == "NHWC" else None)
    if crop is not None:
        (h0, _), (w0, _) = crop
        h, wd = geom.size
        dx = (dx[:, h0:h0 + h, w0:w0 + wd, :] if layout == "NHWC"
              else dx[:, :, h0:h0 + h, w0:w0 + wd])
        dx = np.ascontiguousarray(dx)
    return dx, dw, db
