"""The block-sparse convolution's dense part on oneDNN: the active tiles' input windows are
gathered into one batch of channel-last blocks, convolved by oneDNN's primitives as a valid
(unpadded) convolution, and the outputs scattered back under the output mask; the backward
gathers the masked output gradients the same way and runs oneDNN's backward-data and
backward-weights primitives on the batch, then scatter-adds the block gradients.

Each function returns ``NotImplemented`` when oneDNN is off or refuses (float64...): the
caller runs its Numba tile loop (``conv.py``).
"""
from __future__ import annotations

from functools import partial

import numpy as np

from .. import _parallel
from .. import block_sparse as kbs
from .. import conv as kconv
from .. import onednn as dnn
from . import _kernels as K
from .geometry import ConvGeom, block_params

__all__ = ["sparse_forward", "sparse_backward", "conv_forward", "conv_backward",
           "gather_blocks", "row_phases"]


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


# below this many elements a copy loop runs on the calling thread (a hand-off to the
# workers costs tens of microseconds)
PAR_ELEMS = 1 << 17


def _each(fn, m, elems):
    """fn(t0, t1) over ranges covering tiles 0..m-1, on the workers when ``elems`` (values
    copied) is large enough; tiles never share outputs here."""
    if elems < PAR_ELEMS or _parallel.workers() < 2:
        fn(0, m)
        return
    _parallel.run([partial(fn, a, b) for a, b in _parallel.split(m, 2 * _parallel.workers())])


def gather_blocks(x, idx, geom, tile, cl):
    """(m, bh, bw, C) channel-last input windows of the active tiles (zeros outside)."""
    bp = block_params(geom, tile)
    (bh, bw), (sh, sw), (oh, ow) = bp.bsize, bp.bstrides, bp.boffset
    c = x.shape[3] if cl else x.shape[1]
    m = idx.shape[0]
    blk = np.empty((m, bh, bw, c), x.dtype)

    def gather(t0, t1):
        if cl:
            kbs._gather_cl(x, idx[t0:t1], blk[t0:t1], bh, bw, sh, sw, oh, ow)
        else:
            kbs._gather_cf(x, idx[t0:t1], blk[t0:t1].transpose(0, 3, 1, 2), bh, bw, sh, sw,
                           oh, ow)
    _each(gather, m, blk.size)
    return blk


def row_phases(idx, geom, tile, n_workers):
    """Task groups of tile ranges whose input windows never overlap within a phase.

    Tiles of one tile row (n, i) overlap through their halos, as do rows i and i+1; rows
    i and i+2 do not when k <= (bo + 1) * s.  So phase 0 takes even rows, phase 1 odd
    rows, each row whole in one task.  Otherwise: one serial phase.
    """
    m = idx.shape[0]
    kh, sh = geom.kernel[0], geom.stride[0]
    if n_workers < 2 or m < 2 or kh > (tile[0] + 1) * sh:
        return [[[(0, m)]]]
    key = idx[:, 0].astype(np.int64) * (int(idx[:, 1].max()) + 1) + idx[:, 1]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    ends = np.r_[starts[1:], m]
    phases = []
    for parity in (0, 1):
        rows = [(int(a), int(b)) for a, b in zip(starts, ends) if idx[a, 1] % 2 == parity]
        if rows:
            groups = _parallel.split(len(rows), 2 * n_workers)
            phases.append([rows[g0:g1] for g0, g1 in groups])
    return phases


def _scatter_add(dblk, idx, dx, geom, tile, cl):
    """dx[window of each tile] += dblk[tile] (halos overlap: rows of one parity at once)."""
    bp = block_params(geom, tile)
    (bh, bw), (sh, sw), (oh, ow) = bp.bsize, bp.bstrides, bp.boffset
    n = _parallel.workers() if dblk.size >= PAR_ELEMS else 1
    for phase in row_phases(idx, geom, tile, n):
        _parallel.run([partial(K.scatter_add_in, dblk, idx, _row_pairs(idx, ranges), dx,
                               bh, bw, sh, sw, oh, ow, not cl) for ranges in phase])


def _row_pairs(idx, ranges):
    """int64 [g0, g1) pairs, one per tile row, of the tile ranges ``ranges``."""
    out = []
    for a, b in ranges:
        g0 = a
        while g0 < b:
            g1 = int(K.row_end(idx, g0, b))
            out.append((g0, g1))
            g0 = g1
    return np.array(out, np.int64).reshape(-1, 2)


def _w_cl(w, cl):
    """Weights as an (F, kh, kw, C) view (channel-last conv over the blocks)."""
    return w if cl else w.transpose(0, 2, 3, 1)


