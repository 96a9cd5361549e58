"""Row-sparse kernels over :class:`sparsym.storage.RSP` (sorted unique int64 row indices).

Every kernel is a pure function: raw values in, NEW raw values out. "canonical"
means row indices sorted and unique (the RSP invariant); kernels take canonical
inputs unless the docstring says otherwise. Outputs may alias an input's
``indices`` array where stated; data is never shared with an input.
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange

from ..base import ShapeError, normalize_axis
from ..storage import IDX, RSP
from . import _twins
from ._arrays import common, find_sorted, prefetch, quiet_fp, unique_positions
from ._f16 import f16_safe
from ._twins import twin


def _check_same(a, b, what):
    if tuple(a.shape) != tuple(b.shape):
        raise ShapeError(f"{what}: shapes differ, {tuple(a.shape)} vs {tuple(b.shape)}")


def _tail_size(shape):
    return math.prod(shape[1:])


def _empty(shape, dtype):
    shape = tuple(shape)
    return RSP(np.zeros((0,) + shape[1:], dtype), np.zeros(0, IDX), shape)


# ----------------------------------------------------------------------------- lookup
@twin
def _lookup(keys, ids, out):
    for t in prange(ids.shape[0]):
        out[t] = find_sorted(keys, ids[t])


def rows_lookup(indices, row_ids) -> np.ndarray:
    """Positions of row_ids in sorted unique indices (int64, -1 if absent), shaped like row_ids."""
    ids = np.asarray(row_ids)
    flat = np.ascontiguousarray(ids.reshape(-1), dtype=IDX)
    out = np.empty(len(flat), dtype=IDX)
    if len(flat):
        keys = np.ascontiguousarray(indices, dtype=IDX)
        _lookup(len(flat) * max(len(keys), 2).bit_length(), keys, flat, out)
    return out.reshape(ids.shape)


@njit(cache=True)
def _merge_union(ai, bi, out, pa, pb):
    # out = sorted union of sorted-unique ai, bi; pa/pb = positions of ai/bi in out
    p = 0
    q = 0
    o = 0
    na = ai.shape[0]
    nb = bi.shape[0]
    while p < na or q < nb:
        if q >= nb or (p < na and ai[p] < bi[q]):
            out[o] = ai[p]
            pa[p] = o
            p += 1
        elif p >= na or ai[p] > bi[q]:
            out[o] = bi[q]
            pb[q] = o
            q += 1
        else:
            out[o] = ai[p]
            pa[p] = o
            pb[q] = o
            p += 1
            q += 1
        o += 1
    return o


@njit(cache=True)
def _merge_inter(ai, bi, out, pa, pb):
    # out = sorted intersection; pa/pb = positions in ai/bi of each out entry
    p = 0
    q = 0
    o = 0
    while p < ai.shape[0] and q < bi.shape[0]:
        if ai[p] < bi[q]:
            p += 1
        elif ai[p] > bi[q]:
            q += 1
        else:
            out[o] = ai[p]
            pa[o] = p
            pb[o] = q
            o += 1
            p += 1
            q += 1
    return o


# ----------------------------------------------------------------------------- casts
def rsp_to_dense(r: RSP) -> np.ndarray:
    """Densify a canonical rsp (new array)."""
    out = np.zeros(r.shape, dtype=r.data.dtype)
    if len(r.indices):
        out[r.indices] = r.data
    return out


@twin
def _row_any(x, out):
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            if x[i, j] != 0:
                out[i] = True
                break


@f16_safe
def dense_to_rsp(x: np.ndarray) -> RSP:
    """Keep rows of x (ndim >= 1) with any non-zero; output canonical, data copied."""
    x = np.asarray(x)
    if x.ndim == 0:
        raise ShapeError("dense_to_rsp: needs at least 1 dimension")
    m = x.shape[0]
    flat = np.ascontiguousarray(x).reshape(m, _tail_size(x.shape))
    keep = np.zeros(m, dtype=np.bool_)
    if flat.size:
        _row_any(flat.size, flat, keep)
    rows = np.flatnonzero(keep).astype(IDX, copy=False)
    return RSP(np.ascontiguousarray(x[rows]), rows, x.shape)


def canonicalize_rsp(data, indices, shape) -> RSP:
    """Any row order/duplicates in; output canonical, duplicate rows summed, inputs untouched."""
    data = np.asarray(data)
    indices = np.asarray(indices, dtype=IDX).reshape(-1)
    shape = tuple(int(s) for s in shape)
    if data.shape[0] != len(indices):
        raise ShapeError(f"canonicalize_rsp: data has {data.shape[0]} rows but indices has "
                         f"{len(indices)} entries")
    if len(indices) == 0:
        return RSP(np.zeros((0,) + shape[1:], data.dtype), np.zeros(0, IDX), shape)
    if np.all(indices[1:] > indices[:-1]):
        return RSP(data.copy(), indices.copy(), shape)
    order = np.argsort(indices, kind="stable")
    idx = indices[order]
    first = np.empty(len(idx), dtype=np.bool_)
    first[0] = True
    np.not_equal(idx[1:], idx[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    sd = data[order]
    if len(starts) < len(idx):
        sd = np.add.reduceat(sd, starts, axis=0)
    return RSP(np.ascontiguousarray(sd), idx[starts], shape)


# ----------------------------------------------------------------------------- elementwise
@njit(cache=True)
def _add_rows(ad, bd, pa, pb, al, be, out):
    # out row o = al*ad[pa[o]] + be*bd[pb[o]], an absent side (-1) contributing nothing
    k = np.uint64(out.shape[1])
    for o in range(out.shape[0]):
        ia = pa[o]
        ib = pb[o]
        uo = np.uint64(o)
        if ia >= 0 and ib >= 0:
            ua = np.uint64(ia)
            ub = np.uint64(ib)
            for j in range(k):
                out[uo, j] = al * ad[ua, j] + be * bd[ub, j]
        elif ia >= 0:
            ua = np.uint64(ia)
            for j in range(k):
                out[uo, j] = al * ad[ua, j]
        else:
            ub = np.uint64(ib)
            for j in range(k):
                out[uo, j] = be * bd[ub, j]


@f16_safe
def add_rsp_rsp(a: RSP, b: RSP, alpha=1.0, beta=1.0) -> RSP:
    """alpha*a + beta*b on the union of rows; inputs canonical, output canonical (zeros kept)."""
    _check_same(a, b, "add(row_sparse, row_sparse)")
    dt = common(a.data.dtype, b.data.dtype)
    al, be = dt.type(alpha), dt.type(beta)
    if len(a.indices) == len(b.indices) and np.array_equal(a.indices, b.indices):
        data = a.data * al if alpha != 1 else a.data.astype(dt, copy=True)
        data += b.data * be if beta != 1 else b.data
        return RSP(data, a.indices.copy(), a.shape)
    na, nb = len(a.indices), len(b.indices)
    idx = np.empty(na + nb, dtype=IDX)
    pa = np.empty(na, dtype=IDX)
    pb = np.empty(nb, dtype=IDX)
    nu = _merge_union(a.indices, b.indices, idx, pa, pb)
    src_a = np.full(nu, -1, dtype=IDX)
    src_b = np.full(nu, -1, dtype=IDX)
    src_a[pa] = np.arange(na, dtype=IDX)
    src_b[pb] = np.arange(nb, dtype=IDX)
    k = _tail_size(a.shape)
    out = np.empty((nu, k), dtype=dt)
    if nu and k:
        _add_rows(np.ascontiguousarray(a.data, dtype=dt).reshape(na, k),
                  np.ascontiguousarray(b.data, dtype=dt).reshape(nb, k), src_a, src_b,
                  al, be, out)
    return RSP(out.reshape((nu,) + a.shape[1:]), idx[:nu].copy(), a.shape)


def union_apply_rsp(a: RSP, b: RSP, fn) -> RSP:
    """fn(a, b) on the union of rows (absent rows read 0); fn(0, 0) must be 0; canonical."""
    _check_same(a, b, "union(row_sparse, row_sparse)")
    dt = common(a.data.dtype, b.data.dtype)
    na, nb = len(a.indices), len(b.indices)
    idx = np.empty(na + nb, dtype=IDX)
    pa = np.empty(na, dtype=IDX)
    pb = np.empty(nb, dtype=IDX)
    nu = _merge_union(a.indices, b.indices, idx, pa, pb)
    da = np.zeros((nu,) + a.shape[1:], dtype=dt)
    db = np.zeros((nu,) + a.shape[1:], dtype=dt)
    da[pa] = a.data
    db[pb] = b.data
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.asarray(fn(da, db)).astype(dt, copy=False)
    return RSP(out, idx[:nu].copy(), a.shape)


def intersect_rows(ai, bi):
    """(rows in both sorted unique ``ai`` and ``bi``, their positions in ai, in bi)."""
    n = min(len(ai), len(bi))
    idx = np.empty(n, dtype=IDX)
    pa = np.empty(n, dtype=IDX)
    pb = np.empty(n, dtype=IDX)
    k = _merge_inter(ai, bi, idx, pa, pb)
    return idx[:k], pa[:k], pb[:k]


def mul_rsp_rsp(a: RSP, b: RSP) -> RSP:
    """a * b on the intersection of rows; inputs canonical, output canonical."""
    _check_same(a, b, "mul(row_sparse, row_sparse)")
    idx, pa, pb = intersect_rows(a.indices, b.indices)
    return RSP(a.data[pa] * b.data[pb], idx, a.shape)


def mul_rsp_dns(a: RSP, d: np.ndarray) -> RSP:
    """a * d (same shape) on a's rows only; indices alias a, data is new."""
    _check_same(a, d, "mul(row_sparse, dense)")
    return RSP(a.data * d[a.indices], a.indices, a.shape)


