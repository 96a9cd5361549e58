"""Compiled elementwise selections: NumPy's masked copies and np.where branch per element,
which costs ~30x an arithmetic pass when the mask is random (a 512x768 where took 30 ms
where a multiply took 0.4 ms on the same loaded machine). C-ordered inputs; new outputs."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _positive_or_scaled(x, g, scale, out):
    for i in range(x.size):
        out[i] = g[i] if x[i] > 0 else g[i] * scale


def positive_or_scaled(x, g, scale):
    """``x > 0 ? g : g * scale`` elementwise (x and g of one shape), in g's dtype."""
    if g.dtype.kind != "f" or g.dtype.itemsize < 4 or x.dtype != g.dtype:
        out = g * g.dtype.type(scale)
        np.copyto(out, g, where=x > 0)
        return out
    xc, gc = np.ascontiguousarray(x), np.ascontiguousarray(g)
    out = np.empty_like(gc)
    _positive_or_scaled(xc.reshape(-1), gc.reshape(-1), g.dtype.type(scale), out.reshape(-1))
    return out
