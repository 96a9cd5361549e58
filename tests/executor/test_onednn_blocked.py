"""oneDNN's blocked layouts stay between consecutive oneDNN-capable steps of a plan and are
converted at its edges: users (outputs, gradients, monitors, imperative calls) see NumPy
arrays with MXNet's shapes, and the results equal the Numba path's."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.executor import plan as P
from sparsym.kernels import onednn as dnn

pytestmark = pytest.mark.skipif(not dnn.available(), reason="oneDNN wheel not installed")


def _net():
    x = mx.sym.var("data")
    c1 = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=16, name="c1")
    r1 = mx.sym.Activation(c1, act_type="relu", name="r1")
    c2 = mx.sym.Convolution(r1, kernel=(3, 3), pad=(1, 1), num_filter=16, name="c2")
    s = mx.sym.elemwise_add(c2, r1, name="res")          # residual add of two blocked tensors
    r2 = mx.sym.Activation(s, act_type="relu", name="r2")
    c3 = mx.sym.Convolution(r2, kernel=(1, 1), num_filter=8, no_bias=True, name="c3")
    t = mx.sym.Activation(c3, act_type="tanh", name="t")  # not blocked-capable: converts
    return mx.sym.MakeLoss(mx.sym.sum(t * t))


def _run(flag, monitor=None):
    rng = np.random.default_rng(0)
    with dnn.use(flag):
        ex = _net().simple_bind(mx.cpu(), data=(2, 5, 9, 9), grad_req="write")
        for arr in ex.arg_dict.values():
            arr[:] = rng.standard_normal(arr.shape).astype(np.float32) * 0.3
        if monitor is not None:
            ex.set_monitor_callback(monitor, monitor_all=True)
        ex.forward(is_train=True)
        ex.backward()
        return ex


def test_blocked_plan_matches_numba_and_edges_are_plain():
    on, off = _run(True), _run(False)
    plan = on._plan
    assert plan.blocked and any(s.blocked for s in plan.forward_steps)
    np.testing.assert_allclose(on.outputs[0].asnumpy(), off.outputs[0].asnumpy(), rtol=1e-4)
    for name in on.grad_dict:
        g_on, g_off = on.grad_dict[name], off.grad_dict[name]
        assert type(g_on._raw) is np.ndarray and g_on.shape == g_off.shape
        np.testing.assert_allclose(g_on.asnumpy(), g_off.asnumpy(), rtol=1e-3,
                                   atol=1e-4 * np.abs(g_off.asnumpy()).max())
    assert type(on.outputs[0]._raw) is np.ndarray


def test_monitor_sees_plain_arrays_with_mxnet_shapes():
    seen = {}

    def mon(name, arr):
        seen[name] = (type(arr._raw), arr.shape)
    _run(True, mon)
    assert seen and all(t is np.ndarray for t, _ in seen.values())
    assert seen["c1_output"][1] == (2, 16, 9, 9)


def test_imperative_calls_return_plain_arrays():
    x = mx.nd.array(np.random.rand(2, 5, 9, 9))
    w = mx.nd.array(np.random.rand(16, 5, 3, 3))
    with dnn.use(True):
        y = mx.nd.Activation(mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=16,
                                               no_bias=True), act_type="relu")
    assert type(y._raw) is np.ndarray and y.shape == (2, 16, 7, 7)


def test_hybridized_gluon_block_on_both_paths():
    res = {}
    for flag in (True, False):
        mx.random.seed(1)
        with dnn.use(flag):
            net = mx.gluon.nn.HybridSequential()
            net.add(mx.gluon.nn.Conv2D(8, 3, padding=1, activation="relu"),
                    mx.gluon.nn.Conv2D(8, 3, padding=1), mx.gluon.nn.Activation("relu"),
                    mx.gluon.nn.Dense(3))
            net.initialize(mx.init.Xavier())
            net.hybridize()
            x = mx.nd.array(np.random.default_rng(2).standard_normal((4, 3, 8, 8)))
            with mx.autograd.record():
                y = net(x)
            y.backward()
            res[flag] = (y.asnumpy(), net[0].weight.grad().asnumpy())
    for a, b in zip(res[True], res[False]):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)
    assert any(p.blocked for p in P._CACHE.values())
