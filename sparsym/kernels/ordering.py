"""Dense kernels of the ordering operators (topk, sort, argsort): stable sorts along an axis
and the scatter of a top-k gradient. Inputs are C-contiguous NumPy arrays; outputs are new
arrays (never views of the inputs)."""
from __future__ import annotations

import numpy as np
from numba import njit


def _descending_key(x):
    """A key whose stable ascending order is x's stable descending order (MXNet sorts with
    a stable comparator, so ties keep their index order in both directions)."""
    if x.dtype.kind == "u" or x.dtype == np.bool_:
        return -x.astype(np.int64)
    if x.dtype.kind in "i":
        return -x.astype(np.int64) if x.dtype.itemsize < 8 else ~x  # ~x: no overflow at min
    return -x


def stable_order(x, axis, ascend):
    """Indices sorting ``x`` along ``axis`` (stable in both directions)."""
    key = x if ascend else _descending_key(x)
    return np.argsort(key, axis=axis, kind="stable")


# up to this k, a compiled insertion into the k best beats sorting whole rows
SMALL_K = 32


def topk_positions(x, axis, k, ascend):
    """(indices of the k first elements along axis in order, their values)."""
    n = x.shape[axis]
    plain = x.dtype.kind in "fiu" and x.dtype.itemsize >= 4 \
        and not (x.dtype.kind == "f" and np.isnan(x).any())
    if plain and 0 < k <= SMALL_K and n > 0:
        rows = np.ascontiguousarray(np.moveaxis(x, axis, -1)).reshape(-1, n)
        idx = np.empty((rows.shape[0], k), np.int64)
        _best_k(rows, k, bool(ascend), idx)
        idx = np.moveaxis(idx.reshape(np.moveaxis(x, axis, -1).shape[:-1] + (k,)), -1, axis)
    elif 8 * k < n and n >= 4096 and plain:
        idx = _select_k(x if ascend else _descending_key(x), axis, k)
    else:
        order = stable_order(x, axis, ascend)
        idx = np.take(order, np.arange(k), axis=axis)
    return idx, np.take_along_axis(x, idx, axis=axis)


@njit(cache=True, nogil=True)
def _best_k(rows, k, ascend, idx):
    """idx[r] = positions of the k first elements of rows[r] in a stable sort (ascending,
    or descending with ties in index order): insertion into the k best so far, O(n k)
    worst case, O(n) on most data. No NaNs (the caller checks)."""
    n = rows.shape[1]
    best = np.empty(k, rows.dtype)
    for r in range(rows.shape[0]):
        cnt = 0
        for j in range(n):
            v = rows[r, j]
            if cnt == k:
                # ties with the k-th keep the earlier position: strict comparisons
                if (v >= best[k - 1]) if ascend else (v <= best[k - 1]):
                    continue
                pos = k - 1
            else:
                pos = cnt
                cnt += 1
            while pos > 0 and ((best[pos - 1] > v) if ascend else (best[pos - 1] < v)):
                best[pos] = best[pos - 1]
                idx[r, pos] = idx[r, pos - 1]
                pos -= 1
            best[pos] = v
            idx[r, pos] = j


def _select_k(key, axis, k):
    """The first k positions of a stable ascending sort of ``key`` along ``axis``, found by a
    partition (O(n)) instead of a full sort; rows where ties with the k-th value straddle
    the cut take the earliest ties (a stable sort of that row)."""
    key = np.moveaxis(key, axis, -1)
    rows = key.reshape(-1, key.shape[-1])
    cand = np.sort(np.argpartition(rows, k - 1, axis=-1)[:, :k], axis=-1)
    vals = np.take_along_axis(rows, cand, axis=-1)
    kth = vals.max(axis=-1, keepdims=True)
    straddle = np.nonzero((rows == kth).sum(axis=-1) != (vals == kth).sum(axis=-1))[0]
    for r in straddle:
        cand[r] = np.argsort(rows[r], kind="stable")[:k]
        vals[r] = rows[r, cand[r]]
    order = np.argsort(vals, axis=-1, kind="stable")
    out = np.take_along_axis(cand, order, axis=-1).reshape(key.shape[:-1] + (k,))
    return np.moveaxis(out, -1, axis)


def topk_mask(x, idx, axis):
    """1 at the selected positions, 0 elsewhere, in x's dtype."""
    mask = np.zeros(x.shape, dtype=x.dtype)
    np.put_along_axis(mask, idx, 1, axis=axis)
    return mask


def scatter_along(g, idx, shape, axis, dtype):
    """Zeros of ``shape`` with ``g`` added at ``idx`` along ``axis`` (topk/sort's gradient:
    each selected position receives its output's gradient once)."""
    out = np.zeros(shape, dtype=dtype)
    np.put_along_axis(out, idx.astype(np.int64, copy=False), g, axis=axis)
    return out