def add_rsp_dns(a: RSP, d: np.ndarray) -> np.ndarray:
    """a + d as a new dense array; a canonical."""
    _check_same(a, d, "add(row_sparse, dense)")
    out = np.array(d, dtype=common(a.data.dtype, d.dtype), copy=True)
    if len(a.indices):
        out[a.indices] += a.data
    return out


def add_n_rsp(arrs) -> RSP:
    """Sum of canonical rsp arrays on the union of rows; output canonical."""
    arrs = list(arrs)
    if not arrs:
        raise ShapeError("add_n_rsp: need at least one array")
    for x in arrs[1:]:
        _check_same(arrs[0], x, "add_n(row_sparse)")
    dt = common(*[x.data.dtype for x in arrs])
    if len(arrs) == 1:
        return RSP(arrs[0].data.astype(dt, copy=True), arrs[0].indices.copy(), arrs[0].shape)
    if len(arrs) == 2:
        return add_rsp_rsp(arrs[0], arrs[1])
    idx = np.unique(np.concatenate([x.indices for x in arrs])).astype(IDX, copy=False)
    out = np.zeros((len(idx),) + arrs[0].shape[1:], dtype=dt)
    for x in arrs:
        if len(x.indices):
            out[np.searchsorted(idx, x.indices)] += x.data
    return RSP(out, idx, arrs[0].shape)


