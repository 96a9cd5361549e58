"""take, pick, one_hot, where and the reductions (dense, csr and row_sparse rows)."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.base import MXNetError, ParamError
from sparsym.test_utils import (
    assert_almost_equal,
    check_numeric_gradient,
    check_symbolic_backward,
    check_symbolic_forward,
)

rng = np.random.RandomState(13)


@pytest.mark.parametrize("mode", ["clip", "wrap"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take(mode, axis):
    a = rng.randn(3, 4)
    idx = np.array([[0, 5], [-1, 2]], dtype=np.float64)
    n = a.shape[axis]
    ids = np.clip(idx.astype(int), 0, n - 1) if mode == "clip" else np.mod(idx.astype(int), n)
    s = mx.sym.take(mx.sym.var("a"), mx.sym.var("i"), axis=axis, mode=mode)
    check_symbolic_forward(s, {"a": a, "i": idx}, [np.take(a, ids, axis=axis)])
    check_numeric_gradient(s, {"a": a, "i": idx}, grad_nodes=["a"], rtol=1e-6, dtype=np.float64)


def test_take_raise_and_csr():
    a = mx.nd.array(rng.randn(3, 2))
    with pytest.raises(MXNetError, match="out of range"):
        mx.nd.take(a, mx.nd.array([3]), mode="raise")
    assert_almost_equal(mx.nd.take(a, mx.nd.array([-1]), mode="raise"), a.asnumpy()[[-1]])
    for mode in ("clip", "wrap", "raise"):  # an empty axis has no row to clip or wrap to
        with pytest.raises(MXNetError, match="axis of size 0"):
            mx.nd.take(mx.nd.empty((0, 2)), mx.nd.array([0]), mode=mode)
    assert mx.nd.take(mx.nd.empty((0, 2)), mx.nd.array([])).shape == (0, 2)
    d = np.array([[0, 1, 0], [2, 0, 0], [0, 0, 3]], np.float32)
    out = mx.nd.take(mx.nd.array(d).tostype("csr"), mx.nd.array([2, 0, 2]))
    assert out.stype == "csr"
    assert_almost_equal(out, d[[2, 0, 2]])


@pytest.mark.parametrize("axis,keepdims", [(1, False), (0, True), (-1, True)])
def test_pick(axis, keepdims):
    x = rng.randn(3, 4)
    n = x.shape[axis]
    ids = rng.randint(0, n, size=x.shape[1 - (axis % 2)])
    want = np.take_along_axis(x, np.expand_dims(ids, axis % 2), axis=axis % 2)
    want = want if keepdims else want.squeeze(axis % 2)
    idx = ids.reshape(want.shape).astype(np.float64)
    s = mx.sym.pick(mx.sym.var("x"), mx.sym.var("i"), axis=axis, keepdims=keepdims)
    check_symbolic_forward(s, {"x": x, "i": idx}, [want])
    check_numeric_gradient(s, {"x": x, "i": idx}, grad_nodes=["x"], rtol=1e-6, dtype=np.float64)
    assert mx.nd.pick(mx.nd.array([[1., 2.]]), mx.nd.array([7]), mode="wrap").asnumpy()[0] == 2


def test_one_hot():
    out = mx.nd.one_hot(mx.nd.array([[1, 0], [2, 5]]), depth=3, on_value=2, off_value=-1,
                        dtype="int32")
    assert out.dtype == np.int32 and out.shape == (2, 2, 3)
    assert out.asnumpy().tolist() == [[[-1, 2, -1], [2, -1, -1]], [[-1, -1, 2], [-1, -1, -1]]]
    with pytest.raises(ParamError):
        mx.sym.one_hot(mx.sym.var("i"), depth=-1)


def test_where_dense_rowwise_and_csr():
    c = np.array([[1, 0, 2], [0, 0, 1]], np.float64)
    x, y = rng.randn(2, 3), rng.randn(2, 3)
    s = mx.sym.where(mx.sym.var("c"), mx.sym.var("x"), mx.sym.var("y"))
    check_symbolic_forward(s, {"c": c, "x": x, "y": y}, [np.where(c != 0, x, y)])
    og = rng.randn(2, 3)
    check_symbolic_backward(s, {"c": c, "x": x, "y": y}, [og],
                            {"x": np.where(c != 0, og, 0), "y": np.where(c != 0, 0, og)},
                            grad_req={"c": "null", "x": "write", "y": "write"}, rtol=1e-5)
    row = mx.nd.where(mx.nd.array([1, 0]), mx.nd.array(x), mx.nd.array(y))
    assert_almost_equal(row, np.stack([x[0], y[1]]), rtol=1e-6)
    out = mx.nd.where(mx.nd.array(c).tostype("csr"), mx.nd.array(x), mx.nd.array(y))
    assert out.stype == "default"
    assert_almost_equal(out, np.where(c != 0, x, y), rtol=1e-6)


REDUCERS = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
            "nansum": np.nansum, "nanprod": np.nanprod}


@pytest.mark.parametrize("op", sorted(REDUCERS))
@pytest.mark.parametrize("axis,keepdims,exclude", [
    (None, False, False), (1, False, False), ((0, 2), True, False), (1, False, True),
    (-1, True, False)])
def test_reductions(op, axis, keepdims, exclude):
    x = rng.rand(2, 3, 2) + 0.5
    s = getattr(mx.sym, op)(mx.sym.var("x"), axis=axis, keepdims=keepdims, exclude=exclude)
    if axis is None:
        ax = None
    else:
        ax = (axis,) if isinstance(axis, int) else axis
        ax = tuple(a % 3 for a in ax)
        if exclude:
            ax = tuple(i for i in range(3) if i not in ax)
    want = np.asarray(REDUCERS[op](x, axis=ax, keepdims=keepdims))
    if want.ndim == 0:
        want = want.reshape(1)
    check_symbolic_forward(s, {"x": x}, [want], rtol=1e-5)
    check_numeric_gradient(s, {"x": x}, rtol=1e-5, atol=1e-8, dtype=np.float64)


def test_nansum_and_prod_with_zero_gradients():
    x = np.array([[1.0, np.nan, 2.0], [0.0, 3.0, 4.0]])
    og = np.ones(2)
    check_symbolic_backward(mx.sym.nansum(mx.sym.var("x"), axis=1), {"x": x}, [og],
                            {"x": np.array([[1, 0, 1], [1, 1, 1.]])}, dtype=np.float64)
    check_symbolic_backward(mx.sym.prod(mx.sym.var("x"), axis=1), {"x": np.nan_to_num(x)},
                            [og], {"x": np.array([[0, 2, 0], [12, 0, 0.]])}, dtype=np.float64)


@pytest.mark.parametrize("ord_", [1, 2])
def test_norm(ord_):
    x = rng.randn(3, 4)
    for axis in (None, 0, (0, 1)):
        s = mx.sym.norm(mx.sym.var("x"), ord=ord_, axis=axis)
        ax = axis if axis is None or isinstance(axis, tuple) else (axis,)
        want = np.abs(x).sum(axis=ax) if ord_ == 1 else np.sqrt((x * x).sum(axis=ax))
        check_symbolic_forward(s, {"x": x}, [np.asarray(want).reshape(-1)], rtol=1e-5)
        check_numeric_gradient(s, {"x": x}, rtol=1e-5, dtype=np.float64)
    with pytest.raises(ParamError):
        mx.sym.norm(mx.sym.var("x"), ord=3)


def test_sparse_reductions_without_fallback():
    d = np.array([[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5]], np.float32)
    csr = mx.nd.array(d).tostype("csr")
    rsp = mx.nd.array(d).tostype("row_sparse")
    with mx.test_utils.environment("SPARSYM_STORAGE_FALLBACK", "raise"):
        for axis in (0, 1):
            assert_almost_equal(mx.nd.sum(csr, axis=axis), d.sum(axis=axis))
            assert_almost_equal(mx.nd.mean(csr, axis=axis), d.mean(axis=axis))
            assert_almost_equal(mx.nd.sparse.norm(csr, axis=axis),
                                np.sqrt((d * d).sum(axis=axis)), rtol=1e-5)
            assert_almost_equal(mx.nd.sum(rsp, axis=axis), d.sum(axis=axis))
        assert_almost_equal(mx.nd.sum(csr), [d.sum()])           # beyond MXNet: no axis
        assert_almost_equal(mx.nd.mean(rsp), [d.mean()])
        assert_almost_equal(mx.nd.norm(csr), [np.sqrt((d * d).sum())], rtol=1e-5)
        assert_almost_equal(mx.nd.norm(rsp), [np.sqrt((d * d).sum())], rtol=1e-5)
    # a csr data gradient through sum is dense and correct
    s = mx.sym.sum(mx.sym.var("x", stype="csr"), axis=1)
    exe = s.simple_bind(mx.cpu(), x=d.shape)
    exe.arg_dict["x"][:] = csr
    exe.forward(is_train=True)
    assert_almost_equal(exe.outputs[0], d.sum(1))
    exe.backward(mx.nd.array([1., 2., 3.]))
    assert_almost_equal(exe.grad_dict["x"], np.repeat([[1.], [2.], [3.]], 4, axis=1))


def test_argmax_argmin():
    x = np.array([[1., 5., 2.], [7., 0., 3.]])
    assert mx.nd.argmax(mx.nd.array(x), axis=1).asnumpy().tolist() == [1., 0.]
    assert mx.nd.argmin(mx.nd.array(x), axis=0, keepdims=True).shape == (1, 3)
    assert mx.nd.argmax(mx.nd.array(x)).asnumpy().tolist() == [3.]
    assert mx.nd.argmax_channel(mx.nd.array(x)).asnumpy().tolist() == [1., 0.]
    v = mx.sym.var("x")
    s = mx.sym.argmax(v, axis=1) + mx.sym.sum(v, axis=1)
    exe = s.simple_bind(mx.cpu(), x=(2, 3))
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((2,)))
    assert_almost_equal(exe.grad_dict["x"], np.ones((2, 3)))
