"""The fused float32 GRU/LSTM steps (kernels/rnn_steps.py) and the batch-blocked fused RNN
(kernels/rnn.py) against the exact NumPy steps run in float64."""
from __future__ import annotations

import numpy as np
import pytest

from sparsym.kernels import _parallel, blas, rnn_steps
from sparsym.kernels import rnn as krnn


def test_tanh_approximation_within_float32_rounding():
    x = np.linspace(-30, 30, 600_001).astype(np.float32)
    x = np.concatenate([x, np.float32([0, -0.0, 1e-30, -1e-30, 7.9, -7.9, 9, 1e4])])
    out = np.empty_like(x)
    rnn_steps.tanh_into(x, out)
    ref = np.tanh(x.astype(np.float64))
    assert np.abs(out - ref).max() < 4e-7
    assert np.all(np.abs(out) <= 1)
    # odd, and small arguments keep their relative accuracy
    small = np.abs(x) < 1e-3
    np.testing.assert_allclose(out[small], ref[small], rtol=2e-6, atol=1e-37)
    neg = np.empty_like(x)
    rnn_steps.tanh_into(-x, neg)
    np.testing.assert_array_equal(neg, -out)


def _run(mode, dtype, layers, bidir, N, p, blocked, monkeypatch):
    T, C, H = 5, 6, 8
    D = 2 if bidir else 1
    rng = np.random.RandomState(3)
    _, size = krnn.layout(mode, H, layers, bidir, C)
    params = rng.uniform(-0.6, 0.6, size)
    x = rng.randn(T, N, C)
    states = [rng.randn(layers * D, N, H) * 0.5 for _ in range(2 if mode == "lstm" else 1)]
    dout = rng.randn(T, N, D * H)
    dstates = [rng.randn(*s.shape) for s in states]
    cast = [a.astype(dtype) for a in (x, params, dout)]
    if blocked:
        monkeypatch.setattr(_parallel, "workers", lambda: 2)
        monkeypatch.setattr(_parallel, "MIN_PARALLEL_WORK", 0)
        monkeypatch.setattr(blas, "idle_cores", lambda: 2.0)
    assert krnn.batch_blocked(mode, cast[0], states, layers, bidir) == (
        blocked and dtype == np.float32)
    y, fin, cache = krnn.rnn_forward(mode, cast[0], cast[1], [s.astype(dtype) for s in states],
                                     layers, bidir, p, np.random.default_rng(5), keep=True)
    dx, dp, dst = krnn.rnn_backward(mode, cache, cast[2], [g.astype(dtype) for g in dstates],
                                    layers, bidir)
    return [np.asarray(a, np.float64) for a in (y, *fin, dx, dp, *dst)]


@pytest.mark.parametrize("mode", ["gru", "lstm"])
@pytest.mark.parametrize("layers,bidir,p", [(1, False, 0.0), (2, True, 0.3), (3, False, 0.0)])
@pytest.mark.parametrize("blocked", [False, True])
def test_fused_steps_match_exact_steps(mode, layers, bidir, p, blocked, monkeypatch):
    N = 19 if blocked else 4  # odd: blocks of unequal size
    exact = _run(mode, np.float64, layers, bidir, N, p, False, monkeypatch)
    fused = _run(mode, np.float32, layers, bidir, N, p, blocked, monkeypatch)
    for a, b in zip(fused, exact):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)


def test_blocked_equals_one_block(monkeypatch):
    one = _run("lstm", np.float32, 2, True, 17, 0.2, False, monkeypatch)
    blocked = _run("lstm", np.float32, 2, True, 17, 0.2, True, monkeypatch)
    for a, b in zip(one, blocked):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["gru", "lstm", "rnn_tanh"])
@pytest.mark.parametrize("layers,bidir,p", [(2, False, 0.0), (2, True, 0.3), (3, False, 0.5)])
def test_onednn_blocks_match_one_block_and_exact_steps(mode, layers, bidir, p):
    """The oneDNN primitives run in batch blocks on the worker threads (uneven blocks, the
    masks drawn for the whole batch) give one block's results and the float64 steps'."""
    from sparsym.kernels import onednn as dnn
    from sparsym.kernels.onednn import rnn as drnn
    if not dnn.available():
        pytest.skip("oneDNN is not installed")
    T, N, C, H = 7, 19, 6, 8
    D = 2 if bidir else 1
    rng = np.random.RandomState(0)
    _, size = krnn.layout(mode, H, layers, bidir, C)
    params = rng.uniform(-0.5, 0.5, size)
    x = rng.randn(T, N, C)
    states = [rng.randn(layers * D, N, H) for _ in range(2 if mode == "lstm" else 1)]
    dout = rng.randn(T, N, D * H)
    dstates = [rng.randn(*s.shape) for s in states]

    def run(kernels, dtype, **kw):
        c = [a.astype(dtype) for a in (x, params, dout)]
        y, fin, cache = kernels.rnn_forward(mode, c[0], c[1], [s.astype(dtype) for s in states],
                                            layers, bidir, p, np.random.default_rng(3),
                                            keep=True, **kw)
        dx, dp, dst = kernels.rnn_backward(mode, cache, c[2],
                                           [g.astype(dtype) for g in dstates], layers, bidir)
        return [np.asarray(a, np.float64) for a in (y, *fin, dx, dp, *dst)]
    one = run(drnn, np.float32)
    blocked = run(drnn, np.float32, parts=[(0, 9), (9, 19)])
    exact = run(krnn, np.float64)
    for a, b, e in zip(blocked, one, exact):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=2e-5)
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=2e-5)


def test_rnn_op_runs_onednn_blocks_when_cores_are_idle(monkeypatch):
    """With an idle core per worker the RNN op's GRU steps oneDNN's primitives in batch
    blocks (one per worker), and its training step gives the NumPy path's values."""
    import sparsym as mx
    from sparsym.kernels import onednn as dnn
    from sparsym.kernels.onednn import rnn as drnn
    if not dnn.available():
        pytest.skip("oneDNN is not installed")
    monkeypatch.setattr(_parallel, "workers", lambda: 2)
    monkeypatch.setattr(_parallel, "MIN_PARALLEL_WORK", 0)
    monkeypatch.setattr(blas, "idle_cores", lambda: 2.0)
    slots = []
    stack = drnn._stack
    monkeypatch.setattr(drnn, "_stack", lambda *a: slots.append(a[-1]) or stack(*a))
    x = np.random.RandomState(4).randn(5, 19, 6).astype(np.float32)
    res = []
    for path in (True, False):
        with dnn.use(path):
            mx.random.seed(2)
            net = mx.gluon.rnn.GRU(8, num_layers=2, dropout=0.3, input_size=6)
            net.initialize(mx.init.Uniform(0.5))
            xs = mx.nd.array(x)
            xs.attach_grad()
            with mx.autograd.record():
                y = net(xs)
            y.backward()
            res.append([y.asnumpy(), xs.grad.asnumpy()]
                       + [p.grad().asnumpy() for p in net.collect_params().values()])
    assert sorted(slots) == [0, 1]
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5)
