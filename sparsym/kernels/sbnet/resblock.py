"""Fused sparse bottleneck residual block (pre-activation, SBNet's sparse_res_block_bottleneck).

    F(x) = conv1x1_3(relu(bn3(conv3x3_2(relu(bn2(conv1x1_1(relu(bn1(x)))))))))
    y    = x + F(x) * m_out

with C -> K -> K -> C channels, stride 1 and 'SAME' padding; m_out marks the outputs whose
3x3 receptive field holds a mask value > tol.  The sparse path gathers each active tile's
(bo+2)^2 input window once, runs BN-ReLU-conv three times inside the window (the 3x3 conv
is VALID there) and scatter-adds the tile onto x.  Pixels outside the image are zero
before the 3x3 conv, exactly as the dense network's zero padding.

Batch statistics (training mode) are taken over a pixel-exact region, each pixel once:
BN1/BN2 over ``dilate3x3(m_out)`` (every pixel that feeds an active output), BN3 over
``m_out``.  So results never depend on the tile size or on the sparse/dense choice, and an
all-ones mask gives exactly the dense block's statistics.  Moving statistics use MXNet's
update ``moving = moving * momentum + batch * (1 - momentum)`` (biased variance).
"""
from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np
from numba import njit

from ...base import ShapeError
from ...kernels import _parallel, blas
from ...kernels import norm as knorm
from ...kernels._parallel import workspace
from ...kernels.block_sparse import sparse_gather, sparse_scatter_inplace
from . import _kernels as K
from .conv import CHUNK_BYTES
from .dnn import conv_forward
from .geometry import ConvGeom, conv_geometry, tiles_of


class BlockWeights(NamedTuple):
    """Bottleneck parameters as GEMM operands (data dtype)."""

    w1: np.ndarray      # [C, K]
    w2: np.ndarray      # [9K, K] rows ordered (i, j, k)
    w3: np.ndarray      # [K, C]
    gammas: tuple       # three (C,), (K,), (K,) arrays
    betas: tuple


class BNState(NamedTuple):
    mean: np.ndarray
    var: np.ndarray
    inv: np.ndarray
    gamma: np.ndarray   # effective gamma (ones with fix_gamma)


def geometry(x_shape, layout) -> ConvGeom:
    hw = x_shape[1:3] if layout == "NHWC" else x_shape[2:4]
    return conv_geometry(hw, (3, 3), (1, 1), padding="SAME")


def pack_weights(x, w1, w2, w3, gammas, betas, layout) -> BlockWeights:
    """Validate shapes and reshape conv weights (MXNet layouts) into GEMM operands."""
    dt = x.dtype
    c = x.shape[3] if layout == "NHWC" else x.shape[1]
    k = w1.shape[0]
    want = {"NHWC": ((k, 1, 1, c), (k, 3, 3, k), (c, 1, 1, k)),
            "NCHW": ((k, c, 1, 1), (k, k, 3, 3), (c, k, 1, 1))}[layout]
    for name, w, s in zip(("conv1", "conv2", "conv3"), (w1, w2, w3), want):
        if tuple(w.shape) != s:
            raise ShapeError(f"{name}_weight has shape {tuple(w.shape)}, expected {s} for data "
                             f"{tuple(x.shape)} (layout {layout})")
    w2 = np.asarray(w2, dtype=dt)
    if layout == "NCHW":
        w2 = w2.transpose(0, 2, 3, 1)
    w2m = np.ascontiguousarray(w2.reshape(k, 9 * k).T)
    return BlockWeights(np.ascontiguousarray(np.asarray(w1, dt).reshape(k, c).T), w2m,
                        np.ascontiguousarray(np.asarray(w3, dt).reshape(c, k).T),
                        tuple(np.asarray(g, dt) for g in gammas),
                        tuple(np.asarray(b, dt) for b in betas))


