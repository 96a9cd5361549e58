"""oneDNN batch normalization and pooling on channel-blocked Tensors against the plain
paths."""
import numpy as np
import pytest

from sparsym.kernels import onednn as dnn

pytestmark = pytest.mark.skipif(not dnn.available(), reason="oneDNN is not installed")


def _numba(x, g, b, eps, mean=None, var=None, dy=None):
    """The reference: the BatchNorm operator's Numba rows."""
    from sparsym.ops.core import registry
    from sparsym.ops.nn import batch_norm as norm
    a = registry.get_op("BatchNorm").params.parse("BatchNorm", {"fix_gamma": "False",
                                                               "eps": str(eps)})
    a = dict(a, __is_train__=mean is None)

    class A(dict):
        __getattr__ = dict.__getitem__
    a = A(a)
    c = x.shape[1]
    mm = np.zeros(c, np.float32) if mean is None else mean.copy()
    mv = np.ones(c, np.float32) if var is None else var.copy()
    with dnn.use(False):
        y, m, inv = norm._bn_fwd(a, (x, g, b, mm, mv))
        grads = norm._bn_bwd(a, (dy, x, g, m, inv))
    return y, m, 1 / inv.astype(np.float64) ** 2 - eps, grads


@pytest.mark.parametrize("shape", [(4, 32, 5, 6), (3, 20, 4, 4)])
@pytest.mark.parametrize("batch_stats", [True, False])
def test_blocked_batchnorm_matches_numba(shape, batch_stats):
    from sparsym.kernels.onednn import E, bnorm, core
    rng = np.random.RandomState(0)
    c = shape[1]
    x = (rng.randn(*shape) * 2 + 1).astype(np.float32)
    dy = rng.randn(*shape).astype(np.float32)
    g, b = rng.rand(c).astype(np.float32) + 0.5, rng.randn(c).astype(np.float32)
    mean, var = (None, None) if batch_stats else (rng.randn(c).astype(np.float32),
                                                  rng.rand(c).astype(np.float32) + 0.5)
    md = core.md_tag(shape, np.float32, E.nChw16c)  # padded when c is not a multiple of 16
    xt, dyt = core.from_plain(x, md), core.from_plain(dy, md)
    assert bnorm.supported(xt) and not bnorm.supported(x)
    y, m, v = bnorm.forward(xt, g, b, 1e-3, mean, var)
    assert isinstance(y, core.Tensor)  # stays blocked for the next oneDNN step
    dx, dg, db = bnorm.backward(dyt, xt, g, m, v, 1e-3, not batch_stats)
    y0, m0, v0, (dx0, dg0, db0) = _numba(x, g, b, 1e-3, mean, var, dy)
    np.testing.assert_allclose(core.to_plain(y), y0, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(m, m0, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(v, v0, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(core.to_plain(dx), dx0, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dg, dg0, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(db, db0, rtol=1e-4, atol=1e-3)
    # a plain array goes through nChw16c and comes back plain
    yp, _, _ = bnorm.forward(x, g, b, 1e-3, mean, var)
    np.testing.assert_allclose(yp, y0, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("alg", ["max", "avg_include", "avg_exclude"])
def test_blocked_pooling_matches_plain(alg, monkeypatch):
    """Pooling on a blocked Tensor gives a blocked Tensor equal to the plain result; the
    max backward finds the forward's workspace through its output, or recomputes it."""
    from sparsym.kernels.onednn import E, core, pool
    rng = np.random.RandomState(1)
    x = rng.randn(2, 20, 9, 9).astype(np.float32)
    geo = ((3, 3), (2, 2), (1, 1), (1, 1))
    y = pool.forward(x, (2, 20, 5, 5), alg, *geo)
    dy = rng.randn(*y.shape).astype(np.float32)
    calls = []
    run_fwd = pool._run_fwd
    monkeypatch.setattr(pool, "_run_fwd", lambda *a: calls.append(1) or run_fwd(*a))
    dx = pool.backward(dy, x, alg, *geo, y)
    assert not calls  # the kept workspace (max), or none needed (avg)
    np.testing.assert_array_equal(pool.backward(dy, x, alg, *geo), dx)  # recomputed
    assert len(calls) == (alg == "max")
    md = core.md_tag(x.shape, np.float32, E.nChw16c)
    xt = core.from_plain(x, md)
    yt = pool.forward(xt, (2, 20, 5, 5), alg, *geo)
    assert isinstance(yt, core.Tensor)
    np.testing.assert_allclose(core.to_plain(yt), y, rtol=1e-6, atol=1e-6)
    dyt = core.from_plain(dy, yt.md)
    dxt = pool.backward(dyt, xt, alg, *geo, yt)
    assert isinstance(dxt, core.Tensor)
    np.testing.assert_allclose(core.to_plain(dxt), dx, rtol=1e-6, atol=1e-6)


def test_stacked_conv_rnn_cells_gradient_sums_match_numba():
    """Stacked Conv1D LSTM/RNN/GRU cells unrolled under autograd sum gradients of
    convolutions whose oneDNN results come in a plain layout next to NumPy arrays; the
    sums must run and match the Numba path."""
    import sparsym as mx
    from sparsym.gluon.contrib.rnn import Conv1DGRUCell, Conv1DLSTMCell, Conv1DRNNCell

    def grads():
        mx.random.seed(3)
        net = mx.gluon.rnn.SequentialRNNCell()
        net.add(Conv1DLSTMCell((5, 7), 10, (3,), (3,)))
        net.add(Conv1DRNNCell((10, 5), 11, (3,), (3,)))
        net.add(Conv1DGRUCell((11, 3), 12, (3,), (3,)))
        net.collect_params().initialize()
        x = mx.nd.array(np.random.RandomState(0).rand(8, 3, 5, 7).astype(np.float32))
        x.attach_grad()
        with mx.autograd.record():
            out = net.unroll(3, x, merge_outputs=True)[0]
        out.backward()
        return out.asnumpy(), x.grad.asnumpy()

    out, dx = grads()
    with dnn.use(False):
        out_ref, dx_ref = grads()
    np.testing.assert_allclose(out, out_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-3, atol=1e-5)


def test_relu_and_add_on_plain_layout_tensors():
    """A oneDNN result whose layout is plain (NHWC of one pixel: ResNet's last stage on
    32x32 images) reaches relu, its gradient and add as a Tensor: they run on its NumPy
    view."""
    from sparsym.kernels.onednn import E, core
    from sparsym.ops.core import registry
    rng = np.random.RandomState(1)
    x = rng.randn(4, 16, 1, 1).astype(np.float32)
    g = rng.randn(4, 16, 1, 1).astype(np.float32)
    md = core.md_tag(x.shape, np.float32, E.acdb)
    assert md.is_plain
    xt, gt = core.from_plain(x, md), core.Tensor(md, g.copy().view(np.uint8).reshape(-1))
    xt = xt if isinstance(xt, core.Tensor) else core.Tensor(md, x.copy().view(np.uint8)
                                                             .reshape(-1))

    def run(name, ins, **kw):
        op = registry.get_op(name)
        a = op.params.parse(name, kw)

        class A(dict):
            __getattr__ = dict.__getitem__
        row = op.dispatch[0]
        return row.kernel(A(dict(a, __blocked__=True)), ins)[0]

    np.testing.assert_array_equal(dnn.to_plain(run("Activation", [xt], act_type="relu")),
                                  np.maximum(x, 0))
    np.testing.assert_array_equal(
        dnn.to_plain(run("_backward_Activation", [gt, xt], act_type="relu")), g * (x > 0))
    np.testing.assert_array_equal(dnn.to_plain(run("elemwise_add", [xt, gt])), x + g)
