"""``x[key]`` while autograd records: indexing as operators (slice, Reshape, take), so the
result stays on the tape (MXNet records indexing the same way)."""
from __future__ import annotations

import numbers

import numpy as np

from ..base import MXNetError, ParamError
from .ndarray import NDArray, array, install_methods
from .op import invoke


def _is_bool_index(k):
    if isinstance(k, NDArray):
        return k.dtype == np.bool_
    if isinstance(k, (list, np.ndarray)):
        a = np.asarray(k)
        return a.dtype == np.bool_ and a.ndim > 0
    return False


def check_legacy_key(key, shape):
    """Refuse what MXNet 1.9.1's NDArray refuses, before NumPy reads ``key``: boolean index
    arrays (MXNet reads a NumPy or list mask as the indices 0 and 1, an NDArray mask is an
    error), keys that are not indices, and ``x[b:e]`` whose begin passes its end once both
    are clipped to the first axis ("Invalid slicing range": MXNet slices the buffer)."""
    if isinstance(key, slice) and key.step in (None, 1) and shape:
        b, e, _ = key.indices(shape[0])
        if b > e:
            raise MXNetError(f"Check failed: begin <= end ({b} vs. {e}) : Invalid slicing "
                             f"range [{b}, {e})")
    for k in key if isinstance(key, tuple) else (key,):
        if k is None or k is Ellipsis:
            continue
        if _is_bool_index(k):
            raise ParamError(  # a ValueError, as MXNet's for an NDArray mask
                "Cannot perform boolean indexing in legacy mode (MXNet 1.9.1 refuses an "
                "NDArray mask and reads a NumPy or list mask as the indices 0 and 1): index "
                "with the positions, np.nonzero(mask)[0], or use nd.contrib.boolean_mask")
        if not isinstance(k, (slice, numbers.Integral, NDArray, list, tuple, range,
                              np.ndarray)):
            raise ValueError(f"NDArray does not support slicing with key {k!r} of type "
                             f"{type(k)}.")


def _basic(key):
    return all(isinstance(k, (numbers.Integral, slice)) or k is Ellipsis for k in key)


def recorded_getitem(x, key):
    """``x[key]`` through recorded operators: basic indexing (ints, slices, Ellipsis) and
    an integer-array index on the first axis."""
    if isinstance(key, NDArray) or (isinstance(key, (list, np.ndarray))
                                    and np.asarray(key).dtype.kind in "iu"):
        pos = key.asnumpy() if isinstance(key, NDArray) else np.asarray(key)
        pos = pos.astype(np.int64)
        dim = x.shape[0]
        bad = (pos < -dim) | (pos >= dim)
        if bad.any():
            raise IndexError(f"index {int(pos[bad].ravel()[0])} is out of bounds for axis 0 "
                             f"with size {dim}")
        # negative positions count from the end (take's clip mode would read row 0)
        return invoke("take", [x, array(pos % max(dim, 1), dtype=np.int64)], {"axis": 0})[0]
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


install_methods(check_legacy_key=check_legacy_key, recorded_getitem=recorded_getitem)