def unpack_grads(dw1, dw2, dw3, layout):
    """GEMM-operand gradients back to MXNet weight layouts."""
    c, k = dw1.shape
    g2 = dw2.T.reshape(k, 3, 3, k)
    if layout == "NHWC":
        return dw1.T.reshape(k, 1, 1, c), g2, dw3.T.reshape(c, 1, 1, k)
    return dw1.T.reshape(k, c, 1, 1), g2.transpose(0, 3, 1, 2), dw3.T.reshape(c, k, 1, 1)


# --------------------------------------------------------------------------- batch norm
def bn_forward(v, wts, gamma, beta, moving, eps, fix_gamma, batch_stats):
    """Normalise v [..., C]; stats weighted by wts [...] (batch) or from moving=(mean, var)."""
    c = v.shape[-1]
    v2 = v.reshape(-1, c)
    if batch_stats:
        w = wts.reshape(-1).astype(v.dtype, copy=False)
        tot = w.sum()
        mean = (w @ v2) / tot if tot > 0 else np.zeros(c, v.dtype)
        d = v2 - mean
        var = (w @ (d * d)) / tot if tot > 0 else np.zeros(c, v.dtype)
    else:
        mean, var = moving
    g = np.ones(c, v.dtype) if fix_gamma else gamma
    inv = (1.0 / np.sqrt(var + eps)).astype(v.dtype)
    scale = g * inv
    z = v * scale + (beta - mean * scale)
    return z.astype(v.dtype, copy=False), BNState(mean, var, inv, g)


def bn_backward(dz, v, wts, s: BNState, fix_gamma, batch_stats):
    """(dv, dgamma, dbeta) of bn_forward; weighted batch statistics are differentiated.
    Two fused passes (column sums, then the input gradient)."""
    c = v.shape[-1]
    dt = v.dtype
    dz2 = np.ascontiguousarray(dz, dtype=dt).reshape(-1, c)
    v2 = v.reshape(-1, c)
    mean, inv = np.asarray(s.mean, dt), np.asarray(s.inv, dt)
    sums = np.zeros((2, c))
    K.bn_grad_sums(dz2, v2, mean, inv, sums)
    dbeta = sums[0].astype(dt)
    dgamma = np.zeros(c, dt) if fix_gamma else sums[1].astype(dt)
    gamma = np.asarray(s.gamma, dt)
    dv = np.empty_like(v2)
    if batch_stats:
        w = wts.reshape(-1).astype(dt, copy=False)
        tot = float(w.sum())
        K.bn_grad_input(dz2, v2, mean, inv, gamma, w, 1.0 / max(tot, 1e-300),
                        (sums[0] * gamma).astype(dt), (sums[1] * gamma).astype(dt), dv)
    else:
        zero = np.zeros(c, dt)
        K.bn_grad_input(dz2, v2, mean, inv, gamma, np.empty(0, dt), 0.0, zero, zero, dv)
    return dv.reshape(v.shape), dgamma, dbeta


def update_moving(moving, states, momentum):
    """MXNet's running-statistics update, in place on the aux arrays."""
    for (mm, mv), s in zip(moving, states):
        mm *= momentum
        mm += (1 - momentum) * s.mean.astype(mm.dtype)
        mv *= momentum
        mv += (1 - momentum) * s.var.astype(mv.dtype)


# --------------------------------------------------------------------------- region maps
@njit(cache=True)
def _multiplicity(idx, boh, bow, cnt):
    """cnt[n, y, x] = number of active tiles whose 1-pixel-haloed window holds (y, x)."""
    n_img, h, w = cnt.shape
    for t in range(idx.shape[0]):
        n = idx[t, 0]
        y0 = idx[t, 1] * boh - 1
        x0 = idx[t, 2] * bow - 1
        for y in range(max(y0, 0), min(y0 + boh + 2, h)):
            for x in range(max(x0, 0), min(x0 + bow + 2, w)):
                cnt[n, y, x] += 1


