"""The oneDNN rows of Pooling, BatchNorm, FullyConnected, softmax and LRN: MXNet's
parameters mapped onto oneDNN's primitives, or None where they differ (the caller then runs
its Numba/NumPy kernel). Not an op family (skipped by the ops auto-import)."""
from __future__ import annotations

import numpy as np

from ...kernels import norm as knorm
from ...kernels import onednn as dnn
from ...kernels import pool as kpool
from ...kernels.onednn import pool as dpool

_F32 = np.dtype(np.float32)


def _none(y):
    """``attempt``'s NotImplemented as None."""
    return None if y is NotImplemented else y


def _on(*arrays):
    """oneDNN is selected and every array is float32."""
    return all(x.dtype == _F32 for x in arrays) and dnn.enabled()


# ----------------------------------------------------------------------------- Pooling
def _pool_geometry(a, shape):
    """(alg, kernel, stride, pad_l, pad_r, out_shape) of MXNet's Pooling on an NC+spatial
    ``shape`` in oneDNN's terms, or None where oneDNN's windows differ from MXNet's."""
    nd = len(shape) - 2
    if nd not in (1, 2, 3) or a.get("layout") not in (None, "NCW", "NCHW", "NCDHW"):
        return None
    if a.pool_type == "max":
        alg = "max"
    elif a.pool_type == "avg":
        cip = a.get("count_include_pad")
        alg = "avg_exclude" if cip is False else "avg_include"
    else:
        return None
    sp = tuple(shape[2:])
    if a.global_pool:
        k, s, p, conv = sp, (1,) * nd, (0,) * nd, "valid"
    else:
        conv = a.pooling_convention
        if conv not in ("valid", "full") or len(a.kernel) != nd:
            return None
        k = tuple(a.kernel)
        s = tuple(a.stride) or (1,) * nd
        p = tuple(a.pad) or (0,) * nd
    out = tuple(kpool.pool_out_size(sp[i], k[i], s[i], p[i], conv) for i in range(nd))
    # the right padding that makes oneDNN produce ``out`` windows: MXNet's pad, or more
    # for 'full' (its last window may run past the padded end)
    pr = tuple(max(p[i], (out[i] - 1) * s[i] + k[i] - sp[i] - p[i]) for i in range(nd))
    if alg == "avg_include" and pr != p:
        return None  # oneDNN would count the extra right padding in the divisor, MXNet not
    if any(q >= kk for q, kk in zip(pr, k)):
        return None  # a window wholly in the padding
    return alg, k, s, p, pr, tuple(shape[:2]) + out


def pool_fwd(a, x):
    """Pooling forward on oneDNN, or None."""
    if not _on(x):
        return None
    g = _pool_geometry(a, x.shape)
    if g is None:
        return None
    alg, k, s, pl, pr, osh = g
    return _none(dnn.attempt(dpool.forward, x, osh, alg, k, s, pl, pr))


def pool_bwd(a, dy, x, y):
    """Pooling's data gradient on oneDNN (``y``: the forward's output), or None."""
    if not _on(x, dy):
        return None
    g = _pool_geometry(a, x.shape)
    if g is None:
        return None
    alg, k, s, pl, pr, _ = g
    return _none(dnn.attempt(dpool.backward, dy, x, alg, k, s, pl, pr, y))


# ----------------------------------------------------------------------------- softmax
# oneDNN's softmax beats NumPy's along the last axis of large rows (measured: 128x1000
# 1.1-4x, 32x35x10000 1.1-3x); along another axis, or on a loss's small batch, it loses.
# Its backward is oneDNN's reference code here (ref:any: 1.9 ms for 128x1000): the
# gradient runs on kernels/softmax.py
_SM_MIN_SIZE, _SM_MIN_ROW = 1 << 16, 256


def _sm_ok(a, x, kind):
    if kind not in ("softmax", "log_softmax") or a.use_length or x.ndim == 0:
        return False
    if a.temperature not in (None, 1.0) or a.get("dtype") is not None:
        return False
    ax = a.axis % x.ndim
    return ax == x.ndim - 1 and x.shape[-1] >= _SM_MIN_ROW and x.size >= _SM_MIN_SIZE


def softmax_fwd(a, x, kind):
    """softmax / log_softmax forward on oneDNN, or None."""
    if not _sm_ok(a, x, kind) or not _on(x):
        return None
    from ...kernels.onednn import lrn_softmax
    return lrn_softmax.softmax_forward(x, x.ndim - 1, kind == "log_softmax")


# ----------------------------------------------------------------------------- LRN
# oneDNN's LRN forward is ~10x NumPy's on large maps; its backward on plain NCHW data is
# slower than NumPy's (measured 5x), so the gradient stays on NumPy
_LRN_MIN_SIZE = 1 << 14


def lrn_fwd(a, x):
    """LRN forward on oneDNN, or None."""
    if x.ndim != 4 or x.size < _LRN_MIN_SIZE or not _on(x):
        return None
    from ...kernels.onednn import lrn_softmax
    return lrn_softmax.lrn_forward(x, a.nsize, a.alpha, a.beta, a.knorm)


# ----------------------------------------------------------------------------- BatchNorm
def _bn_ok(a, x):
    """Channel axis 1 of data already in a oneDNN layout (see kernels/onednn/bnorm.py)."""
    from ...kernels.onednn import bnorm
    return (a.get("axis", 1) in (1, -3) and bnorm.supported(x) and x.dtype == _F32
            and dnn.enabled())


def bn_fwd(a, x, gamma, beta, mm, mv, batch_stats):
    """BatchNorm forward on oneDNN: (y, mean, invstd) in x's dtype, the moving statistics
    updated in place from the batch's (MXNet's momentum rule) when ``batch_stats``; or
    None."""
    if not _bn_ok(a, x):
        return None
    from ...kernels.onednn import bnorm
    g = np.ones_like(gamma) if a.fix_gamma else gamma
    relu = a.get("__post_ops__", ()) == (("relu",),)  # fused by passes/fuse.py
    if batch_stats:
        y, mean, var = bnorm.forward(x, g, beta, a.eps, relu=relu)
        knorm.update_moving(mm, mv, mean, var, a.momentum)
    else:
        y, mean, var = bnorm.forward(x, g, beta, a.eps, mm, mv, relu=relu)
    invstd = 1.0 / np.sqrt(var.astype(np.float64) + a.eps)
    return y, mean.astype(_F32), invstd.astype(_F32)


def bn_bwd(a, dy, x, gamma, mean, invstd, batch_stats):
    """BatchNorm's (dx, dgamma, dbeta) on oneDNN from the forward's mean and inverse std,
    or None."""
    if not _bn_ok(a, x):
        return None
    from ...kernels.onednn import bnorm
    g = np.ones_like(gamma) if a.fix_gamma else gamma
    var = 1.0 / np.square(invstd.astype(np.float64)) - a.eps
    dx, dgamma, dbeta = bnorm.backward(dy, x, g, mean, var, a.eps, not batch_stats)
    if a.fix_gamma:
        dgamma = np.zeros_like(gamma)
    return dx, dgamma.astype(gamma.dtype, copy=False), dbeta.astype(gamma.dtype, copy=False)
