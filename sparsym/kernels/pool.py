"""Dense Pooling kernels with MXNet 1.x semantics; data NCDHW (3-D), NCHW (2-D) or NCW (1-D).

Window (a, b) covers rows [a*sh - ph, a*sh - ph + kh) clipped to [0, H) for the reduction.
'avg' divides by the window area clipped to the *padded* extent [-ph, H+ph) when
count_include_pad, else by the area clipped to the image; 'full' uses ceil for the output size,
'same' (MXNet: 1-D, no padding) gives ceil(size / stride) windows clipped at the end.
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


@njit(cache=True, inline="always")
def _den(cip, wd, wh, ww):
    """avg's divisor: the window clipped to the padded extent, or to the data."""
    if cip:
        return (wd[1] - wd[0]) * (wh[1] - wh[0]) * (ww[1] - ww[0])
    return max(wd[3] - wd[2], 0) * max(wh[3] - wh[2], 0) * max(ww[3] - ww[2], 0)


@njit(cache=True, nogil=True)
def _pool_run(x, y, dx, k, s, p, mode, cip, lowest, backward, t0, t1):
    """Planes t0..t1-1 (planes (depth, height, width); 1-D and 2-D pooling have unit
    leading extents). Forward writes ``y``; backward reads ``y`` as the output gradient and
    adds into ``dx`` (planes never share dx entries). Max ties: the first in scan order."""
    n_pl, d, h, w = x.shape
    od, oh, ow = y.shape[1], y.shape[2], y.shape[3]
    for t in range(t0, t1):
        for e in range(od):
            wd = _window(e, s[0], p[0], k[0], d)
            for a in range(oh):
                wh = _window(a, s[1], p[1], k[1], h)
                for b in range(ow):
                    ww = _window(b, s[2], p[2], k[2], w)
                    if mode == 0 and not backward:   # a plain max: the fast loop
                        m = lowest
                        for q in range(wd[2], wd[3]):
                            for i in range(wh[2], wh[3]):
                                for j in range(ww[2], ww[3]):
                                    if x[t, q, i, j] > m:
                                        m = x[t, q, i, j]
                        y[t, e, a, b] = m
                        continue
                    if mode == 0:
                        m, bq, bi, bj = lowest, -1, -1, -1
                        for q in range(wd[2], wd[3]):
                            for i in range(wh[2], wh[3]):
                                for j in range(ww[2], ww[3]):
                                    if bi < 0 or x[t, q, i, j] > m:
                                        m, bq, bi, bj = x[t, q, i, j], q, i, j
                        if bi >= 0:
                            dx[t, bq, bi, bj] += y[t, e, a, b]
                        continue
                    den = _den(cip, wd, wh, ww) if mode == 1 else 1
                    if backward:
                        if den <= 0:
                            continue
                        g = y[t, e, a, b] / den
                        for q in range(wd[2], wd[3]):
                            for i in range(wh[2], wh[3]):
                                for j in range(ww[2], ww[3]):
                                    dx[t, q, i, j] += g
                        continue
                    acc = 0.0
                    for q in range(wd[2], wd[3]):
                        for i in range(wh[2], wh[3]):
                            for j in range(ww[2], ww[3]):
                                acc += x[t, q, i, j]
                    y[t, e, a, b] = acc / den if den > 0 else 0.0


def pool_out_size(size, k, stride, pad, convention):
    """Output extent: floor (valid) or ceil (full) of (size + 2*pad - k)/stride, plus one;
    'same' (no padding; windows past the end are clipped): ceil(size / stride)."""
    if convention == "same":
        return -(-size // stride)
    span = size + 2 * pad - k
    if span < 0:
        raise ShapeError(f"pooling kernel {k} larger than padded input {size + 2 * pad}")
    if convention == "valid":
        return span // stride + 1
    if convention == "full":
        return -(-span // stride) + 1
    raise ParamError(f"pooling_convention must be 'valid', 'full' or 'same', "
                     f"got {convention!r}")


def _params(x, kernel, stride, pad, pool_type, global_pool, convention):
    nd = x.ndim - 2
    if nd not in (1, 2, 3):
        raise ShapeError(f"pooling supports NCW, NCHW and NCDHW data, got ndim={x.ndim}")
    if pool_type not in _MODES:
        raise ParamError(f"pool_type must be one of {sorted(_MODES)}, got {pool_type!r}")
    sp = x.shape[2:]
    if global_pool:
        k, s, p = tuple(sp), (1,) * nd, (0,) * nd
        convention = "valid"
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
        # 'same' takes no padding; MXNet accepts an all-zero pad of any length with it
        p = (0,) * nd if convention == "same" else tup(pad, "pad", 0)
        if min(k) < 1 or min(s) < 1 or min(p) < 0:
            raise ShapeError(f"invalid kernel={k} stride={s} pad={p}")
    out = tuple(pool_out_size(sp[i], k[i], s[i], p[i], convention) for i in range(nd))
    lead = 3 - nd   # unit leading dims: every case runs as 3-D pooling
    return nd, (1,) * lead + k, (1,) * lead + s, (0,) * lead + p, (1,) * lead + out


def _as4(x, nd):
    dt = x.dtype if x.dtype in (np.float32, np.float64) else np.float64
    n, c = x.shape[:2]
    sp = (1,) * (3 - nd) + tuple(x.shape[2:])
    return np.ascontiguousarray(x, dtype=dt).reshape((n * c,) + sp)


def _by_planes(kernel, args, n_planes, work):
    """Run ``kernel(*args, t0, t1)`` over plane ranges on the worker threads (nogil)."""
    parts = _parallel.split(n_planes, 2 * _parallel.workers())
    _parallel.run([partial(kernel, *args, a, b) for a, b in parts], work=work)


def pool_forward(x, kernel, stride, pad, pool_type="max", global_pool=False,
                 pooling_convention="valid", count_include_pad=True):
    """Pooling(x): x NCHW/NCW float32/float64 -> new array (N, C, OH[, OW]) of the same dtype."""
    nd, k, s, p, out = _params(x, kernel, stride, pad, pool_type, global_pool,
                               pooling_convention)
    x4 = _as4(x, nd)
    y = np.empty((x4.shape[0],) + out, dtype=x4.dtype)
    lowest = np.finfo(x4.dtype).min
    args = (k, s, p, _MODES[pool_type], bool(count_include_pad), x4.dtype.type(lowest), False)
    _by_planes(_pool_run, (x4, y, y) + args, x4.shape[0], x4.size)
    return y.reshape(x.shape[:2] + out[3 - nd:])


def pool_backward(x, y, dy, kernel, stride, pad, pool_type="max", global_pool=False,
                  pooling_convention="valid", count_include_pad=True):
    """Gradient of pool_forward w.r.t. x (y is accepted for API symmetry and not read)."""
    nd, k, s, p, out = _params(x, kernel, stride, pad, pool_type, global_pool,
                               pooling_convention)
    x4 = _as4(x, nd)
    if tuple(dy.shape) != tuple(x.shape[:2]) + out[3 - nd:]:
        raise ShapeError(f"dy shape {dy.shape} does not match the pooling output")
    dy4 = np.ascontiguousarray(dy, dtype=x4.dtype).reshape((x4.shape[0],) + out)
    dx = np.zeros_like(x4)
    args = (k, s, p, _MODES[pool_type], bool(count_include_pad), x4.dtype.type(0), True)
    _by_planes(_pool_run, (x4, dy4, dx) + args, x4.shape[0], x4.size)
    return dx.reshape(x.shape)
