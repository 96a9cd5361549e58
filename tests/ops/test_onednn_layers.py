"""Pooling, BatchNorm, FullyConnected, softmax and LRN: the oneDNN path against the
Numba/NumPy path, through the public API (forward and gradients, float32 tolerance)."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.kernels import onednn as dnn

pytestmark = pytest.mark.skipif(not dnn.available(), reason="oneDNN is not installed")


def _run(path, fn, inputs):
    """fn(*NDArrays) -> NDArray under ``path`` (True: oneDNN); its value and the gradients
    of sum(out * w) with respect to ``inputs``."""
    with dnn.use(path):
        xs = [mx.nd.array(v) for v in inputs]
        for x in xs:
            x.attach_grad()
        with mx.autograd.record():
            y = fn(*xs)
            w = mx.nd.array(np.random.RandomState(7).rand(*y.shape))
            loss = (y * w).sum()
        loss.backward()
        return y.asnumpy(), [x.grad.asnumpy() for x in xs]


def _same(fn, inputs, rtol=1e-4, atol=1e-5):
    y1, g1 = _run(True, fn, inputs)
    y0, g0 = _run(False, fn, inputs)
    np.testing.assert_allclose(y1, y0, rtol=rtol, atol=atol)
    for a, b in zip(g1, g0):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


POOL_CASES = [
    # (data shape, kwargs)
    ((2, 3, 9, 9), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")),
    ((2, 3, 8, 8), dict(kernel=(2, 2), stride=(2, 2), pool_type="max")),
    ((2, 3, 9, 9), dict(kernel=(3, 3), stride=(2, 2), pool_type="max",
                        pooling_convention="full")),
    ((2, 3, 9, 9), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg")),
    ((2, 3, 9, 9), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                        count_include_pad=False)),
    ((2, 3, 10, 10), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                          pooling_convention="full")),
    ((2, 3, 10, 10), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg",
                          pooling_convention="full", count_include_pad=False)),
    ((2, 3, 7, 5), dict(kernel=(1, 1), global_pool=True, pool_type="avg")),
    ((2, 3, 7, 5), dict(kernel=(1, 1), global_pool=True, pool_type="max")),
    ((2, 4, 11), dict(kernel=(3,), stride=(2,), pad=(1,), pool_type="max")),
    ((2, 4, 11), dict(kernel=(4,), stride=(3,), pool_type="avg", pooling_convention="full")),
    ((1, 2, 5, 6, 7), dict(kernel=(2, 3, 2), stride=(2, 1, 2), pad=(1, 1, 0),
                           pool_type="max")),
    ((1, 2, 5, 6, 7), dict(kernel=(3, 3, 3), stride=(2, 2, 2), pad=(1, 1, 1),
                           pool_type="avg", count_include_pad=False)),
    ((2, 3, 8, 8), dict(kernel=(2, 2), stride=(2, 2), pool_type="sum")),
    ((2, 3, 8, 8), dict(kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=2)),
]


@pytest.mark.parametrize("shape,kw", POOL_CASES)
def test_pooling_paths_agree(shape, kw):
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    _same(lambda d: mx.nd.Pooling(d, **kw), [x])


@pytest.mark.parametrize("call", [
    lambda: mx.nd.Pooling(mx.nd.ones((2, 3, 8, 13)), kernel=(2, 2), stride=(2, 2)),
    lambda: mx.nd.RNN(mx.nd.ones((3, 2, 7)), mx.nd.ones((4 * 11 * (7 + 11 + 2),)),
                      mx.nd.zeros((1, 2, 11)), mx.nd.zeros((1, 2, 11)), state_size=11,
                      num_layers=1, mode="lstm"),
    lambda: mx.nd.softmax(mx.nd.ones((300, 307))),
    lambda: mx.nd.LRN(mx.nd.ones((2, 8, 33, 37)), nsize=3),
], ids=["pooling", "rnn", "softmax", "lrn"])
def test_rows_run_on_onednn(call):
    """The oneDNN rows really run (not silently the fallback): a new shape creates a
    primitive."""
    with dnn.use(True):
        before = dnn.cache_info()["misses"]
        call().asnumpy()
        assert dnn.cache_info()["misses"] > before


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("layers,bidir", [(1, False), (2, True), (3, False)])
def test_fused_rnn_paths_agree(mode, layers, bidir):
    from sparsym.kernels.rnn import layout
    rng = np.random.RandomState(1)
    T, N, C, H = 6, 3, 5, 4
    D = 2 if bidir else 1
    _, size = layout(mode, H, layers, bidir, C)
    params = rng.uniform(-0.5, 0.5, size).astype(np.float32)
    x = rng.randn(T, N, C).astype(np.float32)
    states = [rng.randn(layers * D, N, H).astype(np.float32)
              for _ in range(2 if mode == "lstm" else 1)]

    def fn(x, p, *st):
        outs = mx.nd.RNN(x, p, *st, state_size=H, num_layers=layers, mode=mode,
                         bidirectional=bidir, state_outputs=True)
        return mx.nd.concat(*[o.reshape((-1,)) for o in outs], dim=0)
    _same(fn, [x, params] + states, rtol=1e-4, atol=1e-5)


def test_fused_rnn_dropout_same_masks_on_both_paths():
    """Dropout between layers draws the same masks on both paths (same seed)."""
    x = np.random.RandomState(2).randn(5, 2, 3).astype(np.float32)
    outs = []
    for path in (True, False):
        with dnn.use(path):
            mx.random.seed(11)
            net = mx.gluon.rnn.LSTM(4, num_layers=2, dropout=0.5, input_size=3)
            net.initialize(mx.init.Uniform(0.5))
            xs = mx.nd.array(x)
            xs.attach_grad()
            with mx.autograd.record():
                y = net(xs)
            y.backward()
            outs.append((y.asnumpy(), xs.grad.asnumpy()))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,axis", [((4, 300, 300), -1), ((256, 512), 1), ((8, 20), -1),
                                        ((300, 300), 0)])
def test_softmax_paths_agree(op, shape, axis):
    x = np.random.RandomState(3).randn(*shape).astype(np.float32) * 3
    _same(lambda d: getattr(mx.nd, op)(d, axis=axis), [x], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape,nsize", [((4, 16, 24, 24), 5), ((2, 7, 5, 5), 4),
                                         ((3, 9, 40, 40), 3)])
def test_lrn_paths_agree(shape, nsize):
    x = np.random.RandomState(4).randn(*shape).astype(np.float32)
    _same(lambda d: mx.nd.LRN(d, nsize=nsize, alpha=0.01, beta=0.75, knorm=2.0), [x])


def test_first_conv_skips_its_data_gradient(monkeypatch):
    """A hybridized first convolution's data gradient (nothing reads it) is not computed;
    the weight gradients are those of the Numba path, which computes and drops it."""
    from sparsym.kernels.onednn import conv as dconv
    seen = []
    orig = dconv._backward
    # _backward(geom, x, w, dy, yshape, dt, nbias, plain, need_data, need_weights)
    monkeypatch.setattr(dconv, "_backward",
                        lambda *a, **k: seen.append(a[8]) or orig(*a, **k))
    x = mx.nd.array(np.random.RandomState(6).rand(2, 3, 10, 10))
    grads = []
    for path in (True, False):
        with dnn.use(path):
            net = mx.gluon.nn.HybridSequential()
            nn = mx.gluon.nn
            net.add(nn.Conv2D(4, 3, in_channels=3), nn.Conv2D(5, 3, in_channels=4),
                    nn.Dense(3, in_units=180))
            net.initialize(mx.init.Xavier(rnd_type="gaussian"))
            for p in net.collect_params().values():
                p.set_data(mx.nd.array(np.random.RandomState(8).rand(*p.shape) - 0.5))
            net.hybridize()
            with mx.autograd.record():
                loss = net(x).sum()
            loss.backward()
            grads.append([p.grad().asnumpy() for p in net.collect_params().values()])
    assert sorted(seen) == [False, True]  # first layer skipped, second computed
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_fused_rnn_inference_across_batch_sizes():
    """Inference calls of one layer geometry at several batch sizes (oneDNN's packed weight
    formats differ by batch but share dims: each call must use its own layout)."""
    from sparsym.kernels.rnn import layout
    rng = np.random.RandomState(9)
    C, H = 32, 64
    _, size = layout("gru", H, 2, False, C)
    p = rng.uniform(-0.2, 0.2, size).astype(np.float32)
    for n in (1, 16, 1, 5):
        x = rng.randn(3, n, C).astype(np.float32)
        h = np.zeros((2, n, H), np.float32)
        got = []
        for path in (True, False):
            with dnn.use(path):
                got.append(mx.nd.RNN(mx.nd.array(x), mx.nd.array(p), mx.nd.array(h),
                                     state_size=H, num_layers=2, mode="gru").asnumpy())
        np.testing.assert_allclose(got[0], got[1], rtol=1e-4, atol=1e-5)
