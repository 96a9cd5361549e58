"""Kernels of the fused ops (SparseBlockConvolution, SparseBottleneck): path and tile choice.

Each call derives the pixel-exact output mask, picks a tile (given ``bsize``, autotuned, or
the default), lists the active tiles, and runs the sparse path unless density-aware
dispatch says the dense path is faster at this block density.  Gradients make the same
(cached) choices.
"""
from __future__ import annotations

import collections
import threading
import weakref

import numpy as np

from ...base import ShapeError
from .._kept import KeptWith
from . import conv as sconv
from . import resblock as rb
from . import strips as sstrips
from . import tuning
from .geometry import binary_mask, clamp_tile, conv_geometry, output_mask, tile_from_bsize, tiles_of

# executions of SparseBottleneck that updated data in place / wrote an executor buffer
stats = {"res_inplace": 0, "res_out_buffer": 0}


def _mode(dispatch):
    if dispatch != "auto":
        return dispatch
    return "auto" if tuning.dispatch_enabled() else "sparse"


def spatial(shape, layout):
    """(N, C, H, W) of a 4-D data shape under the layout."""
    if layout == "NHWC":
        return shape[0], shape[3], shape[1], shape[2]
    return shape[0], shape[1], shape[2], shape[3]


def _mask3(mask, x_shape, layout):
    m = binary_mask(mask, layout)
    n, _, h, w = spatial(x_shape, layout)
    if m.shape != (n, h, w):
        raise ShapeError(f"mask of shape {np.shape(mask)} does not match data "
                         f"{tuple(x_shape)} (expected N,H,W = {(n, h, w)}, layout {layout})")
    return m


def _all_tiles(mo, tile):
    ones = np.ones_like(mo)
    idx, total = tiles_of(ones, tile)
    return ones, idx, total


def _choose(key, mode, bsize, autotune, geom, mo, run_tile, run_dense, strips=False):
    """(tile, idx, use_dense) for one call; run_tile(tile, mo, idx) runs the sparse path.

    ``strips``: whether the strip path (sbnet.strips) computes this geometry: its tiles
    (STRIPS, band height) are then the autotuner's candidates (it computes the active
    outputs with fewer extra ones than any square tile, on the same dense convolution) and
    STRIP_DEFAULT the tile without autotuning; their idx is a StripPlan and their density
    the computed output pixels'."""
    if mode == "dense":
        return None, None, True
    if bsize is not None:
        tile = tile_from_bsize(geom, bsize)
    elif autotune and tuning.autotune_enabled() and _density(mo) > 0:
        cands = STRIP_TILES if strips else tuning.candidate_tiles(geom.out)
        tile = tuning.tuned_tile(
            key + ("bucket", tuning.bucket(_density(mo))), cands,
            lambda t: run_tile(t, mo, _tiles(mo, t, geom)[0]))
    else:
        tile = STRIP_DEFAULT if strips else clamp_tile(geom, tuning.DEFAULT_TILE)
    idx, total = _tiles(mo, tile, geom)
    count = idx.px if sstrips.is_strip(tile) else idx.shape[0]
    if mode == "sparse" or count == 0:
        return tile, idx, False

    def runners():
        if sstrips.is_strip(tile):
            ones, one = np.ones_like(mo), np.zeros_like(mo)
            one[0, 0, 0] = 1
            return (run_dense, lambda: run_tile(tile, ones, None),
                    lambda: run_tile(tile, one, None))
        ones, idx_all, _ = _all_tiles(mo, tile)
        return (run_dense, lambda: run_tile(tile, ones, idx_all),
                lambda: run_tile(tile, ones, idx_all[:1]))

    thr = tuning.threshold(key + ("tile", tile), runners, total)
    return tile, idx, count / total > thr * tuning.MARGIN


# --------------------------------------------------------------------------- convolution
def conv_setup(a, x, mask, w, b):
    """Validated arrays, geometry and output mask of one SparseBlockConvolution call."""
    x, w, b = sconv.check_inputs(np.asarray(x), np.asarray(w), b, a.layout)
    _, _, h, wd = spatial(x.shape, a.layout)
    kh, kw = (w.shape[1], w.shape[2]) if a.layout == "NHWC" else (w.shape[2], w.shape[3])
    if (kh, kw) != tuple(a.kernel):
        raise ShapeError(f"weight shape {w.shape} does not match kernel {tuple(a.kernel)}")
    geom = conv_geometry((h, wd), a.kernel, a.stride, a.pad, a.padding)
    mo = _output_mask(_mask3(mask, x.shape, a.layout), geom, a.tol)
    return x, w, b, geom, mo


