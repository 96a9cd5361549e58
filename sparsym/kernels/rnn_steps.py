"""One time step's gate arithmetic of the fused GRU and LSTM in float32, fused into one Numba
loop each way (forward and BPTT), for kernels/rnn.py's step loops.

Why: per step the recurrence is one small GEMM ((N, H) x (H, G*H)) and the gate math around
it. With NumPy ufuncs the gates took more time than the GEMM (MXNet's word language model
shape, 2x200 units, batch 32: expit over 32x400 and tanh over 32x200 cost ~275 us a step
against ~115 us for the GEMM, one core): a dozen passes over the gates, and the
transcendental ufuncs at 5-10 ns an element. Here each step is one pass, and tanh (sigmoid
as ``0.5 + 0.5 tanh(x/2)``) is a rational function that the loop vectorises.

``_tanh`` is the 13/6 odd rational minimax approximant of tanh used by Eigen, XLA and MLAS
(published coefficients), clamped at +-7.9053 where float32 tanh rounds to +-1: within a few
float32 ulps of tanh everywhere (tests/kernels check it against np.tanh), so these kernels
are for float32 only; float64 keeps the exact NumPy steps.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# FMA contraction only: no reassociation, NaNs and infinities keep their meaning
_FM = {"contract"}
_f = np.float32  # every constant float32: a float64 one would widen the whole loop
_CLAMP = _f(7.90531110763549805)
_A13, _A11, _A9 = _f(-2.76076847742355e-16), _f(2.00018790482477e-13), _f(-8.60467152213735e-11)
_A7, _A5, _A3 = _f(5.12229709037114e-08), _f(1.48572235717979e-05), _f(6.37261928875436e-04)
_A1 = _f(4.89352455891786e-03)
_B6, _B4 = _f(1.19825839466702e-06), _f(1.18534705686654e-04)
_B2, _B0 = _f(2.26843463243900e-03), _f(4.89352518554385e-03)
_1, _H = _f(1.0), _f(0.5)


@njit(inline="always", fastmath=_FM, error_model="numpy")
def _tanh(x):
    """tanh to float32 accuracy (see the module docstring)."""
    x = x if x < _CLAMP else _CLAMP  # selects, not branches: the loops vectorise
    x = x if x > -_CLAMP else -_CLAMP
    x2 = x * x
    p = x2 * _A13 + _A11
    p = x2 * p + _A9
    p = x2 * p + _A7
    p = x2 * p + _A5
    p = x2 * p + _A3
    p = x2 * p + _A1
    q = x2 * _B6 + _B4
    q = x2 * q + _B2
    q = x2 * q + _B0
    return x * p / q


@njit(inline="always", fastmath=_FM, error_model="numpy")
def _sigmoid(x):
    return _H + _H * _tanh(_H * x)


@njit(cache=True, nogil=True, fastmath=_FM, error_model="numpy")
def tanh_into(x, out):
    """``out[:] = tanh(x)`` for 1-D arrays (the approximation, exposed for its tests)."""
    for i in range(x.size):
        out[i] = _tanh(x[i])


# The step kernels below split each row into several short loops that touch few arrays: LLVM
# vectorises a loop only after runtime checks that its arrays do not overlap, and gives up
# past a handful of them (one loop over all gates ran 2-3x slower).


@njit(cache=True, nogil=True, fastmath=_FM, error_model="numpy")
def gru_step(xi, mm, bh, h, hout, act):
    """One GRU step (MXNet's gates r, z, n): ``xi`` (N, 3H) the projected input with its
    bias, ``mm`` (N, 3H) = h @ Wh.T, ``bh`` (3H,), ``h`` (N, H) the state; writes the new
    state ``hout`` and ``act`` (N, 4H): the gates r, z, n and the recurrent candidate term
    ``Wh_n h + bh_n`` (what the backward needs)."""
    N, H = h.shape
    for i in range(N):
        x, m, a, hp, ho = xi[i], mm[i], act[i], h[i], hout[i]
        for j in range(2 * H):
            a[j] = _sigmoid(x[j] + m[j] + bh[j])
        for j in range(2 * H, 3 * H):
            a[H + j] = m[j] + bh[j]
        for j in range(H):
            a[2 * H + j] = _tanh(x[2 * H + j] + a[j] * a[3 * H + j])
        for j in range(H):
            n = a[2 * H + j]
            ho[j] = n + a[H + j] * (hp[j] - n)


@njit(cache=True, nogil=True, fastmath=_FM, error_model="numpy")
def gru_back_step(dy, dh, mm, act, h, dxi, dhh):
    """BPTT through one GRU step. The state's gradient is ``dh + mm + dy`` (``dh`` the
    direct path ``dh' * z`` carried from the later step, ``mm`` = the later step's
    ``dhh @ Wh``); writes the gradients of the projected input ``dxi`` (r, z, n) and of
    the recurrent pre-activations ``dhh`` (N, 3H), and leaves the direct path to the
    earlier step in ``dh``. ``act`` is :func:`gru_step`'s."""
    N, H = dh.shape
    for i in range(N):
        g, m, y, a, hp, dx, dr = dh[i], mm[i], dy[i], act[i], h[i], dxi[i], dhh[i]
        for j in range(H):
            g[j] = g[j] + m[j] + y[j]
        for j in range(H):
            r = a[j]
            z = a[H + j]
            n = a[2 * H + j]
            dn = g[j] * (_1 - z) * (_1 - n * n)
            dx[j] = dn * a[3 * H + j] * r * (_1 - r)
            dx[H + j] = g[j] * (hp[j] - n) * z * (_1 - z)
            dx[2 * H + j] = dn
        for j in range(2 * H):
            dr[j] = dx[j]
        for j in range(H):
            dr[2 * H + j] = dx[2 * H + j] * a[j]
        for j in range(H):
            g[j] = g[j] * a[H + j]


