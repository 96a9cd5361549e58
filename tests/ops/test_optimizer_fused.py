"""_multi_(mp_)adamw_update, _multi_(mp_)lamb_update and group_adagrad_update against the
values MXNet 1.9.1 printed for the same inputs (mean/var/history updated in place too)."""
import numpy as np
import pytest

import sparsym as mx

nd = mx.nd
SHAPES = [(2, 3), (4,)]


def _grid(shape, k):
    return (np.sin(np.arange(np.prod(shape)) * 0.7 + k) * 1.5).reshape(shape).astype(np.float32)


def _groups(mp):
    ins, ws = [], []
    for i, s in enumerate(SHAPES):
        w = nd.array(_grid(s, i), dtype="float16" if mp else "float32")
        g, m = nd.array(_grid(s, i + 5)), nd.array(_grid(s, i + 9) * 0.1)
        v = nd.array(np.abs(_grid(s, i + 3)))
        ins += [w, g.astype(w.dtype), m, v] + ([w.astype("float32")] if mp else [])
        ws.append(w)
    return ins, ws


# MXNet 1.9.1's outputs (weights 0 and 1) for _groups(mp)
ADAMW = {False: [[[0.0031, 0.9654, 1.472], [1.2886, 0.5003, -0.5299]],
                 [1.2711, 1.4956, 1.0185, 0.0606]],
         True: [[[0.0031, 0.9653, 1.4727], [1.2891, 0.5005, -0.5303]],
                [1.2705, 1.4951, 1.0186, 0.0606]]}
ADAMW_MEAN0 = [[-0.0144, -0.078, -0.103], [-0.0796, -0.0236, 0.0509]]
LAMB = {False: [[[0.057, 1.0704, 1.5504], [1.3435, 0.5252, -0.6596]],
                [1.5305, 1.7318, 1.1727, 0.0086]],
        True: [[[0.057, 1.0703, 1.5508], [1.3438, 0.5249, -0.6597]],
               [1.5303, 1.7314, 1.1729, 0.0086]]}
LAMB_VAR0 = [[0.212, 0.7941, 1.426], [1.3876, 0.6967, 0.3227]]


@pytest.mark.parametrize("mp", [False, True])
def test_multi_adamw_matches_mxnet(mp):
    ins, ws = _groups(mp)
    f = nd._internal._multi_mp_adamw_update if mp else nd._internal._multi_adamw_update
    out = f(*ins, nd.array([0.5]), lrs=(0.1, 0.2), wds=(0.01, 0.0), etas=(1.0, 0.5),
            clip_gradient=0.7, num_weights=2, out=ws)
    tol = 2e-3 if mp else 1e-4  # float16 weights
    for o, want in zip(out, ADAMW[mp]):
        np.testing.assert_allclose(o.asnumpy().astype(np.float64), want, atol=tol)
    np.testing.assert_allclose(ins[2].asnumpy(), ADAMW_MEAN0, atol=1e-4)
    if mp:  # the float32 master copy holds the unrounded update
        np.testing.assert_allclose(ins[4].asnumpy(), ADAMW[mp][0], atol=2e-3)


@pytest.mark.parametrize("mp", [False, True])
def test_multi_lamb_matches_mxnet(mp):
    ins, ws = _groups(mp)
    f = nd._internal._multi_mp_lamb_update if mp else nd._internal._multi_lamb_update
    out = f(*ins, learning_rates=(0.1, 0.2), wds=(0.01, 0.0), step_count=(1, 3),
            rescale_grad=0.5, lower_bound=0.5, upper_bound=2.0, clip_gradient=0.7,
            num_tensors=2, out=ws)
    tol = 2e-3 if mp else 1e-4
    for o, want in zip(out, LAMB[mp]):
        np.testing.assert_allclose(o.asnumpy().astype(np.float64), want, atol=tol)
    np.testing.assert_allclose(ins[3].asnumpy(), LAMB_VAR0, atol=1e-4)


def test_multi_ops_infer_shapes_in_symbols():
    names = ["w0", "g0", "m0", "v0", "w1", "g1", "m1", "v1", "rescale"]
    s = mx.sym._internal._multi_adamw_update(*[mx.sym.var(n) for n in names], lrs=(0.1, 0.1),
                                             wds=(0, 0), etas=(1, 1), num_weights=2)
    _, outs, _ = s.infer_shape(w0=(2, 3), w1=(4,))
    assert outs == [(2, 3), (4,)]


def test_multi_adamw_needs_a_rate_per_weight():
    ins, ws = _groups(False)
    with pytest.raises(mx.base.ParamError, match="2 weights need 2 values"):
        nd._internal._multi_adamw_update(*ins, nd.array([1.0]), lrs=(0.1,), wds=(0, 0),
                                         etas=(1, 1), num_weights=2)


def test_group_adagrad_updates_the_gradient_rows_like_mxnet():
    w, h = nd.array(_grid((4, 3), 1)), nd.array(np.abs(_grid((4, 1), 2)))
    gs = nd.sparse.row_sparse_array((_grid((2, 3), 3), [1, 3]), shape=(4, 3))
    nd.contrib.group_adagrad_update(w, gs, h, lr=0.1, rescale_grad=0.5, clip_gradient=0.3,
                                    out=w)
    np.testing.assert_allclose(w.asnumpy(), [[1.2622, 1.4875, 1.0132],
                                             [0.0498, -0.8821, -1.4306],
                                             [-1.3252, -0.5608, 0.4673],
                                             [1.302, 1.5104, 0.9803]], atol=1e-4)
    np.testing.assert_allclose(h.asnumpy().ravel(), [1.3639, 0.7048, 0.3833, 1.2961],
                               atol=1e-4)