# Output masks and their active tiles of recent masks, per geometry and tol: the layers of a
# network apply one mask again and again, and deriving them (the receptive-field max filter
# and the tile listing, ~1.5 ms at 400x704 on one core) cost a tenth of a 3x3 block-sparse
# convolution there. A hit needs the mask equal, value for value, to the copy kept (a
# compare of the mask, ~0.1 ms): no write to the mask can be missed. The cached output
# mask and tile lists are read-only; tiles are listed per tile size on first use.
_MASKS: collections.OrderedDict = collections.OrderedDict()  # key -> (mask copy, mo)
_BY_MO: dict = {}  # id(mo) -> (mo, {tile: (idx, total)}) of the entries in _MASKS
_MASKS_CAP = 8
_masks_lock = threading.Lock()


def _output_mask(m3, geom, tol):
    """output_mask(m3, geom, tol), from the cache above when the mask was seen."""
    key = (m3.shape, m3.dtype.str, geom, float(tol))
    with _masks_lock:
        hit = _MASKS.get(key)
        if hit is not None and np.array_equal(hit[0], m3):
            _MASKS.move_to_end(key)
            return hit[1]
    mo = output_mask(m3, geom, tol)
    mo.flags.writeable = False
    with _masks_lock:
        old = _MASKS.pop(key, None)
        if old is not None:
            _BY_MO.pop(id(old[1]), None)
        _MASKS[key] = (m3.copy(), mo)
        _BY_MO[id(mo)] = (mo, {})
        while len(_MASKS) > _MASKS_CAP:
            _, gone = _MASKS.popitem(last=False)
            _BY_MO.pop(id(gone[1]), None)
    return mo


def _density(mo):
    """mo.mean(), kept with a cached output mask (0.1-0.2 ms a call at 400x704)."""
    with _masks_lock:
        entry = _BY_MO.get(id(mo))
        per = entry[1] if entry is not None and entry[0] is mo else None
        hit = per.get("density") if per is not None else None
    if hit is None:
        hit = float(mo.mean())
        if per is not None:
            with _masks_lock:
                per["density"] = hit
    return hit


def _tiles(mo, tile, geom=None):
    """tiles_of(mo, tile), or for a strip tile (geom given) (StripPlan, output pixels),
    kept with a cached output mask."""
    strip = sstrips.is_strip(tile)
    key = (tile, geom) if strip else tuple(tile)
    with _masks_lock:
        entry = _BY_MO.get(id(mo))
        per = entry[1] if entry is not None and entry[0] is mo else None
        hit = per.get(key) if per is not None else None
    if hit is not None:
        return hit
    if strip:
        hit = (sstrips.plan(mo, geom, tile[1]), mo.size)
    else:
        hit = tiles_of(mo, key)
        hit[0].flags.writeable = False
    if per is not None:
        with _masks_lock:
            per[key] = hit
    return hit


# strip tiles (band heights) the autotuner tries, and the one used without it
STRIP_TILES = [(sstrips.STRIPS, 1), (sstrips.STRIPS, 2), (sstrips.STRIPS, 4)]
STRIP_DEFAULT = (sstrips.STRIPS, 2)


def conv_plan(a, x, w, b, geom, mo):
    """(tile, idx, use_dense) for a convolution call."""
    key = ("conv", x.shape, w.shape, x.dtype.str, geom, a.layout, b is not None)

    def run_tile(tile, m, idx):
        if sstrips.is_strip(tile):
            sp = idx if idx is not None else sstrips.plan(m, geom, tile[1])
            return sstrips.forward(x, w, b, geom, a.layout, sp)
        return sconv.sparse_forward(x, w, b, m, geom, tile, a.layout, idx=idx)

    def run_dense():
        return sconv.dense_forward(x, w, b, mo, geom, a.layout)

    return _choose(key, _mode(a.dispatch), a.bsize, a.autotune, geom, mo, run_tile, run_dense,
                   sstrips.supported(geom))


