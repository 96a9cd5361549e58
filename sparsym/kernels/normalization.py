"""Dense kernels of the affine normalisations (LayerNorm, InstanceNorm, GroupNorm) and of
LRN's channel window; pure functions of NumPy arrays returning new arrays."""
from __future__ import annotations

import numpy as np


def cdtype(x):
    """Accumulation dtype: float16 data are normalised in float32 (MXNet's AccReal)."""
    return np.float32 if x.dtype == np.float16 else x.dtype.type


def _bshape(ndim, pax, n):
    s = [1] * ndim
    s[pax] = n
    return tuple(s)


def affine_norm_fwd(x, red, pax, gamma, beta, eps):
    """(out, mean, std) of ``(x - mean) / sqrt(var + eps) * gamma + beta``; the statistics
    reduce over ``red`` (kept as size-1 axes), gamma/beta broadcast along axis ``pax``."""
    dt = cdtype(x)
    xc = x.astype(dt, copy=False)
    mean = xc.mean(axis=red, keepdims=True)
    cen = xc - mean
    std = np.sqrt((cen * cen).mean(axis=red, keepdims=True) + dt(eps))
    bs = _bshape(x.ndim, pax, gamma.shape[0])
    out = cen / std * gamma.astype(dt).reshape(bs) + beta.astype(dt).reshape(bs)
    return out.astype(x.dtype, copy=False), mean.astype(x.dtype), std.astype(x.dtype)


def affine_norm_bwd(g, x, red, pax, gamma, eps):
    """(dx, dgamma, dbeta) of :func:`affine_norm_fwd` for the head gradient ``g``."""
    dt = cdtype(x)
    xc = x.astype(dt, copy=False)
    gc = g.astype(dt, copy=False)
    mean = xc.mean(axis=red, keepdims=True)
    cen = xc - mean
    std = np.sqrt((cen * cen).mean(axis=red, keepdims=True) + dt(eps))
    xhat = cen / std
    other = tuple(i for i in range(x.ndim) if i != pax)
    # sums over every other axis (often thousands of rows, summed naively by NumPy off the
    # last axis): accumulate in float64, as MXNet's safe accumulation does
    dbeta = gc.sum(axis=other, dtype=np.float64)
    dgamma = (gc * xhat).sum(axis=other, dtype=np.float64)
    gg = gc * gamma.astype(dt).reshape(_bshape(x.ndim, pax, gamma.shape[0]))
    dx = (gg - gg.mean(axis=red, keepdims=True)
          - xhat * (gg * xhat).mean(axis=red, keepdims=True)) / std
    return (dx.astype(x.dtype, copy=False), dgamma.astype(gamma.dtype),
            dbeta.astype(gamma.dtype))


def channel_window_sum(v, nsize):
    """Sum over channels c-h..c+h (h = (nsize-1)//2, clipped), as MXNet's LRN window."""
    h = (nsize - 1) // 2
    c = v.shape[1]
    cs = np.cumsum(v, axis=1)
    cs = np.concatenate([np.zeros_like(cs[:, :1]), cs], axis=1)
    hi = np.minimum(np.arange(c) + h + 1, c)
    lo = np.maximum(np.arange(c) - h, 0)
    return np.take(cs, hi, axis=1) - np.take(cs, lo, axis=1)