@njit(cache=True, nogil=True, fastmath=_FM, error_model="numpy")
def lstm_step(xi, mm, bh, c, hout, cout, act):
    """One LSTM step (MXNet's gates i, f, g, o): ``xi`` (N, 4H) the projected input with
    its bias, ``mm`` (N, 4H) = h @ Wh.T, ``c`` (N, H) the cell; writes ``hout``, ``cout``
    and the gates ``act`` (N, 4H)."""
    N, H = c.shape
    for i in range(N):
        x, m, a, cp, co, ho = xi[i], mm[i], act[i], c[i], cout[i], hout[i]
        for j in range(4 * H):
            a[j] = x[j] + m[j] + bh[j]
        for j in range(2 * H):
            a[j] = _sigmoid(a[j])
        for j in range(2 * H, 3 * H):
            a[j] = _tanh(a[j])
        for j in range(3 * H, 4 * H):
            a[j] = _sigmoid(a[j])
        for j in range(H):
            co[j] = a[H + j] * cp[j] + a[j] * a[2 * H + j]
        for j in range(H):
            ho[j] = a[3 * H + j] * _tanh(co[j])


@njit(cache=True, nogil=True, fastmath=_FM, error_model="numpy")
def lstm_back_step(dy, mm, dc, act, c, cn, dg):
    """BPTT through one LSTM step: the output's gradient is ``mm + dy`` (``mm`` = the
    later step's ``dg @ Wh``), ``dc`` the cell's gradient from the later step (updated in
    place to the earlier step's), ``c``/``cn`` the cell before/after; writes the gate
    pre-activation gradients ``dg`` (N, 4H)."""
    N, H = dc.shape
    for i in range(N):
        m, y, d, a, cp, cq, g = mm[i], dy[i], dc[i], act[i], c[i], cn[i], dg[i]
        for j in range(H):
            g[3 * H + j] = m[j] + y[j]  # the output's gradient, until the o gate's below
        for j in range(H):
            tc = _tanh(cq[j])
            d[j] = d[j] + g[3 * H + j] * a[3 * H + j] * (_1 - tc * tc)
        for j in range(H):
            ig = a[j]
            fg = a[H + j]
            gg = a[2 * H + j]
            og = a[3 * H + j]
            g[j] = d[j] * gg * ig * (_1 - ig)
            g[H + j] = d[j] * cp[j] * fg * (_1 - fg)
            g[2 * H + j] = d[j] * ig * (_1 - gg * gg)
            g[3 * H + j] = g[3 * H + j] * _tanh(cq[j]) * og * (_1 - og)
        for j in range(H):
            d[j] = d[j] * a[H + j]
