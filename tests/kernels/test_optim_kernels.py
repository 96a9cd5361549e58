"""Optimizer update kernels against plain numpy statements of MXNet 1.9's formulas."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from sparsym.base import ShapeError
from sparsym.kernels import optim as kopt
from sparsym.optimizer.adaptive import nadam_schedule
from sparsym.storage import RSP

LR, WD, RS, CG = 0.1, 0.05, 0.7, 1.0


def clip(x, cg):
    return x if cg is None or cg < 0 else np.clip(x, -cg, cg)


# ----------------------------------------------------------------------------- references
# Each takes float64 copies (w, g, *states) and returns the new (w, *states).
def ref_sgd(w, g, lr, wd, rs, cg):
    return ((1 - lr * wd) * w - lr * clip(rs * g, cg),)


def ref_sgd_mom(w, g, m, lr, momentum, wd, rs, cg):
    m = momentum * m - lr * wd * w - lr * clip(rs * g, cg)
    return w + m, m


def ref_nag(w, g, m, lr, momentum, wd, rs, cg):
    G = clip(rs * g, cg) + wd * w
    w1 = w + momentum * (momentum * m - lr * G) - lr * G
    # MXNet's in-place kernel: the momentum's weight-decay term reads the new weight
    m1 = momentum * m - lr * (clip(rs * g, cg) + wd * w1)
    return w1, m1


def ref_adam(w, g, m, v, lr, beta1, beta2, epsilon, wd, rs, cg):
    G = clip(rs * g + wd * w, cg)
    m = beta1 * m + (1 - beta1) * G
    v = beta2 * v + (1 - beta2) * G * G
    return w - lr * m / (np.sqrt(v) + epsilon), m, v


def ref_ftrl(w, g, z, n, lr, lamda1, beta, wd, rs, cg):
    G = clip(rs * g, cg)
    z = z + G - (np.sqrt(n + G * G) - np.sqrt(n)) * w / lr
    n = n + G * G
    w = (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / lr + wd) * (np.abs(z) > lamda1)
    return w, z, n


def ref_adagrad(w, g, h, lr, epsilon, wd, rs, cg):
    G = clip(rs * g, cg) + wd * w
    h = h + G * G
    return w - lr * G / np.sqrt(h + epsilon), h


def ref_adagrad_decoupled(w, g, h, lr, epsilon, wd, rs, cg):
    G = clip(rs * g, cg)
    h = h + G * G
    return w + (G / np.sqrt(h + epsilon) + w * wd) * -lr, h


def ref_rmsprop(w, g, n, lr, gamma1, epsilon, wd, rs, cg, cw):
    G = clip(rs * g + wd * w, cg)
    n = gamma1 * n + (1 - gamma1) * G * G
    return clip(w - lr * G / np.sqrt(n + epsilon), cw), n


def ref_rmspropalex(w, g, n, gs, delta, lr, gamma1, gamma2, epsilon, wd, rs, cg, cw):
    G = clip(rs * g + wd * w, cg)
    n = gamma1 * n + (1 - gamma1) * G * G
    gs = gamma1 * gs + (1 - gamma1) * G
    delta = gamma2 * delta - lr * G / np.sqrt(n - gs * gs + epsilon)
    return clip(w + delta, cw), n, gs, delta


def ref_adadelta(w, g, acc_g, acc_d, rho, epsilon, wd, rs, cg):
    G = clip(rs * g, cg)
    acc_g = rho * acc_g + (1 - rho) * G * G
    d = np.sqrt(acc_d + epsilon) / np.sqrt(acc_g + epsilon) * G
    acc_d = rho * acc_d + (1 - rho) * d * d
    return w - (d + wd * w), acc_g, acc_d


def ref_adamax(w, g, m, u, lr, beta1, beta2, wd, rs, cg):
    G = clip(rs * g + wd * w, cg)
    m = beta1 * m + (1 - beta1) * G
    u = np.maximum(beta2 * u, np.abs(G))
    return w - lr * m / u, m, u


def ref_nadam(w, g, m, v, lr, beta1, beta2, epsilon, wd, rs, cg, t, m_schedule, decay):
    G = clip(rs * g + wd * w, cg)
    mom_t = beta1 * (1 - 0.5 * 0.96 ** (t * decay))
    mom_t1 = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * decay))
    sched = m_schedule * mom_t
    sched_next = sched * mom_t1
    m = beta1 * m + (1 - beta1) * G
    v = beta2 * v + (1 - beta2) * G * G
    mbar = (1 - mom_t) * G / (1 - sched) + mom_t1 * m / (1 - sched_next)
    return w - lr * mbar / (np.sqrt(v / (1 - beta2 ** t)) + epsilon), m, v


def ref_signsgd(w, g, lr, wd, rs, cg):
    return ((1 - lr * wd) * w - lr * np.sign(clip(rs * g, cg)),)


def ref_signum(w, g, m, lr, momentum, wd, rs, cg, wd_lh):
    m = momentum * m - (1 - momentum) * (wd * w + clip(rs * g, cg))
    return (1 - lr * wd_lh) * w + lr * np.sign(m), m


def ref_ftml(w, g, d, v, z, lr, beta1, beta2, epsilon, t, wd, rs, cg):
    G = clip(rs * g + wd * w, cg)
    v = beta2 * v + (1 - beta2) * G * G
    d_t = (1 - beta1 ** t) / lr * (np.sqrt(v / (1 - beta2 ** t)) + epsilon)
    z = beta1 * z + (1 - beta1) * G - (d_t - beta1 * d) * w
    return -z / d_t, d_t, v, z


def _nadam_dense(w, g, m, v, lr, b1, b2, eps, wd, rs, cg, t, msched, decay, lazy=False):
    mom_t, mom_t1, sched, nxt = nadam_schedule(t, msched, b1, decay)
    fn = kopt.nadam_update_lazy if lazy else kopt.nadam_update
    fn(w, g, m, v, lr, b1, b2, eps, wd, rs, cg, t, mom_t, mom_t1, sched, nxt)


def _nadam_lazy(*a):
    _nadam_dense(*a, lazy=True)


# name: (dense, lazy, reference, number of states, non-negative states?, extra args)
CASES = {
    "sgd": (kopt.sgd_update, kopt.sgd_update_lazy, ref_sgd, 0, False, (LR, WD, RS, CG)),
    "sgd_mom": (kopt.sgd_mom_update, kopt.sgd_mom_update_lazy, ref_sgd_mom, 1, False,
                (LR, 0.9, WD, RS, CG)),
    "nag": (kopt.nag_mom_update, kopt.nag_mom_update_lazy, ref_nag, 1, False,
            (LR, 0.9, WD, RS, CG)),
    "adam": (kopt.adam_update, kopt.adam_update_lazy, ref_adam, 2, True,
             (LR, 0.9, 0.99, 1e-3, WD, RS, CG)),
    "ftrl": (kopt.ftrl_update, kopt.ftrl_update_lazy, ref_ftrl, 2, True,
             (LR, 0.01, 1.0, WD, RS, CG)),
    "adagrad": (kopt.adagrad_update, kopt.adagrad_update_lazy, ref_adagrad, 1, True,
                (LR, 1e-3, WD, RS, CG)),
    "rmsprop": (kopt.rmsprop_update, kopt.rmsprop_update_lazy, ref_rmsprop, 1, True,
                (LR, 0.9, 1e-3, WD, RS, CG, 1.2)),
    "rmspropalex": (kopt.rmspropalex_update, kopt.rmspropalex_update_lazy, ref_rmspropalex, 3,
                    True, (LR, 0.9, 0.8, 1e-3, WD, RS, CG, None)),
    "adadelta": (kopt.adadelta_update, kopt.adadelta_update_lazy, ref_adadelta, 2, True,
                 (0.9, 1e-3, WD, RS, CG)),
    "adamax": (kopt.adamax_update, kopt.adamax_update_lazy, ref_adamax, 2, True,
               (LR, 0.9, 0.99, WD, RS, CG)),
    "nadam": (_nadam_dense, _nadam_lazy, ref_nadam, 2, True,
              (LR, 0.9, 0.99, 1e-3, WD, RS, CG, 3, 0.7, 0.004)),
    "signsgd": (kopt.signsgd_update, kopt.signsgd_update_lazy, ref_signsgd, 0, False,
                (LR, WD, RS, CG)),
    "signum": (kopt.signum_update, kopt.signum_update_lazy, ref_signum, 1, False,
               (LR, 0.9, WD, RS, CG, 0.02)),
    "ftml": (kopt.ftml_update, kopt.ftml_update_lazy, ref_ftml, 3, True,
             (LR, 0.6, 0.999, 1e-8, 3, WD, RS, CG)),
}


def _states(rng, name, k, nonneg, shape, dtype):
    out = []
    for i in range(k):
        s = rng.normal(size=shape)
        if nonneg:
            s = np.abs(s) + 0.5
        if name == "rmspropalex" and i == 1:
            s = s * 0.01  # keep n - gs**2 positive
        if name == "ftml" and i == 0:
            s = np.abs(s)
        out.append(s.astype(dtype))
    return out


def _tol(dtype):
    return dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(CASES))
def test_dense_matches_formula(name, dtype):
    dense, _, ref, k, nonneg, args = CASES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    shape = (6, 4)
    w = rng.normal(size=shape).astype(dtype)
    g = (3 * rng.normal(size=shape)).astype(dtype)
    st = _states(rng, name, k, nonneg, shape, dtype)
    want = ref(*[a.astype(np.float64) for a in (w, g, *st)], *args)
    dense(w, g, *st, *args)
    for got, exp in zip((w, *st), want):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, exp, **_tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(CASES))
def test_lazy_updates_only_grad_rows(name, dtype):
    dense, lazy, _, k, nonneg, args = CASES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 1)
    shape = (9, 2, 3)
    rows = np.array([0, 3, 4, 8], dtype=np.int64)
    w = rng.normal(size=shape).astype(dtype)
    st = _states(rng, name, k, nonneg, shape, dtype)
    gdata = (3 * rng.normal(size=(len(rows),) + shape[1:])).astype(dtype)
    w0, st0 = w.copy(), [s.copy() for s in st]
    # expected: the dense kernel applied to just those rows
    sub_w = w[rows].copy()
    sub_st = [s[rows].copy() for s in st]
    dense(sub_w, gdata.copy(), *sub_st, *args)
    lazy(w, RSP(gdata, rows, shape), *st, *args)
    other = np.setdiff1d(np.arange(shape[0]), rows)
    for got, before, exp in zip((w, *st), (w0, *st0), (sub_w, *sub_st)):
        np.testing.assert_array_equal(got[other], before[other])
        np.testing.assert_allclose(got[rows], exp, **_tol(dtype))


@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_parallel_path_matches_serial(name, monkeypatch):
    from sparsym.kernels import _twins
    monkeypatch.setattr(_twins, "_ADAPTIVE", False)  # the parallel twin, compiled at once
    monkeypatch.setattr(_twins, "COMPILE_AFTER_S", 0.0)
    dense, lazy, _, k, nonneg, args = CASES[name]
    rng = np.random.default_rng(7)
    shape = (kopt.PARALLEL_MIN // 16 + 5, 32)  # above the parallel threshold
    w = rng.normal(size=shape)
    g = rng.normal(size=shape)
    st = _states(rng, name, k, nonneg, shape, np.float64)
    w2, st2 = w.copy(), [s.copy() for s in st]
    dense(w, g, *st, *args)
    # serial reference: same update row block by row block (each below the threshold)
    for a in range(0, shape[0], 1000):
        sl = slice(a, a + 1000)
        sub = [w2[sl].copy()] + [s[sl].copy() for s in st2]
        dense(sub[0], g[sl].copy(), *sub[1:], *args)
        for full, part in zip([w2] + st2, sub):
            full[sl] = part
    for a, b in zip([w] + st, [w2] + st2):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-14)
    # lazy with every other row, large enough for the parallel kernel
    rows = np.arange(0, shape[0], 2, dtype=np.int64)
    w3 = w.copy()
    st3 = [s.copy() for s in st]
    lazy(w3, RSP(g[rows].copy(), rows, shape), *st3, *args)
    np.testing.assert_array_equal(w3[1::2], w[1::2])
    sub = [w[rows].copy()] + [s[rows].copy() for s in st]
    dense(sub[0], g[rows].copy(), *sub[1:], *args)
    np.testing.assert_allclose(w3[rows], sub[0], rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("clip_gradient", [None, -1.0, 0.0, 0.5])
def test_clip_gradient_disable_and_zero(clip_gradient):
    w = np.array([1.0, 2.0, 3.0])
    g = np.array([-2.0, 0.2, 4.0])
    kopt.sgd_update(w, g, 1.0, 0.0, 1.0, clip_gradient)
    if clip_gradient is None or clip_gradient < 0:
        np.testing.assert_allclose(w, [3.0, 1.8, -1.0])
    elif clip_gradient == 0:
        np.testing.assert_allclose(w, [1.0, 2.0, 3.0])
    else:
        np.testing.assert_allclose(w, [1.5, 1.8, 2.5])


def test_adagrad_decoupled_wd_matches_mxnet_python_path():
    rng = np.random.default_rng(3)
    w, g, h = rng.normal(size=(3, 5, 2))
    h = np.abs(h)
    want = ref_adagrad_decoupled(w, g, h, LR, 1e-7, WD, RS, CG)
    kopt.adagrad_update(w, g, h, LR, 1e-7, WD, RS, CG, decoupled_wd=True)
    np.testing.assert_allclose(w, want[0], rtol=1e-12)
    np.testing.assert_allclose(h, want[1], rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sgd_mom_std_rsp_treats_missing_rows_as_zero(dtype):
    rng = np.random.default_rng(5)
    shape = (7, 3)
    rows = np.array([1, 5], dtype=np.int64)
    w, m = rng.normal(size=(2,) + shape).astype(dtype)
    gdata = rng.normal(size=(2, 3)).astype(dtype)
    gd = np.zeros(shape, dtype)
    gd[rows] = gdata
    w2, m2 = w.copy(), m.copy()
    kopt.sgd_mom_update(w2, gd, m2, LR, 0.9, WD, RS, CG)
    kopt.sgd_mom_update_std_rsp(w, RSP(gdata, rows, shape), m, LR, 0.9, WD, RS, CG)
    np.testing.assert_allclose(w, w2, **_tol(dtype))
    np.testing.assert_allclose(m, m2, **_tol(dtype))
    # sgd and adam std variants too
    w3, w4 = w.copy(), w.copy()
    kopt.sgd_update(w3, gd, LR, WD, RS, CG)
    kopt.sgd_update_std_rsp(w4, RSP(gdata, rows, shape), LR, WD, RS, CG)
    np.testing.assert_allclose(w4, w3, **_tol(dtype))
    s = [np.abs(rng.normal(size=shape)).astype(dtype) for _ in range(2)]
    s2 = [x.copy() for x in s]
    w5, w6 = w.copy(), w.copy()
    kopt.adam_update(w5, gd, *s, LR, 0.9, 0.99, 1e-3, WD, RS, CG)
    kopt.adam_update_std_rsp(w6, RSP(gdata, rows, shape), *s2, LR, 0.9, 0.99, 1e-3, WD, RS, CG)
    np.testing.assert_allclose(w6, w5, **_tol(dtype))


def test_lazy_empty_grad_and_1d_weight():
    w = np.arange(5.0)
    m = np.zeros(5)
    kopt.sgd_mom_update_lazy(w, RSP(np.zeros(0), np.zeros(0, np.int64), (5,)), m, LR, 0.9)
    np.testing.assert_array_equal(w, np.arange(5.0))
    kopt.sgd_update_lazy(w, RSP(np.array([1.0, 1.0]), np.array([1, 3]), (5,)), 1.0)
    np.testing.assert_array_equal(w, [0, 0, 2, 2, 4])


def test_errors():
    w = np.zeros((4, 3))
    with pytest.raises(ShapeError):
        kopt.sgd_update(w, np.zeros((3, 4)), LR)
    with pytest.raises(ShapeError):
        kopt.sgd_mom_update(w, np.zeros((4, 3)), np.zeros((4, 2)), LR)
    with pytest.raises(ShapeError):
        kopt.sgd_update_lazy(w, RSP(np.zeros((1, 3)), np.array([0]), (5, 3)), LR)
    with pytest.raises(TypeError):
        kopt.sgd_update_lazy(w, np.zeros((4, 3)), LR)
    with pytest.raises(ValueError, match="C-contiguous"):
        kopt.sgd_update(np.zeros((3, 4)).T, np.zeros((4, 3)), LR)
    with pytest.raises(ValueError, match="t must be"):
        kopt.ftml_update(w, w.copy(), w.copy(), w.copy(), w.copy(), LR, t=0)


@pytest.mark.parametrize("shape", [(7,), (5, 3), (2, 3, 4)])
@pytest.mark.parametrize("momentum", [None, 0.9])
def test_sgd_dense_matches_the_checked_entry_points(shape, momentum):
    rng = np.random.default_rng(3)
    w = rng.standard_normal(shape).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    m = rng.standard_normal(shape).astype(np.float32) if momentum else None
    w2, m2 = w.copy(), None if m is None else m.copy()
    assert kopt.sgd_dense(w, g, m, LR, momentum or 0.0, WD, RS, CG)
    if m is None:
        kopt.sgd_update(w2, g, LR, WD, RS, CG)
    else:
        kopt.sgd_mom_update(w2, g, m2, LR, momentum, WD, RS, CG)
        np.testing.assert_array_equal(m, m2)
    np.testing.assert_array_equal(w, w2)


def test_sgd_dense_declines_operands_it_cannot_update_in_place():
    w = np.ones((4, 3), np.float32)
    g = np.ones((4, 3), np.float32)
    assert not kopt.sgd_dense(w.T, g.T, None, LR, 0.0, WD, RS, CG)  # not C-contiguous
    assert not kopt.sgd_dense(w, np.ones((3, 4), np.float32), None, LR, 0.0, WD, RS, CG)
    assert not kopt.sgd_dense(w, g, np.ones(3, np.float32), LR, 0.9, WD, RS, CG)
    assert not kopt.sgd_dense(w, RSP(np.ones((1, 3), np.float32), np.array([1]), (4, 3)), None,
                           LR, 0.0, WD, RS, CG)
    np.testing.assert_array_equal(w, 1.0)  # nothing was written
