"""gather_nd, scatter_nd, _scatter_set_nd, batch_take, fill_element_0index, boolean_mask,
index_copy, index_array, _slice_assign(_scalar): values recorded from MXNet 1.9.1 or against
NumPy, numeric gradients in float64."""
import numpy as np
import pytest

import sparsym as mx
from sparsym.test_utils import check_numeric_gradient, check_symbolic_forward

rng = np.random.RandomState(7)


def _grad(s, args, nodes):
    check_numeric_gradient(s, args, grad_nodes=nodes, rtol=1e-6, atol=1e-8, dtype=np.float64)


def test_gather_nd_values_bounds_and_gradient():
    d = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    i = np.array([[1, 0], [2, 1]], np.float64)
    assert mx.nd.gather_nd(mx.nd.array(d), mx.nd.array(i)).asnumpy().tolist() == \
        [[20, 21, 22, 23], [4, 5, 6, 7]]
    # negative indices count from the end; beyond that IndexError (MXNet's text)
    assert mx.nd.gather_nd(mx.nd.array(d), mx.nd.array([[1, -1], [0, -2]])).asnumpy()[0, 0] == 12
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        mx.nd.gather_nd(mx.nd.array([[0, 1, 2], [3, 4, 5]]), mx.nd.array([[0, 1, 0], [0, 1, 3]]))
    with pytest.raises(IndexError, match="index -5 is out of bounds"):
        mx.nd.gather_nd(mx.nd.array([[0, 1, 2], [3, 4, 5]]), mx.nd.array([[0], [-5]]))
    s = mx.sym.gather_nd(mx.sym.var("x"), mx.sym.var("i"))
    idx = np.array([[0, 1, 1], [2, 0, 2]], np.float64)   # a repeated position: grads add
    x = rng.randn(2, 3, 4)
    check_symbolic_forward(s, {"x": x, "i": idx}, [x[idx[0].astype(int), idx[1].astype(int)]])
    _grad(s, {"x": x, "i": idx}, ["x"])


def test_scatter_nd_and_set():
    r = mx.nd.scatter_nd(mx.nd.array([1, 2, 3]), mx.nd.array([[0, 1, 1], [1, 0, 0]]), shape=(2, 2))
    assert r.asnumpy().tolist() == [[0, 1], [3, 0]]          # MXNet: the last write wins
    r = mx.nd.scatter_nd(mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([[1, 0]]), shape=(3, 2))
    assert r.asnumpy().tolist() == [[3, 4], [1, 2], [0, 0]]
    s = mx.sym.scatter_nd(mx.sym.var("x"), mx.sym.var("i"), shape=(3, 4))
    idx = np.array([[0, 2], [1, 3]], np.float64)
    x = rng.randn(2)
    want = np.zeros((3, 4))
    want[[0, 2], [1, 3]] = x
    check_symbolic_forward(s, {"x": x, "i": idx}, [want])
    _grad(s, {"x": x, "i": idx}, ["x"])
    r = mx.nd._internal._scatter_set_nd(mx.nd.ones((2, 2)), mx.nd.array([5, 6]),
                                        mx.nd.array([[0, 1], [1, 0]]), shape=(2, 2))
    assert r.asnumpy().tolist() == [[1, 5], [6, 1]]


def test_legacy_take_and_fill():
    a = mx.nd.array(np.arange(6).reshape(3, 2))
    assert mx.nd.batch_take(a, mx.nd.array([1, 0, 5], dtype="int32")).asnumpy().tolist() == \
        [1, 2, 5]
    assert mx.nd.choose_element_0index(a, mx.nd.array([1, 0, 1])).asnumpy().tolist() == [1, 2, 5]
    r = mx.nd.fill_element_0index(mx.nd.zeros((3, 4)), mx.nd.array([7, 8, 9]),
                                  mx.nd.array([0, 3, 1]))
    assert r.asnumpy().tolist() == [[7, 0, 0, 0], [0, 0, 0, 8], [0, 9, 0, 0]]
    assert mx.nd.onehot_encode(mx.nd.array([1, 0, 2]), mx.nd.zeros((3, 3))).asnumpy().tolist() \
        == [[0, 1, 0], [1, 0, 0], [0, 0, 1]]


def test_boolean_mask_index_copy_index_array():
    x = np.arange(6, dtype=np.float64).reshape(3, 2)
    r = mx.nd.contrib.boolean_mask(mx.nd.array(x), mx.nd.array([0, 1, 1]))
    assert r.asnumpy().tolist() == [[2, 3], [4, 5]]
    # beyond MXNet 1.9.1 (axis 0 only there): other axes
    r = mx.nd.contrib.boolean_mask(mx.nd.array(x.T), mx.nd.array([1, 0, 1]), axis=1)
    assert r.asnumpy().tolist() == [[0, 4], [1, 5]]
    r = mx.nd.contrib.index_copy(mx.nd.zeros((4, 2)), mx.nd.array([2, 0]),
                                 mx.nd.array([[1, 2], [3, 4]]))
    assert r.asnumpy().tolist() == [[3, 4], [0, 0], [1, 2], [0, 0]]
    s = mx.sym.contrib.index_copy(mx.sym.var("o"), mx.sym.var("i"), mx.sym.var("n"))
    _grad(s, {"o": rng.randn(4, 3), "i": np.array([3.0, 1.0]), "n": rng.randn(2, 3)},
          ["o", "n"])
    r = mx.nd.contrib.index_array(mx.nd.zeros((2, 3)))
    assert r.dtype == np.int64 and r.asnumpy().tolist() == [[[0, 0], [0, 1], [0, 2]],
                                                            [[1, 0], [1, 1], [1, 2]]]
    assert mx.nd.contrib.index_array(mx.nd.zeros((2, 3)), axes=(-1,)).asnumpy()[:, :, 0].tolist() \
        == [[0, 1, 2], [0, 1, 2]]


def test_slice_assign():
    nd = mx.nd._internal
    r = nd._slice_assign(mx.nd.zeros((3, 4)), mx.nd.ones((2, 2)), begin=(1, 1), end=(3, 3))
    assert r.asnumpy().tolist() == [[0, 0, 0, 0], [0, 1, 1, 0], [0, 1, 1, 0]]
    r = nd._crop_assign(mx.nd.zeros((3, 4)), mx.nd.ones((2, 2)), begin=(None, 0),
                        end=(None, None), step=(2, 2))
    assert r.asnumpy().tolist() == [[1, 0, 1, 0], [0, 0, 0, 0], [1, 0, 1, 0]]
    r = nd._slice_assign_scalar(mx.nd.zeros((3, 4)), scalar=5, begin=(1,), end=(2,))
    assert r.asnumpy().tolist() == [[0] * 4, [5] * 4, [0] * 4]
    s = mx.sym._internal._slice_assign(mx.sym.var("a"), mx.sym.var("b"), begin=(0, 1),
                                       end=(2, 3))
    _grad(s, {"a": rng.randn(3, 4), "b": rng.randn(2, 2)}, ["a", "b"])
    s = mx.sym._internal._slice_assign_scalar(mx.sym.var("a"), scalar=2.0, begin=(1,), end=(3,))
    _grad(s, {"a": rng.randn(3, 4)}, ["a"])