def map_values(r: RSP, fn) -> RSP:
    """fn (zero-preserving ufunc) on stored rows; indices alias r, data is new."""
    return RSP(np.asarray(fn(r.data)), r.indices, r.shape)


# ----------------------------------------------------------------------------- rows
def retain(r: RSP, row_ids) -> RSP:
    """Rows of canonical r whose id is in row_ids (any order/repeats); canonical, data copied."""
    ids = np.unique(np.asarray(row_ids, dtype=IDX).reshape(-1))
    if len(r.indices) == 0 or len(ids) == 0:
        return _empty(r.shape, r.data.dtype)
    pos = rows_lookup(r.indices, ids)
    hit = pos >= 0
    return RSP(r.data[pos[hit]], ids[hit], r.shape)


# NumPy's float -> int64 cast of a value outside int64's range (inf, NaN, 1e30): x86
# gives INT64_MIN (clipped to row 0), other CPUs saturate; the compiled clip does the same
with np.errstate(invalid="ignore"):
    _BIG_TO_ZERO = bool(np.array([np.inf, 1e30]).astype(np.int64)[0] < 0)


@njit(cache=True, nogil=True, error_model="numpy")
def _clip_float_ids(ids, hi, big_to_zero, out):
    """out = ids (float) cast to int64 as NumPy does, clipped into [0, hi]."""
    for p in range(ids.shape[0]):
        v = ids[p]
        if v >= 9.2233720368547758e18 or v < -9.2233720368547758e18 or v != v:
            out[p] = 0 if big_to_zero or not v > 0 else hi  # NaN: 0 both ways
        elif v < 1.0:
            out[p] = 0
        else:
            i = np.int64(v)
            out[p] = hi if i > hi else i


