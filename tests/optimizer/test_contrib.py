"""mx.optimizer.contrib.GroupAdaGrad: row-wise AdaGrad (numbers from MXNet 1.9.1)."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import ParamError, ShapeError


def _data():
    rs = np.random.RandomState(0)
    w0 = rs.randn(4, 3).astype(np.float32)
    return w0, [(rs.randn(4, 3) * 3).astype(np.float32) for _ in range(2)]


# MXNet 1.9.1, GroupAdaGrad() after the two gradients of _data()
WANT_W = [[1.7354, 0.4067, 0.9698], [2.2384, 1.8407, -0.9846], [0.9472, -0.1482, -0.0816],
          [0.4162, 0.1351, 1.4629]]
WANT_H = [24.1802, 20.7875, 24.9013, 17.3830]


@pytest.mark.parametrize("kind", ["dense", "row_sparse", "row_sparse_weight"])
def test_matches_mxnet(kind):
    w0, grads = _data()
    opt = mx.optimizer.create("groupadagrad")
    assert isinstance(opt, mx.optimizer.contrib.GroupAdaGrad)
    w = mx.nd.array(w0)
    if kind == "row_sparse_weight":
        w = w.tostype("row_sparse")
    h = opt.create_state(0, w)
    assert h.shape == (4, 1) and h.stype == ("row_sparse" if kind.endswith("weight")
                                             else "default")
    rows = [0, 1, 2, 3] if kind == "dense" else [1, 3]
    for g in grads:
        if kind == "dense":
            opt.update(0, w, mx.nd.array(g), h)
        else:
            opt.update(0, w, mx.nd.sparse.row_sparse_array((g[[1, 3]], [1, 3]), shape=g.shape),
                       h)
    want_w = np.array(WANT_W)
    want_h = np.array(WANT_H)
    if kind != "dense":  # MXNet: only the gradient's rows move (rows 1 and 3 = dense ones)
        want_w[[0, 2]] = w0[[0, 2]]
        want_h[[0, 2]] = 0
    np.testing.assert_allclose(w.asnumpy(), want_w, atol=1e-4)
    np.testing.assert_allclose(h.asnumpy().ravel()[rows], want_h[rows], rtol=1e-4)


def test_errors():
    with pytest.raises(ParamError, match="Weight decay is not supported"):
        opt = mx.optimizer.create("groupadagrad", wd=0.1)
        opt.update(0, mx.nd.ones((2, 2)), mx.nd.ones((2, 2)), mx.nd.zeros((2, 1)))
    with pytest.raises(ShapeError, match="2-D"):
        mx.optimizer.contrib.GroupAdaGrad().create_state(0, mx.nd.ones((2,)))
    assert mx.optimizer.NDabs(mx.nd.array([-2.0])).asscalar() == 2.0