def sparse_forward(x, w, b, mo, geom: ConvGeom, tile, layout, idx, y, add, keep=None,
                   fresh=False):
    """y (=|+=) (conv(x, w) + b) * m_out over the active tiles; NotImplemented if oneDNN
    does not run it (``y`` untouched). ``keep`` (a dict) receives the gathered blocks
    ("blocks") for :func:`sparse_backward`. ``fresh``: ``y`` is uninitialised and is
    written whole (zeros outside the tiles' outputs), band by band (see _bands)."""
    if not _usable(x):
        return NotImplemented
    from ..onednn import conv as oc
    cl = layout == "NHWC"
    blk = gather_blocks(x, idx, geom, tile, cl)
    out = dnn.attempt(oc.conv_forward, blk, _w_cl(w, cl), None, geom.stride, (0, 0), (1, 1),
                      1, "NHWC")
    if out is NotImplemented:
        return out
    if keep is not None:
        keep["blocks"] = blk
    m, f = idx.shape[0], w.shape[0]
    boh, bow = tile
    rows = out.reshape(m * boh * bow, f)
    bias = b if b is not None else np.empty(0, x.dtype)

    def scatter(t0, t1):
        r = rows[t0 * boh * bow:t1 * boh * bow]
        if cl:
            K.scatter_out_cl(r, idx, t0, t1, y, boh, bow, bias, mo, add)
        else:
            K.scatter_out_cf(r.T, idx, t0, t1, y, boh, bow, bias, mo, add)
    if fresh:
        _bands(y, idx, boh, cl, scatter)
    else:
        _each(scatter, m, rows.size)
    return y


def _bands(y, idx, boh, cl, scatter):
    """Zero ``y`` one band of output rows (one tile row of an image) at a time and scatter
    that band's tiles into it right away, bands split over the workers: the output is
    written once, band by band while it sits in cache, on every core, instead of a serial
    calloc of the whole output (27 MB at SBNet's 400x704x24: 3-4 ms on one core, a fifth
    of the one-core forward) before a scatter into it."""
    n_img, oh = y.shape[0], (y.shape[1] if cl else y.shape[2])
    ntr = -(-oh // boh)
    key = idx[:, 0].astype(np.int64) * ntr + idx[:, 1]  # tiles are in (n, row, col) order
    first = np.searchsorted(key, np.arange(n_img * ntr + 1))

    def run(b0, b1):
        for band in range(b0, b1):
            n, tr = divmod(band, ntr)
            rows = slice(tr * boh, min(oh, (tr + 1) * boh))
            if cl:
                y[n, rows] = 0
            else:
                y[n, :, rows] = 0
            if first[band + 1] > first[band]:
                scatter(int(first[band]), int(first[band + 1]))
    nb = n_img * ntr
    if y.size < PAR_ELEMS or _parallel.workers() < 2:
        run(0, nb)
        return
    _parallel.run([partial(run, a, b) for a, b in _parallel.split(nb, 2 * _parallel.workers())])


def sparse_backward(x, w, dy, mo, geom: ConvGeom, tile, layout, need_bias, idx, blocks=None):
    """(dx, dw, db) over the active tiles (only outputs with m_out != 0 carry gradient),
    or NotImplemented. ``blocks``: the forward's gathered windows (else gathered again)."""
    if not _usable(x):
        return NotImplemented
    from ..onednn import conv as oc
    cl = layout == "NHWC"
    m, f = idx.shape[0], w.shape[0]
    boh, bow = tile
    g = np.empty((m * boh * bow, f), x.dtype)
    dy = np.ascontiguousarray(dy, dtype=x.dtype)

    def gather(t0, t1):
        r = g[t0 * boh * bow:t1 * boh * bow]
        if cl:
            K.gather_out_cl(dy, idx, t0, t1, r, boh, bow, mo)
        else:
            K.gather_out_cf(dy, idx, t0, t1, r.T, boh, bow, mo)
    _each(gather, m, g.size)
    blk = blocks if blocks is not None else gather_blocks(x, idx, geom, tile, cl)
    res = dnn.attempt(oc.conv_backward, blk, _w_cl(w, cl), g.reshape(m, boh, bow, f),
                      geom.stride, (0, 0), (1, 1), 1, False, "NHWC")
    if res is NotImplemented:
        return res
    dblk, dw, _ = res
    dx = np.zeros(x.shape, x.dtype)  # calloc: pages nothing scatters into stay untouched
    _scatter_add(dblk, idx, dx, geom, tile, cl)
    if not cl:
        dw = np.ascontiguousarray(dw.transpose(0, 3, 1, 2))
    return dx, dw, (g.sum(axis=0) if need_bias else None)