def region_maps(mask3, geom, tol):
    """(m_out uint8, region1 uint8): active outputs and the pixels that feed them."""
    from .geometry import output_mask
    mo = output_mask(mask3, geom, tol)
    r1 = output_mask(mo, geom, 0)
    return mo, r1


def block_weights(mo, r1, idx, tile, layout_dtype):
    """Per-window weights for BN1/BN2 (region1 / multiplicity), BN3 (m_out), in-image flags."""
    n, h, w = mo.shape
    boh, bow = tile
    cnt = np.zeros((n, h, w), dtype=np.int32)
    _multiplicity(idx, boh, bow, cnt)
    wmap = np.where(cnt > 0, r1 / np.maximum(cnt, 1), 0).astype(layout_dtype)
    bs, bst, off = (boh + 2, bow + 2), (boh, bow), (-1, -1)
    stack = np.stack([wmap, np.ones((n, h, w), layout_dtype)], axis=-1)
    g = sparse_gather(stack, idx, bs, bst, off)
    wts3 = sparse_gather(mo[..., None].astype(layout_dtype), idx, tile, tile, (0, 0))[..., 0]
    return g[..., 0], g[..., 1], wts3


# --------------------------------------------------------------------------- block path
def _conv3x3_blocks(r2, w2m, tile):
    """VALID 3x3 conv inside each window: r2 [M,bo+2,bo+2,K] -> [M*bo*bo, K]."""
    m, _, _, k = r2.shape
    boh, bow = tile
    idx = np.zeros((m, 3), dtype=np.int32)
    idx[:, 0] = np.arange(m)
    out = np.empty((m * boh * bow, w2m.shape[1]), dtype=r2.dtype)
    per = max(1, CHUNK_BYTES // max(1, boh * bow * 9 * k * r2.itemsize))
    for t0 in range(0, m, per):
        t1 = min(m, t0 + per)
        p = (t1 - t0) * boh * bow
        cols = workspace((p, 9 * k), r2.dtype, 0)
        K.im2col_cl(r2, idx, t0, t1, cols, boh, bow, 3, 3, 1, 1, 0, 0)
        np.matmul(cols, w2m, out=out[t0 * boh * bow:t1 * boh * bow])
    return out, idx


def block_forward(a0, wts1, inimg, wts3, bw: BlockWeights, tile, moving, eps, fix_gamma,
                  batch_stats):
    """Bottleneck on gathered windows a0 [M,bo+2,bo+2,C] -> (F rows [M*bo*bo, C], saved)."""
    m, bh, bwd, c = a0.shape
    k = bw.w1.shape[1]
    z1, s1 = bn_forward(a0, wts1, bw.gammas[0], bw.betas[0], moving[0], eps, fix_gamma,
                        batch_stats)
    r1 = np.maximum(z1, 0)
    c1 = (r1.reshape(-1, c) @ bw.w1).reshape(m, bh, bwd, k)
    z2, s2 = bn_forward(c1, wts1, bw.gammas[1], bw.betas[1], moving[1], eps, fix_gamma,
                        batch_stats)
    r2 = np.maximum(z2, 0)
    r2 *= inimg[..., None]
    c2, lidx = _conv3x3_blocks(r2, bw.w2, tile)
    z3, s3 = bn_forward(c2, wts3, bw.gammas[2], bw.betas[2], moving[2], eps, fix_gamma,
                        batch_stats)
    r3 = np.maximum(z3, 0)
    out = r3 @ bw.w3
    saved = dict(a0=a0, z1=z1, r1=r1, c1=c1, z2=z2, r2=r2, c2=c2, z3=z3, r3=r3, lidx=lidx,
                 states=(s1, s2, s3))
    return out, saved


def block_backward(g3, sv, wts1, inimg, wts3, bw: BlockWeights, tile, fix_gamma, batch_stats):
    """Gradients from g3 = dL/d(block output rows) [M*bo*bo, C].

    Returns (da0 [M,bo+2,bo+2,C], (dw1, dw2, dw3) as GEMM operands, dgammas, dbetas).
    """
    s1, s2, s3 = sv["states"]
    m, bh, bwd, c = sv["a0"].shape
    k = bw.w1.shape[1]
    boh, bow = tile
    dw3 = sv["r3"].T @ g3
    dz3 = (g3 @ bw.w3.T) * (sv["z3"] > 0)
    dc2, dg3, db3 = bn_backward(dz3, sv["c2"], wts3, s3, fix_gamma, batch_stats)
    # 3x3 conv inside the windows: dW2 = cols^T dc2, dr2 = col2im(dc2 W2^T)
    r2, lidx = sv["r2"], sv["lidx"]
    dw2 = np.zeros_like(bw.w2)
    dr2 = np.zeros_like(r2)
    per = max(1, CHUNK_BYTES // max(1, boh * bow * 9 * k * r2.itemsize))
    for t0 in range(0, m, per):
        t1 = min(m, t0 + per)
        p = (t1 - t0) * boh * bow
        rows = dc2[t0 * boh * bow:t1 * boh * bow]
        cols = workspace((p, 9 * k), r2.dtype, 0)
        K.im2col_cl(r2, lidx, t0, t1, cols, boh, bow, 3, 3, 1, 1, 0, 0)
        dw2 += cols.T @ rows
        np.matmul(rows, bw.w2.T, out=cols)
        K.col2im_add_cl(cols, lidx, t0, t1, dr2, boh, bow, 3, 3, 1, 1, 0, 0, boh, bow)
    dz2 = dr2 * inimg[..., None] * (sv["z2"] > 0)
    dc1, dg2, db2 = bn_backward(dz2, sv["c1"], wts1, s2, fix_gamma, batch_stats)
    dc1r = dc1.reshape(-1, k)
    dw1 = sv["r1"].reshape(-1, c).T @ dc1r
    dz1 = (dc1r @ bw.w1.T).reshape(sv["z1"].shape) * (sv["z1"] > 0)
    da0, dg1, db1 = bn_backward(dz1, sv["a0"], wts1, s1, fix_gamma, batch_stats)
    return da0, (dw1, dw2, dw3), (dg1, dg2, dg3), (db1, db2, db3)


def _gather_out(dy, idx, tile, mo, layout):
    """dy at the active tiles' outputs (m_out applied) as rows [M*bo*bo, C]."""
    p = idx.shape[0] * tile[0] * tile[1]
    if layout == "NHWC":
        g = np.empty((p, dy.shape[3]), dtype=dy.dtype)
        K.gather_out_cl(dy, idx, 0, idx.shape[0], g, tile[0], tile[1], mo)
        return g
    g = np.empty((dy.shape[1], p), dtype=dy.dtype)
    K.gather_out_cf(dy, idx, 0, idx.shape[0], g, tile[0], tile[1], mo)
    return np.ascontiguousarray(g.T)


def _windows(x, idx, tile, layout):
    return sparse_gather(x, idx, (tile[0] + 2, tile[1] + 2), tile, (-1, -1), layout=layout)


def _affine(bw, moving, eps, fix_gamma, i, dtype):
    """Inference BN as (scale, shift) in the data dtype."""
    mean, var = moving[i]
    g = np.ones_like(bw.gammas[i]) if fix_gamma else bw.gammas[i]
    scale = g / np.sqrt(np.asarray(var, np.float64) + eps)
    return (np.ascontiguousarray(scale, dtype=dtype),
            np.ascontiguousarray(bw.betas[i] - mean * scale, dtype=dtype))


def _inimg_rows(idx, tile, hw):
    """uint8 [T*(bo+2)*(bo+2)]: 1 where a window pixel lies inside the image."""
    boh, bow = tile
    hh = idx[:, 1:2] * boh - 1 + np.arange(boh + 2)
    ww = idx[:, 2:3] * bow - 1 + np.arange(bow + 2)
    vh = (hh >= 0) & (hh < hw[0])
    vw = (ww >= 0) & (ww < hw[1])
    return (vh[:, :, None] & vw[:, None, :]).astype(np.uint8).reshape(-1)


def _infer_chunk(x, idx, t0, t1, tile, bw, aff, y, mo, layout, windows=None):
    """Inference bottleneck for tiles t0..t1-1, scatter-added into y (tiles are disjoint).

    ``windows``: every tile's input window gathered beforehand (required when y is x:
    a chunk's halo would otherwise read tiles another chunk already updated).
    """
    boh, bow = tile
    t = t1 - t0
    c, k = bw.w1.shape
    win = (boh + 2) * (bow + 2)
    hw = x.shape[1:3] if layout == "NHWC" else x.shape[2:4]
    if windows is None:
        a0 = sparse_gather(x, idx[t0:t1], (boh + 2, bow + 2), tile, (-1, -1), layout=layout)
    else:
        a0 = windows[t0:t1]
    dt = x.dtype
    r1 = workspace((t * win, c), dt, 2)
    K.bn_relu(a0.reshape(-1, c), aff[0][0], aff[0][1], np.empty(0, np.uint8), r1)
    c1 = np.matmul(r1, bw.w1, out=workspace((t * win, k), dt, 3))
    r2 = workspace((t, boh + 2, bow + 2, k), dt, 4)
    K.bn_relu(c1, aff[1][0], aff[1][1], _inimg_rows(idx[t0:t1], tile, hw), r2.reshape(-1, k))
    p = t * boh * bow
    cols = workspace((p, 9 * k), dt, 0)
    lidx = np.zeros((t, 3), dtype=np.int32)
    lidx[:, 0] = np.arange(t)
    K.im2col_cl(r2, lidx, 0, t, cols, boh, bow, 3, 3, 1, 1, 0, 0)
    c2 = np.matmul(cols, bw.w2, out=workspace((p, k), dt, 3))
    r3 = workspace((p, k), dt, 5)
    K.bn_relu(c2, aff[2][0], aff[2][1], np.empty(0, np.uint8), r3)
    c3 = np.matmul(r3, bw.w3, out=workspace((p, c), dt, 1))
    empty = np.empty(0, dtype=dt)
    if layout == "NHWC":
        K.scatter_out_cl(c3, idx, t0, t1, y, boh, bow, empty, mo, True)
    else:
        K.scatter_out_cf(c3.T, idx, t0, t1, y, boh, bow, empty, mo, True)


def sparse_forward(x, mo, r1, tile, bw, moving, eps, fix_gamma, batch_stats, layout,
                   idx=None, y=None, keep=None):
    """(y, batch BN states or None) on the sparse path; y = x + F(x) * m_out.

    ``y``: a buffer for the result (may be x itself: the residual update in place).
    ``keep`` (a dict): a training forward leaves there what :func:`backward` would
    recompute (tiles, window weights, the stages' activations).
    Inference (moving statistics) runs chunks of tiles end to end on worker threads;
    training needs batch statistics between the stages, so it runs stage by stage.
    """
    if idx is None:
        idx, _ = tiles_of(mo, tile)
    if y is None:
        y = np.empty_like(x)
    if y is not x:
        _parallel.copy(y, x)
    if idx.shape[0] == 0:
        return y, None
    if not batch_stats:
        aff = [_affine(bw, moving, eps, fix_gamma, i, x.dtype) for i in range(3)]
        c = bw.w1.shape[0]
        per = max(1, CHUNK_BYTES // ((tile[0] + 2) * (tile[1] + 2) * c * x.itemsize))
        m = idx.shape[0]
        windows = _windows(x, idx, tile, layout) if y is x else None
        tasks = [partial(_infer_chunk, x, idx, t0, min(m, t0 + per), tile, bw, aff, y, mo,
                         layout, windows) for t0 in range(0, m, per)]
        with blas.single_blas():
            _parallel.run(tasks, work=m * tile[0] * tile[1] * (bw.w2.size + 2 * bw.w1.size))
        return y, None
    wts1, inimg, wts3 = block_weights(mo, r1, idx, tile, x.dtype)
    a0 = _windows(x, idx, tile, layout)
    with blas.single_blas():
        out, sv = block_forward(a0, wts1, inimg, wts3, bw, tile, moving, eps, fix_gamma,
                                batch_stats)
    if keep is not None:
        keep.update(idx=idx, weights=(wts1, inimg, wts3), saved=sv)
    empty = np.empty(0, dtype=x.dtype)
    if layout == "NHWC":
        K.scatter_out_cl(out, idx, 0, idx.shape[0], y, tile[0], tile[1], empty, mo, True)
    else:
        K.scatter_out_cf(out.T, idx, 0, idx.shape[0], y, tile[0], tile[1], empty, mo, True)
    return y, sv["states"]


def backward(dy, x, mo, r1, tile, bw, moving, eps, fix_gamma, batch_stats, layout,
             kept=None):
    """(dx, (dw1, dw2, dw3) in GEMM form, dgammas, dbetas) via the block path. ``kept``:
    what :func:`sparse_forward` kept for this tile (else recomputed)."""
    idx = kept["idx"] if kept else tiles_of(mo, tile)[0]
    dy = np.ascontiguousarray(dy, dtype=x.dtype)
    dx = np.empty_like(dy)
    _parallel.copy(dx, dy)
    if idx.shape[0] == 0:
        zeros = tuple(np.zeros_like(w) for w in (bw.w1, bw.w2, bw.w3))
        return dx, zeros, tuple(np.zeros_like(g) for g in bw.gammas), \
            tuple(np.zeros_like(b) for b in bw.betas)
    if kept:
        (wts1, inimg, wts3), sv = kept["weights"], kept["saved"]
    else:
        wts1, inimg, wts3 = block_weights(mo, r1, idx, tile, x.dtype)
    with blas.single_blas():
        if not kept:
            _, sv = block_forward(_windows(x, idx, tile, layout), wts1, inimg, wts3, bw, tile,
                                  moving, eps, fix_gamma, batch_stats)
        g3 = _gather_out(dy, idx, tile, mo, layout)
        da0, dws, dgs, dbs = block_backward(g3, sv, wts1, inimg, wts3, bw, tile, fix_gamma,
                                            batch_stats)
    sparse_scatter_inplace(da0, idx, dx, (tile[0] + 2, tile[1] + 2), tile, (-1, -1), True,
                           layout=layout)
    return dx, dws, dgs, dbs


# --------------------------------------------------------------------------- dense path
def _bn_dense(v, wmap, gamma, beta, moving, eps, fix_gamma, batch_stats, layout):
    """bn_forward over a dense activation in either layout; wmap (N,H,W) or None = all."""
    if layout == "NHWC":
        wts = wmap if wmap is not None else np.ones(v.shape[:-1], v.dtype)
        return bn_forward(v, wts, gamma, beta, moving, eps, fix_gamma, batch_stats)
    n, c = v.shape[:2]
    v3 = v.reshape(n, c, -1)
    if batch_stats:
        if wmap is None:
            mean = v3.mean(axis=(0, 2))
            var = v3.var(axis=(0, 2))
        else:
            w = wmap.reshape(n, 1, -1).astype(v.dtype)
            tot = w.sum()
            mean = (v3 * w).sum(axis=(0, 2)) / tot if tot > 0 else np.zeros(c, v.dtype)
            d = v3 - mean[:, None]
            var = (d * d * w).sum(axis=(0, 2)) / tot if tot > 0 else np.zeros(c, v.dtype)
    else:
        mean, var = moving
    g = np.ones(c, v.dtype) if fix_gamma else gamma
    inv = (1.0 / np.sqrt(var + eps)).astype(v.dtype)
    scale = g * inv
    z = v3 * scale[:, None] + (beta - mean * scale)[:, None]
    return z.reshape(v.shape).astype(v.dtype, copy=False), BNState(mean, var, inv, g)


def _bn_relu_dense(v, wmap, gamma, beta, moving, eps, fix_gamma, batch_stats, layout):
    """(relu(bn(v)), BN state): inference runs as one fused affine+ReLU pass."""
    if batch_stats:
        z, st = _bn_dense(v, wmap, gamma, beta, moving, eps, fix_gamma, batch_stats, layout)
        return np.maximum(z, 0, out=z), st
    mean, var = moving
    c = v.shape[-1] if layout == "NHWC" else v.shape[1]
    g = np.ones(c, v.dtype) if fix_gamma else gamma
    inv = (1.0 / np.sqrt(var + eps)).astype(v.dtype)
    scale = (g * inv).astype(v.dtype)
    shift = (beta - mean * scale).astype(v.dtype)
    z = np.empty_like(v)
    ax = 3 if layout == "NHWC" else 1
    knorm.channel_affine(knorm.as3(v, ax), scale, shift, knorm.as3(z, ax), relu=True)
    return z, BNState(mean, var, inv, g)


def _pointwise(r, wm, layout):
    """1x1 convolution r -> r @ wm (wm (C_in, C_out)) with the dense conv kernels."""
    if layout == "NHWC":
        w = np.ascontiguousarray(wm.T)[:, None, None, :]
        return conv_forward(r, w, None, (1, 1), (0, 0), (1, 1), 1, layout="NHWC")
    w = np.ascontiguousarray(wm.T)[:, :, None, None]
    return conv_forward(r, w, None, (1, 1), (0, 0), (1, 1), 1)


def dense_forward(x, bw, moving, eps, fix_gamma, batch_stats, layout, mo=None, r1=None,
                  out=None):
    """(y, BN states) of the dense block with sparsym's dense kernels.

    mo/r1 None: the plain dense residual block (the benchmark baseline).  Otherwise batch
    statistics are restricted to the regions and y = x + F(x) * m_out.  ``out``: a buffer
    of x's shape (may be x itself) that receives y, saving a copy of the whole tensor.
    """
    x = np.ascontiguousarray(x)
    k = bw.w1.shape[1]
    r, s1 = _bn_relu_dense(x, r1, bw.gammas[0], bw.betas[0], moving[0], eps, fix_gamma,
                           batch_stats, layout)
    c1 = _pointwise(r, bw.w1, layout)
    r, s2 = _bn_relu_dense(c1, r1, bw.gammas[1], bw.betas[1], moving[1], eps, fix_gamma,
                           batch_stats, layout)
    w2 = bw.w2.T.reshape(k, 3, 3, k)
    if layout == "NHWC":
        c2 = conv_forward(r, w2, None, (1, 1), (1, 1), (1, 1), 1, layout="NHWC")
    else:
        c2 = conv_forward(r, np.ascontiguousarray(w2.transpose(0, 3, 1, 2)), None, (1, 1),
                          (1, 1), (1, 1), 1)
    r, s3 = _bn_relu_dense(c2, mo, bw.gammas[2], bw.betas[2], moving[2], eps, fix_gamma,
                           batch_stats, layout)
    f = _pointwise(r, bw.w3, layout)
    if mo is not None and not mo.all():  # an all-ones mask (dense dispatch) changes nothing
        f *= mo[..., None] if layout == "NHWC" else mo[:, None]
    if out is None:
        f += x
        return f, (s1, s2, s3)
    np.add(f, x, out=out)
    return out, (s1, s2, s3)


__all__ = ["geometry", "pack_weights", "unpack_grads", "region_maps", "sparse_forward",
           "dense_forward", "backward", "bn_forward", "bn_backward", "update_moving"]