# a training forward's geometry, output mask, tile choice and gathered blocks, kept with its
# data array for the backward (which receives the same array): the backward neither
# recomputes the mask and the tiles nor gathers the windows again
_KEPT = KeptWith()
_RES_KEPT = KeptWith()  # the same for SparseBottleneck: its tiles and stage activations


def _conv_key(a, x, mask, w):
    """(what a kept forward must match: shapes, dtype of the raw data, parameters; mask)."""
    return (tuple(x.shape), x.dtype.str, tuple(w.shape), a.layout, tuple(a.kernel),
            tuple(a.stride), tuple(a.pad), a.padding, a.bsize, a.tol, a.dispatch,
            a.autotune), mask


def conv_forward(a, x, mask, w, b=None):
    """y = (conv(x, w) + b) * m_out."""
    x0 = x
    x, w, b, geom, mo = conv_setup(a, x, mask, w, b)
    tile, idx, dense = conv_plan(a, x, w, b, geom, mo)
    keep = {} if a.get("__is_train__", False) else None
    if dense:
        y = sconv.dense_forward(x, w, b, mo, geom, a.layout)
    elif sstrips.is_strip(tile):
        y = sstrips.forward(x, w, b, geom, a.layout, idx, keep)
    else:
        y = sconv.sparse_forward(x, w, b, mo, geom, tile, a.layout, idx=idx, keep=keep)
    if keep is not None and isinstance(x0, np.ndarray):  # the backward gets x0 again
        key, m = _conv_key(a, x0, mask, w)
        _KEPT.put(x0, (key, _mask_ref(m), geom, mo, tile, idx, dense,
                       keep.get("blocks", keep.get("strips"))))
    return y


def _mask_ref(m):
    """A weak reference to the mask array (None when it takes none)."""
    try:
        return weakref.ref(m)
    except TypeError:
        return None


def _res_key(a, x, xs):
    return (tuple(x.shape), x.dtype.str, a.layout, a.num_filter, a.eps, a.fix_gamma,
            a.use_global_stats, a.tol, a.bsize, a.dispatch, a.autotune,
            tuple(tuple(np.shape(v)) for v in xs[2:11]))


def _kept_plan(a, x, mask, w):
    """What the forward on ``x`` kept, when it ran with this mask and these parameters."""
    hit = _KEPT.get(x) if isinstance(x, np.ndarray) else None
    if hit is None:
        return None
    key, m = _conv_key(a, x, mask, w)
    if hit[0] != key or hit[1] is None or hit[1]() is not m:
        return None
    return hit[2:]


def conv_backward(a, dy, x, mask, w, need_bias):
    """(dx, dw, db or None) of conv_forward."""
    kept = _kept_plan(a, x, mask, w)
    if kept is not None:
        x, w, _ = sconv.check_inputs(x, np.asarray(w), None, a.layout)
        geom, mo, tile, idx, dense, blocks = kept
    else:
        x, w, _, geom, mo = conv_setup(a, x, mask, w, None)
        bias = np.zeros(w.shape[0], x.dtype) if need_bias else None
        tile, idx, dense = conv_plan(a, x, w, bias, geom, mo)
        blocks = None
    if dense:
        return sconv.dense_backward(x, w, dy, mo, geom, a.layout, need_bias)
    if sstrips.is_strip(tile):
        return sstrips.backward(x, w, dy, mo, geom, a.layout, idx, need_bias, strips=blocks)
    return sconv.sparse_backward(x, w, dy, mo, geom, tile, a.layout, need_bias, idx=idx,
                                 blocks=blocks)


