"""Dense Pooling kernels with MXNet 1.x semantics; data NCHW (2-D) or NCW (1-D).

Window (a, b) covers rows [a*sh - ph, a*sh - ph + kh) clipped to [0, H) for the reduction.
'avg' divides by the window area clipped to the *padded* extent [-ph, H+ph) when
count_include_pad, else by the area clipped to the image; 'full' uses ceil for the output size.
Max ties route the gradient to the first maximum in row-major scan order.
"""
from __future__ import annotations

from functools import partial

import numpy as np
from numba import njit

from ..base import ParamError, ShapeError
from . import _parallel

__all__ = ["pool_forward", "pool_backward", "pool_out_size"]

_MODES = {"max": 0, "avg": 1, "sum": 2}


@njit(cache=True, inline="always")
def _window(a, s, p, k, size):
    start = a * s - p
    end_pad = min(start + k, size + p)
    lo = max(start, 0)
    hi = min(start + k, size)
    return start, end_pad, lo, hi


@njit(cache=True, nogil=True)
def _pool_fwd(x, y, kh, kw, sh, sw, ph, pw, mode, cip, lowest, t0, t1):
    """Planes t0..t1-1 of the forward pass."""
    n_pl, h, w = x.shape
    oh, ow = y.shape[1], y.shape[2]
    for t in range(t0, t1):
        for a in range(oh):
            hs, he, h0, h1 = _window(a, sh, ph, kh, h)
            for b in range(ow):
                ws, we, w0, w1 = _window(b, sw, pw, kw, w)
                if mode == 0:
                    m = lowest
                    for i in range(h0, h1):
                        for j in range(w0, w1):
                            v = x[t, i, j]
                            if v > m:
                                m = v
                    y[t, a, b] = m
                else:
                    acc = 0.0
                    for i in range(h0, h1):
                        for j in range(w0, w1):
                            acc += x[t, i, j]
                    if mode == 1:
                        if cip:
                            den = (he - hs) * (we - ws)
                        else:
                            den = max(h1 - h0, 0) * max(w1 - w0, 0)
                        y[t, a, b] = acc / den if den > 0 else 0.0
                    else:
                        y[t, a, b] = acc


@njit(cache=True, nogil=True)
def _pool_bwd(x, dy, dx, kh, kw, sh, sw, ph, pw, mode, cip, t0, t1):
    """Planes t0..t1-1 of the backward pass (planes never share dx entries)."""
    n_pl, h, w = x.shape
    oh, ow = dy.shape[1], dy.shape[2]
    for t in range(t0, t1):
        for a in range(oh):
            hs, he, h0, h1 = _window(a, sh, ph, kh, h)
            for b in range(ow):
                ws, we, w0, w1 = _window(b, sw, pw, kw, w)
                g = dy[t, a, b]
                if mode == 0:
                    bi = -1
                    bj = -1
                    for i in range(h0, h1):
                        for j in range(w0, w1):
                            if bi < 0 or x[t, i, j] > x[t, bi, bj]:
                                bi = i
                                bj = j
                    if bi >= 0:
                        dx[t, bi, bj] += g
                else:
                    if mode == 1:
                        if cip:
                            den = (he - hs) * (we - ws)
                        else:
                            den = max(h1 - h0, 0) * max(w1 - w0, 0)
                        if den <= 0:
                            continue
                        g = g / den
                    for i in range(h0, h1):
                        for j in range(w0, w1):
                            dx[t, i, j] += g


