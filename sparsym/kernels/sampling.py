"""Categorical draws over the rows of a probability matrix (sample_multinomial): C-ordered
inputs, new int64 outputs."""
from __future__ import annotations

import numpy as np
from numba import njit


def draw_rows(rows, u):
    """For each row r and uniform u[r, s] in [0, 1): the first j with
    cumsum(rows[r])[j] > u[r, s] * sum(rows[r]) (capped at k - 1), sums in float64."""
    k = rows.shape[1]
    if u.shape[1] <= 32:  # a few draws per row: one compiled scan of the row per draw
        idx = np.empty(u.shape, np.int64)
        _draw_rows(np.ascontiguousarray(rows, dtype=np.float64 if rows.dtype == np.float16
                                        else None), u, idx)
        return idx
    cdf = np.cumsum(np.asarray(rows, np.float64), axis=1)
    return search_rows(cdf, u * cdf[:, -1:], k)


@njit(cache=True, nogil=True)
def _draw_rows(rows, u, out):
    """out[r, s] = the first j with cumsum(rows[r])[j] > u[r, s] * sum(rows[r]) (capped at
    k - 1), the sums in float64 in index order: searchsorted over np.cumsum's values."""
    k = rows.shape[1]
    for r in range(rows.shape[0]):
        total = 0.0
        for j in range(k):
            total += np.float64(rows[r, j])
        for s in range(u.shape[1]):
            t = u[r, s] * total
            acc = 0.0
            pick = k - 1
            for j in range(k):
                acc += np.float64(rows[r, j])
                if acc > t:
                    pick = j
                    break
            out[r, s] = pick


def search_rows(cdf, u, k):
    """Per row r, searchsorted(cdf[r], u[r], 'right') capped at k - 1: one search over the
    rows laid end to end (row r's values shifted past row r - 1's), not a loop over rows."""
    nr = cdf.shape[0]
    if nr <= 4:
        return np.stack([np.minimum(np.searchsorted(cdf[r], u[r], side="right"), k - 1)
                         for r in range(nr)]).reshape(u.shape)
    if nr > 1024:  # small shifts keep float64's resolution near the values (ulp ~1e-13)
        return np.concatenate([search_rows(cdf[r:r + 1024], u[r:r + 1024], k)
                               for r in range(0, nr, 1024)])
    # shift row r by r * span: rows stay ordered and apart, values keep their order
    span = 2.0 * max(float(np.max(np.abs(cdf))), float(np.max(np.abs(u))), 1.0)
    shift = (np.arange(nr, dtype=np.float64) * span)[:, None]
    flat = (cdf + shift).reshape(-1)
    pos = np.searchsorted(flat, (u + shift).reshape(-1), side="right").reshape(u.shape)
    return np.minimum(pos - np.arange(nr, dtype=np.int64)[:, None] * k, k - 1)


