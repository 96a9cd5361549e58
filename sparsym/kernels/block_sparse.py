"""SBNet-style block-sparse kernels: block parameters, reduce_mask, gather and scatter.

Conventions (see shared/reference/sbnet.md): block (n, i, j) starts at pixel
``h0 = boffset[0] + i*bstride[0]``, ``w0 = boffset[1] + j*bstride[1]`` and spans ``bsize``.
Dense tensors are NHWC by default (``layout='NCHW'`` accepted); blocks are [M,bh,bw,C], or
[M,C,bh,bw] with ``transpose=True`` whatever the dense layout.  Indices are int32 [M,3]
rows (n, i, j); block coordinates may be out of range (zero-filled on gather, dropped on
scatter) but n must be a valid batch index.  Every function returns new arrays except
``sparse_scatter_inplace``, which writes into and returns ``base``.
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba import njit, prange

from ..base import ParamError, ShapeError

__all__ = [
    "BlockParams", "calc_block_params", "calc_block_params_res_block", "reduce_mask",
    "sparse_gather", "sparse_scatter", "sparse_scatter_inplace", "gather_backward",
    "scatter_backward",
]

_WRITE, _ADD, _ZERO = 0, 1, 2


class BlockParams(NamedTuple):
    """Block geometry; every field is an (H, W) pair of ints."""
    bsize: tuple
    bsize_out: tuple
    boffset: tuple
    bcount: tuple
    bstrides: tuple


# --------------------------------------------------------------------------- block params
def _pair(v, name, which=None):
    """Accept (h, w), or SBNet's 4-vectors: [1,h,w,1] (which='mid') / [kh,kw,ci,co] ('first')."""
    if isinstance(v, (int, np.integer)):
        return int(v), int(v)
    v = tuple(int(e) for e in v)
    if len(v) == 2:
        return v
    if len(v) == 4 and which == "mid":
        return v[1], v[2]
    if len(v) == 4 and which == "first":
        return v[0], v[1]
    raise ShapeError(f"{name}={v} must be an (H, W) pair")


