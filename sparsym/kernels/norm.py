"""BatchNorm kernels: per-channel statistics and affine maps over a (pre, C, post) view.

Any layout reduces to a 3-D view (pre, C, post) of a C-contiguous array with the channel
axis in the middle: NCHW is (N, C, H*W), NHWC is (N*H*W, C, 1).  The loops accumulate in
float64 and never allocate a temporary of the data's size (the NumPy formulation made
float64 copies of the whole tensor: ~0.8 s for a 1x400x704x96 float32 NHWC input).
They are serial and ``nogil``: memory-bound, and a numba parallel region right after an
OpenBLAS GEMM stalls on a 2-core box (see kernels/conv.py).
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np
from numba import njit

from . import _parallel

__all__ = ["as3", "channel_mean_var", "channel_affine", "grad_sums", "grad_dx",
           "update_moving"]


def update_moving(mm, mv, mean, var, momentum):
    """MXNet's ``moving = moving * momentum + batch * (1 - momentum)``, in place on the
    moving mean ``mm`` and variance ``mv`` (the executor's persistent aux states)."""
    mm *= momentum
    mm += (1 - momentum) * mean.astype(mm.dtype)
    mv *= momentum
    mv += (1 - momentum) * var.astype(mv.dtype)


def as3(x, axis):
    """(pre, C, post) view of the C-contiguous array x around ``axis``."""
    # math.prod: np.prod costs ~5 us a call, a tenth of a small layer's whole BatchNorm
    return x.reshape(math.prod(x.shape[:axis]), x.shape[axis], math.prod(x.shape[axis + 1:]))


@njit(cache=True, nogil=True)
def channel_mean_var(x, mean, var):
    """mean[c], var[c] (biased) of x (pre, C, post), two passes in float64."""
    pre, c, post = x.shape
    m = pre * post
    acc = np.zeros(c)
    for p in range(pre):
        for k in range(c):
            s = 0.0
            for q in range(post):
                s += x[p, k, q]
            acc[k] += s
    for k in range(c):
        mean[k] = acc[k] / m
        acc[k] = 0.0
    for p in range(pre):
        for k in range(c):
            mu = mean[k]
            s = 0.0
            for q in range(post):
                d = x[p, k, q] - mu
                s += d * d
            acc[k] += s
    for k in range(c):
        var[k] = acc[k] / m


@njit(cache=True, nogil=True)
def _affine3(x, scale, shift, y, p0, p1, relu):
    """y[p, c, q] = x[p, c, q] * scale[c] + shift[c] for p in [p0, p1) (then max(., 0))."""
    _, c, post = x.shape
    for p in range(p0, p1):
        for k in range(c):
            a = scale[k]
            b = shift[k]
            if relu:
                for q in range(post):
                    v = x[p, k, q] * a + b
                    y[p, k, q] = v if v > 0 else 0
            else:
                for q in range(post):
                    y[p, k, q] = x[p, k, q] * a + b


@njit(cache=True, nogil=True)
def _affine2(x, scale, shift, y, p0, p1, relu):
    """Channel-last form (post == 1): the channel loop is innermost and vectorises."""
    c = x.shape[1]
    for p in range(p0, p1):
        if relu:
            for k in range(c):
                v = x[p, k] * scale[k] + shift[k]
                y[p, k] = v if v > 0 else 0
        else:
            for k in range(c):
                y[p, k] = x[p, k] * scale[k] + shift[k]


def channel_affine(x, scale, shift, y, relu=False):
    """y[p, c, q] = x[p, c, q] * scale[c] + shift[c] (scale/shift in y's dtype), followed
    by max(., 0) with ``relu`` (the fused BN-ReLU of the SBNet dense block).

    Large inputs are split over ``pre`` into tasks for the worker threads (the loops
    release the GIL); each task writes its own rows.
    """
    pre, c, post = x.shape
    if post == 1:
        fn, xa, ya = _affine2, x[:, :, 0], y[:, :, 0]
    else:
        fn, xa, ya = _affine3, x, y
    work, n = x.size // 4, _parallel.workers()
    if n == 1 or work < _parallel.MIN_PARALLEL_WORK:  # one call, not one per would-be task
        fn(xa, scale, shift, ya, 0, pre, bool(relu))
        return
    parts = _parallel.split(pre, 4 * n)
    _parallel.run([partial(fn, xa, scale, shift, ya, a, b, bool(relu)) for a, b in parts],
                  work=work)


@njit(cache=True, nogil=True)
def grad_sums(g, x, mean, sg, sgx):
    """sg[c] = sum g, sgx[c] = sum g * (x - mean[c]) over (pre, post), in float64."""
    pre, c, post = x.shape
    for k in range(c):
        sg[k] = 0.0
        sgx[k] = 0.0
    for p in range(pre):
        for k in range(c):
            mu = mean[k]
            s1 = 0.0
            s2 = 0.0
            for q in range(post):
                gv = g[p, k, q]
                s1 += gv
                s2 += gv * (x[p, k, q] - mu)
            sg[k] += s1
            sgx[k] += s2


@njit(cache=True, nogil=True)
def grad_dx(g, x, mean, k1, k2, k3, dx):
    """dx[p, c, q] = k1[c] * g + k2[c] * (x - mean[c]) + k3[c] (all in dx's dtype)."""
    pre, c, post = x.shape
    for p in range(pre):
        for k in range(c):
            a = k1[k]
            b = k2[k]
            d = k3[k]
            mu = mean[k]
            for q in range(post):
                dx[p, k, q] = a * g[p, k, q] + b * (x[p, k, q] - mu) + d