def clip_ids(idx, n) -> np.ndarray:
    """``idx`` as int64 clipped into [0, n) (MXNet's Embedding/take mode='clip'); new array.

    Float ids (NDArrays default to float32) are cast and clipped in one compiled pass: the
    cast, np.maximum and np.minimum took three passes and ~3x as long over a batch's 30k
    ids, which the embedding forward and backward both clip. Other dtypes, small batches
    and a process where Numba is not set up yet (:func:`_twins.numba_on`) take a cast and
    two ufunc calls (np.clip on integers costs ~10 us of dtype-limit checks per call)."""
    idx = np.asarray(idx)
    hi = max(int(n) - 1, 0)
    if idx.dtype.type in (np.float32, np.float64) and idx.size >= 256:
        if _twins.numba_on():
            out = np.empty(idx.shape, IDX)
            _clip_float_ids(np.ascontiguousarray(idx).reshape(-1), hi, _BIG_TO_ZERO,
                            out.reshape(-1))
            return out
        with quiet_fp():  # NaN and huge ids cast as the kernel casts them, without warnings
            ids = idx.astype(IDX)
        np.maximum(ids, 0, out=ids)
        np.minimum(ids, hi, out=ids)
        _twins.charge_numpy(idx.size, 3)
        return ids
    ids = idx.astype(IDX)
    np.maximum(ids, 0, out=ids)
    return np.minimum(ids, hi, out=ids)


@njit(cache=True, parallel=True)
def _gather_par(w, ids, out):
    """out[i] = w[ids[i]], the ids split among the threads."""
    for i in prange(ids.shape[0]):
        r = ids[i]
        for j in range(w.shape[1]):
            out[i, j] = w[r, j]


def take_rows(w: np.ndarray, idx) -> np.ndarray:
    """Dense ``w[clip(idx)]`` (idx.shape + w.shape[1:]), ids clipped into [0, len(w)) as
    MXNet's Embedding does: NumPy's take, or for a large batch a compiled copy split among
    the threads when the measured gate finds it faster (a random-row gather waits on
    memory, which two cores wait on together)."""
    idx = np.asarray(idx)
    ids = clip_ids(idx, w.shape[0]).reshape(-1)
    tail = tuple(w.shape[1:])
    k = _tail_size(w.shape)
    if (w.dtype.kind != "f" or w.dtype.itemsize < 4 or not w.flags.c_contiguous
            or len(w) == 0 or k == 0):
        return np.take(w, ids, axis=0).reshape(idx.shape + tail)
    w2 = w.reshape(len(w), k)
    out = np.empty((len(ids), k), w.dtype)
    _twins.run_gated("take_rows", out.size,
                     lambda: np.take(w2, ids, axis=0, out=out, mode="clip"),
                     lambda: _gather_par(w2, ids, out), _gather_par)
    return out.reshape(idx.shape + tail)


def take_rows_rsp(w: RSP, idx) -> np.ndarray:
    """Dense w[idx] (idx.shape + w.shape[1:]); idx clipped as in MXNet Embedding; absent rows 0."""
    idx = np.asarray(idx)
    # MXNet's Embedding/take default mode='clip': out-of-range ids read the nearest end row
    ids = clip_ids(idx, w.shape[0])
    if len(w.indices) == w.shape[0]:  # every row stored (canonical): row i is at i
        pos = ids.reshape(-1)
    else:
        pos = rows_lookup(w.indices, ids).reshape(-1)
    tail = tuple(w.shape[1:])
    wd = np.ascontiguousarray(w.data).reshape(len(w.indices), _tail_size(w.shape))
    if len(wd):
        out = wd.take(np.maximum(pos, 0), axis=0)
        out[pos < 0] = 0
    else:
        out = np.zeros((len(pos), wd.shape[1]), dtype=w.data.dtype)
    return out.reshape(idx.shape + tail)