def _block_dim(size, b, k, s, padding, axis, cover_all):
    if b < 1 or k < 1 or s < 1:
        raise ShapeError(f"{axis}: block {b}, kernel {k} and stride {s} must be positive")
    if b < k:
        raise ShapeError(f"{axis}: block size {b} is smaller than the kernel {k}")
    if (b - k) % s != 0:
        raise ShapeError(f"{axis}: (block {b} - kernel {k}) must be divisible by stride {s}")
    bstride = b - k + s
    if padding == "SAME":
        out = -(-size // s)
        pad = max((out - 1) * s + k - size, 0)
        pad0, pad1 = pad // 2, pad - pad // 2
    elif padding == "VALID":
        pad0 = pad1 = 0
    else:
        raise ParamError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    if cover_all:
        pad1 += (b - (size + pad0 + pad1)) % bstride
    else:
        pad1 += (b - size) % bstride  # SBNet: ignores pad0 + pad1, see calc_block_params
    padded = size + pad0 + pad1
    if b > padded:
        raise ShapeError(f"{axis}: block size {b} is larger than the padded input {padded}")
    bcount = -(-(padded - b + 1) // bstride)
    if (bcount - 1) * bstride - pad0 >= size:
        raise ShapeError(f"{axis}: the last block starts outside the input of size {size}")
    return (b - k) // s + 1, -pad0, bcount, bstride


def calc_block_params(in_size, bsize, ksize, strides, padding, cover_all=False):
    """SBNet block geometry for a conv with kernel ksize on an NHWC input of shape in_size.

    The default reproduces SBNet exactly: ``pad1 += (b - H) mod bstride``.  With SAME padding
    that grid can stop short of the last output rows/cols (e.g. H=13, b=5, k=3: outputs
    0..11 of 13 are covered).  ``cover_all=True`` instead pads so that ``Hp - b`` is a
    multiple of bstride, which covers every output (identical to SBNet for VALID).
    """
    in_size = tuple(int(e) for e in in_size)
    if len(in_size) != 4:
        raise ShapeError(f"in_size={in_size} must be (N, H, W, C)")
    b = _pair(bsize, "bsize", "mid")
    k = _pair(ksize, "ksize", "first")
    s = _pair(strides, "strides", "mid")
    dims = [_block_dim(in_size[1 + a], b[a], k[a], s[a], padding, "HW"[a], cover_all)
            for a in range(2)]
    out, off, cnt, st = zip(*dims)
    return BlockParams(tuple(b), tuple(out), tuple(off), tuple(cnt), tuple(st))


def calc_block_params_res_block(in_size, bsize, ksize_list, strides, padding,
                                cover_all=False):
    """calc_block_params with the receptive-field kernel k = 1 + sum(k_i - 1) of a conv stack."""
    ks = [_pair(k, "ksize", "first") for k in ksize_list]
    if not ks:
        raise ShapeError("ksize_list must not be empty")
    k = tuple(1 + sum(kk[a] - 1 for kk in ks) for a in range(2))
    return calc_block_params(in_size, bsize, k, strides, padding, cover_all)


# --------------------------------------------------------------------------- reduce_mask
@njit(parallel=True, cache=True)
def _reduce_mask_kernel(mask, flags, bh, bw, sh, sw, oh, ow, tol, avgpool):
    n_img, h, w = mask.shape
    bch, bcw = flags.shape[1], flags.shape[2]
    area = bh * bw
    for t in prange(n_img * bch):
        n = t // bch
        i = t - n * bch
        h0 = oh + i * sh
        ha = max(h0, 0)
        hb = min(h0 + bh, h)
        for j in range(bcw):
            w0 = ow + j * sw
            wa = max(w0, 0)
            wb = min(w0 + bw, w)
            active = False
            if avgpool:
                acc = 0.0
                for y in range(ha, hb):
                    for x in range(wa, wb):
                        acc += mask[n, y, x]
                active = acc / area > tol
            else:
                for y in range(ha, hb):
                    for x in range(wa, wb):
                        if mask[n, y, x] > tol:
                            active = True
                            break
                    if active:
                        break
            flags[n, i, j] = active


def reduce_mask(mask, bsize, bstride, boffset, bcount, tol, avgpool=False):
    """Active blocks of mask (N,H,W[,1]) -> int32 [M,3] (n,i,j), lexicographically sorted.

    Max pooling: a block is active when max(mask over block ∩ image) > tol (strict).
    avgpool: sum(mask over block ∩ image) / (bh*bw) > tol.  An empty mask yields M = 0
    (SBNet returns a dummy (0,0,0) row instead).
    """
    mask = np.asarray(mask)
    if mask.ndim == 4:
        if mask.shape[3] != 1:
            raise ShapeError(f"mask of shape {mask.shape} must be (N,H,W) or (N,H,W,1)")
        mask = mask[..., 0]
    if mask.ndim != 3:
        raise ShapeError(f"mask of shape {mask.shape} must be (N,H,W) or (N,H,W,1)")
    if mask.dtype not in (np.float32, np.float64):
        mask = mask.astype(np.float32)
    mask = np.ascontiguousarray(mask)
    bh, bw = _pair(bsize, "bsize", "mid")
    sh, sw = _pair(bstride, "bstride", "mid")
    oh, ow = _pair(boffset, "boffset")
    ch, cw = _pair(bcount, "bcount")
    flags = np.zeros((mask.shape[0], ch, cw), dtype=np.bool_)
    if flags.size:
        _reduce_mask_kernel(mask, flags, bh, bw, sh, sw, oh, ow, float(tol), bool(avgpool))
    return np.ascontiguousarray(np.argwhere(flags), dtype=np.int32).reshape(-1, 3)


# --------------------------------------------------------------------------- gather
# Gather/scatter are compiled serial on purpose: they sit between BLAS GEMMs, whose OpenBLAS
# workers keep spinning after each call, and a numba parallel region started right after a
# GEMM stalls for milliseconds on a 2-core box (measured median 43 ms vs 6 ms serial for a
# 0.2 ms gather).  The loops are written with prange over independent work units, so adding
# parallel=True is a one-word change where that contention does not exist.
# Two loop orders: "cl" walks [.., h, w, c] views with c innermost (channel-last dense data),
# "cf" walks [.., c, h, w] views with w innermost (channel-first dense data).
@njit(cache=True, nogil=True)
def clip_run(x0, k, w):
    """(lo, hi): the offsets into the run ``x0 .. x0+k-1`` of its part inside ``0 .. w-1``
    (``lo == hi`` when none is)."""
    lo = min(max(-x0, 0), k)
    return lo, max(min(w - x0, k), lo)


@njit(cache=True)
def _block_at(idx, m, sh, sw, oh, ow):
    # (image, first input row, first input column) of block m
    return idx[m, 0], oh + idx[m, 1] * sh, ow + idx[m, 2] * sw


@njit(cache=True)
def _unit(u, n_units, by_channel, n_blk, c):
    # (first block, end block, first channel, end channel) of scatter work unit u
    if by_channel:
        return 0, n_blk, u * c // n_units, (u + 1) * c // n_units
    return u, u + 1, 0, c


@njit(cache=True, nogil=True)
def _gather_cl(x, idx, out, bh, bw, sh, sw, oh, ow):
    h, w, c = x.shape[1], x.shape[2], x.shape[3]
    for m in prange(idx.shape[0]):
        n, h0, w0 = _block_at(idx, m, sh, sw, oh, ow)
        for y in range(bh):
            hh = h0 + y
            inside_h = 0 <= hh < h
            for xx in range(bw):
                ww = w0 + xx
                if inside_h and 0 <= ww < w:
                    for k in range(c):
                        out[m, y, xx, k] = x[n, hh, ww, k]
                else:
                    for k in range(c):
                        out[m, y, xx, k] = 0


@njit(cache=True, nogil=True)
def _gather_cf(x, idx, out, bh, bw, sh, sw, oh, ow):
    c, h, w = x.shape[1], x.shape[2], x.shape[3]
    for m in prange(idx.shape[0]):
        n, h0, w0 = _block_at(idx, m, sh, sw, oh, ow)
        lo, hi = clip_run(w0, bw, w)
        for k in range(c):
            for y in range(bh):
                hh = h0 + y
                if 0 <= hh < h:
                    for xx in range(lo):
                        out[m, k, y, xx] = 0
                    for xx in range(lo, hi):
                        out[m, k, y, xx] = x[n, k, hh, w0 + xx]
                    for xx in range(hi, bw):
                        out[m, k, y, xx] = 0
                else:
                    for xx in range(bw):
                        out[m, k, y, xx] = 0


# --------------------------------------------------------------------------- scatter
# Work units: one block each (race-free only if blocks are disjoint), or, when blocks may
# overlap, one channel range each with every block visited in index order.  Both are
# deterministic and race-free under prange; with overlap + write the last block in index
# order wins.
@njit(cache=True)
def _scatter_cl(blk, idx, y, bh, bw, sh, sw, oh, ow, mode, by_channel, n_units):
    h, w, c = y.shape[1], y.shape[2], y.shape[3]
    n_blk = idx.shape[0]
    for u in prange(n_units):
        m0, m1, c0, c1 = _unit(u, n_units, by_channel, n_blk, c)
        for m in range(m0, m1):
            n, h0, w0 = _block_at(idx, m, sh, sw, oh, ow)
            for yy in range(bh):
                hh = h0 + yy
                if hh < 0 or hh >= h:
                    continue
                for xx in range(bw):
                    ww = w0 + xx
                    if ww < 0 or ww >= w:
                        continue
                    if mode == 0:
                        for k in range(c0, c1):
                            y[n, hh, ww, k] = blk[m, yy, xx, k]
                    elif mode == 1:
                        for k in range(c0, c1):
                            y[n, hh, ww, k] += blk[m, yy, xx, k]
                    else:
                        for k in range(c0, c1):
                            y[n, hh, ww, k] = 0


@njit(cache=True)
def _scatter_cf(blk, idx, y, bh, bw, sh, sw, oh, ow, mode, by_channel, n_units):
    c, h, w = y.shape[1], y.shape[2], y.shape[3]
    n_blk = idx.shape[0]
    for u in prange(n_units):
        m0, m1, c0, c1 = _unit(u, n_units, by_channel, n_blk, c)
        for m in range(m0, m1):
            n, h0, w0 = _block_at(idx, m, sh, sw, oh, ow)
            lo, hi = clip_run(w0, bw, w)
            for k in range(c0, c1):
                for yy in range(bh):
                    hh = h0 + yy
                    if hh < 0 or hh >= h:
                        continue
                    if mode == 0:
                        for xx in range(lo, hi):
                            y[n, k, hh, w0 + xx] = blk[m, k, yy, xx]
                    elif mode == 1:
                        for xx in range(lo, hi):
                            y[n, k, hh, w0 + xx] += blk[m, k, yy, xx]
                    else:
                        for xx in range(lo, hi):
                            y[n, k, hh, w0 + xx] = 0


# --------------------------------------------------------------------------- edge checks
def _layout(layout):
    if layout not in ("NHWC", "NCHW"):
        raise ParamError(f"layout must be 'NHWC' or 'NCHW', got {layout!r}")
    return layout == "NCHW"


def _geometry(bsize, bstride, boffset):
    return _pair(bsize, "bsize", "mid"), _pair(bstride, "bstride", "mid"), \
        _pair(boffset, "boffset")


def _indices(indices, n_img):
    idx = np.ascontiguousarray(indices, dtype=np.int32).reshape(-1, 3)
    if idx.shape[0] and (idx[:, 0].min() < 0 or idx[:, 0].max() >= n_img):
        raise ShapeError(f"block batch indices must lie in [0, {n_img})")
    return idx


def _strictly_sorted(idx):
    if idx.shape[0] < 2:
        return True
    a, b = idx[:-1].astype(np.int64), idx[1:].astype(np.int64)
    gt = (b[:, 0] > a[:, 0]) | ((b[:, 0] == a[:, 0]) & (
        (b[:, 1] > a[:, 1]) | ((b[:, 1] == a[:, 1]) & (b[:, 2] > a[:, 2]))))
    return bool(gt.all())


def _float(a):
    a = np.asarray(a)
    return a if a.dtype in (np.float32, np.float64) else a.astype(np.float64)


# --------------------------------------------------------------------------- public API
def sparse_gather(x, indices, bsize, bstride, boffset, transpose=False, layout="NHWC"):
    """Copy blocks of x (NHWC or NCHW) -> [M,bh,bw,C] ([M,C,bh,bw] if transpose); zero-fill."""
    cf = _layout(layout)
    x = _float(x)
    if x.ndim != 4:
        raise ShapeError(f"sparse_gather expects 4-D data, got shape {x.shape}")
    (bh, bw), (sh, sw), (oh, ow) = _geometry(bsize, bstride, boffset)
    idx = _indices(indices, x.shape[0])
    c = x.shape[1] if cf else x.shape[3]
    m = idx.shape[0]
    out = np.empty((m, c, bh, bw) if transpose else (m, bh, bw, c), dtype=x.dtype)
    if m == 0 or out.size == 0:
        return out
    if cf:
        out_cf = out if transpose else out.transpose(0, 3, 1, 2)
        _gather_cf(x, idx, out_cf, bh, bw, sh, sw, oh, ow)
    else:
        out_cl = out.transpose(0, 2, 3, 1) if transpose else out
        _gather_cl(x, idx, out_cl, bh, bw, sh, sw, oh, ow)
    return out


def _scatter_into(y, blocks, idx, bsize, bstride, boffset, mode, transpose, cf):
    (bh, bw), (sh, sw), (oh, ow) = _geometry(bsize, bstride, boffset)
    c = y.shape[1] if cf else y.shape[3]
    m = idx.shape[0]
    want = (m, c, bh, bw) if transpose else (m, bh, bw, c)
    if mode == _ZERO:
        blocks = np.broadcast_to(np.zeros((), dtype=y.dtype), want)
    elif tuple(blocks.shape) != want:
        raise ShapeError(f"blocks shape {blocks.shape} != expected {want}")
    if m == 0 or y.size == 0:
        return y
    blocks = blocks.astype(y.dtype, copy=False)
    disjoint = sh >= bh and sw >= bw and _strictly_sorted(idx)
    if disjoint:
        by_channel, units = False, m
    else:
        by_channel, units = True, max(1, min(c, numba.get_num_threads()))
    if cf:
        b_cf = blocks if transpose else blocks.transpose(0, 3, 1, 2)
        _scatter_cf(b_cf, idx, y, bh, bw, sh, sw, oh, ow, mode, by_channel, units)
    else:
        b_cl = blocks.transpose(0, 2, 3, 1) if transpose else blocks
        _scatter_cl(b_cl, idx, y, bh, bw, sh, sw, oh, ow, mode, by_channel, units)
    return y


def sparse_scatter_inplace(blocks, indices, base, bsize, bstride, boffset, add,
                           transpose=False, layout="NHWC"):
    """Write (add=False) or add blocks into base (NHWC/NCHW, float, writeable); returns base."""
    cf = _layout(layout)
    if not isinstance(base, np.ndarray) or base.dtype not in (np.float32, np.float64):
        raise ShapeError("base must be a float32/float64 numpy array")
    if base.ndim != 4:
        raise ShapeError(f"base must be 4-D, got shape {base.shape}")
    idx = _indices(indices, base.shape[0])
    return _scatter_into(base, np.asarray(blocks), idx, bsize, bstride, boffset,
                         _ADD if add else _WRITE, transpose, cf)


def sparse_scatter(blocks, indices, base, bsize, bstride, boffset, add, transpose=False,
                   layout="NHWC"):
    """Copy of base (NHWC/NCHW) with blocks written (add=False) or added; out-of-range dropped."""
    base = _float(base)
    y = np.array(base, dtype=np.result_type(base.dtype, _float(blocks).dtype), copy=True)
    return sparse_scatter_inplace(blocks, indices, y, bsize, bstride, boffset, add, transpose,
                                  layout)


def gather_backward(dblocks, indices, x_shape, bsize, bstride, boffset, transpose=False,
                    layout="NHWC"):
    """Adjoint of sparse_gather: scatter-add dblocks into zeros of x_shape (new array)."""
    dblocks = _float(dblocks)
    dx = np.zeros(tuple(x_shape), dtype=dblocks.dtype)
    return sparse_scatter_inplace(dblocks, indices, dx, bsize, bstride, boffset, True,
                                  transpose, layout)


def scatter_backward(dy, indices, bsize, bstride, boffset, add, transpose=False,
                     layout="NHWC"):
    """Gradients of sparse_scatter: (dblocks = gather(dy) in the same block layout, dbase).

    dbase is dy for add=True and dy with every covered pixel zeroed for add=False.
    """
    cf = _layout(layout)
    dy = _float(dy)
    dblocks = sparse_gather(dy, indices, bsize, bstride, boffset, transpose, layout)
    dbase = np.array(dy, copy=True)
    if not add:
        idx = _indices(indices, dy.shape[0])
        _scatter_into(dbase, None, idx, bsize, bstride, boffset, _ZERO, transpose, cf)
    return dblocks, dbase
