"""``x[key]`` while autograd records: indexing as operators (slice, Reshape, take), so the
result stays on the tape (MXNet records indexing the same way)."""
from __future__ import annotations

import numbers

import numpy as np

from .ndarray import NDArray, array
from .op import invoke


def _basic(key):
    return all(isinstance(k, (numbers.Integral, slice)) or k is Ellipsis for k in key)


def recorded_getitem(x, key):
    """``x[key]`` through recorded operators: basic indexing (ints, slices, Ellipsis) and
    an integer-array index on the first axis."""
    if isinstance(key, NDArray) or (isinstance(key, (list, np.ndarray))
                                    and np.asarray(key).dtype.kind in "iu"):
        idx = key if isinstance(key, NDArray) else array(np.asarray(key), dtype=np.int64)
        return invoke("take", [x, idx], {"axis": 0})[0]
    key = key if isinstance(key, tuple) else (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError(f"an index can only have a single ellipsis ('...'), got {key!r}")
    if not _basic(key):
        return _gather(x, key)
    if Ellipsis in key:
        i = key.index(Ellipsis)
        fill = x.ndim - (len(key) - 1)
        key = key[:i] + (slice(None),) * fill + key[i + 1:]
    if len(key) > x.ndim:
        raise IndexError(f"too many indices ({len(key)}) for an array of {x.ndim} dims")
    # MXNet's legacy shapes: indexing every axis by an integer gives shape (1,)
    target = np.broadcast_to(np.empty((), np.int8), x.shape)[key].shape or (1,)
    begin, end, step = [], [], []
    for k, dim in zip(key, x.shape):
        if isinstance(k, numbers.Integral):
            i = int(k) + dim if k < 0 else int(k)
            if not 0 <= i < dim:
                raise IndexError(f"index {k} is out of bounds for axis of size {dim}")
            begin.append(i)
            end.append(i + 1)
            step.append(1)
        else:
            b, e, s = k.indices(dim)
            begin.append(b)
            end.append(None if s < 0 and e < 0 else e)
            step.append(s)
    out = invoke("slice", [x], {"begin": tuple(begin), "end": tuple(end),
                                "step": tuple(step)})[0]
    if out.shape != target:
        out = invoke("Reshape", [out], {"shape": target})[0]
    return out


def _gather(x, key):
    """Advanced indexing (index arrays, None, mixed with slices) as ``take`` over the
    flattened array, at the flat positions numpy's indexing picks: the gradient scatters
    back (and adds where a position repeats, as MXNet's gather_nd backward)."""
    try:
        pos = np.arange(x.size, dtype=np.int64).reshape(x.shape)[_np_key(key)]
    except (IndexError, TypeError) as err:
        raise IndexError(f"NDArray index {key!r} on shape {x.shape}: {err}") from None
    flat = invoke("Reshape", [x], {"shape": (-1,)})[0]
    return invoke("take", [flat, array(np.atleast_1d(pos), dtype=np.int64)], {"axis": 0})[0]


def _np_key(key):
    return tuple(k.asnumpy().astype(np.int64) if isinstance(k, NDArray)
                 else np.asarray(k) if isinstance(k, list) else k for k in key)
