"""float16 support for Numba kernels: Numba has no half-precision arithmetic, so kernels
decorated with :func:`f16_safe` run float16 operands in float32 and cast the results back."""
from __future__ import annotations

import functools

import numpy as np

from ..storage import CSR, RSP

_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_HALF = np.float16
_ARRAYS = (np.ndarray, CSR, RSP)


def _dtype_of(x):
    return x.dtype if isinstance(x, _ARRAYS) else None


def _up(x):
    if isinstance(x, np.ndarray) and x.dtype == _F16:
        return x.astype(_F32)
    if isinstance(x, CSR) and x.data.dtype == _F16:
        return CSR(x.data.astype(_F32), x.indices, x.indptr, x.shape)
    if isinstance(x, RSP) and x.data.dtype == _F16:
        return RSP(x.data.astype(_F32), x.indices, x.shape)
    return x


def _down(x):
    if isinstance(x, np.ndarray) and x.dtype == _F32:
        return x.astype(_F16)
    if isinstance(x, CSR) and x.data.dtype == _F32:
        return CSR(x.data.astype(_F16), x.indices, x.indptr, x.shape)
    if isinstance(x, RSP) and x.data.dtype == _F32:
        return RSP(x.data.astype(_F16), x.indices, x.shape)
    if isinstance(x, tuple):
        return tuple(_down(v) for v in x)
    return x


def f16_safe(fn):
    """Run ``fn`` in float32 when its array operands' common dtype is float16."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        # the common case (no half operand) returns after one plain loop: this wraps
        # 0.1 ms kernels whose Python overhead is what separates them from scipy's
        for x in args:
            if isinstance(x, _ARRAYS) and x.dtype.type is _HALF:
                break
        else:
            return fn(*args, **kwargs)
        dts = [d for d in map(_dtype_of, args) if d is not None]
        if np.result_type(*[d for d in dts if d.kind == "f"]) != _F16:
            return fn(*args, **kwargs)
        return _down(fn(*[_up(a) for a in args], **kwargs))
    return wrapper