def pool_out_size(size, k, stride, pad, convention):
    """Output extent: floor (valid) or ceil (full) of (size + 2*pad - k)/stride, plus one."""
    span = size + 2 * pad - k
    if span < 0:
        raise ShapeError(f"pooling kernel {k} larger than padded input {size + 2 * pad}")
    if convention == "valid":
        return span // stride + 1
    if convention == "full":
        return -(-span // stride) + 1
    raise ParamError(f"pooling_convention must be 'valid' or 'full', got {convention!r}")


def _params(x, kernel, stride, pad, pool_type, global_pool, convention):
    nd = x.ndim - 2
    if nd not in (1, 2):
        raise ShapeError(f"pooling supports NCW and NCHW data, got ndim={x.ndim}")
    if pool_type not in _MODES:
        raise ParamError(f"pool_type must be one of {sorted(_MODES)}, got {pool_type!r}")
    sp = x.shape[2:]
    if global_pool:
        k, s, p = tuple(sp), (1,) * nd, (0,) * nd
    else:
        def tup(v, name, default):
            v = () if v is None else ((int(v),) * nd if np.isscalar(v) else tuple(map(int, v)))
            if not v and name != "kernel":
                return (default,) * nd
            if len(v) != nd:
                raise ShapeError(f"{name}={v} must have {nd} entries for data {x.shape}")
            return v
        k = tup(kernel, "kernel", 1)
        s = tup(stride, "stride", 1)
        p = tup(pad, "pad", 0)
        if min(k) < 1 or min(s) < 1 or min(p) < 0:
            raise ShapeError(f"invalid kernel={k} stride={s} pad={p}")
    out = tuple(pool_out_size(sp[i], k[i], s[i], p[i], convention) for i in range(nd))
    if nd == 1:
        k, s, p, out = (1,) + k, (1,) + s, (0,) + p, (1,) + out
    return nd, k, s, p, out


def _as3(x, nd):
    dt = x.dtype if x.dtype in (np.float32, np.float64) else np.float64
    n, c = x.shape[:2]
    h = 1 if nd == 1 else x.shape[2]
    return np.ascontiguousarray(x, dtype=dt).reshape(n * c, h, x.shape[-1])


def _by_planes(kernel, args, n_planes, work):
    """Run ``kernel(*args, t0, t1)`` over plane ranges on the worker threads (nogil)."""
    parts = _parallel.split(n_planes, 2 * _parallel.workers())
    _parallel.run([partial(kernel, *args, a, b) for a, b in parts], work=work)


def pool_forward(x, kernel, stride, pad, pool_type="max", global_pool=False,
                 pooling_convention="valid", count_include_pad=True):
    """Pooling(x): x NCHW/NCW float32/float64 -> new array (N, C, OH[, OW]) of the same dtype."""
    nd, k, s, p, out = _params(x, kernel, stride, pad, pool_type, global_pool,
                               pooling_convention)
    x3 = _as3(x, nd)
    y = np.empty((x3.shape[0],) + out, dtype=x3.dtype)
    lowest = np.finfo(x3.dtype).min
    args = (k[0], k[1], s[0], s[1], p[0], p[1], _MODES[pool_type], bool(count_include_pad),
            x3.dtype.type(lowest))
    _by_planes(_pool_fwd, (x3, y) + args, x3.shape[0], x3.size)
    return y.reshape(x.shape[:2] + out[2 - nd:])


def pool_backward(x, y, dy, kernel, stride, pad, pool_type="max", global_pool=False,
                  pooling_convention="valid", count_include_pad=True):
    """Gradient of pool_forward w.r.t. x (y is accepted for API symmetry and not read)."""
    nd, k, s, p, out = _params(x, kernel, stride, pad, pool_type, global_pool,
                               pooling_convention)
    x3 = _as3(x, nd)
    if tuple(dy.shape) != tuple(x.shape[:2]) + out[2 - nd:]:
        raise ShapeError(f"dy shape {dy.shape} does not match the pooling output")
    dy3 = np.ascontiguousarray(dy, dtype=x3.dtype).reshape((x3.shape[0],) + out)
    dx = np.zeros_like(x3)
    args = (k[0], k[1], s[0], s[1], p[0], p[1], _MODES[pool_type], bool(count_include_pad))
    _by_planes(_pool_bwd, (x3, dy3, dx) + args, x3.shape[0], x3.size)
    return dx.reshape(x.shape)
