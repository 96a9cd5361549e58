"""The block-sparse convolution's dense part on oneDNN: the active tiles' input windows are
gathered into one batch of channel-last blocks, convolved by oneDNN's primitives as a valid
(unpadded) convolution, and the outputs scattered back under the output mask; the backward
gathers the masked output gradients the same way and runs oneDNN's backward-data and
backward-weights primitives on the batch, then scatter-adds the block gradients.

Each function returns ``NotImplemented`` when oneDNN is off or refuses (float64...): the
caller runs its Numba tile loop (``conv.py``).
"""
from __future__ import annotations

import numpy as np

from .. import block_sparse as kbs
from .. import conv as kconv
from .. import onednn as dnn
from . import _kernels as K
from .geometry import ConvGeom, block_params

__all__ = ["sparse_forward", "sparse_backward", "conv_forward", "conv_backward"]


def conv_forward(x, w, b, stride, pad, dilate, num_group=1, layout=None):
    """Dense convolution (the dense path): oneDNN when it runs it, else the Numba kernel."""
    from ..onednn import conv as oc
    y = dnn.attempt(oc.conv_forward, x, w, b, stride, pad, dilate, num_group, layout)
    return kconv.conv_forward(x, w, b, stride, pad, dilate, num_group, layout) \
        if y is NotImplemented else y


def conv_backward(x, w, dy, stride, pad, dilate, num_group=1, need_bias=True, layout=None):
    """(dx, dw, db) of :func:`conv_forward`, on the same path."""
    from ..onednn import conv as oc
    args = (x, w, dy, stride, pad, dilate, num_group, need_bias, layout)
    res = dnn.attempt(oc.conv_backward, *args)
    return kconv.conv_backward(*args) if res is NotImplemented else res


def _usable(x):
    return x.dtype == np.float32 and dnn.enabled()


def _blocks(x, idx, geom, tile, cl):
    """(m, bh, bw, C) input windows of the active tiles (zeros outside the image)."""
    bp = block_params(geom, tile)
    return kbs.sparse_gather(x, idx, bp.bsize, bp.bstrides, bp.boffset, False,
                             "NHWC" if cl else "NCHW"), bp


def _w_cl(w, cl):
    """Weights as an (F, kh, kw, C) view (channel-last conv over the blocks)."""
    return w if cl else w.transpose(0, 2, 3, 1)


def sparse_forward(x, w, b, mo, geom: ConvGeom, tile, layout, idx, y, add):
    """y (=|+=) (conv(x, w) + b) * m_out over the active tiles; NotImplemented if oneDNN
    does not run it."""
    if not _usable(x):
        return NotImplemented
    from ..onednn import conv as oc
    cl = layout == "NHWC"
    blk, _ = _blocks(x, idx, geom, tile, cl)
    out = dnn.attempt(oc.conv_forward, blk, _w_cl(w, cl), None, geom.stride, (0, 0), (1, 1),
                      1, "NHWC")
    if out is NotImplemented:
        return out
    m, f = idx.shape[0], w.shape[0]
    rows = out.reshape(m * tile[0] * tile[1], f)
    bias = b if b is not None else np.empty(0, x.dtype)
    if cl:
        K.scatter_out_cl(rows, idx, 0, m, y, tile[0], tile[1], bias, mo, add)
    else:
        K.scatter_out_cf(rows.T, idx, 0, m, y, tile[0], tile[1], bias, mo, add)
    return y


def sparse_backward(x, w, dy, mo, geom: ConvGeom, tile, layout, need_bias, idx):
    """(dx, dw, db) over the active tiles (only outputs with m_out != 0 carry gradient),
    or NotImplemented."""
    if not _usable(x):
        return NotImplemented
    from ..onednn import conv as oc
    cl = layout == "NHWC"
    m, f = idx.shape[0], w.shape[0]
    boh, bow = tile
    g = np.empty((m * boh * bow, f), x.dtype)
    dy = np.ascontiguousarray(dy, dtype=x.dtype)
    if cl:
        K.gather_out_cl(dy, idx, 0, m, g, boh, bow, mo)
    else:
        K.gather_out_cf(dy, idx, 0, m, g.T, boh, bow, mo)
    blk, bp = _blocks(x, idx, geom, tile, cl)
    res = dnn.attempt(oc.conv_backward, blk, _w_cl(w, cl), g.reshape(m, boh, bow, f),
                      geom.stride, (0, 0), (1, 1), 1, False, "NHWC")
    if res is NotImplemented:
        return res
    dblk, dw, _ = res
    dx = np.zeros(x.shape, x.dtype)  # calloc: pages nothing scatters into stay untouched
    kbs.sparse_scatter_inplace(dblk, idx, dx, bp.bsize, bp.bstrides, bp.boffset, True, False,
                               "NHWC" if cl else "NCHW")
    if not cl:
        dw = np.ascontiguousarray(dw.transpose(0, 3, 1, 2))
    return dx, dw, (g.sum(axis=0) if need_bias else None)
