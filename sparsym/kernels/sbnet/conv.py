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

from functools import partial

import numpy as np

from ...base import ShapeError
from ...kernels import _parallel, blas
from ...kernels import block_sparse as kbs
from ...kernels._parallel import workspace
from . import _kernels as K
from . import dnn
from .dnn import conv_backward, conv_forward
from .geometry import ConvGeom, block_params, tiles_of

# Tiles are processed in chunks whose im2col operand stays in L2 (2 MB per core here);
# each chunk is one task for the worker threads.
CHUNK_BYTES = 1 << 21


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
def _local_idx(m):
    """Index rows (t, 0, 0): every gathered window as its own image."""
    idx = np.zeros((m, 3), dtype=np.int32)
    idx[:, 0] = np.arange(m, dtype=np.int32)
    return idx


def _cols(x, idx, t0, t1, geom, tile, cl):
    """Row-per-output-pixel im2col operand [P, kh*kw*C] of tiles t0..t1-1.

    Channel-last data is unfolded in place; channel-first data is first gathered into
    channel-last windows (measured 1.7x faster than unfolding NCHW directly: the copies
    of kw*C contiguous values vectorise, kw-long ones do not).
    """
    (kh, kw), (sh, sw), (ph, pw) = geom.kernel, geom.stride, geom.pad
    boh, bow = tile
    c = x.shape[3] if cl else x.shape[1]
    p = (t1 - t0) * boh * bow
    cols = workspace((p, kh * kw * c), x.dtype, 0)
    if cl:
        K.im2col_cl(x, idx, t0, t1, cols, boh, bow, kh, kw, sh, sw, ph, pw)
        return cols, None
    bp = block_params(geom, tile)
    blk = kbs.sparse_gather(x, idx[t0:t1], bp.bsize, bp.bstrides, bp.boffset, False, "NCHW")
    K.im2col_cl(blk, _local_idx(t1 - t0), 0, t1 - t0, cols, boh, bow, kh, kw, sh, sw, 0, 0)
    return cols, blk


def _fwd_chunk(x, wm, idx, t0, t1, y, bias, mo, geom, tile, cl, add):
    """im2col -> GEMM -> scatter for tiles t0..t1-1 (tiles never share outputs)."""
    boh, bow = tile
    cols, _ = _cols(x, idx, t0, t1, geom, tile, cl)
    out = np.matmul(cols, wm.T, out=workspace((cols.shape[0], wm.shape[0]), x.dtype, 1))
    if cl:
        K.scatter_out_cl(out, idx, t0, t1, y, boh, bow, bias, mo, add)
    else:
        K.scatter_out_cf(out.T, idx, t0, t1, y, boh, bow, bias, mo, add)


def _gemm_weight(w, cl):
    """Weights as (F, kh*kw*C), the column order of the im2col operand."""
    f = w.shape[0]
    return w.reshape(f, -1) if cl else np.ascontiguousarray(w.transpose(0, 2, 3, 1)).reshape(f, -1)


def sparse_forward(x, w, b, mo, geom: ConvGeom, tile, layout, idx=None, y=None, add=False,
                   keep=None):
    """Masked conv computed tile by tile; y (zeros unless given) receives the outputs.

    ``add=True`` accumulates into a given ``y`` (the residual form y = base + conv).
    Chunks of tiles run on worker threads with single-threaded BLAS. ``keep`` (a dict)
    receives what the oneDNN path can hand to :func:`sparse_backward` (its gathered
    blocks).
    """
    if idx is None:
        idx, _ = tiles_of(mo, tile)
    f = w.shape[0]
    m = idx.shape[0]
    if y is None and m:  # the oneDNN path writes a fresh output whole (no calloc first)
        y = np.empty(out_shape(x.shape, f, geom, layout), dtype=x.dtype)
        if dnn.sparse_forward(x, w, b, mo, geom, tile, layout, idx, y, add, keep,
                              fresh=True) is not NotImplemented:
            return y
        y.fill(0)
    elif y is None:
        return np.zeros(out_shape(x.shape, f, geom, layout), dtype=x.dtype)
    elif dnn.sparse_forward(x, w, b, mo, geom, tile, layout, idx, y, add,
                            keep) is not NotImplemented:
        return y
    bias = b if b is not None else _no_bias(x.dtype)
    cl = layout == "NHWC"
    wm = _gemm_weight(w, cl)
    per = _chunk(tile, wm.shape[1], x.itemsize)
    tasks = [partial(_fwd_chunk, x, wm, idx, t0, min(m, t0 + per), y, bias, mo, geom, tile,
                     cl, add) for t0 in range(0, m, per)]
    with blas.single_blas():
        _parallel.run(tasks, work=m * tile[0] * tile[1] * wm.size)
    return y


