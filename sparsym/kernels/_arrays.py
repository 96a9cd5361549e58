"""Small array helpers shared by the csr / row_sparse kernel modules."""
from __future__ import annotations

import math

import numpy as np

# A dense column -> position map (O(n) memory and time) beats sorting or binary search
# (O(nnz log)) until n is this many times nnz.
MAP_FACTOR = 32


def common(*dtypes):
    """The result dtype of ``dtypes`` (NumPy promotion)."""
    return np.result_type(*dtypes)


def as_c(x, dt):
    """``x`` as a C-contiguous array of dtype ``dt`` (no copy when it already is)."""
    return np.ascontiguousarray(x, dtype=dt)


def rows2(x, lead):
    """View x as (lead, rest) even when sizes are 0 (numpy cannot infer -1 then)."""
    return x.reshape(lead, math.prod(x.shape[1:]))


def cols2(x, last):
    """View x as (rest, last), contracting on the last axis."""
    return x.reshape(math.prod(x.shape[:-1]), last)
