"""MXNet's dtype flags (used in JSON `__dtype__` attrs and the .params format)."""
from __future__ import annotations

import numpy as np

from .base import DTypeError

DTYPE_TO_FLAG = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.float16): 2,
                 np.dtype(np.uint8): 3, np.dtype(np.int32): 4, np.dtype(np.int8): 5,
                 np.dtype(np.int64): 6, np.dtype(np.bool_): 7}
FLAG_TO_DTYPE = {v: k for k, v in DTYPE_TO_FLAG.items()}


def flag_to_dtype(flag: int) -> np.dtype:
    """MXNet type flag -> numpy dtype."""
    try:
        return FLAG_TO_DTYPE[int(flag)]
    except KeyError:
        raise DTypeError(f"unknown MXNet dtype flag {flag}; expected one of "
                         f"{sorted(FLAG_TO_DTYPE)}") from None


def dtype_to_flag(dtype) -> int:
    """numpy dtype -> MXNet type flag."""
    try:
        return DTYPE_TO_FLAG[np.dtype(dtype)]
    except KeyError:
        raise DTypeError(f"dtype {dtype} has no MXNet type flag") from None