# rows of a scatter-add prefetched ahead (a batch's 30k embedding-gradient rows summed into
# 9k: 0.71x the time, one core)
_AHEAD_ROWS = 8


@njit(cache=True)
def _scatter_add(inv, g, out):
    k = g.shape[1]
    n = inv.shape[0]
    for t in range(n):
        if t + _AHEAD_ROWS < n:  # the target rows are scattered: fetch ahead
            prefetch(out, inv[t + _AHEAD_ROWS] * k)
        dst = out[inv[t]]
        src = g[t]
        for j in range(k):
            dst[j] += src[j]


def add_rows_at(out, ids, g):
    """``out[ids[t]] += g[t]`` for every t (np.add.at over the rows of a C-contiguous ``out``,
    compiled: np.add.at is ~50x slower); ``ids`` int64 in range, ``g`` of len(ids) rows."""
    g2 = np.ascontiguousarray(g, dtype=out.dtype).reshape(len(ids), -1)
    o2 = out.reshape(out.shape[0], -1)
    if out.dtype.kind != "f" or out.dtype.itemsize < 4 or not o2.flags.c_contiguous:
        np.add.at(o2, ids, g2)  # Numba has no half arithmetic
    else:
        _scatter_add(np.asarray(ids, dtype=np.int64), g2, o2)
    return out


@f16_safe
def embedding_grad_rsp(idx, ograd, num_rows) -> RSP:
    """Embedding weight grad: ograd (idx.shape + (D,)) rows summed per index; canonical output."""
    idx = np.asarray(idx)
    ograd = np.asarray(ograd)
    # clip as the forward does (MXNet mode='clip') so the output rows stay in range
    flat = clip_ids(idx, num_rows).reshape(-1)
    tail = ograd.shape[idx.ndim:]
    if ograd.shape[:idx.ndim] != idx.shape:
        raise ShapeError(f"embedding_grad_rsp: ograd shape {ograd.shape} does not start with "
                         f"index shape {idx.shape}")
    shape = (int(num_rows),) + tuple(tail)
    if len(flat) == 0:
        return _empty(shape, ograd.dtype)
    g = np.ascontiguousarray(ograd).reshape(len(flat), int(np.prod(tail, dtype=np.int64)))
    uniq, inv = unique_positions(flat, int(num_rows))
    out = segment_rows_sum(inv, g, len(uniq))
    return RSP(out.reshape((len(uniq),) + tuple(tail)), uniq, shape)


@njit(cache=True, nogil=True)
def _segment_rows(inv, g, out):
    """out = zeros, then out[inv[t]] += g[t] for t in order."""
    out[:] = 0
    _scatter_add(inv, g, out)


@njit(cache=True)
def _own_rows(out, inv, t, lo, hi):
    """Prefetch the row that id ``t + _AHEAD_ROWS`` adds to when it lies in this task's
    range [lo, hi) (the other ranges are written by other cores); True when id ``t`` does."""
    n = inv.shape[0]
    if t + _AHEAD_ROWS < n:
        ua = inv[t + _AHEAD_ROWS]
        if ua >= lo and ua < hi:
            prefetch(out, ua * out.shape[1])
    u = inv[t]
    return u >= lo and u < hi


@njit(cache=True)
def _zero_task_rows(out, b, nb):
    """Zero task ``b``'s share of ``out``'s rows (of ``nb`` equal ranges); returns it."""
    m = out.shape[0]
    lo = m * b // nb
    hi = m * (b + 1) // nb
    out[lo:hi] = 0
    return lo, hi