def _bwd_rows(x, wm, dy, mo, idx, ranges, dx, geom, tile, cl, need_bias):
    """Gradient contributions of the tile ranges; returns (dW part, db part)."""
    (kh, kw), (sh, sw), (ph, pw), (oh, ow) = geom.kernel, geom.stride, geom.pad, geom.out
    boh, bow = tile
    f, row_len = wm.shape
    dwm = np.zeros((f, row_len), dtype=x.dtype)
    db = np.zeros(f, dtype=x.dtype) if need_bias else None
    per = _chunk(tile, row_len, x.itemsize)
    bp = block_params(geom, tile)
    for a, b in ranges:
        for t0 in range(a, b, per):
            t1 = min(b, t0 + per)
            p = (t1 - t0) * boh * bow
            g = workspace((p, f), x.dtype, 1)
            if cl:
                K.gather_out_cl(dy, idx, t0, t1, g, boh, bow, mo)
            else:
                K.gather_out_cf(dy, idx, t0, t1, g.T, boh, bow, mo)
            cols, blk = _cols(x, idx, t0, t1, geom, tile, cl)
            dwm += g.T @ cols
            if need_bias:
                db += g.sum(axis=0)
            np.matmul(g, wm, out=cols)
            if cl:
                K.col2im_add_cl(cols, idx, t0, t1, dx, boh, bow, kh, kw, sh, sw, ph, pw, oh,
                                ow)
            else:
                dblk = np.zeros_like(blk)
                K.col2im_add_cl(cols, _local_idx(t1 - t0), 0, t1 - t0, dblk, boh, bow, kh, kw,
                                sh, sw, 0, 0, boh, bow)
                kbs.sparse_scatter_inplace(dblk, idx[t0:t1], dx, bp.bsize, bp.bstrides,
                                           bp.boffset, True, False, "NCHW")
    return dwm, db


def sparse_backward(x, w, dy, mo, geom: ConvGeom, tile, layout, need_bias=True, idx=None,
                    blocks=None):
    """(dx, dw, db) of sparse_forward; only outputs with m_out != 0 carry gradient.
    ``blocks``: the gathered windows a forward with the same tiles kept."""
    if idx is None:
        idx, _ = tiles_of(mo, tile)
    if idx.shape[0]:
        res = dnn.sparse_backward(x, w, dy, mo, geom, tile, layout, need_bias, idx, blocks)
        if res is not NotImplemented:
            return res
    dy = np.ascontiguousarray(dy, dtype=x.dtype)
    f = w.shape[0]
    cl = layout == "NHWC"
    wm = _gemm_weight(w, cl)
    dx = np.zeros_like(x)
    dwm = np.zeros(wm.shape, dtype=x.dtype)
    db = np.zeros(f, dtype=x.dtype) if need_bias else None
    with blas.single_blas():
        for phase in dnn.row_phases(idx, geom, tile, _parallel.workers()):
            parts = _parallel.run([partial(_bwd_rows, x, wm, dy, mo, idx, ranges, dx, geom,
                                           tile, cl, need_bias) for ranges in phase],
                                  work=2 * idx.shape[0] * tile[0] * tile[1] * wm.size)
            for pw_, pb in parts:
                dwm += pw_
                if need_bias:
                    db += pb
    if cl:
        return dx, dwm.reshape(w.shape), db
    kh, kw = geom.kernel
    dw = np.ascontiguousarray(dwm.reshape(f, kh, kw, -1).transpose(0, 3, 1, 2))
    return dx, dw, db


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
    if mo is not None and not mo.all():
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