# --------------------------------------------------------------------------- bottleneck
def res_setup(a, xs):
    """(x, mask3, BlockWeights, moving pairs, geometry, m_out, region1)."""
    x = np.asarray(xs[0])
    if x.ndim != 4:
        raise ShapeError(f"SparseBottleneck expects 4-D data, got shape {x.shape}")
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float32)
    x = np.ascontiguousarray(x)
    m3 = _mask3(xs[1], x.shape, a.layout)
    g1, b1, w1, g2, b2, w2, g3, b3, w3 = xs[2:11]
    bw = rb.pack_weights(x, w1, w2, w3, (g1, g2, g3), (b1, b2, b3), a.layout)
    mov = tuple((xs[11 + 2 * i], xs[12 + 2 * i]) for i in range(3))
    geom = rb.geometry(x.shape, a.layout)
    mo, r1 = rb.region_maps(m3, geom, a.tol)
    return x, bw, mov, geom, mo, r1


def _batch_stats(a):
    return bool(a.get("__is_train__", False)) and not a.use_global_stats


def res_plan(a, x, bw, mov, geom, mo, r1, batch):
    key = ("res", x.shape, bw.w1.shape, x.dtype.str, a.layout, batch)
    fwd_mov = tuple((np.asarray(m, x.dtype), np.asarray(v, x.dtype)) for m, v in mov)

    def run_tile(tile, m, idx):
        r = r1 if m is mo else m
        return rb.sparse_forward(x, m, r, tile, bw, fwd_mov, a.eps, a.fix_gamma, batch,
                                 a.layout, idx=idx)

    def run_dense():
        return rb.dense_forward(x, bw, fwd_mov, a.eps, a.fix_gamma, batch, a.layout, mo, r1)

    return _choose(key, _mode(a.dispatch), a.bsize, a.autotune, geom, mo, run_tile,
                   run_dense), fwd_mov


def res_forward(a, xs, out=None):
    """y = x + F(x) * m_out; moving statistics updated in place when training.

    ``out``: the executor's buffer for y, possibly x's own buffer (the residual update
    then happens in place, SBNet's ``use_var``).
    """
    x, bw, mov, geom, mo, r1 = res_setup(a, xs)
    batch = _batch_stats(a)
    (tile, idx, dense), fwd_mov = res_plan(a, x, bw, mov, geom, mo, r1, batch)
    buf = None
    if out is not None and out[0].shape == x.shape and out[0].dtype == x.dtype:
        buf = x if np.shares_memory(out[0], x) else out[0]
        stats["res_inplace" if buf is x else "res_out_buffer"] += 1
    # a training forward keeps its activations with the data array for the backward
    # (not when it overwrites that array: the backward then sees other values)
    keep = {} if (a.get("__is_train__", False) and buf is not x
                  and isinstance(xs[0], np.ndarray)) else None
    if dense:
        y, states = rb.dense_forward(x, bw, fwd_mov, a.eps, a.fix_gamma, batch, a.layout,
                                     mo, r1, out=buf)
    else:
        y, states = rb.sparse_forward(x, mo, r1, tile, bw, fwd_mov, a.eps, a.fix_gamma,
                                      batch, a.layout, idx=idx, y=buf, keep=keep)
    if keep:
        _RES_KEPT.put(xs[0], (_res_key(a, x, xs), _mask_ref(xs[1]), tile, keep))
    if batch and states is not None:
        rb.update_moving(mov, states, a.momentum)
    return y


def res_backward(a, dy, xs):
    """Gradients w.r.t. (data, g1, b1, w1, g2, b2, w2, g3, b3, w3) via the block path."""
    x, bw, mov, geom, mo, r1 = res_setup(a, xs)
    batch = _batch_stats(a)
    (tile, _, dense), fwd_mov = res_plan(a, x, bw, mov, geom, mo, r1, batch)
    if tile is None or dense:
        tile = geom.out   # the whole image as one window: the dense computation
    hit = _RES_KEPT.get(xs[0]) if isinstance(xs[0], np.ndarray) else None
    kept = None
    if (hit is not None and hit[0] == _res_key(a, x, xs) and hit[1] is not None
            and hit[1]() is xs[1] and hit[2] == tile):
        kept = hit[3]
    dx, dws, dgs, dbs = rb.backward(dy, x, mo, r1, tile, bw, fwd_mov, a.eps, a.fix_gamma,
                                    batch, a.layout, kept=kept)
    dw1, dw2, dw3 = rb.unpack_grads(*dws, a.layout)
    return (dx, dgs[0], dbs[0], dw1, dgs[1], dbs[1], dw2, dgs[2], dbs[2], dw3)