@njit(cache=True, parallel=True)
def _segment_rows_par(inv, g, out, nb):
    """_segment_rows with the output rows split into ``nb`` ranges, one task each: a task
    zeroes its rows and scans every t, adding the rows that fall in its range (each row
    gets its additions in the serial order, so the sums are the same bit for bit)."""
    for b in prange(nb):
        lo, hi = _zero_task_rows(out, b, nb)
        for t in range(inv.shape[0]):
            if _own_rows(out, inv, t, lo, hi):
                dst = out[inv[t]]
                for j in range(dst.shape[0]):
                    dst[j] += g[t, j]


def _segment_rows_np(inv, g, out):
    """_segment_rows in NumPy, for a process where Numba is not set up: one bincount over
    (row, column) keys, each sum taken in float64 in the order of t and rounded once (the
    kernel rounds after each addition: the two may differ in the last bit)."""
    m, k = out.shape
    keys = (inv * k)[:, None] + np.arange(k)
    out[...] = np.bincount(keys.reshape(-1), weights=g.reshape(-1), minlength=m * k
                           ).reshape(m, k)


def segment_rows_sum(inv, g, m) -> np.ndarray:
    """``out`` of ``m`` rows with ``out[inv[t]] += g[t]`` over every row t of 2-D ``g``
    (``inv`` int64 in [0, m)), added in the order of t; float16 through NumPy's add.at.
    Large gradients run in parallel over ranges of output rows, each task scanning all of
    ``inv`` (a scan of the ids costs far less than the rows it adds)."""
    out = np.empty((m, g.shape[1]), dtype=g.dtype)
    if g.dtype.kind != "f" or g.dtype.itemsize < 4:
        out[:] = 0
        np.add.at(out, inv, g)
        return out
    inv = np.ascontiguousarray(inv, dtype=np.int64)
    g = np.ascontiguousarray(g)
    if not _twins.numba_on():
        _segment_rows_np(inv, g, out)
        _twins.charge_numpy(g.size, 4)
        return out
    nb = numba.get_num_threads()
    _twins.run_gated("segment_rows", g.size, lambda: _segment_rows(inv, g, out),
                     lambda: _segment_rows_par(inv, g, out, nb), _segment_rows_par)
    return out


# ----------------------------------------------------------------------------- reductions
def sum_rsp(r: RSP, axis=None, keepdims=False) -> np.ndarray:
    """Sum as dense (0-d for axis None); canonical input."""
    ax = normalize_axis(axis, len(r.shape), "sum(row_sparse)")
    if ax is None:
        out = np.asarray(r.data.sum(dtype=r.data.dtype))
        return out.reshape((1,) * len(r.shape)) if keepdims else out
    if ax == 0:
        out = r.data.sum(axis=0, dtype=r.data.dtype)
    else:
        out = np.zeros(r.shape[:ax] + r.shape[ax + 1:], dtype=r.data.dtype)
        if len(r.indices):
            out[r.indices] = r.data.sum(axis=ax, dtype=r.data.dtype)
    return np.expand_dims(out, ax) if keepdims else out


def square_sum_rsp(r: RSP, axis=None, keepdims=False):
    """sum(r**2): rsp of shape (m, 1) with r's rows when axis==1 and keepdims (2-D), else dense."""
    ax = normalize_axis(axis, len(r.shape), "square_sum(row_sparse)")
    sq = RSP(r.data * r.data, r.indices, r.shape)
    if ax == 1 and keepdims and len(r.shape) == 2:
        # row sums as a product with a ones column: NumPy's reduction over a short last
        # axis is ~10x slower (100 vs 10 us for 5000 x 8, the factorization machine's V)
        ones = np.ones((r.shape[1], 1), dtype=r.data.dtype)
        return RSP(sq.data @ ones, r.indices.copy(), (r.shape[0], 1))
    return sum_rsp(sq, ax, keepdims)


def norm_rsp(r: RSP) -> np.ndarray:
    """L2 norm over all entries as 0-d dense; canonical input."""
    d = np.ascontiguousarray(r.data)
    return np.sqrt(np.asarray(np.vdot(d, d), dtype=d.dtype))


