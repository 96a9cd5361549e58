"""``x[key]`` while autograd records: indexing as operators (slice, Reshape, take), so the
result stays on the tape (MXNet records indexing the same way)."""
from __future__ import annotations

import numbers

import numpy as np

from ..base import MXNetError
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
    if not _basic(key) or sum(k is Ellipsis for k in key) > 1:
        raise MXNetError(f"indexing with {key!r} is not supported while autograd records; "
                         "use take / pick / slice operators")
    if Ellipsis in key:
        i = key.index(Ellipsis)
        fill = x.ndim - (len(key) - 1)
        key = key[:i] + (slice(None),) * fill + key[i + 1:]
    if len(key) > x.ndim:
        raise IndexError(f"too many indices ({len(key)}) for an array of {x.ndim} dims")
    target = np.broadcast_to(np.empty((), np.int8), x.shape)[key].shape
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
