"""Optimizer behaviours probed on MXNet 1.9.1: float16 weights updated without a master
copy, NAG's multi-precision state layout, LBSGD's lazy row_sparse update."""
import warnings

import numpy as np
import pytest

import sparsym as mx


@pytest.mark.parametrize("name,kw", [("sgd", dict(momentum=0.9)), ("sgd", {}),
                                     ("adam", {}), ("nag", dict(momentum=0.9)),
                                     ("signum", {}), ("ftml", {}), ("rmsprop", {})])
def test_float16_without_multi_precision_updates_in_half(name, kw):
    """MXNet updates a float16 weight (and float16 states) directly, with a warning."""
    rs = np.random.RandomState(0)
    w0, g0 = rs.uniform(-1, 1, (5, 3)), rs.uniform(-1, 1, (5, 3))
    res = {}
    for dt in ("float16", "float32"):
        opt = mx.optimizer.create(name, learning_rate=0.1, wd=0.01, **kw)
        w, g = mx.nd.array(w0, dtype=dt), mx.nd.array(g0, dtype=dt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            state = opt.create_state_multi_precision(0, w)
        for _ in range(2):
            opt.update_multi_precision(0, w, g, state)
        assert w.dtype == np.dtype(dt)
        res[dt] = w.asnumpy().astype(np.float64)
    np.testing.assert_allclose(res["float16"], res["float32"], rtol=1e-2, atol=1e-2)


def test_float16_lazy_row_sparse_update():
    opt = mx.optimizer.SGD(learning_rate=0.5, momentum=0.9)
    w = mx.nd.ones((4, 2), dtype="float16")
    g = mx.nd.sparse.row_sparse_array((np.ones((1, 2), np.float16), [2]), shape=(4, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state = opt.create_state_multi_precision(0, w)
    opt.update_multi_precision(0, w, g, state)
    np.testing.assert_array_equal(w.asnumpy(), [[1, 1], [1, 1], [0.5, 0.5], [1, 1]])


def test_nag_multi_precision_state_is_momentum_then_master():
    opt = mx.optimizer.NAG(learning_rate=0.1, momentum=0.9, multi_precision=True)
    w = mx.nd.array(np.linspace(-1, 1, 6).reshape(2, 3), dtype="float16")
    g = mx.nd.array(np.linspace(0.5, -1, 6).reshape(2, 3), dtype="float16")
    mom, master = opt.create_state_multi_precision(0, w)
    assert master.dtype == np.float32 and not mom.asnumpy().any()
    opt.update_multi_precision(0, w, g, (mom, master))
    # one step from zero momentum: m = -lr*g, w32 = w + mu*m - lr*g
    g32 = g.asnumpy().astype(np.float32)
    np.testing.assert_allclose(mom.asnumpy(), -0.1 * g32, rtol=1e-6)
    expect = np.linspace(-1, 1, 6).reshape(2, 3).astype(np.float16).astype(np.float32) \
        - 0.1 * g32 * 1.9
    np.testing.assert_allclose(master.asnumpy(), expect, rtol=1e-6)
    np.testing.assert_array_equal(w.asnumpy(), expect.astype(np.float16))


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_lbsgd_row_sparse_gradient_is_lazy(momentum):
    """MXNet's LBSGD hands the row_sparse gradient to sgd(_mom)_update, whose lazy_update
    defaults to True: weight decay reaches only the gradient's rows."""
    opt = mx.optimizer.LBSGD(learning_rate=0.1, wd=0.5, momentum=momentum)
    w = mx.nd.ones((3, 2))
    g = mx.nd.sparse.row_sparse_array((np.ones((1, 2), np.float32), [1]), shape=(3, 2))
    opt.update(0, w, g, opt.create_state(0, w))
    np.testing.assert_allclose(w.asnumpy(), [[1, 1], [0.85, 0.85], [1, 1]], rtol=1e-6)