# ----------------------------------------------------------------------------- embedding bag
def _bag_sum(w, ids, vals, out):
    # out[b] = w[ids[b, 0]] * vals[b, 0] + w[ids[b, 1]] * vals[b, 1] + ..., added in order;
    # the rows of bag b + _AHEAD are prefetched (random rows wait on memory)
    nb = ids.shape[0]
    for b in prange(nb):
        if b + _AHEAD < nb:
            for f in range(ids.shape[1]):
                prefetch(w, ids[b + _AHEAD, f] * w.shape[1])
        r = ids[b, 0]
        v = vals[b, 0]
        for j in range(w.shape[1]):
            out[b, j] = w[r, j] * v
        for f in range(1, ids.shape[1]):
            r = ids[b, f]
            v = vals[b, f]
            for j in range(w.shape[1]):
                out[b, j] += w[r, j] * v


_AHEAD = 2  # bags: 1-4 measured alike
_BAG_SUM = _twins.Twin(_bag_sum, nogil=True)


def embedding_bag_sum(w: np.ndarray, idx, vals) -> np.ndarray:
    """``sum(w[clip(idx)] * vals[..., None], axis=1)`` for 2-D ``idx`` and ``vals`` of one
    shape (B, F) and a 2-D float ``w`` whose dtype ``vals`` shares: the rows of each bag
    weighted and summed in one pass, without the (B, F, D) gather. The products and the
    additions (the first term, then the others in turn) are those of the three separate
    ops (Embedding, broadcast_mul, sum over axis 1), so the result is the same bit for bit.
    """
    ids = clip_ids(idx, w.shape[0])
    vals = np.ascontiguousarray(vals)
    b, f = ids.shape
    out = np.empty((b, w.shape[1]), w.dtype)
    if f == 0:
        out[:] = 0
        return out
    w = np.ascontiguousarray(w)
    _twins.run_gated("embedding_bag", ids.size * w.shape[1],
                     lambda: _BAG_SUM.ser(w, ids, vals, out),
                     lambda: _BAG_SUM.par(w, ids, vals, out), _BAG_SUM.par)
    return out


@njit(cache=True, nogil=True)
def _bag_scatter(inv, vals, og, f, out):
    """out = zeros, then out[inv[t]] += og[t // f] * vals[t] for t in order."""
    out[:] = 0
    n = inv.shape[0]
    for t in range(n):
        if t + _AHEAD_ROWS < n:
            prefetch(out, inv[t + _AHEAD_ROWS] * out.shape[1])
        dst = out[inv[t]]
        src = og[t // f]
        v = vals[t]
        for j in range(out.shape[1]):
            dst[j] += src[j] * v


@njit(cache=True, parallel=True)
def _bag_scatter_par(inv, vals, og, f, out, nb):
    """_bag_scatter with the output rows split into ``nb`` ranges (as _segment_rows_par)."""
    for b in prange(nb):
        lo, hi = _zero_task_rows(out, b, nb)
        for t in range(inv.shape[0]):
            if _own_rows(out, inv, t, lo, hi):
                dst = out[inv[t]]
                src = og[t // f]
                v = vals[t]
                for j in range(dst.shape[0]):
                    dst[j] += src[j] * v


def embedding_bag_grad_rsp(idx, vals, ograd, num_rows) -> RSP:
    """Weight gradient of :func:`embedding_bag_sum` for head gradient ``ograd`` (B, D):
    row ``clip(idx[b, f])`` gathers ``ograd[b] * vals[b, f]``, summed in the order of
    (b, f) as the separate ops' gradients sum them (canonical row_sparse output)."""
    flat = clip_ids(idx, num_rows).reshape(-1)
    og = np.ascontiguousarray(ograd)
    shape = (int(num_rows), og.shape[1])
    if len(flat) == 0:
        return _empty(shape, og.dtype)
    v = np.ascontiguousarray(vals, dtype=og.dtype).reshape(-1)
    f = np.asarray(idx).shape[1]
    uniq, inv = unique_positions(flat, int(num_rows))
    out = np.empty((len(uniq), og.shape[1]), og.dtype)
    nb = numba.get_num_threads()
    _twins.run_gated("embedding_bag_grad", len(flat) * og.shape[1],
                     lambda: _bag_scatter(inv, v, og, f, out),
                     lambda: _bag_scatter_par(inv, v, og, f, out, nb), _bag_scatter_par)
    return RSP(out, uniq, shape)
