"""Dense N-d gather/scatter kernels (gather_nd, scatter_nd and their gradients). Inputs are
NumPy arrays; ``indices`` has shape (M, Y...) and addresses the first M axes of the data.
Outputs are new arrays."""
from __future__ import annotations

import numpy as np

from ..base import IndexOutOfRange


def nd_index(indices, shape, wrap_negative=True):
    """``indices`` (M, Y...) as a tuple of M int64 arrays for ``shape``'s first M axes;
    negative entries count from the end, anything else out of range raises IndexError."""
    idx = np.asarray(indices)
    idx = (np.floor(idx) if idx.dtype.kind == "f" else idx).astype(np.int64)
    m = idx.shape[0]
    out = []
    for ax in range(m):
        n = shape[ax]
        i = idx[ax]
        if i.size:
            lo, hi = int(i.min()), int(i.max())
            if lo < -n or hi >= n:
                bad = lo if lo < -n else hi
                raise IndexOutOfRange(f"index {bad} is out of bounds for axis {ax} with "
                                       f"size {n}")
        out.append(np.where(i < 0, i + n, i) if wrap_negative else i)
    return tuple(out)


def gather_nd(data, indices):
    """data[indices[0], indices[1], ...] with shape Y... + data.shape[M:]."""
    return np.ascontiguousarray(data[nd_index(indices, data.shape)])


def scatter_nd(data, indices, shape, accumulate=False, base=None):
    """Zeros of ``shape`` (or a copy of ``base``) with ``data`` written (or added, when
    ``accumulate``) at ``indices``; on duplicates the last write wins, as in MXNet."""
    out = np.zeros(shape, dtype=data.dtype) if base is None else np.array(base, copy=True)
    pos = nd_index(indices, shape)
    if accumulate:
        from .rsp import add_rows_at
        lead = shape[:len(pos)]
        flat = np.ravel_multi_index(pos, lead) if pos else np.zeros(1, np.int64)
        rows = out.reshape((int(np.prod(lead, dtype=np.int64)),) + tuple(shape[len(pos):]))
        add_rows_at(rows, flat.reshape(-1), np.asarray(data).reshape(flat.size, -1))
    else:
        out[pos] = data
    return out
