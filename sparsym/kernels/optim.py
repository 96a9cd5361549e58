"""Optimizer update kernels (MXNet 1.9 formulas), in place on raw numpy arrays.

Every update exists in two forms:

- ``<name>_update(w, g, *states, ...)``: dense; ``g`` is an ndarray shaped like ``w``.
- ``<name>_update_lazy(w, g_rsp, *states, ...)``: ``g_rsp`` is an :class:`RSP` (sorted,
  unique indices). Only the rows in ``g_rsp.indices`` of ``w`` and of the states change
  (MXNet's lazy_update, where weight decay too reaches only those rows).

Storage contract: ``w`` and the states are dense, C-contiguous ndarrays holding all rows
(a row_sparse weight passes its full data); they are updated in place and the functions
return None. ``g`` is only read. ``clip_gradient`` None or < 0 disables clipping (as in
MXNet's ops, 0 clips to zero). Scalars are applied in float64 and stored in the arrays'
dtype. The row loops are Numba kernels, run in parallel when an update touches many values.

``*_std_rsp`` variants apply the standard (non-lazy) update with a row_sparse gradient:
missing rows count as a zero gradient (MXNet's lazy_update=False).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..base import ShapeError
from ..storage import RSP, todense
from . import _twins
from ._arrays import prefetch, rows2
from ._twins import twins

__all__ = [
    "sgd_dense", "sgd_update", "sgd_update_lazy", "sgd_update_std_rsp",
    "sgd_mom_update", "sgd_mom_update_lazy", "sgd_mom_update_std_rsp",
    "nag_mom_update", "nag_mom_update_lazy",
    "adam_update", "adam_update_lazy", "adam_update_std_rsp",
    "ftrl_update", "ftrl_update_lazy",
    "adagrad_update", "adagrad_update_lazy",
    "rmsprop_update", "rmsprop_update_lazy", "rmspropalex_update", "rmspropalex_update_lazy",
    "adadelta_update", "adadelta_update_lazy",
    "adamax_update", "adamax_update_lazy",
    "nadam_update", "nadam_update_lazy",
    "signsgd_update", "signsgd_update_lazy", "signum_update", "signum_update_lazy",
    "ftml_update", "ftml_update_lazy",
]

PARALLEL_MIN = 1 << 17  # values touched from which the parallel kernel may be used


def _run(kern, size, *args):
    """Run ``kern``'s serial twin, or from PARALLEL_MIN values on the one the measured gate
    picks (a parallel update whose worker is descheduled on a busy machine stalls the
    step); the parallel twin compiles only once the serial one has earned it. While Numba
    is not set up in this process a kernel with a NumPy twin runs that instead."""
    if len(kern) > 2 and not _twins.numba_on():
        kern[2](*args)
        _twins.charge_numpy(size, 10)
        return
    if size < PARALLEL_MIN:
        kern[0](*args)
        return
    _twins.run_gated(("optim", kern[0].py_func.__name__), size, lambda: kern[0](*args),
                     lambda: kern[1](*args), kern[1])
_NOROWS = np.zeros(0, dtype=np.int64)


def _rowkernel(f):
    """(serial, parallel) compilations of ``f``.

    error_model="numpy" (what parallel loop bodies get anyway): x / 0 gives inf/nan as in
    MXNet instead of a per-division zero check, which kept the serial row loops scalar
    (1.6x slower).
    """
    return twins(f, error_model="numpy")


@njit(cache=True, inline="always")
def _clip(x, cg):
    if cg >= 0.0:
        if x > cg:
            return cg
        if x < -cg:
            return -cg
    return x


@njit(cache=True, inline="always")
def _sign(x):
    if x > 0:
        return 1.0
    if x < 0:
        return -1.0
    return 0.0 * x  # 0 (or nan)


# ----------------------------------------------------------------------------- plumbing
def _cg(clip):
    return -1.0 if clip is None or clip < 0 else float(clip)


def _2d(a, what):
    if not isinstance(a, np.ndarray):
        raise TypeError(f"optimizer kernel: {what} must be a numpy array, got {type(a).__name__}")
    if not a.flags.c_contiguous or not a.flags.writeable:
        raise ValueError(f"optimizer kernel: {what} must be a writeable C-contiguous array "
                         "(it is updated in place)")
    if a.ndim == 0:
        return a.reshape(1, 1)
    return rows2(a, a.shape[0])


def _check_states(w, states, where):
    for i, s in enumerate(states):
        if s.shape != w.shape:
            raise ShapeError(f"{where}: state {i} has shape {s.shape}, expected the weight's "
                             f"shape {w.shape}")


def via_float32(fn, w, g, states, *scalars) -> bool:
    """Numba has no float16: run the update on float32 copies and round the weight and
    the states back (MXNet's half-precision kernels also compute each step in float)."""
    gdata = g.data if isinstance(g, RSP) else g
    if w.dtype != np.float16 and gdata.dtype != np.float16 \
            and not any(s.dtype == np.float16 for s in states):
        return False
    if gdata.dtype == np.float16:
        g = RSP(g.data.astype(np.float32), g.indices, g.shape) if isinstance(g, RSP) \
            else g.astype(np.float32)
    w32 = w.astype(np.float32)
    s32 = [s.astype(np.float32) for s in states]
    fn(w32, g, s32, *scalars)
    w[...] = w32
    for s, s2 in zip(states, s32):
        s[...] = s2
    return True


def _dense(kern, where, w, g, states, *scalars):
    if via_float32(lambda w2, g2, s2, *a: _dense(kern, where, w2, g2, s2, *a),
                    w, g, states, *scalars):
        return
    if g.shape != w.shape:
        raise ShapeError(f"{where}: gradient shape {g.shape} does not match weight shape "
                         f"{w.shape}")
    _check_states(w, states, where)
    W = _2d(w, "weight")
    G = np.ascontiguousarray(g).reshape(W.shape)
    S = [_2d(s, f"state {i}") for i, s in enumerate(states)]
    _run(kern, w.size, W, G, *S, _NOROWS, False, *scalars)


def _lazy(kern, where, w, g, states, *scalars):
    if via_float32(lambda w2, g2, s2, *a: _lazy(kern, where, w2, g2, s2, *a),
                    w, g, states, *scalars):
        return
    if not isinstance(g, RSP):
        raise TypeError(f"{where}: the gradient must be a row_sparse RSP, got "
                        f"{type(g).__name__}")
    if tuple(g.shape) != tuple(w.shape):
        raise ShapeError(f"{where}: gradient shape {tuple(g.shape)} does not match weight "
                         f"shape {w.shape}")
    _check_states(w, states, where)
    nnr = len(g.indices)
    if nnr == 0:
        return
    W = _2d(w, "weight")
    G = np.ascontiguousarray(g.data).reshape(nnr, W.shape[1])
    rows = np.ascontiguousarray(g.indices, dtype=np.int64)
    S = [_2d(s, f"state {i}") for i, s in enumerate(states)]
    _run(kern, G.size, W, G, *S, rows, True, *scalars)


# ----------------------------------------------------------------------------- kernels
# SGD's lazy rows are prefetched this many rows ahead: the update of a batch's 9k rows of a
# 1M x 16 embedding took 0.67-0.71x the time (one core; 2-8 ahead measured alike).
_AHEAD = 4

# Each kernel: (w, g, *states, rows, lazy, *scalars). Row k of g updates row r of w, where
# r = rows[k] (lazy) or k (dense).

def _sgd_k(w, g, rows, lazy, lr, wd, rs, cg):
    n = rows.shape[0] if lazy else w.shape[0]
    for k in prange(n):
        if lazy and k + _AHEAD < n:  # a lazy update's rows are scattered: fetch ahead
            prefetch(w, rows[k + _AHEAD] * w.shape[1])
        r = rows[k] if lazy else np.int64(k)
        for j in range(w.shape[1]):
            x = _clip(rs * g[k, j], cg)
            w[r, j] = (1.0 - lr * wd) * w[r, j] - lr * x


def _sgd_mom_k(w, g, m, rows, lazy, lr, mu, wd, rs, cg):
    n = rows.shape[0] if lazy else w.shape[0]
    for k in prange(n):
        if lazy and k + _AHEAD < n:
            prefetch(w, rows[k + _AHEAD] * w.shape[1])
            prefetch(m, rows[k + _AHEAD] * w.shape[1])
        r = rows[k] if lazy else np.int64(k)
        for j in range(w.shape[1]):
            x = _clip(rs * g[k, j], cg)
            mm = mu * m[r, j] - lr * wd * w[r, j] - lr * x
            m[r, j] = mm
            w[r, j] = w[r, j] + mm


def _nag_k(w, g, m, rows, lazy, lr, mu, wd, rs, cg):
    n = rows.shape[0] if lazy else w.shape[0]
    for k in prange(n):
        r = rows[k] if lazy else np.int64(k)
        for j in range(w.shape[1]):
            x = _clip(rs * g[k, j], cg)
            ms = mu * m[r, j]
            wn = w[r, j] - ms + (mu + 1.0) * (ms - lr * (x + wd * w[r, j]))
            w[r, j] = wn
            # MXNet 1.9 runs the op with out=weight, so the momentum reads the new weight
            m[r, j] = ms - lr * (x + wd * w[r, j])


def _adam_k(w, g, mean, var, rows, lazy, lr, b1, b2, eps, wd, rs, cg):
    n = rows.shape[0] if lazy else w.shape[0]
    for k in prange(n):
        r = rows[k] if lazy else np.int64(k)
        for j in range(w.shape[1]):
            x = _clip(rs * g[k, j] + wd * w[r, j], cg)
            mm = b1 * mean[r, j] + (1.0 - b1) * x
            vv = b2 * var[r, j] + (1.0 - b2) * x * x
            mean[r, j] = mm
            var[r, j] = vv
            w[r, j] = w[r, j] - lr * mm / (math.sqrt(vv) + eps)


def _ftrl_k(w, g, z, nn, rows, lazy, lr, l1, beta, wd, rs, cg):
    n = rows.shape[0] if lazy else w.shape[0]
    for k in prange(n):
        r = rows[k] if lazy else np.int64(k)
        for j in range(w.shape[1]):
            x = _clip(rs * g[k, j], cg)
            n0 = nn[r, j]
            n1 = n0 + x * x
            zz = z[r, j] + x - (math.sqrt(n1) - math.sqrt(n0)) * w[r, j] / lr
            z[r, j] = zz
            nn[r, j] = n1
            if abs(zz) > l1:
                w[r, j] = (_sign(zz) * l1 - zz) / ((beta + math.sqrt(n1)) / lr + wd)
            else:
                w[r, j] = 0.0


def _adagrad_k(w, g, h, rows, lazy, lr, eps, wd, rs, cg, decoupled):
    n = rows.shape[0] if lazy else w.shape[0]
    for k in prange(n):
        r = rows[k] if lazy else np.int64(k)
        for j in range(w.shape[1]):
            x = _clip(rs * g[k, j], cg)
            if not decoupled:
                x += wd * w[r, j]
            hh = h[r, j] + x * x
            h[r, j] = hh
            step = x / math.sqrt(hh + eps)
            if decoupled:
                step += wd * w[r, j]
            w[r, j] = w[r, j] - lr * step


def _rmsprop_k(w, g, nn, rows, lazy, lr, g1, eps, wd, rs, cg, cw):
    n = rows.shape[0] if lazy else w.shape[0]
    for k in prange(n):
        r = rows[k] if lazy else np.int64(k)
        for j in range(w.shape[1]):
            x = _clip(rs * g[k, j] + wd * w[r, j], cg)
            v = g1 * nn[r, j] + (1.0 - g1) * x * x
            nn[r, j] = v
            w[r, j] = _clip(w[r, j] - lr * x / math.sqrt(v + eps), cw)


def _rmspropalex_k(w, g, nn, gs, delta, rows, lazy, lr, g1, g2, eps, wd, rs, cg, cw):
    n = rows.shape[0] if lazy else w.shape[0]
    for k in prange(n):
        r = rows[k] if lazy else np.int64(k)
        for j in range(w.shape[1]):
            x = _clip(rs * g[k, j] + wd * w[r, j], cg)
            v = g1 * nn[r, j] + (1.0 - g1) * x * x
            m = g1 * gs[r, j] + (1.0 - g1) * x
            d = g2 * delta[r, j] - lr * x / math.sqrt(v - m * m + eps)
            nn[r, j] = v
            gs[r, j] = m
            delta[r, j] = d
            w[r, j] = _clip(w[r, j] + d, cw)


def _adadelta_k(w, g, acc_g, acc_d, rows, lazy, rho, eps, wd, rs, cg):
    n = rows.shape[0] if lazy else w.shape[0]
    for k in prange(n):
        r = rows[k] if lazy else np.int64(k)
        for j in range(w.shape[1]):
            x = _clip(rs * g[k, j], cg)
            ag = rho * acc_g[r, j] + (1.0 - rho) * x * x
            d = math.sqrt(acc_d[r, j] + eps) / math.sqrt(ag + eps) * x
            acc_g[r, j] = ag
            acc_d[r, j] = rho * acc_d[r, j] + (1.0 - rho) * d * d
            w[r, j] = w[r, j] - (d + wd * w[r, j])


def _adamax_k(w, g, m, u, rows, lazy, lr, b1, b2, wd, rs, cg):
    n = rows.shape[0] if lazy else w.shape[0]
    for k in prange(n):
        r = rows[k] if lazy else np.int64(k)
        for j in range(w.shape[1]):
            x = _clip(rs * g[k, j] + wd * w[r, j], cg)
            mm = b1 * m[r, j] + (1.0 - b1) * x
            uu = max(b2 * u[r, j], abs(x))
            m[r, j] = mm
            u[r, j] = uu
            w[r, j] = w[r, j] - lr * mm / uu


def _nadam_k(w, g, m, v, rows, lazy, lr, b1, b2, eps, wd, rs, cg, mom_t, mom_t1, c_g, c_m,
             c_v):
    n = rows.shape[0] if lazy else w.shape[0]
    for k in prange(n):
        r = rows[k] if lazy else np.int64(k)
        for j in range(w.shape[1]):
            x = _clip(rs * g[k, j] + wd * w[r, j], cg)
            mm = b1 * m[r, j] + (1.0 - b1) * x
            vv = b2 * v[r, j] + (1.0 - b2) * x * x
            m[r, j] = mm
            v[r, j] = vv
            mbar = (1.0 - mom_t) * (x / c_g) + mom_t1 * (mm / c_m)
            w[r, j] = w[r, j] - lr * mbar / (math.sqrt(vv / c_v) + eps)


def _signsgd_k(w, g, rows, lazy, lr, wd, rs, cg):
    n = rows.shape[0] if lazy else w.shape[0]
    for k in prange(n):
        r = rows[k] if lazy else np.int64(k)
        for j in range(w.shape[1]):
            x = _clip(rs * g[k, j], cg)
            w[r, j] = (1.0 - lr * wd) * w[r, j] - lr * _sign(x)


def _signum_k(w, g, m, rows, lazy, lr, mu, wd, rs, cg, wd_lh):
    n = rows.shape[0] if lazy else w.shape[0]
    for k in prange(n):
        r = rows[k] if lazy else np.int64(k)
        for j in range(w.shape[1]):
            x = _clip(rs * g[k, j], cg)
            mm = mu * m[r, j] - (1.0 - mu) * (wd * w[r, j] + x)
            m[r, j] = mm
            w[r, j] = (1.0 - lr * wd_lh) * w[r, j] + lr * _sign(mm)


def _ftml_k(w, g, d, v, z, rows, lazy, lr, b1, b2, eps, wd, rs, cg, c1, c2):
    n = rows.shape[0] if lazy else w.shape[0]
    for k in prange(n):
        r = rows[k] if lazy else np.int64(k)
        for j in range(w.shape[1]):
            x = _clip(rs * g[k, j] + wd * w[r, j], cg)
            vv = b2 * v[r, j] + (1.0 - b2) * x * x
            dt = c1 / lr * (math.sqrt(vv / c2) + eps)
            zz = b1 * z[r, j] + (1.0 - b1) * x - (dt - b1 * d[r, j]) * w[r, j]
            v[r, j] = vv
            d[r, j] = dt
            z[r, j] = zz
            w[r, j] = -zz / dt


# NumPy twins of the commonest updates, for a process where Numba is not set up yet
# (_twins.numba_on): the same float64 arithmetic in the same order, so the same bits.
def _rows_np(a, rows, lazy):
    """The updated rows of ``a`` as float64 (a copy)."""
    return (a.take(rows, axis=0) if lazy else a).astype(np.float64)


def _put_np(a, rows, lazy, v):
    """Store float64 ``v`` into the updated rows of ``a``."""
    if lazy:
        a[rows] = v
    else:
        a[...] = v


def _grad_np(g, rs, cg):
    """clip(rs * g) in float64."""
    x = g.astype(np.float64)
    x *= rs
    if cg >= 0.0:
        np.clip(x, -cg, cg, out=x)
    return x


def _sgd_np(w, g, rows, lazy, lr, wd, rs, cg):
    x = _grad_np(g, rs, cg)
    x *= lr
    w0 = _rows_np(w, rows, lazy)
    w0 *= 1.0 - lr * wd
    w0 -= x
    _put_np(w, rows, lazy, w0)


def _sgd_mom_np(w, g, m, rows, lazy, lr, mu, wd, rs, cg):
    x = _grad_np(g, rs, cg)
    x *= lr
    w0 = _rows_np(w, rows, lazy)
    mm = _rows_np(m, rows, lazy)
    mm *= mu
    mm -= (lr * wd) * w0
    mm -= x
    _put_np(m, rows, lazy, mm)
    w0 += mm
    _put_np(w, rows, lazy, w0)


def _adam_np(w, g, mean, var, rows, lazy, lr, b1, b2, eps, wd, rs, cg):
    w0 = _rows_np(w, rows, lazy)
    x = g.astype(np.float64)
    x *= rs
    x += wd * w0
    if cg >= 0.0:
        np.clip(x, -cg, cg, out=x)
    mm = _rows_np(mean, rows, lazy)
    mm *= b1
    mm += (1.0 - b1) * x
    vv = _rows_np(var, rows, lazy)
    vv *= b2
    t = (1.0 - b2) * x
    t *= x
    vv += t
    _put_np(mean, rows, lazy, mm)
    _put_np(var, rows, lazy, vv)
    d = np.sqrt(vv)
    d += eps
    mm *= lr
    mm /= d
    w0 -= mm
    _put_np(w, rows, lazy, w0)


# (serial, parallel[, NumPy twin]): _run picks
_SGD = _rowkernel(_sgd_k) + (_sgd_np,)
_SGD_MOM = _rowkernel(_sgd_mom_k) + (_sgd_mom_np,)
_NAG = _rowkernel(_nag_k)
_ADAM = _rowkernel(_adam_k) + (_adam_np,)
_FTRL = _rowkernel(_ftrl_k)
_ADAGRAD = _rowkernel(_adagrad_k)
_RMSPROP = _rowkernel(_rmsprop_k)
_RMSPROPALEX = _rowkernel(_rmspropalex_k)
_ADADELTA = _rowkernel(_adadelta_k)
_ADAMAX = _rowkernel(_adamax_k)
_NADAM = _rowkernel(_nadam_k)
_SIGNSGD = _rowkernel(_signsgd_k)
_SIGNUM = _rowkernel(_signum_k)
_FTML = _rowkernel(_ftml_k)


# ----------------------------------------------------------------------------- public API
def _f(*xs):
    return tuple(float(x) for x in xs)


def sgd_update(w, g, lr, wd=0.0, rescale_grad=1.0, clip_gradient=None):
    """SGD: ``w = (1 - lr*wd)*w - lr*clip(rs*g)``."""
    _dense(_SGD, "sgd_update", w, g, (), *_f(lr, wd, rescale_grad, _cg(clip_gradient)))


def sgd_dense(w, g, mom, lr, momentum, wd, rescale_grad, clip_gradient):
    """sgd_update (``mom`` None) or sgd_mom_update on the common operands, with the checks
    inlined: a Trainer step updates every parameter through here, and the general entry
    points cost several times the Numba call on a small tensor. Returns False, having done
    nothing, when an operand is not a writeable C-contiguous ndarray of ``w``'s shape (the
    caller then takes the checked entry point), or a float16 one."""
    shape = w.shape
    if (w.__class__ is not np.ndarray or g.__class__ is not np.ndarray or g.shape != shape
            or not w.ndim or not w.size or not w.flags.c_contiguous or not w.flags.writeable
            or not g.flags.c_contiguous or w.dtype == np.float16 or g.dtype == np.float16):
        return False  # (float16: the checked entry point computes in float32)
    if mom is not None and (mom.__class__ is not np.ndarray or mom.shape != shape
                            or not mom.flags.c_contiguous or not mom.flags.writeable):
        return False
    if w.ndim != 2:
        lead = shape[0]
        w, g = w.reshape(lead, -1), g.reshape(lead, -1)
        if mom is not None:
            mom = mom.reshape(lead, -1)
    cg = -1.0 if clip_gradient is None or clip_gradient < 0 else float(clip_gradient)
    if mom is None:
        _run(_SGD, w.size, w, g, _NOROWS, False, float(lr), float(wd), float(rescale_grad), cg)
    else:
        _run(_SGD_MOM, w.size, w, g, mom, _NOROWS, False, float(lr), float(momentum),
             float(wd), float(rescale_grad), cg)
    return True


def sgd_lazy_rsp(w, g, mom, lr, momentum, wd, rescale_grad, clip_gradient):
    """sgd_update_lazy (``mom`` None) or sgd_mom_update_lazy with the checks inlined, as
    :func:`sgd_dense` for a row_sparse gradient ``g`` (RSP) of a 2-D weight: the sparse
    training step's one kernel call per parameter. Returns False, having done nothing,
    when an operand is not of the common form (the caller takes the checked entry point)."""
    if (g.__class__ is not RSP or w.__class__ is not np.ndarray or w.ndim != 2
            or g.shape != w.shape or not w.flags.c_contiguous or not w.flags.writeable
            or w.dtype == np.float16):
        return False
    data, rows = g.data, g.indices
    if (data.__class__ is not np.ndarray or data.dtype == np.float16 or data.ndim != 2
            or not data.flags.c_contiguous or rows.dtype != np.int64
            or not rows.flags.c_contiguous):
        return False
    if mom is not None and (mom.__class__ is not np.ndarray or mom.shape != w.shape
                            or not mom.flags.c_contiguous or not mom.flags.writeable
                            or mom.dtype == np.float16):
        return False
    if not len(rows):
        return True
    cg = -1.0 if clip_gradient is None or clip_gradient < 0 else float(clip_gradient)
    if mom is None:
        _run(_SGD, data.size, w, data, rows, True, float(lr), float(wd), float(rescale_grad),
             cg)
    else:
        _run(_SGD_MOM, data.size, w, data, mom, rows, True, float(lr), float(momentum),
             float(wd), float(rescale_grad), cg)
    return True


def sgd_update_lazy(w, g, lr, wd=0.0, rescale_grad=1.0, clip_gradient=None):
    """Lazy SGD: only rows in ``g.indices`` (weight decay too, MXNet 1.9 quirk 6)."""
    _lazy(_SGD, "sgd_update", w, g, (), *_f(lr, wd, rescale_grad, _cg(clip_gradient)))


def sgd_update_std_rsp(w, g, lr, wd=0.0, rescale_grad=1.0, clip_gradient=None):
    """Standard SGD with an RSP grad: ``w *= 1-lr*wd`` on all rows, then the grad rows."""
    _check_states(w, (), "sgd_update")
    if tuple(g.shape) != tuple(w.shape):
        raise ShapeError(f"sgd_update: gradient shape {tuple(g.shape)} does not match weight "
                         f"shape {w.shape}")
    w *= w.dtype.type(1.0 - lr * wd)
    if len(g.indices):
        gd = rescale_grad * g.data.astype(np.float64)
        cg = _cg(clip_gradient)
        if cg >= 0:
            np.clip(gd, -cg, cg, out=gd)
        w[g.indices] -= (lr * gd).astype(w.dtype)


def sgd_mom_update(w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=None):
    """SGD with momentum: ``m = mu*m - lr*wd*w - lr*clip(rs*g)``; ``w += m``."""
    _dense(_SGD_MOM, "sgd_mom_update", w, g, (mom,),
           *_f(lr, momentum, wd, rescale_grad, _cg(clip_gradient)))


def sgd_mom_update_lazy(w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0,
                        clip_gradient=None):
    """Lazy SGD with momentum: only rows in ``g.indices`` of w and mom change."""
    _lazy(_SGD_MOM, "sgd_mom_update", w, g, (mom,),
          *_f(lr, momentum, wd, rescale_grad, _cg(clip_gradient)))


def sgd_mom_update_std_rsp(w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0,
                           clip_gradient=None):
    """Standard SGD momentum with an RSP grad: every row updates, missing rows have g = 0."""
    _check_states(w, (mom,), "sgd_mom_update")
    if tuple(g.shape) != tuple(w.shape):
        raise ShapeError(f"sgd_mom_update: gradient shape {tuple(g.shape)} does not match "
                         f"weight shape {w.shape}")
    mom *= mom.dtype.type(momentum)
    mom -= (lr * wd) * w
    if len(g.indices):
        gd = rescale_grad * g.data.astype(np.float64)
        cg = _cg(clip_gradient)
        if cg >= 0:
            np.clip(gd, -cg, cg, out=gd)
        mom[g.indices] -= (lr * gd).astype(mom.dtype)
    w += mom


def nag_mom_update(w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=None):
    """Nesterov momentum, as MXNet 1.9's ``nag_mom_update(..., out=weight)`` computes it.

    With ``G = clip(rs*g) + wd*w``: ``w' = w + mu*(mu*m - lr*G) - lr*G`` and
    ``m = mu*m - lr*(clip(rs*g) + wd*w')`` -- the momentum uses the *new* weight, because
    MXNet's kernel reads the weight after writing it in place.
    """
    _dense(_NAG, "nag_mom_update", w, g, (mom,),
           *_f(lr, momentum, wd, rescale_grad, _cg(clip_gradient)))


def nag_mom_update_lazy(w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0,
                        clip_gradient=None):
    """Lazy Nesterov momentum: only rows in ``g.indices``."""
    _lazy(_NAG, "nag_mom_update", w, g, (mom,),
          *_f(lr, momentum, wd, rescale_grad, _cg(clip_gradient)))


def adam_update(w, g, mean, var, lr, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
                rescale_grad=1.0, clip_gradient=None):
    """Adam without bias correction (pass ``lr*sqrt(1-b2**t)/(1-b1**t)``).

    ``G = clip(rs*g + wd*w)``; ``m = b1*m + (1-b1)*G``; ``v = b2*v + (1-b2)*G**2``;
    ``w -= lr*m/(sqrt(v) + eps)``.
    """
    _dense(_ADAM, "adam_update", w, g, (mean, var),
           *_f(lr, beta1, beta2, epsilon, wd, rescale_grad, _cg(clip_gradient)))


def adam_update_lazy(w, g, mean, var, lr, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
                     rescale_grad=1.0, clip_gradient=None):
    """Lazy Adam: only rows in ``g.indices`` of w, mean and var."""
    _lazy(_ADAM, "adam_update", w, g, (mean, var),
          *_f(lr, beta1, beta2, epsilon, wd, rescale_grad, _cg(clip_gradient)))


def adam_update_std_rsp(w, g, mean, var, lr, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
                        rescale_grad=1.0, clip_gradient=None):
    """Standard Adam with an RSP grad (all rows; missing rows have g = 0)."""
    adam_update(w, todense(g).astype(w.dtype, copy=False), mean, var, lr, beta1, beta2,
                epsilon, wd, rescale_grad, clip_gradient)


def ftrl_update(w, g, z, n, lr, lamda1=0.01, beta=1.0, wd=0.0, rescale_grad=1.0,
                clip_gradient=None):
    """FTRL-proximal.

    ``G = clip(rs*g)``; ``z += G - (sqrt(n + G**2) - sqrt(n))*w/lr``; ``n += G**2``;
    ``w = (sign(z)*lamda1 - z)/((beta + sqrt(n))/lr + wd) * (|z| > lamda1)``.
    """
    _dense(_FTRL, "ftrl_update", w, g, (z, n),
           *_f(lr, lamda1, beta, wd, rescale_grad, _cg(clip_gradient)))


def ftrl_update_lazy(w, g, z, n, lr, lamda1=0.01, beta=1.0, wd=0.0, rescale_grad=1.0,
                     clip_gradient=None):
    """Lazy FTRL: only rows in ``g.indices`` of w, z and n."""
    _lazy(_FTRL, "ftrl_update", w, g, (z, n),
          *_f(lr, lamda1, beta, wd, rescale_grad, _cg(clip_gradient)))


def adagrad_update(w, g, history, lr, epsilon=1e-7, wd=0.0, rescale_grad=1.0,
                   clip_gradient=None, decoupled_wd=False):
    """AdaGrad: ``G = clip(rs*g) + wd*w``; ``h += G**2``; ``w -= lr*G/sqrt(h + eps)``.

    MXNet's op refuses wd != 0; here wd enters the gradient. ``decoupled_wd=True`` gives
    MXNet's Python dense path instead: ``h += clip(rs*g)**2``;
    ``w -= lr*(clip(rs*g)/sqrt(h + eps) + wd*w)``. Both agree when wd == 0.
    """
    _dense(_ADAGRAD, "adagrad_update", w, g, (history,),
           *_f(lr, epsilon, wd, rescale_grad, _cg(clip_gradient)), bool(decoupled_wd))


def adagrad_update_lazy(w, g, history, lr, epsilon=1e-7, wd=0.0, rescale_grad=1.0,
                        clip_gradient=None, decoupled_wd=False):
    """Lazy AdaGrad (MXNet's ``_sparse_adagrad_update``): only rows in ``g.indices``."""
    _lazy(_ADAGRAD, "adagrad_update", w, g, (history,),
          *_f(lr, epsilon, wd, rescale_grad, _cg(clip_gradient)), bool(decoupled_wd))


def rmsprop_update(w, g, n, lr, gamma1=0.95, epsilon=1e-8, wd=0.0, rescale_grad=1.0,
                   clip_gradient=None, clip_weights=None):
    """RMSProp (Tieleman & Hinton): ``G = clip(rs*g + wd*w)``; ``n = g1*n + (1-g1)*G**2``;
    ``w = clip_w(w - lr*G/sqrt(n + eps))``."""
    _dense(_RMSPROP, "rmsprop_update", w, g, (n,),
           *_f(lr, gamma1, epsilon, wd, rescale_grad, _cg(clip_gradient), _cg(clip_weights)))


def rmsprop_update_lazy(w, g, n, lr, gamma1=0.95, epsilon=1e-8, wd=0.0, rescale_grad=1.0,
                        clip_gradient=None, clip_weights=None):
    """Lazy RMSProp: only rows in ``g.indices``."""
    _lazy(_RMSPROP, "rmsprop_update", w, g, (n,),
          *_f(lr, gamma1, epsilon, wd, rescale_grad, _cg(clip_gradient), _cg(clip_weights)))


def rmspropalex_update(w, g, n, gs, delta, lr, gamma1=0.95, gamma2=0.9, epsilon=1e-8, wd=0.0,
                       rescale_grad=1.0, clip_gradient=None, clip_weights=None):
    """Centered RMSProp (Graves): ``G = clip(rs*g + wd*w)``; ``n = g1*n + (1-g1)*G**2``;
    ``gs = g1*gs + (1-g1)*G``; ``delta = g2*delta - lr*G/sqrt(n - gs**2 + eps)``;
    ``w = clip_w(w + delta)``."""
    _dense(_RMSPROPALEX, "rmspropalex_update", w, g, (n, gs, delta),
           *_f(lr, gamma1, gamma2, epsilon, wd, rescale_grad, _cg(clip_gradient),
               _cg(clip_weights)))


def rmspropalex_update_lazy(w, g, n, gs, delta, lr, gamma1=0.95, gamma2=0.9, epsilon=1e-8,
                            wd=0.0, rescale_grad=1.0, clip_gradient=None, clip_weights=None):
    """Lazy centered RMSProp: only rows in ``g.indices``."""
    _lazy(_RMSPROPALEX, "rmspropalex_update", w, g, (n, gs, delta),
          *_f(lr, gamma1, gamma2, epsilon, wd, rescale_grad, _cg(clip_gradient),
              _cg(clip_weights)))


def adadelta_update(w, g, acc_g, acc_delta, rho=0.9, epsilon=1e-5, wd=0.0, rescale_grad=1.0,
                    clip_gradient=None):
    """AdaDelta (MXNet's Python optimizer; no learning rate): ``G = clip(rs*g)``;
    ``acc_g = rho*acc_g + (1-rho)*G**2``; ``d = sqrt(acc_delta + eps)/sqrt(acc_g + eps)*G``;
    ``acc_delta = rho*acc_delta + (1-rho)*d**2``; ``w -= d + wd*w``."""
    _dense(_ADADELTA, "adadelta_update", w, g, (acc_g, acc_delta),
           *_f(rho, epsilon, wd, rescale_grad, _cg(clip_gradient)))


def adadelta_update_lazy(w, g, acc_g, acc_delta, rho=0.9, epsilon=1e-5, wd=0.0,
                         rescale_grad=1.0, clip_gradient=None):
    """Lazy AdaDelta: only rows in ``g.indices``."""
    _lazy(_ADADELTA, "adadelta_update", w, g, (acc_g, acc_delta),
          *_f(rho, epsilon, wd, rescale_grad, _cg(clip_gradient)))


def adamax_update(w, g, mean, u, lr, beta1=0.9, beta2=0.999, wd=0.0, rescale_grad=1.0,
                  clip_gradient=None):
    """AdaMax (pass ``lr/(1 - beta1**t)``): ``G = clip(rs*g + wd*w)``;
    ``m = b1*m + (1-b1)*G``; ``u = max(b2*u, |G|)``; ``w -= lr*m/u``."""
    _dense(_ADAMAX, "adamax_update", w, g, (mean, u),
           *_f(lr, beta1, beta2, wd, rescale_grad, _cg(clip_gradient)))


def adamax_update_lazy(w, g, mean, u, lr, beta1=0.9, beta2=0.999, wd=0.0, rescale_grad=1.0,
                       clip_gradient=None):
    """Lazy AdaMax: only rows in ``g.indices``."""
    _lazy(_ADAMAX, "adamax_update", w, g, (mean, u),
          *_f(lr, beta1, beta2, wd, rescale_grad, _cg(clip_gradient)))


def _nadam_scalars(lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient, t,
                   momentum_t, momentum_t_1, m_schedule, m_schedule_next):
    return _f(lr, beta1, beta2, epsilon, wd, rescale_grad, _cg(clip_gradient), momentum_t,
              momentum_t_1, 1.0 - m_schedule, 1.0 - m_schedule_next, 1.0 - beta2 ** t)


def nadam_update(w, g, mean, var, lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient,
                 t, momentum_t, momentum_t_1, m_schedule, m_schedule_next):
    """Nadam step ``t`` with the schedule values of ``optimizer.adaptive.nadam_schedule``.

    ``G = clip(rs*g + wd*w)``; m and v as in Adam; ``mbar = (1-mom_t)*G/(1-m_schedule) +
    mom_t1*m/(1-m_schedule_next)``; ``w -= lr*mbar/(sqrt(v/(1-b2**t)) + eps)``.
    """
    _dense(_NADAM, "nadam_update", w, g, (mean, var),
           *_nadam_scalars(lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient, t,
                           momentum_t, momentum_t_1, m_schedule, m_schedule_next))


def nadam_update_lazy(w, g, mean, var, lr, beta1, beta2, epsilon, wd, rescale_grad,
                      clip_gradient, t, momentum_t, momentum_t_1, m_schedule, m_schedule_next):
    """Lazy Nadam: only rows in ``g.indices``."""
    _lazy(_NADAM, "nadam_update", w, g, (mean, var),
          *_nadam_scalars(lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient, t,
                          momentum_t, momentum_t_1, m_schedule, m_schedule_next))


def signsgd_update(w, g, lr, wd=0.0, rescale_grad=1.0, clip_gradient=None):
    """SignSGD: ``w = (1 - lr*wd)*w - lr*sign(clip(rs*g))``."""
    _dense(_SIGNSGD, "signsgd_update", w, g, (), *_f(lr, wd, rescale_grad,
                                                       _cg(clip_gradient)))


def signsgd_update_lazy(w, g, lr, wd=0.0, rescale_grad=1.0, clip_gradient=None):
    """Lazy SignSGD: only rows in ``g.indices``."""
    _lazy(_SIGNSGD, "signsgd_update", w, g, (), *_f(lr, wd, rescale_grad,
                                                      _cg(clip_gradient)))


def signum_update(w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=None,
                  wd_lh=0.0):
    """Signum: ``m = mu*m - (1-mu)*(wd*w + clip(rs*g))``; ``w = (1-lr*wd_lh)*w + lr*sign(m)``."""
    _dense(_SIGNUM, "signum_update", w, g, (mom,),
           *_f(lr, momentum, wd, rescale_grad, _cg(clip_gradient), wd_lh))


def signum_update_lazy(w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0,
                       clip_gradient=None, wd_lh=0.0):
    """Lazy Signum: only rows in ``g.indices``."""
    _lazy(_SIGNUM, "signum_update", w, g, (mom,),
          *_f(lr, momentum, wd, rescale_grad, _cg(clip_gradient), wd_lh))


def _ftml_scalars(lr, beta1, beta2, epsilon, t, wd, rescale_grad, clip_gradient):
    if t < 1:
        raise ValueError(f"ftml_update: t must be >= 1 (the 1-based update count), got {t}")
    return _f(lr, beta1, beta2, epsilon, wd, rescale_grad, _cg(clip_gradient),
              1.0 - beta1 ** t, 1.0 - beta2 ** t)


def ftml_update(w, g, d, v, z, lr, beta1=0.6, beta2=0.999, epsilon=1e-8, t=1, wd=0.0,
                rescale_grad=1.0, clip_gradient=None):
    """FTML step ``t``: ``G = clip(rs*g + wd*w)``; ``v = b2*v + (1-b2)*G**2``;
    ``d_t = (1-b1**t)/lr*(sqrt(v/(1-b2**t)) + eps)``;
    ``z = b1*z + (1-b1)*G - (d_t - b1*d)*w``; ``d = d_t``; ``w = -z/d_t``."""
    _dense(_FTML, "ftml_update", w, g, (d, v, z),
           *_ftml_scalars(lr, beta1, beta2, epsilon, t, wd, rescale_grad, clip_gradient))


def ftml_update_lazy(w, g, d, v, z, lr, beta1=0.6, beta2=0.999, epsilon=1e-8, t=1, wd=0.0,
                     rescale_grad=1.0, clip_gradient=None):
    """Lazy FTML: only rows in ``g.indices``."""
    _lazy(_FTML, "ftml_update", w, g, (d, v, z),
          *_ftml_scalars(lr, beta1, beta2, epsilon, t, wd, rescale_grad, clip_gradient))
