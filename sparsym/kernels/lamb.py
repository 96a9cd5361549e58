"""LAMB's two phases over one dense tensor (MXNet 1.9.1 formulas), one pass each.

``lamb_direction`` is phase 1: the Adam moments ``mean`` and ``var`` are updated in place
from ``clip(rescale_grad * grad)`` and the direction ``r = m / (sqrt(v) + epsilon) + wd * w``
(moments bias-corrected at step ``t``) is returned with the norms ``|w|`` and ``|r|``, all
from the same pass. ``lamb_apply`` is phase 2: ``w -= lr * ratio * r`` in place.

Storage contract: ``w``, ``mean`` and ``var`` are dense ndarrays of one shape (a float16
one is computed in float32 and rounded back, as MXNet's half kernels compute in float);
``mean`` and ``var`` are updated in place, ``w`` only by ``lamb_apply``. ``grad`` is only
read. The scalars are rounded to float32 (MXNet's parameters are C floats), then applied
in float64, as are the norms' sums; values are stored in the arrays' dtypes.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..base import ShapeError

__all__ = ["lamb_direction", "lamb_apply", "trust_ratio"]


@njit(cache=True, error_model="numpy")
def _phase1(w, g, mean, var, r, b1, b2, eps, wd, rs, cg, c1, c2):
    sw = 0.0
    sr = 0.0
    for i in range(w.size):
        gi = g[i] * rs
        if cg >= 0.0:
            gi = min(max(gi, -cg), cg)
        m = b1 * mean[i] + (1.0 - b1) * gi
        v = b2 * var[i] + (1.0 - b2) * gi * gi
        mean[i] = m
        var[i] = v
        wi = float(w[i])
        ri = (m / c1) / (math.sqrt(v / c2) + eps) + wd * wi
        r[i] = ri
        sw += wi * wi
        ri = float(r[i])  # the norm of the stored direction, as MXNet's multi_sum_sq reads it
        sr += ri * ri
    return sw, sr


@njit(cache=True)
def _phase2(w, r, step):
    for i in range(w.size):
        w[i] -= step * r[i]


def _flat(a, what, n):
    if a.shape != n:
        raise ShapeError(f"LAMB: {what} has shape {a.shape}, expected the weight's shape {n}")
    return a.reshape(-1)


def _compute_dtype(*arrays):
    return np.float32 if any(a.dtype == np.float16 for a in arrays) else None


def lamb_direction(w, grad, mean, var, t, wd, rescale_grad, clip_gradient, beta1, beta2,
                   epsilon, bias_correction):
    """Phase 1: update ``mean`` and ``var`` in place; return ``(r, |w|, |r|)``.

    ``r`` has ``w``'s dtype (float32 for a float16 ``w``); ``clip_gradient`` None or < 0
    turns clipping off.
    """
    shape = w.shape
    # MXNet's parameters are C floats: 1 - 0.999f is 1.3e-5 away from 0.001, which shows
    # in the bias-corrected variance, so the scalars are rounded to float32 first
    f32 = np.float32
    beta1, beta2, epsilon, wd, rescale_grad = (float(f32(x)) for x in
                                               (beta1, beta2, epsilon, wd, rescale_grad))
    cg = -1.0 if clip_gradient is None or clip_gradient < 0 else float(f32(clip_gradient))
    if bias_correction:
        c1 = float(f32(1.0) - f32(beta1) ** f32(t))
        c2 = float(f32(1.0) - f32(beta2) ** f32(t))
    else:
        c1 = c2 = 1.0
    half = _compute_dtype(w, mean, var)
    m_in = np.ascontiguousarray(mean, dtype=half or mean.dtype)
    v_in = np.ascontiguousarray(var, dtype=half or var.dtype)
    wc = np.ascontiguousarray(w, dtype=half or w.dtype)
    g = np.asarray(grad)
    g = np.ascontiguousarray(g, np.float32 if g.dtype == np.float16 else g.dtype)
    r = np.empty(shape, wc.dtype)
    sw, sr = _phase1(_flat(wc, "weight", shape), _flat(g, "grad", shape),
                     _flat(m_in, "mean", shape), _flat(v_in, "var", shape), r.reshape(-1),
                     float(beta1), float(beta2), float(epsilon), float(wd),
                     float(rescale_grad), cg, float(c1), float(c2))
    if m_in is not mean:
        mean[...] = m_in
    if v_in is not var:
        var[...] = v_in
    return r, math.sqrt(sw), math.sqrt(sr)


def trust_ratio(r1, r2, lower_bound, upper_bound):
    """``r1 / r2`` with ``r1`` clipped to the bounds that are >= 0; 1 when a norm is 0."""
    if lower_bound >= 0:
        r1 = max(r1, lower_bound)
    if upper_bound >= 0:
        r1 = min(r1, upper_bound)
    return r1 / r2 if r1 != 0 and r2 != 0 else 1.0


def lamb_apply(w, r, lr, ratio):
    """Phase 2 in place: ``w -= lr * ratio * r`` (``w`` float32/float64, C-contiguous)."""
    if w.dtype == np.float16 or not w.flags.c_contiguous:
        tmp = w.astype(np.float32 if w.dtype == np.float16 else w.dtype, order="C")
        _phase2(tmp.reshape(-1), _flat(np.ascontiguousarray(r), "direction", w.shape),
                float(lr) * float(ratio))
        w[...] = tmp
        return
    _phase2(w.reshape(-1), _flat(np.ascontiguousarray(r), "direction", w.shape),
            float(lr) * float(ratio))
